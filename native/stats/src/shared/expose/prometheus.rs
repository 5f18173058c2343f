//! A snapshot in the Prometheus text exposition format 0.0.4 (or
//! OpenMetrics 1.0), for scrapers: which processes are exposed under which
//! labels, and how an hrts metric's name becomes a family name.
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

use crate::dump::Metric;
use crate::histogram::QUANTILES;
use crate::shared::snapshot::{ProcessState, ProcessStats, Snapshot};
use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::fmt::Write as _;

impl Snapshot {
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
}

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

// The exposition read back line by line and by a Prometheus parser.
#[cfg(test)]
mod tests;
