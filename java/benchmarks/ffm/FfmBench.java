package io.hrts;

/**
 * The hot paths by JNI and by FFM critical downcalls in one JVM, next to System.nanoTime: each
 * contender a static loop of CALLS calls, the contenders interleaved for ROUNDS rounds, the
 * minimum ns/call of the rounds after the first tenth. In package io.hrts to call the JNI natives
 * ({@code Native}) beside the API, which takes the downcalls on JDK 22+ once switched
 * (docs/java.md, "JNI or FFM").
 */
public final class FfmBench {
    private static volatile long sink;

    private FfmBench() {}

    private static long jniStamp(int n) {
        long a = 0;
        for (int i = 0; i < n; i++) {
            a += Native.epochNanos();
        }
        return a;
    }

    private static long apiStamp(int n) {
        long a = 0;
        for (int i = 0; i < n; i++) {
            a += HighResTimestamp.getEpochNanoseconds();
        }
        return a;
    }

    private static long nanoTime(int n) {
        long a = 0;
        for (int i = 0; i < n; i++) {
            a += System.nanoTime();
        }
        return a;
    }

    private static long jniUnique(int n) {
        long a = 0;
        for (int i = 0; i < n; i++) {
            a += Native.unique();
        }
        return a;
    }

    private static long apiUnique(int n) {
        long a = 0;
        for (int i = 0; i < n; i++) {
            a += UniqueStamps.next();
        }
        return a;
    }

    /** @param args ROUNDS CALLS */
    public static void main(String[] args) throws Exception {
        int rounds = Integer.parseInt(args[0]);
        int calls = Integer.parseInt(args[1]);
        HighResTimestamp.open();
        long end = System.nanoTime() + 10_000_000_000L;
        while (!HighResTimestamp.hotPath().equals("ffm-critical") && System.nanoTime() < end) {
            sink += apiStamp(1000);
            Thread.sleep(1);
        }
        System.out.println("ffm: java " + System.getProperty("java.version") + ", hot path: "
                + HighResTimestamp.hotPath());
        String[] names = {"JNI Native.epochNanos", "getEpochNanoseconds", "System.nanoTime", "JNI Native.unique",
            "UniqueStamps.next"};
        double[] min = new double[names.length];
        java.util.Arrays.fill(min, Double.MAX_VALUE);
        for (int r = 0; r < rounds; r++) {
            for (int c = 0; c < names.length; c++) {
                long t0 = System.nanoTime();
                switch (c) {
                    case 0: sink += jniStamp(calls); break;
                    case 1: sink += apiStamp(calls); break;
                    case 2: sink += nanoTime(calls); break;
                    case 3: sink += jniUnique(calls); break;
                    default: sink += apiUnique(calls); break;
                }
                double ns = (System.nanoTime() - t0) / (double) calls;
                if (r >= rounds / 10) {
                    min[c] = Math.min(min[c], ns);
                }
            }
        }
        for (int c = 0; c < names.length; c++) {
            System.out.printf("ffm: %-24s %6.2f ns%n", names[c], min[c]);
        }
    }
}
