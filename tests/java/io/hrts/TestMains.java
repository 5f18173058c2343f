package io.hrts;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

/** Small programs the tests run in child JVMs (classpath: the jar plus the test classes). */
public final class TestMains {
    private TestMains() {}

    public static void main(String[] args) throws Exception {
        switch (args.length == 0 ? "" : args[0]) {
            case "echo":
                echo();
                return;
            case "open-twice":
                openTwice();
                return;
            case "next-sequence":
                nextSequence();
                return;
            case "fill-scaling":
                fillScaling();
                return;
            case "validate-on-cue":
                validateOnCue();
                return;
            case "fuzz-read":
                fuzzRead(Long.parseLong(args[1]));
                return;
            case "stamp-for":
                stampFor(Long.parseLong(args[1]));
                return;
            case "bounded":
                bounded(Integer.parseInt(args[1]), args.length > 2 ? Long.parseLong(args[2]) : 0);
                return;
            case "bound-check":
                boundCheck(Long.parseLong(args[1]));
                return;
            case "mode":
                mode();
                return;
            case "stats-record":
                statsRecord(Integer.parseInt(args[1]));
                return;
            case "stats-timer-stop":
                statsTimerStop(Long.parseLong(args[1]));
                return;
            case "hot-path":
                hotPath(Long.parseLong(args[1]));
                return;
            case "stats-snapshot":
                System.out.println("processes "
                        + io.hrts.stats.SharedStats.snapshot(args[1]).processes().size());
                return;
            default:
                System.err.println("usage: TestMains echo|open-twice|next-sequence|fill-scaling|stamp-for MS|fuzz-read MS|bounded N|bound-check MS|mode|hot-path MS"
                        + "|stats-record SEED|stats-timer-stop INSTANCE|stats-snapshot SEGMENT");
                System.exit(2);
        }
    }

    /**
     * Stamps until the hot paths are FFM critical downcalls or {@code ms} have passed, then prints
     * {@code hot path: <HighResTimestamp.hotPath()>} and the last stamp.
     */
    static void hotPath(long ms) throws Exception {
        long end = System.nanoTime() + ms * 1_000_000L;
        long last = 0;
        do {
            for (int i = 0; i < 1000; i++) {
                last = HighResTimestamp.getEpochNanoseconds();
            }
            if (HighResTimestamp.hotPath().equals("ffm-critical")) {
                break;
            }
            Thread.sleep(1);
        } while (System.nanoTime() < end);
        System.out.println("hot path: " + HighResTimestamp.hotPath());
        System.out.println(last);
    }

    /** For every stdin line print one ordered stamp: the Java side of `hrts_test drive`. */
    static void echo() throws Exception {
        HighResTimestamp.open(); // before the first line: opening is not part of a round
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        PrintStream out = new PrintStream(new java.io.FileOutputStream(java.io.FileDescriptor.out), false, "UTF-8");
        while (in.readLine() != null) {
            // Ordered: must not be read before the line arrived.
            out.println(HighResTimestamp.getEpochNanosecondsOrdered());
            out.flush();
        }
    }

    /**
     * {@code n} bounded stamps, each between two CLOCK_REALTIME readings, {@code pauseMicros}
     * apart, as {@code hrts_test bounded} prints them ("bounded java: earliest E latest L status S
     * before B after A").
     */
    static void bounded(int n, long pauseMicros) throws InterruptedException {
        long[] out = new long[2];
        for (int i = 0; i < n; i++) {
            if (i > 0 && pauseMicros > 0) {
                Thread.sleep(pauseMicros / 1000, (int) (pauseMicros % 1000) * 1000);
            }
            long before = realtimeNanos();
            BoundStatus status = HighResTimestamp.getBoundedEpochNanoseconds(out);
            long after = realtimeNanos();
            System.out.println("bounded java: earliest " + out[0] + " latest " + out[1] + " status "
                    + status.name().toLowerCase(java.util.Locale.ROOT).replace('_', '-') + " before " + before
                    + " after " + after);
        }
    }

