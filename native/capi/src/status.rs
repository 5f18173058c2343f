//! Status codes, their names, and the per-thread last-error message.

use hrts_core::ErrorKind;
use std::cell::RefCell;
use std::ffi::{c_char, c_int, CStr, CString};

/// What every status-returning hrts function returns (as an `int`).
///
/// `HRTS_SUCCESS` is 0, as IBMTS's `IBMTS_SUCCESS`; every failure is positive and
/// leaves a message for `hrts_last_error()`. The values are stable: new codes are
/// only ever added at the end.
///
/// (In Rust the variants carry C's names without the `HRTS_` prefix, which
/// cbindgen adds, so C sees `HRTS_E_NULL_POINTER` and nothing else.)
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[allow(non_camel_case_types)]
pub enum HrtsStatus {
    /// The call succeeded.
    SUCCESS = 0,
    /// An argument or configuration value (e.g. HRTS_SEGMENT,
    /// HRTS_WRAP_THRESHOLD) is out of range or malformed.
    E_INVALID_ARGUMENT = 1,
    /// The operating system refused a call; the message holds errno's text.
    E_OS = 2,
    /// The shared memory object exists but is not an hrts segment.
    E_FOREIGN = 3,
    /// The shared segment is smaller than its header.
    E_TRUNCATED = 4,
    /// The shared segment was written by an incompatible layout version.
    E_VERSION = 5,
    /// The shared segment's contents fail validation.
    E_CORRUPT = 6,
    /// The shared segment belongs to another user or has an unsafe mode.
    E_PERMISSION = 7,
    /// Waiting for another process (the creator or a writer) took too long.
    E_TIMEOUT = 8,
    /// No counter source could be used or calibrated.
    E_SOURCE = 9,
    /// A persisted file is missing data or damaged.
    E_PERSIST = 10,
    /// A required pointer argument (an output or a segment handle) was NULL;
    /// nothing was written.
    E_NULL_POINTER = 11,
    /// hrts panicked internally; the panic was caught at the C boundary.
    E_PANIC = 12,
    /// The caller's buffer is too small; the message says how large it must be.
    E_BUFFER_TOO_SMALL = 13,
    /// The value does not fit the requested type (e.g. seconds past 2106 in
    /// `hrts_calc_time_stamp`'s 32-bit field); use the 64-bit variant.
    E_OVERFLOW = 14,
    /// An error kind newer than this C ABI.
    E_UNKNOWN = 15,
    /// A fixed-size shared area (statistics cells, running shared timer
    /// instances) has no room left.
    E_FULL = 16,
    /// No error bound can be given for a stamp: the system clock is not
    /// synchronized, the bound's source went silent past void-after, or the
    /// segment is frozen (the message says which).
    E_UNSYNCHRONIZED = 17,
}

impl HrtsStatus {
    /// Every status, in value order (for `hrts_status_name` and the tests).
    pub(crate) const ALL: [HrtsStatus; 18] = [
        HrtsStatus::SUCCESS,
        HrtsStatus::E_INVALID_ARGUMENT,
        HrtsStatus::E_OS,
        HrtsStatus::E_FOREIGN,
        HrtsStatus::E_TRUNCATED,
        HrtsStatus::E_VERSION,
        HrtsStatus::E_CORRUPT,
        HrtsStatus::E_PERMISSION,
        HrtsStatus::E_TIMEOUT,
        HrtsStatus::E_SOURCE,
        HrtsStatus::E_PERSIST,
        HrtsStatus::E_NULL_POINTER,
        HrtsStatus::E_PANIC,
        HrtsStatus::E_BUFFER_TOO_SMALL,
        HrtsStatus::E_OVERFLOW,
        HrtsStatus::E_UNKNOWN,
        HrtsStatus::E_FULL,
        HrtsStatus::E_UNSYNCHRONIZED,
    ];

