//! The floor a JNI stamp is measured against: `io.hrts.BenchHooks.emptyNative()`
//! (java/benchmarks), an empty static native returning a constant, with the
//! same ABI as the hot paths of `libhrts_jni.so`. Only the JMH task
//! builds and loads this library; the jar and `libhrts_jni.so` do not carry it.

use jni::sys::{jclass, jlong, JNIEnv};

/// `static native long emptyNative()`. Nothing in it can panic.
#[no_mangle]
pub extern "system" fn Java_io_hrts_BenchHooks_emptyNative(
    _env: *mut JNIEnv,
    _class: jclass,
) -> jlong {
    0
}
