//! Calibration repeatability and the reliability evaluation on this machine:
//! `cargo bench -p hrts-core --bench calibration`. Prints a report, no criterion.
//!
//! Runs [`calibrate`] 20 times with the default configuration and reports the spread
//! (max − min) of the 20 estimates in ppm, then both reliability methods.

use hrts_core::clock::{
    calibrate, choose_source, evaluate_cop, evaluate_cpu_switching, nominal_frequency,
    CalibrationConfig, ReliabilityConfig, SourceId,
};

fn main() {
    // `cargo bench` passes --bench; a filter argument that excludes us skips the run.
    if std::env::args()
        .skip(1)
        .any(|a| !a.starts_with('-') && !"calibration".contains(a.as_str()))
    {
        return;
    }
    let choice = choose_source();
    let id = SourceId::native().unwrap_or(SourceId::MonotonicRaw);
    println!("eligibility: {} ({})", choice.source.name(), choice.reason);
    println!(
        "calibrating {} (nominal {:?} Hz)",
        id.name(),
        nominal_frequency(id)
    );
    let cfg = CalibrationConfig::default();
    let mut hz = Vec::new();
    for i in 0..20 {
        match calibrate(id, &cfg) {
            Ok(c) => {
                println!(
                    "run {i:2}: {} Hz  spread {} ppb  brackets {}/{} rejected  {:.1} ms",
                    c.hz,
                    c.spread_ppb,
                    c.brackets_rejected,
                    c.brackets_used + c.brackets_rejected,
                    c.elapsed_ns as f64 / 1e6
                );
                hz.push(c.hz);
            }
            Err(e) => println!("run {i:2}: error: {e}"),
        }
    }
    if let (Some(&lo), Some(&hi)) = (hz.iter().min(), hz.iter().max()) {
        let mut sorted = hz.clone();
        sorted.sort_unstable();
        let median = sorted[sorted.len() / 2];
        let spread_ppm = (hi - lo) as f64 * 1e6 / median as f64;
        println!(
            "calibration: {} runs, budget {:?}, median {median} Hz, min {lo}, max {hi}, spread (max-min) {spread_ppm:.4} ppm",
            hz.len(),
            cfg.budget
        );
    }
    let freq = hz.get(hz.len() / 2).copied().unwrap_or(1_000_000_000);
    let rcfg = ReliabilityConfig::default();
    for r in [
        evaluate_cop(id, freq, &rcfg),
        evaluate_cpu_switching(id, freq, &rcfg),
    ] {
        match r {
            Ok(r) => println!(
                "reliability {:?}: cpus {:?}, max shift {:?} ticks = {:?} ns, monotonic {} ({} violations), {} probes, {} switches/transitions, {:.1} ms{}{}",
                r.method,
                r.cpus,
                r.max_shift_ticks,
                r.max_shift_ns,
                r.monotonic,
                r.violations,
                r.probes,
                r.switches,
                r.elapsed_ns as f64 / 1e6,
                if r.note.is_empty() { "" } else { "; " },
                r.note
            ),
            Err(e) => println!("reliability: error: {e}"),
        }
    }
}
