package io.hrts.stats;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import io.hrts.HighResTimestamp;
import java.util.ArrayList;
import java.util.List;
import org.junit.After;
import org.junit.Test;

/**
 * How counter and gauge events are stamped. By default an event is summed into its thread's cell
 * for the metric and stamped by the processing pass that takes it; a metric listed in {@code
 * exact-stamps} takes a precise stamp per event and is queued. Which path an event took shows in
 * {@code hrts-stats.folded-events}: a summed event is counted there, a queued one is not (these
 * tests stay far below a queue's 2048 events, so nothing is folded for want of room).
 */
public class StampingTest {
    private static final String QUIET = "\"json-dump\": {\"interval\": 0}, \"metrics-dump\": {\"interval\": 0}";

    @After
    public void stop() {
        Stats.stop();
    }

    private static long folded(StatsDump d) {
        return (long) d.get("hrts-stats.folded-events").value();
    }

    @Test
    public void anExactMetricIsStampedPerEventADefaultOneIsSummed() throws Exception {
        StatsTest.restart("{" + QUIET + ", \"exact-stamps\": [\"java.exact.*\", \"java.one-gauge\"]}");
        Counter exact = Stats.counter("java.exact.counter");
        Gauge exactGauge = Stats.gauge("java.one-gauge");
        Counter summed = Stats.counter("java.summed.counter");
        Gauge summedGauge = Stats.gauge("java.summed.gauge");

        long before = folded(Stats.dump());
        long t0 = HighResTimestamp.getEpochNanoseconds();
        for (int i = 1; i <= 100; i++) {
            exact.add(i);
            exactGauge.set(i);
        }
        long t1 = HighResTimestamp.getEpochNanoseconds();
        StatsDump d = Stats.dump();
        assertEquals("exact events are queued, not summed", 0, folded(d) - before);
        MetricDump c = d.get("java.exact.counter");
        assertEquals(5050, c.counterValue());
        // Each delta is applied on its own: the values are 0, 1, 3, 6, ..., 5050.
        assertEquals(101, c.values().count());
        assertEquals(171_700.0, c.values().sum(), 0);
        assertTrue("the last delta's own stamp " + c.timestamp() + " in [" + t0 + ", " + t1 + "]",
                t0 <= c.timestamp() && c.timestamp() <= t1);
        MetricDump g = d.get("java.one-gauge");
        assertEquals(100.0, g.value(), 0);
        assertEquals(100, g.values().count());
        assertTrue(t0 <= g.timestamp() && g.timestamp() <= t1);

        before = folded(d);
        long t2 = HighResTimestamp.getEpochNanoseconds();
        // A pass stamps with the time it began: one that began before t2 and took the cells after
        // the sleep would have to last 50 ms.
        Thread.sleep(50);
        for (int i = 1; i <= 100; i++) {
            summed.add(i);
            summedGauge.set(i);
        }
        d = Stats.dump();
        long t3 = HighResTimestamp.getEpochNanoseconds();
        assertEquals("default events are summed into the thread's cells", 200, folded(d) - before);
        c = d.get("java.summed.counter");
        assertEquals(5050, c.counterValue());
        assertEquals(100, c.incrDeltas().count());
        assertEquals(5050.0, c.incrDeltas().sum(), 0);
        assertEquals(1.0, c.incrDeltas().min(), 0);
        assertEquals(100.0, c.incrDeltas().max(), 0);
        assertEquals(5050.0, c.values().max(), 0);
        assertTrue("stamped by the pass: " + c.timestamp() + " in [" + t2 + ", " + t3 + "]",
                t2 <= c.timestamp() && c.timestamp() <= t3);
        g = d.get("java.summed.gauge");
        assertEquals(100.0, g.value(), 0);
        assertEquals(100, g.values().count());
        assertEquals(5050.0, g.values().sum(), 0);
        assertEquals(1.0, g.values().min(), 0);
        assertEquals(100.0, g.values().max(), 0);
    }

    @Test
    public void aCounterInitFollowedAtOnceByAddsComesBeforeThem() {
        // A processing thread that sleeps 200 ms whenever it finds nothing: it takes the init
        // only at the dump, after the adds (were it faster, the adds would just be summed after
        // it had taken the init, which is right too but tests less).
        StatsTest.restart("{" + QUIET + ", \"exact-stamps\": [\"java.init.exact\"],"
                + " \"message-queue\": {\"sleep-on-empty\": [200000]}}");
        for (String name : new String[] {"java.init.summed", "java.init.exact"}) {
            Counter c = Stats.counter(name);
            Stats.dump();
            // All in one pass: the delta before the init must be applied before it and those after
            // it after it, not summed into one cell with it.
            c.add(1000);
            c.init(100);
            for (int i = 0; i < 10; i++) {
                c.add(5);
            }
            c.add(-3);
            c.add(0);
            StatsDump d = Stats.dump();
            MetricDump m = d.get(name);
            assertEquals(name, 147, m.counterValue());
            // The init restarts the statistics: values 100, 105, ..., 150, 147, 147.
            assertEquals(name, 13, m.values().count());
            assertEquals(name, 100.0, m.values().min(), 0);
            assertEquals(name, 150.0, m.values().max(), 0);
            assertEquals(name, 10, m.incrDeltas().count());
            assertEquals(name, 3.0, m.decrDeltas().sum(), 0);
            assertEquals(name, 12, m.deltas().count());

            // The init is taken: a summed counter's deltas are summed again.
            long before = folded(d);
            for (int i = 0; i < 5; i++) {
                c.increment();
            }
            d = Stats.dump();
            assertEquals(name, 152, d.get(name).counterValue());
            assertEquals(name, name.endsWith("summed") ? 5 : 0, folded(d) - before);

            c.init(0);
            c.add(7);
            assertEquals(name, 7, Stats.dump().get(name).counterValue());
        }
    }

