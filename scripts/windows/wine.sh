#!/usr/bin/env bash
# wine.sh PROGRAM [ARG...]: runs a Windows program under Wine in hrts's own prefix,
# $HRTS_WINEPREFIX (default ~/.cache/hrts/wine), made on first use (some seconds) and
# reused after. Wine releases before 9.0 (Debian 12 has 8.0) lack bcryptprimitives.dll,
# without which no program of Rust 1.78 or later starts: a stand-in
# (scripts/windows/bcryptprimitives.c) is built into the prefix, never shipped.
#
# Sourced (by scripts/windows-test.sh), it only makes the prefix and exports WINEPREFIX.
set -u
hrts_wine_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
export WINEPREFIX="${HRTS_WINEPREFIX:-$HOME/.cache/hrts/wine}"
export WINEDEBUG=-all

hrts_wine_prefix() {
    local tool shim
    for tool in wine x86_64-w64-mingw32-gcc; do
        if ! command -v "$tool" >/dev/null 2>&1; then
            echo "wine.sh: $tool not found: run scripts/bootstrap.sh (gcc-mingw-w64-x86-64, wine64)" >&2
            return 1
        fi
    done
    mkdir -p "$WINEPREFIX" || return 1
    if [ ! -f "$WINEPREFIX/system.reg" ]; then
        echo "== making the Wine prefix $WINEPREFIX (once)" >&2
        wine cmd /c exit >/dev/null 2>&1
    fi
    shim="$WINEPREFIX/drive_c/windows/system32/bcryptprimitives.dll"
    if [ ! -f "$shim" ] || [ "$hrts_wine_dir/bcryptprimitives.c" -nt "$shim" ]; then
        x86_64-w64-mingw32-gcc -O2 -shared -o "$shim" "$hrts_wine_dir/bcryptprimitives.c" -ladvapi32 || {
            echo "wine.sh: building $hrts_wine_dir/bcryptprimitives.c failed" >&2
            return 1
        }
    fi
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
    hrts_wine_prefix || exit 1
    exec wine "$@"
fi
