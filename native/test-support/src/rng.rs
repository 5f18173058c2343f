//! splitmix64: small, seedable and deterministic, so a failing randomised
//! test reproduces exactly from its seed.

/// The generator; its state is the seed to begin with (`Rng(seed)`).
#[derive(Clone, Debug)]
pub struct Rng(pub u64);

impl Rng {
    /// The next 64 random bits. (Not `Iterator::next`: an endless iterator
    /// would make every caller unwrap an `Option` that is never `None`.)
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in [0, n) (the high half of a 128-bit product: no modulo bias).
    pub fn below(&mut self, n: u64) -> u64 {
        ((self.next() as u128 * n as u128) >> 64) as u64
    }

    /// Uniform in [-1, 1).
    pub fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 52) as f64 - 1.0
    }

    /// `n` random bytes (the low byte of `n` draws).
    pub fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.next() as u8).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::Rng;

    #[test]
    fn the_sequence_is_splitmix64s() {
        // The first outputs for seed 0 (Vigna's reference implementation).
        let mut r = Rng(0);
        assert_eq!(r.next(), 0xe220_a839_7b1d_cdaf);
        assert_eq!(r.next(), 0x6e78_9e6a_a1b9_65f4);
        let mut r = Rng(7);
        assert!((0..1000).all(|_| r.below(10) < 10));
        assert!((0..1000)
            .map(|_| r.unit())
            .all(|u| (-1.0..1.0).contains(&u)));
        assert_eq!(Rng(3).bytes(4).len(), 4);
    }
}
