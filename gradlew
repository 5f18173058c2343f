#!/bin/sh
# hrts Gradle launcher (POSIX sh).
#
# 1. If gradle/wrapper/gradle-wrapper.jar exists and its distribution is already
#    cached (or HRTS_USE_WRAPPER=1), run the standard Gradle wrapper.
# 2. Else, if a `gradle` command is on PATH (e.g. Debian's gradle 4.4), run it.
# 3. Else, if the wrapper jar exists, run the wrapper (it downloads the distribution).
# 4. Else explain how to get Gradle.
# HRTS_USE_WRAPPER=0 forces the `gradle` on PATH.
set -eu

APP_HOME=$(cd "$(dirname "$0")" && pwd -P)
WRAPPER_JAR="$APP_HOME/gradle/wrapper/gradle-wrapper.jar"
WRAPPER_PROPS="$APP_HOME/gradle/wrapper/gradle-wrapper.properties"

java_cmd() {
    if [ -n "${JAVA_HOME:-}" ] && [ -x "$JAVA_HOME/bin/java" ]; then
        echo "$JAVA_HOME/bin/java"
    elif command -v java >/dev/null 2>&1; then
        command -v java
    else
        echo "gradlew: no java found: install a JDK 17+ (Debian: apt-get install openjdk-17-jdk-headless) or set JAVA_HOME" >&2
        exit 1
    fi
}

run_wrapper() {
    JAVA=$(java_cmd)
    exec "$JAVA" ${JAVA_OPTS:-} ${GRADLE_OPTS:-} "-Dorg.gradle.appname=gradlew" \
        -classpath "$WRAPPER_JAR" org.gradle.wrapper.GradleWrapperMain "$@"
}

wrapper_dist_cached() {
    [ -f "$WRAPPER_PROPS" ] || return 1
    url=$(sed -n 's/^distributionUrl=//p' "$WRAPPER_PROPS" | tr -d '\r' | sed 's/\\//g')
    [ -n "$url" ] || return 1
    dist=$(basename "$url" .zip)                 # gradle-8.10.2-bin
    home_name=$(echo "$dist" | sed -e 's/-bin$//' -e 's/-all$//')  # gradle-8.10.2
    for d in "${GRADLE_USER_HOME:-$HOME/.gradle}/wrapper/dists/$dist"/*/"$home_name"; do
        [ -x "$d/bin/gradle" ] && return 0
    done
    return 1
}

if [ -f "$WRAPPER_JAR" ] && [ "${HRTS_USE_WRAPPER:-}" != 0 ]; then
    if [ "${HRTS_USE_WRAPPER:-}" = 1 ] || wrapper_dist_cached; then
        run_wrapper "$@"
    fi
fi

if command -v gradle >/dev/null 2>&1; then
    exec gradle "$@"
fi

if [ -f "$WRAPPER_JAR" ] && [ "${HRTS_USE_WRAPPER:-}" != 0 ]; then
    run_wrapper "$@"
fi

cat >&2 <<'MSG'
gradlew: no Gradle found.
  hrts builds with Gradle 4.4 (Debian's package) or Gradle 8.x. Either:
    - run scripts/bootstrap.sh (Debian/Ubuntu: installs the gradle package), or
    - apt-get install gradle, or install Gradle 8.x and put `gradle` on PATH, or
    - add gradle/wrapper/gradle-wrapper.jar (`gradle wrapper` with Gradle 8.x).
MSG
exit 1
