#!/usr/bin/env bash
# The one test command for hrts: Rust (fmt, clippy, minimum Rust version, tests),
# version consistency, cross-architecture tests, C tests, JUnit through the packaged jar
# (with every platform's library checked), the Log4j2, Micrometer and OpenTelemetry
# adapters' tests, and Gradle and Maven consumer projects using the published artifact.
# Exits non-zero if any stage fails.
#
# Every stage that runs tests prints `word: N passed, N failed`; the summary at the end
# repeats those lines and adds the total. A new stage: a `run_stage` line below, or a
# script in `run_optional` (it is counted if it prints such a line, as its last one).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd -P)
cd "$ROOT"
if ! command -v cargo >/dev/null 2>&1 && [ -x "$HOME/.cargo/bin/cargo" ]; then
    export PATH="$HOME/.cargo/bin:$PATH"
fi

START=$SECONDS
STAGE=setup
LOG_DIR=$(mktemp -d "${TMPDIR:-/tmp}/hrts-test.XXXXXX")
trap 'rc=$?; if [ $rc -ne 0 ]; then echo; echo "=== hrts test: FAILED in stage: $STAGE (exit $rc) ==="; fi; rm -rf "$LOG_DIR"' EXIT

stage() {
    STAGE="$*"
    echo
    echo "=== hrts test: $STAGE ==="
}

TOTAL_PASSED=0
TOTAL_FAILED=0
SUMMARY=()
# count WORD PASSED FAILED: prints the stage's line and adds it to the total.
count() {
    local line="$1: $2 passed, $3 failed"
    echo "$line"
    SUMMARY+=("$line")
    TOTAL_PASSED=$((TOTAL_PASSED + $2))
    TOTAL_FAILED=$((TOTAL_FAILED + $3))
}

# The last `word: N passed, N failed` line of a log, as "word passed failed".
count_line() {
    grep -E '^[A-Za-z0-9_-]+: [0-9]+ passed, [0-9]+ failed' "$1" | tail -n 1 \
        | sed -E 's/^([A-Za-z0-9_-]+): ([0-9]+) passed, ([0-9]+) failed.*/\1 \2 \3/' || true
}

# run_stage TITLE COMMAND...: runs one stage, its output teed to a log. A
# `word: N passed, N failed` line in that output is counted (and not printed twice).
run_stage() {
    local title=$1
    shift
    stage "$title"
    local log="$LOG_DIR/stage.log" rc word p f
    set +e
    "$@" 2>&1 | tee "$log"
    rc=${PIPESTATUS[0]}
    set -e
    read -r word p f < <(count_line "$log"; echo)
    if [ -n "${word:-}" ]; then
        SUMMARY+=("$word: $p passed, $f failed")
        TOTAL_PASSED=$((TOTAL_PASSED + p))
        TOTAL_FAILED=$((TOTAL_FAILED + f))
    fi
    [ "$rc" -eq 0 ] || exit "$rc"
}

run_optional() { # script: run it if present (bash if it is not executable)
    local script=$1
    if [ ! -f "$script" ]; then
        echo
        echo "=== hrts test: $script: not present, skipped ==="
    elif [ -x "$script" ]; then
        run_stage "$script" "./$script"
    else
        run_stage "$script (not executable: running with bash)" bash "$script"
    fi
}

GRADLE=("$ROOT/gradlew" --console=plain)

# What the tests leave behind is checked at the end against what was there before:
# segment names in /dev/shm and System V pages nobody has attached.
# Also what they leave in the temp directory (this script's own log directory
# aside; the Java loader's per-user copy of the library, hrts-<user>, is a cache).
leftovers_now() {
    { ls /dev/shm 2>/dev/null | sed -n 's|^\(hrts-.*\)|name /\1|p'
      ipcs -m 2>/dev/null | awk '$1 ~ /^0x/ && $6 == 0 {print "page " $2}'
      ls "${TMPDIR:-/tmp}" 2>/dev/null | grep '^hrts' | grep -vx "$(basename "$LOG_DIR")" \
          | grep -vx "hrts-$(id -un)" | sed 's|^|temp |' || true; } | sort
}
leftovers_now > "$LOG_DIR/leftovers.before"

# Every statistics instance the tests start publishes to shared memory (the
# default): to this run's own segment, removed before the leftovers check.
export HRTS_STATS_SEGMENT="/hrts-stats-test-$$"

