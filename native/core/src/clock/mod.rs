//! The clock: which counter to read, how fast it runs, whether every CPU agrees,
//! and how ticks become nanoseconds. Nothing here knows about shared memory.
//!
//! - `source`: reading the counters (TSC, CNTVCT, Time Base, CLOCK_MONOTONIC_RAW);
//! - `eligibility`: which source a machine may trust, as a pure decision;
//! - `calibrate`: the counter's frequency from counter–clock–counter brackets;
//! - `convert`: the integer multiply-shift from ticks to nanoseconds;
//! - `reliability`: WTMLIB's cross-CPU evaluation (shift bound, monotonicity, pace);
//! - `kernel`: `CLOCK_REALTIME` read past any `LD_PRELOAD` (the vDSO or the system call).

pub(crate) mod calibrate;
pub(crate) mod convert;
pub(crate) mod eligibility;
pub(crate) mod kernel;
pub(crate) mod reliability;
pub(crate) mod source;

pub use crate::os::realtime_ns;
pub use calibrate::{calibrate, calibrate_with, Calibration, CalibrationConfig, Reference};
pub use convert::{Scale, MULT_ERROR_BOUND_PPB};
pub use eligibility::{choose_source, decide, Arch, Choice, Facts};
pub use kernel::{kernel_read, realtime_ns as kernel_realtime_ns, KernelRead};
pub use reliability::{
    analyze, check_pace, evaluate_cop, evaluate_cpu_switching, Analysis, Method, Pace, PairBound,
    Probe, ReliabilityConfig, Report,
};
pub use source::{nominal_frequency, read, read_fenced, read_ordered, SourceId};
