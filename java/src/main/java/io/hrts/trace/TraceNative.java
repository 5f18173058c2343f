package io.hrts.trace;

import io.hrts.HighResTimestamp;

/**
 * The native methods of the trace writer (in libhrts_jni), kept off the public API. Strings are
 * passed as UTF-8 bytes.
 */
final class TraceNative {
    private TraceNative() {}

    /** Loads the library and opens this JVM's segment (the clock trace stamps come from). */
    static void ensureOpen() {
        HighResTimestamp.open();
    }

    static native long nOpen(byte[] path, byte[] hostOrNull, byte[] labelOrNull);

    static native long nEvent(long handle, int kind, byte[] name, long id, byte[] payloadOrNull);

    static native void nSync(long handle, byte[] master, int phase, int exchanges, double[] out);

    static native void nClose(long handle);
}
