package io.hrts;

import io.hrts.internal.ItcFormat;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Intel Trace Collector style stamps in pure Java, as the core's {@code ItcStamper} makes them:
 * the tick since the first stamp in the high bits, an event counter in the low {@link #eventBits},
 * strictly increasing (unsigned) within this JVM.
 */
final class PortableItc {
    final int eventBits;
    private final long tickNs;
    private final long originNs;
    private final AtomicLong last = new AtomicLong();
    private final AtomicLong maxEvent = new AtomicLong();

    PortableItc(int eventBits, long tickNs, long originNs) {
        ItcFormat.of(eventBits, tickNs);
        this.eventBits = eventBits;
        this.tickNs = tickNs;
        this.originNs = originNs;
    }

    /** The format of {@code HRTS_ITC_EVENT_BITS} and {@code HRTS_ITC_TICK_NS}, as the core reads it. */
    static PortableItc fromEnvironment(long originNs) {
        ItcFormat f = ItcFormat.fromEnvironment();
        return new PortableItc(f.eventBits, f.tickNs, originNs);
    }

    long next(long nowNs) {
        long tick = Math.max(0, nowNs - originNs) / tickNs;
        long maxTick = -1L >>> eventBits;
        if (Long.compareUnsigned(tick, maxTick) >= 0) {
            throw new HrtsException(HrtsException.Kind.INVALID_ARGUMENT, "ITC stamps with " + eventBits
                    + " event bits and " + tickNs + " ns ticks cover " + maxTick + " ticks from the start of the "
                    + "run, and this run has used them up: start a new run (a new process) or use coarser ticks "
                    + "(HRTS_ITC_TICK_NS)");
        }
        long fresh = tick << eventBits;
        long mask = (1L << eventBits) - 1;
        while (true) {
            long prev = last.get();
            long next = Long.compareUnsigned(fresh, prev) > 0 ? fresh : prev;
            if (last.compareAndSet(prev, next + 1)) {
                long event = next & mask;
                maxEvent.accumulateAndGet(event, Math::max);
                return next;
            }
        }
    }

    long toEpochNanos(long stamp) {
        return originNs + (stamp >>> eventBits) * tickNs;
    }

    long maxEventsPerTick() {
        return maxEvent.get();
    }
}
