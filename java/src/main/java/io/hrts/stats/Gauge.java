package io.hrts.stats;

import io.hrts.HrtsException;

/** A gauge: a value that is set. Its dump has the statistics of the values it was set to. */
public final class Gauge {
    private final long bits;
    private final int id;

    Gauge(long bits) {
        this.bits = bits;
        this.id = (int) bits;
    }

    /**
     * Sets the gauge; infinities are kept.
     *
     * @param value the gauge's new value
     * @throws HrtsException ({@code INVALID_ARGUMENT}) for NaN, which is not recorded
     */
    public void set(double value) {
        if (value != value) {
            throw new HrtsException(HrtsException.Kind.INVALID_ARGUMENT, "a gauge cannot be set to NaN; the value was ignored");
        }
        if (Layout.enabled()) {
            Producer.current().record(id, RingLayout.Kind.GAUGE_SET, Double.doubleToRawLongBits(value));
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
