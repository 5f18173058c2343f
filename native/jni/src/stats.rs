//! JNI glue of `io.hrts.stats.StatsNative`: the process-wide statistics
//! instance for Java.
//!
//! Java's counters, gauges and timer durations never call native code on their
//! hot path: each Java thread writes its own queue (`Ring`) and fold cells at
//! the native addresses handed out here (with `sun.misc.Unsafe`, as Agrona
//! does; a `ByteBuffer` view costs a bounds and liveness check per word). Timer
//! instance events and precise stamps are plain static natives with primitive
//! arguments (no JNI API call on the normal path).

use crate::{guarded, kind_name, new_string, Failure};
use hrts_core::ErrorKind;
use hrts_stats::ring::Ring;
use hrts_stats::{global, Config, Kind, Metric};
use jni::sys::{jboolean, jbyteArray, jclass, jint, jlong, jlongArray, jobjectArray, JNIEnv};
use std::sync::Arc;

fn invalid(message: String) -> Failure {
    Failure {
        kind: kind_name(ErrorKind::InvalidArgument),
        message,
    }
}

/// A UTF-8 string Java passed as a byte[] (Java rejected null).
fn utf8_arg(env: *mut JNIEnv, bytes: jbyteArray, what: &str) -> Result<String, Failure> {
    if env.is_null() || bytes.is_null() {
        return Err(invalid(format!("hrts-stats: {what} is null")));
    }
    // SAFETY: `env` is this thread's JNIEnv and `bytes` a non-null byte[] the
    // JVM passed in; the buffer has exactly `len` bytes for the copy.
    let raw = unsafe {
        let len = jni!(env, GetArrayLength, bytes).max(0);
        let mut buf = vec![0i8; len as usize];
        jni!(env, GetByteArrayRegion, bytes, 0, len, buf.as_mut_ptr());
        buf
    };
    String::from_utf8(raw.into_iter().map(|b| b as u8).collect())
        .map_err(|_| invalid(format!("hrts-stats: {what} is not valid UTF-8")))
}

/// `static native void nConfigureJson(byte[] utf8)`.
#[no_mangle]
pub extern "system" fn Java_io_hrts_stats_StatsNative_nConfigureJson(
    env: *mut JNIEnv,
    _c: jclass,
    json: jbyteArray,
) {
    guarded(env, (), || {
        let cfg = Config::from_json(&utf8_arg(env, json, "the configuration")?)?;
        Ok(global().configure(cfg)?)
    })
}

/// `static native void nConfigureFile(byte[] utf8Path)`.
#[no_mangle]
pub extern "system" fn Java_io_hrts_stats_StatsNative_nConfigureFile(
    env: *mut JNIEnv,
    _c: jclass,
    path: jbyteArray,
) {
    guarded(env, (), || {
        let cfg = Config::from_file(utf8_arg(env, path, "the path")?)?;
        Ok(global().configure(cfg)?)
    })
}

/// `static native void nStart()`: Java opened the segment first
/// (`HighResTimestamp.open()`), so the instance stamps on the JVM's segment.
#[no_mangle]
pub extern "system" fn Java_io_hrts_stats_StatsNative_nStart(env: *mut JNIEnv, _c: jclass) {
    guarded(env, (), || Ok(global().start()?))
}

/// `static native void nStop()`.
#[no_mangle]
pub extern "system" fn Java_io_hrts_stats_StatsNative_nStop(env: *mut JNIEnv, _c: jclass) {
    guarded(env, (), || {
        global().stop();
        Ok(())
    })
}

