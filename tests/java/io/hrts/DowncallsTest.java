package io.hrts;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;
import static org.junit.Assume.assumeFalse;
import static org.junit.Assume.assumeTrue;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.jar.JarFile;
import java.util.jar.Manifest;
import org.junit.Test;

/**
 * JNI or FFM (docs/java.md, "JNI or FFM"): JDK 17 takes the hot paths by JNI; JDK 22+ takes them
 * by FFM critical downcalls of the same library once the JVM has made some stamps (the
 * multi-release jar's META-INF/versions/22), and those give what JNI gives, interleaved with it
 * on one thread. Run on JDK 17 by {@code ./gradlew test} and on JDK 25 by {@code junitOnJdk}.
 */
public class DowncallsTest {
    /** How far a later stamp may be below an earlier one of the other path (unordered reads). */
    private static final long TOLERANCE_NS = 1_000;
    private static final int ROUNDS = 20_000;

    private static int feature() {
        return Runtime.version().feature();
    }

    /** Whether the jar under test carries the JDK 22+ classes (the build found a JDK 22+). */
    private static boolean jarHasFfm() throws Exception {
        try (JarFile jar = new JarFile(ChildJvm.prop("hrts.test.jar"))) {
            Manifest m = jar.getManifest();
            return jar.getEntry("META-INF/versions/22/io/hrts/FfmBackend.class") != null && m != null
                    && "true".equals(m.getMainAttributes().getValue("Multi-Release"));
        }
    }

    private static void assumeNative() {
        assumeFalse("the portable implementation has no native calls",
                HighResTimestamp.implementation().isPortable());
    }

    /** Stamps until the hot paths are FFM (or 30 s passed); the hot path then. */
    private static String warmUp() throws InterruptedException {
        long end = System.nanoTime() + 30_000_000_000L;
        while (!HighResTimestamp.hotPath().equals("ffm-critical") && System.nanoTime() < end) {
            for (int i = 0; i < 1000; i++) {
                HighResTimestamp.getEpochNanoseconds();
            }
            Thread.sleep(1);
        }
        return HighResTimestamp.hotPath();
    }

    @Test
    public void jdk17TakesJni() {
        assumeTrue("JDK " + feature(), feature() < 22);
        assumeNative();
        for (int i = 0; i < 20_000; i++) {
            HighResTimestamp.getEpochNanoseconds();
        }
        assertEquals("jni", HighResTimestamp.hotPath());
    }

    @Test
    public void jdk22TakesFfmCriticalDowncalls() throws Exception {
        assumeTrue("JDK " + feature(), feature() >= 22);
        assumeNative();
        if (!jarHasFfm()) {
            // Built where no JDK 22+ javac was found (the build said so): JNI on every JDK.
            assertEquals("jni", HighResTimestamp.hotPath());
            return;
        }
        assertEquals("the JUnit JVM runs with --enable-native-access", "ffm-critical", warmUp());
    }

