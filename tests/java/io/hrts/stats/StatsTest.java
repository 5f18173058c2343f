package io.hrts.stats;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import io.hrts.HighResTimestamp;
import io.hrts.HrtsException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.After;
import org.junit.Before;
import org.junit.Test;

/**
 * The Java face of hrts-stats on the JVM's process-wide instance. Every test starts from a fresh
 * run (stop, configure, start: a restart empties the statistics) and uses names of its own.
 */
public class StatsTest {
    static void restart(String config) {
        Stats.stop();
        Stats.configureJson(config);
        Stats.start();
    }

    @Before
    public void fresh() {
        restart("{\"json-dump\": {\"interval\": 0}, \"metrics-dump\": {\"interval\": 0}}");
    }

    @After
    public void stop() {
        Stats.stop();
    }

    /**
     * The seed's example is about each delta's value, which only a counter stamped per event
     * keeps: one summed by default comes as a batch per sign (see {@link StampingTest}).
     */
    @Test
    public void theSeedsCounterExample() {
        restart("{\"json-dump\": {\"interval\": 0}, \"metrics-dump\": {\"interval\": 0},"
                + " \"exact-stamps\": [\"java.events\"]}");
        Counter c = Stats.counter("java.events");
        for (long d : new long[] {1, 2, -3, 5, 10}) {
            c.add(d);
        }
        MetricDump m = Stats.dump().get("java.events");
        assertEquals(MetricType.COUNTER, m.type());
        assertEquals(15, m.counterValue());
        // values 0, 1, 3, 0, 5, 15
        assertEquals(6, m.values().count());
        assertEquals(24.0, m.values().sum(), 0);
        assertEquals(0.0, m.values().min(), 0);
        assertEquals(15.0, m.values().max(), 0);
        assertEquals(4, m.incrDeltas().count());
        assertEquals(18.0, m.incrDeltas().sum(), 0);
        assertEquals(1, m.decrDeltas().count());
        assertEquals(3.0, m.decrDeltas().max(), 0);
        assertEquals(5, m.deltas().count());
        assertEquals(-3.0, m.deltas().min(), 0);
        long now = HighResTimestamp.getEpochNanoseconds();
        assertTrue("a stamp on the hrts timeline", m.timestamp() <= now && now - m.timestamp() < 10_000_000_000L);
    }

    @Test
    public void gaugesAndTimerRecordsAndQuantiles() {
        Gauge g = Stats.gauge("java.queue");
        Timer t = Stats.timer("java.latency");
        for (int i = 1; i <= 1000; i++) {
            g.set(i * 0.25);
            t.record(i * 1000L);
        }
        StatsDump d = Stats.dump();
        MetricDump gd = d.get("java.queue");
        assertEquals(250.0, gd.value(), 0);
        assertEquals(1000, gd.values().count());
        assertEquals(125.125, gd.values().mean(), 1e-9);
        assertNull(gd.incrDeltas());
        Statistics td = d.get("java.latency").values();
        assertEquals(MetricType.TIMER, d.get("java.latency").type());
        assertEquals(1000, td.count());
        for (double[] q : new double[][] {{td.p50(), 500_000}, {td.p90(), 900_000}, {td.p99(), 990_000}, {td.p999(), 999_000}}) {
            assertTrue(q[0] + " within 1 % of " + q[1], Math.abs(q[0] - q[1]) <= 0.01 * q[1]);
        }
        try {
            g.set(Double.NaN);
            fail("NaN accepted");
        } catch (HrtsException e) {
            assertEquals(HrtsException.Kind.INVALID_ARGUMENT, e.getKind());
            assertTrue(e.getMessage(), e.getMessage().contains("NaN"));
        }
    }

    @Test
    public void theRateIsPerSecondOverTheMovingInterval() {
        // T = 0.5 s; everything below happens well within it, so each rate is the set's
        // interval count (or sum) over 0.5 s, decayed by the same factor at the dump.
        restart("{\"incremental-statistics\": {\"moving-interval\": 500},"
                + " \"json-dump\": {\"interval\": 0}, \"metrics-dump\": {\"interval\": 0}}");
        Counter c = Stats.counter("java.rate.counter");
        Gauge g = Stats.gauge("java.rate.gauge");
        Timer t = Stats.timer("java.rate.timer");
        for (long d : new long[] {4, 4, -2, 4}) {
            c.add(d);
        }
        for (int i = 0; i < 3; i++) {
            g.set(i);
            t.record(1000 + i);
        }
        StatsDump d = Stats.dump();
        MetricDump cm = d.get("java.rate.counter");
        // values: changes per second; delta sets: amount per second.
        assertEquals(cm.values().intervalCount() / 0.5, cm.values().rate(), 1e-9);
        assertEquals(cm.incrDeltas().intervalSum() / 0.5, cm.incrDeltas().rate(), 1e-9);
        assertEquals(cm.decrDeltas().intervalSum() / 0.5, cm.decrDeltas().rate(), 1e-9);
        assertEquals(cm.deltas().intervalSum() / 0.5, cm.deltas().rate(), 1e-9);
        assertTrue(cm.toString(), cm.incrDeltas().rate() > 0 && cm.incrDeltas().rate() <= 12 / 0.5);
        assertTrue(cm.toString(), cm.decrDeltas().rate() > 0 && cm.decrDeltas().rate() <= 2 / 0.5);
        assertEquals(cm.deltas().rate(), cm.rate(), 0);
        MetricDump gm = d.get("java.rate.gauge");
        assertEquals(gm.values().intervalCount() / 0.5, gm.values().rate(), 1e-9);
        assertTrue(gm.toString(), gm.rate() > 0 && gm.rate() <= 3 / 0.5);
        assertEquals(gm.values().rate(), gm.rate(), 0);
        MetricDump tm = d.get("java.rate.timer");
        assertEquals(tm.values().intervalCount() / 0.5, tm.values().rate(), 1e-9);
        assertTrue(tm.toString(), tm.rate() > 0 && tm.rate() <= 3 / 0.5);
        assertTrue(Stats.jsonDump().contains("\"rate\":"));
    }

