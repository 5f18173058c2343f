package io.hrts.opentelemetry;

import io.hrts.HighResTimestamp;
import io.hrts.testing.ShiftedDrive;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.context.Context;
import io.opentelemetry.sdk.common.Clock;
import io.opentelemetry.sdk.trace.ReadableSpan;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import java.io.BufferedReader;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * The JVM side of {@code hrts_test drive}: for each line on stdin it starts a span (even lines) and
 * prints its start time, or ends that span (odd lines) and prints the end time the SDK exported.
 * At the end it prints {@code spans: N started and ended} on stderr. Its tracer's clock is
 * {@link HrtsOtelClock}, or the SDK's default with {@code -Dhrts.test.otelClock=default} (the
 * control: run with a shifted system clock by {@link ShiftedDrive}, its spans are off).
 *
 * <p>The SDK anchors each trace with one {@code now()} and one {@code nanoTime()} read and times
 * everything in it from there, so its times are hrts readings less the time between those two
 * reads. That is a few ns once the code is compiled, but microseconds while it is interpreted or
 * if the thread is preempted between them, more than a round trip to the C driver takes. So the
 * spans of the rounds are children of one parent span whose anchor is known to be tight: it was
 * started, after a warm-up, within {@value #MAX_ANCHOR_NS} ns (hrts stamps taken around it).
 */
public final class SpanDriveChild {
    static final long MAX_ANCHOR_NS = 1_000;

    private SpanDriveChild() {}

    /** The tracer provider of these tests: hrts clock, spans exported as they end. */
    static SdkTracerProvider provider(CollectingExporter exporter) {
        return provider(exporter, HrtsOtelClock.instance());
    }

    static SdkTracerProvider provider(CollectingExporter exporter, Clock clock) {
        return SdkTracerProvider.builder()
                .setClock(clock)
                .addSpanProcessor(SimpleSpanProcessor.create(exporter))
                .build();
    }

    /** A parent span whose anchor reads lie within {@link #MAX_ANCHOR_NS} of each other. */
    static Span tightlyAnchoredParent(Tracer tracer) {
        for (int attempt = 0; attempt < 100_000; attempt++) {
            long before = HighResTimestamp.getEpochNanoseconds();
            Span parent = tracer.spanBuilder("drive").startSpan();
            long after = HighResTimestamp.getEpochNanoseconds();
            if (after - before <= MAX_ANCHOR_NS) {
                return parent;
            }
            parent.end();
        }
        throw new IllegalStateException("no span started within " + MAX_ANCHOR_NS + " ns in 100000 attempts");
    }

    public static void main(String[] args) throws Exception {
        ShiftedDrive.reportShiftedSystemClock();
        Clock clock = "default".equals(System.getProperty("hrts.test.otelClock"))
                ? Clock.getDefault() : HrtsOtelClock.instance();
        // Compile the span code first (its spans go nowhere).
        try (SdkTracerProvider warmUp = provider(new CollectingExporter(), clock)) {
            Tracer t = warmUp.get("warm-up");
            for (int i = 0; i < 20_000; i++) {
                t.spanBuilder("warm-up").startSpan().end();
            }
        }
        CollectingExporter exported = new CollectingExporter();
        int ended = 0;
        try (SdkTracerProvider provider = provider(exported, clock)) {
            Tracer tracer = provider.get("hrts-drive");
            Context parent = Context.root().with(tightlyAnchoredParent(tracer));
            BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
            PrintStream out = new PrintStream(new FileOutputStream(FileDescriptor.out), false, "UTF-8");
            Span open = null;
            for (String line; (line = in.readLine()) != null; ) {
                if (open == null) {
                    open = tracer.spanBuilder("round-" + line.trim()).setParent(parent).startSpan();
                    out.println(((ReadableSpan) open).toSpanData().getStartEpochNanos());
                } else {
                    open.end();
                    open = null;
                    List<SpanData> spans = exported.spans();
                    SpanData last = spans.get(spans.size() - 1);
                    out.println(last.getEndEpochNanos());
                    ended += last.getName().startsWith("round-") ? 1 : 0;
                }
                out.flush();
            }
        }
        System.err.println("spans: " + ended + " started and ended");
    }
}
