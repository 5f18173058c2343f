//! Stamps that say how wrong they may be: a TrueTime-style interval
//! `[earliest, latest]` around a stamp, which holds true time as long as the
//! time service's bound holds.
//!
//! The writer role's holder learns the system clock's error at every tie (the
//! host daemon from chronyd or the kernel, a per-user segment from the
//! kernel) and publishes it in the page's bound area with the line's own
//! error at that tie. A reader then widens its stamp by
//!
//! ```text
//! bound + line error + cross-CPU shift bound
//!       + (drift + |line slope − learned frequency|) × |now − as of|
//! ```
//!
//! The slope term is there because a tie's line runs at the learned frequency
//! plus the slew that absorbs its error over one tie interval: while ties go
//! on, the next one ends the slew; once they stop (a stopped daemon, a process
//! that no longer stamps), the line keeps the slewed slope, up to the largest
//! slew, far more than the clock's own drift.
//!
//! It ages the status itself: synchronized only while the word is fresh,
//! free-running after that (the interval growing at that rate), unknown
//! past void-after, when it fails instead of guessing. An unsynchronized
//! clock, a frozen segment (which does not follow the clock) and a page
//! without the area (minor below 3) give errors, never an interval.

use crate::clock::bound::{self, BoundSource, BoundStatus, Leap, Learned};
use crate::clock::convert::SHIFT;
use crate::error::{Error, ErrorKind, Result};
use crate::segment::config::{BoundConfig, Mode};
use crate::segment::layout::*;
use crate::segment::SharedBase;
use std::sync::atomic::fence;
use std::sync::atomic::Ordering::{Acquire, Relaxed, Release};

/// An interval that holds true time, with the status it was given under.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bounded {
    /// Epoch ns no later than true time.
    pub earliest: u64,
    /// Epoch ns no earlier than true time.
    pub latest: u64,
    /// `Synchronized` or `FreeRunning` (other statuses are errors).
    pub status: BoundStatus,
}

/// The bound as the page holds it, aged to now (`hrts info`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BoundState {
    pub status: BoundStatus,
    pub source: BoundSource,
    pub leap: Leap,
    /// The published bound, ns.
    pub bound_ns: u64,
    /// The line's own error at the last learning, ns.
    pub line_error_ns: u64,
    pub drift_ppb: u64,
    /// Time since the bound was learned, ns.
    pub age_ns: u64,
    /// Half the interval a stamp now gets, ns (0 unless bounded).
    pub half_width_ns: u64,
    /// The counter's cross-CPU shift bound, ns (part of every half width).
    pub shift_ns: u64,
    /// How long after its learning the word counts as synchronized, ns.
    pub fresh_ns: u64,
    /// How far the active line's slope is from the learned frequency, ppb
    /// (its slew), rounded up: the interval grows at this rate on top of the
    /// drift.
    pub slope_error_ppb: u64,
}

impl BoundState {
    /// The widest half width a stamp gets while this word stays
    /// synchronized: its drift term grown to the end of the freshness
    /// window. A reader that keeps one width for a stretch of stamps (a
    /// trace merge) takes this one, never an interval narrower than a stamp
    /// between two learnings got.
    pub fn widest_synchronized_ns(&self) -> u64 {
        let rate = self.drift_ppb.saturating_add(self.slope_error_ppb);
        let drift = (self.fresh_ns / 1_000 + 1).saturating_mul(rate) / 1_000_000 + 1;
        self.bound_ns
            .saturating_add(self.line_error_ns)
            .saturating_add(self.shift_ns)
            .saturating_add(drift)
            // A stamp's own rounding up (`aged`): its extra nanosecond, and
            // up to two for rates taken per tick rather than in ppb.
            .saturating_add(3)
            // Around an announced leap, a second more (`clock::leap`).
            .saturating_add(if self.leap == Leap::None {
                0
            } else {
                1_000_000_000
            })
    }
}

/// What the area held, read whole.
#[derive(Clone, Copy)]
struct Published {
    /// The seqlock count (low 32 bits) of the line the word was published
    /// for; `None` from a writer that did not record it.
    line_count: Option<u32>,
    bound_ns: u64,
    as_of: u64,
    drift_ppb: u64,
    line_error_ns: u64,
    status: BoundStatus,
    source: BoundSource,
    leap: Leap,
    fresh_ns: u64,
    void_ns: u64,
}

