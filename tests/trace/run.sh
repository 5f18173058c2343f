#!/usr/bin/env bash
# Multi-host trace test: one timeline across hosts, on one machine.
#
# Each "host" is a network namespace joined by a veth pair to a bridge in a
# switch namespace (all created here, all deleted on exit), with its own hrts
# segment and an artificial clock offset and drift (HRTS_TEST_CLOCK_SKEW, a
# test-only knob of the trace clock). Host 0 is the master (`hrts sync serve`).
# Every process (the `mesh` example of hrts-trace) syncs at the start and the
# end and sends MESSAGES messages round-robin to the processes of the other
# hosts over TCP; then `hrts merge` puts all traces on one timeline and this
# script checks it, partly with the merge's report and partly on its own from
# `hrts trace dump`. Prints `trace: N passed, N failed`.
#
# Needs root for `ip netns`; without it (or with HRTS_TRACE_FORCE_LOOPBACK=1)
# it falls back to loopback (distinct ports) and says so loudly. HRTS_TRACE_HOSTS / _PROCS / _MESSAGES change the
# size (default 4 x 4 x 10000).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd -P)
cd "$ROOT"
if ! command -v cargo >/dev/null 2>&1 && [ -x "$HOME/.cargo/bin/cargo" ]; then
    export PATH="$HOME/.cargo/bin:$PATH"
fi

HOSTS=${HRTS_TRACE_HOSTS:-4}
PROCS=${HRTS_TRACE_PROCS:-4}
MESSAGES=${HRTS_TRACE_MESSAGES:-10000}
EXCHANGES=50
TAG="hrts-t-$$"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/hrts-trace.XXXXXX")
PASSED=0
FAILED=0
PIDS=()
NETNS=()

