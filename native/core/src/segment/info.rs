//! What a segment records about itself, as `hrts info` and Java's `SegmentInfo`
//! show it.

use crate::clock::source::SourceId;
use crate::segment::layout::EVAL_NOT_RUN;
use crate::segment::timeline::Base;
use crate::segment::SharedBase;
use std::sync::atomic::Ordering::Relaxed;

/// Everything `hrts info` shows about a segment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SegmentInfo {
    pub name: String,
    pub layout_version: u32,
    pub source: SourceId,
    pub reason: String,
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
}

/// What the creator's reliability evaluation found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EvaluationSummary {
    pub monotonic: bool,
    /// Bound on the counter shift between CPUs; `None` if it could not be bounded.
    pub max_shift_ns: Option<u64>,
    pub cpus: u32,
}

impl SegmentInfo {
    /// Every fact as (key, value) text, in one canonical order and wording, so
    /// the CLI's `hrts info` and the Java `SegmentInfo` show the same thing.
    /// Values never contain line breaks.
    pub fn fields(&self) -> Vec<(&'static str, String)> {
        let mut f = vec![
            ("segment", self.name.clone()),
            ("layout version", self.layout_version.to_string()),
            ("source", self.source.name().to_string()),
            ("reason", self.reason.replace(['\n', '\r'], " ")),
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
            }
        }
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
        ]);
        f
    }
}

impl SharedBase {
    /// A snapshot of the segment's recorded facts.
    pub fn info(&self) -> SegmentInfo {
        let h = self.header();
        SegmentInfo {
            name: self.name.clone(),
            layout_version: h.layout_version.load(Relaxed),
            source: self.source,
            reason: crate::segment::load_reason(h),
            frequency: self.freq_hz,
            calibration_spread_ppb: h.calib_spread_ppb.load(Relaxed),
            calibration_elapsed_ns: h.calib_elapsed_ns.load(Relaxed),
            calibrations: h.calibrations.load(Relaxed),
            creator_pid: h.creator_pid.load(Relaxed),
            creator_uid: h.creator_uid.load(Relaxed),
            created_realtime_ns: h.created_realtime_ns.load(Relaxed),
            mult: self.scale.mult,
            shift: self.scale.shift,
            wrap_threshold: self.threshold,
            moves: h.moves.load(Relaxed),
            base: self.base(),
            evaluation: match h.eval_monotonic.load(Relaxed) {
                EVAL_NOT_RUN => None,
                m => Some(EvaluationSummary {
                    monotonic: m == 1,
                    max_shift_ns: Some(h.eval_max_shift_ns.load(Relaxed))
                        .filter(|&v| v != u64::MAX),
                    cpus: h.eval_cpus.load(Relaxed),
                }),
            },
        }
    }
}
