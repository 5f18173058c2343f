#!/usr/bin/env bash
# Installs what a fresh Debian/Ubuntu machine lacks to build and test hrts.
# Idempotent: runs apt-get / rustup only for what is missing. Uses sudo only when
# not root.
#
#   scripts/bootstrap.sh              everything scripts/test.sh needs
#   scripts/bootstrap.sh --selftest   only what scripts/selftest.sh needs: a JDK, Gradle
#                                     and Rust for the host (no cross compilers, qemu,
#                                     Maven, Prometheus or extra toolchains)
set -euo pipefail

scope=test
case "${1:-}" in
    --selftest) scope=selftest ;;
    "") ;;
    *) echo "usage: scripts/bootstrap.sh [--selftest]" >&2; exit 2 ;;
esac

log() { echo "bootstrap: $*"; }

SUDO=
if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then SUDO=sudo; else
        log "not root and no sudo: missing packages cannot be installed"; fi
fi

# ---- Debian packages
# faketime: the multi-process tracking tests run hrts under a faked CLOCK_REALTIME.
# prometheus: tests/stats-shared/prometheus.sh scrapes `hrts stats serve` with a real
# Prometheus server (and lints the exposition with its promtool).
# pkg-config, libssl-dev: cargo-c's build (below); dpkg-dev: cargo-deb's Depends
# (dpkg-shlibdeps) and the packaging stage's dpkg-architecture; lintian: the packaging
# stage lints the .deb. systemd: systemd-analyze, with which the daemon-unit stage
# verifies the unit (no running systemd needed), and systemd-sysusers, which the
# package's postinst runs when the packaging stage installs it; util-linux (setpriv,
# unshare) and passwd (useradd): the daemon-unit stage runs the unit's command as its user.
# musl-tools (musl-gcc): the jar's linux-musl-x86_64 library and the musl C check;
# musl-dev:arm64 and musl:arm64 (multiarch: aarch64-linux-musl-gcc over the GNU cross
# compiler, and musl's aarch64 loader for qemu-user): the jar's linux-musl-aarch64 library.
# chrony: native/core/tests/chrony.rs runs chronyd and chronyc of its own (chronyd with -x,
# which never sets the clock, in a network namespace; iproute2 comes with it); Debian's
# chronyd service is kept from starting (below). valgrind, llvm-19 (llvm-mca, llvm-objdump):
# scripts/cost-model.sh, the stamps' static cost model (llvm 19 knows Zen 4 and Sapphire
# Rapids; where apt has no llvm-19, Debian's llvm, with fewer CPU models).
# gcc-mingw-w64-x86-64 (the x86_64-pc-windows-gnu target's linker), wine64 and wine (the
# `wine` command, only recommended by wine64): the windows stage builds hrts for Windows
# and runs its tests under Wine (docs/windows.md).
if [ "$scope" = selftest ]; then
    pkgs=(gradle)
else
    pkgs=(gradle junit4 libhamcrest-java python3 faketime maven prometheus chrony
          pkg-config libssl-dev dpkg-dev lintian systemd util-linux passwd
          gcc-aarch64-linux-gnu gcc-powerpc64le-linux-gnu
          libc6-dev-arm64-cross libc6-dev-ppc64el-cross qemu-user-static valgrind musl-tools
          musl:arm64 musl-dev:arm64 gcc-mingw-w64-x86-64 wine64 wine)
    if apt-cache show llvm-19 >/dev/null 2>&1; then pkgs+=(llvm-19); else pkgs+=(llvm); fi
fi
if command -v dpkg-query >/dev/null 2>&1; then
    missing=()
    for p in "${pkgs[@]}"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
    done
    # A JDK (javac), 17 or newer: gradle's own dependency is only a runtime.
    if ! command -v javac >/dev/null 2>&1; then
        missing+=(openjdk-17-jdk-headless)
    fi
    # chrony replaces the host's time daemon (it conflicts with systemd-timesyncd, ntp,
    # ...): where systemd runs one, installing chrony here would leave the host without
    # time synchronisation, so that is left to the user.
    if [[ " ${missing[*]} " == *" chrony "* ]] && [ -d /run/systemd/system ] \
        && dpkg-query -W -f='${Status} ${Provides}\n' 2>/dev/null \
            | grep -q '^install ok installed.*time-daemon'; then
        log "not installing chrony: it would replace this host's time daemon; the chronyd"
        log "tests (native/core/tests/chrony.rs) need it: apt-get install chrony if that is fine"
        keep=()
        for p in "${missing[@]}"; do [ "$p" = chrony ] || keep+=("$p"); done
        missing=("${keep[@]}")
    fi
    if [ "${#missing[@]}" -gt 0 ]; then
        log "installing: ${missing[*]}"
        # The :arm64 packages need the architecture known to dpkg (multiarch).
        if [[ " ${missing[*]} " == *":arm64 "* ]] && ! dpkg --print-foreign-architectures | grep -qx arm64; then
            log "dpkg --add-architecture arm64 (for musl:arm64, musl-dev:arm64)"
            $SUDO dpkg --add-architecture arm64
        fi
        $SUDO apt-get update -qq
        # Debian's chronyd service must not start (it would keep the host clock): a
        # policy-rc.d that refuses every start holds it back while apt runs, unless one
        # is there already.
        policy=/usr/sbin/policy-rc.d
        if [[ " ${missing[*]} " == *" chrony "* ]] && [ ! -e "$policy" ]; then
            trap '$SUDO rm -f "$policy"' EXIT
            printf '#!/bin/sh\nexit 101\n' | $SUDO tee "$policy" >/dev/null
            $SUDO chmod 755 "$policy"
        fi
        DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
        if [[ " ${missing[*]} " == *" chrony "* ]] && [ -d /run/systemd/system ]; then
            $SUDO systemctl disable --now chrony.service >/dev/null 2>&1 || true
        fi
    else
        log "Debian packages present"
    fi
