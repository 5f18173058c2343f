#!/usr/bin/env bash
# The systemd unit packaging/systemd/hrts.service, checked as systemd would use it
# (issue 22, item 7), without a running systemd:
#
# 1. `systemd-analyze verify` on the unit: no error and no warning about it. The one
#    change to the shipped file is ExecStart's program, /usr/bin/hrts, pointed at the
#    release hrts, the one the package ships (verify wants an executable there); the manual
#    page its Documentation= names is written from that hrts into a MANPATH of its own.
#    And the unit asks for what the issue asks for: its user, runtime directory,
#    restart policy and hardening (the settings are compared, not just found).
# 2. As root only: the unit's ExecStart started as systemd would start it. User=,
#    Group=, RuntimeDirectory=, RuntimeDirectoryMode=, UMask=, Environment= and
#    ExecStart= are read from the shipped unit; the user is made if missing
#    (useradd --system, removed at the end); the runtime directory is made under this
#    test's temporary directory (never the real /run/hrts), owned by that user, with
#    the unit's mode, and ${RUNTIME_DIRECTORY} in ExecStart names it; the command
#    runs as that user (setpriv, no new privileges, no capabilities) in systemd's
#    clean environment. Then: it made the page; the page is 0644 and the user's; a
#    root process (HRTS_HOST=on, in IPC and mount namespaces of its own, so that its
#    per-user segment goes with it) reads `timeline: host service DIR/time`,
#    `service: running` and stamps with `hrts now`; a second daemon on the directory
#    is refused for the lock; SIGTERM stops it within 2 s with exit 0 and its
#    "stopping" line; readers then see the service gone and still stamp; a new start
#    adopts the page with the generation unchanged; and it stops again. Without
#    root: skipped, counted neither way.
#
# Everything is under a temporary directory, removed at the end (a trap also stops
# the daemons this script started, by pid, and removes a user it made). The last line
# is "daemon-unit: N passed, N failed".
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)
cd "$root"
if ! command -v cargo >/dev/null 2>&1 && [ -x "$HOME/.cargo/bin/cargo" ]; then
    export PATH="$HOME/.cargo/bin:$PATH"
fi
unit_file=packaging/systemd/hrts.service

passed=0
failed=0
ok()  { passed=$((passed + 1)); echo "daemon-unit: ok $*"; }
bad() { failed=$((failed + 1)); echo "daemon-unit: FAIL $*"; }
# check WHAT COMMAND...: one result, the command's output shown when it fails.
check() {
    local what=$1 out
    shift
    if out=$("$@" 2>&1); then ok "$what"; else bad "$what"; printf '%s\n' "$out" | tail -n 20 | sed 's/^/    /'; fi
}
finish() {
    echo "daemon-unit: $passed passed, $failed failed"
    [ "$failed" -eq 0 ]
}

missing=()
for tool in systemd-analyze:systemd setpriv:util-linux unshare:util-linux useradd:passwd userdel:passwd; do
    command -v "${tool%%:*}" >/dev/null 2>&1 || missing+=("${tool%%:*} (${tool#*:})")
done
if [ "${#missing[@]}" -gt 0 ]; then
    bad "missing tools: ${missing[*]}: run scripts/bootstrap.sh"
    finish
    exit 1
fi

# The release build, with the package set every script uses (tests/c/run.sh says why):
# the hrts the Debian package installs, built already when the c stage ran.
cargo build --release -q -p hrts-capi -p hrts-cli
target=${CARGO_TARGET_DIR:-$root/target}
built="$target/release/hrts"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/hrts-daemon-unit.XXXXXX")
# Searchable by the service user: it runs the copy of hrts and keeps its page in here.
chmod 755 "$tmp"
mkdir -p "$tmp/bin" "$tmp/man/man1" "$tmp/unit" "$tmp/run" "$tmp/logs"
chmod 755 "$tmp/bin" "$tmp/run"
hrts="$tmp/bin/hrts"
cp "$built" "$hrts"
chmod 755 "$hrts"

