//! Configuration: the seed's JSON keys and defaults, plus one key of hrts's own
//! (`message-queue.capacity`). Parsed by hand from a `serde_json::Value` so that
//! every error names the key it is about.

use hrts_core::{Error, ErrorKind, Result};
use serde_json::{Map, Value};
use std::path::Path;
use std::time::Duration;

/// Settings of one [`Stats`](crate::Stats) instance.
#[derive(Clone, Debug, PartialEq)]
pub struct Config {
    /// Smoothing factor of the exponential moving average, 0 < alpha < 1
    /// (`incremental-statistics.moving-average-alpha`, default 0.125).
    pub moving_average_alpha: f64,
    /// Window of the interval count, sum and mean
    /// (`incremental-statistics.moving-interval`, milliseconds, default 1000).
    pub moving_interval: Duration,
    /// A timer instance with no event for this long is dropped without touching
    /// the statistics (`timer.idle-timeout`, milliseconds, default 10000).
    pub timer_idle_timeout: Duration,
    /// Period of the library's JSON dump; zero disables it (`json-dump.interval`,
    /// milliseconds, default 500).
    pub json_dump_interval: Duration,
    /// A file the periodic JSON dump is also written to, replaced whole each
    /// time (`json-dump.file`; none by default). See [`crate::json_file`].
    pub json_dump_file: Option<std::path::PathBuf>,
    /// Period of the library's metrics dump; zero disables it
    /// (`metrics-dump.interval`, milliseconds, default 500).
    pub metrics_dump_interval: Duration,
    /// How long the processing thread sleeps when it finds no events, step by
    /// step (`message-queue.sleep-on-empty`, microseconds, default
    /// [1, 5, 10, 50, 100, 500, 1000, 5000, 10000]).
    pub sleep_on_empty: Vec<Duration>,
    /// Events each thread's queue holds before it folds events into per-metric
    /// summaries (`message-queue.capacity`, hrts's own key; a power of two from
    /// 16 to 2^20, default 2048).
    pub queue_capacity: usize,
    /// Publishing to the shared statistics segment (`shared-memory`, hrts's own
    /// section; see [`shared`](crate::shared)).
    pub shared_memory: SharedMemory,
    /// Metrics whose every counter delta, gauge value or recorded duration
    /// carries its own precise stamp
    /// (`exact-stamps`, hrts's own key: metric names, or prefixes ending in
    /// `*`; none by default). The others are stamped by the processing pass
    /// that takes them: see [`ExactStamps`].
    pub exact_stamps: ExactStamps,
}

/// Which metrics are stamped per event. By default none is: a counter's delta,
/// a gauge's value and (from Rust and C) a timer's recorded duration then cost
/// about a relaxed add (summed into the thread's cell for the metric, never
/// queued, no clock read) and are stamped with the time of the processing pass
/// that takes them, at most one sleep step (10 ms by default) after they
/// happened. A metric listed here pays a clock read and a queue slot per event
/// and is stamped when it happens, as timer instance events always are.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ExactStamps(pub Vec<String>);

impl ExactStamps {
    /// Whether metric `name` is listed (by name, or by a prefix ending in `*`).
    pub fn covers(&self, name: &str) -> bool {
        self.0.iter().any(|p| match p.strip_suffix('*') {
            Some(prefix) => name.starts_with(prefix),
            None => name == p,
        })
    }
}

/// The `shared-memory` section.
#[derive(Clone, Debug, PartialEq)]
pub struct SharedMemory {
    /// Whether the instance publishes its metrics when started (`enable`,
    /// default true).
    pub enable: bool,
    /// The segment (`name`; default: `HRTS_STATS_SEGMENT`, else
    /// `/hrts-stats-<uid>`).
    pub name: Option<String>,
    /// How often metrics that changed are published between dumps
    /// (`interval`, milliseconds, default 100).
    pub interval: Duration,
    /// How long the cells of a process that is gone stay readable before this
    /// instance reclaims them (`grace`, milliseconds; default:
    /// `HRTS_STATS_GRACE_MS`, else 60000).
    pub grace: Option<Duration>,
    /// The program (service) name the instance registers under, the
    /// `program` label of the Prometheus exposition (`program`, 1 to 31
    /// bytes; default: `HRTS_STATS_PROGRAM`, else (Java) the
    /// `hrts.stats.program` property or the main class or jar, else
    /// `/proc/self/comm`).
    pub program: Option<String>,
    /// A stable id of this process among those of its program, kept across
    /// restarts (a replica's number or name): with the program, what names its
    /// series in the Prometheus exposition (`instance-id`, 1 to 31 bytes;
    /// default: `HRTS_STATS_INSTANCE_ID`, else none).
    pub instance_id: Option<String>,
}

