//! The exported functions on the process's default segment (`HRTS_SEGMENT`,
//! else `/hrts-<uid>`, opened on first use) and the library-wide ones (version,
//! errors, ids). Each is a thin wrapper over `hrts_core::process`: check pointers,
//! reach the process's segment, convert, write the outputs. The same calls on
//! a segment of the caller's choice are in [`crate::handle`].

use crate::boundary::{status_call, value_call};
use crate::common::{self, out_call, put, required};
use crate::segment_types::{self, HrtsTrackingState};
use crate::status::{last_error_ptr, Failure, HrtsStatus};
use hrts_core::SharedBase;
use hrts_core::{ibmts, process};
use std::ffi::{c_char, c_int, CString};
use std::sync::OnceLock;

/// Major part of the version this header was generated for.
pub const HRTS_VERSION_MAJOR: u16 = 0;
/// Minor part of the version this header was generated for.
pub const HRTS_VERSION_MINOR: u16 = 1;
/// Patch part of the version this header was generated for.
pub const HRTS_VERSION_PATCH: u16 = 0;
/// Fourth part: the shared segment's layout version.
pub const HRTS_VERSION_LAYOUT: u16 = 4;

/// The process's segment: already open (the hot path, one load), or opened now.
#[inline(always)]
fn base() -> Result<&'static SharedBase, Failure> {
    match process::global_if_open() {
        Some(base) => Ok(base),
        None => open_base(),
    }
}

#[cold]
#[inline(never)]
fn open_base() -> Result<&'static SharedBase, Failure> {
    process::global().map_err(Failure::from)
}

/// The library's logic version, packed a.b.c.d into 16 bits each as IBMTS did
/// (`0x0001000000000005` is 1.0.0.5): the crate's major.minor.patch and the
/// shared segment's layout version. Compare it with
/// `HRTS_PACK_VERSION(HRTS_VERSION_MAJOR, ..., HRTS_VERSION_LAYOUT)` to detect a
/// header/library mismatch. Never fails.
#[no_mangle]
pub extern "C" fn hrts_get_version() -> u64 {
    value_call(ibmts::LOGIC_VERSION, || ibmts::LOGIC_VERSION)
}

/// IBMTS `getBaseInfo`: the counter frequency in Hz, the counter value of the
/// current base, and the base's calendar time (seconds and microseconds since
/// the Unix epoch). Opens the process's segment (`HRTS_SEGMENT`, default
/// `/hrts-<uid>`) on first use.
///
/// # Safety
/// Each pointer must be NULL (then `HRTS_E_NULL_POINTER` is returned and nothing
/// is written) or valid for writing one `uint64_t`.
#[no_mangle]
pub unsafe extern "C" fn hrts_get_base_info(
    frequency: *mut u64,
    counter: *mut u64,
    seconds: *mut u64,
    microseconds: *mut u64,
) -> c_int {
    // SAFETY: each pointer is NULL or valid for one write, by this function's contract.
    unsafe {
        common::base_info(
            "hrts_get_base_info",
            base,
            frequency,
            counter,
            seconds,
            microseconds,
        )
    }
}

/// The generation of the current base: 1 when the segment was created, +1 for
/// every `hrts_set_base_info` (by any process) and every re-base after the
/// counter went backwards.
///
/// # Safety
/// `out` must be NULL (`HRTS_E_NULL_POINTER`) or valid for writing one `uint64_t`.
#[no_mangle]
pub unsafe extern "C" fn hrts_get_generation(out: *mut u64) -> c_int {
    // SAFETY: `out` is NULL or valid for one write, by this function's contract.
    unsafe {
        out_call(out, "hrts_get_generation", || {
            Ok(base()?.base_info().generation)
        })
    }
}

/// IBMTS `setBaseInfo`: pairs the counter with the calendar clock anew for every
/// process attached to the segment and bumps the generation. This is the one
/// way a change of the system clock reaches the timeline. May return
/// `HRTS_E_TIMEOUT` if another live process holds the base for too long.
#[no_mangle]
pub extern "C" fn hrts_set_base_info() -> c_int {
    status_call(|| {
        base()?.set_base_info()?;
        Ok(())
    })
}

