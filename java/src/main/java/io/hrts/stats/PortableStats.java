package io.hrts.stats;

import io.hrts.HighResTimestamp;
import io.hrts.HrtsException;
import io.hrts.stats.PortableMetricState.CounterState;
import io.hrts.stats.PortableMetricState.GaugeState;
import io.hrts.stats.PortableMetricState.TimerState;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.TreeMap;

/**
 * The statistics of a JVM on the portable implementation: the same API and the same statistics
 * as the native hrts-stats (the same configuration keys and errors, incremental statistics,
 * log-linear histogram, summing of counter deltas and gauge sets per thread until a pass, timer
 * instances and their idle timeout, dumps in handystats' JSON), in pure Java, stamped on the
 * portable timeline. What it cannot do: publish to a statistics segment (nothing outside this
 * JVM sees its numbers; {@link SharedStats} refuses), and shared timers are shared with no other
 * process. Passes (which take the threads' sums, stamped with the pass's time) happen at every
 * dump: on demand, at stop and, while running, every {@code json-dump.interval} or {@code
 * metrics-dump.interval} on a daemon thread.
 *
 * <p>Every event that is not summed (a timer's, a counter init, an exact-stamps metric's) is
 * applied at once under one lock, so nothing is queued, folded or dropped: {@code
 * hrts-stats.dropped-events} stays 0 and {@code hrts-stats.folded-events} counts the summed
 * events taken by passes.
 */
final class PortableStats {
    private PortableStats() {}

    static final int COUNTER = 1;
    static final int GAUGE = 2;
    static final int TIMER = 3;
    private static final String[] KIND_NAMES = {null, "counter", "gauge", "timer"};
    static final int MAX_NAME_LEN = 255;
    private static final int MAX_METRICS = 65_536;
    private static final String RESERVED_PREFIX = "hrts-stats.";
    private static final String[] INTERNAL = {
        "hrts-stats.dropped-events",
        "hrts-stats.folded-events",
        "hrts-stats.timer-stops-without-start",
        "hrts-stats.timer-instances-timed-out",
    };

    private static final Object LOCK = new Object();

    // Guarded by LOCK.
    private static final Map<String, Integer> IDS = new HashMap<>();
    private static final List<String> NAMES = new ArrayList<>();
    private static final List<Integer> KINDS = new ArrayList<>();
    private static Object[] states = new Object[64];
    private static PortableConfig config = new PortableConfig();
    private static final List<Cells> CELLS = new ArrayList<>();
    /** Running shared timer instances: (metric id, instance) to start stamp. */
    private static final Map<Map.Entry<Integer, Long>, Long> SHARED = new HashMap<>();
    private static long stopsWithoutStart;
    private static long timedOut;
    private static long folded;
    private static StatsDump lastDump;
    private static String latestJson;
    private static String fileError;
    private static Thread passer;

    /** Per metric id: 1 if listed in exact-stamps. Replaced whole, never written in place. */
    private static volatile byte[] exact = new byte[64];
    private static volatile boolean running;
    private static volatile long idleNs = config.idleMs * 1_000_000L;

    private static final ThreadLocal<Cells> LOCAL = ThreadLocal.withInitial(() -> {
        Cells c = new Cells();
        synchronized (LOCK) {
            CELLS.add(c);
        }
        return c;
    });

    static {
        synchronized (LOCK) {
            for (String n : INTERNAL) {
                create(n, GAUGE);
            }
        }
    }

    // ------------------------------------------------------------------ the API's entry points

    static boolean running() {
        return running;
    }

    static long idleNs() {
        return idleNs;
    }

    static void configureJson(String json) {
        PortableConfig c = PortableConfig.parse(PortableJson.parse(json, "statistics configuration is not valid JSON: "));
        install(c);
    }

    static void configureFile(String path) {
        String text;
        try {
            text = new String(Files.readAllBytes(Paths.get(path)), StandardCharsets.UTF_8);
        } catch (IOException | RuntimeException e) {
            throw new HrtsException(HrtsException.Kind.OS, "reading statistics configuration " + path + ": " + e
                    + "; check the file name and its permissions");
        }
        try {
            install(PortableConfig.parse(PortableJson.parse(text, "statistics configuration is not valid JSON: ")));
        } catch (HrtsException e) {
            throw new HrtsException(e.getKind(), path + ": " + e.getMessage());
        }
    }

