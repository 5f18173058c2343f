//! From sync exchanges to a clock mapping: drop each round's slowest
//! exchanges (ITC drops 10 %), fit offset and drift by least squares, and
//! bound the result's error by the half round trips it rests on.
//!
//! The model: `master = local + offset + drift * (local - ref)`. Each exchange
//! `i` says the true offset at `x_i` lies within `h_i` (half its round trip) of
//! `o_i`. If the clocks keep constant rates, the fitted line's error is a
//! straight line too, so its largest value over the sync window is at a
//! sample: at most `max_i(|o_i - fit(x_i)| + h_i)`. That is the bound we report
//! inside the window; beyond it, the error line may keep its slope, at most
//! `2 * bound / window`.

use crate::format::SyncRecord;
use crate::sync::Exchange;

/// The share of each round's exchanges with the highest round trips that is
/// dropped before fitting (as the Intel Trace Collector does).
pub const DROP_FRACTION: f64 = 0.10;

/// One exchange, reduced to what fitting needs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sample {
    /// Local clock at the exchange's midpoint.
    pub x: u64,
    /// Master minus local clock there, ns.
    pub offset: f64,
    /// Half the round trip: the offset's error bound.
    pub half_rtt: f64,
}

/// The samples of one round after dropping its slowest `fraction` (and any
/// exchange whose readings contradict each other): (kept, dropped).
pub fn round_samples(exchanges: &[Exchange], fraction: f64) -> (Vec<Sample>, usize) {
    let mut valid: Vec<(u64, &Exchange)> = exchanges
        .iter()
        .filter_map(|x| x.rtt_ns().map(|r| (r, x)))
        .collect();
    valid.sort_by_key(|(r, _)| *r);
    let drop = ((valid.len() as f64) * fraction).floor() as usize;
    let keep = valid.len() - drop;
    let kept = valid[..keep]
        .iter()
        .map(|(r, x)| Sample {
            x: x.local_mid(),
            offset: x.offset_ns(),
            half_rtt: *r as f64 / 2.0,
        })
        .collect();
    (kept, exchanges.len() - keep)
}

/// Every kept sample of several rounds: (samples, exchanges in all, dropped).
pub fn pooled_samples<'a>(
    rounds: impl IntoIterator<Item = &'a SyncRecord>,
    fraction: f64,
) -> (Vec<Sample>, usize, usize) {
    let mut all = Vec::new();
    let (mut total, mut dropped) = (0, 0);
    for r in rounds {
        let (kept, d) = round_samples(&r.exchanges, fraction);
        total += r.exchanges.len();
        dropped += d;
        all.extend(kept);
    }
    all.sort_by_key(|s| s.x);
    (all, total, dropped)
}

/// A fitted mapping from a local clock to the master's.
#[derive(Clone, Debug, PartialEq)]
pub struct LineFit {
    /// The local time the offset is given at (the kept samples' mean).
    pub ref_local_ns: u64,
    /// Master minus local at `ref_local_ns`, ns.
    pub offset_ns: f64,
    /// d(master - local) / d(local): the local clock's rate error, negated.
    pub drift: f64,
    /// Local times of the first and last kept sample.
    pub window: (u64, u64),
    pub samples: usize,
    /// The largest half round trip among the kept samples.
    pub max_half_rtt: f64,
    /// Whether some straight line (with a drift under the limit) passes
    /// through every kept exchange's interval. If not, the clocks did not
    /// keep steady rates, and the bounds below are only estimates.
    pub consistent: bool,
    /// By how much the fit misses the farthest exchange beyond its half round
    /// trip, ns (≤ 0: within every interval).
    pub worst_miss_ns: f64,
    /// The error bound over the window, ns.
    pub bound_ns: f64,
    /// The bound on the drift's error (ns per ns).
    pub drift_bound: f64,
    bounds: Bounds,
}

/// How the error bound is known.
#[derive(Clone, Debug, PartialEq)]
enum Bounds {
    /// No error: the master's own clock.
    Exact,
    /// Never synced: unknown.
    Unknown,
    /// The vertices `(da ns, db ns/s)` of the set of lines consistent with
    /// every kept exchange, relative to the fit: the error at `x` is at most
    /// the largest `|da + db * (x - ref)|` over them.
    Lines(Vec<(f64, f64)>),
    /// No consistent line: the farthest exchange's distance plus its half
    /// round trip, growing by `slope` outside the window.
    Loose { bound: f64, slope: f64 },
}

