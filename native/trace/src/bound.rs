//! The bound record's content: what a host's time service said of its clock's
//! error. Apart from the file format (which encodes it) so that the clocks
//! that read it need not depend on the format.

use hrts_core::{BoundSource, BoundStatus};

/// What the host's time service said of its clock's error when a writer
/// asked (the word `hrts_core::SharedBase::now_bounded` widens stamps by). A
/// writer records one when it opens its file, one when it closes it, and one
/// at the first event after the word changed (see `TraceWriter::record_bound`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BoundRecord {
    /// The trace clock (local epoch ns) when the bound was read.
    pub at_ns: u64,
    pub status: BoundStatus,
    pub source: BoundSource,
    /// The time service's own bound, ns.
    pub bound_ns: u64,
    /// Half the interval a stamp taken then got, ns (0 unless bounded).
    pub half_width_ns: u64,
    /// The widest half width a stamp gets while this word stays
    /// synchronized, ns (0 unless synchronized): what a merge widens each
    /// of the host's stamps by.
    pub widest_ns: u64,
}

impl BoundRecord {
    /// A clock whose segment holds no bound yet (or a frozen one).
    pub fn unknown(at_ns: u64) -> BoundRecord {
        BoundRecord {
            at_ns,
            status: BoundStatus::Unknown,
            source: BoundSource::None,
            bound_ns: 0,
            half_width_ns: 0,
            widest_ns: 0,
        }
    }
}
