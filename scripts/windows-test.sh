#!/usr/bin/env bash
# Builds hrts for Windows (x86_64-pc-windows-gnu, with Debian's mingw-w64) and runs it
# under Wine: the core's unit tests (the platform-independent protocol; the Linux-only
# ones are cfg-gated), then `hrts.exe` checks: `now` agrees with Wine's system time
# within 1 ms, `info` shows the counter source and its calibration, two processes share
# one segment (unique stamps never repeat across them), and the Linux-only commands say
# so; then hrts.dll from C (tests/windows/hrts_dll_test.c: stamps, unique stamps,
# sequence numbers, an invalid name). Debug builds only: this checks behaviour, not speed.
#
# Usage: scripts/windows-test.sh
# Prints the core's cargo test summary, one line per CLI check, and finally
# `windows: N passed, N failed`; exits non-zero if anything failed.
#
# Wine: the prefix and its bcryptprimitives.dll stand-in are scripts/windows/wine.sh's.
set -u
cd "$(dirname "$0")/.."

TARGET=x86_64-pc-windows-gnu
# shellcheck source=windows/wine.sh
. scripts/windows/wine.sh
export CARGO_TARGET_X86_64_PC_WINDOWS_GNU_RUNNER=wine
# A segment of this run's own (Wine passes the environment to Windows programs).
export HRTS_SEGMENT="/hrts-wintest-$$"

passed=0
failed=0
pass() { echo "ok: $*"; passed=$((passed + 1)); }
fail() { echo "FAILED: $*"; failed=$((failed + 1)); }
finish() {
    echo "windows: $passed passed, $failed failed"
    [ "$failed" -eq 0 ]
    exit
}

# ---- The Wine prefix, with the bcryptprimitives.dll stand-in.
hrts_wine_prefix || { fail "the Wine prefix (scripts/windows/wine.sh)"; finish; }

# ---- The core's unit tests under Wine.
echo "== hrts-core unit tests ($TARGET, under wine)"
log="$(mktemp)"
work="$(mktemp -d)"
trap 'rm -rf "$log" "$work"' EXIT
cargo test -p hrts-core --lib --target "$TARGET" >"$log" 2>&1
rc=$?
summary="$(grep -E '^test result:' "$log")"
if [ -n "$summary" ]; then
    echo "$summary"
    grep -E '^test .* FAILED$' "$log" || true
    p=$(echo "$summary" | sed -nE 's/.* ([0-9]+) passed.*/\1/p' | awk '{s+=$1} END {print s+0}')
    f=$(echo "$summary" | sed -nE 's/.* ([0-9]+) failed.*/\1/p' | awk '{s+=$1} END {print s+0}')
    passed=$((passed + p))
    failed=$((failed + f))
    [ "$rc" -eq 0 ] || sed -n '/^failures:$/,/^test result:/p' "$log" | head -n 80
else
    echo "no test summary (build or runner failure); last lines:"
    tail -n 20 "$log"
    fail "hrts-core unit tests"
fi

# ---- hrts.exe
echo "== hrts.exe ($TARGET, under wine)"
if ! cargo build -p hrts-cli --target "$TARGET" >"$log" 2>&1; then
    tail -n 20 "$log"
    fail "building hrts.exe"
    finish
fi
target_dir=$(cargo metadata --format-version 1 --no-deps | sed -nE 's/.*"target_directory":"([^"]*)".*/\1/p')
HRTS="$target_dir/$TARGET/debug/hrts.exe"

# A process that keeps the segment for ~3 s: a Windows segment lives as long as some
# process has it open, so the processes below attach to this one's.
wine "$HRTS" test 4 1 >"$work/holder.out" 2>"$work/holder.err" &
holder=$!
for _ in $(seq 1 300); do
    [ -s "$work/holder.out" ] && break
    sleep 0.05
done

# `now` against the system time: Linux's clock around the whole Wine process, and the
# offset `info` measures inside one Windows process (calendar minus timeline, the
# narrowest of five brackets of GetSystemTimePreciseAsFileTime).
before=$(date +%s%N)
now=$(wine "$HRTS" now 2>&1)
after=$(date +%s%N)
if [[ "$now" =~ ^[0-9]+$ ]] && [ "$now" -ge $((before - 1000000)) ] \
    && [ "$now" -le $((after + 1000000)) ]; then
    pass "hrts.exe now $now lies between the system clock's $before and $after (±1 ms)"
