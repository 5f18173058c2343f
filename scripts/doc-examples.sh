#!/usr/bin/env bash
# The docs' examples cannot rot: every fenced code block in README.md, DEVELOPERS.md and
# docs/*.md that is a complete program is compiled, and run unless marked otherwise, and
# every relative link (file and #anchor) in them resolves.
#
#   ```c / ```java / ```rust   a complete program (C: `int main`; Java: a top-level class;
#                              Rust: `fn main`): compiled and run. An unmarked block that
#                              is not a complete program is a failure.
#   ```LANG norun              compiled, not run (it needs a server, another host, ...)
#   ```LANG fragment           an illustrative piece: skipped
#   ```sh run                  shell commands run with bash -euo pipefail from the
#                              repository root, target/release on PATH
#
# C is compiled with `cc -Iinclude ... -Ltarget/release -lhrts`; Java with javac --release 17
# against build/libs/hrts-<version>.jar; Rust as binaries of a throwaway cargo project with
# path dependencies on native/core, native/stats and native/trace (built in
# target/doc-examples). Each program gets its own segments (HRTS_SEGMENT, its first
# argument as a second segment name, HRTS_STATS_SEGMENT), its own XDG_STATE_HOME and
# TMPDIR; all are removed at the end. Prints counts per language and ends with
# "doc-examples: N passed, N failed".
#
# Needs `cargo build --release -p hrts-capi -p hrts-cli` and `./gradlew jar`; builds them
# when they are missing.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd -P)
cd "$ROOT"
if ! command -v cargo >/dev/null 2>&1 && [ -x "$HOME/.cargo/bin/cargo" ]; then
    export PATH="$HOME/.cargo/bin:$PATH"
fi
version=$(scripts/version.sh)
libdir="${CARGO_TARGET_DIR:-$ROOT/target}/release"
jar="$ROOT/build/libs/hrts-$version.jar"
if [ ! -e "$libdir/libhrts.so" ] || [ ! -x "$libdir/hrts" ]; then
    echo "doc-examples: building libhrts.so and hrts (cargo build --release -p hrts-capi -p hrts-cli)"
    cargo build --release --quiet -p hrts-capi -p hrts-cli
fi
if [ ! -e "$jar" ]; then
    echo "doc-examples: building $jar (./gradlew jar)"
    ./gradlew --console=plain -q jar
fi
for tool in cc javac java python3; do
    command -v "$tool" >/dev/null 2>&1 || {
        echo "doc-examples: $tool is missing (scripts/bootstrap.sh installs it)" >&2
        echo "doc-examples: 0 passed, 1 failed"
        exit 1
    }
done
exec python3 "$ROOT/scripts/doc_examples.py" "$ROOT" "$version" "$libdir" "$jar"
