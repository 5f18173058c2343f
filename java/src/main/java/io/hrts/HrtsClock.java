package io.hrts;

import java.io.Serializable;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.Objects;

/**
 * A {@link Clock} on the shared hrts timeline: {@code LocalDateTime.now(clock)},
 * {@code ZonedDateTime.now(clock)}, {@code Instant.now(clock)} and any other java.time code
 * get hrts stamps (nanosecond resolution) instead of the system clock.
 *
 * <p>Clocks are equal when their zones are equal (they all read the same timeline).
 */
public final class HrtsClock extends Clock implements Serializable {
    private static final long serialVersionUID = 1L;
    private static final HrtsClock UTC = new HrtsClock(ZoneOffset.UTC);

    /** The zone of the clock's date-time views; the instant does not depend on it. */
    private final ZoneId zone;

    private HrtsClock(ZoneId zone) {
        this.zone = zone;
    }

    /**
     * The hrts clock in UTC.
     *
     * @return the one UTC instance
     */
    public static HrtsClock systemUTC() {
        return UTC;
    }

    /**
     * The hrts clock in the JVM's default time zone.
     *
     * @return a clock in {@link ZoneId#systemDefault()}
     */
    public static HrtsClock systemDefaultZone() {
        return new HrtsClock(ZoneId.systemDefault());
    }

    /**
     * The hrts clock in {@code zone}.
     *
     * @param zone the time zone
     * @return a clock in {@code zone}
     * @throws NullPointerException if {@code zone} is null
     */
    public static HrtsClock of(ZoneId zone) {
        Objects.requireNonNull(zone, "zone");
        return zone.equals(ZoneOffset.UTC) ? UTC : new HrtsClock(zone);
    }

    @Override
    public ZoneId getZone() {
        return zone;
    }

    @Override
    public HrtsClock withZone(ZoneId zone) {
        Objects.requireNonNull(zone, "zone");
        return zone.equals(this.zone) ? this : of(zone);
    }

    /** Milliseconds since the epoch (no allocation). */
    @Override
    public long millis() {
        return Math.floorDiv(HighResTimestamp.getEpochNanoseconds(), 1_000_000L);
    }

    @Override
    public Instant instant() {
        return HighResTimestamp.now();
    }

    @Override
    public boolean equals(Object obj) {
        return obj instanceof HrtsClock && zone.equals(((HrtsClock) obj).zone);
    }

    @Override
    public int hashCode() {
        return zone.hashCode() ^ 0x68727473; // "hrts"
    }

    @Override
    public String toString() {
        return "HrtsClock[" + zone + "]";
    }
}
