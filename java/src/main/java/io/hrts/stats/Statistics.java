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
        this.v = java.util.Arrays.copyOfRange(all, offset, offset + 13);
    }

    /**
     * The number of data.
     *
     * @return the count
     */
    public long count() {
        return count;
    }

    /**
     * The sum of the data.
     *
     * @return the sum
     */
    public double sum() {
        return v[0];
    }

    /**
     * The smallest datum.
     *
     * @return the minimum (NaN without data)
     */
    public double min() {
        return v[1];
    }

    /**
     * The largest datum.
     *
     * @return the maximum (NaN without data)
     */
    public double max() {
        return v[2];
    }

    /**
     * The mean of the data.
     *
     * @return the mean (NaN without data)
     */
    public double mean() {
        return v[3];
    }

    /**
     * The exponential moving average ({@code moving-average-alpha}).
     *
     * @return the moving average (NaN without data)
     */
    public double movingAverage() {
        return v[4];
    }

    /**
     * The data count over the moving interval, decayed to the dump's time.
     *
     * @return the interval count
     */
    public double intervalCount() {
        return v[5];
    }

    /**
     * The data sum over the moving interval, decayed to the dump's time.
     *
     * @return the interval sum
     */
    public double intervalSum() {
        return v[6];
    }

    /**
     * The mean over the moving interval.
     *
     * @return the interval mean (NaN without data)
     */
    public double intervalMean() {
        return v[7];
    }

    /**
     * Per second over the moving interval ({@code moving-interval}), decayed to the dump's time:
     * in a values set the data per second (a counter's changes, a gauge's sets, a timer's
     * measurements), in a counter's incr-deltas, decr-deltas and deltas the set's sum per second
     * (amount added, amount taken away, net change). 0 when nothing is in the window.
     *
     * @return the rate per second
     */
    public double rate() {
        return v[12];
    }

    /**
     * The median, within 1 % (log-linear histogram).
     *
     * @return the 50th percentile (NaN without data)
     */
    public double p50() {
        return v[8];
    }

    /**
     * The 90th percentile, within 1 %.
     *
     * @return the 90th percentile (NaN without data)
     */
    public double p90() {
        return v[9];
    }

    /**
     * The 99th percentile, within 1 %.
     *
     * @return the 99th percentile (NaN without data)
     */
    public double p99() {
        return v[10];
    }

    /**
     * The 99.9th percentile, within 1 %.
     *
     * @return the 99.9th percentile (NaN without data)
     */
    public double p999() {
        return v[11];
    }

    @Override
    public String toString() {
        return "Statistics{count=" + count + ", sum=" + sum() + ", min=" + min() + ", max=" + max()
                + ", mean=" + mean() + ", rate=" + rate() + ", p50=" + p50() + ", p99=" + p99() + "}";
    }
}
