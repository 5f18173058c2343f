package io.hrts;

/**
 * Which implementation this test JVM runs: the {@code test} task runs the native one, the {@code
 * testPortable} task the same API tests on the portable one ({@code -Dhrts.fallback=force}).
 */
final class Portable {
    private Portable() {}

    /** Whether this test JVM runs the portable implementation. */
    static boolean on() {
        return HighResTimestamp.implementation().isPortable();
    }
}
