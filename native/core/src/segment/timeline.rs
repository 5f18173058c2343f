//! Reading, moving and tying the shared base.
//!
//! A stamp is `ns + ((counter - counter_base) * mult + frac) >> 32`, computed
//! from one consistent snapshot of the active slot (its slope `mult` included,
//! so every process converts with the same line). Readers never lock: a writer
//! always writes the inactive slot, so the only retry is the rare case where two
//! writes completed during one read.
//!
//! When the elapsed ticks pass the wrap threshold, the first reader to notice
//! takes the writer role with a CAS on the seqlock word. In frozen mode it moves
//! the base forward, carrying the sub-nanosecond remainder, so the timeline is
//! exactly the one an unmoved base would give. In tracking mode the threshold is
//! the tie interval and the writer *ties* (see `tracking`): it pairs the counter
//! with the calendar and publishes a new line that continues the old one. Every
//! move and tie first validates what it reads (see `validate`) and repairs a
//! damaged header or line instead of propagating it.
//!
//! Nobody waits for a writer. A stamp that finds the role taken uses the exact
//! path on the current line; past the holder's announced `reach` it first marks
//! the seqlock word, which makes the holder's publication fail until the holder
//! has rebuilt its line no lower than everything the current line gave. The
//! role's holder proves it is alive with a lock on the segment's name (see
//! `role`), so a stopped holder is neither robbed nor waited for, and a dead one
//! (whatever its pid namespace) is replaced at once.

use crate::clock::convert::SHIFT;
use crate::clock::source::{self, SourceId};
use crate::error::{Error, ErrorKind, Result};
use crate::segment::access::{self, Access};
use crate::segment::config::{Calendar, Mode};
use crate::segment::damage::Answer;
use crate::segment::layout::*;
#[cfg(any(test, feature = "testing"))]
use crate::segment::role::RoleLock;
use crate::segment::role::{Guard, Take};
use crate::segment::tracking::{self, Line, TieKind};
use crate::segment::validate;
use crate::segment::SharedBase;
use std::sync::atomic::Ordering::{AcqRel, Acquire, Relaxed, Release};
use std::sync::atomic::{fence, AtomicU64};

/// One consistent copy of the base.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Base {
    pub counter: u64,
    pub ns: u64,
    pub frac: u64,
    /// The slope: nanoseconds per tick · 2^32.
    pub mult: u64,
    pub generation: u64,
}

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

/// What `base_info` reports: the IBMTS four values plus hrts's generation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BaseInfo {
    pub frequency: u64,
    pub counter: u64,
    pub seconds: u64,
    pub microseconds: u64,
    pub nanoseconds: u64,
    pub generation: u64,
}

/// Seconds and microseconds since the Unix epoch (IBMTS `calcTimeStamp`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct TimeStamp {
    pub seconds: u64,
    pub microseconds: u32,
}

impl TimeStamp {
    pub fn from_ns(ns: u64) -> TimeStamp {
        TimeStamp {
            seconds: ns / 1_000_000_000,
            microseconds: (ns % 1_000_000_000 / 1_000) as u32,
        }
    }

