//! The library itself: its version, the errors of the calls (the thread's last
//! message, the names of the status codes), its copyright, and the ids of the
//! calling process and thread.

use crate::boundary::c_calls;
use crate::status::{last_error_ptr, HrtsStatus};
use hrts_core::ibmts;
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

c_calls! {
    /// The library's logic version, packed a.b.c.d into 16 bits each as IBMTS did
    /// (`0x0001000000000005` is 1.0.0.5): the crate's major.minor.patch and the
    /// shared segment's layout version. Compare it with
    /// `HRTS_PACK_VERSION(HRTS_VERSION_MAJOR, ..., HRTS_VERSION_LAYOUT)` to detect a
    /// header/library mismatch. Never fails.
    #[on_panic(ibmts::LOGIC_VERSION)]
    fn hrts_get_version() -> u64 {
        ibmts::LOGIC_VERSION
    }

    /// This thread's last error message: the message of the most recent failing
    /// hrts call on this thread ("" if none failed yet), like errno it is not
    /// cleared by a successful call. Never NULL. The string belongs to hrts and
    /// stays valid until the next hrts call on this thread.
    #[on_panic(c"".as_ptr())]
    fn hrts_last_error() -> *const c_char {
        last_error_ptr()
    }

    /// The name of a status code (`"HRTS_E_NULL_POINTER"` for
    /// `HRTS_E_NULL_POINTER`), or `"HRTS_E_UNKNOWN_STATUS"` for a value that is not
    /// one. A static string; never NULL.
    #[on_panic(c"HRTS_E_UNKNOWN_STATUS".as_ptr())]
    fn hrts_status_name(status: c_int) -> *const c_char {
        let name = usize::try_from(status)
            .ok()
            .and_then(|i| HrtsStatus::ALL.get(i))
            .map_or(c"HRTS_E_UNKNOWN_STATUS", |s| s.name());
        name.as_ptr()
    }

    /// The copyright line (IBMTS `getCopyright`). A static string; never NULL.
    #[on_panic(c"".as_ptr())]
    fn hrts_copyright() -> *const c_char {
        static COPYRIGHT: OnceLock<CString> = OnceLock::new();
        COPYRIGHT
            .get_or_init(|| CString::new(ibmts::COPYRIGHT).unwrap_or_default())
            .as_ptr()
    }

    /// The calling process's id (IBMTS `getOSProcessID`). Never fails.
    #[on_panic(0)]
    fn hrts_get_pid() -> u32 {
        hrts_core::process::pid()
    }

    /// The calling thread's Linux thread id (`gettid`; IBMTS `getOSThreadID`).
    /// Never fails.
    #[on_panic(0)]
    fn hrts_get_thread_id() -> u32 {
        hrts_core::process::thread_id()
    }
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
            "update the HRTS_VERSION_* constants in native/capi/src/library.rs, then bless the header"
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
    fn pid_thread_id_and_copyright() {
        assert_eq!(hrts_get_pid(), std::process::id());
        assert_ne!(hrts_get_thread_id(), 0);
        assert!(c_str(hrts_copyright()).contains("hrts"));
    }
}
