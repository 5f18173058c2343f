package io.hrts;

import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Instant;
import java.util.Objects;

/**
 * High-resolution time stamps on the host's one shared timeline: the Java face of hrts, with
 * the methods of IBM's High Resolution Time Stamp Facility ({@code com.ibm.ibmts.ibmtslink})
 * and what hrts adds (nanoseconds, {@link Clock}, unique stamps, sequence numbers).
 *
 * <p>Every process that uses the same segment &mdash; Rust, C (libhrts), the {@code hrts}
 * command, other JVMs &mdash; gets stamps from the same counter source, calibration and base,
 * so stamps taken in different processes and languages can be compared directly.
 *
 * <h2>Which segment</h2>
 * The system property {@value #SEGMENT_PROPERTY} names it (e.g. {@code /hrts-myapp}), else the
 * environment variable {@code HRTS_SEGMENT}, else the per-user default {@code /hrts-<uid>}.
 * It is opened once per JVM, by the first call that needs it (or by {@link #open()}); if that
 * fails, the call throws {@link HrtsException} with the native message, and the next call
 * tries again (no {@link ExceptionInInitializerError}).
 *
 * <h2>Cost</h2>
 * The hot paths &mdash; {@link #getEpochNanoseconds()}, {@link #getEpochMicroseconds()},
 * {@link #ticks()}, {@link #ticksToNanos(long)}, {@link #getUniqueNanoseconds()} &mdash; are a
 * volatile-boolean check plus one plain static native returning a {@code long}: no JNI callback,
 * no allocation.
 *
 * <h2>IBMTS compatibility</h2>
 * The methods are static; a public constructor is kept so that IBMTS-style code such as
 * {@code new HighResTimestamp().getLogicVersion()} compiles unchanged.
 */
public final class HighResTimestamp {
    /** IBMTS's success status, returned by {@link #calcTimeStamp(int[])}. */
    public static final int IBMTS_SUCCESS = 0;

    /** System property naming the segment (overrides {@code HRTS_SEGMENT}). */
    public static final String SEGMENT_PROPERTY = "hrts.segment";

    /** Environment variable naming the segment when the system property is not set. */
    public static final String SEGMENT_ENV = "HRTS_SEGMENT";

    private static final int BASE_INFO_LEN = 6;
    private static final int FILL_CHUNK = 1 << 14;

    /** True once the native library is loaded. */
    private static volatile boolean loaded;
    /** True once the segment is open; checked on every hot path. */
    private static volatile boolean open;

    /** IBMTS-style instance; every method is static, so instances carry no state. */
    public HighResTimestamp() {}

    // ------------------------------------------------------------------ opening

    /**
     * Loads the native library and opens the segment, if not done yet. Called by every method
     * that needs it; call it yourself to fail early.
     *
     * @throws HrtsException if the library cannot be loaded or the segment cannot be opened
     *     (foreign, corrupt, other user's, ...); a later call tries again
     */
    public static void open() {
        if (!open) {
            ensureOpen();
        }
    }

    /** Whether the segment is open in this JVM. */
    public static boolean isOpen() {
        return open;
    }

    /**
     * The segment name this JVM uses (or will use): {@value #SEGMENT_PROPERTY}, else {@code
     * HRTS_SEGMENT}, else null for the native default {@code /hrts-<uid>}. Once open, {@link
     * #getSegmentInfo()} gives the name actually in use.
     */
    public static String configuredSegmentName() {
        String p = System.getProperty(SEGMENT_PROPERTY);
        if (p != null && !p.isEmpty()) {
            return p;
        }
        String e = System.getenv(SEGMENT_ENV);
        return e != null && !e.isEmpty() ? e : null;
    }

    private static synchronized void ensureOpen() {
        if (open) {
            return;
        }
        ensureLoaded();
        String name = configuredSegmentName();
        nOpen(name == null ? null : name.getBytes(StandardCharsets.UTF_8));
        open = true;
    }

    private static void ensureLoaded() {
        if (!loaded) {
            synchronized (HighResTimestamp.class) {
                if (!loaded) {
                    NativeLoader.load();
                    loaded = true;
                }
            }
        }
    }

    // ------------------------------------------------------------------ IBMTS methods

    /**
     * The library's logic version, packed as IBMTS did: a.b.c.d in 16 bits each (hrts's
     * major.minor.patch and the segment layout version). {@link #versionString(long)} formats
     * it. Needs no segment.
     */
    public static long getLogicVersion() {
        ensureLoaded();
        return nLogicVersion();
    }

    /** {@code a.b.c.d} of a packed version, e.g. {@code 0x0001000000000005 -> "1.0.0.5"}. */
    public static String versionString(long v) {
        return (v >>> 48) + "." + ((v >>> 32) & 0xffff) + "." + ((v >>> 16) & 0xffff) + "." + (v & 0xffff);
    }

