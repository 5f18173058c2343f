package io.hrts;

import java.time.Clock;
import java.time.Instant;
import java.util.Objects;

/**
 * High-resolution time stamps on the host's one shared timeline: the Java face of hrts, with
 * the methods of IBM's High Resolution Time Stamp Facility ({@code com.ibm.ibmts.ibmtslink})
 * and what hrts adds (nanoseconds, {@link Clock}, raw ticks, segment facts). Unique stamps,
 * sequence numbers and ITC stamps have classes of their own: {@link UniqueStamps}, {@link
 * Sequences}, {@link ItcStamps} (the methods for them here delegate to those).
 *
 * <p>Every process that uses the same segment &mdash; Rust, C (libhrts), the {@code hrts}
 * command, other JVMs &mdash; gets stamps from the same counter source, calibration and base,
 * so stamps taken in different processes and languages can be compared directly.
 *
 * <h2>Which segment</h2>
 * The system property {@value #SEGMENT_PROPERTY} names it (e.g. {@code /hrts-myapp}); without it
 * the native library chooses by the rule every language shares (docs/configuration.md, "Which
 * segment"): the environment variable {@code HRTS_SEGMENT}, else the host page of {@code hrts
 * daemon}, else the per-user default {@code /hrts-<uid>}. A named segment never uses the host page
 * and persists its sequence numbers where a C handle or {@code hrts --segment} on the same name
 * does. It is opened once per JVM, by the first call that needs it (or by {@link #open()}); if that
 * fails, the call throws {@link HrtsException} with the native message, and the next call
 * tries again (no {@link ExceptionInInitializerError}).
 *
 * <h2>Mode</h2>
 * A JVM that creates the segment (it did not exist yet) gives it the {@link Mode} of the system
 * property {@value #MODE_PROPERTY} ({@code tracking} or {@code frozen}), else of the environment
 * variable {@code HRTS_MODE}, else {@link Mode#TRACKING}; likewise the tracking settings
 * {@value #TIE_INTERVAL_PROPERTY}, {@value #MAX_SLEW_PROPERTY} and {@value
 * #STEP_THRESHOLD_PROPERTY} (else {@code HRTS_TIE_INTERVAL_MS}, {@code HRTS_MAX_SLEW_PPM},
 * {@code HRTS_STEP_THRESHOLD_MS}). A segment that exists keeps its creator's mode: {@link
 * #getMode()} and {@link #getTrackingState()} say what it has. The error bounds this JVM publishes
 * when it ties take {@value #BOUND_DRIFT_PROPERTY} and {@value #BOUND_VOID_PROPERTY} (else {@code
 * HRTS_BOUND_DRIFT_PPM}, {@code HRTS_BOUND_VOID_S}).
 *
 * <h2>Native or portable</h2>
 * The API runs on the native library where it loads, else (where {@value
 * NativeLoader#FALLBACK_PROPERTY} allows it: by default on a platform the jar has no library for,
 * such as macOS or Windows) on a portable implementation in pure Java: {@code System.nanoTime}
 * anchored to the system clock, this JVM's own timeline. It is never silent: one warning is logged
 * (System.Logger {@code io.hrts}) and {@link #implementation()} says which and why. What it cannot
 * keep: its stamps agree with no other process's, the bounded calls throw {@link
 * HrtsException.Kind#UNSYNCHRONIZED} (bound unknown), unique stamps and sequence numbers are
 * unique within this JVM only, {@link #getOSThreadID()} is the JVM's thread id, and {@link
 * Wtmlib} throws {@link HrtsException.Kind#LOAD}; the statistics ({@code io.hrts.stats}) run in
 * pure Java and are published nowhere, and trace files are written without sync rounds.
 *
 * <h2>Cost</h2>
 * The hot paths &mdash; {@link #getEpochNanoseconds()}, {@link #getEpochMicroseconds()},
 * {@link #ticks()}, {@link #ticksToNanos(long)}, {@link UniqueStamps#next()} &mdash; are a
 * volatile-boolean check plus one plain static native returning a {@code long}: no JNI callback,
 * no allocation. On JDK 22 and newer, where native access is enabled, that native is an FFM
 * critical downcall of the same library once the JVM has made some stamps (docs/java.md, "JNI or
 * FFM"): the same values, without JNI's thread-state transition.
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

    /**
     * Environment variable naming the segment when the system property is not set (read by the
     * native library, which resolves the default).
     */
    public static final String SEGMENT_ENV = "HRTS_SEGMENT";

    /**
     * System property choosing the {@link Mode} of a segment this JVM creates ({@code tracking}
     * or {@code frozen}; overrides {@code HRTS_MODE}).
     */
    public static final String MODE_PROPERTY = "hrts.mode";

    /**
     * System property setting the tie interval of a tracking segment this JVM creates, in
     * milliseconds, 1..60000 (overrides {@code HRTS_TIE_INTERVAL_MS}; default 1000).
     */
    public static final String TIE_INTERVAL_PROPERTY = "hrts.tieIntervalMs";

    /**
     * System property setting the largest slew (and learned frequency error) of a tracking segment
     * this JVM creates, in ppm, 1..50000 (overrides {@code HRTS_MAX_SLEW_PPM}; default 500).
     */
    public static final String MAX_SLEW_PROPERTY = "hrts.maxSlewPpm";

    /**
     * System property setting the step threshold of a tracking segment this JVM creates, in
     * milliseconds (overrides {@code HRTS_STEP_THRESHOLD_MS}; default 100): a system clock this far
     * ahead of the timeline is followed by a step forward.
     */
    public static final String STEP_THRESHOLD_PROPERTY = "hrts.stepThresholdMs";

    /**
     * System property setting the system clock's largest drift between two learnings of its error
     * bound, in ppm, 1..1000000 (overrides {@code HRTS_BOUND_DRIFT_PPM}; default 50): what this JVM
     * publishes when it ties (the writer's value counts).
     */
    public static final String BOUND_DRIFT_PROPERTY = "hrts.boundDriftPpm";

    /**
     * System property setting the seconds after which an error bound this JVM publishes is void,
     * 1..604800 (overrides {@code HRTS_BOUND_VOID_S}; default 60).
     */
    public static final String BOUND_VOID_PROPERTY = "hrts.boundVoidS";

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
        Backends.CURRENT.open();
    }

    /**
     * Which implementation this JVM uses and why: {@code native} (the library loaded from where)
     * or {@code portable} (why no native library is in use: the platform, its C library, the load
     * failure and the fallback policy). Chooses it if no call did yet: loads the native library,
     * but opens no segment.
     *
     * @return the implementation, the same for the JVM's life
     */
    public static Implementation implementation() {
        return Backends.CURRENT.implementation();
    }

    /**
     * How the hot paths reach the implementation now: {@code "ffm-critical"} (JDK 22+: FFM critical
     * downcalls, taken over from JNI once the JVM has made some stamps), {@code "jni"} (JDK 17, or
     * FFM not, or not yet, in use: the reason follows in parentheses) or {@code "portable"}. For
     * the tests and the self-test; docs/java.md, "JNI or FFM".
     *
     * @return the hot path's name, and why where it is not the fastest one
     */
    static String hotPath() {
        return Backends.CURRENT.hotPath();
    }

    /**
     * Whether the segment is open in this JVM.
     *
     * @return true once {@link #open()} (or any call that opens) succeeded
     */
    public static boolean isOpen() {
        return Backends.CURRENT.isOpen();
    }

    /**
     * The segment name this JVM asks for. Once open, {@link #getSegmentInfo()} gives the name
     * actually in use.
     *
     * @return {@value #SEGMENT_PROPERTY}, or null when it is not set: the native library then
     *     resolves the default ({@code HRTS_SEGMENT}, else the host page, else {@code /hrts-<uid>};
     *     docs/configuration.md, "Which segment")
     */
    public static String configuredSegmentName() {
        return OpenOptions.segmentName();
    }

    // ------------------------------------------------------------------ IBMTS methods

    /**
     * The library's logic version, packed as IBMTS did: a.b.c.d in 16 bits each (hrts's
     * major.minor.patch and the segment layout version). Needs no segment.
     *
     * @return the packed version; {@link #versionString(long)} formats it
     * @throws HrtsException if the native library cannot be loaded
     */
    public static long getLogicVersion() {
        return Backends.CURRENT.logicVersion();
    }

    /**
     * Formats a packed version.
     *
     * @param v a version packed as {@link #getLogicVersion()} packs it
     * @return {@code a.b.c.d}, e.g. {@code 0x0001000000000005 -> "1.0.0.5"}
     */
    public static String versionString(long v) {
        return (v >>> 48) + "." + ((v >>> 32) & 0xffff) + "." + ((v >>> 16) & 0xffff) + "." + (v & 0xffff);
    }

    /**
     * The operating-system id of this JVM process. Needs no segment.
     *
     * @return the pid
     * @throws HrtsException if the native library cannot be loaded
     */
    public static int getOSProcessID() {
        return Backends.CURRENT.pid();
    }

    /**
     * The Linux thread id (gettid) of the calling thread: distinct for every thread. Needs no
     * segment.
     *
     * @return the tid
     * @throws HrtsException if the native library cannot be loaded
     */
    public static int getOSThreadID() {
        return Backends.CURRENT.tid();
    }

    /**
     * The copyright line of the native library. Needs no segment.
     *
     * @return one line
     * @throws HrtsException if the native library cannot be loaded
     */
    public static String getCopyright() {
        return Backends.CURRENT.copyright();
    }

    /**
     * IBMTS {@code getBaseInfo}, from one consistent snapshot. {@link #getBaseInfoSnapshot()} adds
     * the nanoseconds and the generation.
     *
     * @return {frequency (counter ticks per second), base counter, base seconds, base
     *     microseconds} since the Unix epoch
     */
    public static long[] getBaseInfo() {
        return getBaseInfoSnapshot().toIbmtsArray();
    }

    /**
     * The base of the shared timeline, from one consistent snapshot.
     *
     * @return the base
     */
    public static BaseInfo getBaseInfoSnapshot() {
        return Backends.CURRENT.baseInfo();
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

    /**
     * {@link #setBaseInfo()} returning the new base.
     *
     * @return the new base
     * @throws HrtsException if the base cannot be taken (another process holds it too long)
     */
    public static BaseInfo resetBase() {
        return Backends.CURRENT.setBaseInfo();
    }

    /**
     * IBMTS {@code calcTimeStamp}: seconds since the epoch into {@code ts[0]} and microseconds
     * into {@code ts[1]}. The seconds are an unsigned 32-bit value, as in IBMTS: read them with
     * {@link Integer#toUnsignedLong(int)} (negative as a signed int after January 2038); {@link
     * #calcTimeStamp(long[])} has no such limit.
     *
     * @param ts receives seconds and microseconds in its first two elements
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
     * {@link #calcTimeStamp(int[])} with 64-bit seconds.
     *
     * @param ts receives seconds since the epoch in {@code ts[0]} and microseconds in {@code ts[1]}
     * @return {@link #IBMTS_SUCCESS}
     * @throws NullPointerException if {@code ts} is null
     * @throws IllegalArgumentException if {@code ts} has fewer than two elements
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

    /**
     * IBMTS {@code getEpochMicroseconds}. Hot path.
     *
     * @return microseconds since the Unix epoch
     */
    public static long getEpochMicroseconds() {
        return Backends.CURRENT.epochMicros();
    }

    /**
     * IBMTS {@code getEpochMicrosecondsAsLong}: {@link #getEpochMicroseconds()} boxed.
     *
     * @return microseconds since the Unix epoch
     */
    public static Long getEpochMicrosecondsAsLong() {
        return Long.valueOf(getEpochMicroseconds());
    }

    // ------------------------------------------------------------------ beyond IBMTS

    /**
     * Nanoseconds since the Unix epoch on the shared timeline. Hot path: the cheapest stamp
     * (an unordered counter read). For stamps taken right after an event that another thread
     * or process caused (e.g. a message received), {@link #getEpochNanosecondsOrdered()} keeps
     * the CPU from reading the counter before the preceding instructions.
     *
     * @return nanoseconds since the Unix epoch
     */
    public static long getEpochNanoseconds() {
        return Backends.CURRENT.epochNanos();
    }

    /**
     * {@link #getEpochNanoseconds()} with an ordered counter read (a few ns dearer). Hot path.
     *
     * @return nanoseconds since the Unix epoch
     */
    public static long getEpochNanosecondsOrdered() {
        return Backends.CURRENT.epochNanosOrdered();
    }

    /**
     * An interval that holds true time now (TrueTime's {@code TT.now()}): an ordered stamp widened
     * by the system clock's error bound (the time service's word, the line's own error at its last
     * tie, the counter's cross-CPU shift, and the drift since the bound was learned). Writes the
     * earliest and latest epoch nanoseconds into {@code out[0]} and {@code out[1]}; allocates
     * nothing.
     *
     * @param out an array of at least two elements
     * @return {@link BoundStatus#SYNCHRONIZED}, or {@link BoundStatus#FREE_RUNNING} when the time
     *     service's word is old (the interval then grows at the drift rate)
     * @throws HrtsException of kind {@link HrtsException.Kind#UNSYNCHRONIZED} when no interval can
     *     be given: the system clock is not synchronized, the bound is older than its void-after,
     *     the segment is frozen, or the counter or the clock was disrupted (seen by a writer, or
     *     by this call: an interval that excludes the system clock read around the stamp is never
     *     given); the message says which
     * @throws IllegalArgumentException if {@code out} has fewer than two elements
     */
    public static BoundStatus getBoundedEpochNanoseconds(long[] out) {
        if (out == null || out.length < 2) {
            throw new IllegalArgumentException("out must hold two longs: earliest and latest");
        }
        return Backends.CURRENT.bounded(out);
    }

    /**
     * TrueTime's {@code after(t)}: true time is certainly later than {@code t}.
     *
     * @param t epoch nanoseconds
     * @return whether the earliest possible true time now is after {@code t}
     * @throws HrtsException as {@link #getBoundedEpochNanoseconds(long[])}
     */
    public static boolean after(long t) {
        return Long.compareUnsigned(Backends.CURRENT.earliest(), t) > 0;
    }

    /**
     * TrueTime's {@code before(t)}: true time is certainly earlier than {@code t}.
     *
     * @param t epoch nanoseconds
     * @return whether the latest possible true time now is before {@code t}
     * @throws HrtsException as {@link #getBoundedEpochNanoseconds(long[])}
     */
    public static boolean before(long t) {
        return Long.compareUnsigned(Backends.CURRENT.latest(), t) < 0;
    }

    /**
     * Commit wait: returns once {@link #after(long)} holds for {@code t}, so that every later
     * interval, in any process, starts after {@code t}.
     *
     * @param t epoch nanoseconds (e.g. the latest bound of a write's stamp)
     * @throws HrtsException as {@link #getBoundedEpochNanoseconds(long[])}
     * @throws InterruptedException if interrupted while waiting
     */
    public static void commitWait(long t) throws InterruptedException {
        while (true) {
            long earliest = Backends.CURRENT.earliest();
            if (Long.compareUnsigned(earliest, t) > 0) {
                return;
            }
            long left = t - earliest + 1;
            long nanos = Math.max(left / 2, 1_000);
            Thread.sleep(nanos / 1_000_000, (int) (nanos % 1_000_000));
        }
    }

    /**
     * The current instant on the shared timeline.
     *
     * @return {@link #getEpochNanoseconds()} as an {@link Instant}
     */
    public static Instant now() {
        long ns = getEpochNanoseconds();
        return Instant.ofEpochSecond(Math.floorDiv(ns, 1_000_000_000L), Math.floorMod(ns, 1_000_000_000L));
    }

    /**
     * A {@link Clock} on the shared timeline, in the UTC zone.
     *
     * @return {@link HrtsClock#systemUTC()}
     */
    public static HrtsClock clock() {
        return HrtsClock.systemUTC();
    }

    /**
     * A raw counter read of the segment's source (TSC, CNTVCT, Time Base or {@code
     * CLOCK_MONOTONIC_RAW}). Hot path. Convert with {@link #ticksToNanos(long)}; ticks are
     * comparable across processes of the same segment.
     *
     * @return the counter value (unsigned 64-bit)
     */
    public static long ticks() {
        return Backends.CURRENT.ticks();
    }

    /**
     * The epoch nanoseconds of a value returned by {@link #ticks()}, against the current base:
     * exactly the stamp {@link #getEpochNanoseconds()} would have given at that counter value.
     * Never changes the shared base, whatever value is passed (nonsense in, nonsense out). Hot
     * path.
     *
     * @param ticks a counter value from {@link #ticks()}
     * @return nanoseconds since the Unix epoch
     */
    public static long ticksToNanos(long ticks) {
        return Backends.CURRENT.ticksToNanos(ticks);
    }

    /**
     * Fills {@code dst[off .. off+len)} with consecutive stamps ({@link #getEpochNanoseconds()}
     * semantics) in one native call: for tight loops that want many stamps cheaply.
     *
     * @param dst the array to fill
     * @param off the first index to write
     * @param len how many stamps to write
     * @throws NullPointerException if {@code dst} is null
     * @throws IndexOutOfBoundsException if the range is outside {@code dst}
     */
    public static void fillEpochNanoseconds(long[] dst, int off, int len) {
        Objects.requireNonNull(dst, "dst");
        Objects.checkFromIndexSize(off, len, dst.length);
        Backends.CURRENT.fillEpochNanos(dst, off, len);
    }

    /**
     * The base's generation.
     *
     * @return starts at 1, bumped by every base reset
     */
    public static long getGeneration() {
        return Backends.CURRENT.generation();
    }

    /**
     * What the segment records: name, counter source and why, calibration, evaluation, mode,
     * tracking state, offset from the system clock; what {@code hrts info} shows.
     *
     * @return the segment's facts
     */
    public static SegmentInfo getSegmentInfo() {
        return Backends.CURRENT.segmentInfo();
    }

    /**
     * The segment's mode, chosen by the process that created it (see "Mode" above).
     *
     * @return {@link Mode#TRACKING} or {@link Mode#FROZEN}
     */
    public static Mode getMode() {
        return Backends.CURRENT.mode();
    }

    /**
     * The segment's tracking state: its mode, tie settings, the slope's correction, tie and step
     * counts, repairs; one snapshot of what {@code hrts info} shows. Damaged tie statistics throw
     * {@link HrtsException} of kind CORRUPT (the next tie or move starts them again; {@link
     * SegmentInfo#isStatisticsValid()} tells without an exception).
     *
     * @return the state, the same for every process of the segment
     */
    public static TrackingState getTrackingState() {
        return Backends.CURRENT.trackingState();
    }

    /**
     * How far the shared timeline is from the system clock now: {@code CLOCK_REALTIME} minus the
     * segment's stamp, measured with the narrowest of several brackets ({@code offset ns} in
     * {@code hrts info}). A tracking segment keeps it small; a frozen one drifts by its
     * calibration error and does not follow steps of the clock.
     *
     * @return nanoseconds; positive when the timeline is behind the system clock
     */
    public static long getOffsetNanoseconds() {
        return Backends.CURRENT.offsetNanos();
    }

    /**
     * Checks the segment as attaching does: its header must be the one this JVM attached to and
     * its active base line must be intact.
     *
     * @throws HrtsException of kind {@link HrtsException.Kind#CORRUPT} if another process damaged
     *     it (the message says what)
     */
    public static void validate() {
        Backends.CURRENT.validate();
    }

    // ------------------------------------------------------------------ delegates

    /**
     * A unique stamp; delegates to {@link UniqueStamps#next()}. Hot path.
     *
     * @return epoch nanoseconds, strictly greater than every unique stamp issued before by any
     *     thread of any process of the segment
     */
    public static long getUniqueNanoseconds() {
        return UniqueStamps.next();
    }

    /**
     * The next Intel Trace Collector style stamp of this JVM; delegates to {@link
     * ItcStamps#next()}.
     *
     * @return the stamp
     * @throws HrtsException if the format in the environment is invalid or the run outlived
     *     the ticks a stamp can hold
     */
    public static long getItcStamp() {
        return ItcStamps.next();
    }

    /**
     * Epoch nanoseconds of an ITC stamp's clock tick; delegates to {@link
     * ItcStamps#toEpochNanoseconds(long)}.
     *
     * @param stamp a stamp from {@link #getItcStamp()}
     * @return nanoseconds since the Unix epoch
     */
    public static long itcToEpochNanoseconds(long stamp) {
        return ItcStamps.toEpochNanoseconds(stamp);
    }

    /**
     * The maximum number of this JVM's ITC stamps on one clock tick (0: none shared a tick);
     * delegates to {@link ItcStamps#maxEventsPerTick()}.
     *
     * @return the largest event counter issued so far
     */
    public static long getItcMaxEventsPerTick() {
        return ItcStamps.maxEventsPerTick();
    }

    /**
     * How many low-order bits of an ITC stamp hold the event counter; delegates to {@link
     * ItcStamps#eventBits()}.
     *
     * @return the event bits
     */
    public static int getItcEventBits() {
        return ItcStamps.eventBits();
    }

    /**
     * The segment's next sequence number; delegates to {@link Sequences#next()}.
     *
     * @return a number greater than every one issued before on this segment
     * @throws HrtsException if the sequence file cannot be read or written
     */
    public static long nextSequence() {
        return Sequences.next();
    }
}
