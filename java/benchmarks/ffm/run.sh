#!/usr/bin/env bash
# The hot paths by JNI and by FFM critical downcalls in one JVM, next to System.nanoTime
# (FfmBench.java): ROUNDS (default 100) interleaved rounds of CALLS (default 200000) calls,
# the minimum ns/call. JAVA picks the JDK (22 or newer for FFM; default: the newest under
# /usr/lib/jvm), JAR another jar (default: the one ./gradlew jar made), JAVA_OPTS more JVM
# options (e.g. -XX:+UseSystemMemoryBarrier). Uses a segment of its own, removed at the end.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)"
rounds="${1:-100}"
calls="${2:-200000}"
if [ -z "${JAVA:-}" ]; then
    JAVA=java
    for j in $(ls -d /usr/lib/jvm/*/bin/java 2>/dev/null | sort -V -r); do
        "$j" -version 2>&1 | grep -qE 'version "(2[2-9]|[3-9][0-9])' && { JAVA="$j"; break; }
    done
fi
javac="$(dirname "$JAVA")/javac"
jar="${JAR:-$root/build/libs/hrts-$("$root/scripts/version.sh").jar}"
[ -f "$jar" ] || { echo "ffm: $jar is missing: run ./gradlew jar first" >&2; exit 1; }
work="$(mktemp -d)"
segment="/hrts-ffmbench-$$"
hrts="${CARGO_TARGET_DIR:-$root/target}/release/hrts"
cleanup() { rm -rf "$work"; [ -x "$hrts" ] && "$hrts" --segment "$segment" unlink >/dev/null 2>&1 || true; }
trap cleanup EXIT
"$javac" -cp "$jar" -d "$work" "$(dirname "${BASH_SOURCE[0]}")"/FfmBench.java
echo "ffm: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), load $(cut -d' ' -f1 /proc/loadavg), $rounds rounds x $calls calls"
# shellcheck disable=SC2086 # JAVA_OPTS is a list of options
"$JAVA" --enable-native-access=ALL-UNNAMED ${JAVA_OPTS:-} -Dhrts.segment="$segment" -cp "$jar:$work" \
    io.hrts.FfmBench "$rounds" "$calls"
