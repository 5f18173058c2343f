package io.hrts.internal.loader;

import io.hrts.HrtsException;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.concurrent.atomic.AtomicLong;

/**
 * What only a JVM that does not find its copy of the library does: create the private directory,
 * and write the copy out of the jar. Apart from {@link LibraryCopy} so that a JVM that finds its
 * copy loads none of it (nor the exceptions its catch clauses name).
 */
final class Extraction {
    /** The count in {@link #uniqueName}'s names. */
    private static final AtomicLong NAMES = new AtomicLong(System.nanoTime());

    private Extraction() {}

    /** {@link Loader#extractTo}: the copy in {@code dir}, written if missing. */
    static Path extractTo(Path dir) throws IOException {
        int packed = Loader.packedIndex(Loader.platform());
        if (packed < 0) {
            throw new HrtsException("hrts: " + Loader.resourcePath() + " is not packaged in "
                    + Loader.codeSource());
        }
        Path copy = dir.toAbsolutePath().resolve(Loader.copyName(packed));
        if (!LibraryCopy.isCopy(copy, BuildInfo.SIZE[packed])) {
            extract(Loader.resourcePath(), copy);
        }
        return copy;
    }

    /** Writes the jar's {@code resource} to {@code copy} (its directory created if missing). */
    static void extract(String resource, Path copy) throws IOException {
        byte[] bytes = readResource("/" + resource);
        if (bytes == null) {
            throw new IOException(resource + " is not packaged in " + Loader.codeSource());
        }
        Path dir = copy.getParent();
        Files.createDirectories(dir);
        Path tmp = Files.createFile(dir.resolve(uniqueName(".lib" + Loader.LIBRARY_NAME + "-")));
        try {
            Files.write(tmp, bytes);
            if (LibraryCopy.posix(dir)) {
                Files.setPosixFilePermissions(tmp, PosixFilePermissions.fromString("rwxr-xr-x"));
            }
            try {
                Files.move(tmp, copy, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            } catch (AtomicMoveNotSupportedException e) {
                Files.move(tmp, copy, StandardCopyOption.REPLACE_EXISTING);
            }
        } finally {
            Files.deleteIfExists(tmp);
        }
    }

    /**
     * A file name of this process's own, {@code prefix<pid>x<count>.tmp}. Not {@link
     * Files#createTempFile}: its names come from {@code SecureRandom}, whose seeding lists the
     * network interfaces, which crashes a Windows JVM under Wine 8 before the library loads.
     */
    static String uniqueName(String prefix) {
        return prefix + ProcessHandle.current().pid() + "x" + Long.toHexString(NAMES.incrementAndGet())
                + ".tmp";
    }

    /**
     * Creates {@code dir} (and its parents) mode 0700 (on Windows with the ACL it inherits from
     * the user's own temporary directory); one a concurrent JVM made is fine.
     */
    static void createPrivateDir(Path dir) throws IOException {
        try {
            Files.createDirectories(dir.getParent());
            if (LibraryCopy.posix(dir.getParent())) {
                Files.createDirectory(dir,
                        PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
            } else {
                Files.createDirectory(dir);
            }
        } catch (FileAlreadyExistsException e) {
            // made by a concurrent JVM: the caller checks it
        }
    }

    private static byte[] readResource(String name) throws IOException {
        try (InputStream in = Loader.class.getResourceAsStream(name)) {
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
}
