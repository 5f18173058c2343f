//! The stamp source of traces: the host's hrts timeline, read through one
//! [`Clock`] so that sync, stamps and tests all see the same local time.
//!
//! This is the only module that reaches into `hrts-core`'s segment API. The
//! test-only clock skew (`HRTS_TEST_CLOCK_SKEW`) is applied here, never in the
//! core's hot path: it lets one machine play several hosts whose clocks
//! disagree by known amounts.

use crate::bound::BoundRecord;
use hrts_core::{BoundStatus, Error, ErrorKind, Result, SharedBase};

/// Environment variable, **for tests only**: `OFFSET_NS,DRIFT_PPM[,REF_NS]`
/// makes this process's trace clock read `t + OFFSET + (t - REF) * DRIFT / 1e6`
/// (REF defaults to 0, the epoch) instead of the timeline's `t`. Traces taken
/// with it carry a flag in their header and `hrts merge` says so.
pub const ENV_TEST_CLOCK_SKEW: &str = "HRTS_TEST_CLOCK_SKEW";

/// Environment variable naming this host in trace headers (default: the
/// kernel's hostname).
pub const ENV_TRACE_HOST: &str = "HRTS_TRACE_HOST";

/// A local clock in epoch nanoseconds, read by trace writers and sync.
pub trait Clock: Send + Sync {
    fn now_ns(&self) -> u64;

    /// What the clock's time service says of its error now, for the trace's
    /// bound records; `None` for a clock no time service vouches for (the
    /// default: test clocks).
    fn bound(&self) -> Option<BoundRecord> {
        None
    }

    /// [`Clock::bound`] with what tells a writer when it says something new:
    /// the word's version and when a synchronized word stops being fresh.
    fn bound_reading(&self) -> Option<BoundReading> {
        self.bound().map(|record| BoundReading {
            record,
            version: self.bound_version(),
            stale_at_ns: u64::MAX,
        })
    }

    /// The time service's word version: it changes whenever a new word is
    /// published (0: none, or never changes). Read at every event: cheap.
    fn bound_version(&self) -> u64 {
        0
    }
}

/// A bound record with when it stops being what a stamp gets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BoundReading {
    pub record: BoundRecord,
    /// [`Clock::bound_version`] when it was read.
    pub version: u64,
    /// Clock ns after which the same word is no longer fresh (free-running
    /// then); `u64::MAX` when its status cannot age (it is not synchronized).
    pub stale_at_ns: u64,
}

/// An artificial offset and drift: `t + offset + (t - reference) * drift`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Skew {
    pub offset_ns: i64,
    pub drift_ppm: f64,
    pub reference_ns: u64,
}

impl Skew {
    /// Parses `OFFSET_NS,DRIFT_PPM[,REF_NS]`.
    pub fn parse(text: &str) -> Result<Skew> {
        let bad = |why: &str| {
            Error::new(
                ErrorKind::InvalidArgument,
                format!(
                    "{ENV_TEST_CLOCK_SKEW}={text:?} {why}: write OFFSET_NS,DRIFT_PPM[,REF_NS], \
                     e.g. 2500000000,-100 (a test-only setting: unset it outside tests)"
                ),
            )
        };
        let parts: Vec<&str> = text.split(',').map(str::trim).collect();
        if !(2..=3).contains(&parts.len()) {
            return Err(bad("does not have two or three fields"));
        }
        let offset_ns = parts[0]
            .trim_start_matches('+')
            .parse::<i64>()
            .map_err(|_| bad("has an offset that is not a whole number of ns"))?;
        let drift_ppm = decimal(parts[1])
            .filter(|d| d.abs() < 10_000.0)
            .ok_or_else(|| bad("has a drift that is not a number of ppm below 10000"))?;
        let reference_ns = match parts.get(2) {
            None => 0,
            Some(r) => r
                .parse::<u64>()
                .map_err(|_| bad("has a reference that is not epoch ns"))?,
        };
        Ok(Skew {
            offset_ns,
            drift_ppm,
            reference_ns,
        })
    }

    /// The skew named by `HRTS_TEST_CLOCK_SKEW`, if set and not empty.
    pub fn from_env() -> Result<Option<Skew>> {
        match std::env::var(ENV_TEST_CLOCK_SKEW) {
            Ok(v) if !v.trim().is_empty() => Skew::parse(&v).map(Some),
            _ => Ok(None),
        }
    }

