package io.hrts;

/**
 * What the public classes ask of an implementation: {@link NativeBackend} (the native library) or
 * {@link PortableBackend} (pure Java). {@link Backends#CURRENT} holds the JVM's one, in a static
 * final field: the JIT knows its exact class, so a call through this interface is inlined as a
 * direct call and the native hot paths cost what they cost before there was a choice.
 *
 * <p>Every method that needs the segment opens it first (the native one) or needs nothing (the
 * portable one); the methods mean what the public methods that call them document.
 */
interface Backend {
    /** Which implementation this is, and why. */
    Implementation implementation();

    /**
     * How the hot paths reach the implementation now: {@code "ffm-critical"} (JDK 22+ FFM critical
     * downcalls of the native library), {@code "jni"} (plain static natives; with the reason in
     * parentheses where FFM could be used but is not, or not yet) or {@code "portable"}.
     */
    String hotPath();

    /** Opens the segment if not done yet (native); nothing to open (portable). */
    void open();

    boolean isOpen();

    long logicVersion();

    int pid();

    int tid();

    String copyright();

    BaseInfo baseInfo();

    BaseInfo setBaseInfo();

    long epochMicros();

    long epochNanos();

    long epochNanosOrdered();

    /** An interval that holds true time into {@code out[0..2)}; the status, or throws UNSYNCHRONIZED. */
    BoundStatus bounded(long[] out);

    /** The earliest true time now (TrueTime's {@code after}); throws as {@link #bounded}. */
    long earliest();

    /** The latest true time now (TrueTime's {@code before}); throws as {@link #bounded}. */
    long latest();

    long ticks();

    long ticksToNanos(long ticks);

    /** {@code len} stamps into {@code dst[off .. off+len)}; the caller checked the range. */
    void fillEpochNanos(long[] dst, int off, int len);

    long generation();

    SegmentInfo segmentInfo();

    Mode mode();

    TrackingState trackingState();

    long offsetNanos();

    void validate();

    long unique();

    long nextSequence();

    long itcNext();

    long itcToEpochNanos(long stamp);

    long itcMaxEventsPerTick();

    int itcEventBits();

    /**
     * Opens the segment for an API that only the native library has ({@code what}: WTMLIB, the
     * statistics, traces); the portable implementation throws {@link HrtsException.Kind#LOAD}
     * saying why the native library is not in use.
     */
    void requireNative(String what);
}