impl LineFit {
    /// The identity mapping of the master's own clock (exact).
    pub fn exact(window: (u64, u64)) -> LineFit {
        LineFit::identity(window, Bounds::Exact)
    }

    /// The identity mapping of a clock that never synced (error unknown).
    pub fn unknown(window: (u64, u64)) -> LineFit {
        LineFit::identity(window, Bounds::Unknown)
    }

    fn identity(window: (u64, u64), bounds: Bounds) -> LineFit {
        let b = if bounds == Bounds::Exact {
            0.0
        } else {
            f64::INFINITY
        };
        LineFit {
            ref_local_ns: window.0,
            offset_ns: 0.0,
            drift: 0.0,
            window,
            samples: 0,
            max_half_rtt: 0.0,
            consistent: true,
            worst_miss_ns: 0.0,
            bound_ns: b,
            drift_bound: b,
            bounds,
        }
    }

    /// Master minus local clock at local time `x`.
    pub fn offset_at(&self, x: u64) -> f64 {
        self.offset_ns + self.drift * (x as i128 - self.ref_local_ns as i128) as f64
    }

    /// The error bound at local time `x`: over the window it is smallest,
    /// outside it grows with the distance.
    pub fn bound_at(&self, x: u64) -> f64 {
        match &self.bounds {
            Bounds::Exact => 0.0,
            Bounds::Unknown => f64::INFINITY,
            Bounds::Lines(v) => {
                let xs = (x as i128 - self.ref_local_ns as i128) as f64 / 1e9;
                v.iter()
                    .map(|(da, db)| (da + db * xs).abs())
                    .fold(0.0, f64::max)
            }
            Bounds::Loose { bound, slope } => {
                let outside = if x < self.window.0 {
                    self.window.0 - x
                } else {
                    x.saturating_sub(self.window.1)
                };
                bound + slope * outside as f64
            }
        }
    }

    /// The window's length in ns.
    pub fn span_ns(&self) -> u64 {
        self.window.1 - self.window.0
    }

    /// The local clock's rate relative to the master's, minus one, in ppm:
    /// positive when the local clock runs fast.
    pub fn local_rate_ppm(&self) -> f64 {
        (1.0 / (1.0 + self.drift) - 1.0) * 1e6
    }
}

/// Slack added to every interval: the half-ns rounding of midpoints and the
/// clock's 1 ns resolution.
const SLACK_NS: f64 = 2.0;

/// Offset and drift by weighted least squares over `samples` (each weighted
/// by 1/h², h its half round trip: precise exchanges count more), with the
/// error bound of the lines consistent with them; `max_drift` (ns per ns) is
/// the largest drift a clock is believed to have.
pub fn fit_line(samples: &[Sample], max_drift: f64) -> Option<LineFit> {
    fit(samples, max_drift, true)
}

/// The offset alone (drift taken as 0), for a clock synced at one point only;
/// its bound grows by up to `max_drift` away from the samples.
pub fn fit_offset_only(samples: &[Sample], max_drift: f64) -> Option<LineFit> {
    fit(samples, max_drift, false)
}

