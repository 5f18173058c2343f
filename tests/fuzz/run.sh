#!/usr/bin/env bash
# The fuzz stage: ROUNDS (default 100000) random damages of a live segment while
# readers in C, Rust and Java stamp it, each damage followed by a fresh open (see
# native/cli/src/commands/fuzz.rs). Needs the jar, the JUnit classes and the C test
# program built by `./gradlew test`. The last line is "fuzz: N passed, N failed":
# the fuzzer's rounds and real-process opens, one per reader, and one for no System V
# page left behind.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
rounds="${1:-100000}"
seed="${HRTS_FUZZ_SEED:-$(date +%s)}"

# The test build's features and targets (--workspace --all-features, as the cargo stage
# builds): any other selection unifies features differently and rebuilds the crates.
cargo build -q --workspace --all-features --bin hrts
target="${CARGO_TARGET_DIR:-$root/target}"
hrts="$target/debug/hrts"
ctest="build/c/hrts_test"
jar="build/libs/hrts-$(scripts/version.sh).jar"
classes="build/classes/java/test"
for f in "$ctest" "$jar" "$classes/io/hrts/TestMains.class"; do
  [ -e "$f" ] || { echo "fuzz: $f is missing: run ./gradlew test first" >&2; exit 1; }
done

export HRTS_SEGMENT="/hrts-fuzz-$$"
# Ties every 10 ms: a damaged line is noticed within one of them.
export HRTS_TIE_INTERVAL_MS=10
work="$(mktemp -d)"
cleanup() {
  for pid in $(jobs -p); do kill -9 "$pid" 2>/dev/null || true; done
  "$hrts" unlink >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
# System V pages of this user that no process has attached: an open that took a
# damaged page for gone must have removed it, not left it behind.
unattached_pages() {
  ipcs -m 2>/dev/null | awk -v me="$(id -un)" '$1 ~ /^0x/ && $3 == me && $6 == 0 {print $2}' | sort
}
unattached_pages >"$work/pages.before"
"$hrts" now >/dev/null

# Readers stamp until the fuzzer is done (this script then creates HRTS_FUZZ_STOP), at most
# 10 minutes. They spin, and would share the CPUs evenly with the fuzzer, whose rounds
# set the stage's length: at nice 10 they take what it leaves (still millions of stamps
# each, across every damage), and the stage ends sooner.
read_ms=600000
export HRTS_FUZZ_STOP="$work/stop"
declare -A reader_pid
nice -n 10 "$ctest" fuzz-read "$read_ms" >"$work/c.out" 2>&1 &
reader_pid[c]=$!
nice -n 10 "$hrts" debug fuzz-read "$read_ms" >"$work/rust.out" 2>&1 &
reader_pid[rust]=$!
nice -n 10 java -cp "$jar:$classes" io.hrts.TestMains fuzz-read "$read_ms" >"$work/java.out" 2>&1 &
reader_pid[java]=$!
for r in c rust java; do
  for _ in $(seq 200); do grep -q attached "$work/$r.out" 2>/dev/null && break; sleep 0.05; done
  grep -q attached "$work/$r.out" || { echo "fuzz: the $r reader did not attach:"; cat "$work/$r.out"; exit 1; }
done

echo "fuzz: $rounds rounds, seed $seed (HRTS_FUZZ_SEED=$seed repeats them)"
set +e
"$hrts" debug fuzz "$rounds" "$seed" | tee "$work/fuzzer.out"
fuzz_rc=${PIPESTATUS[0]}
set -e
touch "$HRTS_FUZZ_STOP"
passed=0
failed=0
read -r p f < <(sed -n 's/^fuzzer: \([0-9]*\) passed, \([0-9]*\) failed$/\1 \2/p' "$work/fuzzer.out") || true
passed=$((passed + ${p:-0}))
failed=$((failed + ${f:-1}))
[ "$fuzz_rc" -eq 0 ] || echo "fuzz: the fuzzer failed (exit $fuzz_rc)"

# Each reader must end by itself (not killed, not hung) and report its counts.
for r in c rust java; do
  pid=${reader_pid[$r]}
  status=0
  timeout_at=$((SECONDS + 30))
  while kill -0 "$pid" 2>/dev/null && [ "$SECONDS" -lt "$timeout_at" ]; do sleep 0.2; done
  if kill -0 "$pid" 2>/dev/null; then
    echo "fuzz: the $r reader hangs"
    failed=$((failed + 1))
    continue
  fi
  wait "$pid" || status=$?
  line=$(grep "^reader $r:" "$work/$r.out" || true)
  if [ "$status" -ne 0 ] || [ -z "$line" ]; then
    echo "fuzz: the $r reader ended with status $status (over 128: killed by a signal):"
    cat "$work/$r.out"
    failed=$((failed + 1))
  else
    # Every stamp checks the line it uses (the slot's quick word): none may come
    # from a damaged line, so none may be more than 1 ms off.
    off=$(sed -n 's/.* off \([0-9]*\) .*/\1/p' <<<"$line")
    echo "$line (off: stamps more than 1 ms from CLOCK_REALTIME, which a damaged line would give)"
    if [ "${off:-1}" -eq 0 ]; then
      passed=$((passed + 1))
    else
      echo "fuzz: the $r reader returned $off stamps from a damaged line"
      failed=$((failed + 1))
    fi
  fi
done
"$hrts" unlink >/dev/null || true
left=$(unattached_pages | comm -13 "$work/pages.before" - | tr '\n' ' ')
if [ -z "$left" ]; then
  echo "System V pages left behind: none"
  passed=$((passed + 1))
else
  echo "fuzz: System V pages left behind (ipcs -m ids): $left"
  failed=$((failed + 1))
fi
echo "fuzz: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
