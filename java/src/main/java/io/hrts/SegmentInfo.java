package io.hrts;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * What a segment records (as {@code hrts info} shows it): its name, the counter source every
 * process uses and why it was chosen, the calibrated frequency, the base and its generation, and
 * the creation-time reliability evaluation of the counter.
 *
 * <p>Values the core keeps as unsigned 64-bit numbers (frequency, counter, times) are returned
 * as their bits in a {@code long}: read them with {@link Long#toUnsignedString(long)} if they can
 * exceed {@link Long#MAX_VALUE} (in practice only {@link #getBaseCounter()} can).
 */
public final class SegmentInfo {
    private final String name;
    private final long layoutVersion;
    private final String source;
    private final String reason;
    private final long frequency;
    private final long calibrationSpreadPpb;
    private final long calibrationElapsedNs;
    private final long calibrations;
    private final boolean evaluated;
    private final boolean evaluationMonotonic;
    private final long evaluationMaxShiftNs;
    private final int evaluationCpus;
    private final long creatorPid;
    private final long creatorUid;
    private final long createdEpochNs;
    private final long generation;
    private final long baseCounter;
    private final long baseNs;
    private final long mult;
    private final int shift;
    private final long wrapThresholdTicks;
    private final long moves;

    /**
     * Called by the native library (native/jni, {@code objects::segment_info}) with every fact of
     * the core's {@code SegmentInfo}; the parameter list is its JNI signature.
     */
    SegmentInfo(String name, long layoutVersion, String source, String reason, long frequency,
            long calibrationSpreadPpb, long calibrationElapsedNs, long calibrations, boolean evaluated,
            boolean evaluationMonotonic, long evaluationMaxShiftNs, int evaluationCpus, long creatorPid,
            long creatorUid, long createdEpochNs, long generation, long baseCounter, long baseNs, long mult,
            int shift, long wrapThresholdTicks, long moves) {
        this.name = name;
        this.layoutVersion = layoutVersion;
        this.source = source;
        // One line, as hrts info shows it.
        this.reason = reason.replace('\n', ' ').replace('\r', ' ');
        this.frequency = frequency;
        this.calibrationSpreadPpb = calibrationSpreadPpb;
        this.calibrationElapsedNs = calibrationElapsedNs;
        this.calibrations = calibrations;
        this.evaluated = evaluated;
        this.evaluationMonotonic = evaluated && evaluationMonotonic;
        this.evaluationMaxShiftNs = evaluated ? evaluationMaxShiftNs : -1;
        this.evaluationCpus = evaluated ? evaluationCpus : 0;
        this.creatorPid = creatorPid;
        this.creatorUid = creatorUid;
        this.createdEpochNs = createdEpochNs;
        this.generation = generation;
        this.baseCounter = baseCounter;
        this.baseNs = baseNs;
        this.mult = mult;
        this.shift = shift;
        this.wrapThresholdTicks = wrapThresholdTicks;
        this.moves = moves;
    }

    /** @return the segment's name, e.g. {@code /hrts-1000} */
    public String getName() {
        return name;
    }

    /** @return the counter source: {@code tsc}, {@code cntvct}, {@code timebase} or {@code monotonic-raw} */
    public String getSource() {
        return source;
    }

    /** @return why that source was chosen (or why the hardware counter was not trusted), one line */
    public String getReason() {
        return reason;
    }

    /** @return the calibrated counter frequency, ticks per second */
    public long getFrequency() {
        return frequency;
    }

    /** @return the spread of the calibration runs, parts per billion */
    public long getCalibrationSpreadPpb() {
        return calibrationSpreadPpb;
    }

    /** @return how long the calibration took, nanoseconds */
    public long getCalibrationElapsedNs() {
        return calibrationElapsedNs;
    }

    /** @return how many calibration runs there were */
    public long getCalibrations() {
        return calibrations;
    }

    /** @return the segment's layout version */
    public long getLayoutVersion() {
        return layoutVersion;
    }

    /** @return the pid of the process that created the segment */
    public long getCreatorPid() {
        return creatorPid;
    }

    /** @return the uid of the process that created the segment */
    public long getCreatorUid() {
        return creatorUid;
    }

    /** @return when the segment was created, epoch nanoseconds */
    public long getCreatedEpochNanoseconds() {
        return createdEpochNs;
    }

    /** @return the base's generation */
    public long getGeneration() {
        return generation;
    }

    /** @return the base counter (unsigned) */
    public long getBaseCounter() {
        return baseCounter;
    }

    /** @return the base's calendar time, epoch nanoseconds */
    public long getBaseNanoseconds() {
        return baseNs;
    }

    /** @return the multiplier of the ticks-to-nanoseconds conversion ({@code ns = ticks * mult >> shift}) */
    public long getMult() {
        return mult;
    }

    /** @return the shift of the ticks-to-nanoseconds conversion */
    public int getShift() {
        return shift;
    }

    /** @return how far (in ticks) the counter may run past the base before the base is moved */
    public long getWrapThresholdTicks() {
        return wrapThresholdTicks;
    }

    /** @return how often the base was moved forward to avoid wrap-around (timeline unchanged) */
    public long getMoves() {
        return moves;
    }

    /** @return whether a reliability evaluation ran at creation (not for a software source) */
    public boolean hasEvaluation() {
        return evaluated;
    }

    /** @return whether the evaluation found the counter monotonic across CPUs (false if none ran) */
    public boolean isEvaluationMonotonic() {
        return evaluationMonotonic;
    }

    /** @return the evaluation's bound on the counter shift between CPUs in ns; -1 if unbounded or none ran */
    public long getEvaluationMaxShiftNs() {
        return evaluationMaxShiftNs;
    }

    /** @return how many CPUs the evaluation probed; 0 if none ran */
    public int getEvaluationCpus() {
        return evaluationCpus;
    }

    /** @return one line summing up the evaluation */
    public String evaluationSummary() {
        if (!hasEvaluation()) {
            return "none (" + getSource() + " needs none)";
        }
        long shiftNs = getEvaluationMaxShiftNs();
        return (isEvaluationMonotonic() ? "monotonic" : "NOT monotonic") + ", max cross-CPU shift "
                + (shiftNs < 0 ? "unbounded" : shiftNs + " ns") + ", " + getEvaluationCpus() + " CPUs";
    }

    /**
     * Every recorded fact as text, keyed, worded and ordered as {@code hrts info} shows it.
     *
     * @return an unmodifiable map, in {@code hrts info} order
     */
    public Map<String, String> asMap() {
        Map<String, String> m = new LinkedHashMap<>();
        m.put("segment", name);
        m.put("layout version", u(layoutVersion));
        m.put("source", source);
        m.put("reason", reason);
        m.put("frequency", u(frequency));
        m.put("calibration spread ppb", u(calibrationSpreadPpb));
        m.put("calibration elapsed ns", u(calibrationElapsedNs));
        m.put("calibrations", u(calibrations));
        if (!evaluated) {
            m.put("evaluation", "none");
        } else {
            m.put("evaluation", evaluationMonotonic ? "monotonic" : "not monotonic");
            m.put("evaluation max shift ns", evaluationMaxShiftNs < 0 ? "unbounded" : u(evaluationMaxShiftNs));
            m.put("evaluation cpus", Integer.toString(evaluationCpus));
        }
        m.put("creator pid", u(creatorPid));
        m.put("creator uid", u(creatorUid));
        m.put("created epoch ns", u(createdEpochNs));
        m.put("generation", u(generation));
        m.put("base counter", u(baseCounter));
        m.put("base ns", u(baseNs));
        m.put("mult", u(mult));
        m.put("shift", Integer.toString(shift));
        m.put("wrap threshold ticks", u(wrapThresholdTicks));
        m.put("moves", u(moves));
        return Collections.unmodifiableMap(m);
    }

    private static String u(long v) {
        return Long.toUnsignedString(v);
    }

    /** @return {@code SegmentInfo} followed by {@link #asMap()} */
    @Override
    public String toString() {
        return "SegmentInfo" + asMap();
    }
}
