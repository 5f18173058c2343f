package io.hrts;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;

import java.io.InputStream;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Enumeration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.zip.ZipEntry;
import java.util.zip.ZipFile;
import org.junit.BeforeClass;
import org.junit.ClassRule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;

/**
 * Every JNI library the jar carries (one per platform the build packed): built for its machine,
 * stripped, exporting exactly the JNI functions of the jar's native methods, and loadable on its
 * platform (the host's by this JVM elsewhere; each here by {@code dlopen_check}, run under
 * qemu-user for a foreign platform). And the jar stays small.
 */
public class PackedLibrariesTest {
    /**
     * The jar with every platform's library: 1.53 MB once WTMLIB's operations, the periodic
     * JSON dump, the rate statistic and damage reports reached Java, 1.60 MB once the bounded
     * stamp (with its chronyd client), the host page, the measured ordered read and the
     * measuring points' flags did (2026-11-25); the bound catches the next unexplained growth.
     * Now that the number of libraries varies (linux-musl-x86_64 made it four, issue 37: 2.18 MB;
     * the musl library, with Rust's unwinder linked in, adds 0.54 MB): the classes' share and
     * each library's.
     */
    private static final long MAX_JAR_BYTES_CLASSES = 100_000;
    private static final long MAX_JAR_BYTES_PER_LIBRARY = 550_000;
    private static final int ET_DYN = 3;

    @ClassRule
    public static final TemporaryFolder TMP = new TemporaryFolder();

    private static List<String> platforms;
    private static Path extracted;

    @BeforeClass
    public static void extractEveryPlatform() throws Exception {
        platforms = Arrays.asList(ChildJvm.prop("hrts.test.platforms").split(","));
        extracted = TMP.newFolder("packed").toPath();
        try (ZipFile zip = new ZipFile(ChildJvm.prop("hrts.test.jar"))) {
            for (String p : platforms) {
                String name = NativeLoader.libraryFile(p);
                ZipEntry e = zip.getEntry("native/" + p + "/" + name);
                assertTrue("jar has native/" + p + "/" + name, e != null);
                Path dir = Files.createDirectories(extracted.resolve(p));
                try (InputStream in = zip.getInputStream(e)) {
                    Files.copy(in, dir.resolve(name));
                }
            }
        }
    }

    private static Path lib(String platform) {
        return extracted.resolve(platform).resolve(NativeLoader.libraryFile(platform));
    }

    private static boolean windows(String platform) {
        return platform.startsWith("windows-");
    }

    @Test
    public void jarCarriesThePackedPlatformsAndNoOthers() throws Exception {
        assertEquals(platforms, NativeLoader.packagedPlatforms());
        assertTrue(platforms.toString(), platforms.contains(ChildJvm.prop("hrts.test.platform")));
        Set<String> inJar = new TreeSet<>();
        try (ZipFile zip = new ZipFile(ChildJvm.prop("hrts.test.jar"))) {
            for (Enumeration<? extends ZipEntry> en = zip.entries(); en.hasMoreElements(); ) {
                String n = en.nextElement().getName();
                if (n.startsWith("native/") && (n.endsWith(".so") || n.endsWith(".dll"))) {
                    inJar.add(n);
                }
            }
        }
        Set<String> expected = new TreeSet<>();
        for (String p : platforms) {
            expected.add("native/" + p + "/" + NativeLoader.libraryFile(p));
        }
        assertEquals(expected, inJar);
    }

    @Test
    public void jarIsSmall() throws Exception {
        long size = Files.size(Paths.get(ChildJvm.prop("hrts.test.jar")));
        long max = MAX_JAR_BYTES_CLASSES + MAX_JAR_BYTES_PER_LIBRARY * platforms.size();
        assertTrue("jar is " + size + " bytes with " + platforms.size() + " libraries, at most " + max, size <= max);
    }

    @Test
    public void eachLibraryIsBuiltForItsMachine() throws Exception {
        for (String p : platforms) {
            if (windows(p)) {
                assertPeDll(p);
                continue;
            }
            ByteBuffer h = ByteBuffer.wrap(Arrays.copyOf(Files.readAllBytes(lib(p)), 64))
                    .order(ByteOrder.LITTLE_ENDIAN);
            byte[] magic = new byte[4];
            h.get(magic);
            assertArrayEquals(p, new byte[] {0x7f, 'E', 'L', 'F'}, magic);
            assertEquals(p + ": 64-bit", 2, h.get(4));
            assertEquals(p + ": little-endian", 1, h.get(5));
            assertEquals(p + ": shared object", ET_DYN, h.getShort(16));
            assertEquals(p + ": e_machine", Integer.parseInt(ChildJvm.prop("hrts.test.machine." + p)),
                    h.getShort(18) & 0xffff);
            if (p.endsWith("ppc64le")) {
                assertEquals(p + ": ELFv2 ABI (e_flags)", 2, h.getInt(48) & 3);
            }
        }
    }

