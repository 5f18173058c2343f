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

use crate::clock::source::{self, SourceId};
use crate::error::{Error, ErrorKind, Result};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
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

/// What [`analyze`] concludes from a probe sequence.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Analysis {
    /// Distinct CPUs seen, ascending.
    pub cpus: Vec<u32>,
    /// Upper bound on |shift| between any two of `cpus`, in ticks. `Some(0)` with a
    /// single CPU; `None` if some pair could not be bounded (too few transitions).
    pub max_shift_ticks: Option<u64>,
    /// No counter value was smaller than its predecessor in sequence order.
    pub monotonic: bool,
    /// How many times the counter decreased in sequence order.
    pub violations: u64,
    /// Consecutive probes on different CPUs.
    pub cross_cpu_transitions: u64,
    /// Bounds for every pair of `cpus`.
    pub pair_bounds: Vec<PairBound>,
}

/// Bounds on the shift between two CPUs' counters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PairBound {
    /// The pair (a, b), a < b.
    pub cpus: (u32, u32),
    /// (lo, hi) with lo ≤ off_b − off_a ≤ hi, in ticks; `None` if not bounded.
    pub interval: Option<(i128, i128)>,
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

/// WTMLIB's pace check: whether the counters of all CPUs advance at one pace.
///
/// The probes are split into an early and a late third; each gives bounds on
/// every pair's shift ([`analyze`]). Counters that run at one pace keep one
/// shift, so each pair's early and late intervals overlap; disjoint intervals
/// prove the shift moved, by at least their gap over the ticks between the
/// windows. A CPU whose counter did not change between its first and last probe
/// is `Stuck`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pace {
    /// Consistent with one pace; a pace difference larger than `bound_ppb`
    /// would have been seen (0 with a single CPU).
    Same { bound_ppb: u64 },
    /// Two CPUs' counters drift apart by at least `ppb`.
    Differs { ppb: u64 },
    /// A counter did not change.
    Stuck,
    /// Too few hand-overs between CPUs to compare the windows.
    Unknown,
}

/// The pace check over a probe sequence (any order; sorted by `seq` here).
pub fn check_pace(probes: &[Probe]) -> Pace {
    let mut p = probes.to_vec();
    p.sort_by_key(|x| x.seq);
    let mut first_last: std::collections::BTreeMap<u32, (u64, u64, usize)> = Default::default();
    for x in &p {
        let e = first_last.entry(x.cpu).or_insert((x.counter, x.counter, 0));
        e.1 = x.counter;
        e.2 += 1;
    }
    if p.len() < 2 || first_last.values().any(|&(a, b, n)| n >= 2 && a == b) {
        return Pace::Stuck;
    }
    if first_last.len() == 1 {
        return Pace::Same { bound_ppb: 0 };
    }
    let third = p.len() / 3;
    if third < 2 {
        return Pace::Unknown;
    }
    let early = analyze(&p[..third]);
    let late = analyze(&p[p.len() - third..]);
    let centre = |w: &[Probe]| w.iter().map(|x| x.counter as i128).sum::<i128>() / w.len() as i128;
    let span = centre(&p[p.len() - third..]) - centre(&p[..third]);
    if span <= 0 {
        return Pace::Unknown;
    }
    let ppb = |ticks: i128, over: i128| {
        u64::try_from(ticks.max(0) * 1_000_000_000 / over.max(1)).unwrap_or(u64::MAX)
    };
    // A gap between the windows' intervals can have grown from the first probe
    // to the last: over the whole run, a lower bound on the pace difference.
    let whole = p[p.len() - 1].counter as i128 - p[0].counter as i128;
    let mut worst_gap = 0i128;
    let mut bound = 0i128;
    let mut compared = 0;
    for e in &early.pair_bounds {
        let Some(l) = late.pair_bounds.iter().find(|l| l.cpus == e.cpus) else {
            continue;
        };
        let (Some((elo, ehi)), Some((llo, lhi))) = (e.interval, l.interval) else {
            continue;
        };
        compared += 1;
        worst_gap = worst_gap.max(llo - ehi).max(elo - lhi);
        bound = bound.max((lhi - elo).abs()).max((ehi - llo).abs());
    }
    if compared == 0 {
        Pace::Unknown
    } else if worst_gap > 0 {
        Pace::Differs {
            ppb: ppb(worst_gap, whole).max(1),
        }
    } else {
        Pace::Same {
            bound_ppb: ppb(bound, span),
        }
    }
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
}

