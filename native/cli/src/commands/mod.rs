//! One module per command; this one opens the segment they share.

#[cfg(feature = "testing")]
mod debug;
mod echo;
mod eval;
#[cfg(feature = "testing")]
mod fuzz;
mod info;
mod loop_header;
mod merge;
mod os_frequency;
mod reset;
mod seq;
mod stats;
pub mod stats_args;
#[cfg(feature = "testing")]
mod stats_record;
mod stats_serve;
mod sync;
mod test_loop;
mod trace;
pub mod trace_args;
mod trace_report;
mod track;

use crate::args::{Command, Invocation};
use crate::exit::CliError;
use hrts_core::SharedBase;
use hrts_core::{default_segment_name, env, Config};
use std::io::Write;

/// Runs the parsed command.
pub fn run(inv: &Invocation) -> Result<(), CliError> {
    let segment = inv.segment.as_deref();
    match &inv.command {
        Command::Help => print(crate::help::USAGE),
        Command::Version => print(&format!("{}\n", crate::help::version())),
        Command::Now => print(&format!("{}\n", open(segment)?.now_ns())),
        Command::Info => info::run(&open(segment)?),
        Command::Test { count, delay } => test_loop::run(&open(segment)?, *count, *delay),
        Command::Eval(options) => eval::run(options),
        Command::Track(options) => track::run(&open(segment)?, options),
        Command::Reset => reset::run(&open(segment)?),
        Command::Unlink => unlink(segment),
        Command::Echo => echo::run(&open(segment)?),
        Command::Seq { count } => seq::run(&open(segment)?, *count),
        Command::Unique { count } => seq::unique(&open(segment)?, *count),
        #[cfg(feature = "testing")]
        Command::UniqueDump {
            per_thread,
            threads,
            dir,
        } => debug::unique_dump(&open(segment)?, *per_thread, *threads, dir),
        #[cfg(feature = "testing")]
        Command::Fuzz { rounds, seed } => fuzz::fuzz(&open(segment)?, *rounds, *seed),
        #[cfg(feature = "testing")]
        Command::FuzzRead { ms } => fuzz::fuzz_read(&open(segment)?, *ms),
        #[cfg(feature = "testing")]
        Command::HoldWriter => debug::hold_writer(&open(segment)?),
        Command::Trace(cmd) => trace::run(cmd, segment),
        Command::Stats(cmd) => stats::run(cmd, segment),
    }
}

/// The segment this invocation means: `--segment`, else HRTS_SEGMENT, else the
/// per-user default; with the rest of the configuration from the environment.
fn open(segment: Option<&str>) -> Result<SharedBase, CliError> {
    let mut cfg = Config::from_env()?;
    if let Some(name) = segment {
        cfg.name = name.to_string();
    }
    Ok(SharedBase::open(&cfg)?)
}

/// The segment's name without opening (or creating) it, and without requiring
/// the rest of the environment to be valid: `unlink` must work on a segment
/// whatever state it or the environment is in.
fn segment_name(segment: Option<&str>) -> String {
    segment
        .map(str::to_string)
        .or_else(|| std::env::var(env::SEGMENT).ok().filter(|s| !s.is_empty()))
        .unwrap_or_else(default_segment_name)
}

fn unlink(segment: Option<&str>) -> Result<(), CliError> {
    let name = segment_name(segment);
    if SharedBase::unlink(&name)? {
        print(&format!("removed segment {name}\n"))
    } else {
        print(&format!("segment {name} did not exist\n"))
    }
}

fn print(text: &str) -> Result<(), CliError> {
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())?;
    out.flush()?;
    Ok(())
}