    /** The two paths, interleaved on one thread, give one non-decreasing timeline. */
    @Test
    public void ffmAndJniStampsAgree() throws Exception {
        assumeTrue("JDK " + feature(), feature() >= 22);
        assumeNative();
        assumeTrue("the jar has the FFM classes", jarHasFfm());
        assertEquals("ffm-critical", warmUp());
        Backend ffm = Backends.CURRENT;
        Native.open();

        long[] ns = new long[2 * ROUNDS];
        long[] ordered = new long[2 * ROUNDS];
        long[] micros = new long[2 * ROUNDS];
        long[] unique = new long[2 * ROUNDS];
        for (int i = 0; i < ROUNDS; i++) {
            ns[2 * i] = Native.epochNanos();
            ns[2 * i + 1] = ffm.epochNanos();
        }
        for (int i = 0; i < ROUNDS; i++) {
            ordered[2 * i] = ffm.epochNanosOrdered();
            ordered[2 * i + 1] = Native.epochNanosOrdered();
        }
        for (int i = 0; i < ROUNDS; i++) {
            micros[2 * i] = Native.epochMicros();
            micros[2 * i + 1] = ffm.epochMicros();
        }
        for (int i = 0; i < ROUNDS; i++) {
            unique[2 * i] = ffm.unique();
            unique[2 * i + 1] = Native.unique();
        }
        int close = 0;
        for (int i = 1; i < 2 * ROUNDS; i++) {
            assertTrue("stamp " + i + ": " + ns[i - 1] + " then " + ns[i], ns[i] >= ns[i - 1] - TOLERANCE_NS);
            assertTrue("ordered " + i + ": " + ordered[i - 1] + " then " + ordered[i], ordered[i] >= ordered[i - 1]);
            assertTrue("micros " + i + ": " + micros[i - 1] + " then " + micros[i],
                    micros[i] >= micros[i - 1] - TOLERANCE_NS / 1000);
            assertTrue("unique " + i + ": " + unique[i - 1] + " then " + unique[i], unique[i] > unique[i - 1]);
            if (Math.abs(ns[i] - ns[i - 1]) < 50_000) {
                close++;
            }
        }
        assertTrue("most neighbours within 50 us: " + close + " of " + (2 * ROUNDS - 1), close > ROUNDS);
        assertTrue(Math.abs(ns[0] / 1000 - micros[0]) < 60_000_000);

        // Counter reads: in order with each other, and converted alike by both paths.
        int differ = 0;
        long prevAt = 0;
        for (int i = 0; i < ROUNDS; i++) {
            long t = (i & 1) == 0 ? ffm.ticks() : Native.ticks();
            long viaFfm = ffm.ticksToNanos(t);
            long viaJni = Native.ticksToNanos(t);
            if (viaFfm != viaJni) {
                differ++; // a tie between the two moved the line
            }
            assertTrue("tick " + i + " at " + viaFfm + " after " + prevAt, viaFfm >= prevAt - TOLERANCE_NS);
            prevAt = viaFfm;
        }
        assertTrue(differ + " of " + ROUNDS + " conversions differ", differ <= 10);
        // Any value is answered as JNI answers it, the library's FAILED value among them.
        for (long t : new long[] {0, -1, Long.MIN_VALUE, Long.MAX_VALUE}) {
            assertEquals("ticksToNanos(" + t + ")", Native.ticksToNanos(t), ffm.ticksToNanos(t));
        }
    }

    /**
     * In child JVMs: FFM only where native access is enabled (and then without a warning), and
     * never with {@code -Dhrts.downcalls=jni}; JNI otherwise, with the reason.
     */
    @Test
    public void ffmOnlyWithNativeAccessAndNeverAWarning() throws Exception {
        assumeTrue("JDK " + feature(), feature() >= 22);
        assumeTrue("the jar has the FFM classes", jarHasFfm());
        String cp = ChildJvm.prop("hrts.test.jar") + java.io.File.pathSeparator
                + System.getProperty("java.class.path");

        Procs on = Procs.run(child(cp, Arrays.asList("--enable-native-access=ALL-UNNAMED"), "20000"));
        assertEquals(on.toString(), 0, on.exit);
        assertTrue(on.toString(), on.out.contains("hot path: ffm-critical\n"));
        assertFalse(on.toString(), on.err.toLowerCase(java.util.Locale.ROOT).contains("warning"));

        Procs jni = Procs.run(child(cp, Arrays.asList("--enable-native-access=ALL-UNNAMED",
                "-Dhrts.downcalls=jni"), "300"));
        assertEquals(jni.toString(), 0, jni.exit);
        assertTrue(jni.toString(), jni.out.contains("hot path: jni (-Dhrts.downcalls=jni)\n"));

        Procs closed = Procs.run(child(cp, new ArrayList<>(), "300"));
        assertEquals(closed.toString(), 0, closed.exit);
        assertTrue(closed.toString(), closed.out.contains("hot path: jni (FFM downcalls need native access: "
                + "--enable-native-access=ALL-UNNAMED)\n"));
        // JDK 24+ warn once about the JNI library's System.load itself (docs/java.md), not more.
        int warnings = closed.err.split("WARNING: A restricted method", -1).length - 1;
        assertTrue(closed.toString(), warnings <= 1);
    }

    private static List<String> child(String cp, List<String> jvmArgs, String ms) {
        List<String> cmd = new ArrayList<>();
        // This JVM's own java (22+ here): under junitOnJdk hrts.test.java may name the build's.
        cmd.add(java.nio.file.Paths.get(System.getProperty("java.home"), "bin", "java").toString());
        cmd.addAll(jvmArgs);
        cmd.add("-cp");
        cmd.add(cp);
        cmd.add(TestMains.class.getName());
        cmd.add("hot-path");
        cmd.add(ms);
        return cmd;
    }
}
