//! `hrts info`: every fact the segment records, one `key: value` per line.
//! Below a time (epoch ns) its UTC date, below a duration (ns, or ticks of the
//! counter) the same in the unit that suits it, each on a line of its own that
//! starts with spaces and `=`: a reader of `key: value` lines skips them, and
//! the values stay the raw numbers the library's own `SegmentInfo` has.

use super::units::{duration, utc};
use crate::exit::CliError;
use hrts_core::{Opened, SharedBase};
use std::fmt::Write as _;

/// The keys whose values are times since the epoch, in ns (0: never).
const TIMES: &[&str] = &[
    "created epoch ns",
    "base ns",
    "last tie epoch ns",
    "last disruption epoch ns",
];

/// The keys whose values are durations in ns.
const DURATIONS: &[&str] = &[
    "bound ns",
    "bound line error ns",
    "bound age ns",
    "bound half width ns",
    "calibration elapsed ns",
    "evaluation max shift ns",
    "offset ns",
    "tie interval ns",
    "step threshold ns",
    "last tie offset ns",
    "pending ns",
    "last step ns",
    "largest step ns",
];

/// What a person reads beside `key: value`, if anything: the UTC date of a
/// time, a duration in µs/ms/s, the counter ticks of the wrap threshold as time.
fn human(key: &str, value: &str, frequency: Option<u64>) -> Option<String> {
    if TIMES.contains(&key) {
        return match value.parse::<u64>().ok()? {
            0 => Some("never".to_string()),
            ns => Some(utc(ns)),
        };
    }
    if DURATIONS.contains(&key) {
        return Some(duration(value.parse::<i64>().ok()? as f64));
    }
    if key == "wrap threshold ticks" {
        let hz = frequency.filter(|&f| f > 0)?;
        let ticks = value.parse::<u64>().ok()?;
        return Some(format!(
            "{} at {hz} Hz",
            duration(ticks as f64 * 1e9 / hz as f64)
        ));
    }
    None
}

/// The lines of `hrts info` for these fields.
pub fn lines(fields: &[(&str, String)]) -> String {
    let frequency = fields
        .iter()
        .find(|(k, _)| *k == "frequency")
        .and_then(|(_, v)| v.parse().ok());
    let mut s = String::new();
    for (key, value) in fields {
        // Writing to a String cannot fail.
        let _ = writeln!(s, "{key}: {value}");
        if let Some(h) = human(key, value, frequency) {
            // The `=` under the `:`, the human value under the raw one.
            let _ = writeln!(s, "{:>w$} {h}", "=", w = key.len() + 1);
        }
    }
    s
}

pub fn opened_name(opened: Opened) -> &'static str {
    match opened {
        Opened::Created => "created",
        Opened::Attached => "attached",
        Opened::TookOver => "took-over",
    }
}

pub fn run(base: &SharedBase) -> Result<(), CliError> {
    // `opened` is this process's own story, not a fact of the segment.
    let mut fields = base.info().fields();
    fields.insert(2, ("opened", opened_name(base.opened()).to_string()));
    let mut s = lines(&fields);
    s.push_str(&lines(&bound_fields(base)));
    s.push_str(&super::os_frequency::lines(base.source(), base.frequency()));
    super::print(&s)
}

/// The `bound ...` lines: the system clock's error bound as the page holds
/// it, aged to now (what `hrts now --bound` widens a stamp by).
pub fn bound_fields(base: &SharedBase) -> Vec<(&'static str, String)> {
    let Some(b) = base.bound_state() else {
        return vec![("bound status", "none (no bound published yet)".into())];
    };
    vec![
        ("bound status", b.status.name().to_string()),
        ("bound source", b.source.name().to_string()),
        ("bound ns", b.bound_ns.to_string()),
        ("bound line error ns", b.line_error_ns.to_string()),
        (
            "bound drift ppm",
            format!("{}", b.drift_ppb as f64 / 1000.0),
        ),
        ("bound age ns", b.age_ns.to_string()),
        ("bound half width ns", b.half_width_ns.to_string()),
        ("leap second", b.leap.name().to_string()),
    ]
    .into_iter()
    .chain(disruption_fields(base))
    .collect()
}

/// The `disruptions` lines: how many the writers saw, the last one's time
/// and kind (pages of minor 5 and later).
fn disruption_fields(base: &SharedBase) -> Vec<(&'static str, String)> {
    let Some(d) = base.disruptions() else {
        return Vec::new();
    };
    let mut v = vec![("disruptions", d.count.to_string())];
    if d.count > 0 {
        v.push(("last disruption epoch ns", d.last_ns.to_string()));
        v.push((
            "last disruption",
            format!(
                "{}{}",
                d.last_kind.map_or("unknown", |k| k.name()),
                if d.pending {
                    " (rate not learned again yet)"
                } else {
                    ""
                }
            ),
        ));
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_and_durations_get_a_human_line_below_the_raw_one() {
        let fields = [
            ("segment", "/hrts-x".to_string()),
            ("frequency", "1000000000".to_string()),
            ("calibration elapsed ns", "52003456".to_string()),
            ("created epoch ns", "1795614176123456789".to_string()),
            ("wrap threshold ticks", "3600000000000".to_string()),
            ("offset ns", "-40".to_string()),
            ("last tie epoch ns", "0".to_string()),
            ("evaluation max shift ns", "unbounded".to_string()),
            ("ties", "3".to_string()),
        ];
        assert_eq!(
            lines(&fields),
            "segment: /hrts-x\n\
             frequency: 1000000000\n\
             calibration elapsed ns: 52003456\n\
             \x20                     = 52.003 ms\n\
             created epoch ns: 1795614176123456789\n\
             \x20               = 2026-11-25T13:42:56.123456789Z\n\
             wrap threshold ticks: 3600000000000\n\
             \x20                   = 1.00 h at 1000000000 Hz\n\
             offset ns: -40\n\
             \x20        = -40 ns\n\
             last tie epoch ns: 0\n\
             \x20                = never\n\
             evaluation max shift ns: unbounded\n\
             ties: 3\n"
        );
        // A `key: value` reader (split at the first ": ") sees no extra key.
        assert!(lines(&fields)
            .lines()
            .filter(|l| l.contains(": "))
            .all(|l| fields.iter().any(|(k, _)| l.starts_with(&format!("{k}: ")))));
    }
}