    /// IBMTS's test-loop line: `seconds.micros = HEX.HEX`.
    pub fn ibmts_line(&self) -> String {
        format!(
            "{}.{:06} = {:08X}.{:08X}",
            self.seconds, self.microseconds, self.seconds, self.microseconds
        )
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
    /// and how far its line's slope is from the learned frequency (`mult`
    /// units): one seqlock read, so the slope is that of the line that made
    /// the stamp. Anything but the plain case (a writer mid-tie, a line that
    /// fails its quick check, a counter past the threshold) takes the full
    /// stamp, then the slope of the line it left active.
    /// The last value is the seqlock count of the stamp's line, or of an
    /// earlier one (the slow path: the count before it stamped).
    #[inline(always)]
    pub(crate) fn stamp_for_bound(&self) -> (u64, u64, u64, u64) {
        let how = self.ordered;
        // `move`: a closure holding `how` by reference kept it in memory on
        // the hot path, a load and a compare before the read (+0.27 ns).
        let read = move |s| source::read_ordered_by(s, how);
        let line = self.read_line(&read, |slot| slot.freq_mult.load(Relaxed));
        if let Some(line) = line.filter(|l| l.quick_ok) {
            if let Some(stamp) = line.stamp_within(self.threshold) {
                return (
                    stamp,
                    line.counter,
                    line.base.mult.abs_diff(line.also),
                    seq_count(line.seen),
                );
            }
        }
        let count = seq_count(self.header().seq.load(Acquire));
        let last = std::cell::Cell::new(0);
        let stamp = self.stamp_with(|s| {
            let c = read(s);
            last.set(c);
            c
        });
        let (line, ..) = self.active_line();
        (stamp, last.get(), line.mult.abs_diff(line.freq_mult), count)
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

    /// Takes the writer role if nobody holds it, or if its holder is dead; the
    /// caller's snapshot `seen` must still be current, which makes the slot we
    /// copy from the active one. The role's lock is taken first: a holder named
    /// in `seen` holds it while it lives, so getting it proves that holder dead
    /// (or already done, and then the CAS fails).
    fn acquire_writer(&self, seen: u64) -> Option<Held<'_>> {
        let h = self.header();
        let holder = seq_writer(seen);
        if holder != 0 && !self.probe_due(seen) {
            return None;
        }
        let guard = match self.role.try_take() {
            Take::Taken(g) => g,
            Take::Held | Take::Unavailable => return None,
        };
        let mine = (seen & !0xffff_ffff) | (crate::os::pid() as u64 & SEQ_PID_MASK);
        h.seq.compare_exchange(seen, mine, AcqRel, Relaxed).ok()?;
        // Orders the slot stores below after the acquisition for seqlock readers.
        fence(Release);
        let start = *self
            .start_time
            .get_or_init(|| crate::os::process_start_time(crate::os::pid()).unwrap_or(0));
        h.writer_start_time.store(start, Relaxed);
        #[cfg(any(test, feature = "testing"))]
        if self.access == Access::HostWriter {
            access::pause_for_test();
        }
        Some(Held {
            word: mine,
            // The daemon: readers stamp from the old line up to the publication
            // without marking it, as if every tie found the mark.
            stale: seq_stale(seen) || self.access == Access::HostWriter,
            _guard: guard,
        })
    }

    /// Whether to look at the role's lock for the held word `seen`: at once
    /// for a word this process has not probed yet (a dead holder is taken over
    /// at the first stamp that sees it), then at most once per millisecond (a
    /// live holder, stopped or not, costs the others one failed non-blocking
    /// `fcntl` per millisecond per process).
    fn probe_due(&self, seen: u64) -> bool {
        let word = seen & !SEQ_STALE;
        let now = crate::os::monotonic_ns();
        if self.last_probed.swap(word, Relaxed) != word {
            self.next_probe_ns.store(now + 1_000_000, Relaxed);
            return true;
        }
        let next = self.next_probe_ns.load(Relaxed);
        if now < next {
            return false;
        }
        self.next_probe_ns
            .compare_exchange(next, now + 1_000_000, Relaxed, Relaxed)
            .is_ok()
    }

    /// Publishes `new` if the role is still held as `held` (unmarked): writes
    /// the inactive slot and gives the role back in one CAS. `Err(word)`: the
    /// word changed (a stamp marked it); nothing was published.
    fn publish(&self, held: &Held<'_>, new: &Line) -> std::result::Result<(), u64> {
        let h = self.header();
        let next = (held.word & !0xffff_ffff).wrapping_add(SEQ_ONE);
        store_line(&h.slots[seq_slot(held.word) ^ 1], new, next >> 32);
        h.seq
            .compare_exchange(held.word, next, AcqRel, Acquire)
            .map(|_| self.memory.keep(next >> 32, &base_of(new)))
    }

    /// Clears a stale mark on the held word: `false` if the role was lost.
    fn clear_mark(&self, held: &Held<'_>) -> bool {
        match self
            .header()
            .seq
            .compare_exchange(held.word | SEQ_STALE, held.word, AcqRel, Acquire)
        {
            Ok(_) => true,
            Err(w) => w == held.word,
        }
    }

    /// Publishes `new` (frozen moves, re-bases, resets): the timeline does not
    /// depend on when, so a marked word is cleared and the publication retried.
    fn publish_retrying(&self, held: &Held<'_>, new: &Line) -> bool {
        loop {
            match self.publish(held, new) {
                Ok(()) => return true,
                Err(_) if self.clear_mark(held) => continue,
                Err(_) => return false,
            }
        }
    }

    /// The active line, validated, as the writer role's holder sees it; a
    /// damaged header is restored from this process's validated copy and a
    /// damaged line corrected (one damaged word of the four a stamp reads) or
    /// replaced (both counted in `repairs`), so a tie or move never turns
    /// damage into a line with a valid checksum.
    fn verified_active(&self, held: &Held<'_>) -> Line {
        let held = held.word;
        let h = self.header();
        if !self.image.matches(h) {
            self.image.restore(h);
            self.update_stats(|s| s.repairs += 1);
        }
        let count = held >> 32;
        let (line, written, check) = load_line(&h.slots[seq_slot(held)]);
        if validate::line(&line, written, check, count, self.mode, &self.rules).is_ok() {
            return line;
        }
        self.update_stats(|s| s.repairs += 1);
        // One damaged word of the four a stamp reads: the line itself, so the
        // repair continues exactly the timeline stamps were taken from.
        let quick = h.slots[seq_slot(held)].quick.load(Relaxed);
        let fixed =
            validate::corrected(&line, written, check, quick, count, self.mode, &self.rules);
        if let Some(good) = fixed {
            return good;
        }
        // The inactive slot holds the line before the last move or tie, unless a
        // writer died writing it: when its checksum and count say it is that
        // line, continue from it (in frozen mode it is the same timeline).
        let prev = match self.previous_line(held) {
            Ok(prev) => return prev,
            Err(prev) => prev,
        };
        // Nothing to trust: pair anew, in a new generation.
        let (counter, ns) = pair_counter_with_calendar(self.source, &self.calendar);
        self.fresh_line(
            counter,
            ns,
            line.generation.max(prev.generation).wrapping_add(1).max(1),
            None,
        )
    }

    /// The line in the inactive slot of seqlock word `word`: `Ok` if it is the
    /// line published just before the active one (its checksum holds and it was
    /// written under the previous count), else `Err` with its words as stored.
    fn previous_line(&self, word: u64) -> std::result::Result<Line, Line> {
        let (prev, written, check) = load_line(&self.header().slots[seq_slot(word) ^ 1]);
        let count = (word >> 32).wrapping_sub(1) & 0xffff_ffff;
        match validate::line(&prev, written, check, count, self.mode, &self.rules) {
            Ok(()) => Ok(prev),
            Err(_) => Err(prev),
        }
    }

    /// A line paired with the calendar at (`counter`, `ns`): the calibrated
    /// slope, or in tracking mode the learned frequency `keep` if given.
    fn fresh_line(&self, counter: u64, ns: u64, generation: u64, keep: Option<u64>) -> Line {
        let mut line = Line::paired(counter, ns, generation, self.scale.mult);
        if self.mode == Mode::Tracking {
            if let Some(freq) = keep {
                line.freq_mult = freq;
                line.mult = freq;
            }
            line.tie_ns = ns.max(1);
        }
        line
    }

    /// Pairs the counter with the calendar: the narrowest of five
    /// counter–calendar–counter brackets, its middle and the calendar reading.
    fn sample(&self, read: &impl Fn(SourceId) -> u64) -> (u64, u64) {
        let (at, cal, _) = self.sample_bracket(read);
        (at, cal)
    }

    /// As `sample`, with the bracket's width in ticks.
    fn sample_bracket(&self, read: &impl Fn(SourceId) -> u64) -> (u64, u64, u64) {
        let mut best = (u64::MAX, 0, 0);
        for _ in 0..5 {
            let before = read(self.source);
            let ns = (self.calendar)();
            let after = read(self.source);
            let width = after.wrapping_sub(before);
            if width < best.0 {
                best = (width, before.wrapping_add(width / 2), ns);
            }
        }
        (best.1, best.2, best.0)
    }

    /// One tie by the writer role's holder: validate, pair, publish, count.
    /// Returns the line it replaced and what the tie decided; `None` if the
    /// role was lost (never while its lock is held) and nothing was published.
    ///
    /// The new line must be no lower than every stamp the old line gave. Those
    /// were taken at counters up to the *exposure*: the fast path's threshold,
    /// the `reach` this holder announces (the tie interval's limit after an
    /// idle period, else a millisecond past the counter when the role was
    /// taken), and, once the word was marked stale, a counter read after the
    /// mark was seen and cleared.
    fn tie_held(
        &self,
        held: Held<'_>,
        read: &impl Fn(SourceId) -> u64,
    ) -> Option<(Line, tracking::Tie)> {
        let h = self.header();
        let old = self.verified_active(&held);
        let base = old.counter;
        let rel = |c: u64| c.wrapping_sub(base) as i64;
        let x = read(self.source);
        let limit = self.rules.limit.min(i64::MAX as u64) as i64;
        let idle = rel(x) > limit || rel(x) < -(self.backstep_limit as i64);
        let sole = self.access == Access::HostWriter;
        // How far past now stamps beside this holder may use the old line: the
        // new line is built to meet the old one there, so it can only slew
        // down after that point. A millisecond, but on a page others write
        // never more than a quarter of the threshold, the spacing of ties: a
        // reach past the next tie would let no tie bring a line that runs
        // ahead back down, and every tie carry it further ahead (a 3,000-tick
        // threshold ran it tens of microseconds ahead in seconds). A holder
        // slower than that only makes the stamps beside it mark the word,
        // which its publication then honours.
        let window = if sole {
            self.backstep_limit
        } else {
            self.backstep_limit.min(self.threshold / 4).max(1)
        } as i64;
        // A page others write: stamps may have used the old line up to its
        // threshold. The host page: only up to the counter now (see below).
        let fast = if sole {
            i64::MIN
        } else {
            self.threshold.min(i64::MAX as u64) as i64
        };
        let mut exposed = fast.max(if held.stale { rel(x) } else { i64::MIN });
        // The reach stamps beside this holder may use without a mark: what an
        // earlier holder of this line announced (a holder that died, its
        // stamps may have used), never more than a window past now (damage).
        let existing = rel(h.reach.load(Acquire));
        let own = if idle && !held.stale {
            limit
        } else {
            rel(x).saturating_add(window)
        };
        let mut reach = if (0..=rel(x).saturating_add(window)).contains(&existing) {
            own.max(existing)
        } else {
            own
        };
        h.reach.store(base.wrapping_add(reach as u64), Release);
        exposed = exposed.max(reach);
        let (at, cal, width) = self.sample_bracket(read);
        // What the clock's error is, and the line's own at the tie: what it
        // still has to absorb, and half the bracket that paired it.
        let learned = self.learn_bound();
        let half_bracket = ((width as u128 * self.scale.mult as u128) >> SHIFT) as u64 / 2 + 1;
        let t = loop {
            let publish = read(self.source);
            if sole {
                // Readers go on using the old line until the publication, a
                // moment after this read: cover a window past it.
                let end = rel(publish).saturating_add(window);
                if end > reach {
                    reach = end;
                    h.reach.store(base.wrapping_add(reach as u64), Release);
                }
                exposed = exposed.max(reach);
            }
            let t = tracking::tie(
                &old,
                &self.rules,
                at,
                cal,
                publish,
                exposed.saturating_add(self.margin_ticks as i64),
            );
            // The word goes out before the line, and holds for both: a reader
            // pairs a stamp with the word it read before it (see
            // `now_bounded`), which may be this one while the stamp is still
            // the old line's. The old line's error at the tie is its offset;
            // the new one's what it has to absorb (the same, unless the tie
            // stepped or raised the line).
            let either = t.line.residual.unsigned_abs().max(t.offset.unsigned_abs());
            // (Published for the line's count; a reader pairs its stamp only
            // with its own line's word or the next one's.)
            self.publish_bound_for(
                seq_count(held.word).wrapping_add(1),
                learned,
                either.saturating_add(half_bracket),
                at,
            );
            match self.publish(&held, &t.line) {
                Ok(()) => break t,
                Err(w) if w == held.word | SEQ_STALE => {
                    // A stamp used the old line past the reach while this tie
                    // was under way (it was slow, or stopped): announce a new
                    // reach, clear the mark, and count everything up to a
                    // counter read after that as given by the old line.
                    let now = rel(read(self.source));
                    reach = reach.max(now.saturating_add(window));
                    h.reach.store(base.wrapping_add(reach as u64), Release);
                    if !self.clear_mark(&held) {
                        return None;
                    }
                    let after = rel(read(self.source));
                    exposed = exposed.max(reach).max(after);
                }
                Err(_) => return None,
            }
        };
        // Published: the role is free, but its lock is still this thread's
        // until `held` goes, so no other holder writes the statistics now.
        self.update_stats(|s| {
            s.ties += 1;
            s.moves += 1;
            s.last_offset_ns = t.offset;
            if matches!(t.kind, TieKind::Step | TieKind::CounterReset) {
                s.steps += 1;
                s.last_step_ns = t.jump;
                if t.jump.unsigned_abs() > s.largest_step_ns.unsigned_abs() {
                    s.largest_step_ns = t.jump;
                }
            }
        });
        drop(held);
        Some((old, t))
    }

    /// Moves the base forward to `counter`, keeping the timeline bit-identical
    /// (frozen mode).
    fn try_move(&self, counter: u64, seen: u64) -> bool {
        let Some(held) = self.acquire_writer(seen) else {
            return false;
        };
        let old = self.verified_active(&held);
        let delta = counter.wrapping_sub(old.counter);
        if (delta as i64) <= 0 {
            // Nothing to move (the counter is not ahead of the base); release unchanged.
            self.publish_retrying(&held, &old);
            return false;
        }
        if !self.publish_retrying(&held, &old.moved_to(counter)) {
            return false;
        }
        // Under the role's lock still (`held` lives to the end).
        self.update_stats(|s| s.moves += 1);
        true
    }

    /// The daemon's round on the host page: a tie (tracking), or a move once
    /// half the threshold has passed (frozen), each validating and repairing
    /// what it reads; in between, a damaged header or line is repaired at
    /// once. Returns whether a line was published.
    pub(crate) fn keep_round(&self) -> bool {
        let h = self.header();
        let seen = h.seq.load(Acquire);
        let counter = source::read_ordered(self.source);
        if self.mode == Mode::Tracking {
            return match self.acquire_writer(seen) {
                Some(held) => self.tie_held(held, &source::read_ordered).is_some(),
                None => false,
            };
        }
        let base = self.base();
        if counter.wrapping_sub(base.counter) > self.threshold / 2 {
            return self.try_move(counter, seen);
        }
        if self.validate().is_ok() {
            return false;
        }
        match self.acquire_writer(seen) {
            Some(held) => {
                let good = self.verified_active(&held);
                self.publish_retrying(&held, &good)
            }
            None => false,
        }
    }

    /// Forces a base move (frozen) or a tie (tracking) at the current counter
    /// value (tests, diagnostics). Returns whether this call moved it.
    #[cfg(any(test, feature = "testing"))]
    pub fn force_move(&self) -> bool {
        let seen = self.header().seq.load(Acquire);
        let counter = source::read_ordered(self.source);
        if self.mode == Mode::Frozen {
            return self.try_move(counter, seen);
        }
        match self.acquire_writer(seen) {
            Some(held) => self.tie_held(held, &source::read_ordered).is_some(),
            None => false,
        }
    }

    /// IBMTS `setBaseInfo`: pairs the counter with the calendar clock anew, at
    /// once, for every attached process, and bumps the generation. The explicit
    /// way to re-pair: in frozen mode the one way a change of the system clock
    /// reaches the timeline; in tracking mode it skips the slew (and may go
    /// backward, which tracking itself never does). The calibration and, in
    /// tracking mode, the learned frequency are kept.
    pub fn set_base_info(&self) -> Result<BaseInfo> {
        if self.access == Access::HostReader {
            return Err(access::read_only(&self.name, "a reset"));
        }
        let held = self.acquire_writer_waiting()?;
        let old = self.verified_active(&held);
        let (counter, ns) = pair_counter_with_calendar(self.source, &self.calendar);
        let line = self.fresh_line(
            counter,
            ns,
            old.generation.wrapping_add(1),
            Some(old.freq_mult),
        );
        if !self.publish_retrying(&held, &line) {
            return Err(Error::new(
                ErrorKind::Timeout,
                format!(
                    "the base of segment {} changed hands during the reset; retry",
                    self.name
                ),
            ));
        }
        Ok(self.base_info())
    }

    /// Frozen mode: the counter went backwards past the tolerated skew: start a
    /// new generation at the current counter. Its calendar value is the later of
    /// the calendar clock and the old base's time at its threshold, so stamps
    /// issued before the re-base are (as far as the base can know) not passed
    /// backwards.
    fn rebase_after_backstep(&self, counter: u64, seen: u64) -> Result<u64> {
        let held = self
            .acquire_writer(seen)
            .ok_or_else(|| Error::new(ErrorKind::Timeout, "another process is re-basing"))?;
        let old = self.verified_active(&held);
        let old_reach = old.ns_at(old.counter.wrapping_add(self.threshold));
        let ns = (self.calendar)().max(old_reach.saturating_add(1));
        let line = self.fresh_line(counter, ns, old.generation.wrapping_add(1), None);
        if !self.publish_retrying(&held, &line) {
            return Err(Error::new(
                ErrorKind::Timeout,
                "another process is re-basing",
            ));
        }
        Ok(ns)
    }

    /// Waits (bounded) for the writer role, recovering it from a dead holder.
    /// Only explicit resets wait; stamps never do.
    fn acquire_writer_waiting(&self) -> Result<Held<'_>> {
        let deadline = crate::os::monotonic_ns() + 2 * self.writer_timeout.as_nanos() as u64;
        loop {
            let seen = self.header().seq.load(Acquire);
            if let Some(held) = self.acquire_writer(seen) {
                return Ok(held);
            }
            if crate::os::monotonic_ns() > deadline {
                return Err(Error::new(
                    ErrorKind::Timeout,
                    format!(
                        "the base of segment {} is held by a live process (pid {} in its own \
                         pid namespace) for over {} ms; retry, or stop that process",
                        self.name,
                        seq_writer(self.header().seq.load(Relaxed)),
                        2 * self.writer_timeout.as_millis()
                    ),
                ));
            }
            std::thread::sleep(std::time::Duration::from_micros(200));
        }
    }

