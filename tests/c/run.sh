#!/usr/bin/env bash
# Builds libhrts (release, default target dir: the library everyone else links),
# compiles the C test against include/hrts.h and runs it on a segment of its own.
# The last line of output is "c: N passed, N failed".
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"

# The release build's package set is the same in every script (-p hrts-capi -p hrts-cli):
# cargo unifies features per command, and libhrts.so and hrts carry no hash in their
# names, so another set rebuilds them (a minute of fat LTO) each time the set changes.
cargo build --release -q -p hrts-capi -p hrts-cli
# Link the library cargo just built: target/release unless CARGO_TARGET_DIR moves it.
target="${CARGO_TARGET_DIR:-$root/target}"
lib="$target/release"
bin="$target/c"
mkdir -p "$bin"
# libhrts's ABI is the hrts_* functions and nothing else (no Rust symbols leak).
if command -v nm >/dev/null; then
  extra=$(nm -D --defined-only "$lib/libhrts.so" | awk '$3 !~ /^hrts_/ {print $3}')
  if [ -n "$extra" ]; then
    echo "libhrts.so exports more than hrts_*: $extra" >&2
    exit 1
  fi
fi
cc -std=c11 -Wall -Wextra -Werror -O2 -pthread -I include tests/c/hrts_test.c \
  -o "$bin/hrts_test" -L "$lib" -lhrts -Wl,-rpath,"$lib"

# The header promises C++ compatibility (extern "C"): hold it to that.
if command -v c++ >/dev/null; then
  echo '#include "hrts.h"' | c++ -std=c++11 -Wall -Wextra -Werror -I include -x c++ -fsyntax-only -
fi

segment="/hrts-ctest-$$"
state="$(mktemp -d)"
# The test removes what it creates; this catches what a crash left: the default
# segment and the handle checks' "$segment-<tag>" ones. `hrts_test unlink` removes a
# segment's page as well as its name (rm of /dev/shm/NAME would leave the page).
cleanup() {
  "$bin/hrts_test" unlink "$segment" "$segment"-{a,b,foreign,truncated,damage} || true
  rm -rf "$state"
}
trap cleanup EXIT
# XDG_STATE_HOME: where the named segments' sequence files go (HRTS_SEQ_FILE is the
# default segment's alone).
HRTS_SEGMENT="$segment" HRTS_SEQ_FILE="$state/ctest.seq" HRTS_SEQ_INTERVAL=1000 \
  XDG_STATE_HOME="$state" "$bin/hrts_test"
