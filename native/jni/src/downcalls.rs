//! The hot paths once more as plain C functions, for the JDK 22+ FFM downcalls
//! of `io.hrts.FfmHandles` (`Linker.Option.critical(false)`; the multi-release
//! jar's `META-INF/versions/22`). A critical downcall skips the JVM's
//! thread-state transition and its memory fence, which is most of what a JNI
//! call costs where a locked instruction is slow (issue 41: 10.4 ns an empty
//! JNI call, 2.7 ns a critical downcall, on an Intel Xeon guest).
//!
//! Each returns the value of the JNI export of the same name in
//! [`crate::exports`], from the same per-process segment
//! (`process::global_if_open`), or [`FAILED`]: the segment is not open, the
//! call failed, or a panic was caught here (no panic crosses this boundary).
//! There is no `JNIEnv` to throw with, and a critical function must not call
//! back into the JVM; so on [`FAILED`] the Java side makes the JNI call, which
//! returns the value or throws the `HrtsException` that says what happened.
//! A true value equal to [`FAILED`] (a `ticks` or `ticksToNanos` value can be
//! anything) only costs that second call, which returns it again.
//!
//! The names are listed in `io.hrts.Native.DOWNCALLS`; the JUnit tests check
//! that the library exports exactly these and the JNI functions.

use crate::calls;
use hrts_core::{process, SharedBase};
use jni::sys::jlong;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// What a downcall returns when it has no value to give: Java then asks the
/// JNI export, which throws the failure (`io.hrts.FfmHandles.FAILED`).
pub(crate) const FAILED: jlong = jlong::MIN;

/// `f` on the open segment, inside `catch_unwind`; [`FAILED`] if the segment
/// is not open or `f` panicked. On the normal path a load of the segment
/// pointer, a predictable branch and `f`, as [`crate::boundary::stamp`].
#[inline(always)]
fn on_segment(f: impl FnOnce(&SharedBase) -> jlong) -> jlong {
    let Some(b) = process::global_if_open() else {
        return FAILED;
    };
    // AssertUnwindSafe: after a panic we only report it (by FAILED); the
    // core's shared state is atomics whose invariants do not depend on a call
    // completing.
    catch_unwind(AssertUnwindSafe(|| f(b))).unwrap_or(FAILED)
}

/// `Native.epochNanos()` as a downcall.
#[no_mangle]
pub extern "C" fn hrts_jni_ffm_epoch_nanos() -> jlong {
    on_segment(calls::epoch_nanos)
}

/// `Native.epochNanosOrdered()` as a downcall.
#[no_mangle]
pub extern "C" fn hrts_jni_ffm_epoch_nanos_ordered() -> jlong {
    on_segment(calls::epoch_nanos_ordered)
}

/// `Native.epochMicros()` as a downcall.
#[no_mangle]
pub extern "C" fn hrts_jni_ffm_epoch_micros() -> jlong {
    on_segment(calls::epoch_micros)
}

/// `Native.ticks()` as a downcall.
#[no_mangle]
pub extern "C" fn hrts_jni_ffm_ticks() -> jlong {
    on_segment(calls::ticks)
}

/// `Native.ticksToNanos(ticks)` as a downcall.
#[no_mangle]
pub extern "C" fn hrts_jni_ffm_ticks_to_nanos(ticks: jlong) -> jlong {
    on_segment(|b| calls::ticks_to_nanos(b, ticks))
}

/// `Native.unique()` as a downcall. A host page reader keeps the unique state
/// in its per-user segment, opened on the first call; the Java side makes
/// that first call by JNI (a critical function should be short in every
/// case), and an error here (the segment could not be opened) is [`FAILED`].
#[no_mangle]
pub extern "C" fn hrts_jni_ffm_unique() -> jlong {
    // AssertUnwindSafe: as in `on_segment`.
    match catch_unwind(AssertUnwindSafe(calls::unique)) {
        Ok(Ok(v)) => v,
        _ => FAILED,
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Before the segment is open every downcall says FAILED; after, each gives
    /// what its JNI twin's body gives. Called by the test in `calls` that opens
    /// the process's segment, before and after it opens it.
    pub(crate) fn check(open: Option<&SharedBase>) {
        let Some(b) = open else {
            for v in [
                hrts_jni_ffm_epoch_nanos(),
                hrts_jni_ffm_epoch_nanos_ordered(),
                hrts_jni_ffm_epoch_micros(),
                hrts_jni_ffm_ticks(),
                hrts_jni_ffm_ticks_to_nanos(0),
                hrts_jni_ffm_unique(),
            ] {
                assert_eq!(v, FAILED);
            }
            return;
        };
        let a = calls::epoch_nanos(b);
        let f = hrts_jni_ffm_epoch_nanos();
        let o = hrts_jni_ffm_epoch_nanos_ordered();
        let c = calls::epoch_nanos_ordered(b);
        assert!(a <= f && f <= o && o <= c, "{a} {f} {o} {c}");
        let us = hrts_jni_ffm_epoch_micros();
        assert!(us >= a / 1000 && us <= calls::epoch_nanos(b) / 1000 + 1);
        let t = hrts_jni_ffm_ticks();
        let later = calls::ticks(b);
        assert!(
            (later as u64).wrapping_sub(t as u64) < 1 << 40,
            "{t} {later}"
        );
        // The same line unless a tie came between the two (then once more).
        assert!(
            (0..3).any(|_| hrts_jni_ffm_ticks_to_nanos(t) == calls::ticks_to_nanos(b, t)),
            "ticksToNanos({t})"
        );
        let u1 = calls::unique().unwrap();
        let u2 = hrts_jni_ffm_unique();
        let u3 = calls::unique().unwrap();
        assert!(u1 < u2 && u2 < u3, "{u1} {u2} {u3}");
    }
}
