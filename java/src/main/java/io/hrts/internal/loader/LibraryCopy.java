package io.hrts.internal.loader;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.UserPrincipal;
import java.util.Map;

/**
 * The file checks of {@link Loader}'s every load: the private directory and the copy. What
 * only a JVM that extracts needs is in {@link Extraction}, so that the others never load it.
 */
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

    /**
     * Creates {@code dir} mode 0700 if missing and refuses it unless it is a real directory
     * owned by this user and writable by nobody else: a shared /tmp must not let another user
     * plant the library this JVM loads.
     */
    static void checkPrivateDir(Path dir) throws IOException {
        // Usually there from an earlier JVM: one attribute read checks it (creating it, or
        // the exception a concurrent creation throws, costs a start-up several ms).
        if (!Files.isDirectory(dir, LinkOption.NOFOLLOW_LINKS)) {
            Extraction.createPrivateDir(dir);
        }
        if (!posix(dir)) {
            checkOwnedDir(dir);
            return;
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

    /** Whether {@code p}'s file system has Unix owners and modes (not on Windows). */
    static boolean posix(Path p) {
        return p.getFileSystem().supportedFileAttributeViews().contains("unix");
    }

    /**
     * Windows: {@code dir} is a real directory owned by the owner of the files this user creates.
     * The default directory is under the user's own temporary directory, which only the user (and
     * administrators) may write, and inherits its access list.
     */
    private static void checkOwnedDir(Path dir) throws IOException {
        if (!Files.isDirectory(dir, LinkOption.NOFOLLOW_LINKS)) {
            throw new IOException(dir + " is not a directory (or is a link)");
        }
        Path probe = Files.createFile(dir.resolve(Extraction.uniqueName(".owner-")));
        try {
            UserPrincipal owner = Files.getOwner(dir, LinkOption.NOFOLLOW_LINKS);
            UserPrincipal self = Files.getOwner(probe, LinkOption.NOFOLLOW_LINKS);
            if (!owner.equals(self)) {
                throw new IOException(dir + " is owned by " + owner.getName() + ", not by this user ("
                        + self.getName() + ")");
            }
        } finally {
            Files.deleteIfExists(probe);
        }
    }

    /** This process's uid, as {@code unix:uid} gives file owners. */
    static Object currentUid() throws IOException {
        return Files.getAttribute(Path.of("/proc/self"), "unix:uid");
    }
}
