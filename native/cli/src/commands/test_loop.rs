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
    writeln!(
        out,
        "hrts High Resolution Timestamp Test: Version={:#018x}",
        ibmts::LOGIC_VERSION
    )?;
    out.flush()?;
    // The chatter IBMTS printed goes to stderr, so stdout is exactly the header
    // and N stamp lines.
    let total = delay.saturating_mul(u32::try_from(count.saturating_sub(1)).unwrap_or(u32::MAX));
    eprintln!(
        "Beginning loop for {count} iterations, using a {} second delay each pass.\n\
         Expect to complete at {} UTC.",
        delay.as_secs_f64(),
        utc_time_of_day(
            hrts_core::clock::realtime_ns()
                .saturating_add(total.as_nanos().min(u64::MAX.into()) as u64)
        )
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

/// `HH:MM:SS` of an epoch time in ns, in UTC.
fn utc_time_of_day(epoch_ns: u64) -> String {
    units::utc(epoch_ns)[11..19].to_string()
}

#[cfg(test)]
mod tests {
    #[test]
    fn time_of_day() {
        // Figure 4's first stamp, 1019168389, is 22:19:49 UTC.
        assert_eq!(
            super::utc_time_of_day(1_019_168_389_000_000_000),
            "22:19:49"
        );
        assert_eq!(super::utc_time_of_day(0), "00:00:00");
        assert_eq!(super::utc_time_of_day(u64::MAX), "23:34:33");
    }
}