impl Default for SharedMemory {
    fn default() -> Self {
        SharedMemory {
            enable: true,
            name: None,
            interval: Duration::from_millis(100),
            grace: None,
            program: None,
            instance_id: None,
        }
    }
}

impl Default for Config {
    fn default() -> Self {
        Config {
            moving_average_alpha: 0.125,
            moving_interval: Duration::from_millis(1000),
            timer_idle_timeout: Duration::from_millis(10_000),
            json_dump_interval: Duration::from_millis(500),
            json_dump_file: None,
            metrics_dump_interval: Duration::from_millis(500),
            sleep_on_empty: [1, 5, 10, 50, 100, 500, 1000, 5000, 10000]
                .iter()
                .map(|&us| Duration::from_micros(us))
                .collect(),
            queue_capacity: 2048,
            shared_memory: SharedMemory::default(),
            exact_stamps: ExactStamps::default(),
        }
    }
}

const MAX_MS: u64 = 1 << 40;

fn invalid(key: &str, what: &str, got: &Value) -> Error {
    Error::new(
        ErrorKind::InvalidArgument,
        format!("statistics configuration key {key}: expected {what}, got {got}"),
    )
}

fn section<'a>(root: &'a Map<String, Value>, name: &str) -> Result<Option<&'a Map<String, Value>>> {
    match root.get(name) {
        None => Ok(None),
        Some(Value::Object(m)) => Ok(Some(m)),
        Some(other) => Err(invalid(name, "an object", other)),
    }
}

fn check_keys(map: &Map<String, Value>, prefix: &str, known: &[&str]) -> Result<()> {
    for key in map.keys() {
        if !known.contains(&key.as_str()) {
            let full = if prefix.is_empty() {
                key.clone()
            } else {
                format!("{prefix}.{key}")
            };
            let list = known.join(", ");
            let place = if prefix.is_empty() {
                "the top level"
            } else {
                prefix
            };
            return Err(Error::new(
                ErrorKind::InvalidArgument,
                format!(
                    "unknown statistics configuration key {full}; known keys in {place}: {list}"
                ),
            ));
        }
    }
    Ok(())
}

fn millis(v: &Value, key: &str, allow_zero: bool) -> Result<Duration> {
    let what = if allow_zero {
        "a whole number of milliseconds, 0 or more"
    } else {
        "a whole number of milliseconds, more than 0"
    };
    match v.as_u64() {
        Some(ms) if ms <= MAX_MS && (allow_zero || ms > 0) => Ok(Duration::from_millis(ms)),
        _ => Err(invalid(key, what, v)),
    }
}

impl Config {
    /// Parses a configuration in the seed's shape, `{"handystats": {...}}`, or the
    /// inner object alone. Keys that are absent keep their defaults.
    pub fn from_json(text: &str) -> Result<Config> {
        let value: Value = serde_json::from_str(text).map_err(|e| {
            Error::new(
                ErrorKind::InvalidArgument,
                format!("statistics configuration is not valid JSON: {e}"),
            )
        })?;
        Config::from_value(&value)
    }

