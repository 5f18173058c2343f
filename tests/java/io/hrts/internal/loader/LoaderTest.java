package io.hrts.internal.loader;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;

import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Collections;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;

/**
 * What only the loader's own package sees: the constants the build generated ({@code BuildInfo})
 * and the cleanup of old copies ({@link ExtractedCopies}). The loader's behaviour as a JVM meets it
 * is tested by {@code io.hrts.NativeLoaderTest}.
 */
public class LoaderTest {
    @Rule
    public TemporaryFolder tmp = new TemporaryFolder();

    @Test
    public void theBuildRecordsEachPackedLibrarysHashAndSize() throws Exception {
        // The loader finds its extracted copy by these alone (no read or hash of the library
        // at start): they must describe the bytes the jar really carries.
        assertEquals(Loader.packagedPlatforms(), Arrays.asList(BuildInfo.PLATFORMS));
        for (String platform : Loader.packagedPlatforms()) {
            byte[] packed;
            try (InputStream in = Loader.class.getResourceAsStream(
                    "/" + Loader.resourcePath(platform))) {
                packed = in.readAllBytes();
            }
            StringBuilder hex = new StringBuilder();
            for (byte b : java.security.MessageDigest.getInstance("SHA-256").digest(packed)) {
                hex.append(String.format("%02x", b));
            }
            int i = Loader.packedIndex(platform);
            assertEquals(platform, hex.toString(), BuildInfo.SHA256[i]);
            assertEquals(platform, packed.length, BuildInfo.SIZE[i]);
        }
        Path copy = Loader.extractTo(tmp.newFolder("named").toPath());
        assertEquals("libhrts_jni-" + BuildInfo.SHA256[Loader.packedIndex(Loader.platform())]
                .substring(0, 16) + ".so", copy.getFileName().toString());
    }

    @Test
    public void versionsCompareByTheirNumbers() {
        assertTrue(ExtractedCopies.isOlder("0.0.9", "0.1.0"));
        assertTrue(ExtractedCopies.isOlder("0.9", "0.10"));
        assertTrue(ExtractedCopies.isOlder("0.1", "0.1.1"));
        assertTrue(ExtractedCopies.isOlder("0.1.0-rc1", "0.2.0"));
        assertFalse(ExtractedCopies.isOlder("0.1.0", "0.1.0"));
        assertFalse(ExtractedCopies.isOlder("0.1.0-rc1", "0.1.0"));
        assertFalse(ExtractedCopies.isOlder("0.1.0", "0.1"));
        assertFalse(ExtractedCopies.isOlder("1.0.0", "0.99.99"));
    }

    /** A copy as the loader names it, with a distinct hash-like suffix. */
    private static Path copy(Path dir, int n) throws Exception {
        Files.createDirectories(dir);
        return Files.write(dir.resolve(String.format("libhrts_jni-%016x.so", n)), new byte[] {(byte) n});
    }

    @Test
    public void cleanupLeavesWhatAnotherUserOwns() throws Exception {
        Path base = tmp.newFolder("base").toPath();
        Path old = copy(base.resolve("0.0.1"), 1);
        Object me = Files.getAttribute(base, "unix:uid");
        Object someoneElse = ((Integer) me) + 1;
        assertEquals(Collections.emptyList(), ExtractedCopies.removeStale(base, "0.1.0", null, someoneElse));
        assertTrue(Files.exists(old));
        assertEquals(Arrays.asList(old, old.getParent()), ExtractedCopies.removeStale(base, "0.1.0", null, me));
        assertFalse(Files.exists(old.getParent()));
    }
}
