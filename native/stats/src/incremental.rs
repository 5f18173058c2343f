//! Incremental statistics over (value, timestamp) pairs, as the seed defines
//! them: min, max, sum, count, mean, the exponential moving average and the
//! interval count, sum and mean over a moving time window, the rate per
//! second over that window, plus hrts's quantiles. Constant time per datum; no
//! datum is kept.
//!
//! Formulas (T the moving interval, alpha the smoothing factor):
//! - moving average: `m_k = alpha * x_k + (1 - alpha) * m_(k-1)`, `m_1 = x_1`;
//! - interval sum: `S_k = S_(k-1) * (1 - E) + x_k` with `E = (t_k - t_(k-1)) / T`;
//!   when `E >= 1` the window holds only `x_k`. Interval count is the same with
//!   every `x` replaced by 1; interval mean is `S / C`;
//! - rate: `C / T` (data per second, [`RateOf::Count`]) or `S / T` (the data's
//!   sum per second, [`RateOf::Sum`]), `T` in seconds. Which one a statistics
//!   set reports depends on what its data are (see `metric.rs`): a counter's
//!   delta sets report their sum per second, every values set its data per
//!   second.
//!
//! Corner cases the seed leaves open: a datum older than the newest one (events
//! from several threads meet out of order) adds what it would have decayed to,
//! `x * (1 - E)` with `E` measured back from the newest timestamp, and nothing
//! when it is older than T. Reading at a time after the last datum decays the
//! interval sum and count to that time, so a metric that stopped changing shows
//! its rate falling to zero.

use crate::histogram::Histogram;

/// The parameters shared by every statistics set of a [`Stats`](crate::Stats).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Params {
    pub alpha: f64,
    pub interval_ns: f64,
}

/// What a statistics set reports (one `"values"` / `"incr-deltas"` / … entry of
/// a dump). `None` where no datum has been seen.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Statistics {
    pub count: u64,
    pub sum: f64,
    pub min: Option<f64>,
    pub max: Option<f64>,
    pub mean: Option<f64>,
    pub moving_avg: Option<f64>,
    pub interval_count: f64,
    pub interval_sum: f64,
    pub interval_mean: Option<f64>,
    /// Per second over the moving interval: `interval_count / T` or
    /// `interval_sum / T` (see [`RateOf`]); 0 when nothing is in the window.
    pub rate: f64,
    /// p50, p90, p99 and p99.9 (see [`QUANTILES`](crate::histogram::QUANTILES)).
    pub quantiles: [Option<f64>; 4],
}

/// What a statistics set's `rate` counts per second.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RateOf {
    /// Data per second: `interval_count / T` (updates, measurements, changes).
    Count,
    /// The data's sum per second: `interval_sum / T` (amount a counter moved).
    Sum,
}

#[derive(Default)]
pub struct Incremental {
    count: u64,
    sum: f64,
    min: f64,
    max: f64,
    moving_avg: f64,
    interval_count: f64,
    interval_sum: f64,
    /// Timestamp of the newest datum.
    last: u64,
    histogram: Histogram,
}

impl Incremental {
    pub fn count(&self) -> u64 {
        self.count
    }

    /// Adds one datum.
    pub fn add(&mut self, x: f64, t: u64, p: &Params) {
        self.add_batch(1, x, x, x, t, p);
    }

    /// Adds `n` data of sum `sum`, min `min` and max `max`, all at time `t`
    /// (events folded while a thread's queue was full). Count, sum, min and max
    /// stay exact; the moving average treats the batch as `n` data equal to its
    /// mean, the histogram as its min, its max and `n - 2` means.
    pub fn add_batch(&mut self, n: u64, sum: f64, min: f64, max: f64, t: u64, p: &Params) {
        if n == 0 {
            return;
        }
        let mean = sum / n as f64;
        if self.count == 0 {
            self.min = min;
            self.max = max;
            self.moving_avg = mean;
            if n > 1 {
                // n - 1 further data at the mean leave the average at the mean.
                self.moving_avg = mean;
            }
            self.interval_count = n as f64;
            self.interval_sum = sum;
            self.last = t;
        } else {
            self.min = self.min.min(min);
            self.max = self.max.max(max);
            let keep = if n == 1 {
                1.0 - p.alpha
            } else {
                (1.0 - p.alpha).powf(n as f64)
            };
            self.moving_avg = if n == 1 {
                p.alpha * mean + keep * self.moving_avg
            } else {
                mean + keep * (self.moving_avg - mean)
            };
            if t >= self.last {
                let e = (t - self.last) as f64 / p.interval_ns;
                if e >= 1.0 {
                    self.interval_count = n as f64;
                    self.interval_sum = sum;
                } else {
                    self.interval_count = self.interval_count * (1.0 - e) + n as f64;
                    self.interval_sum = self.interval_sum * (1.0 - e) + sum;
                }
                self.last = t;
            } else {
                let e = (self.last - t) as f64 / p.interval_ns;
                if e < 1.0 {
                    self.interval_count += n as f64 * (1.0 - e);
                    self.interval_sum += sum * (1.0 - e);
                }
            }
        }
        self.count += n;
        self.sum += sum;
        match n {
            1 => self.histogram.record(min),
            _ => {
                self.histogram.record(min);
                self.histogram.record(max);
                self.histogram.record_n(mean, n - 2);
            }
        }
    }

