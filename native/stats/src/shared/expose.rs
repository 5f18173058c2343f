//! A [`Snapshot`] as its readers see it: JSON in the handystats dump shape,
//! the Prometheus text exposition format 0.0.4, and a table for people.
//!
//! # Prometheus
//!
//! Every metric of every process is one sample (a group of samples for a
//! timer) labelled `program` and `hrts_instance` (not `instance`, which
//! Prometheus gives every scraped series for its target): what names the
//! process across restarts, so that a restarted process continues the series
//! of the one before it (a counter starting again from 0 is a counter reset
//! to PromQL's `rate`), and no pid starts a series of its own.
//!
//! - `program`: the program (service) name it registered under
//!   ([`ProcessStats::program`]).
//! - `hrts_instance`: its instance id ([`ProcessStats::instance_id`]) if one
//!   was set, else its instance number in the process (`1` for the first);
//!   `ID/N` for instance number N > 1 of a process with instance id `ID`.
//!
//! One process per (`program`, `hrts_instance`) is exposed: the live one; a
//! process that exited only while no live one has its identity (the last to
//! publish of them), so a restarted process replaces the one before it at
//! once. Several live processes with one identity (replicas given no instance
//! id) are each exposed with a `pid` label too, so that none hides another;
//! give them instance ids to keep their series across restarts.
//! [`PrometheusOptions::pid_label`] labels every sample with its pid instead
//! and exposes every registration (a new series at every restart). Aggregate
//! with PromQL (`sum by (program) (...)`).
//!
//! | hrts metric `NAME` | family | samples |
//! | --- | --- | --- |
//! | counter | `hrts_NAME_total`, counter | its value |
//! | gauge | `hrts_NAME`, gauge | its value |
//! | timer | `hrts_NAME_seconds`, summary | `{quantile="0.5"\|"0.9"\|"0.99"\|"0.999"}` (those known), `_sum` (seconds), `_count` |
//!
//! and beside each, its rate per second over the publisher's moving interval
//! ([`Metric::rate`]) as a gauge:
//!
//! | hrts metric `NAME` | family | sample |
//! | --- | --- | --- |
//! | counter | `hrts_NAME_per_second`, gauge | the value's net change per second (`deltas.rate`) |
//! | gauge | `hrts_NAME_updates_per_second`, gauge | sets per second (`values.rate`) |
//! | timer | `hrts_NAME_measurements_per_second`, gauge | durations measured per second (`values.rate`) |
//!
//! plus the gauges `hrts_stats_processes{state="live"|"exited"}` (every
//! registration in the segment, exposed or not) and
//! `hrts_stats_damaged{part="process_slot"|"cell"}`: slots and cells whose
//! words did not match their check words, left out of every sample. The rate
//! gauges add across processes (`sum by (...)`) like the counters.
//!
//! `NAME` is sanitised: every byte outside `[a-zA-Z0-9_:]` becomes `_`; a
//! name that then starts with `hrts_` (the library's own `hrts-stats.*`
//! metrics) keeps that one prefix; a counter's `_total` and a timer's unit
//! suffix (`_seconds`, `_milliseconds`, `_ms`, `_microseconds`, `_us`,
//! `_nanoseconds`, `_ns`: its values are converted to seconds) are not
//! repeated: the counter `requests_total` is `hrts_requests_total`, the timer
//! `latency_ms` is `hrts_latency_seconds`. When two metrics (different names,
//! or one name with different kinds) would give one family name, or a sample
//! name of another family (`hrts_x_count` beside the summary `hrts_x`,
//! `hrts_x_per_second` of the counter `x` and of the gauge `x_per_second`),
//! the later one gets `_2`, `_3`, … before its unit suffix
//! (`hrts_a_b_2_total`, `hrts_a_b_2_per_second`); names that need no
//! sanitising come first, then the others in byte order, counters before
//! gauges before timers. Each family's `# HELP` line names the hrts metric it
//! carries.

use super::snapshot::{ProcessState, ProcessStats, Snapshot};
use crate::dump::Metric;
use crate::histogram::QUANTILES;
use crate::incremental::Statistics;
use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::fmt::Write as _;

impl Snapshot {
    /// `{"segment", "timestamp", "processes": [{"pid", "instance",
    /// "instance_id", "program", "state", "timestamp", "metrics"}], "aggregate", "damaged":
    /// {"process_slots": [...], "cells": [...]}}`, where `metrics` and
    /// `aggregate` are handystats dumps ([`Dump::to_json_value`](crate::Dump::to_json_value))
    /// and `damaged` lists the slot and cell indices left out as damaged.
    pub fn to_json_value(&self) -> Value {
        let processes: Vec<Value> = self
            .processes
            .iter()
            .map(|p| {
                json!({
                    "pid": p.pid,
                    "instance": p.instance,
                    "instance_id": p.instance_id,
                    "program": p.program,
                    "state": p.state.name(),
                    "timestamp": p.dump.timestamp,
                    "metrics": p.dump.to_json_value(),
                })
            })
            .collect();
        json!({
            "segment": self.segment,
            "timestamp": self.taken,
            "processes": processes,
            "aggregate": self.aggregate().to_json_value(),
            "damaged": {
                "process_slots": self.damaged_slots,
                "cells": self.damaged_cells,
            },
        })
    }

    /// [`to_json_value`](Snapshot::to_json_value) as one line of text.
    pub fn to_json(&self) -> String {
        self.to_json_value().to_string()
    }

    /// The Prometheus text exposition format 0.0.4 with the default options
    /// (see the module docs).
    pub fn to_prometheus(&self) -> String {
        self.to_prometheus_with(PrometheusOptions::default())
    }

    /// The Prometheus text exposition format 0.0.4, or OpenMetrics 1.0 (see
    /// [`PrometheusOptions`] and the module docs).
    pub fn to_prometheus_with(&self, options: PrometheusOptions) -> String {
        let exposed = exposed(self, options);
        let mut out = String::new();
        let live = self
            .processes
            .iter()
            .filter(|p| p.state == ProcessState::Live)
            .count();
        out.push_str(
            "# HELP hrts_stats_processes hrts statistics instances in the segment, by state\n\
             # TYPE hrts_stats_processes gauge\n",
        );
        let _ = writeln!(out, "hrts_stats_processes{{state=\"live\"}} {live}");
        let exited = self.processes.len() - live;
        let _ = writeln!(out, "hrts_stats_processes{{state=\"exited\"}} {exited}");
        out.push_str(
            "# HELP hrts_stats_damaged process slots and metric cells left out: their words do not \
             match their check words\n\
             # TYPE hrts_stats_damaged gauge\n",
        );
        let _ = writeln!(
            out,
            "hrts_stats_damaged{{part=\"process_slot\"}} {}",
            self.damaged_slots.len()
        );
        let _ = writeln!(
            out,
            "hrts_stats_damaged{{part=\"cell\"}} {}",
            self.damaged_cells.len()
        );
        for family in families(&exposed) {
            family.write(&exposed, options.openmetrics, &mut out);
        }
        if options.openmetrics {
            out.push_str("# EOF\n");
        }
        out
    }

