//! The writer role's proof of life on Windows: a named mutex per segment
//! (`Local\hrts.<sid>.<name>.role`, see `storage::shm`).
//!
//! As in the Linux room, a process takes the lock *before* the CAS that takes
//! the writer role and releases it *after* the store that gives the role back.
//! The kernel releases a mutex whose owning thread ends, process killed
//! included, and marks it abandoned; it never releases it for a suspended
//! thread. So a process that finds the role taken and gets the mutex knows the
//! holder is dead, and one that does not get it knows the holder is alive.
//!
//! A mutex is recursive for its owning thread, where the Linux room's lock,
//! taken through another open file description, excludes even the same
//! thread. So this process keeps a table of the role mutexes it holds, by name:
//! a second handle on the same segment (in any thread) finds the role held
//! there, as it would on Linux, and the in-process owner word says which
//! thread of this handle holds it.

use crate::os::windows::Handle;
use std::collections::HashSet;
use std::sync::atomic::AtomicU64;
use std::sync::atomic::Ordering::{AcqRel, Acquire, Release};
use std::sync::Mutex;
use windows_sys::Win32::Foundation::{WAIT_ABANDONED, WAIT_OBJECT_0, WAIT_TIMEOUT};
use windows_sys::Win32::System::Threading::{ReleaseMutex, WaitForSingleObject};

/// The role mutexes this process holds, by kernel object name.
static HELD: Mutex<Option<HashSet<String>>> = Mutex::new(None);

fn held_here(name: &str, take: bool) -> bool {
    let mut held = HELD.lock().unwrap_or_else(|e| e.into_inner());
    let set = held.get_or_insert_with(HashSet::new);
    if take {
        !set.insert(name.to_string())
    } else {
        set.remove(name)
    }
}

/// A segment's role mutex and its kernel object name.
#[derive(Debug)]
pub(crate) struct RoleMutex {
    pub handle: Handle,
    pub name: String,
}

/// This process's lock on one segment's writer role.
#[derive(Debug)]
pub(crate) struct RoleLock {
    /// The segment's role mutex (`None`: this process never takes the role).
    mutex: Option<RoleMutex>,
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

/// The lock, held by this thread; released on drop (on the same thread: a
/// guard is never sent elsewhere, as a mutex must be released by its owner).
pub(crate) struct Guard<'a>(&'a RoleLock);

impl Drop for Guard<'_> {
    fn drop(&mut self) {
        self.0.release();
    }
}

fn me() -> u64 {
    ((crate::os::pid() as u64) << 32) | crate::os::thread_id() as u64
}

impl RoleLock {
    /// The lock of the segment whose role mutex is `mutex` (owned from now on).
    pub fn new(mutex: Option<RoleMutex>) -> RoleLock {
        RoleLock {
            mutex,
            owner: AtomicU64::new(0),
        }
    }

    /// A lock this process never takes (a host page's reader).
    pub fn unavailable() -> RoleLock {
        RoleLock::new(None)
    }

    /// Takes the lock for the calling thread if nobody holds it.
    pub fn try_take(&self) -> Take<'_> {
        let Some(mutex) = &self.mutex else {
            return Take::Unavailable;
        };
        let me = me();
        if self.owner.compare_exchange(0, me, AcqRel, Acquire).is_err() {
            return Take::Held;
        }
        if held_here(&mutex.name, true) {
            // Another handle of this process holds it.
            self.owner.store(0, Release);
            return Take::Held;
        }
        // SAFETY: an open mutex handle; a zero timeout never blocks.
        match unsafe { WaitForSingleObject(mutex.handle.0, 0) } {
            WAIT_OBJECT_0 | WAIT_ABANDONED => Take::Taken(Guard(self)),
            WAIT_TIMEOUT => {
                held_here(&mutex.name, false);
                self.owner.store(0, Release);
                Take::Held
            }
            _ => {
                held_here(&mutex.name, false);
                self.owner.store(0, Release);
                Take::Unavailable
            }
        }
    }

    fn release(&self) {
        if let Some(mutex) = &self.mutex {
            // SAFETY: called by the guard's thread, which owns the mutex.
            unsafe { ReleaseMutex(mutex.handle.0) };
            held_here(&mutex.name, false);
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    fn mutex(tag: &str) -> Option<RoleMutex> {
        let segment = format!("/hrts-role-{tag}-{}", crate::os::pid());
        let name = crate::storage::shm::object_name(&segment, ".role");
        let handle = crate::storage::shm::role_mutex(&segment)?;
        Some(RoleMutex { handle, name })
    }

    #[test]
    fn one_holder_at_a_time_whichever_handle_or_thread_asks() {
        let a = RoleLock::new(mutex("threads"));
        let b = RoleLock::new(mutex("threads"));
        let g = match a.try_take() {
            Take::Taken(g) => g,
            _ => panic!("free lock not taken"),
        };
        assert!(
            matches!(b.try_take(), Take::Held),
            "other handle, same thread"
        );
        std::thread::scope(|s| {
            s.spawn(|| assert!(matches!(a.try_take(), Take::Held), "same handle"));
            s.spawn(|| assert!(matches!(b.try_take(), Take::Held), "other handle"));
        });
        drop(g);
        assert!(matches!(b.try_take(), Take::Taken(_)), "released");
    }

    #[test]
    fn a_mutex_whose_holder_ended_is_taken_over() {
        let a = RoleLock::new(mutex("abandoned"));
        let raw = mutex("abandoned").unwrap();
        let handle = raw.handle.0 as usize;
        // The kernel abandons a mutex whose owning thread ends, as it does for
        // every thread of a killed process. `join` (unlike a scope's end)
        // waits until the thread itself has ended.
        std::thread::spawn(move || {
            // SAFETY: `raw` keeps the handle open until after the join.
            unsafe { WaitForSingleObject(handle as _, 0) }
        })
        .join()
        .map(|got| assert_eq!(got, WAIT_OBJECT_0))
        .unwrap();
        assert!(matches!(a.try_take(), Take::Taken(_)), "abandoned: ours");
        drop(raw);
    }
}
