package io.hrts;

/**
 * WTMLIB's operations on the process's segment's counter: the reliability evaluation across the
 * CPUs this thread may run on ({@link #evaluate}), the evaluation the segment's creator ran
 * ({@link #creationResult()}), the raw counter ({@link #counter()}), and the conversion of elapsed
 * ticks to nanoseconds with precomputed parameters ({@link #conversionParams()}, {@link
 * ConversionParams#ticksToNanos(long)}) with the seconds before the counter wraps. Every number is
 * the Rust core's, as the C functions {@code hrts_evaluate_reliability} and friends give it.
 *
 * <p>Native only: in the portable implementation every method throws {@link HrtsException} of kind
 * {@link HrtsException.Kind#LOAD} saying why the native library is not in use.
 *
 * <pre>{@code
 * Wtmlib.Result r = Wtmlib.evaluate(Wtmlib.Method.CAS_ORDERED_PROBES, 50, 0, 16);
 * Wtmlib.ConversionParams p = Wtmlib.conversionParams();
 * long start = Wtmlib.counter();
 * work();
 * long ns = p.ticksToNanos(Wtmlib.counter() - start);
 * }</pre>
 */
public final class Wtmlib {
    private Wtmlib() {}

    static final int RESULT_FIELDS = 15;
    static final int PARAM_FIELDS = 6;

    /** How the evaluation collects its probes. */
    public enum Method {
        /** One thread per CPU, ordered by compare-and-swap (WTMLIB's recommended method). */
        CAS_ORDERED_PROBES(1),
        /** One thread moving itself from CPU to CPU. */
        CPU_SWITCHING(2);

        final int code;

        Method(int code) {
            this.code = code;
        }

        static Method of(long code) {
            return code == 2 ? CPU_SWITCHING : CAS_ORDERED_PROBES;
        }
    }

    /** A reliability evaluation's result; -1 stands for "unbounded" or "not recorded". */
    public static final class Result {
        private final long[] f;
        private final String note;

        Result(long[] f, String note) {
            this.f = f.clone();
            this.note = note;
        }

        /** @return the method that collected the probes */
        public Method method() {
            return Method.of(f[0]);
        }

        /** @return the counter source id (1 monotonic-raw, 2 tsc, 3 cntvct, 4 timebase) */
        public int source() {
            return (int) f[1];
        }

        /** @return whether an evaluation ran (false for a creator that ran none) */
        public boolean evaluated() {
            return f[2] != 0;
        }

        /** @return whether no counter value was smaller than the one read before it */
        public boolean monotonic() {
            return f[3] != 0;
        }

        /** @return the bound on the shift between any two CPUs' counters in ticks, -1 unbounded */
        public long maxShiftTicks() {
            return f[4];
        }

        /** @return the same in nanoseconds (rounded up), -1 unbounded */
        public long maxShiftNanos() {
            return f[5];
        }

        /** @return how many times the counter decreased in sequence order */
        public long violations() {
            return f[6];
        }

        /** @return probes recorded (COP) or counter reads (CPU switching); 0 not recorded */
        public long probes() {
            return f[7];
        }

        /** @return cross-CPU transitions (COP) or switches made */
        public long switches() {
            return f[8];
        }

        /** @return how long the evaluation took, ns */
        public long elapsedNanos() {
            return f[9];
        }

        /** @return the CPUs that took part */
        public int cpus() {
            return (int) f[10];
        }

        /** @return the pace check: 0 not run, 1 same, 2 differs, 3 stuck, 4 unknown */
        public int pace() {
            return (int) f[11];
        }

        /** @return with pace 1 the largest difference not ruled out, with 2 the least proven, ppb */
        public long pacePpb() {
            return f[12];
        }

        /** @return the fewest hand-overs over every ordered pair of CPUs, -1 with one CPU */
        public long minPairHandovers() {
            return f[13];
        }

        /**
         * @return whether the probe sequence met the significance asked for (true with one CPU);
         *     false also when not recorded, see {@link #significanceRecorded()}
         */
        public boolean significant() {
            return f[14] == 1;
        }

        /** @return false for the creation-time result, which does not record the significance */
        public boolean significanceRecorded() {
            return f[14] != 2;
        }

        /** @return what the numbers alone do not say (one CPU, failed CPUs, too few hand-overs) */
        public String note() {
            return note;
        }

        @Override
        public String toString() {
            return "Wtmlib.Result{method=" + method() + ", monotonic=" + monotonic() + ", maxShiftNanos="
                    + maxShiftNanos() + ", cpus=" + cpus() + ", probes=" + probes() + ", significant="
                    + significant() + ", note=" + note + "}";
        }
    }

