//! The directory of a sequence file on Windows: created if missing and used
//! by its resolved path. The Linux room's walk (no symbolic link of another
//! user, no directory others may write) has no twin here yet: on Windows the
//! default place is the user's own `%LOCALAPPDATA%\hrts`, whose ACL admits
//! only that user (docs/windows.md says what is not checked).

use crate::error::{Error, ErrorKind, Result};
use std::ffi::CStr;
use std::fs::{File, OpenOptions};
use std::io;
use std::os::windows::io::AsRawHandle;
use std::path::{Path, PathBuf};
use windows_sys::Win32::Storage::FileSystem::{LockFileEx, LOCKFILE_EXCLUSIVE_LOCK};
use windows_sys::Win32::System::IO::OVERLAPPED;

/// An open directory (by path) that exists.
#[derive(Debug)]
pub struct CheckedDir {
    path: PathBuf,
}

fn name_of(name: &CStr) -> io::Result<&str> {
    name.to_str()
        .map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))
}

impl CheckedDir {
    /// Opens (creating what is missing) the directory `dir`, which holds the
    /// sequence file `file` (named in messages).
    pub fn open(dir: &Path, file: &Path) -> Result<CheckedDir> {
        let io_error = |what: &str, e: io::Error| {
            Error::from_io(
                format!(
                    "{what} {} for sequence file {}",
                    dir.display(),
                    file.display()
                ),
                &e,
                "set HRTS_SEQ_FILE to a file in a directory of yours that only you can write",
            )
        };
        std::fs::create_dir_all(dir).map_err(|e| io_error("creating directory", e))?;
        let path = std::fs::canonicalize(dir).map_err(|e| io_error("resolving", e))?;
        if !path.is_dir() {
            return Err(Error::new(
                ErrorKind::Persist,
                format!("{} is not a directory (HRTS_SEQ_FILE)", path.display()),
            ));
        }
        Ok(CheckedDir { path })
    }

    /// Where this directory is (for messages).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The directory's identity: Windows has no inode to hand, so a hash of
    /// its resolved path (case folded: NTFS names are case-insensitive).
    pub fn identity(&self) -> (u64, u64) {
        let text = self.path.to_string_lossy().to_lowercase();
        (0, super::file::fnv(text.as_bytes()))
    }

    /// Opens `name` here; `flags` are the C library's `O_*` access and
    /// creation flags (`mode` is Unix-only and ignored).
    pub fn open_file(&self, name: &CStr, flags: i32, _mode: u32) -> io::Result<File> {
        let mut o = OpenOptions::new();
        match flags & 3 {
            libc::O_WRONLY => o.write(true),
            libc::O_RDWR => o.read(true).write(true),
            _ => o.read(true),
        };
        if flags & libc::O_CREAT != 0 {
            if flags & libc::O_EXCL != 0 {
                o.create_new(true);
            } else {
                o.create(true);
            }
        }
        o.open(self.path.join(name_of(name)?))
    }

    /// Renames `from` to `to`, both in this directory (replacing `to`).
    pub fn rename(&self, from: &CStr, to: &CStr) -> io::Result<()> {
        std::fs::rename(self.path.join(name_of(from)?), self.path.join(name_of(to)?))
    }

    /// Removes the file `name`.
    pub fn remove(&self, name: &CStr) -> io::Result<()> {
        std::fs::remove_file(self.path.join(name_of(name)?))
    }

    /// Windows cannot flush a directory; the rename itself is journalled by NTFS.
    pub fn sync(&self) -> io::Result<()> {
        Ok(())
    }
}

/// Refuses a file that is not a regular file.
pub fn check_file(f: &File, path: &Path) -> Result<()> {
    let meta = f
        .metadata()
        .map_err(|e| Error::from_io(format!("metadata of {}", path.display()), &e, ""))?;
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
    Ok(())
}

/// Takes an exclusive lock on the file's first byte, waiting for other
/// holders; Windows releases it when the handle closes or the process dies.
pub fn lock_exclusive(f: &File) -> io::Result<()> {
    // SAFETY: zeroed is a valid OVERLAPPED (offset 0, no event).
    let mut ov: OVERLAPPED = unsafe { std::mem::zeroed() };
    // SAFETY: an open file handle and a valid OVERLAPPED; without
    // LOCKFILE_FAIL_IMMEDIATELY the call waits for the lock.
    let ok = unsafe { LockFileEx(f.as_raw_handle(), LOCKFILE_EXCLUSIVE_LOCK, 0, 1, 0, &mut ov) };
    if ok == 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}