    /// A fixed-width table: every metric of every process, then every name
    /// aggregated over all processes. Durations are in human units; RATE/S is
    /// [`Metric::rate`] (a counter's net change, a gauge's sets, a timer's
    /// measurements per second over the moving interval).
    pub fn to_table(&self) -> String {
        let live = self
            .processes
            .iter()
            .filter(|p| p.state == ProcessState::Live)
            .count();
        let mut out = format!(
            "statistics segment {}: {} processes ({live} live, {} exited)\n",
            self.segment,
            self.processes.len(),
            self.processes.len() - live
        );
        if self.has_damage() {
            let _ = writeln!(
                out,
                "DAMAGED, left out: {} process slots {:?} and {} metric cells {:?} do not match \
                 their check words (a process wrote over the segment; `hrts stats unlink` \
                 removes it once its programs have stopped)",
                self.damaged_slots.len(),
                self.damaged_slots,
                self.damaged_cells.len(),
                self.damaged_cells
            );
        }
        if self.processes.is_empty() {
            out.push_str("no process has published statistics\n");
            return out;
        }
        let mut rows = vec![[
            "PID", "INSTANCE", "PROGRAM", "STATE", "KIND", "NAME", "VALUE", "COUNT", "MEAN", "MIN",
            "MAX", "P99", "RATE/S",
        ]
        .map(String::from)
        .to_vec()];
        for p in &self.processes {
            let who = [
                p.pid.to_string(),
                p.instance.to_string(),
                printable(&p.program),
                p.state.name().to_string(),
            ];
            if p.dump.metrics.is_empty() {
                let mut row = who.to_vec();
                row.extend(["-", "(no metrics)"].map(String::from));
                row.extend(std::iter::repeat_n("-".to_string(), 7));
                rows.push(row);
            }
            for (name, m) in &p.dump.metrics {
                let mut row = who.to_vec();
                row.extend(metric_cells(name, m));
                rows.push(row);
            }
        }
        out.push('\n');
        layout(&rows, &[2, 3, 4, 5], &mut out);
        out.push_str("\nall processes (aggregated by name)\n");
        let mut rows = vec![[
            "KIND", "NAME", "VALUE", "COUNT", "MEAN", "MIN", "MAX", "P99", "RATE/S",
        ]
        .map(String::from)
        .to_vec()];
        for (name, m) in &self.aggregate().metrics {
            rows.push(metric_cells(name, m));
        }
        layout(&rows, &[0, 1], &mut out);
        out
    }
}

// ---- Prometheus

/// How [`Snapshot::to_prometheus_with`] labels the processes' samples, and in
/// which of the two text formats.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PrometheusOptions {
    /// The OpenMetrics 1.0 text format instead of Prometheus 0.0.4: a counter's
    /// family is named without `_total` (its samples keep it), timer families
    /// in seconds carry `# UNIT`, and the exposition ends with `# EOF`.
    pub openmetrics: bool,
    /// Label every sample with its process's pid too (after `program` and
    /// `hrts_instance`), and expose every registration, exited ones
    /// included: a new series at every restart. Off by default.
    pub pid_label: bool,
}

/// A process whose samples are exposed, and whether they carry its pid.
struct Exposed<'a> {
    process: &'a ProcessStats,
    pid: bool,
}

/// The `hrts_instance` label of a process (see the module docs).
fn hrts_instance(p: &ProcessStats) -> String {
    match (p.instance_id.is_empty(), p.instance) {
        (true, n) => n.to_string(),
        (false, 1) => p.instance_id.clone(),
        (false, n) => format!("{}/{n}", p.instance_id),
    }
}

/// The processes whose samples are exposed, in the snapshot's order.
fn exposed(snap: &Snapshot, options: PrometheusOptions) -> Vec<Exposed<'_>> {
    if options.pid_label {
        return snap
            .processes
            .iter()
            .map(|process| Exposed { process, pid: true })
            .collect();
    }
    let mut by_identity: BTreeMap<(&str, String), Vec<usize>> = BTreeMap::new();
    for (i, p) in snap.processes.iter().enumerate() {
        by_identity
            .entry((p.program.as_str(), hrts_instance(p)))
            .or_default()
            .push(i);
    }
    // Per process: None (not exposed), or whether it carries its pid.
    let mut chosen: Vec<Option<bool>> = vec![None; snap.processes.len()];
    for group in by_identity.values() {
        let live: Vec<usize> = group
            .iter()
            .copied()
            .filter(|&i| snap.processes[i].state == ProcessState::Live)
            .collect();
        if live.is_empty() {
            // The last of the exited ones to publish (the latest pid on a tie).
            let p = |i: usize| &snap.processes[i];
            if let Some(&i) = group
                .iter()
                .max_by_key(|&&i| (p(i).dump.timestamp, p(i).pid))
            {
                chosen[i] = Some(false);
            }
        } else {
            let ambiguous = live.len() > 1;
            for i in live {
                chosen[i] = Some(ambiguous);
            }
        }
    }
    snap.processes
        .iter()
        .zip(chosen)
        .filter_map(|(process, pid)| pid.map(|pid| Exposed { process, pid }))
        .collect()
}

/// The Prometheus kind of a family.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Kind {
    Counter,
    Gauge,
    Summary,
}

impl Kind {
    fn of(m: &Metric) -> Kind {
        match m {
            Metric::Counter(_) => Kind::Counter,
            Metric::Gauge(_) => Kind::Gauge,
            Metric::Timer(_) => Kind::Summary,
        }
    }