    /// A consistent copy of the active base.
    pub fn base(&self) -> Base {
        let h = self.header();
        loop {
            let before = h.seq.load(Acquire);
            let slot = &h.slots[seq_slot(before)];
            let base = Base {
                counter: slot.counter.load(Relaxed),
                ns: slot.ns.load(Relaxed),
                frac: slot.frac.load(Relaxed),
                mult: slot.mult.load(Relaxed),
                generation: slot.generation.load(Relaxed),
            };
            fence(Acquire);
            if snapshot_valid(before, h.seq.load(Relaxed)) {
                return base;
            }
        }
    }

    /// A consistent copy of the active slot with its bookkeeping, and the
    /// seqlock word it was read under.
    pub(crate) fn active_line(&self) -> (Line, u64, u64, u64) {
        let h = self.header();
        loop {
            let before = h.seq.load(Acquire);
            let (line, written, check) = load_line(&h.slots[seq_slot(before)]);
            fence(Acquire);
            if snapshot_valid(before, h.seq.load(Relaxed)) {
                return (line, written, check, before);
            }
        }
    }

    /// Checks the segment as a fresh attach would: the header's invariants and
    /// checksum, and the active line's checksum, count and bounds. Cheap (a few
    /// hundred ns), never on the stamp path; for fuzz harnesses and `hrts info`.
    /// Damage is an error of kind `Corrupt`.
    pub fn validate(&self) -> Result<()> {
        let h = self.header();
        let checked = validate::header(h, &self.name)?;
        if checked.image != self.image {
            return Err(crate::segment::corrupt(
                &self.name,
                "its header differs from the one this process attached to".into(),
            ));
        }
        let (line, written, check, word) = self.active_line();
        validate::line(&line, written, check, word >> 32, self.mode, &self.rules)
            .map_err(|why| crate::segment::corrupt(&self.name, why))
    }

