package io.hrts.consumer;

import io.hrts.HighResTimestamp;
import io.hrts.micrometer.HrtsMicrometerClock;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.concurrent.TimeUnit;

/** Times one operation with Micrometer on hrts's clock, depending on the adapter only. */
public final class AdapterMain {
    private AdapterMain() {}

    public static void main(String[] args) {
        SimpleMeterRegistry registry = new SimpleMeterRegistry(
                io.micrometer.core.instrument.simple.SimpleConfig.DEFAULT, HrtsMicrometerClock.instance());
        Timer timer = registry.timer("work");
        long before = HighResTimestamp.getEpochNanoseconds();
        timer.record(() -> Math.sqrt(before));
        long after = HighResTimestamp.getEpochNanoseconds();
        System.out.println("hrts maven adapter consumer: " + timer.count() + " timed, "
                + (long) timer.totalTime(TimeUnit.NANOSECONDS) + " ns of " + (after - before)
                + " ns between stamps " + before + " and " + after);
    }
}
