//! Where a leap second the time service announced makes `CLOCK_REALTIME`
//! ambiguous, and by how much an interval must widen there.
//!
//! The kernel applies `STA_INS`/`STA_DEL` (and chronyd its leap status) at
//! the end of the UTC day: an inserted second repeats 23:59:59 (POSIX time
//! has no 23:59:60), a deleted one skips it. A stamp within a second of that
//! midnight may stand for either reading, and the line, which never runs
//! backward, is a second off the clock after an insertion until the ties
//! have absorbed it. So, while the word announces a leap, a stamp from one
//! second before the first midnight not earlier than a second before the
//! word was learned, and every stamp after it on that word, is widened by a
//! second on both sides. The tie after the leap sees the clock a second off
//! the line (a step, `disruption`), and the word after that no longer
//! announces it.

use super::bound::Leap;

const SECOND_NS: u64 = 1_000_000_000;
const DAY_NS: u64 = 86_400 * SECOND_NS;

/// Test builds: the moment a leap announced by `HRTS_TEST_BOUND` applies
/// (its `LEAP@NS` part), instead of the end of the UTC day.
#[cfg(any(test, feature = "testing"))]
fn test_moment() -> Option<u64> {
    static AT: std::sync::OnceLock<Option<u64>> = std::sync::OnceLock::new();
    *AT.get_or_init(|| {
        let v = std::env::var(super::bound::ENV_TEST_BOUND).ok()?;
        super::bound::parse_test_leap(&v).map(|(_, at)| at)
    })
}

/// The first moment at or after `from_ns` at which an announced leap
/// applies: the next UTC midnight (`u64::MAX` if none).
fn first_at_or_after(from_ns: u64) -> u64 {
    #[cfg(any(test, feature = "testing"))]
    if let Some(at) = test_moment() {
        return if at >= from_ns { at } else { u64::MAX };
    }
    from_ns.div_ceil(DAY_NS).saturating_mul(DAY_NS)
}

/// How much wider (ns, each side) a stamp at `stamp_ns` must be under a
/// word learned at `word_ns` announcing `leap`: a second in the leap's
/// neighbourhood (see the module's comment), else 0.
pub fn widening_ns(leap: Leap, word_ns: u64, stamp_ns: u64) -> u64 {
    if leap == Leap::None {
        return 0;
    }
    let at = first_at_or_after(word_ns.saturating_sub(SECOND_NS));
    if at <= stamp_ns.saturating_add(SECOND_NS) {
        SECOND_NS
    } else {
        0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_around_the_end_of_the_day_and_after_it_on_the_same_word() {
        // The unit tests set no HRTS_TEST_BOUND: midnights.
        assert_eq!(test_moment(), None);
        let midnight = 20_000 * DAY_NS;
        let word = midnight - 3_600 * SECOND_NS;
        let w = |stamp| widening_ns(Leap::Insert, word, stamp);
        assert_eq!(w(midnight - 2 * SECOND_NS), 0);
        assert_eq!(w(midnight - SECOND_NS), SECOND_NS);
        assert_eq!(w(midnight), SECOND_NS);
        assert_eq!(w(midnight + SECOND_NS / 2), SECOND_NS);
        assert_eq!(w(midnight + 30 * SECOND_NS), SECOND_NS, "a stale word");
        assert_eq!(widening_ns(Leap::Delete, word, midnight), SECOND_NS);
        assert_eq!(widening_ns(Leap::None, word, midnight), 0);
        // Learned during the inserted second (the kernel's TIME_OOP): that
        // midnight still counts.
        let during = midnight + SECOND_NS / 2;
        assert_eq!(widening_ns(Leap::Insert, during, during), SECOND_NS);
        // Learned well after it: the next midnight is a day away.
        let after = midnight + 10 * SECOND_NS;
        assert_eq!(widening_ns(Leap::Insert, after, after), 0);
    }
}
