package io.hrts;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNotEquals;
import static org.junit.Assert.assertSame;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import org.junit.Test;

/**
 * What crosses the JNI boundary is typed: exception kinds are an enum, SegmentInfo and BaseInfo
 * are built from typed values (and show what {@code hrts info} shows), messages survive the trip
 * whatever characters they hold.
 */
public class TypedContractsTest {

    @Test
    public void everyKindNameFromTheNativeSideMapsToItsConstant() {
        // The native side throws by name (native/jni boundary::kind_name; its unit test checks
        // that every core ErrorKind has a constant here and back).
        for (HrtsException.Kind k : HrtsException.Kind.values()) {
            HrtsException e = HrtsException.fromNative(k.name(), "m " + k);
            assertSame(k, e.getKind());
            assertEquals("m " + k, e.getMessage());
        }
        HrtsException unknown = HrtsException.fromNative("SOMETHING_NEW", "details");
        assertSame(HrtsException.Kind.INTERNAL, unknown.getKind());
        assertTrue(unknown.getMessage(), unknown.getMessage().contains("SOMETHING_NEW")
                && unknown.getMessage().endsWith("details"));
        assertSame(HrtsException.Kind.INTERNAL, HrtsException.fromNative(null, "x").getKind());
        assertSame(HrtsException.Kind.LOAD, new HrtsException("no library").getKind());
        assertSame(HrtsException.Kind.LOAD, new HrtsException("no library", new Error()).getKind());
        assertSame(HrtsException.Kind.INTERNAL, new HrtsException((HrtsException.Kind) null, "x").getKind());
        assertEquals(EnumSet.of(HrtsException.Kind.INVALID_ARGUMENT, HrtsException.Kind.OS,
                HrtsException.Kind.FOREIGN, HrtsException.Kind.TRUNCATED, HrtsException.Kind.VERSION,
                HrtsException.Kind.CORRUPT, HrtsException.Kind.PERMISSION, HrtsException.Kind.TIMEOUT,
                HrtsException.Kind.SOURCE, HrtsException.Kind.PERSIST, HrtsException.Kind.FULL,
                HrtsException.Kind.UNSYNCHRONIZED, HrtsException.Kind.NOT_OPEN,
                HrtsException.Kind.INTERNAL, HrtsException.Kind.LOAD),
                EnumSet.allOf(HrtsException.Kind.class));
    }

    @Test
    public void aNativeFailureIsThrownWithItsKindAndAnExactMessage() {
        HighResTimestamp.open();
        // NUL and a character beyond the BMP: both need JNI's modified UTF-8 on the way back.
        String other = "/hrts-junit-other-\u0000-\uD83D\uDE00-\u00e9";
        HrtsException e = assertThrows(HrtsException.class,
                () -> Native.openSegment(other.getBytes(StandardCharsets.UTF_8), 0, 0, 0, 0, 0, 0));
        assertSame(HrtsException.Kind.INVALID_ARGUMENT, e.getKind());
        assertTrue(e.getMessage(), e.getMessage().contains(other));
        assertTrue(e.getMessage(), e.getMessage().contains(HighResTimestamp.getSegmentInfo().getName()));

        HrtsException utf8 = assertThrows(HrtsException.class,
                () -> Native.openSegment(new byte[] {'/', (byte) 0xff}, 0, 0, 0, 0, 0, 0));
        assertSame(HrtsException.Kind.INVALID_ARGUMENT, utf8.getKind());
        assertTrue(utf8.getMessage(), utf8.getMessage().contains("not valid UTF-8"));
        assertTrue("the segment stays open", HighResTimestamp.isOpen());
    }

