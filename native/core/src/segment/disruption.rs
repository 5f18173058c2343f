//! Disruptions of the counter or the clock, seen by the writer at every tie
//! (every daemon round on the host page, every tie of a per-user segment),
//! and the status `disrupted` they give the bound until the counter's rate
//! is learned again.
//!
//! Local detection, for hosts without a hypervisor's word: the writing
//! process compares, across its own consecutive ties (or rounds),
//!
//! - the counter against `CLOCK_MONOTONIC_RAW` (which NTP never slews, and
//!   against which the counter was calibrated): a counter that jumped,
//!   stopped or changed rate by more than the drift bound allows over the
//!   span (plus the reads' own brackets) is a disruption;
//! - `CLOCK_BOOTTIME − CLOCK_MONOTONIC`, which grows only while the machine
//!   is suspended: a suspend is a disruption (the counter may have stopped or
//!   been reset meanwhile).
//!
//! Its own ties only: processes in different time namespaces see different
//! `CLOCK_MONOTONIC_RAW`, so a sample taken by one process says nothing to
//! another. The first tie of a process (no sample yet) checks nothing.
//!
//! From the tie that sees a disruption, every tie publishes the status
//! `disrupted` (stamps get no interval) and the frequency is learned afresh:
//! the tie that saw it learns nothing (its baseline spans the disruption),
//! the next one that can learns the rate, and the one after that must learn
//! a rate that agrees with it within the drift bound; only then does a tie
//! publish the time service's word again. The phase lives in the page
//! (`DisruptionArea`), so whichever process ties next goes on from it.

use crate::segment::layout::DisruptionArea;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Mutex;

/// What a writer saw.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// The counter ran ahead of `CLOCK_MONOTONIC_RAW` by more than the drift
    /// allows: it jumped forward or runs fast.
    CounterAhead = 1,
    /// The counter fell behind `CLOCK_MONOTONIC_RAW` by more than the drift
    /// allows: it jumped back or runs slow.
    CounterBehind = 2,
    /// The counter advanced by less than half the time that passed: it stopped.
    CounterStopped = 3,
    /// `CLOCK_BOOTTIME − CLOCK_MONOTONIC` grew: the machine was suspended.
    Suspend = 4,
    /// The hypervisor's VMClock page has a new disruption marker (a live
    /// migration, or another event that disrupted the counter).
    VmclockMarker = 5,
    /// The system clock moved away from the line by more than the bound
    /// allows: it was stepped.
    ClockStep = 6,
}

impl Kind {
    pub fn name(self) -> &'static str {
        match self {
            Kind::CounterAhead => "counter ahead of CLOCK_MONOTONIC_RAW (jumped or fast)",
            Kind::CounterBehind => "counter behind CLOCK_MONOTONIC_RAW (jumped back or slow)",
            Kind::CounterStopped => "counter stopped",
            Kind::Suspend => "suspend (CLOCK_BOOTTIME - CLOCK_MONOTONIC grew)",
            Kind::VmclockMarker => "VMClock disruption marker changed (live migration)",
            Kind::ClockStep => {
                "system clock stepped (CLOCK_REALTIME off the line beyond the bound)"
            }
        }
    }

    pub fn from_code(code: u64) -> Option<Kind> {
        [
            Kind::CounterAhead,
            Kind::CounterBehind,
            Kind::CounterStopped,
            Kind::Suspend,
            Kind::VmclockMarker,
            Kind::ClockStep,
        ]
        .into_iter()
        .find(|k| *k as u64 == code)
    }
}

/// One process's sample at a tie: the counter (the middle of its bracket),
/// `CLOCK_MONOTONIC_RAW`, half the bracket, and `CLOCK_BOOTTIME −
/// CLOCK_MONOTONIC` from below with how much more it may be, all ns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Sample {
    pub counter: u64,
    pub raw_ns: u64,
    pub half_bracket_ns: u64,
    /// `CLOCK_BOOTTIME` less the `CLOCK_MONOTONIC` read after it: never more
    /// than the true difference.
    pub suspended_ns: u64,
    /// The two `CLOCK_MONOTONIC` reads around `CLOCK_BOOTTIME` apart: the
    /// true difference is at most this much more than `suspended_ns`.
    pub suspended_width_ns: u64,
}