/// `static native long nMetric(byte[] utf8Name, int kind)`: the metric's id
/// (kind 1 counter, 2 gauge, 3 timer).
#[no_mangle]
pub extern "system" fn Java_io_hrts_stats_StatsNative_nMetric(
    env: *mut JNIEnv,
    _c: jclass,
    name: jbyteArray,
    kind: jint,
) -> jlong {
    guarded(env, 0, || {
        let kind = match kind {
            1 => Kind::Counter,
            2 => Kind::Gauge,
            3 => Kind::Timer,
            k => return Err(invalid(format!("hrts-stats: unknown metric kind {k}"))),
        };
        Ok(global()
            .metric_id(&utf8_arg(env, name, "the metric name")?, kind)?
            .to_bits() as jlong)
    })
}

/// `static native long nControl()`: the address of the measuring points'
/// control block (enabled, idle timeout in ns, coarse clock), read by Java on
/// every measurement. The global instance, and so its block, lives for the
/// whole process.
#[no_mangle]
pub extern "system" fn Java_io_hrts_stats_StatsNative_nControl(
    env: *mut JNIEnv,
    _c: jclass,
) -> jlong {
    guarded(env, 0, || Ok(global().control_block() as jlong))
}

/// `static native long nAttachRing()`: a queue for the calling Java thread, as
/// a handle for `nRing`, `nChunk` and `nReleaseRing`.
#[no_mangle]
pub extern "system" fn Java_io_hrts_stats_StatsNative_nAttachRing(
    env: *mut JNIEnv,
    _c: jclass,
) -> jlong {
    guarded(env, 0, || {
        Ok(Box::into_raw(Box::new(global().attach_ring())) as jlong)
    })
}

/// The ring of a handle from `nAttachRing`.
///
/// # Safety
/// `handle` must come from `nAttachRing` and not have been released; Java keeps
/// it in the one object whose cleaner releases it.
unsafe fn ring<'a>(handle: jlong) -> Result<&'a Ring, Failure> {
    let p = handle as *const Arc<Ring>;
    // SAFETY: per the contract, a live Box<Arc<Ring>> from nAttachRing.
    unsafe { p.as_ref() }
        .map(|a| a.as_ref())
        .ok_or_else(|| invalid("hrts-stats: no queue".into()))
}

/// `static native long[] nRing(long ring)`: {address, bytes} of the queue's
/// block, valid until `nReleaseRing`.
#[no_mangle]
pub extern "system" fn Java_io_hrts_stats_StatsNative_nRing(
    env: *mut JNIEnv,
    _c: jclass,
    handle: jlong,
) -> jlongArray {
    guarded(env, std::ptr::null_mut(), || {
        // SAFETY: Java passes the handle of its live producer (see `ring`).
        let (addr, len) = unsafe { ring(handle) }?.as_raw();
        long_array(env, &[addr as jlong, len as jlong])
    })
}

/// `static native long nChunk(long ring, int metric)`: the address of the fold
/// cells of the 64 metrics around `metric` in this queue, created on first use,
/// valid until `nReleaseRing`.
#[no_mangle]
pub extern "system" fn Java_io_hrts_stats_StatsNative_nChunk(
    env: *mut JNIEnv,
    _c: jclass,
    handle: jlong,
    metric: jint,
) -> jlong {
    guarded(env, 0, || {
        // SAFETY: Java passes the handle of its live producer (see `ring`).
        let ring = unsafe { ring(handle) }?;
        if metric < 0 || metric as usize >= hrts_stats::registry::MAX_METRICS {
            return Err(invalid(format!("hrts-stats: metric {metric} out of range")));
        }
        Ok(ring.chunk(metric as u32).as_raw().0 as jlong)
    })
}

fn long_array(env: *mut JNIEnv, values: &[jlong]) -> Result<jlongArray, Failure> {
    if env.is_null() {
        return Ok(std::ptr::null_mut());
    }
    // SAFETY: `env` is this thread's JNIEnv; the region has the array's length.
    unsafe {
        let a = jni!(env, NewLongArray, values.len() as jint);
        if !a.is_null() {
            jni!(
                env,
                SetLongArrayRegion,
                a,
                0,
                values.len() as jint,
                values.as_ptr()
            );
        }
        Ok(a)
    }
}