    @Test
    public void segmentInfoShowsWhatHrtsInfoShows() throws Exception {
        HighResTimestamp.open();
        for (int attempt = 0; ; attempt++) {
            SegmentInfo before = HighResTimestamp.getSegmentInfo();
            Map<String, String> cli = Procs.keyValues(Procs.ok(Procs.cli(), "info"));
            SegmentInfo after = HighResTimestamp.getSegmentInfo();
            // A base move or a tie between the snapshots changes base, moves, ties and the
            // slope; the offset is measured anew by every snapshot.
            if (!withoutOffset(before.asMap()).equals(withoutOffset(after.asMap())) && attempt < 10) {
                continue;
            }
            cli.remove("opened"); // whether `hrts info` created or attached: not a segment fact
            // The OS's reported frequency beside the calibrated one: the CLI's check, not a fact
            // the segment records.
            cli.keySet().removeIf(k -> k.startsWith("os frequency"));
            // The error bound aged to now: `hrts info`'s own lines (Java asks
            // getBoundedEpochNanoseconds).
            cli.keySet().removeIf(k -> k.startsWith("bound ") || k.equals("leap second"));
            assertEquals(new ArrayList<>(cli.keySet()), new ArrayList<>(before.asMap().keySet()));
            assertEquals(withoutOffset(cli), withoutOffset(before.asMap()));
            for (long offset : new long[] {Long.parseLong(cli.get("offset ns")), before.getOffsetNanoseconds()}) {
                assertTrue("offset " + offset + " ns", Math.abs(offset) < 5_000_000L);
            }
            assertEquals(cli.get("segment"), before.getName());
            assertEquals(cli.get("ordered read"), before.getOrderedRead());
            assertEquals(cli.get("creator uid"), Long.toString(before.getCreatorUid()));
            assertEquals(cli.get("created epoch ns"), Long.toString(before.getCreatedEpochNanoseconds()));
            assertEquals(cli.get("calibrations"), Long.toString(before.getCalibrations()));
            assertEquals(cli.get("calibration elapsed ns"), Long.toString(before.getCalibrationElapsedNs()));
            assertEquals(cli.get("mult"), Long.toUnsignedString(before.getMult()));
            assertEquals(cli.get("shift"), Integer.toString(before.getShift()));
            assertEquals(cli.get("wrap threshold ticks"), Long.toUnsignedString(before.getWrapThresholdTicks()));
            assertEquals(cli.get("layout version"), Long.toString(before.getLayoutVersion()));
            // The disruption lines, compared key for key above, typed: this run's segment
            // records them.
            assertTrue(before.toString(), before.hasDisruptionRecord());
            assertEquals(cli.get("disruptions"), Long.toString(before.getDisruptions()));
            assertEquals(cli.containsKey("last disruption epoch ns") ? cli.get("last disruption epoch ns") : "0",
                    Long.toString(before.getLastDisruptionEpochNanoseconds()));
            assertEquals(before.getDisruptions() == 0, !before.getLastDisruptionKind().isPresent());
            assertTrue(before.toString(), before.toString().startsWith("SegmentInfo{timeline=per-user segment "));
            return;
        }
    }

    private static Map<String, String> withoutOffset(Map<String, String> m) {
        Map<String, String> copy = new java.util.LinkedHashMap<>(m);
        copy.remove("offset ns");
        return copy;
    }

