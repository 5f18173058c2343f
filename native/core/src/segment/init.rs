//! Initialising a segment: choose and calibrate the counter source, pair it with
//! the calendar once, and publish `ready`. Runs in exactly one process per
//! segment (or in the one that replaces a creator that died).

use super::config::Mode;
use super::layout::*;
use super::timeline::{pair_counter_with_calendar, store_line};
use super::tracking::{Line, Rules};
use super::Config;
use crate::clock::calibrate::{calibrate, Calibration};
use crate::clock::convert::Scale;
use crate::clock::eligibility::{decide, Facts};
use crate::clock::reliability::{evaluate_cop, Pace, ReliabilityConfig, Report};
use crate::clock::source::SourceId;
use crate::error::Result;
use std::sync::atomic::AtomicU64;
use std::sync::atomic::Ordering::{Relaxed, Release};

/// Writes this library's minor version and clears the room for later minor
/// versions' fields: a creator of a newer minor that died before the page was
/// ready may have left its fields there, and this page is of our minor.
pub(super) fn initialise_minor(minor: &MinorArea, later: &[AtomicU64]) {
    for word in later {
        word.store(0, Relaxed);
    }
    minor._reserved.store(0, Relaxed);
    minor.layout_minor.store(LAYOUT_MINOR, Relaxed);
}

