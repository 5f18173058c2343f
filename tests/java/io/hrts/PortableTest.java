package io.hrts;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertSame;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;
import static org.junit.Assume.assumeFalse;
import static org.junit.Assume.assumeTrue;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.Test;

/**
 * Which implementation runs, and what the portable one cannot keep: no agreement with other
 * processes, no bound, no native-only API. Runs in both test tasks; a child JVM told it runs on
 * macOS or Windows falls back, warns once and passes the self-test.
 */
public class PortableTest {
    private static final long SECOND = 1_000_000_000L;

    @Test
    public void theImplementationIsTheOneTheTaskAskedFor() {
        boolean forced = "force".equals(System.getProperty(NativeLoader.FALLBACK_PROPERTY));
        Implementation impl = HighResTimestamp.implementation();
        assertEquals(impl.toString(), forced, impl.isPortable());
        assertSame(impl, HighResTimestamp.implementation());
        if (forced) {
            assertEquals(Implementation.Kind.PORTABLE, impl.kind());
            assertTrue(impl.toString(), impl.toString().startsWith("portable: forced by -Dhrts.fallback=force"));
        } else {
            assertEquals(Implementation.Kind.NATIVE, impl.kind());
            assertTrue(impl.toString(), impl.toString().startsWith("native: loaded /"));
        }
    }

    /** A portable JVM's base reset moves its own timeline only: no other process sees it. */
    @Test
    public void thePortableTimelineIsThisJvmsOwn() throws Exception {
        assumeTrue(Portable.on());
        String segment = "/hrts-junit-portable-own-" + ProcessHandle.current().pid();
        try {
            long shared = Long.parseLong(Procs.keyValues(Procs.ok(Procs.cli(), "--segment", segment, "info"))
                    .get("generation"));
            long own = HighResTimestamp.getGeneration();
            BaseInfo b = HighResTimestamp.resetBase();
            assertEquals(own + 1, b.generation());
            assertEquals(own + 1, HighResTimestamp.getGeneration());
            Map<String, String> after = Procs.keyValues(Procs.ok(Procs.cli(), "--segment", segment, "info"));
            assertEquals("the shared segment did not see the reset", shared, Long.parseLong(after.get("generation")));
        } finally {
            Procs.run(Procs.cli(), "--segment", segment, "unlink");
        }
    }

    /** What only the native library has says so, with the reason, as LOAD. */
    @Test
    public void nativeOnlyApisSayWhy() {
        assumeTrue(Portable.on());
        for (org.junit.function.ThrowingRunnable r : Arrays.<org.junit.function.ThrowingRunnable>asList(
                Wtmlib::counter, Wtmlib::conversionParams, io.hrts.stats.SharedStats::snapshot,
                () -> io.hrts.stats.SharedStats.snapshot("/hrts-stats-portable"),
                () -> io.hrts.stats.SharedStats.unlink("/hrts-stats-portable"))) {
            HrtsException e = assertThrows(HrtsException.class, r);
            assertSame(HrtsException.Kind.LOAD, e.getKind());
            assertTrue(e.getMessage(), e.getMessage().contains("need")
                    && e.getMessage().contains("the native library")
                    && e.getMessage().contains("portable implementation (forced by -Dhrts.fallback=force"));
        }
    }

    /**
     * The statistics run on the portable implementation (io.hrts.stats' tests all run in both
     * tasks); what differs: they are published nowhere (no statistics segment is mapped, so
     * {@code hrts stats} cannot see them), and a shared timer is shared within this JVM only.
     */
    @Test
    public void portableStatisticsWorkAndArePublishedNowhere() throws Exception {
        assumeTrue(Portable.on());
        io.hrts.stats.Stats.stop();
        io.hrts.stats.Stats.configureJson("{\"json-dump\": {\"interval\": 0}, \"metrics-dump\": {\"interval\": 0}}");
        io.hrts.stats.Stats.start();
        try {
            io.hrts.stats.Counter c = io.hrts.stats.Stats.counter("java.portable.published");
            c.increment(7);
            io.hrts.stats.Timer t = io.hrts.stats.Stats.timer("java.portable.shared");
            t.startShared(42);
            Thread.sleep(2);
            java.util.OptionalLong d = t.stopShared(42);
            assertTrue(String.valueOf(d), d.isPresent() && d.getAsLong() >= 2_000_000L);
            assertTrue("stopped once", !t.stopShared(42).isPresent());
            t.startShared(43);
            assertTrue(t.discardShared(43));
            io.hrts.stats.StatsDump dump = io.hrts.stats.Stats.dump();
            assertEquals(7, dump.get("java.portable.published").counterValue());
            assertEquals(1, dump.get("java.portable.shared").values().count());
            assertEquals((double) d.getAsLong(), dump.get("java.portable.shared").values().max(), 0);
            long now = HighResTimestamp.getEpochNanoseconds();
            assertTrue("stamped on the portable timeline", dump.timestamp() <= now && now - dump.timestamp() < SECOND);
            // hrts stats reads the statistics segment the native library publishes to: nothing of this JVM.
            assertEquals("", publishedWithin("java.portable.published", SECOND));
        } finally {
            io.hrts.stats.Stats.stop();
        }
    }