    @Test
    public void segmentInfoWithoutAnEvaluation() {
        TrackingState frozen = new TrackingState(Mode.FROZEN, 1, 2, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0);
        SegmentInfo none = new SegmentInfo("/s", 2, "monotonic-raw", "line one\nline two", 1_000_000_000L, 0, 0,
                1, false, true, 65, 4, 1, 5, 10, 0, 1, 1, -1L, 5, 1, 0, 1000, 0, 7, frozen);
        assertTrue(!none.hasEvaluation() && !none.isEvaluationMonotonic());
        assertEquals(-1, none.getEvaluationMaxShiftNs());
        assertEquals(0, none.getEvaluationCpus());
        assertEquals("none (monotonic-raw needs none)", none.evaluationSummary());
        assertEquals("line one line two", none.getReason());
        // The short constructor stands for a page that records no ordered read.
        assertEquals("fence", none.getOrderedRead());
        Map<String, String> m = none.asMap();
        assertEquals("none", m.get("evaluation"));
        assertTrue(m.toString(), !m.containsKey("evaluation cpus") && !m.containsKey("evaluation max shift ns")
                && !m.containsKey("evaluation pace"));
        assertEquals(null, none.getEvaluationPace());
        assertEquals(-1, none.getEvaluationPacePpb());
        assertEquals("18446744073709551615", m.get("base counter"));
        assertEquals("7", m.get("offset ns"));
        assertThrows(UnsupportedOperationException.class, () -> m.put("x", "y"));

        SegmentInfo unbounded = new SegmentInfo("/s", 2, "tsc", "r", 1, 0, 0, 1, true, false, -1, 2, 3, 9, 10, 0, 1,
                1, 0, 5, 1, 0, 1000, 0, -7, frozen);
        assertEquals("NOT monotonic, max cross-CPU shift unbounded, 2 CPUs", unbounded.evaluationSummary());
        assertEquals("not monotonic", unbounded.asMap().get("evaluation"));
        assertEquals("lfence-rdtsc", unbounded.asMap().get("ordered read"));
        assertEquals("unbounded", unbounded.asMap().get("evaluation max shift ns"));
        // Pace code 3 is STUCK, which has no ppb.
        assertSame(SegmentInfo.Pace.STUCK, unbounded.getEvaluationPace());
        assertEquals(-1, unbounded.getEvaluationPacePpb());
        assertEquals("stuck (the counter did not change)", unbounded.asMap().get("evaluation pace"));
        // The short constructor stands for a page that records no disruptions.
        assertTrue(!unbounded.hasDisruptionRecord() && unbounded.getDisruptions() == 0
                && unbounded.getLastDisruptionEpochNanoseconds() == 0 && !unbounded.getLastDisruptionKind().isPresent()
                && !unbounded.isDisruptionPending());
        assertTrue(!unbounded.asMap().containsKey("disruptions"));
    }

    /** A segment info as the native library builds it, with this disruption record. */
    private static SegmentInfo withDisruptions(boolean record, long count, long lastNs, int kind, boolean pending) {
        TrackingState frozen = new TrackingState(Mode.FROZEN, 1, 2, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0);
        return new SegmentInfo("per-user segment /s", null, "/s", 3, "tsc", "r", "rdtscp", 1, 0, 0, 1, false, false,
                -1, 0, 0, -1, 10, 0, 1, 1, 0, 5, 1, 0, 1000, 0, 0, frozen, true, record, count, lastNs, kind, pending);
    }

    @Test
    public void segmentInfoShowsDisruptionsAsHrtsInfoDoes() {
        SegmentInfo none = withDisruptions(true, 0, 0, 0, false);
        assertTrue(none.hasDisruptionRecord());
        assertEquals(0, none.getDisruptions());
        assertEquals(0, none.getLastDisruptionEpochNanoseconds());
        assertTrue(!none.getLastDisruptionKind().isPresent() && !none.isDisruptionPending());
        List<String> keys = new ArrayList<>(none.asMap().keySet());
        assertEquals("disruptions", keys.get(keys.size() - 1));
        assertEquals(keys.indexOf("repairs") + 1, keys.indexOf("disruptions"));
        assertEquals("0", none.asMap().get("disruptions"));

        // hrts info's lines for a suspend whose rate is not learned again yet.
        SegmentInfo seen = withDisruptions(true, 2, 1_700_000_000_123_456_789L, 4, true);
        assertEquals(2, seen.getDisruptions());
        assertEquals(1_700_000_000_123_456_789L, seen.getLastDisruptionEpochNanoseconds());
        assertSame(SegmentInfo.DisruptionKind.SUSPEND, seen.getLastDisruptionKind().get());
        assertTrue(seen.isDisruptionPending());
        Map<String, String> m = seen.asMap();
        assertEquals("2", m.get("disruptions"));
        assertEquals("1700000000123456789", m.get("last disruption epoch ns"));
        assertEquals("suspend (CLOCK_BOOTTIME - CLOCK_MONOTONIC grew) (rate not learned again yet)",
                m.get("last disruption"));
        keys = new ArrayList<>(m.keySet());
        assertEquals(keys.subList(keys.size() - 3, keys.size()),
                java.util.Arrays.asList("disruptions", "last disruption epoch ns", "last disruption"));

        // The codes are C's hrts_disruption_kind; a code this jar does not know reads as unknown.
        assertEquals("system clock stepped (CLOCK_REALTIME off the line beyond the bound)",
                withDisruptions(true, 1, 5, 6, false).asMap().get("last disruption"));
        SegmentInfo newer = withDisruptions(true, 1, 5, 99, false);
        assertTrue(!newer.getLastDisruptionKind().isPresent());
        assertEquals("unknown", newer.asMap().get("last disruption"));
        assertEquals(6, SegmentInfo.DisruptionKind.values().length);
        assertSame(SegmentInfo.DisruptionKind.COUNTER_AHEAD, SegmentInfo.DisruptionKind.fromCode(1));

        // No record (an older host page, the portable implementation): none, and no lines.
        SegmentInfo unrecorded = withDisruptions(false, 3, 5, 1, true);
        assertTrue(!unrecorded.hasDisruptionRecord() && unrecorded.getDisruptions() == 0
                && unrecorded.getLastDisruptionEpochNanoseconds() == 0
                && !unrecorded.getLastDisruptionKind().isPresent() && !unrecorded.isDisruptionPending());
        assertTrue(!unrecorded.asMap().containsKey("disruptions"));
    }

