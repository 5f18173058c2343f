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
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LineFit {
    /// The local time the offset is given at (the kept samples' mean).
    pub ref_local_ns: u64,
    /// Master minus local at `ref_local_ns`, ns.
    pub offset_ns: f64,
    /// d(master - local) / d(local): the local clock's rate error, negated.
    pub drift: f64,
    /// Error bound inside the sync window, ns.
    pub bound_ns: f64,
    /// How fast the bound may grow outside the window (ns per ns).
    pub bound_slope: f64,
    /// Local times of the first and last kept sample.
    pub window: (u64, u64),
    pub samples: usize,
    /// The largest half round trip among the kept samples.
    pub max_half_rtt: f64,
    /// By how much the sample furthest from the line misses it beyond what
    /// its own and the worst kept round trip explain (≤ 0: consistent).
    pub worst_miss_ns: f64,
}

impl LineFit {
    /// Master minus local clock at local time `x`.
    pub fn offset_at(&self, x: u64) -> f64 {
        self.offset_ns + self.drift * (x as i128 - self.ref_local_ns as i128) as f64
    }

    /// The error bound at local time `x`: flat inside the window, growing
    /// outside it.
    pub fn bound_at(&self, x: u64) -> f64 {
        let outside = if x < self.window.0 {
            self.window.0 - x
        } else {
            x.saturating_sub(self.window.1)
        };
        if outside == 0 {
            self.bound_ns
        } else {
            self.bound_ns + self.bound_slope * outside as f64
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

/// Least-squares offset and drift over `samples` (at least one).
pub fn fit_line(samples: &[Sample]) -> Option<LineFit> {
    let n = samples.len();
    if n == 0 {
        return None;
    }
    let mean_x = (samples.iter().map(|s| s.x as u128).sum::<u128>() / n as u128) as u64;
    let rel = |s: &Sample| (s.x as i128 - mean_x as i128) as f64;
    let mean_o = samples.iter().map(|s| s.offset).sum::<f64>() / n as f64;
    let sxx: f64 = samples.iter().map(|s| rel(s) * rel(s)).sum();
    let sxo: f64 = samples.iter().map(|s| rel(s) * (s.offset - mean_o)).sum();
    // The mean of the centred x is not exactly 0 (integer mean): fold it in.
    let mean_rel = samples.iter().map(rel).sum::<f64>() / n as f64;
    let drift = if sxx > 0.0 { sxo / sxx } else { 0.0 };
    let offset = mean_o - drift * mean_rel;
    finish(samples, mean_x, offset, drift, None)
}

/// The offset alone (drift taken as 0), for a clock synced at one point only;
/// the bound then grows by `max_drift` (ns per ns) away from the window.
pub fn fit_offset_only(samples: &[Sample], max_drift: f64) -> Option<LineFit> {
    let n = samples.len();
    if n == 0 {
        return None;
    }
    let mean_x = (samples.iter().map(|s| s.x as u128).sum::<u128>() / n as u128) as u64;
    let mean_o = samples.iter().map(|s| s.offset).sum::<f64>() / n as f64;
    finish(samples, mean_x, mean_o, 0.0, Some(max_drift))
}

fn finish(
    samples: &[Sample],
    ref_x: u64,
    offset: f64,
    drift: f64,
    slope: Option<f64>,
) -> Option<LineFit> {
    let mut fit = LineFit {
        ref_local_ns: ref_x,
        offset_ns: offset,
        drift,
        bound_ns: 0.0,
        bound_slope: 0.0,
        window: (samples.first()?.x, samples.last()?.x),
        samples: samples.len(),
        max_half_rtt: samples.iter().map(|s| s.half_rtt).fold(0.0, f64::max),
        worst_miss_ns: f64::NEG_INFINITY,
    };
    for s in samples {
        fit.window = (fit.window.0.min(s.x), fit.window.1.max(s.x));
        let resid = (s.offset - fit.offset_at(s.x)).abs();
        fit.bound_ns = fit.bound_ns.max(resid + s.half_rtt);
        fit.worst_miss_ns = fit.worst_miss_ns.max(resid - s.half_rtt - fit.max_half_rtt);
    }
    fit.bound_slope = match slope {
        Some(s) => s,
        None if fit.span_ns() > 0 => 2.0 * fit.bound_ns / fit.span_ns() as f64,
        None => f64::INFINITY,
    };
    Some(fit)
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
        let fit = fit_line(&samples).unwrap();
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
        let fit = fit_line(&samples).unwrap();
        assert!(fit.worst_miss_ns > 1e6, "{}", fit.worst_miss_ns);
    }

    #[test]
    fn offset_only_grows_its_bound_by_the_assumed_drift() {
        let xs = round(1_000_000_000_000, 10, -7e8, 0.0, 20_000, 20_000);
        let fit = fit_offset_only(&round_samples(&xs, 0.1).0, 1e-3).unwrap();
        assert_eq!(fit.drift, 0.0);
        assert!((fit.offset_ns - 7e8).abs() <= fit.bound_ns);
        let far = fit.window.1 + 1_000_000_000;
        assert!((fit.bound_at(far) - fit.bound_ns - 1e6).abs() < 1.0);
        assert!(fit_line(&[]).is_none());
    }
}
