package io.hrts;

import io.hrts.internal.loader.Loader;
import java.util.Properties;

/**
 * The JVM's one implementation, chosen when this class is first used (by the first call that
 * needs it): the native library if it loads (its hot paths by JNI, or on JDK 22+ by FFM
 * downcalls: {@link Downcalls}), else the portable one if {@value
 * NativeLoader#FALLBACK_PROPERTY} allows it (docs/java.md, "The portable implementation"). The
 * choice is a static final field, so the JIT inlines every call through it.
 *
 * <p>When the native library does not load and no fallback is allowed, the native implementation
 * is kept: each of its calls tries to load the library again and throws the loader's report, as
 * before there was a fallback (no {@link ExceptionInInitializerError}).
 */
final class Backends {
    private Backends() {}

    static final Backend CURRENT = choose(System.getProperties());

    static Backend choose(Properties props) {
        String policy;
        try {
            policy = Loader.fallbackPolicy(props);
        } catch (RuntimeException e) {
            // Every call throws the loader's INVALID_ARGUMENT, naming the bad value.
            return new NativeBackend(new Implementation(Implementation.Kind.NATIVE,
                    "-D" + Loader.FALLBACK_PROPERTY + " is invalid: " + e.getMessage()));
        }
        if (policy.equals(Loader.FALLBACK_FORCE)) {
            return portable("forced by -D" + Loader.FALLBACK_PROPERTY + "=" + Loader.FALLBACK_FORCE
                    + " (platform " + Loader.platform(props) + ")");
        }
        try {
            // Before loading: on JDK 24+ loading may enable native access after a warning.
            boolean nativeAccess = Downcalls.nativeAccessEnabled();
            String from = NativeLoader.load();
            return Downcalls.nativeBackend(new Implementation(Implementation.Kind.NATIVE, "loaded " + from
                    + " (platform " + Loader.platform(props) + ")"), props, nativeAccess);
        } catch (RuntimeException | LinkageError e) {
            return afterFailure(props, policy, e);
        }
    }

    /** The native library did not load: the portable implementation if the policy allows it. */
    private static Backend afterFailure(Properties props, String policy, Throwable failure) {
        String platform = Loader.platform(props);
        boolean packed = Loader.packedIndex(platform) >= 0;
        if (!Loader.fallbackAllowed(props, policy)) {
            return new NativeBackend(new Implementation(Implementation.Kind.NATIVE, "the native library for "
                    + platform + " did not load and " + Loader.describeFallback(props, policy)
                    + ": every call throws the loader's report"));
        }
        String why = packed
                ? "the native library for " + platform + " did not load (" + firstLine(failure) + ")"
                : "this jar has no native library for platform " + platform + " (it has "
                        + String.join(", ", Loader.packagedPlatforms()) + ")";
        return portable(why + "; " + Loader.describeFallback(props, policy));
    }

    private static String firstLine(Throwable t) {
        String m = String.valueOf(t.getMessage());
        int tried = m.indexOf("\n  1. ");
        if (tried >= 0) {
            int end = m.indexOf('\n', tried + 1);
            return m.substring(tried + 6, end < 0 ? m.length() : end).trim();
        }
        int nl = m.indexOf('\n');
        return nl < 0 ? m : m.substring(0, nl);
    }

    /** The portable implementation, announced by one warning (this class initialises once). */
    private static Backend portable(String reason) {
        Implementation impl = new Implementation(Implementation.Kind.PORTABLE, reason);
        System.getLogger("io.hrts").log(System.Logger.Level.WARNING, "hrts: using the portable implementation, "
                + "not the host's shared timeline (stamps agree with no other process; bounds unknown): " + reason);
        return new PortableBackend(impl);
    }
}
