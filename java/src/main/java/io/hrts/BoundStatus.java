package io.hrts;

/**
 * What an interval from {@link HighResTimestamp#getBoundedEpochNanoseconds(long[])} is worth, as
 * the system clock's time service and the age of its word say. Only {@link #SYNCHRONIZED} and
 * {@link #FREE_RUNNING} come with an interval; the others are thrown as {@link HrtsException} of
 * kind {@link HrtsException.Kind#UNSYNCHRONIZED}. The codes are the core's and C's
 * ({@code hrts_bound_status}).
 */
public enum BoundStatus {
    /** Nothing is known: no bound yet, or it is older than its void-after. */
    UNKNOWN,
    /** The time service keeps the clock and its word is fresh. */
    SYNCHRONIZED,
    /** The time service's word is old: the interval grows at the drift rate. */
    FREE_RUNNING,
    /** The time service says the system clock is not synchronized. */
    UNSYNCHRONIZED,
    /**
     * The writer saw the counter or the clock disrupted (a counter that jumped, stopped or changed
     * rate, a suspend): no interval until it has learned the counter's rate again.
     */
    DISRUPTED;

    /**
     * The status of a native code.
     *
     * @param code 0 to 4
     * @return the status, {@link #UNKNOWN} for a code this version does not know
     */
    static BoundStatus fromCode(int code) {
        return code >= 0 && code < BY_CODE.length ? BY_CODE[code] : UNKNOWN;
    }

    /** {@code values()} once: each call of it copies the array (32 bytes per bounded stamp). */
    private static final BoundStatus[] BY_CODE = values();
}
