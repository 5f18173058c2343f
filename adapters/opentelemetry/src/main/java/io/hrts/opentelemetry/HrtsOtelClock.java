package io.hrts.opentelemetry;

import io.hrts.HighResTimestamp;
import io.opentelemetry.sdk.common.Clock;

/**
 * An OpenTelemetry SDK clock on the shared hrts timeline: span start and end times (and metric
 * and log record times, where the SDK takes a clock) are hrts stamps, so they compare directly
 * with the stamps of every other process using the same segment, C and Rust ones included.
 *
 * <p>A service passes it to the SDK's builders:
 *
 * <pre>{@code SdkTracerProvider.builder().setClock(HrtsOtelClock.instance())}</pre>
 *
 * <p>({@code SdkMeterProvider.builder()} and {@code SdkLoggerProvider.builder()} have the same
 * {@code setClock}).
 *
 * <p>The SDK reads {@link #now()} once per trace root and times the rest with {@link #nanoTime()}
 * from there; both read the same hrts timeline, so an end time is exactly the hrts stamp at the
 * end. {@link #nanoTime()} only moves forward while nobody resets the segment's base ({@code
 * setBaseInfo}, {@code hrts reset}), an explicit, rare act. No method allocates.
 */
public final class HrtsOtelClock implements Clock {
    private static final HrtsOtelClock INSTANCE = new HrtsOtelClock();

    private HrtsOtelClock() {}

    /**
     * The clock, with the hrts segment open.
     *
     * @return the one instance
     * @throws io.hrts.HrtsException if the native library cannot be loaded or the segment cannot
     *     be opened (its message says why and what to do)
     */
    public static HrtsOtelClock instance() {
        HighResTimestamp.open();
        return INSTANCE;
    }

    /**
     * Nanoseconds since the epoch on the hrts timeline.
     *
     * @return {@link HighResTimestamp#getEpochNanoseconds()}
     */
    @Override
    public long now() {
        return HighResTimestamp.getEpochNanoseconds();
    }

    /**
     * The same as {@link #now()}: an hrts stamp costs no more at full precision.
     *
     * @param highPrecision ignored
     * @return {@link HighResTimestamp#getEpochNanoseconds()}
     */
    @Override
    public long now(boolean highPrecision) {
        return HighResTimestamp.getEpochNanoseconds();
    }

    /**
     * Nanoseconds on the hrts timeline, for measuring elapsed time (the same reading as {@link
     * #now()}).
     *
     * @return {@link HighResTimestamp#getEpochNanoseconds()}
     */
    @Override
    public long nanoTime() {
        return HighResTimestamp.getEpochNanoseconds();
    }

    @Override
    public String toString() {
        return "HrtsOtelClock";
    }
}
