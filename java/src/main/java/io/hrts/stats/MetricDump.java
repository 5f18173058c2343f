package io.hrts.stats;

/** One metric of a {@link StatsDump}. */
public final class MetricDump {
    private final String name;
    private final MetricType type;
    private final long timestamp;
    private final long counterValue;
    private final double value;
    private final Statistics[] sets;

    MetricDump(String name, MetricType type, long timestamp, long counterValue, double value, Statistics[] sets) {
        this.name = name;
        this.type = type;
        this.timestamp = timestamp;
        this.counterValue = counterValue;
        this.value = value;
        this.sets = sets;
    }

    /**
     * The metric's name.
     *
     * @return the name it was created with
     */
    public String name() {
        return name;
    }

    /**
     * The metric's kind.
     *
     * @return counter, gauge or timer
     */
    public MetricType type() {
        return type;
    }

    /**
     * The metric's last update.
     *
     * @return epoch nanoseconds on the hrts timeline
     */
    public long timestamp() {
        return timestamp;
    }

    /**
     * A counter's value.
     *
     * @return the value (0 for other kinds)
     */
    public long counterValue() {
        return counterValue;
    }

    /**
     * The metric's current value.
     *
     * @return a gauge's value, a timer's last duration (ns), a counter's value as a double
     */
    public double value() {
        return value;
    }

    /**
     * The statistics of the metric's values.
     *
     * @return a gauge's values, a timer's durations, a counter's values
     */
    public Statistics values() {
        return sets[0];
    }

    /**
     * A counter's increasing deltas.
     *
     * @return their statistics; null for other kinds
     */
    public Statistics incrDeltas() {
        return sets.length > 1 ? sets[1] : null;
    }

    /**
     * A counter's decreasing deltas (magnitudes).
     *
     * @return their statistics; null for other kinds
     */
    public Statistics decrDeltas() {
        return sets.length > 2 ? sets[2] : null;
    }

    /**
     * A counter's deltas.
     *
     * @return their statistics; null for other kinds
     */
    public Statistics deltas() {
        return sets.length > 3 ? sets[3] : null;
    }

    /**
     * The metric's rate per second over the moving interval: a counter's net change per second
     * ({@code deltas().rate()}), a gauge's sets or a timer's measurements per second ({@code
     * values().rate()}). It is what {@code hrts stats} shows as RATE/S.
     *
     * @return the rate per second
     */
    public double rate() {
        return type == MetricType.COUNTER ? sets[3].rate() : sets[0].rate();
    }

    @Override
    public String toString() {
        return name + "{" + type.jsonName() + ", value=" + value + ", values=" + values() + "}";
    }
}