    /**
     * What {@code hrts stats --json} shows of this process's metric {@code name} in the run's
     * statistics segment within {@code waitNs} (it publishes every 100 ms): the JSON, or "" if
     * it never showed it.
     */
    private static String publishedWithin(String name, long waitNs) throws Exception {
        String segment = System.getenv("HRTS_STATS_SEGMENT");
        assertTrue("the build names a statistics segment", segment != null && !segment.isEmpty());
        long deadline = System.nanoTime() + waitNs;
        String pid = "\"pid\":" + ProcessHandle.current().pid() + ",";
        while (true) {
            String json = Procs.ok(Procs.cli(), "stats", "--segment", segment, "--json");
            if (json.contains(pid) && json.contains("\"" + name + "\"")) {
                return json;
            }
            if (System.nanoTime() > deadline) {
                return "";
            }
            Thread.sleep(50);
        }
    }

    /**
     * The same on the native implementation is seen from outside: {@code hrts stats} shows this
     * process's counter (the check the portable test's absence would fail if it published).
     */
    @Test
    public void nativeStatisticsArePublished() throws Exception {
        assumeFalse(Portable.on());
        io.hrts.stats.Stats.start();
        try {
            io.hrts.stats.Stats.counter("java.native.published").increment(7);
            io.hrts.stats.Stats.dump();
            String json = publishedWithin("java.native.published", 10 * SECOND);
            assertTrue("hrts stats shows it", !json.isEmpty());
        } finally {
            io.hrts.stats.Stats.stop();
        }
    }

    /**
     * Stamps on two threads across a segment boundary of the portable clock (a second): each
     * thread's never go back, and the timeline stays within milliseconds of the system clock.
     */
    @Test
    public void portableStampsNeverGoBackAcrossSegments() throws Exception {
        assumeTrue(Portable.on());
        PortableClock clock = new PortableClock();
        long end = System.nanoTime() + PortableClock.PERIOD_NS + 200_000_000L;
        AtomicReference<String> failure = new AtomicReference<>();
        List<Thread> threads = new ArrayList<>();
        for (int t = 0; t < 2; t++) {
            Thread th = new Thread(() -> {
                long prev = Long.MIN_VALUE;
                while (System.nanoTime() < end) {
                    long s = clock.epochNanos();
                    if (s < prev) {
                        failure.compareAndSet(null, s + " after " + prev);
                    }
                    prev = s;
                }
            });
            threads.add(th);
            th.start();
        }
        for (Thread th : threads) {
            th.join();
        }
        assertEquals(null, failure.get());
        assertTrue("a second segment was made: " + clock.ties(), clock.ties() >= 1);
        long off = PortableClock.wallNanos() - clock.epochNanos();
        assertTrue("within 50 ms of the system clock: " + off, Math.abs(off) < 50_000_000L);
        // The segment's function: a slew never makes F decrease, either way.
        for (long slew : new long[] {-1, 0, 1}) {
            PortableClock.Anchor a = new PortableClock.Anchor(1000, 5 * SECOND, 1000 + SECOND, slew);
            long prev = a.at(1000);
            assertEquals(5 * SECOND, prev);
            for (long t = 1001; t < 1000 + 10_000; t++) {
                long v = a.at(t);
                assertTrue(slew + ": " + v + " after " + prev, v >= prev);
                prev = v;
            }
            assertEquals(5 * SECOND + SECOND + slew * (SECOND >> PortableClock.SLEW_SHIFT), a.at(1000 + SECOND));
        }
    }

    /** The jar's manifest lists the platforms it packs a library for, and says the rest are portable. */
    @Test
    public void theManifestListsThePlatforms() throws Exception {
        assumeFalse("the jar's facts are the native task's", Portable.on());
        try (java.util.jar.JarFile jar = new java.util.jar.JarFile(ChildJvm.prop("hrts.test.jar"))) {
            java.util.jar.Attributes a = jar.getManifest().getMainAttributes();
            assertEquals(String.join(" ", ChildJvm.prop("hrts.test.platforms").split(",")),
                    a.getValue("Hrts-Native-Platforms"));
            assertEquals(NativeLoader.packagedPlatforms(),
                    Arrays.asList(a.getValue("Hrts-Native-Platforms").split(" ")));
            String portable = a.getValue("Hrts-Portable-Platforms");
            assertTrue(portable, portable.contains("hrts.fallback"));
        }
    }