    /// At attach: the active line must validate (damage is an error of kind
    /// `Corrupt`); in tracking mode a line that disagrees with the calendar by
    /// more than its recorded residual and the largest slope correction explain
    /// (the system clock stepped since the last tie) is tied at once, so a fresh
    /// process does not start from a stale line.
    pub(crate) fn check_on_attach(&self) -> Result<()> {
        let (line, written, check, word) = self.active_line();
        validate::line(&line, written, check, word >> 32, self.mode, &self.rules)
            .map_err(|why| crate::segment::corrupt(&self.name, why))?;
        self.memory.keep(word >> 32, &base_of(&line));
        if self.mode == Mode::Tracking {
            let (at, cal) = self.sample(&source::read_ordered);
            let d = at.wrapping_sub(line.counter);
            if d <= self.rules.limit {
                let offset = cal as i128 - line.ns_at(at) as i128;
                let drift = ((d as i128 * self.scale.mult as i128) >> SHIFT)
                    * 2
                    * self.rules.max_slew_ppb as i128
                    / 1_000_000_000;
                if (offset - line.residual as i128).abs() > drift + 1_000_000 {
                    if let Some(held) = self.acquire_writer(word) {
                        self.tie_held(held, &source::read_ordered);
                    }
                }
            }
        }
        Ok(())
    }