else
    log "no dpkg: install yourself: JDK 17+, Gradle (4.4 or 8.x), JUnit 4, python3, Maven, aarch64/ppc64le cross gcc + libc, qemu-user"
fi

# ---- Rust toolchain
if ! command -v cargo >/dev/null 2>&1 && [ -x "$HOME/.cargo/bin/cargo" ]; then
    export PATH="$HOME/.cargo/bin:$PATH"
fi
# hrts's minimum supported Rust version (Cargo.toml: rust-version).
msrv=$(sed -n 's/^rust-version[[:space:]]*=[[:space:]]*"\([^"]*\)".*/\1/p' "$(dirname "$0")/../Cargo.toml")
if ! command -v cargo >/dev/null 2>&1; then
    log "ERROR: cargo not found: install Rust ${msrv} or newer (rustup, https://rustup.rs)" >&2
    exit 1
fi
if [ "$scope" = selftest ]; then
    log "Rust present (the self-test builds for this machine only)"
elif command -v rustup >/dev/null 2>&1; then
    comps=$(rustup component list --installed 2>/dev/null || true)
    for c in clippy rustfmt; do
        if ! grep -q "^$c" <<<"$comps"; then
            log "rustup component add $c"
            rustup component add "$c"
        fi
    done
    targets=$(rustup target list --installed 2>/dev/null || true)
    for t in aarch64-unknown-linux-gnu powerpc64le-unknown-linux-gnu x86_64-unknown-linux-musl \
        aarch64-unknown-linux-musl x86_64-pc-windows-gnu; do
        if ! grep -qx "$t" <<<"$targets"; then
            log "rustup target add $t"
            rustup target add "$t"
        fi
    done
    # The oldest supported Rust, for scripts/msrv.sh to build with. Not fatal: without
    # it scripts/msrv.sh still checks the dependencies and clippy the std APIs.
    if [ -n "$msrv" ] && ! rustup toolchain list | grep -q "^$msrv-"; then
        log "rustup toolchain install $msrv --profile minimal (the minimum supported Rust)"
        rustup toolchain install "$msrv" --profile minimal \
            || log "could not install Rust $msrv: scripts/msrv.sh will check without it"
    fi
    log "Rust components and targets present"
else
    log "no rustup: make sure clippy, rustfmt and the aarch64/powerpc64le linux-gnu targets are installed"
fi

# ---- Cargo subcommands: the packaging stage's (packaging/README.md) and the test runner
# cargo-nextest runs the cargo stage's tests, each in a process of its own and several at
# once (.config/nextest.toml); without its self-update feature, which would reach GitHub.
# cargo-c installs libhrts.so with its SONAME, the header and hrts.pc (`cargo cinstall`);
# cargo-deb builds the Debian package. Pinned and --locked, installed only when the
# version is missing. Debian's cargo-c (0.9.14) cannot read this workspace (resolver
# "3"); 0.10.20 is built on cargo 0.94 (Rust 1.93's) and needs Rust 1.91 to build.
# opt-level 1: tools that run for a second, built in about half the time of level 3.
cargo_tool() { # BINARY CRATE VERSION [INSTALL OPTION...]
    local have bin=$1 crate=$2 version=$3
    shift 3
    have=$(cargo install --list 2>/dev/null | sed -n "s/^$crate v\([^:]*\):\$/\1/p")
    if [ "$have" = "$version" ] && command -v "$bin" >/dev/null 2>&1; then
        return 0
    fi
    log "cargo install --locked $crate@$version (${have:+replacing $have; }a few minutes on 2 cores)"
    CARGO_PROFILE_RELEASE_OPT_LEVEL=1 nice -n 10 cargo install --quiet --locked "$crate@$version" "$@" \
        || { log "ERROR: cargo install $crate@$version failed: the test command needs it" >&2; exit 1; }
}
if [ "$scope" = test ]; then
    cargo_tool cargo-nextest cargo-nextest 0.9.151 --no-default-features --features default-no-update
    cargo_tool cargo-cbuild cargo-c 0.10.20+cargo-0.94.0
    cargo_tool cargo-deb cargo-deb 3.8.0
    log "cargo-nextest, cargo-c and cargo-deb present"
fi
