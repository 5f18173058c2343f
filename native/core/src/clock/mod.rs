//! The clock: which counter to read, how fast it runs, whether every CPU agrees,
//! and how ticks become nanoseconds. Nothing here knows about shared memory.
//!
//! - `source`: reading the counters (TSC, CNTVCT, Time Base, CLOCK_MONOTONIC_RAW);
//! - `eligibility`: which source a machine may trust, as a pure decision;
//! - `calibrate`: the counter's frequency from counter–clock–counter brackets;
//! - `os_frequency`: the frequency the operating system reports, to compare;
//! - `convert`: the integer multiply-shift from ticks to nanoseconds;
//! - `reliability`: WTMLIB's cross-CPU evaluation (shift bound, monotonicity, pace,
//!   the significance of the probe sequence);
//! - `wtmlib`: WTMLIB's tick-to-nanosecond parameters for any tick count, and
//!   the seconds before the counter wraps.
//! - `kernel`: `CLOCK_REALTIME` read past any `LD_PRELOAD` (the vDSO or the system call).
//! - `bound`: how wrong the system clock may be, as the kernel says (`adjtimex`, read-only).
//! - `leap`: where an announced leap second makes the clock ambiguous.
//! - `vmclock`: the hypervisor's VMClock page (disruption marker, clock status, max error).

pub mod bound;
pub(crate) mod calibrate;
#[cfg(not(windows))]
pub mod chrony;
pub(crate) mod convert;
pub(crate) mod eligibility;
#[cfg(not(windows))]
pub(crate) mod kernel;
#[cfg(windows)]
#[path = "kernel_windows.rs"]
pub(crate) mod kernel;
pub mod leap;
pub(crate) mod os_frequency;
pub(crate) mod reliability;
pub(crate) mod source;
#[cfg(any(test, feature = "testing"))]
pub mod test_counter;
pub mod vmclock;
pub(crate) mod wtmlib;

pub use crate::os::realtime_ns;
pub use calibrate::{calibrate, calibrate_with, Calibration, CalibrationConfig, Reference};
pub use convert::{Scale, MULT_ERROR_BOUND_PPB};
pub use eligibility::{choose_source, decide, Arch, Choice, Facts};
pub use kernel::{kernel_read, realtime_ns as kernel_realtime_ns, KernelRead};
pub use os_frequency::{
    difference_ppm, disagrees, os_frequency, parse_khz, tsc_from_cpuid, OsFrequency,
    DISAGREEMENT_WARN_PPM,
};
pub use reliability::{
    analyze, check_pace, evaluate_cop, evaluate_cpu_switching, min_pair_handovers, Analysis,
    Method, Pace, PairBound, Probe, ReliabilityConfig, Report, DEFAULT_MIN_HANDOVERS,
};
pub use source::{
    choose_ordered_read, nominal_frequency, parse_cpuinfo_timebase, rdtscp_supported, read,
    read_fenced, read_ordered, read_ordered_by, OrderedRead, SourceId,
};
pub use wtmlib::{secs_before_wrap, ConversionParams};
