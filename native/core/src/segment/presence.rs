//! Who is attached to a frozen segment, so that (as IBMTS did) the first process
//! to attach after the last one has gone pairs the base with the calendar anew.
//!
//! The decision is [`repair_on_attach`], a pure function; the question "is any
//! other process attached?" is answered by an [`Attendance`]. The one here is a
//! lock file beside the segment (`/dev/shm/<name>.presence`) on which every
//! process of a frozen segment holds a shared `flock` for as long as its handle
//! lives. The kernel drops the lock when the process dies, SIGKILL included, so
//! nothing needs cleaning up. An opener first tries the lock exclusively: if it
//! gets it, nobody else is attached; it keeps it exclusive while it re-pairs
//! (so a second opener waits instead of re-pairing too) and then shares it.
//!
//! A backend that counts attachments itself (System V shared memory's
//! `shm_nattch`) can answer [`Attendance`] directly instead.

use super::config::Mode;
use super::Opened;
use crate::storage::Sharing;
use std::fs::File;
#[cfg(not(windows))]
use std::os::fd::AsRawFd;
#[cfg(not(windows))]
use std::os::unix::fs::OpenOptionsExt;
use std::path::PathBuf;

/// The backend's answer to "is any process other than the caller attached?".
pub(crate) trait Attendance {
    fn others_attached(&self) -> bool;
}

/// Whether an opener re-pairs the base with the calendar: a frozen segment
/// that this process attached to (not created) while nobody else was attached.
pub(crate) fn repair_on_attach(mode: Mode, opened: Opened, others_attached: bool) -> bool {
    mode == Mode::Frozen && opened == Opened::Attached && !others_attached
}

/// Where the presence lock of segment `name` lives.
pub(crate) fn path(name: &str) -> PathBuf {
    PathBuf::from(format!(
        "/dev/shm/{}.presence",
        name.trim_start_matches('/')
    ))
}

/// This process's presence on a segment: a shared lock held until drop.
#[derive(Debug)]
pub(crate) struct Presence {
    // Held for its lock only (never read); none on Windows.
    #[cfg_attr(windows, allow(dead_code))]
    file: Option<File>,
    alone: bool,
}

#[cfg(not(windows))]
fn flock(file: &File, op: libc::c_int) -> bool {
    // SAFETY: the descriptor is open for the lifetime of `file`; flock only
    // changes the lock state of its open file description.
    unsafe { libc::flock(file.as_raw_fd(), op) == 0 }
}

/// On Windows the kernel deletes a segment when the last process using it
/// closes it, so a process that attaches (rather than creates) always has
/// company: nobody is ever alone on an existing segment, and the next process
/// after the last one creates the segment, pairing it with the calendar anew.
#[cfg(windows)]
impl Presence {
    pub fn join(_name: &str, _sharing: Sharing, _deadline: u64) -> Presence {
        Presence {
            file: None::<File>,
            alone: false,
        }
    }

    pub fn share(&mut self) {
        self.alone = false;
    }
}

#[cfg(not(windows))]
impl Presence {
    /// Registers this process. If nobody else is registered the lock is held
    /// exclusively until [`Presence::share`]. When the lock file cannot be used
    /// (or another holds it exclusively past `deadline`, a monotonic-clock
    /// instant in ns), the process counts as not alone: it never re-pairs, it
    /// only loses the ability to tell that it is the first.
    pub fn join(name: &str, sharing: Sharing, deadline: u64) -> Presence {
        let none = Presence {
            file: None,
            alone: false,
        };
        let Ok(file) = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .mode(sharing.mode())
            .open(path(name))
        else {
            return none;
        };
        if let Sharing::Group(gid) = sharing {
            // SAFETY: an open descriptor; -1 keeps the owner. Failure leaves the
            // file private, which only hides presence from the group's processes.
            unsafe { libc::fchown(file.as_raw_fd(), u32::MAX, gid) };
        }
        if flock(&file, libc::LOCK_EX | libc::LOCK_NB) {
            return Presence {
                file: Some(file),
                alone: true,
            };
        }
        loop {
            if flock(&file, libc::LOCK_SH | libc::LOCK_NB) {
                return Presence {
                    file: Some(file),
                    alone: false,
                };
            }
            if crate::os::monotonic_ns() > deadline {
                return none;
            }
            std::thread::sleep(std::time::Duration::from_micros(200));
        }
    }

    /// Turns an exclusive registration into a shared one.
    pub fn share(&mut self) {
        if self.alone {
            if let Some(f) = &self.file {
                flock(f, libc::LOCK_SH);
            }
            self.alone = false;
        }
    }
}

impl Attendance for Presence {
    fn others_attached(&self) -> bool {
        !self.alone
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_frozen_segment_attached_to_alone_re_pairs() {
        assert!(repair_on_attach(Mode::Frozen, Opened::Attached, false));
        assert!(!repair_on_attach(Mode::Frozen, Opened::Attached, true));
        assert!(!repair_on_attach(Mode::Frozen, Opened::Created, false));
        assert!(!repair_on_attach(Mode::Frozen, Opened::TookOver, false));
        assert!(!repair_on_attach(Mode::Tracking, Opened::Attached, false));
    }

    #[test]
    #[cfg(not(windows))]
    fn the_lock_tells_the_first_from_the_others() {
        let name = format!("/hrts-coretest-{}-presence", crate::os::pid());
        let far = crate::os::monotonic_ns() + 1_000_000_000;
        let mut a = Presence::join(&name, Sharing::Private, far);
        assert!(!a.others_attached());
        a.share();
        let b = Presence::join(&name, Sharing::Private, far);
        assert!(b.others_attached());
        drop(a);
        drop(b);
        let c = Presence::join(&name, Sharing::Private, far);
        assert!(!c.others_attached(), "everyone left: the next one is alone");
        // An exclusive holder makes the next opener wait, bounded.
        let d = Presence::join(
            &name,
            Sharing::Private,
            crate::os::monotonic_ns() + 5_000_000,
        );
        assert!(d.file.is_none() && d.others_attached());
        drop(c);
        let _ = std::fs::remove_file(path(&name));
    }
}
