package io.hrts;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/** Runs a child JVM on the packaged hrts jar, as a user would; test properties. */
final class ChildJvm {
    private ChildJvm() {}

    static String prop(String name) {
        String v = System.getProperty(name);
        if (v == null) {
            throw new IllegalStateException("system property " + name + " not set (run the tests with ./gradlew test)");
        }
        return v;
    }

    /** java -Xcheck:jni [jvmArgs] -jar hrts.jar [args]. */
    static Procs runJar(List<String> jvmArgs, String... args) throws Exception {
        List<String> cmd = new ArrayList<>();
        cmd.add(prop("hrts.test.java"));
        cmd.add("-Xcheck:jni");
        cmd.addAll(jvmArgs);
        cmd.add("-jar");
        cmd.add(prop("hrts.test.jar"));
        cmd.addAll(Arrays.asList(args));
        return Procs.run(cmd);
    }
}
