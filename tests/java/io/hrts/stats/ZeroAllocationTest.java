package io.hrts.stats;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import java.lang.management.ManagementFactory;
import org.junit.AfterClass;
import org.junit.BeforeClass;
import org.junit.Test;

/**
 * Measuring points allocate nothing after a thread's first measurement: {@code
 * ThreadMXBean#getThreadAllocatedBytes} of this thread does not move over 1,000,000 calls
 * (after a warm-up, so the JIT is done). Many of the calls meet a full queue and fold, so both
 * paths are covered.
 */
public class ZeroAllocationTest {
    private static final int CALLS = 1_000_000;
    private static com.sun.management.ThreadMXBean mx;
    private static Counter counter;
    private static Gauge gauge;
    private static Timer timer;

    @BeforeClass
    public static void setUp() {
        mx = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        assertTrue("allocation measurement supported", mx.isThreadAllocatedMemorySupported());
        mx.setThreadAllocatedMemoryEnabled(true);
        StatsTest.restart("{\"json-dump\": {\"interval\": 0}, \"metrics-dump\": {\"interval\": 0}}");
        counter = Stats.counter("alloc.counter");
        gauge = Stats.gauge("alloc.gauge");
        timer = Stats.timer("alloc.timer");
    }

    @AfterClass
    public static void tearDown() {
        Stats.stop();
    }

    private static void loopCounter(int n) {
        for (int i = 0; i < n; i++) {
            counter.increment();
        }
    }

    private static void loopGauge(int n) {
        for (int i = 0; i < n; i++) {
            gauge.set(i);
        }
    }

    private static void loopRecord(int n) {
        for (int i = 0; i < n; i++) {
            timer.record(i);
        }
    }

    @SuppressWarnings("try")
    private static void loopScope(int n) {
        for (int i = 0; i < n; i++) {
            try (Timer.Scope s = timer.scope()) {
                // an empty span
            }
        }
    }

    private interface Loop {
        void run(int n);
    }

    /**
     * Warms up, then measures; a scope is only free once C2 has compiled the loop (escape
     * analysis), which on a busy machine can take longer than one warm-up, so up to 10 rounds.
     */
    private static void assertNoAllocation(String what, Loop loop) {
        long tid = Thread.currentThread().getId();
        long allocated = -1;
        for (int round = 0; round < 10 && allocated != 0; round++) {
            for (int i = 0; i < 20; i++) {
                loop.run(CALLS / 10);
            }
            long before = mx.getThreadAllocatedBytes(tid);
            loop.run(CALLS);
            allocated = mx.getThreadAllocatedBytes(tid) - before;
        }
        assertEquals(what + " allocated bytes over " + CALLS + " calls", 0, allocated);
    }

    @Test
    public void counterIncrement() {
        assertNoAllocation("Counter.increment", ZeroAllocationTest::loopCounter);
    }

    @Test
    public void gaugeSet() {
        assertNoAllocation("Gauge.set", ZeroAllocationTest::loopGauge);
    }

    @Test
    public void timerRecord() {
        assertNoAllocation("Timer.record", ZeroAllocationTest::loopRecord);
    }

    @Test
    public void timerScope() {
        assertNoAllocation("Timer.scope", ZeroAllocationTest::loopScope);
    }
}
