package io.hrts;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Properties;

/**
 * Finds and loads the hrts JNI library ({@code libhrts_jni.so}), in this order:
 *
 * <ol>
 *   <li>the system property {@value #LIBRARY_PROPERTY}, naming a library file: if set it wins,
 *       and a file that does not exist (or does not load) is an error, nothing else is tried;
 *   <li>the library packed in the jar at {@code native/<platform>/libhrts_jni.so} (the jar
 *       carries one for each of {@link #packagedPlatforms()}; the platform is chosen by {@code
 *       os.name}, {@code os.arch} and, on Linux, the C library: {@code linux-x86_64} for glibc,
 *       {@code linux-musl-x86_64} for musl, see {@link #cLibrary()}), extracted to the directory
 *       named by {@value #DIR_PROPERTY} or by default to a per-user, per-version directory under {@code java.io.tmpdir} (written
 *       to a temporary file and atomically renamed, so concurrent JVMs never see a partial file)
 *       and loaded from there;
 *   <li>{@code System.loadLibrary("hrts_jni")}, i.e. {@code java.library.path}.
 * </ol>
 *
 * <p>If nothing loads, {@link HrtsException} names the platform, its C library, the platforms the
 * jar has, every path tried with its failure, the fallback policy and how to fix it. Whether the
 * API then falls back to its portable implementation is {@value #FALLBACK_PROPERTY}'s to say (see
 * {@link HighResTimestamp#implementation()}).
 *
 * <p>A JVM holds a shared lock on the copy it loaded while it runs. A JVM that extracts a copy into
 * the default directory (the first of a new version or build) then removes the copies that older
 * hrts versions (and other builds of this version) extracted there, if no running JVM holds them:
 * only directories and files of its own naming scheme, owned by this user, never following
 * symbolic links.
 *
 * <p>A JVM that finds its copy extracted already reads no resource from the jar and loads no class
 * the first stamp does not need: the copy's name and size come from constants the build
 * generated ({@code BuildInfo}).
 */
public final class NativeLoader {
    /** System property naming the library file to load; overrides everything else. */
    public static final String LIBRARY_PROPERTY = "hrts.native.library";
    /** System property naming the directory the packed library is extracted to. */
    public static final String DIR_PROPERTY = "hrts.native.dir";
    /** The name for {@link System#loadLibrary(String)}. */
    public static final String LIBRARY_NAME = "hrts_jni";
    /** The file name of the library. */
    public static final String LIBRARY_FILE = "lib" + LIBRARY_NAME + ".so";

    /**
     * System property: may the API fall back to its portable implementation (pure Java, this JVM's
     * own timeline) when the native library does not load? {@code allow}: yes; {@code deny}: no,
     * every call throws; {@code force}: use it without trying the native library; {@code auto}
     * (the default): yes where this jar has no library for the platform (macOS, Windows, ...), no
     * where it has one that failed to load (a broken install, not a missing port) or where {@value
     * #LIBRARY_PROPERTY} names a library.
     */
    public static final String FALLBACK_PROPERTY = "hrts.fallback";
    static final String FALLBACK_AUTO = "auto";
    static final String FALLBACK_ALLOW = "allow";
    static final String FALLBACK_DENY = "deny";
    static final String FALLBACK_FORCE = "force";

    private static String loadedFrom; // guarded by NativeLoader.class
    private static String cLibrary; // guarded by NativeLoader.class

    private NativeLoader() {}

    /**
     * Loads the native library once per JVM (later calls return at once).
     *
     * @return where it was loaded from, as {@link #loadedFrom()}
     * @throws HrtsException if it cannot be loaded
     */
    public static synchronized String load() {
        if (loadedFrom == null) {
            loadedFrom = loadWith(System.getProperties());
        }
        return loadedFrom;
    }

    /**
     * Where the library was loaded from.
     *
     * @return the absolute path of the library file that was loaded, {@code "java.library.path"}
     *     if it came from {@code System.loadLibrary}, or null if it is not loaded yet
     */
    public static synchronized String loadedFrom() {
        return loadedFrom;
    }

    /**
     * The platform directory inside the jar.
     *
     * @return e.g. {@code linux-x86_64} (glibc), {@code linux-musl-aarch64}, {@code macosx-aarch64}
     */
    public static String platform() {
        return platform(System.getProperties());
    }