    /**
     * Bounded stamps back to back for {@code ms} milliseconds, each between two CLOCK_REALTIME
     * readings, summed up as {@code hrts_test bound-check} and {@code hrts debug bound-check} sum up
     * theirs ("bound-check java: samples N misses M unbounded U first-unbounded A last-unbounded B
     * misses-after-unbounded E"): a miss is an interval that excludes the whole bracket, an
     * unbounded stamp one refused with {@code UNSYNCHRONIZED}; any other exception ends the run.
     */
    static void boundCheck(long ms) {
        long[] out = new long[2];
        long stop = System.nanoTime() + ms * 1_000_000L;
        long samples = 0, misses = 0, unbounded = 0, missesAfter = 0, firstUnbounded = 0, lastUnbounded = 0;
        while (System.nanoTime() < stop) {
            for (int i = 0; i < 64; i++) {
                long before = realtimeNanos();
                boolean got;
                try {
                    HighResTimestamp.getBoundedEpochNanoseconds(out);
                    got = true;
                } catch (HrtsException e) {
                    if (e.getKind() != HrtsException.Kind.UNSYNCHRONIZED) {
                        throw e;
                    }
                    got = false;
                }
                long after = realtimeNanos();
                samples++;
                if (!got) {
                    unbounded++;
                    if (firstUnbounded == 0) {
                        firstUnbounded = after;
                    }
                    lastUnbounded = after;
                } else if (out[0] > after || out[1] < before) {
                    misses++;
                    if (firstUnbounded != 0) {
                        missesAfter++;
                    }
                    if (misses <= 5) {
                        System.err.println("bound-check java: miss: [" + out[0] + ", " + out[1] + "], clock in ["
                                + before + ", " + after + "]");
                    }
                }
            }
        }
        System.out.println("bound-check java: samples " + samples + " misses " + misses + " unbounded " + unbounded
                + " first-unbounded " + firstUnbounded + " last-unbounded " + lastUnbounded
                + " misses-after-unbounded " + missesAfter);
    }

    /** CLOCK_REALTIME in epoch ns, as precise as the JDK gives it. */
    static long realtimeNanos() {
        java.time.Instant t = java.time.Instant.now();
        return t.getEpochSecond() * 1_000_000_000L + t.getNano();
    }

    /** Two stamp attempts; prints each outcome ("ok" or the exception's kind and message). */
    static void openTwice() {
        for (int i = 0; i < 2; i++) {
            try {
                long ns = HighResTimestamp.getEpochNanoseconds();
                System.out.println("attempt " + i + ": ok " + ns);
            } catch (HrtsException e) {
                System.out.println("attempt " + i + ": HrtsException " + e.getKind() + ": " + e.getMessage());
            } catch (Throwable t) {
                System.out.println("attempt " + i + ": " + t);
            }
        }
    }

    /**
     * Opens the segment (name, mode and tracking settings from the system properties) and prints
     * what it reports as {@code key: value} lines (mode, the tracking state's mode, tie interval,
     * ties and last tie, SegmentInfo's mode, "valid: yes" once validate() passed), or
     * "HrtsException KIND: message".
     */
    static void mode() {
        try {
            Mode mode = HighResTimestamp.getMode();
            TrackingState t = HighResTimestamp.getTrackingState();
            System.out.println("mode: " + mode);
            System.out.println("state mode: " + t.mode());
            System.out.println("tie interval ns: " + t.tieIntervalNs());
            System.out.println("max slew ppb: " + t.maxSlewPpb());
            System.out.println("ties: " + t.ties());
            System.out.println("last tie epoch ns: " + t.lastTieEpochNs());
            System.out.println("info mode: " + HighResTimestamp.getSegmentInfo().getMode());
            HighResTimestamp.validate();
            System.out.println("valid: yes");
        } catch (HrtsException e) {
            System.out.println("HrtsException " + e.getKind() + ": " + e.getMessage());
        }
    }

    /** One nextSequence() call; prints "ok N" or the exception's kind and message. */
    static void nextSequence() {
        HighResTimestamp.open();
        try {
            System.out.println("ok " + HighResTimestamp.nextSequence());
        } catch (HrtsException e) {
            System.out.println("HrtsException " + e.getKind() + ": " + e.getMessage());
        }
    }

