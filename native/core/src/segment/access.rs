//! What a handle may do with its page: a per-user segment's processes all
//! write it; the host page has one writer, `hrts daemon`, and readers only.

use crate::error::{Error, ErrorKind};

/// Whose page a handle maps and what it may do with it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    /// A per-user segment: this process may move, tie and repair it.
    User,
    /// The host page, mapped read-only: this process never writes it.
    HostReader,
    /// The host page as `hrts daemon` keeps it: its only writer.
    HostWriter,
}

/// The error a host page reader gets for what only the daemon may do.
pub(crate) fn read_only(name: &str, what: &str) -> Error {
    Error::new(
        ErrorKind::Permission,
        format!(
            "{what} is not possible here: this process reads the host page {name}, which only \
             `hrts daemon` writes; restart the daemon to re-pair it, or set HRTS_HOST=off (or \
             HRTS_SEGMENT) to use a per-user segment"
        ),
    )
}

/// Test hook: how long (µs) the daemon holds the writer role before each tie,
/// move or repair, so that a test's `SIGKILL` or `SIGSTOP` lands in the
/// middle of one.
#[cfg(any(test, feature = "testing"))]
static PAUSE_US: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// Test hook: sets the daemon's pause inside every tie, move or repair (µs).
#[cfg(any(test, feature = "testing"))]
pub fn set_pause_for_test(us: u64) {
    PAUSE_US.store(us, std::sync::atomic::Ordering::Relaxed);
}

#[cfg(any(test, feature = "testing"))]
pub(crate) fn pause_for_test() {
    let us = PAUSE_US.load(std::sync::atomic::Ordering::Relaxed);
    if us > 0 {
        std::thread::sleep(std::time::Duration::from_micros(us));
    }
}
