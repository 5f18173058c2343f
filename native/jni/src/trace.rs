//! JNI glue of `io.hrts.trace.TraceWriter` (through its package-private
//! `TraceNatives`): per-process trace files for `hrts merge`. Strings come as
//! UTF-8 byte arrays; a writer is a boxed [`TraceWriter`] behind a `long`
//! handle that the Java side guards (no call after `nClose`).

use super::{guarded, Failure};
use hrts_core::{Error, ErrorKind};
use hrts_trace::{EventKind, SyncOptions, SyncPhase, TraceWriter, WriterOptions};
use jni::sys::{jbyteArray, jclass, jdouble, jdoubleArray, jint, jlong, JNIEnv};

/// The bytes of a Java byte[] (empty for null).
fn bytes(env: *mut JNIEnv, array: jbyteArray) -> Vec<u8> {
    if array.is_null() || env.is_null() {
        return Vec::new();
    }
    // SAFETY: `env` is this thread's JNIEnv and `array` a non-null byte[] the
    // JVM passed in; the buffer has exactly `len` bytes for the copy.
    let signed = unsafe {
        let len = jni!(env, GetArrayLength, array).max(0);
        let mut buf = vec![0i8; len as usize];
        jni!(env, GetByteArrayRegion, array, 0, len, buf.as_mut_ptr());
        buf
    };
    signed.into_iter().map(|b| b as u8).collect()
}

/// A UTF-8 string argument (null: `None`).
fn text(env: *mut JNIEnv, array: jbyteArray, what: &str) -> Result<Option<String>, Failure> {
    if array.is_null() {
        return Ok(None);
    }
    String::from_utf8(bytes(env, array)).map(Some).map_err(|_| {
        Failure::from(Error::new(
            ErrorKind::InvalidArgument,
            format!("hrts trace: the {what} is not valid UTF-8"),
        ))
    })
}

fn required(env: *mut JNIEnv, array: jbyteArray, what: &str) -> Result<String, Failure> {
    text(env, array, what)?.ok_or_else(|| {
        Failure::from(Error::new(
            ErrorKind::InvalidArgument,
            format!("hrts trace: the {what} is missing"),
        ))
    })
}

/// An enum's ordinal from Java as its Rust value.
fn code<T>(v: jint, parse: fn(u8) -> Option<T>, what: &str) -> Result<T, Failure> {
    u8::try_from(v).ok().and_then(parse).ok_or_else(|| {
        Failure::from(Error::new(
            ErrorKind::InvalidArgument,
            format!("hrts trace: {what} {v} is unknown"),
        ))
    })
}

/// The writer behind a live handle (the Java side never passes a closed one).
fn writer<'a>(handle: jlong) -> Result<&'a TraceWriter, Failure> {
    if handle == 0 {
        return Err(Failure::from(Error::new(
            ErrorKind::InvalidArgument,
            "hrts trace: the trace writer is closed",
        )));
    }
    // SAFETY: a non-zero handle is a Box<TraceWriter> from nOpen that the
    // Java side has not passed to nClose yet (io.hrts.trace.TraceWriter calls
    // here under its read lock and closes under its write lock, zeroing the
    // handle); only shared access is taken (TraceWriter is Sync).
    Ok(unsafe { &*(handle as *const TraceWriter) })
}

/// `static native long nOpen(byte[] path, byte[] host, byte[] label)`.
#[no_mangle]
pub extern "system" fn Java_io_hrts_trace_TraceNatives_nOpen(
    env: *mut JNIEnv,
    _class: jclass,
    path: jbyteArray,
    host: jbyteArray,
    label: jbyteArray,
) -> jlong {
    guarded(env, 0, || {
        let path = required(env, path, "path")?;
        let opts = WriterOptions {
            host: text(env, host, "host")?,
            label: text(env, label, "label")?.unwrap_or_default(),
            format: None,
        };
        let w = TraceWriter::create(path, opts)?;
        Ok(Box::into_raw(Box::new(w)) as jlong)
    })
}

/// `static native long nEvent(long handle, int kind, byte[] name, long id,
/// byte[] payload)`: the event's local ITC stamp.
#[no_mangle]
pub extern "system" fn Java_io_hrts_trace_TraceNatives_nEvent(
    env: *mut JNIEnv,
    _class: jclass,
    handle: jlong,
    kind: jint,
    name: jbyteArray,
    id: jlong,
    payload: jbyteArray,
) -> jlong {
    guarded(env, 0, || {
        let w = writer(handle)?;
        let kind = code(kind, EventKind::from_u8, "event kind")?;
        let name = required(env, name, "event name")?;
        let stamp = w.event(kind, &name, id as u64, &bytes(env, payload))?;
        Ok(stamp as jlong)
    })
}

/// `static native void nSync(long handle, byte[] master, int phase,
/// int exchanges, double[] out)`: out[0] = master − local offset in ns,
/// out[1] = its bound.
#[no_mangle]
pub extern "system" fn Java_io_hrts_trace_TraceNatives_nSync(
    env: *mut JNIEnv,
    _class: jclass,
    handle: jlong,
    master: jbyteArray,
    phase: jint,
    exchanges: jint,
    out: jdoubleArray,
) {
    guarded(env, (), || {
        let w = writer(handle)?;
        let master = required(env, master, "master address")?;
        let phase = code(phase, SyncPhase::from_u8, "sync phase")?;
        let opts = SyncOptions {
            exchanges: u32::try_from(exchanges).unwrap_or(0),
            ..SyncOptions::default()
        };
        let r = w.sync(&master, phase, opts)?;
        let values: [jdouble; 2] = [r.offset_ns, r.bound_ns];
        if !env.is_null() && !out.is_null() {
            // SAFETY: `env` is this thread's JNIEnv, `out` a double[] the JVM
            // passed in (Java made it 2 long); a short array makes the JVM
            // throw, not write.
            unsafe { jni!(env, SetDoubleArrayRegion, out, 0, 2, values.as_ptr()) };
        }
        Ok(())
    })
}

/// `static native void nClose(long handle)`: writes the END record, closes the
/// file and frees the writer (also when closing fails).
#[no_mangle]
pub extern "system" fn Java_io_hrts_trace_TraceNatives_nClose(
    env: *mut JNIEnv,
    _class: jclass,
    handle: jlong,
) {
    guarded(env, (), || {
        if handle == 0 {
            return Ok(());
        }
        // SAFETY: a handle from nOpen, handed back exactly once (the Java side
        // zeroes its copy under its write lock before calling).
        let w = unsafe { Box::from_raw(handle as *mut TraceWriter) };
        w.close()?;
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_closed_or_bad_handle_is_an_error_not_a_crash() {
        let env = std::ptr::null_mut();
        assert_eq!(
            Java_io_hrts_trace_TraceNatives_nEvent(
                env,
                std::ptr::null_mut(),
                0,
                0,
                std::ptr::null_mut(),
                0,
                std::ptr::null_mut()
            ),
            0
        );
        Java_io_hrts_trace_TraceNatives_nClose(env, std::ptr::null_mut(), 0);
        assert!(writer(0).is_err());
        assert_eq!(
            Java_io_hrts_trace_TraceNatives_nOpen(
                env,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                std::ptr::null_mut()
            ),
            0,
            "a missing path is refused before any file is touched"
        );
    }
}
