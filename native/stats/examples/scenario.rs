//! The cross-language scenario: the same measurements are made from Rust (here),
//! C (tests/c/stats) and Java (tests/java/io/hrts/stats), and their dumps must
//! agree.
//!
//! `cargo run -p hrts-stats --example scenario` runs the Rust version on the
//! process-wide instance (segment from HRTS_SEGMENT) and prints its dump in
//! comparable form; `… -- --normalize FILE` prints another language's JSON dump
//! in that form. Comparable form leaves out what differs between runs:
//! timestamps, the interval statistics (they decay with the time of the dump),
//! the durations of the instance timer `scenario.spans` (real time: only its
//! count stays) and the library's queue counters.

use hrts_stats::{global, Config};
use serde_json::Value;

/// Its metrics are stamped per event (`exact-stamps`): summed into cells and
/// stamped by the processing passes, the order-dependent statistics would
/// depend on where each language's passes happened to fall.
const CONFIG: &str = r#"{"handystats": {"incremental-statistics": {"moving-average-alpha": 0.25},
    "json-dump": {"interval": 0}, "metrics-dump": {"interval": 0},
    "exact-stamps": ["scenario.*"]}}"#;

fn run() -> String {
    let stats = global();
    stats.configure(Config::from_json(CONFIG).unwrap()).unwrap();
    stats.start().unwrap();
    stats.start().unwrap(); // idempotent
    for _ in 0..10 {
        hrts_stats::counter_increment!("scenario.requests");
    }
    hrts_stats::counter_decrement!("scenario.requests", 3);
    hrts_stats::counter_change!("scenario.requests", 5);
    hrts_stats::counter_init!("scenario.balance", 100);
    hrts_stats::counter_change!("scenario.balance", -150);
    hrts_stats::counter_change!("scenario.balance", 20);
    for i in 1..=20 {
        hrts_stats::gauge_set!("scenario.queue", i as f64 * 0.5);
    }
    let latency = stats.timer("scenario.latency").unwrap();
    for i in 1..=10 {
        latency.record(1000 * i);
    }
    hrts_stats::timer_start!("scenario.spans", 1);
    hrts_stats::timer_start!("scenario.spans", 2);
    hrts_stats::timer_start!("scenario.spans");
    hrts_stats::timer_stop!("scenario.spans", 2);
    hrts_stats::timer_stop!("scenario.spans", 1);
    hrts_stats::timer_stop!("scenario.spans");
    hrts_stats::timer_stop!("scenario.spans", 9); // no such instance
    let json = stats.json_dump();
    stats.stop();
    stats.stop(); // idempotent
    json
}

/// The comparable form of a JSON dump (see the module docs), pretty-printed.
fn normalize(json: &str) -> String {
    let mut v: Value = serde_json::from_str(json).expect("a JSON dump");
    let map = v.as_object_mut().expect("a JSON object");
    map.retain(|name, _| {
        !name.starts_with("hrts-stats.") || name == "hrts-stats.timer-stops-without-start"
    });
    for (name, m) in map.iter_mut() {
        let m = m.as_object_mut().expect("a metric object");
        m.remove("timestamp");
        if name == "scenario.spans" || name.starts_with("hrts-stats.") {
            let count = m["values"]["count"].clone();
            m.retain(|k, _| k == "type" || (k == "value" && name.starts_with("hrts-stats.")));
            m.insert("count".into(), count);
            continue;
        }
        for stats in m.values_mut().filter_map(Value::as_object_mut) {
            stats.retain(|k, _| !k.starts_with("interval-") && k != "rate");
        }
    }
    serde_json::to_string_pretty(&v).unwrap()
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.as_slice() {
        [] => println!("{}", normalize(&run())),
        [flag, file] if flag == "--normalize" => {
            let text = std::fs::read_to_string(file).unwrap_or_else(|e| panic!("{file}: {e}"));
            println!("{}", normalize(&text));
        }
        _ => {
            eprintln!("usage: scenario [--normalize DUMP.json]");
            std::process::exit(2);
        }
    }
}
