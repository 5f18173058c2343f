package io.hrts.micrometer;

import io.hrts.HighResTimestamp;
import io.micrometer.core.instrument.Clock;

/**
 * A Micrometer clock on the shared hrts timeline: timers, long task timers and the
 * registries' step boundaries read hrts instead of {@code System.currentTimeMillis()} and
 * {@code System.nanoTime()}.
 *
 * <p>A service passes it where it makes its registry:
 *
 * <pre>{@code new SimpleMeterRegistry(SimpleConfig.DEFAULT, HrtsMicrometerClock.instance())}</pre>
 *
 * <p>(every registry has such a constructor; with Spring Boot, a {@code @Bean} of type {@link
 * Clock} returning {@link #instance()} replaces the auto-configured one).
 *
 * <p>{@link #monotonicTime()} is the same hrts reading as {@link #wallTime()}, in nanoseconds: it
 * only moves forward while nobody resets the segment's base ({@code setBaseInfo}, {@code hrts
 * reset}), which is an explicit, rare act. Both methods are a native stamp read and no
 * allocation.
 */
public final class HrtsMicrometerClock implements Clock {
    private static final HrtsMicrometerClock INSTANCE = new HrtsMicrometerClock();

    private HrtsMicrometerClock() {}

    /**
     * The clock, with the hrts segment open.
     *
     * @return the one instance
     * @throws io.hrts.HrtsException if the native library cannot be loaded or the segment cannot
     *     be opened (its message says why and what to do)
     */
    public static HrtsMicrometerClock instance() {
        HighResTimestamp.open();
        return INSTANCE;
    }

    /**
     * Milliseconds since the epoch on the hrts timeline.
     *
     * @return {@link HighResTimestamp#getEpochNanoseconds()} in whole milliseconds
     */
    @Override
    public long wallTime() {
        return Math.floorDiv(HighResTimestamp.getEpochNanoseconds(), 1_000_000L);
    }

    /**
     * Nanoseconds on the hrts timeline (since the epoch), for measuring elapsed time.
     *
     * @return {@link HighResTimestamp#getEpochNanoseconds()}
     */
    @Override
    public long monotonicTime() {
        return HighResTimestamp.getEpochNanoseconds();
    }

    @Override
    public String toString() {
        return "HrtsMicrometerClock";
    }
}
