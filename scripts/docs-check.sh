#!/usr/bin/env bash
# Docs build without warnings: rustdoc for every crate (all features) and javadoc
# with every doclint check on the public Java API. Prints "docs: N passed, N failed".
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
passed=0
failed=0
if RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --all-features --quiet; then
    passed=$((passed + 1))
else
    echo "docs: cargo doc reported warnings (above)"
    failed=$((failed + 1))
fi
out="$(mktemp -d)"
log="$out/javadoc.log"
javadoc -quiet -Xdoclint:all --release 17 -d "$out/api" -sourcepath java/src/main/java \
    -subpackages io.hrts >"$log" 2>&1
rc=$?
# io.hrts.stats writes its queues with sun.misc.Unsafe (jdk.unsupported) on purpose (see
# its Layout class); javac's notice about that internal API is not a doclint finding.
if [ "$rc" -eq 0 ] && ! grep -E ": (warning|error):" "$log" | grep -qv "internal proprietary API"; then
    passed=$((passed + 1))
else
    cat "$log"
    echo "docs: javadoc -Xdoclint:all reported the above"
    failed=$((failed + 1))
fi
rm -rf "$out"
echo "docs: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
