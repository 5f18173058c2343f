//! `hrts test N [DELAY]`: the IBMTS installation test loop (Figure 4).

use super::units;
use crate::exit::CliError;
use hrts_core::{ibmts, SharedBase};
use std::io::Write;
use std::time::Duration;

#[derive(clap::Args, Debug)]
pub struct TestArgs {
    /// How many stamp lines to print
    #[arg(value_name = "N", value_parser = units::whole)]
    pub count: u64,
    /// Seconds between two lines (default 0)
    #[arg(value_name = "DELAY", default_value = "0", hide_default_value = true,
          value_parser = units::delay_seconds)]
    pub delay: Duration,
}

pub fn run(base: &SharedBase, args: &TestArgs) -> Result<(), CliError> {
    let (count, delay) = (args.count, args.delay);
    let mut out = std::io::stdout().lock();
    writeln!(out, "{}", super::loop_header::title(ibmts::LOGIC_VERSION))?;
    out.flush()?;
    // The chatter IBMTS printed goes to stderr, so stdout is exactly the header
    // and N stamp lines.
    let total = delay.saturating_mul(u32::try_from(count.saturating_sub(1)).unwrap_or(u32::MAX));
    let end = (hrts_core::clock::realtime_ns() / 1_000_000_000).saturating_add(total.as_secs());
    eprintln!(
        "{}",
        super::loop_header::plan(count, delay.as_secs_f64(), end)
    );
    for i in 0..count {
        if i > 0 && !delay.is_zero() {
            std::thread::sleep(delay);
        }
        writeln!(out, "{}", base.calc_time_stamp().ibmts_line())?;
        if !delay.is_zero() {
            out.flush()?;
        }
    }
    out.flush()?;
    Ok(())
}
