package io.hrts;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** Runs a child JVM on the packaged hrts jar, as a user would. */
final class ChildJvm {
    final int exit;
    final String out;
    final String err;

    private ChildJvm(int exit, String out, String err) {
        this.exit = exit;
        this.out = out;
        this.err = err;
    }

    static String prop(String name) {
        String v = System.getProperty(name);
        if (v == null) {
            throw new IllegalStateException("system property " + name + " not set (run the tests with ./gradlew test)");
        }
        return v;
    }

    /** java [jvmArgs] -jar hrts.jar [args]. */
    static ChildJvm runJar(List<String> jvmArgs, String... args) throws Exception {
        List<String> cmd = new ArrayList<>();
        cmd.add(prop("hrts.test.java"));
        cmd.add("-Xcheck:jni");
        cmd.addAll(jvmArgs);
        cmd.add("-jar");
        cmd.add(prop("hrts.test.jar"));
        cmd.addAll(Arrays.asList(args));
        ProcessBuilder pb = new ProcessBuilder(cmd);
        Process p = pb.start();
        p.getOutputStream().close();
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        Thread to = pump(p.getInputStream(), out);
        Thread te = pump(p.getErrorStream(), err);
        if (!p.waitFor(120, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError("child JVM timed out: " + cmd);
        }
        to.join();
        te.join();
        return new ChildJvm(p.exitValue(), out.toString(StandardCharsets.UTF_8.name()),
                err.toString(StandardCharsets.UTF_8.name()));
    }

    private static Thread pump(InputStream in, ByteArrayOutputStream sink) {
        Thread t = new Thread(() -> {
            byte[] buf = new byte[8192];
            try {
                for (int n; (n = in.read(buf)) > 0; ) {
                    sink.write(buf, 0, n);
                }
            } catch (IOException e) {
                // child gone
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
