package io.hrts.stats;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import org.HdrHistogram.Histogram;
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
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.annotations.Warmup;

/**
 * io.hrts.stats measuring points side by side with LongAdder.increment (the floor), HdrHistogram's
 * recordValue and Micrometer's Counter.increment / Timer.record on a SimpleMeterRegistry, in one
 * run: {@code ./gradlew jmh -PjmhArgs="io.hrts.stats"} (with -prof gc, so B/op is reported).
 * The {@code twoThreads} benchmarks run the counters and the hrts gauge on 2 threads at once.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Fork(1)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
public class StatsBenchmark {
    @State(Scope.Benchmark)
    public static class Meters {
        Counter counter;
        Gauge gauge;
        Timer timer;
        final LongAdder adder = new LongAdder();
        final SimpleMeterRegistry registry = new SimpleMeterRegistry();
        io.micrometer.core.instrument.Counter mCounter;
        io.micrometer.core.instrument.Timer mTimer;
        final Runnable empty = () -> {};

        @Setup(Level.Trial)
        public void start() {
            Stats.stop();
            Stats.configureJson("{\"json-dump\": {\"interval\": 0}, \"metrics-dump\": {\"interval\": 0}}");
            Stats.start();
            counter = Stats.counter("bench.counter");
            gauge = Stats.gauge("bench.gauge");
            timer = Stats.timer("bench.timer");
            mCounter = registry.counter("bench.counter");
            mTimer = registry.timer("bench.timer");
        }

        @TearDown(Level.Trial)
        public void stop() {
            Stats.stop();
        }
    }

    @State(Scope.Thread)
    public static class PerThread {
        final Histogram histogram = new Histogram(3_600_000_000_000L, 2);
        long value;
        double x = 1.5;
    }

    @Benchmark
    public void floorLongAdderIncrement(Meters m) {
        m.adder.increment();
    }

    @Benchmark
    public void hrtsCounterIncrement(Meters m) {
        m.counter.increment();
    }

    /** What the gauge benchmarks spend making their values: the gauge's floor. */
    @Benchmark
    public double floorGaugeValue(PerThread t) {
        return t.x += 1.0;
    }

    /** A set of a value the caller has (a field: JMH cannot fold it away), like the counters. */
    @Benchmark
    public void hrtsGaugeSet(Meters m, PerThread t) {
        m.gauge.set(t.x);
    }

    /** A rising gauge: every set a new maximum; its value's add is {@link #floorGaugeValue}. */
    @Benchmark
    public void hrtsGaugeSetRising(Meters m, PerThread t) {
        m.gauge.set(t.x += 1.0);
    }

    @Benchmark
    public void hrtsTimerRecord(Meters m, PerThread t) {
        m.timer.record(t.value = (t.value + 7919) % 1_000_000);
    }

    /** A span: two precise stamps and one queued duration. */
    @Benchmark
    @SuppressWarnings("try")
    public void hrtsTimerScope(Meters m) {
        try (Timer.Scope s = m.timer.scope()) {
            // an empty span
        }
    }

    /** The default instance started and stopped: two native calls. */
    @Benchmark
    public void hrtsTimerStartStop(Meters m) {
        m.timer.start();
        m.timer.stop();
    }

    /** What a span costs in stamps alone: the scope's floor. */
    @Benchmark
    public long hrtsTwoStamps() {
        return io.hrts.HighResTimestamp.getEpochNanoseconds() + io.hrts.HighResTimestamp.getEpochNanoseconds();
    }

    /** Micrometer's span stamps alone (monotonic, not on a shared timeline). */
    @Benchmark
    public long jdkTwoNanoTimes() {
        return System.nanoTime() + System.nanoTime();
    }

    @Benchmark
    public void hdrHistogramRecordValue(PerThread t) {
        t.histogram.recordValue(t.value = (t.value + 7919) % 1_000_000 + 1);
    }

    @Benchmark
    public void micrometerCounterIncrement(Meters m) {
        m.mCounter.increment();
    }

    @Benchmark
    public void micrometerTimerRecordNanos(Meters m, PerThread t) {
        m.mTimer.record(t.value = (t.value + 7919) % 1_000_000, TimeUnit.NANOSECONDS);
    }

    /** A span: Micrometer's own two clock reads around the runnable, and the record. */
    @Benchmark
    public void micrometerTimerRecordRunnable(Meters m) {
        m.mTimer.record(m.empty);
    }

    @Benchmark
    @Threads(2)
    public void twoThreadsFloorLongAdderIncrement(Meters m) {
        m.adder.increment();
    }

    @Benchmark
    @Threads(2)
    public void twoThreadsHrtsCounterIncrement(Meters m) {
        m.counter.increment();
    }

    @Benchmark
    @Threads(2)
    public void twoThreadsMicrometerCounterIncrement(Meters m) {
        m.mCounter.increment();
    }

    @Benchmark
    @Threads(2)
    public void twoThreadsHrtsGaugeSet(Meters m, PerThread t) {
        m.gauge.set(t.x);
    }
}
