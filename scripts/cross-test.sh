#!/usr/bin/env bash
# Runs the clock core's unit tests on aarch64 and ppc64le under qemu user-mode
# emulation (linkers and runners: .cargo/config.toml). Under qemu the emulated
# counters (CNTVCT_EL0, the Time Base) really tick, so the sources are read and
# calibrated for real; tests there use tolerances that fit an emulator.
#
# Usage: scripts/cross-test.sh [target ...]   (default: both targets)
# Prints each target's cargo test summary and finally `cross: N passed, N failed`;
# exits non-zero if any test failed or a target did not build.
set -u
cd "$(dirname "$0")/.."

targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
    targets=(aarch64-unknown-linux-gnu powerpc64le-unknown-linux-gnu)
fi
export CARGO_TARGET_DIR="${CROSS_TARGET_DIR:-$PWD/target/cross}"

passed=0
failed=0
status=0
for t in "${targets[@]}"; do
    echo "== $t"
    log="$(mktemp)"
    # A test that runs its own binary again as a child process (a killed holder of
    # the writer role) starts it under the same emulator: its runner in
    # .cargo/config.toml, which cargo gives to the test binary but not to its children.
    case "$t" in
        aarch64-unknown-linux-gnu) runner="qemu-aarch64-static -L /usr/aarch64-linux-gnu" ;;
        powerpc64le-unknown-linux-gnu) runner="qemu-ppc64le-static -L /usr/powerpc64le-linux-gnu" ;;
        *) runner="" ;;
    esac
    # The core optimised (opt-level 1, debug assertions and overflow checks kept): under
    # emulation its unit tests took 53 CPU-seconds unoptimised and 16 at 1, for 16 more
    # of compiling (aarch64, 2026-11-28); the tests with fixed lengths set the wall.
    HRTS_TEST_SELF_RUNNER="$runner" cargo test --config 'profile.dev.package.hrts-core.opt-level=1' \
        -p hrts-core --lib --target "$t" >"$log" 2>&1
    rc=$?
    # The per-binary summary line(s): "test result: ok. 36 passed; 0 failed; ..."
    summary="$(grep -E '^test result:' "$log")"
    if [ -n "$summary" ]; then
        echo "$summary"
        grep -E '^test .* FAILED$|^---- ' "$log" || true
        p=$(echo "$summary" | sed -nE 's/.* ([0-9]+) passed.*/\1/p' | awk '{s+=$1} END {print s+0}')
        f=$(echo "$summary" | sed -nE 's/.* ([0-9]+) failed.*/\1/p' | awk '{s+=$1} END {print s+0}')
        passed=$((passed + ${p:-0}))
        failed=$((failed + ${f:-0}))
    else
        echo "$t: no test summary (build or runner failure); last lines:"
        tail -n 20 "$log"
        failed=$((failed + 1))
    fi
    if [ "$rc" -ne 0 ]; then
        status=1
        # Show the failing tests' output for diagnosis.
        sed -n '/^failures:$/,/^test result:/p' "$log" | head -n 80
    fi
    rm -f "$log"
done
echo "cross: $passed passed, $failed failed"
[ "$status" -eq 0 ] && [ "$failed" -eq 0 ]
