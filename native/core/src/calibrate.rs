//! Calibration. STUB.
use crate::error::Result;
use crate::source::SourceId;
use std::time::Duration;

#[derive(Clone, Debug)]
pub struct CalibrationConfig {
    pub budget: Duration,
}

impl Default for CalibrationConfig {
    fn default() -> Self {
        CalibrationConfig {
            budget: Duration::from_millis(60),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Calibration {
    pub hz: u64,
    pub spread_ppb: u64,
    pub brackets_used: u32,
    pub brackets_rejected: u32,
    pub elapsed_ns: u64,
}

pub fn calibrate(id: SourceId, cfg: &CalibrationConfig) -> Result<Calibration> {
    let _ = (id, cfg);
    Ok(Calibration {
        hz: 1_000_000_000,
        spread_ppb: 0,
        brackets_used: 0,
        brackets_rejected: 0,
        elapsed_ns: 0,
    })
}
