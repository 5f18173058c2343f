//! What a reader of the statistics segment gets: every registered statistics
//! instance (one per [`Stats`](crate::Stats) that publishes, normally one per
//! process) with its metrics, as typed values.

use crate::dump::Dump;

/// Whether the process that published an entry is still there.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProcessState {
    /// The process is running (its pid is alive and started when it registered).
    Live,
    /// The process is gone (exited or killed); its cells stay readable until a
    /// writer reclaims them after the grace period.
    Exited,
}

impl ProcessState {
    pub fn name(self) -> &'static str {
        match self {
            ProcessState::Live => "live",
            ProcessState::Exited => "exited",
        }
    }
}

/// One publishing statistics instance and its metrics at its last publication.
#[derive(Clone, Debug, PartialEq)]
pub struct ProcessStats {
    pub pid: u32,
    /// Which instance of the process (1 for the first one that published;
    /// a process that makes several [`Stats`](crate::Stats) has several).
    pub instance: u32,
    /// The program (service) name it registered under, at most 31 bytes:
    /// `shared-memory.program`, else `HRTS_STATS_PROGRAM`, else (Java) the
    /// main class or jar, else `/proc/PID/comm`.
    pub program: String,
    /// The instance id the user set (`shared-memory.instance-id`, else
    /// `HRTS_STATS_INSTANCE_ID`); empty when none was. With `program`, what
    /// names the process in the Prometheus exposition across restarts.
    pub instance_id: String,
    pub state: ProcessState,
    /// The metrics as of the instance's last publication; `dump.timestamp` is
    /// when that was (epoch nanoseconds on the hrts timeline).
    pub dump: Dump,
}

/// Everything in a statistics segment at one moment.
#[derive(Clone, Debug, PartialEq)]
pub struct Snapshot {
    /// The segment's name (`/hrts-stats-<uid>` by default).
    pub segment: String,
    /// When the snapshot was taken (epoch nanoseconds on the hrts timeline).
    pub taken: u64,
    /// Ordered by pid, then instance.
    pub processes: Vec<ProcessStats>,
    /// Process slots whose words do not match their check words (a process
    /// wrote over them): left out of `processes`, with their metrics.
    /// Ascending.
    pub damaged_slots: Vec<usize>,
    /// Metric cells whose words do not match their check word (or that
    /// belong to a damaged slot): left out of every dump. Ascending.
    pub damaged_cells: Vec<usize>,
}

impl Snapshot {
    /// A snapshot of a segment nobody has published to: no process.
    pub fn empty(segment: &str, taken: u64) -> Snapshot {
        Snapshot {
            segment: segment.to_string(),
            taken,
            processes: Vec::new(),
            damaged_slots: Vec::new(),
            damaged_cells: Vec::new(),
        }
    }

    /// Whether any slot or cell was left out as damaged.
    pub fn has_damage(&self) -> bool {
        !self.damaged_slots.is_empty() || !self.damaged_cells.is_empty()
    }
}