impl Default for ReliabilityConfig {
    fn default() -> Self {
        ReliabilityConfig {
            budget: Duration::from_millis(50),
            max_probes: 200_000,
            min_handovers: DEFAULT_MIN_HANDOVERS,
        }
    }
}

/// [`ReliabilityConfig::min_handovers`]'s default.
pub const DEFAULT_MIN_HANDOVERS: u64 = 16;

/// The fewest hand-overs over every ordered pair of distinct CPUs among
/// `probes` (sorted by `seq` here); `None` with fewer than two CPUs.
pub fn min_pair_handovers(probes: &[Probe]) -> Option<u64> {
    let mut p = probes.to_vec();
    p.sort_by_key(|x| x.seq);
    let mut cpus: Vec<u32> = p.iter().map(|x| x.cpu).collect();
    cpus.sort_unstable();
    cpus.dedup();
    let n = cpus.len();
    if n < 2 {
        return None;
    }
    let index = |cpu: u32| cpus.binary_search(&cpu).unwrap_or(0);
    let mut counts = vec![0u64; n * n];
    for w in p.windows(2) {
        if w[0].cpu != w[1].cpu {
            counts[index(w[0].cpu) * n + index(w[1].cpu)] += 1;
        }
    }
    (0..n)
        .flat_map(|a| (0..n).filter(move |&b| b != a).map(move |b| (a, b)))
        .map(|(a, b)| counts[a * n + b])
        .min()
}

/// Derives shift bounds and monotonicity from probes (any order; sorted by `seq`
/// here). Pure, so tests can feed probes with a known shift.
pub fn analyze(probes: &[Probe]) -> Analysis {
    let mut p = probes.to_vec();
    p.sort_by_key(|x| x.seq);
    let mut cpus: Vec<u32> = p.iter().map(|x| x.cpu).collect();
    cpus.sort_unstable();
    cpus.dedup();
    let n = cpus.len();
    let index = |cpu: u32| cpus.binary_search(&cpu).unwrap_or(0);

    // up[a][b]: min over a→b transitions of c_b − c_a, an upper bound on off_b − off_a.
    let mut up: Vec<Vec<Option<i128>>> = vec![vec![None; n]; n];
    let mut violations = 0u64;
    let mut transitions = 0u64;
    for w in p.windows(2) {
        let (x, y) = (w[0], w[1]);
        if y.counter < x.counter {
            violations += 1;
        }
        if x.cpu != y.cpu {
            transitions += 1;
            let (a, b) = (index(x.cpu), index(y.cpu));
            let d = y.counter as i128 - x.counter as i128;
            let cell = &mut up[a][b];
            *cell = Some(cell.map_or(d, |v| v.min(d)));
        }
    }

    // Interval (lo, hi) for off_b − off_a: hi = up[a][b], lo = −up[b][a].
    let mut iv: Vec<Vec<Option<(i128, i128)>>> = vec![vec![None; n]; n];
    for a in 0..n {
        iv[a][a] = Some((0, 0));
        for b in 0..n {
            if a != b {
                if let (Some(hi), Some(back)) = (up[a][b], up[b][a]) {
                    iv[a][b] = Some((-back, hi));
                }
            }
        }
    }
    // Close unobserved pairs through intermediate CPUs (Floyd–Warshall on intervals,
    // keeping the tightest of the candidate intervals).
    for k in 0..n {
        for a in 0..n {
            for b in 0..n {
                if let (Some((l1, h1)), Some((l2, h2))) = (iv[a][k], iv[k][b]) {
                    let cand = (l1 + l2, h1 + h2);
                    iv[a][b] = Some(match iv[a][b] {
                        None => cand,
                        Some((l, h)) => (l.max(cand.0), h.min(cand.1)),
                    });
                }
            }
        }
    }

    let mut pair_bounds = Vec::new();
    let mut max_shift: Option<u64> = Some(0);
    for a in 0..n {
        for b in a + 1..n {
            let bound = iv[a][b];
            pair_bounds.push(PairBound {
                cpus: (cpus[a], cpus[b]),
                interval: bound,
            });
            max_shift = match (max_shift, bound) {
                (Some(m), Some((lo, hi))) => {
                    let worst = lo.unsigned_abs().max(hi.unsigned_abs());
                    Some(m.max(u64::try_from(worst).unwrap_or(u64::MAX)))
                }
                _ => None,
            };
        }
    }
    Analysis {
        cpus,
        max_shift_ticks: max_shift,
        monotonic: violations == 0,
        violations,
        cross_cpu_transitions: transitions,
        pair_bounds,
    }
}

