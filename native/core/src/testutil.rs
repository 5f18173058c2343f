//! Test helpers shared by the core's unit tests.

use crate::segment::{Config, SharedBase};
use std::sync::atomic::AtomicU64;
use std::sync::atomic::Ordering::SeqCst;

/// A segment name of this test alone, unlinked when dropped.
pub struct TestName(pub String);

impl TestName {
    pub fn new(tag: &str) -> TestName {
        static N: AtomicU64 = AtomicU64::new(0);
        let name = format!(
            "/hrts-coretest-{}-{tag}-{}",
            crate::os::pid(),
            N.fetch_add(1, SeqCst)
        );
        let _ = SharedBase::unlink(&name);
        TestName(name)
    }
    pub fn cfg(&self) -> Config {
        let mut cfg = Config::named(&self.0);
        cfg.evaluate_reliability = false;
        cfg.seq_file = Some(self.seq_file());
        cfg
    }
    /// A persist file private to this test.
    pub fn seq_file(&self) -> std::path::PathBuf {
        // A directory of this test's own (the sequence module wants one nobody
        // else writes), removed with it on drop.
        std::env::temp_dir()
            .join(format!("hrts-coretest-{}", &self.0[1..]))
            .join("numbers.seq")
    }
    pub fn path(&self) -> String {
        format!("/dev/shm{}", self.0)
    }
}

impl Drop for TestName {
    fn drop(&mut self) {
        let _ = SharedBase::unlink(&self.0);
        if let Some(dir) = self.seq_file().parent() {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

/// splitmix64: deterministic, so a failing randomised test reproduces exactly.
pub struct Rng(pub u64);

impl Rng {
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
}
