package io.hrts;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import java.io.File;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.Test;

/**
 * What a fresh JVM loads for its first stamp once the library is extracted: no class the stamp
 * does not need (the cleanup of old copies, jar-URL resource reading, file channels, lambdas or
 * method handles, the environment map, the loader's error report). Start-up time itself is
 * measured in java/benchmarks/startup, not asserted here.
 */
public class FirstStampTest {
    /** Classes whose loading after main starts means the fast path regressed. */
    private static final List<String> NOT_NEEDED = Arrays.asList(
            "io.hrts.internal.loader.ExtractedCopies", "io.hrts.internal.loader.LoadFailure",
            "io.hrts.internal.loader.Extraction", "io.hrts.SelfTest",
            "java.nio.file.AtomicMoveNotSupportedException", "java.nio.file.FileAlreadyExistsException",
            "sun.net.www.protocol.jar.JarURLConnection", "java.util.Properties$LineReader",
            "java.nio.channels.FileChannel", "java.nio.file.DirectoryStream",
            "java.lang.ProcessEnvironment", "java.security.MessageDigest", "java.util.regex.Pattern$");

    @Test
    public void theFirstStampLoadsOnlyWhatItNeeds() throws Exception {
        String testClasses = new File(StampOnce.class.getProtectionDomain().getCodeSource().getLocation().toURI())
                .getPath();
        List<String> cmd = new ArrayList<>(Arrays.asList(ChildJvm.prop("hrts.test.java"),
                "--enable-native-access=ALL-UNNAMED", "-Dhrts.segment=" + System.getProperty("hrts.segment", ""),
                "-Xlog:class+load", "-cp", ChildJvm.prop("hrts.test.jar") + File.pathSeparator + testClasses,
                "io.hrts.StampOnce"));
        Procs.run(cmd); // extracts the copy if no JVM of this build did yet
        Procs r = Procs.run(cmd);
        assertEquals(r.toString(), 0, r.exit);
        List<String> afterMain = new ArrayList<>();
        boolean inMain = false;
        long stamp = 0;
        for (String line : r.out.split("\n")) {
            if (line.contains("io.hrts.StampOnce source:")) {
                inMain = true;
            } else if (inMain && line.contains(" source: ")) {
                afterMain.add(line.replaceFirst("^(\\[[^]]*\\]\\s*)+", ""));
            } else if (line.matches("[0-9]+")) {
                stamp = Long.parseLong(line);
            }
        }
        assertTrue(r.out, inMain);
        assertTrue("a stamp near now: " + stamp, Math.abs(stamp / 1_000_000 - System.currentTimeMillis()) < 60_000);
        for (String loaded : afterMain) {
            for (String bad : NOT_NEEDED) {
                assertTrue("the first stamp loaded " + loaded + "\nall: " + afterMain, !loaded.startsWith(bad));
            }
            assertTrue("no lambda or method handle spun: " + loaded, !loaded.contains("LambdaForm$")
                    && !loaded.contains("$$Lambda") && !loaded.contains("StringConcatFactory"));
        }
        assertTrue(afterMain.toString(), afterMain.stream().anyMatch(l -> l.startsWith("io.hrts.internal.loader.BuildInfo ")));
    }
}