    /// Calendar minus timeline now, ns, from the narrowest of five brackets
    /// (read-only: never moves or ties the base).
    pub fn offset_now(&self) -> i64 {
        let (at, cal) = self.sample(&source::read_ordered);
        let v = cal as i128 - self.ns_at(at) as i128;
        v.clamp(i64::MIN as i128, i64::MAX as i128) as i64
    }

    /// IBMTS `getBaseInfo`: frequency, base counter and the base's calendar time.
    pub fn base_info(&self) -> BaseInfo {
        let b = self.base();
        let calendar = TimeStamp::from_ns(b.ns);
        BaseInfo {
            frequency: self.freq_hz,
            counter: b.counter,
            seconds: calendar.seconds,
            microseconds: calendar.microseconds as u64,
            nanoseconds: b.ns,
            generation: b.generation,
        }
    }

    /// Test hook: takes the writer role (and its lock), scribbles over the
    /// inactive slot and returns without releasing either, as a writer killed
    /// or stopped mid-move would leave them. [`release_writer_role_for_test`]
    /// (from the same thread) finishes the tie or move and gives them back.
    ///
    /// [`release_writer_role_for_test`]: SharedBase::release_writer_role_for_test
    #[cfg(any(test, feature = "testing"))]
    pub fn hold_writer_role_for_test(&self) -> Result<()> {
        let held = self.acquire_writer_waiting()?;
        let junk = Line::paired(u64::MAX / 3, 7, 0, self.scale.mult);
        store_line(&self.header().slots[seq_slot(held.word) ^ 1], &junk, 0);
        let Held { _guard, .. } = held;
        RoleLock::keep(_guard);
        Ok(())
    }

