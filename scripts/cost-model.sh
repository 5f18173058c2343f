#!/usr/bin/env bash
# The static cost model of every stamp, for Intel and AMD cores, from any x86-64
# machine: llvm-mca's cycles and micro-ops per call of each stamp's loop
# (native/core/benches/cost_model.rs), and callgrind's instructions per call.
# Neither depends on the machine it runs on or on its load, so a change to the
# read path can be judged for both vendors where only one (or a busy one) is at
# hand. Not a timing benchmark and not a test stage; results and how to read
# them: native/core/benches/README.md.
#
#   scripts/cost-model.sh                 every kind (about a minute)
#   scripts/cost-model.sh now_ns,rdtsc    some kinds (names: the bench's --list)
#
# Writes each kind's hot path (the llvm-mca input) and callgrind's files to
# target/cost-model/ (under CARGO_TARGET_DIR if set). Needs llvm-mca and
# llvm-objdump (Debian's llvm-19, else llvm), valgrind and python3, which
# scripts/bootstrap.sh installs.
set -euo pipefail
cd "$(dirname "$0")/.."

die() { echo "cost-model: $*" >&2; exit 1; }

[ "$(uname -m)" = x86_64 ] || die "x86-64 only (it models Intel and AMD cores)"

# The newest llvm installed: its CPU models are the most complete (znver4 and
# Sapphire Rapids' own model came with LLVM 17 and 16).
llvm_bin=
for d in $(ls -d /usr/lib/llvm-*/bin 2>/dev/null | sort -t- -k2 -n -r); do
    if [ -x "$d/llvm-mca" ] && [ -x "$d/llvm-objdump" ]; then llvm_bin=$d; break; fi
done
if [ -z "$llvm_bin" ] && command -v llvm-mca >/dev/null && command -v llvm-objdump >/dev/null; then
    llvm_bin=$(dirname "$(command -v llvm-mca)")
fi
[ -n "$llvm_bin" ] || die "llvm-mca and llvm-objdump not found: install Debian's llvm-19 (or llvm),
as scripts/bootstrap.sh does: apt-get install llvm-19"
command -v valgrind >/dev/null || die "valgrind not found (it counts the instructions per stamp):
install it, as scripts/bootstrap.sh does: apt-get install valgrind"
command -v python3 >/dev/null || die "python3 not found: apt-get install python3"

target=${CARGO_TARGET_DIR:-target}
out=$target/cost-model
mkdir -p "$out"

# Built twice (bench profile): as shipped, for the plain stamps, and with the
# testing feature for the bounded ones (native/core/benches/cost_model.rs).
build() { # FEATURES...
    cargo bench -p hrts-core "$@" --bench cost_model --no-run \
        --message-format=json 2>"$out/build.log" \
        | python3 -c 'import json,sys
for l in sys.stdin:
    m = json.loads(l)
    if m.get("reason") == "compiler-artifact" and m["target"]["name"] == "cost_model" and m.get("executable"):
        print(m["executable"])' \
        || { cat "$out/build.log" >&2; die "the build failed"; }
}
echo "cost-model: building the stamp loops (cargo bench --no-run, bench profile), as shipped" >&2
binary=$(build)
[ -n "$binary" ] || { cat "$out/build.log" >&2; die "the build gave no cost_model binary"; }
# Cargo names both builds alike: the first is kept under a name of its own.
cp "$binary" "$out/cost_model-shipped"
binary=$out/cost_model-shipped
echo "cost-model: and with the testing feature, for the bounded stamps" >&2
bounded_binary=$(build --features testing)
[ -n "$bounded_binary" ] || { cat "$out/build.log" >&2; die "the build gave no cost_model binary"; }

# A segment of its own, made (and calibrated) before the counted runs, which
# then only attach; the testing build's ties learn a fixed bound (below), so
# bounded stamps have one. The host page (a daemon in a thread of each run)
# likewise.
export HRTS_SEGMENT=/hrts-cost-model-$$
export HRTS_TEST_BOUND=synchronized,50000
HRTS_COST_MODEL_HOST_DIR=$(mktemp -d "${TMPDIR:-/tmp}/hrts-cost-model.XXXXXX")
export HRTS_COST_MODEL_HOST_DIR
# The bounded stamps on a segment of their own, whose ties are all the testing
# build's (cost_model.py names it): ties of the shipped build would publish the
# kernel's word, which may say unsynchronized.
trap '"$binary" --unlink; HRTS_SEGMENT=$HRTS_SEGMENT-bounded "$binary" --unlink
      rm -rf "$HRTS_COST_MODEL_HOST_DIR"' EXIT
"$binary" now_ns 1 >/dev/null
"$binary" now_ns_host 1 >/dev/null
HRTS_SEGMENT=$HRTS_SEGMENT-bounded "$bounded_binary" now_bounded 1 >/dev/null

python3 scripts/cost_model.py --binary "$binary" --bounded-binary "$bounded_binary" \
    --llvm-mca "$llvm_bin/llvm-mca" \
    --objdump "$llvm_bin/llvm-objdump" --out "$out" --kinds "${1:-}"
echo "cost-model: $(date -u '+%Y-%m-%d %H:%M UTC'), at $(git rev-parse --short HEAD)$(git diff --quiet -- native || echo ' with local changes'), on $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
