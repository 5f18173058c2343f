#!/usr/bin/env bash
# Builds the Debian package hrts_<version>-1_<arch>.deb: the hrts command, its manual
# page and bash completion, and the C library as `cargo cinstall` installs it
# (packaging/README.md). Needs cargo-c and cargo-deb (scripts/bootstrap.sh installs
# both) and dpkg-dev.
#
#   packaging/deb/build.sh [OUTPUT_DIR]    default: target/debian
#
# Prints the path of the .deb on its last line.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd -P)
cd "$root"
if ! command -v cargo >/dev/null 2>&1 && [ -x "$HOME/.cargo/bin/cargo" ]; then
    export PATH="$HOME/.cargo/bin:$PATH"
fi
target=${CARGO_TARGET_DIR:-$root/target}
out=${1:-$target/debian}

for tool in cargo-cinstall:cargo-c cargo-deb:cargo-deb dpkg-architecture:dpkg-dev; do
    if ! command -v "${tool%%:*}" >/dev/null 2>&1; then
        echo "packaging/deb/build.sh: ${tool%%:*} is missing: install ${tool#*:} (scripts/bootstrap.sh does)" >&2
        exit 1
    fi
done
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH)

# The files cargo-deb's assets name (native/cli/Cargo.toml, [package.metadata.deb]):
# cargo-deb reads "target/release/..." as this target directory's release/.
stage="$target/release/hrts-deb"
rm -rf "$stage"

# The command, built as `cargo deb` would build it.
cargo build --release --quiet -p hrts-cli
# The C library, its links, the header and hrts.pc, as installed under /usr.
cargo cinstall --release --library-type cdylib -p hrts-capi \
    --prefix=/usr --libdir="/usr/lib/$multiarch" --destdir="$stage"
# The manual page and the bash completion, from the command itself.
mkdir -p "$stage/usr/share/man/man1" "$stage/usr/share/bash-completion/completions"
"$target/release/hrts" manpage | gzip -9n > "$stage/usr/share/man/man1/hrts.1.gz"
"$target/release/hrts" completions bash > "$stage/usr/share/bash-completion/completions/hrts"

mkdir -p "$out"
# --strip: the release profile keeps debug information (debug = 1, for profiling),
# which cargo-deb would otherwise package; the package ships the command stripped.
deb=$(cargo deb --quiet -p hrts-cli --no-build --strip --output "$out")
echo "$deb"
