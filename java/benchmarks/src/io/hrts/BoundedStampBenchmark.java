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
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The bounded stamp (TrueTime's {@code now()}) beside the stamps it widens and the JDK's calendar
 * clock, in one run. It needs a timeline with a synchronized bound, which a machine whose clock
 * no time service keeps has not: run it against a host page, e.g. a test build's daemon with a
 * fixed bound (see native/core/benches/README.md, "The bounded stamp from Java"). Not part of the
 * default {@code ./gradlew jmh} report.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@State(Scope.Thread)
@Fork(1)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
public class BoundedStampBenchmark {
    private final long[] interval = new long[2];

    @Setup
    public void open() {
        try {
            HighResTimestamp.getBoundedEpochNanoseconds(interval);
        } catch (HrtsException e) {
            throw new IllegalStateException("BoundedStampBenchmark needs a timeline with a synchronized "
                    + "error bound (a host page whose daemon reads chronyd, or a test build's daemon with "
                    + "HRTS_TEST_BOUND): " + e.getMessage(), e);
        }
    }

    /** Earliest and latest into a reused array; the status is returned. */
    @Benchmark
    public BoundStatus hrtsGetBoundedEpochNanoseconds() {
        return HighResTimestamp.getBoundedEpochNanoseconds(interval);
    }

    @Benchmark
    public long hrtsGetEpochNanoseconds() {
        return HighResTimestamp.getEpochNanoseconds();
    }

    @Benchmark
    public long hrtsGetEpochNanosecondsOrdered() {
        return HighResTimestamp.getEpochNanosecondsOrdered();
    }

    /** The calendar clock a Java program reads without hrts (no bound either). */
    @Benchmark
    public Instant jdkInstantNow() {
        return Instant.now();
    }
}
