package io.hrts;

/**
 * An hrts failure: the native library could not be loaded, the segment could not be opened, or
 * a native call failed. {@link #getKind()} says which kind of failure it was; the message says
 * what happened and what to do.
 */
public class HrtsException extends RuntimeException {
    private static final long serialVersionUID = 2L;

    /**
     * The kind of a failure. The native ones are the kinds of the core's {@code ErrorKind} (one
     * constant each, same meaning) plus {@link #NOT_OPEN} and {@link #INTERNAL}; {@link #LOAD}
     * is the Java side's own.
     */
    public enum Kind {
        /** An argument or configuration value is out of range or malformed. */
        INVALID_ARGUMENT,
        /** The operating system refused a call (errno is in the message). */
        OS,
        /** The shared segment exists but is not an hrts segment. */
        FOREIGN,
        /** The shared segment is smaller than its header. */
        TRUNCATED,
        /** The shared segment was written by an incompatible layout version. */
        VERSION,
        /** The shared segment's contents fail validation. */
        CORRUPT,
        /** The shared segment belongs to another user or has an unsafe mode. */
        PERMISSION,
        /** Waiting for another process (creator, writer) took longer than allowed. */
        TIMEOUT,
        /** No counter source could be used or calibrated. */
        SOURCE,
        /** A persisted file (sequence numbers) is missing data or damaged. */
        PERSIST,
        /** A fixed-size shared area (statistics cells, running shared timer instances) is full. */
        FULL,
        /**
         * No error bound can be given for a stamp: the system clock is not synchronized, the
         * bound's source went silent past void-after, or the segment is frozen.
         */
        UNSYNCHRONIZED,
        /** A native call was made before the segment was opened (a bug in hrts). */
        NOT_OPEN,
        /** The native library failed internally (a caught panic or a failed JNI call): a bug. */
        INTERNAL,
        /** The native library could not be found or loaded. */
        LOAD
    }

    /** The kind of failure, never null. */
    private final Kind kind;

    /**
     * A failure to load the native library ({@link Kind#LOAD}).
     *
     * @param message what happened and how to fix it
     */
    public HrtsException(String message) {
        this(Kind.LOAD, message);
    }

    /**
     * A failure to load the native library ({@link Kind#LOAD}), caused by {@code cause}.
     *
     * @param message what happened and how to fix it
     * @param cause the underlying failure
     */
    public HrtsException(String message, Throwable cause) {
        super(message, cause);
        this.kind = Kind.LOAD;
    }

    /**
     * A failure of the given kind.
     *
     * @param kind the kind of failure; null means {@link Kind#INTERNAL}
     * @param message what happened and what to do
     */
    public HrtsException(Kind kind, String message) {
        super(message);
        this.kind = kind == null ? Kind.INTERNAL : kind;
    }

    /**
     * Called by the native library (native/jni) to build what it throws. A kind name this class
     * does not know (a native library newer than this jar) becomes {@link Kind#INTERNAL}, named
     * in the message, rather than a second exception.
     */
    static HrtsException fromNative(String kindName, String message) {
        for (Kind k : Kind.values()) {
            if (k.name().equals(kindName)) {
                return new HrtsException(k, message);
            }
        }
        return new HrtsException(Kind.INTERNAL, "(unknown failure kind " + kindName + ") " + message);
    }

    /**
     * The kind of failure.
     *
     * @return the kind, never null
     */
    public Kind getKind() {
        return kind;
    }
}