    /**
     * Stamps in a tight loop for {@code ms} milliseconds after printing "attached": the JVM
     * reader of the resize tests. Prints "stamps N backwards B"; exits 1 if any went backwards.
     */
    static void stampFor(long ms) {
        HighResTimestamp.open();
        System.out.println("attached");
        System.out.flush();
        long count = 0;
        long backwards = 0;
        long last = 0;
        long end = System.nanoTime() + ms * 1_000_000L;
        do {
            for (int i = 0; i < 1000; i++) {
                long ns = HighResTimestamp.getEpochNanoseconds();
                if (ns < last) {
                    backwards++;
                }
                last = ns;
                count++;
            }
        } while (System.nanoTime() < end);
        System.out.println("stamps " + count + " backwards " + backwards);
        System.exit(backwards == 0 ? 0 : 1);
    }

    /**
     * Times fillEpochNanoseconds over 1M and 4M elements (best of three each) and prints
     * "fill 1M MS 4M MS": run under -Xcheck:jni, where a fill that pins the whole array per
     * chunk grows quadratically.
     */
    static void fillScaling() {
        HighResTimestamp.open();
        long[] small = new long[1 << 20];
        long[] large = new long[4 << 20];
        HighResTimestamp.fillEpochNanoseconds(small, 0, small.length); // warm-up
        System.out.println("fill 1M " + bestMillis(small) + " 4M " + bestMillis(large));
        for (int i = 1; i < large.length; i++) {
            if (large[i] < large[i - 1]) {
                System.out.println("went backwards at " + i);
                System.exit(1);
            }
        }
    }

    private static double bestMillis(long[] a) {
        long best = Long.MAX_VALUE;
        for (int round = 0; round < 3; round++) {
            long t0 = System.nanoTime();
            HighResTimestamp.fillEpochNanoseconds(a, 0, a.length);
            best = Math.min(best, System.nanoTime() - t0);
        }
        return best / 1e6;
    }

    /**
     * The JVM reader of the fuzz stage: stamps for {@code ms} milliseconds while another
     * process damages the segment, counting stamps more than 1 ms from the system clock
     * (read right before and after each stamp), backward steps, exceptions, and stamps that
     * used over 1 ms of the thread's CPU time (one that waited for a writer would; a preempted
     * one does not). Prints "attached (timeline: T)", then "reader java: stamps N off M backwards B errors E
     * slow S longest L" (L: the longest wall-clock bracket, ns, preemption included). It stops
     * early once the file HRTS_FUZZ_STOP names exists (looked for every 65536 stamps).
     */
    static void fuzzRead(long ms) {
        HighResTimestamp.open();
        System.out.println("attached (timeline: " + HighResTimestamp.getSegmentInfo().getTimeline() + ")");
        System.out.flush();
        long count = 0;
        long off = 0;
        long backwards = 0;
        long errors = 0;
        long last = 0;
        long slow = 0;
        long longest = 0;
        java.lang.management.ThreadMXBean cpu = java.lang.management.ManagementFactory.getThreadMXBean();
        long stop = wallNanos() + ms * 1_000_000L;
        String stopName = System.getenv("HRTS_FUZZ_STOP");
        java.io.File stopFile = stopName == null ? null : new java.io.File(stopName);
        for (;;) {
            long before = wallNanos();
            if (before >= stop) {
                break;
            }
            if (stopFile != null && (count & 0xffff) == 0 && stopFile.exists()) {
                break;
            }
            long ns;
            long used = cpu.getCurrentThreadCpuTime();
            try {
                ns = HighResTimestamp.getEpochNanoseconds();
            } catch (HrtsException e) {
                errors++;
                count++;
                continue;
            }
            used = cpu.getCurrentThreadCpuTime() - used;
            long after = wallNanos();
            count++;
            if (used > 1_000_000L) {
                slow++;
            }
            longest = Math.max(longest, after - before);
            if (ns < before - 1_000_000L || ns > after + 1_000_000L) {
                off++;
            }
            if (ns < last) {
                backwards++;
            }
            last = ns;
        }
        System.out.println("reader java: stamps " + count + " off " + off + " backwards " + backwards
                + " errors " + errors + " slow " + slow + " longest " + longest);
    }

