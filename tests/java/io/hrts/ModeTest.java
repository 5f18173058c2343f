package io.hrts;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertSame;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.junit.Test;

/**
 * The segment's mode and tracking state, typed: what the test segment reports agrees with {@code
 * hrts info}; a child JVM chooses the mode and tie interval of a segment it creates with system
 * properties, and bad properties are refused with their names.
 */
public class ModeTest {

    /** The mode the test segment was created with: HRTS_MODE if the environment sets one. */
    private static Mode expectedMode() {
        String env = System.getenv("HRTS_MODE");
        return env == null || env.trim().isEmpty() ? Mode.TRACKING : Mode.fromLabel(env);
    }

    /** A setting of the environment the test segment was created with, else its default. */
    private static long envOr(String name, long fallback) {
        String v = System.getenv(name);
        return v == null || v.trim().isEmpty() ? fallback : Long.parseLong(v.trim());
    }

    @Test
    public void theTestSegmentReportsItsModeEverywhere() {
        Mode mode = HighResTimestamp.getMode();
        assertSame(expectedMode(), mode);
        assertSame(mode, HighResTimestamp.getTrackingState().mode());
        assertSame(mode, HighResTimestamp.getSegmentInfo().getMode());
        assertSame(mode, HighResTimestamp.getSegmentInfo().getTrackingState().mode());
        TrackingState t = HighResTimestamp.getTrackingState();
        assertEquals(envOr("HRTS_TIE_INTERVAL_MS", 1000) * 1_000_000L, t.tieIntervalNs());
        assertEquals(envOr("HRTS_MAX_SLEW_PPM", 500) * 1_000L, t.maxSlewPpb());
        assertEquals(envOr("HRTS_STEP_THRESHOLD_MS", 100) * 1_000_000L, t.stepThresholdNs());
    }

    @Test
    public void theTrackingStateAgreesWithHrtsInfo() throws Exception {
        for (int attempt = 0; ; attempt++) {
            TrackingState before = HighResTimestamp.getTrackingState();
            Map<String, String> cli = Procs.keyValues(Procs.ok(Procs.cli(), "info"));
            TrackingState after = HighResTimestamp.getTrackingState();
            if (!before.equals(after) && attempt < 10) {
                continue; // a tie between the snapshots
            }
            assertEquals(before.mode().label(), cli.get("mode"));
            assertEquals(Long.toString(before.repairs()), cli.get("repairs"));
            if (before.mode() == Mode.TRACKING) {
                assertEquals(Long.toString(before.tieIntervalNs()), cli.get("tie interval ns"));
                assertEquals(Long.toString(before.stepThresholdNs()), cli.get("step threshold ns"));
                assertEquals(Long.toString(before.ties()), cli.get("ties"));
                assertEquals(Long.toString(before.lastTieEpochNs()), cli.get("last tie epoch ns"));
                assertEquals(Long.toString(before.lastOffsetNs()), cli.get("last tie offset ns"));
                assertEquals(Long.toString(before.pendingNs()), cli.get("pending ns"));
                assertEquals(Long.toString(before.steps()), cli.get("steps"));
                assertEquals(BigDecimal.valueOf(before.correctionPpb(), 3).toPlainString(),
                        cli.get("slope correction ppm"));
            } else {
                assertFalse(cli.toString(), cli.containsKey("ties"));
            }
            return;
        }
    }

    @Test
    public void theOffsetIsSmallTiesFollowTheClockAndTheSegmentValidates() throws Exception {
        long offset = HighResTimestamp.getOffsetNanoseconds();
        assertTrue("offset " + offset + " ns", Math.abs(offset) < 5_000_000L);
        HighResTimestamp.validate();
        TrackingState before = HighResTimestamp.getTrackingState();
        if (before.mode() == Mode.TRACKING) {
            // The first stamp past a tie interval ties the segment to the clock again.
            Thread.sleep(before.tieIntervalNs() / 1_000_000L + 100);
            long ns = HighResTimestamp.getEpochNanoseconds();
            TrackingState after = HighResTimestamp.getTrackingState();
            assertTrue(before + " -> " + after, after.ties() > before.ties());
            assertTrue(after + " at " + ns, Math.abs(after.lastTieEpochNs() - ns) < 1_000_000_000L);
        }
        HighResTimestamp.validate();
    }

