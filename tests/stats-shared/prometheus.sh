#!/usr/bin/env bash
# A real Prometheus server scrapes `hrts stats serve` and returns, through its HTTP
# query API, the values two writer processes of one service recorded (per process,
# found by the service's name and the instances' ids, and summed with PromQL); one
# writer restarts, and Prometheus keeps its series: none is new, none has a pid.
# Then an `hrts daemon` of its own starts, over a planted statistics file, and its
# health series (ties, offset, bound, status, disruptions) arrive in Prometheus too.
# Everything runs on loopback, on segments of its own; the script stops what it
# started and removes what it made. The last line of output is
# "prometheus: N passed, N failed".
#
# Needs the Debian package prometheus (scripts/bootstrap.sh installs it); uses
# promtool, from the same package, to lint the exposition when it is there.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"

passed=0
failed=0
pass() { echo "ok: $*"; passed=$((passed + 1)); }
fail() { echo "FAIL: $*"; failed=$((failed + 1)); }
cleanup() { :; }
# Stops everything, then prints the count line last and exits.
finish() {
  cleanup
  echo "prometheus: $passed passed, $failed failed"
  if [ "$failed" -eq 0 ]; then exit 0; fi
  exit 1
}

if ! command -v prometheus >/dev/null 2>&1; then
  fail "no prometheus command: install the Debian package prometheus (scripts/bootstrap.sh)"
  finish
fi

# The writers are `hrts debug stats-record`, a test-build command (the testing feature).
# The test build's features and targets (--workspace --all-features, as the cargo stage
# builds): any other selection unifies features differently and rebuilds the crates.
cargo build -q --workspace --all-features --bin hrts
hrts="${CARGO_TARGET_DIR:-$root/target}/debug/hrts"

