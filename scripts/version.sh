#!/usr/bin/env bash
# hrts has one version: `version` under [workspace.package] in the workspace Cargo.toml.
# The crates inherit it (so do the CLI's --version and the C ABI's hrts_get_version();
# a hrts-capi test holds include/hrts.h's HRTS_VERSION_* to it), Gradle reads it
# (gradle/cargo-version.gradle), scripts ask this script.
#
# Usage: scripts/version.sh           print the version
#        scripts/version.sh --check   check that nothing else writes another one: every
#                                     crate inherits it, README.md, DEVELOPERS.md and
#                                     docs/*.md quote it, no build file or script
#                                     hard-codes it
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd -P)
cd "$ROOT"

# [workspace.package] version = "X" (the first `version =` line in that table).
version=$(awk '
    /^[[:space:]]*\[/ { in_pkg = ($0 ~ /^[[:space:]]*\[[[:space:]]*workspace\.package[[:space:]]*\]/); next }
    in_pkg && /^[[:space:]]*version[[:space:]]*=/ {
        sub(/^[^"]*"/, ""); sub(/".*$/, ""); print; exit
    }' Cargo.toml)
if [ -z "$version" ]; then
    echo "version.sh: no version = \"...\" under [workspace.package] in Cargo.toml" >&2
    exit 1
fi

if [ "${1:-}" != "--check" ]; then
    echo "$version"
    exit 0
fi

bad=0
complain() { echo "version: $*" >&2; bad=1; }

for toml in native/*/Cargo.toml; do
    grep -Eq '^version\.workspace[[:space:]]*=[[:space:]]*true' "$toml" \
        || complain "$toml does not inherit the version: add 'version.workspace = true'"
done

# The docs' examples keep the literal (they are what a user types), so they must match:
# jar names, Gradle coordinates (io.hrts:hrts and the adapters) and Maven <version> lines.
docs=(README.md DEVELOPERS.md)
for f in docs/*.md; do [ -e "$f" ] && docs+=("$f"); done
while IFS= read -r hit; do
    [ -n "$hit" ] || continue
    complain "a document quotes another version: $hit (the version is $version)"
done < <(grep -HnoE 'hrts-[0-9]+\.[0-9]+\.[0-9]+[^ /`]*\.jar|io\.hrts:hrts(-[a-z0-9]+)?:[0-9][^ '"'"'`)]*|<version>[^<]*</version>' "${docs[@]}" \
    | grep -vF -e "hrts-$version.jar" -e ":$version" -e "<version>$version</version>" || true)

# Build files and scripts derive it; a literal copy would go stale at the next release.
literal=$(grep -rnF --exclude-dir=build --exclude-dir=.gradle "$version" build.gradle settings.gradle gradle.properties gradle scripts \
    tests/consumer Makefile.toml .ci 2>/dev/null | grep -v '^gradle/wrapper/' || true)
[ -z "$literal" ] || complain "hard-coded version $version (derive it from Cargo.toml):"$'\n'"$literal"

[ "$bad" -eq 0 ] || exit 1
echo "version: $version everywhere (Cargo.toml [workspace.package]; crates, Gradle, scripts, docs agree)"
