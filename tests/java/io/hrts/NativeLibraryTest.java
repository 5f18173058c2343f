package io.hrts;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNotEquals;
import static org.junit.Assert.assertTrue;

import java.io.InputStream;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.Arrays;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import java.util.zip.ZipEntry;
import java.util.zip.ZipFile;
import org.junit.Test;

/**
 * The native library, loaded through the packaged jar: where it comes from, what it exports (the
 * natives of {@code io.hrts.Native} and nothing else), and the pid, tid and stamp calls.
 */
public class NativeLibraryTest {

    @Test
    public void classesComeFromThePackagedJar() throws Exception {
        Path jar = Paths.get(ChildJvm.prop("hrts.test.jar")).toRealPath();
        Path codeSource = Paths.get(NativeLoader.class.getProtectionDomain().getCodeSource()
                .getLocation().toURI()).toRealPath();
        assertEquals("io.hrts classes must come from the built jar", jar, codeSource);
    }

    @Test
    public void loadsTheLibraryExtractedFromTheJar() throws Exception {
        String from = NativeLoader.load();
        assertEquals(from, NativeLoader.loadedFrom());
        Path loaded = Paths.get(from);
        Path dir = NativeLoader.defaultExtractionDir().toAbsolutePath();
        assertEquals("loaded from the default extraction dir: " + from, dir, loaded.getParent());
        assertTrue(loaded.getFileName().toString().matches("libhrts_jni-[0-9a-f]{16}\\.so"));
        assertNotEquals(Paths.get(ChildJvm.prop("hrts.test.jniLib")).toAbsolutePath(), loaded);

        String entry = "native/" + ChildJvm.prop("hrts.test.platform") + "/libhrts_jni.so";
        assertEquals(entry, NativeLoader.resourcePath());
        try (ZipFile zip = new ZipFile(ChildJvm.prop("hrts.test.jar"))) {
            ZipEntry e = zip.getEntry(entry);
            assertTrue("jar has " + entry, e != null);
            byte[] packed;
            try (InputStream in = zip.getInputStream(e)) {
                packed = in.readAllBytes();
            }
            assertArrayEquals("extracted file equals the packed library", packed, Files.readAllBytes(loaded));
        }
        assertEquals(ChildJvm.prop("hrts.test.version"), NativeLoader.version());
    }

    @Test
    public void epochNanosecondsAreCloseToTheSystemClock() {
        long before = System.currentTimeMillis();
        long ns = HighResTimestamp.getEpochNanoseconds();
        long after = System.currentTimeMillis();
        long ms = ns / 1_000_000L;
        // Generous: the shared time base fixes its calendar offset once, at creation.
        assertTrue("stamp " + ns + " vs currentTimeMillis " + before + ".." + after,
                ms >= before - 5_000 && ms <= after + 5_000);
        long prev = HighResTimestamp.getEpochNanoseconds();
        for (int i = 0; i < 1000; i++) {
            long now = HighResTimestamp.getEpochNanoseconds();
            assertTrue(now > 0);
            prev = now;
        }
        assertTrue(prev > 0);
    }

    @Test
    public void processIdIsThisJvm() {
        assertEquals(ProcessHandle.current().pid(), HighResTimestamp.getOSProcessID());
    }

    @Test
    public void threadIdsDifferBetweenThreads() throws Exception {
        int mine = HighResTimestamp.getOSThreadID();
        assertEquals("stable within a thread", mine, HighResTimestamp.getOSThreadID());
        AtomicInteger other = new AtomicInteger();
        Thread t = new Thread(() -> other.set(HighResTimestamp.getOSThreadID()));
        t.start();
        t.join();
        assertTrue(mine > 0 && other.get() > 0);
        assertNotEquals(mine, other.get());
        assertTrue("tid " + mine + " is a task of this process",
                Files.isDirectory(Paths.get("/proc/self/task/" + mine)));
    }

    @Test
    public void selfTestMainRunsFromTheJar() throws Exception {
        Procs r = ChildJvm.runJar(java.util.Collections.emptyList());
        assertEquals(r.toString(), 0, r.exit);
        assertTrue(r.toString(), r.out.contains("self-test: OK"));
        assertTrue(r.toString(), r.out.matches("(?s).*stamp: +\\d{19} ns.*"));
    }

    @Test
    public void selfTestUsage() throws Exception {
        Procs help = ChildJvm.runJar(java.util.Collections.emptyList(), "--help");
        assertEquals(help.toString(), 0, help.exit);
        assertTrue(help.toString(), help.out.startsWith("usage: "));
        Procs bad = ChildJvm.runJar(java.util.Collections.emptyList(), "--bogus");
        assertEquals(bad.toString(), 2, bad.exit);
        assertTrue(bad.toString(), bad.err.contains("--bogus") && bad.err.contains("usage: "));
        assertEquals(bad.toString(), "", bad.out);
    }

    @Test
    public void libraryExportsExactlyTheNativesOfNative() throws Exception {
        // The library the JVM loaded (extracted from the jar), not the one in target/.
        String lib = NativeLoader.load();
        // nm comes with binutils, which the C compiler the build uses depends on.
        Procs nm = Procs.run("nm", "-D", "--defined-only", lib);
        assertEquals(nm.toString(), 0, nm.exit);
        Set<String> exported = new TreeSet<>();
        for (String line : nm.out.split("\n")) {
            String[] f = line.trim().split("\\s+");
            if (f.length == 3) {
                exported.add(f[2]);
            }
        }
        exported.remove("JNI_OnLoad");
        assertEquals("the 28 natives of io.hrts.Native", 28, nativesOf(Native.class).size());
        // Every class that declares natives, in the main package and its subpackages.
        Set<String> natives = new TreeSet<>();
        for (String cls : new String[] {"io.hrts.Native", "io.hrts.Wtmlib", "io.hrts.trace.TraceNative",
                "io.hrts.stats.StatsNative", "io.hrts.stats.JsonDumps"}) {
            natives.addAll(nativesOf(Class.forName(cls)));
        }
        // And the hot paths' plain C twins, for the JDK 22+ FFM downcalls.
        natives.addAll(Arrays.asList(Native.DOWNCALLS));
        assertEquals(lib + " exports", natives, exported);
    }

    /** The JNI symbols of a class's natives (their names need no escaping). */
    private static Set<String> nativesOf(Class<?> c) {
        String prefix = "Java_" + c.getName().replace('.', '_') + "_";
        return Arrays.stream(c.getDeclaredMethods())
                .filter(m -> Modifier.isNative(m.getModifiers()))
                .map(m -> prefix + m.getName())
                .collect(Collectors.toCollection(TreeSet::new));
    }

    @Test
    public void jarCarriesNoBenchmarkHooks() throws Exception {
        try (ZipFile zip = new ZipFile(ChildJvm.prop("hrts.test.jar"))) {
            java.util.List<String> names = zip.stream().map(ZipEntry::getName).collect(Collectors.toList());
            assertTrue(names.toString(), names.contains("io/hrts/Native.class"));
            for (String n : names) {
                assertTrue("jar entry " + n, !n.contains("BenchHooks") && !n.contains("bench_jni"));
            }
        }
    }
}
