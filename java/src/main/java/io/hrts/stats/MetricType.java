package io.hrts.stats;

/** The kinds of metric. */
public enum MetricType {
    COUNTER,
    GAUGE,
    TIMER;

    /** The name the JSON dump uses ("counter", "gauge", "timer"). */
    public String jsonName() {
        return name().toLowerCase(java.util.Locale.ROOT);
    }
}
