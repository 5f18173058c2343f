package io.hrts;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.Test;

/**
 * The JVM and native processes (the Rust CLI {@code hrts}, the C program {@code hrts_test})
 * on one segment: same base, causally ordered stamps in both directions, one event log, and
 * base resets seen across the language boundary. All processes are real; the segment is the
 * build's own (system property hrts.segment, HRTS_SEGMENT for the children).
 */
public class CrossLanguageTest {

    private static Map<String, String> nativeInfo() throws Exception {
        return Procs.keyValues(Procs.ok(Procs.cli(), "info"));
    }

    @Test
    public void nativeProcessReportsTheSameBase() throws Exception {
        HighResTimestamp.open();
        // A base move (wrap avoidance) between the snapshots changes counter and ns (not the
        // timeline): compare only when the JVM saw the same base before and after.
        for (int attempt = 0; ; attempt++) {
            BaseInfo before = HighResTimestamp.getBaseInfoSnapshot();
            Map<String, String> n = nativeInfo();
            BaseInfo after = HighResTimestamp.getBaseInfoSnapshot();
            if (!before.equals(after) && attempt < 10) {
                continue;
            }
            SegmentInfo info = HighResTimestamp.getSegmentInfo();
            assertEquals(n.toString(), info.getName(), n.get("segment"));
            assertEquals(n.toString(), info.getSource(), n.get("source"));
            assertEquals(n.toString(), info.getReason(), n.get("reason"));
            assertEquals(n.toString(), Long.toString(before.frequency()), n.get("frequency"));
            assertEquals(n.toString(), Long.toUnsignedString(before.counter()), n.get("base counter"));
            assertEquals(n.toString(), Long.toString(before.nanoseconds()), n.get("base ns"));
            assertEquals(n.toString(), Long.toString(before.generation()), n.get("generation"));
            assertEquals(n.toString(), Long.toString(info.getCreatorPid()), n.get("creator pid"));
            long[] ibmts = HighResTimestamp.getBaseInfo();
            assertEquals(before.nanoseconds() / 1_000_000_000L, ibmts[2]);
            return;
        }
    }

    @Test
    public void jvmToNativeCausality() throws Exception {
        int rounds = 5000;
        HighResTimestamp.open();
        Process p = new ProcessBuilder(Procs.cli(), "echo").redirectError(ProcessBuilder.Redirect.INHERIT).start();
        int violations = 0;
        String firstViolation = null;
        try (Writer w = new OutputStreamWriter(p.getOutputStream(), StandardCharsets.UTF_8);
                BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
            for (int i = 0; i < rounds; i++) {
                // Unordered before the write (an early read only makes it smaller); ordered
                // after the answer (must not be read before it arrived).
                long before = HighResTimestamp.getEpochNanoseconds();
                w.write("x\n");
                w.flush();
                String line = r.readLine();
                long after = HighResTimestamp.getEpochNanosecondsOrdered();
                assertTrue("hrts echo answered round " + i, line != null);
                long n = Long.parseLong(line.trim());
                if (!(before <= n && n <= after)) {
                    violations++;
                    if (firstViolation == null) {
                        firstViolation = "round " + i + ": " + before + " <= " + n + " <= " + after;
                    }
                }
            }
        } finally {
            assertTrue(p.waitFor(30, TimeUnit.SECONDS));
        }
        assertEquals("JVM -> hrts echo -> JVM rounds out of order (first: " + firstViolation + ")", 0, violations);
    }

    @Test
    public void nativeToJvmCausality() throws Exception {
        // The C driver stamps, pings a child JVM (TestMains echo), reads its stamp, stamps
        // again and checks before <= java <= after for every round.
        int rounds = 3000;
        List<String> cmd = new ArrayList<>();
        cmd.add(Procs.cTest());
        cmd.add("drive");
        cmd.add(Integer.toString(rounds));
        cmd.addAll(Procs.javaMain("echo"));
        Procs r = Procs.run(cmd);
        assertEquals(r.toString(), 0, r.exit);
        assertTrue(r.toString(), r.out.contains("drive: " + rounds + " rounds, " + rounds + " ordered, 0 violations"));
    }

    private static void append(Path file, long ns, String label) throws Exception {
        Files.write(file, (ns + " " + label + "\n").getBytes(StandardCharsets.UTF_8),
                java.nio.file.StandardOpenOption.CREATE, java.nio.file.StandardOpenOption.APPEND);
    }

    @Test
    public void threeLanguagesLogInCausalOrder() throws Exception {
        Path dir = Paths.get(ChildJvm.prop("hrts.test.stateDir"));
        Files.createDirectories(dir);
        Path log = dir.resolve("events-" + System.nanoTime() + ".log");
        List<String> expected = new ArrayList<>();
        try {
            for (int round = 0; round < 4; round++) {
                // C: three events, in its own process, before anything below happens.
                Procs.ok(Procs.cTest(), "stamp-events", log.toString(), "3");
                for (int i = 0; i < 3; i++) {
                    expected.add("c " + i);
                }
                // Rust CLI: one stamp, written by the JVM after the process has exited.
                long rust = Long.parseLong(Procs.ok(Procs.cli(), "now").trim());
                append(log, rust, "rust " + round);
                expected.add("rust " + round);
                // Java: two events.
                for (int i = 0; i < 2; i++) {
                    append(log, HighResTimestamp.getEpochNanosecondsOrdered(), "java " + round + "." + i);
                    expected.add("java " + round + "." + i);
                }
            }
            List<String> lines = Files.readAllLines(log, StandardCharsets.UTF_8);
            assertEquals(expected.size(), lines.size());
            List<String[]> events = new ArrayList<>();
            for (String l : lines) {
                String[] parts = l.split(" ", 2);
                events.add(parts);
            }
            events.sort(Comparator.comparingLong(e -> Long.parseLong(e[0])));
            List<String> byStamp = new ArrayList<>();
            for (String[] e : events) {
                byStamp.add(e[1]);
            }
            assertEquals("events sorted by stamp come out in causal order\n" + String.join("\n", lines),
                    expected, byStamp);
            // And no two events share a stamp.
            for (int i = 1; i < events.size(); i++) {
                assertTrue(Long.parseLong(events.get(i)[0]) > Long.parseLong(events.get(i - 1)[0]));
            }
        } finally {
            Files.deleteIfExists(log);
        }
    }

    @Test
    public void baseResetsCrossTheLanguageBoundary() throws Exception {
        // Java resets: the native process sees the new generation and base.
        BaseInfo mine = HighResTimestamp.resetBase();
        long g = mine.generation();
        assertEquals(g, HighResTimestamp.getGeneration());
        Map<String, String> n = nativeInfo();
        assertEquals(n.toString(), Long.toString(g), n.get("generation"));

        // The native process resets: Java sees it at once.
        Map<String, String> reset = Procs.keyValues(Procs.ok(Procs.cli(), "reset"));
        assertEquals(reset.toString(), Long.toString(g + 1), reset.get("generation"));
        assertEquals(g + 1, HighResTimestamp.getGeneration());
        BaseInfo after = HighResTimestamp.getBaseInfoSnapshot();
        assertEquals(g + 1, after.generation());
        assertEquals(reset.get("base ns"), Long.toString(after.nanoseconds()));
        assertEquals(reset.get("base counter"), Long.toUnsignedString(after.counter()));
        // setBaseInfo (IBMTS, void) too.
        HighResTimestamp.setBaseInfo();
        assertEquals(Long.toString(g + 2), nativeInfo().get("generation"));
    }
}
