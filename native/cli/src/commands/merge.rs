//! `hrts merge`: process traces in, one global trace (and JSON) out, with a
//! report of every fit, fallback and check.

use super::print;
use crate::exit::CliError;
use hrts_trace::format::map_flag_names;
use hrts_trace::merge::{
    causality, check_order, merge, naive_causality, read_inputs, write_chrome_json, write_global,
    Basis, Causality, Interval, MappingKind, MergeOptions, Merged,
};
use std::fmt::Write as _;
use std::path::PathBuf;
use std::time::Instant;

/// Put the process traces of several hosts on one timeline.
///
/// Maps the process traces' local stamps onto the master's timeline (offset and drift fitted
/// per host from the sync rounds) and writes one global trace, plus a Chrome/Perfetto JSON
/// trace with --json. Prints each host's fit with its error bound, the run's length, message
/// causality (hrts's merge and the naive one that takes local stamps as global) and
/// throughput.
///
/// When every file's bound records say its host's clock is synchronized and no file was
/// synced with a master, each event is placed at its stamp ± its host's error bound instead,
/// and the report counts the pairs of events of different hosts whose intervals overlap (their
/// order is unknown), with the first 10; otherwise it says why the bounds were not used.
///
/// What the fit cannot vouch for is refused unless a flag accepts it (then flagged in the
/// output).
#[derive(clap::Args, Debug)]
pub struct MergeArgs {
    /// The process trace files (`hrts trace record`, or written by a library)
    #[arg(value_name = "FILE", required = true)]
    pub inputs: Vec<PathBuf>,
    /// The global trace to write
    #[arg(long, value_name = "GLOBAL")]
    pub out: PathBuf,
    /// Also write a Chrome/Perfetto JSON trace
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Accept files whose writer never closed them
    #[arg(long)]
    pub allow_incomplete: bool,
    /// Accept hosts that never synced (their local stamps taken as global)
    #[arg(long)]
    pub allow_unsynced: bool,
    /// Accept events outside a host's sync window
    #[arg(long)]
    pub extrapolate: bool,
    /// Accept sync samples that no steady clock explains, or a drift beyond --max-drift-ppm
    #[arg(long)]
    pub accept_disagreement: bool,
    /// The largest drift between two clocks taken as real, in ppm
    #[arg(long, value_name = "N", default_value_t = 1000.0, value_parser = positive_ppm)]
    pub max_drift_ppm: f64,
}

fn positive_ppm(s: &str) -> Result<f64, String> {
    s.parse::<f64>()
        .ok()
        .filter(|d| d.is_finite() && *d > 0.0)
        .ok_or_else(|| "must be a positive number of ppm".to_string())
}

impl MergeArgs {
    pub fn options(&self) -> MergeOptions {
        MergeOptions {
            allow_incomplete: self.allow_incomplete,
            allow_unsynced: self.allow_unsynced,
            extrapolate: self.extrapolate,
            accept_disagreement: self.accept_disagreement,
            max_drift_ppm: self.max_drift_ppm,
            ..MergeOptions::default()
        }
    }
}

