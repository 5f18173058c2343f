package io.hrts.internal.loader;

import io.hrts.HrtsException;
import java.util.List;
import java.util.Properties;

/**
 * The error {@link Loader} throws when nothing loads: the platform, every path tried with
 * its failure, and how to fix it. Apart from the loader so that a JVM whose library loads never
 * loads (or verifies) this code.
 */
final class LoadFailure {
    private LoadFailure() {}

    /** What the jar lacks for {@code platform}, as one entry of the tried list. */
    static String notPackaged(String platform) {
        List<String> have = Loader.packagedPlatforms();
        return "jar resource " + Loader.resourcePath(platform) + ": not packaged in "
                + Loader.codeSource() + " (no library for this platform; this jar has libraries for "
                + (have.isEmpty() ? "no platform" : String.join(", ", have)) + ")";
    }

    /** How the tried list names the packed library's copy in {@code dir}. */
    static String packedLabel(String resource, java.nio.file.Path dir, boolean explicitDir) {
        return "jar resource " + resource + " extracted to " + (explicitDir ? "-D" + Loader.DIR_PROPERTY + "=" : "")
                + dir;
    }

    /**
     * The {@link HrtsException} to throw, declared as a {@code RuntimeException} so that the
     * loader's {@code throw} does not make the verifier load the exception's class.
     */
    static RuntimeException of(Properties props, List<String> tried) {
        String osName = props.getProperty("os.name", "?");
        String osArch = props.getProperty("os.arch", "?");
        String plat = Loader.platform(props);
        String cLibrary = Loader.isLinux(osName) ? Loader.cLibrary() : "the OS's own";
        String lib = Loader.libraryFile(plat);
        String policy;
        String fallback;
        try {
            policy = Loader.fallbackPolicy(props);
            fallback = Loader.describeFallback(props, policy);
        } catch (RuntimeException e) {
            policy = Loader.FALLBACK_DENY;
            fallback = "none: " + e.getMessage();
        }
        StringBuilder sb = new StringBuilder();
        sb.append("hrts: cannot load the native library ").append(lib)
                .append(" for platform ").append(plat)
                .append(" (os.name=").append(osName).append(", os.arch=").append(osArch)
                .append(", C library ").append(cLibrary)
                .append(", hrts ").append(Loader.version()).append(").\n")
                .append("Fallback: ").append(fallback).append(".\nTried:\n");
        for (int i = 0; i < tried.size(); i++) {
            sb.append("  ").append(i + 1).append(". ").append(tried.get(i)).append('\n');
        }
        sb.append("How to fix:\n")
                .append("  - point -D").append(Loader.LIBRARY_PROPERTY)
                .append("=/path/to/").append(lib)
                .append(" at an existing library built for ").append(plat)
                .append(" (cargo build --release -p hrts-jni gives target/release/")
                .append(lib).append("), or\n")
                .append("  - if the extraction directory is unusable (e.g. ")
                .append(props.getProperty("java.io.tmpdir", "/tmp"))
                .append(" is mounted noexec), set -D").append(Loader.DIR_PROPERTY)
                .append("=/a/writable/directory/on/an/exec/mount, or\n")
                .append("  - use an hrts jar that contains native/").append(plat).append('/')
                .append(lib).append(" (build it with ./gradlew jar), or\n")
                .append("  - install ").append(lib).append(" on java.library.path");
        if (policy.equals(Loader.FALLBACK_DENY) || policy.equals(Loader.FALLBACK_AUTO)) {
            sb.append(", or\n  - accept this JVM's own timeline instead of the host's: -D")
                    .append(Loader.FALLBACK_PROPERTY).append("=allow (the portable implementation)");
        }
        sb.append('.');
        return new HrtsException(sb.toString());
    }
}
