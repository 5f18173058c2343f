//! Dumps: a metrics dump as typed values and a JSON dump in the seed's shape.
//!
//! ```text
//! {"requests": {"type": "counter", "timestamp": 1718000000123456789, "value": 42,
//!               "values": {"min": 0, "max": 42, "sum": 903, "count": 43, "mean": 21,
//!                          "moving-avg": 36.1, "interval-count": 12.5, "interval-sum": 480.2,
//!                          "interval-mean": 38.4, "rate": 12.5, "p50": 21.1, "p90": 38.2,
//!                          "p99": 42, "p99.9": 42},
//!               "incr-deltas": {...}, "decr-deltas": {...}, "deltas": {...}},
//!  "latency": {"type": "timer", "timestamp": ..., "value": 1520, "values": {...}},
//!  "queue size": {"type": "gauge", "timestamp": ..., "value": 7.5, "values": {...}}}
//! ```
//!
//! Timestamps are epoch nanoseconds on the hrts timeline; a metric's timestamp
//! is its last update. Timer values are nanoseconds. Statistics that need at
//! least one datum (min, max, mean, moving-avg, interval-mean, quantiles) are
//! `null` when there is none. `rate` is per second over the moving interval:
//! data per second in every `values` set (counter changes, gauge sets, timer
//! measurements), the deltas' sum per second in a counter's `incr-deltas`,
//! `decr-deltas` and `deltas`. Numbers that are whole and within ±2^53 are
//! written as integers.

use crate::incremental::Statistics;
use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::{Map, Number, Value};
use std::collections::BTreeMap;

/// A counter's dump entry.
#[derive(Clone, Debug, PartialEq)]
pub struct CounterDump {
    pub timestamp: u64,
    pub value: i64,
    pub values: Statistics,
    pub incr_deltas: Statistics,
    pub decr_deltas: Statistics,
    pub deltas: Statistics,
}

/// A gauge's dump entry.
#[derive(Clone, Debug, PartialEq)]
pub struct GaugeDump {
    pub timestamp: u64,
    pub value: f64,
    pub values: Statistics,
}

/// A timer's dump entry (durations in nanoseconds).
#[derive(Clone, Debug, PartialEq)]
pub struct TimerDump {
    pub timestamp: u64,
    /// The last duration measured.
    pub value: u64,
    pub values: Statistics,
}

/// One metric of a dump.
#[derive(Clone, Debug, PartialEq)]
pub enum Metric {
    /// Boxed: a counter carries four statistics sets.
    Counter(Box<CounterDump>),
    Gauge(GaugeDump),
    Timer(TimerDump),
}

impl Metric {
    pub fn timestamp(&self) -> u64 {
        match self {
            Metric::Counter(c) => c.timestamp,
            Metric::Gauge(g) => g.timestamp,
            Metric::Timer(t) => t.timestamp,
        }
    }

    /// The statistics sets of the metric, by their dump names.
    pub fn statistics(&self) -> Vec<(&'static str, &Statistics)> {
        match self {
            Metric::Counter(c) => vec![
                ("values", &c.values),
                ("incr-deltas", &c.incr_deltas),
                ("decr-deltas", &c.decr_deltas),
                ("deltas", &c.deltas),
            ],
            Metric::Gauge(g) => vec![("values", &g.values)],
            Metric::Timer(t) => vec![("values", &t.values)],
        }
    }

    /// The metric's headline rate per second over the moving interval: a
    /// counter's net change per second (`deltas.rate`), a gauge's sets or a
    /// timer's measurements per second (`values.rate`).
    pub fn rate(&self) -> f64 {
        match self {
            Metric::Counter(c) => c.deltas.rate,
            Metric::Gauge(g) => g.values.rate,
            Metric::Timer(t) => t.values.rate,
        }
    }

    pub fn type_name(&self) -> &'static str {
        match self {
            Metric::Counter(_) => "counter",
            Metric::Gauge(_) => "gauge",
            Metric::Timer(_) => "timer",
        }
    }
}

/// Every metric that has seen an event, by name, at one moment.
#[derive(Clone, Debug, PartialEq)]
pub struct Dump {
    /// When the dump was made (epoch nanoseconds).
    pub timestamp: u64,
    pub metrics: BTreeMap<String, Metric>,
}

/// The names of a statistics set's entries, in dump order.
pub const STATISTICS_KEYS: [&str; 14] = [
    "min",
    "max",
    "sum",
    "count",
    "mean",
    "moving-avg",
    "interval-count",
    "interval-sum",
    "interval-mean",
    "rate",
    "p50",
    "p90",
    "p99",
    "p99.9",
];

fn number(x: f64) -> Value {
    const EXACT: f64 = (1u64 << 53) as f64;
    if x.fract() == 0.0 && x.abs() <= EXACT {
        Value::Number(Number::from(x as i64))
    } else {
        Number::from_f64(x).map_or(Value::Null, Value::Number)
    }
}

fn opt(x: Option<f64>) -> Value {
    x.map_or(Value::Null, number)
}

impl Statistics {
    /// The values in [`STATISTICS_KEYS`] order.
    pub fn fields(&self) -> [Option<f64>; 14] {
        [
            self.min,
            self.max,
            Some(self.sum),
            Some(self.count as f64),
            self.mean,
            self.moving_avg,
            Some(self.interval_count),
            Some(self.interval_sum),
            self.interval_mean,
            Some(self.rate),
            self.quantiles[0],
            self.quantiles[1],
            self.quantiles[2],
            self.quantiles[3],
        ]
    }

    pub fn to_json(&self) -> Value {
        let mut m = Map::new();
        for (k, v) in STATISTICS_KEYS.iter().zip(self.fields()) {
            m.insert((*k).to_string(), opt(v));
        }
        m.insert("count".into(), Value::Number(self.count.into()));
        Value::Object(m)
    }
}

impl Metric {
    pub fn to_json(&self) -> Value {
        let mut m = Map::new();
        m.insert("type".into(), Value::String(self.type_name().into()));
        m.insert("timestamp".into(), Value::Number(self.timestamp().into()));
        let value = match self {
            Metric::Counter(c) => Value::Number(c.value.into()),
            Metric::Gauge(g) => number(g.value),
            Metric::Timer(t) => Value::Number(t.value.into()),
        };
        m.insert("value".into(), value);
        for (name, stats) in self.statistics() {
            m.insert(name.into(), stats.to_json());
        }
        Value::Object(m)
    }
}

impl Dump {
    pub fn to_json_value(&self) -> Value {
        Value::Object(
            self.metrics
                .iter()
                .map(|(k, v)| (k.clone(), v.to_json()))
                .collect(),
        )
    }

    /// The JSON dump text: [`to_json_value`](Dump::to_json_value)'s text,
    /// written a metric at a time.
    pub fn to_json(&self) -> String {
        json_text(&DumpJson(self))
    }
}

/// A dump written as JSON a metric's tree at a time: the whole dump's tree of
/// 6,000 metrics took about 100 MiB (a `Map` and a `String` per statistic),
/// where its text takes a few MB and one metric's tree a few KiB.
pub(crate) struct DumpJson<'a>(pub &'a Dump);

impl Serialize for DumpJson<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(self.0.metrics.len()))?;
        for (name, metric) in &self.0.metrics {
            map.serialize_entry(name, &metric.to_json())?;
        }
        map.end()
    }
}

/// `value` as one line of JSON text.
pub(crate) fn json_text(value: &impl Serialize) -> String {
    // What is written here has string keys and numbers that are finite or
    // null, which always serialize.
    serde_json::to_string(value).expect("hrts's JSON documents always serialize")
}