/// A second more on each side of a stamp at `stamp` (aged `age_ns` past
/// the word) in the neighbourhood of the leap the word announces.
#[cold]
fn leap_widening(p: &Published, stamp: u64, age_ns: u64) -> u64 {
    crate::clock::leap::widening_ns(p.leap, stamp.saturating_sub(age_ns), stamp)
}

/// The state word's flag: its upper 32 bits hold the count of the line the
/// word was published for.
const STATE_COUNTED: u64 = 1 << 24;

impl Published {
    /// Whether a stamp made on the line of seqlock count `count` may be given
    /// this word's interval: unless the word was published for a line after
    /// the next one. The next one's word also holds for the line it replaces;
    /// an older word stands for lines published without a tie (a repair, a
    /// reset), as it did before words named their lines.
    #[inline(always)]
    fn holds_for(&self, count: u64) -> bool {
        match self.line_count {
            Some(c) => (c.wrapping_sub(count as u32) as i32) <= 1,
            None => true,
        }
    }
}

/// Publishes a bound in `a` (the writer role's holder, or a segment's
/// creator before the page is ready) for the line of seqlock count
/// `line_count`, with the writer's own drift and void-after (`settings`:
/// its configuration's, from `HRTS_BOUND_*` or its front end's options).
/// Odd `version` while writing: a writer that dies in the middle leaves it
/// odd, and readers say "unknown" until the next one writes it whole.
pub(crate) fn publish(
    a: &BoundArea,
    settings: &BoundConfig,
    tie_interval_ns: u64,
    learned: Learned,
    line_error_ns: u64,
    as_of: u64,
    line_count: u64,
) {
    let (drift_ppb, void_ns) = (settings.drift_ppb(), settings.void_ns());
    // Fresh for three tie intervals (at least a second): a live writer learns
    // again at every one.
    let fresh_ns = tie_interval_ns
        .saturating_mul(3)
        .max(1_000_000_000)
        .min(void_ns);
    let state = learned.status.code() as u64
        | (learned.source as u64) << 8
        | (learned.leap as u64) << 16
        | STATE_COUNTED
        | (line_count & 0xffff_ffff) << 32;
    let v = a.version.load(Relaxed);
    let writing = (v | 1).wrapping_add(if v & 1 == 1 { 2 } else { 0 });
    a.version.store(writing, Relaxed);
    fence(Release);
    a.bound_ns.store(learned.bound_ns, Relaxed);
    a.as_of.store(as_of, Relaxed);
    a.drift_ppb.store(drift_ppb, Relaxed);
    a.line_error_ns.store(line_error_ns, Relaxed);
    a.state.store(state, Relaxed);
    a.fresh_ns.store(fresh_ns, Relaxed);
    a.void_ns.store(void_ns, Relaxed);
    a.version.store(writing.wrapping_add(1), Release);
}

impl SharedBase {
    fn bound_area(&self) -> &BoundArea {
        crate::segment::bound_area_of(&self.page)
    }

    /// Tests: publishes a word for the active line, as a tie would, with the
    /// line's error (ns) at counter `as_of`.
    #[cfg(test)]
    pub(crate) fn publish_bound(&self, learned: Learned, line_error_ns: u64, as_of: u64) {
        let count = seq_count(self.header().seq.load(Acquire));
        self.publish_bound_for(count, learned, line_error_ns, as_of);
    }

    /// The writer role's holder, in a tie: publishes what it learned of the
    /// clock's error with the line's error (ns) at counter `as_of`, for the
    /// line of seqlock count `count` (the line it is about to publish).
    pub(crate) fn publish_bound_for(
        &self,
        count: u64,
        learned: Learned,
        line_error_ns: u64,
        as_of: u64,
    ) {
        let interval = self.header().tie_interval_ns.load(Relaxed);
        publish(
            self.bound_area(),
            &self.bound_writer,
            interval,
            learned,
            line_error_ns,
            as_of,
            count,
        );
    }

    /// Turns a synchronized word into a free-running one, keeping its numbers
    /// (the host daemon, when a round could not tie: the line is no longer
    /// being kept to the clock, so no reader may call its interval
    /// synchronized until the next tie publishes a fresh word).
    pub(crate) fn demote_bound(&self) {
        let a = self.bound_area();
        let v = a.version.load(Acquire);
        let state = a.state.load(Relaxed);
        if v == 0 || v & 1 == 1 || (state & 0xff) != BoundStatus::Synchronized.code() as u64 {
            return;
        }
        let demoted = (state & !0xff) | BoundStatus::FreeRunning.code() as u64;
        a.version.store(v | 1, Relaxed);
        fence(Release);
        a.state.store(demoted, Relaxed);
        a.version.store(v.wrapping_add(2), Release);
    }

