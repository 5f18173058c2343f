package io.hrts.stats;

import io.hrts.HrtsException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The statistics configuration of {@link PortableStats}: the native library's keys, defaults and
 * messages (native/stats/src/config.rs), parsed from JSON by {@link PortableJson}.
 */
final class PortableConfig {
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
                + PortableJson.text(got));
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
        return !n.isEmpty() && n.getBytes(StandardCharsets.UTF_8).length <= PortableStats.MAX_NAME_LEN
                && n.codePoints().noneMatch(Character::isISOControl);
    }

    @SuppressWarnings("unchecked")
    static PortableConfig parse(Object value) {
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
        PortableConfig cfg = new PortableConfig();
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
                        + "file name, got " + PortableJson.text(f));
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
