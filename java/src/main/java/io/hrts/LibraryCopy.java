package io.hrts;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Map;

/** The file work of {@link NativeLoader}: the private directory, and extracting a copy. */
final class LibraryCopy {
    private LibraryCopy() {}

    /**
     * A file of the copy's name and size is the copy: copies are written whole to a temporary
     * file and renamed into place, under a name made of the content's hash, and the default
     * directory is writable by this user only (checked before).
     */
    static boolean isCopy(Path copy, long size) throws IOException {
        return Files.isRegularFile(copy, LinkOption.NOFOLLOW_LINKS) && Files.size(copy) == size;
    }

    /** Writes the jar's {@code resource} to {@code copy} (its directory created if missing). */
    static void extract(String resource, Path copy) throws IOException {
        byte[] bytes = readResource("/" + resource);
        if (bytes == null) {
            throw new IOException(resource + " is not packaged in " + NativeLoader.codeSource());
        }
        Path dir = copy.getParent();
        Files.createDirectories(dir);
        Path tmp = Files.createTempFile(dir, ".lib" + NativeLoader.LIBRARY_NAME + "-", ".tmp");
        try {
            Files.write(tmp, bytes);
            Files.setPosixFilePermissions(tmp, PosixFilePermissions.fromString("rwxr-xr-x"));
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
     * Creates {@code dir} mode 0700 if missing and refuses it unless it is a real directory
     * owned by this user and writable by nobody else: a shared /tmp must not let another user
     * plant the library this JVM loads.
     */
    static void checkPrivateDir(Path dir) throws IOException {
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

    /** This process's uid, as {@code unix:uid} gives file owners. */
    static Object currentUid() throws IOException {
        return Files.getAttribute(Path.of("/proc/self"), "unix:uid");
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
}