/// IBMTS `calcTimeStamp`: seconds and microseconds since the Unix epoch, in
/// IBMTS's 32-bit layout. Returns `HRTS_E_OVERFLOW` (writing nothing) instead of
/// wrapping once the seconds no longer fit in 32 bits (in 2106); use
/// `hrts_calc_time_stamp64` in new code.
///
/// # Safety
/// Each pointer must be NULL (`HRTS_E_NULL_POINTER`) or valid for writing one
/// `uint32_t`.
#[no_mangle]
pub unsafe extern "C" fn hrts_calc_time_stamp(seconds: *mut u32, microseconds: *mut u32) -> c_int {
    // SAFETY: both pointers are NULL or valid for one write, by this function's contract.
    unsafe { common::calc_time_stamp("hrts_calc_time_stamp", base, seconds, microseconds) }
}

/// `hrts_calc_time_stamp` with 64-bit seconds: never overflows.
///
/// # Safety
/// `seconds` must be NULL or valid for writing one `uint64_t`, `microseconds`
/// NULL or valid for writing one `uint32_t`; NULL gives `HRTS_E_NULL_POINTER`.
#[no_mangle]
pub unsafe extern "C" fn hrts_calc_time_stamp64(
    seconds: *mut u64,
    microseconds: *mut u32,
) -> c_int {
    // SAFETY: both pointers are NULL or valid for one write, by this function's contract.
    unsafe { common::calc_time_stamp("hrts_calc_time_stamp64", base, seconds, microseconds) }
}

/// IBMTS `getEpochMicroseconds`: microseconds since the Unix epoch.
///
/// # Safety
/// `out` must be NULL (`HRTS_E_NULL_POINTER`) or valid for writing one `uint64_t`.
#[no_mangle]
pub unsafe extern "C" fn hrts_get_epoch_microseconds(out: *mut u64) -> c_int {
    // SAFETY: `out` is NULL or valid for one write, by this function's contract.
    unsafe {
        out_call(out, "hrts_get_epoch_microseconds", || {
            Ok(base()?.epoch_micros())
        })
    }
}

/// Nanoseconds since the Unix epoch: the cheapest, finest hrts stamp. The
/// counter read is unordered (the CPU may execute it a little early); use
/// `hrts_get_epoch_nanoseconds_ordered` for stamps compared across threads or
/// processes.
///
/// # Safety
/// `out` must be NULL (`HRTS_E_NULL_POINTER`) or valid for writing one `uint64_t`.
#[no_mangle]
pub unsafe extern "C" fn hrts_get_epoch_nanoseconds(out: *mut u64) -> c_int {
    // SAFETY: `out` is NULL or valid for one write, by this function's contract.
    unsafe { out_call(out, "hrts_get_epoch_nanoseconds", || Ok(base()?.now_ns())) }
}

/// An interval that holds true time now (TrueTime's `TT.now()`): `earliest`
/// and `latest` in epoch ns, from an ordered stamp widened by the system
/// clock's error bound (the time service's word, the line's own error, the
/// counter's cross-CPU shift and the drift since the bound was learned), and
/// its `status` (an `hrts_bound_status`: synchronized, or free-running when the
/// word is old). `HRTS_E_UNSYNCHRONIZED`, with nothing written, when no
/// interval can be given: the clock is not synchronized, the bound is older
/// than its void-after, or the segment is frozen (the message says which).
///
/// # Safety
/// Each of `earliest`, `latest` and `status` must be NULL
/// (`HRTS_E_NULL_POINTER`) or valid for writing one value of its type.
#[no_mangle]
pub unsafe extern "C" fn hrts_get_bounded_epoch_nanoseconds(
    earliest: *mut u64,
    latest: *mut u64,
    status: *mut u32,
) -> c_int {
    // SAFETY: the pointers are NULL or valid, by this function's contract.
    unsafe {
        common::bounded(
            "hrts_get_bounded_epoch_nanoseconds",
            base,
            earliest,
            latest,
            status,
        )
    }
}

/// `hrts_get_epoch_nanoseconds` with an ordered counter read: the read cannot
/// execute before the instructions that precede the call, so a stamp taken
/// after observing another thread's or process's event is not earlier than
/// the stamp that thread took before it. A few ns dearer.
///
/// # Safety
/// `out` must be NULL (`HRTS_E_NULL_POINTER`) or valid for writing one `uint64_t`.
#[no_mangle]
pub unsafe extern "C" fn hrts_get_epoch_nanoseconds_ordered(out: *mut u64) -> c_int {
    // SAFETY: `out` is NULL or valid for one write, by this function's contract.
    unsafe {
        out_call(out, "hrts_get_epoch_nanoseconds_ordered", || {
            Ok(base()?.now_ns_ordered())
        })
    }
}

