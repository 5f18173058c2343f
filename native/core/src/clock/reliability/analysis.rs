//! What a probe sequence proves, with no further I/O: the shift bounds, the
//! monotonicity and the pace of the counters, and the report made of them (see
//! the parent module).

use super::{Method, Probe, Report};
use crate::clock::source::SourceId;

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

/// The report of an evaluation: what [`analyze`], [`min_pair_handovers`] and
/// [`check_pace`] find in `probes`, with a note of what the numbers alone do
/// not say.
#[allow(clippy::too_many_arguments)]
pub(super) fn report(
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

fn ticks_to_ns_ceil(ticks: u64, hz: u64) -> Option<u64> {
    if hz == 0 {
        return None;
    }
    let ns = (ticks as u128 * 1_000_000_000).div_ceil(hz as u128);
    u64::try_from(ns).ok()
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
}
