//! Statistics every process of the user can read: each publishing
//! [`Stats`](crate::Stats) instance owns cells in a named shared-memory segment
//! (`/hrts-stats-<uid>` by default, mode 0600) and its processing thread writes
//! its metrics there; any process opens the segment and takes a [`Snapshot`]
//! without the instrumented process doing anything.
//!
//! Also here: timer instances that start in one process and stop in another
//! ([`Timer::start_shared`](crate::Timer::start_shared)), through a table of
//! running instances in the same segment.

mod aggregate;
mod expose;
mod snapshot;

pub use snapshot::{ProcessState, ProcessStats, Snapshot};

use hrts_core::{Error, ErrorKind, Result, Sharing};
use std::time::Duration;

/// Names the statistics segment (default `/hrts-stats-<uid>`).
pub const ENV_SEGMENT: &str = "HRTS_STATS_SEGMENT";
/// Shares the statistics segment with a group (a group name or gid; mode 0660).
pub const ENV_GROUP: &str = "HRTS_STATS_GROUP";
/// How long the cells of a process that is gone stay readable, in milliseconds
/// (default 60000).
pub const ENV_GRACE_MS: &str = "HRTS_STATS_GRACE_MS";

/// The default statistics segment name of the calling user.
pub fn default_name() -> String {
    // SAFETY: getuid cannot fail and has no preconditions.
    format!("/hrts-stats-{}", unsafe { libc::getuid() })
}

/// Where and how a [`Stats`](crate::Stats) instance publishes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SharedConfig {
    pub name: String,
    pub sharing: Sharing,
    /// How long a gone process's cells stay before a writer reclaims them.
    pub grace: Duration,
}

impl SharedConfig {
    /// From `HRTS_STATS_SEGMENT`, `HRTS_STATS_GROUP` and `HRTS_STATS_GRACE_MS`.
    pub fn from_env() -> Result<SharedConfig> {
        Err(Error::new(ErrorKind::InvalidArgument, "not built yet"))
    }
}

/// An open statistics segment.
pub struct StatsSegment {
    name: String,
}

impl StatsSegment {
    /// Creates the segment or attaches to it (writers).
    pub fn open(cfg: &SharedConfig) -> Result<StatsSegment> {
        let _ = cfg;
        Err(Error::new(ErrorKind::InvalidArgument, "not built yet"))
    }

    /// Attaches to an existing segment (readers); `None` if there is none, that
    /// is, no process has published statistics under that name.
    pub fn attach(name: &str) -> Result<Option<StatsSegment>> {
        let _ = name;
        Err(Error::new(ErrorKind::InvalidArgument, "not built yet"))
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// Every registered instance's metrics as of its last publication.
    pub fn snapshot(&self) -> Snapshot {
        unimplemented!()
    }

    /// Removes the segment (name and page); `false` if there was none.
    pub fn unlink(name: &str) -> Result<bool> {
        let _ = name;
        Err(Error::new(ErrorKind::InvalidArgument, "not built yet"))
    }
}

pub(crate) fn timer_start(inner: &crate::stats::Inner, id: u32, instance: u64) -> Result<()> {
    let _ = (inner, id, instance);
    Err(Error::new(ErrorKind::InvalidArgument, "not built yet"))
}

pub(crate) fn timer_stop(
    inner: &crate::stats::Inner,
    id: u32,
    instance: u64,
    record: bool,
) -> Result<Option<u64>> {
    let _ = (inner, id, instance, record);
    Err(Error::new(ErrorKind::InvalidArgument, "not built yet"))
}
