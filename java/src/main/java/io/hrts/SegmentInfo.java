package io.hrts;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * What a segment records (as {@code hrts info} shows it): its name, the counter source every
 * process uses and why it was chosen, the calibrated frequency, the base and its generation,
 * and the creation-time reliability evaluation of the counter.
 */
public final class SegmentInfo {
    private final Map<String, String> values;

    private SegmentInfo(Map<String, String> values) {
        this.values = Collections.unmodifiableMap(values);
    }

    static SegmentInfo parse(String text) {
        Map<String, String> m = new LinkedHashMap<>();
        for (String line : text.split("\n")) {
            int eq = line.indexOf('=');
            if (eq > 0) {
                m.put(line.substring(0, eq), line.substring(eq + 1));
            }
        }
        return new SegmentInfo(m);
    }

    private String str(String key) {
        String v = values.get(key);
        return v == null ? "" : v;
    }

    private long num(String key) {
        String v = values.get(key);
        return v == null ? -1 : Long.parseUnsignedLong(v);
    }

    /** The segment's name, e.g. {@code /hrts-1000}. */
    public String getName() {
        return str("segment");
    }

    /** The counter source: {@code tsc}, {@code cntvct}, {@code timebase} or {@code monotonic-raw}. */
    public String getSource() {
        return str("source");
    }

    /** Why that source was chosen (or why the hardware counter was not trusted). */
    public String getReason() {
        return str("reason");
    }

    /** Calibrated counter frequency, ticks per second. */
    public long getFrequency() {
        return num("frequency");
    }

    /** Spread of the calibration runs, parts per billion. */
    public long getCalibrationSpreadPpb() {
        return num("calibration spread ppb");
    }

    /** The segment's layout version. */
    public long getLayoutVersion() {
        return num("layout version");
    }

    /** The pid of the process that created the segment. */
    public long getCreatorPid() {
        return num("creator pid");
    }

    /** The base's generation. */
    public long getGeneration() {
        return num("generation");
    }

    /** The base counter (unsigned). */
    public long getBaseCounter() {
        return num("base counter");
    }

    /** The base's calendar time, epoch nanoseconds. */
    public long getBaseNanoseconds() {
        return num("base ns");
    }

    /** How often the base was moved forward to avoid wrap-around (timeline unchanged). */
    public long getMoves() {
        return num("moves");
    }

    /** Whether a reliability evaluation ran at creation (not for a software source). */
    public boolean hasEvaluation() {
        return values.containsKey("evaluation") && !"none".equals(values.get("evaluation"));
    }

    /** Evaluation: the counter was monotonic across CPUs (false if none ran). */
    public boolean isEvaluationMonotonic() {
        return "monotonic".equals(values.get("evaluation"));
    }

    /** Evaluation: bound on the counter shift between CPUs in ns; -1 if unbounded or none ran. */
    public long getEvaluationMaxShiftNs() {
        String v = values.get("evaluation max shift ns");
        return v == null || "unbounded".equals(v) ? -1 : Long.parseLong(v);
    }

    /** Evaluation: how many CPUs were probed; 0 if none ran. */
    public int getEvaluationCpus() {
        String v = values.get("evaluation cpus");
        return v == null ? 0 : Integer.parseInt(v);
    }

    /** One line summing up the evaluation. */
    public String evaluationSummary() {
        if (!hasEvaluation()) {
            return "none (" + getSource() + " needs none)";
        }
        long shift = getEvaluationMaxShiftNs();
        return (isEvaluationMonotonic() ? "monotonic" : "NOT monotonic") + ", max cross-CPU shift "
                + (shift < 0 ? "unbounded" : shift + " ns") + ", " + getEvaluationCpus() + " CPUs";
    }

    /** Every recorded fact, keyed as {@code hrts info} shows it, in the same order. */
    public Map<String, String> asMap() {
        return values;
    }

    @Override
    public String toString() {
        return "SegmentInfo" + values;
    }
}
