package io.hrts.adapters;

import io.hrts.opentelemetry.HrtsOtelClock;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.context.Context;
import io.opentelemetry.sdk.common.Clock;
import io.opentelemetry.sdk.trace.ReadWriteSpan;
import io.opentelemetry.sdk.trace.ReadableSpan;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.SpanProcessor;
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
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * An OpenTelemetry root span started and ended (recorded and sampled; a span processor reads
 * each ended span's duration, where an exporter would take it) by an SDK tracer on {@code
 * Clock.getDefault()} and on {@link HrtsOtelClock}. Without a span processor the SDK would not
 * record spans at all, nor read its clock.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@State(Scope.Thread)
@Fork(1)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
public class OtelClockBenchmark {
    private SdkTracerProvider defaultProvider;
    private SdkTracerProvider hrtsProvider;
    private Tracer defaultClockTracer;
    private Tracer hrtsClockTracer;

    /** Reads each ended span's duration; allocates nothing. */
    static final class DurationReader implements SpanProcessor {
        long sink;

        @Override
        public void onStart(Context parent, ReadWriteSpan span) {}

        @Override
        public boolean isStartRequired() {
            return false;
        }

        @Override
        public void onEnd(ReadableSpan span) {
            sink += span.getLatencyNanos();
        }

        @Override
        public boolean isEndRequired() {
            return true;
        }
    }

    private static SdkTracerProvider provider(Clock clock) {
        return SdkTracerProvider.builder().setClock(clock).addSpanProcessor(new DurationReader()).build();
    }

    @Setup
    public void setUp() {
        defaultProvider = provider(Clock.getDefault());
        hrtsProvider = provider(HrtsOtelClock.instance());
        defaultClockTracer = defaultProvider.get("bench");
        hrtsClockTracer = hrtsProvider.get("bench");
    }

    @TearDown
    public void tearDown() {
        defaultProvider.close();
        hrtsProvider.close();
    }

    @Benchmark
    public void otelSpanStartEndDefaultClock() {
        defaultClockTracer.spanBuilder("op").startSpan().end();
    }

    @Benchmark
    public void otelSpanStartEndHrtsClock() {
        hrtsClockTracer.spanBuilder("op").startSpan().end();
    }
}
