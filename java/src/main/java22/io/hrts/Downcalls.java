package io.hrts;

import java.util.Properties;

/**
 * Which way the native hot paths are called: the JDK 22+ version of this class (the multi-release
 * jar's {@code META-INF/versions/22}; the JDK 17 one, in java/src/main/java, always answers JNI).
 * FFM critical downcalls ({@link FfmBackend}) where this module may call restricted methods
 * without a warning and {@value #PROPERTY} is not {@code jni}; JNI otherwise, quietly, saying why
 * in {@link NativeBackend#hotPath()}.
 */
final class Downcalls {
    /**
     * System property choosing the hot paths' calls on JDK 22+: {@code auto} (the default: FFM
     * critical downcalls where native access is enabled) or {@code jni}.
     */
    static final String PROPERTY = "hrts.downcalls";

    private Downcalls() {}

    /**
     * Whether this class's module may call restricted methods without a warning
     * ({@code --enable-native-access}, or the jar manifest's {@code Enable-Native-Access} for
     * {@code java -jar}); asked before the library is loaded (loading it may enable it, after a
     * warning, on JDK 24+).
     *
     * @return whether native access is enabled for this module
     */
    static boolean nativeAccessEnabled() {
        try {
            return Downcalls.class.getModule().isNativeAccessEnabled();
        } catch (RuntimeException e) {
            return false;
        }
    }

    /**
     * The native implementation, the library being loaded.
     *
     * @param implementation what it reports
     * @param props the system properties ({@value #PROPERTY})
     * @param nativeAccess what {@link #nativeAccessEnabled()} said before the library was loaded
     * @return an {@link FfmBackend}, or a {@link NativeBackend} (JNI) saying why not
     */
    static Backend nativeBackend(Implementation implementation, Properties props, boolean nativeAccess) {
        String choice = props.getProperty(PROPERTY, "auto").trim();
        if (choice.equals("jni")) {
            return new NativeBackend(implementation, "jni (-D" + PROPERTY + "=jni)");
        }
        if (!choice.equals("auto") && !choice.isEmpty()) {
            return new NativeBackend(implementation, "jni (-D" + PROPERTY + "=" + choice
                    + " is neither auto nor jni)");
        }
        if (!nativeAccess) {
            Module m = Downcalls.class.getModule();
            return new NativeBackend(implementation, "jni (FFM downcalls need native access: --enable-native-access="
                    + (m.isNamed() ? m.getName() : "ALL-UNNAMED") + ")");
        }
        return new FfmBackend(implementation);
    }
}
