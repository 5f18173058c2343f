package io.hrts;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;

import io.hrts.internal.loader.Loader;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;

/** The loader's choices, its error message and the extraction directory override. */
public class NativeLoaderTest {
    @Rule
    public TemporaryFolder tmp = new TemporaryFolder();

    private static final String MISSING = "/nonexistent/libx.so";

    private static void assertExplainsMissingLibrary(String msg) {
        String platform = ChildJvm.prop("hrts.test.platform");
        assertTrue(msg, msg.contains(MISSING));
        assertTrue(msg, msg.contains("does not exist"));
        assertTrue(msg, msg.contains("platform " + platform));
        assertTrue(msg, msg.contains("os.name=" + System.getProperty("os.name")));
        assertTrue(msg, msg.contains("os.arch=" + System.getProperty("os.arch")));
        assertTrue(msg, msg.contains("-Dhrts.native.library=/path/to/libhrts_jni.so"));
        assertTrue(msg, msg.contains("-Dhrts.native.dir="));
        assertTrue(msg, msg.contains("./gradlew jar"));
    }

    @Test
    public void missingExplicitLibraryIsAnErrorInProcess() {
        Properties p = new Properties();
        p.putAll(System.getProperties());
        p.setProperty(NativeLoader.LIBRARY_PROPERTY, MISSING);
        HrtsException e = assertThrows(HrtsException.class, () -> Loader.loadWith(p));
        assertExplainsMissingLibrary(e.getMessage());
        // Nothing else was tried: the explicit choice wins.
        assertFalse(e.getMessage(), e.getMessage().contains("2. "));
    }

    @Test
    public void missingExplicitLibraryIsAnErrorInAChildJvm() throws Exception {
        Procs r = ChildJvm.runJar(Collections.singletonList("-D" + NativeLoader.LIBRARY_PROPERTY + "=" + MISSING));
        assertEquals(r.toString(), 1, r.exit);
        assertExplainsMissingLibrary(r.err);
    }

    @Test
    public void explicitLibraryWins() throws Exception {
        String lib = ChildJvm.prop("hrts.test.jniLib");
        Procs r = ChildJvm.runJar(Collections.singletonList("-D" + NativeLoader.LIBRARY_PROPERTY + "=" + lib));
        assertEquals(r.toString(), 0, r.exit);
        assertTrue(r.toString(), r.out.contains("native library: " + Paths.get(lib).toAbsolutePath()));
    }

    @Test
    public void extractionDirectoryOverrideIsUsed() throws Exception {
        Path dir = tmp.newFolder("not-tmp", "hrts-libs").toPath();
        Procs r = ChildJvm.runJar(Collections.singletonList("-D" + NativeLoader.DIR_PROPERTY + "=" + dir));
        assertEquals(r.toString(), 0, r.exit);
        assertTrue(r.toString(), r.out.contains("native library: " + dir + "/libhrts_jni-"));
        List<Path> files = list(dir);
        assertEquals(files.toString(), 1, files.size());
        assertTrue(files.get(0).getFileName().toString().matches("libhrts_jni-[0-9a-f]{16}\\.so"));
    }

    @Test
    public void extractionDirectoryIsCreatedWhenMissing() throws Exception {
        Path dir = tmp.getRoot().toPath().resolve("a/b/c");
        Procs r = ChildJvm.runJar(Collections.singletonList("-D" + NativeLoader.DIR_PROPERTY + "=" + dir));
        assertEquals(r.toString(), 0, r.exit);
        assertTrue(r.toString(), r.out.contains("native library: " + dir + "/libhrts_jni-"));
    }

    @Test
    public void unusableExtractionDirectoryIsExplained() throws Exception {
        Path file = tmp.newFile("a-file").toPath();
        Path dir = file.resolve("sub");
        Procs r = ChildJvm.runJar(Arrays.asList("-D" + NativeLoader.DIR_PROPERTY + "=" + dir,
                "-Djava.library.path=/nonexistent"));
        assertEquals(r.toString(), 1, r.exit);
        assertTrue(r.toString(), r.err.contains(dir.toString()));
        assertTrue(r.toString(), r.err.contains("cannot extract"));
        assertTrue(r.toString(), r.err.contains("System.loadLibrary(\"hrts_jni\")"));
    }

