//! The tracker against simulated clocks: a counter of exact frequency and a
//! calendar whose rate, steps and noise each scenario chooses. Simulated time, so
//! a ten-minute idle period costs nothing.

use super::*;

const HZ: f64 = 2_600_000_000.0;

use crate::testutil::Rng;

/// A host: true time, a counter, and a calendar with a rate error `y` (ppm)
/// that the scenario changes as it goes.
struct Host {
    t_ns: f64,
    counter0: u64,
    cal0: u64,
    /// Calendar minus true time, ns.
    cal_ahead: f64,
    y_ppm: f64,
    /// Jitter of one calendar read, ±ns.
    noise_ns: f64,
    rng: Rng,
}

impl Host {
    fn new(y_ppm: f64) -> Host {
        Host {
            t_ns: 0.0,
            counter0: 1 << 40,
            cal0: 1_800_000_000_000_000_000,
            cal_ahead: 0.0,
            y_ppm,
            noise_ns: 15.0,
            rng: Rng(7),
        }
    }
    fn counter(&self) -> u64 {
        self.counter0 + (self.t_ns * HZ / 1e9) as u64
    }
    /// The calendar relative to `cal0`, ns (f64 keeps sub-ns there).
    fn calendar(&self) -> f64 {
        self.t_ns + self.cal_ahead
    }
    fn read_calendar(&self, noise: f64) -> u64 {
        (self.cal0 as i128 + (self.calendar() + noise).round() as i128) as u64
    }
    fn advance(&mut self, ns: f64) {
        self.t_ns += ns;
        self.cal_ahead += ns * self.y_ppm * 1e-6;
    }
    fn step(&mut self, ns: f64) {
        self.cal_ahead += ns;
    }
}

fn rules() -> Rules {
    let m_cal = ((1_000_000_000u128 << 32) as f64 / HZ).round() as u64;
    let interval = HZ as u64;
    Rules {
        m_cal,
        interval,
        limit: interval + interval / 4,
        max_slew_ppb: 500_000,
        step_ns: 100_000_000,
        backstep: HZ as u64 / 1000,
        min_baseline: HZ as u64 / 100,
    }
}

/// A segment as the timeline drives it: stamps on the fast path within the
/// interval, a tie (by the stamping process) past it.
struct Seg {
    line: Line,
    rules: Rules,
    last: u64,
    ties: u64,
    kinds: Vec<TieKind>,
    /// The counter at the last tie's sample (its word's `as_of`).
    prior_at: u64,
}

/// The calendar reads' error a simulated tie declares: both reads' noise.
const CAL_ERROR_NS: u64 = 40;

impl Seg {
    fn new(host: &Host) -> Seg {
        let r = rules();
        Seg {
            line: Line::paired(host.counter(), host.read_calendar(0.0), 1, r.m_cal),
            rules: r,
            last: 0,
            ties: 0,
            kinds: Vec::new(),
            prior_at: host.counter(),
        }
    }

    fn stamp(&mut self, host: &mut Host) -> u64 {
        let c = host.counter();
        let d = c.wrapping_sub(self.line.counter);
        let v = if d <= self.rules.interval {
            self.line.ns_at(c)
        } else {
            // The narrowest bracket's middle, a read a little later, and the
            // new line published 300 ns after the stamp's read.
            host.advance(40.0);
            let at = host.counter();
            let noise = host.noise_ns * host.rng.unit();
            let cal = host.read_calendar(noise);
            host.advance(300.0);
            // What the holder counts as exposed: the threshold, and its reach
            // (the limit after an idle period, else a millisecond past now).
            let r = &self.rules;
            let rel = d as i64;
            let idle = rel > r.limit as i64 || rel < -(r.backstep as i64);
            let reach = if idle {
                r.limit as i64
            } else {
                rel + r.backstep as i64
            };
            let exposed = (r.interval as i64).max(reach);
            let learning = Learning {
                prior_at: self.prior_at,
                cal_error_ns: CAL_ERROR_NS,
                max_error_ppb: 12_500,
            };
            let t = tie(
                &self.line,
                r,
                at,
                cal,
                host.counter(),
                exposed,
                Some(learning),
            );
            self.prior_at = at;
            let old = self.line;
            self.line = t.line;
            self.ties += 1;
            self.kinds.push(t.kind);
            match t.kind {
                TieKind::Slew => old.ns_at(c),
                _ => self.line.ns_at(c).max(t.floor_ns),
            }
        };
        assert!(v >= self.last, "backward stamp: {v} < {}", self.last);
        self.last = v;
        v
    }
}

