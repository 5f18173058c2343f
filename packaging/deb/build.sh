#!/usr/bin/env bash
# Builds the Debian package hrts_<version>-1_<arch>.deb: the hrts command, its manual
# page and bash completion, and the C library as `cargo cinstall` installs it
# (packaging/README.md). Needs cargo-c and cargo-deb (scripts/bootstrap.sh installs
# both), dpkg-dev and binutils.
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

for tool in cargo-cinstall:cargo-c cargo-deb:cargo-deb dpkg-architecture:dpkg-dev objcopy:binutils; do
    if ! command -v "${tool%%:*}" >/dev/null 2>&1; then
        echo "packaging/deb/build.sh: ${tool%%:*} is missing: install ${tool#*:} (scripts/bootstrap.sh does)" >&2
        exit 1
    fi
done
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
version=$(scripts/version.sh)
major=${version%%.*}

# The files cargo-deb's assets name (native/cli/Cargo.toml, [package.metadata.deb]):
# cargo-deb reads "target/release/..." as this target directory's release/.
stage="$target/release/hrts-deb"
rm -rf "$stage"

# The command, built as `cargo deb` would build it.
# The release build's package set is the same in every script (-p hrts-capi -p hrts-cli):
# cargo unifies features per command, and libhrts.so and hrts carry no hash in their
# names, so another set rebuilds them (a minute of fat LTO) each time the set changes.
cargo build --release --quiet -p hrts-capi -p hrts-cli
# The C library, its links, the header and hrts.pc, as installed under /usr.
cargo cinstall --release --library-type cdylib -p hrts-capi \
    --prefix=/usr --libdir="/usr/lib/$multiarch" --destdir="$stage"
# cargo-c strips the library but keeps the compiler's .comment note (lintian:
# binary-has-unneeded-section); dh_strip would remove it too.
objcopy --remove-section=.comment "$stage/usr/lib/$multiarch/libhrts.so.$version"
# The manual page and the bash completion, from the command itself.
mkdir -p "$stage/usr/share/man/man1" "$stage/usr/share/bash-completion/completions"
"$target/release/hrts" manpage | gzip -9n > "$stage/usr/share/man/man1/hrts.1.gz"
"$target/release/hrts" completions bash > "$stage/usr/share/bash-completion/completions/hrts"

# Debian's changelog, which a package with a revision (-1) carries: one entry for this
# version, dated by the last commit (or SOURCE_DATE_EPOCH), so that builds of one commit
# are alike. The maintainer is [package.metadata.deb]'s.
maintainer=$(sed -n 's/^maintainer[[:space:]]*=[[:space:]]*"\(.*\)"$/\1/p' native/cli/Cargo.toml)
when=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || date +%s)}
mkdir -p "$stage/usr/share/doc/hrts"
{
    echo "hrts ($version-1) unstable; urgency=medium"
    echo
    echo "  * hrts $version, packaged from its repository by packaging/deb/build.sh."
    echo
    echo " -- $maintainer  $(LC_ALL=C TZ=UTC date -R -d "@$when")"
} | gzip -9n > "$stage/usr/share/doc/hrts/changelog.Debian.gz"

mkdir -p "$out"
# --strip: the release profile keeps debug information (debug = 1, for profiling),
# which cargo-deb would otherwise package; the package ships the command stripped.
deb=$(cargo deb --quiet -p hrts-cli --no-build --strip --output "$out")

# Two control files cargo-deb does not write, added as dh_makeshlibs and dh_md5sums
# would: shlibs, so that dpkg-shlibdeps gives a program linked with libhrts.so.<major>
# `Depends: hrts (>= <version>)`; md5sums, for `dpkg --verify`.
repack="$target/release/hrts-deb-repack"
rm -rf "$repack"
dpkg-deb -R "$deb" "$repack"
echo "libhrts $major hrts (>= $version)" > "$repack/DEBIAN/shlibs"
(cd "$repack" && find . -path ./DEBIAN -prune -o -type f -printf '%P\0' | LC_ALL=C sort -z \
    | xargs -0 md5sum) > "$repack/DEBIAN/md5sums"
chmod 644 "$repack/DEBIAN/shlibs" "$repack/DEBIAN/md5sums"
dpkg-deb --root-owner-group -Zxz --build "$repack" "$deb" >/dev/null
rm -rf "$repack"
echo "$deb"
