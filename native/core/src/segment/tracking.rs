//! Tracking the calendar clock: what one tie does to the shared line. Pure, so
//! simulated counters and calendars drive it in tests (minutes of simulated time
//! in milliseconds).
//!
//! A *tie* pairs the counter with the calendar (`CLOCK_REALTIME`) and replaces the
//! line `ns(c) = ns₀ + (c − c₀)·mult / 2^shift` by one that
//!
//! - starts from the old line's value where it takes over (the timeline never
//!   jumps, and never runs backwards: the slope stays positive);
//! - has the slope that follows the calendar's rate (a frequency-locked loop: the
//!   rate measured over the last interval) plus a slew
//!   that removes the measured error over the coming interval, bounded by
//!   `max_slew`;
//! - steps forward, with a new generation, when the calendar is ahead by more
//!   than the step threshold; never backward: a calendar behind the line is
//!   followed by slewing at the maximum rate.
//!
//! After an idle period (no stamp for longer than `limit` ticks, so no tie), the
//! old line is committed only up to `limit`: every stamp issued from it is at most
//! its value there (the *floor*). The new line starts at the calendar, or at the
//! floor if the calendar is behind it, so the error of an extrapolated line never
//! reaches a stamp. A counter that went backwards (reset by suspend or migration)
//! is handled the same way, with a new generation.

use crate::clock::convert::SHIFT;

/// A segment's tracking settings, in the units a tie computes in.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Rules {
    /// The calibrated slope (nanoseconds per tick · 2^32, against CLOCK_MONOTONIC_RAW).
    pub m_cal: u64,
    /// Ticks between ties: the wrap threshold.
    pub interval: u64,
    /// Ticks past the base up to which the old line is continued; beyond, it is
    /// committed only up to here.
    pub limit: u64,
    /// Bound on the slew and on the learned frequency error, ppb of `m_cal`.
    pub max_slew_ppb: u64,
    /// A calendar ahead of the line by more than this (ns) is followed by a step.
    pub step_ns: u64,
    /// A counter behind the base by more than this many ticks was reset.
    pub backstep: u64,
    /// The shortest baseline (ticks since the last tie) that teaches the
    /// frequency: a calendar read is off by tens of nanoseconds, which over
    /// a baseline of microseconds (a tiny wrap threshold ties that often)
    /// would read as hundreds of ppm, far past the drift a bound allows for.
    pub min_baseline: u64,
}

impl Rules {
    /// `m · ppb / 10⁹`, the slope change `ppb` stands for.
    fn of_ppb(&self, ppb: u64) -> i128 {
        self.m_cal as i128 * ppb as i128 / 1_000_000_000
    }

    /// The smallest and largest slope a valid line may have: the frequency
    /// bound plus the slew bound, each `max_slew` (kept below 10 %, so always > 0).
    pub fn mult_range(&self) -> (u64, u64) {
        let span = 2 * self.of_ppb(self.max_slew_ppb);
        let m = self.m_cal as i128;
        (
            (m - span).max(1) as u64,
            (m + span).min(u64::MAX as i128) as u64,
        )
    }

    /// The range of the learned frequency (`freq_mult`).
    fn freq_range(&self) -> (i128, i128) {
        let span = self.of_ppb(self.max_slew_ppb);
        (self.m_cal as i128 - span, self.m_cal as i128 + span)
    }
}

/// The state a slot holds, less its bookkeeping (`written`, `check`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Line {
    pub counter: u64,
    pub ns: u64,
    pub frac: u64,
    pub mult: u64,
    pub generation: u64,
    pub freq_mult: u64,
    pub rate_mult: u64,
    pub residual: i64,
    pub tie_ns: u64,
}

const FRAC_MASK: u128 = (1u128 << SHIFT) - 1;

impl Line {
    /// A line through (`counter`, `ns`) with the calibrated slope: what creation
    /// and an explicit reset make.
    pub fn paired(counter: u64, ns: u64, generation: u64, m_cal: u64) -> Line {
        Line {
            counter,
            ns,
            frac: 0,
            mult: m_cal,
            generation,
            freq_mult: m_cal,
            rate_mult: 0,
            residual: 0,
            tie_ns: 0,
        }
    }

    /// The line's value at `c` in 2^-32 ns, exactly, in either direction.
    pub fn fixed_at(&self, c: u64) -> i128 {
        let start = ((self.ns as i128) << SHIFT) + self.frac as i128;
        start + c.wrapping_sub(self.counter) as i64 as i128 * self.mult as i128
    }

    /// The line's value at `c` in whole ns (clamped to the u64 range).
    pub fn ns_at(&self, c: u64) -> u64 {
        clamp_u64(self.fixed_at(c) >> SHIFT)
    }

    /// The same line re-anchored at `c`: bit-identical values everywhere.
    pub fn moved_to(&self, c: u64) -> Line {
        let (ns, frac) = split(self.fixed_at(c));
        Line {
            counter: c,
            ns,
            frac,
            ..*self
        }
    }
}

