//! Time: the stamps (epoch nanoseconds, ordered or not, microseconds, IBMTS's
//! seconds and microseconds), the base they are computed from (IBMTS's
//! `getBaseInfo` / `setBaseInfo`, its generation) and how far the timeline is
//! from the system clock. Each on the process's segment and on a handle.

use crate::boundary::c_calls;
use crate::status::{Failure, HrtsStatus};

c_calls! {
    /// Nanoseconds since the Unix epoch: the cheapest, finest hrts stamp. The
    /// counter read is unordered (the CPU may execute it a little early); use
    /// `hrts_get_epoch_nanoseconds_ordered` for stamps compared across threads or
    /// processes.
    ///
    /// # Safety
    /// `out` must be NULL (`HRTS_E_NULL_POINTER`) or valid for writing one `uint64_t`.
    unsafe fn hrts_get_epoch_nanoseconds / hrts_segment_epoch_nanoseconds (b) -> (out: u64) {
        Ok(b.now_ns())
    }

    /// `hrts_get_epoch_nanoseconds` with an ordered counter read: the read cannot
    /// execute before the instructions that precede the call, so a stamp taken
    /// after observing another thread's or process's event is not earlier than
    /// the stamp that thread took before it. A few ns dearer.
    ///
    /// # Safety
    /// `out` must be NULL (`HRTS_E_NULL_POINTER`) or valid for writing one `uint64_t`.
    unsafe fn hrts_get_epoch_nanoseconds_ordered / hrts_segment_epoch_nanoseconds_ordered (b)
        -> (out: u64)
    {
        Ok(b.now_ns_ordered())
    }

    /// IBMTS `getEpochMicroseconds`: microseconds since the Unix epoch.
    ///
    /// # Safety
    /// `out` must be NULL (`HRTS_E_NULL_POINTER`) or valid for writing one `uint64_t`.
    unsafe fn hrts_get_epoch_microseconds / hrts_segment_epoch_microseconds (b) -> (out: u64) {
        Ok(b.epoch_micros())
    }

    /// IBMTS `calcTimeStamp`: seconds and microseconds since the Unix epoch, in
    /// IBMTS's 32-bit layout. Returns `HRTS_E_OVERFLOW` (writing nothing) instead of
    /// wrapping once the seconds no longer fit in 32 bits (in 2106); use
    /// `hrts_calc_time_stamp64` in new code.
    ///
    /// # Safety
    /// Each pointer must be NULL (`HRTS_E_NULL_POINTER`) or valid for writing one
    /// `uint32_t`.
    unsafe fn hrts_calc_time_stamp / hrts_segment_calc_time_stamp (b)
        -> (seconds: u32, microseconds: u32)
    {
        let ts = b.calc_time_stamp();
        Ok((narrow_seconds(ts.seconds, FUNCTION)?, ts.microseconds))
    }

    /// `hrts_calc_time_stamp` with 64-bit seconds: never overflows.
    ///
    /// # Safety
    /// `seconds` must be NULL or valid for writing one `uint64_t`, `microseconds`
    /// NULL or valid for writing one `uint32_t`; NULL gives `HRTS_E_NULL_POINTER`.
    unsafe fn hrts_calc_time_stamp64 / hrts_segment_calc_time_stamp64 (b)
        -> (seconds: u64, microseconds: u32)
    {
        let ts = b.calc_time_stamp();
        Ok((ts.seconds, ts.microseconds))
    }

    /// How far the process's segment is from the system clock now:
    /// `CLOCK_REALTIME` minus the segment's stamp, in nanoseconds, measured with
    /// the narrowest of several brackets (`offset ns` in `hrts info`). A tracking
    /// segment keeps it small; a frozen one drifts by its calibration error and
    /// does not follow steps of the clock.
    ///
    /// # Safety
    /// `out` must be NULL (`HRTS_E_NULL_POINTER`) or valid for writing one `int64_t`.
    unsafe fn hrts_get_offset_nanoseconds / hrts_segment_offset_nanoseconds (b) -> (out: i64) {
        Ok(b.offset_now())
    }

    /// IBMTS `getBaseInfo`: the counter frequency in Hz, the counter value of the
    /// current base, and the base's calendar time (seconds and microseconds since
    /// the Unix epoch). Opens the process's segment (`HRTS_SEGMENT`, default
    /// `/hrts-<uid>`) on first use.
    ///
    /// # Safety
    /// Each pointer must be NULL (then `HRTS_E_NULL_POINTER` is returned and nothing
    /// is written) or valid for writing one `uint64_t`.
    unsafe fn hrts_get_base_info / hrts_segment_base_info (b)
        -> (frequency: u64, counter: u64, seconds: u64, microseconds: u64)
    {
        let info = b.base_info();
        Ok((info.frequency, info.counter, info.seconds, info.microseconds))
    }

    /// The generation of the current base: 1 when the segment was created, +1 for
    /// every `hrts_set_base_info` (by any process) and every re-base after the
    /// counter went backwards.
    ///
    /// # Safety
    /// `out` must be NULL (`HRTS_E_NULL_POINTER`) or valid for writing one `uint64_t`.
    unsafe fn hrts_get_generation / hrts_segment_generation (b) -> (out: u64) {
        Ok(b.base_info().generation)
    }

    /// IBMTS `setBaseInfo`: pairs the counter with the calendar clock anew for every
    /// process attached to the segment and bumps the generation. This is the one
    /// way a change of the system clock reaches the timeline. May return
    /// `HRTS_E_TIMEOUT` if another live process holds the base for too long.
    fn hrts_set_base_info / hrts_segment_set_base_info (b) -> () {
        b.set_base_info()?;
        Ok(())
    }
}

/// The seconds in the caller's type, or the overflow failure that names the
/// 64-bit function to use instead (only the 32-bit one can fail).
fn narrow_seconds<S: TryFrom<u64>>(seconds: u64, function: &str) -> Result<S, Failure> {
    S::try_from(seconds).map_err(|_| {
        Failure::new(
            HrtsStatus::E_OVERFLOW,
            format!(
                "{function}: {seconds} seconds since the epoch do not fit in 32 bits; \
                 use {function}64"
            ),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seconds_past_2106_overflow_instead_of_wrapping() {
        let f = "hrts_calc_time_stamp";
        assert_eq!(narrow_seconds::<u32>(u32::MAX as u64, f).unwrap(), u32::MAX);
        let err = narrow_seconds::<u32>(u32::MAX as u64 + 1, f).unwrap_err();
        assert_eq!(err.status, HrtsStatus::E_OVERFLOW);
        assert!(err.message.contains("use hrts_calc_time_stamp64"));
        assert_eq!(narrow_seconds::<u64>(u64::MAX, f).unwrap(), u64::MAX);
    }
}
