//! What a segment records about itself, as `hrts info` and Java's `SegmentInfo`
//! show it.

use crate::clock::reliability::Pace;
use crate::clock::source::{OrderedRead, SourceId};
use crate::segment::config::Mode;
use crate::segment::layout::*;
use crate::segment::timeline::Base;
use crate::segment::SharedBase;
use std::sync::atomic::Ordering::Relaxed;

/// How a segment follows the calendar, and what its ties have done so far.
/// The same for every process of the segment (it lives in the segment).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TrackingState {
    pub mode: Mode,
    /// Time between ties (tracking), ns.
    pub tie_interval_ns: u64,
    /// Bound on the slew and on the learned frequency error, ppb.
    pub max_slew_ppb: u64,
    /// A calendar ahead by more than this is followed by a step, ns.
    pub step_threshold_ns: u64,
    /// Ties so far, by all processes together.
    pub ties: u64,
    /// The calendar's reading at the last tie (epoch ns); 0 if none yet.
    pub last_tie_ns: u64,
    /// Calendar minus timeline measured by the last tie, before its correction.
    pub last_offset_ns: i64,
    /// Calendar minus timeline still to absorb by slewing, as of the last tie
    /// (negative: the timeline is ahead, after a backward step of the clock).
    pub pending_ns: i64,
    /// The learned rate of the calendar against the calibrated counter, ppb.
    pub frequency_ppb: i64,
    /// The slew in force on top of it, ppb.
    pub slew_ppb: i64,
    /// The slope's whole correction (frequency + slew), ppb of the calibrated one.
    pub correction_ppb: i64,
    /// Steps forward (calendar steps, counter resets), and their sizes, ns.
    pub steps: u64,
    pub last_step_ns: i64,
    pub largest_step_ns: i64,
    /// Damaged lines or header fields a tie or move found and repaired.
    pub repairs: u64,
    /// The tie statistics above (`ties`, `last_offset_ns`, `steps`,
    /// `last_step_ns`, `largest_step_ns`, `repairs`, and the segment's
    /// `moves`) agree with their check word; when they do not (the page was
    /// damaged) they are 0 here and `hrts info` shows them as damaged.
    pub statistics_valid: bool,
}

impl TrackingState {
    /// The correction in ppm, as `hrts info` and `hrts track` print it.
    pub fn correction_ppm(&self) -> f64 {
        self.correction_ppb as f64 / 1000.0
    }
}

/// Everything `hrts info` shows about a segment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SegmentInfo {
    pub name: String,
    /// Which timeline the handle uses: `host service /run/hrts/time`, or
    /// `per-user segment /hrts-0` (with why a host page was refused, if so).
    pub timeline: String,
    /// A host page: its service's state in words (running, or gone for how long).
    pub service: Option<String>,
    pub layout_version: u32,
    /// The minor version of the layout the segment's creator wrote (this
    /// library reads any minor of its `layout_version`).
    pub layout_minor: u32,
    pub source: SourceId,
    pub reason: String,
    /// How every process of the segment orders a counter read (the creator's
    /// measured choice; `lfence; rdtsc` on a page that records none).
    pub ordered_read: OrderedRead,
    pub frequency: u64,
    pub calibration_spread_ppb: u64,
    pub calibration_elapsed_ns: u64,
    pub calibrations: u32,
    pub creator_pid: u32,
    pub creator_uid: u32,
    pub created_realtime_ns: u64,
    pub mult: u64,
    pub shift: u32,
    pub wrap_threshold: u64,
    pub moves: u64,
    pub base: Base,
    /// Creation-time reliability evaluation: `None` when none ran (software
    /// source, or disabled).
    pub evaluation: Option<EvaluationSummary>,
    /// Mode and tie statistics.
    pub tracking: TrackingState,
    /// Calendar minus timeline when the snapshot was taken (narrowest bracket), ns.
    pub offset_ns: i64,
}

/// What the creator's reliability evaluation found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EvaluationSummary {
    pub monotonic: bool,
    /// Bound on the counter shift between CPUs; `None` if it could not be bounded.
    pub max_shift_ns: Option<u64>,
    pub cpus: u32,
    /// WTMLIB's pace check across the CPUs.
    pub pace: Pace,
}

