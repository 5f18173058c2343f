package io.hrts;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.Test;

/**
 * Issue 36, "Done when" 1 in all three languages: the counter disrupted under a running daemon
 * (jumps forward 5 ms, jumps back 5 ms, stops for 2 s, runs 300 ppm fast), and done-when 2's
 * VMClock disruption marker bumped under another (its page a file with the kernel's layout), while a C reader
 * ({@code hrts_test bound-check}), a child JVM ({@link TestMains} {@code bound-check}) and the Rust
 * reader ({@code hrts debug bound-check}) take bounded stamps back to back from its host page. The
 * Rust half alone is native/cli/tests/disruption.rs.
 *
 * <p>The event is the test build's counter hook ({@code HRTS_TEST_COUNTER}): it must act in every
 * process, as a hypervisor's would, so each reader runs a {@code testing}-feature build of its
 * library (target/debug: libhrts.so by {@code LD_LIBRARY_PATH}, libhrts_jni.so by
 * {@code -Dhrts.native.library}), as the daemon runs the testing hrts. For each event and each
 * reader: it gets no interval ({@code UNSYNCHRONIZED}: the page says {@code disrupted}, or its own
 * check refuses) from the event on, never before it; no interval that misses {@code
 * CLOCK_REALTIME} in the whole run; intervals again before it ends, once the line is learned
 * again; and the page is synchronized at the end.
 */
public class DisruptionAcrossLanguagesTest {
    /**
     * The daemon's event this long after its start: its page must be synchronized LEAD_NS before
     * (0.3 s after the start with the five daemons at once on an idle 2-vCPU machine).
     */
    private static final long EVENT_AFTER_NS = 7_000_000_000L;
    /** The readers stamp from this long before the event ... */
    private static final long LEAD_NS = 2_000_000_000L;
    /** ... for this long. */
    private static final long READ_MS = 8_000;

    /** The event that bumps the VMClock page's disruption marker (no counter hook). */
    private static final String VMCLOCK = "vmclock";

    @Test
    public void everyReaderGetsNoIntervalFromACounterDisruptionUntilTheLineIsLearnedAgain() throws Exception {
        String[][] events = {
            {"jump:+5ms", "counter ahead"},
            {"back:5ms", "counter behind"},
            // A stop that began inside a round reads as a counter that fell behind.
            {"stop:2s", "counter stopped|counter behind"},
            {"rate:+300ppm", "counter ahead"},
            // Done-when 2's marker: the hypervisor's VMClock page (a file with the kernel's
            // layout) announces a disruption the counter does not show.
            {VMCLOCK, "VMClock disruption marker changed"},
        };
        String cli = Procs.testingCli();
        // Every host reader opens this user's per-user segment too (its unique stamps and
        // sequence numbers keep their state there): removed at the end if the test made it.
        String own = "/hrts-" + Files.getAttribute(Path.of("/proc/self"), "unix:uid");
        boolean hadOwn = Files.exists(Path.of("/dev/shm" + own));
        // The events at once, each with its daemon and three readers.
        ExecutorService pool = Executors.newFixedThreadPool(events.length);
        try {
            List<Future<String>> runs = new ArrayList<>();
            for (String[] e : events) {
                runs.add(pool.submit(() -> run(cli, e[0], e[1])));
            }
            for (Future<String> f : runs) {
                try {
                    System.out.println(f.get(180, TimeUnit.SECONDS));
                } catch (ExecutionException e) {
                    // The event's own failure (an AssertionError), not the pool's wrapper.
                    if (e.getCause() instanceof Error) {
                        throw (Error) e.getCause();
                    }
                    throw e.getCause() instanceof Exception ? (Exception) e.getCause() : e;
                }
            }
        } finally {
            pool.shutdownNow();
            if (!hadOwn && Files.exists(Path.of("/dev/shm" + own))) {
                Procs.run(List.of(cli, "--segment", own, "unlink"));
            }
        }
    }