run_stage "bootstrap" scripts/bootstrap.sh
run_stage "version: one source (scripts/version.sh --check)" scripts/version.sh --check
run_stage "cargo fmt --all --check" cargo fmt --all --check
# Clippy's incompatible_msrv lint is part of it: std APIs newer than rust-version fail.
run_stage "cargo clippy --workspace --all-targets --all-features -- -D warnings" \
    cargo clippy --workspace --all-targets --all-features -- -D warnings
run_stage "minimum Rust version (scripts/msrv.sh)" scripts/msrv.sh
run_stage "docs: rustdoc and javadoc without warnings (scripts/docs-check.sh)" scripts/docs-check.sh

stage "cargo test --workspace --all-features (the testing feature adds the multi-process hooks)"
set +e
cargo test --workspace --all-features 2>&1 | tee "$LOG_DIR/cargo-test.log"
rc=${PIPESTATUS[0]}
set -e
read -r passed failed < <(sed -n 's/^test result: [A-Za-z]*\. \([0-9]*\) passed; \([0-9]*\) failed.*/\1 \2/p' \
    "$LOG_DIR/cargo-test.log" | awk '{p += $1; f += $2} END {print p + 0, f + 0}')
count cargo "$passed" "$failed"
[ "$rc" -eq 0 ] || exit "$rc"

run_optional scripts/cross-test.sh
run_optional tests/c/run.sh
run_optional tests/c/stats/run.sh
run_optional tests/stats-shared/prometheus.sh

# junit_counts DIR: prints "passed failed" of the JUnit XML results in DIR; nothing if
# there are none (so that `read` fails).
junit_counts() {
    local results
    shopt -s nullglob
    results=("$1"/TEST-*.xml)
    shopt -u nullglob
    [ "${#results[@]}" -gt 0 ] || return 0
    grep -h -o '<testsuite [^>]*>' "${results[@]}" | awk '
        { for (i = 1; i <= NF; i++) {
            split($i, kv, "="); v = kv[2]; gsub(/[^0-9]/, "", v)
            if (kv[1] == "tests") t += v; else if (kv[1] == "failures") f += v
            else if (kv[1] == "errors") e += v; else if (kv[1] == "skipped") s += v } }
        END { print t - f - e - s, f + e }'
}

stage "JUnit: ./gradlew :cleanTest :test (through the packaged jar)"
set +e
"${GRADLE[@]}" :cleanTest :test
rc=$?
set -e
if ! read -r jpassed jfailed < <(junit_counts build/test-results/test); then
    echo "junit: no test results in build/test-results/test"
    [ "$rc" -ne 0 ] || rc=1
    exit "$rc"
fi
count junit "$jpassed" "$jfailed"
[ "$rc" -eq 0 ] || exit "$rc"
[ "$jfailed" -eq 0 ] && [ "$jpassed" -gt 0 ] || exit 1

# After JUnit: the release libhrts and hrts are built.
run_optional tests/trace/run.sh

# After JUnit: it needs the jar, the JUnit classes and the C test program.
run_stage "fuzz: 100,000 damages of a live segment with C, Rust and Java readers (tests/fuzz/run.sh)" \
    tests/fuzz/run.sh 100000

# Each adapter's JUnit suite, against the real library (adapters/*/build.gradle).
ADAPTERS=(log4j2 micrometer opentelemetry)
stage "adapters: ${ADAPTERS[*]} (./gradlew :hrts-<adapter>:test)"
tasks=()
for a in "${ADAPTERS[@]}"; do tasks+=(":hrts-$a:cleanTest" ":hrts-$a:test"); done
set +e
"${GRADLE[@]}" --continue "${tasks[@]}"
rc=$?
set -e
for a in "${ADAPTERS[@]}"; do
    if read -r p f < <(junit_counts "adapters/$a/build/test-results/test") && [ "$p" -gt 0 ]; then
        count "$a" "$p" "$f"
    else
        echo "$a: no test results in adapters/$a/build/test-results/test"
        count "$a" 0 1
    fi
done
[ "$rc" -eq 0 ] || exit "$rc"

