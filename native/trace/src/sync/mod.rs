//! Clock sync with a master, as the Intel Trace Collector does it: ping-pong
//! exchanges at the start and the end of a run (optionally in between), each
//! giving the offset between the two clocks to within half its round trip.
//!
//! One exchange: the client reads its clock (`t0`) and sends a request; the
//! master reads its clock on arrival (`t1`) and its wall clock (`wall`, what
//! gettimeofday shows), then again just before replying (`t2`); the client
//! reads its clock when the reply arrives (`t3`). The master's clock at the
//! midpoint of the exchange is `(t1 + t2) / 2`, the client's `(t0 + t3) / 2`,
//! and whatever the path delays, the true offset is within half the round trip
//! `((t3 - t0) - (t2 - t1)) / 2` of their difference.

mod client;
mod server;
pub mod wire;

pub use client::{sync_round, sync_round_with_key, SyncOptions, MAX_EXCHANGES};
pub use server::{
    bind, serve, serve_with, Access, Peer, ServeOptions, ServeSummary, DEFAULT_RATE, MAX_SOURCES,
};
pub use wire::{SyncKey, ENV_KEY};

/// Whether a socket error only means "nothing arrived in time" (retry or stop
/// waiting), not a failure.
pub(crate) fn is_wait(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        std::io::ErrorKind::WouldBlock
            | std::io::ErrorKind::TimedOut
            | std::io::ErrorKind::Interrupted
    )
}

/// The four clock readings of one exchange, plus the master's wall clock.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Exchange {
    /// Local clock when the request left (epoch ns, local timeline).
    pub t0: u64,
    /// Master clock when the request arrived.
    pub t1: u64,
    /// Master clock when the reply left.
    pub t2: u64,
    /// Local clock when the reply arrived.
    pub t3: u64,
    /// Master wall clock (gettimeofday's clock) at `t1`.
    pub wall: u64,
}

impl Exchange {
    /// Round trip minus the master's turnaround, in ns; `None` when the
    /// readings contradict each other (a clock ran backwards), which makes the
    /// exchange useless.
    pub fn rtt_ns(&self) -> Option<u64> {
        let local = self.t3.checked_sub(self.t0)?;
        let master = self.t2.checked_sub(self.t1)?;
        local.checked_sub(master)
    }

    /// Master minus local clock at the exchange's midpoint, in ns.
    pub fn offset_ns(&self) -> f64 {
        let master = self.t1 as i128 + self.t2 as i128;
        let local = self.t0 as i128 + self.t3 as i128;
        (master - local) as f64 / 2.0
    }

    /// The local clock at the exchange's midpoint (rounded down).
    pub fn local_mid(&self) -> u64 {
        self.t0 + (self.t3.saturating_sub(self.t0)) / 2
    }
}

/// When in the run a sync round was taken.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum SyncPhase {
    Start = 0,
    Periodic = 1,
    End = 2,
}

impl SyncPhase {
    pub fn from_u8(v: u8) -> Option<SyncPhase> {
        [SyncPhase::Start, SyncPhase::Periodic, SyncPhase::End]
            .get(v as usize)
            .copied()
    }

    pub fn name(self) -> &'static str {
        match self {
            SyncPhase::Start => "start",
            SyncPhase::Periodic => "periodic",
            SyncPhase::End => "end",
        }
    }

    pub fn from_name(s: &str) -> Option<SyncPhase> {
        [SyncPhase::Start, SyncPhase::Periodic, SyncPhase::End]
            .into_iter()
            .find(|p| p.name() == s)
    }
}

/// The outcome of one sync round, as `hrts sync` prints it.
#[derive(Clone, Debug, PartialEq)]
pub struct RoundResult {
    pub master: String,
    pub master_host: String,
    pub master_clock_id: u64,
    /// Every exchange that got a valid answer, in order.
    pub exchanges: Vec<Exchange>,
    /// Requests sent that got no (valid) answer.
    pub lost: u32,
    /// Master minus local clock by the fastest exchange, in ns.
    pub offset_ns: f64,
    /// Half that exchange's round trip: the true offset is within this of `offset_ns`.
    pub bound_ns: f64,
    /// Local clock at that exchange's midpoint.
    pub at_local_ns: u64,
}

impl RoundResult {
    pub(crate) fn from_exchanges(
        master: &str,
        master_host: String,
        master_clock_id: u64,
        exchanges: Vec<Exchange>,
        lost: u32,
    ) -> Option<RoundResult> {
        let best = exchanges
            .iter()
            .filter_map(|x| x.rtt_ns().map(|r| (r, x)))
            .min_by_key(|(r, _)| *r)?;
        Some(RoundResult {
            master: master.to_string(),
            master_host,
            master_clock_id,
            offset_ns: best.1.offset_ns(),
            bound_ns: best.0 as f64 / 2.0,
            at_local_ns: best.1.local_mid(),
            exchanges,
            lost,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_exchange_bounds_the_offset_by_half_its_round_trip() {
        // Master 1 s ahead; 30 us out, 10 us back, 2 us turnaround.
        let t0 = 1_000_000_000_000u64;
        let x = Exchange {
            t0,
            t1: t0 + 1_000_000_000 + 30_000,
            t2: t0 + 1_000_000_000 + 32_000,
            t3: t0 + 42_000,
            wall: 0,
        };
        assert_eq!(x.rtt_ns(), Some(40_000));
        // Asymmetric paths bias the estimate, but never by more than rtt/2.
        let err = x.offset_ns() - 1e9;
        assert_eq!(err, 10_000.0);
        assert!(err.abs() <= x.rtt_ns().unwrap() as f64 / 2.0);
        assert_eq!(x.local_mid(), t0 + 21_000);
        let backwards = Exchange { t3: t0 - 1, ..x };
        assert_eq!(backwards.rtt_ns(), None);
        let slow_master = Exchange {
            t2: x.t1 + 50_000,
            ..x
        };
        assert_eq!(slow_master.rtt_ns(), None);
        assert_eq!(SyncPhase::from_name("end"), Some(SyncPhase::End));
        assert_eq!(SyncPhase::from_u8(3), None);
    }
}