/// How long (spin iterations, ~1-2 µs) a COP thread that just recorded a probe
/// leaves the next sequence number to the other threads.
const HANDOVER_SPINS: u32 = 256;

fn ticks_to_ns_ceil(ticks: u64, hz: u64) -> Option<u64> {
    if hz == 0 {
        return None;
    }
    let ns = (ticks as u128 * 1_000_000_000).div_ceil(hz as u128);
    u64::try_from(ns).ok()
}

fn empty_set() -> libc::cpu_set_t {
    // SAFETY: cpu_set_t is plain data; all-zero is the valid empty set.
    unsafe { std::mem::zeroed() }
}

/// The CPUs in the calling thread's affinity mask, and the mask itself.
fn affinity() -> Result<(Vec<u32>, libc::cpu_set_t)> {
    let mut set = empty_set();
    // SAFETY: `set` is a valid, writable cpu_set_t of the size passed; pid 0 is the
    // calling thread.
    let rc =
        unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) };
    if rc != 0 {
        return Err(Error::os(
            "sched_getaffinity",
            "cannot tell which CPUs to evaluate",
        ));
    }
    let cpus = (0..libc::CPU_SETSIZE as usize)
        // SAFETY: c < CPU_SETSIZE, the set's capacity.
        .filter(|&c| unsafe { libc::CPU_ISSET(c, &set) })
        .map(|c| c as u32)
        .collect();
    Ok((cpus, set))
}

fn set_affinity(set: &libc::cpu_set_t) -> bool {
    // SAFETY: `set` is a valid cpu_set_t; pid 0 is the calling thread.
    unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), set) == 0 }
}

fn pin_to(cpu: u32) -> bool {
    if cpu as usize >= libc::CPU_SETSIZE as usize {
        return false;
    }
    let mut one = empty_set();
    // SAFETY: `cpu` was checked to be below CPU_SETSIZE, the set's capacity.
    unsafe { libc::CPU_SET(cpu as usize, &mut one) };
    set_affinity(&one)
}

fn current_cpu() -> Option<u32> {
    // SAFETY: sched_getcpu has no preconditions.
    let c = unsafe { libc::sched_getcpu() };
    u32::try_from(c).ok()
}

fn check_source(id: SourceId) -> Result<()> {
    if id.supported() {
        Ok(())
    } else {
        Err(Error::new(
            ErrorKind::Source,
            format!(
                "cannot evaluate {}: this architecture has no such counter",
                id.name()
            ),
        ))
    }
}

