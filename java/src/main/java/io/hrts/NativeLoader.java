package io.hrts;

import io.hrts.internal.loader.Loader;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;

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
 *
 * <p>This class is the loader's public face; the machinery is in {@code io.hrts.internal.loader},
 * which is not an API.
 */
public final class NativeLoader {
    /** System property naming the library file to load; overrides everything else. */
    public static final String LIBRARY_PROPERTY = Loader.LIBRARY_PROPERTY;
    /** System property naming the directory the packed library is extracted to. */
    public static final String DIR_PROPERTY = Loader.DIR_PROPERTY;
    /** The name for {@link System#loadLibrary(String)}. */
    public static final String LIBRARY_NAME = Loader.LIBRARY_NAME;
    /** The file name of the library on Linux; {@link #libraryFile(String)} names every platform's. */
    public static final String LIBRARY_FILE = Loader.LIBRARY_FILE;

    /**
     * System property: may the API fall back to its portable implementation (pure Java, this JVM's
     * own timeline) when the native library does not load? {@code allow}: yes; {@code deny}: no,
     * every call throws; {@code force}: use it without trying the native library; {@code auto}
     * (the default): yes where this jar has no library for the platform (macOS, Windows, ...), no
     * where it has one that failed to load (a broken install, not a missing port) or where {@value
     * #LIBRARY_PROPERTY} names a library.
     */
    public static final String FALLBACK_PROPERTY = Loader.FALLBACK_PROPERTY;

    private static String loadedFrom; // guarded by NativeLoader.class

    private NativeLoader() {}

    /**
     * Loads the native library once per JVM (later calls return at once).
     *
     * @return where it was loaded from, as {@link #loadedFrom()}
     * @throws HrtsException if it cannot be loaded
     */
    public static synchronized String load() {
        if (loadedFrom == null) {
            String from = Loader.loadWith(System.getProperties());
            // The packed copy is held (by the library itself, which only this package reaches)
            // before the cleanup of old copies, so that no other JVM's cleanup takes it.
            Path copy = Loader.loadedCopy();
            if (copy != null) {
                Native.holdCopy(copy.toString().getBytes(StandardCharsets.UTF_8));
                Loader.removeStaleCopies();
            }
            loadedFrom = from;
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
        return Loader.platform();
    }

    /**
     * The C library this JVM runs on, as the loader chooses a Linux library by it: {@code musl} if
     * the JVM's executable asks for musl's dynamic loader ({@code ld-musl-*}, as Alpine's JDKs do),
     * else {@code glibc}. Read once from the head of {@code /proc/self/exe}.
     *
     * @return {@code glibc} or {@code musl}
     */
    public static String cLibrary() {
        return Loader.cLibrary();
    }

    /**
     * The file name of a platform's library.
     *
     * @param platform as {@link #platform()} names it
     * @return {@code hrts_jni.dll} on Windows, else {@code libhrts_jni.so}
     */
    public static String libraryFile(String platform) {
        return Loader.libraryFile(platform);
    }

    /**
     * The path of the library inside the jar for this platform.
     *
     * @return e.g. {@code native/linux-x86_64/libhrts_jni.so} (no leading slash)
     */
    public static String resourcePath() {
        return Loader.resourcePath();
    }

    /**
     * The hrts version this jar was built as.
     *
     * @return e.g. {@code 0.1.0}
     */
    public static String version() {
        return Loader.version();
    }

    /**
     * The platforms this jar carries a native library for, as the build recorded them.
     *
     * @return e.g. {@code [linux-x86_64, linux-aarch64, linux-ppc64le]}
     */
    public static List<String> packagedPlatforms() {
        return Loader.packagedPlatforms();
    }

    /**
     * The default extraction directory.
     *
     * @return {@code <java.io.tmpdir>/hrts-<user>/<version>}
     */
    public static Path defaultExtractionDir() {
        return Loader.defaultExtractionDir();
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
        return Loader.extractTo(dir);
    }
}
