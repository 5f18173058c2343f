package io.hrts;

import java.util.concurrent.atomic.AtomicLong;

/**
 * The portable implementation, in pure Java: stamps from {@link PortableClock}, unique stamps and
 * sequence numbers from this JVM's own state. What it cannot keep, it says (docs/java.md, "The
 * portable implementation"): stamps agree with no other process, no bound is known, and unique
 * stamps and sequence numbers are unique within this JVM.
 */
final class PortableBackend implements Backend {
    /** The segment layout word of the packed version: none, there is no segment. */
    private static final long NO_LAYOUT = 0;

    private final Implementation implementation;
    private final PortableClock clock = new PortableClock();
    /** The last unique stamp issued by this JVM. */
    private final AtomicLong lastUnique = new AtomicLong(Long.MIN_VALUE);
    private final Object sequenceLock = new Object();
    private long lastSequence; // guarded by sequenceLock
    private volatile PortableItc itc;

    PortableBackend(Implementation implementation) {
        this.implementation = implementation;
    }

    @Override
    public Implementation implementation() {
        return implementation;
    }

    @Override
    public String hotPath() {
        return "portable";
    }

    @Override
    public void open() {
        // No segment: nothing to open.
    }

    @Override
    public boolean isOpen() {
        return true;
    }

    @Override
    public long logicVersion() {
        String[] v = NativeLoader.version().split("[.-]");
        long packed = 0;
        for (int i = 0; i < 3; i++) {
            long part = 0;
            if (i < v.length) {
                try {
                    part = Long.parseLong(v[i]) & 0xffff;
                } catch (NumberFormatException e) {
                    part = 0;
                }
            }
            packed = packed << 16 | part;
        }
        return packed << 16 | NO_LAYOUT;
    }

    @Override
    public int pid() {
        return (int) ProcessHandle.current().pid();
    }

    /** Java has no portable OS thread id: the JVM's thread id, distinct among live threads. */
    @Override
    public int tid() {
        return (int) Thread.currentThread().getId();
    }

    @Override
    public String copyright() {
        return "hrts: (c) the hrts authors, Apache-2.0. Inspired by IBM's High Resolution Time Stamp Facility.";
    }

    @Override
    public BaseInfo baseInfo() {
        PortableClock.Anchor a = clock.anchor();
        long ns = a.base;
        return new BaseInfo(1_000_000_000L, a.start, Math.floorDiv(ns, 1_000_000_000L),
                Math.floorMod(ns, 1_000_000_000L) / 1_000L, ns, clock.generation());
    }

    @Override
    public BaseInfo setBaseInfo() {
        clock.reset();
        return baseInfo();
    }

    @Override
    public long epochMicros() {
        return clock.epochNanos() / 1_000L;
    }

    @Override
    public long epochNanos() {
        return clock.epochNanos();
    }

    /** {@code nanoTime} is no speculative counter read: the plain stamp is ordered already. */
    @Override
    public long epochNanosOrdered() {
        return clock.epochNanos();
    }

    @Override
    public BoundStatus bounded(long[] out) {
        throw unbounded();
    }

    @Override
    public long earliest() {
        throw unbounded();
    }

    @Override
    public long latest() {
        throw unbounded();
    }

    private HrtsException unbounded() {
        return new HrtsException(HrtsException.Kind.UNSYNCHRONIZED, "hrts: bound status unknown: the portable "
                + "implementation knows no error bound of the system clock (" + implementation.reason()
                + "); use the native library for bounded stamps");
    }

    @Override
    public long ticks() {
        return System.nanoTime();
    }

    @Override
    public long ticksToNanos(long ticks) {
        return clock.ticksToNanos(ticks);
    }

    @Override
    public void fillEpochNanos(long[] dst, int off, int len) {
        for (int i = off; i < off + len; i++) {
            dst[i] = clock.epochNanos();
        }
    }

    @Override
    public long generation() {
        return clock.generation();
    }

    @Override
    public SegmentInfo segmentInfo() {
        PortableClock.Anchor a = clock.anchor();
        long pid = ProcessHandle.current().pid();
        return new SegmentInfo("portable implementation (this JVM's own timeline): " + implementation.reason(),
                null, "none (portable implementation)", NO_LAYOUT, "nanotime",
                "System.nanoTime anchored to the system clock (no native library in use)", "none",
                1_000_000_000L, 0, 0, 0, false, false, -1, 0, 0, -1, pid, 0, clock.createdEpochNs,
                clock.generation(), a.start, a.base, 1L << 32, 32, 0, clock.ties(), offsetNanos(),
                clock.trackingState(), true,
                // No disruption record: the portable implementation watches for none.
                false, 0, 0, 0, false);
    }

    @Override
    public Mode mode() {
        return Mode.TRACKING;
    }

    @Override
    public TrackingState trackingState() {
        return clock.trackingState();
    }

    @Override
    public long offsetNanos() {
        long wall = PortableClock.wallNanos();
        return wall - clock.epochNanos();
    }

    @Override
    public void validate() {
        // No segment that another process could damage.
    }

    @Override
    public long unique() {
        long now = clock.epochNanos();
        while (true) {
            long last = lastUnique.get();
            long next = Math.max(now, last + 1);
            if (lastUnique.compareAndSet(last, next)) {
                return next;
            }
        }
    }

    /**
     * Numbers from this JVM's first stamp on: larger than every number an earlier JVM on this
     * machine issued, unless it issued more than one per nanosecond of its run or the system clock
     * was set back since (there is no file to persist them in).
     */
    @Override
    public long nextSequence() {
        synchronized (sequenceLock) {
            lastSequence = Math.max(lastSequence + 1, clock.epochNanos());
            return lastSequence;
        }
    }

    private PortableItc itc() {
        PortableItc i = itc;
        if (i == null) {
            synchronized (this) {
                i = itc;
                if (i == null) {
                    i = PortableItc.fromEnvironment(clock.epochNanos());
                    itc = i;
                }
            }
        }
        return i;
    }

    @Override
    public long itcNext() {
        return itc().next(clock.epochNanos());
    }

    @Override
    public long itcToEpochNanos(long stamp) {
        return itc().toEpochNanos(stamp);
    }

    @Override
    public long itcMaxEventsPerTick() {
        return itc().maxEventsPerTick();
    }

    @Override
    public int itcEventBits() {
        return itc().eventBits;
    }

    @Override
    public void requireNative(String what) {
        throw new HrtsException(HrtsException.Kind.LOAD, "hrts: " + what + " needs the native library, and this "
                + "JVM runs the portable implementation (" + implementation.reason() + ")");
    }
}
