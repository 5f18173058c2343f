package io.hrts.stats;

/**
 * One statistics set of a dumped metric (a counter's values, incr-deltas, decr-deltas or deltas;
 * a gauge's values; a timer's durations in nanoseconds). Values that need at least one datum are
 * {@code NaN} when there is none. Quantiles are within 1 % of the exact nearest-rank value.
 */
public final class Statistics {
    private final long count;
    private final double[] v;

    Statistics(long count, double[] all, int offset) {
        this.count = count;
        this.v = java.util.Arrays.copyOfRange(all, offset, offset + 12);
    }

    public long count() {
        return count;
    }

    public double sum() {
        return v[0];
    }

    public double min() {
        return v[1];
    }

    public double max() {
        return v[2];
    }

    public double mean() {
        return v[3];
    }

    /** The exponential moving average ({@code moving-average-alpha}). */
    public double movingAverage() {
        return v[4];
    }

    /** The data count over the moving interval, decayed to the dump's time. */
    public double intervalCount() {
        return v[5];
    }

    public double intervalSum() {
        return v[6];
    }

    public double intervalMean() {
        return v[7];
    }

    public double p50() {
        return v[8];
    }

    public double p90() {
        return v[9];
    }

    public double p99() {
        return v[10];
    }

    public double p999() {
        return v[11];
    }

    @Override
    public String toString() {
        return "Statistics{count=" + count + ", sum=" + sum() + ", min=" + min() + ", max=" + max()
                + ", mean=" + mean() + ", p50=" + p50() + ", p99=" + p99() + "}";
    }
}
