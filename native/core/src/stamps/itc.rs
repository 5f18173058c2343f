//! Intel Trace Collector style stamps: a clock tick in the high bits and an event
//! counter in the low bits of one u64, unique even when the clock is coarse.
//!
//! The counter counts stamps that share the previous stamp's tick; when it would
//! overflow, the tick is advanced artificially. Converting back: shift the event
//! bits away, then multiply by the nominal period and by 2^bits. (Multiplying the
//! raw stamp by the nominal period, as legacy readers do, is exact when the event
//! counter is zero and off by less than one tick otherwise.)

use crate::error::{Error, ErrorKind, Result};
use std::sync::atomic::AtomicU64;
use std::sync::atomic::Ordering::{Relaxed, SeqCst};

/// Environment variable setting the event bits of the process's ITC stamper.
pub const ENV_EVENT_BITS: &str = "HRTS_ITC_EVENT_BITS";
/// Environment variable setting its clock tick in nanoseconds.
pub const ENV_TICK_NS: &str = "HRTS_ITC_TICK_NS";

/// The bit layout and time unit of a stamp.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ItcFormat {
    /// Low-order bits holding the event counter (13 by default: 8192 events per tick).
    pub event_bits: u32,
    /// Length of one clock tick in nanoseconds (the clock's resolution).
    pub tick_ns: u64,
}

impl Default for ItcFormat {
    fn default() -> Self {
        ItcFormat {
            event_bits: 13,
            tick_ns: 1,
        }
    }
}

impl ItcFormat {
    pub fn new(event_bits: u32, tick_ns: u64) -> Result<ItcFormat> {
        if !(1..=32).contains(&event_bits) || tick_ns == 0 {
            return Err(Error::new(
                ErrorKind::InvalidArgument,
                format!(
                    "ITC format with {event_bits} event bits and a {tick_ns} ns tick is invalid: \
                     use 1..=32 event bits and a tick of at least 1 ns"
                ),
            ));
        }
        Ok(ItcFormat {
            event_bits,
            tick_ns,
        })
    }

    /// The format named by `HRTS_ITC_EVENT_BITS` (default 13) and
    /// `HRTS_ITC_TICK_NS` (default 1).
    pub fn from_env() -> Result<ItcFormat> {
        let var = |name: &str, default: u64| -> Result<u64> {
            match std::env::var(name) {
                Err(_) => Ok(default),
                Ok(v) => v.trim().parse().map_err(|_| {
                    Error::new(
                        ErrorKind::InvalidArgument,
                        format!("{name}={v:?} is not a whole number"),
                    )
                }),
            }
        };
        let bits = var(ENV_EVENT_BITS, 13)?;
        ItcFormat::new(u32::try_from(bits).unwrap_or(0), var(ENV_TICK_NS, 1)?)
    }

    /// The largest clock tick a stamp can hold.
    pub fn max_tick(&self) -> u64 {
        u64::MAX >> self.event_bits
    }

    pub fn encode(&self, tick: u64, event: u64) -> u64 {
        (tick << self.event_bits) | (event & self.event_mask())
    }

    /// (clock tick, event counter).
    pub fn decode(&self, stamp: u64) -> (u64, u64) {
        (stamp >> self.event_bits, stamp & self.event_mask())
    }

    fn event_mask(&self) -> u64 {
        (1u64 << self.event_bits) - 1
    }

    /// The nominal period of one stamp unit, in seconds: what a trace header
    /// records (tick length / 2^bits).
    pub fn nominal_period_s(&self) -> f64 {
        self.tick_ns as f64 * 1e-9 / (1u64 << self.event_bits) as f64
    }

    /// The accurate conversion: drop the event bits, multiply by the nominal
    /// period and by 2^bits.
    pub fn to_seconds(&self, stamp: u64) -> f64 {
        (stamp >> self.event_bits) as f64
            * self.nominal_period_s()
            * (1u64 << self.event_bits) as f64
    }

