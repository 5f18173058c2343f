//! The host page: one time page for the whole host, kept by `hrts daemon` in a
//! file on tmpfs (default `/run/hrts/time`). The service maps it read-write;
//! every other process maps it read-only, so nothing but the service can
//! change the host's timeline (the way the vDSO's data page, ClockBound's and
//! fbclock's pages are kept).
//!
//! Trust is the file's owner: root or the configured service user. The file is
//! opened without following symbolic links and must be a regular file of the
//! page's size, writable by its owner only. The daemon makes a new page under
//! a temporary name and renames it into place once it is ready, so a reader
//! never sees one half made. One daemon per directory: it holds an exclusive
//! `flock` on `daemon.lock` for its life (the kernel drops it when the daemon
//! dies, whatever its pid namespace).
//!
//! Every lock the daemon depends on lives on `daemon.lock`, which is mode 0600:
//! a lock is held through an open file, and a file others can open is a file
//! others can lock. Any user can open the page `time` read-only and take a
//! read lock on any byte of it, so nothing the daemon needs may rest on a lock
//! of the page (or of any other file a reader can open).

use crate::error::{Error, ErrorKind, Result};
use crate::storage::{shm::Page, state_code, Spec, STATE_READY};
use std::fs::{File, OpenOptions};
use std::os::fd::AsRawFd;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// Where the service keeps the host page unless `HRTS_HOST_DIR` says otherwise.
pub const DEFAULT_DIR: &str = "/run/hrts";
/// The page's file name in that directory.
pub const PAGE_FILE: &str = "time";
/// The daemon's lock file in that directory.
pub const LOCK_FILE: &str = "daemon.lock";
/// The user, besides root, whose host page readers trust, by default.
pub const DEFAULT_USER: &str = "hrts";

/// The page file in `dir`.
pub fn page_path(dir: &Path) -> PathBuf {
    dir.join(PAGE_FILE)
}

/// The uids whose host page this process trusts: root, and `user` (a name or
/// a uid) if it exists.
pub fn trusted_uids(user: &str) -> Vec<u32> {
    let mut v = vec![0];
    if let Some(uid) = uid_of(user) {
        if uid != 0 {
            v.push(uid);
        }
    }
    v
}

fn uid_of(user: &str) -> Option<u32> {
    if let Ok(uid) = user.trim().parse::<u32>() {
        return Some(uid);
    }
    let cname = std::ffi::CString::new(user.trim()).ok()?;
    // SAFETY: zeroed is a valid bit pattern for struct passwd (pointers null).
    let mut pw: libc::passwd = unsafe { std::mem::zeroed() };
    let mut buf = vec![0 as libc::c_char; 16 * 1024];
    let mut result: *mut libc::passwd = std::ptr::null_mut();
    // SAFETY: all pointers are valid for the call; `buf` outlives it and its
    // length is passed, so getpwnam_r writes only inside it.
    let rc = unsafe {
        libc::getpwnam_r(
            cname.as_ptr(),
            &mut pw,
            buf.as_mut_ptr(),
            buf.len(),
            &mut result,
        )
    };
    (rc == 0 && !result.is_null()).then_some(pw.pw_uid)
}

/// A host page file, open and mapped.
pub struct HostPage {
    pub file: File,
    pub page: Page,
}

fn refused(path: &Path, why: impl std::fmt::Display, kind: ErrorKind) -> Error {
    Error::new(
        kind,
        format!(
            "host page {} refused: {why}; only `hrts daemon` (as root or the service user, \
             HRTS_HOST_USER) may make it: remove the file, or set HRTS_HOST=off to use the \
             per-user segment",
            path.display()
        ),
    )
}

/// Opens the host page in `dir` read-only for a reader. `Ok(None)`: there is
/// none (no service runs on this host). Everything that makes it untrustworthy
/// is an error saying what: a symbolic link, not a regular file, an owner
/// outside `trusted`, writable by others, another size, not an hrts page, not
/// ready.
pub fn open_reader(dir: &Path, trusted: &[u32], spec: &Spec) -> Result<Option<HostPage>> {
    let path = page_path(dir);
    let file =
        match OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY)
            .open(&path)
        {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) if e.raw_os_error() == Some(libc::ENOTDIR) => return Ok(None),
            Err(e) if e.raw_os_error() == Some(libc::ELOOP) => {
                return Err(refused(
                    &path,
                    "it is a symbolic link",
                    ErrorKind::Permission,
                ))
            }
            Err(e) => return Err(Error::from_io(
                format!("opening host page {}", path.display()),
                &e,
                "the service makes it readable by everyone; check its directory's mode, or set \
                 HRTS_HOST=off",
            )),
        };
    let refuse = |(kind, why): Refusal| refused(&path, why, kind);
    check_file(&path, &file, trusted, spec).map_err(refuse)?;
    let page = Page::map_file(
        file.as_raw_fd(),
        spec.size,
        false,
        &path.display().to_string(),
    )?;
    check_page(&page, spec).map_err(refuse)?;
    Ok(Some(HostPage { file, page }))
}