fn fit(samples: &[Sample], max_drift: f64, with_drift: bool) -> Option<LineFit> {
    let n = samples.len();
    let first = samples.first()?;
    let ref_x = (samples.iter().map(|s| s.x as u128).sum::<u128>() / n as u128) as u64;
    let rel = |s: &Sample| (s.x as i128 - ref_x as i128) as f64;
    let weight = |s: &Sample| 1.0 / s.half_rtt.max(100.0).powi(2);
    let sw: f64 = samples.iter().map(weight).sum();
    let mx = samples.iter().map(|s| weight(s) * rel(s)).sum::<f64>() / sw;
    let mo = samples.iter().map(|s| weight(s) * s.offset).sum::<f64>() / sw;
    let sxx: f64 = samples
        .iter()
        .map(|s| weight(s) * (rel(s) - mx).powi(2))
        .sum();
    let sxo: f64 = samples
        .iter()
        .map(|s| weight(s) * (rel(s) - mx) * (s.offset - mo))
        .sum();
    let drift = if with_drift && sxx > 0.0 {
        sxo / sxx
    } else {
        0.0
    };
    let mut f = LineFit {
        ref_local_ns: ref_x,
        offset_ns: mo - drift * mx,
        drift,
        window: (first.x, first.x),
        samples: n,
        max_half_rtt: samples.iter().map(|s| s.half_rtt).fold(0.0, f64::max),
        consistent: true,
        worst_miss_ns: f64::NEG_INFINITY,
        bound_ns: 0.0,
        drift_bound: 0.0,
        bounds: Bounds::Exact,
    };
    let mut loose: f64 = 0.0;
    for s in samples {
        f.window = (f.window.0.min(s.x), f.window.1.max(s.x));
        let resid = (s.offset - f.offset_at(s.x)).abs();
        f.worst_miss_ns = f.worst_miss_ns.max(resid - s.half_rtt);
        loose = loose.max(resid + s.half_rtt);
    }
    match consistent_lines(&f, samples, max_drift) {
        Some(v) => f.bounds = Bounds::Lines(v),
        None => {
            f.consistent = false;
            let slope = if f.span_ns() > 0 {
                2.0 * loose / f.span_ns() as f64
            } else {
                max_drift
            };
            f.bounds = Bounds::Loose {
                bound: loose,
                slope,
            };
        }
    }
    f.bound_ns = f.bound_at(f.window.0).max(f.bound_at(f.window.1));
    f.drift_bound = match &f.bounds {
        Bounds::Lines(v) => v.iter().map(|(_, db)| db.abs()).fold(0.0, f64::max) / 1e9,
        Bounds::Loose { slope, .. } => *slope,
        _ => 0.0,
    };
    Some(f)
}

/// The polygon of lines `fit + da + db * (x - ref)` (da in ns, db in ns/s)
/// that pass through every sample's interval `offset ± (half_rtt + slack)`
/// with a total drift under `max_drift`; `None` if there is none. Built by
/// clipping a box with the two half-planes of each sample.
fn consistent_lines(f: &LineFit, samples: &[Sample], max_drift: f64) -> Option<Vec<(f64, f64)>> {
    let (lo_db, hi_db) = ((-max_drift - f.drift) * 1e9, (max_drift - f.drift) * 1e9);
    const DA: f64 = 1e13;
    let mut poly = vec![(-DA, lo_db), (DA, lo_db), (DA, hi_db), (-DA, hi_db)];
    for s in samples {
        let xs = (s.x as i128 - f.ref_local_ns as i128) as f64 / 1e9;
        let r = s.offset - f.offset_at(s.x);
        let h = s.half_rtt + SLACK_NS;
        // da + db*xs <= r + h  and  -(da + db*xs) <= -(r - h)
        poly = clip(&poly, 1.0, xs, r + h);
        poly = clip(&poly, -1.0, -xs, h - r);
        if poly.is_empty() {
            return None;
        }
    }
    Some(poly)
}

