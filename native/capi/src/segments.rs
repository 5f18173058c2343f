//! Segments: the process's default segment (`HRTS_SEGMENT`, else
//! `/hrts-<uid>`, opened on first use) that the `hrts_get_*` calls use, and the
//! handles on segments of the caller's choice that the `hrts_segment_*` calls
//! take, so one process can stamp from several segments at once (and from its
//! default one beside them). rustls-ffi style: an opaque type, an open that
//! writes the handle through an out pointer and returns a status, a close that
//! accepts NULL. Also what a segment says about itself: its name, the timeline
//! the process stamps from, its mode and tracking state, its validity.

use crate::boundary::{c_calls, put, required};
use crate::handle::{process_base, HrtsSegment};
use crate::segment_types::{self, HrtsDisruptionState, HrtsOpenOptions, HrtsTrackingState};
use crate::status::{Failure, HrtsStatus};
use hrts_core::{OpenRequest, SharedBase};
use std::ffi::{c_char, c_int, CStr};
use std::ptr::{null, null_mut};

/// The body of both opens: `*out` is NULL until the handle is made.
///
/// # Safety
/// As for `hrts_segment_open_with`.
unsafe fn open_with(
    function: &str,
    name: *const c_char,
    opts: *const HrtsOpenOptions,
    out: *mut *mut HrtsSegment,
) -> Result<(), Failure> {
    let out = required(out, "out", function)?;
    // SAFETY: non-NULL and valid by this function's contract. NULL first, so the
    // caller never finds a stale pointer there after a failure.
    unsafe { put(out, null_mut()) };
    // SAFETY: `name` is NULL or NUL-terminated, by this function's contract.
    let name = unsafe { name_arg(name, function) }?;
    // SAFETY: `opts` is NULL or valid for reading its version's layout, by this
    // function's contract; the options are copied out before use.
    let request = unsafe { segment_types::open_request(name, opts, function) }?;
    let base = SharedBase::open(&request.resolve()?)?;
    let handle = Box::into_raw(Box::new(HrtsSegment { base }));
    // SAFETY: as above.
    unsafe { put(out, handle) };
    Ok(())
}

/// A segment-name argument: NULL means the default name.
///
/// # Safety
/// `name` must be NULL or a NUL-terminated string not changed during the call.
unsafe fn name_arg<'a>(name: *const c_char, function: &str) -> Result<Option<&'a str>, Failure> {
    if name.is_null() {
        return Ok(None);
    }
    // SAFETY: non-NULL and NUL-terminated by this function's contract.
    let bytes = unsafe { CStr::from_ptr(name) };
    bytes.to_str().map(Some).map_err(|_| {
        Failure::new(
            HrtsStatus::E_INVALID_ARGUMENT,
            format!(
                "{function}: the segment name {bytes:?} is not valid UTF-8; \
                 use an ASCII name such as \"/hrts-myapp\""
            ),
        )
    })
}

