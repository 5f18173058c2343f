package io.hrts;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNotEquals;
import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.assertSame;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.Test;

/**
 * The Java API: IBMTS methods, what hrts adds, argument checks, open errors. Runs on the native
 * implementation ({@code test}) and on the portable one ({@code testPortable}), asserting the
 * documented differences where they differ.
 */
public class HighResTimestampTest {
    private static final long SECOND = 1_000_000_000L;

    private static void assertNear(String what, long expectedNs, long actualNs, long toleranceNs) {
        assertTrue(what + ": " + actualNs + " vs " + expectedNs, Math.abs(actualNs - expectedNs) <= toleranceNs);
    }

    @Test
    public void usesTheSegmentOfTheBuild() {
        String segment = ChildJvm.prop("hrts.segment");
        assertTrue(segment, segment.startsWith("/hrts-junit-"));
        assertEquals(segment, HighResTimestamp.configuredSegmentName());
        if (Portable.on()) {
            // No shared segment: the name is configured but nothing is created under it.
            assertEquals("none (portable implementation)", HighResTimestamp.getSegmentInfo().getName());
            assertTrue(HighResTimestamp.getSegmentInfo().getTimeline().startsWith("portable implementation"));
            assertTrue(segment, !Files.exists(Paths.get("/dev/shm" + segment)));
            // It watches for no disruptions and reports none.
            SegmentInfo info = HighResTimestamp.getSegmentInfo();
            assertTrue(info.toString(), !info.hasDisruptionRecord() && info.getDisruptions() == 0
                    && info.getLastDisruptionEpochNanoseconds() == 0 && !info.getLastDisruptionKind().isPresent()
                    && !info.isDisruptionPending() && !info.asMap().containsKey("disruptions"));
        } else {
            assertEquals(segment, HighResTimestamp.getSegmentInfo().getName());
        }
        assertTrue(HighResTimestamp.isOpen());
    }

    @Test
    public void ibmtsMethods() {
        long v = HighResTimestamp.getLogicVersion();
        String cargo = ChildJvm.prop("hrts.test.version");
        assertTrue(HighResTimestamp.versionString(v), HighResTimestamp.versionString(v).startsWith(cargo + "."));
        assertEquals("1.0.0.5", HighResTimestamp.versionString(0x0001000000000005L));
        assertEquals(0, HighResTimestamp.IBMTS_SUCCESS);
        assertTrue(HighResTimestamp.getCopyright().contains("hrts"));

        long[] base = HighResTimestamp.getBaseInfo();
        assertEquals(4, base.length);
        assertTrue("frequency " + base[0], base[0] > 1_000_000L);
        assertTrue("micros " + base[3], base[3] >= 0 && base[3] < 1_000_000L);
        BaseInfo snap = HighResTimestamp.getBaseInfoSnapshot();
        assertEquals(base[0], snap.frequency());
        assertEquals(snap.seconds(), snap.nanoseconds() / SECOND);
        assertEquals(snap.microseconds(), snap.nanoseconds() % SECOND / 1000);
        assertTrue(snap.generation() >= 1);

        long before = HighResTimestamp.getEpochMicroseconds();
        int[] ts = new int[2];
        assertEquals(HighResTimestamp.IBMTS_SUCCESS, HighResTimestamp.calcTimeStamp(ts));
        long[] lts = new long[] {-1, -1, 42};
        assertEquals(HighResTimestamp.IBMTS_SUCCESS, HighResTimestamp.calcTimeStamp(lts));
        long after = HighResTimestamp.getEpochMicrosecondsAsLong();
        long fromInts = Integer.toUnsignedLong(ts[0]) * 1_000_000L + ts[1];
        long fromLongs = lts[0] * 1_000_000L + lts[1];
        assertTrue(before + " <= " + fromInts + " <= " + fromLongs + " <= " + after,
                before <= fromInts && fromInts <= fromLongs && fromLongs <= after);
        assertTrue(ts[1] >= 0 && ts[1] < 1_000_000);
        assertEquals("only [0] and [1] are written", 42, lts[2]);
        assertNear("stamp vs currentTimeMillis", System.currentTimeMillis() * 1_000_000L,
                HighResTimestamp.getEpochNanoseconds(), 5 * SECOND);
    }

    @Test
    @SuppressWarnings("static")
    public void ibmtsStyleInstanceCodeCompilesAndRuns() {
        HighResTimestamp test = new HighResTimestamp();
        assertEquals(HighResTimestamp.getLogicVersion(), test.getLogicVersion());
        assertEquals(ProcessHandle.current().pid(), test.getOSProcessID());
        assertTrue(test.getEpochMicroseconds() > 0);
    }