    @Test
    public void timerInstancesOverlapHeartbeatAndTimeOut() throws Exception {
        // Heartbeats 100 ms apart against a 1 s idle timeout: a sleep the scheduler
        // stretches by up to 900 ms (a loaded 2-CPU machine) still keeps it alive.
        restart("{\"timer\": {\"idle-timeout\": 1000}, \"json-dump\": {\"interval\": 0}}");
        Timer t = Stats.timer("java.spans");
        t.start(1);
        t.start(2);
        t.start();
        Thread.sleep(20);
        t.stop(2);
        t.stop(1);
        t.stop();
        assertEquals(3, Stats.dump().get("java.spans").values().count());
        // Heartbeats keep an instance alive past the idle timeout.
        t.start(3);
        for (int i = 0; i < 15; i++) {
            Thread.sleep(100);
            t.heartbeat(3);
        }
        t.stop(3);
        // Without them it is dropped.
        t.start(4);
        Thread.sleep(1500);
        t.stop(4);
        t.stop(77); // never started
        t.start(5);
        t.discard(5);
        StatsDump d = Stats.dump();
        Statistics s = d.get("java.spans").values();
        assertEquals(4, s.count());
        assertTrue("the heartbeat instance lived " + s.max(), s.max() >= 1_500_000_000);
        assertEquals(2.0, d.get("hrts-stats.timer-stops-without-start").value(), 0);
        assertEquals(1.0, d.get("hrts-stats.timer-instances-timed-out").value(), 0);
    }

    @Test
    @SuppressWarnings("try") // the scopes measure the sleeps in their bodies
    public void aScopeMeasuresAndAnIdleOneRecordsNothing() throws Exception {
        restart("{\"timer\": {\"idle-timeout\": 200}, \"json-dump\": {\"interval\": 0}}");
        Timer t = Stats.timer("java.scoped");
        try (Timer.Scope s = t.scope()) {
            Thread.sleep(5);
        }
        try (Timer.Scope s = t.scope()) {
            Thread.sleep(150);
            s.heartbeat();
            Thread.sleep(150);
        }
        try (Timer.Scope s = t.scope()) {
            Thread.sleep(250); // idle too long
        }
        try (Timer.Scope s = t.scope()) {
            s.discard();
        }
        Statistics v = Stats.dump().get("java.scoped").values();
        assertEquals(2, v.count());
        assertTrue(v.min() >= 5_000_000 && v.max() >= 300_000_000);
    }

