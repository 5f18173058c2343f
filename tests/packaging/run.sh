#!/usr/bin/env bash
# The installs C users and operators get (packaging/README.md), checked as they use them:
#
# 1. `cargo cinstall` of the C library into a temporary prefix: the files and links,
#    the SONAME (readelf), a stripped library, exports hrts_* alone, the header as
#    committed; tests/packaging/app.c compiled with `pkg-config --cflags --libs hrts`
#    alone and run against the installed library.
# 2. The Debian package (packaging/deb/build.sh): its control fields and file list
#    (dpkg-deb -I/-c), then, extracted with `dpkg-deb -x` (never installed on this
#    machine), its hrts --version, manual page and completion, the systemd unit and the
#    sysusers file as committed, and app.c built with pkg-config against the extracted
#    tree.
# 3. lintian on the .deb (info and pedantic tags too): every tag it reports must be
#    listed, with its reason, in packaging/deb/lintian-expected.txt.
# 4. As root only: the .deb installed on this machine with `dpkg -i` (refused if a
#    package hrts is installed already), the installed hrts --version, now and info,
#    its manual page and completion, app.c built with the system's pkg-config and run
#    against /usr/lib/<multiarch>, ld.so.cache; the service user hrts made by the
#    postinst (systemd-sysusers), the unit installed neither enabled nor started, and
#    `systemd-analyze verify` on it as installed; then `dpkg -P` and nothing left: the
#    list of /usr, hrts's dpkg status and the unit's state in /etc/systemd and
#    /var/lib/systemd as before. A trap removes the package whatever fails, and the
#    user hrts if the install made it (Debian's packages leave their system users on
#    purge; this test does not). (Under scripts/test.sh as root, /tmp and /dev/shm are
#    the namespace's own, /usr, /etc and /var/lib/dpkg the machine's.) Without root:
#    skipped, counted neither way.
#
# Programs run on a segment of their own (/hrts-pkg-<pid>, and /hrts-pkg-<pid>-inst for
# the installed command), removed at the end with `hrts unlink`, with their state under
# the temporary directory, also removed. The last line is "packaging: N passed, N failed".
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)
cd "$root"
if ! command -v cargo >/dev/null 2>&1 && [ -x "$HOME/.cargo/bin/cargo" ]; then
    export PATH="$HOME/.cargo/bin:$PATH"
fi
target=${CARGO_TARGET_DIR:-$root/target}
version=$(scripts/version.sh)
major=${version%%.*}

passed=0
failed=0
ok()  { passed=$((passed + 1)); echo "packaging: ok $*"; }
bad() { failed=$((failed + 1)); echo "packaging: FAIL $*"; }
# check WHAT COMMAND...: one result, the command's output shown when it fails.
check() {
    local what=$1 out
    shift
    if out=$("$@" 2>&1); then ok "$what"; else bad "$what"; printf '%s\n' "$out" | tail -n 20 | sed 's/^/    /'; fi
}
finish() {
    echo "packaging: $passed passed, $failed failed"
    [ "$failed" -eq 0 ]
}

missing=()
for tool in cargo-cinstall:cargo-c cargo-deb:cargo-deb pkg-config:pkg-config readelf:binutils \
            nm:binutils objcopy:binutils dpkg-deb:dpkg dpkg-architecture:dpkg-dev cc:gcc lintian:lintian; do
    command -v "${tool%%:*}" >/dev/null 2>&1 || missing+=("${tool%%:*} (${tool#*:})")
