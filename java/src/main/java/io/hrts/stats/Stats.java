package io.hrts.stats;

import io.hrts.HighResTimestamp;
import io.hrts.HrtsException;
import java.nio.charset.StandardCharsets;

/**
 * Runtime statistics of this process (the hrts-stats library's process-wide instance, shared
 * with Rust and C code in the same process): counters, gauges and timers addressed by name,
 * aggregated off the measuring point by incremental statistics (min, max, sum, count, mean,
 * moving average, interval count/sum/mean, p50/p90/p99/p99.9), stamped on the hrts timeline.
 *
 * <pre>{@code
 * Stats.configureJson("{\"handystats\": {\"timer\": {\"idle-timeout\": 5000}}}"); // optional
 * Stats.start();
 * static final Counter REQUESTS = Stats.counter("requests");
 * static final Timer LATENCY = Stats.timer("latency");
 * REQUESTS.increment();
 * try (Timer.Scope s = LATENCY.scope()) {
 *     handle();
 * }
 * String json = Stats.jsonDump();
 * Stats.stop();
 * }</pre>
 *
 * <p>Measuring points ({@link Counter}, {@link Gauge}, {@link Timer#record(long)}, {@link
 * Timer.Scope}) write the calling thread's own queue and cells in native memory: no lock, no
 * allocation after the thread's first measurement, no native call except precise stamps. A
 * counter's delta or a gauge's value takes no stamp: it is summed into the thread's cell for the
 * metric and stamped by the processing pass that takes it, unless the configuration key {@code
 * exact-stamps} lists the metric; timer events and counter inits take precise stamps. Nothing is
 * recorded before {@link #start()} or after {@link #stop()}. Each thread that measures gets a
 * queue of its own (about 50 KiB by default), released after the thread is gone.
 *
 * <p>On the portable implementation ({@link HighResTimestamp#implementation()}) the same API,
 * configuration and statistics run in pure Java, stamped on the JVM's own timeline: counter
 * deltas and gauge sets are summed per thread and taken by each pass (each dump), every other
 * event is applied when it happens. They are published nowhere ({@link SharedStats} throws
 * {@code LOAD}, {@code hrts stats} does not see them) and a shared timer is shared within this
 * JVM only.
 *
 * <p>Every failure is an {@link HrtsException} whose message names what was wrong.
 */
public final class Stats {
    private Stats() {}

    /**
     * The system property that names the program (service) this JVM publishes statistics under:
     * the {@code program} label of the Prometheus exposition ({@code hrts stats serve}). 1 to 31
     * bytes of UTF-8. It wins over {@code HRTS_STATS_PROGRAM}; the configuration key {@code
     * shared-memory.program} wins over both. Without any of them the name is the main class
     * ({@code com.example.Main}; its simple name when the whole is longer than 31 bytes) or the
     * jar's file name without {@code .jar}, from {@code sun.java.command}; else {@code java}.
     */
    public static final String PROGRAM_PROPERTY = "hrts.stats.program";

    /**
     * The system property that gives this JVM a stable id among the processes of its program (a
     * replica's name or number): with the program, what names its Prometheus series across
     * restarts (label {@code hrts_instance}). 1 to 31 bytes of UTF-8; wins over {@code
     * HRTS_STATS_INSTANCE_ID}; the configuration key {@code shared-memory.instance-id} wins over
     * both. Default: none.
     */
    public static final String INSTANCE_ID_PROPERTY = "hrts.stats.instanceId";

    /** The longest program name or instance id kept, in bytes of UTF-8. */
    static final int MAX_LABEL_BYTES = 31;

    private static volatile boolean ready;

    /** Loads the native library and opens the JVM's hrts segment (see {@link HighResTimestamp}). */
    static void ensureReady() {
        if (!ready) {
            HighResTimestamp.open();
            ready = true;
        }
    }

    private static byte[] utf8(String s, String what) {
        if (s == null) {
            throw new HrtsException(HrtsException.Kind.INVALID_ARGUMENT, "hrts-stats: " + what + " is null");
        }
        return s.getBytes(StandardCharsets.UTF_8);
    }

    /**
     * Configures the statistics from JSON in handystats' shape ({@code {"handystats": {...}}}) or
     * its inner object: {@code incremental-statistics.moving-average-alpha} (0.125), {@code
     * incremental-statistics.moving-interval} (ms, 1000), {@code timer.idle-timeout} (ms, 10000),
     * {@code json-dump.interval} and {@code metrics-dump.interval} (ms, 500; 0 disables), {@code
     * message-queue.sleep-on-empty} (µs list), {@code message-queue.capacity} (events per thread,
     * 2048), {@code exact-stamps} (counters and gauges stamped per event rather than by the
     * processing pass: names, or prefixes ending in {@code *}; none). Only while stopped.
     *
     * @param json the configuration, a JSON object
     * @throws HrtsException naming the unknown key or the bad value's key
     */
    public static void configureJson(String json) {
        ensureReady();
        if (Impl.PORTABLE) {
            utf8(json, "the configuration");
            PortableStats.configureJson(json);
            return;
        }
        StatsNative.nConfigureJson(utf8(json, "the configuration"));
    }

    /**
     * Configures the statistics from a JSON file (see {@link #configureJson(String)}).
     *
     * @param path the file's path
     */
    public static void configureFile(String path) {
        ensureReady();
        if (Impl.PORTABLE) {
            utf8(path, "the path");
            PortableStats.configureFile(path);
            return;
        }
        StatsNative.nConfigureFile(utf8(path, "the path"));
    }

