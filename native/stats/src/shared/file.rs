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
                     service user) may make it: remove the file and restart the service, which \
                     makes it anew"
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Clock, Config, Stats};
    use std::path::PathBuf;

    /// A directory of this test's own, removed on drop.
    struct Dir(PathBuf);

    impl Dir {
        fn new(tag: &str) -> Dir {
            let d =
                std::env::temp_dir().join(format!("hrts-statsfile-{}-{tag}", std::process::id()));
            let _ = std::fs::remove_dir_all(&d);
            std::fs::create_dir_all(&d).unwrap();
            Dir(d)
        }
    }

    impl Drop for Dir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    fn me() -> u32 {
        hrts_core::process::euid()
    }

    #[test]
    fn a_file_segment_is_published_to_and_read_through_a_read_only_mapping() {
        let dir = Dir::new("rw");
        let path = dir.0.join("stats");
        let seg = StatsSegment::create_file(&path).unwrap();
        let md = std::fs::metadata(&path).unwrap();
        assert_eq!(md.mode() & 0o7777, 0o644);
        let mut cfg = Config::default();
        cfg.shared_memory.enable = false;
        cfg.shared_memory.program = Some("filetest".into());
        let (clock, _hand) = Clock::manual(1_000);
        let stats = Stats::with_clock(cfg, clock);
        stats.publish_to(seg).unwrap();
        stats.start().unwrap();
        stats.counter("ticks_total").unwrap().add(7);
        stats.dump();
        let reader = StatsSegment::attach_file(&path, &[me()]).unwrap().unwrap();
        let snap = reader.snapshot();
        let p = snap
            .processes
            .iter()
            .find(|p| p.program == "filetest")
            .expect("the publisher's slot");
        match p.dump.metrics.get("ticks_total") {
            Some(crate::Metric::Counter(c)) => assert_eq!(c.value, 7),
            other => panic!("{other:?}"),
        }
        // The kernel's word: the reader's mapping is read-only and shared.
        let maps = std::fs::read_to_string("/proc/self/maps").unwrap();
        let shown = format!(" {}", path.display());
        assert!(
            maps.lines()
                .any(|l| l.ends_with(&shown) && l.contains(" r--s ")),
            "{maps}"
        );
        stats.stop();
    }

    #[test]
    fn a_planted_file_or_link_is_replaced_never_written_through() {
        use std::os::unix::fs::symlink;
        let dir = Dir::new("plant");
        let path = dir.0.join("stats");
        let victim = dir.0.join("victim");
        std::fs::write(&victim, b"keep me").unwrap();
        symlink(&victim, &path).unwrap();
        StatsSegment::create_file(&path).unwrap();
        assert_eq!(std::fs::read(&victim).unwrap(), b"keep me");
        let md = std::fs::symlink_metadata(&path).unwrap();
        assert!(md.file_type().is_file(), "{md:?}");
        // Junk, writable by everyone, in its place: replaced too.
        std::fs::remove_file(&path).unwrap();
        std::fs::write(&path, [7u8; 100]).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o666)).unwrap();
        StatsSegment::create_file(&path).unwrap();
        let md = std::fs::metadata(&path).unwrap();
        assert_eq!((md.mode() & 0o7777, md.size()), (0o644, SPEC.size as u64));
        assert!(StatsSegment::attach_file(&path, &[me()]).unwrap().is_some());
    }

    #[test]
    fn readers_refuse_a_file_they_cannot_trust_and_say_why() {
        use std::os::unix::fs::symlink;
        let dir = Dir::new("refuse");
        let path = dir.0.join("stats");
        assert!(StatsSegment::attach_file(&path, &[me()]).unwrap().is_none());
        drop(StatsSegment::create_file(&path).unwrap());
        let good = std::fs::read(&path).unwrap();
        let refused = |trusted: &[u32]| {
            StatsSegment::attach_file(&path, trusted)
                .err()
                .map(|e| (e.kind(), e.message().to_string()))
                .expect("a refusal")
        };
        let (kind, why) = refused(&[me().wrapping_add(12345)]);
        assert_eq!(kind, ErrorKind::Permission);
        assert!(why.contains("owned by uid"), "{why}");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o666)).unwrap();
        let (kind, why) = refused(&[me()]);
        assert_eq!(kind, ErrorKind::Permission);
        assert!(why.contains("lets others write it"), "{why}");
        std::fs::remove_file(&path).unwrap();
        std::fs::write(&path, &good[..4096]).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        let (kind, why) = refused(&[me()]);
        assert_eq!(kind, ErrorKind::Truncated);
        assert!(why.contains("4096 bytes"), "{why}");
        std::fs::remove_file(&path).unwrap();
        let real = dir.0.join("real");
        std::fs::write(&real, &good).unwrap();
        std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o644)).unwrap();
        symlink(&real, &path).unwrap();
        let (kind, why) = refused(&[me()]);
        assert_eq!(kind, ErrorKind::Permission);
        assert!(why.contains("symbolic link"), "{why}");
        // A whole file of another kind: the right size, but not ready.
        std::fs::remove_file(&path).unwrap();
        std::fs::write(&path, vec![0u8; SPEC.size]).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        assert!(StatsSegment::attach_file(&path, &[me()]).is_err());
    }
}
