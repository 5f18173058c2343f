//! One module per command (with the options it takes); this one opens the
//! segment they share and prints for them.

#[cfg(not(windows))]
pub mod daemon;
#[cfg(not(windows))]
mod daemon_health;
#[cfg(windows)]
mod linux_only;
#[cfg(windows)]
pub use linux_only::{daemon, stats};
#[cfg(feature = "testing")]
pub mod debug;
pub mod echo;
pub mod eval;
#[cfg(feature = "testing")]
mod fuzz;
#[cfg(feature = "testing")]
mod host_probe;
pub mod info;
mod loop_header;
pub mod merge;
mod os_frequency;
pub mod reset;
pub mod seq;
#[cfg(not(windows))]
pub mod stats;
pub mod sync;
pub mod test_loop;
pub mod trace;
mod trace_report;
pub mod track;
mod track_marks;
mod units;

use crate::exit::CliError;
use hrts_core::clock::SourceId;
use hrts_core::SharedBase;
use hrts_core::{env, Error, ErrorKind, OpenRequest};
use std::io::Write;

/// What this invocation asks to open: the `--segment` it names, or the
/// default (the core resolves the rest, see `OpenRequest::resolve`).
fn request(segment: Option<&str>) -> OpenRequest {
    OpenRequest {
        name: segment.map(str::to_string),
        ..OpenRequest::default()
    }
}

/// The segment this invocation means, as the core resolves the request:
/// `--segment`, else HRTS_SEGMENT, else the host page or the per-user
/// default; with the rest of the configuration from the environment.
pub fn open(segment: Option<&str>) -> Result<SharedBase, CliError> {
    check_source_env()?;
    Ok(SharedBase::open(&request(segment).resolve()?)?)
}

/// HRTS_SOURCE, checked with the core's own parser: the core ignores a value it
/// cannot use (and says so only in `hrts info`'s reason), but a command line
/// should not run on a counter other than the one asked for.
fn check_source_env() -> Result<(), CliError> {
    let Some(raw) = std::env::var_os(env::SOURCE) else {
        return Ok(());
    };
    let raw = raw.to_string_lossy();
    if raw.trim().is_empty() {
        return Ok(());
    }
    if SourceId::from_name(&raw).is_some_and(SourceId::supported) {
        return Ok(());
    }
    // The hardware counters first, the software clock last.
    let names = |only_here: bool| {
        let mut v: Vec<SourceId> = SourceId::ALL
            .into_iter()
            .filter(|s| !only_here || s.supported())
            .collect();
        v.sort_by_key(|s| *s == SourceId::MonotonicRaw);
        v.into_iter().map(SourceId::name).collect::<Vec<_>>()
    };
    Err(Error::new(
        ErrorKind::InvalidArgument,
        format!(
            "{}={raw:?} is not a counter source this machine can read: set it to {} \
             (the sources are {}), or unset it to let hrts choose",
            env::SOURCE,
            names(true).join(" or "),
            names(false).join(", ")
        ),
    )
    .into())
}

/// `hrts unlink`: removes the segment's name and page. The name alone is
/// resolved, not the rest of the environment: `unlink` must work on a segment
/// whatever state it or the environment is in.
pub fn unlink(segment: Option<&str>) -> Result<(), CliError> {
    let name = request(segment).segment_name();
    if SharedBase::unlink(&name)? {
        print(&format!("removed segment {name}\n"))
    } else {
        print(&format!("segment {name} did not exist\n"))
    }
}

/// Options of `hrts now`.
#[derive(clap::Args, Debug)]
pub struct NowArgs {
    /// Print an interval that holds true time, `EARLIEST LATEST STATUS` (epoch ns, and
    /// synchronized or free-running), from the system clock's error bound; exit 5 when there
    /// is none (the clock is not synchronized, the bound is void, the segment is frozen)
    #[arg(long)]
    pub bound: bool,
}

/// `hrts now [--bound]`.
pub fn now(base: &SharedBase, args: &NowArgs) -> Result<(), CliError> {
    if !args.bound {
        return print(&format!("{}\n", base.now_ns()));
    }
    let b = base.now_bounded()?;
    print(&format!(
        "{} {} {}\n",
        b.earliest,
        b.latest,
        b.status.name()
    ))
}

pub fn print(text: &str) -> Result<(), CliError> {
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())?;
    out.flush()?;
    Ok(())
}