/// `static native void nReleaseRing(long ring)`: the producer is gone; the
/// processing thread drains what is left and frees the queue.
#[no_mangle]
pub extern "system" fn Java_io_hrts_stats_StatsNative_nReleaseRing(
    env: *mut JNIEnv,
    _c: jclass,
    handle: jlong,
) {
    guarded(env, (), || {
        if handle != 0 {
            // SAFETY: from nAttachRing, released once: Java's cleaner runs once,
            // after the last use of the buffers.
            let ring = unsafe { Box::from_raw(handle as *mut Arc<Ring>) };
            ring.close();
        }
        Ok(())
    })
}

/// Longs per metric in `nDump`'s long[]: kind, timestamp, counter value, number
/// of statistics sets, their four counts.
const LONGS_PER_METRIC: usize = 8;
/// Doubles per statistics set: sum, min, max, mean, moving average, interval
/// count, sum and mean, p50, p90, p99, p99.9 (NaN where there is no datum).
const DOUBLES_PER_SET: usize = 12;

/// `static native Object[] nDump(boolean fresh)`: {String[] names, long[]
/// [dump timestamp, then LONGS_PER_METRIC per metric], double[] [per metric: the
/// value, then 4 sets of DOUBLES_PER_SET], String json}, or null if `fresh` is
/// false and the library has made no dump yet.
#[no_mangle]
pub extern "system" fn Java_io_hrts_stats_StatsNative_nDump(
    env: *mut JNIEnv,
    _c: jclass,
    fresh: jboolean,
) -> jobjectArray {
    guarded(env, std::ptr::null_mut(), || {
        let dump = if fresh {
            Some(global().dump())
        } else {
            global().last_dump()
        };
        let Some(dump) = dump else {
            return Ok(std::ptr::null_mut());
        };
        let n = dump.metrics.len();
        let mut longs = Vec::with_capacity(1 + n * LONGS_PER_METRIC);
        let mut doubles = Vec::with_capacity(n * (1 + 4 * DOUBLES_PER_SET));
        longs.push(dump.timestamp as jlong);
        for m in dump.metrics.values() {
            let sets = m.statistics();
            let (kind, counter, value) = match m {
                Metric::Counter(c) => (1, c.value, c.value as f64),
                Metric::Gauge(g) => (2, 0, g.value),
                Metric::Timer(t) => (3, 0, t.value as f64),
            };
            longs.extend([kind, m.timestamp() as jlong, counter, sets.len() as jlong]);
            doubles.push(value);
            for i in 0..4 {
                match sets.get(i) {
                    Some((_, s)) => {
                        longs.push(s.count as jlong);
                        let f = |v: Option<f64>| v.unwrap_or(f64::NAN);
                        doubles.extend([
                            s.sum,
                            f(s.min),
                            f(s.max),
                            f(s.mean),
                            f(s.moving_avg),
                            s.interval_count,
                            s.interval_sum,
                            f(s.interval_mean),
                            f(s.quantiles[0]),
                            f(s.quantiles[1]),
                            f(s.quantiles[2]),
                            f(s.quantiles[3]),
                        ]);
                    }
                    None => {
                        longs.push(0);
                        doubles.extend([f64::NAN; DOUBLES_PER_SET]);
                    }
                }
            }
        }
        if env.is_null() {
            return Ok(std::ptr::null_mut());
        }
        let json = dump.to_json();
        // SAFETY: `env` is this thread's JNIEnv. Every object is checked for null
        // (an exception is then pending and we return at once); the regions
        // copied have exactly the lengths the arrays were made with.
        unsafe {
            let string_class = jni!(env, FindClass, c"java/lang/String".as_ptr());
            let object_class = jni!(env, FindClass, c"java/lang/Object".as_ptr());
            if string_class.is_null() || object_class.is_null() {
                return Ok(std::ptr::null_mut());
            }
            let names = jni!(
                env,
                NewObjectArray,
                n as jint,
                string_class,
                std::ptr::null_mut()
            );
            if names.is_null() {
                return Ok(std::ptr::null_mut());
            }
            for (i, name) in dump.metrics.keys().enumerate() {
                let s = new_string(env, name);
                if s.is_null() {
                    return Ok(std::ptr::null_mut());
                }
                jni!(env, SetObjectArrayElement, names, i as jint, s);
                jni!(env, DeleteLocalRef, s);
            }
            let la = jni!(env, NewLongArray, longs.len() as jint);
            let da = jni!(env, NewDoubleArray, doubles.len() as jint);
            let js = new_string(env, &json);
            let out = jni!(env, NewObjectArray, 4, object_class, std::ptr::null_mut());
            if la.is_null() || da.is_null() || js.is_null() || out.is_null() {
                return Ok(std::ptr::null_mut());
            }
            jni!(
                env,
                SetLongArrayRegion,
                la,
                0,
                longs.len() as jint,
                longs.as_ptr()
            );
            jni!(
                env,
                SetDoubleArrayRegion,
                da,
                0,
                doubles.len() as jint,
                doubles.as_ptr()
            );
            jni!(env, SetObjectArrayElement, out, 0, names);
            jni!(env, SetObjectArrayElement, out, 1, la);
            jni!(env, SetObjectArrayElement, out, 2, da);
            jni!(env, SetObjectArrayElement, out, 3, js);
            Ok(out)
        }
    })
}

