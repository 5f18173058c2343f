//! JNI glue of `io.hrts.stats.StatsNative`: the process-wide statistics
//! instance for Java.
//!
//! Java's counters, gauges and timer durations never call native code on their
//! hot path: each Java thread writes its own queue (`Ring`) and fold cells at
//! the native addresses handed out here (with `sun.misc.Unsafe`, as Agrona
//! does; a `ByteBuffer` view costs a bounds and liveness check per word). Timer
//! instance events and precise stamps are plain static natives with primitive
//! arguments (no JNI API call on the normal path).

use crate::boundary::{Failure, ThrowHrtsException};
use hrts_stats::ring::Ring;
use hrts_stats::{global, Config, Dump, Kind, Metric};
use jni::objects::{JByteArray, JClass, JIntArray, JLongArray, JObject, JObjectArray};
use jni::sys::{jboolean, jint, jlong};
use jni::{jni_mangle, jni_str, Env, EnvUnowned};
use std::sync::Arc;

fn invalid(message: String) -> Failure {
    Failure::invalid_argument(message)
}

/// A UTF-8 string Java passed as a byte[] (Java rejected null).
pub(crate) fn utf8_arg(
    env: &mut Env<'_>,
    bytes: &JByteArray<'_>,
    what: &str,
) -> Result<String, Failure> {
    if bytes.is_null() {
        return Err(invalid(format!("hrts-stats: {what} is null")));
    }
    String::from_utf8(env.convert_byte_array(bytes)?)
        .map_err(|_| invalid(format!("hrts-stats: {what} is not valid UTF-8")))
}

/// `static native void nConfigureJson(byte[] utf8)`.
#[jni_mangle("io.hrts.stats.StatsNative")]
pub fn n_configure_json<'local>(
    mut env: EnvUnowned<'local>,
    _c: JClass<'local>,
    json: JByteArray<'local>,
) {
    env.with_env(|env| -> Result<(), Failure> {
        let cfg = Config::from_json(&utf8_arg(env, &json, "the configuration")?)?;
        Ok(global().configure(cfg)?)
    })
    .resolve::<ThrowHrtsException>()
}

/// `static native void nConfigureFile(byte[] utf8Path)`.
#[jni_mangle("io.hrts.stats.StatsNative")]
pub fn n_configure_file<'local>(
    mut env: EnvUnowned<'local>,
    _c: JClass<'local>,
    path: JByteArray<'local>,
) {
    env.with_env(|env| -> Result<(), Failure> {
        let cfg = Config::from_file(utf8_arg(env, &path, "the path")?)?;
        Ok(global().configure(cfg)?)
    })
    .resolve::<ThrowHrtsException>()
}

/// `static native void nSetIdentity(byte[] utf8Program, byte[] utf8InstanceId)`:
/// what Java found (system properties, the main class) for the statistics
/// segment's process slot; null leaves a value to the environment and the
/// defaults.
#[jni_mangle("io.hrts.stats.StatsNative")]
pub fn n_set_identity<'local>(
    mut env: EnvUnowned<'local>,
    _c: JClass<'local>,
    program: JByteArray<'local>,
    instance_id: JByteArray<'local>,
) {
    env.with_env(|env| -> Result<(), Failure> {
        let program = if program.is_null() {
            None
        } else {
            Some(utf8_arg(env, &program, "the program name")?)
        };
        let instance_id = if instance_id.is_null() {
            None
        } else {
            Some(utf8_arg(env, &instance_id, "the instance id")?)
        };
        Ok(hrts_stats::shared::set_host_identity(
            program.as_deref(),
            instance_id.as_deref(),
        )?)
    })
    .resolve::<ThrowHrtsException>()
}

/// `static native void nStart()`: Java opened the segment first
/// (`HighResTimestamp.open()`), so the instance stamps on the JVM's segment.
#[jni_mangle("io.hrts.stats.StatsNative")]
pub fn n_start<'local>(mut env: EnvUnowned<'local>, _c: JClass<'local>) {
    env.with_env(|_| -> Result<(), Failure> { Ok(global().start()?) })
        .resolve::<ThrowHrtsException>()
}

/// `static native void nStop()`.
#[jni_mangle("io.hrts.stats.StatsNative")]
pub fn n_stop<'local>(mut env: EnvUnowned<'local>, _c: JClass<'local>) {
    env.with_env(|_| -> Result<(), Failure> {
        global().stop();
        Ok(())
    })
    .resolve::<ThrowHrtsException>()
}

