//! The commands only Linux has, as Windows builds of `hrts` know them: they
//! parse whatever follows them and say that they do not exist there, instead
//! of clap's "unrecognized subcommand" (see docs/windows.md).

use crate::exit::CliError;
use hrts_core::{Error, ErrorKind};
use std::ffi::OsString;

fn lacks(command: &str, why: &str) -> CliError {
    CliError::Core(Error::new(
        ErrorKind::InvalidArgument,
        format!(
            "`hrts {command}` exists only on Linux ({why}); on Windows hrts keeps per-user \
             segments: see docs/windows.md"
        ),
    ))
}

pub mod daemon {
    use super::*;

    /// Linux only: the host page's writer
    #[derive(clap::Args, Debug)]
    pub struct DaemonArgs {
        #[arg(trailing_var_arg = true, allow_hyphen_values = true, hide = true)]
        rest: Vec<OsString>,
    }

    pub fn run(_args: &DaemonArgs) -> Result<(), CliError> {
        Err(lacks(
            "daemon",
            "the host page every user maps read-only, and chronyd's error bound",
        ))
    }
}

pub mod stats {
    use super::*;

    /// Linux only: the statistics segment
    #[derive(clap::Args, Debug)]
    pub struct StatsArgs {
        #[arg(trailing_var_arg = true, allow_hyphen_values = true, hide = true)]
        rest: Vec<OsString>,
    }

    pub fn run(_args: &StatsArgs, _segment: Option<&str>) -> Result<(), CliError> {
        Err(lacks(
            "stats",
            "the statistics segment is kept in System V shared memory",
        ))
    }

    /// The variables hrts-stats reads, named in `hrts --help` on every
    /// platform (the values of `hrts_stats::shared::ENV_*`).
    pub const ENV_SEGMENT: &str = "HRTS_STATS_SEGMENT";
    pub const ENV_GROUP: &str = "HRTS_STATS_GROUP";
    pub const ENV_GRACE_MS: &str = "HRTS_STATS_GRACE_MS";
    pub const ENV_PROGRAM: &str = "HRTS_STATS_PROGRAM";
    pub const ENV_INSTANCE_ID: &str = "HRTS_STATS_INSTANCE_ID";
}