    /** CLOCK_REALTIME in nanoseconds, from java.time (microsecond resolution or better). */
    private static long wallNanos() {
        java.time.Instant t = java.time.Instant.now();
        return t.getEpochSecond() * 1_000_000_000L + t.getNano();
    }

    /**
     * Prints "attached", waits for a line on stdin (another process damages the segment
     * meanwhile), then prints what validate() says, resets the base (which repairs) and
     * prints what validate() says then: "first: KIND|ok" and "after reset: KIND|ok".
     */
    static void validateOnCue() throws Exception {
        HighResTimestamp.open();
        System.out.println("attached");
        System.out.flush();
        new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8)).readLine();
        System.out.println("first: " + validateOutcome());
        HighResTimestamp.setBaseInfo();
        System.out.println("after reset: " + validateOutcome());
    }

    private static String validateOutcome() {
        try {
            HighResTimestamp.validate();
            return "ok";
        } catch (HrtsException e) {
            return e.getKind().name();
        }
    }

    /**
     * The Java writer of SharedStatsTest: records the e2e.* metrics from SEED (the recipe of
     * tests/c/stats/shared_test.c's record), prints "pid PID" and "dump JSON", then stays (its
     * statistics live in the segment HRTS_STATS_SEGMENT names) until stdin closes.
     */
    static void statsRecord(int seed) throws Exception {
        io.hrts.stats.Stats.start();
        io.hrts.stats.Counter requests = io.hrts.stats.Stats.counter("e2e.requests");
        io.hrts.stats.Counter errors = io.hrts.stats.Stats.counter("e2e.errors");
        io.hrts.stats.Gauge queue = io.hrts.stats.Stats.gauge("e2e.queue");
        io.hrts.stats.Timer latency = io.hrts.stats.Stats.timer("e2e.latency");
        io.hrts.stats.Counter mine = io.hrts.stats.Stats.counter("e2e.java." + seed);
        for (int i = 0; i < 20 + seed; i++) {
            requests.add(i % 5 + 1);
        }
        errors.add(2L * seed);
        errors.add(-seed);
        for (int i = 0; i < 15; i++) {
            queue.set(seed * 10 + i * 0.5);
        }
        for (int i = 0; i < 30 + seed; i++) {
            latency.record(1000L * seed + 37L * i);
        }
        mine.add(seed);
        String json = io.hrts.stats.Stats.dump().json();
        System.out.println("pid " + ProcessHandle.current().pid());
        System.out.println("dump " + json);
        System.out.flush();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        while (in.readLine() != null) {
            // the test closes stdin once it has read the segment
        }
        io.hrts.stats.Stats.stop();
    }

    /**
     * The Java side of SharedStatsTest's cross-process timer: stops shared instance INSTANCE of
     * timer e2e.span (started by the C process) between two stamps and prints "stop_before NS",
     * "stop_after NS", "duration NS" (or "duration none"), "again none|NS" (a second stop) and
     * "recorded COUNT VALUE" (e2e.span in this process's dump).
     */
    static void statsTimerStop(long instance) {
        io.hrts.stats.Stats.start();
        io.hrts.stats.Timer span = io.hrts.stats.Stats.timer("e2e.span");
        HighResTimestamp.getEpochNanoseconds(); // the first stamp of a JVM is not part of the span
        long before = HighResTimestamp.getEpochNanoseconds();
        java.util.OptionalLong d = span.stopShared(instance);
        long after = HighResTimestamp.getEpochNanoseconds();
        java.util.OptionalLong again = span.stopShared(instance);
        System.out.println("stop_before " + before);
        System.out.println("stop_after " + after);
        System.out.println("duration " + (d.isPresent() ? Long.toString(d.getAsLong()) : "none"));
        System.out.println("again " + (again.isPresent() ? Long.toString(again.getAsLong()) : "none"));
        io.hrts.stats.MetricDump m = io.hrts.stats.Stats.dump().get("e2e.span");
        System.out.println("recorded " + (m == null ? "0 NaN" : m.values().count() + " " + (long) m.value()));
        io.hrts.stats.Stats.stop();
    }
}
