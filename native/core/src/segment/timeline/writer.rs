//! The writer role: taken by a CAS on the seqlock word under the role's lock
//! (see `role`), held by one thread at a time, and given back by publishing a
//! line into the inactive slot. What a holder does with it: move the base
//! (frozen mode), tie it (tracking, see `tracking`), re-base after a counter
//! reset, re-pair on request (`set_base_info`), and repair the damage it
//! finds on the way.

use super::{base_of, load_line, pair_counter_with_calendar, store_line, BaseInfo};
use crate::clock::bound::{BoundStatus, Learned};
use crate::clock::convert::SHIFT;
use crate::clock::source::{self, SourceId};
use crate::error::{Error, ErrorKind, Result};
use crate::segment::access::{self, Access};
use crate::segment::config::Mode;
use crate::segment::disruption;
use crate::segment::layout::*;
#[cfg(any(test, feature = "testing"))]
use crate::segment::role::RoleLock;
use crate::segment::role::{Guard, Take};
use crate::segment::tracking::{self, Line, TieKind};
use crate::segment::validate;
use crate::segment::SharedBase;
use std::sync::atomic::fence;
use std::sync::atomic::Ordering::{AcqRel, Acquire, Relaxed, Release};

impl SharedBase {
    /// Takes the writer role if nobody holds it, or if its holder is dead; the
    /// caller's snapshot `seen` must still be current, which makes the slot we
    /// copy from the active one. The role's lock is taken first: a holder named
    /// in `seen` holds it while it lives, so getting it proves that holder dead
    /// (or already done, and then the CAS fails).
    pub(super) fn acquire_writer(&self, seen: u64) -> Option<Held<'_>> {
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
    pub(super) fn publish_retrying(&self, held: &Held<'_>, new: &Line) -> bool {
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
    pub(super) fn verified_active(&self, held: &Held<'_>) -> Line {
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
    pub(super) fn previous_line(&self, word: u64) -> std::result::Result<Line, Line> {
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
    pub(super) fn tie_held(
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
        // The hypervisor's page, where there is one, on top of the time
        // service's word: its status and max error, and its marker.
        let look = self.vmclock.look(self.learn_bound());
        let learned = look.learned;
        let half_bracket = ((width as u128 * self.scale.mult as u128) >> SHIFT) as u64 / 2 + 1;
        // Local disruption detection: this process's counter against
        // CLOCK_MONOTONIC_RAW and CLOCK_BOOTTIME since its last tie. A tie
        // that sees one learns nothing (its baseline spans it), and every tie
        // publishes `disrupted` until the rate is learned again.
        let drift_ppb = self.bound_writer.drift_ppb();
        let ticks_ns = |t: u64| ((t as u128 * self.scale.mult as u128) >> SHIFT) as u64;
        let area = (self.mode == Mode::Tracking
            && self.minor_area().layout_minor.load(Relaxed) >= 5)
            .then(|| crate::segment::disruption_area_of(&self.page));
        let seen = match area {
            Some(_) => {
                let local = self.watch.check(|| read(self.source), drift_ppb, ticks_ns);
                if look.disrupted {
                    self.watch.relearn();
                    Some(disruption::Kind::VmclockMarker)
                } else {
                    local.or_else(|| {
                        self.stepped(&old, held.word, at, cal, &learned, half_bracket)
                            .then_some(disruption::Kind::ClockStep)
                    })
                }
            }
            None => None,
        };
        if let (Some(a), Some(kind)) = (area, seen) {
            disruption::record(a, kind, cal);
        }
        let phase = area.map_or(disruption::PHASE_NONE, |a| a.phase.load(Relaxed));
        let published_as = if phase == disruption::PHASE_NONE {
            learned
        } else {
            Learned {
                status: BoundStatus::Disrupted,
                ..learned
            }
        };
        // The frequency is learned from the tie that published the old line,
        // as its word tells: its sample, and its line error less what its
        // line had to absorb (at least half its bracket). A learned frequency
        // may be off by a quarter of the drift bound at most: the rest is
        // for the clock's own drift until the next learning.
        let learning = if seen.is_some() {
            None
        } else {
            self.tie_word(seq_count(held.word))
                .map(|(prior_at, line_error, drift_ppb)| tracking::Learning {
                    prior_at,
                    cal_error_ns: line_error
                        .saturating_sub(old.residual.unsigned_abs())
                        .saturating_add(half_bracket),
                    max_error_ppb: drift_ppb / 4,
                })
        };
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
                learning,
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
                published_as,
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
        // Disrupted: learned again once two learnings agree within the drift;
        // then the time service's word goes out for the line at once.
        if let Some(a) = area.filter(|_| phase != disruption::PHASE_NONE) {
            let rate = (t.line.rate_mult != 0).then_some(t.line.freq_mult);
            let drift = (old.freq_mult as u128 * drift_ppb as u128 / 1_000_000_000) as u64;
            let next = disruption::next_phase(phase, rate, old.freq_mult, drift);
            a.phase.store(next, Relaxed);
            if next == disruption::PHASE_NONE {
                let either = t.line.residual.unsigned_abs().max(t.offset.unsigned_abs());
                self.publish_bound_for(
                    seq_count(held.word).wrapping_add(1),
                    learned,
                    either.saturating_add(half_bracket),
                    at,
                );
            }
        }
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

    /// Whether the calendar read `cal` at counter `at` is a step of the
    /// clock against `old`, the line of the held word `word` (see
    /// `disruption::is_step`): a step slewed through (or followed forward)
    /// while synchronized would leave intervals that missed true time, or
    /// bound a line the clock left.
    fn stepped(
        &self,
        old: &Line,
        word: u64,
        at: u64,
        cal: u64,
        learned: &Learned,
        half_bracket: u64,
    ) -> bool {
        let slope_diff = old.mult.abs_diff(old.freq_mult);
        let Some(half) = self.half_width_on(seq_count(word), at, slope_diff) else {
            return false;
        };
        let offset = (((cal as i128) << SHIFT) - old.fixed_at(at)) >> SHIFT;
        disruption::is_step(offset, half, learned, half_bracket)
    }

    /// Moves the base forward to `counter`, keeping the timeline bit-identical
    /// (frozen mode).
    pub(super) fn try_move(&self, counter: u64, seen: u64) -> bool {
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
    pub(super) fn rebase_after_backstep(&self, counter: u64, seen: u64) -> Result<u64> {
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
pub(super) struct Held<'a> {
    word: u64,
    stale: bool,
    _guard: Guard<'a>,
}