    @Test
    public void extractionIsIdempotentAndSafeUnderConcurrency() throws Exception {
        Path dir = tmp.newFolder("concurrent").toPath();
        ExecutorService pool = Executors.newFixedThreadPool(8);
        try {
            List<Callable<Path>> jobs = new ArrayList<>();
            for (int i = 0; i < 16; i++) {
                jobs.add(() -> NativeLoader.extractTo(dir));
            }
            List<Path> results = new ArrayList<>();
            for (Future<Path> f : pool.invokeAll(jobs)) {
                results.add(f.get());
            }
            for (Path p : results) {
                assertEquals(results.get(0), p);
            }
            List<Path> files = list(dir);
            assertEquals("no temporary files left: " + files, 1, files.size());
            byte[] packed;
            try (InputStream in = NativeLoader.class.getResourceAsStream("/" + NativeLoader.resourcePath())) {
                packed = in.readAllBytes();
            }
            assertArrayEquals(packed, Files.readAllBytes(results.get(0)));
            // A corrupted copy is replaced, not trusted.
            Files.write(results.get(0), new byte[] {1, 2, 3});
            assertEquals(results.get(0), NativeLoader.extractTo(dir));
            assertArrayEquals(packed, Files.readAllBytes(results.get(0)));
        } finally {
            pool.shutdownNow();
        }
    }

    /** The loader's C-library detection, both answers: the ELF interpreter in an executable's head. */
    @Test
    public void theCLibraryIsTheOneTheExecutableAsksFor() {
        byte[] musl = elfHead("/lib/ld-musl-x86_64.so.1");
        byte[] glibc = elfHead("/lib64/ld-linux-x86-64.so.2");
        assertEquals("musl", Loader.cLibraryOf(musl, musl.length));
        assertEquals("glibc", Loader.cLibraryOf(glibc, glibc.length));
        assertEquals("musl", Loader.cLibraryOf(elfHead("/lib/ld-musl-aarch64.so.1"), 300));
        // Only the bytes read count; nothing read (no /proc) is glibc, Linux's usual C library.
        assertEquals("glibc", Loader.cLibraryOf(musl, 100));
        assertEquals("glibc", Loader.cLibraryOf(new byte[0], 0));
        // This JVM (Debian's, or whichever runs the tests) and its platform's name agree.
        String here = NativeLoader.cLibrary();
        assertTrue(here, here.equals("glibc") || here.equals("musl"));
        assertEquals(here.equals("musl"), NativeLoader.platform().startsWith("linux-musl-"));
        assertEquals("linux-musl-x86_64", Loader.platform("Linux", "amd64", "musl"));
        assertEquals("linux-musl-aarch64", Loader.platform("Linux", "aarch64", "musl"));
        assertEquals("linux-x86_64", Loader.platform("Linux", "amd64", "glibc"));
        assertEquals("macosx-aarch64", Loader.platform("Mac OS X", "aarch64", "musl"));
        // Every Windows release is one platform, its DLL named as Windows names libraries.
        assertEquals("windows-x86_64", Loader.platform("Windows 11", "amd64", null));
        assertEquals("windows-x86_64", Loader.platform("Windows Server 2022", "amd64", "musl"));
        assertEquals("hrts_jni.dll", NativeLoader.libraryFile("windows-x86_64"));
        assertEquals("libhrts_jni.so", NativeLoader.libraryFile("linux-musl-x86_64"));
    }

    /** 64 bytes of ELF header, 56 of program header, then the interpreter's path, as linkers lay it out. */
    private static byte[] elfHead(String interpreter) {
        byte[] head = new byte[512];
        head[0] = 0x7f;
        head[1] = 'E';
        head[2] = 'L';
        head[3] = 'F';
        byte[] path = interpreter.getBytes(StandardCharsets.US_ASCII);
        System.arraycopy(path, 0, head, 64 + 56, path.length);
        return head;
    }