stage "publishToMavenLocal + consumer project (tests/consumer)"
"${GRADLE[@]}" publishToMavenLocal
# On a segment of its own: the test command neither uses nor changes this user's
# default segment (which an older hrts may still hold).
consumer_segment="/hrts-consumer-$$"
set +e
HRTS_SEGMENT="$consumer_segment" "${GRADLE[@]}" -q -p tests/consumer run 2>&1 | tee "$LOG_DIR/consumer.log"
rc=${PIPESTATUS[0]}
target/release/hrts --segment "$consumer_segment" unlink >/dev/null 2>&1
set -e
if [ "$rc" -eq 0 ] && grep -Eq '^hrts consumer: stamp [0-9]{19} ns' "$LOG_DIR/consumer.log"; then
    count consumer 1 0
else
    count consumer 0 1
    exit 1
fi

stage "published artifacts: jar, sources, Javadoc and POM of hrts and each adapter in ~/.m2"
hrts_version=$(scripts/version.sh)
pub_ok=0
pub_bad=0
for a in hrts hrts-log4j2 hrts-micrometer hrts-opentelemetry; do
    dir="$HOME/.m2/repository/io/hrts/$a/$hrts_version"
    missing=()
    for f in "$a-$hrts_version.jar" "$a-$hrts_version-sources.jar" "$a-$hrts_version-javadoc.jar" "$a-$hrts_version.pom"; do
        [ -s "$dir/$f" ] || missing+=("$f")
    done
    for tag in '<name>' '<description>' '<licenses>'; do
        grep -q "$tag" "$dir/$a-$hrts_version.pom" 2>/dev/null || missing+=("$tag in the POM")
    done
    if [ "${#missing[@]}" -eq 0 ]; then
        pub_ok=$((pub_ok + 1))
    else
        echo "$a: missing in $dir: ${missing[*]}"
        pub_bad=$((pub_bad + 1))
    fi
done
count published "$pub_ok" "$pub_bad"
[ "$pub_bad" -eq 0 ] || exit 1

stage "Maven consumer project (tests/consumer-maven, mvn)"
# The sample writes the version as a user would: it must be the one this build published.
if ! grep -q "<hrts.version>$hrts_version</hrts.version>" tests/consumer-maven/pom.xml; then
    echo "tests/consumer-maven/pom.xml: <hrts.version> is not $hrts_version (the version in Cargo.toml)"
    count maven-consumer 0 1
    exit 1
fi
consumer_segment="/hrts-maven-consumer-$$"
set +e
# (Debian's mvn writes colour resets even in batch mode: dropped.)
HRTS_SEGMENT="$consumer_segment" mvn -B -q -Dstyle.color=never -f tests/consumer-maven/pom.xml \
    compile exec:exec 2>&1 | sed 's/\x1b\[[0-9;]*m//g' | tee "$LOG_DIR/maven-consumer.log"
rc=${PIPESTATUS[0]}
target/release/hrts --segment "$consumer_segment" unlink >/dev/null 2>&1
set -e
if [ "$rc" -eq 0 ] && grep -Eq '^hrts maven consumer: stamp [0-9]{19} ns' "$LOG_DIR/maven-consumer.log"; then
    count maven-consumer 1 0
else
    count maven-consumer 0 1
    exit 1
fi

# The run's statistics segment (see HRTS_STATS_SEGMENT above) is the run's to remove.
target/release/hrts stats unlink --segment "$HRTS_STATS_SEGMENT" >/dev/null 2>&1 || true

stage "leftovers: segment names, pages and temp-directory entries the tests created and did not remove"
leftovers_now | comm -13 "$LOG_DIR/leftovers.before" - > "$LOG_DIR/leftovers.after"
if [ -s "$LOG_DIR/leftovers.after" ]; then
    cat "$LOG_DIR/leftovers.after"
    count leftovers 0 1
    exit 1
fi
count leftovers 1 0

echo
if [ "$TOTAL_FAILED" -eq 0 ]; then
    STAGE=done
    echo "=== hrts test: all stages passed in $((SECONDS - START)) s ==="
else
    STAGE="summary: a stage reported failed tests but exited 0"
    echo "=== hrts test: summary after $((SECONDS - START)) s ==="
fi
printf '%s\n' "${SUMMARY[@]}"
echo "total: $TOTAL_PASSED passed, $TOTAL_FAILED failed"
[ "$TOTAL_FAILED" -eq 0 ]
