//! Statistics every process of the user can read: each publishing
//! [`Stats`](crate::Stats) instance owns cells in a named shared-memory segment
//! (`/hrts-stats-<uid>` by default, mode 0600) and its processing thread writes
//! its metrics there; any process opens the segment and takes a [`Snapshot`]
//! without the instrumented process doing anything.
//!
//! - **Where:** the segment is stored like the time segment (a POSIX name and a
//!   System V page, see `hrts_core::storage`), so a truncated, foreign,
//!   other-version or damaged object is refused with a clear error, never a
//!   signal. Its layout is stated once, in `layout`.
//! - **Who writes what:** an instance registers in a process slot and claims
//!   one cell per metric; only its processing thread (or a thread making a
//!   dump) writes its cells, with no lock and no system call. Measuring points
//!   do not touch the segment at all: they write the thread's own queue as
//!   before.
//! - **When:** at every dump ([`Stats::dump`](crate::Stats::dump),
//!   [`json_dump`](crate::Stats::json_dump), the periodic dumps, `stop`) the
//!   whole dump is published, so a reader sees exactly what the process's own
//!   latest dump says; between dumps, metrics that changed are published every
//!   `shared-memory.interval` (default 100 ms).
//! - **Crashes:** a cell holds two payload buffers and a sequence word; a
//!   writer killed mid-publication leaves the previous publication whole. A
//!   process that is gone shows as [`ProcessState::Exited`] until a writer
//!   reclaims its slot and cells, `HRTS_STATS_GRACE_MS` (default 60 s) after it
//!   was first seen gone.
//! - **Across processes:** [`Timer::start_shared`](crate::Timer::start_shared)
//!   puts a running instance (name, instance id, start stamp) in a table in the
//!   segment; [`Timer::stop_shared`](crate::Timer::stop_shared) in any process of
//!   the user takes it and records the span on the shared timeline.
//!
//! Capacity (fixed by the layout): 1024 registered instances, 16384 metric
//! cells, 8192 running shared timer instances; a full area is an
//! [`ErrorKind::Full`] error where the metric or instance is created.

mod aggregate;
mod cells;
mod codec;
mod expose;
#[cfg(unix)]
mod file;
#[cfg(windows)]
#[path = "file_windows.rs"]
mod file;
mod layout;
mod processes;
pub(crate) mod publish;
mod read;
mod segment;
mod snapshot;
#[cfg(test)]
mod tests;
pub(crate) mod timers;

pub use expose::PrometheusOptions;
pub use segment::StatsSegment;
pub use snapshot::{ProcessState, ProcessStats, Snapshot};

use hrts_core::{Error, ErrorKind, Result, Sharing};
use std::time::Duration;

/// Names the statistics segment (default `/hrts-stats-<uid>`).
pub const ENV_SEGMENT: &str = "HRTS_STATS_SEGMENT";
/// Shares a statistics segment this process creates with a group (a group name
/// or gid; mode 0660).
pub const ENV_GROUP: &str = "HRTS_STATS_GROUP";
/// How long the cells of a process that is gone stay readable, in milliseconds
/// (default 60000).
pub const ENV_GRACE_MS: &str = "HRTS_STATS_GRACE_MS";
/// The program (service) name a publishing process registers under (default:
/// `/proc/self/comm`; Java: the main class or jar); the configuration key
/// `shared-memory.program` wins over it.
pub const ENV_PROGRAM: &str = "HRTS_STATS_PROGRAM";
/// A stable id of this process among those of its program (a replica's
/// number or name), kept across restarts; the configuration key
/// `shared-memory.instance-id` wins over it. Default: none.
pub const ENV_INSTANCE_ID: &str = "HRTS_STATS_INSTANCE_ID";

/// Longest program name or instance id a process slot keeps, in bytes.
pub const MAX_LABEL_BYTES: usize = layout::PROGRAM_BYTES - 1;
const _: () = assert!(layout::INSTANCE_ID_BYTES - 1 == MAX_LABEL_BYTES);

/// Whether `value` can be a program name or instance id: 1 to 31 bytes of
/// UTF-8 without control characters. The error says what is wrong.
pub fn check_label(value: &str) -> std::result::Result<(), String> {
    if value.is_empty() {
        Err("it is empty".to_string())
    } else if value.len() > MAX_LABEL_BYTES {
        Err(format!(
            "it has {} bytes, more than the {MAX_LABEL_BYTES} a process slot keeps",
            value.len()
        ))
    } else if value.chars().any(char::is_control) {
        Err("it has a control character".to_string())
    } else {
        Ok(())
    }
}

/// What the host language set (see [`set_host_identity`]).
static HOST_IDENTITY: std::sync::Mutex<(Option<String>, Option<String>)> =
    std::sync::Mutex::new((None, None));