    /// What the word of the tie that published the line of seqlock count
    /// `count` says for learning the frequency from it: its sample (`as_of`),
    /// its line error (at least half its bracket) and its drift (ppb);
    /// `None` when the area holds no word of that line (a repair or reset
    /// published it, or its writer did not name lines).
    pub(crate) fn tie_word(&self, count: u64) -> Option<(u64, u64, u64)> {
        let p = self.published_to_writer()?;
        (p.line_count == Some(count as u32)).then_some((p.as_of, p.line_error_ns, p.drift_ppb))
    }

    /// How far from the line of seqlock count `count` (whose slope is
    /// `slope_diff` from its learned frequency, `mult` units) true time may
    /// be at counter `at`, as that line's word says: the half width a stamp
    /// there gets, whatever the word's age. `None` when the area holds no
    /// word of that line, or one whose status gives its numbers no meaning
    /// (unsynchronized, unknown).
    pub(crate) fn half_width_on(&self, count: u64, at: u64, slope_diff: u64) -> Option<u64> {
        let p = self.published_to_writer()?;
        let meaningful = p.status.bounded() || p.status == BoundStatus::Disrupted;
        if p.line_count != Some(count as u32) || !meaningful {
            return None;
        }
        let span = at.wrapping_sub(p.as_of) as i64;
        let drift = self
            .scale
            .mult
            .checked_mul(p.drift_ppb)
            .map_or(u64::MAX, |x| x / 1_000_000_000 + 1);
        let rate = drift.saturating_add(slope_diff) as u128;
        let growth = ((span.unsigned_abs() as u128 * rate) >> SHIFT).min(u64::MAX as u128) as u64;
        Some(
            p.bound_ns
                .saturating_add(p.line_error_ns)
                .saturating_add(self.shift_ns())
                .saturating_add(growth)
                .saturating_add(1),
        )
    }

    /// Learns the clock's error from the sources this process may ask (a
    /// test build's override, else the kernel).
    pub(crate) fn learn_bound(&self) -> Learned {
        bound::learn()
    }

    /// The area as the writer sees it, in a tie: only the writer role's
    /// holder (or the host daemon) publishes, so a word it finds half written
    /// was left by a writer that died there (or by damage), and the tie's own
    /// publication replaces it: `None` at once, without the readers' wait.
    fn published_to_writer(&self) -> Option<Published> {
        self.published_waiting(0)
    }

    /// The area, read whole; `None` while (or after) a writer is in the
    /// middle of it, or on a page without it.
    #[inline(always)]
    fn published(&self) -> Option<Published> {
        // A writer is in the middle of it for a few stores, unless it was
        // preempted or stopped there: look again for up to 5 ms (yielding),
        // then say "no bound" rather than wait on a writer that may be gone.
        self.published_waiting(5_000_000)
    }

    /// `published`, looking again for up to `wait_ns` while a writer is in
    /// the middle of the area.
    #[inline(always)]
    fn published_waiting(&self, wait_ns: u64) -> Option<Published> {
        if self.minor_area().layout_minor.load(Relaxed) < 3 {
            return None;
        }
        let a = self.bound_area();
        let mut deadline = None;
        loop {
            let v = a.version.load(Acquire);
            if v == 0 {
                return None;
            }
            if v & 1 == 1 {
                let now = crate::os::monotonic_ns();
                if now >= *deadline.get_or_insert(now + wait_ns) {
                    return None;
                }
                std::thread::yield_now();
                continue;
            }
            let p = (
                a.bound_ns.load(Relaxed),
                a.as_of.load(Relaxed),
                a.drift_ppb.load(Relaxed),
                a.line_error_ns.load(Relaxed),
                a.state.load(Relaxed),
                a.fresh_ns.load(Relaxed),
                a.void_ns.load(Relaxed),
            );
            fence(Acquire);
            if a.version.load(Relaxed) != v {
                continue; // a new publication came in between: read it
            }
            return Some(Published {
                line_count: (p.4 & STATE_COUNTED != 0).then_some((p.4 >> 32) as u32),
                bound_ns: p.0,
                as_of: p.1,
                drift_ppb: p.2,
                line_error_ns: p.3,
                status: BoundStatus::from_code((p.4 & 0xff) as u32)?,
                source: BoundSource::from_code(((p.4 >> 8) & 0xff) as u32),
                leap: Leap::from_code(((p.4 >> 16) & 0xff) as u32),
                fresh_ns: p.5,
                void_ns: p.6,
            });
        }
    }

