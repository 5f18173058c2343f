package io.hrts;

/**
 * Which implementation of the API this JVM uses, and why: the native library (the host's shared
 * timeline) or the portable one in pure Java (this JVM's own timeline). Chosen once per JVM, by the
 * first call that needs it; {@link HighResTimestamp#implementation()} gives it.
 *
 * <p>The portable implementation keeps the API working where no native library loads (a platform
 * the jar has no library for, or {@code -Dhrts.fallback=force}); what it cannot keep is stated in
 * docs/java.md and in each method's documentation: no shared timeline across processes (its
 * stamps agree with no other process's), no error bound (the bounded calls throw {@link
 * HrtsException.Kind#UNSYNCHRONIZED}), unique stamps and sequence numbers unique within this JVM
 * only, and no statistics, traces or WTMLIB evaluation ({@link HrtsException.Kind#LOAD}).
 */
public final class Implementation {
    /** The two implementations. */
    public enum Kind {
        /** The native library: the host's shared timeline, shared with C, Rust and other JVMs. */
        NATIVE("native"),
        /** Pure Java: {@code System.nanoTime} anchored to the system clock, this JVM's own timeline. */
        PORTABLE("portable");

        private final String label;

        Kind(String label) {
            this.label = label;
        }

        /**
         * The kind's name as the self-test and the warning print it.
         *
         * @return {@code "native"} or {@code "portable"}
         */
        public String label() {
            return label;
        }
    }

    private final Kind kind;
    private final String reason;

    Implementation(Kind kind, String reason) {
        this.kind = kind;
        this.reason = reason;
    }

    /**
     * Which implementation.
     *
     * @return {@link Kind#NATIVE} or {@link Kind#PORTABLE}
     */
    public Kind kind() {
        return kind;
    }

    /**
     * Whether this JVM runs the portable implementation.
     *
     * @return true for {@link Kind#PORTABLE}
     */
    public boolean isPortable() {
        return kind == Kind.PORTABLE;
    }

    /**
     * Why this implementation: where the native library was loaded from, or why it was not (the
     * platform, its C library, the fallback policy and the load failure), on one line.
     *
     * @return the reason, one line
     */
    public String reason() {
        return reason;
    }

    /** @return {@code native: <reason>} or {@code portable: <reason>} */
    @Override
    public String toString() {
        return kind.label + ": " + reason;
    }
}