/// Why a page file cannot be trusted: its kind and the reason in words.
type Refusal = (ErrorKind, String);

fn check_file(
    path: &Path,
    file: &File,
    trusted: &[u32],
    spec: &Spec,
) -> std::result::Result<(), Refusal> {
    let md = file.metadata().map_err(|e| {
        (
            ErrorKind::Os,
            format!("fstat of {} failed: {e}", path.display()),
        )
    })?;
    if !md.file_type().is_file() {
        return Err((ErrorKind::Foreign, "it is not a regular file".into()));
    }
    if !trusted.contains(&md.uid()) {
        return Err((
            ErrorKind::Permission,
            format!(
                "it is owned by uid {}, not by root or the service user (uids {trusted:?})",
                md.uid()
            ),
        ));
    }
    if md.mode() & 0o022 != 0 {
        return Err((
            ErrorKind::Permission,
            format!("its mode {:04o} lets others write it", md.mode() & 0o7777),
        ));
    }
    if md.size() != spec.size as u64 {
        return Err((
            ErrorKind::Truncated,
            format!("it has {} bytes, a host page has {}", md.size(), spec.size),
        ));
    }
    Ok(())
}

fn check_page(page: &Page, spec: &Spec) -> std::result::Result<(), Refusal> {
    let word = |off: usize| {
        // SAFETY: `off` is 8-byte aligned and inside the mapped page, which
        // lives as long as `page`; any bit pattern is a valid AtomicU64.
        unsafe { &*(page.as_ptr().add(off) as *const std::sync::atomic::AtomicU64) }
            .load(std::sync::atomic::Ordering::Acquire)
    };
    use crate::storage::shm::{REC_MAGIC, REC_STATE, REC_VERSION};
    let (magic, version) = (word(REC_MAGIC), word(REC_VERSION) as u32);
    if magic != spec.magic {
        return Err((
            ErrorKind::Foreign,
            format!("it is not an hrts page (magic {magic:#x})"),
        ));
    }
    if version != spec.version {
        return Err((
            ErrorKind::Version,
            format!(
                "its layout version {version} is not this library's {}: run the daemon of the \
                 hrts version the programs use",
                spec.version
            ),
        ));
    }
    if state_code(word(REC_STATE)) != STATE_READY {
        return Err((ErrorKind::Corrupt, "it is not ready".into()));
    }
    Ok(())
}

/// The daemon's proof that it is the only one for `dir`: an exclusive `flock`
/// on `dir/daemon.lock`, held while this value lives. The file is this user's
/// and mode 0600, so no other user can open it, let alone lock it; the
/// writer role's lock is taken through it too ([`DaemonLock::role_fd`]).
pub struct DaemonLock(File);

impl DaemonLock {
    /// A new descriptor of the lock file's open file description, for the
    /// writer role's lock (an OFD lock, independent of the `flock`).
    pub fn role_fd(&self) -> Result<i32> {
        // SAFETY: the descriptor is open while `self` lives; F_DUPFD_CLOEXEC
        // makes a new descriptor that the caller then owns.
        let fd = unsafe { libc::fcntl(self.0.as_raw_fd(), libc::F_DUPFD_CLOEXEC, 0) };
        if fd < 0 {
            return Err(Error::os("dup of the daemon lock", ""));
        }
        Ok(fd)
    }
}

/// Opens `path` as the daemon's lock file: this user's, a regular file, no
/// access for anybody else. One that is not (left by an older hrts, which made
/// it 0644, or planted by someone who could write the directory) is removed
/// and made anew, so that a descriptor somebody opened on it earlier no longer
/// names the daemon's lock.
fn open_lock_file(dir: &Path, path: &Path) -> Result<File> {
    let me = crate::os::euid();
    for _ in 0..3 {
        match OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(path)
        {
            Ok(f) => return Ok(f),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(Error::from_io(
                format!("creating {}", path.display()),
                &e,
                "run the daemon as a user who may write its directory, or give it another --dir",
            )),
        }
        let existing = OpenOptions::new()
            .read(true)
            .write(true)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC | libc::O_NONBLOCK)
            .open(path);
        let why = match existing {
            Ok(f) => match f.metadata() {
                Ok(md) if md.file_type().is_file() && md.uid() == me && md.mode() & 0o077 == 0 => {
                    return Ok(f)
                }
                Ok(md) => format!(
                    "it is owned by uid {} with mode {:04o}",
                    md.uid(),
                    md.mode() & 0o7777
                ),
                Err(e) => format!("fstat failed: {e}"),
            },
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => format!("it cannot be opened ({e})"),
        };
        if let Err(e) = std::fs::remove_file(path) {
            if e.kind() != std::io::ErrorKind::NotFound {
                return Err(Error::new(
                    ErrorKind::Permission,
                    format!(
                        "{} is not the daemon's own ({why}) and cannot be removed ({e}): other \
                         users could hold its lock and keep every daemon from starting; give \
                         the daemon a directory only its user can write (--dir, HRTS_HOST_DIR)",
                        path.display()
                    ),
                ));
            }
        }
    }
    Err(Error::new(
        ErrorKind::Timeout,
        format!(
            "{} keeps being replaced while the daemon makes it in {}; is another program \
             writing that directory?",
            path.display(),
            dir.display()
        ),
    ))
}

