package io.hrts;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertSame;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;

import org.junit.Test;

/** WTMLIB's operations from Java, against the Rust core's results. */
public class WtmlibTest {

    @Test
    public void conversionIsTheRustCoresForEveryTickCount() {
        Wtmlib.ConversionParams p = Wtmlib.conversionParams();
        assertEquals(HighResTimestamp.getSegmentInfo().getFrequency(), p.frequency());
        assertEquals(32, p.shift());
        assertTrue(p.modulusShift() > 0 && p.modulusShift() < 64);
        long hz = p.frequency();
        long[] ticks = {0, 1, 999, hz, hz * 5 + 7, hz * 86_400, Long.MAX_VALUE >>> 7, -1L >>> 8};
        for (long t : ticks) {
            assertEquals("ticks " + t, Wtmlib.ticksToNanosReference(t), p.ticksToNanos(t));
        }
        assertEquals(1_000_000_000.0, p.ticksToNanos(hz), 2.0);
        assertTrue("seconds before wrap: " + p.secondsBeforeWrap(), p.secondsBeforeWrap() > 365L * 86_400);
    }

    @Test
    public void aSleepMeasuredWithTheRawCounter() throws Exception {
        Wtmlib.ConversionParams p = Wtmlib.conversionParams();
        long t0 = System.nanoTime();
        long c0 = Wtmlib.counter();
        Thread.sleep(20);
        long c1 = Wtmlib.counter();
        long byClock = System.nanoTime() - t0;
        long byCounter = p.ticksToNanos(c1 - c0);
        assertTrue(byCounter + " ns by the counter", byCounter >= 20_000_000L);
        assertTrue(byCounter + " vs " + byClock, Math.abs(byCounter - byClock) < 5_000_000L);
    }

    @Test
    public void evaluationByBothMethodsWithASignificanceSetting() {
        SegmentInfo info = HighResTimestamp.getSegmentInfo();
        for (Wtmlib.Method m : Wtmlib.Method.values()) {
            Wtmlib.Result r = Wtmlib.evaluate(m, 20, 0, 0);
            assertSame(m, r.method());
            assertTrue(r.toString(), r.evaluated() && r.probes() >= 2 && r.cpus() >= 1);
            assertTrue(r.toString(), r.monotonic());
            assertEquals(0, r.violations());
            assertTrue(r.significanceRecorded());
            if (r.cpus() == 1) {
                assertEquals(0, r.maxShiftTicks());
                assertEquals(-1, r.minPairHandovers());
                assertTrue(r.significant());
            } else {
                assertEquals(r.toString(), r.minPairHandovers() >= 16, r.significant());
            }
        }
        // A significance no sequence can meet.
        Wtmlib.Result strict = Wtmlib.evaluate(Wtmlib.Method.CAS_ORDERED_PROBES, 10, 0, -1);
        if (strict.cpus() > 1) {
            assertFalse(strict.toString(), strict.significant());
            assertTrue(strict.note(), strict.note().contains("not significant"));
        }
        Wtmlib.Result created = Wtmlib.creationResult();
        assertFalse(created.significanceRecorded());
        assertEquals(info.hasEvaluation(), created.evaluated());
        if (created.evaluated()) {
            assertEquals(info.isEvaluationMonotonic(), created.monotonic());
            assertEquals(info.getEvaluationMaxShiftNs(), created.maxShiftNanos());
            assertEquals(info.getEvaluationCpus(), created.cpus());
        }
    }

    @Test
    public void anUnknownMethodCodeIsRefusedByTheNativeSide() {
        HrtsException e = assertThrows(HrtsException.class, () -> {
            Native.open();
            long[] out = new long[Wtmlib.RESULT_FIELDS];
            java.lang.reflect.Method m = Wtmlib.class.getDeclaredMethod("nativeEvaluate", int.class,
                    long.class, long.class, long.class, long[].class);
            m.setAccessible(true);
            try {
                m.invoke(null, 9, 10L, 0L, 0L, out);
            } catch (java.lang.reflect.InvocationTargetException t) {
                throw t.getCause();
            }
        });
        assertSame(HrtsException.Kind.INVALID_ARGUMENT, e.getKind());
        assertTrue(e.getMessage(), e.getMessage().contains("CAS-ordered probes"));
    }
}
