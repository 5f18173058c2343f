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
        io.hrts.Implementation impl = HighResTimestamp.implementation();
        if (impl.isPortable()) {
            throw new io.hrts.HrtsException(io.hrts.HrtsException.Kind.LOAD, "hrts traces need the native library, "
                    + "and this JVM runs the portable implementation (" + impl.reason() + ")");
        }
        HighResTimestamp.open();
    }

    static native long nOpen(byte[] path, byte[] hostOrNull, byte[] labelOrNull);

    static native long nEvent(long handle, int kind, byte[] name, long id, byte[] payloadOrNull);

    static native void nSync(long handle, byte[] master, int phase, int exchanges, double[] out);

    static native void nClose(long handle);
}
