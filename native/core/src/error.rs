//! One error type for the whole core. Every message says what happened and what
//! the user can do about it; the C ABI maps [`ErrorKind`] to status codes and the
//! JNI layer maps it to `HrtsException`.

use std::fmt;

/// The broad class of a failure; stable, so foreign layers can map it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// An argument or configuration value is out of range or malformed.
    InvalidArgument,
    /// The operating system refused a call (errno is in the message).
    Os,
    /// The shared segment exists but is not an hrts segment.
    Foreign,
    /// The shared segment is smaller than its header.
    Truncated,
    /// The shared segment was written by an incompatible layout version.
    Version,
    /// The shared segment's contents fail validation.
    Corrupt,
    /// The shared segment belongs to another user or has an unsafe mode, or its
    /// page is one this process cannot reach (another IPC namespace, a mode
    /// changed with `IPC_SET`).
    Permission,
    /// Waiting for another process (creator, writer) took longer than allowed.
    Timeout,
    /// No counter source could be used or calibrated.
    Source,
    /// A persisted file (sequence numbers) is missing data or damaged.
    Persist,
    /// A fixed-size shared area (statistics cells, running timer instances) has
    /// no room left.
    Full,
    /// No error bound can be given for a stamp: the system clock is not
    /// synchronized, the bound's source went silent past void-after, or the
    /// segment does not follow the clock (frozen).
    Unsynchronized,
}

impl ErrorKind {
    /// Every kind, so the foreign layers' tests can check that each one maps.
    pub const ALL: [ErrorKind; 12] = [
        ErrorKind::InvalidArgument,
        ErrorKind::Os,
        ErrorKind::Foreign,
        ErrorKind::Truncated,
        ErrorKind::Version,
        ErrorKind::Corrupt,
        ErrorKind::Permission,
        ErrorKind::Timeout,
        ErrorKind::Source,
        ErrorKind::Persist,
        ErrorKind::Full,
        ErrorKind::Unsynchronized,
    ];
}

// Adding a kind breaks this exhaustive match on purpose: list it in ALL too.
const _: fn(ErrorKind) = |kind| match kind {
    ErrorKind::InvalidArgument
    | ErrorKind::Os
    | ErrorKind::Foreign
    | ErrorKind::Truncated
    | ErrorKind::Version
    | ErrorKind::Corrupt
    | ErrorKind::Permission
    | ErrorKind::Timeout
    | ErrorKind::Source
    | ErrorKind::Persist
    | ErrorKind::Full
    | ErrorKind::Unsynchronized => {}
};

/// A failure with a message written for the person who has to fix it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    kind: ErrorKind,
    message: String,
}

impl Error {
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Error {
            kind,
            message: message.into(),
        }
    }

    /// An OS failure: `what` names the call and its object; errno is appended.
    pub fn os(what: impl fmt::Display, hint: &str) -> Self {
        let err = std::io::Error::last_os_error();
        Self::from_io(what, &err, hint)
    }

    pub fn from_io(what: impl fmt::Display, err: &std::io::Error, hint: &str) -> Self {
        let mut message = format!("{what}: {err}");
        if !hint.is_empty() {
            message.push_str("; ");
            message.push_str(hint);
        }
        Error::new(ErrorKind::Os, message)
    }

    /// A feature only Linux has, asked for on Windows.
    #[cfg(windows)]
    pub(crate) fn windows_lacks(what: &str) -> Self {
        Error::new(
            ErrorKind::InvalidArgument,
            format!(
                "{what} exists only on Linux; hrts on Windows keeps a per-user segment \
                 (see docs/windows.md): leave this setting unset"
            ),
        )
    }

    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {}

pub type Result<T> = std::result::Result<T, Error>;

/// The message for a panic caught at an FFI boundary (C ABI, JNI), where it
/// becomes an error instead of unwinding into foreign code.
#[cold]
pub fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    let what = payload
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("(no message)");
    format!("internal error: hrts panicked: {what}; please report this as a bug")
}
