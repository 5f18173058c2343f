package io.hrts;

import static org.junit.Assert.assertSame;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;

import org.junit.Test;

/**
 * Stamps with error bounds from Java: an interval that holds the system clock, or, when the
 * clock's service gives no bound (this machine's kernel may say STA_UNSYNC), an exception of kind
 * UNSYNCHRONIZED that says why; never an inverted interval.
 */
public class BoundTest {

    @Test
    public void anIntervalHoldsTheClockOrTheExceptionSaysWhy() {
        long[] out = new long[2];
        long before = System.currentTimeMillis() * 1_000_000L;
        try {
            BoundStatus s = HighResTimestamp.getBoundedEpochNanoseconds(out);
            long after = (System.currentTimeMillis() + 1) * 1_000_000L;
            assertTrue(s.toString(), s == BoundStatus.SYNCHRONIZED || s == BoundStatus.FREE_RUNNING);
            assertTrue(out[0] + " " + out[1], out[0] <= out[1]);
            assertTrue(out[0] <= after && out[1] >= before);
            assertTrue(HighResTimestamp.after(out[0] - 1));
            assertTrue(HighResTimestamp.before(out[1] + 60_000_000_000L));
        } catch (HrtsException e) {
            assertSame(e.getMessage(), HrtsException.Kind.UNSYNCHRONIZED, e.getKind());
            assertTrue(e.getMessage(), e.getMessage().length() > 20);
        }
    }

    /** The portable implementation knows no bound: every bounded call says "unknown". */
    @Test
    public void thePortableImplementationAnswersUnknown() throws Exception {
        org.junit.Assume.assumeTrue(Portable.on());
        long[] out = {7, 8};
        HrtsException e = assertThrows(HrtsException.class, () -> HighResTimestamp.getBoundedEpochNanoseconds(out));
        assertSame(HrtsException.Kind.UNSYNCHRONIZED, e.getKind());
        assertTrue(e.getMessage(), e.getMessage().contains("bound status unknown"));
        assertTrue("nothing written", out[0] == 7 && out[1] == 8);
        assertSame(HrtsException.Kind.UNSYNCHRONIZED,
                assertThrows(HrtsException.class, () -> HighResTimestamp.after(0)).getKind());
        assertSame(HrtsException.Kind.UNSYNCHRONIZED,
                assertThrows(HrtsException.class, () -> HighResTimestamp.before(0)).getKind());
        assertSame(HrtsException.Kind.UNSYNCHRONIZED,
                assertThrows(HrtsException.class, () -> HighResTimestamp.commitWait(0)).getKind());
    }

    @Test
    public void aTooShortArrayIsRefused() {
        assertThrows(IllegalArgumentException.class, () -> HighResTimestamp.getBoundedEpochNanoseconds(new long[1]));
        assertThrows(IllegalArgumentException.class, () -> HighResTimestamp.getBoundedEpochNanoseconds(null));
        assertSame(BoundStatus.UNKNOWN, BoundStatus.fromCode(99));
    }
}