    private static void install(PortableConfig c) {
        synchronized (LOCK) {
            if (running) {
                throw new HrtsException(HrtsException.Kind.INVALID_ARGUMENT,
                        "statistics are running: stop them before changing the configuration");
            }
            config = c;
            idleNs = c.idleMs * 1_000_000L;
            byte[] e = new byte[exact.length];
            for (int id = 0; id < NAMES.size(); id++) {
                e[id] = (byte) (c.exact(NAMES.get(id)) ? 1 : 0);
            }
            exact = e;
        }
    }

    static void start() {
        synchronized (LOCK) {
            if (running) {
                return;
            }
            // A restart empties the statistics; what threads summed while stopped is dropped.
            states = new Object[states.length];
            SHARED.clear();
            stopsWithoutStart = 0;
            timedOut = 0;
            for (Cells c : CELLS) {
                c.clear();
            }
            running = true;
            long every = Math.min(orOff(config.jsonDumpMs), orOff(config.metricsDumpMs));
            if (every != Long.MAX_VALUE) {
                passer = new Thread(() -> passes(every), "hrts-stats-portable");
                passer.setDaemon(true);
                passer.start();
            }
        }
    }

    private static long orOff(long ms) {
        return ms == 0 ? Long.MAX_VALUE : ms;
    }

