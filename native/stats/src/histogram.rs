//! A bounded log-linear histogram of `f64` values for the quantiles.
//!
//! Why not a crate: `hdrhistogram` records only non-negative integers, and
//! `sketches-ddsketch` only positive values, with a `ln` per record; statistics
//! here see negative deltas, fractional gauge values and nanosecond durations
//! alike. A log-linear layout takes its bucket straight from the bits of the
//! double (exponent and the top 6 mantissa bits), so recording is a few integer
//! operations, and its layout is fixed, which suits cells that may later live in
//! shared memory.
//!
//! Each power of two from 2^-64 to 2^64 is split into 64 equal buckets, for each
//! sign. A bucket reports its midpoint, so any value it holds is within
//! 1/128 (0.79 %) of the reported one: **quantiles have a relative error of at
//! most 1 %**. Magnitudes below 2^-64 count as zero; magnitudes of 2^64 and more
//! (and infinities) fall in an overflow bucket reported as the exact maximum or
//! minimum seen. Octaves are allocated when first touched (520 bytes each), so
//! memory is bounded (at most 256 octaves) and stops growing once the range of
//! the data has been seen.

const SUB_BITS: u32 = 6;
const SUB: usize = 1 << SUB_BITS;
const MIN_EXP: i32 = -64;
const OCTAVES: usize = 128;

struct Octave {
    total: u64,
    counts: [u64; SUB],
}

/// One sign's octaves, allocated on first use.
#[derive(Default)]
struct Side {
    octaves: Vec<Option<Box<Octave>>>,
    overflow: u64,
}

