//! `hrts eval`: the WTMLIB reliability evaluation of a counter across the CPUs
//! this process may run on. Results on stdout as `key: value` blocks, one per
//! method; progress on stderr.

use crate::exit::CliError;
use hrts_core::clock::{
    self, CalibrationConfig, Method, Pace, ReliabilityConfig, Report, SourceId,
};
use hrts_core::{Error, ErrorKind};
use std::fmt::Write as _;
use std::io::Write as _;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// Which reliability method(s) `hrts eval` runs.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Methods {
    /// CAS-ordered probes
    Cop,
    /// CPU switching
    Switching,
    /// Both, one after the other
    Both,
}

#[derive(clap::Args, Debug)]
pub struct EvalArgs {
    /// Which method(s) to run
    #[arg(long, value_enum, default_value_t = Methods::Both)]
    pub method: Methods,
    /// Probing time per method, in milliseconds
    #[arg(long, value_name = "N", default_value_t = 200,
          value_parser = clap::value_parser!(u64).range(1..=60_000))]
    pub budget_ms: u64,
    /// The counter to evaluate: tsc, cntvct, timebase or monotonic-raw (default: this
    /// machine's hardware counter)
    #[arg(long, value_name = "NAME", value_parser = source)]
    pub source: Option<SourceId>,
    /// The statistical significance asked for (WTMLIB's setting for CAS-ordered
    /// probes): the fewest hand-overs every ordered pair of CPUs must show for a
    /// result to count as significant
    #[arg(long, value_name = "N", default_value_t = hrts_core::clock::DEFAULT_MIN_HANDOVERS,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub min_handovers: u64,
}

fn source(name: &str) -> Result<SourceId, String> {
    SourceId::from_name(name)
        .ok_or_else(|| "must be one of tsc, cntvct, timebase, monotonic-raw".to_string())
}

pub fn run(options: &EvalArgs) -> Result<(), CliError> {
    let id = match options.source.or_else(SourceId::native) {
        Some(id) => id,
        None => {
            return Err(Error::new(
                ErrorKind::Source,
                "this architecture has no hardware counter to evaluate; pass --source",
            )
            .into())
        }
    };
    let hz = frequency(id)?;
    let cfg = ReliabilityConfig {
        budget: Duration::from_millis(options.budget_ms),
        min_handovers: options.min_handovers,
        ..ReliabilityConfig::default()
    };
    let methods: &[Method] = match options.method {
        Methods::Cop => &[Method::CasOrderedProbes],
        Methods::Switching => &[Method::CpuSwitching],
        Methods::Both => &[Method::CasOrderedProbes, Method::CpuSwitching],
    };
    let mut out = String::new();
    let mut reports = Vec::new();
    for &method in methods {
        let report =
            with_progress(
                &format!("{} ({})", id.name(), method_name(method)),
                || match method {
                    Method::CasOrderedProbes => clock::evaluate_cop(id, hz, &cfg),
                    Method::CpuSwitching => clock::evaluate_cpu_switching(id, hz, &cfg),
                },
            )?;
        if !out.is_empty() {
            out.push('\n');
        }
        out.push_str(&format_report(&report, hz));
        reports.push(report);
    }
    let _ = writeln!(out, "\nverdict: {}", verdict(&reports));
    out.push_str(&super::os_frequency::lines(id, hz));
    super::print(&out)
}

/// The counter's frequency, by a short calibration (the reported one is shown
/// beside it).
fn frequency(id: SourceId) -> Result<u64, CliError> {
    let cfg = CalibrationConfig {
        budget: Duration::from_millis(50),
        ..CalibrationConfig::default()
    };
    Ok(with_progress(&format!("calibrating {}", id.name()), || {
        clock::calibrate(id, &cfg)
    })?
    .hz)
}

/// Runs `work` while a ticker prints a dot to stderr every 100 ms, then how long
/// it took. The ticker sleeps between dots, so it barely disturbs the probes.
fn with_progress<T>(what: &str, work: impl FnOnce() -> T) -> T {
    eprint!("hrts: {what} ");
    let done = Arc::new(AtomicBool::new(false));
    let ticker = {
        let done = done.clone();
        std::thread::spawn(move || {
            while !done.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(100));
                if !done.load(Ordering::Relaxed) {
                    eprint!(".");
                    let _ = std::io::stderr().flush();
                }
            }
        })
    };
    let start = std::time::Instant::now();
    let result = work();
    done.store(true, Ordering::Relaxed);
    let _ = ticker.join();
    eprintln!(" done in {} ms", start.elapsed().as_millis());
    result
}

fn method_name(m: Method) -> &'static str {
    match m {
        Method::CasOrderedProbes => "cas-ordered-probes",
        Method::CpuSwitching => "cpu-switching",
    }
}

fn or_unbounded(v: Option<u64>) -> String {
    v.map_or_else(|| "unbounded".to_string(), |v| v.to_string())
}

fn format_report(r: &Report, hz: u64) -> String {
    let cpus: Vec<String> = r.cpus.iter().map(u32::to_string).collect();
    let mut s = String::new();
    let mut line = |key: &str, value: &dyn std::fmt::Display| {
        let _ = writeln!(s, "{key}: {value}");
    };
    line("method", &method_name(r.method));
    line("source", &r.source.name());
    line("frequency", &hz);
    line("cpus", &cpus.join(","));
    line("probes", &r.probes);
    line("switches", &r.switches);
    line("max shift ticks", &or_unbounded(r.max_shift_ticks));
    line("max shift ns", &or_unbounded(r.max_shift_ns));
    line("monotonic", &if r.monotonic { "yes" } else { "no" });
    line("violations", &r.violations);
    line("pace", &hrts_core::pace_text(&r.pace));
    line(
        "min pair hand-overs",
        &or_unbounded(r.min_pair_handovers).replace("unbounded", "-"),
    );
    line("significant", &if r.significant { "yes" } else { "no" });
    line("elapsed ns", &r.elapsed_ns);
    if !r.note.is_empty() {
        line("note", &r.note);
    }
    s
}

/// One line summing up all methods: monotonic or not, and the tightest bound on
/// the cross-CPU shift any method established.
fn verdict(reports: &[Report]) -> String {
    let violations: u64 = reports.iter().map(|r| r.violations).sum();
    if let Some(r) = reports
        .iter()
        .find(|r| matches!(r.pace, Pace::Differs { .. } | Pace::Stuck))
    {
        return format!(
            "unreliable: the counter's pace is {} (a segment would not choose it)",
            hrts_core::pace_text(&r.pace)
        );
    }
    if reports.iter().any(|r| !r.monotonic) {
        return format!("not monotonic across CPUs ({violations} violations)");
    }
    match reports.iter().filter_map(|r| r.max_shift_ns).min() {
        Some(ns) => format!("monotonic; cross-CPU shift at most {ns} ns"),
        None => "monotonic; cross-CPU shift could not be bounded".to_string(),
    }
}
