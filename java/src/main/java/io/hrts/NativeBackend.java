package io.hrts;

import java.lang.ref.Reference;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * The native library's implementation: every call opens the segment and calls {@link Native}. On
 * JDK 22+ the multi-release jar's {@code FfmBackend} extends it and takes the hot paths by FFM
 * critical downcalls instead ({@link Downcalls}).
 */
class NativeBackend implements Backend {
    private final Implementation implementation;
    private final String hotPath;

    /**
     * @param implementation what {@link #implementation()} says
     * @param hotPath what {@link #hotPath()} says: {@code "jni"}, with the reason in parentheses
     *     where FFM downcalls could be used but are not
     */
    NativeBackend(Implementation implementation, String hotPath) {
        this.implementation = implementation;
        this.hotPath = hotPath;
    }

    NativeBackend(Implementation implementation) {
        this(implementation, "jni");
    }

    @Override
    public Implementation implementation() {
        return implementation;
    }

    @Override
    public String hotPath() {
        return hotPath;
    }

    @Override
    public void open() {
        Native.open();
    }

    @Override
    public boolean isOpen() {
        return Native.isOpen();
    }

    @Override
    public long logicVersion() {
        Native.load();
        return Native.logicVersion();
    }

    @Override
    public int pid() {
        Native.load();
        return Native.pid();
    }

    @Override
    public int tid() {
        Native.load();
        return Native.tid();
    }

    @Override
    public String copyright() {
        Native.load();
        return Native.copyright();
    }

    @Override
    public BaseInfo baseInfo() {
        Native.open();
        return Native.baseInfo();
    }

    @Override
    public BaseInfo setBaseInfo() {
        Native.open();
        return Native.setBaseInfo();
    }

    @Override
    public long epochMicros() {
        Native.open();
        return Native.epochMicros();
    }

    @Override
    public long epochNanos() {
        Native.open();
        return Native.epochNanos();
    }

    @Override
    public long epochNanosOrdered() {
        Native.open();
        return Native.epochNanosOrdered();
    }

    @Override
    public BoundStatus bounded(long[] out) {
        Interval i = Interval.now();
        out[0] = i.earliest();
        out[1] = i.latest();
        return BoundStatus.fromCode(i.code);
    }

    @Override
    public long earliest() {
        return Interval.now().earliest();
    }

    @Override
    public long latest() {
        return Interval.now().latest();
    }

    /**
     * Each thread's 16 bytes of native memory that the library writes an interval into (writing
     * a Java array from native code is a VM entry that costs more than the interval itself): in a
     * holder class with no lambda, so that the first stamp of a JVM does not pay for it.
     */
    private static final class Interval {
        static final ThreadLocal<Interval> OF_THREAD = new ThreadLocal<Interval>() {
            @Override
            protected Interval initialValue() {
                return new Interval();
            }
        };

        final ByteBuffer memory = ByteBuffer.allocateDirect(16).order(ByteOrder.nativeOrder());
        final long address = Native.directAddress(memory);
        /** The status code of the interval last written. */
        int code;

        /** This thread's interval, filled with one that holds true time now. */
        static Interval now() {
            Native.open();
            Interval i = OF_THREAD.get();
            i.code = Native.boundedAt(i.address);
            Reference.reachabilityFence(i);
            return i;
        }

        long earliest() {
            return memory.getLong(0);
        }

        long latest() {
            return memory.getLong(8);
        }
    }

    @Override
    public long ticks() {
        Native.open();
        return Native.ticks();
    }

    @Override
    public long ticksToNanos(long ticks) {
        Native.open();
        return Native.ticksToNanos(ticks);
    }

    @Override
    public void fillEpochNanos(long[] dst, int off, int len) {
        Native.open();
        Native.fillEpochNanos(dst, off, len);
    }

    @Override
    public long generation() {
        Native.open();
        return Native.generation();
    }

    @Override
    public SegmentInfo segmentInfo() {
        Native.open();
        return Native.segmentInfo();
    }

    @Override
    public Mode mode() {
        Native.open();
        return Mode.fromCode(Native.mode());
    }

    @Override
    public TrackingState trackingState() {
        Native.open();
        return Native.trackingState();
    }

    @Override
    public long offsetNanos() {
        Native.open();
        return Native.offsetNanos();
    }

    @Override
    public void validate() {
        Native.open();
        Native.validate();
    }

    @Override
    public long unique() {
        Native.open();
        return Native.unique();
    }

    @Override
    public long nextSequence() {
        Native.open();
        return Native.nextSequence();
    }

    @Override
    public long itcNext() {
        Native.open();
        return Native.itcNext();
    }

    @Override
    public long itcToEpochNanos(long stamp) {
        Native.open();
        return Native.itcToEpochNanos(stamp);
    }

    @Override
    public long itcMaxEventsPerTick() {
        Native.open();
        return Native.itcMaxEventsPerTick();
    }

    @Override
    public int itcEventBits() {
        Native.open();
        return Native.itcEventBits();
    }

    @Override
    public void requireNative(String what) {
        Native.open();
    }
}
