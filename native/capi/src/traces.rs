//! Traces, the C trace writer: per-process trace files for `hrts merge` (see
//! native/trace/FORMAT.md), stamped with the process's segment clock.

use crate::boundary::c_calls;
use crate::status::{Failure, HrtsStatus};
use ::hrts_trace::{EventKind, SyncOptions, SyncPhase, TraceWriter, WriterOptions};
use std::ffi::{c_char, CStr};

/// An open trace file (opaque). Any thread may record to it at once; only
/// `hrts_trace_close` must not race with the other calls on the same handle.
#[allow(non_camel_case_types)]
pub struct hrts_trace {
    writer: TraceWriter,
}

/// Event kind: a point in time.
pub const HRTS_TRACE_INSTANT: u32 = 0;
/// Event kind: a span begins (matched with the next END of the same name).
pub const HRTS_TRACE_BEGIN: u32 = 1;
/// Event kind: a span ends.
pub const HRTS_TRACE_END: u32 = 2;
/// Event kind: a message leaves; its `id` names it.
pub const HRTS_TRACE_SEND: u32 = 3;
/// Event kind: the message `id` arrives.
pub const HRTS_TRACE_RECV: u32 = 4;

/// Sync phase: at the start of the run.
pub const HRTS_SYNC_START: u32 = 0;
/// Sync phase: during the run.
pub const HRTS_SYNC_PERIODIC: u32 = 1;
/// Sync phase: at the end of the run.
pub const HRTS_SYNC_END: u32 = 2;

/// A required C string argument as UTF-8.
///
/// # Safety
/// `p` must be NULL or point to a NUL-terminated string.
unsafe fn text<'a>(p: *const c_char, arg: &str, function: &str) -> Result<&'a str, Failure> {
    if p.is_null() {
        return Err(Failure::null(arg, function));
    }
    // SAFETY: non-NULL and NUL-terminated by this function's contract.
    unsafe { CStr::from_ptr(p) }.to_str().map_err(|_| {
        Failure::new(
            HrtsStatus::E_INVALID_ARGUMENT,
            format!("{function}: argument `{arg}` is not UTF-8"),
        )
    })
}

/// An optional C string argument (NULL: none).
///
/// # Safety
/// As [`text`].
unsafe fn optional<'a>(
    p: *const c_char,
    arg: &str,
    function: &str,
) -> Result<Option<&'a str>, Failure> {
    if p.is_null() {
        return Ok(None);
    }
    // SAFETY: passed on from the caller.
    unsafe { text(p, arg, function) }.map(Some)
}

/// A numeric code (`HRTS_TRACE_*`, `HRTS_SYNC_*`) as its Rust value.
fn code<T>(
    v: u32,
    parse: fn(u8) -> Option<T>,
    function: &str,
    arg: &str,
    range: &str,
) -> Result<T, Failure> {
    u8::try_from(v).ok().and_then(parse).ok_or_else(|| {
        Failure::new(
            HrtsStatus::E_INVALID_ARGUMENT,
            format!("{function}: {arg} {v} is not one of {range}"),
        )
    })
}

/// The writer behind a handle.
///
/// # Safety
/// `t` must be NULL or a handle from `hrts_trace_open` not yet closed.
unsafe fn writer<'a>(t: *mut hrts_trace, function: &str) -> Result<&'a TraceWriter, Failure> {
    if t.is_null() {
        return Err(Failure::null("trace", function));
    }
    // SAFETY: a live handle from hrts_trace_open, by this function's contract;
    // only shared access is taken (TraceWriter is Sync).
    Ok(unsafe { &(*t).writer })
}

