package io.hrts;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.Test;

/** `java -jar hrts.jar`: the IBMTS self-test output (Figures 4 and 6) and its arguments. */
public class SelfTestTest {
    private static final Pattern LOOP_LINE = Pattern.compile("^(\\d+)\\.(\\d{6}) = ([0-9A-F]{8,})\\.([0-9A-F]{8})$");

    private static List<String> loopLines(String out) {
        List<String> r = new ArrayList<>();
        for (String l : out.split("\n")) {
            if (LOOP_LINE.matcher(l).matches()) {
                r.add(l);
            }
        }
        return r;
    }

    @Test
    public void loopLineIsFigure4sFormat() {
        // The example of IBMTS's Figure 4, and what the Rust core's TimeStamp::ibmts_line gives.
        assertEquals("1019168389.013063 = 3CBF4685.00003307", SelfTest.ibmtsLine(1019168389L, 13063L));
        assertEquals("0.000000 = 00000000.00000000", SelfTest.ibmtsLine(0, 0));
    }

    /** The same text as the CLI's {@code loop_header::tests::figure_4_in_the_shared_format}. */
    @Test
    public void loopHeaderIsTheCliFormat() {
        assertEquals("hrts High Resolution Timestamp Test: Version=0x0001000000000005\n"
                + "Beginning loop for 10 iterations, using a 0 second delay each pass.\n"
                + "Expect to complete at 22:19:50 UTC.",
                SelfTest.loopHeader(0x0001000000000005L, 10, 0, 1019168390L));
        assertTrue(SelfTest.loopHeader(0xABCDL, 3, 2, 0).startsWith(
                "hrts High Resolution Timestamp Test: Version=0x000000000000ABCD\n"));
    }

    /**
     * The child JVMs run on the JDK these tests run on: the JDK 25 run must not test JDK 17's
     * self-test (junitOnJdk once inherited the test task's java for its children).
     */
    @Test
    public void childJvmsRunOnTheJdkUnderTest() throws Exception {
        Procs r = Procs.run(Arrays.asList(ChildJvm.prop("hrts.test.java"), "-XshowSettings:properties", "-version"));
        assertEquals(r.toString(), 0, r.exit);
        Matcher m = Pattern.compile("(?m)^\\s*java\\.home = (.+)$").matcher(r.err + r.out);
        assertTrue("no java.home in the child's settings:\n" + r, m.find());
        assertEquals(new java.io.File(System.getProperty("java.home")).getCanonicalPath(),
                new java.io.File(m.group(1).trim()).getCanonicalPath());
    }

    @Test
    public void printsWhatIbmtsPrintedAndWhatHrtsKnows() throws Exception {
        Procs r = ChildJvm.runJar(Collections.emptyList(), "7", "0");
        assertEquals(r.toString(), 0, r.exit);
        String out = r.out;
        assertTrue(r.toString(), out.startsWith(HighResTimestamp.getCopyright() + "\n"));
        long v = HighResTimestamp.getLogicVersion();
        assertTrue(r.toString(), out.contains("Version=" + v + " (0x" + String.format("%016X", v) + " == "
                + HighResTimestamp.versionString(v) + ")"));
        assertTrue(r.toString(), out.matches("(?s).*\nProcess ID=\\d+\n.*"));
        assertTrue(r.toString(), out.matches("(?s).*\nThread ID=\\d+\n.*"));
        SegmentInfo info = HighResTimestamp.getSegmentInfo();
        assertTrue(r.toString(), out.contains("Segment: " + info.getName() + "\n"));
        assertTrue(r.toString(), out.contains("Counter source: " + info.getSource() + " (" + info.getReason() + ")\n"));
        assertTrue(r.toString(), out.contains("Calibrated frequency: " + info.getFrequency() + " Hz\n"));
        assertTrue(r.toString(), out.contains("Reliability evaluation: " + info.evaluationSummary() + "\n"));
        assertTrue(r.toString(), out.matches("(?s).*\nGeneration: \\d+\n.*"));
        assertTrue(r.toString(), out.contains("Base Info:\n\tFrequency: " + info.getFrequency() + "\n\tCounter: "));
        assertTrue(r.toString(), out.contains("Microseconds since 1/1/70 epoch using Long="));
        assertTrue(r.toString(), out.contains("hrts High Resolution Timestamp Test: Version=0x"
                + String.format("%016X", v) + "\nBeginning loop for 7 iterations, using a 0 second delay each pass.\n"));
        assertTrue(r.toString(), out.matches("(?s).*\nExpect to complete at \\d\\d:\\d\\d:\\d\\d UTC\\.\n.*"));

        List<String> loop = loopLines(out);
        assertEquals(r.toString(), 7, loop.size());
        String prev = null;
        for (String l : loop) {
            Matcher m = LOOP_LINE.matcher(l);
            assertTrue(m.matches());
            assertEquals(l, Long.parseLong(m.group(1)), Long.parseLong(m.group(3), 16));
            assertEquals(l, Long.parseLong(m.group(2)), Long.parseLong(m.group(4), 16));
            assertTrue("non-decreasing: " + prev + " then " + l, prev == null || l.compareTo(prev) >= 0);
            prev = l;
        }
        assertTrue(r.toString(), out.contains("Revised Base Info:\n\tFrequency: "));
        int captures = out.indexOf("Results from 10 consecutive captures:\n");
        assertTrue(r.toString(), captures > 0);
        String tail = out.substring(captures);
        assertEquals(r.toString(), 10, tail.split("Microseconds since 1/1/70 epoch=", -1).length - 1);
        assertTrue(r.toString(), out.endsWith("self-test: OK\n"));
    }

    @Test
    public void nativeTestLoopHasTheSameFormat() throws Exception {
        // `hrts test N` (Rust CLI) prints the loop lines the same way.
        String out = Procs.ok(Procs.cli(), "test", "3");
        assertEquals(out, 3, loopLines(out).size());
    }

    @Test
    public void noResetSkipsTheReset() throws Exception {
        long g = HighResTimestamp.getGeneration();
        Procs r = ChildJvm.runJar(Collections.emptyList(), "--no-reset", "2");
        assertEquals(r.toString(), 0, r.exit);
        assertFalse(r.toString(), r.out.contains("Revised Base Info:"));
        assertTrue(r.toString(), r.out.contains("Base reset skipped"));
        assertEquals(2, loopLines(r.out).size());
        assertEquals("the segment's generation is unchanged", g, HighResTimestamp.getGeneration());
    }

    @Test
    public void badArgumentsGiveUsageAndExit2() throws Exception {
        String[][] bad = {{"abc"}, {"-5"}, {"3", "x"}, {"1", "2", "3"}, {"--bogus"}, {"3", "99999"}};
        for (String[] args : bad) {
            Procs r = ChildJvm.runJar(Collections.emptyList(), args);
            assertEquals(r.toString(), 2, r.exit);
            assertTrue(r.toString(), r.err.contains("usage: "));
            assertEquals(r.toString(), "", r.out);
        }
        Procs help = ChildJvm.runJar(Collections.emptyList(), "--help");
        assertEquals(help.toString(), 0, help.exit);
        assertTrue(help.toString(), help.out.contains("EVERY process"));
        assertTrue(help.toString(), help.out.contains("--no-reset"));
    }
}
