//! What the exported functions have in common: checking and writing the caller's
//! output pointers, and the bodies of the calls that exist twice, once on the
//! process's default segment (`hrts_get_base_info`) and once on a handle
//! (`hrts_segment_base_info`). Those bodies take the segment as a closure so
//! that every output pointer is checked before the segment is opened or the
//! handle read: a NULL output is refused before anything else happens.

use crate::boundary::status_call;
use crate::status::{Failure, HrtsStatus};
use hrts_core::SharedBase;
use std::ffi::{c_char, c_int};
use std::ptr::NonNull;

/// A required output pointer, or the NULL-pointer failure naming it.
#[inline(always)]
pub(crate) fn required<T>(p: *mut T, arg: &str, function: &str) -> Result<NonNull<T>, Failure> {
    NonNull::new(p).ok_or_else(|| Failure::null(arg, function))
}

/// Writes `v` through an output pointer the caller promised is valid.
///
/// # Safety
/// `p` must be aligned and valid for a write of `T` (the exported functions'
/// documented contract; NULL was already excluded by [`required`]).
#[inline(always)]
pub(crate) unsafe fn put<T>(p: NonNull<T>, v: T) {
    // SAFETY: guaranteed by this function's contract, passed on from the caller.
    unsafe { p.as_ptr().write(v) }
}

/// The whole body of a function that computes one value into `out`: the NULL
/// check (before any work), the panic boundary, and the write.
///
/// # Safety
/// `out` must be NULL or aligned and valid for writing one `T`.
#[inline(always)]
pub(crate) unsafe fn out_call<T>(
    out: *mut T,
    function: &str,
    value: impl FnOnce() -> Result<T, Failure>,
) -> c_int {
    status_call(|| {
        let out = required(out, "out", function)?;
        let v = value()?;
        // SAFETY: non-NULL, and valid by this function's contract.
        unsafe { put(out, v) };
        Ok(())
    })
}

/// IBMTS `getBaseInfo` of the segment `base` yields.
///
/// # Safety
/// Each pointer must be NULL or valid for writing one `u64`.
pub(crate) unsafe fn base_info<'a>(
    function: &str,
    base: impl FnOnce() -> Result<&'a SharedBase, Failure>,
    frequency: *mut u64,
    counter: *mut u64,
    seconds: *mut u64,
    microseconds: *mut u64,
) -> c_int {
    status_call(|| {
        let frequency = required(frequency, "frequency", function)?;
        let counter = required(counter, "counter", function)?;
        let seconds = required(seconds, "seconds", function)?;
        let microseconds = required(microseconds, "microseconds", function)?;
        let info = base()?.base_info();
        // SAFETY: all four are non-NULL and, by this function's contract, valid.
        unsafe {
            put(frequency, info.frequency);
            put(counter, info.counter);
            put(seconds, info.seconds);
            put(microseconds, info.microseconds);
        }
        Ok(())
    })
}

/// IBMTS `calcTimeStamp` of the segment `base` yields, with the seconds in
/// `S`: `u32` as IBMTS had them (an overflow error past 2106, naming the
/// 64-bit variant of `function`), or `u64`.
///
/// # Safety
/// `seconds` must be NULL or valid for writing one `S`, `microseconds` NULL or
/// valid for writing one `u32`.
pub(crate) unsafe fn calc_time_stamp<'a, S: TryFrom<u64>>(
    function: &str,
    base: impl FnOnce() -> Result<&'a SharedBase, Failure>,
    seconds: *mut S,
    microseconds: *mut u32,
) -> c_int {
    status_call(|| {
        let seconds = required(seconds, "seconds", function)?;
        let microseconds = required(microseconds, "microseconds", function)?;
        let ts = base()?.calc_time_stamp();
        let secs = narrow_seconds(ts.seconds, function)?;
        // SAFETY: both non-NULL and valid by this function's contract.
        unsafe {
            put(seconds, secs);
            put(microseconds, ts.microseconds);
        }
        Ok(())
    })
}

