package io.hrts;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;

/**
 * The floor a JNI stamp is measured against: an empty static native from {@code
 * libhrts_bench_jni.so} (native/bench-jni), which only the JMH task builds. Neither the jar nor
 * {@code libhrts_jni.so} carries it.
 */
final class BenchHooks {
    /** System property naming the library file; the {@code jmh} Gradle task sets it. */
    static final String LIBRARY_PROPERTY = "hrts.bench.library";

    private BenchHooks() {}

    /** Loads {@code libhrts_bench_jni.so} from {@value #LIBRARY_PROPERTY}. */
    static synchronized void load() {
        String file = System.getProperty(LIBRARY_PROPERTY);
        if (file == null || file.isEmpty()) {
            throw new IllegalStateException("-D" + LIBRARY_PROPERTY + " is not set: run the benchmarks with "
                    + "scripts/jmh.sh (./gradlew jmh), which builds native/bench-jni and sets it");
        }
        Path path = Paths.get(file).toAbsolutePath();
        if (!Files.isRegularFile(path)) {
            throw new IllegalStateException(path + " does not exist: build it with "
                    + "`cargo build --release -p hrts-bench-jni` (./gradlew jmh does)");
        }
        System.load(path.toString());
    }

    /** An empty static native returning a constant long: the cost of the JNI transition. */
    static native long emptyNative();
}