    /// Ticks of this segment's counter as ns (the calibrated scale).
    #[inline(always)]
    fn ticks_ns(&self, ticks: u64) -> u64 {
        ((ticks as u128 * self.scale.mult as u128) >> SHIFT).min(u64::MAX as u128) as u64
    }

    /// The cross-CPU shift bound, ns.
    #[inline(always)]
    fn shift_ns(&self) -> u64 {
        self.ticks_ns(self.margin_ticks)
    }

    /// How far a line's slope (`mult`) is from its learned frequency, ppb,
    /// rounded up: the rate `hrts info` shows (u64 arithmetic: a u128 division
    /// costs more than a stamp).
    fn slope_error_ppb(mult: u64, freq_mult: u64) -> u64 {
        match (
            mult.abs_diff(freq_mult).checked_mul(1_000_000_000),
            mult.min(freq_mult),
        ) {
            (_, 0) => u64::MAX,
            (Some(x), m) => x / m + 1,
            (None, _) => u64::MAX,
        }
    }

    /// The bound aged to `counter`, for a stamp made on a line whose slope is
    /// `slope_diff` (`mult` units) from the learned frequency: (status, age
    /// ns, half width ns).
    ///
    /// The interval grows by `age ticks × (drift + slope_diff) >> SHIFT`,
    /// both rates in the stamp's own units: the slope term is the line's
    /// divergence from the learned frequency, the drift term the calibrated
    /// scale times the drift rate (rounded up). An ordered read waits for
    /// everything before it to finish, so in a loop of bounded stamps the
    /// latency of this arithmetic after the counter read is paid in full: it
    /// is one product and a few additions, no division.
    ///
    /// The line's error is known at `as_of` and grows at that rate in both
    /// directions, so a stamp whose counter precedes the word's sample (its
    /// reader was preempted between its counter read and its read of the
    /// word, while a tie sampled and published) widens by the distance back
    /// to it. Clamping that distance to 0 missed `CLOCK_REALTIME` by up to
    /// 1.4 µs at the largest slew, twice in 21 M stamps (`short_ties`).
    /// Only the freshness counts forward age alone.
    #[inline(always)]
    fn aged(&self, p: &Published, counter: u64, slope_diff: u64) -> (BoundStatus, u64, u64) {
        let since = counter.wrapping_sub(p.as_of) as i64;
        let age_ticks = since.max(0) as u64;
        let span_ticks = since.unsigned_abs();
        let age_ns = self.ticks_ns(age_ticks);
        let status = match p.status {
            _ if self.mode == Mode::Frozen => BoundStatus::Unknown,
            _ if age_ns > p.void_ns => BoundStatus::Unknown,
            BoundStatus::Synchronized if age_ns > p.fresh_ns => BoundStatus::FreeRunning,
            s => s,
        };
        if !status.bounded() {
            return (status, age_ns, 0);
        }
        let drift_mult = self
            .scale
            .mult
            .checked_mul(p.drift_ppb)
            .map_or(u64::MAX, |x| x / 1_000_000_000 + 1);
        let rate = drift_mult.saturating_add(slope_diff);
        let growth = ((span_ticks as u128 * rate as u128) >> SHIFT).min(u64::MAX as u128) as u64;
        let half_width_ns = p
            .bound_ns
            .saturating_add(p.line_error_ns)
            .saturating_add(self.shift_ns())
            .saturating_add(1) // the growth, rounded up
            .saturating_add(growth);
        (status, age_ns, half_width_ns)
    }

    /// The disruptions the writers saw (`None` on a page made before they
    /// were recorded, minor below 5).
    pub fn disruptions(&self) -> Option<crate::segment::disruption::Disruptions> {
        (self.minor_area().layout_minor.load(Relaxed) >= 5).then(|| {
            crate::segment::disruption::read(crate::segment::disruption_area_of(&self.page))
        })
    }

    /// The bound area's version word: it changes whenever a writer publishes a
    /// new word (0 on a page without the area). A trace writer compares it at
    /// each event to record every word its events were stamped under.
    pub fn bound_version(&self) -> u64 {
        if self.minor_area().layout_minor.load(Relaxed) < 3 {
            return 0;
        }
        self.bound_area().version.load(Relaxed)
    }

