//! The stamp path: one seqlock read of the active line and the counter, then
//! the line's value at the counter. Readers never lock; a stamp past the
//! threshold moves or ties the base if it can take the writer role (see
//! `writer`), and otherwise stamps beside the holder without waiting.

use super::{base_of, load_line, Base, TimeStamp};
use crate::clock::convert::SHIFT;
use crate::clock::source::{self, SourceId};
use crate::segment::access::Access;
use crate::segment::config::Mode;
use crate::segment::damage::Answer;
use crate::segment::layout::*;
use crate::segment::tracking::TieKind;
use crate::segment::validate;
use crate::segment::SharedBase;
use std::sync::atomic::fence;
use std::sync::atomic::Ordering::{AcqRel, Acquire, Relaxed};

/// A consistent read of the active line and a counter value (`read_line`).
struct LineRead<T> {
    /// The seqlock word the read was validated against.
    seen: u64,
    counter: u64,
    /// The line's base and slope (its generation is not read: 0).
    base: Base,
    /// The line passed its quick check (or the segment has none).
    quick_ok: bool,
    also: T,
}

/// What a bounded stamp starts from (`stamp_for_bound`).
pub(crate) struct BoundStamp {
    /// The ordered stamp, ns.
    pub ns: u64,
    /// The counter value the stamp came from (on the slow path the last read).
    pub counter: u64,
    /// The first counter value read: `counter` but on the slow path, which
    /// reads the counter again (a tie, a stamp again).
    pub first_counter: u64,
    /// How far the stamp's line's slope is from the learned frequency, `mult` units.
    pub slope_diff: u64,
    /// The seqlock count of the stamp's line, or of the one before it.
    pub count: u64,
}

impl<T> LineRead<T> {
    /// The stamp on this line if the counter is within `threshold` ticks of
    /// its base; `None` when the base must move or tie first.
    #[inline(always)]
    fn stamp_within(&self, threshold: u64) -> Option<u64> {
        let l = &self.base;
        let delta = self.counter.wrapping_sub(l.counter);
        // Validated at attach: threshold · largest slope + frac fits in 64 bits.
        (delta <= threshold).then(|| {
            l.ns.wrapping_add(delta.wrapping_mul(l.mult).wrapping_add(l.frac) >> SHIFT)
        })
    }
}

impl SharedBase {
    /// IBMTS `calcTimeStamp`.
    #[inline]
    pub fn calc_time_stamp(&self) -> TimeStamp {
        TimeStamp::from_ns(self.now_ns())
    }

    /// IBMTS `getEpochMicroseconds`.
    #[inline]
    pub fn epoch_micros(&self) -> u64 {
        self.now_ns() / 1_000
    }

    /// Epoch nanoseconds from an unordered counter read: the cheapest stamp.
    #[inline(always)]
    #[allow(clippy::redundant_closure)] // the closure is the point: see below
    pub fn now_ns(&self) -> u64 {
        // A closure marked inline(always) rather than the fn item: a caller
        // optimised for size (the JNI library) would otherwise call the read
        // through an out-of-line shim.
        self.stamp_with(
            #[inline(always)]
            |s| source::read(s),
        )
    }

    /// Epoch nanoseconds from an ordered counter read, for stamps compared across
    /// threads: the read cannot be executed before earlier instructions. On the
    /// TSC it is `lfence; rdtsc` or `rdtscp`, whichever the segment's creator
    /// measured cheaper ([`SharedBase::ordered_read`]).
    #[inline(always)]
    pub fn now_ns_ordered(&self) -> u64 {
        let how = self.ordered;
        self.stamp_with(
            #[inline(always)]
            |s| source::read_ordered_by(s, how),
        )
    }

