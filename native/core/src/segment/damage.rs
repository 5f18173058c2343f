//! What a process remembers about the shared line so that a damaged line never
//! takes its stamps backward, and what it reports about the damage it met.
//!
//! A stamp that finds the active line damaged while another process holds the
//! writer role cannot repair it, and the fast stamps it took before from the
//! whole line kept no record (the hot path stores nothing). So the slow paths
//! keep what they see: the last line they read whole with the seqlock count it
//! was published under, and the highest stamp answered in place of a damaged
//! line. Whatever answers a damaged line (see `timeline::stamp::stamp_unverified`) is
//! raised to that highest stamp.

use crate::error::{Error, ErrorKind};
use std::sync::atomic::AtomicU64;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Mutex;

/// How a stamp answered a line it found damaged.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Answer {
    /// From the line itself, one damaged word corrected from its check words.
    Corrected,
    /// From this process's copy of the line, read whole earlier.
    Copy,
    /// From the line before it (its inactive slot), or the calendar clock.
    Elsewhere,
}

/// One handle's memory of the line (`L`: what a stamp converts with) and
/// count of damage met (boxed in `SharedBase`, so the handle the hot path
/// reads stays small).
pub(crate) struct LineMemory<L> {
    /// The seqlock count of `line` + 1 (0: none yet), read without the lock.
    count: AtomicU64,
    line: Mutex<Option<(u64, L)>>,
    /// The highest stamp answered in place of a damaged line.
    floor: AtomicU64,
    corrected: AtomicU64,
    copy: AtomicU64,
    elsewhere: AtomicU64,
    /// The holder's pid (in its own pid namespace) at the last damage met.
    holder: AtomicU64,
}

impl<L> Default for LineMemory<L> {
    fn default() -> Self {
        LineMemory {
            count: AtomicU64::new(0),
            line: Mutex::new(None),
            floor: AtomicU64::new(0),
            corrected: AtomicU64::new(0),
            copy: AtomicU64::new(0),
            elsewhere: AtomicU64::new(0),
            holder: AtomicU64::new(0),
        }
    }
}

impl<L: Copy> LineMemory<L> {
    /// Keeps `base`, read whole under seqlock count `count`, unless it is the
    /// line already kept or another thread is keeping one (best effort: a
    /// stamp never waits here).
    pub fn keep(&self, count: u64, base: &L) {
        if self.count.load(Relaxed) == count.wrapping_add(1) {
            return;
        }
        if let Ok(mut kept) = self.line.try_lock() {
            *kept = Some((count, *base));
            self.count.store(count.wrapping_add(1), Relaxed);
        }
    }

    /// The line kept for seqlock count `count`, if that is the one kept.
    pub fn line_of(&self, count: u64) -> Option<L> {
        if self.count.load(Relaxed) != count.wrapping_add(1) {
            return None;
        }
        match *self.line.lock().unwrap_or_else(|p| p.into_inner()) {
            Some((c, base)) if c == count => Some(base),
            _ => None,
        }
    }

    /// Counts a stamp that answered a damaged line held by `holder`, and
    /// returns `ns` raised to every stamp answered so before.
    pub fn answered(&self, how: Answer, ns: u64, holder: u32) -> u64 {
        let counter = match how {
            Answer::Corrected => &self.corrected,
            Answer::Copy => &self.copy,
            Answer::Elsewhere => &self.elsewhere,
        };
        counter.fetch_add(1, Relaxed);
        self.holder.store(holder as u64, Relaxed);
        ns.max(self.floor.fetch_max(ns, Relaxed))
    }

    /// Stamps that found the active line damaged while another process held
    /// the writer role.
    pub fn stamps(&self) -> u64 {
        self.corrected.load(Relaxed) + self.copy.load(Relaxed) + self.elsewhere.load(Relaxed)
    }

    /// The damage met so far as an error of kind `Corrupt`, or `None`.
    pub fn report(&self, name: &str) -> Option<Error> {
        let total = self.stamps();
        (total > 0).then(|| {
            Error::new(
                ErrorKind::Corrupt,
                format!(
                    "segment {name}: {total} stamps of this process found its active line \
                     damaged while another process (pid {} in its own pid namespace) held the \
                     writer role: {} answered from the line with its damaged word corrected, {} \
                     from this process's copy of the line, {} from the previous line or the \
                     calendar clock (each no lower than the ones answered before); the \
                     holder repairs the line at its next tie or move. If a fresh open (`hrts \
                     info`) still refuses the segment, find what writes into its page; \
                     removing it (`hrts unlink`) starts a new timeline",
                    self.holder.load(Relaxed),
                    self.corrected.load(Relaxed),
                    self.copy.load(Relaxed),
                    self.elsewhere.load(Relaxed),
                ),
            )
        })
    }
}