    /** One event: its daemon, its three readers; returns what they measured. */
    private static String run(String cli, String kind, String expect) throws Exception {
        Path dir = Files.createTempDirectory("hrts-disruption-languages");
        Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwxr-xr-x"));
        long at = TestMains.realtimeNanos() + EVENT_AFTER_NS;
        String event = kind + "@" + at;
        Map<String, String> env = new HashMap<>();
        env.put("HRTS_HOST", "on");
        env.put("HRTS_HOST_USER", Files.getAttribute(Path.of("/proc/self"), "unix:uid").toString());
        env.put("HRTS_HOST_DIR", dir.toString());
        // The host page, not the build's per-user segment (a named segment wins).
        env.put("HRTS_SEGMENT", null);
        VmclockPage vmclock = null;
        if (kind.equals(VMCLOCK)) {
            vmclock = new VmclockPage(dir.resolve("vmclock0"));
            vmclock.update();
        } else {
            env.put("HRTS_TEST_COUNTER", event);
        }
        env.put("HRTS_BOUND_DRIFT_PPM", null);
        env.put("HRTS_BOUND_VOID_S", null);
        ProcessBuilder daemonPb = new ProcessBuilder(cli, "daemon", "--foreground", "--dir", dir.toString())
                .redirectErrorStream(true).redirectOutput(dir.resolve("daemon.log").toFile());
        Procs.withEnv(daemonPb, env);
        daemonPb.environment().put("HRTS_TIE_INTERVAL_MS", "100");
        // The clock's own bound fixed at 50 µs: this machine's kernel may say its clock is
        // unsynchronized, which gives no interval at all.
        daemonPb.environment().put("HRTS_TEST_BOUND", "synchronized,50000");
        if (vmclock != null) {
            daemonPb.environment().put("HRTS_VMCLOCK", vmclock.file.toString());
        }
        Process daemon = daemonPb.start();
        List<Process> readers = new ArrayList<>();
        try {
            Map<String, String> info = new LinkedHashMap<>();
            long waitUntil = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (!"synchronized".equals(info.get("bound status")) && System.nanoTime() < waitUntil) {
                Thread.sleep(100);
                info = Procs.keyValues(Procs.run(List.of(cli, "info"), env).out);
            }
            assertEquals(event + ": the daemon's page: " + info + "\n" + Files.readString(dir.resolve("daemon.log")),
                    "synchronized", info.get("bound status"));
            long now = TestMains.realtimeNanos();
            assertTrue(event + ": the daemon was synchronized " + (at - now) / 1_000_000 + " ms before the event, "
                    + "not " + LEAD_NS / 1_000_000, now < at - LEAD_NS);
            Thread.sleep((at - LEAD_NS - now) / 1_000_000);

            String debugDir = new File(cli).getParent();
            Map<String, String> cEnv = new HashMap<>(env);
            // hrts_test's run path names the release library; LD_LIBRARY_PATH comes first.
            cEnv.put("LD_LIBRARY_PATH", debugDir);
            List<String> java = Procs.javaMain("bound-check", Long.toString(READ_MS));
            java.add(1, "-D" + io.hrts.internal.loader.Loader.LIBRARY_PROPERTY + "="
                    + new File(debugDir, io.hrts.internal.loader.Loader.LIBRARY_FILE).getAbsolutePath());
            java.add(1, "-Dhrts.fallback=deny");
            Map<String, File> outs = new LinkedHashMap<>();
            outs.put("c", dir.resolve("c.out").toFile());
            outs.put("java", dir.resolve("java.out").toFile());
            outs.put("rust", dir.resolve("rust.out").toFile());
            readers.add(Procs.startTo(List.of(Procs.cTest(), "bound-check", Long.toString(READ_MS)), cEnv, outs.get("c")));
            readers.add(Procs.startTo(java, env, outs.get("java")));
            readers.add(Procs.startTo(List.of(cli, "debug", "bound-check", Long.toString(READ_MS)), env, outs.get("rust")));
            if (vmclock != null) {
                // The hypervisor's update, at the event's time.
                Thread.sleep(Math.max(0, (at - TestMains.realtimeNanos()) / 1_000_000));
                vmclock.marker++;
                vmclock.update();
            }
            StringBuilder report = new StringBuilder(String.format(
                    "%s: the daemon synchronized %.1f s before the event%n", event, (at - now) / 1e9));
            int i = 0;
            for (Map.Entry<String, File> r : outs.entrySet()) {
                Process p = readers.get(i++);
                assertTrue(event + ": the " + r.getKey() + " reader ended", p.waitFor(60, TimeUnit.SECONDS));
                String text = Files.readString(r.getValue().toPath());
                assertEquals(event + ": the " + r.getKey() + " reader's exit: " + text, 0, p.exitValue());
                report.append(check(event, at, r.getKey(), text)).append('\n');
            }
            info = Procs.keyValues(Procs.run(List.of(cli, "info"), env).out);
            assertEquals(event + ": disruptions counted: " + info, "1", info.get("disruptions"));
            boolean named = false;
            for (String e : expect.split("\\|")) {
                named |= info.values().stream().anyMatch(v -> v.contains(e));
            }
            assertTrue(event + ": hrts info names it as one of " + expect + ": " + info, named);
            assertEquals(event + ": synchronized again: " + info, "synchronized", info.get("bound status"));
            return report.toString().trim();
        } finally {
            Procs.stopAll(readers, daemon, dir);
        }
    }