pub(super) fn initialise(
    h: &Header,
    ext: &Extension,
    stats: &StatsArea,
    bound: &BoundArea,
    ordered: &OrderedArea,
    cfg: &Config,
) -> Result<()> {
    h.init_started_ns.store(crate::os::monotonic_ns(), Relaxed);
    let (source, reason, cal, eval) = pick_and_calibrate(cfg)?;
    match &eval {
        Some(r) => {
            h.eval_monotonic.store(r.monotonic as u32, Relaxed);
            h.eval_max_shift_ns
                .store(r.max_shift_ns.unwrap_or(u64::MAX), Relaxed);
            h.eval_cpus.store(r.cpus.len() as u32, Relaxed);
        }
        None => {
            h.eval_monotonic.store(EVAL_NOT_RUN, Relaxed);
            h.eval_max_shift_ns.store(u64::MAX, Relaxed);
            h.eval_cpus.store(0, Relaxed);
        }
    }
    let scale = Scale::for_frequency(cal.hz)?;
    cfg.tracking.check()?;
    let max_slew_ppb = cfg.tracking.max_slew_ppm as u64 * 1000;
    let interval_ns = cfg.tracking.interval.as_nanos() as u64;
    let step_ns = u64::try_from(cfg.tracking.step_threshold.as_nanos()).unwrap_or(u64::MAX);
    let threshold = match cfg.mode {
        Mode::Frozen => cfg
            .wrap_threshold
            .unwrap_or(scale.max_delta / 2)
            .clamp(1, scale.max_delta),
        Mode::Tracking => {
            // Ties come every interval; the slope may exceed the calibrated one
            // by twice the slew bound, and the fast path must not overflow then.
            let rules = Rules {
                m_cal: scale.mult,
                max_slew_ppb,
                ..Rules::default()
            };
            let room = super::validate::fast_range(rules.mult_range().1);
            let ticks = (interval_ns as u128 * cal.hz as u128 / 1_000_000_000) as u64;
            cfg.wrap_threshold
                .unwrap_or(ticks)
                .clamp(1, room.min(scale.max_delta))
        }
    };

    h.creator_pid.store(crate::os::pid(), Relaxed);
    h.creator_uid.store(crate::os::euid(), Relaxed);
    h.source_id.store(source as u32, Relaxed);
    h.freq_hz.store(cal.hz, Relaxed);
    h.mult.store(scale.mult, Relaxed);
    h.shift.store(scale.shift, Relaxed);
    h.max_delta.store(scale.max_delta, Relaxed);
    h.wrap_threshold.store(threshold, Relaxed);
    h.calib_spread_ppb.store(cal.spread_ppb, Relaxed);
    h.calib_elapsed_ns.store(cal.elapsed_ns, Relaxed);
    h.calibrations.fetch_add(1, Relaxed);
    store_reason(h, &reason);
    h.mode.store(cfg.mode.code(), Relaxed);
    h.tie_interval_ns.store(interval_ns, Relaxed);
    h.max_slew_ppb.store(max_slew_ppb, Relaxed);
    h.step_ns.store(step_ns, Relaxed);
    let (pace, pace_ppb) = match &eval {
        Some(r) => match r.pace {
            Pace::Same { bound_ppb } => (PACE_SAME, bound_ppb),
            Pace::Differs { ppb } => (PACE_DIFFERS, ppb),
            Pace::Stuck => (PACE_STUCK, 0),
            Pace::Unknown => (PACE_NOT_RUN, 0),
        },
        None => (PACE_NOT_RUN, 0),
    };
    h.eval_pace.store(pace, Relaxed);
    h.eval_pace_ppb.store(pace_ppb, Relaxed);

    let (counter, ns) = pair_counter_with_calendar(source, &cfg.calendar);
    h.created_realtime_ns.store(ns, Relaxed);
    let mut line = Line::paired(counter, ns, 1, scale.mult);
    if cfg.mode == Mode::Tracking {
        // The pairing is the first tie: the next one measures the rate from here.
        line.tie_ns = ns;
    }
    for slot in &h.slots {
        store_line(slot, &line, 0);
    }
    if cfg.mode == Mode::Tracking {
        // The pairing's bracket is well under 10 µs; the first tie publishes
        // the measured line error.
        super::bound::publish(
            bound,
            &cfg.bound,
            interval_ns,
            crate::clock::vmclock::Watch::new(cfg.vmclock.clone())
                .look(crate::clock::bound::learn())
                .learned,
            10_000,
            counter,
            0,
        );
    }
    // Measured here, by the one process that creates the page, so that every
    // process orders its reads the same way whatever CPU it starts on.
    ordered.ordered_read.store(
        crate::clock::source::choose_ordered_read(source).code(),
        Relaxed,
    );
    h.seq.store(0, Relaxed);
    super::tie_stats::initialise(h, stats);
    // A replaced creator may have left anything here; nobody read it before `ready`.
    for word in [
        &*ext.last_unique,
        &*ext.seq_next,
        &ext.seq_limit,
        &ext.seq_interval,
    ] {
        word.store(0, Relaxed);
    }
    ext.seq_ready.store(0, Relaxed);
    h.writer_start_time.store(0, Relaxed);

    h.segment_size.store(SEGMENT_SIZE as u64, Relaxed);
    h.header_size
        .store(std::mem::size_of::<Header>() as u32, Relaxed);
    h.layout_version.store(LAYOUT_VERSION, Relaxed);
    h.header_check.store(header_check(h), Relaxed);
    h.magic.store(MAGIC, Release);
    h.state
        .store(state_word(STATE_READY, crate::os::pid()), Release);
    Ok(())
}

/// Largest cross-CPU counter shift a hardware source may show in the creation-time
/// evaluation; beyond it, stamps taken on different CPUs could contradict
/// causality by more than a clock_gettime call costs.
pub const MAX_TRUSTED_SHIFT_NS: u64 = 5_000;

