package io.hrts.stats;

/** The kinds of metric. */
public enum MetricType {
    /** Counts events: increments, decrements and deltas. */
    COUNTER,
    /** Holds a value that is set. */
    GAUGE,
    /** Measures durations. */
    TIMER;

    /**
     * The name the JSON dump uses.
     *
     * @return "counter", "gauge" or "timer"
     */
    public String jsonName() {
        return name().toLowerCase(java.util.Locale.ROOT);
    }
}
