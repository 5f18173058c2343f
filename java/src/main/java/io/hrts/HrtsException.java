package io.hrts;

/**
 * An hrts failure: the native library could not be loaded, the segment could not be opened, or
 * a native call failed. {@link #getKind()} says which kind of failure it was.
 */
public class HrtsException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /** Kind of a failure that did not come from the native library (e.g. loading it). */
    public static final String KIND_LOAD = "LOAD";

    private final String kind;

    public HrtsException(String message) {
        this(KIND_LOAD, message);
    }

    public HrtsException(String message, Throwable cause) {
        super(message, cause);
        this.kind = KIND_LOAD;
    }

    /**
     * A failure of the given kind. The native library throws these with the kinds of its error
     * table: {@code INVALID_ARGUMENT}, {@code OS}, {@code FOREIGN}, {@code TRUNCATED}, {@code
     * VERSION}, {@code CORRUPT}, {@code PERMISSION}, {@code TIMEOUT}, {@code SOURCE}, {@code
     * PERSIST}, {@code NOT_OPEN}, {@code INTERNAL}.
     */
    public HrtsException(String kind, String message) {
        super(message);
        this.kind = kind == null ? KIND_LOAD : kind;
    }

    /** The kind of failure (see {@link #HrtsException(String, String)}). */
    public String getKind() {
        return kind;
    }
}
