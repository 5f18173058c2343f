//! The directory of a sequence file, opened so that no other user can steer what
//! hrts reads or writes there.
//!
//! The path is walked from `/` one component at a time, each directory opened
//! relative to the one before without following a symbolic link, and checked on
//! the open descriptor:
//!
//! - the file's own directory must belong to this user and be writable by
//!   nobody else (no group or other write permission);
//! - every directory above it must belong to this user or root and be writable
//!   by nobody else, unless it is sticky (`/tmp`, `/var/tmp`): there others may
//!   add names but not remove or rename ours;
//! - a symbolic link on the way is followed only if it belongs to this user or
//!   root (in a sticky directory anybody can plant one, and re-point it later
//!   to another directory of this user's, e.g. an empty one: numbering would
//!   restart at 0).
//!
//! Missing directories are created, mode 0700. Every later operation goes
//! through the checked descriptor (`openat`, `renameat`, `unlinkat`), never
//! through the path again, so swapping a directory for another after the check
//! changes nothing; files are opened with `O_NOFOLLOW`.

use crate::error::{Error, ErrorKind, Result};
use std::ffi::{CStr, CString, OsStr, OsString};
use std::fs::File;
use std::io;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::fs::MetadataExt;
use std::os::unix::io::{AsRawFd, FromRawFd};
use std::path::{Component, Path, PathBuf};

/// An open directory that passed the checks above.
#[derive(Debug)]
pub struct CheckedDir {
    fd: File,
    path: PathBuf,
    dev: u64,
    ino: u64,
}

fn c_name(name: &OsStr) -> io::Result<CString> {
    CString::new(name.as_bytes()).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))
}

