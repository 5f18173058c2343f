package io.hrts.stats;

import java.util.HashMap;
import java.util.Map;

/**
 * The per-metric state of {@link PortableStats}, as native/stats/src/metric.rs keeps it: a counter's,
 * a gauge's and a timer's values, their incremental statistics (incremental.rs) and the
 * log-linear histogram behind the quantiles (histogram.rs). Not thread-safe: PortableStats
 * holds its lock around every use.
 */
final class PortableMetricState {
    private PortableMetricState() {}

    static final class CounterState {
        long value;
        long ts;
        boolean started;
        final Incremental values = new Incremental();
        final Incremental incr = new Incremental();
        final Incremental decr = new Incremental();
        final Incremental deltas = new Incremental();

        private void start(long t, PortableConfig p) {
            if (!started) {
                started = true;
                values.add(value, t, p);
            }
            ts = Math.max(ts, t);
        }

        void init(long v, long t, PortableConfig p) {
            value = v;
            ts = 0;
            started = false;
            values.reset();
            incr.reset();
            decr.reset();
            deltas.reset();
            start(t, p);
        }

        void add(long delta, long t, PortableConfig p) {
            start(t, p);
            value = saturatingAdd(value, delta);
            values.add(value, t, p);
            deltas.add(delta, t, p);
            if (delta > 0) {
                incr.add(delta, t, p);
            } else if (delta < 0) {
                decr.add(-(double) delta, t, p);
            }
        }

        void addBatch(long n, long sum, long min, long max, long t, PortableConfig p) {
            start(t, p);
            long v0 = value;
            value = saturatingAdd(v0, sum);
            double nf = n;
            double v0f = v0;
            double sumf = sum;
            double valuesSum = nf * v0f + sumf * (nf + 1.0) / 2.0;
            double vmin;
            double vmax;
            if (min > 0) {
                vmin = v0f + min;
                vmax = value;
            } else if (max < 0) {
                vmin = value;
                vmax = v0f + max;
            } else {
                vmin = v0f;
                vmax = v0f;
            }
            values.addBatch(n, valuesSum, vmin, vmax, t, p);
            deltas.addBatch(n, sumf, min, max, t, p);
            if (min > 0) {
                incr.addBatch(n, sumf, min, max, t, p);
            } else if (max < 0) {
                decr.addBatch(n, -sumf, -(double) max, -(double) min, t, p);
            }
        }

        MetricDump dump(String name, long now, PortableConfig p) {
            if (!started) {
                return null;
            }
            return new MetricDump(name, MetricType.COUNTER, ts, value, value, new Statistics[] {
                values.snapshot(now, p, false), incr.snapshot(now, p, true), decr.snapshot(now, p, true),
                deltas.snapshot(now, p, true)});
        }
    }

    private static long saturatingAdd(long a, long b) {
        long r = a + b;
        if (((a ^ r) & (b ^ r)) < 0) {
            return a < 0 ? Long.MIN_VALUE : Long.MAX_VALUE;
        }
        return r;
    }

    static final class GaugeState {
        boolean hasValue;
        double value;
        long ts;
        final Incremental values = new Incremental();

        void set(long n, double sum, double min, double max, double last, long t, PortableConfig p) {
            if (t >= ts || !hasValue) {
                hasValue = true;
                value = last;
                ts = t;
            }
            values.addBatch(n, sum, min, max, t, p);
        }

        MetricDump dump(String name, long now, PortableConfig p) {
            return hasValue ? new MetricDump(name, MetricType.GAUGE, ts, 0, value,
                    new Statistics[] {values.snapshot(now, p, false)}) : null;
        }
    }

    static final class TimerState {
        boolean hasLast;
        long last;
        long ts;
        final Incremental durations = new Incremental();
        /** Running instances: {start, last alive}. */
        final Map<Long, long[]> instances = new HashMap<>();

        void record(long n, double sum, long min, long max, long lastValue, long t, PortableConfig p) {
            if (t >= ts || !hasLast) {
                hasLast = true;
                last = lastValue;
                ts = t;
            }
            durations.addBatch(n, sum, min, max, t, p);
        }

        /** Drops the instances idle for longer than {@code idle} at {@code now}; how many. */
        int sweep(long now, long idle) {
            int before = instances.size();
            instances.values().removeIf(i -> now - i[1] > idle);
            return before - instances.size();
        }

        MetricDump dump(String name, long now, PortableConfig p) {
            return hasLast ? new MetricDump(name, MetricType.TIMER, ts, 0, last,
                    new Statistics[] {durations.snapshot(now, p, false)}) : null;
        }
    }

    // ------------------------------------------------------------------ incremental statistics (incremental.rs)

    static final class Incremental {
        long count;
        double sum;
        double min;
        double max;
        double movingAvg;
        double intervalCount;
        double intervalSum;
        long last;
        Histogram histogram = new Histogram();

        void reset() {
            count = 0;
            sum = 0;
            histogram = new Histogram();
        }

        void add(double x, long t, PortableConfig p) {
            addBatch(1, x, x, x, t, p);
        }