fn clamp_u64(v: i128) -> u64 {
    v.clamp(0, u64::MAX as i128) as u64
}

fn split(fixed: i128) -> (u64, u64) {
    let fixed = fixed.max(0);
    (
        clamp_u64(fixed >> SHIFT),
        (fixed as u128 & FRAC_MASK) as u64,
    )
}

/// How a tie related the old line to the calendar.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum TieKind {
    /// The ordinary case: the new line continues the old one and slews.
    Slew,
    /// The calendar was ahead by more than the step threshold: the line stepped
    /// forward to it, with a new generation.
    Step,
    /// No tie for longer than the limit: the new line starts at the calendar, or
    /// at the old line's committed floor if the calendar is behind it.
    Resync,
    /// The counter went backwards: a new generation from the floor or the
    /// calendar, whichever is later.
    CounterReset,
}

/// What a tie decided.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Tie {
    pub line: Line,
    pub kind: TieKind,
    /// Calendar minus old line at the sample, ns: the error measured.
    pub offset: i64,
    /// New line minus old line where the new one starts, ns (0 for a slew).
    pub jump: i64,
    /// The smallest stamp the new line may give from now on: no stamp issued
    /// before the tie is larger.
    pub floor_ns: u64,
}

fn to_i64(v: i128) -> i64 {
    v.clamp(i64::MIN as i128, i64::MAX as i128) as i64
}

/// Raises smaller than this (2^-32 ns) at the far end of the exposure are
/// made by raising the new line; larger ones (a tie taken long before the
/// threshold) by keeping the old slope instead.
const RAISE_CAP: i128 = 1_000 << SHIFT;

/// What a tie needs to learn the calendar's rate from the tie before it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Learning {
    /// The counter at the previous tie's sample (its bound word's `as_of`):
    /// the rate is measured from there, not from where that tie's line
    /// starts (a holder preempted between its sample and its publication
    /// starts the line milliseconds later, and that line's slew over the gap
    /// would read as frequency).
    pub prior_at: u64,
    /// How far off the two calendar reads may be together, ns: half of each
    /// tie's bracket (the previous one's as its word bounds it).
    pub cal_error_ns: u64,
    /// The largest error a learned frequency may have, ppb: a part of the
    /// drift the bound allows for, which must also cover the clock's own
    /// drift until the next learning.
    pub max_error_ppb: u64,
}

/// The calendar's rate (`mult` units) from the tie `l` names to this one
/// (`at`, `cal_ns`), or `None` when it cannot be learned honestly: the old
/// line is not that tie's (it does not pass through that tie's calendar read
/// minus its residual at `l.prior_at`: a repair, a reset, a raised line), the
/// baseline is shorter than `baseline` ticks, or the reads' error over it is
/// more than `l.max_error_ppb` (a preempted bracket: 4 µs over 10 ms is 400
/// ppm, eight times the default drift bound).
fn learned_rate(old: &Line, at: u64, cal_ns: u64, baseline: u64, l: &Learning) -> Option<i128> {
    let span = at.wrapping_sub(l.prior_at) as i64;
    if span < baseline as i64 {
        return None;
    }
    let through = old.tie_ns as i128 - old.residual as i128;
    if ((old.fixed_at(l.prior_at) >> SHIFT) - through).abs() > 2 {
        return None;
    }
    let elapsed = cal_ns as i128 - old.tie_ns as i128;
    if elapsed <= 0 || (l.cal_error_ns as i128) * 1_000_000_000 > l.max_error_ppb as i128 * elapsed
    {
        return None;
    }
    Some((elapsed << SHIFT) / span as i128)
}