/// Errors (stamp − calendar, ns) of stamps every `every_ns` for `secs` seconds.
fn run(
    host: &mut Host,
    seg: &mut Seg,
    secs: f64,
    every_ns: f64,
    mut each: impl FnMut(&mut Host),
) -> Vec<f64> {
    let mut errs = Vec::new();
    let end = host.t_ns + secs * 1e9;
    while host.t_ns < end {
        host.advance(every_ns);
        each(host);
        let v = seg.stamp(host);
        errs.push((v - host.cal0) as f64 - host.calendar());
    }
    errs
}

fn p99_max(errs: &[f64]) -> (f64, f64) {
    let mut a: Vec<f64> = errs.iter().map(|e| e.abs()).collect();
    a.sort_by(|x, y| x.partial_cmp(y).unwrap());
    (a[a.len() * 99 / 100], *a.last().unwrap())
}

/// Seconds until the error stays within `bound` ns for the rest of the run.
fn settled_after(errs: &[f64], every_ns: f64, bound: f64) -> f64 {
    let last_bad = errs
        .iter()
        .rposition(|e| e.abs() > bound)
        .map_or(0, |i| i + 1);
    last_bad as f64 * every_ns / 1e9
}

#[test]
fn a_constant_frequency_error_is_learned_within_seconds() {
    for y in [100.0, -100.0, 20.0, -3.0] {
        let mut host = Host::new(y);
        let mut seg = Seg::new(&host);
        let warm = run(&mut host, &mut seg, 30.0, 1e6, |_| {});
        let errs = run(&mut host, &mut seg, 120.0, 1e6, |_| {});
        let (p99, max) = p99_max(&errs);
        eprintln!(
            "y={y} ppm: settled after {:.1} s, then p99 {p99:.0} ns, max {max:.0} ns",
            settled_after(&warm, 1e6, 1000.0)
        );
        assert!(settled_after(&warm, 1e6, 1000.0) < 30.0);
        assert!(p99 <= 1000.0 && max <= 5000.0, "y={y}: p99 {p99} max {max}");
        assert!(
            seg.kinds.iter().all(|k| *k == TieKind::Slew),
            "{:?}",
            seg.kinds
        );
    }
}

#[test]
fn a_frequency_random_walk_is_followed() {
    let mut host = Host::new(50.0);
    let mut seg = Seg::new(&host);
    let mut rng = Rng(11);
    let mut n = 0u64;
    // A harsh walk: once a second the rate moves by up to ±1 ppm.
    let mut walk = move |h: &mut Host| {
        n += 1;
        if n.is_multiple_of(1000) {
            h.y_ppm += rng.unit();
        }
    };
    run(&mut host, &mut seg, 30.0, 1e6, &mut walk);
    let errs = run(&mut host, &mut seg, 300.0, 1e6, &mut walk);
    let (p99, max) = p99_max(&errs);
    eprintln!(
        "random walk: p99 {p99:.0} ns, max {max:.0} ns, y now {:.2} ppm",
        host.y_ppm
    );
    assert!(p99 <= 1000.0 && max <= 5000.0, "p99 {p99} max {max}");
}

/// A host converged at `y` ppm, with its segment.
fn converged(y: f64) -> (Host, Seg) {
    let mut host = Host::new(y);
    let mut seg = Seg::new(&host);
    run(&mut host, &mut seg, 20.0, 1e6, |_| {});
    (host, seg)
}

fn freq_ppm(seg: &Seg) -> f64 {
    (seg.line.freq_mult as f64 / seg.rules.m_cal as f64 - 1.0) * 1e6
}