pub fn run(args: &MergeArgs) -> Result<(), CliError> {
    let (inputs, out, json) = (&args.inputs, &args.out, args.json.as_deref());
    let opts = args.options();
    let started = Instant::now();
    let files = read_inputs(inputs, &opts)?;
    let read_s = started.elapsed().as_secs_f64();
    let naive = naive_causality(&files);
    let t = Instant::now();
    let merged = merge(files, &opts)?;
    write_global(&merged, out)?;
    let merge_s = read_s + t.elapsed().as_secs_f64();
    let json_s = match json {
        None => None,
        Some(p) => {
            let t = Instant::now();
            write_chrome_json(&merged, p)?;
            Some(t.elapsed().as_secs_f64())
        }
    };
    let hrts = causality(&merged);
    let (shared, out_of_order) = check_order(&merged);

    let n = merged.events.len();
    let mut s = String::new();
    let _ = writeln!(
        s,
        "merged: {} traces, {n} events, {} clocks -> {}",
        merged.procs.len(),
        merged.domains.len(),
        out.display()
    );
    if let Some(p) = json {
        let _ = writeln!(s, "json: {}", p.display());
    }
    let k = merged.ticks_per_ns;
    let _ = writeln!(
        s,
        "run: {} ns by the master's gettimeofday (host {}), global ticks {}..{} of 1/{k} ns, \
         event bits {}, clock rate to gettimeofday {:.9}",
        merged.run.wall_end_ns - merged.run.wall_start_ns,
        merged.run.master_host,
        merged.run.start_tick,
        merged.run.end_tick,
        merged.header.event_bits,
        merged.wall_rate
    );
    for d in &merged.domains {
        let flags = map_flag_names(d.flags).join(",");
        let fit = &d.fit;
        let (rate, rate_bound) = match d.kind {
            MappingKind::Fit => (fit.local_rate_ppm(), fit.drift_bound * 1e6),
            _ => (0.0, fit.drift_bound * 1e6),
        };
        let _ = writeln!(
            s,
            "clock host={} processes={} mapping={} rounds={} exchanges={} dropped={} \
             local_minus_master_ns={:.1} at_master_ns={:.0} rate_ppm={:.4} bound_ns={:.1} \
             rate_bound_ppm={:.4} window_s={:.3} flags={}",
            d.host,
            d.files.len(),
            d.kind.name(),
            d.rounds,
            d.exchanges,
            d.dropped,
            d.local_minus_master_ns(),
            d.ref_master_ns(),
            rate,
            fit.bound_ns,
            rate_bound,
            fit.span_ns() as f64 / 1e9,
            if flags.is_empty() { "-" } else { &flags }
        );
    }
    s.push_str(&basis_lines(&merged));
    for note in &merged.notes {
        let _ = writeln!(s, "note: {note}");
    }
    let _ = writeln!(s, "{}", causality_line("causality hrts", &hrts));
    let _ = writeln!(
        s,
        "{}",
        causality_line("causality naive (local stamps as global)", &naive)
    );
    let _ = writeln!(
        s,
        "unique: {n} events, {shared} sharing a global stamp, {out_of_order} out of their \
         process's order"
    );
    let _ = writeln!(
        s,
        "throughput: {n} events read, merged and written in {merge_s:.3} s: {:.0} events/s{}",
        n as f64 / merge_s.max(1e-9),
        json_s.map_or(String::new(), |j| format!(" (JSON {j:.3} s more)"))
    );
    print(&s)
}

/// How the hosts were placed; by bounds, the pairs that could not be ordered.
fn basis_lines(m: &Merged) -> String {
    let u = match &m.basis {
        Basis::Sync { why_not_bounds } => {
            return format!(
                "order: by ping-pong sync, as without bound records (bounds not used: \
                 {why_not_bounds})\n"
            )
        }
        Basis::Bounds(u) => u,
    };
    let mut s = String::from(
        "order: by error bounds (every host's bound records say synchronized; each event at \
         its stamp ± its host's bound_ns)\n",
    );
    let _ = writeln!(
        s,
        "unorderable: {} pairs of events on different hosts whose intervals overlap (either \
         may have come first){}",
        u.pairs,
        match u.examples.len() {
            0 => String::new(),
            n => format!("; the first {n} below"),
        }
    );
    let event = |i: usize, iv: &Interval| {
        let g = &m.events[i];
        let p = &m.procs[g.proc_index as usize];
        format!(
            "{} pid={} {} {} id={} earliest={} latest={}",
            p.host,
            p.pid,
            g.event.kind.name(),
            m.names[g.event.name as usize],
            g.event.id,
            iv.earliest,
            iv.latest
        )
    };
    for p in &u.examples {
        let _ = writeln!(
            s,
            "unorderable pair: {} | {}",
            event(p.first, &p.first_interval),
            event(p.second, &p.second_interval)
        );
    }
    s
}

fn causality_line(what: &str, c: &Causality) -> String {
    format!(
        "{what}: {} messages, {} violations, {} unmatched sends, {} unmatched receives, \
         min latency {}",
        c.messages,
        c.violations,
        c.unmatched_sends,
        c.unmatched_receives,
        c.min_latency_ns
            .map_or("-".to_string(), |l| format!("{:.1} us", l / 1e3))
    )
}