/// `static native long nMetric(byte[] utf8Name, int kind)`: the metric's id
/// (kind 1 counter, 2 gauge, 3 timer).
#[jni_mangle("io.hrts.stats.StatsNative")]
pub fn n_metric<'local>(
    mut env: EnvUnowned<'local>,
    _c: JClass<'local>,
    name: JByteArray<'local>,
    kind: jint,
) -> jlong {
    env.with_env(|env| -> Result<jlong, Failure> {
        let kind = match kind {
            1 => Kind::Counter,
            2 => Kind::Gauge,
            3 => Kind::Timer,
            k => return Err(invalid(format!("hrts-stats: unknown metric kind {k}"))),
        };
        Ok(global()
            .metric_id(&utf8_arg(env, &name, "the metric name")?, kind)?
            .to_bits() as jlong)
    })
    .resolve::<ThrowHrtsException>()
}

/// `static native long nControl()`: the address of the measuring points'
/// control block (enabled, idle timeout in ns, a word always 0), of which Java
/// reads the enabled word on every measurement. The global instance, and so its block, lives for the
/// whole process.
#[jni_mangle("io.hrts.stats.StatsNative")]
pub fn n_control<'local>(mut env: EnvUnowned<'local>, _c: JClass<'local>) -> jlong {
    env.with_env(|_| -> Result<jlong, Failure> { Ok(global().control_block() as jlong) })
        .resolve::<ThrowHrtsException>()
}

/// `static native long[] nExactFlags()`: {address, bytes} of the global
/// instance's per-metric stamping flags (one byte per metric id, non-zero: the
/// counter or gauge is listed in `exact-stamps`), which Java reads on every
/// counter and gauge event to choose between summing it into the thread's
/// cell and queueing it with a precise stamp. The global instance, and so its
/// flags, lives for the whole process; Java checks a metric's id against the
/// length once, when it makes the metric's handle.
#[jni_mangle("io.hrts.stats.StatsNative")]
pub fn n_exact_flags<'local>(
    mut env: EnvUnowned<'local>,
    _c: JClass<'local>,
) -> JLongArray<'local> {
    env.with_env(|env| -> Result<JLongArray<'local>, Failure> {
        let flags = global().exact_flags();
        long_array(
            env,
            &[flags as jlong, hrts_stats::registry::MAX_METRICS as jlong],
        )
    })
    .resolve::<ThrowHrtsException>()
}

/// `static native long nAttachRing()`: a queue for the calling Java thread, as
/// a handle for `nRing`, `nChunk` and `nReleaseRing`.
#[jni_mangle("io.hrts.stats.StatsNative")]
pub fn n_attach_ring<'local>(mut env: EnvUnowned<'local>, _c: JClass<'local>) -> jlong {
    env.with_env(|_| -> Result<jlong, Failure> {
        Ok(Box::into_raw(Box::new(global().attach_ring())) as jlong)
    })
    .resolve::<ThrowHrtsException>()
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
#[jni_mangle("io.hrts.stats.StatsNative")]
pub fn n_ring<'local>(
    mut env: EnvUnowned<'local>,
    _c: JClass<'local>,
    handle: jlong,
) -> JLongArray<'local> {
    env.with_env(|env| -> Result<JLongArray<'local>, Failure> {
        // SAFETY: Java passes the handle of its live producer (see `ring`).
        let (addr, len) = unsafe { ring(handle) }?.as_raw();
        long_array(env, &[addr as jlong, len as jlong])
    })
    .resolve::<ThrowHrtsException>()
}

/// `static native long nChunk(long ring, int metric)`: the address of the fold
/// cells of the 64 metrics around `metric` in this queue, created on first use,
/// valid until `nReleaseRing`.
#[jni_mangle("io.hrts.stats.StatsNative")]
pub fn n_chunk<'local>(
    mut env: EnvUnowned<'local>,
    _c: JClass<'local>,
    handle: jlong,
    metric: jint,
) -> jlong {
    env.with_env(|_| -> Result<jlong, Failure> {
        // SAFETY: Java passes the handle of its live producer (see `ring`).
        let ring = unsafe { ring(handle) }?;
        if metric < 0 || metric as usize >= hrts_stats::registry::MAX_METRICS {
            return Err(invalid(format!("hrts-stats: metric {metric} out of range")));
        }
        Ok(ring.chunk(metric as u32).as_raw().0 as jlong)
    })
    .resolve::<ThrowHrtsException>()
}

pub(crate) fn long_array<'local>(
    env: &mut Env<'local>,
    values: &[jlong],
) -> Result<JLongArray<'local>, Failure> {
    let a = env.new_long_array(values.len())?;
    a.set_region(env, 0, values)?;
    Ok(a)
}

/// `static native void nReleaseRing(long ring)`: the producer is gone; the
/// processing thread drains what is left and frees the queue.
#[jni_mangle("io.hrts.stats.StatsNative")]
pub fn n_release_ring<'local>(mut env: EnvUnowned<'local>, _c: JClass<'local>, handle: jlong) {
    env.with_env(|_| -> Result<(), Failure> {
        if handle != 0 {
            // SAFETY: from nAttachRing, released once: Java's cleaner runs once,
            // after the last use of the buffers.
            let ring = unsafe { Box::from_raw(handle as *mut Arc<Ring>) };
            ring.close();
        }
        Ok(())
    })
    .resolve::<ThrowHrtsException>()
}

