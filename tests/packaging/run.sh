#!/usr/bin/env bash
# The installs C users and operators get (packaging/README.md), checked as they use them:
#
# 1. `cargo cinstall` of the C library into a temporary prefix: the files and links,
#    the SONAME (readelf), a stripped library, exports hrts_* alone, the header as
#    committed; tests/packaging/app.c compiled with `pkg-config --cflags --libs hrts`
#    alone and run against the installed library.
# 2. The Debian package (packaging/deb/build.sh): its control fields and file list
#    (dpkg-deb -I/-c), then, extracted with `dpkg-deb -x` (never installed on this
#    machine), its hrts --version, manual page and completion, and app.c built with
#    pkg-config against the extracted tree.
#
# Programs run on a segment of their own (/hrts-pkg-<pid>), removed at the end with
# `hrts unlink`, with their state under the temporary directory, also removed. The
# last line is "packaging: N passed, N failed".
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
            nm:binutils dpkg-deb:dpkg dpkg-architecture:dpkg-dev cc:gcc; do
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
cleanup() {
    local h
    for h in "$tmp/deb-root/usr/bin/hrts" "$hrts_bin"; do
        if [ -x "$h" ]; then "$h" --segment "$segment" unlink >/dev/null 2>&1 || true; break; fi
    done
    rm -rf "$tmp"
}
trap cleanup EXIT

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
    [ "$loaded" = "$libdir/libhrts.so.$major" ] || { echo "$prog loads '$loaded', not $libdir/libhrts.so.$major"; return 1; }
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
         "$l/libhrts.so.$version" "$l/pkgconfig/hrts.pc" usr/include/hrts.h usr/share/doc/hrts/copyright; do
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
# pkg-config against the tree as if it were /: PKG_CONFIG_SYSROOT_DIR puts the tree
# before the .pc file's /usr paths.
pc_env=(PKG_CONFIG_PATH="$ext/$l/pkgconfig" PKG_CONFIG_SYSROOT_DIR="$ext")
check "hrts.pc: prefix /usr, libdir /$l" env PKG_CONFIG_PATH="$ext/$l/pkgconfig" \
    sh -c 'p=$(pkg-config --variable=prefix hrts) && l=$(pkg-config --variable=libdir hrts) &&
           echo "prefix=$p libdir=$l" && [ "$p $l" = "/usr /usr/lib/$1" ]' _ "$multiarch"
check "compiled against the extracted tree with pkg-config alone" build_app app-deb "${pc_env[@]}"
check "runs against the extracted $l/libhrts.so.$major" runs_against "$tmp/app-deb" "$ext/$l" LD_LIBRARY_PATH="$ext/$l"

finish
