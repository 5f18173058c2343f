#!/usr/bin/env bash
# The one test command for hrts: Rust (fmt, clippy, tests), cross-architecture tests,
# C tests, JUnit through the packaged jar, and a consumer project using the published
# Maven artifact. Exits non-zero if any stage fails.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd -P)
cd "$ROOT"
if ! command -v cargo >/dev/null 2>&1 && [ -x "$HOME/.cargo/bin/cargo" ]; then
    export PATH="$HOME/.cargo/bin:$PATH"
fi

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
count() { TOTAL_PASSED=$((TOTAL_PASSED + $1)); TOTAL_FAILED=$((TOTAL_FAILED + $2)); }

GRADLE=("$ROOT/gradlew" --console=plain)

stage "bootstrap"
scripts/bootstrap.sh

stage "cargo fmt --all --check"
cargo fmt --all --check

stage "cargo clippy --workspace --all-targets --all-features -- -D warnings"
cargo clippy --workspace --all-targets --all-features -- -D warnings

stage "cargo test --workspace --all-features (the testing feature adds the multi-process hooks)"
set +e
cargo test --workspace --all-features 2>&1 | tee "$LOG_DIR/cargo-test.log"
rc=${PIPESTATUS[0]}
set -e
read -r passed failed < <(sed -n 's/^test result: [A-Za-z]*\. \([0-9]*\) passed; \([0-9]*\) failed.*/\1 \2/p' \
    "$LOG_DIR/cargo-test.log" | awk '{p += $1; f += $2} END {print p + 0, f + 0}')
echo "cargo: $passed passed, $failed failed"
count "$passed" "$failed"
[ "$rc" -eq 0 ] || exit "$rc"

run_optional() { # path: run if present
    local script=$1
    if [ -f "$script" ]; then
        stage "$script"
        local log="$LOG_DIR/$(basename "$script").log" rc line p f
        set +e
        if [ -x "$script" ]; then "./$script"; else echo "(not executable: running with bash)"; bash "$script"; fi 2>&1 | tee "$log"
        rc=${PIPESTATUS[0]}
        set -e
        # Count its own "word: N passed, N failed" line, if it prints one.
        line=$(grep -E '^([A-Za-z0-9_-]+: )?[0-9]+ passed, [0-9]+ failed' "$log" | tail -n 1 || true)
        if [ -n "$line" ]; then
            p=$(sed -E 's/^([A-Za-z0-9_-]+: )?([0-9]+) passed, ([0-9]+) failed.*/\2/' <<<"$line")
            f=$(sed -E 's/^([A-Za-z0-9_-]+: )?([0-9]+) passed, ([0-9]+) failed.*/\3/' <<<"$line")
            count "$p" "$f"
        fi
        [ "$rc" -eq 0 ] || exit "$rc"
    else
        echo
        echo "=== hrts test: $script: not present, skipped ==="
    fi
}
run_optional scripts/cross-test.sh
run_optional tests/c/run.sh

stage "JUnit: ./gradlew cleanTest test (through the packaged jar)"
set +e
"${GRADLE[@]}" cleanTest test
rc=$?
set -e
shopt -s nullglob
results=(build/test-results/test/TEST-*.xml)
shopt -u nullglob
if [ "${#results[@]}" -eq 0 ]; then
    echo "junit: no test results in build/test-results/test"
    [ "$rc" -ne 0 ] || rc=1
    exit "$rc"
fi
read -r tests failures errors skipped < <(grep -h -o '<testsuite [^>]*>' "${results[@]}" | awk '
    { for (i = 1; i <= NF; i++) {
        split($i, kv, "="); v = kv[2]; gsub(/[^0-9]/, "", v)
        if (kv[1] == "tests") t += v; else if (kv[1] == "failures") f += v
        else if (kv[1] == "errors") e += v; else if (kv[1] == "skipped") s += v } }
    END { print t + 0, f + 0, e + 0, s + 0 }')
jpassed=$((tests - failures - errors - skipped))
jfailed=$((failures + errors))
echo "junit: $jpassed passed, $jfailed failed"
count "$jpassed" "$jfailed"
[ "$rc" -eq 0 ] || exit "$rc"
[ "$jfailed" -eq 0 ] && [ "$jpassed" -gt 0 ] || exit 1

stage "publishToMavenLocal + consumer project (tests/consumer)"
"${GRADLE[@]}" publishToMavenLocal
set +e
"${GRADLE[@]}" -q -p tests/consumer run 2>&1 | tee "$LOG_DIR/consumer.log"
rc=${PIPESTATUS[0]}
set -e
if [ "$rc" -eq 0 ] && grep -Eq '^hrts consumer: stamp [0-9]{19} ns' "$LOG_DIR/consumer.log"; then
    echo "consumer: 1 passed, 0 failed"
    count 1 0
else
    echo "consumer: 0 passed, 1 failed"
    exit 1
fi

STAGE=done
echo
echo "=== hrts test: all stages passed ==="
echo "total: $TOTAL_PASSED passed, $TOTAL_FAILED failed"
