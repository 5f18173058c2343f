package io.hrts;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.runner.JUnitCore;
import org.junit.runner.Result;
import org.junit.runner.notification.Failure;

/**
 * Runs every JUnit test class under a class directory in this JVM and ends with the test
 * command's line {@code LABEL: N passed, N failed}. For JDKs that the build's Gradle cannot
 * run tests on (Gradle 4.4's test worker sets a security manager, which JDK 24+ refuse):
 * {@code ./gradlew junitOnJdk -Phrts.testJava=/path/to/bin/java}.
 */
public final class JUnitRun {
    private JUnitRun() {}

    /** @param args LABEL CLASS_DIR */
    public static void main(String[] args) throws Exception {
        if (args.length != 2) {
            System.err.println("usage: JUnitRun LABEL CLASS_DIR");
            System.exit(2);
        }
        List<Class<?>> classes = testClasses(Paths.get(args[1]));
        System.out.println(args[0] + ": " + classes.size() + " test classes on Java "
                + System.getProperty("java.version") + " (" + System.getProperty("java.home") + ")");
        Result r = new JUnitCore().run(classes.toArray(new Class<?>[0]));
        for (Failure f : r.getFailures()) {
            System.out.println("FAILED " + f.getTestHeader());
            System.out.println(f.getTrace());
        }
        int failed = r.getFailureCount();
        int passed = r.getRunCount() - failed;
        System.out.println(args[0] + ": " + passed + " passed, " + failed + " failed");
        System.exit(failed == 0 && passed > 0 ? 0 : 1);
    }

    private static List<Class<?>> testClasses(Path dir) throws IOException, ClassNotFoundException {
        List<String> names;
        try (Stream<Path> files = Files.walk(dir)) {
            names = files.map(p -> dir.relativize(p).toString())
                    .filter(n -> n.endsWith("Test.class") && !n.contains("$"))
                    .map(n -> n.substring(0, n.length() - ".class".length()).replace('/', '.'))
                    .sorted()
                    .collect(Collectors.toList());
        }
        List<Class<?>> classes = new ArrayList<>();
        for (String n : names) {
            classes.add(Class.forName(n));
        }
        return classes;
    }
}