    @Test
    public void eightThreadsOfAMillionIncrementsGiveTheExactCount() throws Exception {
        Counter c = Stats.counter("java.threads");
        List<Thread> threads = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            Thread th = new Thread(() -> {
                for (int k = 0; k < 1_000_000; k++) {
                    c.increment();
                }
            });
            threads.add(th);
            th.start();
        }
        for (Thread th : threads) {
            th.join();
        }
        MetricDump m = Stats.dump().get("java.threads");
        assertEquals(8_000_000, m.counterValue());
        assertEquals(8_000_000, m.incrDeltas().count());
        assertEquals(8_000_000.0, m.values().max(), 0);
        assertEquals(0.0, Stats.dump().get("hrts-stats.dropped-events").value(), 0);
    }

    @Test
    public void badNamesAndKindsAreErrorsThatSayWhy() {
        expect("empty", () -> Stats.counter(""));
        StringBuilder huge = new StringBuilder();
        for (int i = 0; i < 300; i++) {
            huge.append('x');
        }
        expect("too long", () -> Stats.gauge(huge.toString()));
        Stats.gauge("java.kind");
        expect("is a gauge", () -> Stats.timer("java.kind"));
        expect("null", () -> Stats.counter(null));
        expect("library", () -> Stats.counter("hrts-stats.mine"));
    }

    @Test
    public void configurationErrorsNameTheKey() {
        Stats.stop();
        expect("handystats.timer.idle-timout", () -> Stats.configureJson("{\"handystats\": {\"timer\": {\"idle-timout\": 1}}}"));
        expect("metrics-dump.interval", () -> Stats.configureJson("{\"metrics-dump\": {\"interval\": -5}}"));
        expect("not valid JSON", () -> Stats.configureJson("{"));
        expect("/nonexistent/stats.json", () -> Stats.configureFile("/nonexistent/stats.json"));
        Stats.start();
        expect("stop them", () -> Stats.configureJson("{}"));
    }

    @Test
    public void aConfigurationFileIsRead() throws Exception {
        Path f = Files.createTempFile("hrts-stats", ".json");
        try {
            Files.write(f, "{\"handystats\": {\"json-dump\": {\"interval\": 20}}}".getBytes(StandardCharsets.UTF_8));
            Stats.stop();
            Stats.configureFile(f.toString());
            Stats.start();
            Stats.counter("java.periodic").increment();
            long deadline = System.nanoTime() + 10_000_000_000L;
            StatsDump last = null;
            while (System.nanoTime() < deadline) {
                last = Stats.lastDump();
                if (last != null && last.get("java.periodic") != null) {
                    break;
                }
                Thread.sleep(5);
            }
            assertNotNull("a dump made by the library at its interval", last);
            assertNotNull(last.get("java.periodic"));
        } finally {
            Files.delete(f);
        }
    }

    @Test
    public void startAndStopAreIdempotentAndNothingIsRecordedWhileStopped() {
        Counter c = Stats.counter("java.stopped");
        Stats.start();
        assertTrue(Stats.isRunning());
        c.add(5);
        Stats.stop();
        Stats.stop();
        assertTrue(!Stats.isRunning());
        c.add(100);
        assertEquals(5, Stats.lastDump().get("java.stopped").counterValue());
        Stats.start();
        c.add(2);
        assertEquals(2, Stats.dump().get("java.stopped").counterValue());
    }

    private static final Pattern STATS_OBJECT = Pattern.compile(
            "\\{\"count\":\\d+,\"interval-count\":[^,]+,\"interval-mean\":[^,]+,\"interval-sum\":[^,]+,"
                    + "\"max\":[^,]+,\"mean\":[^,]+,\"min\":[^,]+,\"moving-avg\":[^,]+,\"p50\":[^,]+,"
                    + "\"p90\":[^,]+,\"p99\":[^,]+,\"p99\\.9\":[^,]+,\"rate\":[^,]+,\"sum\":[^,}]+\\}");

    @Test
    public void theJsonDumpHasTheSeedsShape() {
        Stats.counter("java.json.counter").add(3);
        Stats.gauge("java.json.gauge").set(1.5);
        Stats.timer("java.json.timer").record(1500);
        String json = Stats.jsonDump();
        String s = STATS_OBJECT.pattern();
        Matcher counter = Pattern.compile("\"java\\.json\\.counter\":\\{\"decr-deltas\":" + s + ",\"deltas\":" + s
                + ",\"incr-deltas\":" + s + ",\"timestamp\":\\d+,\"type\":\"counter\",\"value\":3,\"values\":" + s + "\\}")
                .matcher(json);
        assertTrue(json, counter.find());
        assertTrue(json, Pattern.compile("\"java\\.json\\.gauge\":\\{\"timestamp\":\\d+,\"type\":\"gauge\",\"value\":1\\.5,\"values\":" + s + "\\}").matcher(json).find());
        assertTrue(json, Pattern.compile("\"java\\.json\\.timer\":\\{\"timestamp\":\\d+,\"type\":\"timer\",\"value\":1500,\"values\":" + s + "\\}").matcher(json).find());
        assertTrue(json, json.contains("\"decr-deltas\":{\"count\":0,") && json.contains("\"min\":null"));
    }

    interface Call {
        void run();
    }

    static void expect(String fragment, Call call) {
        try {
            call.run();
            fail("no exception; expected one saying " + fragment);
        } catch (HrtsException e) {
            assertTrue(e.getMessage(), e.getMessage().contains(fragment));
        }
    }

    @Test
    public void theProgramNameComesFromThePropertyTheEnvironmentOrTheMainClass() {
        assertEquals("checkout", Stats.program("checkout", "from-env", "com.example.Main"));
        assertNull("the environment's name is the native library's to read",
                Stats.program(null, "from-env", "com.example.Main"));
        assertEquals("com.example.Main", Stats.program("", "", "com.example.Main a b"));
        assertEquals("checkout-service-1.2", Stats.defaultProgram("/opt/app/checkout-service-1.2.jar --port 1"));
        assertEquals("com.example.Main", Stats.defaultProgram("app.module/com.example.Main"));
        // Longer than 31 bytes: the simple name, and that cut to 31 bytes.
        assertEquals("CheckoutApplication",
                Stats.defaultProgram("com.example.shop.checkout.service.CheckoutApplication"));
        assertEquals("AVeryLongMainClassNameIndeedTha",
                Stats.defaultProgram("org.x.AVeryLongMainClassNameIndeedThatGoesOn"));
        assertNull(Stats.defaultProgram(null));
        assertNull(Stats.defaultProgram("  "));
    }
}
