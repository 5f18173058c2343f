//! Runtime reliability evaluation of a counter across CPUs (the WTMLIB methods).
//!
//! Both methods produce a sequence of [`Probe`]s, each a counter value read on a
//! known CPU, in an order that is also their real-time order. From that sequence
//! [`analyze`] derives, with no further I/O:
//!
//! - **shift bounds.** If probe k was read on CPU a and probe k+1 on CPU b, then
//!   `c[k+1] − c[k] = elapsed + (off_b − off_a)` with `elapsed ≥ 0`, so
//!   `off_b − off_a ≤ c[k+1] − c[k]`. The minimum over all a→b transitions is an
//!   upper bound on b's shift relative to a, and the minimum over b→a transitions
//!   bounds it from below. Pairs never observed directly are bounded through a third
//!   CPU (interval sum). The reported maximum shift is the largest |shift| any pair's
//!   interval allows: the true shifts are guaranteed to be within it, and it is as
//!   tight as the hand-over latency between probes.
//! - **monotonicity.** Counter values in sequence order must never decrease.
//!
//! Method 1, CAS-ordered probes ([`evaluate_cop`]): one thread pinned to each CPU in
//! the caller's affinity mask; each reads the counter (fenced) and then tries to
//! advance a shared sequence number with compare-and-swap; only a successful CAS
//! records the probe, under the sequence number it replaced. A probe's read happens
//! after the load that saw its number and before the CAS that retired it, so
//! sequence order is real-time order.
//!
//! Method 2, CPU switching ([`evaluate_cpu_switching`]): one thread moves itself
//! from CPU to CPU with `sched_setaffinity`, reading the counter just before and just
//! after every move, and ends on the CPU it started on. Deterministic, but a move
//! takes microseconds, so its bounds are much looser.
//!
//! Only CPUs in the calling thread's affinity mask are used (as WTMLIB does): those
//! are the CPUs the caller's stamps can come from.
//!
//! The code follows that split: `analysis` (what a probe sequence proves, pure
//! arithmetic that tests feed with known shifts) and `probing` (the two methods,
//! which pin threads to CPUs and take the probes); here, what both share.

mod analysis;
mod probing;

pub use analysis::{analyze, check_pace, min_pair_handovers, Analysis, Pace, PairBound};
pub use probing::{evaluate_cop, evaluate_cpu_switching};

use crate::clock::source::SourceId;
use std::time::Duration;

/// One counter read on a known CPU; `seq` orders probes in real time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Probe {
    pub seq: u64,
    pub cpu: u32,
    pub counter: u64,
}

/// Which data-collection method produced a report.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
    /// Concurrent threads, one per CPU, ordered by compare-and-swap.
    CasOrderedProbes,
    /// One thread migrating itself across CPUs.
    CpuSwitching,
}

/// A reliability evaluation's result.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Report {
    pub method: Method,
    pub source: SourceId,
    /// CPUs that contributed probes (all of the affinity mask unless noted).
    pub cpus: Vec<u32>,
    /// Upper bound on the shift between any two CPUs' counters, in ticks.
    pub max_shift_ticks: Option<u64>,
    /// The same in nanoseconds at the frequency passed in (rounded up).
    pub max_shift_ns: Option<u64>,
    pub monotonic: bool,
    pub violations: u64,
    /// Probes recorded (COP) or counter reads (CPU switching).
    pub probes: u64,
    /// Cross-CPU transitions in the sequence (COP) or CPU switches made.
    pub switches: u64,
    pub elapsed_ns: u64,
    /// Anything the numbers alone do not say (a single CPU, CPUs that failed).
    pub note: String,
    /// Whether every CPU's counter ran at the same pace, and changed at all.
    pub pace: Pace,
    /// The fewest hand-overs seen from one CPU to another, over every ordered
    /// pair of the CPUs that took part; `None` with a single CPU.
    pub min_pair_handovers: Option<u64>,
    /// Whether the probe sequence meets the significance asked for
    /// ([`ReliabilityConfig::min_handovers`]); always true with a single CPU.
    pub significant: bool,
}

/// How an evaluation runs.
#[derive(Clone, Debug)]
pub struct ReliabilityConfig {
    /// Time spent probing (thread start-up excluded for COP). Default 50 ms.
    pub budget: Duration,
    /// Stop after this many probes even within the budget. Default 200 000.
    pub max_probes: u64,
    /// The statistical significance asked for, as WTMLIB lets its users set
    /// it for CAS-ordered probes: the fewest hand-overs every ordered pair of
    /// CPUs (a then b, directly in sequence order) must show. A pair's shift
    /// bound comes from its fastest hand-over in each direction, so a bound
    /// drawn from few hand-overs may be much looser than the true shift: a
    /// sequence with fewer is reported, with `significant` false and a note.
    /// Default 16; 0 or 1 accepts any sequence that bounds every pair.
    pub min_handovers: u64,
    /// CAS-ordered probes: how long the probe threads may take to pin
    /// themselves, and then to send the first probe (each at most; the budget
    /// starts with that probe). Threads pinned to CPUs that others keep busy
    /// may run only that late. Default 1 s.
    pub startup: Duration,
}

impl Default for ReliabilityConfig {
    fn default() -> Self {
        ReliabilityConfig {
            budget: Duration::from_millis(50),
            max_probes: 200_000,
            min_handovers: DEFAULT_MIN_HANDOVERS,
            startup: Duration::from_secs(1),
        }
    }
}

/// [`ReliabilityConfig::min_handovers`]'s default.
pub const DEFAULT_MIN_HANDOVERS: u64 = 16;
