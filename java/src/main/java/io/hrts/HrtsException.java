package io.hrts;

/** An hrts failure: the native library could not be loaded, or a native call failed. */
public class HrtsException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public HrtsException(String message) {
        super(message);
    }

    public HrtsException(String message, Throwable cause) {
        super(message, cause);
    }
}
