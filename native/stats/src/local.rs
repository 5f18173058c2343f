//! Each thread's queue for each [`Stats`](crate::Stats) instance, found through
//! thread-local storage so that a measuring point never shares a cache line
//! with another thread's.

use crate::instance::Instance;
use crate::ring::Ring;
use std::cell::{Cell, RefCell};
use std::ptr;
use std::sync::Arc;

thread_local! {
    /// The ring last used on this thread and the id of its instance. No
    /// destructor, so it stays readable while other thread-locals are torn down.
    static CURRENT: Cell<(u64, *const Ring)> = const { Cell::new((0, ptr::null())) };
    static OWNED: Owned = const { Owned(RefCell::new(Vec::new())) };
}

/// The rings this thread writes, one per instance it has measured for.
struct Owned(RefCell<Vec<(u64, Arc<Ring>)>>);

impl Drop for Owned {
    fn drop(&mut self) {
        // CURRENT may point into these rings: forget it before they can go.
        let _ = CURRENT.try_with(|c| c.set((0, ptr::null())));
        for (_, ring) in self.0.borrow().iter() {
            ring.close();
        }
    }
}

/// Runs `f` on this thread's ring for `inner` (see [`ring_for`]); an event
/// that finds no ring is counted as lost.
#[inline(always)]
pub(crate) fn with_ring(inner: &Instance, f: impl FnOnce(&Ring)) {
    match ring_for(inner) {
        Some(ring) => f(ring),
        None => inner.count_lost(),
    }
}

/// This thread's ring for `inner`, created on the thread's first measurement;
/// `None` only while the thread is exiting and its thread-locals are gone. The
/// reference must not leave the calling thread (the ring lives as long as the
/// thread's locals): it is for the measuring point's own use.
#[inline(always)]
pub(crate) fn ring_for(inner: &Instance) -> Option<&Ring> {
    let (id, mut ring) = CURRENT.with(Cell::get);
    if id != inner.id {
        ring = slow(inner);
        if ring.is_null() {
            return None;
        }
    }
    // SAFETY: the pointer came from CURRENT, or from `slow`, which has just
    // stored it there: a ring that OWNED keeps alive in an Arc for as long as
    // this thread runs. OWNED's destructor clears CURRENT before releasing any
    // ring, and ids are never reused, so a matching id means the pointer is
    // live. Only this thread reads CURRENT, and the reference stays on it.
    Some(unsafe { &*ring })
}

/// This thread's ring for `inner`, found or created and made CURRENT; null if
/// the thread's locals are gone.
#[cold]
#[inline(never)]
fn slow(inner: &Instance) -> *const Ring {
    let found = OWNED.try_with(|owned| {
        let mut owned = owned.0.borrow_mut();
        let ring = match owned.iter().find(|(id, _)| *id == inner.id) {
            Some((_, r)) => r.clone(),
            None => {
                // Rings of instances that are gone are held by us alone.
                owned.retain(|(_, r)| Arc::strong_count(r) > 1);
                let r = inner.new_ring();
                owned.push((inner.id, r.clone()));
                r
            }
        };
        let ptr = Arc::as_ptr(&ring);
        CURRENT.with(|c| c.set((inner.id, ptr)));
        ptr
    });
    found.unwrap_or(ptr::null())
}