    /** The operating-system id of this JVM process. Needs no segment. */
    public static int getOSProcessID() {
        ensureLoaded();
        return nPid();
    }

    /** The Linux thread id (gettid) of the calling thread: distinct for every thread. */
    public static int getOSThreadID() {
        ensureLoaded();
        return nTid();
    }

    /** The copyright line of the native library. Needs no segment. */
    public static String getCopyright() {
        ensureLoaded();
        return nCopyright();
    }

    /**
     * IBMTS {@code getBaseInfo}: {frequency (counter ticks per second), base counter, base
     * seconds, base microseconds} since the Unix epoch, from one consistent snapshot. {@link
     * #getBaseInfoSnapshot()} adds the nanoseconds and the generation.
     */
    public static long[] getBaseInfo() {
        return getBaseInfoSnapshot().toIbmtsArray();
    }

    /** The base of the shared timeline, from one consistent snapshot. */
    public static BaseInfo getBaseInfoSnapshot() {
        open();
        long[] v = new long[BASE_INFO_LEN];
        nBaseInfo(v);
        return new BaseInfo(v);
    }

    /**
     * IBMTS {@code setBaseInfo}: pairs the counter with the system's calendar clock anew and
     * bumps the generation. This moves the timeline of <em>every</em> process attached to the
     * segment (as it did in IBMTS); it is the one way a change of the system clock reaches it.
     *
     * @throws HrtsException if the base cannot be taken (another process holds it too long)
     */
    public static void setBaseInfo() {
        resetBase();
    }

    /** {@link #setBaseInfo()} returning the new base. */
    public static BaseInfo resetBase() {
        open();
        long[] v = new long[BASE_INFO_LEN];
        nSetBaseInfo(v);
        return new BaseInfo(v);
    }

    /**
     * IBMTS {@code calcTimeStamp}: seconds since the epoch into {@code ts[0]} and microseconds
     * into {@code ts[1]}. The seconds are an unsigned 32-bit value, as in IBMTS: read them with
     * {@link Integer#toUnsignedLong(int)} (negative as a signed int after January 2038); {@link
     * #calcTimeStamp(long[])} has no such limit.
     *
     * @return {@link #IBMTS_SUCCESS}
     * @throws NullPointerException if {@code ts} is null
     * @throws IllegalArgumentException if {@code ts} has fewer than two elements
     */
    public static int calcTimeStamp(int[] ts) {
        Objects.requireNonNull(ts, "ts");
        if (ts.length < 2) {
            throw new IllegalArgumentException("calcTimeStamp needs an int[2], got int[" + ts.length + "]");
        }
        long ns = getEpochNanoseconds();
        ts[0] = (int) (ns / 1_000_000_000L);
        ts[1] = (int) (ns % 1_000_000_000L / 1_000L);
        return IBMTS_SUCCESS;
    }

    /**
     * {@link #calcTimeStamp(int[])} with 64-bit seconds: {@code ts[0]} seconds since the epoch,
     * {@code ts[1]} microseconds.
     *
     * @return {@link #IBMTS_SUCCESS}
     */
    public static int calcTimeStamp(long[] ts) {
        Objects.requireNonNull(ts, "ts");
        if (ts.length < 2) {
            throw new IllegalArgumentException("calcTimeStamp needs a long[2], got long[" + ts.length + "]");
        }
        long ns = getEpochNanoseconds();
        ts[0] = ns / 1_000_000_000L;
        ts[1] = ns % 1_000_000_000L / 1_000L;
        return IBMTS_SUCCESS;
    }

    /** IBMTS {@code getEpochMicroseconds}: microseconds since the Unix epoch. Hot path. */
    public static long getEpochMicroseconds() {
        open();
        return nEpochMicros();
    }

    /** IBMTS {@code getEpochMicrosecondsAsLong}: {@link #getEpochMicroseconds()} boxed. */
    public static Long getEpochMicrosecondsAsLong() {
        return Long.valueOf(getEpochMicroseconds());
    }

    // ------------------------------------------------------------------ beyond IBMTS

    /**
     * Nanoseconds since the Unix epoch on the shared timeline. Hot path: the cheapest stamp
     * (an unordered counter read). For stamps taken right after an event that another thread
     * or process caused (e.g. a message received), {@link #getEpochNanosecondsOrdered()} keeps
     * the CPU from reading the counter before the preceding instructions.
     */
    public static long getEpochNanoseconds() {
        open();
        return nEpochNanos();
    }

    /** {@link #getEpochNanoseconds()} with an ordered counter read (a few ns dearer). */
    public static long getEpochNanosecondsOrdered() {
        open();
        return nEpochNanosOrdered();
    }

    /** The current instant on the shared timeline. */
    public static Instant now() {
        long ns = getEpochNanoseconds();
        return Instant.ofEpochSecond(Math.floorDiv(ns, 1_000_000_000L), Math.floorMod(ns, 1_000_000_000L));
    }

