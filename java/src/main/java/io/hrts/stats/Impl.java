package io.hrts.stats;

import io.hrts.HighResTimestamp;

/**
 * Which statistics engine this JVM runs: the native library's (hrts-stats, over its queues and
 * cells in native memory) or {@link PortableStats} (pure Java, on the portable implementation). A
 * static final field of a class of its own: the JIT folds the branch, so the native measuring
 * points pay nothing for it, and loading this class touches neither engine.
 */
final class Impl {
    private Impl() {}

    /** True when this JVM runs the portable implementation (chosen once per JVM). */
    static final boolean PORTABLE = HighResTimestamp.implementation().isPortable();
}