/// The part of convex polygon `poly` where `a*da + b*db <= c`.
fn clip(poly: &[(f64, f64)], a: f64, b: f64, c: f64) -> Vec<(f64, f64)> {
    let side = |p: &(f64, f64)| a * p.0 + b * p.1 - c;
    let mut out = Vec::with_capacity(poly.len() + 1);
    for (i, p) in poly.iter().enumerate() {
        let q = &poly[(i + 1) % poly.len()];
        let (fp, fq) = (side(p), side(q));
        if fp <= 0.0 {
            out.push(*p);
        }
        if (fp <= 0.0) != (fq <= 0.0) {
            let t = fp / (fp - fq);
            out.push((p.0 + (q.0 - p.0) * t, p.1 + (q.1 - p.1) * t));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Exchanges of a client whose clock is `local = master * (1 + rate) + off`,
    /// with path delays `up`/`down` ns and a 1 us turnaround.
    fn round(at_master: u64, n: u64, off: f64, rate: f64, up: u64, down: u64) -> Vec<Exchange> {
        let local = |m: u64| (m as f64 * (1.0 + rate) + off).round() as u64;
        (0..n)
            .map(|i| {
                let m0 = at_master + i * 100_000;
                let extra = if i % 10 == 3 { 400_000 } else { 0 }; // a slow outlier
                Exchange {
                    t0: local(m0),
                    t1: m0 + up + extra,
                    t2: m0 + up + extra + 1_000,
                    t3: local(m0 + up + extra + 1_000 + down),
                    wall: m0,
                }
            })
            .collect()
    }

    #[test]
    fn slow_exchanges_are_dropped_ten_percent_per_round() {
        let xs = round(1_000_000_000, 50, 0.0, 0.0, 10_000, 10_000);
        let (kept, dropped) = round_samples(&xs, DROP_FRACTION);
        assert_eq!((kept.len(), dropped), (45, 5));
        assert!(
            kept.iter().all(|s| s.half_rtt < 100_000.0),
            "the outliers went"
        );
        let (few, d) = round_samples(&xs[..9], DROP_FRACTION);
        assert_eq!((few.len(), d), (9, 0));
    }

    #[test]
    fn offset_and_drift_are_recovered_within_the_bound() {
        // Local 2.5 s ahead and 100 ppm fast;
        // asymmetric paths (30 us up, 10 us down).
        let (off, rate) = (2.5e9, 100e-6);
        let t = 1_000_000_000_000u64;
        let mut samples = Vec::new();
        for at in [t, t + 20_000_000_000] {
            samples.extend(round_samples(&round(at, 50, off, rate, 30_000, 10_000), 0.1).0);
        }
        samples.sort_by_key(|s| s.x);
        let fit = fit_line(&samples, 1e-3).unwrap();
        // Truth: master = (local - off) / (1 + rate).
        for x in [fit.window.0, fit.ref_local_ns, fit.window.1] {
            let truth = (x as f64 - off) / (1.0 + rate) - x as f64;
            let err = (fit.offset_at(x) - truth).abs();
            assert!(
                err <= fit.bound_at(x),
                "error {err} beyond bound {}",
                fit.bound_at(x)
            );
            assert!(err > 1_000.0, "asymmetry shows as a real error ({err})");
        }
        assert!(
            (fit.local_rate_ppm() - 100.0).abs() < 1e-3,
            "{}",
            fit.local_rate_ppm()
        );
        assert!(
            fit.bound_ns < 25_000.0 && fit.bound_ns >= 10_500.0,
            "{}",
            fit.bound_ns
        );
        assert!(
            fit.worst_miss_ns <= 0.0,
            "consistent clocks: {}",
            fit.worst_miss_ns
        );
        // Outside the window the bound grows.
        assert!(fit.bound_at(fit.window.1 + 1_000_000_000) > fit.bound_ns);
    }

    #[test]
    fn a_stepped_clock_disagrees_with_any_line() {
        let t = 1_000_000_000_000u64;
        let mut samples = Vec::new();
        for (at, off) in [(t, 0.0), (t + 1_000_000_000, 0.0), (t + 2_000_000_000, 5e6)] {
            samples.extend(round_samples(&round(at, 20, off, 0.0, 10_000, 10_000), 0.1).0);
        }
        samples.sort_by_key(|s| s.x);
        let fit = fit_line(&samples, 1e-3).unwrap();
        assert!(!fit.consistent);
        assert!(fit.worst_miss_ns > 1e6, "{}", fit.worst_miss_ns);
        assert!(
            fit.bound_ns > 1e6,
            "the loose bound shows the step: {}",
            fit.bound_ns
        );
    }

    #[test]
    fn offset_only_grows_its_bound_by_the_assumed_drift() {
        let xs = round(1_000_000_000_000, 10, -7e8, 0.0, 20_000, 20_000);
        let fit = fit_offset_only(&round_samples(&xs, 0.1).0, 1e-3).unwrap();
        assert_eq!(fit.drift, 0.0);
        assert!((fit.offset_ns - 7e8).abs() <= fit.bound_ns);
        // 1 s away, up to 1000 ppm more.
        let far = fit.window.1 + 1_000_000_000;
        let grown = fit.bound_at(far) - fit.bound_ns;
        assert!(grown > 0.99e6 && grown < 1.001e6, "{grown}");
        assert!(fit_line(&[], 1e-3).is_none());
        assert_eq!(LineFit::exact((1, 2)).bound_at(10), 0.0);
        assert!(LineFit::unknown((1, 2)).bound_at(1).is_infinite());
    }
}
