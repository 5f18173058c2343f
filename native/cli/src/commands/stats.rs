//! `hrts stats`: what the statistics segment holds, as a table, JSON or the
//! Prometheus format, once or every few seconds; `hrts stats unlink`.
//! (`hrts stats serve` is in `stats_serve`.)

use super::stats_args::{Format, StatsCommand};
use crate::exit::CliError;
use hrts_stats::shared::{name_from_env, read_time, Snapshot, StatsSegment};
use std::io::{IsTerminal, Write};
use std::time::Duration;

pub fn run(cmd: &StatsCommand, segment: Option<&str>) -> Result<(), CliError> {
    let name = segment_name(segment);
    match cmd {
        StatsCommand::Help(text) => super::print(text),
        StatsCommand::Show {
            format,
            watch,
            count,
        } => show(&name, *format, *watch, *count),
        StatsCommand::Unlink => {
            if StatsSegment::unlink(&name)? {
                super::print(&format!("removed statistics segment {name}\n"))
            } else {
                super::print(&format!("statistics segment {name} did not exist\n"))
            }
        }
        StatsCommand::Serve { listen } => super::stats_serve::run(listen, &name),
        #[cfg(feature = "testing")]
        StatsCommand::Record(spec) => super::stats_record::run(spec, segment),
    }
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

pub fn render(snap: &Snapshot, format: Format) -> String {
    match format {
        Format::Table => snap.to_table(),
        Format::Json => snap.to_json() + "\n",
        Format::Prometheus => snap.to_prometheus(),
    }
}

fn show(
    name: &str,
    format: Format,
    watch: Option<Duration>,
    count: Option<u64>,
) -> Result<(), CliError> {
    // On a terminal each frame replaces the previous one (cursor home, clear).
    let redraw = watch.is_some() && std::io::stdout().is_terminal();
    let mut said_missing = false;
    let mut frame = 0u64;
    loop {
        let snap = match take(name)? {
            Some(snap) => snap,
            None => {
                if !said_missing {
                    eprintln!(
                        "hrts: no statistics segment {name}: no process has published statistics yet"
                    );
                    said_missing = true;
                }
                empty(name)
            }
        };
        let mut text = render(&snap, format);
        if redraw {
            text.insert_str(0, "\x1b[H\x1b[2J");
        }
        let mut out = std::io::stdout().lock();
        out.write_all(text.as_bytes())?;
        out.flush()?;
        drop(out);
        frame += 1;
        match watch {
            Some(every) if count.is_none_or(|n| frame < n) => std::thread::sleep(every),
            _ => return Ok(()),
        }
    }
}
