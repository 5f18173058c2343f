//! Unique stamps: epoch nanoseconds that no two callers, in any thread of any
//! process attached to the segment, ever receive twice.

use crate::segment::SharedBase;
use std::sync::atomic::Ordering::{Acquire, Relaxed};

impl SharedBase {
    /// An epoch-ns stamp strictly greater than every unique stamp issued before it
    /// through this segment: the real time, or the last issued + 1 when several
    /// callers land in the same nanosecond (or a clock tick is coarser).
    #[inline]
    pub fn next_unique(&self) -> u64 {
        let last = &self.extension().last_unique;
        let now = self.now_ns_ordered();
        let mut prev = last.load(Relaxed);
        loop {
            let next = now.max(prev.wrapping_add(1));
            match last.compare_exchange_weak(prev, next, Acquire, Relaxed) {
                Ok(_) => return next,
                Err(seen) => prev = seen,
            }
        }
    }

    /// The last unique stamp issued through this segment (0 if none).
    pub fn last_unique(&self) -> u64 {
        self.extension().last_unique.load(Relaxed)
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
                    (0..50_000).map(|_| base.next_unique()).collect::<Vec<_>>()
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
    fn unique_stamps_stay_at_the_real_time() {
        let t = TestName::new("uniquenow");
        let base = SharedBase::open(&t.cfg()).unwrap();
        let before = base.now_ns_ordered();
        let u = base.next_unique();
        let after = base.now_ns_ordered();
        assert!(before <= u && u <= after.max(before + 1));
    }
}
