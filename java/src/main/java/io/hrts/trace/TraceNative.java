package io.hrts.trace;

import io.hrts.HighResTimestamp;

/**
 * The native methods of the trace writer (in libhrts_jni), kept off the public API. Strings are
 * passed as UTF-8 bytes.
 */
final class TraceNative {
    private TraceNative() {}

    /**
     * Whether this JVM runs the portable implementation: trace files are then written in Java
     * ({@link PortableTrace}), and sync rounds refused.
     */
    static final boolean PORTABLE = HighResTimestamp.implementation().isPortable();

    /** Loads the library and opens this JVM's segment (the clock trace stamps come from). */
    static void ensureOpen() {
        HighResTimestamp.open();
    }

    /**
     * A sync round on the portable implementation: a bad address is refused as the native client
     * refuses it, any other with the reason (the sync protocol is the native library's).
     */
    static void refuseSync(String master) {
        int colon = master.lastIndexOf(':');
        boolean port = false;
        if (colon > 0) {
            try {
                int p = Integer.parseInt(master.substring(colon + 1));
                port = p >= 0 && p <= 65535;
            } catch (NumberFormatException e) {
                port = false;
            }
        }
        if (!port) {
            throw new io.hrts.HrtsException(io.hrts.HrtsException.Kind.INVALID_ARGUMENT, "sync master address \""
                    + master + "\" has no port: give HOST:PORT, e.g. 10.0.0.1:7700");
        }
        throw new io.hrts.HrtsException(io.hrts.HrtsException.Kind.LOAD, "trace sync rounds need the native "
                + "library, and this JVM runs the portable implementation ("
                + HighResTimestamp.implementation().reason() + "): its events are on this JVM's own timeline; "
                + "merge its file with hrts merge --allow-unsynced");
    }

    static native long nOpen(byte[] path, byte[] hostOrNull, byte[] labelOrNull);

    static native long nEvent(long handle, int kind, byte[] name, long id, byte[] payloadOrNull);

    static native void nSync(long handle, byte[] master, int phase, int exchanges, double[] out);

    static native void nClose(long handle);
}