    fn unit(self) -> &'static str {
        match self {
            Kind::Counter => "_total",
            Kind::Gauge => "",
            Kind::Summary => "_seconds",
        }
    }

    /// The suffix of the rate gauge's family.
    fn rate_unit(self) -> &'static str {
        match self {
            Kind::Counter => "_per_second",
            Kind::Gauge => "_updates_per_second",
            Kind::Summary => "_measurements_per_second",
        }
    }

    fn type_name(self) -> &'static str {
        match self {
            Kind::Counter => "counter",
            Kind::Gauge => "gauge",
            Kind::Summary => "summary",
        }
    }

    /// The sample names of a family of this kind.
    fn sample_names(self, family: &str) -> Vec<String> {
        match self {
            Kind::Summary => vec![
                family.to_string(),
                format!("{family}_sum"),
                format!("{family}_count"),
            ],
            _ => vec![family.to_string()],
        }
    }
}

/// One hrts metric (name and kind), the family it is exposed as and the
/// family of its rate.
struct Family<'a> {
    metric: &'a str,
    kind: Kind,
    name: String,
    rate: String,
}

/// `[a-zA-Z_:][a-zA-Z0-9_:]*` from any name (the `hrts_` prefix supplies a
/// valid first character).
fn sanitise(name: &str) -> String {
    name.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b == b'_' || b == b':' {
                b as char
            } else {
                '_'
            }
        })
        .collect()
}

/// `[a-zA-Z0-9_:]*` of a metric's name without the `hrts_` prefix (if it
/// has one) and without the suffix its family's kind adds (a counter's
/// `_total`, a timer's unit): what goes between `hrts_` and the kind's suffix.
fn base_name(metric: &str, kind: Kind) -> String {
    let mut base = sanitise(metric);
    if let Some(rest) = base.strip_prefix("hrts_").filter(|r| !r.is_empty()) {
        base = rest.to_string();
    }
    let suffixes: &[&str] = match kind {
        Kind::Counter => &["_total"],
        Kind::Gauge => &[],
        Kind::Summary => &[
            "_seconds",
            "_milliseconds",
            "_microseconds",
            "_nanoseconds",
            "_ms",
            "_us",
            "_ns",
        ],
    };
    for suffix in suffixes {
        if let Some(rest) = base.strip_suffix(suffix).filter(|r| !r.is_empty()) {
            return rest.to_string();
        }
    }
    base
}

/// Every metric (name, kind) of the exposed processes with a family name of
/// its own.
fn families<'a>(exposed: &[Exposed<'a>]) -> Vec<Family<'a>> {
    let metrics: BTreeSet<(bool, &str, Kind)> = exposed
        .iter()
        .flat_map(|e| e.process.dump.metrics.iter())
        .map(|(name, m)| (sanitise(name) != *name, name.as_str(), Kind::of(m)))
        .collect();
    let mut taken: HashSet<String> = HashSet::from([
        "hrts_stats_processes".to_string(),
        "hrts_stats_damaged".to_string(),
    ]);
    let mut out = Vec::with_capacity(metrics.len());
    for (_, metric, kind) in metrics {
        let base = base_name(metric, kind);
        let (name, rate) = (1..)
            .map(|n| {
                let stem = match n {
                    1 => format!("hrts_{base}"),
                    n => format!("hrts_{base}_{n}"),
                };
                (
                    format!("{stem}{}", kind.unit()),
                    format!("{stem}{}", kind.rate_unit()),
                )
            })
            .find(|(f, r)| {
                !taken.contains(r)
                    && *f != *r
                    && kind
                        .sample_names(f)
                        .iter()
                        .all(|s| !taken.contains(s) && s != r)
            })
            .unwrap_or_default();
        taken.extend(kind.sample_names(&name));
        taken.insert(rate.clone());
        out.push(Family {
            metric,
            kind,
            name,
            rate,
        });
    }
    out
}

