#!/usr/bin/env bash
# hrts beside AWS ClockBound against the same chronyd (issue 23, "Done when" 6):
# interval widths, status changes and read costs in one run.
#
# As native/cli/tests/bound_chrony.rs does, in a network namespace of this script's
# own (loopback only) one chronyd serves its clock (`local stratum 1`) and a second
# one follows it with a per-source `offset` of +2 ms, so that "true time" is
# CLOCK_REALTIME + 2 ms; both run with `-x` and never touch the system clock.
# ClockBound 2.0.3 hard-codes /var/run/chrony/chronyd.sock and
# /var/run/clockbound/shm0, so everything runs in a mount namespace of its own too,
# with a private tmpfs on /run (and on /dev/shm, so that no hrts segment is left
# behind): the follower's command socket is /run/chrony/chronyd.sock there.
# clock-bound-d (--disable-clock-disruption-support: there is no /dev/vmclock0) and
# `hrts daemon --chrony /run/chrony/chronyd.sock` both read the follower. The
# comparison (native/clockbound-compare, a standalone cargo project outside the
# workspace) reads both for $CB_SECONDS s, stops the serving chronyd and reads
# for $CB_AFTER_SECONDS s more; its Markdown report goes to stdout.
#
# Needs root, Debian's chrony, iproute2 and util-linux (unshare). Installs
# clock-bound-d with `cargo install clock-bound-d --version 2.0.3 --locked` into
# $CB_ROOT (default /var/cache/hrts-clockbound) when it is not there.
#
# Environment: CB_SECONDS (30), CB_AFTER_SECONDS (10), CB_POLL (chronyd's poll of
# the server, log2 s; -4), CB_ROOT, HRTS_BIN (default target/release/hrts, built
# when missing), CB_KEEP=1 keeps the work directory for its logs.
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
seconds=${CB_SECONDS:-30}
after_seconds=${CB_AFTER_SECONDS:-10}
poll=${CB_POLL:--4}
cb_root=${CB_ROOT:-/var/cache/hrts-clockbound}
offset_ns=2000000
ntp_port=11125

die() { echo "clockbound-compare: $*" >&2; exit 1; }

if [[ ${1:-} != --inner ]]; then
    [[ $(id -u) == 0 ]] || die "needs root (namespaces, chronyd)"
    for p in chronyd chronyc ip unshare; do
        command -v "$p" >/dev/null || PATH=$PATH:/usr/sbin:/sbin command -v "$p" >/dev/null ||
            die "$p not found (Debian: chrony, iproute2, util-linux)"
    done
    export PATH=$PATH:/usr/sbin:/sbin

    clockbound=$cb_root/bin/clockbound
    if [[ ! -x $clockbound ]]; then
        echo "installing clock-bound-d 2.0.3 into $cb_root" >&2
        cargo install clock-bound-d --version 2.0.3 --locked --root "$cb_root" >&2 ||
            die "cargo install clock-bound-d --version 2.0.3 --locked failed (above)"
    fi
    hrts=${HRTS_BIN:-$here/target/release/hrts}
    if [[ ! -x $hrts ]]; then
        (cd "$here" && cargo build --release -p hrts-cli >&2) || die "building hrts failed"
    fi
    (cd "$here/native/clockbound-compare" && cargo build --release --locked >&2) ||
        die "building native/clockbound-compare failed"
    compare=$here/native/clockbound-compare/target/release/hrts-clockbound-compare

    work=$(mktemp -d /tmp/hrts-clockbound.XXXXXX)
    chmod 755 "$work"
    inner=
    cleanup() {
        local rc=$?
        if [[ -n $inner ]] && kill -0 "$inner" 2>/dev/null; then
            kill -TERM "$inner" 2>/dev/null || true
            wait "$inner" 2>/dev/null || true
        fi
        if [[ ${CB_KEEP:-0} == 1 ]]; then
            echo "logs kept in $work" >&2
        else
            rm -rf "$work"
        fi
        exit "$rc"
    }
    trap cleanup EXIT
    trap 'exit 130' INT TERM

    echo "## hrts and ClockBound against one chronyd, $(date -u '+%Y-%m-%d %H:%M UTC')"
    echo
    echo "- CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $(nproc) CPUs; clocksource $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource); load $(cut -d' ' -f1-3 /proc/loadavg)"
    echo "- hrts $(git -C "$here" rev-parse --short HEAD 2>/dev/null || echo '?') ($hrts), clock-bound-d $("$clockbound" --version 2>/dev/null | awk '{print $NF}'), chronyd $(chronyd -v | awk '{print $4}')"
    echo "- follower polls every 2^$poll s, offset +$offset_ns ns; $seconds s served, then the server stopped, $after_seconds s more"
    echo
    # The namespaces live as long as the inner script's processes; nothing is
    # mounted or bound outside them.
    unshare --net --mount --propagation private -- \
        env CB_WORK="$work" CB_HRTS="$hrts" CB_CLOCKBOUND="$clockbound" CB_COMPARE="$compare" \
        CB_SECONDS="$seconds" CB_AFTER_SECONDS="$after_seconds" CB_POLL="$poll" \
        bash "$0" --inner &
    inner=$!
    wait "$inner"
    exit $?
