package io.hrts.stats;

import static io.hrts.stats.Layout.U;

import io.hrts.HighResTimestamp;
import java.lang.ref.Cleaner;

/**
 * One Java thread's queue: the Java half of native/stats/src/ring.rs. A counter or gauge event is
 * summed into the thread's per-metric cell, as a Rust thread does, unless its metric is listed in
 * {@code exact-stamps}: those events, timer durations and the rest are appended to the thread's
 * ring with a precise stamp and folded into the cells only when the ring is full (and for a while
 * after, see {@code FOLD_RUN_RINGS}). So a measurement never calls native code (but for a precise
 * stamp) and never waits.
 *
 * <p>The queue's memory belongs to the native library; this object holds its handle and is the
 * only user of its addresses. When the thread is gone and this object unreachable, a cleaner
 * hands the queue back; only then may the processing thread free it.
 */
final class Producer {
    private static final Cleaner CLEANER = Cleaner.create();
    private static final ThreadLocal<Producer> LOCAL = ThreadLocal.withInitial(Producer::new);
    /**
     * A faster way to the calling thread's producer than {@link #LOCAL} (whose lookup was a third
     * of a counter increment): slot {@code thread id mod 256} holds the producer of one thread
     * with that id, checked by identity. Threads whose slot another live thread holds take the
     * {@code ThreadLocal} path. A slot of a thread that has ended keeps its producer, and so its
     * queue, until a thread with the same slot claims it (see {@link #slow}).
     */
    private static final Producer[] SLOTS = new Producer[256];

