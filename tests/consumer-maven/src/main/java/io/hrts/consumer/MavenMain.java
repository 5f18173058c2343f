package io.hrts.consumer;

import io.hrts.HighResTimestamp;
import io.hrts.NativeLoader;
import java.time.ZonedDateTime;

/** Prints one hrts time stamp, using hrts only as a Maven dependency. */
public final class MavenMain {
    private MavenMain() {}

    public static void main(String[] args) {
        long ns = HighResTimestamp.getEpochNanoseconds();
        System.out.println("hrts maven consumer: native library " + NativeLoader.loadedFrom()
                + " (jar platforms " + NativeLoader.packagedPlatforms() + ")");
        System.out.println("hrts maven consumer: stamp " + ns + " ns, "
                + ZonedDateTime.now(HighResTimestamp.clock()));
    }
}
