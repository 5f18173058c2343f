//! JNI glue of `io.hrts.trace.TraceWriter` (through its package-private
//! `TraceNative`): per-process trace files for `hrts merge`. Strings come as
//! UTF-8 byte arrays; a writer is a boxed [`TraceWriter`] behind a `long`
//! handle that the Java side guards (no call after `nClose`). Every export goes
//! through the crate's one boundary ([`ThrowHrtsException`]).

use crate::boundary::{Failure, ThrowHrtsException};
use hrts_trace::{EventKind, SyncOptions, SyncPhase, TraceWriter, WriterOptions};
use jni::objects::{JByteArray, JClass, JDoubleArray};
use jni::sys::{jint, jlong};
use jni::{jni_mangle, Env, EnvUnowned};

/// A UTF-8 string argument (null: `None`).
fn text(env: &mut Env<'_>, array: &JByteArray<'_>, what: &str) -> Result<Option<String>, Failure> {
    if array.is_null() {
        return Ok(None);
    }
    String::from_utf8(env.convert_byte_array(array)?)
        .map(Some)
        .map_err(|_| {
            Failure::invalid_argument(format!("hrts trace: the {what} is not valid UTF-8"))
        })
}

fn required(env: &mut Env<'_>, array: &JByteArray<'_>, what: &str) -> Result<String, Failure> {
    text(env, array, what)?
        .ok_or_else(|| Failure::invalid_argument(format!("hrts trace: the {what} is missing")))
}

/// An enum's ordinal from Java as its Rust value.
fn code<T>(v: jint, parse: fn(u8) -> Option<T>, what: &str) -> Result<T, Failure> {
    u8::try_from(v)
        .ok()
        .and_then(parse)
        .ok_or_else(|| Failure::invalid_argument(format!("hrts trace: {what} {v} is unknown")))
}

/// The writer behind a live handle (the Java side never passes a closed one).
fn writer<'a>(handle: jlong) -> Result<&'a TraceWriter, Failure> {
    if handle == 0 {
        return Err(Failure::invalid_argument(
            "hrts trace: the trace writer is closed".into(),
        ));
    }
    // SAFETY: a non-zero handle is a Box<TraceWriter> from nOpen that the
    // Java side has not passed to nClose yet (io.hrts.trace.TraceWriter calls
    // here under its read lock and closes under its write lock, zeroing the
    // handle); only shared access is taken (TraceWriter is Sync).
    Ok(unsafe { &*(handle as *const TraceWriter) })
}

/// `static native long nOpen(byte[] path, byte[] host, byte[] label)`.
#[jni_mangle("io.hrts.trace.TraceNative")]
pub fn n_open<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    path: JByteArray<'local>,
    host: JByteArray<'local>,
    label: JByteArray<'local>,
) -> jlong {
    env.with_env(|env| -> Result<jlong, Failure> {
        let path = required(env, &path, "path")?;
        let opts = WriterOptions {
            host: text(env, &host, "host")?,
            label: text(env, &label, "label")?.unwrap_or_default(),
            format: None,
        };
        let w = TraceWriter::create(path, opts)?;
        Ok(Box::into_raw(Box::new(w)) as jlong)
    })
    .resolve::<ThrowHrtsException>()
}

/// `static native long nEvent(long handle, int kind, byte[] name, long id,
/// byte[] payload)`: the event's local ITC stamp.
#[jni_mangle("io.hrts.trace.TraceNative")]
pub fn n_event<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
    kind: jint,
    name: JByteArray<'local>,
    id: jlong,
    payload: JByteArray<'local>,
) -> jlong {
    env.with_env(|env| -> Result<jlong, Failure> {
        let w = writer(handle)?;
        let kind = code(kind, EventKind::from_u8, "event kind")?;
        let name = required(env, &name, "event name")?;
        let payload = if payload.is_null() {
            Vec::new()
        } else {
            env.convert_byte_array(&payload)?
        };
        Ok(w.event(kind, &name, id as u64, &payload)? as jlong)
    })
    .resolve::<ThrowHrtsException>()
}

/// `static native void nSync(long handle, byte[] master, int phase,
/// int exchanges, double[] out)`: out[0] = master − local offset in ns,
/// out[1] = its bound.
#[jni_mangle("io.hrts.trace.TraceNative")]
pub fn n_sync<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
    master: JByteArray<'local>,
    phase: jint,
    exchanges: jint,
    out: JDoubleArray<'local>,
) {
    env.with_env(|env| -> Result<(), Failure> {
        let w = writer(handle)?;
        let master = required(env, &master, "master address")?;
        let phase = code(phase, SyncPhase::from_u8, "sync phase")?;
        let opts = SyncOptions {
            exchanges: u32::try_from(exchanges).unwrap_or(0),
            ..SyncOptions::default()
        };
        let r = w.sync(&master, phase, opts)?;
        if !out.is_null() {
            // A short array makes the JVM throw, not write.
            out.set_region(env, 0, &[r.offset_ns, r.bound_ns])?;
        }
        Ok(())
    })
    .resolve::<ThrowHrtsException>()
}

/// `static native void nClose(long handle)`: writes the END record, closes the
/// file and frees the writer (also when closing fails).
#[jni_mangle("io.hrts.trace.TraceNative")]
pub fn n_close<'local>(mut env: EnvUnowned<'local>, _class: JClass<'local>, handle: jlong) {
    env.with_env(|_| -> Result<(), Failure> {
        if handle == 0 {
            return Ok(());
        }
        // SAFETY: a handle from nOpen, handed back exactly once (the Java side
        // zeroes its copy under its write lock before calling).
        let w = unsafe { Box::from_raw(handle as *mut TraceWriter) };
        w.close()?;
        Ok(())
    })
    .resolve::<ThrowHrtsException>()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_closed_handle_is_an_error_not_a_crash() {
        assert!(writer(0).is_err());
        assert!(code(300, EventKind::from_u8, "event kind").is_err());
    }
}