    /** A {@link Clock} on the shared timeline, in the UTC zone. */
    public static HrtsClock clock() {
        return HrtsClock.systemUTC();
    }

    /**
     * A raw counter read of the segment's source (TSC, CNTVCT, Time Base or {@code
     * CLOCK_MONOTONIC_RAW}). Hot path. Convert with {@link #ticksToNanos(long)}; ticks are
     * comparable across processes of the same segment.
     */
    public static long ticks() {
        open();
        return nTicks();
    }

    /**
     * The epoch nanoseconds of a value returned by {@link #ticks()}, against the current base:
     * exactly the stamp {@link #getEpochNanoseconds()} would have given at that counter value.
     * Never changes the shared base, whatever value is passed (nonsense in, nonsense out).
     */
    public static long ticksToNanos(long ticks) {
        open();
        return nTicksToNanos(ticks);
    }

    /**
     * Fills {@code dst[off .. off+len)} with consecutive stamps ({@link #getEpochNanoseconds()}
     * semantics) in one native call: for tight loops that want many stamps cheaply.
     *
     * @throws NullPointerException if {@code dst} is null
     * @throws IndexOutOfBoundsException if the range is outside {@code dst}
     */
    public static void fillEpochNanoseconds(long[] dst, int off, int len) {
        Objects.requireNonNull(dst, "dst");
        Objects.checkFromIndexSize(off, len, dst.length);
        open();
        // In chunks: the native side pins the array (a JNI critical region) while it writes, and
        // a huge range must not hold the garbage collector off for long.
        for (int done = 0; done < len; ) {
            int n = Math.min(len - done, FILL_CHUNK);
            nFillEpochNanos(dst, off + done, n);
            done += n;
        }
    }

    /**
     * A unique stamp: epoch nanoseconds strictly greater than every unique stamp issued
     * before, by any thread of any process of the segment (the real time, or the last + 1 when
     * callers collide). Hot path.
     */
    public static long getUniqueNanoseconds() {
        open();
        return nUnique();
    }

    /**
     * The next Intel Trace Collector style stamp of this JVM: the clock tick since the JVM's
     * first ITC stamp in the high bits and an event counter in the low
     * {@link #getItcEventBits()} bits (13 unless {@code HRTS_ITC_EVENT_BITS} says otherwise),
     * unique within this process even when the tick ({@code HRTS_ITC_TICK_NS}, default 1 ns) is
     * coarse. Convert with {@link #itcToEpochNanoseconds(long)}.
     *
     * @throws HrtsException if the format in the environment is invalid or the run outlived
     *     the ticks a stamp can hold
     */
    public static long getItcStamp() {
        open();
        return nItcNext();
    }

    /** Epoch nanoseconds of an ITC stamp's clock tick (the event counter is dropped). */
    public static long itcToEpochNanoseconds(long stamp) {
        open();
        return nItcToEpochNanos(stamp);
    }

    /** The most ITC stamps of this JVM that shared one clock tick (1: the clock resolved all). */
    public static long getItcMaxEventsPerTick() {
        open();
        return nItcMaxEventsPerTick();
    }

    /** How many low-order bits of an ITC stamp hold the event counter. */
    public static int getItcEventBits() {
        open();
        return nItcEventBits();
    }

    /**
     * The segment's next sequence number, shared by every process of the segment and never
     * repeated, even across crashes and reboots (persisted in a file).
     *
     * @throws HrtsException if the sequence file cannot be read or written
     */
    public static long nextSequence() {
        open();
        return nNextSequence();
    }

    /** The base's generation: starts at 1, bumped by every base reset. */
    public static long getGeneration() {
        open();
        return nGeneration();
    }

    /** What the segment records: name, counter source and why, calibration, evaluation. */
    public static SegmentInfo getSegmentInfo() {
        open();
        return SegmentInfo.parse(nInfo());
    }

    // ------------------------------------------------------------------ natives

    private static native void nOpen(byte[] utf8NameOrNull);

    private static native long nLogicVersion();

    private static native String nCopyright();

    private static native int nPid();

    private static native int nTid();

    private static native long nEpochNanos();

    private static native long nEpochNanosOrdered();

    private static native long nEpochMicros();

    private static native long nTicks();

    private static native long nTicksToNanos(long ticks);

    private static native long nUnique();

    private static native long nGeneration();

    private static native void nBaseInfo(long[] dst);

    private static native void nSetBaseInfo(long[] dst);

    private static native long nNextSequence();

    private static native long nItcNext();

    private static native long nItcToEpochNanos(long stamp);

    private static native long nItcMaxEventsPerTick();

    private static native int nItcEventBits();

    private static native void nFillEpochNanos(long[] dst, int off, int len);

    private static native String nInfo();
}