# Offsets of seconds and drifts of +-100 ppm; host 0 (the master) is unskewed.
OFFSETS=(0 2500000000 -1700000000 800000000 -300000000 1200000000)
DRIFTS=(0 100 -100 37 -64 12)
if [ "$HOSTS" -gt ${#OFFSETS[@]} ] || [ "$HOSTS" -lt 2 ]; then
    echo "trace: HRTS_TRACE_HOSTS must be 2..${#OFFSETS[@]}" >&2
    exit 2
fi

cleanup() {
    local rc=$?
    for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
    for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
    for ns in "${NETNS[@]}"; do ip netns del "$ns" 2>/dev/null || true; done
    if [ -x "${HRTS:-}" ]; then
        for ((h = 0; h < HOSTS; h++)); do "$HRTS" --segment "/$TAG-h$h" unlink >/dev/null 2>&1 || true; done
    fi
    if [ -n "${HRTS_TRACE_KEEP:-}" ]; then echo "kept $WORK"; else rm -rf "$WORK"; fi
    exit $rc
}
trap cleanup EXIT INT TERM

pass() { PASSED=$((PASSED + 1)); echo "  ok: $*"; }
fail() { FAILED=$((FAILED + 1)); echo "  FAILED: $*"; }

echo "== building: hrts and libhrts (release), mesh (test build) + tests/trace/c_writer.c"
# The release build's package set is the same in every script (-p hrts-capi -p hrts-cli):
# cargo unifies features per command, and libhrts.so and hrts carry no hash in their
# names, so another set rebuilds them (a minute of fat LTO) each time the set changes.
cargo build --release --quiet -p hrts-capi -p hrts-cli
# The example with the cargo stage's selection (--workspace --all-features), whose build
# it reuses: in release it built hrts-trace's dev-dependencies again (40 CPU-seconds).
cargo build --quiet --workspace --all-features --example mesh
HRTS="$ROOT/target/release/hrts"
MESH="$ROOT/target/debug/examples/mesh"
CWRITER="$WORK/c_writer"
cc -std=c11 -Wall -Wextra -Werror -O2 -I include tests/trace/c_writer.c -o "$CWRITER" \
    -L target/release -lhrts -Wl,-rpath,"$ROOT/target/release"

# ---------------------------------------------------------------- network
NS_MODE=netns
if [ -n "${HRTS_TRACE_FORCE_LOOPBACK:-}" ]; then
    echo "HRTS_TRACE_FORCE_LOOPBACK is set" >"$WORK/netns.err"
    NS_MODE=loopback
elif ! ip netns add "$TAG-sw" 2>"$WORK/netns.err"; then
    NS_MODE=loopback
fi
if [ "$NS_MODE" = netns ]; then
    NETNS+=("$TAG-sw")
    ip -n "$TAG-sw" link add br0 type bridge
    ip -n "$TAG-sw" link set br0 up
    ip -n "$TAG-sw" link set lo up
    for ((h = 0; h < HOSTS; h++)); do
        ns="$TAG-h$h"
        ip netns add "$ns"
        NETNS+=("$ns")
        ip -n "$TAG-sw" link add "v$h-s" type veth peer name "v$h-h" netns "$ns"
        ip -n "$TAG-sw" link set "v$h-s" master br0 up
        ip -n "$ns" addr add "198.18.0.$((h + 1))/24" dev "v$h-h"
        ip -n "$ns" link set "v$h-h" up
        ip -n "$ns" link set lo up
    done
    host_ip() { echo "198.18.0.$(($1 + 1))"; }
    on_host() { local h=$1; shift; ip netns exec "$TAG-h$h" "$@"; }
    echo "== network: $HOSTS namespaces ($TAG-h*) on a bridge in $TAG-sw, 198.18.0.0/24"
else
    echo "!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!"
    echo "!! WARNING: network namespaces are unavailable here ($(cat "$WORK/netns.err"))."
    echo "!! Falling back to LOOPBACK: every host on 127.0.0.1 with distinct ports."
    echo "!! Clocks are still skewed per host, but traffic never crosses a veth link."
    echo "!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!"
    host_ip() { echo 127.0.0.1; }
    on_host() { shift; "$@"; }
fi
port_of() { echo $((17800 + $1 * 16 + $2)); }   # host, process
MASTER="$(host_ip 0):17700"
# The run's key: the master answers only requests made with it (docs/traces.md).
export HRTS_SYNC_KEY=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')

# ---------------------------------------------------------------- run
REF=$(date +%s%N)
skew_of() { [ "$1" -eq 0 ] && echo "" || echo "${OFFSETS[$1]},${DRIFTS[$1]},$REF"; }
: >"$WORK/peers"
for ((h = 0; h < HOSTS; h++)); do
    for ((p = 0; p < PROCS; p++)); do
        echo "$((h * PROCS + p)) h$h $(host_ip "$h"):$(port_of "$h" "$p")" >>"$WORK/peers"
    done
done
NPROC=$((HOSTS * PROCS))
# Every process syncs twice; the master stops once it answered them all (or idle).
# (+ the C writer's two rounds)
EXPECTED_EXCHANGES=$(((NPROC + 1) * 2 * EXCHANGES))

echo "== master: hrts sync serve on host 0 ($MASTER)"
on_host 0 env HRTS_SEGMENT="/$TAG-h0" HRTS_TRACE_HOST=h0 \
    "$HRTS" sync serve --listen "$MASTER" --idle-exit 30 --max-seconds 100 \
    --max-exchanges "$EXPECTED_EXCHANGES" >"$WORK/serve.out" 2>"$WORK/serve.err" &
SERVE=$!
PIDS+=("$SERVE")
for _ in $(seq 100); do grep -q '^listening:' "$WORK/serve.out" 2>/dev/null && break; sleep 0.1; done
grep -q '^listening:' "$WORK/serve.out" || { cat "$WORK/serve.err"; echo "trace: master did not start"; exit 1; }

# Each host's timeline exists before its processes start (as on a real host),
# so no calibration runs while others sync.
for ((h = 0; h < HOSTS; h++)); do
    on_host "$h" "$HRTS" --segment "/$TAG-h$h" now >/dev/null
done
mkdir -p "$WORK/turns"

# A process written in C (libhrts's trace writer) on host 1, before the mesh.
C_HOST=1
if on_host "$C_HOST" env HRTS_SEGMENT="/$TAG-h$C_HOST" HRTS_TEST_CLOCK_SKEW="$(skew_of "$C_HOST")" \
    "$CWRITER" "$WORK/h$C_HOST-c.htr" "$MASTER" "h$C_HOST" >"$WORK/c.out" 2>&1; then
    pass "a C process traced and synced through libhrts ($(tail -1 "$WORK/c.out"))"
else
    fail "C writer: $(cat "$WORK/c.out")"
fi
echo "== $NPROC processes ($HOSTS hosts x $PROCS), $MESSAGES messages each"
started=$(date +%s%N)
MESH_PIDS=()
for ((h = 0; h < HOSTS; h++)); do
    for ((p = 0; p < PROCS; p++)); do
        i=$((h * PROCS + p))
        on_host "$h" env HRTS_SEGMENT="/$TAG-h$h" HRTS_TEST_CLOCK_SKEW="$(skew_of "$h")" \
            "$MESH" --index "$i" --peers "$WORK/peers" --messages "$MESSAGES" \
            --out "$WORK/h$h-p$p.htr" --master "$MASTER" --exchanges "$EXCHANGES" --deadline-s 100 \
            --turns "$WORK/turns" \
            >"$WORK/mesh$i.out" 2>"$WORK/mesh$i.err" &
        MESH_PIDS+=($!)
        PIDS+=($!)
    done
done
ok=0
for i in "${!MESH_PIDS[@]}"; do
    if wait "${MESH_PIDS[$i]}"; then ok=$((ok + 1)); else echo "    mesh $i: $(cat "$WORK/mesh$i.err")"; fi
done
run_s=$(awk -v a="$started" -v b="$(date +%s%N)" 'BEGIN { printf "%.1f", (b - a) / 1e9 }')
[ "$ok" -eq "$NPROC" ] && pass "$NPROC processes recorded and synced ($run_s s)" || fail "only $ok of $NPROC processes finished"
wait "$SERVE" || true
cat "$WORK/serve.out" | sed 's/^/    serve: /'
RUN_WALL=$(sed -n 's/^run wall ns: //p' "$WORK/serve.out")
[ -n "$RUN_WALL" ] && [ "$RUN_WALL" -gt 0 ] && pass "master served and measured the run: $RUN_WALL ns" || fail "master printed no run"

# ---------------------------------------------------------------- merge
echo "== hrts merge"
if "$HRTS" merge "$WORK"/h*-p*.htr "$WORK/h$C_HOST-c.htr" --out "$WORK/global.htr" --json "$WORK/global.json" >"$WORK/merge.out" 2>"$WORK/merge.err"; then
    pass "merge succeeded"
else
    fail "merge failed: $(cat "$WORK/merge.err")"
fi
sed 's/^/    /' "$WORK/merge.out"

# Recovered offsets and drifts against the injected ones, within the reported bounds.
for ((h = 0; h < HOSTS; h++)); do
    line=$(grep "^clock host=h$h " "$WORK/merge.out" || true)
    if [ -z "$line" ]; then fail "no fit reported for h$h"; continue; fi
    if [ "$h" -eq 0 ]; then
        grep -q "mapping=master-clock" <<<"$line" && pass "h0 is the master's clock (identity)" || fail "h0: $line"
        continue
    fi
    verdict=$(awk -v line="$line" -v off="${OFFSETS[$h]}" -v drift="${DRIFTS[$h]}" -v ref="$REF" 'BEGIN {
        n = split(line, f, " ")
        for (i = 1; i <= n; i++) { split(f[i], kv, "="); v[kv[1]] = kv[2] }
        injected = off + (v["at_master_ns"] - ref) * drift * 1e-6
        oerr = v["local_minus_master_ns"] - injected; if (oerr < 0) oerr = -oerr
        derr = v["rate_ppm"] - drift; if (derr < 0) derr = -derr
        ok = (v["mapping"] == "fit" && oerr <= v["bound_ns"] && derr <= v["rate_bound_ppm"])
        printf "%s offset error %.1f ns (bound %.1f), drift error %.4f ppm (bound %.4f)", ok ? "ok" : "bad", oerr, v["bound_ns"], derr, v["rate_bound_ppm"]
    }')
    msg="h$h injected ${OFFSETS[$h]} ns, ${DRIFTS[$h]} ppm: ${verdict#* }"
    [ "${verdict%% *}" = ok ] && pass "$msg" || fail "$msg"
done

total=$((NPROC * MESSAGES))
hline=$(grep '^causality hrts:' "$WORK/merge.out" || true)
nline=$(grep '^causality naive' "$WORK/merge.out" || true)
grep -q ": $total messages, 0 violations, 0 unmatched sends, 0 unmatched receives" <<<"$hline" \
    && pass "hrts merge: $total messages, every receive after its send" || fail "hrts merge: $hline"
naive_v=$(sed -n 's/.* messages, \([0-9]*\) violations.*/\1/p' <<<"$nline")
[ -n "$naive_v" ] && [ "$naive_v" -gt 0 ] && pass "naive merge (local stamps as global): $naive_v violations of $total" || fail "naive: $nline"

# Independent checks from the global trace's records.
"$HRTS" trace dump "$WORK/global.htr" >"$WORK/dump.txt" 2>&1 || true
verdict=$(awk '$1 == "g" {
        n++
        # stamps are decimal u64: compare by length, then as strings (exact)
        if (n > 1 && !(length($2) > length(prev) || (length($2) == length(prev) && $2 > prev))) dup++
        prev = $2
        if ($3 in last && !(length($6) > length(last[$3]) || (length($6) == length(last[$3]) && $6 > last[$3]))) order++
        last[$3] = $6
        if ($4 == "send") send[$5] = $2
        if ($4 == "recv") { recv[$5] = $2 }
    }
    END {
        for (id in recv) {
            m++
            if (!(id in send)) { miss++; continue }
            s = send[id]; r = recv[id]
            if (!(length(r) > length(s) || (length(r) == length(s) && r > s))) bad++
        }
        printf "%d %d %d %d %d %d", n, dup + 0, order + 0, m + 0, miss + 0, bad + 0
    }' "$WORK/dump.txt")
read -r n dup order matched miss bad <<<"$verdict"
c_events=$(awk -v p="$NPROC" '$1 == "g" && $3 == p' "$WORK/dump.txt" | wc -l)
[ "$c_events" -eq 102 ] && pass "the C process's 102 events are in the global trace" || fail "C events in the global trace: $c_events"
[ "$dup" -eq 0 ] && [ "$n" -gt 0 ] && pass "$n events, no two share a global stamp" || fail "$dup stamps not above their predecessor among $n"
[ "$order" -eq 0 ] && pass "every process's events keep their local order" || fail "$order events out of local order"
[ "$matched" -eq "$total" ] && [ "$miss" -eq 0 ] && [ "$bad" -eq 0 ] \
    && pass "from the dump: $matched receives, each later than its send" || fail "from the dump: $matched receives, $miss unmatched, $bad not after their send"

# The run lasts exactly as long as the master's gettimeofday says.
"$HRTS" trace info "$WORK/global.htr" >"$WORK/info.txt" 2>&1 || true
start_t=$(sed -n 's/^run start tick: //p' "$WORK/info.txt"); start_t=${start_t:-0}
end_t=$(sed -n 's/^run end tick: //p' "$WORK/info.txt"); end_t=${end_t:-0}
tick=$(sed -n 's/^tick ns: //p' "$WORK/info.txt"); tick=${tick:-0}
num=${tick%/*}; den=${tick#*/}; [ "$den" = "$tick" ] && den=1
if [ -n "$RUN_WALL" ] && [ $(((end_t - start_t) * num)) -eq $((RUN_WALL * den)) ]; then
    pass "run: $((end_t - start_t)) ticks of $tick ns = $RUN_WALL ns, the master's gettimeofday"
else
    fail "run: ticks $start_t..$end_t of $tick ns vs gettimeofday $RUN_WALL ns"
fi
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if len(d["traceEvents"]) > 0 else 1)' "$WORK/global.json" 2>/dev/null \
    && pass "Chrome/Perfetto JSON parses ($(du -h "$WORK/global.json" | cut -f1))" || fail "global.json does not parse"

# Bad input: refused with a clear message and exit 3, never a crash.
size=$(stat -c %s "$WORK/h1-p0.htr" 2>/dev/null || echo 100)
head -c $((size - 7)) "$WORK/h1-p0.htr" >"$WORK/cut.htr"
set +e
"$HRTS" merge "$WORK/cut.htr" --out "$WORK/x.htr" >/dev/null 2>"$WORK/bad.err"; rc=$?
set -e
[ "$rc" -eq 3 ] && grep -q "cut short" "$WORK/bad.err" && pass "a truncated trace is refused (exit 3): $(cut -c1-80 "$WORK/bad.err")..." || fail "truncated: rc $rc $(cat "$WORK/bad.err")"
printf 'not a trace\n' >"$WORK/foreign.htr"
set +e
"$HRTS" merge "$WORK/foreign.htr" --out "$WORK/x.htr" >/dev/null 2>"$WORK/bad.err"; rc=$?
set -e
[ "$rc" -eq 3 ] && grep -q "not an hrts trace file" "$WORK/bad.err" && pass "a foreign file is refused (exit 3)" || fail "foreign: rc $rc $(cat "$WORK/bad.err")"

echo
if [ "$NS_MODE" = loopback ]; then
    echo "!! WARNING: ran on LOOPBACK, not in network namespaces (see above)"
fi
echo "mode: $NS_MODE"
echo "trace: $PASSED passed, $FAILED failed"
[ "$FAILED" -eq 0 ]