    /// `t` as the skewed clock shows it (saturating at the ends of u64).
    pub fn apply(&self, t: u64) -> u64 {
        let since = t as i128 - self.reference_ns as i128;
        // Integer parts per 10^12: exact, and monotonic (a drift above -10^6
        // ppm can take at most one ns back per ns forward, so t + drift never
        // decreases), which f64 at epoch magnitudes would not be.
        let per_trillion = (self.drift_ppm * 1e6).round() as i128;
        let drift = (since * per_trillion).div_euclid(1_000_000_000_000);
        (t as i128 + self.offset_ns as i128 + drift).clamp(0, u64::MAX as i128) as u64
    }
}

/// What a trace header records about the clock its stamps came from.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct ClockInfo {
    /// The host's name in traces.
    pub host: String,
    /// Identifies one timeline: processes with the same id read the same clock.
    pub clock_id: u64,
    /// Segment the timeline lives in.
    pub segment: String,
    /// Counter source name (tsc, cntvct, timebase, monotonic-raw).
    pub source: String,
    pub frequency_hz: u64,
    pub calibration_spread_ppb: u64,
    pub segment_created_ns: u64,
    pub generation: u64,
    /// A test skew was applied to this clock.
    pub test_skew: bool,
}

/// The host's timeline (an hrts segment), optionally skewed for tests.
pub struct HostClock {
    base: Base,
    skew: Option<Skew>,
    info: ClockInfo,
}

enum Base {
    Global(&'static SharedBase),
    Owned(Box<SharedBase>),
}

impl HostClock {
    /// The process's default segment (`HRTS_SEGMENT`), skewed by
    /// `HRTS_TEST_CLOCK_SKEW` if that is set; host from `HRTS_TRACE_HOST`.
    pub fn from_env() -> Result<HostClock> {
        let base = hrts_core::process::global()?;
        HostClock::new(Base::Global(base), host_from_env(), Skew::from_env()?)
    }

    /// A segment the caller opened (the CLI's `--segment`), with the
    /// environment's host and skew.
    pub fn with_base(base: SharedBase) -> Result<HostClock> {
        HostClock::new(
            Base::Owned(Box::new(base)),
            host_from_env(),
            Skew::from_env()?,
        )
    }

    fn new(base: Base, host: String, skew: Option<Skew>) -> Result<HostClock> {
        let shared = match &base {
            Base::Global(b) => *b,
            Base::Owned(b) => b,
        };
        let info = shared.info();
        let identity = format!(
            "{}\0{}\0{}\0{}\0{:?}",
            info.name, info.created_realtime_ns, info.creator_pid, info.base.generation, skew
        );
        let info = ClockInfo {
            host,
            clock_id: fnv1a(identity.as_bytes()),
            segment: info.name.clone(),
            source: info.source.name().to_string(),
            frequency_hz: info.frequency,
            calibration_spread_ppb: info.calibration_spread_ppb,
            segment_created_ns: info.created_realtime_ns,
            generation: info.base.generation,
            test_skew: skew.is_some(),
        };
        Ok(HostClock { base, skew, info })
    }

    pub fn info(&self) -> &ClockInfo {
        &self.info
    }

    /// Replaces the host name (an API argument wins over the environment).
    pub fn set_host(&mut self, host: &str) {
        self.info.host = host.to_string();
    }
}

impl HostClock {
    fn base(&self) -> &SharedBase {
        match &self.base {
            Base::Global(b) => b,
            Base::Owned(b) => b,
        }
    }
}

impl Clock for HostClock {
    #[inline]
    fn now_ns(&self) -> u64 {
        let base = self.base();
        // Ordered: a stamp taken after a message arrived must not be read
        // speculatively before it.
        let t = base.now_ns_ordered();
        match &self.skew {
            None => t,
            Some(s) => s.apply(t),
        }
    }

    /// The segment's bound, as `now_bounded` would widen a stamp now. A
    /// skewed clock has none: the bound speaks of the timeline, and a skewed
    /// clock is deliberately off it.
    fn bound(&self) -> Option<BoundRecord> {
        self.bound_reading().map(|r| r.record)
    }

    fn bound_reading(&self) -> Option<BoundReading> {
        if self.skew.is_some() {
            return None;
        }
        // The version first: a word published while this reads is seen as
        // new at the next event.
        let version = self.bound_version();
        let at_ns = self.now_ns();
        let Some(s) = self.base().bound_state() else {
            return Some(BoundReading {
                record: BoundRecord::unknown(at_ns),
                version,
                stale_at_ns: u64::MAX,
            });
        };
        let synchronized = s.status == BoundStatus::Synchronized;
        Some(BoundReading {
            record: BoundRecord {
                at_ns,
                status: s.status,
                source: s.source,
                bound_ns: s.bound_ns,
                half_width_ns: s.half_width_ns,
                widest_ns: if synchronized {
                    s.widest_synchronized_ns()
                } else {
                    0
                },
            },
            version,
            stale_at_ns: if synchronized {
                at_ns.saturating_add(s.fresh_ns.saturating_sub(s.age_ns))
            } else {
                u64::MAX
            },
        })
    }

