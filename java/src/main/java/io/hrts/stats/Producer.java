package io.hrts.stats;

import static io.hrts.stats.Layout.U;

import io.hrts.HighResTimestamp;
import java.lang.ref.Cleaner;

/**
 * One Java thread's queue: the Java half of native/stats/src/ring.rs. It appends events to the
 * thread's ring and, when the ring is full (and for a while after, see {@code FOLD_RUN_RINGS}),
 * folds them into the thread's per-metric cells, exactly as a Rust thread does, so a measurement
 * never calls native code and never waits.
 *
 * <p>The queue's memory belongs to the native library; this object holds its handle and is the
 * only user of its addresses. When the thread is gone and this object unreachable, a cleaner
 * hands the queue back; only then may the processing thread free it.
 */
final class Producer {
    private static final Cleaner CLEANER = Cleaner.create();
    private static final ThreadLocal<Producer> LOCAL = ThreadLocal.withInitial(Producer::new);

    private final long handle;
    private final long ring;
    private final long mask;
    private final long foldRun;
    private final long[] chunks = new long[1 << 10];
    private long head;
    private long cachedTail;
    private long foldCredit;
    private long foldSeen;
    private long dropped;

    private Producer() {
        long h = StatsNative.nAttachRing();
        this.handle = h;
        long[] block = StatsNative.nRing(h);
        this.ring = block[0];
        long capacity = (block[1] - Layout.EVENTS) / Layout.EVENT_BYTES;
        this.mask = Long.highestOneBit(capacity) - 1;
        this.foldRun = Layout.FOLD_RUN_RINGS * (mask + 1);
        CLEANER.register(this, () -> StatsNative.nReleaseRing(h));
    }

    static Producer current() {
        return LOCAL.get();
    }

    /** Queues (or folds) an event stamped with the coarse clock. */
    void record(int metric, int kind, long value) {
        if (foldCredit > 0 && folding()) {
            fold(metric, kind, value);
        } else if (!push(metric, kind, value, stamp())) {
            foldCredit = foldRun;
            fold(metric, kind, value);
        }
    }

    /** Queues (or folds) an event stamped {@code ts}. */
    void record(int metric, int kind, long value, long ts) {
        if (foldCredit > 0 && folding()) {
            fold(metric, kind, value);
        } else if (!push(metric, kind, value, ts)) {
            foldCredit = foldRun;
            fold(metric, kind, value);
        }
    }

    /** Uses one event of the folding run, unless the processing thread cancelled the run. */
    private boolean folding() {
        long cancel = U.getLongVolatile(null, ring + Layout.FOLD_CANCEL);
        if (cancel == foldSeen) {
            foldCredit--;
            return true;
        }
        foldSeen = cancel;
        foldCredit = 0;
        return false;
    }

    /** Queues an event that cannot be folded; a full ring drops it and counts the drop. */
    void recordUnfoldable(int metric, int kind, long value, long ts) {
        if (!push(metric, kind, value, ts)) {
            U.putLongVolatile(null, ring + Layout.DROPPED, ++dropped);
        }
    }

    static long stamp() {
        long coarse = U.getLongVolatile(null, Layout.COARSE);
        return coarse != 0 ? coarse : HighResTimestamp.getEpochNanoseconds();
    }

    private boolean push(int metric, int kind, long value, long ts) {
        if (head - cachedTail > mask) {
            cachedTail = U.getLongVolatile(null, ring + Layout.TAIL);
            if (head - cachedTail > mask) {
                return false;
            }
        }
        long at = ring + Layout.EVENTS + (head & mask) * Layout.EVENT_BYTES;
        U.putLong(at, ts);
        U.putLong(at + 8, (metric & 0xffffffffL) | ((long) kind << 32));
        U.putLong(at + 16, value);
        U.putOrderedLong(null, ring + Layout.HEAD, ++head);
        return true;
    }

    private long chunk(int metric) {
        int i = metric >>> Layout.CHUNK_SHIFT;
        long c = chunks[i];
        if (c == 0) {
            c = StatsNative.nChunk(handle, metric);
            chunks[i] = c;
        }
        return c;
    }

    private void fold(int metric, int kind, long value) {
        long c = chunk(metric);
        long base = c + Layout.CHUNK_HEADER + (long) (metric & Layout.CHUNK_MASK) * Layout.CELL_BYTES;
        long seq = U.getLong(base + Layout.SEQ);
        // Odd while writing; the fence keeps the field stores after it (the Rust
        // side's Relaxed store + Release fence; a volatile store would add a full
        // fence per fold).
        U.putOrderedLong(null, base + Layout.SEQ, seq + 1);
        U.storeFence();
        long n;
        long sum;
        long min;
        long max;
        if (kind == RingLayout.Kind.COUNTER_ADD && value == 0) {
            n = base + Layout.ZERO_N;
            sum = 0;
            min = 0;
            max = 0;
        } else if (kind == RingLayout.Kind.COUNTER_ADD && value < 0) {
            n = base + Layout.NEG_N;
            sum = base + Layout.NEG_SUM;
            min = base + Layout.NEG_MIN;
            max = base + Layout.NEG_MAX;
        } else {
            n = base + Layout.POS_N;
            sum = base + Layout.POS_SUM;
            min = base + Layout.POS_MIN;
            max = base + Layout.POS_MAX;
        }
        long count = U.getLong(n);
        U.putLong(n, count + 1);
        if (sum != 0) {
            if (count == 0) {
                U.putLong(sum, value);
                U.putLong(min, value);
                U.putLong(max, value);
            } else if (kind == RingLayout.Kind.GAUGE_SET) {
                double v = Double.longBitsToDouble(value);
                U.putLong(sum, Double.doubleToRawLongBits(Double.longBitsToDouble(U.getLong(sum)) + v));
                U.putLong(min, Double.doubleToRawLongBits(Math.min(Double.longBitsToDouble(U.getLong(min)), v)));
                U.putLong(max, Double.doubleToRawLongBits(Math.max(Double.longBitsToDouble(U.getLong(max)), v)));
            } else {
                U.putLong(sum, U.getLong(sum) + value);
                U.putLong(min, Math.min(U.getLong(min), value));
                U.putLong(max, Math.max(U.getLong(max), value));
            }
        }
        if (seq == 0) {
            U.putLong(base + Layout.KIND, kind);
        }
        U.putLong(base + Layout.POS, head);
        U.putLong(base + Layout.LAST, value);
        U.putOrderedLong(null, base + Layout.SEQ, seq + 2);
        U.putOrderedLong(null, c, U.getLong(c) + 1);
    }
}
