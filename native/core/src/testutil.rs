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
    /// `cfg` with ties a minute apart, for a test whose segment must not tie
    /// between two of its steps: at the default second, a test slowed past it
    /// (under Wine beside the cargo stage, 2026-11-28) had a stamp tie, which
    /// publishes a new line and the host's own bound word.
    pub fn quiet_cfg(&self) -> Config {
        let mut cfg = self.cfg();
        cfg.tracking.interval = std::time::Duration::from_secs(60);
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
    #[cfg(not(windows))]
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

/// How far the time `stamp` returns is from the system clock: 0 if it lies
/// between the clock's readings just before and just after it, else its
/// distance to the nearer one (negative: behind). A test preempted between a
/// stamp and a single reading of the clock would take the preemption for an
/// error of the line (24 ms under Wine at nice 19 beside the cargo stage,
/// 2026-11-29).
pub fn off_clock(stamp: impl FnOnce() -> u64) -> i64 {
    let before = crate::os::realtime_ns() as i64;
    let ns = stamp() as i64;
    let after = crate::os::realtime_ns() as i64;
    if ns < before {
        ns - before
    } else {
        (ns - after).max(0)
    }
}

/// splitmix64: deterministic, so a failing randomised test reproduces exactly
/// (shared with the other crates' tests).
pub use hrts_test_support::Rng;
