package io.hrts;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import io.hrts.stats.MetricDump;
import io.hrts.stats.SharedStats;
import io.hrts.stats.Statistics;
import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.After;
import org.junit.Before;
import org.junit.Test;

/**
 * The shared statistics across real processes and languages (issue 13): writers in C, Java and
 * Rust ({@code hrts debug stats-record}) record metrics into a statistics segment of the test's own; readers in C ({@code
 * shared_test read}), Java ({@link SharedStats}) and the CLI ({@code hrts stats --json}) must show
 * each writer's statistics exactly as the writer's own dump says, and the aggregate by name as the
 * contract computes it from those dumps. And a timer instance started in a C process and stopped in
 * a Java process measures the span between them.
 */
public class SharedStatsTest {
    private static final AtomicInteger SEQ = new AtomicInteger();
    private static String cShared;

    private String segment;
    private final List<Child> children = new ArrayList<>();

    /** tests/c/stats/shared_test.c, compiled once per test JVM against the build's libhrts. */
    private static synchronized String cShared() throws Exception {
        if (cShared == null) {
            String root = ChildJvm.prop("hrts.test.repoRoot");
            String libDir = new File(ChildJvm.prop("hrts.test.capiLib")).getParent();
            String out = Paths.get(ChildJvm.prop("hrts.test.stateDir"), "shared_test").toString();
            new File(out).getParentFile().mkdirs();
            Procs r = Procs.run("cc", "-std=c11", "-Wall", "-Wextra", "-Werror", "-O2", "-I", root + "/include",
                    root + "/tests/c/stats/shared_test.c", "-o", out, "-L", libDir, "-lhrts", "-lm",
                    "-Wl,-rpath," + libDir);
            assertEquals("compiling shared_test.c: " + r, 0, r.exit);
            cShared = out;
        }
        return cShared;
    }

    @Before
    public void segmentOfItsOwn() {
        segment = "/hrts-stats-junit-" + ProcessHandle.current().pid() + "-" + SEQ.incrementAndGet();
    }

    @After
    public void cleanUp() {
        for (Child c : children) {
            c.kill();
        }
        SharedStats.unlink(segment);
    }

    private Map<String, String> env() {
        Map<String, String> env = new HashMap<>();
        env.put("HRTS_STATS_SEGMENT", segment);
        return env;
    }

    /** A child process whose stdout is read line by line while it runs; stdin stays open. */
    private final class Child {
        final Process p;
        final BlockingQueue<String> lines = new LinkedBlockingQueue<>();
        final StringBuffer err = new StringBuffer();
        final List<String> cmd;

        Child(List<String> cmd) throws IOException {
            this(cmd, Map.of());
        }

