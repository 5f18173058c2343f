package io.hrts.stats;

import io.hrts.HrtsException;

/**
 * A gauge: a value that is set. Its dump has the statistics of the values it was set to.
 *
 * <p>Setting it costs about an add: the value is summed into the calling thread's own cell for
 * the gauge and stamped by the processing pass that takes it (see {@link Counter}); a gauge listed
 * in the configuration key {@code exact-stamps} takes a precise stamp per value instead.
 */
public final class Gauge {
    private final long bits;
    private final int id;

    Gauge(long bits) {
        this.bits = bits;
        this.id = Impl.PORTABLE ? (int) bits : Layout.checkId(bits);
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
        if (Impl.PORTABLE) {
            PortableStats.set(id, value);
        } else if (Layout.enabled()) {
            long bits = Double.doubleToRawLongBits(value);
            if (Layout.exact(id)) {
                Producer.current().record(id, RingLayout.Kind.GAUGE_SET, bits);
            } else {
                Producer.current().set(id, bits);
            }
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