    /// Reads and parses a configuration file (see [`Config::from_json`]).
    pub fn from_file(path: impl AsRef<Path>) -> Result<Config> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path).map_err(|e| {
            Error::from_io(
                format!("reading statistics configuration {}", path.display()),
                &e,
                "check the file name and its permissions",
            )
        })?;
        Config::from_json(&text)
            .map_err(|e| Error::new(e.kind(), format!("{}: {}", path.display(), e.message())))
    }

    /// Parses an already decoded JSON value (see [`Config::from_json`]).
    pub fn from_value(value: &Value) -> Result<Config> {
        let Value::Object(root) = value else {
            return Err(invalid("(root)", "a JSON object", value));
        };
        let (root, prefix) = match root.get("handystats") {
            Some(inner) => {
                check_keys(root, "", &["handystats"])?;
                match inner {
                    Value::Object(m) => (m, "handystats."),
                    other => return Err(invalid("handystats", "an object", other)),
                }
            }
            None => (root, ""),
        };
        let key = |k: &str| format!("{prefix}{k}");
        let scope = prefix.trim_end_matches('.');
        check_keys(
            root,
            scope,
            &[
                "incremental-statistics",
                "timer",
                "json-dump",
                "metrics-dump",
                "message-queue",
                "shared-memory",
                "exact-stamps",
            ],
        )?;
        let mut cfg = Config::default();
        if let Some(v) = root.get("exact-stamps") {
            let what = "an array of metric names (a trailing * matches every name it begins)";
            let items = v
                .as_array()
                .ok_or_else(|| invalid(&key("exact-stamps"), what, v))?;
            cfg.exact_stamps = ExactStamps(
                items
                    .iter()
                    .map(|i| {
                        i.as_str()
                            .filter(|n| {
                                let bare = n.strip_suffix('*').unwrap_or(n);
                                *n == "*" || crate::registry::check_name(bare).is_ok()
                            })
                            .map(str::to_string)
                            .ok_or_else(|| invalid(&key("exact-stamps"), what, v))
                    })
                    .collect::<Result<_>>()?,
            );
        }

        if let Some(m) = section(root, "incremental-statistics")? {
            let name = key("incremental-statistics");
            check_keys(m, &name, &["moving-average-alpha", "moving-interval"])?;
            if let Some(v) = m.get("moving-average-alpha") {
                cfg.moving_average_alpha = match v.as_f64() {
                    Some(a) if a > 0.0 && a < 1.0 => a,
                    _ => {
                        return Err(invalid(
                            &format!("{name}.moving-average-alpha"),
                            "a number between 0 and 1 (exclusive)",
                            v,
                        ))
                    }
                };
            }
            if let Some(v) = m.get("moving-interval") {
                cfg.moving_interval = millis(v, &format!("{name}.moving-interval"), false)?;
            }
        }
        if let Some(m) = section(root, "timer")? {
            let name = key("timer");
            check_keys(m, &name, &["idle-timeout"])?;
            if let Some(v) = m.get("idle-timeout") {
                cfg.timer_idle_timeout = millis(v, &format!("{name}.idle-timeout"), false)?;
            }
        }
        if let Some(m) = section(root, "json-dump")? {
            cfg.json_dump_file = crate::json_file::configured(m, &key("json-dump"))?;
        }
        for (sec, field) in [
            ("json-dump", &mut cfg.json_dump_interval),
            ("metrics-dump", &mut cfg.metrics_dump_interval),
        ] {
            if let Some(m) = section(root, sec)? {
                let name = key(sec);
                let allowed: &[&str] = if sec == "json-dump" {
                    &["interval", "file"]
                } else {
                    &["interval"]
                };
                check_keys(m, &name, allowed)?;
                if let Some(v) = m.get("interval") {
                    *field = millis(v, &format!("{name}.interval"), true)?;
                }
            }
        }
        if let Some(m) = section(root, "message-queue")? {
            let name = key("message-queue");
            check_keys(m, &name, &["sleep-on-empty", "capacity"])?;
            if let Some(v) = m.get("sleep-on-empty") {
                let k = format!("{name}.sleep-on-empty");
                let what = "a non-empty array of whole microseconds, each from 1 to 1000000";
                let items = v
                    .as_array()
                    .filter(|a| !a.is_empty())
                    .ok_or_else(|| invalid(&k, what, v))?;
                cfg.sleep_on_empty = items
                    .iter()
                    .map(|i| match i.as_u64() {
                        Some(us) if (1..=1_000_000).contains(&us) => Ok(Duration::from_micros(us)),
                        _ => Err(invalid(&k, what, v)),
                    })
                    .collect::<Result<_>>()?;
            }
            if let Some(v) = m.get("capacity") {
                cfg.queue_capacity = match v.as_u64() {
                    Some(c) if (16..=1 << 20).contains(&c) && c.is_power_of_two() => c as usize,
                    _ => {
                        return Err(invalid(
                            &format!("{name}.capacity"),
                            "a power of two from 16 to 1048576 (events per thread)",
                            v,
                        ))
                    }
                };
            }
        }
        if let Some(m) = section(root, "shared-memory")? {
            let name = key("shared-memory");
            check_keys(
                m,
                &name,
                &[
                    "enable",
                    "name",
                    "interval",
                    "grace",
                    "program",
                    "instance-id",
                ],
            )?;
            if let Some(v) = m.get("enable") {
                cfg.shared_memory.enable = v
                    .as_bool()
                    .ok_or_else(|| invalid(&format!("{name}.enable"), "true or false", v))?;
            }
            if let Some(v) = m.get("name") {
                let what = "a shared-memory name: '/' and up to 254 more bytes, no other '/'";
                let n = v
                    .as_str()
                    .filter(|n| hrts_core::storage::shm::validate_name(n).is_ok())
                    .ok_or_else(|| invalid(&format!("{name}.name"), what, v))?;
                cfg.shared_memory.name = Some(n.to_string());
            }
            if let Some(v) = m.get("interval") {
                cfg.shared_memory.interval = millis(v, &format!("{name}.interval"), false)?;
            }
            if let Some(v) = m.get("grace") {
                cfg.shared_memory.grace = Some(millis(v, &format!("{name}.grace"), true)?);
            }
            for (k, field) in [
                ("program", &mut cfg.shared_memory.program),
                ("instance-id", &mut cfg.shared_memory.instance_id),
            ] {
                if let Some(v) = m.get(k) {
                    let what = "a string of 1 to 31 bytes without control characters";
                    let text = v
                        .as_str()
                        .filter(|t| crate::shared::check_label(t).is_ok())
                        .ok_or_else(|| invalid(&format!("{name}.{k}"), what, v))?;
                    *field = Some(text.to_string());
                }
            }
        }
        Ok(cfg)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_the_seeds() {
        let c = Config::from_json("{}").unwrap();
        assert_eq!(c, Config::default());
        assert_eq!(c.moving_average_alpha, 0.125);
        assert_eq!(c.moving_interval, Duration::from_millis(1000));
        assert_eq!(c.timer_idle_timeout, Duration::from_millis(10000));
        assert_eq!(c.json_dump_interval, Duration::from_millis(500));
        assert_eq!(c.metrics_dump_interval, Duration::from_millis(500));
        assert_eq!(c.sleep_on_empty.len(), 9);
        assert_eq!(c.sleep_on_empty[8], Duration::from_millis(10));
    }

    #[test]
    fn the_seeds_shape_and_the_inner_object_both_parse() {
        let seed = r#"{"handystats": {"incremental-statistics": {"moving-average-alpha": 0.25,
            "moving-interval": 1500}, "timer": {"idle-timeout": 100}, "json-dump": {"interval": 0},
            "metrics-dump": {"interval": 1000}, "message-queue": {"sleep-on-empty": [1, 10, 100, 1000],
            "capacity": 64}}}"#;
        let c = Config::from_json(seed).unwrap();
        assert_eq!(c.moving_average_alpha, 0.25);
        assert_eq!(c.moving_interval, Duration::from_millis(1500));
        assert_eq!(c.timer_idle_timeout, Duration::from_millis(100));
        assert_eq!(c.json_dump_interval, Duration::ZERO);
        assert_eq!(c.metrics_dump_interval, Duration::from_millis(1000));
        assert_eq!(
            c.sleep_on_empty,
            vec![
                Duration::from_micros(1),
                Duration::from_micros(10),
                Duration::from_micros(100),
                Duration::from_micros(1000)
            ]
        );
        assert_eq!(c.queue_capacity, 64);
        let shm = Config::from_json(
            r#"{"shared-memory": {"program": "checkout", "instance-id": "replica-2"}}"#,
        )
        .unwrap();
        assert_eq!(shm.shared_memory.program.as_deref(), Some("checkout"));
        assert_eq!(shm.shared_memory.instance_id.as_deref(), Some("replica-2"));
        assert_eq!(Config::default().shared_memory.program, None);
        let inner = Config::from_json(r#"{"timer": {"idle-timeout": 5000}}"#).unwrap();
        assert_eq!(inner.timer_idle_timeout, Duration::from_millis(5000));
    }

    fn err(text: &str) -> String {
        let e = Config::from_json(text).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument);
        e.message().to_string()
    }

    #[test]
    fn exact_stamps_name_metrics_or_prefixes() {
        let c = Config::from_json(r#"{"exact-stamps": ["db.latency", "queue.*"]}"#).unwrap();
        assert!(c.exact_stamps.covers("db.latency"));
        assert!(c.exact_stamps.covers("queue.depth"));
        assert!(!c.exact_stamps.covers("db.latency.p99"));
        assert!(!c.exact_stamps.covers("requests"));
        assert!(!Config::default().exact_stamps.covers("requests"));
        let all = Config::from_json(r#"{"handystats": {"exact-stamps": ["*"]}}"#).unwrap();
        assert!(all.exact_stamps.covers("anything"));
        for bad in [
            r#"{"exact-stamps": "x"}"#,
            r#"{"exact-stamps": [""]}"#,
            r#"{"exact-stamps": [3]}"#,
        ] {
            let m = err(bad);
            assert!(m.contains("exact-stamps"), "{m}");
        }
    }

    #[test]
    fn errors_name_the_key() {
        let m = err(r#"{"handystats": {"timer": {"idle-timout": 5}}}"#);
        assert!(
            m.contains("handystats.timer.idle-timout") && m.contains("idle-timeout"),
            "{m}"
        );
        let m = err(r#"{"handystats": {"timer": {"idle-timeout": "5s"}}}"#);
        assert!(
            m.contains("handystats.timer.idle-timeout") && m.contains("\"5s\""),
            "{m}"
        );
        let m = err(r#"{"incremental-statistics": {"moving-average-alpha": 1.5}}"#);
        assert!(
            m.contains("incremental-statistics.moving-average-alpha"),
            "{m}"
        );
        let m = err(r#"{"incremental-statistics": {"moving-interval": 0}}"#);
        assert!(m.contains("incremental-statistics.moving-interval"), "{m}");
        let m = err(r#"{"json-dump": {"interval": -1}}"#);
        assert!(m.contains("json-dump.interval"), "{m}");
        let m = err(r#"{"message-queue": {"sleep-on-empty": []}}"#);
        assert!(m.contains("message-queue.sleep-on-empty"), "{m}");
        let m = err(r#"{"message-queue": {"capacity": 100}}"#);
        assert!(m.contains("message-queue.capacity"), "{m}");
        let m = err(r#"{"handystats": {}, "extra": 1}"#);
        assert!(m.contains("extra"), "{m}");
        let m = err(r#"{"gauge": {}}"#);
        assert!(m.contains("gauge") && m.contains("top level"), "{m}");
        let m = err(r#"{"timer": 5}"#);
        assert!(m.contains("timer") && m.contains("object"), "{m}");
        let m = err(r#"{"shared-memory": {"program": ""}}"#);
        assert!(
            m.contains("shared-memory.program") && m.contains("1 to 31 bytes"),
            "{m}"
        );
        let m = err(r#"{"shared-memory": {"instance-id": "0123456789abcdef0123456789abcdef"}}"#);
        assert!(m.contains("shared-memory.instance-id"), "{m}");
        let m = err(r#"{"shared-memory": {"program": "a\nb"}}"#);
        assert!(m.contains("shared-memory.program"), "{m}");
        let m = err(r#"{"shared-memory": {"program": 7}}"#);
        assert!(m.contains("shared-memory.program"), "{m}");
        let m = err("[1]");
        assert!(m.contains("object"), "{m}");
        let m = err("{nope");
        assert!(m.contains("not valid JSON"), "{m}");
    }

    #[test]
    fn a_file_is_read_and_a_missing_one_is_an_os_error() {
        let dir = std::env::temp_dir().join(format!("hrts-stats-cfg-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("stats.json");
        std::fs::write(&path, r#"{"handystats": {"timer": {"idle-timeout": 100}}}"#).unwrap();
        let c = Config::from_file(&path).unwrap();
        assert_eq!(c.timer_idle_timeout, Duration::from_millis(100));
        std::fs::write(&path, r#"{"handystats": {"timer": {"idle": 100}}}"#).unwrap();
        let e = Config::from_file(&path).unwrap_err();
        assert!(e.message().contains("stats.json") && e.message().contains("timer.idle"));
        std::fs::remove_dir_all(&dir).unwrap();
        let e = Config::from_file(dir.join("missing.json")).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Os);
        assert!(e.message().contains("missing.json"));
    }
}
