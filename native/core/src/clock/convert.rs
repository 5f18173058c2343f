//! Ticks to nanoseconds with one 64-bit multiply and a shift.
//!
//! `ns = (delta × mult + frac) >> shift` with `mult ≈ 10⁹ · 2^shift / hz`.
//!
//! The choice of `shift`: the time a 64-bit product can cover before it overflows is
//! `2⁶⁴ / (mult · hz) · 2^shift / 2^shift = 2⁶⁴ / (10⁹ · 2^shift)` seconds, which
//! depends on `shift` alone, not on the frequency. Covering at least ~4 s (so the
//! shared base moves rarely) therefore caps `shift` at 32 (2⁶⁴ / (10⁹ · 2³²) =
//! 4.295 s), and a smaller shift only makes `mult` coarser. So `shift` is always
//! [`SHIFT`] = 32 and `mult` is rounded to nearest, whose relative error is at most
//! `0.5 / mult = hz / (2 · 10⁹ · 2³²)`: ≤ 1.17 ppb at 10 GHz, ≤ 0.12 ppb at 1 GHz,
//! ≤ 10⁻⁴ ppb at 1 MHz ([`MULT_ERROR_BOUND_PPB`] states the bound for the accepted
//! range). That is well below what calibration can resolve (~10 ppb).

use crate::error::{Error, ErrorKind, Result};

/// The fixed binary point of every [`Scale`]; see the module documentation.
pub const SHIFT: u32 = 32;

/// The lowest frequency [`Scale::for_frequency`] accepts (1 kHz).
pub const MIN_HZ: u64 = 1_000;

/// The highest frequency [`Scale::for_frequency`] accepts (10 GHz).
pub const MAX_HZ: u64 = 10_000_000_000;

/// Upper bound, in ppb, on the relative rounding error of `mult` for every accepted
/// frequency: `MAX_HZ / (2 · 10⁹ · 2³²)` = 1.164 ppb, rounded up.
pub const MULT_ERROR_BOUND_PPB: f64 = 1.17;

const NS_PER_S: u128 = 1_000_000_000;

/// Multiply-shift conversion from counter ticks to nanoseconds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Scale {
    /// Nanoseconds per tick, times `2^shift`, rounded to nearest.
    pub mult: u64,
    /// The binary point of `mult` (always `SHIFT`, 32).
    pub shift: u32,
    /// The largest `delta` with `delta × mult + (2^shift − 1) ≤ u64::MAX`: the base
    /// must move forward before a delta passes it. Always ≥ 4 s worth of ticks.
    pub max_delta: u64,
}

impl Scale {
    /// The scale for a counter of `hz` ticks per second, `MIN_HZ..=MAX_HZ`.
    pub fn for_frequency(hz: u64) -> Result<Scale> {
        if !(MIN_HZ..=MAX_HZ).contains(&hz) {
            return Err(Error::new(
                ErrorKind::InvalidArgument,
                format!(
                    "counter frequency {hz} Hz is outside the supported range {MIN_HZ}..={MAX_HZ} Hz; \
                     recalibrate or choose another source (HRTS_SOURCE=monotonic-raw)"
                ),
            ));
        }
        let hz128 = hz as u128;
        let mult = ((NS_PER_S << SHIFT) + hz128 / 2) / hz128;
        // MIN_HZ keeps mult below 2^64 (10^9 · 2^32 / 10^3 ≈ 4.3 · 10^15).
        let mult = mult as u64;
        let frac_max = (1u64 << SHIFT) - 1;
        let max_delta = (u64::MAX - frac_max) / mult;
        Ok(Scale {
            mult,
            shift: SHIFT,
            max_delta,
        })
    }

    /// `(delta × mult + frac) >> shift`; exact for `delta ≤ max_delta` and
    /// `frac < 2^shift`. Wrapping arithmetic keeps misuse panic-free (the result is
    /// then meaningless, never UB).
    #[inline(always)]
    pub fn to_ns_fast(&self, delta: u64, frac: u64) -> u64 {
        delta.wrapping_mul(self.mult).wrapping_add(frac) >> self.shift
    }

