//! Where time stamps come from: the hrts shared timeline, or a manual clock
//! that tests move by hand.

use hrts_core::{Result, SharedBase};
use std::sync::atomic::AtomicU64;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;

/// The clock of a [`Stats`](crate::Stats) instance.
#[derive(Clone)]
pub enum Clock {
    /// Epoch nanoseconds on the shared hrts timeline (the default segment).
    Hrts(&'static SharedBase),
    /// A value set by [`ManualClock`].
    Manual(Arc<AtomicU64>),
}

impl Clock {
    /// The process's default hrts segment, opened if needed.
    pub fn hrts() -> Result<Clock> {
        Ok(Clock::Hrts(hrts_core::process::global()?))
    }

    /// A clock that reads `start` until the returned handle moves it.
    pub fn manual(start: u64) -> (Clock, ManualClock) {
        let cell = Arc::new(AtomicU64::new(start));
        (Clock::Manual(cell.clone()), ManualClock(cell))
    }

    #[inline(always)]
    pub fn now(&self) -> u64 {
        match self {
            Clock::Hrts(base) => base.now_ns(),
            Clock::Manual(cell) => cell.load(Relaxed),
        }
    }
}

/// Moves a manual [`Clock`].
#[derive(Clone)]
pub struct ManualClock(Arc<AtomicU64>);

impl ManualClock {
    pub fn set(&self, ns: u64) {
        self.0.store(ns, Relaxed);
    }

    pub fn advance(&self, ns: u64) {
        self.0.fetch_add(ns, Relaxed);
    }

    pub fn now(&self) -> u64 {
        self.0.load(Relaxed)
    }
}
