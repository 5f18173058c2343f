//! Counter sources. STUB: the clock-core work replaces the bodies, keeping signatures.

/// A counter source; the discriminant is stored in the shared segment.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SourceId {
    MonotonicRaw = 1,
    Tsc = 2,
    Cntvct = 3,
    TimeBase = 4,
}

impl SourceId {
    pub fn from_u32(v: u32) -> Option<SourceId> {
        match v {
            1 => Some(SourceId::MonotonicRaw),
            2 => Some(SourceId::Tsc),
            3 => Some(SourceId::Cntvct),
            4 => Some(SourceId::TimeBase),
            _ => None,
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            SourceId::MonotonicRaw => "monotonic-raw",
            SourceId::Tsc => "tsc",
            SourceId::Cntvct => "cntvct",
            SourceId::TimeBase => "timebase",
        }
    }
    /// Whether this build can read the source at all (architecture).
    pub fn supported(self) -> bool {
        matches!(self, SourceId::MonotonicRaw)
    }
}

/// Unordered read.
#[inline(always)]
pub fn read(id: SourceId) -> u64 {
    let _ = id;
    crate::os::monotonic_raw_ns()
}

/// Ordered read (not executed before earlier instructions).
#[inline(always)]
pub fn read_ordered(id: SourceId) -> u64 {
    read(id)
}
