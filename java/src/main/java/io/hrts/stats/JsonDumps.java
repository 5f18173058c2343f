package io.hrts.stats;

/**
 * The library's periodic JSON dump (handystats' {@code json-dump.interval}) from Java: the text
 * it made last, and why writing the {@code json-dump.file} target last failed.
 *
 * <pre>{@code
 * Stats.configureJson("{\"json-dump\": {\"interval\": 500, \"file\": \"/var/tmp/app-stats.json\"}}");
 * Stats.start();
 * ...
 * String json = JsonDumps.latest(); // the dump of at most 500 ms ago; also in the file
 * }</pre>
 */
public final class JsonDumps {
    private JsonDumps() {}

    /**
     * The latest JSON dump the library made: every {@code json-dump.interval} while running, on
     * request ({@link Stats#jsonDump()}), or at stop.
     *
     * @return the JSON text, or null if none was made yet
     */
    public static String latest() {
        Stats.ensureReady();
        return Impl.PORTABLE ? PortableStats.latestJson() : nLatest();
    }

    /**
     * Why the last write of the {@code json-dump.file} target failed.
     *
     * @return the message, or null after a success or when no file is configured
     */
    public static String fileError() {
        Stats.ensureReady();
        return Impl.PORTABLE ? PortableStats.fileError() : nFileError();
    }

    private static native String nLatest();

    private static native String nFileError();
}
