package io.hrts.internal.loader;

import io.hrts.HrtsException;

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
 * The machinery behind {@link io.hrts.NativeLoader}, which documents what it does for users: which
 * library file this JVM needs (its platform, its C library), where the packed one is extracted and
 * how it is found again, the fallback policy, and the order in which a load tries the explicit file,
 * the packed copy and {@code java.library.path}. Not an API: {@code io.hrts} calls it.
 *
 * <p>Its own package, apart from the API, keeps the file handling private to it: the copy's checks
 * ({@link LibraryCopy}), its extraction ({@link Extraction}, loaded only by a JVM that extracts), the
 * cleanup of old copies ({@link ExtractedCopies}) and the load-failure report ({@link LoadFailure}).
 * Holding the loaded copy needs one of the library's own natives, which live in {@code io.hrts}: the
 * caller does it ({@link #loadedCopy()}) before the cleanup ({@link #removeStaleCopies()}).
 */
public final class Loader {
    /** System property naming the library file to load; overrides everything else. */
    public static final String LIBRARY_PROPERTY = "hrts.native.library";
    /** System property naming the directory the packed library is extracted to. */
    public static final String DIR_PROPERTY = "hrts.native.dir";
    /** The name for {@link System#loadLibrary(String)}. */
    public static final String LIBRARY_NAME = "hrts_jni";
    /** The file name of the library on Linux; {@link #libraryFile(String)} names every platform's. */
    public static final String LIBRARY_FILE = "lib" + LIBRARY_NAME + ".so";
    /** The file name of the library on Windows. */
    public static final String WINDOWS_LIBRARY_FILE = LIBRARY_NAME + ".dll";

    /**
     * System property: may the API fall back to its portable implementation (pure Java, this JVM's
     * own timeline) when the native library does not load? {@code allow}: yes; {@code deny}: no,
     * every call throws; {@code force}: use it without trying the native library; {@code auto}
     * (the default): yes where this jar has no library for the platform (macOS, Windows, ...), no
     * where it has one that failed to load (a broken install, not a missing port) or where {@value
     * #LIBRARY_PROPERTY} names a library.
     */
    public static final String FALLBACK_PROPERTY = "hrts.fallback";
    /** {@value #FALLBACK_PROPERTY}: fall back where the jar has no library for the platform. */
    public static final String FALLBACK_AUTO = "auto";
    /** {@value #FALLBACK_PROPERTY}: fall back whenever the native library does not load. */
    public static final String FALLBACK_ALLOW = "allow";
    /** {@value #FALLBACK_PROPERTY}: never fall back. */
    public static final String FALLBACK_DENY = "deny";
    /** {@value #FALLBACK_PROPERTY}: the portable implementation, without trying the library. */
    public static final String FALLBACK_FORCE = "force";

    private static String cLibrary; // guarded by Loader.class
    /** The packed copy the last load loaded, to be held; null after any other load. */
    private static Path loadedCopy; // guarded by Loader.class
    /** Where the cleanup after the last load looks (the per-user base), or null for no cleanup. */
    private static Path staleBase; // guarded by Loader.class
    /** The version directory of the copy loaded, which the cleanup keeps. */
    private static String staleVersion; // guarded by Loader.class

    private Loader() {}

    /**
     * The platform directory inside the jar.
     *
     * @return e.g. {@code linux-x86_64} (glibc), {@code linux-musl-aarch64}, {@code macosx-aarch64}
     */
    public static String platform() {
        return platform(System.getProperties());
    }

    /**
     * The platform of these system properties (the C library detected if they say Linux).
     *
     * @param props {@code os.name} and {@code os.arch}
     * @return as {@link #platform()}
     */
    public static String platform(Properties props) {
        String osName = props.getProperty("os.name", "");
        String osArch = props.getProperty("os.arch", "");
        return platform(osName, osArch, isLinux(osName) ? cLibrary() : null);
    }

    static boolean isLinux(String osName) {
        return osName.toLowerCase(Locale.ROOT).startsWith("linux");
    }

    /**
     * The platform of a glibc Linux, or of another OS.
     *
     * @param osName as {@code os.name} gives it
     * @param osArch as {@code os.arch} gives it
     * @return as {@link #platform()}
     */
    public static String platform(String osName, String osArch) {
        return platform(osName, osArch, null);
    }

    /**
     * The platform: Linux with musl ({@code cLibrary} "musl") is {@code linux-musl-<arch>}.
     *
     * @param osName as {@code os.name} gives it
     * @param osArch as {@code os.arch} gives it
     * @param cLibrary {@code musl}, or anything else for glibc (ignored on other OSes)
     * @return as {@link #platform()}
     */
    public static String platform(String osName, String osArch, String cLibrary) {
        String os = osName.toLowerCase(Locale.ROOT);
        os = os.startsWith("linux") ? ("musl".equals(cLibrary) ? "linux-musl" : "linux")
                : os.startsWith("windows") ? "windows" // "Windows 11", "Windows Server 2022", ...
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
     *
     * @param head the executable's first bytes
     * @param n how many of them were read
     * @return {@code glibc} or {@code musl}
     */
    public static String cLibraryOf(byte[] head, int n) {
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
     * @param props the system properties, or a test's
     * @return one of {@link #FALLBACK_AUTO}, {@link #FALLBACK_ALLOW}, {@link #FALLBACK_DENY} and
     *     {@link #FALLBACK_FORCE}
     * @throws HrtsException of kind INVALID_ARGUMENT for a value that is none of the four
     */
    public static String fallbackPolicy(Properties props) {
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

    /**
     * Whether {@code policy} lets the API use the portable implementation after a failed load.
     *
     * @param props the system properties, or a test's
     * @param policy as {@link #fallbackPolicy} gave it
     * @return whether the API may fall back
     */
    public static boolean fallbackAllowed(Properties props, String policy) {
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

    /**
     * The fallback in use, in words, for the load-failure report and the reason.
     *
     * @param props the system properties, or a test's
     * @param policy as {@link #fallbackPolicy} gave it
     * @return e.g. {@code no fallback (-Dhrts.fallback=deny)}
     */
    public static String describeFallback(Properties props, String policy) {
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
        return "native/" + platform + "/" + libraryFile(platform);
    }

    /**
     * The file name of {@code platform}'s library.
     *
     * @param platform as {@link #platform()} names it
     * @return {@code hrts_jni.dll} on Windows, else {@code libhrts_jni.so}
     */
    public static String libraryFile(String platform) {
        return isWindows(platform) ? WINDOWS_LIBRARY_FILE : LIBRARY_FILE;
    }

    static boolean isWindows(String platform) {
        return platform.startsWith("windows-");
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

    /**
     * Where {@code platform} is among the packed platforms ({@code BuildInfo.PLATFORMS}).
     *
     * @param platform as {@link #platform()} names it
     * @return its index, or -1 if this jar has no library for it
     */
    public static int packedIndex(String platform) {
        for (int i = 0; i < BuildInfo.PLATFORMS.length; i++) {
            if (BuildInfo.PLATFORMS[i].equals(platform)) {
                return i;
            }
        }
        return -1;
    }

    /** The file name of the extracted copy: the content's hash keeps different builds apart. */
    static String copyName(int packed) {
        String file = libraryFile(BuildInfo.PLATFORMS[packed]);
        int dot = file.lastIndexOf('.');
        return file.substring(0, dot) + "-" + BuildInfo.SHA256[packed].substring(0, 16) + file.substring(dot);
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

    /**
     * Loads according to {@code props} (the system properties in normal use). A packed copy that
     * loaded is then {@link #loadedCopy()}, for the caller to hold before {@link
     * #removeStaleCopies()}.
     *
     * @param props the system properties, or a test's
     * @return where the library was loaded from: its file, or {@code "java.library.path"}
     * @throws HrtsException if nothing loads, with every path tried and how to fix it
     */
    public static synchronized String loadWith(Properties props) {
        loadedCopy = null;
        staleBase = null;
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
        loadedCopy = copy;
        if (extracted && !explicitDir) {
            staleBase = base;
            staleVersion = dir.getFileName().toString();
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

    /**
     * The packed copy the last {@link #loadWith} loaded: what the caller holds with the library's
     * {@code holdCopy} (a shared lock while this JVM runs, so that other JVMs' cleanups leave it;
     * best effort: a copy that is not held may be removed by another build's cleanup, which only
     * makes a later JVM extract it again, as this one's mapping stays).
     *
     * @return the copy, or null if the library came from elsewhere (or nothing loaded)
     */
    public static synchronized Path loadedCopy() {
        return loadedCopy;
    }

    /**
     * After the copy is held: removes the copies that older hrts versions (and other builds of this
     * version) extracted into the default directory, if no running JVM holds them (see {@link
     * ExtractedCopies}). Does anything only after a load that extracted into the default directory;
     * best effort, never fails.
     */
    public static synchronized void removeStaleCopies() {
        if (staleBase != null) {
            ExtractedCopies.removeStale(staleBase, staleVersion, loadedCopy);
            staleBase = null;
        }
    }

    static String codeSource() {
        try {
            return new File(Loader.class.getProtectionDomain().getCodeSource().getLocation()
                    .toURI()).toString();
        } catch (Exception | Error e) {
            return "the hrts jar";
        }
    }
}