    /// The bound as it stands now (`hrts info`).
    pub fn bound_state(&self) -> Option<BoundState> {
        let p = self.published()?;
        let stamp = self.stamp_for_bound();
        let (line, ..) = self.active_line();
        let tracking = self.mode == Mode::Tracking;
        let slope_diff = if tracking {
            line.mult.abs_diff(line.freq_mult)
        } else {
            0
        };
        let (status, age_ns, mut half_width_ns) = self.aged(&p, stamp.counter, slope_diff);
        if status.bounded() {
            half_width_ns = half_width_ns.saturating_add(leap_widening(&p, stamp.ns, age_ns));
        }
        Some(BoundState {
            status,
            source: p.source,
            leap: p.leap,
            bound_ns: p.bound_ns,
            line_error_ns: p.line_error_ns,
            drift_ppb: p.drift_ppb,
            age_ns,
            half_width_ns,
            shift_ns: self.shift_ns(),
            fresh_ns: p.fresh_ns,
            slope_error_ppb: if tracking {
                Self::slope_error_ppb(line.mult, line.freq_mult)
            } else {
                0 // frozen: no interval at all
            },
        })
    }

    /// An interval `[earliest, latest]` that holds true time now (TrueTime's
    /// `TT.now()`), or an error saying why none can be given: the clock is
    /// not synchronized, the bound's source has been silent past void-after,
    /// the segment is frozen, or its page predates bounds.
    ///
    /// Inlined into its callers always: the JNI library builds this crate
    /// for size, where a division by a constant stays a `div` instruction.
    ///
    /// The word names the line it was published for (every tie publishes its
    /// word just before its line, holding for the line it replaces too), and a
    /// stamp is paired only with the word of its own line or of the next one:
    /// a reader preempted across ties would otherwise pair an old line's stamp
    /// with a later line's error, and stamps again instead.
    ///
    /// The writer sees a disruption (a counter that jumped, stopped or
    /// changed rate, a stepped clock) only at its next round, and the stamps
    /// taken before then are on a line nobody has checked. So every stamp is
    /// bracketed by the calendar clock the ties follow, and an interval that
    /// excludes the whole bracket is refused as `disrupted`: the line and the
    /// clock it is tied to disagree by more than the whole bound, so one of
    /// them was disrupted. The bracket is one read of the clock after the
    /// stamp and that reading less the counter's ticks from the stamp's
    /// first counter read to a read after the clock's (a second read of the
    /// clock cost 22 ns on the Intel guest, the counter 8; 2026-11-28): it
    /// holds the clock's reading at the stamp unless the counter ran slower
    /// than its calibrated rate, which only narrows it (more refusals, never
    /// a wrong interval). A reader preempted in between only widens it.
    #[inline(always)]
    pub fn now_bounded(&self) -> Result<Bounded> {
        loop {
            let stamp = self.stamp_for_bound();
            let after = (self.calendar)();
            // Read at once, not only when an interval ends before `after`:
            // whatever runs before this read widens the bracket. Read after
            // the word (whose wait for a writer can last 5 ms), it let a line
            // the counter had set 5 ms back give an interval that missed the
            // clock (the disruption test, tried and undone on 2026-11-28).
            let since = self.ticks().wrapping_sub(stamp.first_counter);
            // A read behind the stamp's (another CPU's counter): no ticks.
            let before = after.saturating_sub(if (since as i64) > 0 {
                self.ticks_ns(since)
            } else {
                0
            });
            let Some(p) = self.published() else {
                return Err(self.no_bound(None));
            };
            if !p.holds_for(stamp.count) {
                continue;
            }
            return match self.aged(&p, stamp.counter, stamp.slope_diff) {
                (status, age_ns, half) if status.bounded() => {
                    let half = if p.leap == Leap::None {
                        half
                    } else {
                        half.saturating_add(leap_widening(&p, stamp.ns, age_ns))
                    };
                    let b = Bounded {
                        earliest: stamp.ns.saturating_sub(half),
                        latest: stamp.ns.saturating_add(half),
                        status,
                    };
                    if b.earliest > after || b.latest < before {
                        return Err(self.disagrees(&b, before, after));
                    }
                    Ok(b)
                }
                (status, age_ns, _) => {
                    // A copy for the error: a reference to `p` itself kept the
                    // whole word in memory on every stamp, nine stores.
                    let word = p;
                    Err(self.no_bound(Some((status, &word, age_ns))))
                }
            };
        }
    }

