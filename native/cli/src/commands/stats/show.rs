//! `hrts stats` (the snapshot, once or every few seconds) and `hrts stats
//! unlink`.

use super::snapshot::{empty, render, take, Format};
use crate::commands::print;
use crate::exit::CliError;
use hrts_stats::shared::StatsSegment;
use std::io::{IsTerminal, Write};
use std::time::Duration;

pub fn unlink(name: &str) -> Result<(), CliError> {
    if StatsSegment::unlink(name)? {
        print(&format!("removed statistics segment {name}\n"))
    } else {
        print(&format!("statistics segment {name} did not exist\n"))
    }
}

pub fn show(
    name: &str,
    format: Format,
    pid_label: bool,
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
        let mut text = render(&snap, format, pid_label);
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
