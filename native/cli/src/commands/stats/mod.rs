//! `hrts stats`: what the statistics segment holds, as a table, JSON or the
//! Prometheus format, once or every few seconds (`show`); over HTTP
//! (`serve`); `hrts stats unlink` (`show`). What these share, reading and
//! rendering a snapshot, is in the leaf module `snapshot`.

#[cfg(feature = "testing")]
pub mod record;
mod serve;
mod show;
mod snapshot;

use crate::exit::CliError;
pub use snapshot::Format;
use std::time::Duration;

/// Show the metrics every process publishes in the statistics segment; serve them over HTTP;
/// remove the segment.
///
/// Every process that uses hrts statistics (Rust, C or Java) publishes its metrics in the
/// statistics segment; these commands read it without the processes doing anything.
///
/// `hrts stats` prints a table of every metric of every process (processes that exited stay,
/// marked so, until their cells are reclaimed), with durations in human units, then every
/// name aggregated over all processes (counters summed, gauges and timers at their latest
/// value, statistics merged; quantiles only when one process has data). With no segment (no
/// process has published statistics yet) it says so on stderr and prints an empty result;
/// exit status 0.
///
/// --json prints one JSON document instead: {"segment", "timestamp", "processes": [{"pid",
/// "instance", "instance_id", "program", "state", "timestamp", "metrics"}], "aggregate"},
/// metrics and aggregate in the handystats dump shape.
///
/// --prometheus prints the Prometheus text exposition format 0.0.4: counters hrts_NAME_total,
/// gauges hrts_NAME, timers as summaries hrts_NAME_seconds (a counter's own _total and a timer's
/// unit suffix are not repeated; the library's own hrts-stats.* metrics are hrts_stats_*), each
/// labelled program (the program or service name a process registered under) and hrts_instance
/// (its instance id, else its instance number): a restarted process continues the series of
/// the one before it. One process per label pair is shown: the live one, else the last that
/// exited; live processes that share a pair get a pid label too. --pid-label labels every
/// sample with its pid and shows every process (a new series at every restart). Beside each
/// metric its rate over the moving interval as a gauge (hrts_NAME_per_second: a counter's net
/// change per second; hrts_NAME_updates_per_second: a gauge's sets per second;
/// hrts_NAME_measurements_per_second: a timer's durations per second); plus
/// hrts_stats_processes{state="live"|"exited"}.
///
/// --segment names the statistics segment (default: $HRTS_STATS_SEGMENT, else
/// /hrts-stats-<uid>). Exit status: as `hrts --help` says; 3 if the segment is not a
/// statistics segment, truncated, of another layout version, or corrupt.
#[derive(clap::Args, Debug)]
pub struct StatsArgs {
    #[command(subcommand)]
    pub action: Option<StatsAction>,
    /// One JSON document instead of the table
    #[arg(long, conflicts_with = "prometheus")]
    pub json: bool,
    /// The Prometheus text format instead of the table (labels program, hrts_instance)
    #[arg(long)]
    pub prometheus: bool,
    /// With --prometheus: label every sample with its pid too, and show every process
    #[arg(long, requires = "prometheus")]
    pub pid_label: bool,
    /// Print anew every SECONDS (default 1) until interrupted; on a terminal each frame
    /// replaces the last, otherwise frames follow one another (one line each with --json)
    #[arg(long, value_name = "SECONDS", num_args = 0..=1, default_missing_value = "1",
          value_parser = watch_interval)]
    pub watch: Option<Duration>,
    /// With --watch: stop after N frames
    #[arg(long, value_name = "N", requires = "watch", value_parser = positive_count)]
    pub count: Option<u64>,
}