#[allow(clippy::too_many_arguments)]
fn report(
    method: Method,
    id: SourceId,
    hz: u64,
    probes: &[Probe],
    switches: Option<u64>,
    elapsed_ns: u64,
    mut note: String,
    min_handovers: u64,
) -> Report {
    let a = analyze(probes);
    let handovers = min_pair_handovers(probes);
    let significant = handovers.is_none_or(|h| h >= min_handovers);
    if !significant {
        note.push_str(&format!(
            "not significant: some CPU pair handed over only {} times, fewer than the {} asked \
             for; give the evaluation a longer budget or more probes; ",
            handovers.unwrap_or(0),
            min_handovers
        ));
    }
    if a.cpus.len() == 1 {
        note.push_str(
            "only one CPU took part: there is no cross-CPU shift to measure; monotonicity was checked on that CPU alone; ",
        );
    }
    if a.max_shift_ticks.is_none() {
        note.push_str(
            "some CPU pairs never handed over to each other, so their shift is unbounded; ",
        );
    }
    Report {
        method,
        source: id,
        max_shift_ns: a.max_shift_ticks.and_then(|t| ticks_to_ns_ceil(t, hz)),
        max_shift_ticks: a.max_shift_ticks,
        monotonic: a.monotonic,
        violations: a.violations,
        probes: probes.len() as u64,
        switches: switches.unwrap_or(a.cross_cpu_transitions),
        cpus: a.cpus,
        elapsed_ns,
        note: note.trim_end_matches("; ").to_string(),
        pace: check_pace(probes),
        min_pair_handovers: handovers,
        significant,
    }
}

/// CAS-ordered probes across every CPU in the caller's affinity mask. `hz` converts
/// the shift to ns. Bounded by `cfg.budget` plus thread start-up (≤ 1 s wait for
/// threads to pin themselves).
pub fn evaluate_cop(id: SourceId, hz: u64, cfg: &ReliabilityConfig) -> Result<Report> {
    check_source(id)?;
    let (cpus, _) = affinity()?;
    if cpus.is_empty() {
        return Err(Error::new(ErrorKind::Os, "the affinity mask is empty"));
    }
    let t0 = crate::os::monotonic_raw_ns();
    let seq = Arc::new(AtomicU64::new(0));
    let ready = Arc::new(AtomicUsize::new(0));
    let go = Arc::new(AtomicBool::new(false));
    let stop = Arc::new(AtomicBool::new(false));
    let max = cfg.max_probes.max(2);
    let mut handles = Vec::new();
    let mut note = String::new();
    for &cpu in &cpus {
        let (seq, ready, go, stop) = (seq.clone(), ready.clone(), go.clone(), stop.clone());
        let spawned = std::thread::Builder::new()
            .name(format!("hrts-cop-{cpu}"))
            .spawn(move || -> Option<Vec<Probe>> {
                let pinned = pin_to(cpu) && current_cpu() == Some(cpu);
                ready.fetch_add(1, Ordering::AcqRel);
                if !pinned {
                    return None;
                }
                let give_up = crate::os::monotonic_ns() + 1_000_000_000;
                while !go.load(Ordering::Acquire) {
                    if stop.load(Ordering::Acquire) || crate::os::monotonic_ns() > give_up {
                        return Some(Vec::new());
                    }
                    std::hint::spin_loop();
                }
                let mut local = Vec::with_capacity(4096);
                loop {
                    let s = seq.load(Ordering::Acquire);
                    if s >= max || stop.load(Ordering::Relaxed) {
                        break;
                    }
                    let c = source::read_fenced(id);
                    if seq
                        .compare_exchange(s, s + 1, Ordering::AcqRel, Ordering::Relaxed)
                        .is_ok()
                    {
                        local.push(Probe {
                            seq: s,
                            cpu,
                            counter: c,
                        });
                        // The winner holds the cache line and would usually win
                        // again; yielding the next number for a short while makes
                        // cross-CPU hand-overs (the only informative pairs) common.
                        // Ordering is unaffected: it comes from the CAS alone.
                        for _ in 0..HANDOVER_SPINS {
                            if seq.load(Ordering::Relaxed) != s + 1 {
                                break;
                            }
                            std::hint::spin_loop();
                        }
                    }
                }
                Some(local)
            });
        match spawned {
            Ok(h) => handles.push((cpu, h)),
            Err(e) => note.push_str(&format!("CPU {cpu} skipped: thread not started ({e}); ")),
        }
    }
    // Wait (bounded) for every thread to pin itself, then start them together.
    let wait_until = crate::os::monotonic_ns() + 1_000_000_000;
    while ready.load(Ordering::Acquire) < handles.len() && crate::os::monotonic_ns() < wait_until {
        std::thread::sleep(Duration::from_micros(100));
    }
    go.store(true, Ordering::Release);
    let start = crate::os::monotonic_ns();
    let budget = u64::try_from(cfg.budget.as_nanos()).unwrap_or(u64::MAX);
    while crate::os::monotonic_ns().saturating_sub(start) < budget
        && seq.load(Ordering::Relaxed) < max
    {
        std::thread::sleep(Duration::from_micros(500).min(cfg.budget));
    }
    stop.store(true, Ordering::Release);
    let mut probes = Vec::new();
    for (cpu, h) in handles {
        match h.join() {
            Ok(Some(mut v)) => probes.append(&mut v),
            Ok(None) => note.push_str(&format!(
                "CPU {cpu} skipped: could not pin a thread to it; "
            )),
            Err(_) => note.push_str(&format!("CPU {cpu} skipped: probe thread failed; ")),
        }
    }
    // A failed thread may have won CASes it did not report only if it panicked;
    // the sequence then has gaps, which would fabricate adjacency. Keep it honest.
    probes.sort_by_key(|p| p.seq);
    if probes.iter().enumerate().any(|(i, p)| p.seq != i as u64) {
        return Err(Error::new(
            ErrorKind::Source,
            "reliability probes have gaps in their sequence (a probe thread failed); evaluation is void",
        ));
    }
    if probes.is_empty() {
        return Err(Error::new(
            ErrorKind::Source,
            format!(
                "no reliability probes were collected; {}",
                note.trim_end_matches("; ")
            ),
        ));
    }
    let elapsed = crate::os::monotonic_raw_ns().saturating_sub(t0);
    Ok(report(
        Method::CasOrderedProbes,
        id,
        hz,
        &probes,
        None,
        elapsed,
        note,
        cfg.min_handovers,
    ))
}

