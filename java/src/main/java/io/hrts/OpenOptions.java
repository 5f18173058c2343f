package io.hrts;

/**
 * What this JVM asks to open, from its system properties: the segment it names ({@value
 * HighResTimestamp#SEGMENT_PROPERTY}, or null for the native library's choice), how a segment it
 * creates is made ({@value HighResTimestamp#MODE_PROPERTY}, {@value
 * HighResTimestamp#TIE_INTERVAL_PROPERTY}, {@value HighResTimestamp#MAX_SLEW_PROPERTY}, {@value
 * HighResTimestamp#STEP_THRESHOLD_PROPERTY}) and what its error bounds say ({@value
 * HighResTimestamp#BOUND_DRIFT_PROPERTY}, {@value HighResTimestamp#BOUND_VOID_PROPERTY}). A
 * property not set is 0, which the native side reads as "the environment's value ({@code
 * HRTS_MODE}, {@code HRTS_TIE_INTERVAL_MS}, ...), else the default". The native library turns them
 * into the core's open request (the same one C's {@code hrts_open_options} becomes), checks the
 * ranges and resolves the rest there: which segment a null name means, the host page, the sequence
 * file.
 */
record OpenOptions(int modeCode, long tieIntervalMs, long maxSlewPpm, long stepThresholdMs,
        long boundDriftPpm, long boundVoidS) {

    /**
     * The segment this JVM names: {@value HighResTimestamp#SEGMENT_PROPERTY}, or null when it is
     * unset or empty (the native library then resolves the default: {@code HRTS_SEGMENT}, the host
     * page, {@code /hrts-<uid>}).
     */
    static String segmentName() {
        String name = System.getProperty(HighResTimestamp.SEGMENT_PROPERTY);
        return name == null || name.isEmpty() ? null : name;
    }

    static OpenOptions fromProperties() {
        String mode = property(HighResTimestamp.MODE_PROPERTY);
        int modeCode = 0;
        if (mode != null) {
            try {
                modeCode = Mode.fromLabel(mode).code();
            } catch (IllegalArgumentException e) {
                throw invalid(HighResTimestamp.MODE_PROPERTY, mode, "is neither tracking nor frozen");
            }
        }
        return new OpenOptions(modeCode, number(HighResTimestamp.TIE_INTERVAL_PROPERTY),
                number(HighResTimestamp.MAX_SLEW_PROPERTY), number(HighResTimestamp.STEP_THRESHOLD_PROPERTY),
                number(HighResTimestamp.BOUND_DRIFT_PROPERTY), number(HighResTimestamp.BOUND_VOID_PROPERTY));
    }

    /** The property's value, or null if it is unset or blank. */
    private static String property(String name) {
        String v = System.getProperty(name);
        return v == null || v.trim().isEmpty() ? null : v;
    }

    /** A positive whole number, or 0 if the property is not set. */
    private static long number(String name) {
        String v = property(name);
        if (v == null) {
            return 0;
        }
        try {
            long n = Long.parseLong(v.trim());
            if (n > 0) {
                return n;
            }
        } catch (NumberFormatException e) {
            // reported below, with the property's name
        }
        throw invalid(name, v, "is not a positive whole number");
    }

    private static HrtsException invalid(String name, String value, String why) {
        return new HrtsException(HrtsException.Kind.INVALID_ARGUMENT, "hrts: system property " + name + "=\""
                + value + "\" " + why + "; fix or remove it (-D" + HighResTimestamp.MODE_PROPERTY
                + "=tracking|frozen, -D" + HighResTimestamp.TIE_INTERVAL_PROPERTY + "=MS, -D"
                + HighResTimestamp.MAX_SLEW_PROPERTY + "=PPM, -D" + HighResTimestamp.STEP_THRESHOLD_PROPERTY
                + "=MS, -D" + HighResTimestamp.BOUND_DRIFT_PROPERTY + "=PPM, -D"
                + HighResTimestamp.BOUND_VOID_PROPERTY + "=S)");
    }
}