    @Test
    public void aChildJvmCreatesAFrozenSegmentWithTheModeProperty() throws Exception {
        String name = freshName("frozen");
        try {
            Map<String, String> child = childMode(name, "-D" + HighResTimestamp.MODE_PROPERTY + "=frozen");
            assertEquals(child.toString(), "FROZEN", child.get("mode"));
            assertEquals("FROZEN", child.get("state mode"));
            assertEquals("FROZEN", child.get("info mode"));
            assertEquals("a frozen segment never ties", "0", child.get("ties"));
            assertEquals("0", child.get("last tie epoch ns"));
            assertEquals("yes", child.get("valid"));

            Map<String, String> cli = Procs.keyValues(Procs.ok(Procs.cli(), "--segment", name, "info"));
            assertEquals(cli.toString(), "frozen", cli.get("mode"));
            assertFalse(cli.toString(), cli.containsKey("tie interval ns"));

            // The segment exists now: a JVM that asks for tracking gets the creator's mode.
            Map<String, String> later = childMode(name, "-D" + HighResTimestamp.MODE_PROPERTY + "=tracking");
            assertEquals(later.toString(), "FROZEN", later.get("mode"));
        } finally {
            Procs.run(Procs.cli(), "--segment", name, "unlink");
        }
    }

    @Test
    public void aChildJvmSetsTheTrackingSettingsOfASegmentItCreates() throws Exception {
        String name = freshName("tracking");
        try {
            Map<String, String> child = childMode(name, "-D" + HighResTimestamp.MODE_PROPERTY + "=TRACKING",
                    "-D" + HighResTimestamp.TIE_INTERVAL_PROPERTY + "=250",
                    "-D" + HighResTimestamp.MAX_SLEW_PROPERTY + "=100");
            assertEquals(child.toString(), "TRACKING", child.get("mode"));
            assertEquals("250000000", child.get("tie interval ns"));
            assertEquals("100000", child.get("max slew ppb"));
            assertEquals("yes", child.get("valid"));
            Map<String, String> cli = Procs.keyValues(Procs.ok(Procs.cli(), "--segment", name, "info"));
            assertEquals(cli.toString(), "tracking", cli.get("mode"));
            assertEquals("250000000", cli.get("tie interval ns"));
            assertEquals("100", cli.get("max slew ppm"));
        } finally {
            Procs.run(Procs.cli(), "--segment", name, "unlink");
        }
    }

    @Test
    public void aChildJvmPublishesItsBoundSettings() throws Exception {
        String name = freshName("bound");
        try {
            // Ties a minute apart: no later process ties (and publishes its own drift) before
            // the command line has read the creator's word.
            Map<String, String> child = childMode(name, "-D" + HighResTimestamp.MODE_PROPERTY + "=tracking",
                    "-D" + HighResTimestamp.TIE_INTERVAL_PROPERTY + "=60000",
                    "-D" + HighResTimestamp.BOUND_DRIFT_PROPERTY + "=123",
                    "-D" + HighResTimestamp.BOUND_VOID_PROPERTY + "=30");
            assertEquals(child.toString(), "yes", child.get("valid"));
            // The creator's first word (at the pairing) carries its drift.
            Map<String, String> cli = Procs.keyValues(Procs.ok(Procs.cli(), "--segment", name, "info"));
            assertEquals(cli.toString(), "123", cli.get("bound drift ppm"));
        } finally {
            Procs.run(Procs.cli(), "--segment", name, "unlink");
        }
    }

    @Test
    public void aSettingOutOfTheCoresRangeIsRefusedNatively() throws Exception {
        String name = freshName("refused");
        try {
            Procs r = Procs.run(childCommand(name, "-D" + HighResTimestamp.TIE_INTERVAL_PROPERTY + "=70000"));
            assertTrue(r.toString(), r.out.startsWith("HrtsException INVALID_ARGUMENT: ")
                    && r.out.contains("outside 1 ms ..= 60 s") && r.out.contains("-Dhrts.tieIntervalMs"));
            r = Procs.run(childCommand(name, "-D" + HighResTimestamp.BOUND_VOID_PROPERTY + "=604801"));
            assertTrue(r.toString(), r.out.startsWith("HrtsException INVALID_ARGUMENT: ")
                    && r.out.contains("outside 1 s ..= 604800 s") && r.out.contains("-Dhrts.boundVoidS"));
        } finally {
            Procs.run(Procs.cli(), "--segment", name, "unlink");
        }
    }