/// Slack on top of the brackets (each clock read lies inside its bracket,
/// so this is only rounding and the conversion's own error).
const SLACK_NS: i128 = 2_000;
/// Growth of `CLOCK_BOOTTIME − CLOCK_MONOTONIC` that counts as a suspend.
const SUSPEND_NS: u64 = 1_000_000;

/// Whether the counter and the clocks between two samples of one process
/// disagree by more than `drift_ppb` and the brackets allow, the counter's
/// rate taken against `CLOCK_MONOTONIC_RAW` as `reference_ppb` fast (what
/// the rounds before measured: the calibration's own error, or the rate a
/// disruption left). `ticks_ns` converts ticks to ns at the calibrated scale.
pub(crate) fn judge(
    before: &Sample,
    now: &Sample,
    drift_ppb: u64,
    reference_ppb: i64,
    ticks_ns: impl Fn(u64) -> u64,
) -> Option<Kind> {
    // Grown for certain: a process preempted between its reads of the two
    // clocks sees their difference grow by the preemption, milliseconds on
    // a busy machine (four false suspends in 15 s with eight stampers on two
    // CPUs), which the bracket of `CLOCK_MONOTONIC` reads takes out.
    let before_most = before
        .suspended_ns
        .saturating_add(before.suspended_width_ns);
    if now.suspended_ns > before_most.saturating_add(SUSPEND_NS) {
        return Some(Kind::Suspend);
    }
    let raw = now.raw_ns as i128 - before.raw_ns as i128;
    if raw <= 0 {
        return None; // another time namespace, or no time passed: nothing to say
    }
    let d = now.counter.wrapping_sub(before.counter) as i64;
    let counted = if d < 0 {
        -(ticks_ns(d.unsigned_abs()) as i128)
    } else {
        ticks_ns(d as u64) as i128
    };
    let allowed = raw * drift_ppb as i128 / 1_000_000_000
        + before.half_bracket_ns as i128
        + now.half_bracket_ns as i128
        + SLACK_NS;
    let off = counted - raw - raw * reference_ppb as i128 / 1_000_000_000;
    if off.abs() <= allowed {
        None
    } else if counted >= 0 && counted * 2 < raw && raw > 4 * allowed {
        Some(Kind::CounterStopped)
    } else if off > 0 {
        Some(Kind::CounterAhead)
    } else {
        Some(Kind::CounterBehind)
    }
}

/// The counter's rate against `CLOCK_MONOTONIC_RAW` between two samples,
/// ppb fast, and how far off it may be (both brackets over the span), ppb;
/// `None` if no time passed on the clock.
fn rate_ppb(before: &Sample, now: &Sample, ticks_ns: impl Fn(u64) -> u64) -> Option<(i64, u64)> {
    let raw = now.raw_ns as i128 - before.raw_ns as i128;
    let d = now.counter.wrapping_sub(before.counter) as i64;
    let counted = if d < 0 {
        -(ticks_ns(d.unsigned_abs()) as i128)
    } else {
        ticks_ns(d as u64) as i128
    };
    let error = (before.half_bracket_ns + now.half_bracket_ns) as i128 * 1_000_000_000;
    (raw > 0).then(|| {
        (
            ((counted - raw) * 1_000_000_000 / raw) as i64,
            (error / raw + 1) as u64,
        )
    })
}

/// This process's last sample and the counter's rate the rounds before it
/// measured (its own ties only; see the module's comment).
#[derive(Debug, Default)]
pub(crate) struct Watch(Mutex<Option<(Sample, Option<Rate>)>>);

/// A measured rate against `CLOCK_MONOTONIC_RAW` and its error, both ppb.
type Rate = (i64, u64);

