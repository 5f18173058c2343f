//! Which events of different hosts cannot be ordered: those whose intervals
//! overlap, so that either may have come first in true time.

/// Examples of unorderable pairs a merge keeps (the first ones, in merged order).
pub const EXAMPLES: usize = 10;

/// An event's host and the interval that holds its true time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Interval {
    pub host: usize,
    pub earliest: u64,
    pub latest: u64,
}

/// One pair: indices into the merged events, with their intervals.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pair {
    pub first: usize,
    pub second: usize,
    pub first_interval: Interval,
    pub second_interval: Interval,
}

/// The pairs of events of different hosts whose intervals overlap.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Unorderable {
    pub pairs: u64,
    /// The first [`EXAMPLES`] pairs by (first, second) merged index.
    pub examples: Vec<Pair>,
}

/// Counts the unorderable pairs among `events` (in merged order) and keeps
/// the first `limit`. Every interval of one host must have the same widths
/// around its stamp (one bound per host), so that sorted by earliest they are
/// sorted by latest too: that is what lets two pointers count the pairs in
/// linear time, however many there are.
pub fn unorderable(events: &[Interval], limit: usize) -> Unorderable {
    let hosts = by_host(events);
    let mut pairs = 0;
    for (g, a) in hosts.iter().enumerate() {
        for b in &hosts[g + 1..] {
            pairs += count_overlaps(a, b, events);
        }
    }
    Unorderable {
        pairs,
        examples: first_pairs(&hosts, events, limit),
    }
}

/// Each host's event indices, sorted by earliest (then index).
fn by_host(events: &[Interval]) -> Vec<Vec<usize>> {
    let n = events.iter().map(|e| e.host + 1).max().unwrap_or(0);
    let mut hosts = vec![Vec::new(); n];
    for (i, e) in events.iter().enumerate() {
        hosts[e.host].push(i);
    }
    for h in &mut hosts {
        h.sort_by_key(|&i| (events[i].earliest, i));
    }
    hosts
}

/// Pairs (x of `a`, y of `b`) whose intervals overlap. For each x, the y
/// that overlap it run from the first whose latest reaches x's earliest to
/// the last whose earliest is within x's latest; both ends only move on.
fn count_overlaps(a: &[usize], b: &[usize], events: &[Interval]) -> u64 {
    let (mut lo, mut hi, mut n) = (0, 0, 0u64);
    for &x in a {
        let x = events[x];
        while lo < b.len() && events[b[lo]].latest < x.earliest {
            lo += 1;
        }
        while hi < b.len() && events[b[hi]].earliest <= x.latest {
            hi += 1;
        }
        n += hi.saturating_sub(lo) as u64;
    }
    n
}

/// The first `limit` pairs by (first, second) index. A pair (j, i) with
/// j < i was taken when j came up, so skipping such j below costs at most
/// `limit` steps in all.
fn first_pairs(hosts: &[Vec<usize>], events: &[Interval], limit: usize) -> Vec<Pair> {
    let mut out = Vec::new();
    for (i, x) in events.iter().enumerate() {
        if out.len() >= limit {
            break;
        }
        let want = limit - out.len();
        let mut later = Vec::new();
        let others = hosts
            .iter()
            .enumerate()
            .filter(|(h, _)| *h != x.host)
            .map(|(_, list)| list);
        for list in others {
            let from = list.partition_point(|&j| events[j].latest < x.earliest);
            let overlapping = list[from..]
                .iter()
                .take_while(|&&j| events[j].earliest <= x.latest)
                .filter(|&&j| j > i)
                .take(want);
            later.extend(overlapping);
        }
        later.sort_unstable();
        out.extend(later.into_iter().take(want).map(|j| Pair {
            first: i,
            second: j,
            first_interval: *x,
            second_interval: events[j],
        }));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn iv(host: usize, t: u64, w: u64) -> Interval {
        Interval {
            host,
            earliest: t - w,
            latest: t + w,
        }
    }

    /// Every pair, the slow way.
    fn brute(events: &[Interval]) -> Vec<(usize, usize)> {
        let mut out = Vec::new();
        for i in 0..events.len() {
            for j in i + 1..events.len() {
                let (a, b) = (events[i], events[j]);
                if a.host != b.host && a.earliest <= b.latest && b.earliest <= a.latest {
                    out.push((i, j));
                }
            }
        }
        out
    }

    #[test]
    fn overlaps_of_different_hosts_are_counted_and_the_first_kept() {
        // Host 0 ± 10, host 1 ± 3, host 2 ± 0: touching ends count (neither
        // is certainly first), one ns apart does not.
        let events = [
            iv(0, 100, 10),
            iv(1, 105, 3),
            iv(0, 106, 10),
            iv(2, 113, 0),
            iv(1, 130, 3),
            iv(2, 117, 0),
            iv(0, 200, 10),
            iv(2, 210, 0),
        ];
        let u = unorderable(&events, 10);
        let pairs: Vec<(usize, usize)> = u.examples.iter().map(|p| (p.first, p.second)).collect();
        assert_eq!(pairs, brute(&events));
        // 2 and 5 are one ns apart, 6 and 7 touch.
        assert_eq!(pairs, [(0, 1), (1, 2), (2, 3), (6, 7)]);
        assert_eq!(u.pairs, 4);
        assert_eq!(u.examples[3].first_interval, events[6]);
        assert_eq!(u.examples[3].second_interval, events[7]);
        // Only the first ones are kept; all are counted.
        let u = unorderable(&events, 2);
        assert_eq!(u.pairs, 4);
        assert_eq!(u.examples.len(), 2);
        assert_eq!((u.examples[1].first, u.examples[1].second), (1, 2));
    }

    #[test]
    fn the_count_matches_every_pair_on_dense_runs() {
        // Pseudo-random stamps of three hosts with different bounds.
        let mut x = 12345u64;
        let mut events: Vec<Interval> = (0..600)
            .map(|_| {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let host = (x >> 33) as usize % 3;
                iv(host, 1_000 + (x >> 40) % 5_000, [7, 30, 0][host])
            })
            .collect();
        events.sort_by_key(|e| e.earliest + (e.latest - e.earliest) / 2);
        let all = brute(&events);
        let u = unorderable(&events, 10);
        assert_eq!(u.pairs, all.len() as u64);
        let first: Vec<(usize, usize)> = u.examples.iter().map(|p| (p.first, p.second)).collect();
        assert_eq!(first, all[..10]);
        // One host alone has nothing to order against.
        let alone: Vec<Interval> = events.iter().filter(|e| e.host == 1).copied().collect();
        assert_eq!(unorderable(&alone, 10), Unorderable::default());
    }
}
