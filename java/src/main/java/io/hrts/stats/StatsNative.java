package io.hrts.stats;

/**
 * Every native method of the statistics API (libhrts_jni's {@code Java_io_hrts_stats_*} exports).
 * The library is loaded by {@link Stats#ensureReady()} through {@code
 * io.hrts.HighResTimestamp.open()} before any of these is called.
 */
final class StatsNative {
    private StatsNative() {}

    static native void nConfigureJson(byte[] utf8);

    static native void nConfigureFile(byte[] utf8Path);

    /**
     * The program name and instance id Java found (null: leave it to {@code HRTS_STATS_PROGRAM},
     * {@code HRTS_STATS_INSTANCE_ID} and the defaults), for instances that register later.
     */
    static native void nSetIdentity(byte[] utf8Program, byte[] utf8InstanceId);

    static native void nStart();

    static native void nStop();

    /** The metric's id; kind 1 counter, 2 gauge, 3 timer. */
    static native long nMetric(byte[] utf8Name, int kind);

    /** The control block's address (offsets of the words Java reads in {@link Layout}). */
    static native long nControl();

    /**
     * {address, bytes} of the per-metric stamping flags: one byte per metric id, non-zero if the
     * counter or gauge is listed in {@code exact-stamps}; they live as long as the process.
     */
    static native long[] nExactFlags();

    /** The queue layout, see {@link Layout}. */
    static native int[] nLayout();

    static native long nAttachRing();

    /** {address, bytes} of a queue's block. */
    static native long[] nRing(long ring);

    /** The address of the fold-cell chunk holding {@code metric}, created on first use. */
    static native long nChunk(long ring, int metric);

    static native void nReleaseRing(long ring);

    /** {names, longs, doubles, json}, or null if {@code fresh} is false and there is no dump. */
    static native Object[] nDump(boolean fresh);

    /**
     * A snapshot of a statistics segment (null: the default one): {segment, long[] {taken, then
     * pid, instance, state per process}, String[] programs, Object[] dumps (each process's as
     * {@link #nDump} gives them, then the aggregate)}.
     */
    static native Object[] nSnapshot(byte[] utf8Segment);

    /**
     * A shared timer instance's event: op 0 start (returns 0), 1 stop (the duration, or -1 if no
     * process started it), 2 discard (1 if one was running, else 0).
     */
    static native long nTimerShared(long metric, long instance, int op);

    /** Removes a statistics segment (null: the default one); false if there was none. */
    static native boolean nUnlinkSegment(byte[] utf8Segment);
}
