#!/usr/bin/env bash
# Builds libhrts (release) and the scenario example, compiles the C statistics
# tests against include/hrts.h, runs them on segments of their own (time and
# statistics), and checks that the scenario dump equals the one the Rust
# scenario makes. The last line of output is "c-stats: N passed, N failed".
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)"
cd "$root"

cargo build --release -q -p hrts-capi -p hrts-cli
# The scenario only counts and dumps, so a test build does: an example brings the
# crate's dev-dependencies (criterion and more), which the cargo stage has built for
# tests already, where a release build of them took 2 CPU-minutes of its own. With the
# test build's selection (--workspace --all-features): any other unifies features
# differently and rebuilds the crates.
cargo build -q --workspace --all-features --example scenario
target="${CARGO_TARGET_DIR:-$root/target}"
lib="$target/release"
bin="$target/c"
mkdir -p "$bin"
cc -std=c11 -Wall -Wextra -Werror -O2 -pthread -I include tests/c/stats/stats_test.c \
  -o "$bin/stats_test" -L "$lib" -lhrts -lm -Wl,-rpath,"$lib"
cc -std=c11 -Wall -Wextra -Werror -O2 -I include tests/c/stats/shared_test.c \
  -o "$bin/shared_test" -L "$lib" -lhrts -lm -Wl,-rpath,"$lib"

segment="/hrts-cstats-$$"
stats_segment="/hrts-cstats-shared-$$"
work="$(mktemp -d)"
# `hrts unlink` removes the segment's page as well as its name (rm of /dev/shm/NAME
# would leave the page behind); so does `shared_test unlink` for the statistics one.
trap '"$lib/hrts" --segment "$segment" unlink >/dev/null 2>&1 || true
      "$bin/shared_test" unlink "$stats_segment" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
export HRTS_SEGMENT="$segment"
export HRTS_STATS_SEGMENT="$stats_segment"
set +e
"$bin/stats_test" "$work/c.json" | tee "$work/out.txt"
rc=${PIPESTATUS[0]}
set -e
counts=$(tail -n 1 "$work/out.txt" | sed -n 's/^stats_test: \([0-9]*\) passed, \([0-9]*\) failed$/\1 \2/p')
passed=${counts% *}
failed=${counts#* }
[ -n "$counts" ] || { passed=0; failed=1; }
# The same scenario from Rust must give the same dump.
"$target/debug/examples/scenario" > "$work/rust.txt"
"$target/debug/examples/scenario" --normalize "$work/c.json" > "$work/c.txt"
if diff -u "$work/rust.txt" "$work/c.txt"; then
  passed=$((passed + 1))
else
  echo "FAIL: the C scenario's dump differs from the Rust scenario's"
  failed=$((failed + 1))
fi
[ "$rc" -eq 0 ] || [ "$failed" -gt 0 ] || failed=1
# The shared statistics from C (snapshot, shared timers, unlink).
set +e
"$bin/shared_test" check | tee "$work/shared.txt"
rc=${PIPESTATUS[0]}
set -e
counts=$(tail -n 1 "$work/shared.txt" | sed -n 's/^shared_test: \([0-9]*\) passed, \([0-9]*\) failed$/\1 \2/p')
if [ -n "$counts" ]; then
  passed=$((passed + ${counts% *}))
  failed=$((failed + ${counts#* }))
fi
if [ -z "$counts" ] || { [ "$rc" -ne 0 ] && [ "${counts#* }" -eq 0 ]; }; then
  echo "FAIL: shared_test check exited $rc"
  failed=$((failed + 1))
fi
echo "c-stats: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
