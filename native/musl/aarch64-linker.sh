#!/bin/sh
# The linker of the aarch64-unknown-linux-musl libraries (.cargo/config.toml): linker.sh with
# Debian's aarch64 musl toolchain (musl-dev:arm64, multiarch: aarch64-linux-musl-gcc, which
# drives aarch64-linux-gnu-gcc with musl's headers, crt files and libc.so) and Rust's
# unwinder for that target.
HRTS_MUSL_CC=aarch64-linux-musl-gcc HRTS_MUSL_TARGET=aarch64-unknown-linux-musl \
    exec "$(dirname "$0")/linker.sh" "$@"