    /// Test hook: ends a hold of [`hold_writer_role_for_test`] taken by this
    /// thread: ties (tracking) or moves (frozen) and releases the role and its
    /// lock. `false`: this thread holds no such role.
    ///
    /// [`hold_writer_role_for_test`]: SharedBase::hold_writer_role_for_test
    #[cfg(any(test, feature = "testing"))]
    pub fn release_writer_role_for_test(&self) -> bool {
        let Some(guard) = self.role.adopt() else {
            return false;
        };
        let w = self.header().seq.load(Acquire);
        if seq_writer(w) != (crate::os::pid() as u64 & SEQ_PID_MASK) as u32 {
            return false;
        }
        let held = Held {
            word: w & !SEQ_STALE,
            stale: false,
            _guard: guard,
        };
        if self.mode == Mode::Tracking {
            return self.tie_held(held, &source::read_ordered).is_some();
        }
        let old = self.verified_active(&held);
        self.publish_retrying(&held, &old)
    }

    /// Test hook: the writer role's holder as the seqlock word names it (pid in
    /// its own pid namespace, 0 when free) and whether the word is marked stale.
    #[cfg(any(test, feature = "testing"))]
    pub fn writer_role_for_test(&self) -> (u32, bool) {
        let w = self.header().seq.load(Acquire);
        (seq_writer(w), seq_stale(w))
    }
}

