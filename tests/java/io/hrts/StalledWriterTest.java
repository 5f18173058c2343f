package io.hrts;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.Test;

/**
 * A process stopped with SIGSTOP for 10 s while it holds the writer role (taken and kept by
 * {@code hrts debug hold-writer --until-eof}) while C ({@code hrts_test fuzz-read}), Rust
 * ({@code hrts debug fuzz-read}) and Java ({@link TestMains} fuzz-read) readers stamp: no
 * stamp goes backwards, none is more than 1 ms from the system clock, none waits (uses a
 * millisecond of CPU); when it resumes its late tie publishes, without a repair or a new
 * generation. Real processes, a segment of the test's own.
 */
public class StalledWriterTest {

    /** A child with HRTS_SEGMENT set, its first line checked. */
    private static final class Child {
        final Process p;
        final BufferedReader out;

        Child(List<String> cmd, String segment, String first) throws Exception {
            ProcessBuilder pb = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.INHERIT);
            pb.environment().put("HRTS_SEGMENT", segment);
            p = pb.start();
            out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
            // The readers say which timeline they stamp: "attached (timeline: ...)".
            String line = out.readLine();
            assertTrue(cmd + ": " + line, line != null && line.startsWith(first));
        }

        /** The counts of its "reader NAME: k v k v ..." line. */
        Map<String, Long> counts() throws Exception {
            String line;
            while ((line = out.readLine()) != null && !line.startsWith("reader ")) {
                // other output
            }
            assertTrue("no reader line", line != null);
            assertTrue(p.waitFor(60, TimeUnit.SECONDS));
            assertEquals(line, 0, p.exitValue());
            String[] w = line.split(" ");
            Map<String, Long> m = new HashMap<>();
            for (int i = 2; i + 1 < w.length; i += 2) {
                m.put(w[i], Long.parseLong(w[i + 1]));
            }
            System.err.println(line);
            return m;
        }
    }

    private static void signal(long pid, String sig) throws Exception {
        Process k = new ProcessBuilder("kill", "-" + sig, Long.toString(pid)).start();
        assertTrue(k.waitFor(10, TimeUnit.SECONDS));
        assertEquals(0, k.exitValue());
    }

    private static Map<String, String> info(String segment) throws Exception {
        return Procs.keyValues(Procs.ok(Procs.cli(), "--segment", segment, "info"));
    }

    @Test
    public void aStoppedWriterCostsCRustAndJavaReadersNothing() throws Exception {
        String cli = Procs.testingCli();
        String segment = "/hrts-stall-junit-" + ProcessHandle.current().pid();
        List<Child> readers = new ArrayList<>();
        Child holder = null;
        try {
            Procs.ok(Procs.cli(), "--segment", segment, "now");
            Map<String, String> before = info(segment);
            String ms = "13000";
            readers.add(new Child(Arrays.asList(Procs.cTest(), "fuzz-read", ms), segment, "attached"));
            readers.add(new Child(Arrays.asList(cli, "debug", "fuzz-read", ms), segment, "attached"));
            readers.add(new Child(Procs.javaMain("fuzz-read", ms), segment, "attached"));
            holder = new Child(Arrays.asList(cli, "debug", "hold-writer", "--until-eof"), segment, "holding");
            signal(holder.p.pid(), "STOP");
            Thread.sleep(10_000);
            signal(holder.p.pid(), "CONT");
            holder.p.getOutputStream().close();
            assertEquals("its late tie publishes", "released", holder.out.readLine());
            assertTrue(holder.p.waitFor(30, TimeUnit.SECONDS));
            for (Child r : readers) {
                Map<String, Long> c = r.counts();
                assertTrue(c.toString(), c.get("stamps") > 1000);
                assertEquals(c.toString(), 0L, (long) c.get("backwards"));
                assertEquals(c.toString(), 0L, (long) c.get("off"));
                assertEquals(c.toString(), 0L, (long) c.get("errors"));
                // A stamp that waited for the stopped writer used a second of CPU and of wall
                // time, and every stamp during the stop did. A vCPU descheduled under a running
                // thread counts as its CPU time too, so a few stamps over 1 ms of CPU alone are
                // the host's doing: a reader fails when it has such stamps and one of them took
                // half a second.
                assertTrue(c.toString(), c.get("slow") <= 3 || c.get("longest") < 500_000_000L);
            }
            Map<String, String> after = info(segment);
            assertEquals("no repair", before.get("repairs"), after.get("repairs"));
            assertEquals("a slew, no step", before.get("generation"), after.get("generation"));
        } finally {
            for (Child r : readers) {
                r.p.destroyForcibly();
            }
            if (holder != null) {
                holder.p.destroyForcibly();
                holder.p.waitFor(10, TimeUnit.SECONDS);
            }
            Procs.run(Procs.cli(), "--segment", segment, "unlink");
        }
    }
}
