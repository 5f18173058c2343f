#!/usr/bin/env bash
# A real Prometheus server scrapes `hrts stats serve` and returns, through its HTTP
# query API, the values two writer processes recorded (per process and summed with
# PromQL). Everything runs on loopback, on segments of its own; the script stops
# what it started and removes what it made. The last line of output is
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

# The writers are `hrts debug stats-record`, a test-build command.
cargo build -q -p hrts-cli --features testing
hrts="${CARGO_TARGET_DIR:-$root/target}/debug/hrts"

export HRTS_SEGMENT="/hrts-prom-time-$$"
export HRTS_STATS_SEGMENT="/hrts-stats-test-$$"
work="$(mktemp -d "${TMPDIR:-/tmp}/hrts-prom.XXXXXX")"
pids=()
# Idempotent: finish runs it, and the EXIT trap again.
cleanup() {
  exec 8>&- 2>/dev/null || true
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

# Two writers reading one FIFO: they live until the script closes its end (fd 8).
mkfifo "$work/hold"
"$hrts" debug stats-record --counter requests=3,errors=1 --gauge queue=2.5 \
  --timer latency=1500000 --repeat 4 <"$work/hold" >"$work/a.json" &
pid_a=$!
pids+=("$pid_a")
"$hrts" debug stats-record --counter requests=5 --gauge queue=7 --timer latency=2000000 \
  <"$work/hold" >"$work/b.json" &
pid_b=$!
pids+=("$pid_b")
exec 8>"$work/hold"
if ! wait_for 20 test -s "$work/a.json" || ! wait_for 20 test -s "$work/b.json"; then
  fail "the writers printed no dump"
  finish
fi

# Later children must not hold the FIFO's writing end (fd 8), or the writers
# never see the end of their input.
"$hrts" stats serve --listen 127.0.0.1:0 >"$work/serve.out" 8>&- &
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
  --web.listen-address="127.0.0.1:$prom_port" >"$work/prometheus.log" 2>&1 8>&- &
pids+=("$!")
echo "prometheus: 127.0.0.1:$prom_port"

# The checks: each query's value against the recorded one. hrts's instance
# number is the label `hrts_instance` (Prometheus keeps `instance` for its target).
python3 - "127.0.0.1:$prom_port" "$pid_a" "$pid_b" >"$work/checks.out" 2>&1 <<'PY' || true
import json, sys, time, urllib.parse, urllib.request

prom, a, b = sys.argv[1:4]
passed = failed = 0

def query(expr):
    url = f"http://{prom}/api/v1/query?" + urllib.parse.urlencode({"query": expr})
    with urllib.request.urlopen(url, timeout=5) as r:
        body = json.load(r)
    if body.get("status") != "success":
        raise RuntimeError(f"{expr}: {body}")
    return body["data"]["result"]

def check(what, ok, detail=""):
    global passed, failed
    if ok:
        passed += 1
        print(f"ok: {what}")
    else:
        failed += 1
        print(f"FAIL: {what} {detail}")

# Bounded wait: the target up and both writers' series scraped.
deadline = time.monotonic() + 30
ready = False
while time.monotonic() < deadline and not ready:
    try:
        up = query('up{job="hrts"}')
        series = query("hrts_requests_total")
        ready = up and up[0]["value"][1] == "1" and len(series) == 2
    except Exception as e:  # not started yet
        pass
    if not ready:
        time.sleep(0.2)
check("Prometheus scrapes hrts stats serve (up == 1, both writers' series)", ready)

def value(expr):
    r = query(expr)
    return [float(s["value"][1]) for s in r], r

def expect(expr, want, rel=1e-9):
    got, raw = value(expr)
    ok = len(got) == 1 and abs(got[0] - want) <= rel * max(abs(want), 1e-12)
    check(f"{expr} = {want}", ok, f"(got {raw})")

if ready:
    expect(f'hrts_requests_total{{pid="{a}"}}', 12)
    expect(f'hrts_requests_total{{pid="{b}"}}', 5)
    expect(f'hrts_errors_total{{pid="{a}"}}', 4)
    expect(f'hrts_queue{{pid="{a}"}}', 2.5)
    expect(f'hrts_queue{{pid="{b}"}}', 7)
    expect(f'hrts_latency_seconds_count{{pid="{a}"}}', 4)
    expect(f'hrts_latency_seconds_count{{pid="{b}"}}', 1)
    expect(f'hrts_latency_seconds_sum{{pid="{a}"}}', 0.006)
    expect(f'hrts_latency_seconds_sum{{pid="{b}"}}', 0.002)
    # One datum: every quantile is it, within the histogram's 1 %.
    expect(f'hrts_latency_seconds{{pid="{b}",quantile="0.99"}}', 0.002, rel=0.01)
    expect("sum(hrts_requests_total)", 17)
    expect("sum(hrts_queue)", 9.5)
    expect("sum(hrts_latency_seconds_count)", 5)
    expect("sum(hrts_latency_seconds_sum)", 0.008)
    expect('hrts_stats_processes{state="live"}', 2)
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
    _, raw = value(f'hrts_requests_total{{pid="{a}"}}')
    labels = raw[0]["metric"] if raw else {}
    check(
        "labels: program and hrts_instance, and Prometheus's own instance (the target)",
        labels.get("program") == "hrts" and labels.get("hrts_instance") == "1"
        and labels.get("instance", "").startswith("127.0.0.1:"),
        f"(got {labels})",
    )
print(f"checks: {passed} {failed}")
PY
cat "$work/checks.out"
counts=$(sed -n 's/^checks: \([0-9]*\) \([0-9]*\)$/\1 \2/p' "$work/checks.out")
if [ -n "$counts" ]; then
  passed=$((passed + ${counts% *}))
  failed=$((failed + ${counts#* }))
else
  fail "the query checks ended early"
fi
if [ "$failed" -gt 0 ]; then
  echo "--- prometheus log (last lines)"
  tail -n 20 "$work/prometheus.log"
fi

# Writers that exited stay exposed, marked so, until their cells are reclaimed.
exec 8>&-
wait "$pid_a" "$pid_b" || true
# (hrts stats serve renders at most once a second: poll, bounded.)
exited_shown() {
  get "http://$serve_addr/metrics" >"$work/after.prom" &&
    grep -qx 'hrts_stats_processes{state="exited"} 2' "$work/after.prom" &&
    grep -q "^hrts_requests_total{pid=\"$pid_a\",.*} 12\$" "$work/after.prom"
}
if wait_for 5 exited_shown; then
  pass "exited writers are still exposed, counted as exited"
else
  fail "after the writers exited, /metrics says:"
  cat "$work/after.prom"
fi
finish