    @Test
    public void theFallbackPolicy() {
        Properties here = new Properties();
        here.putAll(System.getProperties());
        here.remove(NativeLoader.FALLBACK_PROPERTY);
        assertEquals("auto", Loader.fallbackPolicy(here));
        // Auto: no fallback where the jar has this platform's library (a failure is a broken install).
        assertFalse(Loader.fallbackAllowed(here, "auto"));
        assertTrue(Loader.describeFallback(here, "auto"), Loader.describeFallback(here, "auto")
                .contains("a failure to load it is a broken install"));
        Properties mac = new Properties();
        mac.putAll(here);
        mac.setProperty("os.name", "Mac OS X");
        mac.setProperty("os.arch", "aarch64");
        assertTrue("auto: a fallback where the jar has no library", Loader.fallbackAllowed(mac, "auto"));
        assertFalse(Loader.fallbackAllowed(mac, "deny"));
        assertTrue(Loader.fallbackAllowed(here, "allow"));
        Properties explicit = new Properties();
        explicit.putAll(mac);
        explicit.setProperty(NativeLoader.LIBRARY_PROPERTY, MISSING);
        assertFalse("a library named on the command line is meant", Loader.fallbackAllowed(explicit, "auto"));
        for (String v : new String[] {"ALLOW", " deny ", "force", "auto", ""}) {
            here.setProperty(NativeLoader.FALLBACK_PROPERTY, v);
            Loader.fallbackPolicy(here);
        }
        here.setProperty(NativeLoader.FALLBACK_PROPERTY, "sometimes");
        HrtsException e = assertThrows(HrtsException.class, () -> Loader.fallbackPolicy(here));
        assertEquals(HrtsException.Kind.INVALID_ARGUMENT, e.getKind());
        assertTrue(e.getMessage(), e.getMessage().contains("sometimes") && e.getMessage().contains("allow, deny"));
    }

    @Test
    public void platformNames() {
        assertEquals("linux-x86_64", Loader.platform("Linux", "amd64"));
        assertEquals("linux-x86_64", Loader.platform("Linux", "x86_64"));
        assertEquals("linux-aarch64", Loader.platform("Linux", "aarch64"));
        assertEquals("linux-ppc64le", Loader.platform("Linux", "ppc64le"));
    }

    @Test
    public void aPlatformWithoutLibraryNamesThePlatformsTheJarHas() throws Exception {
        String have = String.join(", ", ChildJvm.prop("hrts.test.platforms").split(","));
        Properties p = new Properties();
        p.putAll(System.getProperties());
        p.setProperty("os.arch", "s390x");
        p.setProperty("java.library.path", "/nonexistent");
        HrtsException e = assertThrows(HrtsException.class, () -> Loader.loadWith(p));
        String msg = e.getMessage();
        assertTrue(msg, msg.contains("platform linux-s390x (os.name=" + System.getProperty("os.name") + ", os.arch=s390x"));
        assertTrue(msg, msg.contains("native/linux-s390x/libhrts_jni.so: not packaged in "));
        assertTrue(msg, msg.contains("this jar has libraries for " + have + ")"));

        // And as a user sees it: a JVM reporting another architecture, told not to fall back.
        Procs r = ChildJvm.runJar(Arrays.asList("-Dos.arch=s390x", "-Djava.library.path=/nonexistent",
                "-D" + NativeLoader.FALLBACK_PROPERTY + "=deny"));
        assertEquals(r.toString(), 1, r.exit);
        assertTrue(r.toString(), r.err.contains("this jar has libraries for " + have + ")"));
        assertTrue(r.toString(), r.err.contains("os.arch=s390x, C library " + NativeLoader.cLibrary() + ", hrts "));
        assertTrue(r.toString(), r.err.contains("Fallback: no fallback (-Dhrts.fallback=deny)."));
    }

    /** A copy as the loader names it, with a distinct hash-like suffix. */
    private static Path copy(Path dir, int n) throws Exception {
        Files.createDirectories(dir);
        return Files.write(dir.resolve(String.format("libhrts_jni-%016x.so", n)), new byte[] {(byte) n});
    }

