package io.hrts.internal.loader;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.DirectoryNotEmptyException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.FileTime;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * The copies of the JNI library that {@link Loader} extracts, and their cleanup.
 *
 * <p>Every JVM holds a shared lock on the copy it loaded for as long as it runs (an fcntl lock taken
 * by the library itself, {@code Native.holdCopy}, released by the kernel when the process ends).
 * The cleanup removes a copy only when it can take an exclusive lock on it, so it leaves the
 * copies of running JVMs. A JVM that finds its copy gone between its check and its load extracts
 * it again; one that already loaded a copy keeps its mapping even if the file goes.
 *
 * <p>The cleanup touches only what the loader made: directories named as versions in the
 * per-user base directory, owned by this user, not symbolic links, and in them only regular files
 * named {@code libhrts_jni-<16 hex>.so} (and its own temporary files once they are an hour old).
 * A directory is removed only once it is empty. Versions newer than this one, and names that are
 * not versions, are left alone.
 */
final class ExtractedCopies {
    private static final Pattern COPY = Pattern.compile(
            "(lib)?" + Pattern.quote(Loader.LIBRARY_NAME + "-") + "[0-9a-f]{16}\\.(so|dll)");
    private static final Pattern TEMP = Pattern.compile(
            Pattern.quote(".lib" + Loader.LIBRARY_NAME + "-") + "[A-Za-z0-9]*\\.tmp");
    private static final Pattern VERSION = Pattern.compile("[0-9]+(\\.[0-9]+)*([-+][A-Za-z0-9.+-]*)?");
    /** A temporary file this old is left by a JVM that died while extracting. */
    private static final long TEMP_MAX_AGE_MS = 3_600_000L;

    private ExtractedCopies() {}

    private static Object fileKey(Path p) throws IOException {
        return Files.readAttributes(p, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS).fileKey();
    }

    /**
     * {@link #removeStale(Path, String, Path, Object)} for this user's copies, after a load. Best
     * effort: a cleanup problem never fails the load (the next extracting JVM tries again).
     */
    static void removeStale(Path base, String version, Path keep) {
        try {
            removeStale(base, version, keep, LibraryCopy.currentUid());
        } catch (IOException | RuntimeException e) {
            // the copies stay
        }
    }

    /**
     * Removes the copies of older versions (and other builds of this version) under
     * {@code base} that belong to {@code uid} and that no JVM has locked. Best effort: what
     * cannot be removed stays.
     *
     * @param base the per-user base directory ({@code <java.io.tmpdir>/hrts-<user>})
     * @param version this jar's version: its directory keeps {@code keep}, newer ones are kept
     * @param keep the copy this JVM loaded (never removed)
     * @param uid the owner a directory and file must have ({@code unix:uid})
     * @return what was removed
     */
    static List<Path> removeStale(Path base, String version, Path keep, Object uid) {
        List<Path> removed = new ArrayList<>();
        if (!VERSION.matcher(version).matches()) {
            return removed; // a build without a version cannot tell older from newer
        }
        try (DirectoryStream<Path> dirs = Files.newDirectoryStream(base)) {
            for (Path dir : dirs) {
                String name = dir.getFileName().toString();
                boolean current = name.equals(version);
                if (!(current || (VERSION.matcher(name).matches() && isOlder(name, version)))
                        || !owned(dir, true, uid)) {
                    continue;
                }
                removeCopies(dir, keep, uid, removed);
                if (!current) {
                    try {
                        Files.delete(dir);
                        removed.add(dir);
                    } catch (DirectoryNotEmptyException e) {
                        // holds something else, or a copy in use: stays
                    } catch (IOException e) {
                        // best effort
                    }
                }
            }
        } catch (IOException | RuntimeException e) {
            // best effort: a cleanup problem never stops the library from loading
        }
        return removed;
    }

    private static void removeCopies(Path dir, Path keep, Object uid, List<Path> removed) {
        Path keepAbs = keep == null ? null : keep.toAbsolutePath();
        try (DirectoryStream<Path> files = Files.newDirectoryStream(dir)) {
            for (Path f : files) {
                String name = f.getFileName().toString();
                if (f.toAbsolutePath().equals(keepAbs) || !owned(f, false, uid)) {
                    continue;
                }
                if (COPY.matcher(name).matches()) {
                    if (removeUnlocked(f)) {
                        removed.add(f);
                    }
                } else if (TEMP.matcher(name).matches() && isOld(f)) {
                    if (Files.deleteIfExists(f)) {
                        removed.add(f);
                    }
                }
            }
        } catch (IOException | RuntimeException e) {
            // best effort
        }
    }

    /** Removes {@code f} if no JVM holds a lock on it, holding the exclusive lock meanwhile. */
    private static boolean removeUnlocked(Path f) {
        Object before;
        try {
            before = fileKey(f);
        } catch (IOException e) {
            return false;
        }
        // WRITE only to be allowed an exclusive lock; nothing is written.
        try (FileChannel ch = FileChannel.open(f, StandardOpenOption.WRITE, LinkOption.NOFOLLOW_LINKS)) {
            FileLock lock;
            try {
                lock = ch.tryLock(0, Long.MAX_VALUE, false);
            } catch (OverlappingFileLockException e) {
                return false; // this JVM locked it through Java
            }
            if (lock == null) {
                return false; // another JVM holds it
            }
            if (!Objects.equals(before, fileKey(f))) {
                return false; // replaced meanwhile: not the file we locked
            }
            Files.delete(f);
            return true;
        } catch (IOException | RuntimeException e) {
            return false;
        }
    }

    /** A real directory (or regular file), not a link, owned by {@code uid}. */
    private static boolean owned(Path p, boolean directory, Object uid) {
        try {
            boolean kind = directory ? Files.isDirectory(p, LinkOption.NOFOLLOW_LINKS)
                    : Files.isRegularFile(p, LinkOption.NOFOLLOW_LINKS);
            return kind && uid.equals(Files.getAttribute(p, "unix:uid", LinkOption.NOFOLLOW_LINKS));
        } catch (IOException | RuntimeException e) {
            return false;
        }
    }

    private static boolean isOld(Path f) throws IOException {
        FileTime t = Files.getLastModifiedTime(f, LinkOption.NOFOLLOW_LINKS);
        return System.currentTimeMillis() - t.toMillis() > TEMP_MAX_AGE_MS;
    }

    /**
     * Whether version {@code a} is older than {@code b}: their numeric parts compared in order
     * (a missing part counts as 0). Equal numeric parts are not older, whatever the suffixes.
     */
    static boolean isOlder(String a, String b) {
        long[] x = numbers(a);
        long[] y = numbers(b);
        for (int i = 0; i < Math.max(x.length, y.length); i++) {
            long xi = i < x.length ? x[i] : 0;
            long yi = i < y.length ? y[i] : 0;
            if (xi != yi) {
                return xi < yi;
            }
        }
        return false;
    }

    private static long[] numbers(String v) {
        String core = v.split("[-+]", 2)[0];
        String[] parts = core.split("\\.");
        long[] n = new long[parts.length];
        for (int i = 0; i < parts.length; i++) {
            try {
                n[i] = Long.parseLong(parts[i]);
            } catch (NumberFormatException e) {
                n[i] = Long.MAX_VALUE; // 20+ digits: never "older"
            }
        }
        return n;
    }
}
