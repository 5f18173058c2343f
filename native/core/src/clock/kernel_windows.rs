//! The calendar as the Windows kernel keeps it: `GetSystemTimePreciseAsFileTime`
//! (see `os::windows`). Windows has no `LD_PRELOAD`, so there is no interposed
//! symbol to read past; the Linux room reads the vDSO for that reason.

/// How this process reads the kernel's calendar (diagnostics, tests).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KernelRead {
    /// `GetSystemTimePreciseAsFileTime`.
    PreciseFileTime,
}

/// Which way [`realtime_ns`] reads the clock in this process.
pub fn kernel_read() -> KernelRead {
    KernelRead::PreciseFileTime
}

/// The calendar in nanoseconds since the Unix epoch.
pub fn realtime_ns() -> u64 {
    crate::os::realtime_ns()
}
