//! Checks of a merged timeline: causality of messages (for hrts's merge and
//! for the naive one that takes local stamps as global), uniqueness and order.

use super::Merged;
use crate::format::{EventKind, TraceFile};
use std::collections::HashMap;

/// Send/receive pairs and how many of them arrive before they leave.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Causality {
    /// Receives matched to a send by id.
    pub messages: u64,
    /// Matched receives not later than their send.
    pub violations: u64,
    pub unmatched_sends: u64,
    pub unmatched_receives: u64,
    /// Sends whose id an earlier send already used (the later ones are ignored).
    pub duplicate_sends: u64,
    /// Smallest receive − send over the matched messages, ns (negative if violated).
    pub min_latency_ns: Option<f64>,
}

/// Tallies (kind, id, order key, ns) items: a receive violates causality
/// unless its key is greater than its send's.
fn tally(items: impl Iterator<Item = (EventKind, u64, u128, f64)>) -> Causality {
    let mut c = Causality::default();
    let mut sends: HashMap<u64, (u128, f64, bool)> = HashMap::new();
    let mut receives: Vec<(u64, u128, f64)> = Vec::new();
    for (kind, id, key, ns) in items {
        match kind {
            EventKind::Send => match sends.entry(id) {
                std::collections::hash_map::Entry::Occupied(_) => c.duplicate_sends += 1,
                std::collections::hash_map::Entry::Vacant(v) => {
                    v.insert((key, ns, false));
                }
            },
            EventKind::Receive => receives.push((id, key, ns)),
            _ => {}
        }
    }
    for (id, key, ns) in receives {
        match sends.get_mut(&id) {
            None => c.unmatched_receives += 1,
            Some((skey, sns, matched)) => {
                *matched = true;
                c.messages += 1;
                if key <= *skey {
                    c.violations += 1;
                }
                let lat = ns - *sns;
                c.min_latency_ns = Some(c.min_latency_ns.map_or(lat, |m: f64| m.min(lat)));
            }
        }
    }
    c.unmatched_sends = sends.values().filter(|s| !s.2).count() as u64;
    c
}

/// Causality in the merged trace (by global stamp).
pub fn causality(m: &Merged) -> Causality {
    let k = m.ticks_per_ns as f64;
    let bits = m.header.event_bits;
    tally(m.events.iter().map(|g| {
        let e = &g.event;
        (e.kind, e.id, e.stamp as u128, (e.stamp >> bits) as f64 / k)
    }))
}

/// Causality if local stamps were taken as global: each event at its local
/// epoch ns (what a merge without clock sync would show).
pub fn naive_causality(files: &[TraceFile]) -> Causality {
    tally(files.iter().flat_map(|f| {
        let h = &f.header;
        f.events.iter().map(move |e| {
            let ns = h.epoch_ns(e.stamp);
            (e.kind, e.id, ns as u128, ns as f64)
        })
    }))
}

/// (stamps shared by two events, events out of their process's local order)
/// in a merged trace: both 0 by construction, checked independently.
pub fn check_order(m: &Merged) -> (u64, u64) {
    let shared = m
        .events
        .windows(2)
        .filter(|w| w[0].event.stamp >= w[1].event.stamp)
        .count() as u64;
    let mut last_local: Vec<Option<u64>> = vec![None; m.procs.len()];
    let mut out_of_order = 0;
    for g in &m.events {
        let slot = &mut last_local[g.proc_index as usize];
        if slot.is_some_and(|l| l >= g.local_stamp) {
            out_of_order += 1;
        }
        *slot = Some(g.local_stamp);
    }
    (shared, out_of_order)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn receives_must_come_strictly_after_their_sends() {
        use EventKind::*;
        let c = tally(
            [
                (Send, 1, 10, 10.0),
                (Receive, 1, 12, 12.0),
                (Send, 2, 20, 20.0),
                (Receive, 2, 20, 20.0), // a tie is a violation: order unknown
                (Receive, 3, 5, 5.0),   // before its send
                (Send, 3, 7, 7.0),
                (Send, 4, 1, 1.0), // never received
                (Receive, 5, 1, 1.0),
                (Send, 1, 30, 30.0), // id reused
                (Instant, 0, 0, 0.0),
            ]
            .into_iter(),
        );
        assert_eq!(c.messages, 3);
        assert_eq!(c.violations, 2);
        assert_eq!(c.unmatched_sends, 1);
        assert_eq!(c.unmatched_receives, 1);
        assert_eq!(c.duplicate_sends, 1);
        assert_eq!(c.min_latency_ns, Some(-2.0));
    }
}