    /// The legacy conversion: the raw stamp times the nominal period.
    pub fn to_seconds_legacy(&self, stamp: u64) -> f64 {
        stamp as f64 * self.nominal_period_s()
    }

    /// Exact nanoseconds since the run's origin of the stamp's tick.
    pub fn to_ns(&self, stamp: u64) -> u128 {
        (stamp >> self.event_bits) as u128 * self.tick_ns as u128
    }
}

/// Issues ITC stamps for one run, from any number of threads.
pub struct ItcStamper {
    format: ItcFormat,
    origin_ns: u64,
    /// The last stamp issued, plus one; 0 while none was issued.
    last: AtomicU64,
    max_event: AtomicU64,
}

impl ItcStamper {
    /// A run starting at `origin_ns` (epoch ns).
    pub fn new(format: ItcFormat, origin_ns: u64) -> ItcStamper {
        ItcStamper {
            format,
            origin_ns,
            last: AtomicU64::new(0),
            max_event: AtomicU64::new(0),
        }
    }

    pub fn format(&self) -> ItcFormat {
        self.format
    }

    /// Epoch nanoseconds at which the run (tick 0) starts.
    pub fn origin_ns(&self) -> u64 {
        self.origin_ns
    }

    /// Epoch nanoseconds of a stamp's clock tick (exact; the event counter is dropped).
    pub fn to_epoch_ns(&self, stamp: u64) -> u64 {
        let ns = self.origin_ns as u128 + self.format.to_ns(stamp);
        ns.min(u64::MAX as u128) as u64
    }

    /// The stamp for a clock reading `now_ns` (epoch ns): its tick with event 0,
    /// or the previous stamp + 1 when that is not below it. The +1 carries into
    /// the tick when the event counter overflows.
    pub fn stamp_at(&self, now_ns: u64) -> Result<u64> {
        let tick = now_ns.saturating_sub(self.origin_ns) / self.format.tick_ns;
        if tick >= self.format.max_tick() {
            return Err(Error::new(
                ErrorKind::InvalidArgument,
                format!(
                    "ITC stamps with {} event bits and {} ns ticks cover {} ticks from the start \
                     of the run, and this run has used them up: start a new run (a new process) \
                     or use coarser ticks (HRTS_ITC_TICK_NS)",
                    self.format.event_bits,
                    self.format.tick_ns,
                    self.format.max_tick()
                ),
            ));
        }
        let fresh = self.format.encode(tick, 0);
        let mut prev = self.last.load(Relaxed);
        loop {
            // `prev` is the last stamp + 1, so it is also the least stamp allowed next.
            let next = fresh.max(prev);
            match self
                .last
                .compare_exchange_weak(prev, next.wrapping_add(1), SeqCst, Relaxed)
            {
                Ok(_) => {
                    self.max_event
                        .fetch_max(self.format.decode(next).1, Relaxed);
                    return Ok(next);
                }
                Err(seen) => prev = seen,
            }
        }
    }