daemon_pids=()
made_user=
made_group=
cleanup() {
    local pid
    for pid in "${daemon_pids[@]}"; do
        if kill -0 "$pid" 2>/dev/null; then
            kill -TERM "$pid" 2>/dev/null || true
            for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
            kill -KILL "$pid" 2>/dev/null || true
        fi
    done
    if [ -n "$made_user" ]; then
        userdel "$made_user" >/dev/null 2>&1 || echo "daemon-unit: could not remove the user $made_user: run userdel $made_user" >&2
    fi
    if [ -n "$made_group" ] && getent group "$made_group" >/dev/null 2>&1; then
        groupdel "$made_group" >/dev/null 2>&1 || echo "daemon-unit: could not remove the group $made_group: run groupdel $made_group" >&2
    fi
    rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

# ---- the unit's settings, as systemd reads them (the [Service] section)
# unit_values KEY: every value assigned to KEY, one a line, in order ("" for an
# empty assignment). Comments and blank lines are skipped; no line continuations.
unit_values() {
    awk -v key="$1" '
        /^[[:space:]]*[#;]/ || /^[[:space:]]*$/ { next }
        /^[[:space:]]*\[/ { section = $0; gsub(/[[:space:]]/, "", section); next }
        section == "[Service]" {
            i = index($0, "="); if (i == 0) next
            k = substr($0, 1, i - 1); v = substr($0, i + 1)
            gsub(/^[[:space:]]+|[[:space:]]+$/, "", k); gsub(/^[[:space:]]+|[[:space:]]+$/, "", v)
            if (k == key) print v
        }' "$unit_file"
}
# unit_value KEY: the setting in effect (the last assignment); fails if there is none.
unit_value() {
    [ "$(unit_values "$1" | wc -l)" -gt 0 ] || return 1
    unit_values "$1" | tail -n 1
}
has_setting() { # KEY VALUE: the setting in effect is VALUE ("" for an empty assignment)
    local v
    v=$(unit_value "$1") || { echo "$unit_file sets no $1="; return 1; }
    [ "$v" = "$2" ] || { echo "$unit_file: $1=$v, expected $1=$2"; return 1; }
}

# ---- 1. systemd-analyze verify
exec_start=$(unit_value ExecStart || true)
program=${exec_start%% *}
check "ExecStart runs /usr/bin/hrts (the packaged command)" test "$program" = /usr/bin/hrts
verified="$tmp/unit/$(basename "$unit_file")"
sed "s|^ExecStart=/usr/bin/hrts |ExecStart=$hrts |" "$unit_file" > "$verified"
# The copy differs from the shipped unit in that one line only.
check "the verified copy differs only in ExecStart's program" sh -c '
    d=$(diff "$1" "$2" | grep "^[<>]") || true
    echo "$d"
    [ "$(printf "%s\n" "$d" | grep -c "^<")" -eq 1 ] && [ "$(printf "%s\n" "$d" | grep -c "^>")" -eq 1 ] &&
    printf "%s\n" "$d" | grep -qxF "> ExecStart=$3 daemon --foreground --dir \${RUNTIME_DIRECTORY}"' \
    _ "$unit_file" "$verified" "$hrts"
"$hrts" manpage > "$tmp/man/man1/hrts.1"
man_opt=()
if ! command -v man >/dev/null 2>&1; then
    echo "daemon-unit: no man(1) on this machine: verify does not check Documentation=man:hrts(1)"
    man_opt=(--man=no)
fi
verify_unit() {
    local out rc=0
    out=$(cd "$tmp" && MANPATH="$tmp/man" systemd-analyze verify "${man_opt[@]}" "$verified" 2>&1) || rc=$?
    echo "exit $rc"
    [ -z "$out" ] || printf '%s\n' "$out"
    [ "$rc" -eq 0 ] || return 1
    # Any message about the unit (other units' complaints are not this test's).
    ! printf '%s\n' "$out" | grep -F "$(basename "$unit_file")"
}
check "systemd-analyze verify $unit_file: no error, no warning" verify_unit
exposure=$(systemd-analyze security --offline=yes "$verified" 2>/dev/null | grep -i "overall exposure" || true)
[ -z "$exposure" ] || echo "daemon-unit: systemd-analyze security: ${exposure#→ }"

hardening() {
    local kv bad_ones=0
    for kv in Type=simple User=hrts RuntimeDirectory=hrts RuntimeDirectoryMode=0755 RuntimeDirectoryPreserve=yes \
              Restart=on-failure KillSignal=SIGTERM NoNewPrivileges=yes ProtectSystem=strict ProtectHome=yes \
              PrivateTmp=yes CapabilityBoundingSet= AmbientCapabilities= PrivateDevices=yes \
              ProtectKernelTunables=yes ProtectControlGroups=yes RestrictAddressFamilies=AF_UNIX \
              LockPersonality=yes MemoryDenyWriteExecute=yes SystemCallArchitectures=native; do
        has_setting "${kv%%=*}" "${kv#*=}" || bad_ones=$((bad_ones + 1))
    done
    [ "$bad_ones" -eq 0 ]
}
check "the unit's user, runtime directory, restart policy and hardening" hardening

# ---- 2. the ExecStart line started as systemd would (root only)
if [ "$(id -u)" -ne 0 ]; then
    echo "daemon-unit: not root: starting the unit's ExecStart as its user is skipped, and not counted"
    finish
    exit
fi

user=$(unit_value User)
group=$(unit_value Group || true)
runtime_directory=$(unit_value RuntimeDirectory)
runtime_mode=$(unit_value RuntimeDirectoryMode || echo 0755)
umask_value=$(unit_value UMask || echo 0022)
case "$runtime_directory" in
    */*|*" "*|"") bad "RuntimeDirectory=$runtime_directory: this test takes one plain name"; finish; exit 1 ;;
esac

# As /usr/lib/sysusers.d/hrts.conf would on an installed system: a system user and its group.
if [ -n "$group" ] && ! getent group "$group" >/dev/null; then
    groupadd --system "$group"
    made_group=$group
    echo "daemon-unit: made the system group $group (removed at the end)"
fi
if ! getent passwd "$user" >/dev/null; then
    if [ -z "$group" ] && ! getent group "$user" >/dev/null; then
        groupadd --system "$user"
        made_group=$user
    fi
    useradd --system --gid "${group:-$user}" --no-create-home --home-dir /nonexistent \
        --shell /usr/sbin/nologin "$user"
    made_user=$user
    echo "daemon-unit: made the system user $user (removed at the end)"
fi
IFS=: read -r _ _ uid gid _ home shell < <(getent passwd "$user")
[ -z "$group" ] || gid=$(getent group "$group" | cut -d: -f3)
group_name=$(getent group "$gid" | cut -d: -f1)

# systemd: /run/<RuntimeDirectory>, owned by the user, with RuntimeDirectoryMode=.
dir="$tmp/run/$runtime_directory"
install -d -m "$runtime_mode" -o "$uid" -g "$gid" "$dir"

# The environment systemd gives a system service with User=: PATH, LANG, USER,
# LOGNAME, HOME, SHELL, the runtime directory, then the unit's Environment=.
declare -A env_of=(
    [PATH]=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin [LANG]=C.UTF-8
    [USER]=$user [LOGNAME]=$user [HOME]=$home [SHELL]=$shell [RUNTIME_DIRECTORY]=$dir
)
while IFS= read -r assignment; do
    [ -n "$assignment" ] || continue
    # Words; systemd's double quotes around a whole assignment are dropped (values with
    # blanks inside are not this test's concern).
    read -ra words <<<"$assignment"
    for w in "${words[@]}"; do w=${w#\"}; w=${w%\"}; env_of[${w%%=*}]=${w#*=}; done
done < <(unit_values Environment)
daemon_env=()
for k in "${!env_of[@]}"; do daemon_env+=("$k=${env_of[$k]}"); done

# ExecStart's words with ${NAME} (and $NAME as a word) replaced from that environment,
# as systemd does; the program is the copy of the built hrts.
argv=()
read -ra words <<<"${exec_start#[-]}"
for w in "${words[@]}"; do
    if [[ $w =~ ^\$([A-Za-z_][A-Za-z0-9_]*)$ ]]; then
        read -ra split <<<"${env_of[${BASH_REMATCH[1]}]:-}"
        argv+=("${split[@]}")
        continue
    fi
    while [[ $w =~ \$\{([A-Za-z_][A-Za-z0-9_]*)\} ]]; do
        w=${w//"${BASH_REMATCH[0]}"/${env_of[${BASH_REMATCH[1]}]:-}}
    done
    argv+=("$w")
done
[ "${argv[0]}" = /usr/bin/hrts ] && argv[0]=$hrts
echo "daemon-unit: as $user ($uid:$gid), umask $umask_value, RUNTIME_DIRECTORY=$dir: ${argv[*]}"

# start_daemon LOG: the command, as the unit's user, without privileges, in the
# background; its pid in $daemon_pid.
start_daemon() {
    ( umask "$umask_value"; cd /
      exec setpriv --reuid="$uid" --regid="$gid" --init-groups --no-new-privs --bounding-set=-all --inh-caps=-all \
          -- env -i "${daemon_env[@]}" "${argv[@]}" ) </dev/null >>"$1" 2>&1 &
    daemon_pid=$!
    daemon_pids+=("$daemon_pid")
}
# ready LOG PID: the daemon logged its counter line (it keeps the page), within 60 s.
ready() {
    local i
    for i in $(seq 600); do
        grep -q "^hrts daemon: counter .* pid $2\$" "$1" && return 0
        kill -0 "$2" 2>/dev/null || { echo "the daemon exited:"; cat "$1"; return 1; }
        sleep 0.1
    done
    echo "no counter line in 60 s:"; cat "$1"; return 1
}
# client ARGS...: the hrts command as root, on the host page of $dir, in IPC and mount
# namespaces of its own with an empty /dev/shm (its per-user segment goes with them).
client() {
    unshare --mount --ipc --propagation private -- sh -c \
        'mount -t tmpfs -o mode=1777,nosuid,nodev hrts-unit-shm /dev/shm && exec "$@"' client \
        env -u HRTS_SEGMENT HRTS_HOST=on HRTS_HOST_DIR="$dir" HRTS_HOST_USER="$user" "$hrts" "$@"
}
info_field() { # INFO-TEXT FIELD
    printf '%s\n' "$1" | sed -n "s/^$2: //p" | head -n 1
}
inode() { stat -c %i "$dir/time" 2>/dev/null || echo none; }
# stop_daemon PID LOG: SIGTERM, gone within 2 s, exit 0, the "stopping" line.
stop_daemon() {
    local pid=$1 log=$2 t0 ms rc=0
    t0=$(date +%s%N)
    kill -TERM "$pid"
    while kill -0 "$pid" 2>/dev/null && [ $(( ($(date +%s%N) - t0) / 1000000 )) -lt 2000 ]; do sleep 0.02; done
    ms=$(( ($(date +%s%N) - t0) / 1000000 ))
    if kill -0 "$pid" 2>/dev/null; then
        echo "still running ${ms} ms after SIGTERM"
        return 1
    fi
    wait "$pid" || rc=$?
    echo "gone ${ms} ms after SIGTERM, exit $rc"
    grep "^hrts daemon: stopping: " "$log" || { echo "no 'hrts daemon: stopping:' line:"; cat "$log"; return 1; }
    [ "$rc" -eq 0 ]
}
# check_stop WHAT PID LOG: stop_daemon as one result, in this shell (it waits for its child).
check_stop() {
    if stop_daemon "$2" "$3" > "$tmp/logs/stop.txt" 2>&1; then ok "$1"; else bad "$1"; fi
    sed 's/^/    /' "$tmp/logs/stop.txt"
}

log1="$tmp/logs/first.log"
start_daemon "$log1"
first=$daemon_pid
if ready "$log1" "$first" > "$tmp/logs/ready1.txt" 2>&1; then
    sed 's/^/    /' "$log1"
    check "it made the page: \"made $dir/time\"" grep -F "hrts daemon: made $dir/time (" "$log1"
else
    bad "the daemon did not start"
    sed 's/^/    /' "$tmp/logs/ready1.txt"
    finish
    exit 1
fi
check "the page is mode 0644, owned by $user:$group_name; the directory $runtime_mode, $user's" sh -c '
    p=$(stat -c "%a %U:%G" "$1/time") && d=$(stat -c "%a %U" "$1") && echo "page $p, directory $d" &&
    [ "$p" = "644 $2:$3" ] && [ "$d" = "$(printf %o "0$4") $2" ]' _ "$dir" "$user" "$group_name" "$runtime_mode"
check "it runs as $user, without capabilities, with no_new_privs" sh -c '
    s=/proc/$1/status
    u=$(awk "/^Uid:/ {print \$2, \$3}" "$s") && c=$(awk "/^CapEff:|^CapPrm:|^CapBnd:/ {print \$2}" "$s" | sort -u) &&
    n=$(awk "/^NoNewPrivs:/ {print \$2}" "$s") && echo "uid $u, caps $c, NoNewPrivs $n" &&
    [ "$u" = "$2 $2" ] && [ "$c" = 0000000000000000 ] && [ "$n" = 1 ]' _ "$first" "$uid"

info_running() { # PID RESTARTS: timeline, service running (that pid, that many restarts)
    local info first_line service
    info=$(client info) || { echo "$info"; return 1; }
    first_line=$(printf '%s\n' "$info" | head -n 1)
    service=$(info_field "$info" service)
    echo "$first_line"; echo "service: $service"
    [ "$first_line" = "timeline: host service $dir/time" ] &&
        [[ $service == "running (pid $1, "*", $2 restarts)" ]]
}
check "root's hrts info: timeline: host service $dir/time, service: running" info_running "$first" 0
stamps() { # the host page's stamp within 1 s of the system clock
    local now real
    now=$(client now) && real=$(date +%s%N) || return 1
    echo "hrts now $now, date $real"
    [[ $now =~ ^[0-9]{19}$ ]] && [ $(( real - now )) -lt 1000000000 ] && [ $(( now - real )) -lt 1000000000 ]
}
check "root's hrts now stamps from the page" stamps
info=$(client info || true)
generation=$(info_field "$info" generation)
page_inode=$(inode)
echo "daemon-unit: generation ${generation:-none}, page inode $page_inode"

second_refused() {
    local out rc=0
    out=$( ( umask "$umask_value"; cd /
             exec timeout 60 setpriv --reuid="$uid" --regid="$gid" --init-groups --no-new-privs \
                 --bounding-set=-all --inh-caps=-all -- env -i "${daemon_env[@]}" "${argv[@]}" ) </dev/null 2>&1) || rc=$?
    echo "exit $rc: $out"
    [ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] && printf '%s\n' "$out" | grep -qi "lock" &&
        kill -0 "$first" && [ "$(inode)" = "$page_inode" ]
}
check "a second daemon on $dir is refused (the lock); the first keeps its page" second_refused

check_stop "SIGTERM: stopped within 2 s, exit 0, \"stopping\" logged" "$first" "$log1"
gone_cleanly() {
    local info service
    info=$(client info) || { echo "$info"; return 1; }
    service=$(info_field "$info" service)
    echo "$(printf '%s\n' "$info" | head -n 1); service: $service"
    printf '%s\n' "$info" | head -n 1 | grep -qxF "timeline: host service $dir/time" &&
        [[ $service == "gone for "*"(stopped cleanly)"* ]] && stamps
}
check "with the daemon stopped: the page stays, readers stamp, hrts info says it stopped cleanly" gone_cleanly

log2="$tmp/logs/second.log"
start_daemon "$log2"
again=$daemon_pid
if ready "$log2" "$again" > "$tmp/logs/ready2.txt" 2>&1; then
    sed 's/^/    /' "$log2"
    adopted() {
        local info g
        grep -F "hrts daemon: adopted $dir/time " "$log2" || { echo "no 'adopted' line"; return 1; }
        info_running "$again" 1 || return 1
        info=$(client info) && g=$(info_field "$info" generation)
        echo "generation $g (before: $generation), page inode $(inode) (before: $page_inode)"
        [ -n "$g" ] && [ "$g" = "$generation" ] && [ "$(inode)" = "$page_inode" ]
    }
    check "restarted: adopted the page, generation unchanged, running with 1 restart" adopted
    check_stop "SIGTERM again: stopped within 2 s, exit 0" "$again" "$log2"
else
    bad "the daemon did not start again"
    sed 's/^/    /' "$tmp/logs/ready2.txt"
fi

finish
