#!/usr/bin/env bash
# Runs the hrts Java benchmarks (JMH, java/benchmarks) in one JMH run and writes
# java/benchmarks/RESULTS.md (the jmhReport task runs scripts/jmh-report.py on the JSON
# results). Fetches JMH (the jmhVersion of build.gradle) into ~/.m2 with Maven first if
# it is not there (Gradle reads mavenLocal()). Extra JMH options:
# scripts/jmh.sh -PjmhArgs="-f 2".
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd -P)
cd "$ROOT"
if ! command -v cargo >/dev/null 2>&1 && [ -x "$HOME/.cargo/bin/cargo" ]; then
    export PATH="$HOME/.cargo/bin:$PATH"
fi
JMH_VERSION=$(sed -n "s/^def jmhVersion = '\(.*\)'.*/\1/p" build.gradle)
if [ -z "$JMH_VERSION" ]; then
    echo "jmh.sh: no \`def jmhVersion = '...'\` in build.gradle" >&2
    exit 1
fi
M2="${HOME}/.m2/repository/org/openjdk/jmh"
for artifact in jmh-core jmh-generator-annprocess; do
    if [ ! -f "$M2/$artifact/$JMH_VERSION/$artifact-$JMH_VERSION.jar" ]; then
        if command -v mvn >/dev/null 2>&1; then
            echo "fetching org.openjdk.jmh:$artifact:$JMH_VERSION into ~/.m2"
            mvn -q dependency:get -Dartifact="org.openjdk.jmh:$artifact:$JMH_VERSION"
        else
            echo "mvn not found: Gradle will try Maven Central for $artifact" >&2
        fi
    fi
done
exec ./gradlew --console=plain jmh "$@"