/// The writer role, held by this thread: the seqlock word it holds (unmarked),
/// whether the word it replaced carried the stale mark, and the role's lock,
/// released when this is dropped (after the publication).
pub(crate) struct Held<'a> {
    word: u64,
    stale: bool,
    _guard: Guard<'a>,
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

/// The four words of `line` a stamp uses, and its generation.
fn base_of(line: &Line) -> Base {
    Base {
        counter: line.counter,
        ns: line.ns,
        frac: line.frac,
        mult: line.mult,
        generation: line.generation,
    }
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

/// A slot's line, `written` and `check`, as stored (not validated).
pub(crate) fn load_line(slot: &Slot) -> (Line, u64, u64) {
    let l = |a: &AtomicU64| a.load(Relaxed);
    (
        Line {
            counter: l(&slot.counter),
            ns: l(&slot.ns),
            frac: l(&slot.frac),
            mult: l(&slot.mult),
            generation: l(&slot.generation),
            freq_mult: l(&slot.freq_mult),
            rate_mult: l(&slot.rate_mult),
            residual: l(&slot.residual) as i64,
            tie_ns: l(&slot.tie_ns),
        },
        l(&slot.written),
        l(&slot.check),
    )
}

/// Reads the calendar between two counter reads several times and keeps the
/// tightest bracket, so the pairing error is a few tens of nanoseconds.
pub(crate) fn pair_counter_with_calendar(source: SourceId, calendar: &Calendar) -> (u64, u64) {
    let mut best = (u64::MAX, 0, 0);
    for _ in 0..7 {
        let before = source::read_ordered(source);
        let ns = calendar();
        let after = source::read_ordered(source);
        let width = after.wrapping_sub(before);
        if width < best.0 {
            best = (width, before.wrapping_add(width / 2), ns);
        }
    }
    (best.1, best.2)
}

/// Stores a line with its bookkeeping and checksum.
pub(crate) fn store_line(slot: &Slot, line: &Line, written: u64) {
    let words = validate::words_of(line, written);
    let fields = [
        &slot.counter,
        &slot.ns,
        &slot.frac,
        &slot.mult,
        &slot.generation,
        &slot.freq_mult,
        &slot.rate_mult,
        &slot.residual,
        &slot.tie_ns,
        &slot.written,
    ];
    for (a, v) in fields.iter().zip(words) {
        a.store(v, Relaxed);
    }
    slot.check.store(slot_check(&words), Relaxed);
    slot.quick.store(
        slot_quick(line.counter, line.ns, line.frac, line.mult),
        Relaxed,
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ibmts_line_matches_figure_4() {
        let ts = TimeStamp {
            seconds: 1_019_168_389,
            microseconds: 13_063,
        };
        assert_eq!(ts.ibmts_line(), "1019168389.013063 = 3CBF4685.00003307");
        assert_eq!(TimeStamp::from_ns(1_019_168_389_013_063_999), ts);
    }
}