impl Watch {
    /// Takes a sample now (the counter read by `read`), compares it with this
    /// process's previous one and keeps it for the next tie.
    pub(crate) fn check(
        &self,
        read: impl Fn() -> u64,
        drift_ppb: u64,
        ticks_ns: impl Fn(u64) -> u64,
    ) -> Option<Kind> {
        let now = sample(read, &ticks_ns);
        let mut last = self.0.lock().unwrap_or_else(|e| e.into_inner());
        // The first round after a sample, or after a disruption, measures
        // the rate the next ones are judged against (a rate the disruption
        // changed stays changed; a jump does not repeat).
        // A rate measured with brackets too wide for it (a preempted read:
        // 20 µs over a 100 ms round is 200 ppm) is measured again; its own
        // error widens what the rounds judged by it allow.
        let (seen, reference) = match *last {
            Some((before, Some((rate, error)))) => {
                match judge(&before, &now, drift_ppb + error, rate, &ticks_ns) {
                    Some(kind) => (Some(kind), None),
                    None => (None, Some((rate, error))),
                }
            }
            Some((before, None)) => (
                None,
                rate_ppb(&before, &now, &ticks_ns).filter(|(_, e)| *e <= drift_ppb / 4),
            ),
            None => (None, None),
        };
        *last = Some((now, reference));
        seen
    }
}

impl Watch {
    /// Forgets the rate the rounds before measured: a disruption seen
    /// another way (the hypervisor's marker, a step) may have changed it, so
    /// the next round measures it afresh.
    pub(crate) fn relearn(&self) {
        let mut last = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((_, rate)) = last.as_mut() {
            *rate = None;
        }
    }
}

fn sample(read: impl Fn() -> u64, ticks_ns: impl Fn(u64) -> u64) -> Sample {
    let c0 = read();
    let raw_ns = crate::os::monotonic_raw_ns();
    let c1 = read();
    let mono0 = crate::os::monotonic_ns();
    let boot = crate::os::boottime_ns();
    let mono1 = crate::os::monotonic_ns();
    let width = c1.wrapping_sub(c0);
    Sample {
        counter: c0.wrapping_add(width / 2),
        raw_ns,
        half_bracket_ns: ticks_ns(width) / 2 + 1,
        suspended_ns: boot.saturating_sub(mono1),
        suspended_width_ns: mono1.saturating_sub(mono0),
    }
}

/// Slack on top of what a step check allows: rounding, and the old line's
/// value at the sample taken from its fixed point.
const STEP_SLACK_NS: u64 = 10_000;

/// Whether a tie's calendar read `offset_ns` off the old line is a step of
/// the clock: further than true time may be from the line (`line_half_ns`,
/// the half width the line's word gives a stamp at the sample) and from the
/// clock (`learned`, the time service's bound now) together, plus the
/// tie's bracket and some slack. Each interval published so far and the
/// clock's own bound cannot then both hold: the clock moved (an operator,
/// chronyd's `makestep`, a leap second) or the counter did. Only while the
/// service's word gives its bound a meaning.
pub(crate) fn is_step(
    offset_ns: i128,
    line_half_ns: u64,
    learned: &crate::clock::bound::Learned,
    half_bracket_ns: u64,
) -> bool {
    if !learned.status.bounded() {
        return false;
    }
    let allowed = line_half_ns
        .saturating_add(learned.bound_ns)
        .saturating_add(half_bracket_ns.saturating_mul(2))
        .saturating_add(STEP_SLACK_NS);
    offset_ns.unsigned_abs() > allowed as u128
}

/// The phases of `DisruptionArea::phase`.
pub(crate) const PHASE_NONE: u64 = 0;
pub(crate) const PHASE_DISRUPTED: u64 = 1;
pub(crate) const PHASE_LEARNED: u64 = 2;

/// Records a disruption seen at calendar time `at_ns` (the role's holder):
/// counted, with its time and kind, when the bound was not disrupted
/// already (a counter that stops for 2 s is one disruption, seen at every
/// round of the stop and again when it goes on); the learning starts again
/// either way.
pub(crate) fn record(a: &DisruptionArea, kind: Kind, at_ns: u64) {
    if a.phase.load(Relaxed) == PHASE_NONE {
        a.disruptions.fetch_add(1, Relaxed);
        a.last_disruption_ns.store(at_ns, Relaxed);
        a.last_kind.store(kind as u64, Relaxed);
    }
    a.phase.store(PHASE_DISRUPTED, Relaxed);
}