    /// The maximum number of events on the same clock tick, counted as Intel
    /// Trace Collector counts it: the largest event counter issued so far, so 0
    /// means no two events ever shared a tick (the clock resolved them all) and
    /// N means some tick held N + 1 events. A non-zero value says the clock's
    /// resolution was too low to tell some events apart.
    pub fn max_events_per_tick(&self) -> u64 {
        self.max_event.load(Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encode_decode_round_trip_and_default_layout() {
        let f = ItcFormat::default();
        assert_eq!(f.event_bits, 13);
        let s = f.encode(123_456_789, 42);
        assert_eq!(f.decode(s), (123_456_789, 42));
        assert_eq!(s, 123_456_789 << 13 | 42);
        assert!(ItcFormat::new(0, 1).is_err());
        assert!(ItcFormat::new(13, 0).is_err());
    }

    #[test]
    fn conversion_is_exact_without_events_and_close_with_them() {
        let f = ItcFormat::new(13, 1_000_000).unwrap(); // a millisecond clock
        let s0 = f.encode(1500, 0);
        assert_eq!(f.to_seconds(s0), 1.5);
        assert_eq!(f.to_seconds_legacy(s0), 1.5);
        assert_eq!(f.to_ns(s0), 1_500_000_000);
        let s = f.encode(1500, 8191);
        assert_eq!(
            f.to_seconds(s),
            1.5,
            "the accurate path ignores the event counter"
        );
        let legacy_err = f.to_seconds_legacy(s) - 1.5;
        assert!(
            legacy_err > 0.0 && legacy_err < 0.001,
            "legacy error {legacy_err} is under one tick"
        );
    }

    #[test]
    fn a_coarse_clock_still_gives_unique_increasing_stamps() {
        let f = ItcFormat::new(3, 1_000_000).unwrap(); // 8 events per ms tick
        let st = ItcStamper::new(f, 1_000_000_000);
        assert_eq!(
            st.stamp_at(1_000_000_000).unwrap(),
            0,
            "the first tick of the run is tick 0"
        );
        assert_eq!(
            st.stamp_at(1_000_000_000).unwrap(),
            1,
            "a second event on tick 0 is counted"
        );
        let same_tick = 1_000_000_000 + 5_000_000;
        let stamps: Vec<u64> = (0..10).map(|_| st.stamp_at(same_tick).unwrap()).collect();
        assert!(stamps.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(f.decode(stamps[0]), (5, 0));
        assert_eq!(f.decode(stamps[7]), (5, 7));
        // The 9th event overflows the counter: the tick is advanced artificially.
        assert_eq!(f.decode(stamps[8]), (6, 0));
        // Tick 5 held 8 events (counters 0..=7): ITC reports 7.
        assert_eq!(st.max_events_per_tick(), 7);
        assert_eq!(f.decode(stamps[9]), (6, 1));
        // A later real tick resumes the real clock.
        assert_eq!(
            f.decode(st.stamp_at(1_000_000_000 + 9_000_000).unwrap()),
            (9, 0)
        );
    }

    #[test]
    fn a_run_that_outlives_its_tick_range_is_an_error_not_a_wrap() {
        let f = ItcFormat::new(13, 1).unwrap();
        let st = ItcStamper::new(f, 0);
        assert!(st.stamp_at(f.max_tick() - 1).is_ok());
        let err = st.stamp_at(f.max_tick()).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidArgument);
        assert!(err.message().contains("HRTS_ITC_TICK_NS"), "{err}");
        assert_eq!(st.to_epoch_ns(f.encode(5, 3)), 5);
    }

    #[test]
    fn threads_never_share_a_stamp() {
        let st = std::sync::Arc::new(ItcStamper::new(ItcFormat::new(13, 1000).unwrap(), 0));
        let handles: Vec<_> = (0..4)
            .map(|_| {
                let st = st.clone();
                std::thread::spawn(move || {
                    (0..20_000)
                        .map(|_| st.stamp_at(crate::os::realtime_ns()).unwrap())
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        let mut all = Vec::new();
        for h in handles {
            let v = h.join().unwrap();
            assert!(v.windows(2).all(|w| w[0] < w[1]));
            all.extend(v);
        }
        let n = all.len();
        all.sort_unstable();
        all.dedup();
        assert_eq!(all.len(), n);
        let mask = (1u64 << 13) - 1;
        let most = all.iter().map(|s| s & mask).max().unwrap();
        assert_eq!(st.max_events_per_tick(), most);
    }

    #[test]
    fn max_events_per_tick_counts_as_itc_does() {
        let f = ItcFormat::new(13, 1_000).unwrap();
        let st = ItcStamper::new(f, 0);
        assert_eq!(st.max_events_per_tick(), 0, "no stamps yet");
        for tick in 0..5 {
            st.stamp_at(tick * 1_000).unwrap();
        }
        assert_eq!(
            st.max_events_per_tick(),
            0,
            "every event on a tick of its own"
        );
        st.stamp_at(7_000).unwrap();
        st.stamp_at(7_500).unwrap();
        assert_eq!(st.max_events_per_tick(), 1, "two events on tick 7");
    }
}
