//! hrts JNI glue: the native side of `io.hrts.HighResTimestamp` (`libhrts_jni.so`).
//!
//! # Export pattern
//!
//! Hot paths (a stamp read) are plain `extern "system"` functions with the raw
//! `jni::sys` signature `(env, class) -> primitive`. On the normal path they make
//! no JNI API call and allocate nothing: they read the segment through
//! [`api::global_if_open`], which the Java side guarantees is open (it calls
//! `nOpen` once before the first stamp, see `HighResTimestamp.ensureOpen`).
//!
//! Every export runs its body inside [`catch_unwind`] (free when nothing panics),
//! so no panic crosses this FFI boundary: a panic, a core [`Error`] or a segment
//! that is not open becomes an `io.hrts.HrtsException` thrown through the JNI
//! function table, on the cold path only. [`kind_name`] is the one
//! error → exception table.
//!
//! The JNI API is used through the raw `jni::sys` function table (no `with_env`
//! wrapper: it costs ~20 ns a call), from the few non-hot exports only.

// The exports take raw JNI pointers from the JVM, their only caller, which
// guarantees them valid for the call; marking them `unsafe fn` would change nothing
// for that caller, so the lint about dereferencing pointer arguments is off.
#![allow(clippy::not_unsafe_ptr_arg_deref)]

use hrts_core::api;
use hrts_core::{Error, ErrorKind, SharedBase};
use jni::sys::{jbyteArray, jclass, jint, jlong, jlongArray, jstring, jvalue, JNIEnv};
use std::any::Any;
use std::ffi::{CStr, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};

/// The exception every failure is thrown as.
const EXCEPTION_CLASS: &CStr = c"io/hrts/HrtsException";
/// Its `(String kind, String message)` constructor.
const EXCEPTION_CTOR: &CStr = c"(Ljava/lang/String;Ljava/lang/String;)V";

/// Number of values `nBaseInfo` / `nSetBaseInfo` write: frequency, counter,
/// seconds, microseconds, nanoseconds, generation.
const BASE_INFO_LEN: usize = 6;

/// Calls a function of the JNI function table: `jni!(env, Name, args...)`.
/// Must be used inside `unsafe`: the caller vouches that `env` is the current
/// thread's valid `JNIEnv` and that the arguments meet the function's contract.
macro_rules! jni {
    ($env:expr, $f:ident $(, $a:expr)*) => {
        ((**$env).v1_2.$f)($env $(, $a)*)
    };
}

// ---------------------------------------------------------------- failures

/// A failure on its way to Java: the exception's kind and message.
struct Failure {
    kind: &'static str,
    message: String,
}

impl From<Error> for Failure {
    fn from(e: Error) -> Failure {
        Failure {
            kind: kind_name(e.kind()),
            message: e.message().to_string(),
        }
    }
}

/// The one error → exception table: every core [`ErrorKind`] is thrown as
/// `io.hrts.HrtsException` with this `getKind()`.
fn kind_name(kind: ErrorKind) -> &'static str {
    match kind {
        ErrorKind::InvalidArgument => "INVALID_ARGUMENT",
        ErrorKind::Os => "OS",
        ErrorKind::Foreign => "FOREIGN",
        ErrorKind::Truncated => "TRUNCATED",
        ErrorKind::Version => "VERSION",
        ErrorKind::Corrupt => "CORRUPT",
        ErrorKind::Permission => "PERMISSION",
        ErrorKind::Timeout => "TIMEOUT",
        ErrorKind::Source => "SOURCE",
        ErrorKind::Persist => "PERSIST",
        _ => "OTHER",
    }
}

/// Kind of a panic caught at the boundary.
const KIND_INTERNAL: &str = "INTERNAL";
/// Kind of a native call made before the segment was opened (the Java side
/// prevents it; reported rather than trusted).
const KIND_NOT_OPEN: &str = "NOT_OPEN";