    /**
     * The VMClock page as the kernel's ABI lays it out (include/uapi/linux/vmclock-abi.h: 104
     * bytes, little-endian; native/cli/tests/vmclock.rs writes the same), updated as a
     * hypervisor updates it: {@code seq_count} odd, the fields, {@code seq_count} even.
     */
    private static final class VmclockPage {
        final Path file;
        int seq;
        long marker = 0x1234_5678L;

        VmclockPage(Path file) {
            this.file = file;
        }

        void update() throws java.io.IOException {
            java.nio.ByteBuffer b = java.nio.ByteBuffer.allocate(104).order(java.nio.ByteOrder.LITTLE_ENDIAN);
            b.putInt(0, 0x4b4c_4356); // magic "VCLK"
            b.putInt(4, 4096); // size
            b.putShort(8, (short) 1); // version
            b.put(10, (byte) 1); // counter_id: x86 TSC
            b.put(11, (byte) 0); // time_type: UTC
            b.putLong(16, marker); // disruption_marker
            b.putLong(24, 0); // flags: no max error
            b.put(34, (byte) 2); // clock_status: synchronized
            try (java.nio.channels.FileChannel ch = java.nio.channels.FileChannel.open(file,
                    java.nio.file.StandardOpenOption.CREATE, java.nio.file.StandardOpenOption.WRITE)) {
                java.nio.ByteBuffer odd = java.nio.ByteBuffer.allocate(4).order(java.nio.ByteOrder.LITTLE_ENDIAN);
                if (seq > 0) {
                    ch.write(odd.putInt(0, seq + 1), 12);
                }
                seq += 2;
                b.putInt(12, seq);
                ch.write(b.duplicate().position(0).limit(12), 0);
                ch.write(b.duplicate().position(16).limit(104), 16);
                ch.write(b.duplicate().position(12).limit(16), 12);
            }
        }
    }

    /** One reader's summary line checked; returns it with the times relative to the event. */
    private static String check(String event, long at, String lang, String text) {
        String line = null;
        for (String l : text.split("\n")) {
            if (l.startsWith("bound-check")) {
                line = l;
            }
        }
        assertTrue(event + ": no summary from the " + lang + " reader:\n" + text, line != null);
        Map<String, Long> f = fields(line);
        String what = event + ", " + lang + " reader: " + text.trim();
        assertTrue(what + ": too few stamps", f.get("samples") > 10_000);
        assertEquals(what + ": intervals that missed the clock", 0L, (long) f.get("misses"));
        long first = f.get("first-unbounded");
        long lastUnbounded = f.get("last-unbounded");
        assertTrue(what + ": never got no interval", first > 0);
        assertTrue(what + ": no interval before the event", first >= at - 1_000_000);
        // Every stamp after the last refused one had an interval: the reader ran on to
        // at + (READ_MS - LEAD) and must have had some of them.
        long end = at - LEAD_NS + READ_MS * 1_000_000L;
        assertTrue(what + ": no interval again before the reader's end", lastUnbounded < end - 200_000_000L);
        return String.format("%s, %s reader: %d stamps, 0 misses, no interval from %.1f to %.1f ms after the event",
                event, lang, f.get("samples"), (first - at) / 1e6, (lastUnbounded - at) / 1e6);
    }

    /** "word value" pairs after the "bound-check X:" prefix; numeric values only. */
    private static Map<String, Long> fields(String line) {
        Map<String, Long> out = new HashMap<>();
        String[] w = line.substring(line.indexOf(':') + 1).trim().split(" ");
        for (int i = 0; i + 1 < w.length; i++) {
            try {
                out.put(w[i], Long.parseLong(w[i + 1]));
                i++;
            } catch (NumberFormatException e) {
                // "offset p99 A": the word before the number is the key.
            }
        }
        return out;
    }
}
