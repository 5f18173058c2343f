package io.hrts.micrometer;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertSame;
import static org.junit.Assert.assertTrue;

import io.hrts.HighResTimestamp;
import io.micrometer.core.instrument.LongTaskTimer;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleConfig;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.concurrent.TimeUnit;
import org.junit.After;
import org.junit.Before;
import org.junit.Test;

/** Micrometer's timers on {@link HrtsMicrometerClock}, checked against hrts stamps around them. */
public class HrtsMicrometerClockTest {
    private static final long SLEEP_MS = 50;
    // Thread.sleep waits on CLOCK_MONOTONIC; hrts is calibrated against CLOCK_MONOTONIC_RAW,
    // which NTP does not slew (up to 500 ppm apart), with a calibration error of its own: 1 %
    // covers both and still tells nanoseconds from any other unit.
    private static final long SLEEP_NS_AT_LEAST = TimeUnit.MILLISECONDS.toNanos(SLEEP_MS) * 99 / 100;

    private SimpleMeterRegistry registry;

    @Before
    public void setUp() {
        registry = new SimpleMeterRegistry(SimpleConfig.DEFAULT, HrtsMicrometerClock.instance());
    }

    @After
    public void tearDown() {
        registry.close();
    }

    @Test
    public void clockReadsTheHrtsTimeline() {
        HrtsMicrometerClock clock = HrtsMicrometerClock.instance();
        assertSame(clock, HrtsMicrometerClock.instance());
        assertSame(clock, registry.config().clock());
        for (int i = 0; i < 1000; i++) {
            long before = HighResTimestamp.getEpochNanoseconds();
            long mono = clock.monotonicTime();
            long wall = clock.wallTime();
            long after = HighResTimestamp.getEpochNanoseconds();
            assertTrue(before + " <= " + mono + " <= " + after, before <= mono && mono <= after);
            assertTrue(before / 1_000_000 + " <= " + wall + " <= " + after / 1_000_000,
                    Math.floorDiv(before, 1_000_000L) <= wall && wall <= Math.floorDiv(after, 1_000_000L));
        }
    }

    @Test
    public void timerMeasuresAKnownSleep() {
        Timer timer = Timer.builder("hrts.sleep").register(registry);
        long before = HighResTimestamp.getEpochNanoseconds();
        timer.record(HrtsMicrometerClockTest::sleep);
        long after = HighResTimestamp.getEpochNanoseconds();
        assertEquals(1, timer.count());
        long measured = (long) timer.totalTime(TimeUnit.NANOSECONDS);
        // The timer's two readings lie between ours: what it measured is at most what we did.
        assertTrue("measured " + measured + " ns, at least " + SLEEP_NS_AT_LEAST,
                measured >= SLEEP_NS_AT_LEAST);
        assertTrue("measured " + measured + " ns, at most " + (after - before), measured <= after - before);
        assertEquals(measured, (long) timer.max(TimeUnit.NANOSECONDS));
    }

    @Test
    public void sampleAndLongTaskTimerUseTheClock() {
        Timer timer = Timer.builder("hrts.sample").register(registry);
        long before = HighResTimestamp.getEpochNanoseconds();
        Timer.Sample sample = Timer.start(registry);
        LongTaskTimer.Sample task = LongTaskTimer.builder("hrts.task").register(registry).start();
        sleep();
        long running = (long) task.duration(TimeUnit.NANOSECONDS);
        long taskNs = task.stop();
        long sampleNs = sample.stop(timer);
        long after = HighResTimestamp.getEpochNanoseconds();
        for (long ns : new long[] {running, taskNs, sampleNs}) {
            assertTrue(ns + " ns in [" + SLEEP_NS_AT_LEAST + ", " + (after - before) + "]",
                    ns >= SLEEP_NS_AT_LEAST && ns <= after - before);
        }
        assertTrue(running <= taskNs);
        assertEquals(sampleNs, (long) timer.totalTime(TimeUnit.NANOSECONDS));
    }

    private static void sleep() {
        try {
            Thread.sleep(SLEEP_MS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted", e);
        }
    }
}
