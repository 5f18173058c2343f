package io.hrts;

import java.util.Locale;

/**
 * How a segment's timeline follows the system's calendar clock ({@code CLOCK_REALTIME}). The
 * process that creates a segment chooses it (in Java the system property {@value
 * HighResTimestamp#MODE_PROPERTY}, else the environment variable {@code HRTS_MODE}, else {@link
 * #TRACKING}); every process of the segment uses the creator's. {@link
 * HighResTimestamp#getMode()} says which one the segment has.
 */
public enum Mode {
    /**
     * The timeline follows {@code CLOCK_REALTIME}: every tie interval it is paired with the
     * calendar again and slewed toward it (never backward; forward steps beyond the step
     * threshold are followed). The default.
     */
    TRACKING(1, "tracking"),
    /**
     * IBMTS semantics: the calendar is read when the base is made, and later changes of the
     * system clock do not move the timeline; when the last process has detached, the next one
     * pairs the base anew.
     */
    FROZEN(2, "frozen");

    /** The mode's code: the core's {@code Mode::code}, also C's {@code HRTS_MODE_*}. */
    private final int code;
    /** The name {@code HRTS_MODE}, {@code hrts info} and the system property use. */
    private final String label;

    Mode(int code, String label) {
        this.code = code;
        this.label = label;
    }

    /**
     * The mode's name as {@code HRTS_MODE}, {@value HighResTimestamp#MODE_PROPERTY} and {@code
     * hrts info} spell it.
     *
     * @return {@code "tracking"} or {@code "frozen"}
     */
    public String label() {
        return label;
    }

    /**
     * The mode with this name, ignoring case and surrounding white space.
     *
     * @param name {@code tracking} or {@code frozen}
     * @return the mode
     * @throws IllegalArgumentException if {@code name} is neither
     * @throws NullPointerException if {@code name} is null
     */
    public static Mode fromLabel(String name) {
        String wanted = name.trim().toLowerCase(Locale.ROOT);
        for (Mode m : values()) {
            if (m.label.equals(wanted)) {
                return m;
            }
        }
        throw new IllegalArgumentException("\"" + name + "\" is neither tracking nor frozen");
    }

    int code() {
        return code;
    }

    /** The mode of a native code; a code this jar does not know means a newer native library. */
    static Mode fromCode(int code) {
        for (Mode m : values()) {
            if (m.code == code) {
                return m;
            }
        }
        throw new HrtsException(HrtsException.Kind.INTERNAL, "hrts: the native library reported mode code "
                + code + ", which this jar does not know; use the jar and native library of one release");
    }
}