    /// The statistics as seen at time `now` (interval values decayed to it),
    /// with the rate of data per second.
    pub fn snapshot(&self, now: u64, p: &Params) -> Statistics {
        self.snapshot_rate_of(now, p, RateOf::Count)
    }

    /// [`snapshot`](Incremental::snapshot) with the rate of `rate_of`.
    pub fn snapshot_rate_of(&self, now: u64, p: &Params, rate_of: RateOf) -> Statistics {
        if self.count == 0 {
            return Statistics::default(); // nothing seen: every statistic absent
        }
        let decay = if now > self.last {
            (1.0 - (now - self.last) as f64 / p.interval_ns).max(0.0)
        } else {
            1.0
        };
        let interval_count = self.interval_count * decay;
        let interval_sum = self.interval_sum * decay;
        let seconds = p.interval_ns / 1e9;
        let rate = match rate_of {
            RateOf::Count => interval_count / seconds,
            RateOf::Sum => interval_sum / seconds,
        };
        Statistics {
            count: self.count,
            sum: self.sum,
            min: Some(self.min),
            max: Some(self.max),
            mean: Some(self.sum / self.count as f64),
            moving_avg: Some(self.moving_avg),
            interval_count,
            interval_sum,
            interval_mean: (interval_count > 0.0).then(|| interval_sum / interval_count),
            rate,
            quantiles: self.histogram.quantiles(self.min, self.max),
        }
    }
}

/// The seed's formulas applied literally to a whole series, datum by datum: the
/// brute-force reference the tests compare against.
#[cfg(test)]
pub(crate) mod reference {
    use super::Params;

    pub struct Expected {
        pub count: u64,
        pub sum: f64,
        pub min: f64,
        pub max: f64,
        pub moving_avg: f64,
        pub interval_count: f64,
        pub interval_sum: f64,
        pub sorted: Vec<f64>,
    }

    /// `data` in arrival order, timestamps never decreasing.
    pub fn expected(data: &[(f64, u64)], now: u64, p: &Params) -> Expected {
        let mut ema = data[0].0;
        for &(x, _) in &data[1..] {
            ema = p.alpha * x + (1.0 - p.alpha) * ema;
        }
        // Interval statistics straight from the recurrence.
        let (mut c, mut s) = (1.0, data[0].0);
        for w in data.windows(2) {
            let e = (w[1].1 - w[0].1) as f64 / p.interval_ns;
            if e >= 1.0 {
                c = 1.0;
                s = w[1].0;
            } else {
                c = c * (1.0 - e) + 1.0;
                s = s * (1.0 - e) + w[1].0;
            }
        }
        let last = data.last().unwrap().1;
        let decay = (1.0 - (now - last) as f64 / p.interval_ns).max(0.0);
        let mut sorted: Vec<f64> = data.iter().map(|d| d.0).collect();
        sorted.sort_by(f64::total_cmp);
        Expected {
            count: data.len() as u64,
            sum: data.iter().map(|d| d.0).sum(),
            min: sorted[0],
            max: *sorted.last().unwrap(),
            moving_avg: ema,
            interval_count: c * decay,
            interval_sum: s * decay,
            sorted,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    const P: Params = Params {
        alpha: 0.125,
        interval_ns: 1e9,
    };

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
    }

    #[test]
    fn matches_the_brute_force_reference_on_random_series() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(12);
        for _ in 0..200 {
            let n = rng.random_range(1..400);
            let mut t = 1_700_000_000_000_000_000u64;
            let data: Vec<(f64, u64)> = (0..n)
                .map(|_| {
                    t += rng.random_range(0..300_000_000);
                    let x = if rng.random_bool(0.5) {
                        rng.random_range(-1000i64..1000) as f64
                    } else {
                        rng.random::<f64>() * 1e6
                    };
                    (x, t)
                })
                .collect();
            let mut inc = Incremental::default();
            for &(x, ts) in &data {
                inc.add(x, ts, &P);
            }
            let now = t + rng.random_range(0..2_000_000_000);
            let got = inc.snapshot(now, &P);
            let want = reference::expected(&data, now, &P);
            assert_eq!(got.count, want.count);
            assert_eq!(got.sum, want.sum);
            assert_eq!(got.min, Some(want.min));
            assert_eq!(got.max, Some(want.max));
            assert_eq!(got.mean, Some(want.sum / want.count as f64));
            assert!(close(got.moving_avg.unwrap(), want.moving_avg));
            assert!(
                close(got.interval_count, want.interval_count),
                "{} {}",
                got.interval_count,
                want.interval_count
            );
            assert!(close(got.interval_sum, want.interval_sum));
            if want.interval_count > 0.0 {
                assert!(close(
                    got.interval_mean.unwrap(),
                    want.interval_sum / want.interval_count
                ));
            }
            for (q, level) in got.quantiles.iter().zip(crate::histogram::QUANTILES) {
                let rank = ((level * want.sorted.len() as f64).ceil() as usize)
                    .clamp(1, want.sorted.len());
                let exact = want.sorted[rank - 1];
                let err = (q.unwrap() - exact).abs();
                assert!(err <= 0.01 * exact.abs() + 1e-12, "{q:?} vs {exact}");
            }
        }
    }