/// One thread visits every CPU of the caller's affinity mask in turn (and returns to
/// the first), reading the counter before and after each move, for as many rounds
/// as `cfg.budget` allows (at least one). The thread's original mask is restored.
pub fn evaluate_cpu_switching(id: SourceId, hz: u64, cfg: &ReliabilityConfig) -> Result<Report> {
    check_source(id)?;
    let (cpus, original) = affinity()?;
    if cpus.is_empty() {
        return Err(Error::new(ErrorKind::Os, "the affinity mask is empty"));
    }
    let t0 = crate::os::monotonic_raw_ns();
    let budget = u64::try_from(cfg.budget.as_nanos()).unwrap_or(u64::MAX);
    let mut probes: Vec<Probe> = Vec::new();
    let mut switches = 0u64;
    let mut failed: Vec<u32> = Vec::new();
    let mut seq = 0u64;
    let mut record = |probes: &mut Vec<Probe>, cpu: u32| {
        let c = source::read_fenced(id);
        probes.push(Probe {
            seq,
            cpu,
            counter: c,
        });
        seq += 1;
    };
    // The CPU the thread is pinned to; until the first move it may float, and a
    // read then could not be attributed to a CPU.
    let mut pinned: Option<u32> = None;
    'rounds: loop {
        // Visit every CPU and come back to the first, per the WTMLIB argument that the
        // first and last reads of a tour must be on the same CPU.
        let tour = cpus.iter().chain(cpus.first());
        for &cpu in tour {
            if failed.contains(&cpu) {
                continue;
            }
            if pinned == Some(cpu) {
                // Already here (a one-CPU mask, or the tour's return): just read.
                record(&mut probes, cpu);
                continue;
            }
            if let Some(here) = pinned {
                record(&mut probes, here);
            }
            if !pin_to(cpu) || current_cpu() != Some(cpu) {
                failed.push(cpu);
                pinned = None;
                continue;
            }
            if pinned.is_some() {
                switches += 1;
            }
            pinned = Some(cpu);
            record(&mut probes, cpu);
            if probes.len() as u64 >= cfg.max_probes {
                break 'rounds;
            }
        }
        if crate::os::monotonic_raw_ns().saturating_sub(t0) >= budget {
            break;
        }
    }
    let restored = set_affinity(&original);
    let mut note = String::new();
    if !failed.is_empty() {
        note.push_str(&format!("could not move to CPUs {failed:?}; "));
    }
    if !restored {
        note.push_str("the thread's original affinity mask could not be restored; ");
    }
    let elapsed = crate::os::monotonic_raw_ns().saturating_sub(t0);
    Ok(report(
        Method::CpuSwitching,
        id,
        hz,
        &probes,
        Some(switches),
        elapsed,
        note,
        cfg.min_handovers,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Probes from CPUs whose counters are offset by `offsets[cpu]`, visited in the
    /// given CPU order, `gap` true ticks apart.
    fn synthetic(order: &[u32], offsets: &[i64], gap: u64) -> Vec<Probe> {
        let mut t = 1_000_000_000u64;
        order
            .iter()
            .enumerate()
            .map(|(i, &cpu)| {
                t += gap;
                Probe {
                    seq: i as u64,
                    cpu,
                    counter: (t as i64 + offsets[cpu as usize]) as u64,
                }
            })
            .collect()
    }

    #[test]
    fn a_known_shift_lies_within_the_bounds() {
        let offsets = [0i64, 250, -40];
        let order: Vec<u32> = [0, 1, 0, 2, 1, 2, 0, 1, 1, 2, 0].repeat(20);
        let a = analyze(&synthetic(&order, &offsets, 100));
        assert_eq!(a.cpus, vec![0, 1, 2]);
        for pb in &a.pair_bounds {
            let (x, y) = pb.cpus;
            let truth = (offsets[y as usize] - offsets[x as usize]) as i128;
            let (lo, hi) = pb.interval.unwrap();
            assert!(
                lo <= truth && truth <= hi,
                "({x},{y}): {lo} <= {truth} <= {hi}"
            );
            // Tight to within the hand-over gap each way.
            assert!(hi - lo <= 200, "({x},{y}): {lo}..{hi}");
        }
        let max = a.max_shift_ticks.unwrap();
        assert!((290..=290 + 100).contains(&max), "{max}");
        // CPU 1 is 250 ticks ahead with 100-tick gaps: 1→0 and 1→2 go backwards.
        assert!(!a.monotonic);
        assert!(a.violations > 0);
    }

    #[test]
    fn the_pace_check_finds_counters_running_at_two_paces() {
        // CPU 1's counter runs 100 ppm fast: over 4·10⁷ ticks its shift moves by
        // 4 000 ticks, far more than the 100-tick hand-over gap can hide.
        let order: Vec<u32> = [0, 1, 1, 0].repeat(100_000);
        let mut p = synthetic(&order, &[0, 0], 100);
        for x in p.iter_mut().filter(|x| x.cpu == 1) {
            x.counter += (x.counter - 1_000_000_000) / 10_000;
        }
        match check_pace(&p) {
            Pace::Differs { ppb } => assert!((30_000..=200_000).contains(&ppb), "{ppb}"),
            other => panic!("{other:?}"),
        }
        // The same probes at one pace pass, with a bound far below 100 ppm.
        let same = synthetic(&order, &[0, 250], 100);
        match check_pace(&same) {
            Pace::Same { bound_ppb } => assert!(bound_ppb < 10_000, "{bound_ppb}"),
            other => panic!("{other:?}"),
        }
        // A counter that never changes is stuck.
        let mut stuck = synthetic(&order[..400], &[0, 0], 100);
        for x in stuck.iter_mut().filter(|x| x.cpu == 1) {
            x.counter = 5;
        }
        assert_eq!(check_pace(&stuck), Pace::Stuck);
        assert_eq!(
            check_pace(&synthetic(&[2; 10], &[0, 0, 0], 5)),
            Pace::Same { bound_ppb: 0 }
        );
    }

    #[test]
    fn hand_overs_are_counted_per_ordered_pair() {
        // 0→1 three times, 1→0 twice, 1→2 once, 2→0 once; 0→2 and 2→1 never.
        let order = [0u32, 1, 0, 1, 0, 1, 2, 0, 1];
        let p = synthetic(&order, &[0, 0, 0], 10);
        assert_eq!(min_pair_handovers(&p), Some(0));
        let two = synthetic(&[0, 1, 0, 1, 1, 0, 1], &[0, 0], 10);
        assert_eq!(
            min_pair_handovers(&two),
            Some(2),
            "0→1 three times, 1→0 twice"
        );
        assert_eq!(min_pair_handovers(&synthetic(&[4; 5], &[0; 5], 10)), None);
        // The report's verdict follows the setting.
        let r = |min| {
            report(
                Method::CasOrderedProbes,
                SourceId::MonotonicRaw,
                1_000_000_000,
                &two,
                None,
                1,
                String::new(),
                min,
            )
        };
        assert!(r(2).significant);
        let poor = r(3);
        assert!(!poor.significant);
        assert_eq!(poor.min_pair_handovers, Some(2));
        assert!(poor.note.contains("not significant"), "{}", poor.note);
        let single = report(
            Method::CpuSwitching,
            SourceId::MonotonicRaw,
            1_000_000_000,
            &synthetic(&[4; 5], &[0; 5], 10),
            Some(0),
            1,
            String::new(),
            1000,
        );
        assert!(single.significant);
    }

    #[test]
    fn synchronised_cpus_are_monotonic_with_a_bound_of_the_gap() {
        let order: Vec<u32> = [0, 1, 0, 1, 1, 0].repeat(10);
        let a = analyze(&synthetic(&order, &[0, 0], 37));
        assert!(a.monotonic);
        assert_eq!(a.violations, 0);
        assert_eq!(a.max_shift_ticks, Some(37));
    }

    #[test]
    fn pairs_are_bounded_through_a_third_cpu() {
        // 0 and 2 never hand over to each other directly.
        let order: Vec<u32> = [0, 1, 2, 1, 0, 1].repeat(5);
        let offsets = [0i64, 30, 1000];
        let a = analyze(&synthetic(&order, &offsets, 50));
        let b02 = a
            .pair_bounds
            .iter()
            .find(|p| p.cpus == (0, 2))
            .unwrap()
            .interval
            .unwrap();
        assert!(b02.0 <= 1000 && 1000 <= b02.1, "{b02:?}");
        assert!(a.max_shift_ticks.unwrap() >= 1000);
    }

    #[test]
    fn one_direction_only_leaves_the_shift_unbounded() {
        // 0→1 seen, 1→0 never: the shift could be anything below the bound.
        let p = [
            Probe {
                seq: 0,
                cpu: 0,
                counter: 10,
            },
            Probe {
                seq: 1,
                cpu: 1,
                counter: 20,
            },
        ];
        let a = analyze(&p);
        assert_eq!(a.max_shift_ticks, None);
    }

    #[test]
    fn a_single_cpu_has_no_shift_but_is_checked_for_monotonicity() {
        let order = vec![3u32; 10];
        let a = analyze(&synthetic(&order, &[0, 0, 0, 0], 5));
        assert_eq!(
            (a.cpus.clone(), a.max_shift_ticks, a.monotonic),
            (vec![3], Some(0), true)
        );
        let mut p = synthetic(&order, &[0, 0, 0, 0], 5);
        p[4].counter = 0;
        let a = analyze(&p);
        assert!(!a.monotonic);
        assert_eq!(a.violations, 1);
    }

    #[test]
    fn cop_on_this_machine() {
        let id = SourceId::native().unwrap_or(SourceId::MonotonicRaw);
        let (mask, _) = affinity().unwrap();
        let cfg = ReliabilityConfig {
            budget: Duration::from_millis(30),
            ..ReliabilityConfig::default()
        };
        let r = evaluate_cop(id, 1_000_000_000, &cfg).unwrap();
        assert_eq!(r.method, Method::CasOrderedProbes);
        assert!(r.probes >= 2, "{r:?}");
        assert!(r.cpus.iter().all(|c| mask.contains(c)), "{r:?} vs {mask:?}");
        // Real, synchronised counters: monotonic. (A VM with skewed TSCs would fail
        // here, and rightly: that is what the evaluation exists to catch.)
        // Except under qemu-ppc64le, where mftb is emulated by an unfenced host
        // rdtsc that the host CPU may execute ahead of the emulated CAS: the probes
        // then see reordering the hardware would not. qemu-user passes the host's
        // /proc/cpuinfo through, which has no `timebase` line, unlike every real
        // ppc64 Linux.
        let emulated_ppc =
            cfg!(target_arch = "powerpc64") && source::nominal_frequency(id).is_none();
        if !emulated_ppc {
            assert!(r.monotonic, "{r:?}");
        }
        if r.cpus.len() == 1 {
            assert_eq!(r.max_shift_ticks, Some(0));
            assert!(r.note.contains("only one CPU"), "{r:?}");
        }
        assert!(r.elapsed_ns < 2_000_000_000, "{r:?}");
        // This machine's counter runs at one pace on every CPU.
        if !emulated_ppc {
            assert!(
                matches!(r.pace, Pace::Same { .. } | Pace::Unknown),
                "{:?}",
                r.pace
            );
        }
    }

    #[test]
    fn cpu_switching_on_this_machine_restores_the_mask() {
        let id = SourceId::native().unwrap_or(SourceId::MonotonicRaw);
        let (before, _) = affinity().unwrap();
        let cfg = ReliabilityConfig {
            budget: Duration::from_millis(10),
            ..ReliabilityConfig::default()
        };
        let r = evaluate_cpu_switching(id, 1_000_000_000, &cfg).unwrap();
        let (after, _) = affinity().unwrap();
        assert_eq!(before, after);
        assert_eq!(r.method, Method::CpuSwitching);
        if before.len() > 1 {
            assert!(r.switches >= before.len() as u64, "{r:?}");
        }
        assert!(r.monotonic, "{r:?}");
        assert!(r.cpus.iter().all(|c| before.contains(c)), "{r:?}");
        if before.len() > 1 {
            assert!(r.max_shift_ticks.is_some(), "{r:?}");
            assert_eq!(r.cpus.len(), before.len(), "{r:?}");
        }
    }

    #[test]
    fn a_single_cpu_mask_is_reported_honestly() {
        // Run in a fresh thread so narrowing its mask cannot affect other tests.
        std::thread::spawn(|| {
            let cpu = current_cpu().unwrap();
            assert!(pin_to(cpu));
            let id = SourceId::native().unwrap_or(SourceId::MonotonicRaw);
            // A budget that collects probes even under qemu on a loaded machine
            // (5 ms collected none there): what is checked is the report, not speed.
            let cfg = ReliabilityConfig {
                budget: Duration::from_millis(200),
                ..ReliabilityConfig::default()
            };
            for r in [
                evaluate_cop(id, 1_000_000_000, &cfg).unwrap(),
                evaluate_cpu_switching(id, 1_000_000_000, &cfg).unwrap(),
            ] {
                assert_eq!(r.cpus, vec![cpu], "{r:?}");
                assert_eq!(r.max_shift_ticks, Some(0));
                assert!(r.note.contains("only one CPU"), "{r:?}");
                assert!(r.monotonic);
            }
        })
        .join()
        .unwrap();
    }
}