    /// The reference: the same formula in 128-bit arithmetic, valid for any input.
    pub fn to_ns_exact(&self, delta: u64, frac: u64) -> u128 {
        (delta as u128 * self.mult as u128 + frac as u128) >> self.shift
    }

    /// Whole nanoseconds and the new sub-nanosecond remainder (`< 2^shift`) after
    /// `delta` ticks, starting from remainder `frac`. Moving a base by
    /// `(delta, ns)` and carrying the remainder keeps the timeline bit-for-bit equal
    /// to never moving it. Exact for any `delta` (u128, like [`Scale::to_ns_exact`]):
    /// a base is moved on the cold path, often after more than `max_delta` ticks.
    /// Needs `frac < 2^shift`.
    #[inline]
    pub fn advance(&self, delta: u64, frac: u64) -> (u64, u64) {
        let fixed = delta as u128 * self.mult as u128 + frac as u128;
        (
            (fixed >> self.shift) as u64,
            (fixed & ((1u128 << self.shift) - 1)) as u64,
        )
    }

    /// The frequency this scale represents, rounded (10⁹ · 2^shift / mult).
    pub fn hz(&self) -> u64 {
        let m = self.mult as u128;
        (((NS_PER_S << self.shift) + m / 2) / m) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::testutil::Rng;

    /// Log-uniform in [lo, hi].
    fn log_uniform(rng: &mut Rng, lo: u64, hi: u64) -> u64 {
        let bits_lo = 64 - lo.leading_zeros();
        let bits_hi = 64 - hi.leading_zeros();
        let bits = bits_lo + rng.below((bits_hi - bits_lo + 1) as u64) as u32;
        let v = if bits >= 64 {
            rng.next()
        } else {
            (1u64 << (bits - 1)) | rng.below(1u64 << (bits - 1))
        };
        v.clamp(lo, hi)
    }

    fn frequencies(rng: &mut Rng) -> Vec<u64> {
        let mut f = vec![
            1_000_000,
            1_000_001,
            19_200_000,
            24_000_000,
            25_000_000,
            62_500_000,
            512_000_000,
            999_999_999,
            1_000_000_000,
            1_000_000_001,
            2_099_999_000,
            2_445_417_000,
            3_000_000_000,
            4_294_967_296,
            9_999_999_999,
            10_000_000_000,
        ];
        for _ in 0..300 {
            f.push(log_uniform(rng, 1_000_000, 10_000_000_000));
        }
        f
    }

    #[test]
    fn fast_equals_exact_over_the_whole_claimed_range() {
        let mut rng = Rng(0x5eed_1234);
        let frac_limit = 1u64 << SHIFT;
        for hz in frequencies(&mut rng) {
            let s = Scale::for_frequency(hz).unwrap();
            let mut deltas = vec![0, 1, s.max_delta, s.max_delta - 1, s.max_delta / 2];
            for _ in 0..2_000 {
                deltas.push(rng.below(s.max_delta + 1));
            }
            for delta in deltas {
                for frac in [0, frac_limit - 1, rng.below(frac_limit)] {
                    let exact = s.to_ns_exact(delta, frac);
                    assert_eq!(
                        s.to_ns_fast(delta, frac) as u128,
                        exact,
                        "hz={hz} delta={delta} frac={frac}"
                    );
                    let (ns, rem) = s.advance(delta, frac);
                    assert_eq!(ns as u128, exact);
                    assert!(rem < frac_limit);
                    assert_eq!(
                        ((ns as u128) << SHIFT) + rem as u128,
                        delta as u128 * s.mult as u128 + frac as u128
                    );
                }
            }
        }
    }

    #[test]
    fn max_delta_is_maximal_and_covers_four_seconds() {
        let mut rng = Rng(42);
        for hz in frequencies(&mut rng) {
            let s = Scale::for_frequency(hz).unwrap();
            let top = (1u128 << SHIFT) - 1;
            assert!(s.max_delta as u128 * s.mult as u128 + top <= u64::MAX as u128);
            assert!(
                (s.max_delta as u128 + 1) * s.mult as u128 + top > u64::MAX as u128,
                "hz={hz}: max_delta is not the largest safe delta"
            );
            assert!(s.max_delta >= 4 * hz, "hz={hz}: covers < 4 s");
            // And in nanoseconds: the converted span is ≥ 4 s too.
            assert!(s.to_ns_exact(s.max_delta, 0) >= 4_000_000_000);
        }
    }

    #[test]
    fn mult_error_is_within_the_documented_bound() {
        let mut rng = Rng(7);
        let target = NS_PER_S << SHIFT; // exact mult · hz
        let bound_ppb = MULT_ERROR_BOUND_PPB;
        let mut worst_ppb = 0f64;
        for hz in frequencies(&mut rng) {
            let s = Scale::for_frequency(hz).unwrap();
            let product = s.mult as u128 * hz as u128;
            let err = product.abs_diff(target);
            // Round to nearest: |mult − exact| ≤ 1/2, i.e. |mult·hz − target| ≤ hz/2.
            assert!(err <= hz as u128 / 2 + 1, "hz={hz} err={err}");
            let ppb = err as f64 * 1e9 / target as f64;
            worst_ppb = worst_ppb.max(ppb);
            assert!(ppb <= bound_ppb, "hz={hz}: {ppb} ppb");
            assert!(s.hz().abs_diff(hz) <= 1 + hz / 100_000_000, "hz={hz}");
        }
        // The bound is tight enough to mean something: 10 GHz gets close to it.
        assert!(worst_ppb > 0.5, "worst {worst_ppb}");
    }

    #[test]
    fn one_gigahertz_is_the_identity() {
        let s = Scale::for_frequency(1_000_000_000).unwrap();
        assert_eq!(s.mult, 1 << SHIFT);
        for d in [0, 1, 123_456_789, s.max_delta] {
            assert_eq!(s.to_ns_fast(d, 0), d);
        }
    }

    #[test]
    fn frequencies_outside_the_range_are_refused() {
        for hz in [0, 1, MIN_HZ - 1, MAX_HZ + 1, u64::MAX] {
            let e = Scale::for_frequency(hz).unwrap_err();
            assert_eq!(e.kind(), ErrorKind::InvalidArgument);
        }
        assert!(Scale::for_frequency(MIN_HZ).is_ok());
    }

    #[test]
    fn advance_is_exact_beyond_the_fast_range() {
        let s = Scale::for_frequency(2_445_417_123).unwrap();
        let top = (1u64 << SHIFT) - 1;
        for delta in [s.max_delta + 1, s.max_delta * 1000, u64::MAX / 4] {
            let (ns, rem) = s.advance(delta, top);
            assert_eq!(
                ((ns as u128) << SHIFT) + rem as u128,
                delta as u128 * s.mult as u128 + top as u128
            );
            assert_eq!(ns as u128, s.to_ns_exact(delta, top));
        }
    }

    #[test]
    fn moving_the_base_in_steps_matches_one_big_step() {
        // Converting delta in pieces while carrying the remainder is bit-identical.
        let s = Scale::for_frequency(2_445_417_123).unwrap();
        let mut rng = Rng(99);
        let total = s.max_delta;
        let (mut ns, mut frac, mut done) = (0u64, 0u64, 0u64);
        while done < total {
            let step = (1 + rng.below(s.max_delta / 3)).min(total - done);
            let (dns, f) = s.advance(step, frac);
            ns += dns;
            frac = f;
            done += step;
        }
        assert_eq!(ns as u128, s.to_ns_exact(total, 0));
    }
}
