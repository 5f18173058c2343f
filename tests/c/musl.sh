#!/usr/bin/env bash
# libhrts.so for musl (x86_64-unknown-linux-musl, linked by musl-gcc from musl-tools): a C
# program built with musl-gcc links it and stamps on the same segment as glibc processes.
# It drives the glibc `hrts echo` (each round its stamp, the child's, its ordered stamp: in
# order), and the base reset it makes is the one the glibc `hrts info` then reports.
# The aarch64 libhrts.so for musl (aarch64-unknown-linux-musl, linked by Debian's
# multiarch aarch64-linux-musl-gcc) runs under qemu-user on musl's aarch64 loader: two
# processes stamp one segment at once, never backward, and a third resets its base. (An
# aarch64 process cannot share an x86-64 host's segment: its counter is another.)
# The last line of output is "musl: N passed, N failed".
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"

# The jar's build makes the same library (gradle/jni-platforms.gradle: one cargo run for
# the musl JNI library and libhrts.so, profile jni): after it, this builds nothing.
# The release build's package set is the same in every script (-p hrts-capi -p hrts-cli):
# cargo unifies features per command, and libhrts.so and hrts carry no hash in their
# names, so another set rebuilds them (a minute of fat LTO) each time the set changes.
cargo build --release -q -p hrts-capi -p hrts-cli
cargo build --profile jni -q --target x86_64-unknown-linux-musl -p hrts-jni -p hrts-capi
cargo build --profile jni -q --target aarch64-unknown-linux-musl -p hrts-jni -p hrts-capi
target="${CARGO_TARGET_DIR:-$root/target}"
hrts="$target/release/hrts"
lib="$target/x86_64-unknown-linux-musl/jni"
bin="$target/c-musl"
mkdir -p "$bin"
musl-gcc -std=c11 -Wall -Wextra -Werror -O2 -pthread -I include tests/c/hrts_test.c \
  -o "$bin/hrts_test" -L "$lib" -lhrts -Wl,-rpath,"$lib"

passed=0
failed=0
check() { # check WHAT COMMAND...: counts the command's success
  local what="$1"
  shift
  if "$@"; then
    passed=$((passed + 1))
  else
    echo "musl: FAILED: $what" >&2
    failed=$((failed + 1))
  fi
}

# Both are musl's: the program asks for musl's loader, the library needs no glibc.
check "hrts_test runs on musl's loader" grep -q 'ld-musl' <(readelf -l "$bin/hrts_test")
check "libhrts.so needs no glibc library" bash -c "! readelf -d '$lib/libhrts.so' | grep -q 'libc.so.6'"

segment="/hrts-musl-$$"
trap '"$hrts" --segment "$segment" unlink >/dev/null 2>&1 || true' EXIT
export HRTS_SEGMENT="$segment"
rounds=2000
out="$("$bin/hrts_test" drive "$rounds" "$hrts" echo)" || true
echo "$out"
check "musl driver and glibc child stamp in order" grep -q "drive: $rounds rounds, $rounds ordered, 0 violations" <<<"$out"

generation() { "$hrts" info | sed -n 's/^generation: //p'; }
before="$(generation)"
"$bin/hrts_test" set-base "$segment"
after="$(generation)"
echo "generation $before -> $after (musl set-base, glibc hrts info)"
check "glibc sees the musl process's base reset" test "$after" -eq $((before + 1))

# aarch64. -mno-outline-atomics: gcc's outline atomics would call glibc's __getauxval.
lib64="$target/aarch64-unknown-linux-musl/jni"
aarch64-linux-musl-gcc -mno-outline-atomics -std=c11 -Wall -Wextra -Werror -O2 -pthread -I include \
  tests/c/hrts_test.c -o "$bin/hrts_test-aarch64" -L "$lib64" -lhrts -Wl,-rpath,"$lib64"
run64() { qemu-aarch64-static -L / "$bin/hrts_test-aarch64" "$@"; }
check "aarch64 hrts_test runs on musl's aarch64 loader" grep -q 'ld-musl-aarch64' <(readelf -l "$bin/hrts_test-aarch64")
check "aarch64 libhrts.so needs no glibc library" bash -c "! readelf -d '$lib64/libhrts.so' | grep -q 'libc.so.6'"
segment64="/hrts-musl-aarch64-$$"
trap '"$hrts" --segment "$segment" unlink >/dev/null 2>&1 || true; run64 unlink "$segment64" >/dev/null 2>&1 || true' EXIT
HRTS_SEGMENT="$segment64" run64 stamp-for 500 >"$bin/aarch64-a.out" 2>&1 &
first=$!
HRTS_SEGMENT="$segment64" run64 stamp-for 500 >"$bin/aarch64-b.out" 2>&1 || true
wait "$first" || true
cat "$bin/aarch64-a.out" "$bin/aarch64-b.out"
for f in a b; do
  check "aarch64 musl process $f stamps the shared segment, never backward" \
    grep -Eq '^stamps [1-9][0-9]* backwards 0 errors 0$' "$bin/aarch64-$f.out"
done
check "an aarch64 musl process resets the segment's base" run64 set-base "$segment64"

echo "musl: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