    /** A JVM told it runs on macOS or Windows on arm64: no library for it, so portable, one warning, self-test OK. */
    @Test
    public void aJvmOnMacOrWindowsFallsBackWarnsOnceAndPassesTheSelfTest() throws Exception {
        assumeFalse("once, from the native task", Portable.on());
        String[][] platforms = {{"Mac OS X", "aarch64", "macosx-aarch64"}, {"Windows 11", "aarch64", "windows-aarch64"}};
        for (String[] p : platforms) {
            Procs r = ChildJvm.runJar(Arrays.asList("-Dos.name=" + p[0], "-Dos.arch=" + p[1]), "--no-reset", "3");
            assertEquals(r.toString(), 0, r.exit);
            assertTrue(r.toString(), r.out.contains("platform:       " + p[2] + "\n"));
            assertTrue(r.toString(), r.out.contains("implementation: portable: this jar has no native library for "
                    + "platform " + p[2] + " (it has "));
            assertTrue(r.toString(), r.out.contains("Segment: none (portable implementation)\n"));
            assertTrue(r.toString(), r.out.endsWith("self-test: OK (portable implementation: this JVM's own "
                    + "timeline, not the host's)\n"));
            assertEquals(r.toString(), 1, r.err.split("WARNING", -1).length - 1);
            assertTrue(r.toString(), r.err.contains("hrts: using the portable implementation, not the host's shared "
                    + "timeline (stamps agree with no other process; bounds unknown): this jar has no native library "
                    + "for platform " + p[2]));
            assertTrue(r.toString(), r.err.contains("-Dhrts.fallback=auto (the default): this jar has no library "
                    + "for the platform"));
        }
        // Denied, the same JVM fails as before there was a fallback, and says what it is.
        Procs d = ChildJvm.runJar(Arrays.asList("-Dos.name=Mac OS X", "-Dos.arch=aarch64",
                "-D" + NativeLoader.FALLBACK_PROPERTY + "=deny"), "--no-reset", "1");
        assertEquals(d.toString(), 1, d.exit);
        assertTrue(d.toString(), d.err.contains("for platform macosx-aarch64 (os.name=Mac OS X, os.arch=aarch64, "
                + "C library the OS's own, hrts "));
        assertTrue(d.toString(), d.err.contains("Fallback: no fallback (-Dhrts.fallback=deny)."));
        assertTrue(d.toString(), !d.err.contains("WARNING"));
    }

    /**
     * A Linux JVM whose packed library does not load is a broken install: by default no fallback,
     * and the report says why; {@code allow} falls back and says what failed.
     */
    @Test
    public void aBrokenInstallFailsUnlessTheFallbackIsAllowed() throws Exception {
        assumeFalse("once, from the native task", Portable.on());
        // A file where the extraction directory should be: the packed library cannot be extracted.
        java.nio.file.Path notADir = java.nio.file.Files.createTempFile("hrts-junit-notadir", "");
        try {
            Procs r = ChildJvm.runJar(Arrays.asList("-D" + NativeLoader.DIR_PROPERTY + "=" + notADir),
                    "--no-reset", "1");
            assertEquals(r.toString(), 1, r.exit);
            assertTrue(r.toString(), r.err.contains("Fallback: no fallback (-Dhrts.fallback=auto (the default): this "
                    + "jar has a library for the platform, so a failure to load it is a broken install)."));
            assertTrue(r.toString(), r.err.contains(", C library " + NativeLoader.cLibrary() + ", "));
            assertTrue(r.toString(), r.err.contains("-Dhrts.fallback=allow (the portable implementation)"));

            Procs a = ChildJvm.runJar(Arrays.asList("-D" + NativeLoader.DIR_PROPERTY + "=" + notADir,
                    "-D" + NativeLoader.FALLBACK_PROPERTY + "=allow"), "--no-reset", "1");
            assertEquals(a.toString(), 0, a.exit);
            assertTrue(a.toString(), a.out.contains("implementation: portable: the native library for "
                    + NativeLoader.platform() + " did not load (jar resource "));
            assertTrue(a.toString(), a.out.contains("fallback to the portable implementation allowed "
                    + "(-Dhrts.fallback=allow)"));
            assertEquals(a.toString(), 1, a.err.split("WARNING", -1).length - 1);
        } finally {
            java.nio.file.Files.deleteIfExists(notADir);
        }
    }
}
