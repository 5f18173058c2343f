#!/bin/sh
# The linker of the x86_64-unknown-linux-musl libraries (.cargo/config.toml): musl-gcc
# (Debian's musl-tools), with one change. rustc links a dynamic musl library's unwinder
# as -lgcc_s, which a glibc host has only built for glibc (and gcc's static libgcc_eh
# calls glibc's _dl_find_object); the LLVM libunwind that Rust ships for this target goes
# into the library instead, so it needs no libgcc_s at run time and panics still unwind
# to the FFI boundary's catch_unwind. native/musl/aarch64-linker.sh runs it for aarch64
# (HRTS_MUSL_CC, HRTS_MUSL_TARGET).
set -eu
sysroot=$(rustc --print sysroot)
unwind="$sysroot/lib/rustlib/${HRTS_MUSL_TARGET:-x86_64-unknown-linux-musl}/lib/self-contained"
for a in "$@"; do
    shift
    if [ "$a" = "-lgcc_s" ]; then
        # The archive by its path: a -L to that directory would find its static libc.a too.
        set -- "$@" "$unwind/libunwind.a"
    else
        set -- "$@" "$a"
    fi
done
exec "${HRTS_MUSL_CC:-musl-gcc}" "$@"