    @Test
    public void malformedPropertiesAreRefusedWithTheirNames() {
        String[][] cases = {
            {HighResTimestamp.MODE_PROPERTY, "sideways", "is neither tracking nor frozen"},
            {HighResTimestamp.TIE_INTERVAL_PROPERTY, "1s", "is not a positive whole number"},
            {HighResTimestamp.MAX_SLEW_PROPERTY, "-5", "is not a positive whole number"},
            {HighResTimestamp.STEP_THRESHOLD_PROPERTY, "0", "is not a positive whole number"},
            {HighResTimestamp.BOUND_DRIFT_PROPERTY, "abc", "is not a positive whole number"},
            {HighResTimestamp.BOUND_VOID_PROPERTY, "-1", "is not a positive whole number"},
        };
        for (String[] c : cases) {
            String old = System.getProperty(c[0]);
            System.setProperty(c[0], c[1]);
            try {
                HrtsException e = assertThrows(HrtsException.class, OpenOptions::fromProperties);
                assertSame(HrtsException.Kind.INVALID_ARGUMENT, e.getKind());
                assertTrue(e.getMessage(), e.getMessage().contains(c[0] + "=\"" + c[1] + "\" " + c[2]));
            } finally {
                restore(c[0], old);
            }
        }
        String old = System.getProperty(HighResTimestamp.MODE_PROPERTY);
        System.setProperty(HighResTimestamp.MODE_PROPERTY, " Frozen ");
        try {
            assertEquals(new OpenOptions(Mode.FROZEN.code(), 0, 0, 0, 0, 0), OpenOptions.fromProperties());
        } finally {
            restore(HighResTimestamp.MODE_PROPERTY, old);
        }
    }

    @Test
    public void modesHaveTheirLabelsAndCodes() {
        for (Mode m : Mode.values()) {
            assertSame(m, Mode.fromLabel(m.label().toUpperCase(java.util.Locale.ROOT) + "\n"));
            assertSame(m, Mode.fromCode(m.code()));
        }
        assertEquals(Arrays.asList("tracking", "frozen"),
                Arrays.asList(Mode.TRACKING.label(), Mode.FROZEN.label()));
        assertThrows(IllegalArgumentException.class, () -> Mode.fromLabel("slewing"));
        assertThrows(NullPointerException.class, () -> Mode.fromLabel(null));
        HrtsException e = assertThrows(HrtsException.class, () -> Mode.fromCode(3));
        assertSame(HrtsException.Kind.INTERNAL, e.getKind());
        assertThrows(NullPointerException.class,
                () -> new TrackingState(null, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0));
    }

    @Test
    public void segmentInfoRendersTrackingFactsAsHrtsInfoDoes() {
        // The core formats ppm as f64 ("{}" for the slew bound, "{:.3}" for the rates).
        TrackingState t = new TrackingState(Mode.TRACKING, 1_000_000_000L, 1_500, 100_000_000L, 3, 42, -5, 6,
                -1_500, 1, -1_499, 0, 0, 0, 2);
        SegmentInfo info = new SegmentInfo("/s", 3, "tsc", "r", 1, 0, 0, 1, true, true, 10, 2, 1, 25, 10, 0, 1, 1, 0,
                5, 1, 0, 1000, 0, -3, t);
        Map<String, String> m = info.asMap();
        assertEquals("same on every CPU (within 25 ppb)", m.get("evaluation pace"));
        assertSame(SegmentInfo.Pace.SAME, info.getEvaluationPace());
        assertEquals(25, info.getEvaluationPacePpb());
        assertEquals("1.5", m.get("max slew ppm"));
        assertEquals("-1.500", m.get("frequency ppm"));
        assertEquals("0.001", m.get("slew ppm"));
        assertEquals("-1.499", m.get("slope correction ppm"));
        assertEquals("-5", m.get("last tie offset ns"));
        assertEquals("2", m.get("repairs"));
        assertEquals(-3, info.getOffsetNanoseconds());
        assertSame(t, info.getTrackingState());
        List<String> keys = new ArrayList<>(m.keySet());
        assertEquals(keys.indexOf("evaluation pace") + 1, keys.indexOf("mode"));
        assertEquals(keys.indexOf("moves") + 1, keys.indexOf("offset ns"));
        assertEquals("repairs", keys.get(keys.size() - 1));
        assertEquals(-1.499, t.correctionPpm(), 1e-12);
    }

    private static void restore(String property, String old) {
        if (old == null) {
            System.clearProperty(property);
        } else {
            System.setProperty(property, old);
        }
    }

    private static String freshName(String tag) {
        return "/hrts-junit-" + tag + "-" + ProcessHandle.current().pid() + "-" + System.nanoTime();
    }

    /** java -Xcheck:jni -Dhrts.segment=NAME [properties] TestMains mode, on the test classpath. */
    private static List<String> childCommand(String segment, String... properties) {
        List<String> cmd = Procs.javaMain("mode");
        List<String> jvm = new ArrayList<>();
        jvm.add("-Xcheck:jni");
        jvm.add("-D" + HighResTimestamp.SEGMENT_PROPERTY + "=" + segment);
        jvm.addAll(Arrays.asList(properties));
        cmd.addAll(1, jvm);
        return cmd;
    }

    private static Map<String, String> childMode(String segment, String... properties) throws Exception {
        Procs r = Procs.run(childCommand(segment, properties));
        assertEquals(r.toString(), 0, r.exit);
        assertFalse(r.toString(), r.out.contains("HrtsException"));
        return Procs.keyValues(r.out);
    }
}
