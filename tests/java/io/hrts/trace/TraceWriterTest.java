package io.hrts.trace;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import io.hrts.HrtsException;
import java.io.BufferedReader;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.After;
import org.junit.Before;
import org.junit.Assume;
import org.junit.Test;

/** The Java trace writer, checked with the hrts CLI reading and merging what it wrote. */
public class TraceWriterTest {
    private Path dir;

    @Before
    public void makeDir() throws IOException {
        dir = Files.createTempDirectory("hrts-java-trace");
    }

    @After
    public void removeDir() throws IOException {
        try (java.util.stream.Stream<Path> s = Files.walk(dir)) {
            s.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        }
    }

    private static String cli() {
        String c = System.getProperty("hrts.test.cli");
        assertNotNull("hrts.test.cli is set by the build", c);
        return c;
    }

    /** Runs the CLI to completion: {exit code, stdout + stderr}. */
    private static Object[] run(String... args) throws Exception {
        List<String> cmd = new ArrayList<>();
        cmd.add(cli());
        cmd.addAll(Arrays.asList(args));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        p.getOutputStream().close();
        String out = read(p.getInputStream());
        if (!p.waitFor(60, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            fail("timed out: " + cmd);
        }
        return new Object[] {p.exitValue(), out};
    }

    private static String read(InputStream in) throws IOException {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        byte[] buf = new byte[8192];
        for (int n; (n = in.read(buf)) > 0; ) {
            b.write(buf, 0, n);
        }
        return new String(b.toByteArray(), StandardCharsets.UTF_8);
    }

    private static String ok(String... args) throws Exception {
        Object[] r = run(args);
        assertEquals("hrts " + String.join(" ", args) + ": " + r[1], 0, r[0]);
        return (String) r[1];
    }

    @Test
    public void eventsAreWrittenInAFileTheCliReads() throws Exception {
        Path f = dir.resolve("java.htr");
        long[] stamps = new long[4];
        TraceWriter w = TraceWriter.open(f, "java-host", "junit");
        stamps[0] = w.event(EventKind.BEGIN, "work");
        stamps[1] = w.event(EventKind.SEND, "msg", 42, "hello".getBytes(StandardCharsets.UTF_8));
        stamps[2] = w.event(EventKind.RECEIVE, "msg", 42, null);
        stamps[3] = w.event(EventKind.END, "work");
        w.close();
        w.close(); // twice is fine
        try {
            w.event(EventKind.INSTANT, "late");
            fail("an event after close must be refused");
        } catch (IllegalStateException expected) {
            assertTrue(expected.getMessage().contains("closed"));
        }
        for (int i = 1; i < stamps.length; i++) {
            assertTrue("stamps increase", stamps[i] > stamps[i - 1]);
        }
        String info = ok("trace", "info", f.toString());
        assertTrue(info, info.contains("host: java-host\n"));
        assertTrue(info, info.contains("label: junit\n"));
        assertTrue(info, info.contains("kind: process\n"));
        assertTrue(info, info.contains("events: 4\n"));
        assertTrue(info, info.contains("complete: yes\n"));
        String dump = ok("trace", "dump", f.toString());
        assertTrue(dump, dump.contains("e " + stamps[1] + " send 42 msg hello\n"));
        assertTrue(dump, dump.contains("e " + stamps[2] + " recv 42 msg\n"));
    }

    /**
     * On the portable implementation a sync round is refused with the reason (the sync protocol
     * is the native library's), and the file, on this JVM's own timeline, merges unsynced.
     */
    @Test
    public void onThePortableImplementationSyncIsRefusedAndTheFileMergesUnsynced() throws Exception {
        Assume.assumeTrue(io.hrts.HighResTimestamp.implementation().isPortable());
        Path f = dir.resolve("portable.htr");
        try (TraceWriter w = TraceWriter.open(f, "java-host", "junit")) {
            HrtsException e = assertThrows(HrtsException.class, () -> w.sync("127.0.0.1:7700", SyncPhase.START, 20));
            assertEquals(HrtsException.Kind.LOAD, e.getKind());
            assertTrue(e.getMessage(), e.getMessage().contains("portable implementation (forced by -Dhrts.fallback=force")
                    && e.getMessage().contains("hrts merge --allow-unsynced"));
            w.event(EventKind.SEND, "msg", 7, null);
            w.event(EventKind.RECEIVE, "msg", 7, null);
        }
        String info = ok("trace", "info", f.toString());
        assertTrue(info, info.contains("segment: none (portable implementation)\n"));
        assertTrue(info, info.contains("source: nanotime\n"));
        Object[] refused = run("merge", f.toString(), "--out", dir.resolve("g.htr").toString());
        assertTrue(refused[1].toString(), !refused[0].equals(0) && refused[1].toString().contains("--allow-unsynced"));
        String report = ok("merge", f.toString(), "--allow-unsynced", "--out", dir.resolve("g.htr").toString());
        assertTrue(report, report.contains("causality hrts: 1 messages, 0 violations"));
        assertTrue(report, report.contains("merged: 1 traces, 2 events"));
    }

    @Test
    public void syncRoundsLetTheMergePlaceTheEvents() throws Exception {
        Assume.assumeFalse("the sync protocol is the native library's", io.hrts.HighResTimestamp.implementation().isPortable());
        Process master = new ProcessBuilder(cli(), "sync", "serve", "--listen", "127.0.0.1:0",
                "--idle-exit", "10", "--max-exchanges", "40").start();
        try {
            BufferedReader out = new BufferedReader(
                    new InputStreamReader(master.getInputStream(), StandardCharsets.UTF_8));
            String first = out.readLine();
            assertNotNull("the master announces its address", first);
            assertTrue(first, first.startsWith("listening: "));
            String addr = first.substring("listening: ".length());
            Path f = dir.resolve("synced.htr");
            try (TraceWriter w = TraceWriter.open(f, "java-host", "junit")) {
                SyncResult start = w.sync(addr, SyncPhase.START, 20);
                assertTrue(start.toString(), start.getBoundNanos() > 0);
                assertTrue(start.toString(), Math.abs(start.getOffsetNanos()) < 1e6);
                w.event(EventKind.SEND, "msg", 7, null);
                w.event(EventKind.RECEIVE, "msg", 7, null);
                w.sync(addr, SyncPhase.END, 20);
            }
            assertTrue("the master stops once it answered 40 exchanges", master.waitFor(20, TimeUnit.SECONDS));
            String report = ok("merge", f.toString(), "--out", dir.resolve("g.htr").toString());
            assertTrue(report, report.contains("causality hrts: 1 messages, 0 violations"));
            assertTrue(report, report.contains("merged: 1 traces, 2 events"));
        } finally {
            master.destroyForcibly();
            master.waitFor();
        }
    }

    @Test
    public void mistakesAreExceptionsNotCrashes() throws Exception {
        try (TraceWriter w = TraceWriter.open(dir.resolve("m.htr"), null, null)) {
            try {
                w.sync("not an address", SyncPhase.START);
                fail("a bad master address must be refused");
            } catch (HrtsException e) {
                assertEquals(HrtsException.Kind.INVALID_ARGUMENT, e.getKind());
                assertTrue(e.getMessage(), e.getMessage().contains("HOST:PORT"));
            }
            try {
                w.sync("127.0.0.1:1", SyncPhase.START, 0);
                fail("0 exchanges must be refused");
            } catch (IllegalArgumentException expected) {
                // checked in Java
            }
            try {
                w.event(EventKind.INSTANT, null);
                fail("a null name must be refused");
            } catch (NullPointerException expected) {
                // checked in Java
            }
        }
        try {
            TraceWriter.open(dir.resolve("no/such/dir/x.htr"), null, null);
            fail("a file in a missing directory cannot be created");
        } catch (HrtsException e) {
            assertEquals(HrtsException.Kind.OS, e.getKind());
            assertTrue(e.getMessage(), e.getMessage().contains("cannot create trace file"));
        }
    }
}