    /**
     * Starts collecting (handystats' HANDY_INIT); does nothing if already running. The first start
     * publishes to the statistics segment under the program name and instance id of {@link
     * #PROGRAM_PROPERTY} and {@link #INSTANCE_ID_PROPERTY}.
     *
     * @throws HrtsException if a program name or instance id is empty, longer than 31 bytes or
     *     has a control character
     */
    public static void start() {
        ensureReady();
        if (Impl.PORTABLE) {
            PortableStats.start();
            return;
        }
        String program = program(System.getProperty(PROGRAM_PROPERTY), System.getenv("HRTS_STATS_PROGRAM"),
                System.getProperty("sun.java.command"));
        String id = System.getProperty(INSTANCE_ID_PROPERTY);
        StatsNative.nSetIdentity(program == null ? null : program.getBytes(StandardCharsets.UTF_8),
                id == null || id.isEmpty() ? null : id.getBytes(StandardCharsets.UTF_8));
        StatsNative.nStart();
    }

    /**
     * The program name Java gives the native library: the property if set, else nothing when the
     * environment names one, else the name {@link #defaultProgram} makes of {@code command}.
     */
    static String program(String property, String environment, String command) {
        if (property != null && !property.isEmpty()) {
            return property;
        }
        if (environment != null && !environment.isEmpty()) {
            return null;
        }
        return defaultProgram(command);
    }

    /**
     * A program name from {@code sun.java.command} ({@code MAIN_CLASS args...}, {@code JAR args...}
     * or {@code MODULE/MAIN_CLASS args...}): the jar's file name without {@code .jar}, else the main
     * class, or its simple name if the whole is longer than 31 bytes; cut to 31 bytes, without
     * control characters. Null when there is none (a JVM started by a native launcher).
     */
    static String defaultProgram(String command) {
        if (command == null || command.isBlank()) {
            return null;
        }
        String first = command.strip().split("\\s+", 2)[0];
        String name;
        if (first.endsWith(".jar")) {
            name = first.substring(first.lastIndexOf('/') + 1);
            name = name.substring(0, name.length() - ".jar".length());
        } else {
            name = first.substring(first.lastIndexOf('/') + 1);
            if (utf8Length(name) > MAX_LABEL_BYTES) {
                name = name.substring(name.lastIndexOf('.') + 1);
            }
        }
        StringBuilder out = new StringBuilder();
        int bytes = 0;
        for (int i = 0; i < name.length(); ) {
            int cp = name.codePointAt(i);
            i += Character.charCount(cp);
            if (Character.isISOControl(cp)) {
                continue;
            }
            int n = utf8Length(new String(Character.toChars(cp)));
            if (bytes + n > MAX_LABEL_BYTES) {
                break;
            }
            out.appendCodePoint(cp);
            bytes += n;
        }
        return out.length() == 0 ? null : out.toString();
    }

    private static int utf8Length(String s) {
        return s.getBytes(StandardCharsets.UTF_8).length;
    }

    /**
     * Stops collecting: what is queued is applied, the final dumps are made, the processing
     * thread ends. Does nothing if not running.
     */
    public static void stop() {
        ensureReady();
        if (Impl.PORTABLE) {
            PortableStats.stop();
            return;
        }
        StatsNative.nStop();
    }

    /**
     * Whether measurements are being recorded.
     *
     * @return true between {@link #start()} and {@link #stop()}
     */
    public static boolean isRunning() {
        ensureReady();
        return Impl.PORTABLE ? PortableStats.running() : Layout.enabled();
    }

    static long metric(String name, int kind) {
        ensureReady();
        byte[] bytes = utf8(name, "the metric name");
        return Impl.PORTABLE ? PortableStats.metric(name, kind) : StatsNative.nMetric(bytes, kind);
    }

    /**
     * The counter {@code name}, created on first use. Keep the handle (e.g. in a static final):
     * the lookup is not free, the measurements are.
     *
     * @throws HrtsException for an empty or too long (over 255 bytes of UTF-8) name, or a name
     *     already used by a gauge or timer
     * @param name the metric's name
     * @return the counter's handle
     */
    public static Counter counter(String name) {
        return new Counter(metric(name, 1));
    }

    /**
     * The gauge {@code name}, created on first use (see {@link #counter(String)}).
     *
     * @param name the metric's name
     * @return the gauge's handle
     */
    public static Gauge gauge(String name) {
        return new Gauge(metric(name, 2));
    }

    /**
     * The timer {@code name}, created on first use (see {@link #counter(String)}).
     *
     * @param name the metric's name
     * @return the timer's handle
     */
    public static Timer timer(String name) {
        return new Timer(metric(name, 3));
    }

    /**
     * A dump made now, after applying everything queued so far. It waits for the processing
     * thread's current pass, never for a measuring point.
     *
     * @return the dump
     */
    public static StatsDump dump() {
        ensureReady();
        return Impl.PORTABLE ? PortableStats.dump(true) : StatsDump.of(StatsNative.nDump(true));
    }

    /**
     * The latest dump the library made (at the configured interval, on demand or at stop).
     *
     * @return the dump, or null if none was made yet
     */
    public static StatsDump lastDump() {
        ensureReady();
        if (Impl.PORTABLE) {
            return PortableStats.dump(false);
        }
        Object[] raw = StatsNative.nDump(false);
        return raw == null ? null : StatsDump.of(raw);
    }

    /**
     * A JSON dump made now, in handystats' shape.
     *
     * @return the JSON text
     */
    public static String jsonDump() {
        return dump().json();
    }
}
