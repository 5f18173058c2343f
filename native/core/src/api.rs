//! The IBMTS-style API over the process's default segment, plus what hrts adds
//! (nanoseconds, segment information). The C ABI and JNI layers are thin wrappers
//! over these functions.

use crate::error::Result;
use crate::itc::{ItcFormat, ItcStamper};
use crate::segment::layout::{EVAL_NOT_RUN, LAYOUT_VERSION};
use crate::segment::SharedBase;
use crate::source::SourceId;
use crate::timeline::Base;
use once_cell::sync::OnceCell;
use std::sync::atomic::Ordering::Relaxed;

/// Packs a.b.c.d into 16 bits each, as IBMTS did (1.0.0.5 = 0x0001000000000005).
pub const fn pack_version(a: u16, b: u16, c: u16, d: u16) -> u64 {
    (a as u64) << 48 | (b as u64) << 32 | (c as u64) << 16 | d as u64
}

/// "a.b.c.d" of a packed version.
pub fn version_string(v: u64) -> String {
    format!(
        "{}.{}.{}.{}",
        v >> 48,
        (v >> 32) & 0xffff,
        (v >> 16) & 0xffff,
        v & 0xffff
    )
}

const fn parse_u16(s: &str) -> u16 {
    let b = s.as_bytes();
    let mut i = 0;
    let mut v: u16 = 0;
    while i < b.len() {
        v = v * 10 + (b[i] - b'0') as u16;
        i += 1;
    }
    v
}

/// The library's logic version: the crate's major.minor.patch and the segment
/// layout version as the fourth part.
pub const LOGIC_VERSION: u64 = pack_version(
    parse_u16(env!("CARGO_PKG_VERSION_MAJOR")),
    parse_u16(env!("CARGO_PKG_VERSION_MINOR")),
    parse_u16(env!("CARGO_PKG_VERSION_PATCH")),
    LAYOUT_VERSION as u16,
);

/// IBMTS's success status.
pub const SUCCESS: i32 = 0;

/// Copyright line reported by `getCopyright`.
pub const COPYRIGHT: &str = "hrts: (c) the hrts authors, Apache-2.0. Inspired by IBM's High Resolution Time Stamp Facility.";

static GLOBAL: OnceCell<SharedBase> = OnceCell::new();

/// The process's default segment (named by `HRTS_SEGMENT`, else `/hrts-<uid>`),
/// opened on first use. A failure is returned, not cached: a later call retries.
pub fn global() -> Result<&'static SharedBase> {
    GLOBAL.get_or_try_init(SharedBase::open_default)
}

/// Opens the process's default segment with an explicit configuration (for
/// front ends whose configuration does not come from the environment, such as a
/// JVM's system properties). If it is already open, returns the open one when it
/// has the same name and an error otherwise.
pub fn init_global(cfg: &crate::Config) -> Result<&'static SharedBase> {
    let base = GLOBAL.get_or_try_init(|| SharedBase::open(cfg))?;
    if base.name() != cfg.name {
        return Err(crate::Error::new(
            crate::ErrorKind::InvalidArgument,
            format!(
                "this process already uses segment {}; it cannot switch to {} (a process \
                 has one default segment: set it before the first time stamp)",
                base.name(),
                cfg.name
            ),
        ));
    }
    Ok(base)
}

static ITC: OnceCell<ItcStamper> = OnceCell::new();

/// The process's Intel Trace Collector stamper: its format comes from
/// `HRTS_ITC_EVENT_BITS` and `HRTS_ITC_TICK_NS` (13 bits and 1 ns by default)
/// and its run starts at its first use. Like ITC's local stamps, these are
/// unique within the process; convert them with [`ItcStamper::to_epoch_ns`].
pub fn itc() -> Result<&'static ItcStamper> {
    ITC.get_or_try_init(|| Ok(ItcStamper::new(ItcFormat::from_env()?, global()?.now_ns())))
}

/// The next ITC stamp of this process, from the default segment's clock.
pub fn itc_next() -> Result<u64> {
    let stamper = itc()?;
    stamper.stamp_at(global()?.now_ns_ordered())
}

/// The default segment if it is already open: the hot paths' accessor.
#[inline(always)]
pub fn global_if_open() -> Option<&'static SharedBase> {
    GLOBAL.get()
}

/// Seconds and microseconds since the Unix epoch (IBMTS `calcTimeStamp`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct TimeStamp {
    pub seconds: u64,
    pub microseconds: u32,
}

impl TimeStamp {
    pub fn from_ns(ns: u64) -> TimeStamp {
        TimeStamp {
            seconds: ns / 1_000_000_000,
            microseconds: (ns % 1_000_000_000 / 1_000) as u32,
        }
    }

    /// IBMTS's test-loop line: `seconds.micros = HEX.HEX`.
    pub fn ibmts_line(&self) -> String {
        format!(
            "{}.{:06} = {:08X}.{:08X}",
            self.seconds, self.microseconds, self.seconds, self.microseconds
        )
    }
}

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
    /// IBMTS `calcTimeStamp`.
    #[inline]
    pub fn calc_time_stamp(&self) -> TimeStamp {
        TimeStamp::from_ns(self.now_ns())
    }

    /// IBMTS `getEpochMicroseconds`.
    #[inline]
    pub fn epoch_micros(&self) -> u64 {
        self.now_ns() / 1_000
    }

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn version_packs_like_ibmts() {
        assert_eq!(pack_version(1, 0, 0, 5), 0x0001_0000_0000_0005);
        assert_eq!(pack_version(1, 0, 0, 5), 281_474_976_710_661);
        assert_eq!(version_string(0x0001_0000_0000_0005), "1.0.0.5");
        assert_eq!(
            version_string(LOGIC_VERSION),
            format!("{}.{LAYOUT_VERSION}", env!("CARGO_PKG_VERSION"))
        );
    }

    #[test]
    fn ibmts_line_matches_figure_4() {
        let ts = TimeStamp {
            seconds: 1_019_168_389,
            microseconds: 13_063,
        };
        assert_eq!(ts.ibmts_line(), "1019168389.013063 = 3CBF4685.00003307");
        assert_eq!(TimeStamp::from_ns(1_019_168_389_013_063_999), ts);
    }
}
