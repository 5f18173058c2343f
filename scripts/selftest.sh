#!/usr/bin/env bash
# Builds the hrts jar for this machine's platform (native library inside) and runs its
# self-test (IBMTS's test loop, then a base reset), on a segment of its own that it
# removes afterwards: it never resets the timeline other processes of this user share.
# Installs only what that needs (scripts/bootstrap.sh --selftest). Arguments go to the
# self-test: scripts/selftest.sh --help lists them.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd -P)
cd "$ROOT"
if ! command -v cargo >/dev/null 2>&1 && [ -x "$HOME/.cargo/bin/cargo" ]; then
    export PATH="$HOME/.cargo/bin:$PATH"
fi
scripts/bootstrap.sh --selftest
# Only this machine's platform: packing the others needs cross compilers and qemu.
arch=$(uname -m)
case "$arch" in
    x86_64|amd64) platform=linux-x86_64 ;;
    aarch64|arm64) platform=linux-aarch64 ;;
    ppc64le) platform=linux-ppc64le ;;
    *) echo "selftest: hrts has no library for $arch (x86-64, aarch64 and ppc64le only)" >&2; exit 1 ;;
esac
./gradlew --console=plain -q -Phrts.platforms="$platform" jar
segment="/hrts-selftest-$$"
hrts="${CARGO_TARGET_DIR:-$ROOT/target}/release/hrts"
cleanup() { "$hrts" --segment "$segment" unlink >/dev/null 2>&1 || true; }
trap cleanup EXIT
set +e
java -Dhrts.segment="$segment" -jar "build/libs/hrts-$(scripts/version.sh).jar" "$@"
rc=$?
set -e
exit "$rc"
