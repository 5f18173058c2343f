package io.hrts.stats;

import io.hrts.HighResTimestamp;
import io.hrts.HrtsException;
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
    private static final int MAX_NAME_LEN = 255;
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
    private static Config config = new Config();
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
        Config c = Config.parse(Json.parse(json, "statistics configuration is not valid JSON: "));
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
            install(Config.parse(Json.parse(text, "statistics configuration is not valid JSON: ")));
        } catch (HrtsException e) {
            throw new HrtsException(e.getKind(), path + ": " + e.getMessage());
        }
    }

    private static void install(Config c) {
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
                throw invalid("metric name " + Json.quote(name) + " contains a control character");
            }
            if (name.startsWith(RESERVED_PREFIX)) {
                throw invalid("metric name " + Json.quote(name) + ": names starting with \"" + RESERVED_PREFIX
                        + "\" are the library's own");
            }
            if (NAMES.size() >= MAX_METRICS) {
                throw invalid("cannot create metric " + Json.quote(name) + ": the limit of " + MAX_METRICS
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
            throw invalid("metric " + Json.quote(name) + " is a " + KIND_NAMES[have] + "; it cannot be used as a "
                    + KIND_NAMES[kind] + " (a name has one type)");
        }
        return id;
    }

    private static HrtsException invalid(String message) {
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
            json.append(Json.quote(e.getKey())).append(':');
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
            b.append(Json.number(m.value()));
        }
        b.append(",\"values\":");
        statsJson(b, m.values());
        b.append('}');
    }

    private static void statsJson(StringBuilder b, Statistics s) {
        b.append("{\"count\":").append(s.count());
        b.append(",\"interval-count\":").append(Json.number(s.intervalCount()));
        b.append(",\"interval-mean\":").append(Json.number(s.intervalMean()));
        b.append(",\"interval-sum\":").append(Json.number(s.intervalSum()));
        b.append(",\"max\":").append(Json.number(s.max()));
        b.append(",\"mean\":").append(Json.number(s.mean()));
        b.append(",\"min\":").append(Json.number(s.min()));
        b.append(",\"moving-avg\":").append(Json.number(s.movingAverage()));
        b.append(",\"p50\":").append(Json.number(s.p50()));
        b.append(",\"p90\":").append(Json.number(s.p90()));
        b.append(",\"p99\":").append(Json.number(s.p99()));
        b.append(",\"p99.9\":").append(Json.number(s.p999()));
        b.append(",\"rate\":").append(Json.number(s.rate()));
        b.append(",\"sum\":").append(Json.number(s.sum()));
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

    // ------------------------------------------------------------------ per-metric state (native/stats/src/metric.rs)

    private static final class CounterState {
        long value;
        long ts;
        boolean started;
        final Incremental values = new Incremental();
        final Incremental incr = new Incremental();
        final Incremental decr = new Incremental();
        final Incremental deltas = new Incremental();

        private void start(long t, Config p) {
            if (!started) {
                started = true;
                values.add(value, t, p);
            }
            ts = Math.max(ts, t);
        }

        void init(long v, long t, Config p) {
            value = v;
            ts = 0;
            started = false;
            values.reset();
            incr.reset();
            decr.reset();
            deltas.reset();
            start(t, p);
        }

        void add(long delta, long t, Config p) {
            start(t, p);
            value = saturatingAdd(value, delta);
            values.add(value, t, p);
            deltas.add(delta, t, p);
            if (delta > 0) {
                incr.add(delta, t, p);
            } else if (delta < 0) {
                decr.add(-(double) delta, t, p);
            }
        }

        void addBatch(long n, long sum, long min, long max, long t, Config p) {
            start(t, p);
            long v0 = value;
            value = saturatingAdd(v0, sum);
            double nf = n;
            double v0f = v0;
            double sumf = sum;
            double valuesSum = nf * v0f + sumf * (nf + 1.0) / 2.0;
            double vmin;
            double vmax;
            if (min > 0) {
                vmin = v0f + min;
                vmax = value;
            } else if (max < 0) {
                vmin = value;
                vmax = v0f + max;
            } else {
                vmin = v0f;
                vmax = v0f;
            }
            values.addBatch(n, valuesSum, vmin, vmax, t, p);
            deltas.addBatch(n, sumf, min, max, t, p);
            if (min > 0) {
                incr.addBatch(n, sumf, min, max, t, p);
            } else if (max < 0) {
                decr.addBatch(n, -sumf, -(double) max, -(double) min, t, p);
            }
        }

        MetricDump dump(String name, long now, Config p) {
            if (!started) {
                return null;
            }
            return new MetricDump(name, MetricType.COUNTER, ts, value, value, new Statistics[] {
                values.snapshot(now, p, false), incr.snapshot(now, p, true), decr.snapshot(now, p, true),
                deltas.snapshot(now, p, true)});
        }
    }

    private static long saturatingAdd(long a, long b) {
        long r = a + b;
        if (((a ^ r) & (b ^ r)) < 0) {
            return a < 0 ? Long.MIN_VALUE : Long.MAX_VALUE;
        }
        return r;
    }

    private static final class GaugeState {
        boolean hasValue;
        double value;
        long ts;
        final Incremental values = new Incremental();

        void set(long n, double sum, double min, double max, double last, long t, Config p) {
            if (t >= ts || !hasValue) {
                hasValue = true;
                value = last;
                ts = t;
            }
            values.addBatch(n, sum, min, max, t, p);
        }

        MetricDump dump(String name, long now, Config p) {
            return hasValue ? new MetricDump(name, MetricType.GAUGE, ts, 0, value,
                    new Statistics[] {values.snapshot(now, p, false)}) : null;
        }
    }

    private static final class TimerState {
        boolean hasLast;
        long last;
        long ts;
        final Incremental durations = new Incremental();
        /** Running instances: {start, last alive}. */
        final Map<Long, long[]> instances = new HashMap<>();

        void record(long n, double sum, long min, long max, long lastValue, long t, Config p) {
            if (t >= ts || !hasLast) {
                hasLast = true;
                last = lastValue;
                ts = t;
            }
            durations.addBatch(n, sum, min, max, t, p);
        }

        /** Drops the instances idle for longer than {@code idle} at {@code now}; how many. */
        int sweep(long now, long idle) {
            int before = instances.size();
            instances.values().removeIf(i -> now - i[1] > idle);
            return before - instances.size();
        }

        MetricDump dump(String name, long now, Config p) {
            return hasLast ? new MetricDump(name, MetricType.TIMER, ts, 0, last,
                    new Statistics[] {durations.snapshot(now, p, false)}) : null;
        }
    }

    // ------------------------------------------------------------------ incremental statistics (incremental.rs)

    private static final class Incremental {
        long count;
        double sum;
        double min;
        double max;
        double movingAvg;
        double intervalCount;
        double intervalSum;
        long last;
        Histogram histogram = new Histogram();

        void reset() {
            count = 0;
            sum = 0;
            histogram = new Histogram();
        }

        void add(double x, long t, Config p) {
            addBatch(1, x, x, x, t, p);
        }

        void addBatch(long n, double batchSum, double bmin, double bmax, long t, Config p) {
            if (n == 0) {
                return;
            }
            double mean = batchSum / n;
            double interval = p.intervalMs * 1e6;
            if (count == 0) {
                min = bmin;
                max = bmax;
                movingAvg = mean;
                intervalCount = n;
                intervalSum = batchSum;
                last = t;
            } else {
                min = Math.min(min, bmin);
                max = Math.max(max, bmax);
                if (n == 1) {
                    movingAvg = p.alpha * mean + (1.0 - p.alpha) * movingAvg;
                } else {
                    movingAvg = mean + Math.pow(1.0 - p.alpha, n) * (movingAvg - mean);
                }
                if (Long.compareUnsigned(t, last) >= 0) {
                    double e = (t - last) / interval;
                    if (e >= 1.0) {
                        intervalCount = n;
                        intervalSum = batchSum;
                    } else {
                        intervalCount = intervalCount * (1.0 - e) + n;
                        intervalSum = intervalSum * (1.0 - e) + batchSum;
                    }
                    last = t;
                } else {
                    double e = (last - t) / interval;
                    if (e < 1.0) {
                        intervalCount += n * (1.0 - e);
                        intervalSum += batchSum * (1.0 - e);
                    }
                }
            }
            count += n;
            sum += batchSum;
            if (n == 1) {
                histogram.record(bmin, 1);
            } else {
                histogram.record(bmin, 1);
                histogram.record(bmax, 1);
                histogram.record(mean, n - 2);
            }
        }

        /** The statistics at {@code now}; the rate of the interval sum if {@code ofSum}, else of the count. */
        Statistics snapshot(long now, Config p, boolean ofSum) {
            double[] v = new double[13];
            if (count == 0) {
                java.util.Arrays.fill(v, Double.NaN);
                v[0] = 0; // sum
                v[5] = 0; // interval count
                v[6] = 0; // interval sum
                v[12] = 0; // rate
                return new Statistics(0, v, 0);
            }
            double interval = p.intervalMs * 1e6;
            double decay = Long.compareUnsigned(now, last) > 0 ? Math.max(0.0, 1.0 - (now - last) / interval) : 1.0;
            double ic = intervalCount * decay;
            double is = intervalSum * decay;
            double seconds = interval / 1e9;
            double[] q = histogram.quantiles(min, max);
            v[0] = sum;
            v[1] = min;
            v[2] = max;
            v[3] = sum / count;
            v[4] = movingAvg;
            v[5] = ic;
            v[6] = is;
            v[7] = ic > 0 ? is / ic : Double.NaN;
            System.arraycopy(q, 0, v, 8, 4);
            v[12] = ofSum ? is / seconds : ic / seconds;
            return new Statistics(count, v, 0);
        }
    }

    /** A log-linear histogram with 64 sub-buckets per octave: quantiles within 1 % (histogram.rs). */
    private static final class Histogram {
        private static final int SUB_BITS = 6;
        private static final int SUB = 1 << SUB_BITS;
        private static final int MIN_EXP = -64;
        private static final int OCTAVES = 128;
        private static final double[] QUANTILES = {0.5, 0.9, 0.99, 0.999};

        private long[][] positive;
        private long[][] negative;
        private long posOverflow;
        private long negOverflow;
        private long zero;
        private long total;

        void record(double x, long n) {
            if (x != x || n == 0) {
                return;
            }
            total += n;
            long bits = Double.doubleToRawLongBits(Math.abs(x));
            int biased = (int) ((bits >>> 52) & 0x7ff);
            int exp = biased - 1023;
            if (biased == 0 || exp < MIN_EXP) {
                zero += n;
                return;
            }
            boolean pos = x > 0;
            if (exp >= MIN_EXP + OCTAVES) {
                if (pos) {
                    posOverflow += n;
                } else {
                    negOverflow += n;
                }
                return;
            }
            long[][] side;
            if (pos) {
                side = positive == null ? (positive = new long[OCTAVES][]) : positive;
            } else {
                side = negative == null ? (negative = new long[OCTAVES][]) : negative;
            }
            int octave = exp - MIN_EXP;
            if (side[octave] == null) {
                side[octave] = new long[SUB];
            }
            side[octave][(int) ((bits >>> (52 - SUB_BITS)) & (SUB - 1))] += n;
        }

        private static double midpoint(int octave, int sub) {
            return Math.scalb(1.0, octave + MIN_EXP) * (1.0 + (sub + 0.5) / SUB);
        }

        private long seen;
        private int next;

        private void visit(long count, double value, long[] ranks, double[] out, double min, double max) {
            seen += count;
            while (next < ranks.length && seen >= ranks[next]) {
                out[next++] = Math.min(Math.max(value, min), max);
            }
        }

        double[] quantiles(double min, double max) {
            double[] out = {Double.NaN, Double.NaN, Double.NaN, Double.NaN};
            if (total == 0) {
                return out;
            }
            long[] ranks = new long[4];
            for (int i = 0; i < 4; i++) {
                ranks[i] = Math.min(Math.max((long) Math.ceil(QUANTILES[i] * total), 1), total);
            }
            seen = 0;
            next = 0;
            visit(negOverflow, min, ranks, out, min, max);
            if (negative != null) {
                for (int o = OCTAVES - 1; o >= 0; o--) {
                    if (negative[o] != null) {
                        for (int s = SUB - 1; s >= 0; s--) {
                            if (negative[o][s] > 0) {
                                visit(negative[o][s], -midpoint(o, s), ranks, out, min, max);
                            }
                        }
                    }
                }
            }
            visit(zero, 0.0, ranks, out, min, max);
            if (positive != null) {
                for (int o = 0; o < OCTAVES; o++) {
                    if (positive[o] != null) {
                        for (int s = 0; s < SUB; s++) {
                            if (positive[o][s] > 0) {
                                visit(positive[o][s], midpoint(o, s), ranks, out, min, max);
                            }
                        }
                    }
                }
            }
            visit(posOverflow, max, ranks, out, min, max);
            return out;
        }
    }

    // ------------------------------------------------------------------ configuration (config.rs)

    private static final class Config {
        double alpha = 0.125;
        long intervalMs = 1000;
        long idleMs = 10_000;
        long jsonDumpMs = 500;
        long metricsDumpMs = 500;
        String jsonFile;
        List<String> exactStamps = new ArrayList<>();

        private static final long MAX_MS = 1L << 40;

        boolean exact(String name) {
            for (String e : exactStamps) {
                if (e.endsWith("*") ? name.startsWith(e.substring(0, e.length() - 1)) : name.equals(e)) {
                    return true;
                }
            }
            return false;
        }

        private static HrtsException invalid(String key, String what, Object got) {
            return PortableStats.invalid("statistics configuration key " + key + ": expected " + what + ", got "
                    + Json.text(got));
        }

        @SuppressWarnings("unchecked")
        private static Map<String, Object> section(Map<String, Object> root, String name, String full) {
            Object v = root.get(name);
            if (v == null && !root.containsKey(name)) {
                return null;
            }
            if (!(v instanceof Map)) {
                throw invalid(full, "an object", v);
            }
            return (Map<String, Object>) v;
        }

        private static void checkKeys(Map<String, Object> map, String prefix, String... known) {
            List<String> k = java.util.Arrays.asList(known);
            for (String key : map.keySet()) {
                if (!k.contains(key)) {
                    String full = prefix.isEmpty() ? key : prefix + "." + key;
                    throw PortableStats.invalid("unknown statistics configuration key " + full + "; known keys in "
                            + (prefix.isEmpty() ? "the top level" : prefix) + ": " + String.join(", ", known));
                }
            }
        }

        private static long millis(Object v, String key, boolean allowZero) {
            if (v instanceof Long && (Long) v >= 0 && (Long) v <= MAX_MS && (allowZero || (Long) v > 0)) {
                return (Long) v;
            }
            throw invalid(key, allowZero ? "a whole number of milliseconds, 0 or more"
                    : "a whole number of milliseconds, more than 0", v);
        }

        private static boolean validName(String n) {
            return !n.isEmpty() && n.getBytes(StandardCharsets.UTF_8).length <= MAX_NAME_LEN
                    && n.codePoints().noneMatch(Character::isISOControl);
        }

        @SuppressWarnings("unchecked")
        static Config parse(Object value) {
            if (!(value instanceof Map)) {
                throw invalid("(root)", "a JSON object", value);
            }
            Map<String, Object> root = (Map<String, Object>) value;
            String prefix = "";
            if (root.containsKey("handystats")) {
                checkKeys(root, "", "handystats");
                root = section(root, "handystats", "handystats");
                prefix = "handystats.";
            }
            final String p = prefix;
            checkKeys(root, "", "incremental-statistics", "timer", "json-dump", "metrics-dump", "message-queue",
                    "shared-memory", "exact-stamps");
            Config cfg = new Config();
            if (root.containsKey("exact-stamps")) {
                Object v = root.get("exact-stamps");
                String what = "an array of metric names (a trailing * matches every name it begins)";
                if (!(v instanceof List)) {
                    throw invalid(p + "exact-stamps", what, v);
                }
                for (Object i : (List<Object>) v) {
                    if (!(i instanceof String)) {
                        throw invalid(p + "exact-stamps", what, v);
                    }
                    String n = (String) i;
                    String bare = n.endsWith("*") ? n.substring(0, n.length() - 1) : n;
                    if (!n.equals("*") && !validName(bare)) {
                        throw invalid(p + "exact-stamps", what, v);
                    }
                    cfg.exactStamps.add(n);
                }
            }
            Map<String, Object> m = section(root, "incremental-statistics", p + "incremental-statistics");
            if (m != null) {
                String name = p + "incremental-statistics";
                checkKeys(m, name, "moving-average-alpha", "moving-interval");
                if (m.containsKey("moving-average-alpha")) {
                    Object v = m.get("moving-average-alpha");
                    if (!(v instanceof Number) || !(((Number) v).doubleValue() > 0)
                            || !(((Number) v).doubleValue() < 1)) {
                        throw invalid(name + ".moving-average-alpha", "a number between 0 and 1 (exclusive)", v);
                    }
                    cfg.alpha = ((Number) v).doubleValue();
                }
                if (m.containsKey("moving-interval")) {
                    cfg.intervalMs = millis(m.get("moving-interval"), name + ".moving-interval", false);
                }
            }
            m = section(root, "timer", p + "timer");
            if (m != null) {
                checkKeys(m, p + "timer", "idle-timeout");
                if (m.containsKey("idle-timeout")) {
                    cfg.idleMs = millis(m.get("idle-timeout"), p + "timer.idle-timeout", false);
                }
            }
            m = section(root, "json-dump", p + "json-dump");
            if (m != null) {
                checkKeys(m, p + "json-dump", "interval", "file");
                Object f = m.get("file");
                if (f instanceof String && !((String) f).isEmpty()) {
                    cfg.jsonFile = (String) f;
                } else if (f != null) {
                    throw PortableStats.invalid("statistics configuration key " + p + "json-dump.file: expected a "
                            + "file name, got " + Json.text(f));
                }
                if (m.containsKey("interval")) {
                    cfg.jsonDumpMs = millis(m.get("interval"), p + "json-dump.interval", true);
                }
            }
            m = section(root, "metrics-dump", p + "metrics-dump");
            if (m != null) {
                checkKeys(m, p + "metrics-dump", "interval");
                if (m.containsKey("interval")) {
                    cfg.metricsDumpMs = millis(m.get("interval"), p + "metrics-dump.interval", true);
                }
            }
            m = section(root, "message-queue", p + "message-queue");
            if (m != null) {
                // Checked as the native library checks them; nothing is queued here.
                String name = p + "message-queue";
                checkKeys(m, name, "sleep-on-empty", "capacity");
                if (m.containsKey("sleep-on-empty")) {
                    Object v = m.get("sleep-on-empty");
                    String what = "a non-empty array of whole microseconds, each from 1 to 1000000";
                    if (!(v instanceof List) || ((List<Object>) v).isEmpty()) {
                        throw invalid(name + ".sleep-on-empty", what, v);
                    }
                    for (Object i : (List<Object>) v) {
                        if (!(i instanceof Long) || (Long) i < 1 || (Long) i > 1_000_000) {
                            throw invalid(name + ".sleep-on-empty", what, v);
                        }
                    }
                }
                if (m.containsKey("capacity")) {
                    Object v = m.get("capacity");
                    if (!(v instanceof Long) || (Long) v < 16 || (Long) v > (1 << 20) || Long.bitCount((Long) v) != 1) {
                        throw invalid(name + ".capacity", "a power of two from 16 to 1048576 (events per thread)", v);
                    }
                }
            }
            m = section(root, "shared-memory", p + "shared-memory");
            if (m != null) {
                // Accepted for the same configuration files; the portable statistics publish nothing.
                checkKeys(m, p + "shared-memory", "enable", "name", "interval", "grace", "program", "instance-id");
            }
            return cfg;
        }
    }

    // ------------------------------------------------------------------ a small JSON reader and writer

    /** JSON text to Map (LinkedHashMap), List, String, Long, Double, Boolean or null. */
    static final class Json {
        private final String s;
        private int i;

        private Json(String s) {
            this.s = s;
        }

        static Object parse(String text, String prefix) {
            Json j = new Json(text);
            try {
                j.ws();
                Object v = j.value();
                j.ws();
                if (j.i != text.length()) {
                    throw j.error("trailing characters");
                }
                return v;
            } catch (IllegalArgumentException e) {
                throw PortableStats.invalid(prefix + e.getMessage());
            }
        }

        private IllegalArgumentException error(String what) {
            return new IllegalArgumentException(what + " at character " + (i + 1));
        }

        private void ws() {
            while (i < s.length() && " \t\r\n".indexOf(s.charAt(i)) >= 0) {
                i++;
            }
        }

        private char peek() {
            if (i >= s.length()) {
                throw error("EOF while parsing a value");
            }
            return s.charAt(i);
        }

        private void expect(char c) {
            if (peek() != c) {
                throw error("expected '" + c + "'");
            }
            i++;
        }

        private Object value() {
            char c = peek();
            if (c == '{') {
                i++;
                Map<String, Object> m = new LinkedHashMap<>();
                ws();
                if (peek() == '}') {
                    i++;
                    return m;
                }
                while (true) {
                    ws();
                    String k = string();
                    ws();
                    expect(':');
                    ws();
                    m.put(k, value());
                    ws();
                    if (peek() == ',') {
                        i++;
                        continue;
                    }
                    expect('}');
                    return m;
                }
            }
            if (c == '[') {
                i++;
                List<Object> l = new ArrayList<>();
                ws();
                if (peek() == ']') {
                    i++;
                    return l;
                }
                while (true) {
                    ws();
                    l.add(value());
                    ws();
                    if (peek() == ',') {
                        i++;
                        continue;
                    }
                    expect(']');
                    return l;
                }
            }
            if (c == '"') {
                return string();
            }
            for (String w : new String[] {"true", "false", "null"}) {
                if (s.startsWith(w, i)) {
                    i += w.length();
                    return w.equals("null") ? null : Boolean.valueOf(w);
                }
            }
            int start = i;
            while (i < s.length() && "+-0123456789.eE".indexOf(s.charAt(i)) >= 0) {
                i++;
            }
            String n = s.substring(start, i);
            if (n.isEmpty()) {
                throw error("expected a value");
            }
            try {
                if (n.matches("-?(0|[1-9][0-9]*)")) {
                    try {
                        return Long.parseLong(n);
                    } catch (NumberFormatException big) {
                        return Double.parseDouble(n);
                    }
                }
                if (!n.matches("-?(0|[1-9][0-9]*)(\\.[0-9]+)?([eE][+-]?[0-9]+)?")) {
                    throw new NumberFormatException();
                }
                return Double.parseDouble(n);
            } catch (NumberFormatException e) {
                i = start;
                throw error("invalid number");
            }
        }

        private String string() {
            expect('"');
            StringBuilder b = new StringBuilder();
            while (true) {
                char c = peek();
                i++;
                if (c == '"') {
                    return b.toString();
                }
                if (c == '\\') {
                    char e = peek();
                    i++;
                    switch (e) {
                        case 'n': b.append('\n'); break;
                        case 't': b.append('\t'); break;
                        case 'r': b.append('\r'); break;
                        case 'b': b.append('\b'); break;
                        case 'f': b.append('\f'); break;
                        case 'u':
                            if (i + 4 > s.length()) {
                                throw error("invalid escape");
                            }
                            try {
                                b.append((char) Integer.parseInt(s.substring(i, i + 4), 16));
                            } catch (NumberFormatException x) {
                                throw error("invalid escape");
                            }
                            i += 4;
                            break;
                        case '"': case '\\': case '/': b.append(e); break;
                        default: throw error("invalid escape");
                    }
                } else if (c < 0x20) {
                    throw error("control character in a string");
                } else {
                    b.append(c);
                }
            }
        }

        /** A value as JSON text (for error messages). */
        @SuppressWarnings("unchecked")
        static String text(Object v) {
            if (v == null) {
                return "null";
            }
            if (v instanceof String) {
                return quote((String) v);
            }
            if (v instanceof Double) {
                return number((Double) v);
            }
            if (v instanceof List) {
                StringBuilder b = new StringBuilder("[");
                for (Object o : (List<Object>) v) {
                    b.append(b.length() > 1 ? "," : "").append(text(o));
                }
                return b.append(']').toString();
            }
            if (v instanceof Map) {
                StringBuilder b = new StringBuilder("{");
                for (Map.Entry<String, Object> e : ((Map<String, Object>) v).entrySet()) {
                    b.append(b.length() > 1 ? "," : "").append(quote(e.getKey())).append(':').append(text(e.getValue()));
                }
                return b.append('}').toString();
            }
            return String.valueOf(v);
        }

        static String quote(String s) {
            StringBuilder b = new StringBuilder("\"");
            for (int k = 0; k < s.length(); k++) {
                char c = s.charAt(k);
                if (c == '"' || c == '\\') {
                    b.append('\\').append(c);
                } else if (c < 0x20) {
                    b.append(String.format("\\u%04x", (int) c));
                } else {
                    b.append(c);
                }
            }
            return b.append('"').toString();
        }

        /** A number as the native dump writes it: whole values up to 2^53 without a fraction, NaN as null. */
        static String number(double x) {
            if (x != x || Double.isInfinite(x)) {
                return "null";
            }
            if (x == Math.rint(x) && Math.abs(x) <= 9007199254740992.0) {
                return Long.toString((long) x);
            }
            String t = Double.toString(x);
            int e = t.indexOf('E');
            if (e < 0) {
                return t;
            }
            String mant = t.substring(0, e);
            if (mant.endsWith(".0")) {
                mant = mant.substring(0, mant.length() - 2);
            }
            return mant + "e" + t.substring(e + 1);
        }
    }
}