    @Test
    public void argumentsAreCheckedBeforeCrossing() {
        assertThrows(NullPointerException.class, () -> HighResTimestamp.calcTimeStamp((int[]) null));
        assertThrows(NullPointerException.class, () -> HighResTimestamp.calcTimeStamp((long[]) null));
        assertThrows(IllegalArgumentException.class, () -> HighResTimestamp.calcTimeStamp(new int[1]));
        assertThrows(IllegalArgumentException.class, () -> HighResTimestamp.calcTimeStamp(new long[0]));
        assertThrows(NullPointerException.class, () -> HighResTimestamp.fillEpochNanoseconds(null, 0, 1));
        long[] a = new long[8];
        int[][] bad = {{-1, 1}, {0, -1}, {0, 9}, {8, 1}, {4, 5}, {Integer.MAX_VALUE, Integer.MAX_VALUE},
            {1, Integer.MAX_VALUE}, {Integer.MIN_VALUE, 0}};
        for (int[] r : bad) {
            assertThrows(Arrays.toString(r), IndexOutOfBoundsException.class,
                    () -> HighResTimestamp.fillEpochNanoseconds(a, r[0], r[1]));
        }
        HighResTimestamp.fillEpochNanoseconds(a, 8, 0); // empty range at the end: fine
        HighResTimestamp.fillEpochNanoseconds(new long[0], 0, 0);
        assertArrayEquals(new long[8], a);
    }

    @Test
    public void fillWritesExactlyTheRangeInOrder() {
        long[] a = new long[1000];
        Arrays.fill(a, -7);
        long before = HighResTimestamp.getEpochNanoseconds();
        HighResTimestamp.fillEpochNanoseconds(a, 3, 990);
        long after = HighResTimestamp.getEpochNanosecondsOrdered();
        for (int i = 0; i < a.length; i++) {
            if (i < 3 || i >= 993) {
                assertEquals("untouched " + i, -7, a[i]);
            } else {
                assertTrue(i + ": " + a[i], a[i] >= before && a[i] <= after);
                if (i > 3) {
                    assertTrue("non-decreasing at " + i, a[i] >= a[i - 1]);
                }
            }
        }
    }

    @Test
    public void fillOfALargeRangeIsChunkedButContinuous() {
        long[] a = new long[100_003];
        long before = HighResTimestamp.getEpochNanoseconds();
        HighResTimestamp.fillEpochNanoseconds(a, 2, 100_000);
        long after = HighResTimestamp.getEpochNanosecondsOrdered();
        assertEquals(0, a[0]);
        assertEquals(0, a[1]);
        assertEquals(0, a[100_002]);
        for (int i = 2; i < 100_002; i++) {
            assertTrue(i + ": " + a[i], a[i] >= before && a[i] <= after && (i == 2 || a[i] >= a[i - 1]));
        }
    }

    @Test
    public void ticksConvertToTheSameTimeline() {
        for (int i = 0; i < 1000; i++) {
            long before = HighResTimestamp.getEpochNanoseconds();
            long t = HighResTimestamp.ticks();
            long after = HighResTimestamp.getEpochNanosecondsOrdered();
            long ns = HighResTimestamp.ticksToNanos(t);
            // Same CPU-side reads: tolerate a few ns of read reordering only.
            assertTrue(before + " <= " + ns + " <= " + after, ns >= before - 1000 && ns <= after + 1000);
        }
        long t1 = HighResTimestamp.ticks();
        long t2 = HighResTimestamp.ticks();
        assertTrue(HighResTimestamp.ticksToNanos(t2) >= HighResTimestamp.ticksToNanos(t1));
    }

    @Test
    public void anyTickValueIsAnsweredWithoutChangingTheBase() {
        BaseInfo before = HighResTimestamp.getBaseInfoSnapshot();
        for (long v : new long[] {0, -1, 1, Long.MIN_VALUE, Long.MAX_VALUE, HighResTimestamp.ticks() + (1L << 62)}) {
            HighResTimestamp.ticksToNanos(v); // garbage in, garbage out; no exception, no crash
        }
        assertEquals(before.generation(), HighResTimestamp.getGeneration());
    }

