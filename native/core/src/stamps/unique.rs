//! Unique stamps: epoch nanoseconds that no two callers, in any thread of any
//! process attached to the segment, ever receive twice.

use crate::error::Result;
use crate::segment::SharedBase;
use std::sync::atomic::AtomicU64;
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
    /// Unique and increasing by the compare-and-swap on the segment's one
    /// `last_unique` word alone: a successful CAS replaces the value `prev` it
    /// read by `max(prev + 1, now)`, which is greater, and the CASes on one word
    /// succeed in one order that every thread of every process sees. So no two
    /// calls get the same stamp, and a call that comes after another (later on
    /// the same thread, or after it through any synchronisation, in any process)
    /// gets a greater one. When the counter was read plays no part: a read the
    /// CPU made early only gives a smaller `now`, and `prev + 1` is issued.
    ///
    /// The counter read is unordered, as for [`SharedBase::now_ns`]: the CPU may
    /// make it a few ns before the instructions that precede the call. So the
    /// stamp is the real time of the call within that slack, but it may be a
    /// few ns smaller than a stamp another thread or process took before an
    /// event this call follows (a `now_ns_ordered` stamp published through a
    /// flag this thread then read), unless that stamp was itself a unique
    /// stamp. Where it must not be, [`SharedBase::next_unique_ordered`] reads
    /// the counter ordered, at the cost of the ordered read.
    ///
    /// A host page reader keeps this state in its per-user segment (opened on
    /// the first call): the error is that segment's, if it cannot be opened.
    #[inline]
    pub fn next_unique(&self) -> Result<u64> {
        let last = &self.state_segment()?.extension().last_unique;
        // `prev` first, the counter after: in program order the counter is then
        // read after the value the CAS will most likely replace.
        let prev = last.load(Relaxed);
        Ok(issue(last, prev, self.now_ns()))
    }

    /// [`SharedBase::next_unique`] with an ordered counter read (as
    /// [`SharedBase::now_ns_ordered`]): besides being unique and increasing,
    /// the stamp is not smaller than any stamp taken, in any thread or process,
    /// before an event this call follows. Costs the ordered read (~2 × on the
    /// TSC; benches/README.md).
    #[inline]
    pub fn next_unique_ordered(&self) -> Result<u64> {
        let last = &self.state_segment()?.extension().last_unique;
        let now = self.now_ns_ordered();
        Ok(issue(last, last.load(Relaxed), now))
    }

    /// The last unique stamp issued through this segment (0 if none).
    pub fn last_unique(&self) -> u64 {
        self.state_segment()
            .map_or(0, |s| s.extension().last_unique.load(Relaxed))
    }
}

/// Replaces `prev` (and whatever the word holds by then) by the next unique
/// stamp for the timeline reading `now`, and returns it. One CAS unless another
/// caller's CAS came between the load and this one.
#[inline(always)]
fn issue(last: &AtomicU64, mut prev: u64, now: u64) -> u64 {
    loop {
        let next = if prev >= now && prev - now < MAX_AHEAD_NS {
            prev + 1
        } else {
            now
        };
        match last.compare_exchange_weak(prev, next, Acquire, Relaxed) {
            Ok(_) => return next,
            Err(seen) => prev = seen,
        }
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
        use crate::clock::source::read_fenced;
        let t = TestName::new("uniquenow");
        let base = SharedBase::open(&t.cfg()).unwrap();
        // The unordered read may be made before the instructions preceding the
        // call, but not before a read followed by a fence has completed.
        let before = base.ns_at(read_fenced(base.source()));
        let u = base.next_unique().unwrap();
        let after = base.now_ns_ordered();
        assert!(
            before <= u && u <= after.max(before + 1),
            "{before} {u} {after}"
        );
        // The ordered one needs no fence after an earlier stamp.
        let before = base.now_ns_ordered();
        let o = base.next_unique_ordered().unwrap();
        let after = base.now_ns_ordered();
        assert!(u < o, "{u} {o}");
        assert!(
            before <= o && o <= after.max(before + 1),
            "{before} {o} {after}"
        );
    }

    #[test]
    fn ordered_and_unordered_unique_stamps_share_one_order() {
        let t = TestName::new("uniquemix");
        let base = SharedBase::open(&t.cfg()).unwrap();
        let mut last = 0;
        for i in 0..10_000 {
            let u = if i % 3 == 0 {
                base.next_unique_ordered().unwrap()
            } else {
                base.next_unique().unwrap()
            };
            assert!(u > last, "{i}: {u} after {last}");
            last = u;
        }
        assert_eq!(base.last_unique(), last);
    }
}