    @Test
    public void loadingRemovesTheCopiesOfOlderVersionsItOwns() throws Exception {
        Path tmpdir = tmp.newFolder("tmpdir").toPath();
        Path base = tmpdir.resolve("hrts-" + System.getProperty("user.name"));
        Path outside = tmp.newFolder("outside").toPath();
        String version = ChildJvm.prop("hrts.test.version");
        Path current = base.resolve(version);

        Path old = copy(base.resolve("0.0.1"), 1);
        Path oldTemp = base.resolve("0.0.2/.libhrts_jni-123.tmp");
        Files.createDirectories(oldTemp.getParent());
        Files.write(oldTemp, new byte[] {2});
        Files.setLastModifiedTime(oldTemp, java.nio.file.attribute.FileTime.fromMillis(
                System.currentTimeMillis() - 2 * 3_600_000L));
        Path withNotes = copy(base.resolve("0.0.3"), 3);
        Path notes = Files.write(base.resolve("0.0.3/notes.txt"), new byte[] {3});
        Path inUse = copy(base.resolve("0.0.4"), 4);
        Path outsideCopy = copy(outside, 5);
        Path linkedDir = Files.createSymbolicLink(base.resolve("0.0.5"), outside);
        Files.createDirectories(base.resolve("0.0.6"));
        Path linkedFile = Files.createSymbolicLink(base.resolve("0.0.6/libhrts_jni-0000000000000006.so"), outsideCopy);
        Path newer = copy(base.resolve("99.0.0"), 7);
        Path notAVersion = copy(base.resolve("mine"), 8);
        Path otherBuild = copy(current, 9);
        Path freshTemp = Files.write(current.resolve(".libhrts_jni-456.tmp"), new byte[] {10});

        // A running JVM holds its copy: this one, for the copy of "0.0.4".
        try (java.nio.channels.FileChannel ch = java.nio.channels.FileChannel.open(inUse,
                java.nio.file.StandardOpenOption.READ);
                java.nio.channels.FileLock lock = ch.lock(0, Long.MAX_VALUE, true)) {
            assertTrue(lock.isShared());
            Procs r = ChildJvm.runJar(Collections.singletonList("-Djava.io.tmpdir=" + tmpdir));
            assertEquals(r.toString(), 0, r.exit);
            assertTrue(r.toString(), r.out.contains("native library: " + current + "/libhrts_jni-"));
        }

        assertFalse("older version's copy", Files.exists(old));
        assertFalse("older version's directory", Files.exists(old.getParent()));
        assertFalse("stale temporary file", Files.exists(oldTemp));
        assertFalse(Files.exists(oldTemp.getParent()));
        assertFalse("older copy next to a file of someone else's", Files.exists(withNotes));
        assertTrue("someone else's file", Files.exists(notes));
        assertTrue("a copy in use", Files.exists(inUse));
        assertTrue("a symbolic link to a directory", Files.isSymbolicLink(linkedDir));
        assertTrue("what the link points to", Files.exists(outsideCopy));
        assertTrue("a symbolic link named like a copy", Files.isSymbolicLink(linkedFile));
        assertTrue("a newer version's copy", Files.exists(newer));
        assertTrue("a directory that is not a version", Files.exists(notAVersion));
        assertFalse("another build of this version", Files.exists(otherBuild));
        assertTrue("a temporary file being written", Files.exists(freshTemp));
        List<Path> left = list(current);
        assertEquals(left.toString(), 2, left.size());
    }

    @Test
    public void theLoadedCopyIsHeldWithASharedLock() throws Exception {
        // What other JVMs' cleanups see: a read lock on the copy's inode, an open file
        // description's (pid -1 in /proc/locks), which reading the file here does not drop.
        Path copy = Paths.get(NativeLoader.load());
        assertTrue(copy.toString(), copy.getFileName().toString().matches("libhrts_jni-[0-9a-f]{16}\\.so"));
        Files.readAllBytes(copy); // opens and closes a descriptor: a POSIX lock would go
        assertTrue("held: " + locksOn(copy), locksOn(copy).contains("OFDLCK  ADVISORY  READ"));

        Path other = copy(tmp.newFolder("held").toPath(), 1);
        assertEquals("", locksOn(other));
        assertEquals(0, Native.holdCopy(other.toString().getBytes(StandardCharsets.UTF_8)));
        Files.readAllBytes(other);
        assertEquals("OFDLCK  ADVISORY  READ\n", locksOn(other));
        // A cleanup's exclusive POSIX lock (another process's) conflicts with it: checked by
        // loadingRemovesTheCopiesOfOlderVersionsItOwns through a child JVM's cleanup.
        assertEquals("a missing copy: ENOENT, no exception", 2,
                Native.holdCopy((other + ".gone").getBytes(StandardCharsets.UTF_8)));
    }

    /** The locks /proc/locks lists on {@code p}'s inode: type, advisory, mode per line. */
    private static String locksOn(Path p) throws Exception {
        long inode = (Long) Files.getAttribute(p, "unix:ino");
        StringBuilder out = new StringBuilder();
        for (String line : Files.readAllLines(Paths.get("/proc/locks"))) {
            String[] f = line.trim().split("\\s+");
            // "1: OFDLCK ADVISORY  READ  -1 00:2a:5678 0 EOF"
            if (f.length >= 6 && f[5].endsWith(":" + inode) && !f[1].equals("->")) {
                out.append(String.join("  ", f[1], f[2], f[3])).append('\n');
            }
        }
        return out.toString();
    }

    private static List<Path> list(Path dir) throws Exception {
        try (Stream<Path> s = Files.list(dir)) {
            return s.collect(Collectors.toList());
        }
    }
}