    @Test
    public void instantAndClock() {
        long before = HighResTimestamp.getEpochNanoseconds();
        Instant now = HighResTimestamp.now();
        Clock clock = HighResTimestamp.clock();
        Instant viaClock = Instant.now(clock);
        long after = HighResTimestamp.getEpochNanosecondsOrdered();
        long nowNs = now.getEpochSecond() * SECOND + now.getNano();
        long clockNs = viaClock.getEpochSecond() * SECOND + viaClock.getNano();
        assertTrue(before <= nowNs && nowNs <= clockNs && clockNs <= after);
        long ms = clock.millis();
        assertTrue(ms >= before / 1_000_000L && ms <= HighResTimestamp.getEpochNanoseconds() / 1_000_000L);

        assertEquals(ZoneOffset.UTC, clock.getZone());
        ZoneId paris = ZoneId.of("Europe/Paris");
        Clock p1 = clock.withZone(paris);
        Clock p2 = HrtsClock.of(paris);
        assertEquals(p1, p2);
        assertEquals(p1.hashCode(), p2.hashCode());
        assertNotEquals(clock, p1);
        assertNotEquals(Clock.system(paris), p1);
        assertSame(clock, clock.withZone(ZoneOffset.UTC));
        assertEquals(HrtsClock.systemUTC(), HrtsClock.of(ZoneOffset.UTC));
        assertEquals(ZoneId.systemDefault(), HrtsClock.systemDefaultZone().getZone());
        ZonedDateTime z = ZonedDateTime.now(p1);
        assertEquals(paris, z.getZone());
        assertNear("ZonedDateTime on the hrts clock", HighResTimestamp.getEpochNanoseconds(),
                z.toInstant().getEpochSecond() * SECOND + z.toInstant().getNano(), SECOND);
        assertTrue(p1.toString().contains("Europe/Paris"));
        assertThrows(NullPointerException.class, () -> clock.withZone(null));
    }

    @Test
    public void itcStampsAreUniqueDecodableAndConvertToEpochTime() {
        int bits = HighResTimestamp.getItcEventBits();
        assertEquals("13 event bits unless HRTS_ITC_EVENT_BITS says otherwise", 13, bits);
        long before = HighResTimestamp.getEpochNanoseconds();
        long prev = HighResTimestamp.getItcStamp();
        long mask = (1L << bits) - 1;
        long largestCounter = prev & mask;
        for (int i = 0; i < 100_000; i++) {
            long next = HighResTimestamp.getItcStamp();
            assertTrue("ITC stamps strictly increase", Long.compareUnsigned(next, prev) > 0);
            largestCounter = Math.max(largestCounter, next & mask);
            prev = next;
        }
        long at = HighResTimestamp.itcToEpochNanoseconds(prev);
        assertTrue("tick converts to epoch ns at or after the run began", at >= before - SECOND);
        assertNear("ITC stamp is real time", HighResTimestamp.getEpochNanoseconds(), at, SECOND);
        // ITC's count: the largest event counter issued (0: no two stamps shared a tick).
        long most = HighResTimestamp.getItcMaxEventsPerTick();
        assertTrue(most + " >= " + largestCounter, most >= largestCounter && most <= mask);
    }

