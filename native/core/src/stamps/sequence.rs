//! Sequence numbers shared by every process of a segment, that never repeat,
//! even across the loss of every process or of the segment itself (a reboot).
//!
//! The counter lives in the segment. Every `interval` numbers (1000 by default)
//! the highest number handed out so far, P, is written to a file; a number is
//! only returned once a persisted P covers it (number < P + interval). After the
//! segment is gone, numbering resumes at P + interval from the file, above
//! anything issued before. The file is replaced atomically (write, fsync,
//! rename, fsync of the directory) under an `flock`, which the kernel releases
//! if its holder is killed. A damaged file is an error, never a silent restart
//! at zero.

use crate::error::{Error, ErrorKind, Result};
use crate::segment::SharedBase;
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::os::unix::io::AsRawFd;
use std::path::Path;
use std::sync::atomic::Ordering::{AcqRel, Acquire, Release};

const FORMAT_LINE: &str = "hrts-sequence 1";

/// What the persist file records.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Persisted {
    /// The highest number handed out when the file was written.
    pub last: u64,
    /// The interval in force then; numbering resumes at `last + interval`.
    pub interval: u64,
}

fn checksum(body: &str) -> u64 {
    // FNV-1a: enough to tell a damaged file from an intact one.
    body.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

fn render(p: Persisted) -> String {
    let body = render_body(p);
    format!("{body}check {:016x}\n", checksum(&body))
}

fn damaged(path: &Path, why: &str) -> Error {
    Error::new(
        ErrorKind::Persist,
        format!(
            "sequence file {} is damaged ({why}); hrts will not guess, since restarting the \
             numbering could repeat numbers: restore the file from a backup, or move it away \
             deliberately to restart at 0",
            path.display()
        ),
    )
}

/// Parses a persist file's text.
pub fn parse(path: &Path, text: &str) -> Result<Persisted> {
    let lines: Vec<&str> = text.lines().collect();
    let [format, last, interval, check] = lines[..] else {
        return Err(damaged(path, "it does not have the four expected lines"));
    };
    if format != FORMAT_LINE {
        return Err(damaged(path, "unknown first line"));
    }
    let field = |line: &str, key: &str| -> Result<u64> {
        line.strip_prefix(key)
            .and_then(|v| v.strip_prefix(' '))
            .and_then(|v| v.parse().ok())
            .ok_or_else(|| damaged(path, &format!("bad {key} line {line:?}")))
    };
    let p = Persisted {
        last: field(last, "last")?,
        interval: field(interval, "interval")?,
    };
    let expected = format!("check {:016x}", checksum(&render_body(p)));
    if check != expected || p.interval == 0 {
        return Err(damaged(path, "checksum mismatch"));
    }
    Ok(p)
}

fn render_body(p: Persisted) -> String {
    format!("{FORMAT_LINE}\nlast {}\ninterval {}\n", p.last, p.interval)
}

/// Reads the persist file; `Ok(None)` when it does not exist yet.
pub fn read(path: &Path) -> Result<Option<Persisted>> {
    match std::fs::read_to_string(path) {
        Ok(text) => parse(path, &text).map(Some),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(Error::from_io(
            format!("reading sequence file {}", path.display()),
            &e,
            "check its permissions",
        )),
    }
}

/// Replaces the persist file atomically and durably.
pub fn write(path: &Path, p: Persisted) -> Result<()> {
    let io = |what: &str, e: std::io::Error| {
        Error::from_io(
            format!("{what} sequence file {}", path.display()),
            &e,
            "check that its directory exists and is writable (HRTS_SEQ_FILE)",
        )
    };
    let dir = path.parent().unwrap_or(Path::new("."));
    let tmp = path.with_extension(format!("tmp.{}", std::process::id()));
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(&tmp)
        .map_err(|e| io("creating", e))?;
    f.write_all(render(p).as_bytes())
        .and_then(|_| f.sync_all())
        .map_err(|e| io("writing", e))?;
    std::fs::rename(&tmp, path).map_err(|e| io("renaming", e))?;
    std::fs::File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(|e| io("syncing the directory of", e))
}

/// An exclusive `flock` on `<file>.lock`, released on drop or when the process dies.
struct FileLock {
    _held: std::fs::File,
}

impl FileLock {
    fn exclusive(data: &Path) -> Result<FileLock> {
        if let Some(dir) = data.parent() {
            std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(dir)
                .map_err(|e| {
                    Error::from_io(
                        format!("creating directory {}", dir.display()),
                        &e,
                        "set HRTS_SEQ_FILE to a writable location",
                    )
                })?;
        }
        let lock_path = data.with_extension("lock");
        let f = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .mode(0o600)
            .open(&lock_path)
            .map_err(|e| Error::from_io(format!("opening {}", lock_path.display()), &e, ""))?;
        loop {
            // SAFETY: the descriptor is open for the whole call.
            if unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX) } == 0 {
                return Ok(FileLock { _held: f });
            }
            let err = std::io::Error::last_os_error();
            if err.kind() != std::io::ErrorKind::Interrupted {
                return Err(Error::from_io(
                    format!("flock {}", lock_path.display()),
                    &err,
                    "",
                ));
            }
        }
    }
}

use std::os::unix::fs::DirBuilderExt;

