//! The writer role's proof of life: an open-file-description lock (`fcntl`
//! `F_OFD_SETLK`, exclusive, one byte at [`ROLE_LOCK_BYTE`]) on the segment's
//! name in `/dev/shm`.
//!
//! A process takes the lock *before* the CAS that takes the writer role and
//! releases it *after* the store that gives the role back. The kernel drops the
//! lock when the last descriptor of its open file description closes, which
//! includes the process being killed; it never drops it for a stopped process;
//! and every pid namespace sees the same lock on the same file. So a process
//! that finds the role taken and gets the lock knows the holder is dead, and one
//! that does not get it knows the holder (stopped or not) is alive.
//!
//! One open file description per handle: within a process, threads share it, so
//! an in-process owner word says which thread holds it (a lock taken again
//! through the same description would succeed). After `fork` the child would
//! share the parent's description, and with it the parent's lock: a
//! `pthread_atfork` child handler gives every registered descriptor of the child
//! a description of its own (reopening `/proc/self/fd/N`), so parent and child
//! prove their lives separately. Where that reopen fails, the child's descriptor
//! is pointed at a file it cannot lock and the child never takes the role.

use std::sync::atomic::Ordering::{AcqRel, Acquire, Relaxed, Release};
use std::sync::atomic::{AtomicI32, AtomicU64};

/// The byte of the name object the lock covers (inside the record's unused
/// area; the lock is advisory and independent of the bytes).
pub const ROLE_LOCK_BYTE: i64 = 1024;

/// Descriptors the fork handler gives a description of their own.
static REGISTRY: [AtomicI32; 64] = [const { AtomicI32::new(-1) }; 64];

/// This process's lock on one segment's writer role.
#[derive(Debug)]
pub(crate) struct RoleLock {
    /// The name's descriptor (`-1`: none, this process never takes the role).
    fd: i32,
    /// The registry slot, or `usize::MAX`.
    slot: usize,
    /// `pid << 32 | tid` of the thread that holds the lock in this process, or 0.
    owner: AtomicU64,
}

/// What the lock says about the writer role's holder.
pub(crate) enum Take<'a> {
    /// This thread now holds the lock.
    Taken(Guard<'a>),
    /// Another process (or thread of this one) holds it: alive.
    Held,
    /// This process cannot use the lock; it never takes the role.
    Unavailable,
}

/// The lock, held by this thread; released on drop.
pub(crate) struct Guard<'a>(&'a RoleLock);

impl Drop for Guard<'_> {
    fn drop(&mut self) {
        self.0.release();
    }
}

fn me() -> u64 {
    ((crate::os::pid() as u64) << 32) | crate::os::thread_id() as u64
}

fn ofd_lock(fd: i32, kind: libc::c_short) -> std::io::Result<()> {
    // SAFETY: zeroed is a valid struct flock.
    let mut fl: libc::flock = unsafe { std::mem::zeroed() };
    fl.l_type = kind;
    fl.l_whence = libc::SEEK_SET as libc::c_short;
    fl.l_start = ROLE_LOCK_BYTE;
    fl.l_len = 1;
    // SAFETY: `fd` is open (or the call fails with EBADF) and `fl` is a valid
    // struct flock; F_OFD_SETLK never blocks.
    if unsafe { libc::fcntl(fd, libc::F_OFD_SETLK, &fl) } == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

impl RoleLock {
    /// The lock of the segment whose name descriptor is `fd` (owned from now
    /// on; `-1` for none).
    pub fn new(fd: i32) -> RoleLock {
        let mut slot = usize::MAX;
        if fd >= 0 {
            register_fork_handler();
            if let Some(i) = REGISTRY
                .iter()
                .position(|s| s.compare_exchange(-1, fd, AcqRel, Relaxed).is_ok())
            {
                slot = i;
            }
        }
        RoleLock {
            fd,
            slot,
            owner: AtomicU64::new(0),
        }
    }

    /// A lock this process never takes (a host page's reader, or the
    /// daemon's before its constructor sets the real one).
    pub fn unavailable() -> RoleLock {
        RoleLock::new(-1)
    }

    /// Takes the lock for the calling thread if nobody holds it.
    pub fn try_take(&self) -> Take<'_> {
        if self.fd < 0 {
            return Take::Unavailable;
        }
        let me = me();
        let mut current = self.owner.load(Acquire);
        loop {
            // A word left by a thread of the parent process (we were forked
            // while it held the lock) belongs to nobody here.
            let stale = current != 0 && current >> 32 != me >> 32;
            if current != 0 && !stale {
                return Take::Held;
            }
            match self.owner.compare_exchange(current, me, AcqRel, Acquire) {
                Ok(_) => break,
                Err(now) => current = now,
            }
        }
        match ofd_lock(self.fd, libc::F_WRLCK as libc::c_short) {
            Ok(()) => Take::Taken(Guard(self)),
            Err(e) => {
                self.owner.store(0, Release);
                match e.raw_os_error() {
                    Some(libc::EAGAIN) | Some(libc::EACCES) | Some(libc::EINTR) => Take::Held,
                    _ => Take::Unavailable,
                }
            }
        }
    }

    fn release(&self) {
        let _ = ofd_lock(self.fd, libc::F_UNLCK as libc::c_short);
        self.owner.store(0, Release);
    }

    /// Keeps the lock held by this thread past the guard (test hooks: a holder
    /// that never gives the role back).
    #[cfg(any(test, feature = "testing"))]
    pub fn keep(guard: Guard<'_>) {
        std::mem::forget(guard);
    }

    /// A guard for a lock this thread keeps (see [`RoleLock::keep`]).
    #[cfg(any(test, feature = "testing"))]
    pub fn adopt(&self) -> Option<Guard<'_>> {
        (self.owner.load(Acquire) == me()).then_some(Guard(self))
    }
}

