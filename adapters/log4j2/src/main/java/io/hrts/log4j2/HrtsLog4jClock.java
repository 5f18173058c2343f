package io.hrts.log4j2;

import io.hrts.HighResTimestamp;
import io.hrts.HrtsException;
import org.apache.logging.log4j.core.time.MutableInstant;
import org.apache.logging.log4j.core.time.PreciseClock;
import org.apache.logging.log4j.core.util.Clock;
import org.apache.logging.log4j.status.StatusLogger;

/**
 * A Log4j2 clock on the shared hrts timeline: log events carry nanosecond instants that compare
 * directly with the stamps of every other process (JVM, C, Rust, the {@code hrts} command) using
 * the same segment.
 *
 * <p>Log4j2 makes its clock once, from the {@code log4j2.clock} property, the first time it
 * creates a log event. A service selects this one with the JVM option
 *
 * <pre>{@code -Dlog4j2.clock=io.hrts.log4j2.HrtsLog4jClock}</pre>
 *
 * <p>or the line {@code log4j2.clock=io.hrts.log4j2.HrtsLog4jClock} in a
 * {@code log4j2.component.properties} on the classpath. The constructor loads the native library
 * and opens the segment: if that fails, the {@link HrtsException}'s message (what happened and
 * what to do) goes to Log4j2's status logger and Log4j2 keeps its default clock, so logging never
 * stops because of hrts.
 *
 * <p>Both methods are a native stamp read and a little arithmetic: no allocation (Log4j2's
 * garbage-free logging stays garbage-free).
 */
public final class HrtsLog4jClock implements Clock, PreciseClock {
    private static final long NANOS_PER_SECOND = 1_000_000_000L;
    private static final long NANOS_PER_MILLI = 1_000_000L;

    /**
     * Opens the hrts segment (Log4j2 calls this through {@code log4j2.clock}).
     *
     * @throws io.hrts.HrtsException if the native library cannot be loaded or the segment cannot
     *     be opened
     */
    public HrtsLog4jClock() {
        try {
            HighResTimestamp.open();
        } catch (HrtsException e) {
            // Log4j reports only that construction failed: say why, on its status logger.
            StatusLogger.getLogger().error("hrts: cannot stamp log events with {}: {}",
                    HrtsLog4jClock.class.getName(), e.getMessage());
            throw e;
        }
    }

    /**
     * Milliseconds since the epoch on the hrts timeline.
     *
     * @return {@link HighResTimestamp#getEpochNanoseconds()} in whole milliseconds
     */
    @Override
    public long currentTimeMillis() {
        return Math.floorDiv(HighResTimestamp.getEpochNanoseconds(), NANOS_PER_MILLI);
    }

    /**
     * Sets {@code instant} to now on the hrts timeline, to the nanosecond.
     *
     * @param instant the event's instant, filled in place
     */
    @Override
    public void init(MutableInstant instant) {
        long ns = HighResTimestamp.getEpochNanoseconds();
        instant.initFromEpochSecond(Math.floorDiv(ns, NANOS_PER_SECOND),
                (int) Math.floorMod(ns, NANOS_PER_SECOND));
    }
}
