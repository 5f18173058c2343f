package io.hrts;

import java.util.Properties;

/**
 * Which way the native hot paths are called. This is the JDK 17 version: always JNI. The
 * multi-release jar carries a JDK 22+ version of this class (java/src/main/java22, compiled into
 * {@code META-INF/versions/22}) that gives {@code FfmBackend}, whose hot paths are FFM critical
 * downcalls of the same library once the JVM has made some stamps (docs/java.md, "JNI or FFM").
 * Both versions have the same members; the rest of the API is the same class on every JDK.
 */
final class Downcalls {
    /**
     * System property choosing the hot paths' calls on JDK 22+: {@code auto} (the default: FFM
     * critical downcalls where native access is enabled) or {@code jni}.
     */
    static final String PROPERTY = "hrts.downcalls";

    private Downcalls() {}

    /**
     * Whether this class's module may call restricted methods without a warning; asked before the
     * library is loaded (loading it may enable it, after a warning, on JDK 24+).
     *
     * @return false: JDK 17 has no FFM
     */
    static boolean nativeAccessEnabled() {
        return false;
    }

    /**
     * The native implementation, the library being loaded.
     *
     * @param implementation what it reports
     * @param props the system properties ({@value #PROPERTY})
     * @param nativeAccess what {@link #nativeAccessEnabled()} said before the library was loaded
     * @return a {@link NativeBackend}: JNI
     */
    static Backend nativeBackend(Implementation implementation, Properties props, boolean nativeAccess) {
        return new NativeBackend(implementation);
    }
}