export HRTS_SEGMENT="/hrts-prom-time-$$"
export HRTS_STATS_SEGMENT="/hrts-stats-test-$$"
work="$(mktemp -d "${TMPDIR:-/tmp}/hrts-prom.XXXXXX")"
# The daemon's directory: hrts stats serve finds the daemon's health file there.
# The test command turns the host page off for every stage (scripts/test.sh); this
# directory is the test's own, and a reader looks for the daemon's health only
# where the host page is on.
export HRTS_HOST_DIR="$work/host"
unset HRTS_HOST
pids=()
# Idempotent: finish runs it, and the EXIT trap again.
cleanup() {
  exec 8>&- 9>&- 2>/dev/null || true
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  pids=()
  "$hrts" stats unlink >/dev/null 2>&1 || true
  "$hrts" unlink >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

# wait_for SECONDS COMMAND...: polls COMMAND every 0.1 s until it succeeds.
wait_for() {
  local tries=$(($1 * 10))
  shift
  until "$@"; do
    tries=$((tries - 1))
    [ "$tries" -gt 0 ] || return 1
    sleep 0.1
  done
}

# Two writers of one service, told apart by their instance ids, each reading a FIFO
# of its own: each lives until the script closes its end (fd 8 for a, 9 for b).
# Both count `requests_total`: exposed as hrts_requests_total, not ..._total_total.
export HRTS_STATS_PROGRAM=checkout
# Exited writers stay until the end (no reclaiming in this run's time).
export HRTS_STATS_GRACE_MS=600000
mkfifo "$work/hold-a" "$work/hold-a2" "$work/hold-b"
writer_a() { # VALUE FIFO OUT: writer a, instance id a (run in the background: $! is its pid)
  HRTS_STATS_INSTANCE_ID=a exec "$hrts" debug stats-record --counter "requests_total=$1,errors=1" \
    --gauge queue=2.5 --timer latency=1500000 --repeat 4 <"$2" >"$3" 9>&-
}
writer_a 3 "$work/hold-a" "$work/a.json" &
pid_a=$!
pids+=("$pid_a")
exec 8>"$work/hold-a"
HRTS_STATS_INSTANCE_ID=b "$hrts" debug stats-record --counter requests_total=5 --gauge queue=7 \
  --timer latency=2000000 <"$work/hold-b" >"$work/b.json" 8>&- &
pid_b=$!
pids+=("$pid_b")
exec 9>"$work/hold-b"
if ! wait_for 20 test -s "$work/a.json" || ! wait_for 20 test -s "$work/b.json"; then
  fail "the writers printed no dump"
  finish
fi

# Later children must not hold the FIFOs' writing ends (fd 8, 9), or the writers
# never see the end of their input.
"$hrts" stats serve --listen 127.0.0.1:0 >"$work/serve.out" 8>&- 9>&- &
pids+=("$!")
if ! wait_for 20 grep -qs '^listening on http://' "$work/serve.out"; then
  fail "hrts stats serve did not say where it listens"
  finish
fi
serve_addr=$(sed -n 's|^listening on http://||p' "$work/serve.out")
echo "hrts stats serve: $serve_addr; writers: $pid_a $pid_b"

get() { # URL: the body, or a failure
  python3 -c 'import sys, urllib.request; sys.stdout.write(urllib.request.urlopen(sys.argv[1], timeout=5).read().decode())' "$1"
}

if command -v promtool >/dev/null 2>&1; then
  get "http://$serve_addr/metrics" >"$work/metrics.prom"
  if promtool check metrics <"$work/metrics.prom"; then
    pass "promtool check metrics accepts /metrics"
  else
    fail "promtool check metrics refuses /metrics:"
    cat "$work/metrics.prom"
  fi
else
  echo "promtool not installed: the exposition is not linted"
fi

prom_port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
cat >"$work/prometheus.yml" <<EOF
global:
  scrape_interval: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: hrts
    scrape_interval: 1s
    scrape_timeout: 1s
    static_configs:
      - targets: ['$serve_addr']
EOF
prometheus --config.file="$work/prometheus.yml" --storage.tsdb.path="$work/data" \
  --web.listen-address="127.0.0.1:$prom_port" >"$work/prometheus.log" 2>&1 8>&- 9>&- &
pids+=("$!")
echo "prometheus: 127.0.0.1:$prom_port"

# The checks, in phases: each query's value against the recorded one. A process is
# named by `program` (the service) and `hrts_instance` (its instance id); Prometheus
# keeps `instance` for its target. No pid label: a restart must not start a series.
cat >"$work/checks.py" <<'PY'
import json, sys, time, urllib.parse, urllib.request

prom, phase = sys.argv[1:3]
passed = failed = 0

def query(expr):
    url = f"http://{prom}/api/v1/query?" + urllib.parse.urlencode({"query": expr})
    with urllib.request.urlopen(url, timeout=5) as r:
        body = json.load(r)
    if body.get("status") != "success":
        raise RuntimeError(f"{expr}: {body}")
    return body["data"]["result"]

def series(match, seconds=600):
    """Every series matching `match` that Prometheus stored in the last `seconds`."""
    now = time.time()
    params = {"match[]": match, "start": now - seconds, "end": now}
    url = f"http://{prom}/api/v1/series?" + urllib.parse.urlencode(params)
    with urllib.request.urlopen(url, timeout=5) as r:
        body = json.load(r)
    if body.get("status") != "success":
        raise RuntimeError(f"series {match}: {body}")
    return body["data"]

def check(what, ok, detail=""):
    global passed, failed
    if ok:
        passed += 1
        print(f"ok: {what}")
    else:
        failed += 1
        print(f"FAIL: {what} {detail}")

def value(expr):
    r = query(expr)
    return [float(s["value"][1]) for s in r], r

def expect(expr, want, rel=1e-9):
    got, raw = value(expr)
    ok = len(got) == 1 and abs(got[0] - want) <= rel * max(abs(want), 1e-12)
    check(f"{expr} = {want}", ok, f"(got {raw})")

def wait_until(what, cond, seconds=30):
    deadline = time.monotonic() + seconds
    while True:
        try:
            if cond():
                return check(what, True)
        except Exception:  # not started yet
            pass
        if time.monotonic() >= deadline:
            return check(what, False)
        time.sleep(0.2)

A = 'program="checkout",hrts_instance="a"'
B = 'program="checkout",hrts_instance="b"'
# Writer a's hrts series: those there now, and every one stored (series API).
NOW_A = f'count({{__name__=~"hrts_.+",{A}}})'
ALL_A = f'{{__name__=~"hrts_.+",{A}}}'

if phase == "first":
    def ready():
        up = query('up{job="hrts"}')
        return up and up[0]["value"][1] == "1" and len(query("hrts_requests_total")) == 2
    wait_until("Prometheus scrapes hrts stats serve (up == 1, both writers' series)", ready)
    expect(f"hrts_requests_total{{{A}}}", 12)
    expect(f"hrts_requests_total{{{B}}}", 5)
    expect(f"hrts_errors_total{{{A}}}", 4)
    expect(f"hrts_queue{{{A}}}", 2.5)
    expect(f"hrts_queue{{{B}}}", 7)
    expect(f"hrts_latency_seconds_count{{{A}}}", 4)
    expect(f"hrts_latency_seconds_count{{{B}}}", 1)
    expect(f"hrts_latency_seconds_sum{{{A}}}", 0.006)
    expect(f"hrts_latency_seconds_sum{{{B}}}", 0.002)
    # One datum: every quantile is it, within the histogram's 1 %.
    expect(f'hrts_latency_seconds{{{B},quantile="0.99"}}', 0.002, rel=0.01)
    # The service, found by its name, summed over its instances.
    expect('sum by (program) (hrts_requests_total{program="checkout"})', 17)
    expect("sum(hrts_queue)", 9.5)
    expect("sum(hrts_latency_seconds_count)", 5)
    expect("sum(hrts_latency_seconds_sum)", 0.008)
    expect('hrts_stats_processes{state="live"}', 2)
    # The library's own metrics: hrts_stats_*, one prefix; no doubled suffix anywhere.
    expect(f"hrts_stats_dropped_events{{{A}}}", 0)
    _, raw = value('{__name__=~"hrts_hrts_.*|.*_total_total|.*_seconds_seconds"}')
    check("no hrts_hrts_, _total_total or _seconds_seconds series", raw == [], f"(got {raw})")
    # The rate gauges: one series per writer, summable, within what was
    # recorded in a window (they decay to 0 once the writers are idle).
    expect("count(hrts_requests_per_second)", 2)
    expect("count(hrts_queue_updates_per_second)", 2)
    expect("count(hrts_latency_measurements_per_second)", 2)
    for expr, most in [
        ("sum(hrts_requests_per_second)", 17),
        ("sum(hrts_queue_updates_per_second)", 5),
        ("sum(hrts_latency_measurements_per_second)", 5),
    ]:
        got, raw = value(expr)
        check(f"0 <= {expr} <= {most}", len(got) == 1 and 0 <= got[0] <= most, f"(got {raw})")
    _, raw = value(f"hrts_requests_total{{{A}}}")
    labels = raw[0]["metric"] if raw else {}
    check(
        "labels: program, hrts_instance and Prometheus's own instance (the target); no pid",
        labels.get("program") == "checkout" and labels.get("hrts_instance") == "a"
        and labels.get("instance", "").startswith("127.0.0.1:") and "pid" not in labels,
        f"(got {labels})",
    )
    got, raw = value(NOW_A)
    print(f"series of writer a: {got}; stored: {len(series(ALL_A))}")
elif phase == "restart":
    # Writer a restarted (another pid, 1 a time): its series go on, none is new.
    wait_until(
        "the restarted writer's value arrives in the same series",
        lambda: value(f"hrts_requests_total{{{A}}}")[0] == [4],
    )
    expect(f'count(count_over_time(hrts_requests_total{{{A}}}[10m]))', 1)
    now, _ = value(NOW_A)
    ever = series(ALL_A)
    check(
        "every series of writer a after its restart is one it had before (series API)",
        len(now) == 1 and now[0] == len(ever) and len(ever) >= 10
        and all("pid" not in s for s in ever),
        f"(now {now}, stored {len(ever)}: {ever})",
    )
    expect(f"count(count_over_time(hrts_requests_total[10m]))", 2)
    # Its counter went from 12 to 4 through the restart: one counter reset, which
    # rate() and increase() take in their stride.
    expect(f"resets(hrts_requests_total{{{A}}}[10m])", 1)
elif phase == "health":
    # The daemon's own series: program hrts-daemon, its first instance.
    status = sys.argv[3]
    D = 'program="hrts-daemon",hrts_instance="1"'
    wait_until(
        "the daemon's health series arrive (hrts_daemon_ties_total >= 2)",
        lambda: value(f"hrts_daemon_ties_total{{{D}}}")[0][0] >= 2,
    )
    ties, _ = value(f"hrts_daemon_ties_total{{{D}}}")
    wait_until(
        "its ties grow from scrape to scrape",
        lambda: value(f"hrts_daemon_ties_total{{{D}}}")[0][0] > ties[0],
        seconds=10,
    )
    for expr, low, high in [
        # Calendar minus line at the last tie: a tracked line is within a millisecond.
        (f"abs(hrts_daemon_offset_seconds{{{D}}})", 0, 1e-3),
        (f'hrts_daemon_tie_offset_abs_seconds{{{D},quantile="0.99"}}', 0, 1e-3),
        (f"hrts_daemon_tie_offset_abs_seconds_count{{{D}}}", 1, 1e9),
        (f"hrts_daemon_rounds_total{{{D}}}", 2, 1e9),
        (f"hrts_daemon_bound_published_seconds{{{D}}}", 1e-9, 16.0),
        (f"hrts_daemon_bound_drift_ratio{{{D}}}", 1e-9, 1e-3),
        (f"hrts_daemon_bound_age_seconds{{{D}}}", 0, 5),
        (f"hrts_daemon_bound_shift_seconds{{{D}}}", 0, 1e-3),
        (f"hrts_daemon_tick_frequency_hertz{{{D}}}", 1e6, 1e11),
        (f"hrts_daemon_repairs_total{{{D}}}", 0, 0),
    ]:
        got, raw = value(expr)
        check(f"{low} <= {expr} <= {high}", len(got) == 1 and low <= got[0] <= high, f"(got {raw})")
    # One status gauge is 1, the one hrts info gives; one bound source, one counter.
    st = status.replace("-", "_")
    expect(f"hrts_daemon_status_{st}{{{D}}}", 1)
    R = '__name__!~".+_per_second"'  # not the rate gauges beside them
    expect(f'sum({{__name__=~"hrts_daemon_status_.+",{R},{D}}})', 1)
    expect(f'sum({{__name__=~"hrts_daemon_bound_source_.+",{R},{D}}})', 1)
    expect(f'count({{__name__=~"hrts_daemon_tick_source_.+",{R},{D}}})', 1)
    # Disruptions: the total is the sum of the kinds (0 on an undisturbed run).
    total, raw = value(f"hrts_daemon_disruptions_total{{{D}}}")
    kinds, _ = value(
        f'sum({{__name__=~"hrts_daemon_disruptions_.+_total",__name__!="hrts_daemon_disruptions_total",{D}}})'
    )
    check("disruptions: the total is the sum of its kinds", total == kinds, f"({total} {kinds})")
    print(f"daemon: ties {ties}, disruptions {total}, status {status}")
print(f"checks: {passed} {failed}")
PY

# run_checks PHASE: the phase's checks, counted.
run_checks() {
  python3 "$work/checks.py" "127.0.0.1:$prom_port" "$@" >"$work/checks.out" 2>&1 8>&- 9>&- || true
  cat "$work/checks.out"
  local counts
  counts=$(sed -n 's/^checks: \([0-9]*\) \([0-9]*\)$/\1 \2/p' "$work/checks.out")
  if [ -n "$counts" ]; then
    passed=$((passed + ${counts% *}))
    failed=$((failed + ${counts#* }))
  else
    fail "the $1 checks ended early"
  fi
}
run_checks first

# Restart writer a: the old process exits (still exposed while no live one has its
# identity), the new one, another pid, takes its series over.
exec 8>&-
wait "$pid_a" || true
exited_a_shown() {
  get "http://$serve_addr/metrics" >"$work/exited-a.prom" &&
    grep -qx 'hrts_stats_processes{state="exited"} 1' "$work/exited-a.prom" &&
    grep -qx 'hrts_requests_total{program="checkout",hrts_instance="a"} 12' "$work/exited-a.prom"
}
if wait_for 5 exited_a_shown; then
  pass "writer a, exited, is still exposed under its labels"
else
  fail "after writer a exited, /metrics says:"
  cat "$work/exited-a.prom"
fi
writer_a 1 "$work/hold-a2" "$work/a2.json" &
pid_a2=$!
pids+=("$pid_a2")
exec 8>"$work/hold-a2"
if ! wait_for 20 test -s "$work/a2.json"; then
  fail "the restarted writer printed no dump"
  finish
fi
echo "writer a restarted: $pid_a2"
run_checks restart
if [ "$failed" -gt 0 ]; then
  echo "--- prometheus log (last lines)"
  tail -n 20 "$work/prometheus.log"
fi

# Writers that exited stay exposed, marked so, until their cells are reclaimed.
exec 8>&- 9>&-
wait "$pid_a2" "$pid_b" || true
# (hrts stats serve renders at most once a second: poll, bounded.)
exited_shown() {
  get "http://$serve_addr/metrics" >"$work/after.prom" &&
    grep -qx 'hrts_stats_processes{state="exited"} 3' "$work/after.prom" &&
    grep -qx 'hrts_requests_total{program="checkout",hrts_instance="a"} 4' "$work/after.prom" &&
    grep -qx 'hrts_requests_total{program="checkout",hrts_instance="b"} 5' "$work/after.prom"
}
if wait_for 5 exited_shown; then
  pass "exited writers are still exposed, counted as exited"
else
  fail "after the writers exited, /metrics says:"
  cat "$work/after.prom"
fi

# The daemon's health (the time it takes is printed at the end). Someone planted a statistics file, writable by all, where
# the daemon keeps its own: the daemon starts all the same and replaces it.
health_start=$SECONDS
mkdir -p "$HRTS_HOST_DIR"
# As /run/hrts: every user may look in (mktemp made the work directory 0700).
chmod 0755 "$work" "$HRTS_HOST_DIR"
head -c 4096 /dev/urandom >"$HRTS_HOST_DIR/stats"
chmod 0666 "$HRTS_HOST_DIR/stats"
"$hrts" daemon --foreground --dir "$HRTS_HOST_DIR" 2>"$work/daemon.log" &
pids+=("$!")
if ! wait_for 20 grep -qs 'health statistics in' "$work/daemon.log"; then
  fail "hrts daemon did not publish health statistics:"
  cat "$work/daemon.log"
  finish
fi
mode=$(stat -c '%a %U %s' "$HRTS_HOST_DIR/stats")
if [ "${mode% *}" = "644 root" ] && [ "${mode##* }" -gt 4096 ]; then
  pass "the daemon replaced the planted file with its own (mode 644, owner root)"
else
  fail "the health file is $mode, not the daemon's (644 root)"
fi
# An unprivileged user reads the health series but cannot write the file.
if id nobody >/dev/null 2>&1 && command -v setpriv >/dev/null 2>&1; then
  as_nobody() { setpriv --reuid=nobody --regid=nogroup --clear-groups "$@"; }
  nobody_sees() { # (the daemon publishes its first values within 100 ms of its start)
    as_nobody env HRTS_STATS_SEGMENT=/hrts-stats-nobody-$$ HRTS_HOST_DIR="$HRTS_HOST_DIR" \
      "$hrts" stats --prometheus 2>"$work/nobody.err" >"$work/nobody.prom" &&
      grep -q '^hrts_daemon_ties_total{program="hrts-daemon",hrts_instance="1"} [1-9]' "$work/nobody.prom"
  }
  if wait_for 10 nobody_sees; then
    pass "an unprivileged user's hrts stats shows the daemon's health"
  else
    fail "an unprivileged user's hrts stats does not show the daemon's health: $(cat "$work/nobody.err")"
  fi
  if as_nobody sh -c ': >>"$1"' sh "$HRTS_HOST_DIR/stats" 2>/dev/null; then
    fail "an unprivileged user could open the health file for writing"
  else
    pass "an unprivileged user cannot write the health file"
  fi
else
  echo "no user nobody or no setpriv: the unprivileged reader is not checked"
fi
# (info shows the host page only where no segment is named.)
status=$(env -u HRTS_SEGMENT "$hrts" info | sed -n 's/^bound status: //p')
run_checks health "${status:-none}"
if command -v promtool >/dev/null 2>&1; then
  get "http://$serve_addr/metrics" >"$work/health.prom"
  if grep -q '^hrts_daemon_ties_total{' "$work/health.prom" && promtool check metrics <"$work/health.prom"; then
    pass "promtool check metrics accepts /metrics with the daemon's health series"
  else
    fail "promtool check metrics refuses /metrics with the daemon's health series:"
    cat "$work/health.prom"
  fi
fi
echo "the daemon's health checks took $((SECONDS - health_start)) s"
finish
