package io.hrts;

import java.nio.charset.StandardCharsets;

/**
 * The native library: loading it, opening the segment once per JVM, and its 28 native methods
 * (implemented by {@code native/jni}, exported as {@code Java_io_hrts_Native_<name>}). Not an
 * API: the public classes ({@link HighResTimestamp}, {@link UniqueStamps}, {@link Sequences},
 * {@link ItcStamps}) call it.
 *
 * <p>Every native that needs the segment assumes {@link #open()} ran first (the native side
 * reports a missed open as {@link HrtsException.Kind#NOT_OPEN} rather than trusting it). Failures
 * are thrown as {@link HrtsException}.
 */
final class Native {
    /** True once the native library is loaded. */
    private static volatile boolean loaded;
    /** True once the segment is open; checked on every hot path. */
    private static volatile boolean open;

    private Native() {}

    /** Loads the native library, if not done yet. */
    static void load() {
        if (!loaded) {
            synchronized (Native.class) {
                if (!loaded) {
                    NativeLoader.load();
                    loaded = true;
                }
            }
        }
    }

    /**
     * Loads the library and opens the segment, if not done yet: on the hot paths a volatile read
     * and a predictable branch. A failure is thrown and not cached: the next call tries again.
     */
    static void open() {
        if (!open) {
            openOnce();
        }
    }

    /** Whether the segment is open in this JVM. */
    static boolean isOpen() {
        return open;
    }

    private static synchronized void openOnce() {
        if (open) {
            return;
        }
        load();
        // The property only: for null the core resolves the default itself (HRTS_SEGMENT, the
        // host page, /hrts-<uid>), by the rule every front end shares.
        String name = OpenOptions.segmentName();
        OpenOptions options = OpenOptions.fromProperties();
        openSegment(name == null ? null : name.getBytes(StandardCharsets.UTF_8), options.modeCode(),
                options.tieIntervalMs(), options.maxSlewPpm(), options.stepThresholdMs(),
                options.boundDriftPpm(), options.boundVoidS());
        open = true;
    }

    // ------------------------------------------------------------------ setup (no segment)

    /**
     * Opens the process's segment: this name (UTF-8), or the one the core resolves if null. If this
     * call creates it, it gets this mode ({@link Mode} code) and these tracking settings; the bound
     * settings are what this process publishes when it ties; 0 for each means the environment's
     * ({@code HRTS_MODE}, ..., {@code HRTS_BOUND_DRIFT_PPM}, {@code HRTS_BOUND_VOID_S}) or the
     * default.
     */
    static native void openSegment(byte[] utf8NameOrNull, int mode, long tieIntervalMs, long maxSlewPpm,
            long stepThresholdMs, long boundDriftPpm, long boundVoidS);

    static native long logicVersion();

    /** The address of a direct buffer's memory (for {@link #boundedAt}). */
    static native long directAddress(java.nio.ByteBuffer direct);

    /**
     * earliest and latest as two native-order longs at {@code address}, the memory of a direct
     * buffer of at least 16 bytes that the caller keeps reachable; returns the BoundStatus code.
     */
    static native int boundedAt(long address);

    static native String copyright();

    /**
     * Takes a shared fcntl lock on the library copy at this path (UTF-8) and keeps it, and its
     * file descriptor, until the process ends: other JVMs' cleanups leave a locked copy
     * ({@code io.hrts.internal.loader.ExtractedCopies}). Best effort; returns 0, or the errno that
     * prevented it.
     */
    static native int holdCopy(byte[] utf8Path);

    static native int pid();

    static native int tid();

    // ------------------------------------------------------------------ hot paths

    /**
     * The library's plain C twins of the hot paths (native/jni/src/downcalls.rs), which JDK 22+
     * call by FFM critical downcalls (the multi-release jar's {@code FfmHandles}), in this order:
     * {@link #epochNanos()}, {@link #epochNanosOrdered()}, {@link #epochMicros()}, {@link
     * #ticks()}, {@link #ticksToNanos(long)}, {@link #unique()}. Each returns its twin's value, or
     * {@link Long#MIN_VALUE} when it has none (the caller then makes the JNI call, which throws).
     */
    static final String[] DOWNCALLS = {"hrts_jni_ffm_epoch_nanos", "hrts_jni_ffm_epoch_nanos_ordered",
        "hrts_jni_ffm_epoch_micros", "hrts_jni_ffm_ticks", "hrts_jni_ffm_ticks_to_nanos", "hrts_jni_ffm_unique"};

    static native long epochNanos();

    static native long epochNanosOrdered();

    static native long epochMicros();

    static native long ticks();

    static native long ticksToNanos(long ticks);

    static native long unique();

    static native long generation();

    // ------------------------------------------------------------------ the rest

    static native BaseInfo baseInfo();

    static native BaseInfo setBaseInfo();

    static native long nextSequence();

    static native long itcNext();

    static native long itcToEpochNanos(long stamp);

    static native long itcMaxEventsPerTick();

    static native int itcEventBits();

    /** {@code len} stamps into {@code dst[off .. off+len)}; the caller checked the range. */
    static native void fillEpochNanos(long[] dst, int off, int len);

    static native SegmentInfo segmentInfo();

    /** The segment's {@link Mode} code. */
    static native int mode();

    static native TrackingState trackingState();

    /** CLOCK_REALTIME minus the timeline now, ns. */
    static native long offsetNanos();

    /** The attach checks again; {@link HrtsException.Kind#CORRUPT} on damage. */
    static native void validate();
}