#[derive(clap::Subcommand, Debug)]
pub enum StatsAction {
    /// Serve /metrics (Prometheus) and /stats.json over HTTP.
    ///
    /// Answers HTTP on HOST:PORT (port 0: any free port): GET /metrics in the Prometheus format
    /// as `hrts stats --prometheus` (content type text/plain; version=0.0.4; OpenMetrics 1.0 text to
    /// clients whose Accept header asks for application/openmetrics-text), GET /stats.json as
    /// `hrts stats --json`; 404 for other paths, 405 for other methods. Prints `listening on http://HOST:PORT` (the port it
    /// got) and serves until SIGINT or SIGTERM.
    ///
    /// Each format is rendered from a snapshot at most once per --refresh-ms and that rendering
    /// answers every request in the meantime. Limits: a request head of at most 16 KiB (larger:
    /// 431) that arrives within --head-timeout-ms of the connection (else it is closed); a
    /// connection still open after --request-timeout-ms is closed; one request per connection;
    /// --max-connections open at once: one more closes the oldest connection that has not sent
    /// its request head (if all have, the oldest of all), so idle and slow clients, however
    /// many, cannot keep a scrape out. Raises its soft limit on open files to the hard limit
    /// and refuses to start if --max-connections does not fit in it. A client that reads slowly
    /// or not at all holds only its own connection. HTTP/1.1 is served by hyper.
    Serve {
        /// Where to answer, e.g. 127.0.0.1:9464
        #[arg(long, value_name = "HOST:PORT", value_parser = super::units::non_empty)]
        listen: String,
        /// Render each format at most once per MS milliseconds (0: for every request)
        #[arg(long, value_name = "MS", default_value_t = 1000,
              value_parser = clap::value_parser!(u64).range(0..=3_600_000))]
        refresh_ms: u64,
        /// Most connections open at once; one more closes the oldest idle or partial one
        #[arg(long, value_name = "N", default_value_t = 512,
              value_parser = clap::value_parser!(u64).range(1..=10_000))]
        max_connections: u64,
        /// Close a connection whose request head has not all arrived MS milliseconds after it
        /// was accepted
        #[arg(long, value_name = "MS", default_value_t = 5000,
              value_parser = clap::value_parser!(u64).range(100..=600_000))]
        head_timeout_ms: u64,
        /// Close a connection MS milliseconds after it was accepted, answered or not (an answer
        /// its client does not read); at least --head-timeout-ms
        #[arg(long, value_name = "MS", default_value_t = 60_000,
              value_parser = clap::value_parser!(u64).range(100..=3_600_000))]
        request_timeout_ms: u64,
        /// Label every sample of /metrics with its pid too, and show every process: a new
        /// series at every restart
        #[arg(long)]
        pid_label: bool,
    },
    /// Remove the statistics segment (its name and its page; processes that have it open keep
    /// using it); says whether it existed
    Unlink,
}

fn watch_interval(s: &str) -> Result<Duration, String> {
    let secs = s.parse::<f64>().map_err(|_| {
        "the watch interval must be a number of seconds, e.g. --watch 2 or --watch 0.5".to_string()
    })?;
    if secs > 0.0 && secs <= 86_400.0 {
        Ok(Duration::from_secs_f64(secs))
    } else {
        Err("the watch interval must be more than 0 and at most 86400 seconds".to_string())
    }
}

fn positive_count(s: &str) -> Result<u64, String> {
    s.parse::<u64>()
        .ok()
        .filter(|n| *n > 0)
        .ok_or_else(|| "must be a positive whole number".to_string())
}

impl StatsArgs {
    /// How a snapshot is printed.
    pub fn format(&self) -> Format {
        if self.json {
            Format::Json
        } else if self.prometheus {
            Format::Prometheus
        } else {
            Format::Table
        }
    }
}

/// Runs `hrts stats ...`; `segment` is `--segment`, the statistics segment.
pub fn run(args: &StatsArgs, segment: Option<&str>) -> Result<(), CliError> {
    let name = snapshot::segment_name(segment);
    let shown = args.json
        || args.prometheus
        || args.pid_label
        || args.watch.is_some()
        || args.count.is_some();
    if let (Some(action), true) = (&args.action, shown) {
        let word = match action {
            StatsAction::Serve { .. } => "serve",
            StatsAction::Unlink => "unlink",
        };
        return Err(CliError::usage(format!(
            "--json, --prometheus, --pid-label, --watch and --count are options of \
             `hrts stats`, not of `hrts stats {word}`"
        )));
    }
    match &args.action {
        None => show::show(&name, args.format(), args.pid_label, args.watch, args.count),
        Some(StatsAction::Unlink) => show::unlink(&name),
        Some(StatsAction::Serve {
            listen,
            refresh_ms,
            max_connections,
            head_timeout_ms,
            request_timeout_ms,
            pid_label,
        }) => {
            if head_timeout_ms > request_timeout_ms {
                return Err(CliError::usage(format!(
                    "--head-timeout-ms {head_timeout_ms} is longer than --request-timeout-ms \
                     {request_timeout_ms}: a connection cannot wait longer for its request head \
                     than for its whole answer; give a --head-timeout-ms of at most the other"
                )));
            }
            serve::run(
                listen,
                &name,
                serve::Limits {
                    refresh: Duration::from_millis(*refresh_ms),
                    max_connections: *max_connections as usize,
                    head_timeout: Duration::from_millis(*head_timeout_ms),
                    request_timeout: Duration::from_millis(*request_timeout_ms),
                    pid_label: *pid_label,
                },
            )
        }
    }
}
