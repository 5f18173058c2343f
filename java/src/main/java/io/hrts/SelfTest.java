package io.hrts;

import java.io.PrintStream;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;

/**
 * {@code java -jar hrts.jar [--no-reset] [iterations] [delaySeconds]}: the IBMTS self-test
 * (Figures 4 and 6 of the IBMTS article) on the hrts timeline, plus what hrts knows about its
 * segment. Exit status 0 when all checks pass, 1 on a failure, 2 on bad arguments.
 */
public final class SelfTest {
    private SelfTest() {}

    static final int DEFAULT_ITERATIONS = 10;
    static final int MAX_DELAY_SECONDS = 3600;

    static void usage(PrintStream out) {
        out.println("usage: java -jar hrts-" + NativeLoader.version()
                + ".jar [--help] [--no-reset] [iterations] [delaySeconds]");
        out.println();
        out.println("The IBMTS self-test on the shared hrts timeline. Prints the copyright, the");
        out.println("logic version (a.b.c.d), the OS process and thread ids, the segment (name,");
        out.println("counter source and why, calibrated frequency, generation, reliability");
        out.println("evaluation), the base info, `iterations` stamps as `seconds.micros = HEX.HEX`");
        out.println("(default " + DEFAULT_ITERATIONS + ", `delaySeconds` apart, default 0), then resets the base");
        out.println("(IBMTS setBaseInfo), prints the revised base info and ten consecutive captures.");
        out.println();
        out.println("WARNING: the base reset applies to the segment, i.e. to EVERY process using it:");
        out.println("on the default segment (/hrts-<uid>) it resets the timeline of all of this");
        out.println("user's hrts programs, as IBMTS's test did for the whole machine. Use");
        out.println("--no-reset, or a segment of your own (-Dhrts.segment=/hrts-selftest).");
        out.println();
        out.println("Options:");
        out.println("  --no-reset    skip the base reset");
        out.println("  -h, --help    print this help");
        out.println();
        out.println("System properties:");
        out.println("  -D" + HighResTimestamp.SEGMENT_PROPERTY
                + "=NAME           the segment (default: $HRTS_SEGMENT, else the host page, else /hrts-<uid>)");
        out.println("  -D" + NativeLoader.LIBRARY_PROPERTY + "=FILE  load this libhrts_jni.so");
        out.println("  -D" + NativeLoader.DIR_PROPERTY
                + "=DIR      extract the packed library here (default: under java.io.tmpdir)");
        out.println("  -D" + NativeLoader.FALLBACK_PROPERTY
                + "=POLICY     allow, deny, force or auto: may the portable implementation be used");
        out.println();
        out.println("Exit status: 0 all checks passed, 1 a check or the library failed, 2 usage error.");
    }

    private static int usageError(String message) {
        System.err.println("hrts self-test: " + message);
        usage(System.err);
        return 2;
    }

    /**
     * Runs the self-test and exits with its status (0 passed, 1 failed, 2 usage error).
     *
     * @param args {@code [--no-reset] [iterations] [delaySeconds]}, or {@code --help}
     */
    public static void main(String[] args) {
        System.exit(mainStatus(args));
    }

    static int mainStatus(String[] args) {
        boolean reset = true;
        Integer iterations = null;
        Integer delay = null;
        for (String a : args) {
            if (a.equals("--help") || a.equals("-h")) {
                usage(System.out);
                return 0;
            } else if (a.equals("--no-reset")) {
                reset = false;
            } else if (a.startsWith("-")) {
                return usageError("unknown option: " + a);
            } else if (iterations == null) {
                iterations = parse(a, 1_000_000);
                if (iterations == null) {
                    return usageError("iterations must be an integer 0..1000000, not " + a);
                }
            } else if (delay == null) {
                delay = parse(a, MAX_DELAY_SECONDS);
                if (delay == null) {
                    return usageError("delaySeconds must be an integer 0.." + MAX_DELAY_SECONDS + ", not " + a);
                }
            } else {
                return usageError("unexpected argument: " + a);
            }
        }
        return run(System.out, iterations == null ? DEFAULT_ITERATIONS : iterations,
                delay == null ? 0 : delay, reset);
    }

    private static Integer parse(String s, int max) {
        try {
            int v = Integer.parseInt(s);
            return v >= 0 && v <= max ? v : null;
        } catch (NumberFormatException e) {
            return null;
        }
    }

    /** The IBMTS loop line (Figure 4): {@code seconds.micros = SECONDS_HEX.MICROS_HEX}. */
    static String ibmtsLine(long seconds, long micros) {
        return String.format("%d.%06d = %08X.%08X", seconds, micros, seconds, micros);
    }

    /**
     * The test loop's header (IBMTS Figure 4), in the format {@code hrts test} prints it: the title
     * line with the logic version in 16 upper-case hex digits, the loop's plan, and its completion
     * time in UTC, 24-hour form.
     */
    static String loopHeader(long version, int iterations, int delaySeconds, long endEpochSeconds) {
        String end = Instant.ofEpochSecond(endEpochSeconds).atOffset(ZoneOffset.UTC)
                .format(DateTimeFormatter.ofPattern("HH:mm:ss"));
        return "hrts High Resolution Timestamp Test: Version=0x" + String.format("%016X", version) + "\n"
                + "Beginning loop for " + iterations + " iterations, using a " + delaySeconds
                + " second delay each pass.\n"
                + "Expect to complete at " + end + " UTC.";
    }

    private static void printBase(PrintStream out, String title, BaseInfo b) {
        out.println(title);
        out.println("\tFrequency: " + b.frequency());
        out.println("\tCounter: " + Long.toUnsignedString(b.counter()));
        out.println("\tSeconds: " + b.seconds());
        out.println("\tMicroseconds: " + b.microseconds());
        out.println("\tGeneration: " + b.generation());
    }

