//! The C face of the shared statistics: a typed snapshot of every process's
//! metrics in a statistics segment (each process's as an `hrts_stats_dump`, so
//! the dump accessors read it), their aggregate by name, timer instances that
//! start in one process and stop in another, and removing a segment.

use super::{c_dump, hrts_stats_dump, text};
use crate::boundary::c_calls;
use crate::status::{Failure, HrtsStatus};
use hrts_stats::shared::{ProcessState, Snapshot, StatsSegment};
use hrts_stats::{global, Dump, MetricId};
use std::ffi::{c_char, c_int, CString};
use std::sync::Arc;

/// `hrts_stats_process.state` of a process that is running.
pub const HRTS_STATS_LIVE: u32 = 1;
/// `hrts_stats_process.state` of a process that is gone; its cells stay
/// readable until a writer reclaims them after the grace period
/// (`HRTS_STATS_GRACE_MS`).
pub const HRTS_STATS_EXITED: u32 = 2;

/// One publishing statistics instance of a snapshot (normally one per process).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
#[allow(non_camel_case_types)]
pub struct hrts_stats_process {
    pub pid: u32,
    /// Which instance of the process (1 for its first; a process that makes
    /// several statistics instances has several).
    pub instance: u32,
    /// The program (service) name it registered under, NUL-terminated:
    /// `shared-memory.program`, else `HRTS_STATS_PROGRAM`, else (Java) the main
    /// class or jar, else `/proc/PID/comm`.
    pub program: [c_char; 32],
    /// `HRTS_STATS_LIVE` or `HRTS_STATS_EXITED`.
    pub state: u32,
    /// When the instance last published (its dump's timestamp, epoch ns).
    pub timestamp: u64,
    /// Its metrics, read with `hrts_stats_dump_len`, `_metric` and `_json`;
    /// valid until the snapshot is freed. Not to be passed to
    /// `hrts_stats_dump_free`.
    pub dump: *const hrts_stats_dump,
}

/// A snapshot of a statistics segment (`hrts_stats_snapshot_take`).
#[allow(non_camel_case_types)]
pub struct hrts_stats_snapshot {
    segment: CString,
    taken: u64,
    processes: Vec<hrts_stats_process>,
    /// Owns what the `dump` pointers of `processes` point to (never resized,
    /// so its elements do not move; read only through those pointers).
    _dumps: Vec<hrts_stats_dump>,
    aggregate: Box<hrts_stats_dump>,
    damaged_slots: usize,
    damaged_cells: usize,
}

fn state_code(s: ProcessState) -> u32 {
    match s {
        ProcessState::Live => HRTS_STATS_LIVE,
        ProcessState::Exited => HRTS_STATS_EXITED,
    }
}

fn program_field(name: &str) -> [c_char; 32] {
    let mut out = [0 as c_char; 32];
    // At most 31 bytes, so the field stays NUL-terminated; a NUL inside the
    // name (never written by hrts) ends it early.
    for (slot, &b) in out.iter_mut().zip(name.as_bytes().iter().take(31)) {
        *slot = b as c_char;
    }
    out
}

fn c_snapshot(snap: Snapshot, aggregate: Dump) -> Box<hrts_stats_snapshot> {
    let (damaged_slots, damaged_cells) = (snap.damaged_slots.len(), snap.damaged_cells.len());
    let mut processes = Vec::with_capacity(snap.processes.len());
    let mut dumps = Vec::with_capacity(snap.processes.len());
    for p in snap.processes {
        processes.push(hrts_stats_process {
            pid: p.pid,
            instance: p.instance,
            program: program_field(&p.program),
            state: state_code(p.state),
            timestamp: p.dump.timestamp,
            dump: std::ptr::null(),
        });
        dumps.push(*c_dump(Arc::new(p.dump)));
    }
    // `dumps` is complete: its elements no longer move.
    for (p, d) in processes.iter_mut().zip(&dumps) {
        p.dump = d;
    }
    Box::new(hrts_stats_snapshot {
        // Segment names come from a C string or the environment: no NUL.
        segment: CString::new(snap.segment).unwrap_or_default(),
        taken: snap.taken,
        processes,
        _dumps: dumps,
        aggregate: c_dump(Arc::new(aggregate)),
        damaged_slots,
        damaged_cells,
    })
}

/// The segment name a reader asked for: the default one for NULL.
fn segment_name(segment: *const c_char, function: &str) -> Result<String, Failure> {
    if segment.is_null() {
        Ok(hrts_stats::shared::name_from_env())
    } else {
        Ok(text(segment, "segment", function)?.to_string())
    }
}

fn timer_id(timer: u64, function: &str) -> Result<MetricId, Failure> {
    MetricId::from_bits(timer).ok_or_else(|| {
        Failure::new(
            HrtsStatus::E_INVALID_ARGUMENT,
            format!("{function}: {timer} is no metric id; get one from hrts_stats_metric"),
        )
    })
}

