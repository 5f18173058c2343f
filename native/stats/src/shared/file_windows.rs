//! The Windows twin of `file.rs`: a statistics segment kept in a file is what
//! the Linux host daemon publishes to, and there is no such daemon on Windows.
//! Named statistics segments work there; these say so instead of failing to
//! build.

use super::segment::StatsSegment;
use hrts_core::{Error, ErrorKind, Result};
use std::path::Path;

fn unsupported(path: &Path) -> Error {
    Error::new(
        ErrorKind::Os,
        format!(
            "statistics file {}: statistics kept in a file are published by the Linux host \
             daemon and are not available on Windows; use a named statistics segment",
            path.display()
        ),
    )
}

impl StatsSegment {
    /// Not on Windows: always an error saying so.
    pub fn create_file(path: &Path) -> Result<StatsSegment> {
        Err(unsupported(path))
    }

    /// Not on Windows: always an error saying so.
    pub fn attach_file(path: &Path, _trusted: &[u32]) -> Result<Option<StatsSegment>> {
        Err(unsupported(path))
    }
}
