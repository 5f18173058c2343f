//! Ticks to nanoseconds. STUB.
use crate::error::Result;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Scale {
    pub mult: u64,
    pub shift: u32,
    pub max_delta: u64,
}

impl Scale {
    pub fn for_frequency(hz: u64) -> Result<Scale> {
        let _ = hz;
        Ok(Scale {
            mult: 1 << 32,
            shift: 32,
            max_delta: u32::MAX as u64,
        })
    }
    #[inline(always)]
    pub fn to_ns_fast(&self, delta: u64, frac: u64) -> u64 {
        (delta * self.mult + frac) >> self.shift
    }
    pub fn to_ns_exact(&self, delta: u64, frac: u64) -> u128 {
        (delta as u128 * self.mult as u128 + frac as u128) >> self.shift
    }
}