    /// The ordered stamp a bounded stamp starts from, with the counter it read
    /// and how far its line's slope is from the learned frequency: one seqlock
    /// read, so the slope is that of the line that made the stamp. The count
    /// is that of the stamp's line, or of the one before it (the slow path:
    /// the count before it stamped).
    ///
    /// Anything but the plain case (a writer mid-tie, a line that fails its
    /// quick check, a counter past the threshold) takes the full stamp, which
    /// may come from the line first read (a tie of its own answers from the
    /// old line) or from the next one. A word `now_bounded` accepts names at
    /// most the line after the first, so the slope is the larger of those
    /// two lines' errors; the largest a valid line may have when the first
    /// read gave none.
    #[inline(always)]
    pub(crate) fn stamp_for_bound(&self) -> BoundStamp {
        let how = self.ordered;
        // `move`: a closure holding `how` by reference kept it in memory on
        // the hot path, a load and a compare before the read (+0.27 ns).
        let read = move |s| source::read_ordered_by(s, how);
        let line = self
            .read_line(&read, |slot| slot.freq_mult.load(Relaxed))
            .filter(|l| l.quick_ok);
        if let Some(line) = &line {
            if let Some(stamp) = line.stamp_within(self.threshold) {
                return BoundStamp {
                    ns: stamp,
                    counter: line.counter,
                    first_counter: line.counter,
                    slope_diff: line.base.mult.abs_diff(line.also),
                    count: seq_count(line.seen),
                };
            }
        }
        self.stamp_for_bound_slow(line.map(|l| (seq_count(l.seen), l.base.mult.abs_diff(l.also))))
    }

    /// `stamp_for_bound` past the plain case; `first`: the count and slope
    /// error of the line first read, if it was whole.
    #[cold]
    #[inline(never)]
    fn stamp_for_bound_slow(&self, first: Option<(u64, u64)>) -> BoundStamp {
        let how = self.ordered;
        let (count, first_diff) = first.unwrap_or_else(|| {
            let (lo, hi) = self.rules.mult_range();
            (seq_count(self.header().seq.load(Acquire)), hi - lo)
        });
        let (earliest, last) = (std::cell::Cell::new(None), std::cell::Cell::new(0));
        let stamp = self.stamp_with(|s| {
            let c = source::read_ordered_by(s, how);
            if earliest.get().is_none() {
                earliest.set(Some(c));
            }
            last.set(c);
            c
        });
        let (line, ..) = self.active_line();
        BoundStamp {
            ns: stamp,
            counter: last.get(),
            first_counter: earliest.get().unwrap_or(last.get()),
            slope_diff: first_diff.max(line.mult.abs_diff(line.freq_mult)),
            count,
        }
    }

    /// A raw counter read of the segment's source.
    #[inline(always)]
    pub fn ticks(&self) -> u64 {
        source::read(self.source)
    }

    /// Epoch nanoseconds of a counter value read earlier from this segment's
    /// source. Read-only: whatever the value, it never moves the shared base.
    pub fn ns_at(&self, counter: u64) -> u64 {
        self.exact_ns(counter, &self.base())
    }

    /// A stamp for the counter value `read` returns, moving (or tying) the base
    /// when it is past the threshold. Only real counter reads may come here: a
    /// value from the future would move everyone's base ahead of the counter.
    #[inline(always)]
    pub(crate) fn stamp_with(&self, read: impl Fn(SourceId) -> u64) -> u64 {
        loop {
            let Some(line) = self.read_line(&read, |_| ()) else {
                continue;
            };
            if !line.quick_ok {
                match self.stamp_unverified(line.counter, line.seen) {
                    Unverified::Again => continue,
                    Unverified::Whole => {}
                    Unverified::Stamp(ns) => return ns,
                }
            }
            if let Some(ns) = line.stamp_within(self.threshold) {
                return ns;
            }
            // A copy made here, on the slow path: a reference to `line` itself
            // kept the whole read in memory, eight stores on every stamp.
            let base = line.base;
            if let Some(ns) = self.stamp_slow(line.counter, &base, line.seen, &read) {
                return ns;
            }
        }
    }

