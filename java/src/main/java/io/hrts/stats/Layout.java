package io.hrts.stats;

import java.lang.reflect.Field;
import sun.misc.Unsafe;

/**
 * The native queue layout (from {@link RingLayout}, generated from native/stats/src/ring.rs and
 * checked once against the loaded library), the control block, and the memory access used on
 * them. All offsets here are in bytes.
 *
 * <p>Queues are written at native addresses through {@code sun.misc.Unsafe}, as Agrona's
 * counters are: a {@code ByteBuffer} view pays a bounds and liveness check on every word, which
 * was most of a measurement's cost. Every address comes from the native library and stays valid
 * while Java can use it (see {@link Producer}).
 */
final class Layout {
    private Layout() {}

    static {
        Stats.ensureReady();
        if (!java.util.Arrays.equals(StatsNative.nLayout(), RingLayout.ALL)) {
            throw new io.hrts.HrtsException(io.hrts.HrtsException.Kind.INTERNAL,
                    "hrts-stats: the native library's queue layout is not the one this jar was built for; "
                            + "use the jar and native library of one release");
        }
    }

    static final int HEAD = RingLayout.HEAD * 8;
    static final int DROPPED = RingLayout.DROPPED * 8;
    static final int TAIL = RingLayout.TAIL * 8;
    static final int EVENTS = RingLayout.EVENTS * 8;
    static final int EVENT_BYTES = RingLayout.EVENT_WORDS * 8;
    static final int CHUNK_SHIFT = Integer.numberOfTrailingZeros(RingLayout.CHUNK_CELLS);
    static final int CHUNK_MASK = RingLayout.CHUNK_CELLS - 1;
    static final int CELL_BYTES = RingLayout.CELL_WORDS * 8;
    static final int POS_N = RingLayout.Cell.POS_N * 8;
    static final int POS_SUM = RingLayout.Cell.POS_SUM * 8;
    static final int POS_MIN = RingLayout.Cell.POS_MIN * 8;
    static final int POS_MAX = RingLayout.Cell.POS_MAX * 8;
    static final int NEG_N = RingLayout.Cell.NEG_N * 8;
    static final int NEG_SUM = RingLayout.Cell.NEG_SUM * 8;
    static final int NEG_MIN = RingLayout.Cell.NEG_MIN * 8;
    static final int NEG_MAX = RingLayout.Cell.NEG_MAX * 8;
    static final int ZERO_N = RingLayout.Cell.ZERO_N * 8;
    static final int POS = RingLayout.Cell.POS * 8;
    static final int LAST = RingLayout.Cell.LAST * 8;
    static final int KIND = RingLayout.Cell.KIND * 8;
    static final long FOLD_RUN_RINGS = RingLayout.FOLD_RUN_RINGS;
    static final int CHUNK_HEADER = RingLayout.CHUNK_HEADER_WORDS * 8;
    static final int FOLD_CANCEL = RingLayout.FOLD_CANCEL * 8;

    static {
        // Producer.foldAdd reaches a sign's sum, min and max from its count by these distances.
        if (NEG_SUM - NEG_N != POS_SUM - POS_N || NEG_MIN - NEG_N != POS_MIN - POS_N
                || NEG_MAX - NEG_N != POS_MAX - POS_N) {
            throw new io.hrts.HrtsException(io.hrts.HrtsException.Kind.INTERNAL,
                    "hrts-stats: the fold cell's positive and negative words are laid out differently; "
                            + "Producer.foldAdd needs updating for this queue layout");
        }
    }

    static final Unsafe U = unsafe();

    private static Unsafe unsafe() {
        try {
            Field f = Unsafe.class.getDeclaredField("theUnsafe");
            f.setAccessible(true);
            return (Unsafe) f.get(null);
        } catch (ReflectiveOperationException e) {
            throw new io.hrts.HrtsException("hrts-stats needs sun.misc.Unsafe (module jdk.unsupported): " + e);
        }
    }

    /**
     * The measuring points' control block: enabled, idle timeout (its coarse clock word is no
     * longer read: counters and gauges take no stamp, timers take precise ones).
     */
    static final long CONTROL = StatsNative.nControl();
    static final long ENABLED = CONTROL + RingLayout.Control.ENABLED;
    static final long IDLE_NS = CONTROL + RingLayout.Control.IDLE_NS;

    private static final long[] EXACT_BLOCK = StatsNative.nExactFlags();
    /** One byte of flags per metric id: bit 0 if the metric is listed in {@code exact-stamps}. */
    private static final long EXACT = EXACT_BLOCK[0];
    /** How many ids {@link #EXACT} covers: every id a handle is made with is checked against it. */
    static final long EXACT_IDS = EXACT_BLOCK[1];

    static boolean enabled() {
        return U.getLongVolatile(null, ENABLED) != 0;
    }

    /**
     * Whether counter or gauge {@code metric} is stamped per event ({@code exact-stamps}). A plain
     * read: it comes after the volatile read of {@link #enabled()}, which the native side's start
     * publishes after setting every flag, so it cannot be hoisted out of a measuring loop.
     * {@code metric} must be below {@link #EXACT_IDS} (see {@link #checkId(long)}).
     */
    static boolean exact(int metric) {
        // Bit 0: exact-stamps; bit 1 (stopped) is the native side's, which enabled() covers here.
        return (U.getByte(EXACT + metric) & 1) != 0;
    }

    /**
     * The id of a metric handle's bits as the native library gave them, checked once here so that
     * no measurement can read or write outside the native flags and cells.
     */
    static int checkId(long bits) {
        int id = (int) bits;
        if (id < 0 || id >= EXACT_IDS) {
            throw new io.hrts.HrtsException(io.hrts.HrtsException.Kind.INTERNAL,
                    "hrts-stats: the native library gave metric id " + id + ", outside its " + EXACT_IDS
                            + " ids; use the jar and native library of one release");
        }
        return id;
    }
}