#[test]
fn a_smooth_walk_and_a_ramp_are_followed_closely() {
    let (mut host, mut seg) = converged(-40.0);
    let mut rng = Rng(5);
    let mut n = 0u64;
    let errs = run(&mut host, &mut seg, 200.0, 1e6, |h| {
        n += 1;
        if n.is_multiple_of(10) {
            h.y_ppm += 0.01 * rng.unit();
        }
    });
    let (p99, max) = p99_max(&errs);
    eprintln!("smooth walk: p99 {p99:.0} ns, max {max:.0} ns");
    assert!(p99 <= 1000.0 && max <= 5000.0);
    // A rate drifting by 1 ppm every second, for a minute.
    let errs = run(&mut host, &mut seg, 60.0, 1e6, |h| h.y_ppm += 0.001);
    let (p99, max) = p99_max(&errs);
    eprintln!("ramp of 1 ppm/s: p99 {p99:.0} ns, max {max:.0} ns");
    assert!(p99 <= 1500.0 && max <= 5000.0, "p99 {p99} max {max}");
}

#[test]
fn a_forward_step_is_followed_by_a_step_with_a_new_generation() {
    let (mut host, mut seg) = converged(100.0);
    let gen = seg.line.generation;
    host.step(1e9);
    let errs = run(&mut host, &mut seg, 10.0, 1e6, |_| {});
    assert_eq!(seg.line.generation, gen + 1);
    assert_eq!(seg.kinds.iter().filter(|k| **k == TieKind::Step).count(), 1);
    // The first stamp after the step is still on the old line; at most one
    // interval later the error is gone and the frequency was not disturbed.
    assert!(errs[..1100].iter().any(|e| *e < -9e8));
    let (p99, max) = p99_max(&errs[2000..]);
    assert!(p99 <= 1000.0 && max <= 5000.0, "p99 {p99} max {max}");
    assert!((freq_ppm(&seg) - 100.0).abs() < 0.1, "{}", freq_ppm(&seg));
}

#[test]
fn a_backward_step_is_slewed_at_the_maximum_rate_never_followed_back() {
    let (mut host, mut seg) = converged(-100.0);
    let gen = seg.line.generation;
    host.step(-1e9);
    // `stamp` asserts that no stamp is smaller than the one before.
    let errs = run(&mut host, &mut seg, 100.0, 1e6, |_| {});
    assert_eq!(seg.line.generation, gen, "no step backward");
    // 100 s at 500 ppm absorbs 50 ms of the second.
    let last = *errs.last().unwrap();
    assert!((last - (1e9 - 50e6)).abs() < 2e6, "{last}");
    assert!(seg.line.residual < -9e8 as i64, "{}", seg.line.residual);
    let slew = (seg.line.mult as f64 / seg.line.freq_mult as f64 - 1.0) * 1e6;
    assert!((slew + 500.0).abs() < 0.1, "slew {slew} ppm");
    assert!(
        (freq_ppm(&seg) + 100.0).abs() < 0.1,
        "learned {}",
        freq_ppm(&seg)
    );
}

#[test]
fn a_chrony_slew_burst_is_absorbed_without_learning_it_as_frequency() {
    let (mut host, mut seg) = converged(10.0);
    // chrony's largest slew: 83 333 ppm for 1.2 s moves the calendar 100 ms.
    host.y_ppm = 83_343.0;
    run(&mut host, &mut seg, 1.2, 1e6, |_| {});
    host.y_ppm = 10.0;
    let errs = run(&mut host, &mut seg, 260.0, 1e6, |_| {});
    assert!(
        (freq_ppm(&seg) - 10.0).abs() < 0.1,
        "learned {}",
        freq_ppm(&seg)
    );
    // At 500 ppm the ~100 ms are gone after ~200 s.
    let tail = &errs[errs.len() - 20_000..];
    let (p99, max) = p99_max(tail);
    eprintln!(
        "after a slew burst: error {:.0} ns 60 s later; last 20 s p99 {p99:.0} ns, max {max:.0} ns",
        errs[60_000]
    );
    assert!(p99 <= 1000.0 && max <= 5000.0, "p99 {p99} max {max}");
}