        /** With these environment variables besides the segment's. */
        Child(List<String> cmd, Map<String, String> extra) throws IOException {
            this.cmd = cmd;
            ProcessBuilder pb = new ProcessBuilder(cmd);
            pb.environment().putAll(env());
            pb.environment().remove("HRTS_STATS_PROGRAM");
            pb.environment().remove("HRTS_STATS_INSTANCE_ID");
            pb.environment().putAll(extra);
            p = pb.start();
            children.add(this);
            daemon(() -> {
                try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
                    for (String l; (l = r.readLine()) != null; ) {
                        lines.add(l);
                    }
                } catch (IOException e) {
                    // gone
                }
            });
            daemon(() -> {
                try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getErrorStream(), StandardCharsets.UTF_8))) {
                    for (String l; (l = r.readLine()) != null; ) {
                        err.append(l).append('\n');
                    }
                } catch (IOException e) {
                    // gone
                }
            });
        }

        /** The rest of the next line that starts with "KEY ". */
        String value(String key) throws InterruptedException {
            for (;;) {
                String l = line();
                if (l.startsWith(key + " ")) {
                    return l.substring(key.length() + 1);
                }
            }
        }

        String line() throws InterruptedException {
            String l = lines.poll(120, TimeUnit.SECONDS);
            if (l == null) {
                fail(cmd + ": no line (alive: " + p.isAlive() + ", stderr: " + err + ")");
            }
            return l;
        }

        /** Closes stdin (the writers' cue to end) and waits for a clean exit. */
        void finish() throws Exception {
            p.getOutputStream().close();
            assertTrue(cmd + " ended", p.waitFor(60, TimeUnit.SECONDS));
            assertEquals(cmd + " exit (stderr: " + err + ")", 0, p.exitValue());
        }

        void kill() {
            if (p.isAlive()) {
                p.destroyForcibly();
            }
        }
    }

    private static void daemon(Runnable r) {
        Thread t = new Thread(r);
        t.setDaemon(true);
        t.start();
    }

    /**
     * What the test compares of a metric: the fields that are the same in every reading of
     * unchanged metrics (the interval statistics and the moving average decay with time).
     */
    private static final class M {
        final String type;
        final long timestamp;
        final double value;
        final long count;
        final double[] stats; // sum, min, max, mean, p50, p90, p99, p99.9

        M(String type, long timestamp, double value, long count, double... stats) {
            this.type = type;
            this.timestamp = timestamp;
            this.value = value;
            this.count = count;
            this.stats = stats;
        }

        static double num(Object o) {
            return o == null ? Double.NaN : ((Number) o).doubleValue();
        }

        static long integer(Object o) {
            return ((Number) o).longValue();
        }

        @SuppressWarnings("unchecked")
        static M ofJson(Map<String, Object> m) {
            Map<String, Object> v = (Map<String, Object>) m.get("values");
            double[] s = new double[8];
            String[] keys = {"sum", "min", "max", "mean", "p50", "p90", "p99", "p99.9"};
            for (int i = 0; i < keys.length; i++) {
                s[i] = num(v.get(keys[i]));
            }
            return new M((String) m.get("type"), integer(m.get("timestamp")), num(m.get("value")),
                    integer(v.get("count")), s);
        }

        static M ofDump(MetricDump m) {
            Statistics v = m.values();
            return new M(m.type().jsonName(), m.timestamp(), m.value(), v.count(), v.sum(), v.min(), v.max(),
                    v.mean(), v.p50(), v.p90(), v.p99(), v.p999());
        }

        /** A line of {@code shared_test read} after its prefix: NAME KIND TS COUNTER VALUE COUNT ... */
        static M ofC(String[] f) {
            String type = new String[] {"", "counter", "gauge", "timer"}[Integer.parseInt(f[1])];
            double[] s = new double[8];
            for (int i = 0; i < 8; i++) {
                s[i] = Double.parseDouble(f[6 + i]);
            }
            return new M(type, Long.parseUnsignedLong(f[2]), Double.parseDouble(f[4]), Long.parseLong(f[5]), s);
        }

        /** The contract's aggregate of the processes' metrics of one name and kind. */
        static M aggregate(List<M> ms) {
            M latest = ms.get(0);
            long count = 0;
            double sum = 0;
            double min = Double.POSITIVE_INFINITY;
            double max = Double.NEGATIVE_INFINITY;
            double counterSum = 0;
            for (M m : ms) {
                if (m.timestamp > latest.timestamp) {
                    latest = m;
                }
                count += m.count;
                sum += m.stats[0];
                min = Math.min(min, m.stats[1]);
                max = Math.max(max, m.stats[2]);
                counterSum += m.value;
            }
            double value = latest.type.equals("counter") ? counterSum : latest.value;
            double[] q = ms.size() == 1 ? Arrays.copyOfRange(ms.get(0).stats, 4, 8)
                    : new double[] {Double.NaN, Double.NaN, Double.NaN, Double.NaN};
            return new M(latest.type, latest.timestamp, value, count, sum, count == 0 ? Double.NaN : min,
                    count == 0 ? Double.NaN : max, count == 0 ? Double.NaN : sum / count, q[0], q[1], q[2], q[3]);
        }

        private static boolean close(double a, double b) {
            return Double.isNaN(a) ? Double.isNaN(b) : Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(a));
        }

        boolean same(M o) {
            if (!type.equals(o.type) || timestamp != o.timestamp || count != o.count || !close(value, o.value)) {
                return false;
            }
            for (int i = 0; i < stats.length; i++) {
                if (!close(stats[i], o.stats[i])) {
                    return false;
                }
            }
            return true;
        }

        @Override
        public String toString() {
            return type + "@" + timestamp + " value=" + value + " count=" + count + " " + Arrays.toString(stats);
        }
    }

    /** The e2e.* metrics of a JSON dump (the writers record nothing else under that prefix). */
    @SuppressWarnings("unchecked")
    private static Map<String, M> e2e(Map<String, Object> dump) {
        Map<String, M> out = new TreeMap<>();
        for (Map.Entry<String, Object> e : dump.entrySet()) {
            if (e.getKey().startsWith("e2e.")) {
                out.put(e.getKey(), M.ofJson((Map<String, Object>) e.getValue()));
            }
        }
        return out;
    }

    private static Map<String, M> e2eOf(Map<String, MetricDump> dump) {
        Map<String, M> out = new TreeMap<>();
        for (Map.Entry<String, MetricDump> e : dump.entrySet()) {
            if (e.getKey().startsWith("e2e.")) {
                out.put(e.getKey(), M.ofDump(e.getValue()));
            }
        }
        return out;
    }

    private static void assertSame(String what, Map<String, M> expected, Map<String, M> actual) {
        assertEquals(what + ": metric names", expected.keySet(), actual.keySet());
        for (Map.Entry<String, M> e : expected.entrySet()) {
            M a = actual.get(e.getKey());
            assertTrue(what + ": " + e.getKey() + "\n expected " + e.getValue() + "\n actual   " + a,
                    e.getValue().same(a));
        }
    }

    /** The aggregate the contract computes from the writers' own dumps. */
    private static Map<String, M> expectedAggregate(Map<Long, Map<String, M>> byPid) {
        Map<String, List<M>> byName = new TreeMap<>();
        for (Map<String, M> dump : new TreeMap<>(byPid).values()) {
            for (Map.Entry<String, M> e : dump.entrySet()) {
                byName.computeIfAbsent(e.getKey(), k -> new ArrayList<>()).add(e.getValue());
            }
        }
        Map<String, M> out = new TreeMap<>();
        byName.forEach((k, v) -> out.put(k, M.aggregate(v)));
        return out;
    }

    @Test
    public void noSegmentIsAnEmptySnapshot() {
        SharedStats.Snapshot s = SharedStats.snapshot(segment);
        assertEquals(segment, s.segment());
        assertEquals(0, s.taken());
        assertTrue(s.processes().isEmpty());
        assertTrue(s.aggregate().metrics().isEmpty());
        assertFalse("no segment to remove", SharedStats.unlink(segment));
        try {
            SharedStats.snapshot(null);
            fail("a null segment name is refused");
        } catch (HrtsException e) {
            assertEquals(HrtsException.Kind.INVALID_ARGUMENT, e.getKind());
        }
    }

    /**
     * A JVM publishes under its main class, under {@code HRTS_STATS_PROGRAM} when that is set,
     * and under the {@code hrts.stats.program} property above both; {@code hrts.stats.instanceId}
     * is its {@code hrts_instance} label in {@code hrts stats --prometheus}, with no pid label.
     */
    @Test
    public void javaWritersAreNamedByTheirMainClassTheEnvironmentOrTheProperties() throws Exception {
        String cli = Procs.testingCli();
        Child plain = new Child(Procs.javaMain("stats-record", "1"));
        Child fromEnv = new Child(Procs.javaMain("stats-record", "2"), Map.of("HRTS_STATS_PROGRAM", "from-env"));
        List<String> named = Procs.javaMain("stats-record", "3");
        named.add(1, "-D" + io.hrts.stats.Stats.PROGRAM_PROPERTY + "=checkout");
        named.add(1, "-D" + io.hrts.stats.Stats.INSTANCE_ID_PROPERTY + "=j1");
        Child byProperty = new Child(named, Map.of("HRTS_STATS_PROGRAM", "from-env"));
        Map<String, Long> pids = new HashMap<>();
        pids.put(TestMains.class.getName(), Long.parseLong(plain.value("pid")));
        pids.put("from-env", Long.parseLong(fromEnv.value("pid")));
        pids.put("checkout", Long.parseLong(byProperty.value("pid")));
        SharedStats.Snapshot snap = SharedStats.snapshot(segment);
        for (Map.Entry<String, Long> e : pids.entrySet()) {
            List<SharedStats.ProcessStats> ps = snap.process(e.getValue());
            assertEquals(snap.toString(), 1, ps.size());
            assertEquals(e.getKey(), ps.get(0).program());
        }
        Procs prom = Procs.run(Arrays.asList(cli, "stats", "--prometheus"), env());
        assertEquals(prom.toString(), 0, prom.exit);
        assertTrue(prom.out, prom.out.contains("\nhrts_e2e_java_3_total{program=\"checkout\",hrts_instance=\"j1\"} 3\n"));
        assertTrue(prom.out, prom.out.contains("\nhrts_e2e_java_2_total{program=\"from-env\",hrts_instance=\"1\"} 2\n"));
        assertTrue(prom.out, prom.out.contains("\nhrts_e2e_java_1_total{program=\"" + TestMains.class.getName()
                + "\",hrts_instance=\"1\"} 1\n"));
        assertFalse(prom.out, prom.out.contains("pid="));
        for (Child c : Arrays.asList(plain, fromEnv, byProperty)) {
            c.finish();
        }
    }

    @Test
    public void writersInThreeLanguagesReadFromCJavaAndTheCli() throws Exception {
        String c = cShared();
        String cli = Procs.testingCli();
        List<Child> writers = new ArrayList<>();
        writers.add(new Child(Arrays.asList(c, "record", "1")));
        writers.add(new Child(Procs.javaMain("stats-record", "2")));
        writers.add(new Child(Arrays.asList(c, "record", "3")));
        // Rust: the same shared names with values of its own, and one name of its own.
        Child rust = new Child(Arrays.asList(cli, "debug", "stats-record", "--counter", "e2e.requests=3",
                "--counter", "e2e.errors=-1", "--counter", "e2e.rust.5=5", "--gauge", "e2e.queue=42.5",
                "--timer", "e2e.latency=5000", "--repeat", "25"));
        writers.add(rust);
        Map<Long, Map<String, M>> own = new TreeMap<>();
        for (Child w : writers) {
            if (w == rust) {
                own.put(w.p.pid(), e2e(Json.object(w.line())));
                continue;
            }
            long pid = Long.parseLong(w.value("pid"));
            assertEquals(w.p.pid(), pid);
            own.put(pid, e2e(Json.object(w.value("dump"))));
        }
        Map<String, M> aggregate = expectedAggregate(own);
        assertTrue(aggregate.toString(), aggregate.containsKey("e2e.c.1") && aggregate.containsKey("e2e.java.2")
                && aggregate.containsKey("e2e.rust.5"));

        // Java's reader (this JVM).
        SharedStats.Snapshot snap = SharedStats.snapshot(segment);
        assertEquals(segment, snap.segment());
        for (Map.Entry<Long, Map<String, M>> e : own.entrySet()) {
            List<SharedStats.ProcessStats> ps = snap.process(e.getKey());
            assertEquals("pid " + e.getKey() + " in " + snap, 1, ps.size());
            SharedStats.ProcessStats p = ps.get(0);
            assertEquals(SharedStats.ProcessState.LIVE, p.state());
            assertTrue(snap.taken() >= p.timestamp());
            assertSame("Java reader, pid " + e.getKey(), e.getValue(), e2eOf(p.metrics()));
        }
        assertSame("Java reader, aggregate", aggregate, e2eOf(snap.aggregate().metrics()));
        // The same snapshot under -Xcheck:jni in a JVM of its own: one dump per process
        // must not pile up local references (it exceeded the 32 JNI guarantees).
        List<String> checked = Procs.javaMain("stats-snapshot", segment);
        checked.add(1, "-Xcheck:jni");
        Procs js = Procs.run(checked);
        assertEquals(js.toString(), 0, js.exit);
        assertTrue(js.toString(), js.out.startsWith("processes "));
        assertFalse(js.toString(), js.err.contains("JNI local refs"));

        // C's reader.
        Procs r = Procs.run(Arrays.asList(c, "read", segment));
        assertEquals(r.toString(), 0, r.exit);
        Map<Long, Map<String, M>> cByPid = new TreeMap<>();
        Map<String, M> cAggregate = new TreeMap<>();
        Map<Long, String> cStates = new TreeMap<>();
        for (String line : r.out.split("\n")) {
            String[] f = line.split(" ");
            if (f[0].equals("process")) {
                cStates.put(Long.parseLong(f[1]), f[4]);
            } else if (f[0].equals("metric") && f[2].startsWith("e2e.")) {
                cByPid.computeIfAbsent(Long.parseLong(f[1]), k -> new TreeMap<>())
                        .put(f[2], M.ofC(Arrays.copyOfRange(f, 2, f.length)));
            } else if (f[0].equals("aggregate") && f[1].startsWith("e2e.")) {
                cAggregate.put(f[1], M.ofC(Arrays.copyOfRange(f, 1, f.length)));
            }
        }
        for (Map.Entry<Long, Map<String, M>> e : own.entrySet()) {
            assertEquals(r.out, "live", cStates.get(e.getKey()));
            assertNotNull(r.out, cByPid.get(e.getKey()));
            assertSame("C reader, pid " + e.getKey(), e.getValue(), cByPid.get(e.getKey()));
        }
        assertSame("C reader, aggregate", aggregate, cAggregate);

        // The CLI's reader: hrts stats --json.
        Procs listed = Procs.run(Arrays.asList(cli, "stats", "--json"), env());
        assertEquals(listed.toString(), 0, listed.exit);
        Map<String, Object> json = Json.object(listed.out.trim());
        assertEquals(segment, json.get("segment"));
        Map<Long, Map<String, M>> cliByPid = new TreeMap<>();
        for (Object o : (List<?>) json.get("processes")) {
            @SuppressWarnings("unchecked")
            Map<String, Object> p = (Map<String, Object>) o;
            long pid = M.integer(p.get("pid"));
            if (own.containsKey(pid)) {
                assertEquals("live", p.get("state"));
                @SuppressWarnings("unchecked")
                Map<String, Object> metrics = (Map<String, Object>) p.get("metrics");
                cliByPid.put(pid, e2e(metrics));
            }
        }
        assertEquals(own.keySet(), cliByPid.keySet());
        for (Map.Entry<Long, Map<String, M>> e : own.entrySet()) {
            assertSame("hrts stats --json, pid " + e.getKey(), e.getValue(), cliByPid.get(e.getKey()));
        }
        @SuppressWarnings("unchecked")
        Map<String, Object> agg = (Map<String, Object>) json.get("aggregate");
        assertSame("hrts stats --json, aggregate", aggregate, e2e(agg));

        for (Child w : writers) {
            w.finish();
        }
    }

    @Test
    public void timerStartedInCStoppedInJava() throws Exception {
        long instance = 4242;
        Child starter = new Child(Arrays.asList(cShared(), "timer-start", Long.toString(instance)));
        long startBefore = Long.parseLong(starter.value("start_before"));
        long startAfter = Long.parseLong(starter.value("start_after"));
        Procs stopper = Procs.run(Procs.javaMain("stats-timer-stop", Long.toString(instance)), env());
        assertEquals(stopper.toString(), 0, stopper.exit);
        Map<String, String> out = Procs.keyValues(stopper.out.replaceAll("(?m)^(\\S+) ", "$1: "));
        long stopBefore = Long.parseLong(out.get("stop_before"));
        long stopAfter = Long.parseLong(out.get("stop_after"));
        assertFalse("the C process's instance was found: " + stopper, "none".equals(out.get("duration")));
        long d = Long.parseLong(out.get("duration"));
        String where = "duration " + d + " within [" + (stopBefore - startAfter) + ", " + (stopAfter - startBefore)
                + "]";
        assertTrue(where, stopBefore - startAfter <= d && d <= stopAfter - startBefore);
        assertEquals("a second stop finds nothing", "none", out.get("again"));
        assertEquals("the Java process recorded the duration", "1 " + d, out.get("recorded"));
        starter.finish();
    }
}