impl SharedBase {
    /// The next sequence number, shared by every process of the segment, never
    /// repeated (see the module docs).
    pub fn next_sequence(&self) -> Result<u64> {
        let ext = self.extension();
        if ext.seq_ready.load(Acquire) == 0 {
            self.load_sequence()?;
        }
        let n = ext.seq_next.fetch_add(1, AcqRel);
        if n < ext.seq_limit.load(Acquire) {
            return Ok(n);
        }
        self.persist_covering(n)?;
        Ok(n)
    }

    /// The persist file of this segment.
    pub fn seq_file(&self) -> &Path {
        &self.seq_file
    }

    fn load_sequence(&self) -> Result<()> {
        let ext = self.extension();
        let _lock = FileLock::exclusive(&self.seq_file)?;
        if ext.seq_ready.load(Acquire) != 0 {
            return Ok(());
        }
        let start = match read(&self.seq_file)? {
            Some(p) => p.last.checked_add(p.interval).ok_or_else(|| {
                damaged(
                    &self.seq_file,
                    "its value leaves no room for further numbers",
                )
            })?,
            None => 0,
        };
        ext.seq_interval.store(self.seq_interval, Release);
        ext.seq_next.store(start, Release);
        // Nothing is covered yet: the first number issued persists itself.
        ext.seq_limit.store(start, Release);
        ext.seq_ready.store(1, Release);
        Ok(())
    }

    fn persist_covering(&self, n: u64) -> Result<()> {
        let ext = self.extension();
        let _lock = FileLock::exclusive(&self.seq_file)?;
        if n < ext.seq_limit.load(Acquire) {
            return Ok(()); // another process persisted while we waited
        }
        let interval = ext.seq_interval.load(Acquire).max(1);
        // Covering everything handed out so far spares the other waiters a write.
        let mut last = ext.seq_next.load(Acquire).wrapping_sub(1).max(n);
        if let Some(on_file) = read(&self.seq_file)? {
            last = last.max(on_file.last);
        }
        write(&self.seq_file, Persisted { last, interval })?;
        ext.seq_limit
            .fetch_max(last.saturating_add(interval), AcqRel);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tmp_file(tag: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("hrts-seqtest-{}-{tag}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        dir.join("sub").join("numbers.seq")
    }

    #[test]
    fn the_file_round_trips_and_damage_is_detected() {
        let path = tmp_file("roundtrip");
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let p = Persisted {
            last: 123_456,
            interval: 1000,
        };
        write(&path, p).unwrap();
        assert_eq!(read(&path).unwrap(), Some(p));
        let text = std::fs::read_to_string(&path).unwrap();
        for bad in [
            String::new(),
            text.replace("123456", "123457"),
            text.replace("interval 1000", "interval x"),
            text.lines().take(3).collect::<Vec<_>>().join("\n"),
        ] {
            std::fs::write(&path, &bad).unwrap();
            let err = read(&path).unwrap_err();
            assert_eq!(err.kind(), ErrorKind::Persist, "{bad:?}");
            assert!(err.message().contains("damaged"), "{err}");
            assert!(err.message().contains(path.to_str().unwrap()), "{err}");
        }
        std::fs::remove_file(&path).unwrap();
        assert_eq!(read(&path).unwrap(), None);
        std::fs::remove_dir_all(path.parent().unwrap().parent().unwrap()).unwrap();
    }
}

#[cfg(test)]
mod segment_tests {
    use super::*;
    use crate::testutil::TestName;
    use std::sync::Arc;

    #[test]
    fn numbers_are_shared_persisted_and_resume_above_after_the_segment_is_gone() {
        let t = TestName::new("seq");
        let mut cfg = t.cfg();
        cfg.seq_interval = 100;
        let a = Arc::new(SharedBase::open(&cfg).unwrap());
        let b = Arc::new(SharedBase::open(&cfg).unwrap());
        let threads: Vec<_> = [a.clone(), b.clone()]
            .into_iter()
            .map(|base| {
                std::thread::spawn(move || {
                    (0..1000)
                        .map(|_| base.next_sequence().unwrap())
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        let mut all: Vec<u64> = threads
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect();
        all.sort_unstable();
        assert_eq!(
            all,
            (0..2000).collect::<Vec<_>>(),
            "one shared counter, no gaps, no repeats"
        );
        let on_file = read(&t.seq_file()).unwrap().unwrap();
        assert!(on_file.last >= 1900 && on_file.last < 2000, "{on_file:?}");
        assert_eq!(on_file.interval, 100);

        drop((a, b));
        SharedBase::unlink(&t.0).unwrap(); // the reboot
        let c = SharedBase::open(&cfg).unwrap();
        let next = c.next_sequence().unwrap();
        assert_eq!(next, on_file.last + 100);
        assert!(next >= 2000);
    }

    #[test]
    fn a_damaged_file_stops_numbering_instead_of_restarting_at_zero() {
        let t = TestName::new("seqdamaged");
        std::fs::create_dir_all(t.seq_file().parent().unwrap()).unwrap();
        std::fs::write(t.seq_file(), "hrts-sequence 1\nlast 5\n").unwrap();
        let base = SharedBase::open(&t.cfg()).unwrap();
        let err = base.next_sequence().unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Persist);
        assert!(err.message().contains("damaged"), "{err}");
    }
}
