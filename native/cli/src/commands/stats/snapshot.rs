//! Reading and rendering one snapshot of the statistics segment: what showing
//! it and serving it share.

use crate::exit::CliError;
use hrts_stats::shared::{name_from_env, read_time, PrometheusOptions, Snapshot, StatsSegment};

/// How a snapshot is printed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Table,
    Json,
    Prometheus,
    /// The same metrics in the OpenMetrics 1.0 text format.
    OpenMetrics,
}

/// `--segment`, else HRTS_STATS_SEGMENT, else `/hrts-stats-<uid>`.
pub fn segment_name(segment: Option<&str>) -> String {
    segment.map_or_else(name_from_env, str::to_string)
}

/// A snapshot of segment `name` with the host daemon's health statistics
/// (`commands::daemon_health`) in it; `None` if there is neither.
pub fn take(name: &str) -> Result<Option<Snapshot>, CliError> {
    let snap = StatsSegment::attach(name)?.map(|seg| seg.snapshot());
    Ok(match (snap, daemon_health()) {
        (Some(mut snap), Some(health)) => {
            snap.processes.extend(health.processes);
            snap.damaged_slots.extend(health.damaged_slots);
            snap.damaged_cells.extend(health.damaged_cells);
            Some(snap)
        }
        (snap, None) => snap,
        (None, Some(health)) => Some(health),
    })
}

/// The host daemon's health statistics, if a daemon publishes them where
/// this process looks for the host page (`HRTS_HOST_DIR`), in a file owned
/// by root or the service user (`HRTS_HOST_USER`); `HRTS_HOST=off` looks
/// nowhere. A file that is refused is said on stderr (once per reason) and
/// left out: the other statistics are shown all the same.
fn daemon_health() -> Option<Snapshot> {
    if std::env::var(hrts_core::env::HOST).is_ok_and(|v| v == "off") {
        return None;
    }
    let host = hrts_core::HostConfig::from_env();
    let trusted = hrts_core::storage::host::trusted_uids(&host.user);
    let path = crate::commands::daemon_health::path(&host.dir);
    match StatsSegment::attach_file(&path, &trusted) {
        Ok(seg) => seg.map(|seg| seg.snapshot()),
        Err(e) => {
            // Once per reason, not at every rendering of a server's.
            static SAID: std::sync::Mutex<String> = std::sync::Mutex::new(String::new());
            let why = e.to_string();
            let mut said = SAID.lock().unwrap_or_else(|p| p.into_inner());
            if *said != why {
                eprintln!("hrts: the host daemon's health statistics are left out: {why}");
                *said = why;
            }
            None
        }
    }
}

/// What a reader shows when no process has published: no process at all.
pub fn empty(name: &str) -> Snapshot {
    Snapshot::empty(name, read_time())
}

/// `pid_label`: label every Prometheus sample with its pid (`--pid-label`).
pub fn render(snap: &Snapshot, format: Format, pid_label: bool) -> String {
    match format {
        Format::Table => snap.to_table(),
        Format::Json => snap.to_json() + "\n",
        Format::Prometheus => snap.to_prometheus_with(PrometheusOptions {
            pid_label,
            openmetrics: false,
        }),
        Format::OpenMetrics => snap.to_prometheus_with(PrometheusOptions {
            pid_label,
            openmetrics: true,
        }),
    }
}
