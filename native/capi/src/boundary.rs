//! The one panic boundary every exported function goes through.
//!
//! Unwinding out of an `extern "C"` function aborts the process (or, before Rust
//! 1.81, was undefined behaviour), so no panic may leave this crate. Every export
//! wraps its body in [`status_call`] or [`value_call`].

use crate::status::{code, set_last_error, Failure, HrtsStatus};
use std::ffi::c_int;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// Runs `f` and returns its result, or `on_panic` if it panicked (leaving the
/// panic's message as the thread's last error). This is the only `catch_unwind`
/// in the crate.
#[inline(always)]
pub(crate) fn value_call<T>(on_panic: T, f: impl FnOnce() -> T) -> T {
    // AssertUnwindSafe: after a panic we only report it; no state the closure
    // may have left half-updated is read again (the core's shared state is all
    // atomics whose invariants do not depend on a call completing).
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(v) => v,
        Err(payload) => {
            set_last_error(&panic_message(payload.as_ref()));
            on_panic
        }
    }
}

/// Runs a fallible `f` and turns its outcome into a status code: 0 on success,
/// the failure's status (with its message recorded) otherwise, `HRTS_E_PANIC` if
/// it panicked.
#[inline(always)]
pub(crate) fn status_call(f: impl FnOnce() -> Result<(), Failure>) -> c_int {
    value_call(code(HrtsStatus::E_PANIC), || match f() {
        Ok(()) => code(HrtsStatus::SUCCESS),
        Err(failure) => fail(failure),
    })
}

#[cold]
#[inline(never)]
fn fail(failure: Failure) -> c_int {
    set_last_error(&failure.message);
    code(failure.status)
}

use hrts_core::panic_message;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::status::last_error_ptr;
    use std::ffi::CStr;

    fn last_error() -> String {
        // SAFETY: last_error_ptr always returns a valid NUL-terminated string
        // owned by this thread's slot, unchanged until the next set_last_error.
        unsafe { CStr::from_ptr(last_error_ptr()) }
            .to_string_lossy()
            .into_owned()
    }

    #[test]
    fn a_panic_becomes_a_status_and_a_message() {
        let rc = status_call(|| panic!("boom {}", 42));
        assert_eq!(rc, HrtsStatus::E_PANIC as c_int);
        assert!(last_error().contains("boom 42"), "{}", last_error());

        let v = value_call(7u64, || panic!("static message"));
        assert_eq!(v, 7);
        assert!(last_error().contains("static message"));
    }

    #[test]
    fn a_failure_sets_the_message_and_success_keeps_it() {
        let rc = status_call(|| Err(Failure::new(HrtsStatus::E_TIMEOUT, "too slow")));
        assert_eq!(rc, HrtsStatus::E_TIMEOUT as c_int);
        assert_eq!(last_error(), "too slow");
        // errno-like: a later success does not erase the last failure's message.
        assert_eq!(status_call(|| Ok(())), 0);
        assert_eq!(last_error(), "too slow");
    }

    #[test]
    fn messages_are_per_thread() {
        set_last_error("main thread");
        let other = std::thread::spawn(|| {
            let before = last_error();
            set_last_error("other thread");
            (before, last_error())
        })
        .join()
        .unwrap();
        assert_eq!(other, (String::new(), "other thread".to_string()));
        assert_eq!(last_error(), "main thread");
    }

    #[test]
    fn interior_nul_does_not_lose_the_message() {
        set_last_error("a\0b");
        assert_eq!(last_error(), "a\u{fffd}b");
    }
}
