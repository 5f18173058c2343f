package io.hrts;

import java.time.Instant;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * hrts stamps side by side with the JDK's clocks and an empty static native, in one run.
 * Run with {@code scripts/jmh.sh} (or {@code ./gradlew jmh}); the report goes to
 * java/benchmarks/RESULTS.md.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@State(Scope.Thread)
@Fork(1)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
public class StampBenchmark {
    @Setup(Level.Trial)
    public void open() {
        HighResTimestamp.open();
        BenchHooks.load();
    }

    @Benchmark
    public long hrtsGetEpochNanoseconds() {
        return HighResTimestamp.getEpochNanoseconds();
    }

    @Benchmark
    public long hrtsGetEpochNanosecondsOrdered() {
        return HighResTimestamp.getEpochNanosecondsOrdered();
    }

    @Benchmark
    public long hrtsGetEpochMicroseconds() {
        return HighResTimestamp.getEpochMicroseconds();
    }

    @Benchmark
    public long hrtsTicks() {
        return HighResTimestamp.ticks();
    }

    @Benchmark
    public long hrtsGetUniqueNanoseconds() {
        return HighResTimestamp.getUniqueNanoseconds();
    }

    @Benchmark
    public Instant hrtsNow() {
        return HighResTimestamp.now();
    }

    @Benchmark
    public long jdkSystemNanoTime() {
        return System.nanoTime();
    }

    @Benchmark
    public long jdkSystemCurrentTimeMillis() {
        return System.currentTimeMillis();
    }

    @Benchmark
    public Instant jdkInstantNow() {
        return Instant.now();
    }

    @Benchmark
    public long jniEmptyStaticNative() {
        return BenchHooks.emptyNative();
    }
}
