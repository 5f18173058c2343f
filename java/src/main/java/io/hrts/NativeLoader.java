package io.hrts;

import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;

/**
 * Finds and loads the hrts JNI library ({@code libhrts_jni.so}), in this order:
 *
 * <ol>
 *   <li>the system property {@value #LIBRARY_PROPERTY}, naming a library file: if set it wins,
 *       and a file that does not exist (or does not load) is an error, nothing else is tried;
 *   <li>the library packed in the jar at {@code native/<platform>/libhrts_jni.so} (the jar
 *       carries one for each of {@link #packagedPlatforms()}; the platform is chosen by {@code
 *       os.name} and {@code os.arch}), extracted to the directory named by {@value #DIR_PROPERTY}
 *       or by default to a per-user, per-version directory under {@code java.io.tmpdir} (written
 *       to a temporary file and atomically renamed, so concurrent JVMs never see a partial file)
 *       and loaded from there;
 *   <li>{@code System.loadLibrary("hrts_jni")}, i.e. {@code java.library.path}.
 * </ol>
 *
 * <p>If nothing loads, {@link HrtsException} names the platform, the platforms the jar has, every
 * path tried with its failure, and how to fix it.
 *
 * <p>A JVM holds a shared lock on the copy it loaded while it runs. After loading from the default
 * directory the loader removes the copies that older hrts versions (and other builds of this
 * version) extracted there, if no running JVM holds them: only directories and files of its own
 * naming scheme, owned by this user, never following symbolic links.
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

    private static final String VERSION_RESOURCE = "/io/hrts/hrts.properties";

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
     * @return e.g. {@code linux-x86_64}
     */
    public static String platform() {
        return platform(System.getProperty("os.name", ""), System.getProperty("os.arch", ""));
    }

    static String platform(String osName, String osArch) {
        String os = osName.toLowerCase(Locale.ROOT);
        os = os.startsWith("linux") ? "linux" : os.replaceAll("[^a-z0-9]+", "");
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
     * The path of the library inside the jar for this platform.
     *
     * @return e.g. {@code native/linux-x86_64/libhrts_jni.so} (no leading slash)
     */
    public static String resourcePath() {
        return "native/" + platform() + "/" + LIBRARY_FILE;
    }

    /**
     * The hrts version this jar was built as.
     *
     * @return e.g. {@code 0.1.0}; {@code "dev"} if unknown
     */
    public static String version() {
        String v0 = buildProperties().getProperty("version");
        if (v0 != null && !v0.trim().isEmpty()) {
            return v0.trim();
        }
        Package pkg = NativeLoader.class.getPackage();
        String v = pkg == null ? null : pkg.getImplementationVersion();
        return v == null ? "dev" : v;
    }

    /**
     * The platforms this jar carries a native library for, as the build recorded them.
     *
     * @return e.g. {@code [linux-x86_64, linux-aarch64, linux-ppc64le]}; empty if unknown
     */
    public static List<String> packagedPlatforms() {
        String list = buildProperties().getProperty("platforms", "");
        List<String> out = new ArrayList<>();
        for (String p : list.split(",")) {
            if (!p.trim().isEmpty()) {
                out.add(p.trim());
            }
        }
        return Collections.unmodifiableList(out);
    }

    /** The jar's build properties, read once: loading consults them twice (version, library). */
    private static Properties buildProperties() {
        return BuildProperties.VALUES;
    }

    private static final class BuildProperties {
        static final Properties VALUES = read();

        private static Properties read() {
            Properties p = new Properties();
            try (InputStream in = NativeLoader.class.getResourceAsStream(VERSION_RESOURCE)) {
                if (in != null) {
                    p.load(in);
                }
            } catch (IOException e) {
                // unknown: callers fall back
            }
            return p;
        }
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

    private static String safeName(String s) {
        String r = s.replaceAll("[^A-Za-z0-9._-]", "_");
        return r.isEmpty() || r.startsWith(".") ? "_" + r : r;
    }

    /** Loads according to {@code props} (the system properties in normal use). */
    static String loadWith(Properties props) {
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
            throw failure(props, tried);
        }

        // (b) The library packed in the jar, extracted to a directory.
        Packed packed = new Packed(platform(
                props.getProperty("os.name", ""), props.getProperty("os.arch", "")));
        String resource = packed.resource;
        if (!packed.present()) {
            if (tried.isEmpty()) {
                List<String> have = packagedPlatforms();
                tried.add("jar resource " + resource + ": not packaged in " + codeSource()
                        + " (no library for this platform; this jar has libraries for "
                        + (have.isEmpty() ? "no platform" : String.join(", ", have)) + ")");
            }
        } else {
            Path target = null;
            String dirProp = props.getProperty(DIR_PROPERTY);
            boolean explicitDir = dirProp != null && !dirProp.trim().isEmpty();
            Path dir = explicitDir
                    ? Paths.get(dirProp.trim()).toAbsolutePath()
                    : userBaseDir(props).toAbsolutePath().resolve(safeName(version()));
            String label = "jar resource " + resource + " extracted to "
                    + (explicitDir ? "-D" + DIR_PROPERTY + "=" : "") + dir;
            try {
                if (!explicitDir) {
                    ensurePrivateDir(dir.getParent());
                }
                target = extractAndHold(packed, dir);
            } catch (IOException | RuntimeException e) {
                tried.add(label + ": cannot extract: " + e);
            }
            if (target != null) {
                try {
                    System.load(target.toString());
                    if (!explicitDir) {
                        removeStaleCopies(dir, target);
                    }
                    return target.toString();
                } catch (UnsatisfiedLinkError | SecurityException e) {
                    tried.add(label + ": System.load(" + target + ") failed: " + e
                            + (explicitDir ? "" : " (is " + dir.getParent() + " on a noexec mount?)"));
                }
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
        throw failure(props, tried);
    }

    /**
     * Extracts the library packed in this jar for this platform into {@code dir} (created if
     * needed) and returns the file, without loading it. The file name carries a hash of the
     * content, so different builds never overwrite each other's library.
     *
     * @param dir the directory to extract to
     * @return the extracted library file
     * @throws IOException if the directory or the file cannot be written
     * @throws HrtsException if this jar has no library for this platform
     */
    public static Path extractTo(Path dir) throws IOException {
        Packed packed = new Packed(platform());
        if (!packed.present()) {
            throw new HrtsException("hrts: " + resourcePath() + " is not packaged in " + codeSource());
        }
        return extract(packed, dir.toAbsolutePath());
    }

    /**
     * The library packed in the jar for one platform. The build records its SHA-256 and size
     * in {@code hrts.properties}, so an extracted copy is found without reading the library from
     * the jar or hashing it; the bytes are read only to extract. A jar without that record
     * (not made by this build) gets its hash computed as before.
     */
    private static final class Packed {
        final String resource;
        private final String recordedHash;
        private final long recordedSize;
        private byte[] bytes;

        Packed(String platform) {
            resource = "native/" + platform + "/" + LIBRARY_FILE;
            Properties build = buildProperties();
            String hash = build.getProperty("sha256." + platform, "");
            long size = -1;
            try {
                size = Long.parseLong(build.getProperty("size." + platform, "-1"));
            } catch (NumberFormatException e) {
                // unknown: read and hashed below
            }
            boolean usable = hash.length() == 64 && size > 0;
            for (int i = 0; usable && i < hash.length(); i++) {
                char c = hash.charAt(i);
                usable = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
            }
            recordedHash = usable ? hash : null;
            recordedSize = usable ? size : -1;
        }

        boolean present() {
            return NativeLoader.class.getResource("/" + resource) != null;
        }

        byte[] bytes() throws IOException {
            if (bytes == null) {
                bytes = readResource("/" + resource);
                if (bytes == null) {
                    throw new IOException(resource + " is not packaged in " + codeSource());
                }
            }
            return bytes;
        }

        /** The copy's file name: the content hash keeps different builds apart. */
        String fileName() throws IOException {
            String hash = recordedHash != null ? recordedHash : sha256Hex(bytes());
            return "lib" + LIBRARY_NAME + "-" + hash.substring(0, 16) + ".so";
        }

        long size() throws IOException {
            return recordedSize >= 0 ? recordedSize : bytes().length;
        }
    }

    /**
     * Extracts and takes this JVM's shared lock on the copy (see {@link ExtractedCopies}); extracts
     * again if a cleanup in another JVM removed the copy in between.
     */
    private static Path extractAndHold(Packed packed, Path dir) throws IOException {
        for (int attempt = 0; attempt < 5; attempt++) {
            Path target = extract(packed, dir);
            if (ExtractedCopies.holdInUse(target)) {
                return target;
            }
        }
        throw new IOException("the extracted copy in " + dir + " kept disappearing (removed by "
                + "another process?)");
    }

    /** Best effort, after a successful load: never a reason to fail it. */
    private static void removeStaleCopies(Path dir, Path loaded) {
        try {
            ExtractedCopies.removeStale(dir.getParent(), dir.getFileName().toString(), loaded,
                    currentUid());
        } catch (IOException | RuntimeException e) {
            // the copies stay; the next JVM tries again
        }
    }

    private static Object currentUid() throws IOException {
        return Files.getAttribute(Paths.get("/proc/self"), "unix:uid");
    }

    /**
     * A copy of the right name and size is the library: copies are written whole to a temporary
     * file and renamed into place, under a name made of the content's hash, and the default
     * directory is writable by this user only (checked before).
     */
    private static Path extract(Packed packed, Path dir) throws IOException {
        Files.createDirectories(dir);
        Path target = dir.resolve(packed.fileName());
        if (Files.isRegularFile(target, LinkOption.NOFOLLOW_LINKS)
                && Files.size(target) == packed.size()) {
            return target; // already extracted (by us or a concurrent JVM)
        }
        Path tmp = Files.createTempFile(dir, ".lib" + LIBRARY_NAME + "-", ".tmp");
        try {
            Files.write(tmp, packed.bytes());
            Files.setPosixFilePermissions(tmp, PosixFilePermissions.fromString("rwxr-xr-x"));
            try {
                Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE,
                        StandardCopyOption.REPLACE_EXISTING);
            } catch (AtomicMoveNotSupportedException e) {
                Files.move(tmp, target, StandardCopyOption.REPLACE_EXISTING);
            }
        } finally {
            Files.deleteIfExists(tmp);
        }
        return target;
    }

    /**
     * Creates {@code dir} mode 0700 if missing and refuses it unless it is a real directory
     * owned by this user and writable by nobody else: a shared /tmp must not let another user
     * plant the library this JVM loads.
     */
    private static void ensurePrivateDir(Path dir) throws IOException {
        // Usually there from an earlier JVM: one attribute read checks it (creating it, or
        // the exception a concurrent creation throws, costs a start-up several ms).
        if (!Files.isDirectory(dir, LinkOption.NOFOLLOW_LINKS)) {
            try {
                Files.createDirectories(dir.getParent());
                Files.createDirectory(dir,
                        PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
            } catch (FileAlreadyExistsException e) {
                // made by a concurrent JVM: checked below
            }
        }
        Map<String, Object> attrs = Files.readAttributes(dir, "unix:uid,mode,isDirectory",
                LinkOption.NOFOLLOW_LINKS);
        if (!Boolean.TRUE.equals(attrs.get("isDirectory"))) {
            throw new IOException(dir + " is not a directory (or is a symbolic link)");
        }
        Object owner = attrs.get("uid");
        Object self = currentUid();
        if (!owner.equals(self)) {
            throw new IOException(dir + " is owned by uid " + owner + ", not by this user (uid "
                    + self + ")");
        }
        int mode = (Integer) attrs.get("mode");
        if ((mode & 0022) != 0) {
            throw new IOException(dir + " is writable by other users (mode "
                    + Integer.toOctalString(mode & 07777) + ")");
        }
    }

    private static byte[] readResource(String name) throws IOException {
        try (InputStream in = NativeLoader.class.getResourceAsStream(name)) {
            if (in == null) {
                return null;
            }
            ByteArrayOutputStream out = new ByteArrayOutputStream(1 << 20);
            byte[] buf = new byte[64 * 1024];
            for (int n; (n = in.read(buf)) > 0; ) {
                out.write(buf, 0, n);
            }
            return out.toByteArray();
        }
    }

    private static String sha256Hex(byte[] data) {
        try {
            byte[] d = MessageDigest.getInstance("SHA-256").digest(data);
            StringBuilder sb = new StringBuilder();
            for (byte b : d) {
                sb.append(String.format("%02x", b));
            }
            return sb.toString();
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is required of every JVM", e);
        }
    }

    private static String codeSource() {
        try {
            return new File(NativeLoader.class.getProtectionDomain().getCodeSource().getLocation()
                    .toURI()).toString();
        } catch (Exception | Error e) {
            return "the hrts jar";
        }
    }

    private static HrtsException failure(Properties props, List<String> tried) {
        String osName = props.getProperty("os.name", "?");
        String osArch = props.getProperty("os.arch", "?");
        String plat = platform(osName, osArch);
        StringBuilder sb = new StringBuilder();
        sb.append("hrts: cannot load the native library ").append(LIBRARY_FILE)
                .append(" for platform ").append(plat)
                .append(" (os.name=").append(osName).append(", os.arch=").append(osArch)
                .append(", hrts ").append(version()).append(").\nTried:\n");
        for (int i = 0; i < tried.size(); i++) {
            sb.append("  ").append(i + 1).append(". ").append(tried.get(i)).append('\n');
        }
        sb.append("How to fix:\n")
                .append("  - point -D").append(LIBRARY_PROPERTY)
                .append("=/path/to/").append(LIBRARY_FILE)
                .append(" at an existing library built for ").append(plat)
                .append(" (cargo build --release -p hrts-jni gives target/release/")
                .append(LIBRARY_FILE).append("), or\n")
                .append("  - if the extraction directory is unusable (e.g. ")
                .append(props.getProperty("java.io.tmpdir", "/tmp"))
                .append(" is mounted noexec), set -D").append(DIR_PROPERTY)
                .append("=/a/writable/directory/on/an/exec/mount, or\n")
                .append("  - use an hrts jar that contains native/").append(plat).append('/')
                .append(LIBRARY_FILE).append(" (build it with ./gradlew jar), or\n")
                .append("  - install ").append(LIBRARY_FILE).append(" on java.library.path.");
        return new HrtsException(sb.toString());
    }
}