done
if [ "${#missing[@]}" -gt 0 ]; then
    bad "missing tools: ${missing[*]}: run scripts/bootstrap.sh"
    finish
    exit 1
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/hrts-pkg.XXXXXX")
segment="/hrts-pkg-$$"
export HRTS_SEGMENT="$segment" XDG_STATE_HOME="$tmp/state" HRTS_SEQ_FILE="$tmp/state/hrts.seq"
mkdir -p "$tmp/state"
hrts_bin="$target/release/hrts"
inst_segment="$segment-inst"
installed=no  # yes once `dpkg -i` has been tried: the package must go again
made_user=    # hrts, when the install made the service user: removed at the end
# Purged, not only removed: the postrm then also forgets the unit's state
# (deb-systemd-helper's mask and enablement records).
remove_package() { dpkg -P hrts; }
remove_user() {
    [ -n "$made_user" ] || return 0
    userdel "$made_user" || return 1
    if getent group "$made_user" >/dev/null; then groupdel "$made_user" || return 1; fi
    made_user=
}
cleanup() {
    local h s
    for h in "$tmp/deb-root/usr/bin/hrts" "$hrts_bin"; do
        if [ -x "$h" ]; then
            for s in "$segment" "$inst_segment"; do "$h" --segment "$s" unlink >/dev/null 2>&1 || true; done
            break
        fi
    done
    if [ "$installed" = yes ]; then
        echo "packaging: removing the package hrts (a check stopped before its removal)"
        remove_package >/dev/null 2>&1 || echo "packaging: could not remove hrts: run dpkg -P hrts" >&2
    fi
    if [ -n "$made_user" ]; then
        echo "packaging: removing the user $made_user that the install made"
        remove_user >/dev/null 2>&1 || echo "packaging: could not remove the user $made_user: run userdel $made_user" >&2
    fi
    rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

# has_only_hrts_exports LIB: the dynamic symbol table defines hrts_* and nothing else.
has_only_hrts_exports() {
    local extra
    [ -f "$1" ] || { echo "$1: no such file"; return 1; }
    extra=$(nm -D --defined-only "$1" | awk '$3 !~ /^hrts_/ {print $3}')
    [ -z "$extra" ] || { echo "$1 also exports: $extra"; return 1; }
}
# is_stripped ELF: no static symbol table and no debug information (.debug_gdb_scripts,
# which Rust puts in the loaded image, is no debug information and stays).
is_stripped() {
    local sections
    [ -f "$1" ] || { echo "$1: no such file"; return 1; }
    sections=$(readelf -SW "$1" | grep -oE '\.(symtab|debug_[a-z_]+)' | grep -vx '\.debug_gdb_scripts' \
        | sort -u | tr '\n' ' ')
    [ -z "$sections" ] || { echo "$1 still has: $sections"; return 1; }
}
soname_is() { # LIB SONAME
    local got
    got=$(readelf -dW "$1" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
    [ "$got" = "$2" ] || { echo "$1: SONAME '${got:-none}', expected $2"; return 1; }
}
link_is() { # LINK TARGET
    [ -L "$1" ] && [ "$(readlink "$1")" = "$2" ] || { echo "$1: not a link to $2 ($(ls -l "$1" 2>&1))"; return 1; }
}
# build_app NAME PKG_CONFIG_ENV...: compiles app.c with pkg-config's flags only.
build_app() {
    local name=$1 flags
    shift
    flags=$(env "$@" pkg-config --cflags --libs hrts) || return 1
    echo "cc app.c $flags"
    # shellcheck disable=SC2086 # pkg-config's flags are words
    cc -std=c11 -Wall -Wextra -Werror tests/packaging/app.c $flags -o "$tmp/$name"
}
# runs_against PROGRAM LIBDIR [ENV...]: runs PROGRAM, which must load libhrts from LIBDIR
# and print the version and a stamp.
runs_against() {
    local prog=$1 libdir=$2 out loaded
    shift 2
    loaded=$(env "$@" ldd "$prog" | awk '$1 == "libhrts.so.'"$major"'" {print $3}')
    # (ld.so.cache may name /lib/<multiarch> for /usr/lib/<multiarch>: the same files.)
    [ -n "$loaded" ] && [ "$(readlink -f "$(dirname "$loaded")")" = "$(readlink -f "$libdir")" ] \
        || { echo "$prog loads '$loaded', not $libdir/libhrts.so.$major"; return 1; }
    out=$(env "$@" "$prog") || return 1
    echo "$out"
    grep -Eq "^hrts $version: [0-9]{19} ns since the epoch$" <<<"$out"
}

# ---- 1. cargo cinstall into a temporary prefix
prefix="$tmp/prefix"
echo "packaging: cargo cinstall -p hrts-capi --release --library-type cdylib --prefix=$prefix --libdir=lib"
start=$SECONDS
if nice -n 10 cargo cinstall --release --library-type cdylib -p hrts-capi --prefix="$prefix" --libdir=lib; then
    ok "cargo cinstall ($((SECONDS - start)) s)"
else
    bad "cargo cinstall -p hrts-capi failed"
    finish
    exit 1
fi
lib="$prefix/lib/libhrts.so.$version"
check "installed $lib" test -f "$lib"
check "link libhrts.so.$major -> libhrts.so.$version" link_is "$prefix/lib/libhrts.so.$major" "libhrts.so.$version"
check "link libhrts.so -> libhrts.so.$version" link_is "$prefix/lib/libhrts.so" "libhrts.so.$version"
check "SONAME libhrts.so.$major" soname_is "$lib" "libhrts.so.$major"
check "stripped: no .symtab, no .debug_*" is_stripped "$lib"
check "exports hrts_* only" has_only_hrts_exports "$lib"
check "include/hrts.h is the committed header" cmp include/hrts.h "$prefix/include/hrts.h"
check "lib/pkgconfig/hrts.pc" test -f "$prefix/lib/pkgconfig/hrts.pc"
size_of() { if [ -f "$1" ]; then echo "$(stat -c %s "$1") bytes"; else echo "not built"; fi; }
echo "packaging: installed libhrts.so.$version: $(size_of "$lib");" \
    "cargo build --release's target/release/libhrts.so: $(size_of "$target/release/libhrts.so")"

pc_env=(PKG_CONFIG_PATH="$prefix/lib/pkgconfig")
check "pkg-config --modversion hrts is $version" \
    test "$(env "${pc_env[@]}" pkg-config --modversion hrts 2>&1)" = "$version"
check "compiled with \$(pkg-config --cflags --libs hrts) alone" build_app app-prefix "${pc_env[@]}"
# A private prefix's libdir is not the loader's: the user names it (here as pkg-config
# reports it) with LD_LIBRARY_PATH or a run path.
libdir=$(env "${pc_env[@]}" pkg-config --variable=libdir hrts || true)
check "runs against $libdir/libhrts.so.$major" runs_against "$tmp/app-prefix" "$libdir" LD_LIBRARY_PATH="$libdir"

# ---- 2. the Debian package
echo "packaging: packaging/deb/build.sh $tmp/deb"
start=$SECONDS
if deb=$(nice -n 10 packaging/deb/build.sh "$tmp/deb" | tail -n 1) && [ -f "$deb" ]; then
    ok "built $(basename "$deb") ($((SECONDS - start)) s, $(stat -c %s "$deb") bytes)"
else
    bad "packaging/deb/build.sh failed"
    finish
    exit 1
fi
arch=$(dpkg-architecture -qDEB_HOST_ARCH)
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
check "file name hrts_${version}-1_$arch.deb" test "$(basename "$deb")" = "hrts_${version}-1_$arch.deb"

dpkg-deb -I "$deb" > "$tmp/control.txt"
sed 's/^/    /' "$tmp/control.txt"
field_is() { # FIELD VALUE-REGEX
    grep -Eq "^ $1: $2\$" "$tmp/control.txt" || { echo "no '$1: $2' in dpkg-deb -I"; return 1; }
}
check "Package: hrts" field_is Package hrts
check "Version: $version-1" field_is Version "$version-1"
check "Architecture: $arch" field_is Architecture "$arch"
check "Depends names libc6" field_is Depends '.*libc6.*'
# The postinst runs systemd-sysusers (the service user).
check "Depends: systemd-standalone-sysusers | systemd | systemd-sysusers" \
    field_is Depends '.*systemd-standalone-sysusers \| systemd \| systemd-sysusers.*'
check "Section, Priority, Maintainer, Description" \
    sh -c 'grep -q "^ Section: " "$1" && grep -q "^ Priority: " "$1" && grep -q "^ Maintainer: " "$1" && grep -q "^ Description: " "$1"' _ "$tmp/control.txt"

dpkg-deb -c "$deb" > "$tmp/files.txt"
sed 's/^/    /' "$tmp/files.txt"
# has_entry PATH [LINK-TARGET]: the package holds PATH (a file, or a link to LINK-TARGET).
has_entry() {
    if [ -n "${2:-}" ]; then
        grep -Eq "^l.* \./$1 -> $2\$" "$tmp/files.txt" || { echo "no link ./$1 -> $2"; return 1; }
    else
        grep -Eq "^-.* \./$1\$" "$tmp/files.txt" || { echo "no file ./$1"; return 1; }
    fi
}
l="usr/lib/$multiarch"
for f in usr/bin/hrts usr/share/man/man1/hrts.1.gz usr/share/bash-completion/completions/hrts \
         "$l/libhrts.so.$version" "$l/pkgconfig/hrts.pc" usr/include/hrts.h usr/share/doc/hrts/copyright \
         usr/lib/systemd/system/hrts.service usr/lib/sysusers.d/hrts.conf usr/share/doc/hrts/daemon.md; do
    check "holds /$f" has_entry "$f"
done
check "holds /$l/libhrts.so.$major -> libhrts.so.$version" has_entry "$l/libhrts.so.$major" "libhrts.so.$version"
check "holds /$l/libhrts.so -> libhrts.so.$version" has_entry "$l/libhrts.so" "libhrts.so.$version"
check "holds nothing outside /usr" sh -c '! grep -Ev " \./(usr/.*)?\$" "$1"' _ "$tmp/files.txt"

# Extracted, not installed: the machine's /usr stays as it is.
ext="$tmp/deb-root"
dpkg-deb -x "$deb" "$ext"
check "extracted hrts --version says hrts $version" \
    sh -c 'v=$("$1" --version) && echo "$v" && case "$v" in "hrts $2 "*) ;; *) exit 1 ;; esac' _ "$ext/usr/bin/hrts" "$version"
check "extracted hrts stripped" is_stripped "$ext/usr/bin/hrts"
check "extracted hrts now" sh -c '"$1" now | grep -Eq "^[0-9]{19}\$"' _ "$ext/usr/bin/hrts"
check "manual page: roff with .TH hrts" sh -c 'gzip -dc "$1" | grep -q "^\.TH hrts"' _ "$ext/usr/share/man/man1/hrts.1.gz"
check "bash completion: valid bash, completes hrts" \
    bash -c 'bash -n "$1" && source "$1" && complete -p hrts' _ "$ext/usr/share/bash-completion/completions/hrts"
check "extracted library: SONAME libhrts.so.$major" soname_is "$ext/$l/libhrts.so.$version" "libhrts.so.$major"
check "extracted library stripped" is_stripped "$ext/$l/libhrts.so.$version"
check "the package's header is the committed one" cmp include/hrts.h "$ext/usr/include/hrts.h"
check "the package's unit is packaging/systemd/hrts.service" \
    cmp packaging/systemd/hrts.service "$ext/usr/lib/systemd/system/hrts.service"
check "the package's sysusers.d/hrts.conf is packaging/systemd/hrts.sysusers" \
    cmp packaging/systemd/hrts.sysusers "$ext/usr/lib/sysusers.d/hrts.conf"
# The maintainer scripts cargo-deb wrote: the postinst makes the user; none enables or
# starts the unit on install (they do on upgrade only what the unit's state asks).
dpkg-deb -e "$deb" "$tmp/control"
check "postinst: systemd-sysusers hrts.conf" grep -E '^[[:space:]]*systemd-sysusers .*hrts\.conf' "$tmp/control/postinst"
check "no maintainer script starts the unit on install" \
    sh -c '! cat "$1"/postinst "$1"/prerm "$1"/postrm 2>/dev/null | grep -nE "deb-systemd-invoke (start|restart) |_dh_action=start"' \
    _ "$tmp/control"
# pkg-config against the tree as if it were /: PKG_CONFIG_SYSROOT_DIR puts the tree
# before the .pc file's /usr paths.
pc_env=(PKG_CONFIG_PATH="$ext/$l/pkgconfig" PKG_CONFIG_SYSROOT_DIR="$ext")
check "hrts.pc: prefix /usr, libdir /$l" env PKG_CONFIG_PATH="$ext/$l/pkgconfig" \
    sh -c 'p=$(pkg-config --variable=prefix hrts) && l=$(pkg-config --variable=libdir hrts) &&
           echo "prefix=$p libdir=$l" && [ "$p $l" = "/usr /usr/lib/$1" ]' _ "$multiarch"
check "compiled against the extracted tree with pkg-config alone" build_app app-deb "${pc_env[@]}"
check "runs against the extracted $l/libhrts.so.$major" runs_against "$tmp/app-deb" "$ext/$l" LD_LIBRARY_PATH="$ext/$l"

# ---- 3. lintian
# Every tag, info and pedantic ones included, is either fixed or listed with its reason
# in packaging/deb/lintian-expected.txt (packaging/README.md); the tags compare by name.
expected=packaging/deb/lintian-expected.txt
start=$SECONDS
if lintian --allow-root --display-info --pedantic --fail-on none "$deb" > "$tmp/lintian.txt" 2>&1; then
    sed 's/^/    /' "$tmp/lintian.txt"
    awk '$2 == "hrts:" && $1 ~ /^[EWIPX]:$/ {print $3}' "$tmp/lintian.txt" | sort -u > "$tmp/lintian-tags.txt"
    sed -e 's/#.*//' -e 's/[[:space:]]*$//' "$expected" | awk 'NF {print $1}' | sort -u > "$tmp/lintian-listed.txt"
    unlisted=$(comm -23 "$tmp/lintian-tags.txt" "$tmp/lintian-listed.txt" | tr '\n' ' ')
    if [ -z "$unlisted" ]; then
        ok "lintian ($((SECONDS - start)) s): $(wc -l < "$tmp/lintian-tags.txt") tags, each listed in $expected"
    else
        bad "lintian ($((SECONDS - start)) s): tags neither fixed nor listed in $expected: $unlisted"
    fi
    stale=$(comm -13 "$tmp/lintian-tags.txt" "$tmp/lintian-listed.txt" | tr '\n' ' ')
    [ -z "$stale" ] || echo "packaging: note: $expected lists tags lintian no longer reports: $stale(remove them)"
else
    bad "lintian did not run"
    sed 's/^/    /' "$tmp/lintian.txt" | tail -n 20
fi

# ---- 4. installed on this machine, used and removed (root only)
usr_list() { find /usr 2>/dev/null | LC_ALL=C sort; }
# What names the unit in systemd's and deb-systemd-helper's state: links, masks, records.
unit_state() {
    find /etc/systemd /var/lib/systemd -name 'hrts.service*' 2>/dev/null | LC_ALL=C sort
    grep -rls 'hrts\.service' /var/lib/systemd/deb-systemd-helper-enabled 2>/dev/null | LC_ALL=C sort || true
}
# dpkg's status of hrts: empty when dpkg knows no such package.
hrts_status() { dpkg-query -W -f='${Status}' hrts 2>/dev/null || true; }
install_check() {
    local status_before installed_dir="/usr/lib/$multiarch"
    status_before=$(hrts_status)
    echo "packaging: dpkg status of hrts before: ${status_before:-none}"
    case "$status_before" in
        ""|*" not-installed") ;;
        *)  bad "a package hrts is on this machine already ($status_before): the install check will not" \
                "install over it or remove it; dpkg -P hrts first"
            return ;;
    esac
    usr_list > "$tmp/usr-before.txt"
    unit_state > "$tmp/unit-before.txt"
    local user_before
    user_before=$(getent passwd hrts || true)
    echo "packaging: the user hrts before: ${user_before:-none}"
    installed=yes
    check "dpkg -i $(basename "$deb")" dpkg -i "$deb"
    check "dpkg -s hrts: installed, version $version-1" sh -c \
        'dpkg-query -W -f="\${Status} \${Version}\n" hrts | tee /dev/stderr | grep -qx "install ok installed $1-1"' _ "$version"
    check "dpkg --verify hrts: files as packaged (md5sums)" sh -c 'out=$(dpkg --verify hrts) && [ -z "$out" ] || { echo "$out"; exit 1; }'
    check "installed /usr/bin/hrts --version says hrts $version" \
        sh -c 'v=$(/usr/bin/hrts --version) && echo "$v" && case "$v" in "hrts $1 "*) ;; *) exit 1 ;; esac' _ "$version"
    check "installed hrts now (segment $inst_segment)" \
        sh -c 'out=$(HRTS_SEGMENT="$1" /usr/bin/hrts now) && echo "$out" && echo "$out" | grep -Eqx "[0-9]{19}"' _ "$inst_segment"
    check "installed hrts info" \
        sh -c 'out=$(HRTS_SEGMENT="$1" /usr/bin/hrts info) && echo "$out" && echo "$out" | grep -qx "segment: $1"' _ "$inst_segment"
    check "installed hrts unlink" /usr/bin/hrts --segment "$inst_segment" unlink
    if command -v man >/dev/null 2>&1; then
        check "man -w hrts: /usr/share/man/man1/hrts.1.gz" \
            sh -c 'p=$(man -w hrts) && echo "$p" && [ "$p" = /usr/share/man/man1/hrts.1.gz ]'
    else
        check "manual page /usr/share/man/man1/hrts.1.gz (no man-db)" test -f /usr/share/man/man1/hrts.1.gz
    fi
    check "bash completion /usr/share/bash-completion/completions/hrts" \
        test -f /usr/share/bash-completion/completions/hrts
    check "ldconfig -p lists libhrts.so.$major (the trigger ran)" \
        sh -c 'ldconfig -p | grep -E "^[[:space:]]+libhrts\.so\.$1 "' _ "$major"
    check "compiled against the installed copy with the system's pkg-config" \
        build_app app-sys -u PKG_CONFIG_PATH -u PKG_CONFIG_LIBDIR -u PKG_CONFIG_SYSROOT_DIR
    check "runs against the installed $installed_dir/libhrts.so.$major" \
        runs_against "$tmp/app-sys" "$installed_dir" -u LD_LIBRARY_PATH
    if [ -z "$user_before" ] && getent passwd hrts >/dev/null; then made_user=hrts; fi
    check "the service user hrts: a system user without a login (the postinst's systemd-sysusers)" bash -c '
        IFS=: read -r name _ uid gid _ home shell < <(getent passwd hrts) || { echo "no user hrts"; exit 1; }
        echo "hrts: uid $uid, gid $gid ($(getent group "$gid" | cut -d: -f1)), home $home, shell $shell"
        [ "$uid" -lt 1000 ] && [ "$(getent group "$gid" | cut -d: -f1)" = hrts ] &&
            case "$shell" in */nologin|/bin/false) ;; *) exit 1 ;; esac' _
    check "the unit installed, neither enabled nor started" sh -c '
        test -f /usr/lib/systemd/system/hrts.service || { echo "no /usr/lib/systemd/system/hrts.service"; exit 1; }
        w=$(find /etc/systemd/system -name hrts.service 2>/dev/null)
        [ -z "$w" ] || { echo "enabled: $w"; exit 1; }
        if [ -d /run/systemd/system ]; then ! systemctl is-active --quiet hrts; fi'
    if command -v systemd-analyze >/dev/null 2>&1; then
        check "systemd-analyze verify the installed unit (its /usr/bin/hrts and hrts(1))" sh -c '
            out=$(cd / && systemd-analyze verify /usr/lib/systemd/system/hrts.service 2>&1); rc=$?
            [ -z "$out" ] || echo "$out"
            [ "$rc" -eq 0 ] && ! echo "$out" | grep -q hrts.service'
    fi

    check "dpkg -P hrts" remove_package
    installed=no
    check "dpkg -s hrts: not installed" sh -c 's=$(dpkg-query -W -f="\${Status}" hrts 2>/dev/null) || exit 0
        echo "status: $s"; case "$s" in *" not-installed") ;; *) exit 1 ;; esac'
    check "dpkg's status of hrts as before (${status_before:-none})" test "$(hrts_status)" = "$status_before"
    check "no /var/lib/dpkg/info/hrts.*" sh -c '! ls -d /var/lib/dpkg/info/hrts.* 2>/dev/null'
    check "ldconfig -p no longer lists libhrts.so.$major" \
        sh -c '! ldconfig -p | grep -E "^[[:space:]]+libhrts\.so\.$1 "' _ "$major"
    usr_list > "$tmp/usr-after.txt"
    check "the list of /usr as before ($(wc -l < "$tmp/usr-before.txt") entries)" \
        diff "$tmp/usr-before.txt" "$tmp/usr-after.txt"
    unit_state > "$tmp/unit-after.txt"
    check "the unit's state in /etc/systemd and /var/lib/systemd as before (no mask, no records)" \
        diff "$tmp/unit-before.txt" "$tmp/unit-after.txt"
    if [ -n "$made_user" ]; then
        # In this shell: remove_user clears made_user, so that the trap does not try again.
        local what="the user hrts removed again (the install made it; Debian's purge leaves it)"
        if remove_user > "$tmp/userdel.txt" 2>&1; then ok "$what"; else bad "$what"; sed 's/^/    /' "$tmp/userdel.txt"; fi
    fi
}
if [ "$(id -u)" -eq 0 ]; then
    start=$SECONDS
    echo "packaging: dpkg -i $(basename "$deb") on this machine, used, then removed"
    install_check
    echo "packaging: install check: $((SECONDS - start)) s"
else
    echo "packaging: not root: the install check (dpkg -i, use, dpkg -r) is skipped, and not counted"
fi

finish