/// `openat(dir, name, flags | O_NOFOLLOW | O_CLOEXEC, mode)`; `dir` may be
/// `AT_FDCWD` for an absolute `name`.
fn open_at(
    dir: libc::c_int,
    name: &CStr,
    flags: libc::c_int,
    mode: libc::mode_t,
) -> io::Result<File> {
    let flags = flags | libc::O_NOFOLLOW | libc::O_CLOEXEC;
    // SAFETY: `dir` is an open descriptor (or AT_FDCWD) and `name` a NUL-terminated
    // string, both valid for the call; openat only reads them.
    let fd = unsafe { libc::openat(dir, name.as_ptr(), flags, mode as libc::c_uint) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: openat returned a new descriptor that nothing else owns.
    Ok(unsafe { File::from_raw_fd(fd) })
}

/// Opens the directory `name` in `dir`, creating it (mode 0700) if missing.
fn open_or_create_dir_at(dir: libc::c_int, name: &CStr) -> io::Result<File> {
    let open = || open_at(dir, name, libc::O_RDONLY | libc::O_DIRECTORY, 0);
    match open() {
        Err(e) if e.raw_os_error() == Some(libc::ENOENT) => {
            // SAFETY: as for `open_at`.
            if unsafe { libc::mkdirat(dir, name.as_ptr(), 0o700) } != 0 {
                let e = io::Error::last_os_error();
                if e.raw_os_error() != Some(libc::EEXIST) {
                    return Err(e);
                }
            }
            open()
        }
        other => other,
    }
}

/// Symbolic links one walk follows at most (the kernel's limit too).
const MAX_LINKS: u32 = 40;

/// The target of the symbolic link `name` in `dir`, if it belongs to this user
/// or root; `Ok(None)` when `name` is no link.
fn trusted_link_at(
    dir: libc::c_int,
    name: &CStr,
    path: &Path,
    file: &Path,
) -> Result<Option<PathBuf>> {
    // SAFETY: zeroed is a valid bit pattern for the plain-data struct stat.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: `dir` is an open descriptor (or AT_FDCWD), `name` a NUL-terminated
    // string and `st` a writable struct stat, all valid for the call.
    if unsafe { libc::fstatat(dir, name.as_ptr(), &mut st, libc::AT_SYMLINK_NOFOLLOW) } != 0
        || st.st_mode & libc::S_IFMT != libc::S_IFLNK
    {
        return Ok(None);
    }
    let me = crate::os::euid();
    if st.st_uid != me && st.st_uid != 0 {
        return Err(Error::new(
            ErrorKind::Permission,
            format!(
                "refusing sequence file {}: {} is a symbolic link of uid {}, and hrts follows \
                 only links of yours (uid {me}) or root's, since another user could re-point \
                 it; remove it if you did not create it, or set HRTS_SEQ_FILE to a file in a \
                 directory of yours that only you can write",
                file.display(),
                path.display(),
                st.st_uid
            ),
        ));
    }
    let mut buf = vec![0u8; libc::PATH_MAX as usize];
    // SAFETY: as above; readlinkat writes at most `buf.len()` bytes into `buf`.
    let n = unsafe { libc::readlinkat(dir, name.as_ptr(), buf.as_mut_ptr().cast(), buf.len()) };
    if n < 0 || n as usize >= buf.len() {
        return Err(Error::os(format!("readlink {}", path.display()), ""));
    }
    buf.truncate(n as usize);
    Ok(Some(PathBuf::from(OsString::from_vec(buf))))
}

/// `path`'s components to walk, last first (popped from the end).
fn push_components(pending: &mut Vec<OsString>, path: &Path) {
    let names: Vec<OsString> = path
        .components()
        .filter_map(|c| match c {
            Component::Normal(n) => Some(n.to_os_string()),
            Component::ParentDir => Some("..".into()),
            _ => None,
        })
        .collect();
    pending.extend(names.into_iter().rev());
}

impl CheckedDir {
    /// Opens (creating what is missing) and checks the directory `dir`, which
    /// holds the sequence file `file` (named in messages).
    pub fn open(dir: &Path, file: &Path) -> Result<CheckedDir> {
        let io_error = |what: &str, at: &Path, e: io::Error| {
            Error::from_io(
                format!(
                    "{what} {} for sequence file {}",
                    at.display(),
                    file.display()
                ),
                &e,
                "set HRTS_SEQ_FILE to a file in a directory of yours that only you can write",
            )
        };
        let start = if dir.is_absolute() {
            dir.to_path_buf()
        } else {
            let cwd = std::env::current_dir()
                .map_err(|e| io_error("finding the current directory to resolve", dir, e))?;
            cwd.join(dir)
        };
        let mut pending = Vec::new();
        push_components(&mut pending, &start);
        // The root is checked by path (nothing can replace it); below it, each
        // directory is opened relative to its checked parent, a top-level one by
        // its absolute name.
        let root = Path::new("/");
        let meta = std::fs::metadata(root).map_err(|e| io_error("fstat of", root, e))?;
        check(&meta, root, file, false)?;
        let mut walked: Vec<(File, PathBuf)> = Vec::new();
        let mut links = 0;
        while let Some(name) = pending.pop() {
            if name == ".." {
                walked.pop();
                continue;
            }
            let path = walked.last().map_or(root, |(_, p)| p).join(&name);
            let (at, cname) = match walked.last() {
                Some((parent, _)) => (parent.as_raw_fd(), c_name(&name)),
                None => (libc::AT_FDCWD, c_name(path.as_os_str())),
            };
            let cname = cname.map_err(|e| io_error("opening", &path, e))?;
            match open_or_create_dir_at(at, &cname) {
                Ok(fd) => {
                    let meta = fd.metadata().map_err(|e| io_error("fstat of", &path, e))?;
                    check(&meta, &path, file, false)?;
                    walked.push((fd, path));
                }
                Err(e) if matches!(e.raw_os_error(), Some(libc::ELOOP | libc::ENOTDIR)) => {
                    let Some(target) = trusted_link_at(at, &cname, &path, file)? else {
                        return Err(io_error("opening directory", &path, e));
                    };
                    links += 1;
                    if links > MAX_LINKS {
                        return Err(io_error("following links at", &path, e));
                    }
                    if target.is_absolute() {
                        walked.clear();
                    }
                    push_components(&mut pending, &target);
                }
                Err(e) => return Err(io_error("opening or creating directory", &path, e)),
            }
        }
        let (fd, path) = match walked.pop() {
            Some(last) => last,
            None => (
                File::open(root).map_err(|e| io_error("opening", root, e))?,
                root.to_path_buf(),
            ),
        };
        let meta = fd.metadata().map_err(|e| io_error("fstat of", &path, e))?;
        let (dev, ino) = check(&meta, &path, file, true)?;
        Ok(CheckedDir { fd, path, dev, ino })
    }

    /// Where this directory is (for messages).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Device and inode: the directory's identity, stable while it exists.
    pub fn identity(&self) -> (u64, u64) {
        (self.dev, self.ino)
    }

    /// Opens `name` here with `O_NOFOLLOW`: a symbolic link is an error (ELOOP).
    pub fn open_file(
        &self,
        name: &CStr,
        flags: libc::c_int,
        mode: libc::mode_t,
    ) -> io::Result<File> {
        open_at(self.fd.as_raw_fd(), name, flags, mode)
    }

    /// Renames `from` to `to`, both in this directory.
    pub fn rename(&self, from: &CStr, to: &CStr) -> io::Result<()> {
        let fd = self.fd.as_raw_fd();
        // SAFETY: `fd` is an open directory and both names NUL-terminated strings,
        // valid for the call.
        if unsafe { libc::renameat(fd, from.as_ptr(), fd, to.as_ptr()) } != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    /// Removes the entry `name` itself (a link is removed, not followed).
    pub fn remove(&self, name: &CStr) -> io::Result<()> {
        // SAFETY: as for `rename`.
        if unsafe { libc::unlinkat(self.fd.as_raw_fd(), name.as_ptr(), 0) } != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    /// Makes the directory's entries (a rename) durable.
    pub fn sync(&self) -> io::Result<()> {
        self.fd.sync_all()
    }
}

/// Checks one directory of the path; returns its (device, inode).
fn check(meta: &std::fs::Metadata, path: &Path, file: &Path, last: bool) -> Result<(u64, u64)> {
    let me = crate::os::euid();
    let mode = meta.mode() & 0o7777;
    let sticky = mode & 0o1000 != 0; // S_ISVTX
    let refuse = |why: String, fix: String| {
        Err(Error::new(
            ErrorKind::Permission,
            format!(
                "refusing sequence file {}: directory {} {why}, so another user could replace \
                 the file and make sequence numbers repeat (or make hrts write where they \
                 choose); {fix}, or set HRTS_SEQ_FILE to a file in a directory of yours that \
                 only you can write",
                file.display(),
                path.display()
            ),
        ))
    };
    let owner_ok = if last {
        meta.uid() == me
    } else {
        meta.uid() == me || meta.uid() == 0
    };
    if !owner_ok {
        let whose = if last { "you" } else { "you or root" };
        return refuse(
            format!("belongs to uid {}, not to {whose} (uid {me})", meta.uid()),
            format!(
                "if you did not create it, another user may have: remove it (`rm -r {}`)",
                path.display()
            ),
        );
    }
    if mode & 0o022 != 0 && (last || !sticky) {
        return refuse(
            format!("is writable by other users (mode {mode:04o})"),
            format!("`chmod go-w {}`", path.display()),
        );
    }
    Ok((meta.dev(), meta.ino()))
}

/// Takes the exclusive `flock` on `f`, waiting for other holders (retried
/// when a signal interrupts the wait).
pub fn lock_exclusive(f: &File) -> io::Result<()> {
    loop {
        // SAFETY: the descriptor is open for the whole call.
        if unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX) } == 0 {
            return Ok(());
        }
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}

/// Refuses a file opened in a checked directory that is not a regular file of
/// this user (planted by someone else, or not a file at all).
pub fn check_file(f: &File, path: &Path) -> Result<()> {
    let meta = f
        .metadata()
        .map_err(|e| Error::from_io(format!("fstat of {}", path.display()), &e, ""))?;
    let me = crate::os::euid();
    if !meta.file_type().is_file() {
        return Err(Error::new(
            ErrorKind::Persist,
            format!(
                "{} is not a regular file; move it away (hrts recreates its lock file; a \
                 sequence file moved away restarts numbering at 0)",
                path.display()
            ),
        ));
    }
    if meta.uid() != me {
        return Err(Error::new(
            ErrorKind::Permission,
            format!(
                "refusing {}: it belongs to uid {}, not to you (uid {me}); hrts only trusts \
                 its own files: remove it if you did not put it there",
                path.display(),
                meta.uid()
            ),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(tag: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("hrts-dirtest-{}-{tag}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        d
    }

    #[test]
    fn missing_directories_are_created_private_and_links_in_the_path_are_resolved() {
        let base = scratch("create");
        let dir = base.join("a/b");
        let d = CheckedDir::open(&dir, &dir.join("x.seq")).unwrap();
        assert_eq!(d.path(), std::fs::canonicalize(&dir).unwrap());
        use std::os::unix::fs::PermissionsExt;
        for p in [base.join("a"), dir.clone()] {
            let mode = std::fs::metadata(&p).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode & 0o077, 0, "{} mode {mode:o}", p.display());
        }
        // A link in the path the user chose is followed to a checked place.
        std::os::unix::fs::symlink(&dir, base.join("link")).unwrap();
        let via = CheckedDir::open(&base.join("link"), Path::new("x")).unwrap();
        assert_eq!(via.identity(), d.identity());
        std::fs::remove_dir_all(&base).unwrap();
    }

    #[test]
    fn a_directory_writable_by_others_is_refused_with_the_fix() {
        use std::os::unix::fs::PermissionsExt;
        let base = scratch("open");
        std::fs::create_dir_all(&base).unwrap();
        std::fs::set_permissions(&base, std::fs::Permissions::from_mode(0o777)).unwrap();
        let err = CheckedDir::open(&base, &base.join("x.seq")).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Permission);
        assert!(err.message().contains("writable by other users"), "{err}");
        assert!(err.message().contains("chmod go-w"), "{err}");
        // Above the file's own directory, that is refused too ...
        let err = CheckedDir::open(&base.join("sub"), Path::new("x")).unwrap_err();
        assert!(err.message().contains(base.to_str().unwrap()), "{err}");
        // ... unless the directory is sticky, like /tmp.
        std::fs::set_permissions(&base, std::fs::Permissions::from_mode(0o1777)).unwrap();
        CheckedDir::open(&base.join("sub"), Path::new("x")).unwrap();
        assert!(CheckedDir::open(&base, Path::new("x")).is_err());
        std::fs::remove_dir_all(&base).unwrap();
    }

    #[test]
    fn links_are_followed_only_when_they_are_this_users_or_roots() {
        use std::os::unix::fs::PermissionsExt;
        let base = scratch("links");
        let mine = base.join("mine");
        std::fs::create_dir_all(&mine).unwrap();
        std::fs::set_permissions(&base, std::fs::Permissions::from_mode(0o1777)).unwrap();
        let link = base.join("planted");
        std::os::unix::fs::symlink(&mine, &link).unwrap();
        let d = CheckedDir::open(&link.join("sub/../sub"), Path::new("x")).unwrap();
        assert_eq!(d.path(), mine.join("sub"));
        if crate::os::euid() == 0 {
            // As if another user planted it: it could re-point it at will.
            std::os::unix::fs::lchown(&link, Some(65534), None).unwrap();
            let err = CheckedDir::open(&link.join("sub"), Path::new("x")).unwrap_err();
            assert_eq!(err.kind(), ErrorKind::Permission);
            assert!(
                err.message().contains("symbolic link of uid 65534"),
                "{err}"
            );
        }
        std::fs::remove_dir_all(&base).unwrap();
    }

    #[test]
    fn a_regular_file_in_the_path_is_reported_with_its_name() {
        let base = scratch("notadir");
        std::fs::create_dir_all(&base).unwrap();
        std::fs::write(base.join("not-a-dir"), b"x").unwrap();
        let err = CheckedDir::open(&base.join("not-a-dir/sub"), Path::new("x")).unwrap_err();
        assert!(err.message().contains("not-a-dir"), "{err}");
        std::fs::remove_dir_all(&base).unwrap();
    }
}
