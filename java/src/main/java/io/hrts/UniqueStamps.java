package io.hrts;

/**
 * Unique stamps: epoch nanoseconds on the shared timeline that no other call returns, in any
 * thread of any process attached to the segment (Java, C, Rust, the {@code hrts} command).
 *
 * <p>In the portable implementation ({@link HighResTimestamp#implementation()}) they are unique
 * and strictly increasing within this JVM only: no other process shares its state.
 *
 * <pre>{@code
 * long id = UniqueStamps.next();   // a time stamp that is also a unique id
 * }</pre>
 */
public final class UniqueStamps {
    private UniqueStamps() {}

    /**
     * A unique stamp: epoch nanoseconds strictly greater than every unique stamp issued before, by
     * any thread of any process of the segment (the real time, or the last + 1 when callers
     * collide). Hot path: a volatile-boolean check plus one static native (an unordered counter
     * read and a compare-and-swap on the shared segment); no allocation. Unique stamps are in order
     * among themselves because of the compare-and-swap alone; the counter read being unordered, a
     * unique stamp may be a few ns smaller than a stamp another thread took (with {@link
     * HighResTimestamp#getEpochNanosecondsOrdered()}) before an event this call follows.
     *
     * @return the stamp, nanoseconds since the Unix epoch
     * @throws HrtsException if the segment cannot be opened (first call only)
     */
    public static long next() {
        return Backends.CURRENT.unique();
    }
}