else
    fail "hrts.exe now said '$now', outside [$before, $after] ± 1 ms"
fi
wine "$HRTS" info >"$work/info" 2>&1
offset=$(sed -nE 's/^offset ns: (-?[0-9]+)$/\1/p' "$work/info")
if [ -n "$offset" ] && [ "${offset#-}" -lt 1000000 ]; then
    pass "hrts.exe info: the timeline is $offset ns from Wine's system time (< 1 ms)"
else
    fail "hrts.exe info: offset '${offset:-none}' ns from Wine's system time"
fi
source_line=$(grep -E '^source: ' "$work/info")
if [ -n "$source_line" ] && grep -qE '^frequency: [0-9]+$' "$work/info" \
    && grep -qE '^calibration spread ppb: [0-9]+$' "$work/info"; then
    pass "hrts.exe info shows the counter ($source_line) and its calibration ($(grep -E '^frequency: ' "$work/info"))"
else
    fail "hrts.exe info lacks the source or the calibration:"
    head -n 20 "$work/info"
fi
if grep -qx 'opened: attached' "$work/info"; then
    pass "hrts.exe info attached to the segment the first process created"
else
    fail "hrts.exe info did not attach: $(grep '^opened' "$work/info")"
fi

# Two processes stamping at once on the one segment.
wine "$HRTS" unique 20000 >"$work/a" 2>&1 &
a=$!
wine "$HRTS" unique 20000 >"$work/b" 2>&1 &
b=$!
wait "$a"; ra=$?
wait "$b"; rb=$?
lines=$(cat "$work/a" "$work/b" | grep -cE '^[0-9]+$')
dups=$(cat "$work/a" "$work/b" | sort | uniq -d | wc -l)
ordered=1
for f in "$work/a" "$work/b"; do
    sort -n -c -u "$f" 2>/dev/null || ordered=0
done
if [ "$ra" -eq 0 ] && [ "$rb" -eq 0 ] && [ "$lines" -eq 40000 ] && [ "$dups" -eq 0 ] \
    && [ "$ordered" -eq 1 ]; then
    pass "two hrts.exe processes: 40000 unique stamps, each process's increasing, none repeated"
else
    fail "two hrts.exe processes: exit $ra/$rb, $lines stamps, $dups repeated, ordered $ordered"
fi
wait "$holder" || fail "the holder (hrts.exe test 4 1) failed: $(tail -n 3 "$work/holder.err")"

# The Linux-only commands say so.
out=$(wine "$HRTS" daemon --foreground 2>&1)
if [[ "$out" == *"exists only on Linux"* ]]; then
    pass "hrts.exe daemon: $out"
else
    fail "hrts.exe daemon said: $out"
fi

# ---- hrts.dll from C: the test program beside the DLL (Windows looks there first).
echo "== hrts.dll from C ($TARGET, under wine)"
if ! cargo build -p hrts-capi --target "$TARGET" >"$log" 2>&1; then
    tail -n 20 "$log"
    fail "building hrts.dll"
    finish
fi
cp "$target_dir/$TARGET/debug/hrts.dll" "$work/"
if ! x86_64-w64-mingw32-gcc -std=c11 -Wall -Wextra -Werror -Iinclude \
    tests/windows/hrts_dll_test.c -o "$work/hrts_dll_test.exe" \
    -L"$target_dir/$TARGET/debug" -lhrts -ladvapi32 >"$log" 2>&1; then
    cat "$log"
    fail "compiling tests/windows/hrts_dll_test.c"
    finish
fi
# Its sequence file in this run's directory (a Unix path is Z:\... under Wine).
HRTS_SEGMENT="/hrts-wintest-c-$$" HRTS_SEQ_FILE="$work/c.seq" \
    wine "$work/hrts_dll_test.exe" >"$work/c.out" 2>&1
rc=$?
cat "$work/c.out"
p=$(grep -c '^ok: ' "$work/c.out")
f=$(grep -c '^FAILED: ' "$work/c.out")
passed=$((passed + p))
failed=$((failed + f))
if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
    fail "hrts_dll_test.exe exited with $rc"
fi
finish