    /** A PE image (MZ stub, "PE" signature) for the COFF machine the build names, a DLL. */
    private static void assertPeDll(String p) throws Exception {
        ByteBuffer h = ByteBuffer.wrap(Files.readAllBytes(lib(p))).order(ByteOrder.LITTLE_ENDIAN);
        assertEquals(p + ": MZ", 0x5a4d, h.getShort(0) & 0xffff);
        int pe = h.getInt(0x3c);
        assertEquals(p + ": PE signature", 0x00004550, h.getInt(pe));
        assertEquals(p + ": COFF machine", Integer.parseInt(ChildJvm.prop("hrts.test.machine." + p)),
                h.getShort(pe + 4) & 0xffff);
        int imageFileDll = 0x2000;
        assertTrue(p + ": a DLL (COFF characteristics)", (h.getShort(pe + 22) & imageFileDll) != 0);
        assertEquals(p + ": PE32+ (64-bit)", 0x20b, h.getShort(pe + 24) & 0xffff);
    }

    @Test
    public void eachLibraryIsStripped() throws Exception {
        for (String p : platforms) {
            List<String> sections = sections(p);
            assertTrue(p + ": " + sections, sections.contains(windows(p) ? ".edata" : ".dynsym"));
            assertTrue(p + ": debug info kept aside, linked by .gnu_debuglink", sections.contains(".gnu_debuglink"));
            for (String s : sections) {
                assertFalse(p + " has " + s, s.startsWith(".debug") || s.equals(".symtab"));
            }
        }
    }

    @Test
    public void eachLibraryExportsExactlyTheJniFunctions() throws Exception {
        Set<String> expected = jniFunctionsOfTheJar();
        assertTrue(expected.toString(), expected.contains("Java_io_hrts_Native_epochNanos"));
        // And the hot paths' plain C twins, for the JDK 22+ FFM downcalls.
        expected.addAll(Arrays.asList(Native.DOWNCALLS));
        for (String p : platforms) {
            Set<String> exported = windows(p) ? peExports(lib(p)) : exportedSymbols(lib(p));
            exported.remove("JNI_OnLoad");
            exported.remove("JNI_OnUnload");
            assertEquals(p + " exports", expected, exported);
        }
    }

    @Test
    public void eachLibraryLoadsOnItsPlatform() throws Exception {
        Set<String> symbols = jniFunctionsOfTheJar();
        symbols.addAll(Arrays.asList(Native.DOWNCALLS));
        for (String p : platforms) {
            List<String> cmd = new ArrayList<>();
            String runner = ChildJvm.prop("hrts.test.runner." + p).trim();
            if (!runner.isEmpty()) {
                cmd.addAll(Arrays.asList(runner.split(" ")));
            }
            cmd.add(ChildJvm.prop("hrts.test.dlopenCheck." + p));
            cmd.add(lib(p).toString());
            cmd.addAll(symbols);
            Procs r = Procs.run(cmd);
            assertEquals(p + ": " + r, 0, r.exit);
            assertTrue(p + ": " + r, r.out.contains("dlopen: " + symbols.size() + " of " + symbols.size()
                    + " symbols found in " + lib(p)));
        }
    }

    /** The JNI short names of every native method of every class in the jar. */
    static Set<String> jniFunctionsOfTheJar() throws Exception {
        Set<String> names = new TreeSet<>();
        try (ZipFile zip = new ZipFile(ChildJvm.prop("hrts.test.jar"))) {
            for (Enumeration<? extends ZipEntry> en = zip.entries(); en.hasMoreElements(); ) {
                String n = en.nextElement().getName();
                // META-INF/versions/22: the JDK 22+ classes, which declare no natives.
                if (!n.endsWith(".class") || n.endsWith("module-info.class") || n.startsWith("META-INF/")) {
                    continue;
                }
                String className = n.substring(0, n.length() - ".class".length()).replace('/', '.');
                Class<?> c = Class.forName(className, false, PackedLibrariesTest.class.getClassLoader());
                Set<String> seen = new HashSet<>();
                for (Method m : c.getDeclaredMethods()) {
                    if (Modifier.isNative(m.getModifiers())) {
                        // Overloaded natives would need the long names; hrts has none.
                        assertTrue("overloaded native " + m, seen.add(m.getName()));
                        names.add("Java_" + mangle(c.getName()) + "_" + mangle(m.getName()));
                    }
                }
            }
        }
        return names;
    }

