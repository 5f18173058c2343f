#!/usr/bin/env bash
# Docs build without warnings: rustdoc for every crate (all features) and javadoc
# with every doclint check on the public Java API; and the docs say what the code has
# (native/cli/tests/docs.rs: every CLI option, HRTS_* variable, C function, public Java
# method, stage and path named, every benchmark figure with its machine and date).
# Prints "docs: N passed, N failed".
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
# By cargo-nextest over the whole workspace where it is installed, so that the build is
# the cargo stage's own (the same features and packages), made once for both.
if cargo nextest --version >/dev/null 2>&1; then
    docs_test=(cargo nextest run --workspace --all-features --no-fail-fast -E 'binary_id(hrts-cli::docs)')
else
    docs_test=(cargo test -p hrts-cli --all-features --test docs)
fi
if "${docs_test[@]}"; then
    passed=$((passed + 1))
else
    echo "docs: the docs do not match the code (native/cli/tests/docs.rs, above)"
    failed=$((failed + 1))
fi
echo "docs: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
