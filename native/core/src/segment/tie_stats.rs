//! The tie statistics in the header (ties, moves, steps, the last and the
//! largest step, repairs, the last tie's offset) and, from layout minor 2,
//! their check word. Only the writer role's holder writes them, while it
//! holds the role's lock (so writers never interleave), and it writes the
//! check word last; a reader that finds the words and their check disagree
//! twice in a row reports them as damaged, never as numbers. The next holder
//! that finds them damaged starts them again from zero, counting one repair.

use crate::segment::layout::*;
use crate::segment::SharedBase;
use std::sync::atomic::Ordering::{Acquire, Relaxed, Release};

/// The statistics as one value.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct TieStats {
    pub ties: u64,
    pub moves: u64,
    pub steps: u64,
    pub last_step_ns: i64,
    pub largest_step_ns: i64,
    pub repairs: u64,
    pub last_offset_ns: i64,
}

const STATS_SALT: u64 = u64::from_le_bytes(*b"hrtsSTAT");

impl TieStats {
    fn load(h: &Header) -> TieStats {
        TieStats {
            ties: h.ties.load(Relaxed),
            moves: h.moves.load(Relaxed),
            steps: h.steps.load(Relaxed),
            last_step_ns: h.last_step_ns.load(Relaxed) as i64,
            largest_step_ns: h.largest_step_ns.load(Relaxed) as i64,
            repairs: h.repairs.load(Relaxed),
            last_offset_ns: h.last_offset_ns.load(Relaxed) as i64,
        }
    }

    /// The check word of these values.
    pub(crate) fn check(&self) -> u64 {
        checksum(
            STATS_SALT,
            [
                self.ties,
                self.moves,
                self.steps,
                self.last_step_ns as u64,
                self.largest_step_ns as u64,
                self.repairs,
                self.last_offset_ns as u64,
            ],
        )
    }

    fn store(&self, h: &Header, area: &StatsArea) {
        h.ties.store(self.ties, Relaxed);
        h.moves.store(self.moves, Relaxed);
        h.steps.store(self.steps, Relaxed);
        h.last_step_ns.store(self.last_step_ns as u64, Relaxed);
        h.largest_step_ns
            .store(self.largest_step_ns as u64, Relaxed);
        h.repairs.store(self.repairs, Relaxed);
        h.last_offset_ns.store(self.last_offset_ns as u64, Relaxed);
        area.stats_check.store(self.check(), Release);
    }
}

/// A new page's statistics: all zero, with their check word.
pub(crate) fn initialise(h: &Header, area: &StatsArea) {
    TieStats::default().store(h, area);
}

impl SharedBase {
    fn stats_area(&self) -> &StatsArea {
        crate::segment::stats_area_of(&self.page)
    }

    /// The writer role's holder only (its lock held): applies `change` to the
    /// statistics and writes them with their check word. Damaged ones start
    /// again from zero, and that counts as a repair.
    pub(crate) fn update_stats(&self, change: impl FnOnce(&mut TieStats)) {
        let h = self.header();
        let mut stats = TieStats::load(h);
        if self.stats_area().stats_check.load(Acquire) != stats.check() {
            stats = TieStats {
                repairs: 1,
                ..TieStats::default()
            };
        }
        change(&mut stats);
        stats.store(h, self.stats_area());
    }

    /// The statistics if they are whole: `None` if they disagree with their
    /// check word (twice the same words: not a writer in the middle of an
    /// update). A page of minor 0 or 1 has no check word: its statistics are
    /// returned as they are.
    pub(crate) fn checked_stats(&self) -> Option<TieStats> {
        let h = self.header();
        if self.minor_area().layout_minor.load(Relaxed) < 2 {
            return Some(TieStats::load(h));
        }
        let mut previous = None;
        for _ in 0..100 {
            let check = self.stats_area().stats_check.load(Acquire);
            let stats = TieStats::load(h);
            if stats.check() == check {
                return Some(stats);
            }
            if previous == Some((stats, check)) {
                return None;
            }
            previous = Some((stats, check));
            std::thread::yield_now();
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use crate::testutil::TestName;
    use crate::SharedBase;
    use std::sync::atomic::Ordering::Relaxed;

    #[test]
    fn damaged_statistics_are_reported_as_damaged_and_start_again_at_the_next_tie() {
        let t = TestName::new("tiestats");
        let base = SharedBase::open(&t.cfg()).unwrap();
        for _ in 0..3 {
            assert!(base.force_move());
        }
        let before = base.info();
        assert!(before.tracking.statistics_valid);
        assert!(before.tracking.ties >= 3, "{:?}", before.tracking);
        assert_eq!(before.moves, before.tracking.ties);

        // Another process scribbles over a counter: the reader must not show
        // the number.
        base.header()
            .repairs
            .store(12_511_686_871_691_681_336, Relaxed);
        let damaged = base.info();
        assert!(!damaged.tracking.statistics_valid);
        assert_eq!(damaged.tracking.repairs, 0);
        assert_eq!(damaged.moves, 0);
        let fields = damaged.fields();
        for key in super::super::info::STATISTICS_KEYS {
            let value = &fields.iter().find(|(k, _)| *k == key).unwrap().1;
            assert!(value.starts_with("damaged"), "{key}: {value}");
        }
        assert!(!fields
            .iter()
            .any(|(_, v)| v.contains("12511686871691681336")));

        // The next tie starts them again, counting that repair.
        assert!(base.force_move());
        let after = base.info();
        assert!(after.tracking.statistics_valid);
        assert_eq!(
            (after.tracking.ties, after.moves, after.tracking.repairs),
            (1, 1, 1)
        );
    }
}
