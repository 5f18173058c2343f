package io.hrts;

/**
 * One consistent snapshot of the shared base: the counter value and the calendar time that
 * were paired when the base was set, the counter's frequency and the base's generation.
 */
public final class BaseInfo {
    private final long frequency;
    private final long counter;
    private final long seconds;
    private final long microseconds;
    private final long nanoseconds;
    private final long generation;

    BaseInfo(long[] v) {
        this.frequency = v[0];
        this.counter = v[1];
        this.seconds = v[2];
        this.microseconds = v[3];
        this.nanoseconds = v[4];
        this.generation = v[5];
    }

    /** Counter ticks per second (calibrated). */
    public long getFrequency() {
        return frequency;
    }

    /** The counter value of the base (an unsigned 64-bit value). */
    public long getCounter() {
        return counter;
    }

    /** Whole seconds since the Unix epoch of the base. */
    public long getSeconds() {
        return seconds;
    }

    /** Microseconds within that second. */
    public long getMicroseconds() {
        return microseconds;
    }

    /** The base's calendar time in nanoseconds since the Unix epoch. */
    public long getNanoseconds() {
        return nanoseconds;
    }

    /** The generation: starts at 1, bumped by every base reset. */
    public long getGeneration() {
        return generation;
    }

    /** IBMTS's {@code long[4]}: frequency, counter, seconds, microseconds. */
    public long[] toIbmtsArray() {
        return new long[] {frequency, counter, seconds, microseconds};
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof BaseInfo)) {
            return false;
        }
        BaseInfo b = (BaseInfo) o;
        return frequency == b.frequency && counter == b.counter && nanoseconds == b.nanoseconds
                && generation == b.generation;
    }

    @Override
    public int hashCode() {
        return Long.hashCode(counter) * 31 + Long.hashCode(nanoseconds) * 17 + Long.hashCode(generation);
    }

    @Override
    public String toString() {
        return "BaseInfo[frequency=" + frequency + ", counter=" + Long.toUnsignedString(counter)
                + ", seconds=" + seconds + ", microseconds=" + microseconds + ", nanoseconds="
                + nanoseconds + ", generation=" + generation + "]";
    }
}
