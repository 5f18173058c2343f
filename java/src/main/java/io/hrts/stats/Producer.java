package io.hrts.stats;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.lang.ref.Cleaner;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * One Java thread's queue: the Java half of native/stats/src/ring.rs. It appends events to the
 * thread's ring and, when the ring is full (and for a while after, see {@code FOLD_RUN_RINGS}),
 * folds them into the thread's per-metric cells, exactly as a Rust thread does, so a measurement
 * never calls native code and never waits. When the thread is gone and this object unreachable,
 * a cleaner hands the queue back; the processing thread drains and frees it.
 */
final class Producer {
    static final VarHandle LONGS =
            MethodHandles.byteBufferViewVarHandle(long[].class, ByteOrder.nativeOrder());
    private static final Cleaner CLEANER = Cleaner.create();
    private static final ThreadLocal<Producer> LOCAL = ThreadLocal.withInitial(Producer::new);

    private final ByteBuffer ring;
    private final long handle;
    private final long mask;
    private final long foldRun;
    private final ByteBuffer[] chunks = new ByteBuffer[1 << 10];
    private long head;
    private long cachedTail;
    private long foldCredit;
    private long dropped;

    private Producer() {
        long h = StatsNative.nAttachRing();
        this.handle = h;
        this.ring = StatsNative.nRingBuffer(h).order(ByteOrder.nativeOrder());
        long capacity = (ring.capacity() - Layout.EVENTS) / Layout.EVENT_BYTES;
        this.mask = Long.highestOneBit(capacity) - 1;
        this.foldRun = Layout.FOLD_RUN_RINGS * (mask + 1);
        CLEANER.register(this, () -> StatsNative.nReleaseRing(h));
    }

    static Producer current() {
        return LOCAL.get();
    }

    /** Queues (or folds) an event stamped with the coarse clock. */
    void record(int metric, int kind, long value) {
        if (foldCredit > 0) {
            foldCredit--;
            fold(metric, kind, value);
        } else if (!push(metric, kind, value, stamp())) {
            foldCredit = foldRun;
            fold(metric, kind, value);
        }
    }

    /** Queues (or folds) an event stamped {@code ts}. */
    void record(int metric, int kind, long value, long ts) {
        if (foldCredit > 0) {
            foldCredit--;
            fold(metric, kind, value);
        } else if (!push(metric, kind, value, ts)) {
            foldCredit = foldRun;
            fold(metric, kind, value);
        }
    }

    static long stamp() {
        long coarse = (long) LONGS.getOpaque(Layout.CONTROL, Layout.COARSE);
        return coarse != 0 ? coarse : StatsNative.nNow();
    }

    private boolean push(int metric, int kind, long value, long ts) {
        if (head - cachedTail > mask) {
            cachedTail = (long) LONGS.getAcquire(ring, Layout.TAIL);
            if (head - cachedTail > mask) {
                return false;
            }
        }
        int at = Layout.EVENTS + (int) (head & mask) * Layout.EVENT_BYTES;
        LONGS.set(ring, at, ts);
        LONGS.set(ring, at + 8, (metric & 0xffffffffL) | ((long) kind << 32));
        LONGS.set(ring, at + 16, value);
        LONGS.setRelease(ring, Layout.HEAD, ++head);
        return true;
    }

    /** Queues an event that cannot be folded; a full ring drops it and counts the drop. */
    void recordUnfoldable(int metric, int kind, long value, long ts) {
        if (!push(metric, kind, value, ts)) {
            LONGS.setOpaque(ring, Layout.DROPPED, ++dropped);
        }
    }

    private ByteBuffer chunk(int metric) {
        int i = metric >>> Layout.CHUNK_SHIFT;
        ByteBuffer c = chunks[i];
        if (c == null) {
            c = StatsNative.nChunk(handle, metric).order(ByteOrder.nativeOrder());
            chunks[i] = c;
        }
        return c;
    }

    private void fold(int metric, int kind, long value) {
        ByteBuffer c = chunk(metric);
        int base = Layout.CHUNK_HEADER + (metric & Layout.CHUNK_MASK) * Layout.CELL_BYTES;
        long seq = (long) LONGS.get(c, base + Layout.SEQ);
        LONGS.setOpaque(c, base + Layout.SEQ, seq + 1);
        VarHandle.releaseFence();
        int n;
        int sum;
        int min;
        int max;
        if (kind == Layout.COUNTER_ADD && value == 0) {
            n = Layout.ZERO_N;
            sum = 0;
            min = 0;
            max = 0;
        } else if (kind == Layout.COUNTER_ADD && value < 0) {
            n = Layout.NEG_N;
            sum = Layout.NEG_SUM;
            min = Layout.NEG_MIN;
            max = Layout.NEG_MAX;
        } else {
            n = Layout.POS_N;
            sum = Layout.POS_SUM;
            min = Layout.POS_MIN;
            max = Layout.POS_MAX;
        }
        long count = (long) LONGS.get(c, base + n);
        LONGS.set(c, base + n, count + 1);
        if (sum != 0) {
            if (count == 0) {
                LONGS.set(c, base + sum, value);
                LONGS.set(c, base + min, value);
                LONGS.set(c, base + max, value);
            } else if (kind == Layout.GAUGE_SET) {
                double v = Double.longBitsToDouble(value);
                double s = Double.longBitsToDouble((long) LONGS.get(c, base + sum)) + v;
                double lo = Math.min(Double.longBitsToDouble((long) LONGS.get(c, base + min)), v);
                double hi = Math.max(Double.longBitsToDouble((long) LONGS.get(c, base + max)), v);
                LONGS.set(c, base + sum, Double.doubleToRawLongBits(s));
                LONGS.set(c, base + min, Double.doubleToRawLongBits(lo));
                LONGS.set(c, base + max, Double.doubleToRawLongBits(hi));
            } else {
                LONGS.set(c, base + sum, (long) LONGS.get(c, base + sum) + value);
                LONGS.set(c, base + min, Math.min((long) LONGS.get(c, base + min), value));
                LONGS.set(c, base + max, Math.max((long) LONGS.get(c, base + max), value));
            }
        }
        if (seq == 0) {
            LONGS.set(c, base + Layout.KIND, (long) kind);
        }
        LONGS.set(c, base + Layout.POS, head);
        LONGS.set(c, base + Layout.LAST, value);
        LONGS.setRelease(c, base + Layout.SEQ, seq + 2);
        LONGS.setRelease(c, 0, (long) LONGS.get(c, 0) + 1);
    }
}
