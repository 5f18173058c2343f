package io.hrts.stats;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/** A dump: every metric that has seen an event, by name, and the same as JSON. */
public final class StatsDump {
    private static final int LONGS_PER_METRIC = 8;
    private static final int DOUBLES_PER_SET = 13;
    private static final int DOUBLES_PER_METRIC = 1 + 4 * DOUBLES_PER_SET;

    private final long timestamp;
    private final Map<String, MetricDump> metrics;
    private final String json;

    private StatsDump(long timestamp, Map<String, MetricDump> metrics, String json) {
        this.timestamp = timestamp;
        this.metrics = metrics;
        this.json = json;
    }

    /** A dump the portable statistics made (metrics in name order). */
    static StatsDump portable(long timestamp, Map<String, MetricDump> metrics, String json) {
        return new StatsDump(timestamp, metrics, json);
    }

    static StatsDump of(Object[] raw) {
        String[] names = (String[]) raw[0];
        long[] longs = (long[]) raw[1];
        double[] doubles = (double[]) raw[2];
        Map<String, MetricDump> metrics = new LinkedHashMap<>();
        for (int i = 0; i < names.length; i++) {
            int l = 1 + i * LONGS_PER_METRIC;
            int d = i * DOUBLES_PER_METRIC;
            MetricType type = MetricType.values()[(int) longs[l] - 1];
            Statistics[] sets = new Statistics[(int) longs[l + 3]];
            for (int s = 0; s < sets.length; s++) {
                sets[s] = new Statistics(longs[l + 4 + s], doubles, d + 1 + s * DOUBLES_PER_SET);
            }
            metrics.put(names[i], new MetricDump(names[i], type, longs[l + 1], longs[l + 2], doubles[d], sets));
        }
        return new StatsDump(longs[0], Collections.unmodifiableMap(metrics), (String) raw[3]);
    }

    /**
     * When the dump was made.
     *
     * @return epoch nanoseconds on the hrts timeline
     */
    public long timestamp() {
        return timestamp;
    }

    /**
     * The metrics by name, in name order.
     *
     * @return an unmodifiable map of name to metric
     */
    public Map<String, MetricDump> metrics() {
        return metrics;
    }

    /**
     * One metric.
     *
     * @param name the metric's name
     * @return the metric, or null if the dump has none of that name
     */
    public MetricDump get(String name) {
        return metrics.get(name);
    }

    /**
     * The dump as JSON in handystats' shape.
     *
     * @return the JSON text
     */
    public String json() {
        return json;
    }

    @Override
    public String toString() {
        return json;
    }
}