    /// TrueTime's `after(t)`: true time is certainly later than `t`.
    pub fn after(&self, t: u64) -> Result<bool> {
        Ok(self.now_bounded()?.earliest > t)
    }

    /// TrueTime's `before(t)`: true time is certainly earlier than `t`.
    pub fn before(&self, t: u64) -> Result<bool> {
        Ok(self.now_bounded()?.latest < t)
    }

    /// Commit wait: returns once `after(t)` holds (sleeping most of the
    /// remaining width, then checking), so that every later interval, in any
    /// process, starts after `t`. Fails as `now_bounded` does.
    pub fn commit_wait(&self, t: u64) -> Result<()> {
        loop {
            let b = self.now_bounded()?;
            if b.earliest > t {
                return Ok(());
            }
            let left = t - b.earliest + 1;
            std::thread::sleep(std::time::Duration::from_nanos((left / 2).max(1_000)));
        }
    }

    /// Why no interval: the stamp's interval `b` excludes the calendar
    /// clock, read at `before` and `after` around it.
    #[cold]
    fn disagrees(&self, b: &Bounded, before: u64, after: u64) -> Error {
        let (by, side) = if b.earliest > after {
            (b.earliest - after, "ahead of")
        } else {
            (before - b.latest, "behind")
        };
        Error::new(
            ErrorKind::Unsynchronized,
            format!(
                "the line of segment {} is {by} ns {side} the system clock, beyond its whole \
                 interval (half width {} ns): the counter or the clock was disrupted (a \
                 migration, a resume, a counter that jumped or changed rate, a stepped clock), \
                 so no interval can be given until its writer's next round has seen it and \
                 learned the line again (`hrts info` names it)",
                self.name,
                (b.latest - b.earliest) / 2
            ),
        )
    }

    /// Why no interval: `state` is the status the area's word aged to, the
    /// word, and its age (ns); `None` when there is no word.
    #[cold]
    fn no_bound(&self, state: Option<(BoundStatus, &Published, u64)>) -> Error {
        let why = match state {
            _ if self.mode == Mode::Frozen => format!(
                "segment {} is frozen: it does not follow the system clock, so its stamps have \
                 no bound; use a tracking segment (HRTS_MODE=tracking) for intervals",
                self.name
            ),
            None => format!(
                "segment {} holds no bound yet (no tie since it was made, a writer was \
                 interrupted, or its page was made by an hrts without bounds); stamp again \
                 after its next tie",
                self.name
            ),
            Some((BoundStatus::Unsynchronized, p, _)) => format!(
                "the system clock is not synchronized ({} says so; its bound {} ns is not \
                 trusted): no interval can be given; run chronyd (or another NTP service) to \
                 keep the clock",
                p.source.name(),
                p.bound_ns
            ),
            Some((BoundStatus::Disrupted, ..)) => {
                let what = self
                    .disruptions()
                    .and_then(|d| d.last_kind)
                    .map_or("a disruption", |k| k.name());
                format!(
                    "the counter or the clock of segment {} was disrupted ({what}; see `hrts \
                     info`): no interval can be given until its writer has learned the \
                     counter's rate again (two ties that agree, a few tie intervals)",
                    self.name
                )
            }
            Some((BoundStatus::Unknown, p, age_ns))
                if age_ns <= p.void_ns && p.source == BoundSource::Vmclock =>
            {
                format!(
                    "the hypervisor's VMClock page (HRTS_VMCLOCK) says its clock is unknown or \
                     unreliable, or its writer could not read the page: no interval for segment \
                     {} can be given until the hypervisor's clock is synchronized again",
                    self.name
                )
            }
            Some((BoundStatus::Unknown, p, age_ns)) if age_ns <= p.void_ns => format!(
                "the writer of segment {} could not learn the system clock's error (no source \
                 answered: neither chronyd nor the kernel): no interval can be given",
                self.name
            ),
            Some((.., age_ns)) => format!(
                "the bound of segment {} is {:.1} s old, past its void-after: its writer \
                 (the host daemon, or the segment's ties) stopped learning it; no interval can \
                 be given until it does",
                self.name,
                age_ns as f64 / 1e9
            ),
        };
        Error::new(ErrorKind::Unsynchronized, why)
    }
}

#[cfg(test)]
mod tests;
