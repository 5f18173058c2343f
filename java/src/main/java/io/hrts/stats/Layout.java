package io.hrts.stats;

import java.lang.reflect.Field;
import sun.misc.Unsafe;

/**
 * The native queue layout (native/stats/src/ring.rs), read once from the library so that it is
 * stated only there, the control block, and the memory access used on them. All offsets here are
 * in bytes.
 *
 * <p>Queues are written at native addresses through {@code sun.misc.Unsafe}, as Agrona's
 * counters are: a {@code ByteBuffer} view pays a bounds and liveness check on every word, which
 * was most of a measurement's cost. Every address comes from the native library and stays valid
 * while Java can use it (see {@link Producer}).
 */
final class Layout {
    private Layout() {}

    private static final int[] L;

    static {
        Stats.ensureReady();
        L = StatsNative.nLayout();
    }

    static final int HEAD = L[0] * 8;
    static final int DROPPED = L[1] * 8;
    static final int TAIL = L[2] * 8;
    static final int EVENTS = L[3] * 8;
    static final int EVENT_BYTES = L[4] * 8;
    static final int CHUNK_SHIFT = Integer.numberOfTrailingZeros(L[5]);
    static final int CHUNK_MASK = L[5] - 1;
    static final int CELL_BYTES = L[6] * 8;
    static final int SEQ = L[7] * 8;
    static final int POS_N = L[8] * 8;
    static final int POS_SUM = L[9] * 8;
    static final int POS_MIN = L[10] * 8;
    static final int POS_MAX = L[11] * 8;
    static final int NEG_N = L[12] * 8;
    static final int NEG_SUM = L[13] * 8;
    static final int NEG_MIN = L[14] * 8;
    static final int NEG_MAX = L[15] * 8;
    static final int ZERO_N = L[16] * 8;
    static final int POS = L[17] * 8;
    static final int LAST = L[18] * 8;
    static final int KIND = L[19] * 8;
    static final long FOLD_RUN_RINGS = L[20];
    static final int CHUNK_HEADER = L[22] * 8;
    static final int FOLD_CANCEL = L[23] * 8;

    /** Event kinds (native/stats/src/ring.rs, module kind). */
    static final int COUNTER_INIT = 1;
    static final int COUNTER_ADD = 2;
    static final int GAUGE_SET = 3;
    static final int TIMER_START = 4;
    static final int TIMER_STOP = 5;
    static final int TIMER_DISCARD = 6;
    static final int TIMER_HEARTBEAT = 7;
    static final int TIMER_RECORD = 8;

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

    /** The measuring points' control block: enabled, coarse clock, idle timeout. */
    static final long CONTROL = StatsNative.nControl();
    static final long ENABLED = CONTROL + L[24];
    static final long IDLE_NS = CONTROL + L[25];
    static final long COARSE = CONTROL + L[26];

    static boolean enabled() {
        return U.getLongVolatile(null, ENABLED) != 0;
    }
}