    @Test
    public void eventsOfSeveralThreadsSumExactly() throws Exception {
        StatsTest.restart("{" + QUIET + ", \"exact-stamps\": [\"java.mt.exact\"]}");
        Counter c = Stats.counter("java.mt.counter");
        Counter exact = Stats.counter("java.mt.exact");
        Gauge g = Stats.gauge("java.mt.gauge");
        final int threads = 4;
        List<Thread> all = new ArrayList<>();
        List<Throwable> failures = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            final int me = t;
            Thread th = new Thread(() -> {
                for (int k = 0; k < 100_000; k++) {
                    c.add(3);
                    exact.increment();
                    if (k % 2 == 0) {
                        c.decrement();
                    }
                    if (k % 100 == 0) {
                        g.set(me);
                        c.add(0);
                    }
                }
            });
            th.setUncaughtExceptionHandler((x, e) -> {
                synchronized (failures) {
                    failures.add(e);
                }
            });
            all.add(th);
            th.start();
        }
        for (Thread th : all) {
            th.join();
        }
        assertEquals("[]", failures.toString());
        StatsDump d = Stats.dump();
        MetricDump m = d.get("java.mt.counter");
        assertEquals(threads * (300_000 - 50_000), m.counterValue());
        assertEquals(threads * 100_000, m.incrDeltas().count());
        assertEquals(threads * 300_000.0, m.incrDeltas().sum(), 0);
        assertEquals(threads * 50_000, m.decrDeltas().count());
        assertEquals(threads * 50_000.0, m.decrDeltas().sum(), 0);
        assertEquals(threads * (150_000 + 1_000), m.deltas().count());
        assertEquals(threads * 100_000, d.get("java.mt.exact").counterValue());
        MetricDump gd = d.get("java.mt.gauge");
        assertEquals(threads * 1_000, gd.values().count());
        assertEquals(1_000.0 * (0 + 1 + 2 + 3), gd.values().sum(), 0);
        assertEquals(0.0, gd.values().min(), 0);
        assertEquals(3.0, gd.values().max(), 0);
        assertEquals(0.0, d.get("hrts-stats.dropped-events").value(), 0);
    }
    /**
     * More live threads than the producers' 256 lookup slots: threads share slots (the later ones
     * take the ThreadLocal path, or claim a slot whose holder ended), and each event still goes to
     * its own thread's queue.
     */
    @Test
    public void moreThreadsThanProducerSlotsSumExactly() throws Exception {
        StatsTest.restart("{" + QUIET + "}");
        Counter c = Stats.counter("java.slots.counter");
        final int threads = 600;
        java.util.concurrent.CountDownLatch go = new java.util.concurrent.CountDownLatch(1);
        List<Thread> all = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            Thread th = new Thread(() -> {
                try {
                    go.await();
                } catch (InterruptedException e) {
                    return;
                }
                for (int k = 0; k < 2_000; k++) {
                    c.increment();
                }
            });
            all.add(th);
            th.start();
        }
        go.countDown();
        for (Thread th : all) {
            th.join();
        }
        // And threads started after those ended, in the slots they left.
        for (int t = 0; t < 300; t++) {
            Thread th = new Thread(() -> {
                for (int k = 0; k < 2_000; k++) {
                    c.add(2);
                }
            });
            th.start();
            th.join();
        }
        MetricDump m = Stats.dump().get("java.slots.counter");
        assertEquals(threads * 2_000L + 300 * 4_000L, m.counterValue());
        assertEquals(threads * 2_000L + 300 * 2_000L, m.incrDeltas().count());
    }
    /** Repeated deltas, both signs and zeros summed into one cell keep count, sum, min and max. */
    @Test
    public void summedDeltasKeepTheirExtremes() {
        StatsTest.restart("{" + QUIET + "}");
        Counter c = Stats.counter("java.summed.extremes");
        long[] deltas = {5, 5, 3, 3, 7, 7, -2, -2, -9, 5, 0, 0, 3, -9, -1};
        long value = 0;
        for (long d : deltas) {
            c.add(d);
            value += d;
        }
        MetricDump m = Stats.dump().get("java.summed.extremes");
        assertEquals(value, m.counterValue());
        assertEquals(8, m.incrDeltas().count());
        assertEquals(38.0, m.incrDeltas().sum(), 0);
        assertEquals(3.0, m.incrDeltas().min(), 0);
        assertEquals(7.0, m.incrDeltas().max(), 0);
        assertEquals(5, m.decrDeltas().count());
        assertEquals(23.0, m.decrDeltas().sum(), 0);
        assertEquals(1.0, m.decrDeltas().min(), 0);
        assertEquals(9.0, m.decrDeltas().max(), 0);
        assertEquals(deltas.length, m.deltas().count());
        assertEquals(-9.0, m.deltas().min(), 0);
        assertEquals(7.0, m.deltas().max(), 0);
    }
}
