//! Bounds: an interval that holds true time, from a stamp widened by the system
//! clock's error bound (the values of its status are `hrts_bound_status`, in
//! `segment_types`).

use crate::boundary::c_calls;

c_calls! {
    /// An interval that holds true time now (TrueTime's `TT.now()`): `earliest`
    /// and `latest` in epoch ns, from an ordered stamp widened by the system
    /// clock's error bound (the time service's word, the line's own error, the
    /// counter's cross-CPU shift and the drift since the bound was learned), and
    /// its `status` (an `hrts_bound_status`: synchronized, or free-running when the
    /// word is old). `HRTS_E_UNSYNCHRONIZED`, with nothing written, when no
    /// interval can be given: the clock is not synchronized, the bound is older
    /// than its void-after, the segment is frozen, or the counter or the clock
    /// was disrupted (seen by a writer, or by this call: an interval that
    /// excludes the system clock read around the stamp is never given); the
    /// message says which.
    ///
    /// # Safety
    /// Each of `earliest`, `latest` and `status` must be NULL
    /// (`HRTS_E_NULL_POINTER`) or valid for writing one value of its type.
    unsafe fn hrts_get_bounded_epoch_nanoseconds / hrts_segment_bounded_epoch_nanoseconds (b)
        -> (earliest: u64, latest: u64, status: u32)
    {
        let bounded = b.now_bounded()?;
        Ok((bounded.earliest, bounded.latest, bounded.status.code()))
    }
}
