package io.hrts;

/**
 * Sequence numbers shared by every process of the segment and never repeated, even across
 * crashes and reboots: they are persisted in a file ({@code HRTS_SEQ_FILE}, by default {@code
 * ~/.local/state/hrts/<segment>.seq}), written once every {@code HRTS_SEQ_INTERVAL} numbers.
 *
 * <p>In the portable implementation ({@link HighResTimestamp#implementation()}) they are this JVM's
 * own, persisted nowhere: they start at the epoch nanoseconds of the first call, so they exceed an
 * earlier JVM's unless it issued more than one per nanosecond or the system clock was set back.
 *
 * <pre>{@code
 * long n = Sequences.next();
 * }</pre>
 */
public final class Sequences {
    private Sequences() {}

    /**
     * The segment's next sequence number.
     *
     * @return a number greater than every one issued before on this segment
     * @throws HrtsException if the segment cannot be opened, or the sequence file cannot be read
     *     or written ({@link HrtsException.Kind#PERSIST}, {@link HrtsException.Kind#OS}, ...)
     */
    public static long next() {
        return Backends.CURRENT.nextSequence();
    }
}
