package io.hrts;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;

import java.io.InputStream;
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
        HrtsException e = assertThrows(HrtsException.class, () -> NativeLoader.loadWith(p));
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

    @Test
    public void platformNames() {
        assertEquals("linux-x86_64", NativeLoader.platform("Linux", "amd64"));
        assertEquals("linux-x86_64", NativeLoader.platform("Linux", "x86_64"));
        assertEquals("linux-aarch64", NativeLoader.platform("Linux", "aarch64"));
        assertEquals("linux-ppc64le", NativeLoader.platform("Linux", "ppc64le"));
    }

    private static List<Path> list(Path dir) throws Exception {
        try (Stream<Path> s = Files.list(dir)) {
            return s.collect(Collectors.toList());
        }
    }
}
