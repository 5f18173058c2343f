//! The 28 native methods of `io.hrts.Native`, one export each
//! (`Java_io_hrts_Native_<name>`: `#[jni_mangle]` turns `epoch_nanos` into
//! `epochNanos`). Each is its JNI signature, the boundary and a call into
//! [`crate::calls`]; nothing else is exported.

use crate::boundary::{base, direct, stamp, Failure, ThrowHrtsException};
use crate::calls;
use crate::objects;
use jni::objects::{JByteArray, JByteBuffer, JClass, JLongArray, JObject, JString};
use jni::sys::{jint, jlong};
use jni::{jni_mangle, EnvUnowned};

// ---------------------------------------------------------------- setup

/// `static native void openSegment(byte[] utf8NameOrNull, int mode, long
/// tieIntervalMs, long maxSlewPpm, long stepThresholdMs, long boundDriftPpm,
/// long boundVoidS)`: opens the process's segment, creating it with these
/// settings (0: the environment's) if it does not exist; throws HrtsException
/// with the core's message on failure.
#[jni_mangle("io.hrts.Native")]
pub fn open_segment<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    name: JByteArray<'local>,
    mode: jint,
    tie_interval_ms: jlong,
    max_slew_ppm: jlong,
    step_threshold_ms: jlong,
    bound_drift_ppm: jlong,
    bound_void_s: jlong,
) {
    env.with_env(|env| -> Result<(), Failure> {
        let name = if name.is_null() {
            None
        } else {
            Some(env.convert_byte_array(&name)?)
        };
        let options = calls::RawOptions {
            mode,
            tie_interval_ms,
            max_slew_ppm,
            step_threshold_ms,
            bound_drift_ppm,
            bound_void_s,
        };
        calls::open(name, options)
    })
    .resolve::<ThrowHrtsException>()
}

/// `static native long logicVersion()`: a.b.c.d packed 16 bits each.
#[jni_mangle("io.hrts.Native")]
pub fn logic_version<'local>(mut env: EnvUnowned<'local>, _class: JClass<'local>) -> jlong {
    direct(&mut env, || Ok(calls::logic_version()))
}

/// `static native String copyright()`.
#[jni_mangle("io.hrts.Native")]
pub fn copyright<'local>(mut env: EnvUnowned<'local>, _class: JClass<'local>) -> JString<'local> {
    env.with_env(|env| -> Result<_, Failure> {
        Ok(JString::from_str(env, hrts_core::ibmts::COPYRIGHT)?)
    })
    .resolve::<ThrowHrtsException>()
}

/// `static native int holdCopy(byte[] utf8Path)`: a shared lock on the extracted
/// library copy, kept until the process ends; 0 or the errno. Never throws: a
/// copy that is not held only risks being removed by another build's cleanup.
#[jni_mangle("io.hrts.Native")]
pub fn hold_copy<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    path: JByteArray<'local>,
) -> jint {
    env.with_env(|env| -> Result<jint, Failure> {
        if path.is_null() {
            return Ok(libc::EINVAL);
        }
        Ok(calls::hold_copy(&env.convert_byte_array(&path)?))
    })
    .resolve::<ThrowHrtsException>()
}

/// `static native int pid()`: the calling process's id.
#[jni_mangle("io.hrts.Native")]
pub fn pid<'local>(mut env: EnvUnowned<'local>, _class: JClass<'local>) -> jint {
    direct(&mut env, || Ok(calls::pid()))
}

/// `static native int tid()`: the calling thread's Linux thread id (gettid).
#[jni_mangle("io.hrts.Native")]
pub fn tid<'local>(mut env: EnvUnowned<'local>, _class: JClass<'local>) -> jint {
    direct(&mut env, || Ok(calls::tid()))
}

// ---------------------------------------------------------------- hot paths
//
// `extern "system"` functions returning a primitive. `EnvUnowned` and `JClass`
// are `#[repr(transparent)]` wrappers of the raw `JNIEnv*` and `jclass`, so the
// signature is the raw JNI one; `stamp` touches `env` only to throw. No JNI call
// and no allocation on the normal path.

/// `static native long epochNanos()`.
#[jni_mangle("io.hrts.Native")]
pub fn epoch_nanos<'local>(mut env: EnvUnowned<'local>, _class: JClass<'local>) -> jlong {
    stamp(&mut env, calls::epoch_nanos)
}