    /// The C name of the status, as the header spells it.
    pub(crate) fn name(self) -> &'static CStr {
        match self {
            HrtsStatus::SUCCESS => c"HRTS_SUCCESS",
            HrtsStatus::E_INVALID_ARGUMENT => c"HRTS_E_INVALID_ARGUMENT",
            HrtsStatus::E_OS => c"HRTS_E_OS",
            HrtsStatus::E_FOREIGN => c"HRTS_E_FOREIGN",
            HrtsStatus::E_TRUNCATED => c"HRTS_E_TRUNCATED",
            HrtsStatus::E_VERSION => c"HRTS_E_VERSION",
            HrtsStatus::E_CORRUPT => c"HRTS_E_CORRUPT",
            HrtsStatus::E_PERMISSION => c"HRTS_E_PERMISSION",
            HrtsStatus::E_TIMEOUT => c"HRTS_E_TIMEOUT",
            HrtsStatus::E_SOURCE => c"HRTS_E_SOURCE",
            HrtsStatus::E_PERSIST => c"HRTS_E_PERSIST",
            HrtsStatus::E_FULL => c"HRTS_E_FULL",
            HrtsStatus::E_UNSYNCHRONIZED => c"HRTS_E_UNSYNCHRONIZED",
            HrtsStatus::E_NULL_POINTER => c"HRTS_E_NULL_POINTER",
            HrtsStatus::E_PANIC => c"HRTS_E_PANIC",
            HrtsStatus::E_BUFFER_TOO_SMALL => c"HRTS_E_BUFFER_TOO_SMALL",
            HrtsStatus::E_OVERFLOW => c"HRTS_E_OVERFLOW",
            HrtsStatus::E_UNKNOWN => c"HRTS_E_UNKNOWN",
        }
    }

    /// The status a core error kind is reported as.
    pub(crate) fn of_kind(kind: ErrorKind) -> HrtsStatus {
        match kind {
            ErrorKind::InvalidArgument => HrtsStatus::E_INVALID_ARGUMENT,
            ErrorKind::Os => HrtsStatus::E_OS,
            ErrorKind::Foreign => HrtsStatus::E_FOREIGN,
            ErrorKind::Truncated => HrtsStatus::E_TRUNCATED,
            ErrorKind::Version => HrtsStatus::E_VERSION,
            ErrorKind::Corrupt => HrtsStatus::E_CORRUPT,
            ErrorKind::Permission => HrtsStatus::E_PERMISSION,
            ErrorKind::Timeout => HrtsStatus::E_TIMEOUT,
            ErrorKind::Source => HrtsStatus::E_SOURCE,
            ErrorKind::Persist => HrtsStatus::E_PERSIST,
            ErrorKind::Full => HrtsStatus::E_FULL,
            ErrorKind::Unsynchronized => HrtsStatus::E_UNSYNCHRONIZED,
            // ErrorKind is non-exhaustive: a kind added to the core later must
            // still map to *some* failure, never to success.
            _ => HrtsStatus::E_UNKNOWN,
        }
    }
}

/// A failed call: the status to return and the message to leave behind.
#[derive(Debug)]
pub(crate) struct Failure {
    pub status: HrtsStatus,
    pub message: String,
}

impl Failure {
    pub fn new(status: HrtsStatus, message: impl Into<String>) -> Failure {
        Failure {
            status,
            message: message.into(),
        }
    }

    pub fn null(arg: &str, function: &str) -> Failure {
        Failure::new(
            HrtsStatus::E_NULL_POINTER,
            format!("{function}: argument `{arg}` is NULL; pass a pointer to writable storage"),
        )
    }

    pub fn null_handle(function: &str) -> Failure {
        Failure::new(
            HrtsStatus::E_NULL_POINTER,
            format!(
                "{function}: the segment handle is NULL; pass the handle hrts_segment_open \
                 gave you (and check that call's status)"
            ),
        )
    }
}

impl From<hrts_core::Error> for Failure {
    fn from(e: hrts_core::Error) -> Failure {
        Failure::new(HrtsStatus::of_kind(e.kind()), e.message())
    }
}

thread_local! {
    // One message per thread, so concurrent callers never see each other's errors.
    // It starts empty (a valid C string) so hrts_last_error never returns NULL.
    static LAST_ERROR: RefCell<CString> = RefCell::new(CString::default());
}

/// Records `message` as this thread's last error. Interior NULs (which a C
/// string cannot carry) are shown as U+FFFD rather than truncating the message.
pub(crate) fn set_last_error(message: &str) {
    let c = CString::new(message.replace('\0', "\u{fffd}")).unwrap_or_default();
    // try_with: during thread teardown the slot may be gone; losing the message
    // then is better than aborting.
    let _ = LAST_ERROR.try_with(|slot| *slot.borrow_mut() = c);
}

/// A pointer to this thread's last error message, valid until the next hrts
/// call on this thread changes it.
pub(crate) fn last_error_ptr() -> *const c_char {
    LAST_ERROR
        .try_with(|slot| slot.borrow().as_ptr())
        .unwrap_or(c"".as_ptr())
}

/// The status as the `int` every exported function returns.
pub(crate) fn code(status: HrtsStatus) -> c_int {
    status as c_int
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_the_prefixed_variant_names() {
        for s in HrtsStatus::ALL {
            assert_eq!(s.name().to_str().unwrap(), format!("HRTS_{s:?}"));
        }
    }

    #[test]
    fn every_error_kind_maps_to_a_failure() {
        let mut seen = std::collections::HashSet::new();
        for k in ErrorKind::ALL {
            let s = HrtsStatus::of_kind(k);
            assert_ne!(s, HrtsStatus::SUCCESS);
            assert!(seen.insert(s), "{k:?} shares a status");
        }
    }
}