fn not_open() -> Failure {
    Failure {
        kind: KIND_NOT_OPEN,
        message: "hrts: the time-stamp segment is not open in this process (call \
                  HighResTimestamp.open() first)"
            .to_string(),
    }
}

fn panic_failure(payload: &(dyn Any + Send)) -> Failure {
    Failure {
        kind: KIND_INTERNAL,
        message: hrts_core::error::panic_message(payload),
    }
}

/// The segment, once `nOpen` succeeded.
#[inline(always)]
fn base() -> Result<&'static SharedBase, Failure> {
    api::global_if_open().ok_or_else(not_open)
}

// ---------------------------------------------------------------- JNI helpers

/// Java's "modified UTF-8" for `NewStringUTF`: NUL as C0 80 and characters
/// beyond the BMP as two 3-byte surrogates (plain UTF-8 would trip -Xcheck:jni).
fn modified_utf8(s: &str) -> CString {
    let mut out = Vec::with_capacity(s.len() + 1);
    for c in s.chars() {
        match c as u32 {
            0 => out.extend_from_slice(&[0xC0, 0x80]),
            0x1_0000.. => {
                let mut units = [0u16; 2];
                for &u in c.encode_utf16(&mut units).iter() {
                    out.extend_from_slice(&[
                        0xE0 | (u >> 12) as u8,
                        0x80 | ((u >> 6) & 0x3F) as u8,
                        0x80 | (u & 0x3F) as u8,
                    ]);
                }
            }
            _ => {
                let mut buf = [0u8; 4];
                out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
            }
        }
    }
    // No byte is 0 (NUL was encoded as C0 80), so this cannot fail.
    CString::new(out).unwrap_or_default()
}

/// A new Java string (null with an OutOfMemoryError pending if the JVM cannot).
///
/// # Safety
/// `env` must be the current thread's valid `JNIEnv` with no exception pending.
unsafe fn new_string(env: *mut JNIEnv, s: &str) -> jstring {
    let c = modified_utf8(s);
    // SAFETY: per this function's contract; `c` is NUL-terminated modified UTF-8
    // and outlives the call.
    unsafe { jni!(env, NewStringUTF, c.as_ptr()) }
}

/// Throws `failure` as an `io.hrts.HrtsException(kind, message)`, unless an
/// exception is already pending (that one is more precise: it came from the JVM).
#[cold]
#[inline(never)]
fn throw(env: *mut JNIEnv, failure: &Failure) {
    if env.is_null() {
        return; // only in this crate's unit tests
    }
    // SAFETY: `env` is the JNIEnv the JVM passed to the native method running on
    // this thread; every function used is legal with or without a pending
    // exception only after the ExceptionCheck that precedes it, and every object
    // passed was just returned non-null by the JVM.
    unsafe {
        if jni!(env, ExceptionCheck) {
            return;
        }
        let class = jni!(env, FindClass, EXCEPTION_CLASS.as_ptr());
        if class.is_null() {
            return; // NoClassDefFoundError is pending
        }
        let ctor = jni!(
            env,
            GetMethodID,
            class,
            c"<init>".as_ptr(),
            EXCEPTION_CTOR.as_ptr()
        );
        if ctor.is_null() {
            return; // NoSuchMethodError is pending
        }
        let kind = new_string(env, failure.kind);
        if kind.is_null() {
            return;
        }
        let message = new_string(env, &failure.message);
        if message.is_null() {
            return;
        }
        let args = [jvalue { l: kind }, jvalue { l: message }];
        let exception = jni!(env, NewObjectA, class, ctor, args.as_ptr());
        if !exception.is_null() {
            jni!(env, Throw, exception);
        }
    }
}