/// The seconds in the caller's type, or the overflow failure that names the
/// 64-bit function to use instead (only the 32-bit one can fail).
pub(crate) fn narrow_seconds<S: TryFrom<u64>>(seconds: u64, function: &str) -> Result<S, Failure> {
    S::try_from(seconds).map_err(|_| {
        Failure::new(
            HrtsStatus::E_OVERFLOW,
            format!(
                "{function}: {seconds} seconds since the epoch do not fit in 32 bits; \
                 use {function}64"
            ),
        )
    })
}

/// Runs the attach checks again on the segment `base` yields: its header and
/// active line, as this process attached to them. `HRTS_E_CORRUPT` (the
/// message says what is damaged) if they no longer hold.
pub(crate) fn validate<'a>(base: impl FnOnce() -> Result<&'a SharedBase, Failure>) -> c_int {
    status_call(|| Ok(base()?.validate()?))
}

/// Copies the name of the segment `base` yields into `buf` as a C string, or
/// says how large `buf` must be.
///
/// # Safety
/// `buf` must be NULL or valid for writing `len` bytes.
pub(crate) unsafe fn segment_name<'a>(
    function: &str,
    base: impl FnOnce() -> Result<&'a SharedBase, Failure>,
    buf: *mut c_char,
    len: usize,
) -> c_int {
    // SAFETY: `buf` is NULL or valid for `len` bytes, by the caller's contract.
    unsafe {
        copy_text(
            function,
            "the name",
            || Ok(base()?.name().to_string()),
            buf,
            len,
        )
    }
}

/// Copies `text` into `buf` as a NUL-terminated string, or fails with
/// `HRTS_E_BUFFER_TOO_SMALL` (saying the size needed) and writes nothing.
///
/// # Safety
/// `buf` must be NULL or valid for writing `len` bytes.
pub(crate) unsafe fn copy_text(
    function: &str,
    what: &str,
    text: impl FnOnce() -> Result<String, Failure>,
    buf: *mut c_char,
    len: usize,
) -> c_int {
    status_call(|| {
        let buf = required(buf, "buf", function)?;
        let text = text()?;
        let bytes = text.as_bytes();
        if len < bytes.len() + 1 {
            return Err(Failure::new(
                HrtsStatus::E_BUFFER_TOO_SMALL,
                format!(
                    "{function}: the buffer holds {len} bytes, {what} needs {}",
                    bytes.len() + 1
                ),
            ));
        }
        let dst = buf.as_ptr().cast::<u8>();
        // SAFETY: `buf` is valid for `len` bytes (contract) and len > bytes.len(),
        // so both writes stay inside it; the text is our own String, which
        // cannot overlap caller memory.
        unsafe {
            std::ptr::copy_nonoverlapping(bytes.as_ptr(), dst, bytes.len());
            dst.add(bytes.len()).write(0);
        }
        Ok(())
    })
}

/// The body of the bounded-stamp calls: all three outputs checked before the
/// segment is touched, then the interval and its status written.
///
/// # Safety
/// Each pointer must be NULL or aligned and valid for one write of its type.
pub(crate) unsafe fn bounded<'a>(
    function: &str,
    base: impl FnOnce() -> Result<&'a SharedBase, Failure>,
    earliest: *mut u64,
    latest: *mut u64,
    status: *mut u32,
) -> c_int {
    status_call(|| {
        let e = required(earliest, "earliest", function)?;
        let l = required(latest, "latest", function)?;
        let s = required(status, "status", function)?;
        let b = base()?.now_bounded()?;
        // SAFETY: non-NULL, and valid by this function's contract.
        unsafe {
            put(e, b.earliest);
            put(l, b.latest);
            put(s, b.status.code());
        }
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seconds_past_2106_overflow_instead_of_wrapping() {
        let f = "hrts_calc_time_stamp";
        assert_eq!(narrow_seconds::<u32>(u32::MAX as u64, f).unwrap(), u32::MAX);
        let err = narrow_seconds::<u32>(u32::MAX as u64 + 1, f).unwrap_err();
        assert_eq!(err.status, HrtsStatus::E_OVERFLOW);
        assert!(err.message.contains("use hrts_calc_time_stamp64"));
        assert_eq!(narrow_seconds::<u64>(u64::MAX, f).unwrap(), u64::MAX);
    }
}