/// Longs per metric in `nDump`'s long[]: kind, timestamp, counter value, number
/// of statistics sets, their four counts.
const LONGS_PER_METRIC: usize = 8;
/// Doubles per statistics set: sum, min, max, mean, moving average, interval
/// count, sum and mean, p50, p90, p99, p99.9 (NaN where there is no datum),
/// rate.
const DOUBLES_PER_SET: usize = 13;

/// `static native Object[] nDump(boolean fresh)`: the dump as [`dump_array`]
/// encodes it, or null if `fresh` is false and the library has made no dump yet.
#[jni_mangle("io.hrts.stats.StatsNative")]
pub fn n_dump<'local>(
    mut env: EnvUnowned<'local>,
    _c: JClass<'local>,
    fresh: jboolean,
) -> JObjectArray<'local> {
    env.with_env(|env| -> Result<JObjectArray<'local>, Failure> {
        let dump = if fresh {
            Some(global().dump())
        } else {
            global().last_dump()
        };
        match dump {
            Some(dump) => dump_array(env, &dump),
            None => Ok(JObjectArray::default()),
        }
    })
    .resolve::<ThrowHrtsException>()
}

/// A dump for Java's `StatsDump.of`: {String[] names, long[] [dump timestamp,
/// then LONGS_PER_METRIC per metric], double[] [per metric: the value, then 4
/// sets of DOUBLES_PER_SET], String json}.
pub(crate) fn dump_array<'local>(
    env: &mut Env<'local>,
    dump: &Dump,
) -> Result<JObjectArray<'local>, Failure> {
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
                        s.rate,
                    ]);
                }
                None => {
                    longs.push(0);
                    doubles.extend([f64::NAN; DOUBLES_PER_SET]);
                }
            }
        }
    }
    let names = string_array(env, dump.metrics.keys())?;
    let la = long_array(env, &longs)?;
    let da = env.new_double_array(doubles.len())?;
    da.set_region(env, 0, &doubles)?;
    let js = env.new_string(dump.to_json())?;
    let out = object_array(env, &[&names, &la, &da, &js])?;
    // Callers build one of these per process in a loop: only the result may
    // stay a local reference (-Xcheck:jni counts them against 32).
    env.delete_local_ref(names);
    env.delete_local_ref(la);
    env.delete_local_ref(da);
    env.delete_local_ref(js);
    Ok(out)
}

/// A `String[]` of `items`.
pub(crate) fn string_array<'local, S: AsRef<str>>(
    env: &mut Env<'local>,
    items: impl ExactSizeIterator<Item = S>,
) -> Result<JObjectArray<'local>, Failure> {
    let string_class = env.find_class(jni_str!("java/lang/String"))?;
    let out = env.new_object_array(items.len() as jint, &string_class, JObject::null())?;
    for (i, item) in items.enumerate() {
        let s = env.new_string(item.as_ref())?;
        out.set_element(env, i, &s)?;
        env.delete_local_ref(s);
    }
    env.delete_local_ref(string_class);
    Ok(out)
}

/// An `Object[]` of `items`.
pub(crate) fn object_array<'local>(
    env: &mut Env<'local>,
    items: &[&JObject<'_>],
) -> Result<JObjectArray<'local>, Failure> {
    let object_class = env.find_class(jni_str!("java/lang/Object"))?;
    let out = env.new_object_array(items.len() as jint, &object_class, JObject::null())?;
    for (i, item) in items.iter().enumerate() {
        out.set_element(env, i, *item)?;
    }
    env.delete_local_ref(object_class);
    Ok(out)
}

/// `static native int[] nLayout()`: the values of
/// [`ring_layout::LAYOUT`](crate::ring_layout::LAYOUT), in its order, which
/// `io.hrts.stats.RingLayout.ALL` (generated from the same list) must equal:
/// the jar's check that it runs with the library it was built with.
#[jni_mangle("io.hrts.stats.StatsNative")]
pub fn n_layout<'local>(mut env: EnvUnowned<'local>, _c: JClass<'local>) -> JIntArray<'local> {
    env.with_env(|env| -> Result<JIntArray<'local>, Failure> {
        let values: Vec<jint> = crate::ring_layout::LAYOUT
            .iter()
            .map(|e| e.value as jint)
            .collect();
        let a = env.new_int_array(values.len())?;
        a.set_region(env, 0, &values)?;
        Ok(a)
    })
    .resolve::<ThrowHrtsException>()
}