    /** The platform of these system properties (the C library detected if they say Linux). */
    static String platform(Properties props) {
        String osName = props.getProperty("os.name", "");
        String osArch = props.getProperty("os.arch", "");
        return platform(osName, osArch, isLinux(osName) ? cLibrary() : null);
    }

    static boolean isLinux(String osName) {
        return osName.toLowerCase(Locale.ROOT).startsWith("linux");
    }

    /** The platform of a glibc Linux, or of another OS. */
    static String platform(String osName, String osArch) {
        return platform(osName, osArch, null);
    }

    /** The platform: Linux with musl ({@code cLibrary} "musl") is {@code linux-musl-<arch>}. */
    static String platform(String osName, String osArch, String cLibrary) {
        String os = osName.toLowerCase(Locale.ROOT);
        os = os.startsWith("linux") ? ("musl".equals(cLibrary) ? "linux-musl" : "linux")
                : os.replaceAll("[^a-z0-9]+", "");
        String arch = osArch.toLowerCase(Locale.ROOT);
        switch (arch) {
            case "amd64":
            case "x86_64":
            case "x86-64":
                arch = "x86_64";
                break;
            case "aarch64":
            case "arm64":
                arch = "aarch64";
                break;
            case "ppc64le":
            case "powerpc64le":
                arch = "ppc64le";
                break;
            default:
                arch = arch.replaceAll("[^a-z0-9_]+", "");
        }
        return os + "-" + arch;
    }

    /**
     * The C library this JVM runs on, as the loader chooses a Linux library by it: {@code musl} if
     * the JVM's executable asks for musl's dynamic loader ({@code ld-musl-*}, as Alpine's JDKs do),
     * else {@code glibc}. Read once from the head of {@code /proc/self/exe}.
     *
     * @return {@code glibc} or {@code musl}
     */
    public static synchronized String cLibrary() {
        if (cLibrary == null) {
            byte[] head = new byte[4096];
            int n = 0;
            try (java.io.FileInputStream in = new java.io.FileInputStream("/proc/self/exe")) {
                for (int r; n < head.length && (r = in.read(head, n, head.length - n)) > 0; ) {
                    n += r;
                }
            } catch (IOException | SecurityException e) {
                n = 0; // no /proc: glibc, the usual Linux C library
            }
            cLibrary = cLibraryOf(head, n);
        }
        return cLibrary;
    }

    /**
     * The C library an executable's first {@code n} bytes ask for: {@code musl} if they name musl's
     * dynamic loader (the ELF interpreter, {@code /lib/ld-musl-<arch>.so.1}, lies in the first
     * page), else {@code glibc}.
     */
    static String cLibraryOf(byte[] head, int n) {
        byte[] musl = "/ld-musl-".getBytes(StandardCharsets.US_ASCII);
        outer:
        for (int i = 0; i + musl.length <= n; i++) {
            for (int j = 0; j < musl.length; j++) {
                if (head[i + j] != musl[j]) {
                    continue outer;
                }
            }
            return "musl";
        }
        return "glibc";
    }

    /**
     * The fallback policy of these properties ({@value #FALLBACK_PROPERTY}).
     *
     * @throws HrtsException of kind INVALID_ARGUMENT for a value that is none of the four
     */
    static String fallbackPolicy(Properties props) {
        String v = props.getProperty(FALLBACK_PROPERTY);
        if (v == null || v.trim().isEmpty()) {
            return FALLBACK_AUTO;
        }
        String p = v.trim().toLowerCase(Locale.ROOT);
        if (p.equals(FALLBACK_AUTO) || p.equals(FALLBACK_ALLOW) || p.equals(FALLBACK_DENY)
                || p.equals(FALLBACK_FORCE)) {
            return p;
        }
        throw new HrtsException(HrtsException.Kind.INVALID_ARGUMENT, "hrts: -D" + FALLBACK_PROPERTY + "=" + v
                + " is not a fallback policy: use allow, deny, force or auto (the default)");
    }

