#!/usr/bin/env bash
# Build the hrts jar (native library inside) and run its self-test.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd -P)
cd "$ROOT"
if ! command -v cargo >/dev/null 2>&1 && [ -x "$HOME/.cargo/bin/cargo" ]; then
    export PATH="$HOME/.cargo/bin:$PATH"
fi
scripts/bootstrap.sh
./gradlew --console=plain -q jar
exec java -jar "build/libs/hrts-$(scripts/version.sh).jar" "$@"
