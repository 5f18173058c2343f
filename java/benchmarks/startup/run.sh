#!/usr/bin/env bash
# JVM start to first stamp: ROUNDS (default 20) alternating runs of a JVM that takes one
# hrts stamp and of one that only prints currentTimeMillis, on the jar the build made
# (./gradlew jar first). Prints, per program, the median and minimum of the whole
# process's wall time, and for the stamper the median time from main to the stamp and
# the classes it loads outside the JDK's class-data archive. JAVA (default java) picks
# the JDK, JAR another jar. The library's extracted copy and the segment exist before the first round.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)"
rounds="${1:-20}"
java="${JAVA:-java}"
jar="${JAR:-$root/build/libs/hrts-$("$root/scripts/version.sh").jar}"
[ -f "$jar" ] || { echo "startup: $jar is missing: run ./gradlew jar first" >&2; exit 1; }
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
javac -cp "$jar" -d "$work" "$(dirname "${BASH_SOURCE[0]}")"/FirstStamp.java \
    "$(dirname "${BASH_SOURCE[0]}")"/PrintTime.java
cp="$jar:$work"
# Class-path users enable native access (JDK 22+ warn otherwise; JDK 17 accepts the flag).
java=("$java" --enable-native-access=ALL-UNNAMED)
"${java[@]}" -cp "$cp" FirstStamp >/dev/null   # extracts the library, creates the segment
wall() { local s e; s=$(date +%s%N); "$@" >"$work/out"; e=$(date +%s%N); echo $(((e - s) / 1000)); }
: >"$work/stamp.wall"; : >"$work/plain.wall"; : >"$work/first"
for _ in $(seq "$rounds"); do
    wall "${java[@]}" -cp "$cp" FirstStamp >>"$work/stamp.wall"
    cut -d' ' -f1 "$work/out" | awk '{print int($1 / 1000)}' >>"$work/first"
    wall "${java[@]}" -cp "$work" PrintTime >>"$work/plain.wall"
done
median() { sort -n "$1" | awk '{a[NR]=$1} END {print a[int((NR + 1) / 2)]}'; }
minimum() { sort -n "$1" | head -1; }
classes=$("${java[@]}" -Xlog:class+load -cp "$cp" FirstStamp | grep -vc "shared objects file" || true)
echo "startup: $("${java[@]}" -version 2>&1 | head -1), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), load $(cut -d' ' -f1 /proc/loadavg), $rounds rounds"
printf 'startup: %-40s median %6d us, min %6d us\n' "JVM that stamps once (whole process)" "$(median "$work/stamp.wall")" "$(minimum "$work/stamp.wall")"
printf 'startup: %-40s median %6d us, min %6d us\n' "JVM that prints the time" "$(median "$work/plain.wall")" "$(minimum "$work/plain.wall")"
printf 'startup: %-40s median %6d us, min %6d us\n' "main to first stamp" "$(median "$work/first")" "$(minimum "$work/first")"
echo "startup: classes loaded outside the class-data archive by the stamper: $classes"