    #[test]
    fn the_seeds_interval_example_by_hand() {
        // T = 1 s; data 10 at 0, 20 at 0.5 s: S = 10 * 0.5 + 20 = 25, C = 1.5.
        let mut inc = Incremental::default();
        inc.add(10.0, 0, &P);
        inc.add(20.0, 500_000_000, &P);
        let s = inc.snapshot(500_000_000, &P);
        assert_eq!(s.interval_sum, 25.0);
        assert_eq!(s.interval_count, 1.5);
        assert_eq!(s.interval_mean, Some(25.0 / 1.5));
        // A quarter of a window later a quarter has decayed away.
        let s = inc.snapshot(750_000_000, &P);
        assert_eq!(s.interval_sum, 18.75);
        // A window after the last datum nothing is left.
        let s = inc.snapshot(1_500_000_000, &P);
        assert_eq!(
            (s.interval_count, s.interval_sum, s.interval_mean),
            (0.0, 0.0, None)
        );
        // A gap longer than the window restarts it.
        inc.add(7.0, 3_000_000_000, &P);
        let s = inc.snapshot(3_000_000_000, &P);
        assert_eq!((s.interval_count, s.interval_sum), (1.0, 7.0));
        // EMA: 10, then 0.125*20 + 0.875*10 = 11.25, then 0.125*7 + 0.875*11.25.
        assert_eq!(s.moving_avg, Some(0.125 * 7.0 + 0.875 * 11.25));
    }

    #[test]
    fn a_late_datum_adds_its_decayed_share() {
        let mut inc = Incremental::default();
        inc.add(1.0, 1_000_000_000, &P);
        inc.add(4.0, 750_000_000, &P); // a quarter window late
        let s = inc.snapshot(1_000_000_000, &P);
        assert_eq!(s.interval_count, 1.75);
        assert_eq!(s.interval_sum, 4.0);
        inc.add(9.0, 0, &P); // a whole window late: only the totals see it
        let s = inc.snapshot(1_000_000_000, &P);
        assert_eq!(
            (s.interval_count, s.count, s.min, s.max),
            (1.75, 3, Some(1.0), Some(9.0))
        );
    }

    #[test]
    fn a_batch_keeps_count_sum_min_max_exact_and_equals_equal_data() {
        let mut batch = Incremental::default();
        let mut one_by_one = Incremental::default();
        batch.add(2.0, 0, &P);
        one_by_one.add(2.0, 0, &P);
        batch.add_batch(5, 15.0, 3.0, 3.0, 100, &P);
        for _ in 0..5 {
            one_by_one.add(3.0, 100, &P);
        }
        let (a, b) = (batch.snapshot(100, &P), one_by_one.snapshot(100, &P));
        assert_eq!(
            (a.count, a.sum, a.min, a.max),
            (b.count, b.sum, b.min, b.max)
        );
        assert!(close(a.moving_avg.unwrap(), b.moving_avg.unwrap()));
        assert!(close(a.interval_count, b.interval_count));
        assert!(close(a.interval_sum, b.interval_sum));
        assert_eq!(a.quantiles, b.quantiles);
    }
}