    @Test
    public void baseInfoIsAValueRecord() {
        BaseInfo a = HighResTimestamp.getBaseInfoSnapshot();
        BaseInfo b = new BaseInfo(a.frequency(), a.counter(), a.seconds(), a.microseconds(), a.nanoseconds(),
                a.generation());
        assertEquals(a, b);
        assertEquals(a.hashCode(), b.hashCode());
        assertNotEquals(a, new BaseInfo(a.frequency(), a.counter(), a.seconds(), a.microseconds(), a.nanoseconds(),
                a.generation() + 1));
        assertArrayEquals(new long[] {a.frequency(), a.counter(), a.seconds(), a.microseconds()}, a.toIbmtsArray());
        BaseInfo high = new BaseInfo(1, -1L, 0, 0, 0, 1);
        assertTrue(high.toString(), high.toString().contains("counter=18446744073709551615"));
    }

    @Test
    public void theStampClassesAndTheirDelegatesShareOneSequence() {
        List<Long> unique = new ArrayList<>();
        List<Long> seq = new ArrayList<>();
        List<Long> itc = new ArrayList<>();
        for (int i = 0; i < 100; i++) {
            unique.add(UniqueStamps.next());
            unique.add(HighResTimestamp.getUniqueNanoseconds());
            seq.add(Sequences.next());
            seq.add(HighResTimestamp.nextSequence());
            itc.add(ItcStamps.next());
            itc.add(HighResTimestamp.getItcStamp());
        }
        for (int i = 1; i < unique.size(); i++) {
            assertTrue("unique " + i, unique.get(i) > unique.get(i - 1));
            assertTrue("sequence " + i, seq.get(i) > seq.get(i - 1));
            assertTrue("itc " + i, Long.compareUnsigned(itc.get(i), itc.get(i - 1)) > 0);
        }
        assertEquals(ItcStamps.eventBits(), HighResTimestamp.getItcEventBits());
        long last = itc.get(itc.size() - 1);
        assertEquals(ItcStamps.toEpochNanoseconds(last), HighResTimestamp.itcToEpochNanoseconds(last));
        long most = ItcStamps.maxEventsPerTick();
        long largestCounter = 0;
        for (long s : itc) {
            largestCounter = Math.max(largestCounter, s & ((1L << ItcStamps.eventBits()) - 1));
        }
        assertTrue("ITC's count: the largest event counter",
                most >= largestCounter && most < (1L << ItcStamps.eventBits()));
        assertTrue("a maximum only grows", HighResTimestamp.getItcMaxEventsPerTick() >= most);
    }
}
