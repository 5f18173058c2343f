package io.hrts;

/** Benchmark hooks (JMH): the floor a JNI stamp is measured against. Not an API. */
final class BenchHooks {
    private BenchHooks() {}

    /** Loads the native library (the hook lives in it). */
    static void load() {
        NativeLoader.load();
    }

    /** An empty static native returning a constant long: the cost of the JNI transition. */
    static native long emptyNative();
}