    /**
     * The thread this producer belongs to. Final, so a thread that reads a producer from {@link
     * #SLOTS} (racily, without a lock) sees it set; one that finds itself here made this producer,
     * and so sees every other field as it left it.
     */
    private final Thread owner = Thread.currentThread();
    /** Calls of {@link #slow} by this thread: how often to check whether its slot's holder ended. */
    private int misses;
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
    /**
     * 0, or the ring position just past this thread's last queued counter init while the
     * processing thread has not taken it (ring.rs {@code INIT_PENDING}, which only the producer
     * reads, so it stays here). Until it is taken, summed events are queued unstamped instead:
     * in a cell a pass could not tell which of them came before the init.
     */
    private long initPending;

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
        Thread t = Thread.currentThread();
        Producer p = SLOTS[(int) t.getId() & (SLOTS.length - 1)];
        return p != null && p.owner == t ? p : slow(t);
    }

    /**
     * The thread's producer from {@link #LOCAL}; claims the thread's slot if it is free or its
     * holder has ended. Whether it has ended is checked at the thread's first miss (a short-lived
     * thread frees the slot of one that ended before it) and then every 1024th: a live holder
     * keeps the slot, and a thread that shares it pays for the check only now and then.
     */
    private static Producer slow(Thread t) {
        Producer p = LOCAL.get();
        int i = (int) t.getId() & (SLOTS.length - 1);
        Producer held = SLOTS[i];
        if (held == null || ((p.misses++ & 1023) == 0 && !held.owner.isAlive())) {
            SLOTS[i] = p;
        }
        return p;
    }

    /**
     * A counter delta that is not stamped per event (ring.rs {@code record_summed}): summed into
     * the cell, stamped by the processing pass that takes it.
     */
    void add(int metric, long delta) {
        if (initPending != 0 && queueAfterInit(metric, RingLayout.Kind.COUNTER_ADD, delta)) {
            return;
        }
        foldAdd(metric, delta, false);
    }

    /**
     * A gauge value (its raw double bits) that is not stamped per event; see {@link #add}. A
     * pending counter init does not hold it back: no init sets a gauge (ring.rs {@code
     * record_summed}).
     */
    void set(int metric, long bits) {
        foldSet(metric, bits, false);
    }

    /**
     * Queues an event unstamped (time 0: the processing thread gives it the time of the thread's
     * next stamped event or of its pass) while a counter init is not taken; false once it is
     * (the event is then summed), or if the ring is full (summed too, so it may be applied
     * before the init: the same as a Rust thread).
     */
    private boolean queueAfterInit(int metric, int kind, long value) {
        long tail = U.getLongVolatile(null, ring + Layout.TAIL);
        if (tail - initPending >= 0) {
            initPending = 0;
            return false;
        }
        return push(metric, kind, value, 0);
    }

    /**
     * Queues a counter init with a precise stamp; {@code summed}: the counter's deltas are summed
     * into its cell, which must wait until the init is taken (see {@link #initPending}). A full
     * ring drops the init and counts the drop.
     */
    void init(int metric, long value, boolean summed) {
        if (!push(metric, RingLayout.Kind.COUNTER_INIT, value, stamp())) {
            U.putLongVolatile(null, ring + Layout.DROPPED, ++dropped);
        } else if (summed) {
            // 0 means none pending: a head of 0 (after 2^64 events) waits for 1. Not Math.max:
            // the head is unsigned, as in Rust.
            initPending = head != 0 ? head : 1;
        }
    }

    /**
     * Queues an event with a precise stamp taken only if it is queued, or folds it (unstamped)
     * while the ring is full or was full recently (ring.rs {@code record}).
     */
    void record(int metric, int kind, long value) {
        if (foldCredit > 0 && folding()) {
            fold(metric, kind, value);
        } else if (!hasRoom() || !push(metric, kind, value, stamp())) {
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

    /** The precise stamp of a queued event, on the statistics' timeline. */
    static long stamp() {
        return HighResTimestamp.getEpochNanoseconds();
    }

    /** Whether {@link #push} will find a free slot (so that a stamp is not taken for nothing). */
    private boolean hasRoom() {
        if (head - cachedTail > mask) {
            cachedTail = U.getLongVolatile(null, ring + Layout.TAIL);
            return head - cachedTail <= mask;
        }
        return true;
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
        long c = chunks[metric >>> Layout.CHUNK_SHIFT];
        return c != 0 ? c : newChunk(metric);
    }

    /** The native call of a thread's first event in a chunk, out of the inlined path. */
    private long newChunk(int metric) {
        long c = StatsNative.nChunk(handle, metric);
        chunks[metric >>> Layout.CHUNK_SHIFT] = c;
        return c;
    }

    /**
     * Folds an event that met a full ring. The cell protocol is ring.rs {@code write_cell}'s,
     * which the processing thread reads: the count word of the event's sign (twice the count) odd
     * while writing (an ordered store and a store fence, as the Rust side's Relaxed store and
     * Release fence; a volatile store would add a full fence per event), the fields, then the
     * count word two above what it was, with a release store.
     */
    private void fold(int metric, int kind, long value) {
        if (kind == RingLayout.Kind.COUNTER_ADD) {
            foldAdd(metric, value, true);
        } else if (kind == RingLayout.Kind.GAUGE_SET) {
            foldSet(metric, value, true);
        } else {
            foldPositive(metric, kind, value);
        }
    }

    /** The address of {@code metric}'s cell in chunk {@code chunk}. */
    private static long cell(long chunk, int metric) {
        return chunk + Layout.CHUNK_HEADER + (long) (metric & Layout.CHUNK_MASK) * Layout.CELL_BYTES;
    }

    /**
     * A counter delta into its cell: deltas are summed per sign, zeros only counted. Kept apart
     * from the gauge's and the timer's folds so that the counter's path, inlined into {@link
     * Counter#add(long)}, carries no kind test (and, for {@code increment()}, no sign test).
     */
    private void foldAdd(int metric, long delta, boolean placed) {
        long chunk = chunk(metric);
        long base = cell(chunk, metric);
        long n = base + (delta > 0 ? Layout.POS_N : delta < 0 ? Layout.NEG_N : Layout.ZERO_N);
        long twice = open(n);
        long count = twice >>> 1;
        if (delta != 0) {
            // The sum of a sign never folded into is 0, so adding also starts it.
            long sum = n + (Layout.POS_SUM - Layout.POS_N);
            U.putLong(sum, U.getLong(sum) + delta);
            // A delta equal to the cell's last value (a counter's deltas mostly repeat) was
            // folded into the same sign's words before: min and max already cover it.
            if (delta != U.getLong(base + Layout.LAST)) {
                long min = n + (Layout.POS_MIN - Layout.POS_N);
                long max = n + (Layout.POS_MAX - Layout.POS_N);
                if (count == 0 || delta < U.getLong(min)) {
                    U.putLong(min, delta);
                }
                if (count == 0 || delta > U.getLong(max)) {
                    U.putLong(max, delta);
                }
            }
        }
        folded(base, n, twice, RingLayout.Kind.COUNTER_ADD, delta, placed);
    }

    private static final long NEGATIVE_ZERO = Double.doubleToRawLongBits(-0.0);

    /** A gauge value (raw double bits) into the cell's {@code POS_*} words, as doubles. */
    private void foldSet(int metric, long bits, boolean placed) {
        long chunk = chunk(metric);
        long base = cell(chunk, metric);
        long n = base + Layout.POS_N;
        long twice = open(n);
        long count = twice >>> 1;
        if (count == 0) {
            U.putLong(base + Layout.POS_SUM, bits);
            U.putLong(base + Layout.POS_MIN, bits);
            U.putLong(base + Layout.POS_MAX, bits);
        } else {
            double v = Double.longBitsToDouble(bits);
            long sum = base + Layout.POS_SUM;
            long min = base + Layout.POS_MIN;
            long max = base + Layout.POS_MAX;
            U.putDouble(sum, U.getDouble(sum) + v);
            // A value equal to the cell's last (a gauge set again to what it shows) was folded
            // before, and min and max run for the cell's life: they already cover it.
            if (bits != U.getLong(base + Layout.LAST)) {
                // Stored only when they change, as Math.min and Math.max would pick (-0.0
                // below 0.0); a gauge is never NaN.
                double m = U.getDouble(min);
                if (v < m || (v == m && bits == NEGATIVE_ZERO)) {
                    U.putDouble(min, v);
                }
                m = U.getDouble(max);
                if (v > m || (v == m && bits == 0)) {
                    U.putDouble(max, v);
                }
            }
        }
        folded(base, n, twice, RingLayout.Kind.GAUGE_SET, bits, placed);
    }

    /** Any other foldable event (a timer duration) into the {@code POS_*} words, as integers. */
    private void foldPositive(int metric, int kind, long value) {
        long chunk = chunk(metric);
        long base = cell(chunk, metric);
        long n = base + Layout.POS_N;
        long twice = open(n);
        summed(twice >>> 1, base + Layout.POS_SUM, base + Layout.POS_MIN, base + Layout.POS_MAX, value);
        folded(base, n, twice, kind, value, true);
    }

    /** Sum, min and max of integer values at the given word addresses, {@code count} before. */
    private static void summed(long count, long sum, long min, long max, long value) {
        if (count == 0) {
            U.putLong(sum, value);
            U.putLong(min, value);
            U.putLong(max, value);
        } else {
            U.putLong(sum, U.getLong(sum) + value);
            // Stored only when they change: a counter's deltas mostly repeat.
            if (value < U.getLong(min)) {
                U.putLong(min, value);
            }
            if (value > U.getLong(max)) {
                U.putLong(max, value);
            }
        }
    }

    /**
     * The guard every fold starts with: count word {@code n} (twice the count) made odd, and a
     * store fence so the fields' stores come after it; returns what the word held.
     */
    private static long open(long n) {
        long twice = U.getLong(n);
        U.putOrderedLong(null, n, twice | 1);
        U.storeFence();
        return twice;
    }

    /**
     * The words every fold ends with; publishes the cell by raising its count word {@code n}
     * (which held {@code twice}) to the next even value (see {@link #fold}). {@code placed}: the
     * fold of an event that met a full ring, which keeps its place among the queued events (the
     * ring's head); a summed event has none to keep (ring.rs {@code sum}: the only queued events
     * of its metric are a counter init and those after it, which the cell never holds).
     */
    private void folded(long base, long n, long twice, int kind, long value, boolean placed) {
        if (twice == 0) {
            U.putLong(base + Layout.KIND, kind);
        }
        if (placed) {
            U.putLong(base + Layout.POS, head);
        }
        U.putLong(base + Layout.LAST, value);
        U.putOrderedLong(null, n, twice + 2);
    }
}
