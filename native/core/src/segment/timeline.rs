//! Reading and moving the shared base.
//!
//! A stamp is `ns + ((counter - counter_base) * mult + frac) >> shift`, computed
//! from one consistent snapshot of the active slot. Readers never lock and never
//! wait: a writer always writes the inactive slot, so the only retry is the rare
//! case where two writes completed during one read.
//!
//! When the elapsed ticks pass the wrap threshold, the first reader to notice
//! takes the writer role with a CAS on the seqlock word and moves the base
//! forward, carrying the sub-nanosecond remainder, so the timeline is exactly the
//! one an unmoved base would give. Readers that lose the race use the exact u128
//! path for that one stamp.

use crate::clock::source::{self, SourceId};
use crate::error::{Error, ErrorKind, Result};
use crate::segment::layout::*;
use crate::segment::SharedBase;
use std::sync::atomic::Ordering::{AcqRel, Acquire, Relaxed, Release};
use std::sync::atomic::{fence, AtomicU64};

/// One consistent copy of the base.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Base {
    pub counter: u64,
    pub ns: u64,
    pub frac: u64,
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
    pub fn now_ns(&self) -> u64 {
        self.stamp_with(source::read)
    }

    /// Epoch nanoseconds from an ordered counter read, for stamps compared across
    /// threads: the read cannot be executed before earlier instructions.
    #[inline(always)]
    pub fn now_ns_ordered(&self) -> u64 {
        self.stamp_with(source::read_ordered)
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

    /// A stamp for the counter value `read` returns, moving the base when it is
    /// past the threshold. Only real counter reads may come here: a value from
    /// the future would move everyone's base ahead of the counter.
    #[inline(always)]
    pub(crate) fn stamp_with(&self, read: impl Fn(SourceId) -> u64) -> u64 {
        let h = self.header();
        loop {
            let before = h.seq.load(Acquire);
            let slot = &h.slots[seq_slot(before)];
            let counter = read(self.source);
            let counter_base = slot.counter.load(Relaxed);
            let ns = slot.ns.load(Relaxed);
            let frac = slot.frac.load(Relaxed);
            fence(Acquire);
            let after = h.seq.load(Relaxed);
            if !snapshot_valid(before, after) {
                continue;
            }
            let delta = counter.wrapping_sub(counter_base);
            if delta <= self.threshold {
                return ns.wrapping_add(self.scale.to_ns_fast(delta, frac));
            }
            let base = Base {
                counter: counter_base,
                ns,
                frac,
                generation: slot.generation.load(Relaxed),
            };
            return self.stamp_slow(counter, base, after);
        }
    }

    /// The exact stamp of `counter` against `base`, for any distance in either
    /// direction: floor((ns·2^shift + frac + (counter − counter_base)·mult) / 2^shift).
    pub fn exact_ns(&self, counter: u64, base: &Base) -> u64 {
        let s = self.scale.shift;
        let fixed = ((base.ns as i128) << s) + base.frac as i128;
        let delta = counter.wrapping_sub(base.counter) as i64 as i128;
        ((fixed + delta * self.scale.mult as i128) >> s) as u64
    }

    #[cold]
    #[inline(never)]
    fn stamp_slow(&self, counter: u64, base: Base, seen: u64) -> u64 {
        let behind = base.counter.wrapping_sub(counter);
        if (behind as i64) > 0 {
            // Another CPU's counter may trail the one that set the base by a few
            // ticks; that is still the same timeline. Far behind means the counter
            // was reset (suspend, migration): re-base instead of going negative.
            if behind > self.backstep_limit {
                if let Ok(ns) = self.rebase_after_backstep(counter, seen) {
                    return ns;
                }
            }
            return self.exact_ns(counter, &base);
        }
        self.try_move(counter, seen);
        self.exact_ns(counter, &base)
    }

    /// Takes the writer role if nobody holds it; the caller's snapshot `seen` must
    /// still be current, which makes the slot we copy from the active one.
    fn acquire_writer(&self, seen: u64) -> Option<u64> {
        let h = self.header();
        if seq_writer(seen) != 0 {
            self.recover_if_abandoned(seen);
            return None;
        }
        let mine = (seen & !0xffff_ffff) | crate::os::pid() as u64;
        h.seq.compare_exchange(seen, mine, AcqRel, Relaxed).ok()?;
        // Orders the slot stores below after the acquisition for seqlock readers.
        fence(Release);
        let start = *self
            .start_time
            .get_or_init(|| crate::os::process_start_time(crate::os::pid()).unwrap_or(0));
        h.writer_start_time.store(start, Relaxed);
        Some(mine)
    }

    fn release_writer(&self, held: u64, new: Base) {
        let h = self.header();
        let target = &h.slots[seq_slot(held) ^ 1];
        store_slot(target, &new);
        h.seq
            .store((held & !0xffff_ffff).wrapping_add(SEQ_ONE), Release);
    }

    fn active(&self, held: u64) -> Base {
        load_slot(&self.header().slots[seq_slot(held)])
    }

    /// Moves the base forward to `counter`, keeping the timeline bit-identical.
    fn try_move(&self, counter: u64, seen: u64) -> bool {
        let Some(held) = self.acquire_writer(seen) else {
            return false;
        };
        let old = self.active(held);
        let delta = counter.wrapping_sub(old.counter);
        if (delta as i64) <= 0 {
            // Nothing to move (the counter is not ahead of the base); release unchanged.
            self.release_writer(held, old);
            return false;
        }
        let (ns, frac) = self.scale.advance(delta, old.frac);
        let new = Base {
            counter,
            ns: old.ns.wrapping_add(ns),
            frac,
            generation: old.generation,
        };
        self.release_writer(held, new);
        self.header().moves.fetch_add(1, Relaxed);
        true
    }

    /// Forces a base move to the current counter value (tests, diagnostics).
    /// Returns whether this call moved it.
    #[cfg(any(test, feature = "testing"))]
    pub fn force_move(&self) -> bool {
        let seen = self.header().seq.load(Acquire);
        self.try_move(source::read_ordered(self.source), seen)
    }

    /// IBMTS `setBaseInfo`: pairs the counter with the calendar clock anew, for
    /// every attached process, and bumps the generation. This is the one way a
    /// change of the system clock reaches the timeline.
    pub fn set_base_info(&self) -> Result<BaseInfo> {
        let held = self.acquire_writer_waiting()?;
        let old = self.active(held);
        let (counter, ns) = crate::segment::pair_counter_with_calendar(self.source, &self.calendar);
        self.release_writer(
            held,
            Base {
                counter,
                ns,
                frac: 0,
                generation: old.generation.wrapping_add(1),
            },
        );
        Ok(self.base_info())
    }

    /// The counter went backwards past the tolerated skew: start a new
    /// generation at the current counter. Its calendar value is the later of the
    /// calendar clock and the old base's time at its threshold, so stamps issued
    /// before the re-base are (as far as the base can know) not passed backwards.
    fn rebase_after_backstep(&self, counter: u64, seen: u64) -> Result<u64> {
        let held = self
            .acquire_writer(seen)
            .ok_or_else(|| Error::new(ErrorKind::Timeout, "another process is re-basing"))?;
        let old = self.active(held);
        let old_reach = old
            .ns
            .saturating_add(self.scale.to_ns_exact(self.threshold, old.frac) as u64);
        let ns = (self.calendar)().max(old_reach.saturating_add(1));
        let new = Base {
            counter,
            ns,
            frac: 0,
            generation: old.generation.wrapping_add(1),
        };
        self.release_writer(held, new);
        Ok(ns)
    }

    /// Waits (bounded) for the writer role, recovering it from a dead holder.
    fn acquire_writer_waiting(&self) -> Result<u64> {
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
                        "the base of segment {} is held by live pid {} for over {} ms; retry, \
                         or stop that process",
                        self.name,
                        seq_writer(self.header().seq.load(Relaxed)),
                        2 * self.writer_timeout.as_millis()
                    ),
                ));
            }
            std::thread::sleep(std::time::Duration::from_micros(200));
        }
    }

    /// A writer that died holding the word never wrote the active slot (writers
    /// write the inactive one), so releasing the word without a flip is the whole
    /// recovery. A live holder is never robbed: it could resume and overwrite the
    /// slot readers use. A pid that was reused by a new process is told apart by
    /// its start time, once the word has sat unchanged for `writer_timeout`.
    fn recover_if_abandoned(&self, seen: u64) {
        let pid = seq_writer(seen);
        let abandoned = if !crate::os::process_alive(pid) {
            true
        } else {
            let now = crate::os::monotonic_ns();
            let mut suspect = self.suspect.lock().unwrap_or_else(|p| p.into_inner());
            match *suspect {
                Some((word, since)) if word == seen => {
                    now - since > self.writer_timeout.as_nanos() as u64
                        && crate::os::process_start_time(pid)
                            != Some(self.header().writer_start_time.load(Relaxed))
                }
                _ => {
                    *suspect = Some((seen, now));
                    false
                }
            }
        };
        if abandoned {
            let free = seen & !0xffff_ffff;
            let _ = self
                .header()
                .seq
                .compare_exchange(seen, free, AcqRel, Relaxed);
        }
    }

    /// A consistent copy of the active base.
    pub fn base(&self) -> Base {
        let h = self.header();
        loop {
            let before = h.seq.load(Acquire);
            let base = load_slot(&h.slots[seq_slot(before)]);
            fence(Acquire);
            if snapshot_valid(before, h.seq.load(Relaxed)) {
                return base;
            }
        }
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

    /// Test hook: takes the writer role, scribbles over the inactive slot and
    /// returns without releasing, as a writer killed mid-move would leave it.
    #[cfg(any(test, feature = "testing"))]
    pub fn hold_writer_role_for_test(&self) -> Result<()> {
        let held = self.acquire_writer_waiting()?;
        let junk = Base {
            counter: u64::MAX / 3,
            ns: 7,
            frac: 0,
            generation: 0,
        };
        store_slot(&self.header().slots[seq_slot(held) ^ 1], &junk);
        Ok(())
    }
}

fn load_slot(slot: &Slot) -> Base {
    Base {
        counter: slot.counter.load(Relaxed),
        ns: slot.ns.load(Relaxed),
        frac: slot.frac.load(Relaxed),
        generation: slot.generation.load(Relaxed),
    }
}

fn store_slot(slot: &Slot, b: &Base) {
    let put = |a: &AtomicU64, v| a.store(v, Relaxed);
    put(&slot.counter, b.counter);
    put(&slot.ns, b.ns);
    put(&slot.frac, b.frac);
    put(&slot.generation, b.generation);
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