/// Runs a fallible export body inside the panic boundary; on an error or a
/// panic throws it and returns `on_error` (which Java never sees: an exception
/// is pending).
#[inline(always)]
fn guarded<T>(env: *mut JNIEnv, on_error: T, f: impl FnOnce() -> Result<T, Failure>) -> T {
    // AssertUnwindSafe: after a panic we only report it; the core's shared state
    // is atomics whose invariants do not depend on a call completing.
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(v)) => v,
        Ok(Err(failure)) => {
            throw(env, &failure);
            on_error
        }
        Err(payload) => {
            throw(env, &panic_failure(payload.as_ref()));
            on_error
        }
    }
}

/// The hot-path boundary: `f` on the open segment. On the normal path this is a
/// load of the segment pointer, a predictable branch and `f`; no JNI call.
#[inline(always)]
fn hot(env: *mut JNIEnv, f: impl FnOnce(&'static SharedBase) -> jlong) -> jlong {
    guarded(env, 0, || base().map(f))
}

/// Epoch ns as a jlong, saturating in 2262 rather than wrapping negative.
#[inline(always)]
fn to_jlong(v: u64) -> jlong {
    v.min(jlong::MAX as u64) as jlong
}

/// Writes the six base values into `dst[0..6]` (Java checked its length; the JVM
/// throws ArrayIndexOutOfBoundsException, not crashes, if it were short).
fn put_base_info(env: *mut JNIEnv, dst: jlongArray, b: hrts_core::BaseInfo) {
    let values: [jlong; BASE_INFO_LEN] = [
        to_jlong(b.frequency),
        b.counter as jlong,
        to_jlong(b.seconds),
        to_jlong(b.microseconds),
        to_jlong(b.nanoseconds),
        to_jlong(b.generation),
    ];
    if env.is_null() {
        return; // only in this crate's unit tests
    }
    // SAFETY: `env` is this thread's JNIEnv, `dst` a long[] local reference the
    // JVM passed in (Java rejected null), `values` holds BASE_INFO_LEN jlongs;
    // an out-of-range region makes the JVM throw, it does not write.
    unsafe {
        jni!(
            env,
            SetLongArrayRegion,
            dst,
            0,
            BASE_INFO_LEN as jint,
            values.as_ptr()
        )
    }
}

mod stats;

// ---------------------------------------------------------------- exports: setup

/// `static native void nOpen(byte[] utf8NameOrNull)`: opens the process's segment
/// (`api::init_global`) with the configuration of the environment (`HRTS_*`) and,
/// if given, this name. Throws HrtsException with the core's message on failure;
/// nothing is cached, so a later call retries.
#[no_mangle]
pub extern "system" fn Java_io_hrts_HighResTimestamp_nOpen(
    env: *mut JNIEnv,
    _class: jclass,
    name: jbyteArray,
) {
    guarded(env, (), || {
        let mut cfg = hrts_core::Config::from_env()?;
        if !name.is_null() {
            // SAFETY: `env` is this thread's JNIEnv and `name` a non-null byte[]
            // the JVM passed in; the buffer has exactly `len` bytes for the copy.
            let bytes = unsafe {
                let len = jni!(env, GetArrayLength, name).max(0);
                let mut buf = vec![0i8; len as usize];
                jni!(env, GetByteArrayRegion, name, 0, len, buf.as_mut_ptr());
                buf
            };
            let bytes: Vec<u8> = bytes.into_iter().map(|b| b as u8).collect();
            cfg.name = String::from_utf8(bytes).map_err(|_| Failure {
                kind: kind_name(ErrorKind::InvalidArgument),
                message: "hrts: the segment name is not valid UTF-8".to_string(),
            })?;
        }
        api::init_global(&cfg)?;
        Ok(())
    })
}

/// `static native long nLogicVersion()`: a.b.c.d packed 16 bits each.
#[no_mangle]
pub extern "system" fn Java_io_hrts_HighResTimestamp_nLogicVersion(
    _env: *mut JNIEnv,
    _class: jclass,
) -> jlong {
    api::LOGIC_VERSION as jlong
}

/// `static native String nCopyright()`.
#[no_mangle]
pub extern "system" fn Java_io_hrts_HighResTimestamp_nCopyright(
    env: *mut JNIEnv,
    _class: jclass,
) -> jstring {
    guarded(env, std::ptr::null_mut(), || {
        // SAFETY: `env` is this thread's JNIEnv; no exception is pending on entry.
        Ok(unsafe { new_string(env, api::COPYRIGHT) })
    })
}

/// `static native int nPid()`: the calling process's id.
#[no_mangle]
pub extern "system" fn Java_io_hrts_HighResTimestamp_nPid(
    _env: *mut JNIEnv,
    _class: jclass,
) -> jint {
    // Linux pids fit in an i32 (pid_max <= 2^22); the cast is a bit reinterpretation.
    hrts_core::os::pid() as jint
}

/// `static native int nTid()`: the calling thread's Linux thread id (gettid).
#[no_mangle]
pub extern "system" fn Java_io_hrts_HighResTimestamp_nTid(
    _env: *mut JNIEnv,
    _class: jclass,
) -> jint {
    hrts_core::os::thread_id() as jint
}

// ---------------------------------------------------------------- exports: hot paths

/// `static native long nEpochNanos()`: epoch ns, unordered counter read.
#[no_mangle]
pub extern "system" fn Java_io_hrts_HighResTimestamp_nEpochNanos(
    env: *mut JNIEnv,
    _class: jclass,
) -> jlong {
    hot(env, |b| to_jlong(b.now_ns()))
}

/// `static native long nEpochNanosOrdered()`: epoch ns, ordered counter read
/// (cannot execute before earlier instructions: for stamps compared across
/// threads and processes).
#[no_mangle]
pub extern "system" fn Java_io_hrts_HighResTimestamp_nEpochNanosOrdered(
    env: *mut JNIEnv,
    _class: jclass,
) -> jlong {
    hot(env, |b| to_jlong(b.now_ns_ordered()))
}

/// `static native long nEpochMicros()`: IBMTS getEpochMicroseconds.
#[no_mangle]
pub extern "system" fn Java_io_hrts_HighResTimestamp_nEpochMicros(
    env: *mut JNIEnv,
    _class: jclass,
) -> jlong {
    hot(env, |b| to_jlong(b.epoch_micros()))
}

/// `static native long nTicks()`: a raw counter read of the segment's source.
#[no_mangle]
pub extern "system" fn Java_io_hrts_HighResTimestamp_nTicks(
    env: *mut JNIEnv,
    _class: jclass,
) -> jlong {
    hot(env, |b| b.ticks() as jlong)
}

/// `static native long nTicksToNanos(long ticks)`: the epoch ns of a counter
/// value, exact for any input against the current base. Pure: unlike
/// `SharedBase::ns_at` it never moves the shared base, whatever value a caller
/// passes (a far-future tick count must not re-base every process).
#[no_mangle]
pub extern "system" fn Java_io_hrts_HighResTimestamp_nTicksToNanos(
    env: *mut JNIEnv,
    _class: jclass,
    ticks: jlong,
) -> jlong {
    hot(env, |b| b.ns_at(ticks as u64) as jlong)
}

/// `static native long nUnique()`: a unique stamp (strictly increasing across
/// every thread of every process attached to the segment).
#[no_mangle]
pub extern "system" fn Java_io_hrts_HighResTimestamp_nUnique(
    env: *mut JNIEnv,
    _class: jclass,
) -> jlong {
    hot(env, |b| to_jlong(b.next_unique()))
}

/// `static native long nGeneration()`: the base's generation (bumped by every
/// setBaseInfo / `hrts reset` and by a re-base after a counter reset).
#[no_mangle]
pub extern "system" fn Java_io_hrts_HighResTimestamp_nGeneration(
    env: *mut JNIEnv,
    _class: jclass,
) -> jlong {
    hot(env, |b| to_jlong(b.base().generation))
}

// ---------------------------------------------------------------- exports: the rest

/// `static native void nBaseInfo(long[] dst)`: one consistent snapshot of the
/// base into dst[0..6] = frequency, counter, seconds, microseconds, ns, generation.
#[no_mangle]
pub extern "system" fn Java_io_hrts_HighResTimestamp_nBaseInfo(
    env: *mut JNIEnv,
    _class: jclass,
    dst: jlongArray,
) {
    guarded(env, (), || {
        let info = base()?.base_info();
        put_base_info(env, dst, info);
        Ok(())
    })
}

/// `static native void nSetBaseInfo(long[] dst)`: IBMTS setBaseInfo for every
/// process of the segment; the new base into dst[0..6] as `nBaseInfo`.
#[no_mangle]
pub extern "system" fn Java_io_hrts_HighResTimestamp_nSetBaseInfo(
    env: *mut JNIEnv,
    _class: jclass,
    dst: jlongArray,
) {
    guarded(env, (), || {
        let info = base()?.set_base_info()?;
        put_base_info(env, dst, info);
        Ok(())
    })
}

/// `static native long nNextSequence()`: the segment's next sequence number;
/// throws HrtsException (kind PERSIST, OS, ...) if it cannot be persisted.
#[no_mangle]
pub extern "system" fn Java_io_hrts_HighResTimestamp_nNextSequence(
    env: *mut JNIEnv,
    _class: jclass,
) -> jlong {
    guarded(env, 0, || Ok(base()?.next_sequence()? as jlong))
}

/// `static native long nItcNext()`: the process's next Intel Trace Collector
/// stamp (clock tick in the high bits, event counter in the low ones).
#[no_mangle]
pub extern "system" fn Java_io_hrts_HighResTimestamp_nItcNext(
    env: *mut JNIEnv,
    _class: jclass,
) -> jlong {
    guarded(env, 0, || {
        base()?;
        Ok(api::itc_next()? as jlong)
    })
}

/// `static native long nItcToEpochNanos(long stamp)`: epoch ns of an ITC stamp's tick.
#[no_mangle]
pub extern "system" fn Java_io_hrts_HighResTimestamp_nItcToEpochNanos(
    env: *mut JNIEnv,
    _class: jclass,
    stamp: jlong,
) -> jlong {
    guarded(env, 0, || {
        base()?;
        Ok(to_jlong(api::itc()?.to_epoch_ns(stamp as u64)))
    })
}

/// `static native long nItcMaxEventsPerTick()`: the most ITC stamps of this
/// process that shared one clock tick.
#[no_mangle]
pub extern "system" fn Java_io_hrts_HighResTimestamp_nItcMaxEventsPerTick(
    env: *mut JNIEnv,
    _class: jclass,
) -> jlong {
    guarded(env, 0, || {
        base()?;
        Ok(to_jlong(api::itc()?.max_events_per_tick()))
    })
}

/// `static native int nItcEventBits()`: the event bits of this process's ITC stamps.
#[no_mangle]
pub extern "system" fn Java_io_hrts_HighResTimestamp_nItcEventBits(
    env: *mut JNIEnv,
    _class: jclass,
) -> jint {
    guarded(env, 0, || {
        base()?;
        Ok(api::itc()?.format().event_bits as jint)
    })
}

/// `static native void nFillEpochNanos(long[] dst, int off, int len)`: `len`
/// consecutive stamps into dst[off..off+len], in one native call.
#[no_mangle]
pub extern "system" fn Java_io_hrts_HighResTimestamp_nFillEpochNanos(
    env: *mut JNIEnv,
    _class: jclass,
    dst: jlongArray,
    off: jint,
    len: jint,
) {
    guarded(env, (), || {
        let b = base()?;
        if len <= 0 || env.is_null() {
            return Ok(());
        }
        // SAFETY: `env` is this thread's JNIEnv and `dst` a non-null long[] the
        // JVM passed in (Java rejected null).
        let length = unsafe { jni!(env, GetArrayLength, dst) };
        if off < 0 || off > length || len > length - off {
            return Err(Failure {
                kind: kind_name(ErrorKind::InvalidArgument),
                message: format!("hrts: range [{off}, {off}+{len}) outside an array of {length}"),
            });
        }
        // SAFETY: as above; between Get and Release below no JNI function is
        // called and nothing blocks (only counter reads and stores).
        let p = unsafe { jni!(env, GetPrimitiveArrayCritical, dst, std::ptr::null_mut()) }
            as *mut jlong;
        if p.is_null() {
            return Ok(()); // OutOfMemoryError is pending
        }
        for i in off..off + len {
            // SAFETY: off <= i < off + len <= length, checked above, so the
            // element is inside the array the JVM pinned at `p`.
            unsafe { p.add(i as usize).write(to_jlong(b.now_ns())) };
        }
        // SAFETY: `p` came from GetPrimitiveArrayCritical on `dst`; mode 0 copies
        // back (if the JVM gave a copy) and releases.
        unsafe { jni!(env, ReleasePrimitiveArrayCritical, dst, p.cast(), 0) };
        Ok(())
    })
}

/// `static native String nInfo()`: the segment's facts as `key=value` lines
/// (parsed by `io.hrts.SegmentInfo`).
#[no_mangle]
pub extern "system" fn Java_io_hrts_HighResTimestamp_nInfo(
    env: *mut JNIEnv,
    _class: jclass,
) -> jstring {
    guarded(env, std::ptr::null_mut(), || {
        let b = base()?;
        let text = info_text(b);
        if env.is_null() {
            return Ok(std::ptr::null_mut());
        }
        // SAFETY: `env` is this thread's JNIEnv; no exception is pending.
        Ok(unsafe { new_string(env, &text) })
    })
}

fn info_text(b: &SharedBase) -> String {
    b.info()
        .fields()
        .into_iter()
        .map(|(key, value)| format!("{key}={value}\n"))
        .collect()
}

// ---------------------------------------------------------------- benchmark hook

/// `io.hrts.BenchHooks.emptyNative()`: an empty static native returning a
/// constant, the floor a JNI stamp is measured against.
#[no_mangle]
pub extern "system" fn Java_io_hrts_BenchHooks_emptyNative(
    _env: *mut JNIEnv,
    _class: jclass,
) -> jlong {
    0
}

#[cfg(test)]
mod tests {
    use super::*;

    const NULL_ENV: *mut JNIEnv = std::ptr::null_mut();

    fn cls() -> jclass {
        std::ptr::null_mut()
    }

    #[test]
    fn exports_on_a_segment_of_their_own() {
        let name = format!("/hrts-jnitest-{}", std::process::id());
        let mut cfg = hrts_core::Config::named(&name);
        cfg.seq_file =
            Some(std::env::temp_dir().join(format!("hrts-jnitest-{}.seq", std::process::id())));
        api::init_global(&cfg).unwrap();
        assert!(api::global_if_open().is_some());

        let ns = Java_io_hrts_HighResTimestamp_nEpochNanos(NULL_ENV, cls());
        // After 2020-01-01 and before 2200-01-01.
        assert!(ns > 1_577_836_800_000_000_000 && ns < 7_258_118_400_000_000_000);
        let ordered = Java_io_hrts_HighResTimestamp_nEpochNanosOrdered(NULL_ENV, cls());
        assert!(ordered >= ns);
        let us = Java_io_hrts_HighResTimestamp_nEpochMicros(NULL_ENV, cls());
        assert!(us >= ns / 1000 && us <= ns / 1000 + 10_000_000);

        let t = Java_io_hrts_HighResTimestamp_nTicks(NULL_ENV, cls());
        let at = Java_io_hrts_HighResTimestamp_nTicksToNanos(NULL_ENV, cls(), t);
        assert!(at >= ns && at - ns < 10_000_000_000, "{at} vs {ns}");
        // Any input is answered without moving the base or panicking.
        let gen = Java_io_hrts_HighResTimestamp_nGeneration(NULL_ENV, cls());
        for v in [0, -1, i64::MIN, i64::MAX, t.wrapping_add(1 << 62)] {
            Java_io_hrts_HighResTimestamp_nTicksToNanos(NULL_ENV, cls(), v);
        }
        assert_eq!(
            gen,
            Java_io_hrts_HighResTimestamp_nGeneration(NULL_ENV, cls())
        );

        let u1 = Java_io_hrts_HighResTimestamp_nUnique(NULL_ENV, cls());
        let u2 = Java_io_hrts_HighResTimestamp_nUnique(NULL_ENV, cls());
        assert!(u2 > u1);
        let i1 = Java_io_hrts_HighResTimestamp_nItcNext(NULL_ENV, cls());
        let i2 = Java_io_hrts_HighResTimestamp_nItcNext(NULL_ENV, cls());
        assert!(i2 > i1);
        assert_eq!(
            Java_io_hrts_HighResTimestamp_nItcEventBits(NULL_ENV, cls()),
            13
        );
        let at = Java_io_hrts_HighResTimestamp_nItcToEpochNanos(NULL_ENV, cls(), i2);
        assert!((at as u64).abs_diff(hrts_core::os::realtime_ns()) < 1_000_000_000);
        assert!(Java_io_hrts_HighResTimestamp_nItcMaxEventsPerTick(NULL_ENV, cls()) >= 1);
        let s1 = Java_io_hrts_HighResTimestamp_nNextSequence(NULL_ENV, cls());
        let s2 = Java_io_hrts_HighResTimestamp_nNextSequence(NULL_ENV, cls());
        assert!(s2 > s1);

        let text = info_text(api::global_if_open().unwrap());
        assert!(text.starts_with(&format!("segment={name}\n")), "{text}");
        assert!(text.contains("\ngeneration="), "{text}");

        assert_eq!(
            Java_io_hrts_HighResTimestamp_nPid(NULL_ENV, cls()) as u32,
            std::process::id()
        );
        let main_tid = Java_io_hrts_HighResTimestamp_nTid(NULL_ENV, cls());
        let other_tid = std::thread::spawn(|| {
            Java_io_hrts_HighResTimestamp_nTid(std::ptr::null_mut(), std::ptr::null_mut())
        })
        .join()
        .unwrap();
        assert_ne!(main_tid, other_tid);
        assert_eq!(
            Java_io_hrts_HighResTimestamp_nLogicVersion(NULL_ENV, cls()) as u64,
            api::LOGIC_VERSION
        );
        let _ = SharedBase::unlink(&name);
        let seq_file = cfg.seq_file.unwrap();
        let _ = std::fs::remove_file(seq_file.with_extension("lock"));
        let _ = std::fs::remove_file(seq_file);
    }

    #[test]
    fn modified_utf8_encoding() {
        assert_eq!(modified_utf8("abc").as_bytes(), b"abc");
        assert_eq!(modified_utf8("a\0b").as_bytes(), &[b'a', 0xC0, 0x80, b'b']);
        assert_eq!(modified_utf8("é").as_bytes(), "é".as_bytes());
        // U+1F600 = surrogates D83D DE00.
        assert_eq!(
            modified_utf8("\u{1F600}").as_bytes(),
            &[0xED, 0xA0, 0xBD, 0xED, 0xB8, 0x80]
        );
    }

    #[test]
    fn every_kind_has_a_name() {
        for k in ErrorKind::ALL {
            assert_ne!(kind_name(k), "OTHER");
        }
    }

    #[test]
    fn a_panic_is_caught_at_the_boundary() {
        let v = guarded(NULL_ENV, 7, || -> Result<i32, Failure> { panic!("boom") });
        assert_eq!(v, 7);
        let f = panic_failure(&"boom");
        assert_eq!(f.kind, KIND_INTERNAL);
        assert!(f.message.contains("boom"));
    }
}