/// A unique stamp: epoch nanoseconds strictly greater than every unique stamp
/// issued before it through this segment, by any thread of any process. It is
/// the real time unless several callers land in the same nanosecond, when it
/// is the last one issued + 1.
///
/// # Safety
/// `out` must be NULL (`HRTS_E_NULL_POINTER`) or valid for writing one `uint64_t`.
#[no_mangle]
pub unsafe extern "C" fn hrts_get_unique_nanoseconds(out: *mut u64) -> c_int {
    // SAFETY: `out` is NULL or valid for one write, by this function's contract.
    unsafe {
        out_call(out, "hrts_get_unique_nanoseconds", || {
            Ok(base()?.next_unique()?)
        })
    }
}

/// The next sequence number of the segment: shared by every process attached
/// to it and never repeated, even after every process and the segment itself
/// are gone (a reboot). Every `HRTS_SEQ_INTERVAL` numbers (default 1000) the
/// high-water mark is persisted to `HRTS_SEQ_FILE` (default
/// `~/.local/state/hrts/<segment>.seq`); a damaged file gives
/// `HRTS_E_PERSIST`, never a restart at zero.
///
/// # Safety
/// `out` must be NULL (`HRTS_E_NULL_POINTER`) or valid for writing one `uint64_t`.
#[no_mangle]
pub unsafe extern "C" fn hrts_next_sequence(out: *mut u64) -> c_int {
    // SAFETY: `out` is NULL or valid for one write, by this function's contract.
    unsafe { out_call(out, "hrts_next_sequence", || Ok(base()?.next_sequence()?)) }
}

/// The next Intel Trace Collector style stamp of this process: the clock tick
/// since the process's first ITC stamp in the high bits and an event counter in
/// the low `HRTS_ITC_EVENT_BITS` bits (default 13), unique within the process
/// even when the tick (`HRTS_ITC_TICK_NS`, default 1 ns) is coarse. When the
/// counter overflows, the tick is advanced artificially. `HRTS_E_INVALID_ARGUMENT`
/// if the format in the environment is invalid or the run outlived its ticks.
///
/// # Safety
/// `out` must be NULL (`HRTS_E_NULL_POINTER`) or valid for writing one `uint64_t`.
#[no_mangle]
pub unsafe extern "C" fn hrts_itc_next(out: *mut u64) -> c_int {
    // SAFETY: `out` is NULL or valid for one write, by this function's contract.
    unsafe { out_call(out, "hrts_itc_next", || Ok(process::itc_next()?)) }
}

/// Splits an ITC stamp of this process into its clock tick and event counter.
///
/// # Safety
/// `tick` and `event` must each be NULL (`HRTS_E_NULL_POINTER`) or valid for
/// writing one `uint64_t`.
#[no_mangle]
pub unsafe extern "C" fn hrts_itc_decode(stamp: u64, tick: *mut u64, event: *mut u64) -> c_int {
    status_call(|| {
        let tick = required(tick, "tick", "hrts_itc_decode")?;
        let event = required(event, "event", "hrts_itc_decode")?;
        let (t, e) = process::itc()?.format().decode(stamp);
        // SAFETY: non-NULL and valid by this function's contract.
        unsafe {
            put(tick, t);
            put(event, e);
        }
        Ok(())
    })
}

/// Epoch nanoseconds of an ITC stamp of this process: the start of its run plus
/// its tick (the event counter is dropped, as the accurate ITC conversion does).
///
/// # Safety
/// `out` must be NULL (`HRTS_E_NULL_POINTER`) or valid for writing one `uint64_t`.
#[no_mangle]
pub unsafe extern "C" fn hrts_itc_to_epoch_nanoseconds(stamp: u64, out: *mut u64) -> c_int {
    // SAFETY: `out` is NULL or valid for one write, by this function's contract.
    unsafe {
        out_call(out, "hrts_itc_to_epoch_nanoseconds", || {
            Ok(process::itc()?.to_epoch_ns(stamp))
        })
    }
}

