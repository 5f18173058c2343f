package io.hrts;

import java.math.BigDecimal;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * What a segment records (as {@code hrts info} shows it): its name, the counter source every
 * process uses and why it was chosen, the calibrated frequency, the base and its generation, the
 * creation-time reliability evaluation of the counter, the segment's {@link Mode} and {@link
 * TrackingState}, how far it was from the system clock when the snapshot was taken, and the
 * disruptions of the counter or the clock its writers saw ({@link #getDisruptions()}).
 *
 * <p>Values the core keeps as unsigned 64-bit numbers (frequency, counter, times) are returned
 * as their bits in a {@code long}: read them with {@link Long#toUnsignedString(long)} if they can
 * exceed {@link Long#MAX_VALUE} (in practice only {@link #getBaseCounter()} can).
 */
public final class SegmentInfo {
    private final String timeline;
    private final String service;
    private final boolean statisticsValid;
    private final String name;
    private final long layoutVersion;
    private final String source;
    private final String reason;
    private final String orderedRead;
    private final long frequency;
    private final long calibrationSpreadPpb;
    private final long calibrationElapsedNs;
    private final long calibrations;
    private final boolean evaluated;
    private final boolean evaluationMonotonic;
    private final long evaluationMaxShiftNs;
    private final int evaluationCpus;
    private final Pace evaluationPace;
    private final long evaluationPacePpb;
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
    private final long offsetNs;
    private final TrackingState tracking;
    private final boolean disruptionRecord;
    private final long disruptions;
    private final long lastDisruptionEpochNs;
    private final DisruptionKind lastDisruptionKind;
    private final boolean disruptionPending;

    /**
     * What a disruption of the counter or the clock was, as the segment's writers saw it (the
     * core's {@code hrts_core::segment::disruption::Kind}; C's {@code hrts_disruption_kind}, whose
     * codes are these constants' ordinals plus one).
     */
    public enum DisruptionKind {
        /** The counter ran ahead of {@code CLOCK_MONOTONIC_RAW} by more than the drift allows: it jumped forward or runs fast. */
        COUNTER_AHEAD("counter ahead of CLOCK_MONOTONIC_RAW (jumped or fast)"),
        /** The counter fell behind {@code CLOCK_MONOTONIC_RAW} by more than the drift allows: it jumped back or runs slow. */
        COUNTER_BEHIND("counter behind CLOCK_MONOTONIC_RAW (jumped back or slow)"),
        /** The counter advanced by less than half the time that passed: it stopped. */
        COUNTER_STOPPED("counter stopped"),
        /** {@code CLOCK_BOOTTIME - CLOCK_MONOTONIC} grew: the machine was suspended. */
        SUSPEND("suspend (CLOCK_BOOTTIME - CLOCK_MONOTONIC grew)"),
        /** The hypervisor's VMClock page has a new disruption marker (a live migration, or another event that disrupted the counter). */
        VMCLOCK_MARKER("VMClock disruption marker changed (live migration)"),
        /** The system clock moved away from the line by more than the bound allows: it was stepped. */
        CLOCK_STEP("system clock stepped (CLOCK_REALTIME off the line beyond the bound)");

        private final String label;

        DisruptionKind(String label) {
            this.label = label;
        }

        /**
         * The kind in words, as {@code hrts info}'s {@code last disruption} line names it.
         *
         * @return the kind's description
         */
        public String label() {
            return label;
        }

        /** The kind of a native code (C's {@code hrts_disruption_kind}); null for 0 or a code this jar does not know. */
        static DisruptionKind fromCode(int code) {
            return code >= 1 && code <= values().length ? values()[code - 1] : null;
        }
    }

    /**
     * What the evaluation's pace check found: whether the counter runs at one pace on every CPU
     * (WTMLIB's check; a counter that fails it is not chosen).
     */
    public enum Pace {
        /** Consistent with one pace; a difference larger than {@link SegmentInfo#getEvaluationPacePpb()} would have been seen. */
        SAME,
        /** Two CPUs' counters drift apart by at least {@link SegmentInfo#getEvaluationPacePpb()}. */
        DIFFERS,
        /** A counter did not change. */
        STUCK,
        /** Too few hand-overs between CPUs to compare. */
        UNKNOWN;

        /** The pace of a native code (native/jni {@code objects::pace_code}); 0 for none. */
        static Pace fromCode(int code) {
            return code >= 1 && code <= values().length ? values()[code - 1] : null;
        }

        /** The words of {@code hrts info}'s {@code evaluation pace} (the core's {@code pace_text}). */
        String describe(long ppb) {
            switch (this) {
                case SAME:
                    return "same on every CPU (within " + ppb + " ppb)";
                case DIFFERS:
                    return "differs between CPUs (by at least " + ppb + " ppb)";
                case STUCK:
                    return "stuck (the counter did not change)";
                default:
                    return "unknown (too few hand-overs between CPUs)";
            }
        }
    }

    /**
     * For tests: a per-user segment's facts, with no service, valid statistics, and the ordered
     * read and disruption record of a page that records neither.
     */
    SegmentInfo(String name, long layoutVersion, String source, String reason, long frequency,
            long calibrationSpreadPpb, long calibrationElapsedNs, long calibrations, boolean evaluated,
            boolean evaluationMonotonic, long evaluationMaxShiftNs, int evaluationCpus, int evaluationPace,
            long evaluationPacePpb, long creatorPid, long creatorUid, long createdEpochNs, long generation,
            long baseCounter, long baseNs, long mult, int shift, long wrapThresholdTicks, long moves, long offsetNs,
            TrackingState tracking) {
        this("per-user segment " + name, null, name, layoutVersion, source, reason,
                "tsc".equals(source) ? "lfence-rdtsc" : "fence", frequency, calibrationSpreadPpb,
                calibrationElapsedNs, calibrations, evaluated, evaluationMonotonic, evaluationMaxShiftNs, evaluationCpus,
                evaluationPace, evaluationPacePpb, creatorPid, creatorUid, createdEpochNs, generation, baseCounter,
                baseNs, mult, shift, wrapThresholdTicks, moves, offsetNs, tracking, true, false, 0, 0, 0, false);
    }

    /**
     * Called by the native library (native/jni, {@code objects::segment_info}) with every fact of
     * the core's {@code SegmentInfo} and the page's disruption record (with {@code
     * disruptionRecord} false, a page that records none: the other disruption values are then 0);
     * the parameter list is its JNI signature.
     */
    SegmentInfo(String timeline, String service, String name, long layoutVersion, String source, String reason,
            String orderedRead, long frequency, long calibrationSpreadPpb, long calibrationElapsedNs,
            long calibrations, boolean evaluated, boolean evaluationMonotonic, long evaluationMaxShiftNs,
            int evaluationCpus, int evaluationPace, long evaluationPacePpb, long creatorPid, long creatorUid,
            long createdEpochNs, long generation, long baseCounter, long baseNs, long mult, int shift,
            long wrapThresholdTicks, long moves, long offsetNs, TrackingState tracking, boolean statisticsValid,
            boolean disruptionRecord, long disruptions, long lastDisruptionEpochNs, int lastDisruptionKind,
            boolean disruptionPending) {
        this.statisticsValid = statisticsValid;
        this.disruptionRecord = disruptionRecord;
        this.disruptions = disruptionRecord ? disruptions : 0;
        this.lastDisruptionEpochNs = disruptionRecord ? lastDisruptionEpochNs : 0;
        this.lastDisruptionKind = disruptionRecord ? DisruptionKind.fromCode(lastDisruptionKind) : null;
        this.disruptionPending = disruptionRecord && disruptionPending;
        this.timeline = timeline.replace('\n', ' ').replace('\r', ' ');
        this.service = service;
        this.name = name;
        this.layoutVersion = layoutVersion;
        this.source = source;
        // One line, as hrts info shows it.
        this.reason = reason.replace('\n', ' ').replace('\r', ' ');
        this.orderedRead = orderedRead;
        this.frequency = frequency;
        this.calibrationSpreadPpb = calibrationSpreadPpb;
        this.calibrationElapsedNs = calibrationElapsedNs;
        this.calibrations = calibrations;
        this.evaluated = evaluated;
        this.evaluationMonotonic = evaluated && evaluationMonotonic;
        this.evaluationMaxShiftNs = evaluated ? evaluationMaxShiftNs : -1;
        this.evaluationCpus = evaluated ? evaluationCpus : 0;
        this.evaluationPace = evaluated ? Pace.fromCode(evaluationPace) : null;
        this.evaluationPacePpb = this.evaluationPace == Pace.SAME || this.evaluationPace == Pace.DIFFERS
                ? evaluationPacePpb : -1;
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
        this.offsetNs = offsetNs;
        this.tracking = Objects.requireNonNull(tracking, "tracking");
    }

    /**
     * Which timeline this process stamps from, as {@code hrts info} words it: {@code host service
     * /run/hrts/time} (the page {@code hrts daemon} keeps, mapped read-only), or {@code per-user
     * segment /hrts-1000}, followed by why a host page was refused if one was.
     *
     * @return the timeline in words
     */
    public String getTimeline() {
        return timeline;
    }

    /**
     * The host page's service, as {@code hrts info} words it: running (its pid and last round) or
     * gone for how long; empty for a per-user segment.
     *
     * @return the service's state in words, or empty
     */
    public java.util.Optional<String> getService() {
        return java.util.Optional.ofNullable(service);
    }

    /**
     * Whether the tie statistics ({@code moves}, and the {@link TrackingState}'s {@code ties},
     * {@code lastOffsetNs}, {@code steps}, {@code lastStepNs}, {@code largestStepNs}, {@code
     * repairs}) agree with their check word. When they do not (the segment was damaged) they are
     * 0 here and {@link #asMap()} shows them as damaged, as {@code hrts info} does; the next tie
     * or move starts them again.
     *
     * @return false if the statistics are damaged
     */
    public boolean isStatisticsValid() {
        return statisticsValid;
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

    /**
     * How every process of the segment orders a counter read for the ordered and bounded stamps,
     * as {@code hrts info}'s {@code ordered read} names it: {@code rdtscp} or {@code lfence-rdtsc}
     * on the TSC (whichever the segment's creator measured cheaper), {@code fence} on other
     * counters.
     *
     * @return the ordered read's name
     */
    public String getOrderedRead() {
        return orderedRead;
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

    /**
     * @return the pace check's verdict; null if no evaluation ran (or the native library knows a
     *     verdict this jar does not)
     */
    public Pace getEvaluationPace() {
        return evaluationPace;
    }

    /**
     * @return for {@link Pace#SAME} the largest pace difference that would have gone unseen, for
     *     {@link Pace#DIFFERS} the smallest difference seen, ppb; -1 otherwise
     */
    public long getEvaluationPacePpb() {
        return evaluationPacePpb;
    }

    /** @return the segment's mode, its creator's choice */
    public Mode getMode() {
        return tracking.mode();
    }

    /** @return the segment's tracking state when the snapshot was taken */
    public TrackingState getTrackingState() {
        return tracking;
    }

    /**
     * @return the system clock minus the segment's timeline when the snapshot was taken, ns
     *     (measured as {@link HighResTimestamp#getOffsetNanoseconds()} does)
     */
    public long getOffsetNanoseconds() {
        return offsetNs;
    }

    /**
     * Whether the segment records the disruptions its writers see: true for every segment of this
     * library's native implementation; false for a host page kept by an older {@code hrts daemon}
     * (layout minor below 5) and for the portable implementation, which watches for none. Without
     * a record the disruption getters report none (0, 0, empty, false).
     *
     * @return whether {@link #getDisruptions()} and the others come from a record
     */
    public boolean hasDisruptionRecord() {
        return disruptionRecord;
    }

    /**
     * How many disruptions of the counter or the clock the segment's writers saw since the page
     * was made: a counter that jumped, stopped or changed rate, a suspend, a VMClock disruption
     * marker, a step of the system clock ({@code hrts info}'s {@code disruptions}).
     *
     * @return the count; 0 if none (or no record, see {@link #hasDisruptionRecord()})
     */
    public long getDisruptions() {
        return disruptions;
    }

    /**
     * @return the system clock's reading when the last disruption was seen, epoch nanoseconds
     *     ({@code hrts info}'s {@code last disruption epoch ns}); 0 if none
     */
    public long getLastDisruptionEpochNanoseconds() {
        return lastDisruptionEpochNs;
    }

    /**
     * @return what the last disruption was ({@code hrts info}'s {@code last disruption}); empty
     *     if none (or the native library recorded a kind this jar does not know)
     */
    public java.util.Optional<DisruptionKind> getLastDisruptionKind() {
        return java.util.Optional.ofNullable(lastDisruptionKind);
    }

    /**
     * Whether the bound is still disrupted: the counter's rate has not been learned again since
     * the last disruption, so the bound's status is {@link BoundStatus#DISRUPTED} (bounded stamps
     * throw an {@link HrtsException} of kind {@link HrtsException.Kind#UNSYNCHRONIZED}).
     *
     * @return true while the bound is disrupted; false if not (or no record)
     */
    public boolean isDisruptionPending() {
        return disruptionPending;
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
        m.put("timeline", timeline);
        m.put("segment", name);
        m.put("layout version", u(layoutVersion));
        m.put("service", service == null ? "none" : service);
        m.put("source", source);
        m.put("reason", reason);
        m.put("ordered read", orderedRead);
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
            if (evaluationPace != null) {
                m.put("evaluation pace", evaluationPace.describe(evaluationPacePpb));
            }
        }
        TrackingState t = tracking;
        m.put("mode", t.mode().label());
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
        m.put("offset ns", Long.toString(offsetNs));
        if (t.mode() == Mode.TRACKING) {
            m.put("tie interval ns", u(t.tieIntervalNs()));
            m.put("max slew ppm", BigDecimal.valueOf(t.maxSlewPpb(), 3).stripTrailingZeros().toPlainString());
            m.put("step threshold ns", u(t.stepThresholdNs()));
            m.put("ties", u(t.ties()));
            m.put("last tie epoch ns", u(t.lastTieEpochNs()));
            m.put("last tie offset ns", Long.toString(t.lastOffsetNs()));
            m.put("pending ns", Long.toString(t.pendingNs()));
            m.put("frequency ppm", ppm(t.frequencyPpb()));
            m.put("slew ppm", ppm(t.slewPpb()));
            m.put("slope correction ppm", ppm(t.correctionPpb()));
            m.put("steps", u(t.steps()));
            m.put("last step ns", Long.toString(t.lastStepNs()));
            m.put("largest step ns", Long.toString(t.largestStepNs()));
        }
        m.put("repairs", u(t.repairs()));
        if (!statisticsValid) {
            for (String key : STATISTICS_KEYS) {
                m.computeIfPresent(key, (k, v) -> "damaged (the next tie or move starts it again)");
            }
        }
        // As hrts info's disruption lines (after its bound lines, which are not segment facts).
        if (disruptionRecord) {
            m.put("disruptions", u(disruptions));
            if (disruptions != 0) {
                m.put("last disruption epoch ns", u(lastDisruptionEpochNs));
                m.put("last disruption", (lastDisruptionKind == null ? "unknown" : lastDisruptionKind.label())
                        + (disruptionPending ? " (rate not learned again yet)" : ""));
            }
        }
        return Collections.unmodifiableMap(m);
    }

    /** The keys of the tie statistics, as the core's {@code STATISTICS_KEYS}. */
    private static final String[] STATISTICS_KEYS = {
        "moves", "ties", "last tie offset ns", "steps", "last step ns", "largest step ns", "repairs"
    };

    private static String u(long v) {
        return Long.toUnsignedString(v);
    }

    /** ppb as ppm with three decimals, as {@code hrts info} prints it. */
    private static String ppm(long ppb) {
        return BigDecimal.valueOf(ppb, 3).toPlainString();
    }

    /** @return {@code SegmentInfo} followed by {@link #asMap()} */
    @Override
    public String toString() {
        return "SegmentInfo" + asMap();
    }
}
