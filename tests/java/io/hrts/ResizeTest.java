package io.hrts;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.Test;

/**
 * Another process truncating, shrinking, growing or replacing a segment's name must not
 * kill or stop the processes attached to it (issue: SIGBUS in every attached reader). The
 * readers are real processes in all three languages: the C test program, the hrts command
 * (Rust) and a child JVM, each stamping in a tight loop while this test damages the name.
 */
public class ResizeTest {
    /** A started reader and what it printed. */
    private static final class Reader {
        final String what;
        final Process process;
        final BufferedReader out;
        final StringBuilder text = new StringBuilder();

        Reader(String what, List<String> cmd, String segment) throws Exception {
            this.what = what;
            ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
            pb.environment().put("HRTS_SEGMENT", segment);
            process = pb.start();
            process.getOutputStream().close();
            out = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
        }

        /** Waits for the line that says the reader is attached and stamping. */
        void awaitAttached(String marker) throws Exception {
            for (String line; (line = out.readLine()) != null; ) {
                text.append(line).append('\n');
                if (line.contains(marker)) {
                    return;
                }
            }
            throw new AssertionError(what + " ended before it attached:\n" + text);
        }

        /** Reads the rest and returns the exit status. */
        int finish() throws Exception {
            for (String line; (line = out.readLine()) != null; ) {
                text.append(line).append('\n');
            }
            if (!process.waitFor(60, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                throw new AssertionError(what + " hangs:\n" + text);
            }
            return process.exitValue();
        }
    }

    @Test
    public void resizingOrReplacingTheNameNeverReachesAttachedReaders() throws Exception {
        String segment = "/hrts-junit-resize-" + ProcessHandle.current().pid();
        String cli = Procs.cli();
        Procs.ok(cli, "--segment", segment, "now");
        List<Reader> readers = new ArrayList<>();
        try {
            Reader c = new Reader("C reader", Arrays.asList(Procs.cTest(), "stamp-for", "3000"), segment);
            List<String> jvm = Procs.javaMain("stamp-for", "3000");
            jvm.add(1, "-Dhrts.segment=" + segment);
            Reader java = new Reader("JVM reader", jvm, segment);
            // The hrts command's test loop: one stamp line per millisecond for 3 s.
            Reader rust = new Reader("hrts test", Arrays.asList(cli, "test", "3000", "0.001"), segment);
            readers.addAll(Arrays.asList(c, java, rust));
            c.awaitAttached("attached");
            java.awaitAttached("attached");
            rust.awaitAttached("Version=");

            try (RandomAccessFile name = new RandomAccessFile("/dev/shm" + segment, "rw")) {
                for (long size : new long[] {0, 100, 1 << 20, 4096, 0}) {
                    name.setLength(size);
                    Thread.sleep(100);
                }
            }
            // Replaced: removed and made anew by another process.
            Procs.ok(cli, "--segment", segment, "unlink");
            Procs.ok(cli, "--segment", segment, "now");

            for (Reader r : readers) {
                int exit = r.finish();
                assertEquals(r.what + " exits normally (no signal):\n" + r.text, 0, exit);
            }
            assertTrue(c.text.toString(), c.text.toString().contains("backwards 0 errors 0"));
            assertTrue(java.text.toString(), java.text.toString().contains("backwards 0"));
            assertNonDecreasing(rust.text.toString());
        } finally {
            for (Reader r : readers) {
                r.process.destroyForcibly();
            }
            Procs.run(cli, "--segment", segment, "unlink");
        }
    }

    /** The `seconds.micros = HEX.HEX` lines of `hrts test` never go backwards. */
    private static void assertNonDecreasing(String text) {
        long last = 0;
        int lines = 0;
        for (String line : text.split("\n")) {
            int eq = line.indexOf(" = ");
            if (eq < 0) {
                continue;
            }
            String[] parts = line.substring(0, eq).split("\\.");
            long micros = Long.parseLong(parts[0]) * 1_000_000L + Long.parseLong(parts[1]);
            assertTrue("went backwards at " + line, micros >= last);
            last = micros;
            lines++;
        }
        assertEquals(text, 3000, lines);
    }
}
