//! Exit codes a script can rely on, and the one place errors are printed.

use hrts_core::ErrorKind;
use std::fmt;
use std::io;
use std::process::ExitCode;

/// Success.
pub const OK: u8 = 0;
/// Something failed at run time (OS error, no usable counter, I/O).
pub const RUNTIME: u8 = 1;
/// The command line (or an environment value such as HRTS_WRAP_THRESHOLD) is wrong.
pub const USAGE: u8 = 2;
/// The segment exists but was refused: foreign, truncated, other layout version,
/// corrupt, or another user's / unsafe mode.
pub const REFUSED: u8 = 3;
/// Waiting for another process (segment creator, base writer) timed out.
pub const TIMEOUT: u8 = 4;
/// No error bound: the system clock is not synchronized, the bound is void,
/// or the segment is frozen (`hrts now --bound`).
pub const UNBOUNDED: u8 = 5;

/// Every exit code and what it means, for the help.
pub const CODES: [(u8, &str); 6] = [
    (OK, "success"),
    (
        RUNTIME,
        "runtime error (OS error, no usable counter, I/O, damaged sequence file)",
    ),
    (
        USAGE,
        "usage error (command line, or a malformed HRTS_* value)",
    ),
    (
        REFUSED,
        "segment refused: not an hrts segment, truncated, another layout version, \
         corrupt, owned by another user / unsafe mode, or its page is out of reach \
         (another IPC namespace)",
    ),
    (
        TIMEOUT,
        "timed out waiting for another process (segment creator or base writer)",
    ),
    (
        UNBOUNDED,
        "no error bound (hrts now --bound): the system clock is not synchronized, its bound \
         is void, or the segment is frozen",
    ),
];

/// Why a command failed.
#[derive(Debug)]
pub enum CliError {
    /// A command-line mistake; the message says what was expected.
    Usage(String),
    /// A command-line mistake found by the parser: its message, the usage and
    /// where to read more, as clap words them.
    Parse(String),
    /// A failure reported by the core.
    Core(hrts_core::Error),
    /// Reading stdin or writing stdout failed.
    Io(io::Error),
}

impl CliError {
    pub fn usage(message: impl Into<String>) -> CliError {
        CliError::Usage(message.into())
    }

    /// A parser's error, without its own `error: ` (ours is printed instead).
    pub fn from_clap(e: &clap::Error) -> CliError {
        let text = e.render().to_string();
        let text = text.strip_prefix("error: ").unwrap_or(&text);
        CliError::Parse(text.trim_end().to_string())
    }

    /// The exit code this error ends the process with.
    pub fn code(&self) -> u8 {
        match self {
            CliError::Usage(_) | CliError::Parse(_) => USAGE,
            CliError::Io(_) => RUNTIME,
            CliError::Core(e) => match e.kind() {
                ErrorKind::InvalidArgument => USAGE,
                ErrorKind::Foreign
                | ErrorKind::Truncated
                | ErrorKind::Version
                | ErrorKind::Corrupt
                | ErrorKind::Permission => REFUSED,
                ErrorKind::Timeout => TIMEOUT,
                ErrorKind::Unsynchronized => UNBOUNDED,
                _ => RUNTIME,
            },
        }
    }
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CliError::Usage(m) => write!(f, "{m} (run `hrts --help` for usage)"),
            CliError::Parse(m) => write!(f, "{m}"),
            CliError::Core(e) => write!(f, "{e}"),
            CliError::Io(e) => write!(f, "{e}"),
        }
    }
}

impl From<hrts_core::Error> for CliError {
    fn from(e: hrts_core::Error) -> CliError {
        CliError::Core(e)
    }
}

impl From<io::Error> for CliError {
    fn from(e: io::Error) -> CliError {
        CliError::Io(e)
    }
}

/// Ends a command: prints the error, if any, as `hrts: error: <message>` on
/// stderr. A reader that closed our stdout early (`hrts test 100 | head -1`) is
/// not an error worth a message or a failure code.
pub fn finish(result: Result<(), CliError>) -> ExitCode {
    match result {
        Ok(()) => ExitCode::from(OK),
        Err(CliError::Io(e)) if e.kind() == io::ErrorKind::BrokenPipe => ExitCode::from(OK),
        Err(e) => {
            eprintln!("hrts: error: {e}");
            ExitCode::from(e.code())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hrts_core::Error;

    #[test]
    fn refused_segments_and_timeouts_have_their_own_codes() {
        let code = |k| CliError::Core(Error::new(k, "x")).code();
        for k in [
            ErrorKind::Foreign,
            ErrorKind::Truncated,
            ErrorKind::Version,
            ErrorKind::Corrupt,
            ErrorKind::Permission,
        ] {
            assert_eq!(code(k), REFUSED, "{k:?}");
        }
        assert_eq!(code(ErrorKind::Timeout), TIMEOUT);
        assert_eq!(code(ErrorKind::InvalidArgument), USAGE);
        assert_eq!(code(ErrorKind::Os), RUNTIME);
        assert_eq!(code(ErrorKind::Source), RUNTIME);
        assert_eq!(CliError::usage("x").code(), USAGE);
    }
}