/// The program name and instance id the host language found (Java: the
/// `hrts.stats.program` and `hrts.stats.instanceId` system properties, else the
/// main class or jar when `HRTS_STATS_PROGRAM` is unset): they win over the
/// environment and lose to the configuration keys. `None` leaves a value to
/// the environment and the default. Applies to instances that register later.
pub fn set_host_identity(program: Option<&str>, instance_id: Option<&str>) -> Result<()> {
    for (what, v) in [("program name", program), ("instance id", instance_id)] {
        if let Some(v) = v {
            check_label(v).map_err(|why| {
                Error::new(
                    ErrorKind::InvalidArgument,
                    format!(
                        "statistics {what} {v:?} cannot be used: {why}; give 1 to \
                         {MAX_LABEL_BYTES} bytes without control characters"
                    ),
                )
            })?;
        }
    }
    *HOST_IDENTITY.lock().unwrap_or_else(|p| p.into_inner()) =
        (program.map(str::to_string), instance_id.map(str::to_string));
    Ok(())
}

/// `NAME`'s value if set and not empty, checked as a label.
fn label_from_env(name: &str) -> Result<Option<String>> {
    match std::env::var(name) {
        Ok(v) if !v.is_empty() => match check_label(&v) {
            Ok(()) => Ok(Some(v)),
            Err(why) => Err(Error::new(
                ErrorKind::InvalidArgument,
                format!(
                    "{name}={v:?} cannot be used: {why}; give 1 to {MAX_LABEL_BYTES} bytes \
                     without control characters, or unset it"
                ),
            )),
        },
        _ => Ok(None),
    }
}

/// This process's name (`/proc/self/comm`).
fn comm() -> String {
    std::fs::read_to_string("/proc/self/comm")
        .unwrap_or_default()
        .trim_end()
        .to_string()
}

/// Capacity of a statistics segment: registered instances, metric cells,
/// running shared timer instances.
pub const CAPACITY: (usize, usize, usize) =
    (layout::PROCESS_SLOTS, layout::CELLS, layout::INSTANCE_SLOTS);

/// The default statistics segment name of the calling user.
pub fn default_name() -> String {
    format!("/hrts-stats-{}", hrts_core::process::euid())
}

/// The segment name the environment gives (`HRTS_STATS_SEGMENT`), else the default.
pub fn name_from_env() -> String {
    match std::env::var(ENV_SEGMENT) {
        Ok(n) if !n.is_empty() => n,
        _ => default_name(),
    }
}

/// When a reader reads (epoch ns): on the timeline if this process has its
/// time segment open, else the system's calendar. A reader does not open (or
/// create) a time segment only for this.
pub fn read_time() -> u64 {
    hrts_core::process::global_if_open().map_or_else(
        || {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos() as u64)
        },
        |b| b.now_ns(),
    )
}

/// Where and how a [`Stats`](crate::Stats) instance publishes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SharedConfig {
    pub name: String,
    pub sharing: Sharing,
    /// How long a gone process's cells stay before a writer reclaims them.
    pub grace: Duration,
    /// The program (service) name the instance registers under: at most
    /// [`MAX_LABEL_BYTES`] (a longer one is cut).
    pub program: String,
    /// The instance id the user set; empty for none.
    pub instance_id: String,
}

impl SharedConfig {
    /// From `HRTS_STATS_SEGMENT`, `HRTS_STATS_GROUP`, `HRTS_STATS_GRACE_MS`,
    /// `HRTS_STATS_PROGRAM` and `HRTS_STATS_INSTANCE_ID`, below what the host
    /// language set ([`set_host_identity`]).
    pub fn from_env() -> Result<SharedConfig> {
        let (host_program, host_id) = HOST_IDENTITY
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        let program = match host_program {
            Some(p) => p,
            None => label_from_env(ENV_PROGRAM)?.unwrap_or_else(comm),
        };
        let instance_id = match host_id {
            Some(i) => i,
            None => label_from_env(ENV_INSTANCE_ID)?.unwrap_or_default(),
        };
        let grace = match std::env::var(ENV_GRACE_MS) {
            Ok(v) if !v.is_empty() => Duration::from_millis(v.parse().map_err(|_| {
                Error::new(
                    ErrorKind::InvalidArgument,
                    format!("{ENV_GRACE_MS}={v:?} is not a whole number of milliseconds"),
                )
            })?),
            _ => Duration::from_secs(60),
        };
        Ok(SharedConfig {
            name: name_from_env(),
            sharing: hrts_core::storage::sharing_from_env(ENV_GROUP)?,
            grace,
            program,
            instance_id,
        })
    }
}

impl StatsSegment {
    /// Every registered instance's metrics as of its last publication.
    pub fn snapshot(&self) -> Snapshot {
        read::snapshot(self, read_time())
    }

    /// A snapshot of the segment `name`, or an empty one (no process, `taken`
    /// 0) if there is no such segment: nobody has published there yet.
    pub fn snapshot_of(name: &str) -> Result<Snapshot> {
        Ok(match StatsSegment::attach(name)? {
            Some(seg) => seg.snapshot(),
            None => Snapshot::empty(name, 0),
        })
    }

    /// Shared timer instances running now.
    pub fn running_shared_timers(&self) -> usize {
        timers::running(self)
    }
}
