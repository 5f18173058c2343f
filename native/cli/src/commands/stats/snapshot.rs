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

/// A snapshot of segment `name`; `None` if there is no such segment.
pub fn take(name: &str) -> Result<Option<Snapshot>, CliError> {
    Ok(StatsSegment::attach(name)?.map(|seg| seg.snapshot()))
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
