#!/usr/bin/env bash
# Checks hrts's minimum supported Rust version: `rust-version` under [workspace.package]
# in Cargo.toml, inherited by every crate.
#
# 1. Every crate declares it (`rust-version.workspace = true`), so cargo refuses older
#    compilers with a clear message and clippy's `incompatible_msrv` lint (run by the
#    clippy stage of scripts/test.sh) rejects std APIs newer than it.
#    native/clockbound-compare, a workspace of its own, states the same version.
# 2. No dependency in Cargo.lock (normal, build and dev, on every Linux target hrts
#    builds for) declares a newer rust-version.
# 3. If the toolchain of that version is installed (scripts/bootstrap.sh installs it
#    with rustup), `cargo +VERSION check --workspace --all-targets --all-features --locked` builds with
#    it: this also catches language features, which clippy does not check.
# DEVELOPERS.md, which explains the version, must quote it.
#
# Usage: scripts/msrv.sh   (HRTS_MSRV_TARGET_DIR moves the check build from target/msrv)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd -P)
cd "$ROOT"

# Messages go to stderr; stdout is the rust-version, for step 3.
msrv=$(python3 - <<'PY'
import json, subprocess, sys

def say(msg):
    print(msg, file=sys.stderr)

def key(v):
    return tuple(int(x) for x in v.split("."))

TARGETS = ["x86_64-unknown-linux-gnu", "aarch64-unknown-linux-gnu", "powerpc64le-unknown-linux-gnu"]
msrv, newer, highest, bad = None, {}, ("0", "-"), False
for target in TARGETS:
    meta = json.loads(subprocess.check_output(
        ["cargo", "metadata", "--format-version", "1", "--locked", "--filter-platform", target]))
    pkgs = {p["id"]: p for p in meta["packages"]}
    members = set(meta["workspace_members"])
    if msrv is None:
        declared = {pkgs[m]["name"]: pkgs[m].get("rust_version") for m in members}
        for name, v in sorted(declared.items()):
            if not v:
                say(f"msrv: crate {name} declares no rust-version: add `rust-version.workspace = true`")
                bad = True
        versions = {v for v in declared.values() if v}
        if len(versions) != 1:
            say(f"msrv: the crates do not share one rust-version: {declared}")
            sys.exit(1)
        msrv = versions.pop()
    # Every package reachable from the workspace in this target's resolve.
    nodes = {n["id"]: n for n in meta["resolve"]["nodes"]}
    todo, seen = list(members), set()
    while todo:
        pid = todo.pop()
        if pid in seen:
            continue
        seen.add(pid)
        todo.extend(d["pkg"] for d in nodes[pid]["deps"])
    for pid in seen - members:
        p = pkgs[pid]
        v = p.get("rust_version")
        if not v:
            continue
        if key(v) > key(highest[0]):
            highest = (v, f"{p['name']} {p['version']}")
        if key(v) > key(msrv):
            newer[f"{p['name']} {p['version']}"] = v
for dep, v in sorted(newer.items()):
    say(f"msrv: {dep} needs Rust {v}, newer than rust-version {msrv}")
if newer or bad:
    say("msrv: raise rust-version in Cargo.toml [workspace.package], or pin an older dependency")
    sys.exit(1)
say(f"msrv: rust-version {msrv}; the dependency needing the newest Rust is {highest[1]} ({highest[0]})")
print(msrv)
PY
)

# native/clockbound-compare is a workspace of its own (outside this one, never built by
# CI) that states the same rust-version: it builds hrts-core.
compare=native/clockbound-compare/Cargo.toml
grep -Eq "^rust-version[[:space:]]*=[[:space:]]*\"$msrv\"" "$compare" \
    || { echo "msrv: $compare does not say rust-version = \"$msrv\" under [workspace.package]: update it" >&2; exit 1; }

# DEVELOPERS.md explains the version; keep it from going stale.
grep -q "^Rust: $msrv or newer" DEVELOPERS.md \
    || { echo "msrv: DEVELOPERS.md does not say 'Rust: $msrv or newer': update it" >&2; exit 1; }

if command -v rustup >/dev/null 2>&1 && rustup toolchain list | grep -q "^$msrv-"; then
    echo "msrv: cargo +$msrv check --workspace --all-targets --all-features --locked"
    CARGO_TARGET_DIR="${HRTS_MSRV_TARGET_DIR:-$ROOT/target/msrv}" \
        cargo "+$msrv" check --workspace --all-targets --all-features --locked --quiet
    echo "msrv: builds with Rust $msrv"
else
    echo "msrv: toolchain $msrv not installed (scripts/bootstrap.sh installs it with rustup):" \
        "not compiled with it; the dependency check above and clippy's incompatible_msrv stand in"
fi