    /// One seqlock read of the active line with the counter read inside its
    /// window (so the line is never based past the counter), and `also` of the
    /// same slot; `None` if a writer published during it.
    #[inline(always)]
    fn read_line<T>(
        &self,
        read: &impl Fn(SourceId) -> u64,
        also: impl Fn(&Slot) -> T,
    ) -> Option<LineRead<T>> {
        let h = self.header();
        let before = h.seq.load(Acquire);
        let slot = active_slot(h, before);
        let counter = read(self.source);
        let base = Base {
            counter: slot.counter.load(Relaxed),
            ns: slot.ns.load(Relaxed),
            frac: slot.frac.load(Relaxed),
            mult: slot.mult.load(Relaxed),
            generation: 0,
        };
        let quick = slot.quick.load(Relaxed);
        let also = also(slot);
        fence(Acquire);
        let seen = h.seq.load(Relaxed);
        snapshot_valid(before, seen).then(|| LineRead {
            seen,
            counter,
            base,
            quick_ok: !self.quick_checked
                || slot_quick(base.counter, base.ns, base.frac, base.mult) == quick,
            also,
        })
    }

    /// The line read under `seen` failed its quick check: either it is damaged,
    /// or it is whole and was written without the quick word (by a library of
    /// minor 0) or only that word was damaged. Whoever can take the role
    /// rewrites it as a tie would (repairing a damaged line from its validated
    /// copies) and stamps again. While another process holds the role, a whole
    /// line is used as it is, and a damaged one never. The stamp then comes,
    /// in this order of preference, from the line with its one damaged word
    /// corrected (the same line), from this handle's copy of the line (the
    /// same line), from the previous line if it is whole (frozen mode: the
    /// same timeline; tracking: the one a repair continues), else from the
    /// calendar clock; never below a stamp answered so before (see `damage`),
    /// and counted. Never waits.
    #[cold]
    #[inline(never)]
    fn stamp_unverified(&self, counter: u64, seen: u64) -> Unverified {
        let h = self.header();
        let count = seen >> 32;
        let slot = &h.slots[seq_slot(seen)];
        let (line, written, check) = load_line(slot);
        let quick = slot.quick.load(Relaxed);
        if !snapshot_valid(seen, h.seq.load(Acquire)) {
            return Unverified::Again;
        }
        if let Some(held) = self.acquire_writer(seen) {
            let good = self.verified_active(&held);
            if self.publish_retrying(&held, &good) {
                return Unverified::Again;
            }
        }
        if validate::line(&line, written, check, count, self.mode, &self.rules).is_ok() {
            self.memory.keep(count, &base_of(&line));
            return Unverified::Whole;
        }
        let fixed =
            validate::corrected(&line, written, check, quick, count, self.mode, &self.rules);
        let (how, ns) = if let Some(good) = fixed {
            (Answer::Corrected, self.exact_ns(counter, &base_of(&good)))
        } else if let Some(kept) = self.memory.line_of(count) {
            (Answer::Copy, self.exact_ns(counter, &kept))
        } else if let Ok(prev) = self.previous_line(seen) {
            (Answer::Elsewhere, self.exact_ns(counter, &base_of(&prev)))
        } else {
            (Answer::Elsewhere, (self.calendar)())
        };
        Unverified::Stamp(self.memory.answered(how, ns, seq_writer(seen)))
    }

    /// The exact stamp of `counter` against `base`, for any distance in either
    /// direction: floor((ns·2^32 + frac + (counter − counter_base)·mult) / 2^32).
    pub fn exact_ns(&self, counter: u64, base: &Base) -> u64 {
        let fixed = ((base.ns as i128) << SHIFT) + base.frac as i128;
        let delta = counter.wrapping_sub(base.counter) as i64 as i128;
        ((fixed + delta * base.mult as i128) >> SHIFT) as u64
    }