    /**
     * What converting elapsed ticks to nanoseconds needs (WTMLIB's conversion parameters, fio's
     * method): {@code ns = (ticks >>> modulusShift) * nsPerModulus + (((ticks & mask) * mult) >>>
     * shift)}, no division, exact to under 1 ns per modulus (about 4 s of ticks).
     */
    public static final class ConversionParams {
        private final long frequency;
        private final long mult;
        private final int shift;
        private final int modulusShift;
        private final long nsPerModulus;
        private final long secondsBeforeWrap;

        ConversionParams(long[] f) {
            frequency = f[0];
            mult = f[1];
            shift = (int) f[2];
            modulusShift = (int) f[3];
            nsPerModulus = f[4];
            secondsBeforeWrap = f[5];
        }

        /**
         * Nanoseconds in {@code ticks} elapsed counter ticks (a difference of two {@link
         * #counter()} values, unsigned).
         *
         * @param ticks elapsed ticks
         * @return nanoseconds
         */
        public long ticksToNanos(long ticks) {
            long mask = (1L << modulusShift) - 1;
            return (ticks >>> modulusShift) * nsPerModulus + (((ticks & mask) * mult) >>> shift);
        }

        /** @return the counter frequency, Hz (the segment's calibrated one) */
        public long frequency() {
            return frequency;
        }

        /** @return nanoseconds per tick times 2^shift */
        public long mult() {
            return mult;
        }

        /** @return the binary point of {@link #mult()} (32) */
        public int shift() {
            return shift;
        }

        /** @return a modulus is 2^modulusShift ticks */
        public int modulusShift() {
            return modulusShift;
        }

        /** @return whole nanoseconds in one modulus */
        public long nanosPerModulus() {
            return nsPerModulus;
        }

        /**
         * @return whole seconds before the counter wraps to zero, when the parameters were taken
         *     (WTMLIB's {@code secs_before_wrap}; -1: more than {@code Long.MAX_VALUE})
         */
        public long secondsBeforeWrap() {
            return secondsBeforeWrap;
        }
    }

    /**
     * Evaluates the counter's reliability across the CPUs of this thread's affinity mask (blocks
     * for about the budget).
     *
     * @param method how to collect probes
     * @param budgetMs time spent probing, ms; 0: 50
     * @param maxProbes stop after this many probes; 0: 200000
     * @param minHandovers the statistical significance asked for: the fewest hand-overs every
     *     ordered pair of CPUs must show for the result to be {@link Result#significant()}; 0:
     *     16; -1: 2^64 - 1
     * @return the result
     * @throws HrtsException if the segment cannot be opened or the evaluation fails
     */
    public static Result evaluate(Method method, long budgetMs, long maxProbes, long minHandovers) {
        Backends.CURRENT.requireNative("WTMLIB (io.hrts.Wtmlib)");
        long[] f = new long[RESULT_FIELDS];
        String note = nativeEvaluate(method.code, budgetMs, maxProbes, minHandovers, f);
        return new Result(f, note);
    }

    /**
     * The evaluation the segment's creator ran before it chose the counter: the verdicts, the
     * shift in ns, the CPUs and the pace (the counts are 0, the significance not recorded).
     *
     * @return the result; {@link Result#evaluated()} false if it ran none
     */
    public static Result creationResult() {
        Backends.CURRENT.requireNative("WTMLIB (io.hrts.Wtmlib)");
        long[] f = new long[RESULT_FIELDS];
        String note = nativeCreation(f);
        return new Result(f, note);
    }

    /**
     * The raw counter of the segment's source (TSC, CNTVCT, Time Base, or ns of
     * CLOCK_MONOTONIC_RAW), unordered.
     *
     * @return the counter value (unsigned)
     */
    public static long counter() {
        Backends.CURRENT.requireNative("WTMLIB (io.hrts.Wtmlib)");
        return nativeCounter();
    }

    /**
     * The conversion parameters at the segment's calibrated frequency, and the seconds before the
     * counter wraps.
     *
     * @return the parameters
     */
    public static ConversionParams conversionParams() {
        Backends.CURRENT.requireNative("WTMLIB (io.hrts.Wtmlib)");
        long[] f = new long[PARAM_FIELDS];
        nativeConversionParams(f);
        return new ConversionParams(f);
    }

    /** The Rust core's conversion with the segment's parameters (the tests' reference). */
    static long ticksToNanosReference(long ticks) {
        Backends.CURRENT.requireNative("WTMLIB (io.hrts.Wtmlib)");
        return ticksToNanosInRust(ticks);
    }

    private static native String nativeEvaluate(int method, long budgetMs, long maxProbes,
            long minHandovers, long[] out);

    private static native String nativeCreation(long[] out);

    private static native void nativeConversionParams(long[] out);

    private static native long nativeCounter();

    private static native long ticksToNanosInRust(long ticks);
}