/// The maximum number of this process's ITC stamps on one clock tick, counted
/// as Intel Trace Collector counts it: 0 when no two stamps shared a tick, N
/// when some tick held N + 1 (the clock's resolution was too coarse).
///
/// # Safety
/// `out` must be NULL (`HRTS_E_NULL_POINTER`) or valid for writing one `uint64_t`.
#[no_mangle]
pub unsafe extern "C" fn hrts_itc_max_events_per_tick(out: *mut u64) -> c_int {
    // SAFETY: `out` is NULL or valid for one write, by this function's contract.
    unsafe {
        out_call(out, "hrts_itc_max_events_per_tick", || {
            Ok(process::itc()?.max_events_per_tick())
        })
    }
}

/// The mode of the process's segment, `HRTS_MODE_TRACKING` or
/// `HRTS_MODE_FROZEN` (an `hrts_mode` value): its creator's choice
/// (`HRTS_MODE`, default tracking).
///
/// # Safety
/// `out` must be NULL (`HRTS_E_NULL_POINTER`) or valid for writing one `uint32_t`.
#[no_mangle]
pub unsafe extern "C" fn hrts_get_mode(out: *mut u32) -> c_int {
    // SAFETY: `out` is NULL or valid for one write, by this function's contract.
    unsafe { out_call(out, "hrts_get_mode", || Ok(segment_types::mode_of(base()?))) }
}

/// The tracking state of the process's segment (mode, tie settings, the
/// slope's correction, tie and step counts; see `hrts_tracking_state`), one
/// snapshot of what `hrts info` shows. `HRTS_E_CORRUPT` if the tie
/// statistics were damaged (the next tie or move starts them again).
///
/// # Safety
/// `out` must be NULL (`HRTS_E_NULL_POINTER`) or valid for writing one
/// `hrts_tracking_state`.
#[no_mangle]
pub unsafe extern "C" fn hrts_get_tracking_state(out: *mut HrtsTrackingState) -> c_int {
    // SAFETY: `out` is NULL or valid for one write, by this function's contract.
    unsafe {
        out_call(out, "hrts_get_tracking_state", || {
            segment_types::tracking_state_of(base()?)
        })
    }
}

/// How far the process's segment is from the system clock now:
/// `CLOCK_REALTIME` minus the segment's stamp, in nanoseconds, measured with
/// the narrowest of several brackets (`offset ns` in `hrts info`). A tracking
/// segment keeps it small; a frozen one drifts by its calibration error and
/// does not follow steps of the clock.
///
/// # Safety
/// `out` must be NULL (`HRTS_E_NULL_POINTER`) or valid for writing one `int64_t`.
#[no_mangle]
pub unsafe extern "C" fn hrts_get_offset_nanoseconds(out: *mut i64) -> c_int {
    // SAFETY: `out` is NULL or valid for one write, by this function's contract.
    unsafe {
        out_call(out, "hrts_get_offset_nanoseconds", || {
            Ok(base()?.offset_now())
        })
    }
}

/// Checks the process's segment as attaching does: its header must be the one
/// this process attached to and its active base line must be intact.
/// `HRTS_SUCCESS` if so, `HRTS_E_CORRUPT` if another process damaged it since
/// (the message says what).
#[no_mangle]
pub extern "C" fn hrts_validate() -> c_int {
    common::validate(base)
}

/// The calling process's id (IBMTS `getOSProcessID`). Never fails.
#[no_mangle]
pub extern "C" fn hrts_get_pid() -> u32 {
    value_call(0, hrts_core::process::pid)
}

/// The calling thread's Linux thread id (`gettid`; IBMTS `getOSThreadID`).
/// Never fails.
#[no_mangle]
pub extern "C" fn hrts_get_thread_id() -> u32 {
    value_call(0, hrts_core::process::thread_id)
}