/// Chooses the source, evaluates (hardware counters) and calibrates it. A
/// hardware counter that fails its evaluation or calibration is replaced by
/// CLOCK_MONOTONIC_RAW, with the reason recorded, rather than failing the
/// process; a source forced by `HRTS_SOURCE` is kept, with the findings noted.
fn pick_and_calibrate(cfg: &Config) -> Result<(SourceId, String, Calibration, Option<Report>)> {
    let facts = Facts::gather();
    let forced = facts.override_source.is_some();
    let choice = decide(&facts);
    let mut reason = choice.reason;
    let mut eval = None;
    if choice.source != SourceId::MonotonicRaw {
        match calibrate(choice.source, &cfg.calibration) {
            Ok(cal) => {
                let verdict = if cfg.evaluate_reliability {
                    let rc = ReliabilityConfig {
                        budget: std::time::Duration::from_millis(30),
                        ..ReliabilityConfig::default()
                    };
                    match evaluate_cop(choice.source, cal.hz, &rc) {
                        Ok(r) => {
                            let v = judge(&r);
                            eval = Some(r);
                            v
                        }
                        Err(e) => Err(format!("reliability evaluation failed ({e})")),
                    }
                } else {
                    Ok(())
                };
                match verdict {
                    Ok(()) => return Ok((choice.source, reason, cal, eval)),
                    Err(why) if forced => {
                        reason = format!("{reason}; kept although {why}");
                        return Ok((choice.source, reason, cal, eval));
                    }
                    Err(why) => reason = format!("{reason}; but {why}, fell back to monotonic-raw"),
                }
            }
            Err(e) => {
                reason = format!("{reason}; calibration failed ({e}), fell back to monotonic-raw")
            }
        }
    }
    let cal = calibrate(SourceId::MonotonicRaw, &cfg.calibration)?;
    Ok((SourceId::MonotonicRaw, reason, cal, eval))
}

fn judge(r: &Report) -> std::result::Result<(), String> {
    match r.pace {
        Pace::Differs { ppb } => {
            return Err(format!(
                "its CPUs' counters run at different paces (by at least {ppb} ppb)"
            ))
        }
        Pace::Stuck => return Err("it did not change during the evaluation".into()),
        Pace::Same { .. } | Pace::Unknown => {}
    }
    if !r.monotonic {
        return Err(format!(
            "it went backwards {} times across CPUs in the reliability evaluation",
            r.violations
        ));
    }
    match r.max_shift_ns {
        Some(ns) if ns > MAX_TRUSTED_SHIFT_NS => Err(format!(
            "CPUs disagree by up to {ns} ns (limit {MAX_TRUSTED_SHIFT_NS} ns)"
        )),
        _ => Ok(()),
    }
}

fn store_reason(h: &Header, reason: &str) {
    let mut bytes = reason.as_bytes();
    if bytes.len() > REASON_LEN {
        // Cut at a character boundary so the stored text stays valid UTF-8.
        let mut end = REASON_LEN;
        while !reason.is_char_boundary(end) {
            end -= 1;
        }
        bytes = &bytes[..end];
    }
    for (dst, &b) in h.reason.iter().zip(bytes) {
        dst.store(b, Relaxed);
    }
    h.reason_len.store(bytes.len() as u32, Relaxed);
}

pub(crate) fn load_reason(h: &Header) -> String {
    let len = (h.reason_len.load(Relaxed) as usize).min(REASON_LEN);
    let bytes: Vec<u8> = h.reason[..len].iter().map(|b| b.load(Relaxed)).collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::reliability::Method;

    fn report(pace: Pace) -> Report {
        Report {
            method: Method::CasOrderedProbes,
            source: SourceId::Tsc,
            cpus: vec![0, 1],
            max_shift_ticks: Some(100),
            max_shift_ns: Some(40),
            monotonic: true,
            violations: 0,
            probes: 1000,
            switches: 500,
            elapsed_ns: 1,
            note: String::new(),
            pace,
            min_pair_handovers: Some(250),
            significant: true,
        }
    }

    #[test]
    fn a_counter_failing_the_pace_check_is_not_chosen() {
        assert!(judge(&report(Pace::Same { bound_ppb: 300 })).is_ok());
        assert!(judge(&report(Pace::Unknown)).is_ok());
        let why = judge(&report(Pace::Differs { ppb: 120_000 })).unwrap_err();
        assert!(why.contains("different paces"), "{why}");
        let why = judge(&report(Pace::Stuck)).unwrap_err();
        assert!(why.contains("did not change"), "{why}");
    }
}