/// The phase after a tie in phase `phase` that learned the rate `learned`
/// (`None`: it learned nothing) where the line before it ran at
/// `previous` (`mult` units), `drift` the drift bound in the same units.
pub(crate) fn next_phase(phase: u64, learned: Option<u64>, previous: u64, drift: u64) -> u64 {
    match (phase, learned) {
        (PHASE_NONE, _) => PHASE_NONE,
        (_, None) => phase,
        (PHASE_LEARNED, Some(f)) if f.abs_diff(previous) <= drift => PHASE_NONE,
        (_, Some(_)) => PHASE_LEARNED,
    }
}

/// What `hrts info` shows of the disruptions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Disruptions {
    /// Seen since the page was made.
    pub count: u64,
    /// `CLOCK_REALTIME` (ns) of the last one, 0 if none.
    pub last_ns: u64,
    /// What the last one was.
    pub last_kind: Option<Kind>,
    /// Whether the bound is still disrupted (the rate not learned again).
    pub pending: bool,
}

pub(crate) fn read(a: &DisruptionArea) -> Disruptions {
    Disruptions {
        count: a.disruptions.load(Relaxed),
        last_ns: a.last_disruption_ns.load(Relaxed),
        last_kind: Kind::from_code(a.last_kind.load(Relaxed)),
        pending: a.phase.load(Relaxed) != PHASE_NONE,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(counter: u64, raw_ns: u64) -> Sample {
        Sample {
            counter,
            raw_ns,
            half_bracket_ns: 30,
            suspended_ns: 5_000,
            suspended_width_ns: 40,
        }
    }

    #[test]
    fn a_counter_that_jumps_stops_or_changes_rate_is_told_from_drift() {
        // 1 tick = 1 ns; a round of 1 s; 50 ppm allows 50 µs (+ 2 µs slack).
        let id = |t: u64| t;
        let j = |c: u64, r: u64| judge(&at(1 << 40, 1 << 30), &at(c, r), 50_000, 0, id);
        let (c, r) = (1u64 << 40, 1u64 << 30);
        let s = 1_000_000_000;
        assert_eq!(j(c + s + 40_000, r + s), None, "40 ppm: drift");
        assert_eq!(j(c + s - 51_000, r + s), None, "within drift and slack");
        assert_eq!(
            j(c + s + 300_000, r + s),
            Some(Kind::CounterAhead),
            "+300 ppm"
        );
        assert_eq!(
            j(c + s + 5_000_000, r + s),
            Some(Kind::CounterAhead),
            "+5 ms"
        );
        assert_eq!(
            j(c + s - 5_000_000, r + s),
            Some(Kind::CounterBehind),
            "-5 ms"
        );
        assert_eq!(
            j(c - 5_000_000, r + s),
            Some(Kind::CounterBehind),
            "behind the last"
        );
        assert_eq!(
            j(c + 1_000, r + 2 * s),
            Some(Kind::CounterStopped),
            "stopped 2 s"
        );
        let mut later = at(c + s, r + s);
        later.suspended_ns += 3_000_000_000;
        assert_eq!(
            judge(&at(c, r), &later, 50_000, 0, id),
            Some(Kind::Suspend),
            "suspended 3 s"
        );
        // A sample preempted 3 s between its reads of CLOCK_MONOTONIC
        // (around CLOCK_BOOTTIME) says the difference may be up to 3 s more:
        // a later one that grew by less than that is no suspend.
        let mut preempted = at(c, r);
        preempted.suspended_width_ns = 3_000_000_000;
        later.suspended_ns -= 1_000_000;
        assert_eq!(judge(&preempted, &later, 50_000, 0, id), None);
        // Another time namespace's CLOCK_MONOTONIC_RAW behind: nothing said.
        assert_eq!(j(c + s, r - s), None);
        // Judged against the rate the rounds before measured: 300 ppm fast
        // after a change is what the counter does now, not a disruption.
        let fast =
            |c: u64, r: u64| judge(&at(c, r), &at(c + s + 300_000, r + s), 50_000, 300_000, id);
        assert_eq!(fast(c, r), None);
    }

    #[test]
    fn the_round_after_a_disruption_measures_the_rate_to_judge_by() {
        // A counter of 1 GHz that follows CLOCK_MONOTONIC_RAW from an anchor
        // (counter, raw) at a rate the test sets, ppm fast.
        let anchor = std::cell::Cell::new((0u64, crate::os::monotonic_raw_ns(), 0u64));
        let read = || {
            let (c, r, ppm) = anchor.get();
            let d = crate::os::monotonic_raw_ns() - r;
            c + d + d * ppm / 1_000_000
        };
        let watch = Watch::default();
        let check = || watch.check(read, 50_000, |t| t);
        // Rounds long enough for this machine's reads to measure a rate within
        // a quarter of the drift bound (12.5 ppm), and for the 5 % below to
        // stand out of a read preempted for milliseconds: 100 ms on hardware,
        // seconds under qemu-user, where each read of the clock is a system
        // call. (At 20 ms, under Wine beside the other tests, it was missed.)
        let bracket = (0..5)
            .map(|_| {
                let t0 = crate::os::monotonic_raw_ns();
                let _ = read();
                let _ = crate::os::monotonic_raw_ns();
                let _ = read();
                crate::os::monotonic_raw_ns() - t0
            })
            .max()
            .unwrap();
        let round = std::time::Duration::from_nanos(
            (bracket * 4 * 80_000).clamp(100_000_000, 5_000_000_000),
        );
        let wait = || std::thread::sleep(round);
        assert_eq!(check(), None);
        // Until a round has measured the rate to judge by: a round whose reads
        // were preempted measures nothing, and the next one measures again.
        let measured = || matches!(*watch.0.lock().unwrap(), Some((_, Some(_))));
        for _ in 0..20 {
            wait();
            assert_eq!(check(), None);
            if measured() {
                break;
            }
        }
        assert!(measured(), "20 rounds of {round:?} measured no rate");
        // 5 % fast from now on: one disruption, then the fast rate is the
        // reference.
        anchor.set((read(), crate::os::monotonic_raw_ns(), 50_000));
        wait();
        assert_eq!(check(), Some(Kind::CounterAhead));
        for _ in 0..3 {
            wait();
            assert_eq!(check(), None, "the new rate is no new disruption");
        }
    }

    #[test]
    fn a_calendar_off_the_line_by_more_than_both_bounds_is_a_step() {
        use crate::clock::bound::{BoundSource, BoundStatus, Leap, Learned};
        let word = |status| Learned {
            status,
            source: BoundSource::Test,
            bound_ns: 50_000,
            leap: Leap::None,
        };
        let sync = word(BoundStatus::Synchronized);
        // A line whose stamps got ±60 µs, a clock within 50 µs, a 1 µs
        // bracket: 122 µs allowed.
        assert!(!is_step(100_000, 60_000, &sync, 500));
        assert!(!is_step(-121_000, 60_000, &sync, 500));
        assert!(is_step(200_000_000, 60_000, &sync, 500), "+200 ms");
        assert!(is_step(-200_000_000, 60_000, &sync, 500), "-200 ms");
        assert!(is_step(
            200_000_000,
            60_000,
            &word(BoundStatus::FreeRunning),
            500
        ));
        // No bound from the service: nothing to judge a step by.
        assert!(!is_step(
            200_000_000,
            60_000,
            &word(BoundStatus::Unsynchronized),
            500
        ));
        assert!(!is_step(
            200_000_000,
            60_000,
            &word(BoundStatus::Unknown),
            500
        ));
    }

    #[test]
    fn the_bound_comes_back_after_two_learnings_that_agree() {
        let drift = 100;
        assert_eq!(next_phase(PHASE_NONE, Some(5), 1_000, drift), PHASE_NONE);
        assert_eq!(
            next_phase(PHASE_DISRUPTED, None, 1_000, drift),
            PHASE_DISRUPTED
        );
        assert_eq!(
            next_phase(PHASE_DISRUPTED, Some(1_300), 1_000, drift),
            PHASE_LEARNED
        );
        assert_eq!(next_phase(PHASE_LEARNED, None, 1_300, drift), PHASE_LEARNED);
        assert_eq!(
            next_phase(PHASE_LEARNED, Some(1_500), 1_300, drift),
            PHASE_LEARNED
        );
        assert_eq!(
            next_phase(PHASE_LEARNED, Some(1_350), 1_300, drift),
            PHASE_NONE
        );
    }
}