/// Copies the name of the process's segment (e.g. `/hrts-1000`) into `buf` as
/// a NUL-terminated string. If `len` is smaller than the name plus its NUL,
/// returns `HRTS_E_BUFFER_TOO_SMALL` (the message gives the size needed) and
/// writes nothing. Names are at most 255 bytes, so 256 always suffices.
///
/// # Safety
/// `buf` must be NULL (`HRTS_E_NULL_POINTER`) or valid for writing `len` bytes.
#[no_mangle]
pub unsafe extern "C" fn hrts_get_segment_name(buf: *mut c_char, len: usize) -> c_int {
    // SAFETY: `buf` is NULL or valid for `len` bytes, by this function's contract.
    unsafe { common::segment_name("hrts_get_segment_name", base, buf, len) }
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
#[no_mangle]
pub unsafe extern "C" fn hrts_get_timeline(buf: *mut c_char, len: usize) -> c_int {
    // SAFETY: `buf` is NULL or valid for `len` bytes, by this function's contract.
    unsafe {
        common::copy_text(
            "hrts_get_timeline",
            "the timeline",
            || Ok(base()?.timeline()),
            buf,
            len,
        )
    }
}

/// This thread's last error message: the message of the most recent failing
/// hrts call on this thread ("" if none failed yet), like errno it is not
/// cleared by a successful call. Never NULL. The string belongs to hrts and
/// stays valid until the next hrts call on this thread.
#[no_mangle]
pub extern "C" fn hrts_last_error() -> *const c_char {
    value_call(c"".as_ptr(), last_error_ptr)
}

/// The name of a status code (`"HRTS_E_NULL_POINTER"` for
/// `HRTS_E_NULL_POINTER`), or `"HRTS_E_UNKNOWN_STATUS"` for a value that is not
/// one. A static string; never NULL.
#[no_mangle]
pub extern "C" fn hrts_status_name(status: c_int) -> *const c_char {
    value_call(c"HRTS_E_UNKNOWN_STATUS".as_ptr(), || {
        let name = usize::try_from(status)
            .ok()
            .and_then(|i| HrtsStatus::ALL.get(i))
            .map_or(c"HRTS_E_UNKNOWN_STATUS", |s| s.name());
        name.as_ptr()
    })
}

/// The copyright line (IBMTS `getCopyright`). A static string; never NULL.
#[no_mangle]
pub extern "C" fn hrts_copyright() -> *const c_char {
    static COPYRIGHT: OnceLock<CString> = OnceLock::new();
    value_call(c"".as_ptr(), || {
        COPYRIGHT
            .get_or_init(|| CString::new(ibmts::COPYRIGHT).unwrap_or_default())
            .as_ptr()
    })
}

/// Reads a C string returned by this library (for the tests).
#[cfg(test)]
pub(crate) fn c_str(p: *const c_char) -> String {
    assert!(!p.is_null());
    // SAFETY: every string this library returns is NUL-terminated and static or
    // thread-owned, unchanged while the test reads it.
    unsafe { std::ffi::CStr::from_ptr(p) }
        .to_string_lossy()
        .into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ptr::null_mut;

    #[test]
    fn header_version_constants_match_the_library() {
        let packed = ibmts::pack_version(
            HRTS_VERSION_MAJOR,
            HRTS_VERSION_MINOR,
            HRTS_VERSION_PATCH,
            HRTS_VERSION_LAYOUT,
        );
        assert_eq!(
            packed,
            hrts_get_version(),
            "update the HRTS_VERSION_* constants in native/capi/src/default_segment.rs, then bless the header"
        );
    }

    #[test]
    fn status_names_follow_the_values() {
        for (i, s) in HrtsStatus::ALL.iter().enumerate() {
            assert_eq!(*s as usize, i, "ALL must be in value order");
            assert_eq!(
                c_str(hrts_status_name(i as c_int)),
                c_str(s.name().as_ptr())
            );
        }
        assert_eq!(c_str(hrts_status_name(0)), "HRTS_SUCCESS");
        assert_eq!(c_str(hrts_status_name(11)), "HRTS_E_NULL_POINTER");
        assert_eq!(c_str(hrts_status_name(-1)), "HRTS_E_UNKNOWN_STATUS");
        assert_eq!(c_str(hrts_status_name(1000)), "HRTS_E_UNKNOWN_STATUS");
    }

    #[test]
    fn null_pointers_are_refused_before_anything_else() {
        // These never reach the segment, so they need no HRTS_SEGMENT.
        let mut v = 0u64;
        // SAFETY: every pointer is NULL or points at a live local.
        let rcs = unsafe {
            [
                hrts_get_epoch_nanoseconds(null_mut()),
                hrts_get_epoch_nanoseconds_ordered(null_mut()),
                hrts_get_unique_nanoseconds(null_mut()),
                hrts_next_sequence(null_mut()),
                hrts_get_epoch_microseconds(null_mut()),
                hrts_get_generation(null_mut()),
                hrts_get_base_info(&mut v, &mut v, null_mut(), &mut v),
                hrts_calc_time_stamp(null_mut(), null_mut()),
                hrts_calc_time_stamp64(&mut v, null_mut()),
                hrts_get_segment_name(null_mut(), 10),
                hrts_get_mode(null_mut()),
                hrts_get_tracking_state(null_mut()),
                hrts_get_offset_nanoseconds(null_mut()),
            ]
        };
        for rc in rcs {
            assert_eq!(rc, HrtsStatus::E_NULL_POINTER as c_int);
        }
        assert!(c_str(hrts_last_error()).contains("hrts_get_offset_nanoseconds"));
        // SAFETY: NULL is refused before anything is written.
        unsafe { hrts_get_segment_name(null_mut(), 10) };
        assert!(c_str(hrts_last_error()).contains("`buf` is NULL"));
        assert_eq!(v, 0, "nothing is written on failure");
    }

    #[test]
    fn pid_thread_id_and_copyright() {
        assert_eq!(hrts_get_pid(), std::process::id());
        assert_ne!(hrts_get_thread_id(), 0);
        assert!(c_str(hrts_copyright()).contains("hrts"));
    }
}

#[cfg(test)]
mod segment_tests {
    use super::*;

    /// The one test in this crate that opens the process's segment: it names its
    /// own before first use (the global reads HRTS_SEGMENT once) and removes it.
    #[test]
    fn real_calls_against_a_private_segment() {
        let name = format!("/hrts-capitest-{}", std::process::id());
        std::env::set_var("HRTS_SEGMENT", &name);
        let result = std::panic::catch_unwind(|| {
            let mut buf = [0 as c_char; 64];
            // SAFETY: `buf` is valid for its length; the other pointers are locals.
            unsafe {
                assert_eq!(hrts_get_segment_name(buf.as_mut_ptr(), buf.len()), 0);
                assert_eq!(c_str(buf.as_ptr()), name);
                let exact = name.len() + 1;
                assert_eq!(hrts_get_segment_name(buf.as_mut_ptr(), exact), 0);
                assert_eq!(
                    hrts_get_segment_name(buf.as_mut_ptr(), exact - 1),
                    HrtsStatus::E_BUFFER_TOO_SMALL as c_int
                );
                assert!(c_str(hrts_last_error()).contains(&format!("needs {exact}")));

                let (mut g0, mut g1) = (0u64, 0u64);
                assert_eq!(hrts_get_generation(&mut g0), 0);
                assert_eq!(hrts_set_base_info(), 0);
                assert_eq!(hrts_get_generation(&mut g1), 0);
                assert_eq!(g1, g0 + 1);

                let (mut ns, mut us, mut ordered) = (0u64, 0u64, 0u64);
                assert_eq!(hrts_get_epoch_nanoseconds(&mut ns), 0);
                assert_eq!(hrts_get_epoch_nanoseconds_ordered(&mut ordered), 0);
                assert!(ordered >= ns && ordered - ns < 50_000_000);
                assert_eq!(hrts_get_epoch_microseconds(&mut us), 0);
                assert!(us >= ns / 1000 && us - ns / 1000 < 1_000_000);
                let real = hrts_core::clock::realtime_ns();
                assert!(real.abs_diff(ns) < 50_000_000, "{real} vs {ns}");

                // HRTS_MODE is unset here: the default, tracking.
                let mut mode = 0u32;
                assert_eq!(hrts_get_mode(&mut mode), 0);
                assert_eq!(mode, crate::HrtsMode::MODE_TRACKING as u32);
                let mut state = std::mem::MaybeUninit::<HrtsTrackingState>::uninit();
                assert_eq!(hrts_get_tracking_state(state.as_mut_ptr()), 0);
                let state = state.assume_init();
                assert_eq!(state.mode, mode);
                assert_eq!(state.tie_interval_ns, 1_000_000_000);
                assert_eq!(state.max_slew_ppb, 500_000);
                assert_eq!(state.step_threshold_ns, 100_000_000);
                let mut offset = i64::MIN;
                assert_eq!(hrts_get_offset_nanoseconds(&mut offset), 0);
                assert!(offset.abs() < 50_000_000, "{offset}");
                assert_eq!(hrts_validate(), 0, "{}", c_str(hrts_last_error()));
            }
        });
        let _ = SharedBase::unlink(&name);
        if let Err(panic) = result {
            std::panic::resume_unwind(panic);
        }
    }
}
