package io.hrts;

import java.time.Instant;

/**
 * The portable implementation's timeline: {@code System.nanoTime()} anchored to the system clock,
 * in segments of about a second, each continuing the last and correcting it toward the system
 * clock: a slew of 2^-11 (488 ppm) either way, or a step forward past {@link #STEP_NS}; never back.
 *
 * <p>Why not {@code Instant.now()} per stamp: it reads {@code CLOCK_REALTIME}, which the time
 * service may step backward, and it allocates an {@code Instant} unless escape analysis removes it
 * (24 B/op where it does not). A stamp here is one {@code nanoTime} read (the JVM's cheapest clock,
 * monotonic on every platform HotSpot runs on), one volatile load of the anchor, an add and a
 * compare: allocation-free by design, and no dearer than {@code Instant.now()}, which reads a clock
 * of the same cost and then builds an object. The system clock is read once per segment, on the
 * slow path, which allocates that segment's anchor (and an {@code Instant}): once a second, not
 * per stamp.
 *
 * <p>Why never backward, across threads too: the stamp is one function F of the {@code nanoTime}
 * value. A segment holds F on [{@code start}, {@code until}); a reader whose {@code nanoTime} is at
 * or past {@code until} takes the lock, and the next segment starts at the last one's {@code
 * until} with F's value there (plus a forward step). So no reader ever computes F with a segment
 * that does not cover its {@code nanoTime}, and F is non-decreasing: stamps are as ordered as
 * {@code nanoTime} itself. Only a base reset starts a segment mid-way, and it never lowers F.
 */
final class PortableClock {
    /** How long a segment lasts before the system clock is compared again. */
    static final long PERIOD_NS = 1_000_000_000L;
    /** A timeline behind the system clock by more than this steps forward (the native default). */
    static final long STEP_NS = 100_000_000L;
    /** Within this of the system clock no slew is applied (the clock reads are a few µs apart). */
    static final long DEADBAND_NS = 100_000L;
    /** The slew: (dt >> 11) ns per dt, 2^-11 = 488 ppm. */
    static final int SLEW_SHIFT = 11;
    /** The slew in ppb, as {@link TrackingState} reports it. */
    static final long SLEW_PPB = 1_000_000_000L >> SLEW_SHIFT;

    /** One segment of F: {@code F(t) = base + dt + slew * (dt >> 11)}, {@code dt = t - start}. */
    static final class Anchor {
        final long start;
        final long base;
        final long until;
        /** -1 (the timeline is ahead of the system clock), 0 or +1 (behind). */
        final long slew;

        Anchor(long start, long base, long until, long slew) {
            this.start = start;
            this.base = base;
            this.until = until;
            this.slew = slew;
        }

        long at(long t) {
            long dt = t - start;
            return base + dt + slew * (dt >> SLEW_SHIFT);
        }
    }

    private volatile Anchor anchor;
    /** When the clock was made: the first anchor's epoch ns and nanoTime. */
    final long createdEpochNs;
    final long createdNanoTime;

    // Guarded by this: what the segments did, for TrackingState and SegmentInfo.
    private long generation = 1;
    private long ties;
    private long lastTieEpochNs;
    private long lastOffsetNs;
    private long steps;
    private long lastStepNs;
    private long largestStepNs;

    PortableClock() {
        long wall = wallNanos();
        long t = System.nanoTime();
        createdEpochNs = wall;
        createdNanoTime = t;
        lastTieEpochNs = wall;
        anchor = new Anchor(t, wall, t + PERIOD_NS, 0);
    }

    /** The system clock in epoch ns (the slow path only: it may allocate). */
    static long wallNanos() {
        Instant i = Instant.now();
        return i.getEpochSecond() * 1_000_000_000L + i.getNano();
    }

    /** A stamp: F(nanoTime). */
    long epochNanos() {
        long t = System.nanoTime();
        Anchor a = anchor;
        return t - a.until < 0 ? a.at(t) : extend(t);
    }

    /** F(t) for a past {@code nanoTime} value, with the current segment (like the native base). */
    long ticksToNanos(long t) {
        return anchor.at(t);
    }

    /** The anchor now in force. */
    Anchor anchor() {
        return anchor;
    }

    /** A new segment from the last one's end that covers {@code t}; returns F(t). */
    private synchronized long extend(long t) {
        Anchor a = anchor;
        if (t - a.until < 0) {
            return a.at(t);
        }
        long from = a.until;
        long atFrom = a.at(from);
        long wall = wallNanos();
        long tw = Math.max(System.nanoTime(), t);
        long behind = wall - (atFrom + (tw - from));
        long base = atFrom;
        long slew = 0;
        if (behind > STEP_NS) {
            base += behind;
            steps++;
            lastStepNs = behind;
            largestStepNs = Math.max(largestStepNs, behind);
        } else if (tw - from < PERIOD_NS) {
            // A slew applies from the segment's start: only after a short gap, else it would
            // correct by more than the offset (nobody saw F in the gap, so it may step instead).
            slew = behind > DEADBAND_NS ? 1 : behind < -DEADBAND_NS ? -1 : 0;
        }
        ties++;
        lastTieEpochNs = wall;
        lastOffsetNs = behind;
        Anchor next = new Anchor(from, base, tw + PERIOD_NS, slew);
        anchor = next;
        return next.at(t);
    }

    /**
     * IBMTS {@code setBaseInfo}: pairs the timeline with the system clock again, forward only (a
     * timeline ahead keeps its value and slews back), and bumps the generation.
     */
    synchronized long reset() {
        long t = System.nanoTime();
        long now = epochNanos();
        long wall = wallNanos();
        Anchor a = anchor;
        if (wall > now) {
            // A new segment from t: F only rises (by the step, at the old slew or faster).
            anchor = new Anchor(t, wall, t + PERIOD_NS, Math.max(a.slew, 0));
        }
        return ++generation;
    }

    synchronized long generation() {
        return generation;
    }

    /** What {@link TrackingState} reports for the portable timeline. */
    synchronized TrackingState trackingState() {
        long slewPpb = anchor.slew * SLEW_PPB;
        return new TrackingState(Mode.TRACKING, PERIOD_NS, SLEW_PPB, STEP_NS, ties, lastTieEpochNs, lastOffsetNs,
                0, 0, slewPpb, slewPpb, steps, lastStepNs, largestStepNs, 0);
    }

    /** How many segments followed the first. */
    synchronized long ties() {
        return ties;
    }
}