    /** Whether {@code policy} lets the API use the portable implementation after a failed load. */
    static boolean fallbackAllowed(Properties props, String policy) {
        switch (policy) {
            case FALLBACK_ALLOW:
            case FALLBACK_FORCE:
                return true;
            case FALLBACK_DENY:
                return false;
            default:
                String explicit = props.getProperty(LIBRARY_PROPERTY);
                return (explicit == null || explicit.trim().isEmpty()) && packedIndex(platform(props)) < 0;
        }
    }

    /** The fallback in use, in words, for the load-failure report and the reason. */
    static String describeFallback(Properties props, String policy) {
        boolean allowed = fallbackAllowed(props, policy);
        String set = props.getProperty(FALLBACK_PROPERTY) == null ? " (the default)" : "";
        String result = allowed ? "fallback to the portable implementation allowed" : "no fallback";
        if (!policy.equals(FALLBACK_AUTO)) {
            return result + " (-D" + FALLBACK_PROPERTY + "=" + policy + ")";
        }
        String why = allowed ? "this jar has no library for the platform"
                : packedIndex(platform(props)) >= 0
                        ? "this jar has a library for the platform, so a failure to load it is a broken install"
                        : "-D" + LIBRARY_PROPERTY + " names the library to use";
        return result + " (-D" + FALLBACK_PROPERTY + "=auto" + set + ": " + why + ")";
    }

    /**
     * The path of the library inside the jar for this platform.
     *
     * @return e.g. {@code native/linux-x86_64/libhrts_jni.so} (no leading slash)
     */
    public static String resourcePath() {
        return resourcePath(platform());
    }

    /** The path of {@code platform}'s library inside the jar. */
    static String resourcePath(String platform) {
        return "native/" + platform + "/" + LIBRARY_FILE;
    }

    /**
     * The hrts version this jar was built as.
     *
     * @return e.g. {@code 0.1.0}
     */
    public static String version() {
        return BuildInfo.VERSION;
    }

    /**
     * The platforms this jar carries a native library for, as the build recorded them.
     *
     * @return e.g. {@code [linux-x86_64, linux-aarch64, linux-ppc64le]}
     */
    public static List<String> packagedPlatforms() {
        return List.of(BuildInfo.PLATFORMS);
    }

    /** The index of {@code platform} in {@link BuildInfo#PLATFORMS}, or -1 if not packed. */
    static int packedIndex(String platform) {
        for (int i = 0; i < BuildInfo.PLATFORMS.length; i++) {
            if (BuildInfo.PLATFORMS[i].equals(platform)) {
                return i;
            }
        }
        return -1;
    }

    /** The file name of the extracted copy: the content's hash keeps different builds apart. */
    static String copyName(int packed) {
        return "lib" + LIBRARY_NAME + "-" + BuildInfo.SHA256[packed].substring(0, 16) + ".so";
    }

    /**
     * The default extraction directory.
     *
     * @return {@code <java.io.tmpdir>/hrts-<user>/<version>}
     */
    public static Path defaultExtractionDir() {
        return userBaseDir(System.getProperties()).resolve(safeName(version()));
    }

    private static Path userBaseDir(Properties props) {
        String tmp = props.getProperty("java.io.tmpdir", "/tmp");
        String user = props.getProperty("user.name", "user");
        return Paths.get(tmp, "hrts-" + safeName(user));
    }

