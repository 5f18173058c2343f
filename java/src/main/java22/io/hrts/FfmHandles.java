package io.hrts;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;

/**
 * The FFM critical downcalls of the hot paths ({@code Linker.Option.critical(false)}: no
 * thread-state transition, no heap memory passed), to the plain C twins of the JNI hot paths in
 * the library {@link NativeLoader} loaded ({@link Native#DOWNCALLS}, native/jni/src/downcalls.rs).
 * JDK 22+ only. Initialised off the hot paths, by {@link FfmBackend}'s switch thread: building the
 * handles spins method handles, which a JVM's first stamp must not wait for.
 *
 * <p>A critical function must be short in every case and never call back into the JVM: the twins
 * read the segment (a tie of a tracking segment takes a few microseconds at most, once a second)
 * and return a {@code long}; the unique stamp's first call, which may open a segment, is made by
 * JNI. Each returns {@link #FAILED} where it has no value; the caller then makes the JNI call.
 */
@SuppressWarnings("restricted") // the Linker and the loader lookup: native access is checked by Downcalls
final class FfmHandles {
    /** What a downcall returns when it has no value to give (the library's {@code FAILED}). */
    static final long FAILED = Long.MIN_VALUE;

    private static final MethodHandle EPOCH_NANOS;
    private static final MethodHandle EPOCH_NANOS_ORDERED;
    private static final MethodHandle EPOCH_MICROS;
    private static final MethodHandle TICKS;
    private static final MethodHandle TICKS_TO_NANOS;
    private static final MethodHandle UNIQUE;

    static {
        Linker linker = Linker.nativeLinker();
        // The libraries this class's loader loaded: NativeLoader's System.load of libhrts_jni.
        SymbolLookup lookup = SymbolLookup.loaderLookup();
        FunctionDescriptor none = FunctionDescriptor.of(ValueLayout.JAVA_LONG);
        FunctionDescriptor one = FunctionDescriptor.of(ValueLayout.JAVA_LONG, ValueLayout.JAVA_LONG);
        Linker.Option critical = Linker.Option.critical(false);
        EPOCH_NANOS = linker.downcallHandle(find(lookup, 0), none, critical);
        EPOCH_NANOS_ORDERED = linker.downcallHandle(find(lookup, 1), none, critical);
        EPOCH_MICROS = linker.downcallHandle(find(lookup, 2), none, critical);
        TICKS = linker.downcallHandle(find(lookup, 3), none, critical);
        TICKS_TO_NANOS = linker.downcallHandle(find(lookup, 4), one, critical);
        UNIQUE = linker.downcallHandle(find(lookup, 5), none, critical);
    }

    private FfmHandles() {}

    private static MemorySegment find(SymbolLookup lookup, int i) {
        String name = Native.DOWNCALLS[i];
        java.util.Optional<MemorySegment> s = lookup.find(name);
        if (s.isEmpty()) {
            throw new UnsatisfiedLinkError("hrts: the loaded native library has no " + name
                    + " (a library of another hrts version, from -Dhrts.native.library or java.library.path?)");
        }
        return s.get();
    }

    /**
     * Builds the handles (this class's initialisation) and checks each downcall against its JNI
     * twin on the open segment.
     *
     * @return null, or what disagreed
     */
    static String check() {
        long before = Native.epochNanos();
        long nanos = epochNanos();
        long ordered = epochNanosOrdered();
        long micros = epochMicros();
        long ticks = ticks();
        long after = Native.epochNanos();
        if (nanos == FAILED || nanos < before || nanos > after) {
            return "epochNanos " + nanos + " outside the JNI stamps " + before + " .. " + after;
        }
        if (ordered == FAILED || ordered < nanos || ordered > after) {
            return "epochNanosOrdered " + ordered + " outside " + nanos + " .. " + after;
        }
        if (micros == FAILED || micros < before / 1000 || micros > after / 1000) {
            return "epochMicros " + micros + " outside " + before / 1000 + " .. " + after / 1000;
        }
        long at = ticksToNanos(ticks);
        if (ticks == FAILED || at == FAILED || Math.abs(at - Native.ticksToNanos(ticks)) > 1_000_000) {
            return "ticksToNanos(" + ticks + ") " + at + " against JNI's " + Native.ticksToNanos(ticks);
        }
        return null;
    }

    static long epochNanos() {
        try {
            return (long) EPOCH_NANOS.invokeExact();
        } catch (Throwable t) {
            return FAILED;
        }
    }

    static long epochNanosOrdered() {
        try {
            return (long) EPOCH_NANOS_ORDERED.invokeExact();
        } catch (Throwable t) {
            return FAILED;
        }
    }

    static long epochMicros() {
        try {
            return (long) EPOCH_MICROS.invokeExact();
        } catch (Throwable t) {
            return FAILED;
        }
    }

    static long ticks() {
        try {
            return (long) TICKS.invokeExact();
        } catch (Throwable t) {
            return FAILED;
        }
    }

    static long ticksToNanos(long ticks) {
        try {
            return (long) TICKS_TO_NANOS.invokeExact(ticks);
        } catch (Throwable t) {
            return FAILED;
        }
    }

    static long unique() {
        try {
            return (long) UNIQUE.invokeExact();
        } catch (Throwable t) {
            return FAILED;
        }
    }
}