    /** JNI name mangling (JNI specification, "Resolving Native Method Names"). */
    static String mangle(String s) {
        StringBuilder b = new StringBuilder();
        for (char ch : s.toCharArray()) {
            if (ch == '.' || ch == '/') {
                b.append('_');
            } else if (ch == '_') {
                b.append("_1");
            } else if (ch == ';') {
                b.append("_2");
            } else if (ch == '[') {
                b.append("_3");
            } else if (ch < 128 && Character.isLetterOrDigit(ch)) {
                b.append(ch);
            } else {
                b.append(String.format("_0%04x", (int) ch));
            }
        }
        return b.toString();
    }

    /** mingw-w64's objdump, which reads PE images (Debian's binutils-mingw-w64-x86-64). */
    private static final String PE_OBJDUMP = "x86_64-w64-mingw32-objdump";

    /** Section names, by readelf (binutils reads every ELF machine), of a DLL by objdump. */
    private static List<String> sections(String platform) throws Exception {
        if (windows(platform)) {
            return peSections(lib(platform));
        }
        Path lib = lib(platform);
        Procs r = Procs.run("readelf", "-S", "-W", lib.toString());
        assertEquals(r.toString(), 0, r.exit);
        List<String> names = new ArrayList<>();
        for (String line : r.out.split("\n")) {
            // "  [12] .text   PROGBITS ..."
            int close = line.indexOf(']');
            if (line.trim().startsWith("[") && close > 0) {
                String[] f = line.substring(close + 1).trim().split("\\s+");
                if (f.length > 0 && !f[0].isEmpty()) {
                    names.add(f[0]);
                }
            }
        }
        return names;
    }

    /** "  0 .text   000b97c8  ...": index, name, size. */
    private static final Pattern PE_SECTION = Pattern.compile("^\\s*\\d+\\s+(\\S+)\\s+[0-9a-f]{8}\\s");

    private static List<String> peSections(Path lib) throws Exception {
        Procs r = Procs.run(PE_OBJDUMP, "-h", lib.toString());
        assertEquals(r.toString(), 0, r.exit);
        List<String> names = new ArrayList<>();
        for (String line : r.out.split("\n")) {
            Matcher m = PE_SECTION.matcher(line);
            if (m.find()) {
                names.add(m.group(1));
            }
        }
        return names;
    }

    /** The names in the DLL's export table, by objdump's "[Ordinal/Name Pointer] Table". */
    private static Set<String> peExports(Path lib) throws Exception {
        Procs r = Procs.run(PE_OBJDUMP, "-p", lib.toString());
        assertEquals(r.toString(), 0, r.exit);
        Set<String> names = new TreeSet<>();
        boolean inTable = false;
        for (String line : r.out.split("\n")) {
            if (line.startsWith("[Ordinal/Name Pointer] Table")) {
                inTable = true;
            } else if (inTable && line.trim().isEmpty()) {
                break;
            } else if (inTable) {
                // "\t[   0] Java_io_hrts_Native_basePointer"
                names.add(line.substring(line.indexOf(']') + 1).trim());
            }
        }
        return names;
    }

    /** num: value size type BIND visibility [ppc64 flags] NDX NAME */
    private static final Pattern DYNSYM = Pattern.compile(
            "^\\s*\\d+:\\s+\\S+\\s+\\S+\\s+\\S+\\s+(\\S+)\\s+\\S+\\s+(?:\\[[^\\]]*\\]\\s+)?(\\S+)\\s+(\\S+)");

    /** Defined global and weak dynamic symbols, by readelf. */
    private static Set<String> exportedSymbols(Path lib) throws Exception {
        Procs r = Procs.run("readelf", "--dyn-syms", "-W", lib.toString());
        assertEquals(r.toString(), 0, r.exit);
        Set<String> names = new TreeSet<>();
        for (String line : r.out.split("\n")) {
            // "   91: 000000000002ea1c  1392 FUNC    GLOBAL DEFAULT   11 Java_io_hrts_Native_x"; on
            // ppc64le "[<localentry>: 8]" may follow DEFAULT; undefined ones may end "(2)".
            Matcher m = DYNSYM.matcher(line);
            if (m.find() && (m.group(1).equals("GLOBAL") || m.group(1).equals("WEAK"))
                    && !m.group(2).equals("UND")) {
                names.add(m.group(3).replaceFirst("@.*", ""));
            }
        }
        return names;
    }
}
