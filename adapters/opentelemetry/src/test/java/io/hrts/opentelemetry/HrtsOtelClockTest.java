package io.hrts.opentelemetry;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertSame;
import static org.junit.Assert.assertTrue;

import io.hrts.HighResTimestamp;
import io.hrts.testing.ShiftedDrive;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.context.Scope;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.SpanData;
import java.util.List;
import org.junit.After;
import org.junit.Before;
import org.junit.Test;

/**
 * OpenTelemetry's SDK with {@link HrtsOtelClock}: span start and end times are hrts stamps, checked
 * against hrts stamps taken around them in this JVM and, across processes, by the C test program.
 */
public class HrtsOtelClockTest {
    private final CollectingExporter exported = new CollectingExporter();
    private SdkTracerProvider provider;
    private Tracer tracer;

    @Before
    public void setUp() {
        provider = SpanDriveChild.provider(exported);
        tracer = provider.get("hrts-test");
    }

    @After
    public void tearDown() {
        provider.close();
    }

    @Test
    public void instanceIsOneClockReadingHrts() {
        HrtsOtelClock clock = HrtsOtelClock.instance();
        assertSame(clock, HrtsOtelClock.instance());
        for (int i = 0; i < 1000; i++) {
            long before = HighResTimestamp.getEpochNanoseconds();
            long now = clock.now();
            long coarse = clock.now(false);
            long nano = clock.nanoTime();
            long after = HighResTimestamp.getEpochNanoseconds();
            assertTrue(before + " <= " + now + " <= " + coarse + " <= " + nano + " <= " + after,
                    before <= now && now <= coarse && coarse <= nano && nano <= after);
        }
    }

    @Test
    public void spanStartAndEndAreHrtsStamps() {
        int n = 500;
        long[][] around = new long[n][4];
        for (int i = 0; i < n; i++) {
            around[i][0] = HighResTimestamp.getEpochNanoseconds();
            Span span = tracer.spanBuilder("span-" + i).startSpan();
            around[i][1] = HighResTimestamp.getEpochNanoseconds();
            around[i][2] = HighResTimestamp.getEpochNanoseconds();
            span.end();
            around[i][3] = HighResTimestamp.getEpochNanoseconds();
        }
        List<SpanData> spans = exported.spans();
        assertEquals(n, spans.size());
        for (int i = 0; i < n; i++) {
            SpanData s = spans.get(i);
            assertEquals("span-" + i, s.getName());
            long[] a = around[i];
            long start = s.getStartEpochNanos();
            long end = s.getEndEpochNanos();
            // The SDK anchors a trace with one now() and then one nanoTime() read and times the
            // rest from that nanoTime(), so the end is an hrts reading less the few ns between
            // the two anchor reads, but the duration (end - start) is an exact difference of
            // two hrts readings: one inside each bracket.
            assertTrue("start " + a[0] + " <= " + start + " <= " + a[1], a[0] <= start && start <= a[1]);
            assertTrue("end " + end + " <= " + a[3], end <= a[3]);
            assertTrue("duration " + (end - start) + " within [" + (a[2] - a[1]) + ", " + (a[3] - a[0]) + "]",
                    a[2] - a[1] <= end - start && end - start <= a[3] - a[0]);
        }
    }

    @Test
    public void childSpansAreTimedOnTheSameTimeline() {
        long before = HighResTimestamp.getEpochNanoseconds();
        Span parent = tracer.spanBuilder("parent").startSpan();
        try (Scope ignored = parent.makeCurrent()) {
            tracer.spanBuilder("child").startSpan().end();
        } finally {
            parent.end();
        }
        long after = HighResTimestamp.getEpochNanoseconds();
        List<SpanData> spans = exported.spans();
        assertEquals(2, spans.size());
        SpanData child = spans.get(0);
        SpanData par = spans.get(1);
        assertEquals("child", child.getName());
        assertEquals(par.getSpanId(), child.getParentSpanId());
        assertTrue(spans.toString(), before <= par.getStartEpochNanos()
                && par.getStartEpochNanos() <= child.getStartEpochNanos()
                && child.getStartEpochNanos() <= child.getEndEpochNanos()
                && child.getEndEpochNanos() <= par.getEndEpochNanos()
                && par.getEndEpochNanos() <= after);
    }

    @Test
    public void spansAgreeWithStampsOfACProcess() throws Exception {
        // The C test program stamps, sends a line to a child JVM (SpanDriveChild), reads back the
        // start (even rounds) or end (odd rounds) of the span the line made, stamps again, and
        // checks before <= span time <= after for every round. The child's system clock is an
        // hour ahead (ShiftedDrive): only hrts time stamps can agree.
        int rounds = 2000;
        ShiftedDrive.Result r = ShiftedDrive.run(rounds, SpanDriveChild.class);
        assertTrue(r.toString(), r.childClockShifted());
        assertTrue(r.toString(), r.allOrdered(rounds));
        assertTrue(r.toString(), r.output.contains("spans: " + rounds / 2 + " started and ended"));

        // The control: the same child on the SDK's default clock is an hour off in every round.
        ShiftedDrive.Result control = ShiftedDrive.run(20, SpanDriveChild.class, "-Dhrts.test.otelClock=default");
        assertTrue(control.toString(), control.childClockShifted());
        assertTrue(control.toString(), control.output.contains("drive: 20 rounds, 0 ordered, 20 violations"));
    }
}