    static int run(PrintStream out, int iterations, int delaySeconds, boolean reset) {
        int failures = 0;
        Implementation impl;
        try {
            impl = HighResTimestamp.implementation();
            HighResTimestamp.open();
        } catch (HrtsException e) {
            System.err.println(e.getMessage());
            return 1;
        }
        out.println(HighResTimestamp.getCopyright());
        long version = HighResTimestamp.getLogicVersion();
        out.println("Version=" + version + " (0x" + String.format("%016X", version) + " == "
                + HighResTimestamp.versionString(version) + ")");
        long pid = HighResTimestamp.getOSProcessID();
        long javaPid = ProcessHandle.current().pid();
        out.println("Process ID=" + pid + (pid == javaPid ? "" : "  MISMATCH: Java says " + javaPid));
        if (pid != javaPid) {
            failures++;
        }
        out.println("Thread ID=" + HighResTimestamp.getOSThreadID());
        out.println("platform:       " + NativeLoader.platform());
        out.println("implementation: " + impl);
        if (!impl.isPortable()) {
            out.println("native library: " + NativeLoader.loadedFrom());
        }

        SegmentInfo info = HighResTimestamp.getSegmentInfo();
        out.println("Segment: " + info.getName());
        out.println("Counter source: " + info.getSource() + " (" + info.getReason() + ")");
        out.println("Calibrated frequency: " + info.getFrequency() + " Hz");
        out.println("Generation: " + info.getGeneration());
        out.println("Reliability evaluation: " + info.evaluationSummary());

        long[] baseInfo = HighResTimestamp.getBaseInfo();
        out.println("Base Info:");
        out.println("\tFrequency: " + baseInfo[0]);
        out.println("\tCounter: " + Long.toUnsignedString(baseInfo[1]));
        out.println("\tSeconds: " + baseInfo[2]);
        out.println("\tMicroseconds: " + baseInfo[3]);

        int[] ts = new int[2];
        int rc = HighResTimestamp.calcTimeStamp(ts);
        Long lTS = HighResTimestamp.getEpochMicrosecondsAsLong();
        out.println("Seconds=" + Integer.toUnsignedLong(ts[0]) + " Microseconds=" + ts[1]);
        out.println("Microseconds since 1/1/70 epoch using Long=" + lTS);
        out.println("Microseconds since 1/1/70 epoch using long=" + HighResTimestamp.getEpochMicroseconds());
        if (rc != HighResTimestamp.IBMTS_SUCCESS) {
            out.println("calcTimeStamp returned " + rc);
            failures++;
        }

        // Figure 4: the test loop.
        long passes = Math.max(0, iterations - 1);
        out.println(loopHeader(version, iterations, delaySeconds,
                System.currentTimeMillis() / 1000 + passes * delaySeconds));
        long[] lts = new long[2];
        long prevNs = Long.MIN_VALUE;
        for (int i = 0; i < iterations; i++) {
            if (i > 0 && delaySeconds > 0) {
                try {
                    Thread.sleep(delaySeconds * 1000L);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    break;
                }
            }
            long ns = HighResTimestamp.getEpochNanoseconds();
            HighResTimestamp.calcTimeStamp(lts);
            out.println(ibmtsLine(lts[0], lts[1]));
            if (ns < prevNs) {
                out.println("stamp went backwards: " + ns + " < " + prevNs);
                failures++;
            }
            prevNs = ns;
        }

        long ns = HighResTimestamp.getEpochNanoseconds();
        out.println("stamp:          " + ns + " ns  (" + HighResTimestamp.now() + ")");
        long diffMs = Math.abs(ns / 1_000_000L - System.currentTimeMillis());
        if (diffMs > 5_000) {
            out.println("stamp differs from System.currentTimeMillis() by " + diffMs
                    + " ms (the base was set long ago and the system clock was stepped since?)");
            failures++;
        }

        if (reset) {
            long before = HighResTimestamp.getGeneration();
            HighResTimestamp.setBaseInfo();
            BaseInfo revised = HighResTimestamp.getBaseInfoSnapshot();
            printBase(out, "Revised Base Info:", revised);
            if (revised.generation() <= before) {
                out.println("generation did not advance: " + before + " -> " + revised.generation());
                failures++;
            }
            for (int i = 0; i < 10; i++) {
                HighResTimestamp.calcTimeStamp(ts);
                out.println("Seconds=" + Integer.toUnsignedLong(ts[0]) + " Microseconds=" + ts[1]);
                out.println("Microseconds since 1/1/70 epoch=" + HighResTimestamp.getEpochMicroseconds());
            }
        } else {
            out.println("Base reset skipped (--no-reset).");
        }

        long[] testValues = new long[10];
        for (int i = 0; i < 10; i++) {
            testValues[i] = HighResTimestamp.getEpochMicroseconds();
        }
        out.println();
        out.println("Results from 10 consecutive captures:");
        for (int i = 0; i < 10; i++) {
            out.println("Microseconds since 1/1/70 epoch=" + testValues[i]);
            if (i > 0 && testValues[i] < testValues[i - 1]) {
                failures++;
            }
        }
        out.println("hot path:       " + HighResTimestamp.hotPath());
        // The portable implementation passes the same checks on its own timeline, and says so.
        String on = impl.isPortable() ? " (portable implementation: this JVM's own timeline, not the host's)" : "";
        out.println(failures == 0 ? "self-test: OK" + on : "self-test: FAILED (" + failures + ")" + on);
        return failures == 0 ? 0 : 1;
    }
}