    /** {@code s} with every character but {@code [A-Za-z0-9._-]} made {@code _}; never hidden. */
    private static String safeName(String s) {
        StringBuilder r = new StringBuilder(s.length() + 1);
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            boolean ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')
                    || c == '.' || c == '_' || c == '-';
            r.append(ok ? c : '_');
        }
        return r.length() == 0 || r.charAt(0) == '.' ? "_" + r : r.toString();
    }

    /** Loads according to {@code props} (the system properties in normal use). */
    static String loadWith(Properties props) {
        fallbackPolicy(props); // a bad value is the error of every call
        List<String> tried = new ArrayList<>();

        // (a) An explicit library file wins; if it is unusable that is the error.
        String explicit = props.getProperty(LIBRARY_PROPERTY);
        if (explicit != null && !explicit.trim().isEmpty()) {
            Path p = Paths.get(explicit.trim()).toAbsolutePath();
            String label = "-D" + LIBRARY_PROPERTY + "=" + explicit + " (" + p + ")";
            if (!Files.exists(p)) {
                tried.add(label + ": file does not exist");
            } else if (!Files.isRegularFile(p)) {
                tried.add(label + ": not a regular file");
            } else {
                try {
                    System.load(p.toString());
                    return p.toString();
                } catch (UnsatisfiedLinkError | SecurityException e) {
                    tried.add(label + ": System.load failed: " + e);
                }
            }
            throw LoadFailure.of(props, tried);
        }

        // (b) The library packed in the jar, extracted to a directory.
        String platform = platform(props);
        int packed = packedIndex(platform);
        if (packed < 0) {
            tried.add(LoadFailure.notPackaged(platform));
        } else {
            String loaded = loadPacked(props, platform, packed, tried);
            if (loaded != null) {
                return loaded;
            }
        }

        // (c) java.library.path.
        try {
            System.loadLibrary(LIBRARY_NAME);
            return "java.library.path";
        } catch (UnsatisfiedLinkError | SecurityException e) {
            tried.add("System.loadLibrary(\"" + LIBRARY_NAME + "\") with java.library.path="
                    + props.getProperty("java.library.path", "") + ": " + e.getMessage());
        }
        throw LoadFailure.of(props, tried);
    }

    /**
     * Loads the packed library from its copy in the extraction directory, extracting it first if
     * the copy is missing (or was removed by another JVM's cleanup just before the load).
     *
     * @return the copy loaded, or null with the reason added to {@code tried}
     */
    private static String loadPacked(Properties props, String platform, int packed, List<String> tried) {
        String dirProp = props.getProperty(DIR_PROPERTY);
        boolean explicitDir = dirProp != null && !dirProp.trim().isEmpty();
        Path base = userBaseDir(props).toAbsolutePath();
        Path dir = explicitDir ? Paths.get(dirProp.trim()).toAbsolutePath() : base.resolve(safeName(version()));
        Path copy = dir.resolve(copyName(packed));
        String resource = resourcePath(platform);
        boolean extracted = false;
        try {
            if (!explicitDir) {
                LibraryCopy.checkPrivateDir(base);
            }
            for (int attempt = 1; ; attempt++) {
                if (!LibraryCopy.isCopy(copy, BuildInfo.SIZE[packed])) {
                    Extraction.extract(resource, copy);
                    extracted = true;
                }
                try {
                    System.load(copy.toString());
                    break;
                } catch (UnsatisfiedLinkError | SecurityException e) {
                    if (attempt < 5 && !Files.exists(copy, LinkOption.NOFOLLOW_LINKS)) {
                        continue; // removed by another JVM's cleanup in between: extract again
                    }
                    tried.add(LoadFailure.packedLabel(resource, dir, explicitDir) + ": System.load(" + copy
                            + ") failed: " + e + (explicitDir ? "" : " (is " + base + " on a noexec mount?)"));
                    return null;
                }
            }
        } catch (IOException | RuntimeException e) {
            tried.add(LoadFailure.packedLabel(resource, dir, explicitDir) + ": cannot extract: " + e);
            return null;
        }
        // Best effort: a copy that is not held may be removed by another build's cleanup, which
        // only makes a later JVM extract it again (this one's mapping stays).
        Native.holdCopy(copy.toString().getBytes(StandardCharsets.UTF_8));
        if (extracted && !explicitDir) {
            ExtractedCopies.removeStale(base, dir.getFileName().toString(), copy);
        }
        return copy.toString();
    }

    /**
     * Extracts the library packed in this jar for this platform into {@code dir} (created if
     * needed) and returns the file, without loading it. The file name carries a hash of the
     * content, so different builds never overwrite each other's library; a file of that name
     * but another size is replaced.
     *
     * @param dir the directory to extract to
     * @return the extracted library file
     * @throws IOException if the directory or the file cannot be written
     * @throws HrtsException if this jar has no library for this platform
     */
    public static Path extractTo(Path dir) throws IOException {
        return Extraction.extractTo(dir);
    }

    static String codeSource() {
        try {
            return new File(NativeLoader.class.getProtectionDomain().getCodeSource().getLocation()
                    .toURI()).toString();
        } catch (Exception | Error e) {
            return "the hrts jar";
        }
    }
}
