//! Unique stamps: epoch nanoseconds that no two callers, in any thread of any
//! process attached to the segment, ever receive twice.

use crate::error::Result;
use crate::segment::SharedBase;
use std::sync::atomic::Ordering::{Acquire, Relaxed};

/// How far the last unique stamp may lie ahead of the timeline. Legitimately it
/// is ahead by a few ns (callers within one ns), or by a backward explicit reset
/// (`set_base_info`); further ahead it is damage: it is then replaced by the
/// timeline (documented repair) instead of issuing stamps from the future (and
/// wrapping at 2^64).
pub const MAX_AHEAD_NS: u64 = 86_400_000_000_000;

impl SharedBase {
    /// An epoch-ns stamp strictly greater than every unique stamp issued before it
    /// through this segment: the real time, or the last issued + 1 when several
    /// callers land in the same nanosecond (or a clock tick is coarser). A last
    /// stamp more than a day ahead of the timeline is treated
    /// as damage and replaced by the timeline.
    ///
    /// A host page reader keeps this state in its per-user segment (opened on
    /// the first call): the error is that segment's, if it cannot be opened.
    #[inline]
    pub fn next_unique(&self) -> Result<u64> {
        let last = &self.state_segment()?.extension().last_unique;
        let now = self.now_ns_ordered();
        let mut prev = last.load(Relaxed);
        loop {
            let next = if prev >= now && prev - now < MAX_AHEAD_NS {
                prev + 1
            } else {
                now
            };
            match last.compare_exchange_weak(prev, next, Acquire, Relaxed) {
                Ok(_) => return Ok(next),
                Err(seen) => prev = seen,
            }
        }
    }

    /// The last unique stamp issued through this segment (0 if none).
    pub fn last_unique(&self) -> u64 {
        self.state_segment()
            .map_or(0, |s| s.extension().last_unique.load(Relaxed))
    }
}

#[cfg(test)]
mod tests {
    use crate::testutil::TestName;
    use crate::SharedBase;
    use std::sync::Arc;

    #[test]
    fn unique_stamps_never_repeat_across_threads_and_handles() {
        let t = TestName::new("unique");
        // Two handles on one segment stand for two processes' mappings.
        let a = Arc::new(SharedBase::open(&t.cfg()).unwrap());
        let b = Arc::new(SharedBase::open(&t.cfg()).unwrap());
        let threads: Vec<_> = (0..4)
            .map(|i| {
                let base = if i % 2 == 0 { a.clone() } else { b.clone() };
                std::thread::spawn(move || {
                    (0..50_000)
                        .map(|_| base.next_unique().unwrap())
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        let mut all = Vec::new();
        for th in threads {
            let v = th.join().unwrap();
            assert!(
                v.windows(2).all(|w| w[0] < w[1]),
                "a thread's stamps must increase"
            );
            all.extend(v);
        }
        let n = all.len();
        all.sort_unstable();
        all.dedup();
        assert_eq!(all.len(), n, "duplicates among unique stamps");
        assert_eq!(a.last_unique(), *all.last().unwrap());
    }

    #[test]
    fn a_damaged_last_stamp_is_replaced_not_followed_into_the_future() {
        let t = TestName::new("uniquedamage");
        let base = SharedBase::open(&t.cfg()).unwrap();
        for junk in [
            u64::MAX - 2,
            1 << 63,
            base.now_ns() + 2 * super::MAX_AHEAD_NS,
        ] {
            base.extension()
                .last_unique
                .store(junk, std::sync::atomic::Ordering::SeqCst);
            let u = base.next_unique().unwrap();
            assert!(u.abs_diff(base.now_ns()) < 1_000_000_000, "{junk}: {u}");
            assert!(base.next_unique().unwrap() > u);
        }
        // Legitimately ahead (a backward reset): still strictly increasing.
        let ahead = base.now_ns() + 3_600_000_000_000;
        base.extension()
            .last_unique
            .store(ahead, std::sync::atomic::Ordering::SeqCst);
        assert_eq!(base.next_unique().unwrap(), ahead + 1);
    }

    #[test]
    fn unique_stamps_stay_at_the_real_time() {
        let t = TestName::new("uniquenow");
        let base = SharedBase::open(&t.cfg()).unwrap();
        let before = base.now_ns_ordered();
        let u = base.next_unique().unwrap();
        let after = base.now_ns_ordered();
        assert!(before <= u && u <= after.max(before + 1));
    }
}
