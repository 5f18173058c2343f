package io.hrts.trace;

/**
 * The outcome of one sync round: how far this host's clock is from the master's, by the
 * exchange with the shortest round trip, and the bound on that estimate's error (half that round
 * trip: whatever the network's delays, the true offset is within it).
 */
public final class SyncResult {
    private final double offsetNanos;
    private final double boundNanos;

    SyncResult(double offsetNanos, double boundNanos) {
        this.offsetNanos = offsetNanos;
        this.boundNanos = boundNanos;
    }

    /**
     * The master's clock minus this host's clock.
     *
     * @return the offset in nanoseconds
     */
    public double getOffsetNanos() {
        return offsetNanos;
    }

    /**
     * The bound on {@link #getOffsetNanos()}'s error.
     *
     * @return the bound in nanoseconds
     */
    public double getBoundNanos() {
        return boundNanos;
    }

    @Override
    public String toString() {
        return String.format(java.util.Locale.ROOT, "master - local = %.1f ns +- %.1f ns", offsetNanos,
                boundNanos);
    }
}