impl Side {
    fn add(&mut self, bucket: Bucket, n: u64) {
        match bucket {
            Bucket::Overflow => self.overflow += n,
            Bucket::At(octave, sub) => {
                if self.octaves.is_empty() {
                    self.octaves.resize_with(OCTAVES, || None);
                }
                let o = self.octaves[octave].get_or_insert_with(|| {
                    Box::new(Octave {
                        total: 0,
                        counts: [0; SUB],
                    })
                });
                o.total += n;
                o.counts[sub] += n;
            }
            Bucket::Zero => unreachable!("zero is not kept per side"),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Bucket {
    Zero,
    At(usize, usize),
    Overflow,
}

fn bucket(magnitude: f64) -> Bucket {
    let bits = magnitude.to_bits();
    let biased = ((bits >> 52) & 0x7ff) as i32;
    if biased == 0 {
        return Bucket::Zero; // zero and subnormals
    }
    let exp = biased - 1023;
    if exp < MIN_EXP {
        return Bucket::Zero;
    }
    if exp >= MIN_EXP + OCTAVES as i32 {
        return Bucket::Overflow;
    }
    let sub = ((bits >> (52 - SUB_BITS)) & (SUB as u64 - 1)) as usize;
    Bucket::At((exp - MIN_EXP) as usize, sub)
}

/// The midpoint of a bucket: 2^exp * (1 + (sub + 0.5) / 64).
fn midpoint(octave: usize, sub: usize) -> f64 {
    let exp = octave as i32 + MIN_EXP;
    2f64.powi(exp) * (1.0 + (sub as f64 + 0.5) / SUB as f64)
}

/// The quantile levels every statistics set reports.
pub const QUANTILES: [f64; 4] = [0.5, 0.9, 0.99, 0.999];

#[derive(Default)]
pub struct Histogram {
    positive: Side,
    negative: Side,
    zero: u64,
    total: u64,
}

impl Histogram {
    /// Records `n` occurrences of `x`; NaN is ignored (callers reject it first).
    pub fn record_n(&mut self, x: f64, n: u64) {
        if x.is_nan() || n == 0 {
            return;
        }
        self.total += n;
        let b = bucket(x.abs());
        if b == Bucket::Zero {
            self.zero += n;
        } else if x > 0.0 {
            self.positive.add(b, n);
        } else {
            self.negative.add(b, n);
        }
    }

    pub fn record(&mut self, x: f64) {
        self.record_n(x, 1);
    }

    pub fn count(&self) -> u64 {
        self.total
    }

    /// The nearest-rank quantiles of [`QUANTILES`]: for level q, the value of
    /// rank ceil(q * count), within 1 % of it; clamped to the exact `min` and
    /// `max` of the data. `None` when nothing was recorded.
    pub fn quantiles(&self, min: f64, max: f64) -> [Option<f64>; 4] {
        let mut out = [None; 4];
        if self.total == 0 {
            return out;
        }
        let ranks = QUANTILES.map(|q| ((q * self.total as f64).ceil() as u64).clamp(1, self.total));
        let mut next = 0;
        let mut seen = 0u64;
        let mut visit = |count: u64, value: f64, next: &mut usize| {
            seen += count;
            while *next < ranks.len() && seen >= ranks[*next] {
                out[*next] = Some(value.clamp(min, max));
                *next += 1;
            }
        };
        // Ascending order: negative overflow, negative octaves from the largest
        // magnitude down, zero, positive octaves up, positive overflow.
        visit(self.negative.overflow, min, &mut next);
        for (i, o) in self.negative.octaves.iter().enumerate().rev() {
            if let Some(o) = o {
                for sub in (0..SUB).rev() {
                    if o.counts[sub] > 0 {
                        visit(o.counts[sub], -midpoint(i, sub), &mut next);
                    }
                }
            }
        }
        visit(self.zero, 0.0, &mut next);
        for (i, o) in self.positive.octaves.iter().enumerate() {
            let Some(o) = o else { continue };
            if o.total == 0 {
                continue;
            }
            for sub in 0..SUB {
                if o.counts[sub] > 0 {
                    visit(o.counts[sub], midpoint(i, sub), &mut next);
                }
            }
        }
        visit(self.positive.overflow, max, &mut next);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    fn exact_quantiles(sorted: &[f64]) -> [f64; 4] {
        QUANTILES.map(|q| {
            let rank = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
            sorted[rank - 1]
        })
    }

    fn check(values: &[f64]) {
        let mut h = Histogram::default();
        for &v in values {
            h.record(v);
        }
        let mut sorted = values.to_vec();
        sorted.sort_by(f64::total_cmp);
        let (min, max) = (sorted[0], *sorted.last().unwrap());
        let got = h.quantiles(min, max);
        for (g, e) in got.iter().zip(exact_quantiles(&sorted)) {
            let g = g.unwrap();
            let err = if e == 0.0 {
                g.abs()
            } else {
                ((g - e) / e).abs()
            };
            assert!(
                err <= 0.01,
                "quantile {g} vs exact {e}: relative error {err}"
            );
        }
    }

    #[test]
    fn quantiles_are_within_one_percent_of_the_exact_ones() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(7);
        for round in 0..50 {
            let n = rng.random_range(1..5000);
            let scale = 10f64.powi(rng.random_range(-6..12));
            let values: Vec<f64> = (0..n)
                .map(|_| {
                    let v: f64 = rng.random::<f64>() * scale;
                    match round % 4 {
                        0 => v,
                        1 => v.round(),
                        2 => v - scale / 2.0,
                        _ => -(rng.random::<f64>() * 60.0).exp2(),
                    }
                })
                .collect();
            check(&values);
        }
        // Long-tailed latencies and exact zeros.
        let lat: Vec<f64> = (1..=10_000u64)
            .map(|i| (i * i) as f64)
            .chain([0.0; 50])
            .collect();
        check(&lat);
    }

    #[test]
    fn the_worst_case_bucket_error_is_below_one_percent() {
        // The lowest value of every bucket of one octave, reported as a midpoint.
        for sub in 0..SUB {
            let lo = 1.0 + sub as f64 / SUB as f64;
            let hi = 1.0 + (sub + 1) as f64 / SUB as f64;
            let mid = midpoint((-MIN_EXP) as usize, sub);
            assert!((mid - lo) / lo <= 1.0 / 128.0 + 1e-12);
            assert!((hi - mid) / mid <= 1.0 / 128.0 + 1e-12);
            assert_eq!(bucket(lo), Bucket::At((-MIN_EXP) as usize, sub));
        }
    }

    #[test]
    fn extremes_are_bounded_and_clamped() {
        let mut h = Histogram::default();
        h.record(f64::INFINITY);
        h.record(1e300);
        h.record(1e-300);
        h.record(-1e-300);
        h.record(f64::NAN);
        assert_eq!(h.count(), 4);
        let q = h.quantiles(-1e-300, f64::INFINITY);
        assert_eq!(q[0], Some(0.0));
        assert_eq!(q[3], Some(f64::INFINITY));
        assert_eq!(Histogram::default().quantiles(0.0, 0.0), [None; 4]);
    }

    #[test]
    fn counts_of_many_add_up() {
        let mut h = Histogram::default();
        h.record_n(3.0, 999);
        h.record_n(-5.0, 1);
        assert_eq!(h.count(), 1000);
        let q = h.quantiles(-5.0, 3.0);
        assert!((q[0].unwrap() - 3.0).abs() / 3.0 < 0.01);
        assert!((q[3].unwrap() - 3.0).abs() / 3.0 < 0.01);
        h.record_n(-5.0, 9);
        assert!((h.quantiles(-5.0, 3.0)[0].unwrap() - 3.0).abs() < 0.03);
        assert!(h.quantiles(-5.0, 3.0)[0].unwrap() > 0.0);
    }
}
