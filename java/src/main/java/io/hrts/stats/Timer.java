package io.hrts.stats;

import io.hrts.HighResTimestamp;
import io.hrts.HrtsException;
import java.util.OptionalLong;

/**
 * A timer: the durations (nanoseconds) of its finished spans. A span is a {@link Scope}
 * (try-with-resources, on one thread) or an instance started and stopped by id, from any thread;
 * instances overlap freely. An instance or scope that sees no event for the idle timeout ({@code
 * timer.idle-timeout}) is dropped without touching the statistics; heartbeats keep it alive.
 */
public final class Timer {
    /** The id of a timer's default instance. */
    public static final long DEFAULT_INSTANCE = -1L;

    private final long bits;
    private final int id;

    Timer(long bits) {
        this.bits = bits;
        this.id = Impl.PORTABLE ? (int) bits : Layout.checkId(bits);
    }

    private static boolean enabled() {
        return Impl.PORTABLE ? PortableStats.running() : Layout.enabled();
    }

    /** Starts (or restarts) the default instance. */
    public void start() {
        start(DEFAULT_INSTANCE);
    }

    /** Stops the default instance and records its duration. */
    public void stop() {
        stop(DEFAULT_INSTANCE);
    }

    /**
     * Queues a timer instance event stamped now. Unlike a measurement, it cannot be folded: if
     * the thread's queue is full it is dropped (the dump's {@code hrts-stats.dropped-events}
     * counts it).
     */
    private void instanceEvent(int kind, long instance) {
        if (Impl.PORTABLE) {
            PortableStats.instance(id, kind, instance, HighResTimestamp.getEpochNanoseconds());
        } else if (enabled()) {
            Producer.current().recordUnfoldable(id, kind, instance, HighResTimestamp.getEpochNanoseconds());
        }
    }

    /**
     * Starts (or restarts) instance {@code instance}.
     *
     * @param instance the instance id (any number; several may run at once)
     */
    public void start(long instance) {
        instanceEvent(RingLayout.Kind.TIMER_START, instance);
    }

    /**
     * Stops instance {@code instance} and records its duration; a stop without a running instance
     * records nothing (the dump's {@code hrts-stats.timer-stops-without-start} counts it).
     *
     * @param instance the instance id given to {@link #start(long)}
     */
    public void stop(long instance) {
        instanceEvent(RingLayout.Kind.TIMER_STOP, instance);
    }

    /**
     * Drops instance {@code instance} without recording it.
     *
     * @param instance the instance id given to {@link #start(long)}
     */
    public void discard(long instance) {
        instanceEvent(RingLayout.Kind.TIMER_DISCARD, instance);
    }

    /**
     * Keeps instance {@code instance} alive: its idle timeout counts from now.
     *
     * @param instance the instance id given to {@link #start(long)}
     */
    public void heartbeat(long instance) {
        instanceEvent(RingLayout.Kind.TIMER_HEARTBEAT, instance);
    }

    /**
     * Records a duration measured elsewhere, stamped now (a precise stamp, taken only if the event
     * is queued rather than folded into a full queue's cell).
     *
     * @param nanos the duration in nanoseconds
     */
    public void record(long nanos) {
        if (Impl.PORTABLE) {
            PortableStats.record(id, nanos, HighResTimestamp.getEpochNanoseconds());
        } else if (enabled()) {
            Producer.current().record(id, RingLayout.Kind.TIMER_RECORD, nanos);
        }
    }

    /**
     * Starts instance {@code instance} in the statistics segment, so that any process of the user
     * can stop it ({@link #stopShared(long)} on a timer of the same name, in the same segment),
     * measuring the span on the shared timeline. Restarts it if it is running. Unlike {@link
     * #start(long)} it is a native call that waits for nothing but the segment's table.
     *
     * @param instance the instance id (any number; the processes agree on it)
     * @throws HrtsException if the statistics are not started or do not publish ({@code
     *     shared-memory.enable} is off): {@code INVALID_ARGUMENT}; if the segment's table of running
     *     instances is full: {@code FULL}
     */
    public void startShared(long instance) {
        Stats.ensureReady();
        if (Impl.PORTABLE) {
            PortableStats.shared(id, instance, 0);
            return;
        }
        StatsNative.nTimerShared(bits, instance, 0);
    }

    /**
     * Stops instance {@code instance}, started by {@link #startShared(long)} in this or any other
     * process, and records its duration in this process's timer.
     *
     * @param instance the instance id given to {@link #startShared(long)}
     * @return the duration in nanoseconds, or empty if no process had started that instance
     *     (nothing is recorded then)
     * @throws HrtsException if the statistics are not started or do not publish
     */
    public OptionalLong stopShared(long instance) {
        Stats.ensureReady();
        if (Impl.PORTABLE) {
            return PortableStats.stopShared(id, instance);
        }
        long d = StatsNative.nTimerShared(bits, instance, 1);
        return d < 0 ? OptionalLong.empty() : OptionalLong.of(d);
    }

    /**
     * Drops instance {@code instance} of the statistics segment without recording it.
     *
     * @param instance the instance id given to {@link #startShared(long)}
     * @return whether it was running
     * @throws HrtsException if the statistics are not started or do not publish
     */
    public boolean discardShared(long instance) {
        Stats.ensureReady();
        if (Impl.PORTABLE) {
            return PortableStats.shared(id, instance, 2) != 0;
        }
        return StatsNative.nTimerShared(bits, instance, 2) != 0;
    }

    /**
     * Starts a span on this thread, recorded when closed: {@code try (Timer.Scope s =
     * timer.scope()) { ... }}. It takes two precise stamps ({@link
     * HighResTimestamp#getEpochNanoseconds()}, the statistics' own timeline) and queues one event;
     * it allocates nothing once inlined (escape analysis removes the scope object).
     *
     * @return the running span; close it to record its duration
     */
    public Scope scope() {
        return new Scope(id, enabled() ? HighResTimestamp.getEpochNanoseconds() : 0);
    }

    /**
     * The metric's id as the C ABI knows it.
     *
     * @return the id to pass to the C functions
     */
    public long id() {
        return bits;
    }

    /** A running span of a timer; closing it records its duration. */
    public static final class Scope implements AutoCloseable {
        private final int id;
        private final long start;
        private long alive;
        private boolean done;

        Scope(int id, long start) {
            this.id = id;
            this.start = start;
            this.alive = start;
            this.done = start == 0;
        }

        /** Marks the span alive now, so its idle timeout counts from here. */
        public void heartbeat() {
            if (!done) {
                alive = HighResTimestamp.getEpochNanoseconds();
            }
        }

        /** Ends the span without recording it. */
        public void discard() {
            done = true;
        }

        /** Ends the span and records its duration (nothing if it was idle too long). */
        @Override
        public void close() {
            if (done) {
                return;
            }
            done = true;
            if (!enabled()) {
                return;
            }
            long now = HighResTimestamp.getEpochNanoseconds();
            long idle = Impl.PORTABLE ? PortableStats.idleNs() : Layout.U.getLongVolatile(null, Layout.IDLE_NS);
            if (now - alive > idle) {
                return;
            }
            if (Impl.PORTABLE) {
                PortableStats.record(id, now - start, now);
                return;
            }
            Producer.current().record(id, RingLayout.Kind.TIMER_RECORD, now - start, now);
        }
    }
}
