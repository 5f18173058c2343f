//! `hrts seq [N]`: sequence numbers that are never issued twice: not across
//! processes, crashes, reboots, `hrts unlink`, nor segments sharing one sequence
//! file; `hrts unique [N]`: unique stamps.

use crate::exit::CliError;
use hrts_core::SharedBase;
use std::io::Write;

/// `[N]` of `hrts seq` and `hrts unique`.
#[derive(clap::Args, Debug)]
pub struct CountArgs {
    /// How many to print
    #[arg(value_name = "N", default_value_t = 1, value_parser = super::units::whole)]
    pub count: u64,
}

pub fn run(base: &SharedBase, count: u64) -> Result<(), CliError> {
    // Rust's stdout is line-buffered: every number is written out as soon as it
    // is issued, so a killed `hrts seq` has printed exactly what it issued
    // (bar a line cut short), which is what crash tests count on.
    let mut out = std::io::stdout().lock();
    for _ in 0..count {
        writeln!(out, "{}", base.next_sequence()?)?;
    }
    out.flush()?;
    Ok(())
}

/// Unique epoch-ns stamps: each greater than any unique stamp any process of
/// the segment got before it.
pub fn unique(base: &SharedBase, count: u64) -> Result<(), CliError> {
    let mut out = std::io::stdout().lock();
    for _ in 0..count {
        writeln!(out, "{}", base.next_unique()?)?;
    }
    out.flush()?;
    Ok(())
}
