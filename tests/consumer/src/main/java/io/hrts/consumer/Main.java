package io.hrts.consumer;

import io.hrts.HighResTimestamp;
import io.hrts.NativeLoader;

/** Prints one hrts time stamp, using hrts only as a Maven dependency. */
public final class Main {
    private Main() {}

    public static void main(String[] args) {
        long ns = HighResTimestamp.getEpochNanoseconds();
        System.out.println("hrts consumer: native library " + NativeLoader.loadedFrom());
        System.out.println("hrts consumer: stamp " + ns + " ns, pid " + HighResTimestamp.getOSProcessID()
                + ", tid " + HighResTimestamp.getOSThreadID());
    }
}