    /// A stamp past the threshold from the line `base`, read under the seqlock
    /// word `seen`. `None`: the line was replaced meanwhile; stamp again (the new
    /// line is already published: this never waits).
    #[cold]
    #[inline(never)]
    fn stamp_slow(
        &self,
        counter: u64,
        base: &Base,
        seen: u64,
        read: &impl Fn(SourceId) -> u64,
    ) -> Option<u64> {
        // The line passed its check: what a damaged line answers from later.
        self.memory.keep(seen >> 32, base);
        let behind = base.counter.wrapping_sub(counter);
        let reset = (behind as i64) > 0 && behind > self.backstep_limit;
        if (behind as i64) > 0 && !reset {
            // Another CPU's counter may trail the one that set the base by a few
            // ticks; that is still the same timeline.
            return Some(self.exact_ns(counter, base));
        }
        if self.mode == Mode::Frozen {
            if reset {
                // Far behind means the counter was reset (suspend, migration):
                // re-base instead of going negative.
                if let Ok(ns) = self.rebase_after_backstep(counter, seen) {
                    return Some(ns);
                }
                return Some(self.exact_ns(counter, base));
            }
            // A move never changes the timeline: whoever moves, the exact value
            // on the current line is right.
            self.try_move(counter, seen);
            return Some(self.exact_ns(counter, base));
        }
        if let Some(held) = self.acquire_writer(seen) {
            let (old, t) = self.tie_held(held, read)?;
            return Some(match t.kind {
                TieKind::Slew => old.ns_at(counter),
                _ => t.line.ns_at(counter).max(t.floor_ns),
            });
        }
        self.stamp_beside_writer(counter, base, seen, reset)
    }

    /// Tracking: a stamp past the threshold that did not get the writer role
    /// (another process or thread holds it, or is taking it). It keeps using
    /// the current line, whose slope is bounded, and never waits:
    ///
    /// - up to the holder's `reach` the holder's new line is built to be no
    ///   lower than this one, so the stamp is the exact value on it;
    /// - past `reach` (the holder is slow or stopped, or nobody holds the role
    ///   yet) the stamp marks the seqlock word stale first: a marked word makes
    ///   the holder's publication fail, and a holder that sees the mark builds
    ///   its line no lower than the current one at a counter read after it;
    /// - a counter that went backwards (reset) is answered with the current
    ///   line's committed floor, which the holder's re-based line starts above.
    fn stamp_beside_writer(
        &self,
        counter: u64,
        base: &Base,
        seen: u64,
        reset: bool,
    ) -> Option<u64> {
        let h = self.header();
        let w = h.seq.load(Acquire);
        if seq_count(w) != seq_count(seen) {
            return None;
        }
        if reset {
            return Some(self.exact_ns(base.counter.wrapping_add(self.rules.limit), base));
        }
        if self.access == Access::HostReader {
            // Read-only: no mark. The daemon, the only writer, builds each line
            // no lower than the old one up to the counter at its publication.
            return Some(self.exact_ns(counter, base));
        }
        if !seq_stale(w) {
            let reach = h.reach.load(Acquire);
            if (counter.wrapping_sub(reach) as i64) <= 0 {
                // Still the line the reach belongs to?
                if seq_count(h.seq.load(Acquire)) != seq_count(seen) {
                    return None;
                }
                return Some(self.exact_ns(counter, base));
            }
            if h.seq
                .compare_exchange(w, w | SEQ_STALE, AcqRel, Acquire)
                .is_err()
            {
                return None;
            }
        }
        Some(self.exact_ns(counter, base))
    }
}

/// The slot active under the seqlock word `word` (`seq_slot`), found by a
/// byte offset taken straight from the word's bit 32: indexing the array by
/// `seq_slot` costs a stamp three more instructions (benches/README.md).
#[inline(always)]
fn active_slot(h: &Header, word: u64) -> &Slot {
    const { assert!(std::mem::size_of::<Slot>() == 128) };
    let offset = ((word >> 25) & 128) as usize;
    // SAFETY: `offset` is 0 or 128, the size of one `Slot` (checked above):
    // the start of `slots[0]` or of `slots[1]`, both inside the array.
    unsafe { &*h.slots.as_ptr().cast::<u8>().add(offset).cast::<Slot>() }
}

/// What a stamp does after its line failed the quick check.
enum Unverified {
    /// The line changed, or was rewritten: stamp again.
    Again,
    /// The line is whole: stamp from it as usual.
    Whole,
    /// The stamp, from elsewhere than the damaged line.
    Stamp(u64),
}
