package io.hrts.internal;

import io.hrts.HrtsException;

/**
 * The Intel Trace Collector stamp format of {@code HRTS_ITC_EVENT_BITS} and
 * {@code HRTS_ITC_TICK_NS}, read and checked as the core reads them: for the portable
 * implementation's stamps and its trace files, which must agree. Not part of the API.
 */
public final class ItcFormat {
    /** The low bits that count events within one tick (1..=32). */
    public final int eventBits;
    /** The tick, ns (at least 1). */
    public final long tickNs;

    private ItcFormat(int eventBits, long tickNs) {
        this.eventBits = eventBits;
        this.tickNs = tickNs;
    }

    /**
     * The format {@code eventBits} and {@code tickNs} give.
     *
     * @param eventBits the low bits that count events within one tick
     * @param tickNs the tick, ns
     * @return the format
     * @throws HrtsException {@code INVALID_ARGUMENT} when either is out of range
     */
    public static ItcFormat of(int eventBits, long tickNs) {
        if (eventBits < 1 || eventBits > 32 || tickNs <= 0) {
            throw new HrtsException(HrtsException.Kind.INVALID_ARGUMENT, "ITC format with " + eventBits
                    + " event bits and a " + tickNs + " ns tick is invalid: use 1..=32 event bits and a tick of "
                    + "at least 1 ns");
        }
        return new ItcFormat(eventBits, tickNs);
    }

    /**
     * The format the environment sets (13 event bits and a 1 ns tick by default).
     *
     * @return the format
     * @throws HrtsException {@code INVALID_ARGUMENT} when a variable is not a whole number or
     *     the format is out of range
     */
    public static ItcFormat fromEnvironment() {
        return of((int) Math.min(Integer.MAX_VALUE, env("HRTS_ITC_EVENT_BITS", 13)), env("HRTS_ITC_TICK_NS", 1));
    }

    private static long env(String name, long dflt) {
        String v = System.getenv(name);
        if (v == null) {
            return dflt;
        }
        try {
            return Long.parseLong(v.trim());
        } catch (NumberFormatException e) {
            throw new HrtsException(HrtsException.Kind.INVALID_ARGUMENT, name + "=\"" + v + "\" is not a whole number");
        }
    }
}
