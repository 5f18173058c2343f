//! A statistics segment kept in a file instead of under a shared-memory name:
//! the one a service that others must not write (`hrts daemon`) publishes to.
//!
//! Its writer always makes the file anew (a temporary name, then a rename
//! over the old one), never opens one it finds: whatever was planted there,
//! however damaged, is replaced, and cannot make the writer fail or wait.
//! The file is readable by everyone and writable by its owner only. Readers
//! map it read-only (a store faults, so no reader can change it) and refuse
//! it unless it is a regular file, not a symbolic link, owned by a user they
//! trust, writable by its owner only, of the layout's size and ready.

use super::layout::SPEC;
use super::segment::{initialise, StatsSegment};
use hrts_core::storage::Page;
use hrts_core::{Error, ErrorKind, Result};
use std::fs::OpenOptions;
use std::os::fd::AsRawFd;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::Path;

impl StatsSegment {
    /// Makes a new, empty segment at `path` (replacing whatever is there),
    /// mode 0644, mapped read-write for this process to publish to.
    pub fn create_file(path: &Path) -> Result<StatsSegment> {
        let dir = path.parent().unwrap_or(Path::new("."));
        let base = path
            .file_name()
            .map_or_else(|| "stats".to_string(), |n| n.to_string_lossy().into_owned());
        let tmp = dir.join(format!(".{base}.{}", std::process::id()));
        let _ = std::fs::remove_file(&tmp);
        let what = |doing: &str, e: &std::io::Error| {
            Error::from_io(
                format!("{doing} {}", tmp.display()),
                e,
                "check that the directory exists and this user may write it",
            )
        };
        let made = (|| {
            let file = OpenOptions::new()
                .read(true)
                .write(true)
                .create_new(true)
                .mode(0o644)
                .custom_flags(libc::O_NOFOLLOW)
                .open(&tmp)
                .map_err(|e| what("creating", &e))?;
            // The umask may have taken o+r away: unprivileged readers need it.
            file.set_permissions(std::fs::Permissions::from_mode(0o644))
                .map_err(|e| what("chmod of", &e))?;
            file.set_len(SPEC.size as u64)
                .map_err(|e| what("sizing", &e))?;
            let page = Page::map_file(
                file.as_raw_fd(),
                SPEC.size,
                true,
                &path.display().to_string(),
            )?;
            initialise(&page)?;
            std::fs::rename(&tmp, path).map_err(|e| {
                Error::from_io(
                    format!("renaming {} to {}", tmp.display(), path.display()),
                    &e,
                    "check that this user may write the directory",
                )
            })?;
            StatsSegment::checked(page, &path.display().to_string())
        })();
        if made.is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
        made
    }

    /// Maps the segment file at `path` read-only; `Ok(None)` if there is
    /// none. A file that is not what its writer makes (see the module) is an
    /// error saying why, owned by a uid outside `trusted` included.
    pub fn attach_file(path: &Path, trusted: &[u32]) -> Result<Option<StatsSegment>> {
        let shown = path.display().to_string();
        let refuse = |kind: ErrorKind, why: String| {
            Error::new(
                kind,
                format!(
                    "statistics file {shown} refused: {why}; only its service (as root or the \
                     service user) may make it: stop it and remove the file"
                ),
            )
        };
        let file = match OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY)
            .open(path)
        {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) if e.raw_os_error() == Some(libc::ENOTDIR) => return Ok(None),
            Err(e) if e.raw_os_error() == Some(libc::ELOOP) => {
                return Err(refuse(
                    ErrorKind::Permission,
                    "it is a symbolic link".into(),
                ))
            }
            Err(e) => {
                return Err(Error::from_io(
                    format!("opening statistics file {shown}"),
                    &e,
                    "its service makes it readable by everyone; check the directory's mode",
                ))
            }
        };
        let md = file
            .metadata()
            .map_err(|e| Error::from_io(format!("fstat of {shown}"), &e, ""))?;
        if !md.file_type().is_file() {
            return Err(refuse(
                ErrorKind::Foreign,
                "it is not a regular file".into(),
            ));
        }
        if !trusted.contains(&md.uid()) {
            return Err(refuse(
                ErrorKind::Permission,
                format!("it is owned by uid {}, not one of {trusted:?}", md.uid()),
            ));
        }
        if md.mode() & 0o022 != 0 {
            return Err(refuse(
                ErrorKind::Permission,
                format!("its mode {:04o} lets others write it", md.mode() & 0o7777),
            ));
        }
        if md.size() != SPEC.size as u64 {
            return Err(refuse(
                ErrorKind::Truncated,
                format!(
                    "it has {} bytes, a statistics segment has {}",
                    md.size(),
                    SPEC.size
                ),
            ));
        }
        let page = Page::map_file(file.as_raw_fd(), SPEC.size, false, &shown)?;
        StatsSegment::checked(page, &shown).map(Some)
    }
}
