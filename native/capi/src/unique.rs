//! Unique stamps and sequences: stamps no two callers of a segment share,
//! sequence numbers never repeated (persisted across reboots), and the Intel
//! Trace Collector style stamps unique within the process.

use crate::boundary::c_calls;
use hrts_core::process;

c_calls! {
    /// A unique stamp: epoch nanoseconds strictly greater than every unique stamp
    /// issued before it through this segment, by any thread of any process. It is
    /// the real time unless several callers land in the same nanosecond, when it
    /// is the last one issued + 1.
    ///
    /// # Safety
    /// `out` must be NULL (`HRTS_E_NULL_POINTER`) or valid for writing one `uint64_t`.
    unsafe fn hrts_get_unique_nanoseconds / hrts_segment_unique_nanoseconds (b) -> (out: u64) {
        Ok(b.next_unique()?)
    }

    /// The next sequence number of the segment: shared by every process attached
    /// to it and never repeated, even after every process and the segment itself
    /// are gone (a reboot). Every `HRTS_SEQ_INTERVAL` numbers (default 1000) the
    /// high-water mark is persisted to `HRTS_SEQ_FILE` (default
    /// `~/.local/state/hrts/<segment>.seq`; for a handle on another name, see
    /// `hrts_segment_open`); a damaged file gives `HRTS_E_PERSIST`, never a
    /// restart at zero.
    ///
    /// # Safety
    /// `out` must be NULL (`HRTS_E_NULL_POINTER`) or valid for writing one `uint64_t`.
    unsafe fn hrts_next_sequence / hrts_segment_next_sequence (b) -> (out: u64) {
        Ok(b.next_sequence()?)
    }

    /// The next Intel Trace Collector style stamp of this process: the clock tick
    /// since the process's first ITC stamp in the high bits and an event counter in
    /// the low `HRTS_ITC_EVENT_BITS` bits (default 13), unique within the process
    /// even when the tick (`HRTS_ITC_TICK_NS`, default 1 ns) is coarse. When the
    /// counter overflows, the tick is advanced artificially. `HRTS_E_INVALID_ARGUMENT`
    /// if the format in the environment is invalid or the run outlived its ticks.
    ///
    /// # Safety
    /// `out` must be NULL (`HRTS_E_NULL_POINTER`) or valid for writing one `uint64_t`.
    unsafe fn hrts_itc_next() -> (out: u64) {
        Ok(process::itc_next()?)
    }

    /// Splits an ITC stamp of this process into its clock tick and event counter.
    ///
    /// # Safety
    /// `tick` and `event` must each be NULL (`HRTS_E_NULL_POINTER`) or valid for
    /// writing one `uint64_t`.
    unsafe fn hrts_itc_decode(stamp: u64) -> (tick: u64, event: u64) {
        Ok(process::itc()?.format().decode(stamp))
    }

    /// Epoch nanoseconds of an ITC stamp of this process: the start of its run plus
    /// its tick (the event counter is dropped, as the accurate ITC conversion does).
    ///
    /// # Safety
    /// `out` must be NULL (`HRTS_E_NULL_POINTER`) or valid for writing one `uint64_t`.
    unsafe fn hrts_itc_to_epoch_nanoseconds(stamp: u64) -> (out: u64) {
        Ok(process::itc()?.to_epoch_ns(stamp))
    }

    /// The maximum number of this process's ITC stamps on one clock tick, counted
    /// as Intel Trace Collector counts it: 0 when no two stamps shared a tick, N
    /// when some tick held N + 1 (the clock's resolution was too coarse).
    ///
    /// # Safety
    /// `out` must be NULL (`HRTS_E_NULL_POINTER`) or valid for writing one `uint64_t`.
    unsafe fn hrts_itc_max_events_per_tick() -> (out: u64) {
        Ok(process::itc()?.max_events_per_tick())
    }
}
