//! The sequence file: the first number no block has reserved yet, written
//! atomically and durably, read back with its damage detected.
//!
//! ```text
//! hrts-sequence 2
//! next 12000
//! check 5a0c39e1d9b1c0f7
//! ```
//!
//! Version 1 files (`last` and `interval` lines, from hrts before blocks were
//! reserved in the file) are read as `next = last + interval`, which is what
//! they promised. Beside the file live `<name>.lock` (the `flock` every
//! reservation holds) and, while a write is under way, `<name>.tmp`.

use super::dir::{check_file, lock_exclusive, CheckedDir};
use crate::error::{Error, ErrorKind, Result};
use std::ffi::{CString, OsStr};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

/// A file name's bytes (`None`: not representable: on Windows, not Unicode).
#[cfg(not(windows))]
fn name_bytes(p: &OsStr) -> Option<&[u8]> {
    Some(std::os::unix::ffi::OsStrExt::as_bytes(p))
}
#[cfg(windows)]
fn name_bytes(p: &OsStr) -> Option<&[u8]> {
    p.to_str().map(str::as_bytes)
}

/// The file name a C string holds (made by [`name_bytes`]).
#[cfg(not(windows))]
fn name_path(name: &CString) -> PathBuf {
    PathBuf::from(std::os::unix::ffi::OsStrExt::from_bytes(name.as_bytes()) as &OsStr)
}
#[cfg(windows)]
fn name_path(name: &CString) -> PathBuf {
    PathBuf::from(name.to_string_lossy().into_owned())
}

const FORMAT_V1: &str = "hrts-sequence 1";
const FORMAT_V2: &str = "hrts-sequence 2";
/// No hrts sequence file is anywhere near this long.
const MAX_LEN: u64 = 4096;

fn checksum(body: &str) -> u64 {
    // FNV-1a: enough to tell a damaged file from an intact one.
    fnv(body.as_bytes())
}