/// `static native long epochNanosOrdered()`.
#[jni_mangle("io.hrts.Native")]
pub fn epoch_nanos_ordered<'local>(mut env: EnvUnowned<'local>, _class: JClass<'local>) -> jlong {
    stamp(&mut env, calls::epoch_nanos_ordered)
}

/// `static native long epochMicros()`.
#[jni_mangle("io.hrts.Native")]
pub fn epoch_micros<'local>(mut env: EnvUnowned<'local>, _class: JClass<'local>) -> jlong {
    stamp(&mut env, calls::epoch_micros)
}

/// `static native long ticks()`.
#[jni_mangle("io.hrts.Native")]
pub fn ticks<'local>(mut env: EnvUnowned<'local>, _class: JClass<'local>) -> jlong {
    stamp(&mut env, calls::ticks)
}

/// `static native long ticksToNanos(long ticks)`.
#[jni_mangle("io.hrts.Native")]
pub fn ticks_to_nanos<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    ticks: jlong,
) -> jlong {
    stamp(&mut env, |b| calls::ticks_to_nanos(b, ticks))
}

/// `static native long unique()`.
#[jni_mangle("io.hrts.Native")]
pub fn unique<'local>(mut env: EnvUnowned<'local>, _class: JClass<'local>) -> jlong {
    direct(&mut env, calls::unique)
}

/// `static native long generation()`.
#[jni_mangle("io.hrts.Native")]
pub fn generation<'local>(mut env: EnvUnowned<'local>, _class: JClass<'local>) -> jlong {
    stamp(&mut env, calls::generation)
}

// ---------------------------------------------------------------- the rest

/// `static native BaseInfo baseInfo()`: one consistent snapshot of the base.
#[jni_mangle("io.hrts.Native")]
pub fn base_info<'local>(mut env: EnvUnowned<'local>, _class: JClass<'local>) -> JObject<'local> {
    env.with_env(|env| -> Result<_, Failure> {
        let info = base()?.base_info();
        Ok(objects::base_info(env, info)?)
    })
    .resolve::<ThrowHrtsException>()
}

/// `static native BaseInfo setBaseInfo()`: IBMTS setBaseInfo for every process
/// of the segment; returns the new base.
#[jni_mangle("io.hrts.Native")]
pub fn set_base_info<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
) -> JObject<'local> {
    env.with_env(|env| -> Result<_, Failure> {
        let info = base()?.set_base_info()?;
        Ok(objects::base_info(env, info)?)
    })
    .resolve::<ThrowHrtsException>()
}

/// `static native long nextSequence()`.
#[jni_mangle("io.hrts.Native")]
pub fn next_sequence<'local>(mut env: EnvUnowned<'local>, _class: JClass<'local>) -> jlong {
    direct(&mut env, calls::next_sequence)
}

/// `static native long itcNext()`.
#[jni_mangle("io.hrts.Native")]
pub fn itc_next<'local>(mut env: EnvUnowned<'local>, _class: JClass<'local>) -> jlong {
    direct(&mut env, calls::itc_next)
}

/// `static native long itcToEpochNanos(long stamp)`.
#[jni_mangle("io.hrts.Native")]
pub fn itc_to_epoch_nanos<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    stamp: jlong,
) -> jlong {
    direct(&mut env, || calls::itc_to_epoch_nanos(stamp))
}

/// `static native long itcMaxEventsPerTick()`.
#[jni_mangle("io.hrts.Native")]
pub fn itc_max_events_per_tick<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
) -> jlong {
    direct(&mut env, calls::itc_max_events_per_tick)
}

/// `static native int itcEventBits()`.
#[jni_mangle("io.hrts.Native")]
pub fn itc_event_bits<'local>(mut env: EnvUnowned<'local>, _class: JClass<'local>) -> jint {
    direct(&mut env, calls::itc_event_bits)
}

/// `static native long directAddress(ByteBuffer buffer)`: where a direct
/// buffer's memory is, for `boundedAt`; throws HrtsException for a buffer
/// that is not direct.
#[jni_mangle("io.hrts.Native")]
pub fn direct_address<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    buffer: JByteBuffer<'local>,
) -> jlong {
    env.with_env(|env| -> Result<jlong, Failure> {
        Ok(env.get_direct_buffer_address(&buffer)? as jlong)
    })
    .resolve::<ThrowHrtsException>()
}