impl Drop for RoleLock {
    fn drop(&mut self) {
        if self.slot != usize::MAX {
            REGISTRY[self.slot].store(-1, Release);
        }
        if self.fd >= 0 {
            // SAFETY: we own the descriptor and close it once; closing drops
            // any lock held through it.
            unsafe { libc::close(self.fd) };
        }
    }
}

fn register_fork_handler() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        // SAFETY: `in_child` is an extern "C" fn with no arguments that only
        // makes async-signal-safe calls, as a fork child handler must.
        unsafe { libc::pthread_atfork(None, None, Some(in_child)) };
    });
}

/// In a fork child: gives each registered descriptor an open file description
/// of its own, so the child neither holds nor proves alive the parent's lock.
extern "C" fn in_child() {
    for entry in REGISTRY.iter() {
        let fd = entry.load(Relaxed);
        if fd < 0 {
            continue;
        }
        let mut path = *b"/proc/self/fd/\0\0\0\0\0\0\0\0\0\0\0\0";
        let mut digits = [0u8; 11];
        let (mut n, mut len) = (fd as u32, 0);
        loop {
            digits[len] = b'0' + (n % 10) as u8;
            len += 1;
            n /= 10;
            if n == 0 {
                break;
            }
        }
        for i in 0..len {
            path[14 + i] = digits[len - 1 - i];
        }
        let flags = libc::O_RDWR | libc::O_CLOEXEC | libc::O_NONBLOCK;
        // SAFETY: `path` is NUL-terminated (at most 10 digits after 14 bytes,
        // in a 26-byte buffer of zeros); open, dup3 and close are
        // async-signal-safe.
        unsafe {
            let mut fresh = libc::open(path.as_ptr().cast(), flags);
            if fresh < 0 {
                // A descriptor no write lock can be taken through.
                fresh = libc::open(
                    c"/".as_ptr(),
                    libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC,
                );
            }
            if fresh >= 0 {
                libc::dup3(fresh, fd, libc::O_CLOEXEC);
                libc::close(fresh);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(tag: &str) -> (std::path::PathBuf, i32) {
        let path = std::env::temp_dir().join(format!("hrts-role-{tag}-{}", std::process::id()));
        std::fs::write(&path, [0u8; 8]).unwrap();
        let c = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        let fd = unsafe { libc::open(c.as_ptr(), libc::O_RDWR | libc::O_CLOEXEC) };
        assert!(fd >= 0);
        (path, fd)
    }

    #[test]
    fn one_thread_at_a_time_and_another_description_sees_it_held() {
        let (path, fd) = scratch("threads");
        let (_, fd2) = scratch("threads");
        let a = RoleLock::new(fd);
        let b = RoleLock::new(fd2);
        let g = match a.try_take() {
            Take::Taken(g) => g,
            _ => panic!("free lock not taken"),
        };
        std::thread::scope(|s| {
            s.spawn(|| assert!(matches!(a.try_take(), Take::Held), "same process"));
        });
        assert!(matches!(b.try_take(), Take::Held), "other description");
        drop(g);
        assert!(matches!(b.try_take(), Take::Taken(_)), "released");
        drop((a, b));
        let _ = std::fs::remove_file(path);
    }

    #[test]
    fn a_forked_child_neither_holds_nor_inherits_the_parents_lock() {
        let (path, fd) = scratch("fork");
        let lock = RoleLock::new(fd);
        let g = match lock.try_take() {
            Take::Taken(g) => g,
            _ => panic!("free lock not taken"),
        };
        // SAFETY: the child only calls async-signal-safe functions (fcntl
        // through try_take's path is fine: no allocation happens in it
        // before _exit) and exits with _exit.
        let child = unsafe { libc::fork() };
        if child == 0 {
            // The parent still holds it: the child's own description sees it held.
            let held = matches!(lock.try_take(), Take::Held);
            // SAFETY: leaving the child without running the parent's destructors.
            unsafe { libc::_exit(if held { 0 } else { 1 }) };
        }
        let mut status = 0;
        // SAFETY: waiting for our own child.
        unsafe { libc::waitpid(child, &mut status, 0) };
        assert_eq!(status, 0, "the child saw the parent's lock held");
        // And the child's exit did not release the parent's lock.
        let (_, fd2) = scratch("fork");
        let other = RoleLock::new(fd2);
        assert!(matches!(other.try_take(), Take::Held));
        drop(g);
        assert!(matches!(other.try_take(), Take::Taken(_)));
        drop((lock, other));
        let _ = std::fs::remove_file(path);
    }
}
