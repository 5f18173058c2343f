//! Segment handles: the default-segment calls of [`crate::default_segment`] on a segment the
//! caller names, so one process can stamp from several segments at once (and
//! from its default one beside them). rustls-ffi style: an opaque type, an open
//! that writes the handle through an out pointer and returns a status, a close
//! that accepts NULL.

use crate::boundary::{status_call, value_call};
use crate::common::{self, out_call, put, required};
use crate::segment_types::{self, HrtsOpenOptions, HrtsTrackingState};
use crate::status::{Failure, HrtsStatus};
use hrts_core::{Config, SharedBase};
use std::ffi::{c_char, c_int, CStr};
use std::ptr::{null, null_mut};

// C knows this type as `hrts_segment` (cbindgen.toml renames it).
/// An open hrts segment, from `hrts_segment_open`.
///
/// Opaque: C holds only pointers to it. A handle may be used by several
/// threads at once; close it with `hrts_segment_close` once no thread uses it.
pub struct HrtsSegment {
    base: SharedBase,
}

// Its docs promise that several threads may use one handle, and a handle may be
// closed on another thread than the one that opened it: hold the type to that.
const _: fn() = || {
    fn thread_safe<T: Send + Sync>() {}
    thread_safe::<HrtsSegment>();
};

/// The configuration for a handle on `name` (None: the default name), given
/// the environment's (`Config::from_env`).
///
/// Everything but the name is the environment's, as for the default segment,
/// except `HRTS_SEQ_FILE`: it is the default segment's persist file, and two
/// segments persisting into one file would hand out each other's numbers
/// after a reboot. Another segment persists into its own default file
/// (`<state dir>/hrts/<name>.seq`).
fn config_for(env: Config, name: Option<&str>) -> Config {
    match name {
        Some(name) => env.with_name(name),
        None => env,
    }
}

/// The segment behind a handle.
///
/// # Safety
/// `seg` must be NULL or a handle from `hrts_segment_open` that is not closed
/// for as long as the returned reference is used.
#[inline(always)]
unsafe fn segment<'a>(seg: *const HrtsSegment, function: &str) -> Result<&'a SharedBase, Failure> {
    // SAFETY: by this function's contract, a non-NULL `seg` points to a live
    // HrtsSegment that outlives 'a.
    match unsafe { seg.as_ref() } {
        Some(handle) => Ok(&handle.base),
        None => Err(Failure::null_handle(function)),
    }
}

/// The whole body of a handle call that computes one value into `out`.
///
/// # Safety
/// `seg` as for [`segment`]; `out` NULL or valid for writing one `T`.
#[inline(always)]
unsafe fn segment_out_call<T>(
    seg: *const HrtsSegment,
    out: *mut T,
    function: &str,
    value: impl FnOnce(&SharedBase) -> Result<T, Failure>,
) -> c_int {
    // SAFETY: both pointers are passed on under this function's contract.
    unsafe { out_call(out, function, || value(segment(seg, function)?)) }
}

/// Opens the segment `name` (e.g. `"/hrts-myapp"`), creating and calibrating it
/// if it does not exist yet, and writes a handle on it to `*out`. A NULL `name`
/// means the default segment's name (`HRTS_SEGMENT`, else `/hrts-<uid>`).
/// The rest of the configuration comes from the environment (`HRTS_GROUP`,
/// `HRTS_MODE`, `HRTS_WRAP_THRESHOLD`, `HRTS_SEQ_INTERVAL`, ...), except that
/// `HRTS_SEQ_FILE` applies only to the default segment's name: any other
/// segment persists its sequence numbers to `<state dir>/hrts/<name>.seq`.
/// `hrts_segment_open_with` chooses the mode of a segment it creates.
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
#[no_mangle]
pub unsafe extern "C" fn hrts_segment_open(
    name: *const c_char,
    out: *mut *mut HrtsSegment,
) -> c_int {
    // SAFETY: `name` and `out` as this function's contract says; no options.
    unsafe { open_with("hrts_segment_open", name, null(), out) }
}

