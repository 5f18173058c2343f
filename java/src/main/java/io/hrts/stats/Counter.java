package io.hrts.stats;

/**
 * A counter: a signed 64-bit value changed by deltas. Its dump has the statistics of its values,
 * increasing deltas, decreasing deltas (as magnitudes) and deltas. Decrements may take it below
 * zero; it saturates at the ends of the {@code long} range.
 *
 * <p>A delta costs about an add: it is summed into the calling thread's own cell for the counter
 * (no clock read, no queue slot, no native call) and stamped by the processing pass that takes
 * it, at most one sleep step ({@code message-queue.sleep-on-empty}, 10 ms by default) after it
 * happened, which is then the time resolution of its moving average and interval statistics. A
 * counter listed in the configuration key {@code exact-stamps} instead takes a precise stamp per
 * delta and queues it. An {@link #init(long)} is always stamped precisely.
 */
public final class Counter {
    private final long bits;
    private final int id;

    Counter(long bits) {
        this.bits = bits;
        this.id = Impl.PORTABLE ? (int) bits : Layout.checkId(bits);
    }

    /**
     * Changes the counter by {@code delta} (negative decreases).
     *
     * @param delta the change, of either sign
     */
    public void add(long delta) {
        if (Impl.PORTABLE) {
            PortableStats.add(id, delta);
        } else if (Layout.enabled()) {
            if (Layout.exact(id)) {
                Producer.current().record(id, RingLayout.Kind.COUNTER_ADD, delta);
            } else {
                Producer.current().add(id, delta);
            }
        }
    }

    /**
     * Adds one.
     */
    public void increment() {
        add(1);
    }

    /**
     * Adds {@code delta} (as {@link #add(long)}).
     *
     * @param delta the amount to add
     */
    public void increment(long delta) {
        add(delta);
    }

    /**
     * Subtracts one.
     */
    public void decrement() {
        add(-1);
    }

    /**
     * Subtracts {@code delta}.
     *
     * @param delta the amount to subtract
     */
    public void decrement(long delta) {
        add(-delta);
    }

    /**
     * Sets the counter to {@code value} and restarts its statistics from it.
     *
     * @param value the counter's new value
     */
    public void init(long value) {
        if (Impl.PORTABLE) {
            PortableStats.init(id, value);
        } else if (Layout.enabled()) {
            // An init is never folded: it is rare and must not move among folded deltas.
            Producer.current().init(id, value, !Layout.exact(id));
        }
    }

    /**
     * The metric's id as the C ABI knows it.
     *
     * @return the id to pass to the C functions
     */
    public long id() {
        return bits;
    }
}