    @Test
    public void uniqueStampsAreStrictlyIncreasingAcrossThreads() throws Exception {
        int threads = 4;
        int perThread = 20_000;
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            List<Callable<long[]>> jobs = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                jobs.add(() -> {
                    long[] v = new long[perThread];
                    for (int i = 0; i < perThread; i++) {
                        v[i] = HighResTimestamp.getUniqueNanoseconds();
                    }
                    return v;
                });
            }
            Set<Long> all = new HashSet<>();
            for (Future<long[]> f : pool.invokeAll(jobs)) {
                long[] v = f.get();
                for (int i = 0; i < v.length; i++) {
                    assertTrue("strictly increasing within a thread", i == 0 || v[i] > v[i - 1]);
                    assertTrue("unique across threads: " + v[i], all.add(v[i]));
                }
            }
            assertEquals(threads * perThread, all.size());
        } finally {
            pool.shutdownNow();
        }
        long u = HighResTimestamp.getUniqueNanoseconds();
        assertNear("unique stamps are real time", HighResTimestamp.getEpochNanoseconds(), u, SECOND);
    }

    @Test
    public void sequenceNumbersIncrease() {
        long a = HighResTimestamp.nextSequence();
        long b = HighResTimestamp.nextSequence();
        assertTrue(a + " < " + b, b > a);
        Path seq = Paths.get(System.getenv("HRTS_SEQ_FILE"));
        if (Portable.on()) {
            // This JVM's own numbers, from its first stamp on, persisted nowhere.
            assertNear("portable sequence numbers start at the epoch ns", HighResTimestamp.getEpochNanoseconds(),
                    a, 60 * SECOND);
            assertTrue("nothing persisted in " + seq, !Files.exists(seq));
        } else {
            assertTrue("sequence persisted in " + seq, Files.exists(seq));
        }
    }

    @Test
    public void sequencePersistFailureIsAnHrtsException() throws Exception {
        // A sequence file whose parent is a regular file cannot be written, even by root.
        String name = "/hrts-junit-seqfail-" + ProcessHandle.current().pid();
        Path notADir = Paths.get(ChildJvm.prop("hrts.test.stateDir"), "not-a-dir");
        Files.write(notADir, new byte[] {1});
        java.util.Map<String, String> env = new java.util.HashMap<>();
        env.put("HRTS_SEGMENT", name);
        env.put("HRTS_SEQ_FILE", notADir.resolve("seq").toString());
        try {
            List<String> cmd = Procs.javaMain("next-sequence");
            cmd.add(1, "-D" + NativeLoader.FALLBACK_PROPERTY + "=" + (Portable.on() ? "force" : "auto"));
            Procs r = Procs.run(cmd, env);
            assertEquals(r.toString(), 0, r.exit);
            if (Portable.on()) {
                // The portable numbers are persisted nowhere: no file, no failure.
                assertTrue(r.toString(), r.out.startsWith("ok "));
                return;
            }
            assertTrue(r.toString(), r.out.startsWith("HrtsException "));
            assertTrue(r.toString(), r.out.contains("not-a-dir"));
        } finally {
            Procs.run(Procs.cli(), "--segment", name, "unlink");
            Files.deleteIfExists(notADir);
        }
    }

    @Test
    public void segmentInfo() {
        SegmentInfo info = HighResTimestamp.getSegmentInfo();
        assertTrue(info.toString(), (Portable.on() ? Arrays.asList("nanotime")
                : Arrays.asList("tsc", "cntvct", "timebase", "monotonic-raw")).contains(info.getSource()));
        assertEquals(HighResTimestamp.implementation().isPortable(), info.getTimeline().startsWith("portable"));
        assertTrue(info.toString(), !info.getReason().isEmpty());
        assertEquals(HighResTimestamp.getBaseInfo()[0], info.getFrequency());
        assertTrue(info.getGeneration() >= 1);
        assertNotNull(info.evaluationSummary());
        if (info.hasEvaluation()) {
            assertTrue(info.getEvaluationCpus() >= 1);
        }
    }

    @Test
    public void threadIdsAreDistinctPerThread() throws Exception {
        int n = 8;
        Set<Integer> ids = java.util.Collections.synchronizedSet(new HashSet<>());
        java.util.concurrent.CountDownLatch recorded = new java.util.concurrent.CountDownLatch(n);
        java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
        List<Thread> ts = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            Thread t = new Thread(() -> {
                ids.add(HighResTimestamp.getOSThreadID());
                recorded.countDown();
                try {
                    release.await(); // alive together: Linux cannot reuse their tids meanwhile
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
            ts.add(t);
            t.start();
        }
        recorded.await();
        ids.add(HighResTimestamp.getOSThreadID());
        release.countDown();
        for (Thread t : ts) {
            t.join();
        }
        assertEquals("distinct tids: " + ids, n + 1, ids.size());
    }

    @Test
    public void openErrorsAreRetryableHrtsExceptions() throws Exception {
        // An invalid name (no leading slash): the native open refuses it, every time.
        List<String> cmd = Procs.javaMain("open-twice");
        cmd.add(1, "-Dhrts.segment=no-leading-slash");
        cmd.add(1, "-Xcheck:jni");
        if (Portable.on()) {
            // The portable implementation opens no segment: the name is not even looked at.
            cmd.add(1, "-D" + NativeLoader.FALLBACK_PROPERTY + "=force");
            Procs p = Procs.run(cmd);
            assertEquals(p.toString(), 0, p.exit);
            assertTrue(p.toString(), p.out.matches("attempt 0: ok \\d+\nattempt 1: ok \\d+\n"));
            return;
        }
        Procs r = Procs.run(cmd);
        assertEquals(r.toString(), 0, r.exit);
        String[] lines = r.out.split("\n");
        assertEquals(r.toString(), 2, lines.length);
        for (int i = 0; i < 2; i++) {
            assertTrue(r.toString(), lines[i].startsWith("attempt " + i + ": HrtsException INVALID_ARGUMENT: "));
            assertTrue(r.toString(), lines[i].contains("no-leading-slash"));
        }

        // A foreign object under the name: FOREIGN, with the native message.
        String name = "/hrts-junit-foreign-" + ProcessHandle.current().pid();
        Path shm = Paths.get("/dev/shm" + name);
        byte[] junk = new byte[4096];
        Arrays.fill(junk, (byte) 0xA5);
        Files.write(shm, junk);
        Files.setPosixFilePermissions(shm, java.nio.file.attribute.PosixFilePermissions.fromString("rw-------"));
        try {
            List<String> cmd2 = Procs.javaMain("open-twice");
            cmd2.add(1, "-Dhrts.segment=" + name);
            Procs f = Procs.run(cmd2);
            assertEquals(f.toString(), 0, f.exit);
            assertTrue(f.toString(), f.out.contains("attempt 0: HrtsException FOREIGN: "));
            assertTrue(f.toString(), f.out.contains("attempt 1: HrtsException FOREIGN: "));
            assertTrue(f.toString(), f.out.contains("not an hrts segment"));
            assertTrue(f.toString(), !f.out.contains("ExceptionInInitializerError"));
        } finally {
            Files.deleteIfExists(shm);
        }
    }
}
