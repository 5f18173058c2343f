package io.hrts;

import java.util.Objects;

/**
 * How a segment follows the calendar clock and what its ties have done so far, as {@code hrts
 * info} shows it: one snapshot, the same for every process of the segment (it lives in the
 * segment). Times are nanoseconds and rates parts per billion (ppb) of the calibrated counter
 * rate; "calendar" is the system clock ({@code CLOCK_REALTIME}), "timeline" the segment's stamps.
 * A {@link Mode#FROZEN} segment never ties: {@code ties} and {@code lastTieEpochNs} are 0.
 *
 * @param mode the segment's mode, never null
 * @param tieIntervalNs time between ties (tracking), ns
 * @param maxSlewPpb bound on the slew and on the learned frequency error, ppb
 * @param stepThresholdNs a calendar ahead of the timeline by more than this is followed by a
 *     step forward, ns
 * @param ties ties so far, by all processes together
 * @param lastTieEpochNs the calendar's reading at the last tie (before the first: at the pairing
 *     that made the base), ns since the Unix epoch; 0 in frozen mode
 * @param lastOffsetNs calendar minus timeline measured by the last tie, before its correction, ns
 * @param pendingNs calendar minus timeline still to absorb by slewing, as of the last tie, ns
 *     (negative: the timeline is ahead, after a backward step of the clock)
 * @param frequencyPpb the learned rate of the calendar against the calibrated counter, ppb
 * @param slewPpb the slew in force on top of it, ppb
 * @param correctionPpb the slope's whole correction (frequency + slew), ppb
 * @param steps steps forward so far (calendar steps, counter resets)
 * @param lastStepNs size of the last step, ns
 * @param largestStepNs size of the largest step, ns
 * @param repairs damaged lines or header fields a tie or base move found and repaired
 */
public record TrackingState(
        Mode mode,
        long tieIntervalNs,
        long maxSlewPpb,
        long stepThresholdNs,
        long ties,
        long lastTieEpochNs,
        long lastOffsetNs,
        long pendingNs,
        long frequencyPpb,
        long slewPpb,
        long correctionPpb,
        long steps,
        long lastStepNs,
        long largestStepNs,
        long repairs) {

    /**
     * A state of these values; {@code mode} must not be null.
     *
     * @param mode the segment's mode
     * @param tieIntervalNs time between ties, ns
     * @param maxSlewPpb bound on the slew and on the learned frequency error, ppb
     * @param stepThresholdNs step threshold, ns
     * @param ties ties so far
     * @param lastTieEpochNs the calendar's reading at the last tie, epoch ns
     * @param lastOffsetNs calendar minus timeline at the last tie, ns
     * @param pendingNs calendar minus timeline still to absorb, ns
     * @param frequencyPpb learned calendar rate, ppb
     * @param slewPpb slew in force, ppb
     * @param correctionPpb the slope's whole correction, ppb
     * @param steps steps forward so far
     * @param lastStepNs size of the last step, ns
     * @param largestStepNs size of the largest step, ns
     * @param repairs repairs so far
     * @throws NullPointerException if {@code mode} is null
     */
    public TrackingState {
        Objects.requireNonNull(mode, "mode");
    }

    /** Called by the native library (native/jni, {@code objects::tracking_state}). */
    static TrackingState fromNative(int modeCode, long tieIntervalNs, long maxSlewPpb, long stepThresholdNs,
            long ties, long lastTieEpochNs, long lastOffsetNs, long pendingNs, long frequencyPpb, long slewPpb,
            long correctionPpb, long steps, long lastStepNs, long largestStepNs, long repairs) {
        return new TrackingState(Mode.fromCode(modeCode), tieIntervalNs, maxSlewPpb, stepThresholdNs, ties,
                lastTieEpochNs, lastOffsetNs, pendingNs, frequencyPpb, slewPpb, correctionPpb, steps, lastStepNs,
                largestStepNs, repairs);
    }

    /**
     * The slope's whole correction in parts per million, as {@code hrts info} and {@code hrts
     * track} print it.
     *
     * @return {@link #correctionPpb()} / 1000
     */
    public double correctionPpm() {
        return correctionPpb / 1000.0;
    }
}
