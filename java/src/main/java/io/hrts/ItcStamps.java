package io.hrts;

/**
 * Intel Trace Collector style stamps of this JVM: the clock tick since the JVM's first ITC stamp
 * in the high bits and an event counter in the low {@link #eventBits()} bits (13 unless {@code
 * HRTS_ITC_EVENT_BITS} says otherwise), unique within this process even when the tick ({@code
 * HRTS_ITC_TICK_NS}, default 1 ns) is coarse.
 *
 * <pre>{@code
 * long s = ItcStamps.next();
 * long ns = ItcStamps.toEpochNanoseconds(s);
 * }</pre>
 */
public final class ItcStamps {
    private ItcStamps() {}

    /**
     * The next ITC stamp of this JVM.
     *
     * @return a stamp greater (unsigned) than every earlier one of this process
     * @throws HrtsException if the segment cannot be opened, the format in the environment is
     *     invalid, or the run outlived the ticks a stamp can hold
     */
    public static long next() {
        return Backends.CURRENT.itcNext();
    }

    /**
     * The epoch nanoseconds of an ITC stamp's clock tick (the event counter is dropped).
     *
     * @param stamp a stamp from {@link #next()}
     * @return nanoseconds since the Unix epoch
     * @throws HrtsException if the segment cannot be opened or the format is invalid
     */
    public static long toEpochNanoseconds(long stamp) {
        return Backends.CURRENT.itcToEpochNanos(stamp);
    }

    /**
     * The maximum number of this JVM's ITC stamps on one clock tick, counted as Intel Trace
     * Collector counts it.
     *
     * @return the largest event counter issued: 0 when no two stamps shared a clock tick, N when
     *     some tick held N + 1 stamps (the clock's resolution was too coarse)
     * @throws HrtsException if the segment cannot be opened or the format is invalid
     */
    public static long maxEventsPerTick() {
        return Backends.CURRENT.itcMaxEventsPerTick();
    }

    /**
     * How many low-order bits of an ITC stamp hold the event counter.
     *
     * @return the event bits of this JVM's stamps
     * @throws HrtsException if the segment cannot be opened or the format is invalid
     */
    public static int eventBits() {
        return Backends.CURRENT.itcEventBits();
    }
}
