//! WTMLIB's conversion of counter ticks to nanoseconds on the fly, and its
//! "seconds before wrap" (the C and Java interfaces build on these).
//!
//! The method is fio's, as WTMLIB describes it: ticks are split into whole
//! moduli and a remainder, `ticks = k · 2^modulus_shift + remainder`. The
//! nanoseconds in one modulus are computed once (`ns_per_modulus`); the
//! remainder goes through the multiply-shift of [`Scale`]
//! (`(remainder · mult) >> shift`), which cannot overflow because a modulus is
//! at most `Scale::max_delta` ticks. So any tick count converts with one shift,
//! one mask, two multiplications and no division.

use super::convert::Scale;

/// What converting ticks to nanoseconds needs, for one counter frequency.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ConversionParams {
    /// The counter frequency, Hz (the segment's calibrated one).
    pub hz: u64,
    /// Nanoseconds per tick times `2^shift`.
    pub mult: u64,
    /// The binary point of `mult` (32).
    pub shift: u32,
    /// A modulus is `2^modulus_shift` ticks: the largest power of two not above
    /// `Scale::max_delta` (about 4 s of ticks).
    pub modulus_shift: u32,
    /// Whole nanoseconds in one modulus.
    pub ns_per_modulus: u64,
}

impl ConversionParams {
    /// The parameters of `scale` (a counter of `hz` ticks per second).
    pub fn new(scale: &Scale, hz: u64) -> ConversionParams {
        let modulus_shift = 63 - scale.max_delta.max(1).leading_zeros();
        let ns = scale.to_ns_exact(1u64 << modulus_shift, 0);
        ConversionParams {
            hz,
            mult: scale.mult,
            shift: scale.shift,
            modulus_shift,
            ns_per_modulus: u64::try_from(ns).unwrap_or(u64::MAX),
        }
    }

    /// Nanoseconds in `ticks` (elapsed ticks, not a counter value). Wrapping
    /// arithmetic: past 2^64 ns (584 years) the result is meaningless, never a
    /// panic.
    #[inline(always)]
    pub fn ticks_to_ns(&self, ticks: u64) -> u64 {
        let mask = (1u64 << self.modulus_shift) - 1;
        (ticks >> self.modulus_shift)
            .wrapping_mul(self.ns_per_modulus)
            .wrapping_add((ticks & mask).wrapping_mul(self.mult) >> self.shift)
    }
}

/// Whole seconds before a 64-bit counter now at `counter` wraps to zero, at
/// `hz` ticks per second (`u64::MAX` for a frequency of 0).
pub fn secs_before_wrap(counter: u64, hz: u64) -> u64 {
    (u64::MAX - counter).checked_div(hz).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conversion_matches_the_exact_one_within_the_modulus_rounding() {
        for hz in [
            1_000u64,
            3_579_545,
            24_000_000,
            512_000_000,
            2_596_145_832,
            10_000_000_000,
        ] {
            let scale = Scale::for_frequency(hz).unwrap();
            let p = ConversionParams::new(&scale, hz);
            assert!(1u64 << p.modulus_shift <= scale.max_delta);
            assert!(1u128 << (p.modulus_shift + 1) > scale.max_delta as u128);
            for ticks in [
                0u64,
                1,
                hz / 3,
                hz,
                (1 << p.modulus_shift) - 1,
                1 << p.modulus_shift,
                hz * 3600 + 17,
                hz * 86_400 * 365,
            ] {
                let exact = scale.to_ns_exact(ticks, 0);
                let got = p.ticks_to_ns(ticks) as u128;
                // Each whole modulus loses under 1 ns to the rounding of ns_per_modulus.
                let moduli = (ticks >> p.modulus_shift) as u128;
                assert!(
                    got <= exact && exact - got <= moduli + 1,
                    "{hz} Hz, {ticks}: {got} vs {exact}"
                );
            }
            // One second of ticks is one second, to the calibration's resolution.
            let s = p.ticks_to_ns(hz);
            assert!(s.abs_diff(1_000_000_000) <= 2, "{hz} Hz: {s}");
        }
    }

    #[test]
    fn seconds_before_wrap() {
        assert_eq!(secs_before_wrap(u64::MAX, 1_000), 0);
        assert_eq!(secs_before_wrap(u64::MAX - 2_999, 1_000), 2);
        assert_eq!(secs_before_wrap(0, 1_000_000_000), u64::MAX / 1_000_000_000);
        assert_eq!(secs_before_wrap(5, 0), u64::MAX);
    }
}