/// `static native int[] nLayout()`: the queue layout Java writes (word offsets
/// from `hrts_stats::ring`), so that it is stated once, in Rust: HEAD, DROPPED,
/// TAIL, EVENTS, EVENT_WORDS, CHUNK_CELLS, CELL_WORDS, cell SEQ, POS_N, POS_SUM,
/// POS_MIN, POS_MAX, NEG_N, NEG_SUM, NEG_MIN, NEG_MAX, ZERO_N, POS, LAST, KIND,
/// FOLD_RUN_RINGS, capacity of new queues, chunk header words, FOLD_CANCEL,
/// and the control block's byte offsets of enabled, idle timeout, coarse clock.
#[no_mangle]
pub extern "system" fn Java_io_hrts_stats_StatsNative_nLayout(
    env: *mut JNIEnv,
    _c: jclass,
) -> jni::sys::jintArray {
    use hrts_stats::ring::{self, cell};
    guarded(env, std::ptr::null_mut(), || {
        let values: Vec<jint> = [
            ring::HEAD,
            ring::DROPPED,
            ring::TAIL,
            ring::EVENTS,
            ring::EVENT_WORDS,
            ring::CHUNK_CELLS,
            ring::CELL_WORDS,
            cell::SEQ,
            cell::POS_N,
            cell::POS_SUM,
            cell::POS_MIN,
            cell::POS_MAX,
            cell::NEG_N,
            cell::NEG_SUM,
            cell::NEG_MIN,
            cell::NEG_MAX,
            cell::ZERO_N,
            cell::POS,
            cell::LAST,
            cell::KIND,
            ring::FOLD_RUN_RINGS as usize,
            global().config().queue_capacity,
            ring::CHUNK_HEADER_WORDS,
            ring::FOLD_CANCEL,
            hrts_stats::CONTROL_OFFSETS[0],
            hrts_stats::CONTROL_OFFSETS[1],
            hrts_stats::CONTROL_OFFSETS[2],
        ]
        .iter()
        .map(|&v| v as jint)
        .collect();
        if env.is_null() {
            return Ok(std::ptr::null_mut());
        }
        // SAFETY: `env` is this thread's JNIEnv; the region has the array's length.
        unsafe {
            let a = jni!(env, NewIntArray, values.len() as jint);
            if !a.is_null() {
                jni!(
                    env,
                    SetIntArrayRegion,
                    a,
                    0,
                    values.len() as jint,
                    values.as_ptr()
                );
            }
            Ok(a)
        }
    })
}
