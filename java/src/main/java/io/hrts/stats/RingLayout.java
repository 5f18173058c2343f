// Generated from hrts_stats::ring by native/jni/src/ring_layout.rs; do not edit.
// Regenerate with `HRTS_BLESS=1 cargo test -p hrts-jni java_ring_layout_is_fresh`.
package io.hrts.stats;

/**
 * The native statistics queue layout (hrts_stats::ring), which the Java measuring points
 * write.
 *
 * <p>Word offsets in a queue block: producer and consumer words, the events, the fold-cell chunks.
 */
final class RingLayout {
    private RingLayout() {}

    /** hrts_stats::ring::HEAD */
    static final int HEAD = 0;

    /** hrts_stats::ring::DROPPED */
    static final int DROPPED = 2;

    /** hrts_stats::ring::TAIL */
    static final int TAIL = 8;

    /** hrts_stats::ring::EVENTS */
    static final int EVENTS = 24;

    /** hrts_stats::ring::EVENT_WORDS */
    static final int EVENT_WORDS = 3;

    /** hrts_stats::ring::CHUNK_CELLS */
    static final int CHUNK_CELLS = 64;

    /** hrts_stats::ring::CELL_WORDS */
    static final int CELL_WORDS = 16;

    /** hrts_stats::ring::CHUNK_HEADER_WORDS */
    static final int CHUNK_HEADER_WORDS = 8;

    /** hrts_stats::ring::FOLD_CANCEL */
    static final int FOLD_CANCEL = 9;

    /** hrts_stats::ring::FOLD_RUN_RINGS */
    static final int FOLD_RUN_RINGS = 8;

    /** Word offsets in a fold cell (hrts_stats::ring::cell). */
    static final class Cell {
        private Cell() {}

        /** hrts_stats::ring::cell::SEQ */
        static final int SEQ = 0;

        /** hrts_stats::ring::cell::POS_N */
        static final int POS_N = 1;

        /** hrts_stats::ring::cell::POS_SUM */
        static final int POS_SUM = 2;

        /** hrts_stats::ring::cell::POS_MIN */
        static final int POS_MIN = 3;

        /** hrts_stats::ring::cell::POS_MAX */
        static final int POS_MAX = 4;

        /** hrts_stats::ring::cell::NEG_N */
        static final int NEG_N = 5;

        /** hrts_stats::ring::cell::NEG_SUM */
        static final int NEG_SUM = 6;

        /** hrts_stats::ring::cell::NEG_MIN */
        static final int NEG_MIN = 7;

        /** hrts_stats::ring::cell::NEG_MAX */
        static final int NEG_MAX = 8;

        /** hrts_stats::ring::cell::ZERO_N */
        static final int ZERO_N = 9;

        /** hrts_stats::ring::cell::POS */
        static final int POS = 10;

        /** hrts_stats::ring::cell::LAST */
        static final int LAST = 11;

        /** hrts_stats::ring::cell::KIND */
        static final int KIND = 12;
    }

    /** Event kinds, the meta word's bits 32..40 (hrts_stats::ring::kind). */
    static final class Kind {
        private Kind() {}

        /** hrts_stats::ring::kind::COUNTER_INIT */
        static final int COUNTER_INIT = 1;

        /** hrts_stats::ring::kind::COUNTER_ADD */
        static final int COUNTER_ADD = 2;

        /** hrts_stats::ring::kind::GAUGE_SET */
        static final int GAUGE_SET = 3;

        /** hrts_stats::ring::kind::TIMER_START */
        static final int TIMER_START = 4;

        /** hrts_stats::ring::kind::TIMER_STOP */
        static final int TIMER_STOP = 5;

        /** hrts_stats::ring::kind::TIMER_DISCARD */
        static final int TIMER_DISCARD = 6;

        /** hrts_stats::ring::kind::TIMER_HEARTBEAT */
        static final int TIMER_HEARTBEAT = 7;

        /** hrts_stats::ring::kind::TIMER_RECORD */
        static final int TIMER_RECORD = 8;
    }

    /** Byte offsets in the measuring points' control block (hrts_stats::CONTROL_OFFSETS). */
    static final class Control {
        private Control() {}

        /** hrts_stats::CONTROL_OFFSETS[0] */
        static final int ENABLED = 0;

        /** hrts_stats::CONTROL_OFFSETS[1] */
        static final int IDLE_NS = 8;

        /** hrts_stats::CONTROL_OFFSETS[2] */
        static final int COARSE = 64;
    }

    /** Every value above, in the order the native library's nLayout() reports them. */
    static final int[] ALL = {
        HEAD, DROPPED, TAIL, EVENTS, EVENT_WORDS, CHUNK_CELLS, CELL_WORDS, CHUNK_HEADER_WORDS,
        FOLD_CANCEL, FOLD_RUN_RINGS, Cell.SEQ, Cell.POS_N, Cell.POS_SUM, Cell.POS_MIN,
        Cell.POS_MAX, Cell.NEG_N, Cell.NEG_SUM, Cell.NEG_MIN, Cell.NEG_MAX, Cell.ZERO_N, Cell.POS,
        Cell.LAST, Cell.KIND, Kind.COUNTER_INIT, Kind.COUNTER_ADD, Kind.GAUGE_SET,
        Kind.TIMER_START, Kind.TIMER_STOP, Kind.TIMER_DISCARD, Kind.TIMER_HEARTBEAT,
        Kind.TIMER_RECORD, Control.ENABLED, Control.IDLE_NS, Control.COARSE,
    };
}
