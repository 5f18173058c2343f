//! hrts JNI glue: the native side of `io.hrts.HighResTimestamp` (`libhrts_jni.so`).
//!
//! # Export pattern
//!
//! Hot paths (a stamp read) are plain `extern "system"` functions with the raw
//! `jni::sys` signature `(env, class) -> primitive`. They make no JNI API calls,
//! allocate nothing and cannot panic, so they need no `EnvUnowned`/`with_env`
//! wrapper (which costs ~20 ns per call) and no `catch_unwind`:
//!
//! ```ignore
//! #[no_mangle]
//! pub extern "system" fn Java_io_hrts_HighResTimestamp_name(
//!     _env: *mut JNIEnv,
//!     _class: jclass,
//! ) -> jlong { /* infallible, non-panicking body */ }
//! ```
//!
//! Anything that can fail or panic must go through one panic boundary
//! (`catch_unwind` or jni's `EnvUnowned::with_env`) and turn the error into a Java
//! exception; no panic may cross this FFI boundary.

use jni::sys::{jclass, jint, jlong, JNIEnv};

/// `static native long getEpochNanoseconds()`: nanoseconds since the Unix epoch.
///
/// For now `CLOCK_REALTIME`; it will read the shared time base once that exists.
/// Saturates at `jlong::MAX` (year 2262) rather than wrapping negative.
#[no_mangle]
pub extern "system" fn Java_io_hrts_HighResTimestamp_getEpochNanoseconds(
    _env: *mut JNIEnv,
    _class: jclass,
) -> jlong {
    let ns = hrts_core::os::realtime_ns();
    if ns > jlong::MAX as u64 {
        jlong::MAX
    } else {
        ns as jlong
    }
}

/// `static native int getOSProcessID()`: the calling process's id.
#[no_mangle]
pub extern "system" fn Java_io_hrts_HighResTimestamp_getOSProcessID(
    _env: *mut JNIEnv,
    _class: jclass,
) -> jint {
    // Linux pids fit in an i32 (pid_max <= 2^22); the cast is a bit reinterpretation.
    hrts_core::os::pid() as jint
}

/// `static native int getOSThreadID()`: the calling thread's Linux thread id (gettid).
#[no_mangle]
pub extern "system" fn Java_io_hrts_HighResTimestamp_getOSThreadID(
    _env: *mut JNIEnv,
    _class: jclass,
) -> jint {
    hrts_core::os::thread_id() as jint
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exports_return_plausible_values() {
        let env = std::ptr::null_mut();
        let class = std::ptr::null_mut();
        let ns = Java_io_hrts_HighResTimestamp_getEpochNanoseconds(env, class);
        // After 2020-01-01 and before 2200-01-01.
        assert!(ns > 1_577_836_800_000_000_000 && ns < 7_258_118_400_000_000_000);
        assert_eq!(
            Java_io_hrts_HighResTimestamp_getOSProcessID(env, class) as u32,
            std::process::id()
        );
        let main_tid = Java_io_hrts_HighResTimestamp_getOSThreadID(env, class);
        let other_tid = std::thread::spawn(move || {
            Java_io_hrts_HighResTimestamp_getOSThreadID(std::ptr::null_mut(), std::ptr::null_mut())
        })
        .join()
        .unwrap();
        assert_ne!(main_tid, other_tid);
    }
}
