package io.hrts;

import java.time.Instant;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The portable implementation's stamps (a JVM of its own, {@code -Dhrts.fallback=force}) beside
 * {@code Instant.now()} and {@code System.nanoTime()} in the same JVM: issue 37's target is a
 * {@code getEpochNanoseconds} no dearer than {@code Instant.now()}, allocating 0 B/op.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@State(Scope.Thread)
@Fork(value = 1, jvmArgsAppend = "-Dhrts.fallback=force")
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
public class PortableStampBenchmark {
    @Benchmark
    public long portableGetEpochNanoseconds() {
        return HighResTimestamp.getEpochNanoseconds();
    }

    @Benchmark
    public long portableGetUniqueNanoseconds() {
        return HighResTimestamp.getUniqueNanoseconds();
    }

    @Benchmark
    public Instant portableJdkInstantNow() {
        return Instant.now();
    }

    @Benchmark
    public long portableJdkSystemNanoTime() {
        return System.nanoTime();
    }
}
