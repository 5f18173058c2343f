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
//!
//! The module in three parts: `stamp` (the read path every stamp takes, which
//! never locks and never waits), `writer` (taking the writer role, moving,
//! tying, re-basing and publishing a line) and, here, the line as stored, the
//! base as read, and the checks made at attach and on request.

mod stamp;
mod writer;

use crate::clock::convert::SHIFT;
use crate::clock::source::{self, SourceId};
use crate::error::Result;
use crate::segment::config::{Calendar, Mode};
use crate::segment::layout::*;
use crate::segment::tracking::Line;
use crate::segment::validate;
use crate::segment::SharedBase;
use std::sync::atomic::Ordering::{Acquire, Relaxed};
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