/// `static native int boundedAt(long address)`: an interval that holds true
/// time, earliest and latest as two native-order longs at `address`; returns
/// its status code. No interval (unsynchronized, void, frozen):
/// `HrtsException` of kind UNSYNCHRONIZED.
///
/// On the stamps' lean boundary, and into memory the caller owns rather than
/// a Java array: writing an array through JNI is a VM entry that cost more
/// than the interval itself (83 ns a call with `SetLongArrayRegion`).
#[jni_mangle("io.hrts.Native")]
pub fn bounded_at<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    address: jlong,
) -> jint {
    direct(&mut env, || {
        let b = base()?.now_bounded()?;
        let out = address as *mut jlong;
        // SAFETY: only HighResTimestamp calls this, with the address of its
        // thread's direct buffer of 16 bytes, which it keeps reachable across
        // the call; nothing else reads or writes it meanwhile. Unaligned
        // writes: nothing promises the buffer's alignment.
        unsafe {
            out.write_unaligned(b.earliest as jlong);
            out.add(1).write_unaligned(b.latest as jlong);
        }
        Ok(b.status.code() as jint)
    })
}

/// `static native void fillEpochNanos(long[] dst, int off, int len)`: `len`
/// consecutive stamps into dst[off..off+len], in one native call.
#[jni_mangle("io.hrts.Native")]
pub fn fill_epoch_nanos<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    dst: JLongArray<'local>,
    off: jint,
    len: jint,
) {
    env.with_env(|env| -> Result<(), Failure> {
        let b = base()?;
        if len <= 0 {
            return Ok(());
        }
        let range = calls::fill_range(off, len, dst.len(env)?)?;
        calls::fill_in_blocks(b, range, |at, stamps| {
            // `at` is inside the array, whose length is a jint.
            Ok(dst.set_region(env, at as jint, stamps)?)
        })
    })
    .resolve::<ThrowHrtsException>()
}

/// `static native SegmentInfo segmentInfo()`: the segment's facts, typed.
#[jni_mangle("io.hrts.Native")]
pub fn segment_info<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
) -> JObject<'local> {
    env.with_env(|env| -> Result<_, Failure> {
        let b = base()?;
        let info = b.info();
        Ok(objects::segment_info(env, &info, b.disruptions())?)
    })
    .resolve::<ThrowHrtsException>()
}

/// `static native int mode()`: the segment's mode, as an `io.hrts.Mode` code.
#[jni_mangle("io.hrts.Native")]
pub fn mode<'local>(mut env: EnvUnowned<'local>, _class: JClass<'local>) -> jint {
    direct(&mut env, calls::mode)
}

/// `static native TrackingState trackingState()`: the segment's tracking
/// state, typed; `HrtsException` (CORRUPT) if its tie statistics are damaged.
#[jni_mangle("io.hrts.Native")]
pub fn tracking_state<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
) -> JObject<'local> {
    env.with_env(|env| -> Result<_, Failure> {
        let b = base()?;
        let state = b.tracking_state();
        if !state.statistics_valid {
            return Err(Failure::from(hrts_core::Error::new(
                hrts_core::ErrorKind::Corrupt,
                format!(
                    "the tie statistics of segment {} are damaged (their check word disagrees); \
                     the next tie or move starts them again: ask again after it",
                    b.name()
                ),
            )));
        }
        Ok(objects::tracking_state(env, &state)?)
    })
    .resolve::<ThrowHrtsException>()
}

/// `static native long offsetNanos()`: CLOCK_REALTIME minus the timeline now.
#[jni_mangle("io.hrts.Native")]
pub fn offset_nanos<'local>(mut env: EnvUnowned<'local>, _class: JClass<'local>) -> jlong {
    direct(&mut env, calls::offset_nanos)
}

/// `static native void validate()`: the attach checks again; CORRUPT on damage.
#[jni_mangle("io.hrts.Native")]
pub fn validate<'local>(mut env: EnvUnowned<'local>, _class: JClass<'local>) {
    direct(&mut env, calls::validate)
}