pub(super) fn fnv(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

fn render(next: u64) -> String {
    let body = format!("{FORMAT_V2}\nnext {next}\n");
    format!("{body}check {:016x}\n", checksum(&body))
}

fn damaged(path: &Path, why: &str) -> Error {
    Error::new(
        ErrorKind::Persist,
        format!(
            "sequence file {} is damaged or not an hrts sequence file ({why}); hrts will not \
             guess, since restarting the numbering could repeat numbers: restore the file \
             from a backup, or, if no number issued before matters any more, move it away \
             to restart at 0",
            path.display()
        ),
    )
}

/// Parses a sequence file's text: the first unreserved number.
pub fn parse(path: &Path, text: &str) -> Result<u64> {
    let lines: Vec<&str> = text.lines().collect();
    let field = |line: &str, key: &str| -> Result<u64> {
        line.strip_prefix(key)
            .and_then(|v| v.strip_prefix(' '))
            .and_then(|v| v.parse().ok())
            .ok_or_else(|| damaged(path, &format!("bad {key} line {line:?}")))
    };
    let checked = |body_lines: &[&str], check: &str| -> Result<()> {
        let body: String = body_lines.iter().map(|l| format!("{l}\n")).collect();
        if check != format!("check {:016x}", checksum(&body)) {
            return Err(damaged(path, "checksum mismatch"));
        }
        Ok(())
    };
    match lines.first().copied() {
        Some(FORMAT_V2) => {
            let [_, next, check] = lines[..] else {
                return Err(damaged(path, "it does not have the three expected lines"));
            };
            let value = field(next, "next")?;
            checked(&lines[..2], check)?;
            Ok(value)
        }
        Some(FORMAT_V1) => {
            let [_, last, interval, check] = lines[..] else {
                return Err(damaged(path, "it does not have the four expected lines"));
            };
            let (last, interval) = (field(last, "last")?, field(interval, "interval")?);
            checked(&lines[..3], check)?;
            last.checked_add(interval)
                .filter(|_| interval > 0)
                .ok_or_else(|| damaged(path, "its values leave no room for further numbers"))
        }
        _ => Err(damaged(
            path,
            &format!("its first line is not `{FORMAT_V2}` or `{FORMAT_V1}`"),
        )),
    }
}

/// A sequence file in its checked directory.
pub struct SeqFile {
    dir: CheckedDir,
    path: PathBuf,
    name: CString,
    lock: CString,
    tmp: CString,
}

/// The reservation lock, released when dropped or when its holder dies.
pub struct Locked {
    _file: std::fs::File,
}

impl SeqFile {
    /// Opens the directory of `path` (creating it if needed) and checks it.
    pub fn open(path: &Path) -> Result<SeqFile> {
        let invalid = |why: &str| {
            Error::new(
                ErrorKind::InvalidArgument,
                format!("sequence file {}: {why} (HRTS_SEQ_FILE)", path.display()),
            )
        };
        let name = path
            .file_name()
            .ok_or_else(|| invalid("the path names no file"))?;
        let lock = Path::new(name).with_extension("lock");
        let tmp = Path::new(name).with_extension("tmp");
        if lock.as_os_str() == name || tmp.as_os_str() == name {
            return Err(invalid(
                "its name must not end in .lock or .tmp, the names of its companion files",
            ));
        }
        let c = |p: &OsStr| {
            let bytes = name_bytes(p).ok_or_else(|| invalid("its name is not Unicode"))?;
            CString::new(bytes).map_err(|_| invalid("NUL in the file name"))
        };
        let parent = path.parent().unwrap_or(Path::new("."));
        let dir = CheckedDir::open(parent, path)?;
        Ok(SeqFile {
            path: dir.path().join(name),
            name: c(name)?,
            lock: c(lock.as_os_str())?,
            tmp: c(tmp.as_os_str())?,
            dir,
        })
    }

    /// Where the file is, links resolved.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The file's identity: its directory's device and inode, and its name.
    pub fn identity(&self) -> u64 {
        let (dev, ino) = self.dir.identity();
        let mut bytes = Vec::with_capacity(16 + self.name.as_bytes().len());
        bytes.extend_from_slice(&dev.to_le_bytes());
        bytes.extend_from_slice(&ino.to_le_bytes());
        bytes.extend_from_slice(self.name.as_bytes());
        fnv(&bytes)
    }

    fn companion(&self, name: &CString) -> PathBuf {
        self.dir.path().join(name_path(name))
    }

    fn io_error(&self, what: &str, at: &Path, e: &io::Error) -> Error {
        if e.raw_os_error() == Some(libc::ELOOP) {
            return Error::new(
                ErrorKind::Permission,
                format!(
                    "refusing {}: it is a symbolic link, which hrts never follows for its \
                     sequence and lock files; remove it if you did not put it there",
                    at.display()
                ),
            );
        }
        Error::from_io(
            format!("{what} {}", at.display()),
            e,
            "check the permissions of that file and its directory (HRTS_SEQ_FILE)",
        )
    }

    /// Takes the exclusive `flock` on `<name>.lock`, waiting for other holders.
    pub fn lock(&self) -> Result<Locked> {
        let at = self.companion(&self.lock);
        let f = self
            .dir
            .open_file(&self.lock, libc::O_RDWR | libc::O_CREAT, 0o600)
            .map_err(|e| self.io_error("opening lock file", &at, &e))?;
        check_file(&f, &at)?;
        lock_exclusive(&f).map_err(|e| self.io_error("flock of", &at, &e))?;
        Ok(Locked { _file: f })
    }

    /// The first unreserved number; `None` when there is no file yet.
    pub fn read(&self) -> Result<Option<u64>> {
        let mut f = match self.dir.open_file(&self.name, libc::O_RDONLY, 0) {
            Ok(f) => f,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(self.io_error("opening sequence file", &self.path, &e)),
        };
        check_file(&f, &self.path)?;
        let mut bytes = Vec::new();
        (&mut f)
            .take(MAX_LEN + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| self.io_error("reading sequence file", &self.path, &e))?;
        if bytes.len() as u64 > MAX_LEN {
            return Err(damaged(&self.path, "it is far longer than a sequence file"));
        }
        let text =
            std::str::from_utf8(&bytes).map_err(|_| damaged(&self.path, "it is not text"))?;
        parse(&self.path, text).map(Some)
    }

    /// Replaces the file with one saying `next`: written to `<name>.tmp`
    /// (created exclusively), synced, renamed over the file, directory synced.
    /// The caller holds the lock, so a `<name>.tmp` found here was left by a
    /// writer that died, and is removed. No failure leaves `<name>.tmp` behind.
    pub fn write(&self, next: u64) -> Result<()> {
        let tmp_path = self.companion(&self.tmp);
        let create = || {
            self.dir.open_file(
                &self.tmp,
                libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL,
                0o600,
            )
        };
        let mut f = match create() {
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                self.dir
                    .remove(&self.tmp)
                    .map_err(|e| self.io_error("removing leftover", &tmp_path, &e))?;
                create()
            }
            other => other,
        }
        .map_err(|e| self.io_error("creating", &tmp_path, &e))?;
        let written = f
            .write_all(render(next).as_bytes())
            .and_then(|_| f.sync_all())
            .map_err(|e| self.io_error("writing", &tmp_path, &e))
            .and_then(|_| {
                self.dir
                    .rename(&self.tmp, &self.name)
                    .map_err(|e| self.io_error("renaming it over", &self.path, &e))
            });
        if let Err(e) = written {
            let _ = self.dir.remove(&self.tmp);
            return Err(e);
        }
        self.dir.sync().map_err(|e| {
            Error::from_io(
                format!("syncing directory {}", self.dir.path().display()),
                &e,
                "the sequence file may not survive a crash; check the file system",
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(tag: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("hrts-seqfile-{}-{tag}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        dir.join("sub").join("numbers.seq")
    }

    fn leftovers(path: &Path) -> Vec<String> {
        std::fs::read_dir(path.parent().unwrap())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.contains(".tmp"))
            .collect()
    }

    #[test]
    fn the_file_round_trips_and_damage_is_detected() {
        let path = scratch("roundtrip");
        let file = SeqFile::open(&path).unwrap();
        assert_eq!(file.read().unwrap(), None);
        file.write(123_456).unwrap();
        assert_eq!(file.read().unwrap(), Some(123_456));
        let text = std::fs::read_to_string(&path).unwrap();
        for bad in [
            String::new(),
            text.replace("123456", "123457"),
            text.replace("next 123456", "next x"),
            text.lines().take(2).collect::<Vec<_>>().join("\n"),
        ] {
            std::fs::write(&path, &bad).unwrap();
            let err = file.read().unwrap_err();
            assert_eq!(err.kind(), ErrorKind::Persist, "{bad:?}");
            assert!(err.message().contains("damaged"), "{err}");
            assert!(err.message().contains(path.to_str().unwrap()), "{err}");
        }
        std::fs::remove_dir_all(path.parent().unwrap().parent().unwrap()).unwrap();
    }

    #[test]
    fn binary_garbage_is_not_an_hrts_sequence_file() {
        let path = scratch("garbage");
        let file = SeqFile::open(&path).unwrap();
        for garbage in [&[0xff, 0xfe, 0x00, 0x17, 0x80][..], &[7u8; 10_000][..]] {
            std::fs::write(&path, garbage).unwrap();
            let err = file.read().unwrap_err();
            assert_eq!(err.kind(), ErrorKind::Persist);
            assert!(err.message().contains("not an hrts sequence file"), "{err}");
            assert!(err.message().contains("move it away"), "{err}");
            assert!(!err.message().contains("permissions"), "{err}");
        }
        std::fs::remove_dir_all(path.parent().unwrap().parent().unwrap()).unwrap();
    }

    #[test]
    fn version_1_files_resume_where_they_promised() {
        let body = "hrts-sequence 1\nlast 1999\ninterval 1000\n";
        let text = format!("{body}check {:016x}\n", checksum(body));
        assert_eq!(parse(Path::new("f"), &text).unwrap(), 2999);
        let zero = text.replace("interval 1000", "interval 0");
        assert!(parse(Path::new("f"), &zero).is_err());
    }

    #[test]
    fn a_failed_rename_leaves_no_temporary_file() {
        let path = scratch("rename");
        let file = SeqFile::open(&path).unwrap();
        // A directory in the file's place: the rename over it fails.
        std::fs::create_dir(&path).unwrap();
        std::fs::write(path.join("keep"), b"").unwrap();
        let err = file.write(5).unwrap_err();
        assert!(err.message().contains("renaming"), "{err}");
        assert_eq!(leftovers(&path), Vec::<String>::new());
        assert!(path.join("keep").exists());
        std::fs::remove_dir_all(path.parent().unwrap().parent().unwrap()).unwrap();
    }

    // Symbolic links and the refusal to follow them are the Linux room's.
    #[test]
    #[cfg(not(windows))]
    fn links_are_never_followed() {
        let path = scratch("links");
        let file = SeqFile::open(&path).unwrap();
        let dir = path.parent().unwrap();
        let target = dir.join("target");
        std::fs::write(&target, b"precious").unwrap();
        // A leftover temporary name that is a link: removed, not written through.
        std::os::unix::fs::symlink(&target, dir.join("numbers.tmp")).unwrap();
        file.write(7).unwrap();
        assert_eq!(file.read().unwrap(), Some(7));
        assert_eq!(std::fs::read(&target).unwrap(), b"precious");
        assert_eq!(leftovers(&path), Vec::<String>::new());
        // A dangling lock link is refused, and nothing is created where it points.
        let elsewhere = dir.join("elsewhere");
        std::os::unix::fs::symlink(&elsewhere, dir.join("numbers.lock")).unwrap();
        let err = file.lock().err().unwrap();
        assert_eq!(err.kind(), ErrorKind::Permission);
        assert!(err.message().contains("symbolic link"), "{err}");
        assert!(!elsewhere.exists());
        // So is a sequence file that is a link.
        std::fs::remove_file(&path).unwrap();
        std::os::unix::fs::symlink(&target, &path).unwrap();
        assert!(file.read().unwrap_err().message().contains("symbolic link"));
        std::fs::remove_dir_all(path.parent().unwrap().parent().unwrap()).unwrap();
    }

    #[test]
    fn companion_names_cannot_collide_with_the_file() {
        for name in ["x.lock", "x.tmp"] {
            let err = SeqFile::open(Path::new(name)).err().unwrap();
            assert_eq!(err.kind(), ErrorKind::InvalidArgument, "{name}");
        }
    }
}