fi

# --- inside the namespaces ---------------------------------------------------
work=$CB_WORK
pids=()
cleanup_inner() {
    local rc=$?
    for ((i = ${#pids[@]} - 1; i >= 0; i--)); do
        kill -TERM "${pids[i]}" 2>/dev/null || true
    done
    for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
    if ((rc != 0)); then
        for f in "$work"/*.log; do
            echo "--- $(basename "$f") (last lines) ---" >&2
            tail -n 20 "$f" >&2 || true
        done
    fi
    exit "$rc"
}
trap cleanup_inner EXIT
trap 'exit 143' INT TERM

ip link set lo up
mount -t tmpfs -o mode=755 tmpfs /run
mount -t tmpfs -o mode=1777 tmpfs /dev/shm

cat >"$work/server.conf" <<EOF
local stratum 1
allow 127.0.0.1
bindaddress 127.0.0.1
port $ntp_port
cmdport 0
bindcmdaddress $work/server.sock
pidfile $work/server.pid
EOF
offset_s=$(awk "BEGIN { printf \"%.6f\", $offset_ns / 1e9 }")
cat >"$work/client.conf" <<EOF
server 127.0.0.1 port $ntp_port iburst minpoll $CB_POLL maxpoll $CB_POLL offset $offset_s
port 0
cmdport 0
bindcmdaddress /run/chrony/chronyd.sock
pidfile $work/client.pid
EOF
chronyd -x -d -f "$work/server.conf" >"$work/server.log" 2>&1 &
server=$!
pids+=("$server")
chronyd -x -d -f "$work/client.conf" >"$work/client.log" 2>&1 &
pids+=($!)

for _ in $(seq 100); do [[ -S /run/chrony/chronyd.sock ]] && break; sleep 0.1; done
[[ -S /run/chrony/chronyd.sock ]] || die "the follower chronyd made no /run/chrony/chronyd.sock"

"$CB_CLOCKBOUND" --disable-clock-disruption-support >"$work/clockbound.log" 2>&1 &
pids+=($!)
mkdir -m 755 "$work/page"
HRTS_TIE_INTERVAL_MS=100 "$CB_HRTS" daemon --foreground --dir "$work/page" \
    --chrony /run/chrony/chronyd.sock </dev/null >/dev/null 2>"$work/hrts-daemon.log" &
pids+=($!)

export HRTS_HOST=on HRTS_HOST_DIR=$work/page HRTS_HOST_USER=0
start=$SECONDS
until "$CB_HRTS" info 2>/dev/null | grep -Eq 'bound status: *synchronized' &&
    "$CB_HRTS" info 2>/dev/null | grep -Eq 'bound source: *chrony' &&
    [[ -e /var/run/clockbound/shm0 ]]; do
    ((SECONDS - start < 60)) || die "no synchronized hrts bound and ClockBound segment within 60 s"
    for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null || die "process $p exited"; done
    sleep 0.2
done
echo "- both ready $((SECONDS - start)) s after the start; chronyd's tracking then:"
echo
echo '```'
chronyc -h /run/chrony/chronyd.sock tracking | grep -E 'Stratum|System time|Last offset|Root delay|Root dispersion|Update interval|Leap status' || true
echo '```'
echo
sleep 2

# Stopping the server with SIGKILL: the follower's polls then go unanswered.
# In the background and waited for, so that a signal to this script ends it at once.
rc=0
"$CB_COMPARE" --host-dir "$work/page" --offset-ns "$offset_ns" --seconds "$CB_SECONDS" \
    --after-seconds "$CB_AFTER_SECONDS" --stop-cmd "kill -KILL $server" &
pids+=($!)
wait "${pids[-1]}" || rc=$?
echo
echo "chronyd's tracking at the end:"
echo
echo '```'
chronyc -h /run/chrony/chronyd.sock tracking | grep -E 'Stratum|System time|Root delay|Root dispersion|Update interval|Leap status|Ref time' || true
echo '```'
echo
echo "clock-bound-d's log, its last lines:"
echo
echo '```'
tail -n 5 "$work/clockbound.log" | sed 's/[[0-9;]*m//g' || true
echo '```'
exit "$rc"