/// `Pace` in words, as `hrts info` and `hrts eval` print it.
pub fn pace_text(p: &Pace) -> String {
    match p {
        Pace::Same { bound_ppb } => format!("same on every CPU (within {bound_ppb} ppb)"),
        Pace::Differs { ppb } => format!("differs between CPUs (by at least {ppb} ppb)"),
        Pace::Stuck => "stuck (the counter did not change)".to_string(),
        Pace::Unknown => "unknown (too few hand-overs between CPUs)".to_string(),
    }
}

/// The keys of the tie statistics (see [`TrackingState::statistics_valid`]).
pub const STATISTICS_KEYS: [&str; 7] = [
    "moves",
    "ties",
    "last tie offset ns",
    "steps",
    "last step ns",
    "largest step ns",
    "repairs",
];

impl SegmentInfo {
    /// Every fact as (key, value) text, in one canonical order and wording, so
    /// the CLI's `hrts info` and the Java `SegmentInfo` show the same thing.
    /// Values never contain line breaks.
    pub fn fields(&self) -> Vec<(&'static str, String)> {
        let mut f = vec![
            ("timeline", self.timeline.replace(['\n', '\r'], " ")),
            ("segment", self.name.clone()),
            ("layout version", self.layout_version.to_string()),
            (
                "service",
                self.service.clone().unwrap_or_else(|| "none".into()),
            ),
            ("source", self.source.name().to_string()),
            ("reason", self.reason.replace(['\n', '\r'], " ")),
            (
                "ordered read",
                self.ordered_read.name(self.source).to_string(),
            ),
            ("frequency", self.frequency.to_string()),
            (
                "calibration spread ppb",
                self.calibration_spread_ppb.to_string(),
            ),
            (
                "calibration elapsed ns",
                self.calibration_elapsed_ns.to_string(),
            ),
            ("calibrations", self.calibrations.to_string()),
        ];
        match &self.evaluation {
            None => f.push(("evaluation", "none".to_string())),
            Some(e) => {
                let verdict = if e.monotonic {
                    "monotonic"
                } else {
                    "not monotonic"
                };
                f.push(("evaluation", verdict.to_string()));
                let shift = e
                    .max_shift_ns
                    .map_or_else(|| "unbounded".to_string(), |ns| ns.to_string());
                f.push(("evaluation max shift ns", shift));
                f.push(("evaluation cpus", e.cpus.to_string()));
                f.push(("evaluation pace", pace_text(&e.pace)));
            }
        }
        let t = &self.tracking;
        f.push(("mode", t.mode.name().to_string()));
        f.extend([
            ("creator pid", self.creator_pid.to_string()),
            ("creator uid", self.creator_uid.to_string()),
            ("created epoch ns", self.created_realtime_ns.to_string()),
            ("generation", self.base.generation.to_string()),
            ("base counter", self.base.counter.to_string()),
            ("base ns", self.base.ns.to_string()),
            ("mult", self.mult.to_string()),
            ("shift", self.shift.to_string()),
            ("wrap threshold ticks", self.wrap_threshold.to_string()),
            ("moves", self.moves.to_string()),
            ("offset ns", self.offset_ns.to_string()),
        ]);
        if t.mode == Mode::Tracking {
            f.extend([
                ("tie interval ns", t.tie_interval_ns.to_string()),
                (
                    "max slew ppm",
                    format!("{}", t.max_slew_ppb as f64 / 1000.0),
                ),
                ("step threshold ns", t.step_threshold_ns.to_string()),
                ("ties", t.ties.to_string()),
                ("last tie epoch ns", t.last_tie_ns.to_string()),
                ("last tie offset ns", t.last_offset_ns.to_string()),
                ("pending ns", t.pending_ns.to_string()),
                (
                    "frequency ppm",
                    format!("{:.3}", t.frequency_ppb as f64 / 1000.0),
                ),
                ("slew ppm", format!("{:.3}", t.slew_ppb as f64 / 1000.0)),
                ("slope correction ppm", format!("{:.3}", t.correction_ppm())),
                ("steps", t.steps.to_string()),
                ("last step ns", t.last_step_ns.to_string()),
                ("largest step ns", t.largest_step_ns.to_string()),
            ]);
        }
        f.push(("repairs", t.repairs.to_string()));
        if !t.statistics_valid {
            for (key, value) in &mut f {
                if STATISTICS_KEYS.contains(key) {
                    *value = "damaged (the next tie or move starts it again)".into();
                }
            }
        }
        f
    }
}