/// Writes `value` through `out` unless it is NULL.
///
/// # Safety
/// `out` must be NULL or valid for one write of `T`.
unsafe fn put<T>(out: *mut T, value: T) {
    if !out.is_null() {
        // SAFETY: non-NULL, and valid for the write by this function's contract.
        unsafe { out.write(value) };
    }
}

/// The snapshot behind a pointer.
///
/// # Safety
/// `snapshot` must be NULL or a snapshot not yet freed, for as long as the
/// reference is used.
unsafe fn snapshot_ref<'a>(
    snapshot: *const hrts_stats_snapshot,
) -> Option<&'a hrts_stats_snapshot> {
    // SAFETY: NULL or a live snapshot, by this function's contract.
    unsafe { snapshot.as_ref() }
}

c_calls! {
    /// Takes a snapshot of the statistics segment `segment` (NULL: the one named by
    /// `HRTS_STATS_SEGMENT`, else the user's default `/hrts-stats-<uid>`): every
    /// publishing process's metrics as of its last publication, and their
    /// aggregate by name. The caller frees it with `hrts_stats_snapshot_free`.
    ///
    /// No segment of that name (no process has published) is no error: the
    /// snapshot has no process and its `taken` is 0. A damaged, truncated or
    /// foreign segment gives `HRTS_E_CORRUPT`, `_TRUNCATED`, `_FOREIGN` or
    /// `_VERSION`; one of another user `HRTS_E_PERMISSION`.
    ///
    /// # Safety
    /// `segment` must be NULL or a NUL-terminated string; `out` NULL
    /// (`HRTS_E_NULL_POINTER`) or writable.
    unsafe fn hrts_stats_snapshot_take(segment: *const c_char) -> (out: *mut hrts_stats_snapshot) {
        let name = segment_name(segment, FUNCTION)?;
        let snap = StatsSegment::snapshot_of(&name)?;
        let aggregate = snap.aggregate();
        Ok(Box::into_raw(c_snapshot(snap, aggregate)))
    }

    /// The name of the snapshot's segment ("" for NULL); valid until it is freed.
    ///
    /// # Safety
    /// `snapshot` must be NULL or a snapshot not yet freed.
    #[on_panic(c"".as_ptr())]
    unsafe fn hrts_stats_snapshot_segment(snapshot: *const hrts_stats_snapshot) -> *const c_char {
        // SAFETY: NULL or a live snapshot, by the contract.
        unsafe { snapshot_ref(snapshot) }.map_or(c"".as_ptr(), |s| s.segment.as_ptr())
    }

    /// When the snapshot was taken (epoch nanoseconds on the hrts timeline); 0 if
    /// there was no segment, and for NULL.
    ///
    /// # Safety
    /// `snapshot` must be NULL or a snapshot not yet freed.
    #[on_panic(0)]
    unsafe fn hrts_stats_snapshot_taken(snapshot: *const hrts_stats_snapshot) -> u64 {
        // SAFETY: NULL or a live snapshot, by the contract.
        unsafe { snapshot_ref(snapshot) }.map_or(0, |s| s.taken)
    }

    /// How many processes (publishing instances) the snapshot holds (0 for NULL).
    ///
    /// # Safety
    /// `snapshot` must be NULL or a snapshot not yet freed.
    #[on_panic(0)]
    unsafe fn hrts_stats_snapshot_len(snapshot: *const hrts_stats_snapshot) -> usize {
        // SAFETY: NULL or a live snapshot, by the contract.
        unsafe { snapshot_ref(snapshot) }.map_or(0, |s| s.processes.len())
    }

    /// How many process slots and metric cells of the segment the snapshot left
    /// out because their words do not match their check words (a process wrote
    /// over them): `*slots` and `*cells` (either may be NULL); the return value is
    /// their sum, 0 for an undamaged segment and for NULL. Nothing damaged is
    /// ever shown as a number; a damaged slot's metrics are left out with it.
    ///
    /// # Safety
    /// `snapshot` must be NULL or a snapshot not yet freed; `slots` and `cells`
    /// each NULL or writable.
    #[on_panic(0)]
    unsafe fn hrts_stats_snapshot_damaged(
        snapshot: *const hrts_stats_snapshot,
        slots: *mut usize,
        cells: *mut usize,
    ) -> usize {
        // SAFETY: NULL or a live snapshot, by the contract.
        let (s, c) = unsafe { snapshot_ref(snapshot) }
            .map_or((0, 0), |s| (s.damaged_slots, s.damaged_cells));
        // SAFETY: each NULL or writable, by the contract.
        unsafe {
            put(slots, s);
            put(cells, c);
        }
        s + c
    }

    /// The `index`-th process of the snapshot (ordered by pid, then instance), or
    /// NULL when out of range. Valid until the snapshot is freed.
    ///
    /// # Safety
    /// `snapshot` must be NULL or a snapshot not yet freed.
    #[on_panic(std::ptr::null())]
    unsafe fn hrts_stats_snapshot_process(
        snapshot: *const hrts_stats_snapshot,
        index: usize,
    ) -> *const hrts_stats_process {
        // SAFETY: NULL or a live snapshot, by the contract.
        unsafe { snapshot_ref(snapshot) }
            .and_then(|s| s.processes.get(index))
            .map_or(std::ptr::null(), |p| p as *const _)
    }

    /// Every process's metrics aggregated by name, read with the dump accessors
    /// (NULL for NULL); valid until the snapshot is freed, not to be passed to
    /// `hrts_stats_dump_free`. A counter's value is the sum of the processes'
    /// values; a gauge's or timer's the value of the most recent update; the
    /// statistics add up their counts, sums, interval counts and sums and rates, take the
    /// min of the minimums and the max of the maximums; quantiles are NaN unless
    /// one process alone has the metric (quantiles cannot be merged from
    /// quantiles). A name used with different kinds aggregates only the kind of the
    /// lowest pid.
    ///
    /// # Safety
    /// `snapshot` must be NULL or a snapshot not yet freed.
    #[on_panic(std::ptr::null())]
    unsafe fn hrts_stats_snapshot_aggregate(
        snapshot: *const hrts_stats_snapshot,
    ) -> *const hrts_stats_dump {
        // SAFETY: NULL or a live snapshot, by the contract.
        unsafe { snapshot_ref(snapshot) }.map_or(std::ptr::null(), |s| &*s.aggregate as *const _)
    }

    /// Frees a snapshot and every dump in it; NULL is ignored.
    ///
    /// # Safety
    /// `snapshot` must be NULL or a snapshot from `hrts_stats_snapshot_take` not
    /// yet freed; neither it nor anything read from it may be used afterwards.
    unsafe fn hrts_stats_snapshot_free(snapshot: *mut hrts_stats_snapshot) {
        if !snapshot.is_null() {
            // SAFETY: a pointer from Box::into_raw in this module, freed once
            // (the contract).
            drop(unsafe { Box::from_raw(snapshot) });
        }
    }

    /// Starts (or restarts) instance `instance` of a timer in the statistics
    /// segment, so that any process of the user can stop it
    /// (`hrts_stats_timer_stop_shared` with the same timer name and instance).
    /// Needs the statistics running and publishing (`hrts_stats_start`; the
    /// configuration's `shared-memory.enable`, on by default): otherwise
    /// `HRTS_E_INVALID_ARGUMENT`. `HRTS_E_FULL` when the segment's table of
    /// running instances has no room.
    fn hrts_stats_timer_start_shared(timer: u64, instance: u64) -> () {
        let id = timer_id(timer, FUNCTION)?;
        Ok(global().timer_start_shared_id(id, instance)?)
    }

    /// Stops a shared timer instance started by any process of the user and
    /// records its duration, measured on the shared timeline, in this process's
    /// timer. Returns `HRTS_SUCCESS` also when no process started that instance:
    /// then `*found` is 0 and nothing is recorded; otherwise `*found` is 1 and
    /// `*duration_ns` the duration. Either pointer may be NULL.
    ///
    /// # Safety
    /// `duration_ns` and `found` must each be NULL or writable.
    unsafe fn hrts_stats_timer_stop_shared(
        timer: u64,
        instance: u64,
        duration_ns: *mut u64,
        found: *mut c_int,
    ) -> () {
        let id = timer_id(timer, FUNCTION)?;
        let d = global().timer_stop_shared_id(id, instance, true)?;
        // SAFETY: each NULL or writable, by the contract.
        unsafe {
            put(found, d.is_some() as c_int);
            if let Some(d) = d {
                put(duration_ns, d);
            }
        }
        Ok(())
    }

    /// Drops a shared timer instance without recording it; `*found` (if not NULL)
    /// says whether one was running.
    ///
    /// # Safety
    /// `found` must be NULL or writable.
    unsafe fn hrts_stats_timer_discard_shared(timer: u64, instance: u64, found: *mut c_int) -> () {
        let id = timer_id(timer, FUNCTION)?;
        let d = global().timer_stop_shared_id(id, instance, false)?;
        // SAFETY: NULL or writable, by the contract.
        unsafe { put(found, d.is_some() as c_int) };
        Ok(())
    }

    /// Removes the statistics segment `segment` (NULL: the one named by
    /// `HRTS_STATS_SEGMENT`, else the user's default), its name and its page;
    /// `*existed` (if not NULL) says whether there was one. Processes still
    /// attached keep their mapping; new ones create a fresh segment.
    ///
    /// # Safety
    /// `segment` must be NULL or a NUL-terminated string; `existed` NULL or
    /// writable.
    unsafe fn hrts_stats_segment_unlink(segment: *const c_char, existed: *mut c_int) -> () {
        let name = segment_name(segment, FUNCTION)?;
        let removed = StatsSegment::unlink(&name)?;
        // SAFETY: NULL or writable, by the contract.
        unsafe { put(existed, removed as c_int) };
        Ok(())
    }
}
