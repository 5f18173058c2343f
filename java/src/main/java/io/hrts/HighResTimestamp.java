package io.hrts;

/**
 * High-resolution time stamps from the hrts native library.
 *
 * <p>The native library is loaded by {@link NativeLoader} when this class is initialised; if
 * that fails the first use throws {@link ExceptionInInitializerError} whose cause is an
 * {@link HrtsException} explaining what was tried and how to fix it. Call
 * {@link NativeLoader#load()} first to get that exception directly.
 *
 * <p>Every method here is a plain static native returning a primitive: no allocation, no
 * JNI callbacks.
 */
public final class HighResTimestamp {
    static {
        NativeLoader.load();
    }

    private HighResTimestamp() {}

    /** Nanoseconds since the Unix epoch (1970-01-01T00:00:00Z). */
    public static native long getEpochNanoseconds();

    /** The operating-system process id of this JVM. */
    public static native int getOSProcessID();

    /** The operating-system (Linux, gettid) id of the calling thread. */
    public static native int getOSThreadID();
}