impl SharedBase {
    /// A snapshot of the segment's recorded facts.
    pub fn info(&self) -> SegmentInfo {
        let h = self.header();
        SegmentInfo {
            name: self.name.clone(),
            timeline: self.timeline(),
            service: self.service().map(|s| s.text(crate::os::realtime_ns())),
            layout_version: h.layout_version.load(Relaxed),
            layout_minor: self.minor_area().layout_minor.load(Relaxed),
            source: self.source,
            reason: crate::segment::load_reason(h),
            ordered_read: self.ordered_read(),
            frequency: self.freq_hz,
            calibration_spread_ppb: h.calib_spread_ppb.load(Relaxed),
            calibration_elapsed_ns: h.calib_elapsed_ns.load(Relaxed),
            calibrations: h.calibrations.load(Relaxed),
            creator_pid: h.creator_pid.load(Relaxed),
            creator_uid: h.creator_uid.load(Relaxed),
            created_realtime_ns: h.created_realtime_ns.load(Relaxed),
            mult: self.base().mult,
            shift: self.scale.shift,
            wrap_threshold: self.threshold,
            moves: self.checked_stats().map_or(0, |s| s.moves),
            base: self.base(),
            evaluation: match h.eval_monotonic.load(Relaxed) {
                EVAL_NOT_RUN => None,
                m => Some(EvaluationSummary {
                    monotonic: m == 1,
                    max_shift_ns: Some(h.eval_max_shift_ns.load(Relaxed))
                        .filter(|&v| v != u64::MAX),
                    cpus: h.eval_cpus.load(Relaxed),
                    pace: {
                        let ppb = h.eval_pace_ppb.load(Relaxed);
                        match h.eval_pace.load(Relaxed) {
                            PACE_SAME => Pace::Same { bound_ppb: ppb },
                            PACE_DIFFERS => Pace::Differs { ppb },
                            PACE_STUCK => Pace::Stuck,
                            _ => Pace::Unknown,
                        }
                    },
                }),
            },
            tracking: self.tracking_state(),
            offset_ns: self.offset_now(),
        }
    }

    /// The segment's mode.
    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// The tracker's state: mode, settings, the active line's correction, tie
    /// and step statistics.
    pub fn tracking_state(&self) -> TrackingState {
        let h = self.header();
        let stats = self.checked_stats();
        let s = stats.unwrap_or_default();
        let (line, ..) = self.active_line();
        let m = self.scale.mult as i128;
        let ppb = |x: u64| ((x as i128 - m) * 1_000_000_000 / m) as i64;
        let tracking = self.mode == Mode::Tracking;
        TrackingState {
            mode: self.mode,
            tie_interval_ns: h.tie_interval_ns.load(Relaxed),
            max_slew_ppb: h.max_slew_ppb.load(Relaxed),
            step_threshold_ns: h.step_ns.load(Relaxed),
            ties: s.ties,
            last_tie_ns: if tracking { line.tie_ns } else { 0 },
            last_offset_ns: s.last_offset_ns,
            pending_ns: line.residual,
            frequency_ppb: ppb(line.freq_mult),
            slew_ppb: ((line.mult as i128 - line.freq_mult as i128) * 1_000_000_000 / m) as i64,
            correction_ppb: ppb(line.mult),
            steps: s.steps,
            last_step_ns: s.last_step_ns,
            largest_step_ns: s.largest_step_ns,
            repairs: s.repairs,
            statistics_valid: stats.is_some(),
        }
    }
}