    fn bound_version(&self) -> u64 {
        if self.skew.is_some() {
            return 0;
        }
        self.base().bound_version()
    }
}

/// `HRTS_TRACE_HOST`, else the kernel's hostname, else "localhost".
pub fn host_from_env() -> String {
    std::env::var(ENV_TRACE_HOST)
        .ok()
        .filter(|h| !h.trim().is_empty())
        .or_else(|| {
            std::fs::read_to_string("/proc/sys/kernel/hostname")
                .ok()
                .map(|h| h.trim().to_string())
                .filter(|h| !h.is_empty())
        })
        .unwrap_or_else(|| "localhost".to_string())
}

/// The wall clock (gettimeofday's clock), in epoch ns: what the master's run
/// length is measured with.
pub fn wall_ns() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos().min(u64::MAX as u128) as u64)
}

/// FNV-1a, 64 bits: a stable identity for a clock (not a security hash).
pub(crate) fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// A clock for tests: a function of the real monotonic time, shared across
/// threads. (Also what the crate's own tests use to play several hosts.)
pub struct FnClock<F: Fn() -> u64 + Send + Sync>(pub F);

impl<F: Fn() -> u64 + Send + Sync> Clock for FnClock<F> {
    fn now_ns(&self) -> u64 {
        (self.0)()
    }
}

/// A decimal number `[-+]DIGITS[.DIGITS]` (at most 9 fraction digits). Not
/// `str::parse::<f64>`: that brings the general float parser and its tables
/// into the JNI library, whose size the jar's limit counts, for a test setting.
fn decimal(text: &str) -> Option<f64> {
    let (negative, digits) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text.strip_prefix('+').unwrap_or(text)),
    };
    let (whole, fraction) = digits.split_once('.').unwrap_or((digits, ""));
    let all_digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if whole.is_empty() || !all_digits(whole) || !all_digits(fraction) || fraction.len() > 9 {
        return None;
    }
    let whole = whole.parse::<u64>().ok()? as f64;
    let fraction = match fraction {
        "" => 0.0,
        f => f.parse::<u64>().ok()? as f64 / 10f64.powi(f.len() as i32),
    };
    let x = whole + fraction;
    Some(if negative { -x } else { x })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimals_parse_like_floats() {
        for t in [
            "0",
            "-100",
            "+2.5",
            "1.",
            "12.125",
            "-0.000001",
            "9999.999999999",
        ] {
            assert_eq!(decimal(t), Some(t.parse::<f64>().unwrap()), "{t}");
        }
        for t in [
            "",
            "-",
            ".5",
            "1e3",
            "1.2.3",
            "nan",
            "inf",
            "1.0000000001",
            " 1",
        ] {
            assert_eq!(decimal(t), None, "{t:?}");
        }
    }

    #[test]
    fn skew_parses_and_applies_offset_and_drift() {
        let s = Skew::parse("2500000000,-100,1000000000000").unwrap();
        assert_eq!(s.offset_ns, 2_500_000_000);
        assert_eq!(s.drift_ppm, -100.0);
        // At the reference only the offset shows.
        assert_eq!(s.apply(1_000_000_000_000), 1_002_500_000_000);
        // 10 s later, -100 ppm has taken 1 ms off.
        assert_eq!(
            s.apply(1_010_000_000_000),
            1_010_000_000_000 + 2_500_000_000 - 1_000_000
        );
        let plus = Skew::parse("+5, 0.5").unwrap();
        assert_eq!(plus.reference_ns, 0);
        assert_eq!(plus.apply(2_000_000_000), 2_000_000_005 + 1_000);
        for bad in ["", "1", "1,2,3,4", "x,1", "1,y", "1,1e9", "1,2,-3"] {
            let e = Skew::parse(bad).unwrap_err();
            assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{bad}");
            assert!(e.message().contains("OFFSET_NS,DRIFT_PPM"), "{e}");
        }
    }

    #[test]
    fn a_skewed_clock_never_runs_backwards() {
        let s = Skew::parse("-3000000000,-9999,0").unwrap();
        let mut prev = 0;
        for t in (0..1_000_000u64).map(|i| 1_700_000_000_000_000_000 + i * 997) {
            let v = s.apply(t);
            assert!(v >= prev);
            prev = v;
        }
        assert_eq!(s.apply(0), 0, "saturates at the epoch instead of wrapping");
    }

    #[test]
    fn fnv_is_stable() {
        assert_eq!(fnv1a(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a(b"a"), 0xaf63_dc4c_8601_ec8c);
    }
}
