package io.hrts.opentelemetry;

import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.Tracer;
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
 * At the end it prints {@code spans: N started and ended on the hrts timeline} on stderr.
 */
public final class SpanDriveChild {
    private SpanDriveChild() {}

    /** The tracer provider of these tests: hrts clock, spans exported as they end. */
    static SdkTracerProvider provider(CollectingExporter exporter) {
        return SdkTracerProvider.builder()
                .setClock(HrtsOtelClock.instance())
                .addSpanProcessor(SimpleSpanProcessor.create(exporter))
                .build();
    }

    public static void main(String[] args) throws Exception {
        CollectingExporter exported = new CollectingExporter();
        int ended = 0;
        try (SdkTracerProvider provider = provider(exported)) {
            Tracer tracer = provider.get("hrts-drive");
            BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
            PrintStream out = new PrintStream(new FileOutputStream(FileDescriptor.out), false, "UTF-8");
            Span open = null;
            for (String line; (line = in.readLine()) != null; ) {
                if (open == null) {
                    open = tracer.spanBuilder("round-" + line.trim()).startSpan();
                    out.println(((ReadableSpan) open).toSpanData().getStartEpochNanos());
                } else {
                    open.end();
                    open = null;
                    List<SpanData> spans = exported.spans();
                    out.println(spans.get(spans.size() - 1).getEndEpochNanos());
                    ended = spans.size();
                }
                out.flush();
            }
        }
        System.err.println("spans: " + ended + " started and ended on the hrts timeline");
    }
}