c_calls! {
    /// Creates (or replaces) the trace file `path` of this process, stamped with
    /// the process's segment clock (`HRTS_SEGMENT`). `host` names this host in the
    /// header (NULL: `HRTS_TRACE_HOST`, else the hostname); `label` names the
    /// writer (NULL: none). On success `*out` receives the handle; close it with
    /// `hrts_trace_close`.
    ///
    /// # Safety
    /// `path` must be a NUL-terminated string, `host` and `label` NULL or
    /// NUL-terminated strings, `out` NULL (`HRTS_E_NULL_POINTER`) or valid for
    /// writing one pointer.
    unsafe fn hrts_trace_open(
        path: *const c_char,
        host: *const c_char,
        label: *const c_char,
    ) -> (out: *mut hrts_trace) {
        // SAFETY: by this function's contract.
        let (path, host, label) = unsafe {
            (
                text(path, "path", FUNCTION)?,
                optional(host, "host", FUNCTION)?,
                optional(label, "label", FUNCTION)?,
            )
        };
        let opts = WriterOptions {
            host: host.map(str::to_string),
            label: label.unwrap_or_default().to_string(),
            format: None,
        };
        let writer = TraceWriter::create(path, opts)?;
        Ok(Box::into_raw(Box::new(hrts_trace { writer })))
    }

    /// Records an event stamped now: `kind` one of `HRTS_TRACE_*`, `name` its
    /// name, `id` the message id of a SEND/RECV pair (or any correlation, 0 if
    /// none), `payload` `len` bytes of data (NULL if `len` is 0). Writes the
    /// event's local ITC stamp to `*stamp` unless it is NULL.
    ///
    /// # Safety
    /// `trace` must be an open handle (or NULL), `name` a NUL-terminated string,
    /// `payload` valid for reading `len` bytes (or NULL with `len` 0), `stamp`
    /// NULL or valid for writing one `uint64_t`.
    unsafe fn hrts_trace_event(
        trace: *mut hrts_trace,
        kind: u32,
        name: *const c_char,
        id: u64,
        payload: *const u8,
        len: usize,
        stamp: *mut u64,
    ) -> () {
        // SAFETY: by this function's contract.
        let (w, name) = unsafe { (writer(trace, FUNCTION)?, text(name, "name", FUNCTION)?) };
        let kind = code(
            kind,
            EventKind::from_u8,
            FUNCTION,
            "kind",
            "HRTS_TRACE_INSTANT..HRTS_TRACE_RECV",
        )?;
        let data: &[u8] = if len == 0 {
            &[]
        } else if payload.is_null() {
            return Err(Failure::null("payload", FUNCTION));
        } else {
            // SAFETY: valid for `len` bytes by this function's contract.
            unsafe { std::slice::from_raw_parts(payload, len) }
        };
        let s = w.event(kind, name, id, data)?;
        if !stamp.is_null() {
            // SAFETY: non-NULL and valid for one write by the contract.
            unsafe { stamp.write(s) };
        }
        Ok(())
    }

    /// Runs one sync round of `exchanges` ping-pongs (0: 50) with the master at
    /// `master` ("HOST:PORT", where `hrts sync serve` listens) and records it in
    /// the trace; `phase` is one of `HRTS_SYNC_*`. Writes the master-minus-local
    /// offset in ns and its error bound (half the fastest round trip) to
    /// `*offset_ns` and `*bound_ns` unless NULL. `HRTS_E_TIMEOUT` if the master
    /// does not answer.
    ///
    /// # Safety
    /// `trace` must be an open handle (or NULL), `master` a NUL-terminated string,
    /// `offset_ns` and `bound_ns` NULL or valid for writing one `double`.
    unsafe fn hrts_trace_sync(
        trace: *mut hrts_trace,
        master: *const c_char,
        phase: u32,
        exchanges: u32,
        offset_ns: *mut f64,
        bound_ns: *mut f64,
    ) -> () {
        // SAFETY: by this function's contract.
        let (w, master) = unsafe { (writer(trace, FUNCTION)?, text(master, "master", FUNCTION)?) };
        let phase = code(
            phase,
            SyncPhase::from_u8,
            FUNCTION,
            "phase",
            "HRTS_SYNC_START..HRTS_SYNC_END",
        )?;
        let opts = SyncOptions {
            exchanges: if exchanges == 0 { 50 } else { exchanges },
            ..SyncOptions::default()
        };
        let round = w.sync(master, phase, opts)?;
        // SAFETY: each is NULL or valid for one write by the contract.
        unsafe {
            if !offset_ns.is_null() {
                offset_ns.write(round.offset_ns);
            }
            if !bound_ns.is_null() {
                bound_ns.write(round.bound_ns);
            }
        }
        Ok(())
    }

    /// Writes the trace's end record, closes the file and frees the handle (also
    /// when closing fails: the handle is gone either way). NULL is a no-op.
    ///
    /// # Safety
    /// `trace` must be NULL or an open handle, not used again afterwards.
    unsafe fn hrts_trace_close(trace: *mut hrts_trace) -> () {
        if trace.is_null() {
            return Ok(());
        }
        // SAFETY: a live handle from hrts_trace_open, handed back exactly once.
        let handle = unsafe { Box::from_raw(trace) };
        handle.writer.close()?;
        Ok(())
    }
}