#[test]
fn ten_idle_minutes_at_100_ppm_cost_no_accuracy() {
    let (mut host, mut seg) = converged(100.0);
    let ties = seg.ties;
    host.advance(600e9);
    let errs = run(&mut host, &mut seg, 5.0, 1e6, |_| {});
    assert_eq!(seg.kinds[(ties) as usize], TieKind::Resync);
    let (p99, max) = p99_max(&errs);
    assert!(p99 <= 1000.0 && max <= 5000.0, "p99 {p99} max {max}");
    // Idle before convergence: the 60 ms the calendar ran ahead meanwhile are
    // not slewed for minutes but taken at once (no stamp saw the old line there).
    let mut host = Host::new(100.0);
    let mut seg = Seg::new(&host);
    host.advance(600e9);
    let errs = run(&mut host, &mut seg, 5.0, 1e6, |_| {});
    assert!(errs[0].abs() < 1000.0, "{}", errs[0]);
    assert_eq!(seg.line.generation, 1);
}

#[test]
fn a_counter_reset_starts_a_new_generation_without_going_back() {
    let (mut host, mut seg) = converged(100.0);
    let gen = seg.line.generation;
    let before = seg.last;
    // Suspend/resume that reset the counter: it restarts 20 s worth behind.
    host.counter0 -= (30.0 * HZ) as u64;
    host.advance(1e9);
    let errs = run(&mut host, &mut seg, 5.0, 1e6, |_| {});
    assert!(seg.last > before);
    assert_eq!(seg.line.generation, gen + 1);
    assert!(seg.kinds.contains(&TieKind::CounterReset));
    let (p99, _) = p99_max(&errs[1000..]);
    assert!(p99 <= 1000.0, "p99 {p99}");
}

#[test]
fn slopes_stay_positive_and_bounded_whatever_the_calendar_does() {
    let r = rules();
    let (lo, hi) = r.mult_range();
    let mut rng = Rng(3);
    let mut line = Line::paired(1 << 40, 1 << 60, 1, r.m_cal);
    let mut prior_at = line.counter;
    for _ in 0..100_000 {
        let d = (rng.next() % (3 * r.interval)) as i64 - (r.interval / 2) as i64;
        let at = line.counter.wrapping_add(d as u64);
        let cal =
            (line.ns_at(at) as i64).wrapping_add((rng.next() >> 20) as i64 - (1 << 43)) as u64;
        let learning = Learning {
            prior_at,
            cal_error_ns: CAL_ERROR_NS,
            max_error_ppb: 12_500,
        };
        let t = tie(
            &line,
            &r,
            at,
            cal,
            at + 100,
            r.interval as i64,
            Some(learning),
        );
        prior_at = at;
        assert!(t.line.mult >= lo && t.line.mult <= hi, "{t:?}");
        assert!(t.line.fixed_at(at + 100) >= ((t.floor_ns as i128) << SHIFT) - (1i128 << SHIFT));
        line = t.line;
    }
}

#[test]
fn suspend_and_resume_is_a_forward_step() {
    let (mut host, mut seg) = converged(-20.0);
    let gen = seg.line.generation;
    // Suspended for an hour: the counter stood still, the calendar did not.
    host.step(3_600e9);
    let errs = run(&mut host, &mut seg, 5.0, 1e6, |_| {});
    assert_eq!(seg.line.generation, gen + 1);
    assert!(seg.kinds.contains(&TieKind::Step));
    let (p99, max) = p99_max(&errs[1100..]);
    assert!(p99 <= 1000.0 && max <= 5000.0, "p99 {p99} max {max}");
    assert!((freq_ppm(&seg) + 20.0).abs() < 0.1, "{}", freq_ppm(&seg));
}