/// One tie: the old line `old`, the calendar `cal_ns` read at counter `at`
/// (the middle of the narrowest bracket), and `publish`, the counter read just
/// before the new line is published, where it takes over. `exposed`: ticks
/// past `old.counter` up to which stamps may have been taken from the old line
/// (the threshold, the holder's reach, a counter read after a stale mark, each
/// plus the cross-CPU shift bound: a stamp on another CPU may have read a
/// counter that far ahead). `learning`: what teaches the frequency (`None`:
/// the old one is kept).
pub(crate) fn tie(
    old: &Line,
    rules: &Rules,
    at: u64,
    cal_ns: u64,
    publish: u64,
    exposed: i64,
    learning: Option<Learning>,
) -> Tie {
    let d = at.wrapping_sub(old.counter) as i64;
    let old_at = old.fixed_at(at);
    let offset_fixed = ((cal_ns as i128) << SHIFT) - old_at;
    let offset = to_i64(offset_fixed >> SHIFT);
    let backwards = d < 0 && d.unsigned_abs() > rules.backstep;
    let idle = !backwards && d > rules.limit as i64;

    // Frequency: the calendar's average rate between the previous tie's
    // sample and this one. Only ties of an unbroken chain (the old slot was
    // written by the tie whose sample `learning` names) over a long enough
    // baseline teach it, only when the calendar reads' own error (half of
    // each bracket) is a small part of the drift a bound allows for over
    // that baseline, and only what a frequency can explain: a step or a
    // slew burst of the calendar is a phase error, not a rate.
    let (f_lo, f_hi) = rules.freq_range();
    let mut freq = old.freq_mult as i128;
    let mut rate = 0i128;
    let baseline = (rules.interval / 2).max(rules.min_baseline).max(1);
    if let Some(l) = learning.filter(|_| !backwards && old.tie_ns != 0) {
        if let Some(measured) = learned_rate(old, at, cal_ns, baseline, &l) {
            // The measured average is the next interval's estimate:
            // extrapolating its drift (a second-order loop) did worse in
            // simulation for a frequency that random-walks, and a constant
            // one needs no more.
            if (measured - freq).abs() <= rules.of_ppb(rules.max_slew_ppb) {
                rate = measured;
                freq = measured;
            }
        }
    }
    let freq = freq.clamp(f_lo, f_hi);

    // Stamps from the old line were taken at counters up to `exposed` past its
    // base: the largest of them up to counter c is the old line at the
    // earlier of c and that end. A counter that went backwards is answered
    // with the old line's value at the larger of the end and the limit.
    let end = old.counter.wrapping_add(exposed as u64);
    let given_at = |c: u64| {
        if (c.wrapping_sub(old.counter) as i64) < exposed {
            old.fixed_at(c)
        } else {
            old.fixed_at(end)
        }
    };
    let floor = if backwards {
        old.fixed_at(
            old.counter
                .wrapping_add(exposed.max(rules.limit as i64) as u64),
        )
    } else {
        given_at(at)
    };
    let cal_fixed = (cal_ns as i128) << SHIFT;
    let step_fixed = (rules.step_ns as i128) << SHIFT;
    let (kind, start) = if backwards {
        (TieKind::CounterReset, cal_fixed.max(floor + (1 << SHIFT)))
    } else if offset_fixed > step_fixed {
        (TieKind::Step, cal_fixed.max(floor))
    } else if idle {
        (TieKind::Resync, cal_fixed.max(floor))
    } else {
        (TieKind::Slew, old_at)
    };
    let residual_fixed = cal_fixed - start;
    let residual = to_i64(residual_fixed >> SHIFT);

    // The slew removes the residual over one interval, within the bound.
    let bound = rules.of_ppb(rules.max_slew_ppb);
    let slew = if rules.interval == 0 {
        0
    } else {
        (residual_fixed / rules.interval as i128).clamp(-bound, bound)
    };
    let mult = (freq + slew).max(1) as u64;
    let generation = match kind {
        TieKind::Step | TieKind::CounterReset => old.generation.wrapping_add(1),
        TieKind::Slew | TieKind::Resync => old.generation,
    };
    let at_line = {
        let (ns, frac) = split(start);
        Line {
            counter: at,
            ns,
            frac,
            mult,
            generation,
            freq_mult: freq as u64,
            rate_mult: rate.max(0) as u64,
            residual,
            tie_ns: cal_ns.max(1),
        }
    };
    // Take over at `publish`: stamps used the old line up to `exposed`, so
    // from `publish` on the new line is no lower than every one of them: it is
    // compared where it takes over and at the end of the exposure (both lines
    // are straight, and nothing was given past the end). A counter that went
    // backwards starts above the floor.
    let mut line = at_line.moved_to(publish);
    let need = if backwards {
        floor + (1 << SHIFT) - line.fixed_at(publish)
    } else {
        let p = publish.wrapping_sub(old.counter) as i64;
        let first = given_at(publish) - line.fixed_at(publish);
        let far = if exposed > p {
            old.fixed_at(end) - line.fixed_at(end)
        } else {
            i128::MIN
        };
        if far > first.max(0) + RAISE_CAP && line.mult < old.mult {
            // A tie long before the threshold: keep the old slope rather
            // than raise the line by the whole difference.
            line.mult = old.mult;
            first
        } else {
            first.max(far)
        }
    };
    if need > 0 {
        let (ns, frac) = split(line.fixed_at(publish) + need);
        line.ns = ns;
        line.frac = frac;
        line.residual = to_i64((line.residual as i128) - (need >> SHIFT));
    }
    let pub_fixed = line.fixed_at(publish);
    let jump = match kind {
        TieKind::Slew => 0,
        _ => to_i64((pub_fixed - old.fixed_at(publish)) >> SHIFT),
    };
    Tie {
        line,
        kind,
        offset,
        jump,
        floor_ns: clamp_u64(
            match kind {
                TieKind::Slew => old_at,
                TieKind::CounterReset => floor + (1 << SHIFT),
                _ => given_at(publish),
            }
            .max(0)
                >> SHIFT,
        ),
    }
}

#[cfg(test)]
mod tests;