        void addBatch(long n, double batchSum, double bmin, double bmax, long t, PortableConfig p) {
            if (n == 0) {
                return;
            }
            double mean = batchSum / n;
            double interval = p.intervalMs * 1e6;
            if (count == 0) {
                min = bmin;
                max = bmax;
                movingAvg = mean;
                intervalCount = n;
                intervalSum = batchSum;
                last = t;
            } else {
                min = Math.min(min, bmin);
                max = Math.max(max, bmax);
                if (n == 1) {
                    movingAvg = p.alpha * mean + (1.0 - p.alpha) * movingAvg;
                } else {
                    movingAvg = mean + Math.pow(1.0 - p.alpha, n) * (movingAvg - mean);
                }
                if (Long.compareUnsigned(t, last) >= 0) {
                    double e = (t - last) / interval;
                    if (e >= 1.0) {
                        intervalCount = n;
                        intervalSum = batchSum;
                    } else {
                        intervalCount = intervalCount * (1.0 - e) + n;
                        intervalSum = intervalSum * (1.0 - e) + batchSum;
                    }
                    last = t;
                } else {
                    double e = (last - t) / interval;
                    if (e < 1.0) {
                        intervalCount += n * (1.0 - e);
                        intervalSum += batchSum * (1.0 - e);
                    }
                }
            }
            count += n;
            sum += batchSum;
            if (n == 1) {
                histogram.record(bmin, 1);
            } else {
                histogram.record(bmin, 1);
                histogram.record(bmax, 1);
                histogram.record(mean, n - 2);
            }
        }

        /** The statistics at {@code now}; the rate of the interval sum if {@code ofSum}, else of the count. */
        Statistics snapshot(long now, PortableConfig p, boolean ofSum) {
            double[] v = new double[13];
            if (count == 0) {
                java.util.Arrays.fill(v, Double.NaN);
                v[0] = 0; // sum
                v[5] = 0; // interval count
                v[6] = 0; // interval sum
                v[12] = 0; // rate
                return new Statistics(0, v, 0);
            }
            double interval = p.intervalMs * 1e6;
            double decay = Long.compareUnsigned(now, last) > 0 ? Math.max(0.0, 1.0 - (now - last) / interval) : 1.0;
            double ic = intervalCount * decay;
            double is = intervalSum * decay;
            double seconds = interval / 1e9;
            double[] q = histogram.quantiles(min, max);
            v[0] = sum;
            v[1] = min;
            v[2] = max;
            v[3] = sum / count;
            v[4] = movingAvg;
            v[5] = ic;
            v[6] = is;
            v[7] = ic > 0 ? is / ic : Double.NaN;
            System.arraycopy(q, 0, v, 8, 4);
            v[12] = ofSum ? is / seconds : ic / seconds;
            return new Statistics(count, v, 0);
        }
    }

    /** A log-linear histogram with 64 sub-buckets per octave: quantiles within 1 % (histogram.rs). */
    static final class Histogram {
        private static final int SUB_BITS = 6;
        private static final int SUB = 1 << SUB_BITS;
        private static final int MIN_EXP = -64;
        private static final int OCTAVES = 128;
        private static final double[] QUANTILES = {0.5, 0.9, 0.99, 0.999};

        private long[][] positive;
        private long[][] negative;
        private long posOverflow;
        private long negOverflow;
        private long zero;
        private long total;

        void record(double x, long n) {
            if (x != x || n == 0) {
                return;
            }
            total += n;
            long bits = Double.doubleToRawLongBits(Math.abs(x));
            int biased = (int) ((bits >>> 52) & 0x7ff);
            int exp = biased - 1023;
            if (biased == 0 || exp < MIN_EXP) {
                zero += n;
                return;
            }
            boolean pos = x > 0;
            if (exp >= MIN_EXP + OCTAVES) {
                if (pos) {
                    posOverflow += n;
                } else {
                    negOverflow += n;
                }
                return;
            }
            long[][] side;
            if (pos) {
                side = positive == null ? (positive = new long[OCTAVES][]) : positive;
            } else {
                side = negative == null ? (negative = new long[OCTAVES][]) : negative;
            }
            int octave = exp - MIN_EXP;
            if (side[octave] == null) {
                side[octave] = new long[SUB];
            }
            side[octave][(int) ((bits >>> (52 - SUB_BITS)) & (SUB - 1))] += n;
        }

        private static double midpoint(int octave, int sub) {
            return Math.scalb(1.0, octave + MIN_EXP) * (1.0 + (sub + 0.5) / SUB);
        }

        private long seen;
        private int next;

        private void visit(long count, double value, long[] ranks, double[] out, double min, double max) {
            seen += count;
            while (next < ranks.length && seen >= ranks[next]) {
                out[next++] = Math.min(Math.max(value, min), max);
            }
        }

        double[] quantiles(double min, double max) {
            double[] out = {Double.NaN, Double.NaN, Double.NaN, Double.NaN};
            if (total == 0) {
                return out;
            }
            long[] ranks = new long[4];
            for (int i = 0; i < 4; i++) {
                ranks[i] = Math.min(Math.max((long) Math.ceil(QUANTILES[i] * total), 1), total);
            }
            seen = 0;
            next = 0;
            visit(negOverflow, min, ranks, out, min, max);
            if (negative != null) {
                for (int o = OCTAVES - 1; o >= 0; o--) {
                    if (negative[o] != null) {
                        for (int s = SUB - 1; s >= 0; s--) {
                            if (negative[o][s] > 0) {
                                visit(negative[o][s], -midpoint(o, s), ranks, out, min, max);
                            }
                        }
                    }
                }
            }
            visit(zero, 0.0, ranks, out, min, max);
            if (positive != null) {
                for (int o = 0; o < OCTAVES; o++) {
                    if (positive[o] != null) {
                        for (int s = 0; s < SUB; s++) {
                            if (positive[o][s] > 0) {
                                visit(positive[o][s], midpoint(o, s), ranks, out, min, max);
                            }
                        }
                    }
                }
            }
            visit(posOverflow, max, ranks, out, min, max);
            return out;
        }
    }
}
