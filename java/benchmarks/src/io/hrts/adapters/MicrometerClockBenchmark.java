package io.hrts.adapters;

import io.hrts.micrometer.HrtsMicrometerClock;
import io.micrometer.core.instrument.Clock;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleConfig;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
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
 * Micrometer's {@code Timer.record(Runnable)} of an empty task (two monotonic readings, and a wall
 * reading for the timer's max) on {@code Clock.SYSTEM} and on {@link HrtsMicrometerClock}.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@State(Scope.Thread)
@Fork(1)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
public class MicrometerClockBenchmark {
    private static final Runnable TASK = () -> { };
    private Timer systemClockTimer;
    private Timer hrtsClockTimer;

    @Setup
    public void setUp() {
        systemClockTimer = new SimpleMeterRegistry(SimpleConfig.DEFAULT, Clock.SYSTEM).timer("bench");
        hrtsClockTimer = new SimpleMeterRegistry(SimpleConfig.DEFAULT, HrtsMicrometerClock.instance()).timer("bench");
    }

    @Benchmark
    public void micrometerTimerRecordDefaultClock() {
        systemClockTimer.record(TASK);
    }

    @Benchmark
    public void micrometerTimerRecordHrtsClock() {
        hrtsClockTimer.record(TASK);
    }
}
