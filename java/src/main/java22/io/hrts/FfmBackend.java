package io.hrts;

/**
 * The native implementation with its hot paths as FFM critical downcalls ({@link FfmHandles}):
 * JDK 22+ only (the multi-release jar's {@code META-INF/versions/22}). Every other call is
 * {@link NativeBackend}'s JNI call.
 *
 * <p>A JVM starts on JNI and takes the downcalls over once its hot paths have made {@value
 * #WARM_UP_CALLS} JNI calls that returned: the handles are built (a few ms, and method handles
 * spun) on a daemon thread of their own, checked against JNI, and then switched on for every
 * thread by one volatile flag. So a short-lived JVM's first stamp costs what it cost before, and no caller
 * waits for the switch. A hot path then is the flag's read, the downcall, and a compare with
 * {@link FfmHandles#FAILED}: on that value (the segment is not open, or the library caught a
 * failure) the JNI call is made, which opens the segment, or returns the value, or throws the
 * {@link HrtsException}.
 */
final class FfmBackend extends NativeBackend {
    /** JNI calls of the hot paths after which the downcalls are built. */
    static final int WARM_UP_CALLS = 10_000;

    /** The downcalls are built and checked: the hot paths take them. */
    private static volatile boolean on;
    /** {@link #on}, and a JNI unique stamp succeeded: its state segment is open. */
    private static volatile boolean uniqueOn;
    /** Hot-path JNI calls so far, up to the threshold (racy: it only needs to reach it once). */
    private static int jniCalls;
    /** Started building the downcalls. */
    private static boolean started;
    /** What {@link #hotPath()} says until the downcalls are on. */
    private static volatile String state = "jni (FFM critical downcalls after " + WARM_UP_CALLS + " stamps)";

    FfmBackend(Implementation implementation) {
        super(implementation, "ffm-critical");
    }

    @Override
    public String hotPath() {
        return on ? "ffm-critical" : state;
    }

    // ------------------------------------------------------------------ the hot paths

    @Override
    public long epochNanos() {
        if (on) {
            long v = FfmHandles.epochNanos();
            return v != FfmHandles.FAILED ? v : super.epochNanos();
        }
        return counted(super.epochNanos());
    }

    @Override
    public long epochNanosOrdered() {
        if (on) {
            long v = FfmHandles.epochNanosOrdered();
            return v != FfmHandles.FAILED ? v : super.epochNanosOrdered();
        }
        return counted(super.epochNanosOrdered());
    }

    @Override
    public long epochMicros() {
        if (on) {
            long v = FfmHandles.epochMicros();
            return v != FfmHandles.FAILED ? v : super.epochMicros();
        }
        return counted(super.epochMicros());
    }

    @Override
    public long ticks() {
        if (on) {
            long v = FfmHandles.ticks();
            return v != FfmHandles.FAILED ? v : super.ticks();
        }
        return counted(super.ticks());
    }

    @Override
    public long ticksToNanos(long ticks) {
        if (on) {
            long v = FfmHandles.ticksToNanos(ticks);
            return v != FfmHandles.FAILED ? v : super.ticksToNanos(ticks);
        }
        return counted(super.ticksToNanos(ticks));
    }

    @Override
    public long unique() {
        if (uniqueOn) {
            long v = FfmHandles.unique();
            return v != FfmHandles.FAILED ? v : super.unique();
        }
        long v = counted(super.unique());
        // A host page reader's first unique stamp opens its per-user segment: by JNI, as here.
        if (on) {
            uniqueOn = true;
        }
        return v;
    }

    // ------------------------------------------------------------------ the switch

    /**
     * Counts a hot-path JNI call that returned (so the segment is open); the one that reaches the
     * threshold starts the switch. Past it the count is only read: threads that stay on JNI (the
     * downcalls could not be built) do not write one shared word on every stamp.
     *
     * @param v the call's value
     * @return {@code v}
     */
    private static long counted(long v) {
        if (jniCalls < WARM_UP_CALLS && ++jniCalls == WARM_UP_CALLS) {
            start();
        }
        return v;
    }

    private static synchronized void start() {
        if (started) {
            return;
        }
        started = true;
        try {
            Thread t = new Switch();
            t.setDaemon(true);
            t.start();
        } catch (RuntimeException | Error e) {
            state = "jni (the FFM downcalls could not be built: " + e + ")";
        }
    }

    /** Builds and checks the downcalls, then switches them on. */
    private static final class Switch extends Thread {
        Switch() {
            super("hrts-ffm-downcalls");
        }

        @Override
        public void run() {
            try {
                String wrong = FfmHandles.check();
                if (wrong != null) {
                    state = "jni (the FFM downcalls disagree with JNI: " + wrong + ")";
                    return;
                }
                on = true;
            } catch (RuntimeException | Error e) {
                state = "jni (the FFM downcalls could not be built: " + e + ")";
            }
        }
    }
}
