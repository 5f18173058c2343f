package io.hrts;

/**
 * One consistent snapshot of the shared base: the counter value and the calendar time that were
 * paired when the base was set, the counter's frequency and the base's generation.
 *
 * @param frequency counter ticks per second (calibrated)
 * @param counter the counter value of the base (an unsigned 64-bit value: print it with {@link
 *     Long#toUnsignedString(long)})
 * @param seconds whole seconds since the Unix epoch of the base
 * @param microseconds microseconds within that second
 * @param nanoseconds the base's calendar time in nanoseconds since the Unix epoch
 * @param generation starts at 1, bumped by every base reset
 */
public record BaseInfo(
        long frequency, long counter, long seconds, long microseconds, long nanoseconds, long generation) {

    /**
     * IBMTS's {@code long[4]}.
     *
     * @return {frequency, counter, seconds, microseconds}
     */
    public long[] toIbmtsArray() {
        return new long[] {frequency, counter, seconds, microseconds};
    }

    /** The components, with the counter unsigned. */
    @Override
    public String toString() {
        return "BaseInfo[frequency=" + frequency + ", counter=" + Long.toUnsignedString(counter)
                + ", seconds=" + seconds + ", microseconds=" + microseconds + ", nanoseconds="
                + nanoseconds + ", generation=" + generation + "]";
    }
}