/// Takes the daemon lock of `dir` (creating the directory and the lock file
/// if needed), or says which other daemon has it.
pub fn lock_daemon(dir: &Path) -> Result<DaemonLock> {
    std::fs::create_dir_all(dir).map_err(|e| {
        Error::from_io(
            format!("creating {}", dir.display()),
            &e,
            "run the daemon as a user who may write there, or give it another --dir",
        )
    })?;
    let path = dir.join(LOCK_FILE);
    let file = open_lock_file(dir, &path)?;
    // SAFETY: the descriptor is open for the call; LOCK_NB never blocks.
    if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
        let e = std::io::Error::last_os_error();
        if e.raw_os_error() == Some(libc::EWOULDBLOCK) {
            return Err(Error::new(
                ErrorKind::Timeout,
                format!(
                    "another hrts daemon keeps {} (it holds the lock on {}); stop it first, or \
                     give this one another --dir",
                    page_path(dir).display(),
                    path.display()
                ),
            ));
        }
        return Err(Error::from_io(
            format!("flock of {}", path.display()),
            &e,
            "",
        ));
    }
    Ok(DaemonLock(file))
}

/// The daemon's page: the existing one in `dir` (`Ok(Some)`) if it is this
/// user's, of the page's size, an hrts page and ready; `Ok(None)` if there is
/// none or it cannot be adopted (the caller makes a new one and says why).
pub fn open_writer(dir: &Path, spec: &Spec) -> Result<std::result::Result<HostPage, String>> {
    let path = page_path(dir);
    let file = match OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(&path)
    {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Ok(Err("there was none".into()))
        }
        Err(e) => return Ok(Err(format!("it could not be opened ({e})"))),
    };
    let me = crate::os::euid();
    if let Err((_, why)) = check_file(&path, &file, &[me], spec) {
        return Ok(Err(why));
    }
    let page = Page::map_file(
        file.as_raw_fd(),
        spec.size,
        true,
        &path.display().to_string(),
    )?;
    if let Err((_, why)) = check_page(&page, spec) {
        return Ok(Err(why));
    }
    Ok(Ok(HostPage { file, page }))
}

/// Makes a new page in `dir`: a zeroed file under a temporary name, `init`
/// run on its read-write mapping, then renamed over `time` (so readers see
/// either the old page or the whole new one). Readable by everyone, writable
/// by this user only.
pub fn create(dir: &Path, spec: &Spec, init: &dyn Fn(&Page) -> Result<()>) -> Result<HostPage> {
    let path = page_path(dir);
    let tmp = dir.join(format!(".{PAGE_FILE}.{}", std::process::id()));
    let _ = std::fs::remove_file(&tmp);
    let made = (|| {
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .mode(0o644)
            .custom_flags(libc::O_NOFOLLOW)
            .open(&tmp)
            .map_err(|e| Error::from_io(format!("creating {}", tmp.display()), &e, ""))?;
        // The umask may have taken bits away: readers need o+r.
        file.set_permissions(std::fs::Permissions::from_mode(0o644))
            .map_err(|e| Error::from_io(format!("chmod of {}", tmp.display()), &e, ""))?;
        file.set_len(spec.size as u64)
            .map_err(|e| Error::from_io(format!("sizing {}", tmp.display()), &e, ""))?;
        let page = Page::map_file(
            file.as_raw_fd(),
            spec.size,
            true,
            &tmp.display().to_string(),
        )?;
        init(&page)?;
        std::fs::rename(&tmp, &path).map_err(|e| {
            Error::from_io(
                format!("renaming {} to {}", tmp.display(), path.display()),
                &e,
                "",
            )
        })?;
        Ok(HostPage { file, page })
    })();
    if made.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    made
}