c_calls! {
    /// Opens the segment `name` (e.g. `"/hrts-myapp"`), creating and calibrating it
    /// if it does not exist yet, and writes a handle on it to `*out`. A NULL `name`
    /// means the default segment's name (`HRTS_SEGMENT`, else `/hrts-<uid>`).
    /// The rest of the configuration comes from the environment (`HRTS_GROUP`,
    /// `HRTS_MODE`, `HRTS_WRAP_THRESHOLD`, `HRTS_SEQ_INTERVAL`, ...), resolved by
    /// the rule every language shares (docs/configuration.md, "Which segment"):
    /// a name never uses the host page, and `HRTS_SEQ_FILE` applies only to the
    /// default segment's name (any other segment persists its sequence numbers
    /// to `<state dir>/hrts/<name>.seq`, as `hrts --segment` and
    /// `-Dhrts.segment` do). `hrts_segment_open_with` chooses the mode of a
    /// segment it creates and the bound settings.
    ///
    /// Every successful open gives a new handle, also for a name that is already
    /// open in this process; each must be closed with `hrts_segment_close`. On
    /// failure `*out` is set to NULL and the status says why (e.g.
    /// `HRTS_E_INVALID_ARGUMENT` for a malformed name, `HRTS_E_FOREIGN` or
    /// `HRTS_E_TRUNCATED` for a shared memory object that is not a usable hrts
    /// segment); `hrts_last_error()` says what to do.
    ///
    /// # Safety
    /// `name` must be NULL or a NUL-terminated string; `out` must be NULL
    /// (`HRTS_E_NULL_POINTER`) or valid for writing one pointer.
    unsafe fn hrts_segment_open(name: *const c_char, out: *mut *mut HrtsSegment) -> () {
        // SAFETY: `name` and `out` as this function's contract says; no options.
        unsafe { open_with(FUNCTION, name, null(), out) }
    }

    /// `hrts_segment_open` with options for a segment this call creates: its mode
    /// and tracking settings, and the bound settings this handle publishes (see
    /// `hrts_open_options`; a NULL `opts` is `hrts_segment_open`). A segment that
    /// exists keeps its creator's mode, so check `hrts_segment_mode` if it
    /// matters. Options out of range, or a `version` this library does not know,
    /// give `HRTS_E_INVALID_ARGUMENT` and set `*out` to NULL.
    ///
    /// # Safety
    /// `name` must be NULL or a NUL-terminated string; `opts` NULL or valid for
    /// reading one `hrts_open_options` of the `version` it holds (version 1's
    /// shorter layout for version 1); `out` NULL (`HRTS_E_NULL_POINTER`) or valid
    /// for writing one pointer.
    unsafe fn hrts_segment_open_with(
        name: *const c_char,
        opts: *const HrtsOpenOptions,
        out: *mut *mut HrtsSegment,
    ) -> () {
        // SAFETY: every pointer as this function's contract says.
        unsafe { open_with(FUNCTION, name, opts, out) }
    }

    /// Removes the segment `name` (NULL: the default name, as `hrts_segment_open`
    /// picks it): its shared page and its name, like `hrts unlink`. Processes that
    /// use it keep their page until they close it; the next open of the name
    /// creates a fresh segment. `*existed` (if not NULL) is set to 1 if a segment
    /// was removed, 0 if none had that name.
    ///
    /// # Safety
    /// `name` must be NULL or a NUL-terminated string; `existed` must be NULL or
    /// valid for writing one int.
    unsafe fn hrts_segment_unlink(name: *const c_char, existed: *mut c_int) -> () {
        // SAFETY: `name` is NULL or NUL-terminated, by this function's contract.
        let name = unsafe { name_arg(name, FUNCTION) }?;
        let name = OpenRequest {
            name: name.map(str::to_string),
            ..OpenRequest::default()
        }
        .segment_name();
        let removed = SharedBase::unlink(&name)?;
        if let Some(existed) = std::ptr::NonNull::new(existed) {
            // SAFETY: non-NULL and valid for one int by this function's contract.
            unsafe { put(existed, c_int::from(removed)) };
        }
        Ok(())
    }

    /// Closes a handle from `hrts_segment_open`. The segment itself stays for the
    /// other processes (and handles) that use it; `hrts unlink` removes it. NULL
    /// is a no-op.
    ///
    /// # Safety
    /// `seg` must be NULL or a handle from `hrts_segment_open` that no other thread
    /// is using. After this call the handle is gone: using or closing it again is
    /// undefined behaviour, as with `free`.
    unsafe fn hrts_segment_close(seg: *mut HrtsSegment) {
        if !seg.is_null() {
            // SAFETY: a non-NULL `seg` came from Box::into_raw in
            // hrts_segment_open and, by this function's contract, is closed
            // only once and no longer in use.
            drop(unsafe { Box::from_raw(seg) });
        }
    }

    /// Copies the name of the process's segment (e.g. `/hrts-1000`; for a handle
    /// opened with a NULL name, the default name it resolved to) into `buf` as a
    /// NUL-terminated string. If `len` is smaller than the name plus its NUL,
    /// returns `HRTS_E_BUFFER_TOO_SMALL` (the message gives the size needed) and
    /// writes nothing. Names are at most 255 bytes, so 256 always suffices.
    ///
    /// # Safety
    /// `buf` must be NULL (`HRTS_E_NULL_POINTER`) or valid for writing `len` bytes.
    unsafe fn hrts_get_segment_name / hrts_segment_name (b) -> text(buf, len, "the name") {
        Ok(b.name().to_string())
    }

    /// Copies which timeline the process stamps from into `buf` as a
    /// NUL-terminated string, worded as `hrts info`'s `timeline` line: `host
    /// service /run/hrts/time` (the page `hrts daemon` keeps, mapped read-only) or
    /// `per-user segment /hrts-1000`, followed by why a host page was refused if
    /// one was. If `len` is too small, returns `HRTS_E_BUFFER_TOO_SMALL` (the
    /// message gives the size needed) and writes nothing; 1024 bytes suffice
    /// unless the host directory's path is very long.
    ///
    /// # Safety
    /// `buf` must be NULL (`HRTS_E_NULL_POINTER`) or valid for writing `len` bytes.
    unsafe fn hrts_get_timeline() -> text(buf, len, "the timeline") {
        Ok(process_base()?.timeline())
    }

    /// The mode of the process's segment, `HRTS_MODE_TRACKING` or
    /// `HRTS_MODE_FROZEN` (an `hrts_mode` value): its creator's choice
    /// (`HRTS_MODE`, default tracking).
    ///
    /// # Safety
    /// `out` must be NULL (`HRTS_E_NULL_POINTER`) or valid for writing one `uint32_t`.
    unsafe fn hrts_get_mode / hrts_segment_mode (b) -> (out: u32) {
        Ok(segment_types::mode_of(b))
    }

    /// The tracking state of the process's segment (mode, tie settings, the
    /// slope's correction, tie and step counts; see `hrts_tracking_state`), one
    /// snapshot of what `hrts info` shows. `HRTS_E_CORRUPT` if the tie
    /// statistics were damaged (the next tie or move starts them again).
    ///
    /// # Safety
    /// `out` must be NULL (`HRTS_E_NULL_POINTER`) or valid for writing one
    /// `hrts_tracking_state`.
    unsafe fn hrts_get_tracking_state / hrts_segment_tracking_state (b)
        -> (out: HrtsTrackingState)
    {
        segment_types::tracking_state_of(b)
    }

    /// The disruptions the writers of the process's segment saw (see
    /// `hrts_disruption_state`): how many, when the last one was and what it
    /// was, and whether the bound is still disrupted; one snapshot of what
    /// `hrts info`'s `disruptions` lines show.
    ///
    /// # Safety
    /// `out` must be NULL (`HRTS_E_NULL_POINTER`) or valid for writing one
    /// `hrts_disruption_state`.
    unsafe fn hrts_get_disruption_state / hrts_segment_disruption_state (b)
        -> (out: HrtsDisruptionState)
    {
        Ok(segment_types::disruption_state_of(b))
    }

    /// Checks the process's segment as attaching does: its header must be the one
    /// this process attached to and its active base line must be intact.
    /// `HRTS_SUCCESS` if so, `HRTS_E_CORRUPT` if another process damaged it since
    /// (the message says what).
    fn hrts_validate / hrts_segment_validate (b) -> () {
        Ok(b.validate()?)
    }
}
