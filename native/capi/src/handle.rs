//! The segment a call works on: the process's default segment (`HRTS_SEGMENT`,
//! else `/hrts-<uid>`, opened on first use) or a handle from `hrts_segment_open`.
//! The calls `c_calls!` generates (crate::boundary) reach their segment through
//! these; `segments` opens and closes the handles. A module of its own so that the
//! macro's module and the modules whose calls it generates import neither each
//! other.

use crate::status::Failure;
use hrts_core::{process, SharedBase};

// C knows this type as `hrts_segment` (cbindgen.toml renames it).
/// An open hrts segment, from `hrts_segment_open`.
///
/// Opaque: C holds only pointers to it. A handle may be used by several
/// threads at once; close it with `hrts_segment_close` once no thread uses it.
pub struct HrtsSegment {
    pub(crate) base: SharedBase,
}

// Its docs promise that several threads may use one handle, and a handle may be
// closed on another thread than the one that opened it: hold the type to that.
const _: fn() = || {
    fn thread_safe<T: Send + Sync>() {}
    thread_safe::<HrtsSegment>();
};

/// The process's segment: already open (the hot path, one load), or opened now.
#[inline(always)]
pub(crate) fn process_base() -> Result<&'static SharedBase, Failure> {
    match process::global_if_open() {
        Some(base) => Ok(base),
        None => open_process_base(),
    }
}

#[cold]
#[inline(never)]
fn open_process_base() -> Result<&'static SharedBase, Failure> {
    process::global().map_err(Failure::from)
}

/// The segment behind a handle.
///
/// # Safety
/// `seg` must be NULL or a handle from `hrts_segment_open` that is not closed
/// for as long as the returned reference is used.
#[inline(always)]
pub(crate) unsafe fn handle_base<'a>(
    seg: *const HrtsSegment,
    function: &str,
) -> Result<&'a SharedBase, Failure> {
    // SAFETY: by this function's contract, a non-NULL `seg` points to a live
    // HrtsSegment that outlives 'a.
    match unsafe { seg.as_ref() } {
        Some(handle) => Ok(&handle.base),
        None => Err(Failure::null_handle(function)),
    }
}