/// `hrts_segment_open` with options for a segment this call creates: its mode
/// and tracking settings (see `hrts_open_options`; a NULL `opts` is
/// `hrts_segment_open`). A segment that exists keeps its creator's mode, so
/// check `hrts_segment_mode` if it matters. Options out of range, or a
/// `version` this library does not know, give `HRTS_E_INVALID_ARGUMENT` and
/// set `*out` to NULL.
///
/// # Safety
/// `name` must be NULL or a NUL-terminated string; `opts` NULL or valid for
/// reading one `hrts_open_options`; `out` NULL (`HRTS_E_NULL_POINTER`) or valid
/// for writing one pointer.
#[no_mangle]
pub unsafe extern "C" fn hrts_segment_open_with(
    name: *const c_char,
    opts: *const HrtsOpenOptions,
    out: *mut *mut HrtsSegment,
) -> c_int {
    // SAFETY: every pointer as this function's contract says.
    unsafe { open_with("hrts_segment_open_with", name, opts, out) }
}

/// The body of both opens.
///
/// # Safety
/// As for `hrts_segment_open_with`.
unsafe fn open_with(
    function: &str,
    name: *const c_char,
    opts: *const HrtsOpenOptions,
    out: *mut *mut HrtsSegment,
) -> c_int {
    status_call(|| {
        let out = required(out, "out", function)?;
        // SAFETY: non-NULL and valid by this function's contract. NULL first, so
        // the caller never finds a stale pointer there after a failure.
        unsafe { put(out, null_mut()) };
        // SAFETY: `name` is NULL or NUL-terminated, by this function's contract.
        let name = unsafe { name_arg(name, function) }?;
        let mut cfg = config_for(Config::from_env()?, name);
        // SAFETY: `opts` is NULL or valid for one read, by this function's
        // contract; the options are copied out before use.
        if let Some(opts) = unsafe { opts.as_ref() } {
            opts.apply(&mut cfg, function)?;
        }
        let base = SharedBase::open(&cfg)?;
        let handle = Box::into_raw(Box::new(HrtsSegment { base }));
        // SAFETY: as above.
        unsafe { put(out, handle) };
        Ok(())
    })
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

/// Removes the segment `name` (NULL: the default name, as `hrts_segment_open`
/// picks it): its shared page and its name, like `hrts unlink`. Processes that
/// use it keep their page until they close it; the next open of the name
/// creates a fresh segment. `*existed` (if not NULL) is set to 1 if a segment
/// was removed, 0 if none had that name.
///
/// # Safety
/// `name` must be NULL or a NUL-terminated string; `existed` must be NULL or
/// valid for writing one int.
#[no_mangle]
pub unsafe extern "C" fn hrts_segment_unlink(name: *const c_char, existed: *mut c_int) -> c_int {
    status_call(|| {
        const F: &str = "hrts_segment_unlink";
        // SAFETY: `name` is NULL or NUL-terminated, by this function's contract.
        let name = unsafe { name_arg(name, F) }?;
        let cfg = config_for(Config::from_env()?, name);
        let removed = SharedBase::unlink(&cfg.name)?;
        if let Some(existed) = std::ptr::NonNull::new(existed) {
            // SAFETY: non-NULL and valid for one int by this function's contract.
            unsafe { put(existed, c_int::from(removed)) };
        }
        Ok(())
    })
}

/// Closes a handle from `hrts_segment_open`. The segment itself stays for the
/// other processes (and handles) that use it; `hrts unlink` removes it. NULL
/// is a no-op.
///
/// # Safety
/// `seg` must be NULL or a handle from `hrts_segment_open` that no other thread
/// is using. After this call the handle is gone: using or closing it again is
/// undefined behaviour, as with `free`.
#[no_mangle]
pub unsafe extern "C" fn hrts_segment_close(seg: *mut HrtsSegment) {
    value_call((), || {
        if !seg.is_null() {
            // SAFETY: a non-NULL `seg` came from Box::into_raw in
            // hrts_segment_open and, by this function's contract, is closed
            // only once and no longer in use.
            drop(unsafe { Box::from_raw(seg) });
        }
    })
}

/// `hrts_get_epoch_nanoseconds` on the segment `seg`.
///
/// # Safety
/// `seg` must be NULL or an open handle; `out` NULL or valid for writing one
/// `uint64_t`. NULL gives `HRTS_E_NULL_POINTER`.
#[no_mangle]
pub unsafe extern "C" fn hrts_segment_epoch_nanoseconds(
    seg: *const HrtsSegment,
    out: *mut u64,
) -> c_int {
    // SAFETY: `seg` and `out` as this function's contract says.
    unsafe {
        segment_out_call(seg, out, "hrts_segment_epoch_nanoseconds", |b| {
            Ok(b.now_ns())
        })
    }
}

/// `hrts_get_epoch_nanoseconds_ordered` on the segment `seg`: for stamps
/// compared across threads or processes.
///
/// # Safety
/// `seg` must be NULL or an open handle; `out` NULL or valid for writing one
/// `uint64_t`. NULL gives `HRTS_E_NULL_POINTER`.
#[no_mangle]
pub unsafe extern "C" fn hrts_segment_epoch_nanoseconds_ordered(
    seg: *const HrtsSegment,
    out: *mut u64,
) -> c_int {
    // SAFETY: `seg` and `out` as this function's contract says.
    unsafe {
        segment_out_call(seg, out, "hrts_segment_epoch_nanoseconds_ordered", |b| {
            Ok(b.now_ns_ordered())
        })
    }
}

/// `hrts_get_epoch_microseconds` on the segment `seg`.
///
/// # Safety
/// `seg` must be NULL or an open handle; `out` NULL or valid for writing one
/// `uint64_t`. NULL gives `HRTS_E_NULL_POINTER`.
#[no_mangle]
pub unsafe extern "C" fn hrts_segment_epoch_microseconds(
    seg: *const HrtsSegment,
    out: *mut u64,
) -> c_int {
    // SAFETY: `seg` and `out` as this function's contract says.
    unsafe {
        segment_out_call(seg, out, "hrts_segment_epoch_microseconds", |b| {
            Ok(b.epoch_micros())
        })
    }
}

/// `hrts_calc_time_stamp` on the segment `seg`: IBMTS's 32-bit seconds,
/// `HRTS_E_OVERFLOW` once they no longer fit (2106).
///
/// # Safety
/// `seg` must be NULL or an open handle; each other pointer NULL or valid for
/// writing one `uint32_t`. NULL gives `HRTS_E_NULL_POINTER`.
#[no_mangle]
pub unsafe extern "C" fn hrts_segment_calc_time_stamp(
    seg: *const HrtsSegment,
    seconds: *mut u32,
    microseconds: *mut u32,
) -> c_int {
    const F: &str = "hrts_segment_calc_time_stamp";
    // SAFETY: `seg`, `seconds` and `microseconds` as this function's contract says.
    unsafe { common::calc_time_stamp(F, || segment(seg, F), seconds, microseconds) }
}

/// `hrts_calc_time_stamp64` on the segment `seg`: never overflows.
///
/// # Safety
/// `seg` must be NULL or an open handle; `seconds` NULL or valid for writing one
/// `uint64_t`, `microseconds` NULL or valid for writing one `uint32_t`. NULL
/// gives `HRTS_E_NULL_POINTER`.
#[no_mangle]
pub unsafe extern "C" fn hrts_segment_calc_time_stamp64(
    seg: *const HrtsSegment,
    seconds: *mut u64,
    microseconds: *mut u32,
) -> c_int {
    const F: &str = "hrts_segment_calc_time_stamp64";
    // SAFETY: `seg`, `seconds` and `microseconds` as this function's contract says.
    unsafe { common::calc_time_stamp(F, || segment(seg, F), seconds, microseconds) }
}

/// `hrts_get_base_info` on the segment `seg`: counter frequency (Hz), the
/// base's counter value and its calendar time (seconds and microseconds since
/// the Unix epoch).
///
/// # Safety
/// `seg` must be NULL or an open handle; each other pointer NULL or valid for
/// writing one `uint64_t`. NULL gives `HRTS_E_NULL_POINTER`.
#[no_mangle]
pub unsafe extern "C" fn hrts_segment_base_info(
    seg: *const HrtsSegment,
    frequency: *mut u64,
    counter: *mut u64,
    seconds: *mut u64,
    microseconds: *mut u64,
) -> c_int {
    const F: &str = "hrts_segment_base_info";
    // SAFETY: every pointer as this function's contract says.
    unsafe {
        common::base_info(
            F,
            || segment(seg, F),
            frequency,
            counter,
            seconds,
            microseconds,
        )
    }
}

/// `hrts_set_base_info` on the segment `seg`: pairs its counter with the
/// calendar clock anew for every process attached to it and bumps its
/// generation. May return `HRTS_E_TIMEOUT` if another live process holds the
/// base for too long.
///
/// # Safety
/// `seg` must be NULL (`HRTS_E_NULL_POINTER`) or an open handle.
#[no_mangle]
pub unsafe extern "C" fn hrts_segment_set_base_info(seg: *const HrtsSegment) -> c_int {
    status_call(|| {
        // SAFETY: `seg` as this function's contract says.
        unsafe { segment(seg, "hrts_segment_set_base_info") }?.set_base_info()?;
        Ok(())
    })
}

/// `hrts_get_generation` on the segment `seg`: 1 when it was created, +1 for
/// every base set by any process and every re-base.
///
/// # Safety
/// `seg` must be NULL or an open handle; `out` NULL or valid for writing one
/// `uint64_t`. NULL gives `HRTS_E_NULL_POINTER`.
#[no_mangle]
pub unsafe extern "C" fn hrts_segment_generation(seg: *const HrtsSegment, out: *mut u64) -> c_int {
    // SAFETY: `seg` and `out` as this function's contract says.
    unsafe {
        segment_out_call(seg, out, "hrts_segment_generation", |b| {
            Ok(b.base_info().generation)
        })
    }
}

/// `hrts_get_unique_nanoseconds` on the segment `seg`: strictly greater than
/// every unique stamp issued through that segment before, by any process.
///
/// # Safety
/// `seg` must be NULL or an open handle; `out` NULL or valid for writing one
/// `uint64_t`. NULL gives `HRTS_E_NULL_POINTER`.
#[no_mangle]
pub unsafe extern "C" fn hrts_segment_unique_nanoseconds(
    seg: *const HrtsSegment,
    out: *mut u64,
) -> c_int {
    // SAFETY: `seg` and `out` as this function's contract says.
    unsafe {
        segment_out_call(seg, out, "hrts_segment_unique_nanoseconds", |b| {
            Ok(b.next_unique()?)
        })
    }
}

/// `hrts_next_sequence` on the segment `seg`: its next sequence number, never
/// repeated (see `hrts_segment_open` for where it is persisted).
///
/// # Safety
/// `seg` must be NULL or an open handle; `out` NULL or valid for writing one
/// `uint64_t`. NULL gives `HRTS_E_NULL_POINTER`.
#[no_mangle]
pub unsafe extern "C" fn hrts_segment_next_sequence(
    seg: *const HrtsSegment,
    out: *mut u64,
) -> c_int {
    // SAFETY: `seg` and `out` as this function's contract says.
    unsafe {
        segment_out_call(seg, out, "hrts_segment_next_sequence", |b| {
            Ok(b.next_sequence()?)
        })
    }
}

/// Copies the name of the segment `seg` into `buf` as a NUL-terminated string
/// (for a handle opened with a NULL name: the default name it resolved to).
/// `HRTS_E_BUFFER_TOO_SMALL` (writing nothing) if `len` is shorter than the
/// name plus its NUL; 256 always suffices.
///
/// # Safety
/// `seg` must be NULL or an open handle; `buf` NULL or valid for writing `len`
/// bytes. NULL gives `HRTS_E_NULL_POINTER`.
#[no_mangle]
pub unsafe extern "C" fn hrts_segment_name(
    seg: *const HrtsSegment,
    buf: *mut c_char,
    len: usize,
) -> c_int {
    const F: &str = "hrts_segment_name";
    // SAFETY: `seg` and `buf` as this function's contract says.
    unsafe { common::segment_name(F, || segment(seg, F), buf, len) }
}

/// `hrts_get_bounded_epoch_nanoseconds` on the segment `seg`.
///
/// # Safety
/// `seg` must be NULL or an open handle; `earliest`, `latest` and `status`
/// NULL or valid for writing one value of their type. NULL gives
/// `HRTS_E_NULL_POINTER`.
#[no_mangle]
pub unsafe extern "C" fn hrts_segment_bounded_epoch_nanoseconds(
    seg: *const HrtsSegment,
    earliest: *mut u64,
    latest: *mut u64,
    status: *mut u32,
) -> c_int {
    const F: &str = "hrts_segment_bounded_epoch_nanoseconds";
    // SAFETY: `seg` is NULL or an open handle and the outputs NULL or valid,
    // by this function's contract.
    unsafe { common::bounded(F, || segment(seg, F), earliest, latest, status) }
}

/// `hrts_get_mode` on the segment `seg`: `HRTS_MODE_TRACKING` or
/// `HRTS_MODE_FROZEN`, its creator's choice.
///
/// # Safety
/// `seg` must be NULL or an open handle; `out` NULL or valid for writing one
/// `uint32_t`. NULL gives `HRTS_E_NULL_POINTER`.
#[no_mangle]
pub unsafe extern "C" fn hrts_segment_mode(seg: *const HrtsSegment, out: *mut u32) -> c_int {
    // SAFETY: `seg` and `out` as this function's contract says.
    unsafe {
        segment_out_call(seg, out, "hrts_segment_mode", |b| {
            Ok(segment_types::mode_of(b))
        })
    }
}

/// `hrts_get_tracking_state` on the segment `seg`.
///
/// # Safety
/// `seg` must be NULL or an open handle; `out` NULL or valid for writing one
/// `hrts_tracking_state`. NULL gives `HRTS_E_NULL_POINTER`.
#[no_mangle]
pub unsafe extern "C" fn hrts_segment_tracking_state(
    seg: *const HrtsSegment,
    out: *mut HrtsTrackingState,
) -> c_int {
    // SAFETY: `seg` and `out` as this function's contract says.
    unsafe {
        segment_out_call(seg, out, "hrts_segment_tracking_state", |b| {
            segment_types::tracking_state_of(b)
        })
    }
}

/// `hrts_get_offset_nanoseconds` on the segment `seg`: `CLOCK_REALTIME` minus
/// its stamp now, ns.
///
/// # Safety
/// `seg` must be NULL or an open handle; `out` NULL or valid for writing one
/// `int64_t`. NULL gives `HRTS_E_NULL_POINTER`.
#[no_mangle]
pub unsafe extern "C" fn hrts_segment_offset_nanoseconds(
    seg: *const HrtsSegment,
    out: *mut i64,
) -> c_int {
    // SAFETY: `seg` and `out` as this function's contract says.
    unsafe {
        segment_out_call(seg, out, "hrts_segment_offset_nanoseconds", |b| {
            Ok(b.offset_now())
        })
    }
}

/// `hrts_validate` on the segment `seg`: `HRTS_E_CORRUPT` if its header or
/// active base line was damaged since this handle attached.
///
/// # Safety
/// `seg` must be NULL (`HRTS_E_NULL_POINTER`) or an open handle.
#[no_mangle]
pub unsafe extern "C" fn hrts_segment_validate(seg: *const HrtsSegment) -> c_int {
    common::validate(|| {
        // SAFETY: `seg` as this function's contract says.
        unsafe { segment(seg, "hrts_segment_validate") }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::default_segment::{c_str, hrts_last_error};
    use crate::segment_types::HrtsMode;
    use std::ffi::CString;
    use std::ptr::NonNull;

    const NULL_POINTER: c_int = HrtsStatus::E_NULL_POINTER as c_int;

    /// A segment name of one test, removed when dropped (also when an
    /// assertion failed), so no test leaves a segment behind.
    struct TestSegment(String);

    impl TestSegment {
        fn new(tag: &str) -> TestSegment {
            let name = format!("/hrts-capitest-{}-{tag}", std::process::id());
            let _ = SharedBase::unlink(&name);
            TestSegment(name)
        }

        fn open(&self) -> *mut HrtsSegment {
            let name = CString::new(self.0.as_str()).unwrap();
            let mut seg = null_mut();
            // SAFETY: a C string and a local out pointer.
            let rc = unsafe { hrts_segment_open(name.as_ptr(), &mut seg) };
            assert_eq!(rc, 0, "{}", c_str(hrts_last_error()));
            assert!(!seg.is_null());
            seg
        }
    }

    impl Drop for TestSegment {
        fn drop(&mut self) {
            let _ = SharedBase::unlink(&self.0);
        }
    }

    fn name_of(seg: *const HrtsSegment) -> String {
        let mut buf = [0 as c_char; 256];
        // SAFETY: `seg` is an open handle of the calling test; `buf` a local array.
        let rc = unsafe { hrts_segment_name(seg, buf.as_mut_ptr(), buf.len()) };
        assert_eq!(rc, 0, "{}", c_str(hrts_last_error()));
        c_str(buf.as_ptr())
    }

    fn generation(seg: *const HrtsSegment) -> u64 {
        let mut g = 0;
        // SAFETY: `seg` is an open handle of the calling test; `g` a local.
        assert_eq!(unsafe { hrts_segment_generation(seg, &mut g) }, 0);
        g
    }

    #[test]
    fn a_null_handle_or_output_is_refused_before_anything_else() {
        let (mut v, mut w, mut i) = (0u64, 0u32, 0i64);
        let mut buf = [0 as c_char; 8];
        let mut state = std::mem::MaybeUninit::<HrtsTrackingState>::uninit();
        // SAFETY: every pointer is NULL or points at a live local.
        let rcs = unsafe {
            [
                hrts_segment_open(null(), null_mut()),
                hrts_segment_open_with(null(), null(), null_mut()),
                hrts_segment_mode(null(), &mut w),
                hrts_segment_tracking_state(null(), state.as_mut_ptr()),
                hrts_segment_offset_nanoseconds(null(), &mut i),
                hrts_segment_validate(null()),
                hrts_segment_epoch_nanoseconds(null(), &mut v),
                hrts_segment_epoch_nanoseconds_ordered(null(), &mut v),
                hrts_segment_epoch_microseconds(null(), &mut v),
                hrts_segment_calc_time_stamp(null(), &mut w, &mut w),
                hrts_segment_calc_time_stamp64(null(), &mut v, &mut w),
                hrts_segment_base_info(null(), &mut v, &mut v, &mut v, &mut v),
                hrts_segment_set_base_info(null()),
                hrts_segment_generation(null(), &mut v),
                hrts_segment_unique_nanoseconds(null(), &mut v),
                hrts_segment_next_sequence(null(), &mut v),
                hrts_segment_name(null(), buf.as_mut_ptr(), buf.len()),
            ]
        };
        for (i, rc) in rcs.into_iter().enumerate() {
            assert_eq!(rc, NULL_POINTER, "call {i}");
        }
        assert_eq!(
            c_str(hrts_last_error()),
            "hrts_segment_name: the segment handle is NULL; pass the handle \
             hrts_segment_open gave you (and check that call's status)"
        );
        assert_eq!(
            (v, w, i, buf[0]),
            (0, 0, 0, 0),
            "nothing is written on failure"
        );
        // SAFETY: NULL is documented as a no-op.
        unsafe { hrts_segment_close(null_mut()) };
    }

    #[test]
    fn a_bad_name_is_refused_with_out_set_to_null() {
        let bad: [(&CStr, &str); 3] = [
            (
                c"no-leading-slash",
                "\"no-leading-slash\": it must start with '/'",
            ),
            (c"", "invalid segment name \"\""),
            (c"/hrts-\xff", "is not valid UTF-8"),
        ];
        for (name, message) in bad {
            let mut seg = NonNull::<HrtsSegment>::dangling().as_ptr();
            // SAFETY: a C string and a local out pointer.
            let rc = unsafe { hrts_segment_open(name.as_ptr(), &mut seg) };
            assert_eq!(rc, HrtsStatus::E_INVALID_ARGUMENT as c_int, "{name:?}");
            assert!(seg.is_null(), "{name:?}: *out must be NULL after a failure");
            let error = c_str(hrts_last_error());
            assert!(error.contains(message), "{name:?}: {error}");
        }
    }

    #[test]
    fn the_seq_file_of_the_environment_stays_with_the_default_name() {
        let mut env = Config::named("/hrts-default");
        env.seq_file = Some("/tmp/default.seq".into());
        let same = config_for(env.clone(), Some("/hrts-default"));
        assert_eq!(same.seq_file, env.seq_file);
        let default = config_for(env.clone(), None);
        assert_eq!(
            (default.name.as_str(), default.seq_file),
            ("/hrts-default", env.seq_file.clone())
        );
        let other = config_for(env.clone(), Some("/hrts-other"));
        assert_eq!((other.name.as_str(), other.seq_file), ("/hrts-other", None));
        assert_eq!(other.seq_interval, env.seq_interval);
    }

    fn open_with(seg: &TestSegment, opts: &HrtsOpenOptions) -> *mut HrtsSegment {
        let name = CString::new(seg.0.as_str()).unwrap();
        let mut handle = null_mut();
        // SAFETY: a C string, options and an out pointer, all locals.
        let rc = unsafe { hrts_segment_open_with(name.as_ptr(), opts, &mut handle) };
        assert_eq!(rc, 0, "{}", c_str(hrts_last_error()));
        handle
    }

    fn mode(seg: *const HrtsSegment) -> u32 {
        let mut m = 0;
        // SAFETY: `seg` is an open handle of the calling test; `m` a local.
        assert_eq!(unsafe { hrts_segment_mode(seg, &mut m) }, 0);
        m
    }

    fn tracking_state(seg: *const HrtsSegment) -> HrtsTrackingState {
        let mut state = std::mem::MaybeUninit::uninit();
        // SAFETY: `seg` is an open handle of the calling test; `state` a local,
        // written in full on success.
        unsafe {
            assert_eq!(hrts_segment_tracking_state(seg, state.as_mut_ptr()), 0);
            state.assume_init()
        }
    }

    fn options(mode: HrtsMode) -> HrtsOpenOptions {
        HrtsOpenOptions {
            version: crate::HRTS_OPEN_OPTIONS_VERSION,
            mode: mode as u32,
            ..HrtsOpenOptions::default()
        }
    }

    #[test]
    fn the_creator_chooses_the_mode_and_every_handle_reports_it() {
        let (frozen, tracked) = (TestSegment::new("frozen"), TestSegment::new("tracked"));
        let f = open_with(&frozen, &options(HrtsMode::MODE_FROZEN));
        assert_eq!(mode(f), HrtsMode::MODE_FROZEN as u32);
        // The segment exists now: a later open keeps the creator's mode.
        let f2 = open_with(&frozen, &options(HrtsMode::MODE_TRACKING));
        assert_eq!(mode(f2), HrtsMode::MODE_FROZEN as u32);
        let fs = tracking_state(f);
        assert_eq!((fs.mode, fs.ties, fs.last_tie_ns), (mode(f), 0, 0));

        let t = open_with(
            &tracked,
            &HrtsOpenOptions {
                tie_interval_ms: 20,
                max_slew_ppm: 100,
                ..options(HrtsMode::MODE_TRACKING)
            },
        );
        assert_eq!(mode(t), HrtsMode::MODE_TRACKING as u32);
        let before = tracking_state(t);
        assert_eq!(before.tie_interval_ns, 20_000_000);
        assert_eq!(before.max_slew_ppb, 100_000);
        assert_eq!(before.step_threshold_ns, 100_000_000);
        // The first stamp past a tie interval ties.
        std::thread::sleep(std::time::Duration::from_millis(50));
        let mut ns = 0;
        // SAFETY: `t` is open; `ns` a local.
        assert_eq!(unsafe { hrts_segment_epoch_nanoseconds(t, &mut ns) }, 0);
        let after = tracking_state(t);
        assert!(after.ties > before.ties, "{before:?} -> {after:?}");
        assert!(
            after.last_tie_ns.abs_diff(ns) < 1_000_000_000,
            "{after:?} at {ns}"
        );

        for seg in [f, t] {
            let mut offset = i64::MIN;
            // SAFETY: `seg` is open; `offset` a local.
            unsafe {
                assert_eq!(hrts_segment_offset_nanoseconds(seg, &mut offset), 0);
                assert_eq!(
                    hrts_segment_validate(seg),
                    0,
                    "{}",
                    c_str(hrts_last_error())
                );
            }
            assert!(offset.abs() < 50_000_000, "{offset}");
        }

        // Options that are not version 1, or out of range, are refused before
        // anything is opened, and *out is NULL.
        let name = CString::new(tracked.0.as_str()).unwrap();
        for bad in [
            HrtsOpenOptions::default(),
            HrtsOpenOptions {
                mode: 7,
                ..options(HrtsMode::MODE_FROZEN)
            },
            HrtsOpenOptions {
                tie_interval_ms: 60_001,
                ..options(HrtsMode::MODE_TRACKING)
            },
        ] {
            let mut seg = NonNull::<HrtsSegment>::dangling().as_ptr();
            // SAFETY: a C string, options and an out pointer, all locals.
            let rc = unsafe { hrts_segment_open_with(name.as_ptr(), &bad, &mut seg) };
            assert_eq!(rc, HrtsStatus::E_INVALID_ARGUMENT as c_int, "{bad:?}");
            assert!(seg.is_null());
            assert!(c_str(hrts_last_error()).starts_with("hrts_segment_open_with: "));
        }
        // SAFETY: each handle is open, closed once, and not used afterwards.
        unsafe {
            hrts_segment_close(f);
            hrts_segment_close(f2);
            hrts_segment_close(t);
        }
    }

    #[test]
    fn handles_on_two_segments_work_at_once() {
        let (a, b) = (TestSegment::new("a"), TestSegment::new("b"));
        let (ha, hb, ha2) = (a.open(), b.open(), a.open());
        assert_ne!(ha, ha2, "every open gives a handle of its own");
        assert_eq!(
            (name_of(ha), name_of(hb), name_of(ha2)),
            (a.0.clone(), b.0.clone(), a.0.clone())
        );

        for seg in [ha, hb, ha2] {
            let (mut ns, mut ordered, mut us) = (0u64, 0u64, 0u64);
            let (mut secs, mut micros) = (0u64, 0u32);
            // SAFETY: `seg` is open; the outputs are locals.
            unsafe {
                assert_eq!(hrts_segment_epoch_nanoseconds(seg, &mut ns), 0);
                assert_eq!(hrts_segment_epoch_nanoseconds_ordered(seg, &mut ordered), 0);
                assert_eq!(hrts_segment_epoch_microseconds(seg, &mut us), 0);
                assert_eq!(
                    hrts_segment_calc_time_stamp64(seg, &mut secs, &mut micros),
                    0
                );
            }
            let real = hrts_core::clock::realtime_ns();
            assert!(real.abs_diff(ns) < 50_000_000, "{real} vs {ns}");
            assert!(ordered >= ns && us >= ns / 1000 && secs >= ns / 1_000_000_000);
            assert!(micros < 1_000_000);
        }

        // A base set through one handle is the segment's: the other handle on
        // it sees the new generation, the other segment does not change.
        let (ga, gb) = (generation(ha), generation(hb));
        // SAFETY: `ha` is open.
        assert_eq!(unsafe { hrts_segment_set_base_info(ha) }, 0);
        assert_eq!(
            (generation(ha), generation(ha2), generation(hb)),
            (ga + 1, ga + 1, gb)
        );

        // Unique stamps through either handle on one segment share its order.
        let mut last = 0;
        for i in 0..1000 {
            let mut u = 0;
            let seg = if i % 2 == 0 { ha } else { ha2 };
            // SAFETY: `seg` is open; `u` a local.
            assert_eq!(unsafe { hrts_segment_unique_nanoseconds(seg, &mut u) }, 0);
            assert!(u > last, "unique stamp {u} after {last}");
            last = u;
        }

        // A live handle with a NULL output is refused too, naming the argument.
        // SAFETY: `ha` is open; the other pointers are NULL or locals.
        unsafe {
            let mut v = 0u64;
            assert_eq!(hrts_segment_epoch_nanoseconds(ha, null_mut()), NULL_POINTER);
            assert_eq!(
                hrts_segment_base_info(ha, &mut v, null_mut(), &mut v, &mut v),
                NULL_POINTER
            );
            assert!(c_str(hrts_last_error()).contains("argument `counter` is NULL"));
            assert_eq!(hrts_segment_name(ha, null_mut(), 8), NULL_POINTER);
            let mut small = [0 as c_char; 4];
            assert_eq!(
                hrts_segment_name(ha, small.as_mut_ptr(), small.len()),
                HrtsStatus::E_BUFFER_TOO_SMALL as c_int
            );
            assert_eq!(v, 0);
        }

        // SAFETY: each handle is open, closed once, and not used afterwards.
        unsafe {
            hrts_segment_close(ha);
            hrts_segment_close(hb);
        }
        // Closing a handle leaves the segment to the others that use it.
        let mut ns = 0;
        // SAFETY: `ha2` is still open; `ns` a local.
        assert_eq!(unsafe { hrts_segment_epoch_nanoseconds(ha2, &mut ns) }, 0);
        // SAFETY: as above.
        unsafe { hrts_segment_close(ha2) };
    }
}