impl<'a> Family<'a> {
    fn write(&self, exposed: &[Exposed<'a>], openmetrics: bool, out: &mut String) {
        let hrts_kind = match self.kind {
            Kind::Counter => "counter",
            Kind::Gauge => "gauge",
            Kind::Summary => "timer (seconds)",
        };
        // OpenMetrics names a counter's family without the `_total` its
        // samples carry (the 0.0.4 format names both alike).
        let family = match self.kind {
            Kind::Counter if openmetrics => self.name.strip_suffix("_total").unwrap_or(&self.name),
            _ => &self.name,
        };
        let _ = writeln!(
            out,
            "# HELP {family} hrts {hrts_kind} {}",
            escape_help(&format!("{:?}", self.metric))
        );
        let _ = writeln!(out, "# TYPE {family} {}", self.kind.type_name());
        if openmetrics && self.kind == Kind::Summary && family.ends_with("_seconds") {
            let _ = writeln!(out, "# UNIT {family} seconds");
        }
        for (p, m) in self.of(exposed) {
            let labels = labels(p);
            let name = &self.name;
            match m {
                Metric::Counter(c) => {
                    let _ = writeln!(out, "{name}{{{labels}}} {}", c.value);
                }
                Metric::Gauge(g) => {
                    let _ = writeln!(out, "{name}{{{labels}}} {}", float(g.value));
                }
                Metric::Timer(t) => {
                    let v = &t.values;
                    for (q, level) in v.quantiles.iter().zip(QUANTILES) {
                        if let Some(q) = q {
                            let _ = writeln!(
                                out,
                                "{name}{{{labels},quantile=\"{level}\"}} {}",
                                float(q / 1e9)
                            );
                        }
                    }
                    let _ = writeln!(out, "{name}_sum{{{labels}}} {}", float(v.sum / 1e9));
                    let _ = writeln!(out, "{name}_count{{{labels}}} {}", v.count);
                }
            }
        }
        let what = match self.kind {
            Kind::Counter => "counter {:?}: net change of its value per second",
            Kind::Gauge => "gauge {:?}: sets per second",
            Kind::Summary => "timer {:?}: durations measured per second",
        }
        .replace("{:?}", &format!("{:?}", self.metric));
        let _ = writeln!(
            out,
            "# HELP {} hrts {} over the moving interval",
            self.rate,
            escape_help(&what)
        );
        let _ = writeln!(out, "# TYPE {} gauge", self.rate);
        for (p, m) in self.of(exposed) {
            let _ = writeln!(out, "{}{{{}}} {}", self.rate, labels(p), float(m.rate()));
        }
    }

    /// The processes that have this family's metric, with it.
    fn of<'e>(&self, exposed: &'e [Exposed<'a>]) -> Vec<(&'e Exposed<'a>, &'a Metric)> {
        exposed
            .iter()
            .filter_map(|e| {
                e.process
                    .dump
                    .metrics
                    .get(self.metric)
                    .filter(|m| Kind::of(m) == self.kind)
                    .map(|m| (e, m))
            })
            .collect()
    }
}

/// `program="…",hrts_instance="…"`, and `,pid="…"` when the process carries
/// its pid.
fn labels(e: &Exposed<'_>) -> String {
    let p = e.process;
    let mut out = format!(
        "program=\"{}\",hrts_instance=\"{}\"",
        escape_label(&p.program),
        escape_label(&hrts_instance(p))
    );
    if e.pid {
        let _ = write!(out, ",pid=\"{}\"", p.pid);
    }
    out
}

/// A label value: backslash, double quote and line feed escaped.
fn escape_label(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out
}

/// A HELP text: backslash and line feed escaped.
fn escape_help(s: &str) -> String {
    s.replace('\\', "\\\\").replace('\n', "\\n")
}

/// A sample value as Go's ParseFloat reads it (`+Inf`, `-Inf`, `NaN`).
fn float(x: f64) -> String {
    if x.is_nan() {
        "NaN".into()
    } else if x.is_infinite() {
        if x > 0.0 { "+Inf" } else { "-Inf" }.into()
    } else {
        // Debug: the shortest exact form, with an exponent when very large or small.
        format!("{x:?}")
    }
}

// ---- Table

/// KIND NAME VALUE COUNT MEAN MIN MAX P99 RATE/S of one metric.
fn metric_cells(name: &str, m: &Metric) -> Vec<String> {
    let (value, stats, unit): (String, &Statistics, fn(f64) -> String) = match m {
        Metric::Counter(c) => (c.value.to_string(), &c.values, number),
        Metric::Gauge(g) => (number(g.value), &g.values, number),
        Metric::Timer(t) => (duration(t.value as f64), &t.values, duration),
    };
    let opt = |x: Option<f64>| x.map_or_else(|| "-".to_string(), unit);
    vec![
        m.type_name().to_string(),
        printable(name),
        value,
        stats.count.to_string(),
        opt(stats.mean),
        opt(stats.min),
        opt(stats.max),
        opt(stats.quantiles[2]),
        number(m.rate()),
    ]
}

/// Control characters shown as escapes, so that a name cannot break a line.
fn printable(s: &str) -> String {
    s.chars()
        .flat_map(|c| {
            let escaped: Vec<char> = if c.is_control() {
                c.escape_default().collect()
            } else {
                vec![c]
            };
            escaped
        })
        .collect()
}

/// Rows padded to their columns' widths: the columns in `left` left-aligned,
/// the others (numbers) right-aligned.
fn layout(rows: &[Vec<String>], left: &[usize], out: &mut String) {
    let columns = rows.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..columns)
        .map(|i| {
            rows.iter()
                .filter_map(|r| r.get(i))
                .map(|c| c.chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    for row in rows {
        let mut line = String::new();
        for (i, cell) in row.iter().enumerate() {
            if i > 0 {
                line.push_str("  ");
            }
            let pad = " ".repeat(widths[i] - cell.chars().count());
            if left.contains(&i) {
                line.push_str(cell);
                line.push_str(&pad);
            } else {
                line.push_str(&pad);
                line.push_str(cell);
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
}

/// A plain number: whole numbers as integers, others to three decimals or
/// with an exponent when very large or small.
fn number(x: f64) -> String {
    if !x.is_finite() {
        return x.to_string();
    }
    let a = x.abs();
    if x.fract() == 0.0 && a < 1e15 {
        format!("{}", x as i64)
    } else if !(1e-3..1e15).contains(&a) {
        format!("{x:.3e}")
    } else {
        let s = format!("{x:.3}");
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    }
}

/// Nanoseconds in the largest unit that keeps the number at 1 or more, to
/// three significant digits: `950 ns`, `1.52 µs`, `12.3 ms`, `4.00 s`.
fn duration(ns: f64) -> String {
    let (v, unit) = match ns.abs() {
        a if a < 1e3 => (ns, "ns"),
        a if a < 1e6 => (ns / 1e3, "µs"),
        a if a < 1e9 => (ns / 1e6, "ms"),
        _ => (ns / 1e9, "s"),
    };
    if unit == "ns" && v.fract() == 0.0 {
        return format!("{v} ns");
    }
    let digits = match v.abs() {
        a if a >= 100.0 => 0,
        a if a >= 10.0 => 1,
        _ => 2,
    };
    format!("{v:.digits$} {unit}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shared::merge::tests::{counter, gauge, process, snapshot, timer};
    use std::collections::HashMap;

    /// Two live processes and an exited one with a counter, a gauge and a timer.
    fn sample() -> Snapshot {
        let mut exited = process(300, vec![("requests", counter(2, 900, &[0.0, 1.0, 2.0]))]);
        exited.state = ProcessState::Exited;
        snapshot(vec![
            process(
                100,
                vec![
                    ("requests", counter(5, 1000, &[0.0, 5.0])),
                    ("queue size", gauge(3.5, 1000, &[1.0, 3.5])),
                    ("latency", timer(1500, 1000, &[1500.0, 2500.0])),
                ],
            ),
            process(
                200,
                vec![
                    ("requests", counter(7, 1100, &[0.0, 7.0])),
                    ("queue size", gauge(2.0, 1200, &[2.0])),
                    ("latency", timer(3_000_000, 1100, &[3_000_000.0])),
                ],
            ),
            exited,
        ])
    }

    /// OpenMetrics 1.0 text: every sample belongs to the family its TYPE line
    /// names (a counter's samples add `_total` to it, a summary's `_sum` and
    /// `_count`), timer families in seconds carry UNIT, the last line is EOF,
    /// and the values are those of the 0.0.4 rendering.
    #[test]
    fn openmetrics_names_families_as_the_format_requires() {
        let snap = sample();
        let om = snap.to_prometheus_with(PrometheusOptions {
            openmetrics: true,
            ..Default::default()
        });
        assert!(om.ends_with("# EOF\n"), "{om}");
        assert_eq!(om.matches("# EOF").count(), 1);
        let mut types: HashMap<String, String> = HashMap::new();
        for line in om.lines() {
            if let Some(rest) = line.strip_prefix("# TYPE ") {
                let (name, kind) = rest.split_once(' ').unwrap();
                types.insert(name.to_string(), kind.to_string());
            }
        }
        assert_eq!(types["hrts_requests"], "counter", "{om}");
        assert!(!types.contains_key("hrts_requests_total"), "{om}");
        assert_eq!(types["hrts_latency_seconds"], "summary", "{om}");
        assert!(om.contains("# UNIT hrts_latency_seconds seconds\n"), "{om}");
        for line in om.lines().filter(|l| !l.starts_with('#')) {
            let name = line.split(['{', ' ']).next().unwrap();
            let family = types
                .keys()
                .filter(|f| {
                    let kind = &types[f.as_str()];
                    let suffixes: &[&str] = match kind.as_str() {
                        "counter" => &["_total"],
                        "summary" => &["", "_sum", "_count"],
                        _ => &[""],
                    };
                    suffixes.iter().any(|s| name == format!("{f}{s}"))
                })
                .count();
            assert_eq!(
                family, 1,
                "sample {line:?} belongs to no family (or two): {om}"
            );
        }
        // The same samples as the 0.0.4 text, which differs only in those lines.
        let text = snap.to_prometheus();
        let samples = |t: &str| {
            t.lines()
                .filter(|l| !l.starts_with('#'))
                .map(str::to_string)
                .collect::<Vec<_>>()
        };
        assert_eq!(samples(&om), samples(&text));
    }

    #[test]
    fn json_has_the_contracts_shape() {
        let snap = sample();
        let v = snap.to_json_value();
        assert_eq!(v["segment"], "/test");
        assert_eq!(v["timestamp"], 5000);
        let procs = v["processes"].as_array().unwrap();
        assert_eq!(procs.len(), 3);
        for (j, p) in procs.iter().zip(&snap.processes) {
            assert_eq!(j["pid"], p.pid);
            assert_eq!(j["instance"], p.instance);
            assert_eq!(j["instance_id"], p.instance_id.as_str());
            assert_eq!(j["program"], p.program.as_str());
            assert_eq!(j["state"], p.state.name());
            assert_eq!(j["timestamp"], p.dump.timestamp);
            assert_eq!(j["metrics"], p.dump.to_json_value());
        }
        assert_eq!(procs[2]["state"], "exited");
        assert_eq!(v["aggregate"], snap.aggregate().to_json_value());
        assert_eq!(v["aggregate"]["requests"]["value"], 14);
        let text = snap.to_json();
        assert!(!text.contains('\n'));
        assert_eq!(serde_json::from_str::<Value>(&text).unwrap(), v);
        let empty = snapshot(vec![]).to_json_value();
        assert_eq!(empty["processes"], json!([]));
        assert_eq!(empty["aggregate"], json!({}));
    }

    fn scrape(text: &str) -> prometheus_parse::Scrape {
        prometheus_parse::Scrape::parse(text.lines().map(|l| Ok(l.to_string()))).unwrap()
    }

    /// The value of the sample `metric` of the process with pid `who` (its
    /// program is `p<pid>`), or with label state = `who`.
    fn value_of(s: &prometheus_parse::Scrape, metric: &str, who: &str) -> prometheus_parse::Value {
        let found: Vec<_> = s
            .samples
            .iter()
            .filter(|x| {
                x.metric == metric
                    && (x.labels.get("program") == Some(&format!("p{who}"))
                        || x.labels.get("state") == Some(who))
            })
            .collect();
        assert_eq!(found.len(), 1, "{metric} {who}: {found:?}");
        found[0].value.clone()
    }

    #[test]
    fn prometheus_parser_reads_back_every_value() {
        use prometheus_parse::Value as V;
        let text = sample().to_prometheus();
        let s = scrape(&text);
        assert_eq!(value_of(&s, "hrts_stats_processes", "live"), V::Gauge(2.0));
        assert_eq!(
            value_of(&s, "hrts_stats_processes", "exited"),
            V::Gauge(1.0)
        );
        assert_eq!(value_of(&s, "hrts_requests_total", "100"), V::Counter(5.0));
        assert_eq!(value_of(&s, "hrts_requests_total", "200"), V::Counter(7.0));
        assert_eq!(value_of(&s, "hrts_requests_total", "300"), V::Counter(2.0));
        assert_eq!(value_of(&s, "hrts_queue_size", "100"), V::Gauge(3.5));
        assert_eq!(value_of(&s, "hrts_queue_size", "200"), V::Gauge(2.0));
        assert_eq!(
            value_of(&s, "hrts_latency_seconds_count", "100"),
            V::Untyped(2.0)
        );
        assert_eq!(
            value_of(&s, "hrts_latency_seconds_sum", "100"),
            V::Untyped(4e-6)
        );
        assert_eq!(
            value_of(&s, "hrts_latency_seconds_sum", "200"),
            V::Untyped(3e-3)
        );
        let V::Summary(q) = value_of(&s, "hrts_latency_seconds", "200") else {
            panic!("a timer is a summary")
        };
        assert_eq!(q.len(), 4);
        for (c, level) in q.iter().zip(QUANTILES) {
            assert_eq!(c.quantile, level);
            assert_eq!(c.count, 3e-3, "one datum: every quantile is it");
        }
        let sample = s
            .samples
            .iter()
            .find(|x| x.metric == "hrts_queue_size")
            .unwrap();
        assert_eq!(sample.labels.get("program"), Some("p100"));
        assert_eq!(sample.labels.get("hrts_instance"), Some("1"));
        assert_eq!(s.docs["hrts_queue_size"], "hrts gauge \"queue size\"");
        // The rates: a counter's net change, a gauge's sets and a timer's
        // measurements per second (the samples' data all in the window of 1 s).
        assert_eq!(
            value_of(&s, "hrts_requests_per_second", "100"),
            V::Gauge(2.0)
        );
        assert_eq!(
            value_of(&s, "hrts_requests_per_second", "300"),
            V::Gauge(3.0)
        );
        assert_eq!(
            value_of(&s, "hrts_queue_size_updates_per_second", "200"),
            V::Gauge(1.0)
        );
        assert_eq!(
            value_of(&s, "hrts_latency_measurements_per_second", "100"),
            V::Gauge(2.0)
        );
        assert_eq!(
            s.docs["hrts_requests_per_second"],
            "hrts counter \"requests\": net change of its value per second over the moving interval"
        );
    }

    /// Checks the text exposition format 0.0.4 line by line: one HELP and one
    /// TYPE per family before its samples, all samples of a family together,
    /// sample names of the family's kind, valid names, labels and values.
    /// Returns the families' names and types.
    fn check_exposition(text: &str) -> Vec<(String, String)> {
        fn valid_name(n: &str) -> bool {
            let mut b = n.bytes();
            b.next()
                .is_some_and(|c| c.is_ascii_alphabetic() || c == b'_' || c == b':')
                && b.all(|c| c.is_ascii_alphanumeric() || c == b'_' || c == b':')
        }
        assert!(text.ends_with('\n'));
        let mut families: Vec<(String, String)> = Vec::new();
        let mut help: Option<String> = None;
        let mut closed: HashSet<String> = HashSet::new();
        for line in text.lines() {
            if let Some(rest) = line.strip_prefix("# HELP ") {
                let name = rest.split(' ').next().unwrap();
                assert!(valid_name(name), "{line}");
                assert!(
                    families.iter().all(|(f, _)| f != name),
                    "second HELP: {line}"
                );
                if let Some((last, _)) = families.last() {
                    closed.insert(last.clone());
                }
                help = Some(name.to_string());
                continue;
            }
            if let Some(rest) = line.strip_prefix("# TYPE ") {
                let (name, ty) = rest.split_once(' ').unwrap();
                assert_eq!(
                    help.take().as_deref(),
                    Some(name),
                    "TYPE after its HELP: {line}"
                );
                assert!(["counter", "gauge", "summary"].contains(&ty), "{line}");
                families.push((name.to_string(), ty.to_string()));
                continue;
            }
            assert!(!line.starts_with('#') && !line.is_empty(), "{line:?}");
            let (family, ty) = families.last().expect("a sample before any TYPE");
            let (name, rest) = line.split_at(line.find(['{', ' ']).unwrap());
            let ok_names: Vec<String> = match ty.as_str() {
                "summary" => vec![
                    family.clone(),
                    format!("{family}_sum"),
                    format!("{family}_count"),
                ],
                _ => vec![family.clone()],
            };
            assert!(
                ok_names.iter().any(|n| n == name),
                "{line} outside its family {family}"
            );
            assert!(!closed.contains(family));
            // Labels: name="value" pairs, values with \\, \" and \n escapes only.
            let mut chars = rest.chars().peekable();
            let mut label_names = Vec::new();
            if chars.peek() == Some(&'{') {
                chars.next();
                loop {
                    let lname: String =
                        std::iter::from_fn(|| chars.next_if(|c| *c != '=')).collect();
                    assert!(valid_name(&lname), "label {lname:?} in {line}");
                    label_names.push(lname);
                    assert_eq!(chars.next(), Some('='));
                    assert_eq!(chars.next(), Some('"'), "{line}");
                    loop {
                        match chars.next().expect("unterminated label value") {
                            '\\' => {
                                assert!(matches!(chars.next(), Some('\\' | '"' | 'n')), "{line}")
                            }
                            '"' => break,
                            '\n' => panic!("raw newline"),
                            _ => {}
                        }
                    }
                    match chars.next() {
                        Some(',') => continue,
                        Some('}') => break,
                        other => panic!("{other:?} after a label in {line}"),
                    }
                }
            }
            let mut dedup = label_names.clone();
            dedup.sort();
            dedup.dedup();
            assert_eq!(dedup.len(), label_names.len(), "{line}");
            let value: String = chars.collect();
            let value = value.strip_prefix(' ').expect("a space before the value");
            assert!(
                value.parse::<f64>().is_ok() || ["+Inf", "-Inf", "NaN"].contains(&value),
                "{line}"
            );
        }
        families
    }

    #[test]
    fn colliding_names_get_families_of_their_own() {
        let mut odd = process(
            2,
            vec![
                ("k", gauge(1.0, 1, &[1.0])),
                ("a.b", counter(3, 1, &[3.0])),
                ("y_seconds_count", gauge(2.0, 1, &[2.0])),
            ],
        );
        odd.program = "we\"ird\\name\nx".into();
        let snap = snapshot(vec![
            process(
                1,
                vec![
                    ("a-b", counter(2, 1, &[2.0])),
                    ("a_b", counter(1, 1, &[1.0])),
                    ("k", counter(4, 1, &[4.0])),
                    ("x", counter(5, 1, &[5.0])),
                    ("x_total", gauge(6.0, 1, &[6.0])),
                    ("x_per_second", gauge(6.5, 1, &[6.5])),
                    ("y", timer(7, 1, &[7.0])),
                    ("stats_processes", gauge(8.0, 1, &[8.0])),
                    ("µ/s", gauge(9.0, 1, &[9.0])),
                    ("inf", gauge(f64::INFINITY, 1, &[1.0])),
                ],
            ),
            odd,
        ]);
        let text = snap.to_prometheus();
        let families: HashMap<String, String> = check_exposition(&text).into_iter().collect();
        let want = [
            ("hrts_stats_processes", "gauge"),
            ("hrts_stats_damaged", "gauge"),
            ("hrts_a_b_total", "counter"),
            ("hrts_a_b_2_total", "counter"),
            ("hrts_a_b_3_total", "counter"),
            ("hrts_k_total", "counter"),
            ("hrts_k", "gauge"),
            ("hrts_x_total", "counter"),
            ("hrts_x_total_2", "gauge"),
            ("hrts_y_seconds", "summary"),
            ("hrts_y_seconds_count_2", "gauge"),
            ("hrts_stats_processes_2", "gauge"),
            ("hrts____s", "gauge"),
            ("hrts_inf", "gauge"),
            ("hrts_x_per_second_2", "gauge"),
            // The rate gauges, with the suffix (and number) of their metric.
            ("hrts_a_b_per_second", "gauge"),
            ("hrts_a_b_2_per_second", "gauge"),
            ("hrts_a_b_3_per_second", "gauge"),
            ("hrts_k_per_second", "gauge"),
            ("hrts_k_updates_per_second", "gauge"),
            ("hrts_x_per_second", "gauge"),
            ("hrts_x_total_2_updates_per_second", "gauge"),
            ("hrts_x_per_second_2_updates_per_second", "gauge"),
            ("hrts_y_measurements_per_second", "gauge"),
            ("hrts_y_seconds_count_2_updates_per_second", "gauge"),
            ("hrts_stats_processes_2_updates_per_second", "gauge"),
            ("hrts____s_updates_per_second", "gauge"),
            ("hrts_inf_updates_per_second", "gauge"),
        ];
        for (name, ty) in want {
            assert_eq!(
                families.get(name).map(String::as_str),
                Some(ty),
                "{name} in\n{text}"
            );
        }
        assert_eq!(families.len(), want.len(), "{text}");
        // Which hrts metric each family carries, said in its HELP.
        assert!(text.contains("# HELP hrts_a_b_total hrts counter \"a_b\"\n"));
        assert!(text.contains("# HELP hrts_a_b_2_total hrts counter \"a-b\"\n"));
        assert!(text.contains("# HELP hrts_a_b_3_total hrts counter \"a.b\"\n"));
        assert!(text.contains("# HELP hrts_x_per_second_2 hrts gauge \"x_per_second\"\n"));
        assert!(text.contains("program=\"we\\\"ird\\\\name\\nx\""), "{text}");
        assert!(text.contains("hrts_inf{program=\"p1\",hrts_instance=\"1\"} +Inf\n"));
        // A gauge and a counter of one name in two processes: each where it belongs.
        assert!(text.contains("hrts_k_total{program=\"p1\",hrts_instance=\"1\"} 4\n"));
        assert!(text.contains("hrts_k{program=\"we\\\"ird"));
        check_exposition(&sample().to_prometheus());
        let empty = snapshot(vec![]).to_prometheus();
        assert_eq!(check_exposition(&empty).len(), 2);
        assert!(empty.contains("hrts_stats_processes{state=\"live\"} 0\n"));
    }

    #[test]
    fn names_keep_one_prefix_and_one_suffix() {
        let snap = snapshot(vec![process(
            1,
            vec![
                ("requests_total", counter(3, 1, &[3.0])),
                ("hrts-stats.dropped-events", gauge(2.0, 1, &[2.0])),
                ("latency_seconds", timer(10, 1, &[10.0])),
                ("gc_ms", timer(10, 1, &[10.0])),
                ("load_ns", timer(10, 1, &[10.0])),
                ("db_total", timer(10, 1, &[10.0])),
                ("bytes_total", gauge(1.0, 1, &[1.0])),
                ("_total", counter(1, 1, &[1.0])),
            ],
        )]);
        let text = snap.to_prometheus();
        let families: HashMap<String, String> = check_exposition(&text).into_iter().collect();
        for (name, ty) in [
            ("hrts_requests_total", "counter"),
            ("hrts_requests_per_second", "gauge"),
            ("hrts_stats_dropped_events", "gauge"),
            ("hrts_latency_seconds", "summary"),
            ("hrts_latency_measurements_per_second", "gauge"),
            ("hrts_gc_seconds", "summary"),
            ("hrts_load_seconds", "summary"),
            // Only a counter's _total goes: a timer's and a gauge's stay.
            ("hrts_db_total_seconds", "summary"),
            ("hrts_bytes_total", "gauge"),
            // Nothing left without the suffix: kept whole.
            ("hrts__total_total", "counter"),
        ] {
            assert_eq!(
                families.get(name).map(String::as_str),
                Some(ty),
                "{name} in\n{text}"
            );
        }
        assert!(!text.contains("hrts_hrts_"), "{text}");
        assert!(!text.contains("requests_total_total"), "{text}");
        assert!(!text.contains("seconds_seconds"), "{text}");
        assert!(text.contains("# HELP hrts_requests_total hrts counter \"requests_total\"\n"));
        assert!(text.contains("# HELP hrts_gc_seconds hrts timer (seconds) \"gc_ms\"\n"));
        // A counter with and one without the suffix: the later one numbered.
        let both = snapshot(vec![process(
            1,
            vec![
                ("requests", counter(1, 1, &[1.0])),
                ("requests_total", counter(2, 1, &[2.0])),
            ],
        )])
        .to_prometheus();
        let families: HashMap<String, String> = check_exposition(&both).into_iter().collect();
        assert!(families.contains_key("hrts_requests_total"), "{both}");
        assert!(families.contains_key("hrts_requests_2_total"), "{both}");
        assert!(both.contains("# HELP hrts_requests_2_total hrts counter \"requests_total\"\n"));
    }

    /// `process(pid, …)` under program `program`, instance number 1.
    fn of_program(pid: u32, program: &str, state: ProcessState, value: i64) -> ProcessStats {
        let mut p = process(pid, vec![("requests", counter(value, 1, &[value as f64]))]);
        p.program = program.to_string();
        p.state = state;
        p.dump.timestamp = 1000 + pid as u64;
        p
    }

    #[test]
    fn a_restarted_process_continues_its_series_without_a_pid() {
        use ProcessState::{Exited, Live};
        // The writer as it was, exited, and its restart (another pid).
        let before = snapshot(vec![of_program(100, "checkout", Live, 5)]);
        let after = snapshot(vec![
            of_program(100, "checkout", Exited, 5),
            of_program(200, "checkout", Live, 1),
        ]);
        let line = |snap: &Snapshot| -> Vec<String> {
            snap.to_prometheus()
                .lines()
                .filter(|l| l.starts_with("hrts_requests_total{"))
                .map(String::from)
                .collect()
        };
        assert_eq!(
            line(&before),
            ["hrts_requests_total{program=\"checkout\",hrts_instance=\"1\"} 5"]
        );
        assert_eq!(
            line(&after),
            ["hrts_requests_total{program=\"checkout\",hrts_instance=\"1\"} 1"],
            "the live restart replaces the exited process, under the same labels"
        );
        assert!(after
            .to_prometheus()
            .contains("hrts_stats_processes{state=\"exited\"} 1\n"));
        // Gone, not restarted: the last to publish stays exposed.
        let gone = snapshot(vec![
            of_program(100, "checkout", Exited, 5),
            of_program(200, "checkout", Exited, 7),
        ]);
        assert_eq!(
            line(&gone),
            ["hrts_requests_total{program=\"checkout\",hrts_instance=\"1\"} 7"]
        );
        // Two live replicas without instance ids: each keeps its own series, with its pid.
        let twins = snapshot(vec![
            of_program(100, "checkout", Live, 5),
            of_program(200, "checkout", Live, 7),
            of_program(300, "billing", Live, 9),
        ]);
        assert_eq!(
            line(&twins),
            [
                "hrts_requests_total{program=\"checkout\",hrts_instance=\"1\",pid=\"100\"} 5",
                "hrts_requests_total{program=\"checkout\",hrts_instance=\"1\",pid=\"200\"} 7",
                "hrts_requests_total{program=\"billing\",hrts_instance=\"1\"} 9",
            ]
        );
        check_exposition(&twins.to_prometheus());
        // With instance ids they need no pid; a second instance in a process is ID/N.
        let mut a = of_program(100, "checkout", Live, 5);
        a.instance_id = "a".into();
        let mut b = of_program(200, "checkout", Live, 7);
        b.instance_id = "b".into();
        let mut b2 = of_program(200, "checkout", Live, 8);
        b2.instance_id = "b".into();
        b2.instance = 2;
        let named = snapshot(vec![a, b, b2]);
        assert_eq!(
            line(&named),
            [
                "hrts_requests_total{program=\"checkout\",hrts_instance=\"a\"} 5",
                "hrts_requests_total{program=\"checkout\",hrts_instance=\"b\"} 7",
                "hrts_requests_total{program=\"checkout\",hrts_instance=\"b/2\"} 8",
            ]
        );
        // The pid label on request: every registration, each with its pid.
        let with_pid = after.to_prometheus_with(PrometheusOptions {
            pid_label: true,
            ..Default::default()
        });
        check_exposition(&with_pid);
        let lines: Vec<&str> = with_pid
            .lines()
            .filter(|l| l.starts_with("hrts_requests_total{"))
            .collect();
        assert_eq!(
            lines,
            [
                "hrts_requests_total{program=\"checkout\",hrts_instance=\"1\",pid=\"100\"} 5",
                "hrts_requests_total{program=\"checkout\",hrts_instance=\"1\",pid=\"200\"} 1",
            ]
        );
    }

    #[test]
    fn a_timer_without_quantiles_has_sum_and_count_only() {
        let mut m = timer(10, 1, &[10.0, 20.0]);
        if let Metric::Timer(t) = &mut m {
            t.values.quantiles = [None; 4];
        }
        let text = snapshot(vec![process(1, vec![("t", m)])]).to_prometheus();
        check_exposition(&text);
        assert!(!text.contains("quantile"));
        assert!(text.contains("hrts_t_seconds_sum{program=\"p1\",hrts_instance=\"1\"} 3e-8\n"));
        assert!(text.contains("hrts_t_seconds_count{program=\"p1\",hrts_instance=\"1\"} 2\n"));
    }

    #[test]
    fn the_table_lists_every_process_and_the_aggregate() {
        let table = sample().to_table();
        let lines: Vec<&str> = table.lines().collect();
        assert_eq!(
            lines[0],
            "statistics segment /test: 3 processes (2 live, 1 exited)"
        );
        let header = lines[2];
        let name_col = header.find("NAME").unwrap();
        let rows: Vec<&str> = lines[3..]
            .iter()
            .take_while(|l| !l.is_empty())
            .copied()
            .collect();
        assert_eq!(rows.len(), 7, "{table}");
        for r in &rows {
            let name = &r[r
                .char_indices()
                .nth(header[..name_col].chars().count())
                .unwrap()
                .0..];
            assert!(
                ["latency", "queue size", "requests"]
                    .iter()
                    .any(|n| name.starts_with(n)),
                "NAME column misaligned in {r:?}\n{table}"
            );
        }
        let row = |pid: &str, name: &str| -> Vec<String> {
            rows.iter()
                .find(|r| r.split_whitespace().next() == Some(pid) && r.contains(name))
                .unwrap()
                .split("  ")
                .map(str::trim)
                .filter(|c| !c.is_empty())
                .map(String::from)
                .collect()
        };
        assert_eq!(
            row("100", "latency"),
            [
                "100", "1", "p100", "live", "timer", "latency", "1.50 µs", "2", "2.00 µs",
                "1.50 µs", "2.50 µs", "2.50 µs", "2"
            ]
        );
        assert_eq!(row("300", "requests")[3], "exited");
        assert_eq!(row("200", "queue size")[6], "2");
        let agg_at = lines
            .iter()
            .position(|l| *l == "all processes (aggregated by name)")
            .unwrap();
        let agg: Vec<&str> = lines[agg_at + 2..].to_vec();
        assert_eq!(agg.len(), 3);
        let requests: Vec<&str> = agg[2].split_whitespace().collect();
        assert_eq!(&requests[..4], ["counter", "requests", "14", "7"]);
        assert_eq!(requests[8], "7", "the processes' rates add: 2 + 2 + 3");
        assert_eq!(
            requests[7], "-",
            "quantiles of several processes are unknown"
        );
        let idle = snapshot(vec![process(42, vec![])]).to_table();
        let row: Vec<&str> = idle.lines().nth(3).unwrap().split_whitespace().collect();
        assert_eq!(
            row[..7],
            ["42", "1", "p42", "live", "-", "(no", "metrics)"],
            "{idle}"
        );
        let empty = snapshot(vec![]).to_table();
        assert_eq!(
            empty,
            "statistics segment /test: 0 processes (0 live, 0 exited)\n\
             no process has published statistics\n"
        );
    }

    #[test]
    fn numbers_and_durations_read_well() {
        assert_eq!(duration(950.0), "950 ns");
        assert_eq!(duration(2.25), "2.25 ns");
        assert_eq!(duration(12.5), "12.5 ns");
        assert_eq!(duration(1520.0), "1.52 µs");
        assert_eq!(duration(12_345_678.0), "12.3 ms");
        assert_eq!(duration(123_456_789.0), "123 ms");
        assert_eq!(duration(4e9), "4.00 s");
        assert_eq!(number(42.0), "42");
        assert_eq!(number(-3.5), "-3.5");
        assert_eq!(number(2.0 / 3.0), "0.667");
        assert_eq!(number(1e20), "1.000e20");
        assert_eq!(number(0.0001), "1.000e-4");
        assert_eq!(float(0.5), "0.5");
        assert_eq!(float(1e300), "1e300");
        assert_eq!(float(f64::NEG_INFINITY), "-Inf");
        assert_eq!(float(f64::NAN), "NaN");
        assert_eq!(sanitise("a.b-c:d_9"), "a_b_c:d_9");
        assert_eq!(printable("a\nb"), "a\\nb");
    }

    #[test]
    fn damaged_parts_are_named_in_every_view() {
        use prometheus_parse::Value as V;
        let mut snap = sample();
        assert!(!snap.to_table().contains("DAMAGED"));
        assert_eq!(
            snap.to_json_value()["damaged"],
            json!({"process_slots": [], "cells": []})
        );
        snap.damaged_slots = vec![4];
        snap.damaged_cells = vec![17, 230];
        let s = scrape(&snap.to_prometheus());
        let damaged = |part: &str| {
            s.samples
                .iter()
                .find(|x| x.metric == "hrts_stats_damaged" && x.labels.get("part") == Some(part))
                .map(|x| x.value.clone())
        };
        assert_eq!(damaged("process_slot"), Some(V::Gauge(1.0)));
        assert_eq!(damaged("cell"), Some(V::Gauge(2.0)));
        assert_eq!(
            snap.to_json_value()["damaged"],
            json!({"process_slots": [4], "cells": [17, 230]})
        );
        let table = snap.to_table();
        assert!(
            table.contains("DAMAGED, left out: 1 process slots [4] and 2 metric cells [17, 230]"),
            "{table}"
        );
    }
}
