package io.hrts;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/** Runs native helper processes (the hrts CLI, the C test program, child JVMs). */
final class Procs {
    final int exit;
    final String out;
    final String err;

    private Procs(int exit, String out, String err) {
        this.exit = exit;
        this.out = out;
        this.err = err;
    }

    static String cli() {
        return ChildJvm.prop("hrts.test.cli");
    }

    static String cTest() {
        return ChildJvm.prop("hrts.test.cTest");
    }

    private static String testingCli;

    /**
     * The hrts CLI with the {@code testing} feature ({@code hrts debug ...}), built once per test
     * JVM as tests/fuzz/run.sh builds it (target/debug/hrts): with the cargo stage's selection
     * ({@code --workspace --all-features}), whose build it reuses; another selection unifies
     * features differently and rebuilds the crates. Beside it in target/debug: the testing
     * builds of libhrts.so and libhrts_jni.so ({@code --lib}), for readers that must share the
     * daemon's test hooks.
     */
    static synchronized String testingCli() throws Exception {
        if (testingCli == null) {
            String root = ChildJvm.prop("hrts.test.repoRoot");
            ProcessBuilder pb = new ProcessBuilder("cargo", "build", "-q", "--workspace", "--all-features", "--lib", "--bin", "hrts")
                    .directory(new File(root)).redirectErrorStream(true);
            Process p = pb.start();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertTrue("cargo build of the testing CLI ended", p.waitFor(900, TimeUnit.SECONDS));
            assertEquals("cargo build --workspace --all-features --lib --bin hrts: " + out, 0, p.exitValue());
            String target = System.getenv().getOrDefault("CARGO_TARGET_DIR", root + "/target");
            testingCli = Paths.get(target, "debug", "hrts").toString();
        }
        return testingCli;
    }

    /** The command line of a child JVM running {@link TestMains} with the test classpath. */
    static List<String> javaMain(String... args) {
        List<String> cmd = new ArrayList<>();
        cmd.add(ChildJvm.prop("hrts.test.java"));
        // As a class-path user runs it: JDK 22+ warn on stderr without it (JDK 17 accepts it).
        cmd.add("--enable-native-access=ALL-UNNAMED");
        cmd.add("-cp");
        cmd.add(System.getProperty("java.class.path"));
        cmd.add(TestMains.class.getName());
        cmd.addAll(Arrays.asList(args));
        return cmd;
    }

    static Procs run(List<String> cmd) throws Exception {
        return run(cmd, java.util.Collections.emptyMap());
    }

    /**
     * Runs with these environment variables added to (or replacing) the inherited ones; a null
     * value removes the variable.
     */
    static Procs run(List<String> cmd, Map<String, String> env) throws Exception {
        ProcessBuilder pb = withEnv(new ProcessBuilder(cmd), env);
        Process p = pb.start();
        p.getOutputStream().close();
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        Thread to = pump(p.getInputStream(), out);
        Thread te = pump(p.getErrorStream(), err);
        if (!p.waitFor(180, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError("timed out: " + cmd);
        }
        to.join();
        te.join();
        return new Procs(p.exitValue(), out.toString(StandardCharsets.UTF_8.name()),
                err.toString(StandardCharsets.UTF_8.name()));
    }

    /** {@code pb} with these variables added, replaced, or (null values) removed. */
    static ProcessBuilder withEnv(ProcessBuilder pb, Map<String, String> env) {
        env.forEach((k, v) -> {
            if (v == null) {
                pb.environment().remove(k);
            } else {
                pb.environment().put(k, v);
            }
        });
        return pb;
    }

    /** Starts {@code cmd} with these variables (as {@link #withEnv}), its output and errors to {@code out}. */
    static Process startTo(List<String> cmd, Map<String, String> env, File out) throws Exception {
        return withEnv(new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(out), env).start();
    }

    /**
     * The end of a test that ran a daemon in {@code dir}: its readers killed, the daemon stopped
     * (SIGTERM, then SIGKILL after 10 s), and the directory removed.
     */
    static void stopAll(List<Process> readers, Process daemon, java.nio.file.Path dir) throws Exception {
        for (Process p : readers) {
            p.destroyForcibly();
        }
        daemon.destroy();
        daemon.waitFor(10, TimeUnit.SECONDS);
        daemon.destroyForcibly();
        try (var files = java.nio.file.Files.walk(dir)) {
            files.sorted(java.util.Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
        }
    }

    static Procs run(String... cmd) throws Exception {
        return run(Arrays.asList(cmd));
    }

    /** Runs and requires exit 0. */
    static String ok(String... cmd) throws Exception {
        Procs r = run(cmd);
        if (r.exit != 0) {
            throw new AssertionError(Arrays.toString(cmd) + " failed: " + r);
        }
        return r.out;
    }

    /** `key: value` lines (hrts info, hrts reset) to a map. */
    static Map<String, String> keyValues(String text) {
        Map<String, String> m = new LinkedHashMap<>();
        for (String line : text.split("\n")) {
            int c = line.indexOf(": ");
            if (c > 0) {
                m.put(line.substring(0, c), line.substring(c + 2).trim());
            }
        }
        return m;
    }

    private static Thread pump(InputStream in, ByteArrayOutputStream sink) {
        Thread t = new Thread(() -> {
            byte[] buf = new byte[8192];
            try {
                for (int n; (n = in.read(buf)) > 0; ) {
                    synchronized (sink) {
                        sink.write(buf, 0, n);
                    }
                }
            } catch (IOException e) {
                // process gone
            }
        });
        t.setDaemon(true);
        t.start();
        return t;
    }

    @Override
    public String toString() {
        return "exit=" + exit + "\n--- stdout ---\n" + out + "--- stderr ---\n" + err;
    }
}
