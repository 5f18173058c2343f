package io.hrts.testing;

import static org.junit.Assert.assertTrue;

import io.hrts.HighResTimestamp;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Cross-process checks of the adapters (test code shared by adapters/*): the C test program's
 * {@code drive} mode stamps with hrts, sends a line to a child JVM, reads back the time stamp the
 * child's library made for that line, stamps again and checks {@code before <= stamp <= after}
 * for every round. The child runs with {@code librealtime_shift.so} preloaded: its system clock
 * (so every JDK clock, and each library's default clock) is {@value #SHIFT_SECONDS} s ahead,
 * while hrts is not. Stamps that agree with the C driver's come from hrts.
 */
public final class ShiftedDrive {
    /** How far ahead the child's system clock is. */
    public static final long SHIFT_SECONDS = 3600;
    private static final String CHILD_SAYS = "child system clock: ";

    private ShiftedDrive() {}

    /** The result of one drive: the C driver's exit status and everything printed. */
    public static final class Result {
        public final int exit;
        public final String output;

        Result(int exit, String output) {
            this.exit = exit;
            this.output = output;
        }

        /** Whether every one of {@code rounds} rounds was in order. */
        public boolean allOrdered(int rounds) {
            return exit == 0 && output.contains("drive: " + rounds + " rounds, " + rounds + " ordered, 0 violations");
        }

        /** Whether the child's system clock was shifted as asked (else the check proves nothing). */
        public boolean childClockShifted() {
            return output.contains(CHILD_SAYS + SHIFT_SECONDS + " s ahead of hrts");
        }

        @Override
        public String toString() {
            return "exit " + exit + "\n" + output;
        }
    }

    /**
     * Runs {@code hrts_test drive ROUNDS} with a child JVM running {@code main} (with {@code
     * jvmArgs} and this JVM's class path, under -Xcheck:jni).
     */
    public static Result run(int rounds, Class<?> main, String... jvmArgs) throws Exception {
        List<String> cmd = new ArrayList<>(Arrays.asList(prop("hrts.test.cTest"), "drive", Integer.toString(rounds),
                "env", "LD_PRELOAD=" + prop("hrts.test.realtimeShiftLib"),
                "HRTS_TEST_REALTIME_SHIFT_S=" + SHIFT_SECONDS, prop("hrts.test.java"), "-Xcheck:jni",
                "--enable-native-access=ALL-UNNAMED"));
        cmd.addAll(Arrays.asList(jvmArgs));
        cmd.addAll(Arrays.asList("-cp", System.getProperty("java.class.path"), main.getName()));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        p.getOutputStream().close();
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try (InputStream in = p.getInputStream()) {
            in.transferTo(out);
        }
        assertTrue("timed out: " + cmd, p.waitFor(180, TimeUnit.SECONDS));
        return new Result(p.exitValue(), out.toString(StandardCharsets.UTF_8.name()));
    }

    /**
     * In the child, before the first round: says on stderr how far its system clock is from hrts,
     * and exits with status 3 unless that is the shift asked for.
     */
    public static void reportShiftedSystemClock() {
        long hrtsMs = HighResTimestamp.getEpochNanoseconds() / 1_000_000;
        long aheadS = Math.round((System.currentTimeMillis() - hrtsMs) / 1000.0);
        System.err.println(CHILD_SAYS + aheadS + " s ahead of hrts");
        if (aheadS != SHIFT_SECONDS) {
            System.err.println("the system clock is not shifted: is librealtime_shift.so preloaded?");
            System.exit(3);
        }
    }

    /** A test system property (set by the adapters' test tasks). */
    public static String prop(String name) {
        String v = System.getProperty(name);
        if (v == null) {
            throw new IllegalStateException("system property " + name + " not set (run the adapters' tests with Gradle)");
        }
        return v;
    }
}
