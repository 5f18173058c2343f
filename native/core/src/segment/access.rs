//! What a handle may do with its page: a per-user segment's processes all
//! write it; the host page has one writer, `hrts daemon`, and readers only.

use crate::error::{Error, ErrorKind};

/// Whose page a handle maps and what it may do with it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    /// A per-user segment: this process may move, tie and repair it.
    User,
    /// The host page, mapped read-only: this process never writes it.
    HostReader,
    /// The host page as `hrts daemon` keeps it: its only writer.
    HostWriter,
}

/// The error a host page reader gets for what only the daemon may do.
pub(crate) fn read_only(name: &str, what: &str) -> Error {
    Error::new(
        ErrorKind::Permission,
        format!(
            "{what} is not possible here: this process reads the host page {name}, which only \
             `hrts daemon` writes; restart the daemon to re-pair it, or set HRTS_HOST=off (or \
             HRTS_SEGMENT) to use a per-user segment"
        ),
    )
}