    static void stop() {
        Thread t;
        synchronized (LOCK) {
            if (!running) {
                return;
            }
            running = false;
            t = passer;
            passer = null;
        }
        if (t != null) {
            t.interrupt();
            try {
                t.join();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        synchronized (LOCK) {
            StatsDump d = pass();
            latestJson = d.json();
            writeFile(d.json());
        }
    }

    /** The daemon thread's loop: a pass (and the periodic dumps) every {@code every} ms. */
    private static void passes(long every) {
        long jsonEvery = config.jsonDumpMs;
        long nextJson = System.nanoTime() + jsonEvery * 1_000_000L;
        while (true) {
            try {
                Thread.sleep(every);
            } catch (InterruptedException e) {
                return;
            }
            synchronized (LOCK) {
                if (!running || passer != Thread.currentThread()) {
                    return;
                }
                StatsDump d = pass();
                if (jsonEvery > 0 && System.nanoTime() - nextJson >= 0) {
                    nextJson = System.nanoTime() + jsonEvery * 1_000_000L;
                    latestJson = d.json();
                    writeFile(d.json());
                }
            }
        }
    }

    private static void writeFile(String json) {
        if (config.jsonFile == null) {
            return;
        }
        Path target = Paths.get(config.jsonFile);
        Path tmp = Paths.get(config.jsonFile + ".tmp");
        try {
            Files.write(tmp, json.getBytes(StandardCharsets.UTF_8));
            Files.move(tmp, target, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
            fileError = null;
        } catch (IOException | RuntimeException e) {
            fileError = "json-dump.file " + target + ": the dump could not be written (" + e + ")";
        }
    }

    static StatsDump dump(boolean fresh) {
        synchronized (LOCK) {
            if (fresh) {
                StatsDump d = pass();
                latestJson = d.json();
                return d;
            }
            return lastDump;
        }
    }

    static String latestJson() {
        synchronized (LOCK) {
            return latestJson;
        }
    }

    static String fileError() {
        synchronized (LOCK) {
            return fileError;
        }
    }

    /** The metric's id, created as a {@code kind} on first use (the native registry's rules and messages). */
    static long metric(String name, int kind) {
        synchronized (LOCK) {
            Integer id = IDS.get(name);
            if (id != null) {
                return checkKind(name, id, kind);
            }
            if (name.isEmpty()) {
                throw invalid("a metric name must not be empty");
            }
            int bytes = name.getBytes(StandardCharsets.UTF_8).length;
            if (bytes > MAX_NAME_LEN) {
                throw invalid("metric name of " + bytes + " bytes is too long (at most " + MAX_NAME_LEN
                        + "); it starts with \"" + name.substring(0, Math.min(40, name.length())) + "\"");
            }
            if (name.codePoints().anyMatch(Character::isISOControl)) {
                throw invalid("metric name " + PortableJson.quote(name) + " contains a control character");
            }
            if (name.startsWith(RESERVED_PREFIX)) {
                throw invalid("metric name " + PortableJson.quote(name) + ": names starting with \"" + RESERVED_PREFIX
                        + "\" are the library's own");
            }
            if (NAMES.size() >= MAX_METRICS) {
                throw invalid("cannot create metric " + PortableJson.quote(name) + ": the limit of " + MAX_METRICS
                        + " metrics is reached (names should not carry unbounded values such as request ids)");
            }
            return create(name, kind);
        }
    }

    private static int create(String name, int kind) {
        int id = NAMES.size();
        NAMES.add(name);
        KINDS.add(kind);
        IDS.put(name, id);
        if (id >= states.length) {
            states = java.util.Arrays.copyOf(states, states.length * 2);
        }
        byte[] e = exact;
        if (id >= e.length) {
            e = java.util.Arrays.copyOf(e, e.length * 2);
        } else {
            e = e.clone();
        }
        e[id] = (byte) (config.exact(name) ? 1 : 0);
        exact = e;
        return id;
    }

    private static int checkKind(String name, int id, int kind) {
        int have = KINDS.get(id);
        if (have != kind) {
            throw invalid("metric " + PortableJson.quote(name) + " is a " + KIND_NAMES[have] + "; it cannot be used as a "
                    + KIND_NAMES[kind] + " (a name has one type)");
        }
        return id;
    }

    static HrtsException invalid(String message) {
        return new HrtsException(HrtsException.Kind.INVALID_ARGUMENT, message);
    }

    // ------------------------------------------------------------------ measuring points

    /** A counter's delta: summed into the thread's cell, unless the metric is exact-stamped. */
    static void add(int id, long delta) {
        if (!running) {
            return;
        }
        if (exact[id] != 0) {
            long ts = stamp();
            synchronized (LOCK) {
                if (running) {
                    counter(id).add(delta, ts, config);
                }
            }
        } else {
            LOCAL.get().add(id, delta);
        }
    }

    /** A counter init: never summed; the thread's own sums of it go first, as they came first. */
    static void init(int id, long value) {
        if (!running) {
            return;
        }
        Cells own = LOCAL.get();
        long ts = stamp();
        synchronized (LOCK) {
            if (running) {
                own.take(id, ts);
                counter(id).init(value, ts, config);
            }
        }
    }

    static void set(int id, double value) {
        if (!running) {
            return;
        }
        if (exact[id] != 0) {
            long ts = stamp();
            synchronized (LOCK) {
                if (running) {
                    gauge(id).set(1, value, value, value, value, ts, config);
                }
            }
        } else {
            LOCAL.get().set(id, value);
        }
    }

    static void record(int id, long nanos, long ts) {
        if (!running) {
            return;
        }
        synchronized (LOCK) {
            if (running) {
                timer(id).record(1, nanos, nanos, nanos, nanos, ts, config);
            }
        }
    }

    /** A timer instance event: kind as in {@link RingLayout.Kind}. */
    static void instance(int id, int kind, long instance, long ts) {
        if (!running) {
            return;
        }
        synchronized (LOCK) {
            if (!running) {
                return;
            }
            TimerState t = timer(id);
            timedOut += t.sweep(ts, idleNs);
            if (kind == RingLayout.Kind.TIMER_START) {
                t.instances.put(instance, new long[] {ts, ts});
            } else if (kind == RingLayout.Kind.TIMER_STOP) {
                long[] i = t.instances.remove(instance);
                if (i == null) {
                    stopsWithoutStart++;
                } else {
                    long d = Math.max(0, ts - i[0]);
                    t.record(1, d, d, d, d, ts, config);
                }
            } else if (kind == RingLayout.Kind.TIMER_DISCARD) {
                t.instances.remove(instance);
            } else if (kind == RingLayout.Kind.TIMER_HEARTBEAT) {
                long[] i = t.instances.get(instance);
                if (i != null) {
                    i[1] = Math.max(i[1], ts);
                }
            }
        }
    }

    /** A shared timer instance (this JVM's only): op 0 start, 1 stop (duration or -1), 2 discard. */
    static long shared(int id, long instance, int op) {
        long ts = stamp();
        synchronized (LOCK) {
            if (!running) {
                throw invalid("hrts-stats: shared timers need the statistics started (Stats.start())");
            }
            Map.Entry<Integer, Long> key = new java.util.AbstractMap.SimpleImmutableEntry<>(id, instance);
            if (op == 0) {
                SHARED.put(key, ts);
                return 0;
            }
            Long start = SHARED.remove(key);
            if (op == 2) {
                return start == null ? 0 : 1;
            }
            if (start == null) {
                return -1;
            }
            long d = Math.max(0, ts - start);
            timer(id).record(1, d, d, d, d, ts, config);
            return d;
        }
    }

    static OptionalLong stopShared(int id, long instance) {
        long d = shared(id, instance, 1);
        return d < 0 ? OptionalLong.empty() : OptionalLong.of(d);
    }

    private static long stamp() {
        return HighResTimestamp.getEpochNanoseconds();
    }

    private static CounterState counter(int id) {
        Object s = states[id];
        if (s == null) {
            states[id] = s = new CounterState();
        }
        return (CounterState) s;
    }

    private static GaugeState gauge(int id) {
        Object s = states[id];
        if (s == null) {
            states[id] = s = new GaugeState();
        }
        return (GaugeState) s;
    }

    private static TimerState timer(int id) {
        Object s = states[id];
        if (s == null) {
            states[id] = s = new TimerState();
        }
        return (TimerState) s;
    }

    // ------------------------------------------------------------------ passes and dumps

    /** Takes every thread's sums, sweeps idle timer instances, and makes a dump. Holds LOCK. */
    private static StatsDump pass() {
        long now = stamp();
        for (int i = CELLS.size() - 1; i >= 0; i--) {
            Cells c = CELLS.get(i);
            c.takeAll(now);
            if (!c.owner.isAlive()) {
                CELLS.remove(i);
            }
        }
        for (Object s : states) {
            if (s instanceof TimerState) {
                timedOut += ((TimerState) s).sweep(now, idleNs);
            }
        }
        long[] health = {0, folded, stopsWithoutStart, timedOut};
        for (int i = 0; i < INTERNAL.length; i++) {
            gauge(i).set(1, health[i], health[i], health[i], health[i], now, config);
        }
        TreeMap<String, Integer> order = new TreeMap<>();
        for (int id = 0; id < NAMES.size(); id++) {
            if (states[id] != null) {
                order.put(NAMES.get(id), id);
            }
        }
        Map<String, MetricDump> metrics = new LinkedHashMap<>();
        StringBuilder json = new StringBuilder("{");
        for (Map.Entry<String, Integer> e : order.entrySet()) {
            Object s = states[e.getValue()];
            MetricDump m = s instanceof CounterState ? ((CounterState) s).dump(e.getKey(), now, config)
                    : s instanceof GaugeState ? ((GaugeState) s).dump(e.getKey(), now, config)
                    : ((TimerState) s).dump(e.getKey(), now, config);
            if (m == null) {
                continue;
            }
            metrics.put(e.getKey(), m);
            if (json.length() > 1) {
                json.append(',');
            }
            json.append(PortableJson.quote(e.getKey())).append(':');
            metricJson(json, m);
        }
        json.append('}');
        lastDump = StatsDump.portable(now, java.util.Collections.unmodifiableMap(metrics), json.toString());
        return lastDump;
    }

    private static void metricJson(StringBuilder b, MetricDump m) {
        // Keys in the order serde_json's map gives them (sorted), as the native dump has them.
        b.append('{');
        if (m.type() == MetricType.COUNTER) {
            b.append("\"decr-deltas\":");
            statsJson(b, m.decrDeltas());
            b.append(",\"deltas\":");
            statsJson(b, m.deltas());
            b.append(",\"incr-deltas\":");
            statsJson(b, m.incrDeltas());
            b.append(',');
        }
        b.append("\"timestamp\":").append(Long.toUnsignedString(m.timestamp()));
        b.append(",\"type\":\"").append(m.type().jsonName()).append('"');
        b.append(",\"value\":");
        if (m.type() == MetricType.COUNTER) {
            b.append(m.counterValue());
        } else {
            b.append(PortableJson.number(m.value()));
        }
        b.append(",\"values\":");
        statsJson(b, m.values());
        b.append('}');
    }

    private static void statsJson(StringBuilder b, Statistics s) {
        b.append("{\"count\":").append(s.count());
        b.append(",\"interval-count\":").append(PortableJson.number(s.intervalCount()));
        b.append(",\"interval-mean\":").append(PortableJson.number(s.intervalMean()));
        b.append(",\"interval-sum\":").append(PortableJson.number(s.intervalSum()));
        b.append(",\"max\":").append(PortableJson.number(s.max()));
        b.append(",\"mean\":").append(PortableJson.number(s.mean()));
        b.append(",\"min\":").append(PortableJson.number(s.min()));
        b.append(",\"moving-avg\":").append(PortableJson.number(s.movingAverage()));
        b.append(",\"p50\":").append(PortableJson.number(s.p50()));
        b.append(",\"p90\":").append(PortableJson.number(s.p90()));
        b.append(",\"p99\":").append(PortableJson.number(s.p99()));
        b.append(",\"p99.9\":").append(PortableJson.number(s.p999()));
        b.append(",\"rate\":").append(PortableJson.number(s.rate()));
        b.append(",\"sum\":").append(PortableJson.number(s.sum()));
        b.append('}');
    }

    // ------------------------------------------------------------------ a thread's sums

    /** One thread's sums per metric, taken by passes (the native library's fold cells). */
    private static final class Cells {
        final Thread owner = Thread.currentThread();
        private Cell[] cells = new Cell[64];

        private Cell cell(int id) {
            if (id >= cells.length) {
                cells = java.util.Arrays.copyOf(cells, Math.max(id + 1, cells.length * 2));
            }
            Cell c = cells[id];
            if (c == null) {
                cells[id] = c = new Cell();
            }
            return c;
        }

        synchronized void add(int id, long delta) {
            Cell c = cell(id);
            if (delta > 0) {
                c.pos.add(delta);
            } else if (delta < 0) {
                c.neg.add(delta);
            } else {
                c.zero++;
            }
        }

        synchronized void set(int id, double v) {
            Cell c = cell(id);
            if (c.n == 0) {
                c.sum = v;
                c.min = v;
                c.max = v;
            } else {
                c.sum += v;
                c.min = Math.min(c.min, v);
                c.max = Math.max(c.max, v);
            }
            c.last = v;
            c.n++;
        }

        synchronized void clear() {
            java.util.Arrays.fill(cells, null);
        }

        /** Applies this thread's sums of metric {@code id}, stamped {@code ts}. Under LOCK. */
        synchronized void take(int id, long ts) {
            if (id < cells.length && cells[id] != null) {
                apply(id, cells[id], ts);
                cells[id] = null;
            }
        }

        synchronized void takeAll(long ts) {
            for (int id = 0; id < cells.length; id++) {
                if (cells[id] != null) {
                    apply(id, cells[id], ts);
                    cells[id] = null;
                }
            }
        }

        private static void apply(int id, Cell c, long ts) {
            if (KINDS.get(id) == GAUGE) {
                if (c.n > 0) {
                    gauge(id).set(c.n, c.sum, c.min, c.max, c.last, ts, config);
                    folded += c.n;
                }
                return;
            }
            CounterState s = counter(id);
            // Each sign's batch as the native pass applies it: increments, then decrements, then zeros.
            if (c.pos.n > 0) {
                s.addBatch(c.pos.n, c.pos.sum, c.pos.min, c.pos.max, ts, config);
            }
            if (c.neg.n > 0) {
                s.addBatch(c.neg.n, c.neg.sum, c.neg.min, c.neg.max, ts, config);
            }
            if (c.zero > 0) {
                s.addBatch(c.zero, 0, 0, 0, ts, config);
            }
            folded += c.pos.n + c.neg.n + c.zero;
        }
    }

    private static final class Sign {
        long n;
        long sum;
        long min;
        long max;

        void add(long d) {
            if (n == 0) {
                min = d;
                max = d;
            } else {
                min = Math.min(min, d);
                max = Math.max(max, d);
            }
            sum += d;
            n++;
        }
    }

    private static final class Cell {
        final Sign pos = new Sign();
        final Sign neg = new Sign();
        long zero;
        long n;
        double sum;
        double min;
        double max;
        double last;
    }
}