#[test]
fn a_late_publication_stays_above_the_old_line_up_to_the_exposure() {
    // The holder sampled at `at`, then stalled: stamps beside it used the old
    // line up to `exposed`, far past where it publishes. Whatever the
    // calendar asks of the slope, the new line is no lower than the old one
    // anywhere it was used, and rises from there.
    let r = rules();
    let mut rng = Rng(11);
    for _ in 0..10_000 {
        let line = Line::paired(1 << 40, 1 << 60, 1, r.m_cal);
        let line = Line {
            mult: r.m_cal + (rng.next() % (r.m_cal / 1000)) - r.m_cal / 2000,
            ..line
        };
        let at = line.counter + r.interval + rng.next() % (r.interval / 8);
        let cal = (line.ns_at(at) as i64 + (rng.next() % 2_000_000) as i64 - 1_000_000) as u64;
        let publish = at + 1000;
        let exposed = (publish - line.counter + rng.next() % (r.interval / 4)) as i64;
        let t = tie(&line, &r, at, cal, publish, exposed, None);
        let end = line.counter + exposed as u64;
        for c in [
            publish,
            publish + (end - publish) / 2,
            end,
            end + r.interval,
        ] {
            let given = line.fixed_at(c.min(end));
            assert!(t.line.fixed_at(c) >= given, "{:?} at {c}: {t:?}", t.kind);
        }
    }
}

/// Short ties (1 ms interval, a 10 ms baseline): an old tie sampled at
/// `at_old` with its calendar read off by `cal_err_ns` (half its bracket),
/// slewing at `slew_ppm`, published `late_ms` after its sample; a new tie
/// 10 ms after that publication. Returns the learned frequency's error
/// against the true rate, ppm.
fn learned_error_ppm(cal_err_ns: i64, late_ms: u64, slew_ppm: i64) -> f64 {
    let mut r = rules();
    r.interval = HZ as u64 / 1000;
    r.limit = r.interval + r.interval / 4;
    let y_ppm = 20.0;
    let m_true = (r.m_cal as f64 * (1.0 + y_ppm * 1e-6)).round() as u64;
    let c0: u64 = 1 << 40;
    let cal0: u64 = 1 << 60;
    let true_cal = |c: u64| cal0 + (((c - c0) as u128 * m_true as u128) >> SHIFT) as u64;
    let at_old = c0 + HZ as u64;
    let cal_old = (true_cal(at_old) as i64 + cal_err_ns) as u64;
    // The old line: 300 ns behind the calendar read at its sample, at the
    // learned (true) frequency plus its slew.
    let start = cal_old - 300;
    let mult = (m_true as i64 + m_true as i64 * slew_ppm / 1_000_000) as u64;
    let through = Line {
        counter: at_old,
        ns: start,
        frac: 0,
        mult,
        generation: 1,
        freq_mult: m_true,
        rate_mult: m_true,
        residual: 300,
        tie_ns: cal_old,
    };
    let publish_old = at_old + late_ms * (HZ as u64 / 1000);
    let old = through.moved_to(publish_old);
    let at = publish_old + HZ as u64 / 100;
    // What the old tie's word says: its sample, and at least half its
    // bracket; plus this tie's half bracket (20 ns).
    let learning = Learning {
        prior_at: at_old,
        cal_error_ns: cal_err_ns.unsigned_abs() + 20,
        max_error_ppb: 12_500,
    };
    let t = tie(
        &old,
        &r,
        at,
        true_cal(at),
        at + 100,
        r.interval as i64,
        Some(learning),
    );
    (t.line.freq_mult as f64 / m_true as f64 - 1.0) * 1e6
}

#[test]
fn a_wide_bracket_or_a_late_publication_teaches_no_wrong_frequency() {
    // Ordinary ties: the frequency is learned to a fraction of a ppm.
    let e = learned_error_ppm(10, 0, 300);
    assert!(e.abs() < 2.0, "{e} ppm");
    // A calendar read off by 4 µs (a preempted bracket) over a 10 ms baseline
    // would read as 400 ppm: far past the 50 ppm of drift a bound allows for.
    let e = learned_error_ppm(4_000, 0, 300);
    assert!(e.abs() < 2.0, "a wide bracket taught {e} ppm");
    // A tie preempted 5 ms between its sample and its publication: the
    // baseline runs from the sample, not from where its line starts (else
    // half its 300 ppm slew reads as frequency).
    let e = learned_error_ppm(10, 5, 300);
    assert!(e.abs() < 2.0, "a late publication taught {e} ppm");
}
