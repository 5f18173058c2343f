//! The process's defaults: its segment (opened on first use, shared by every
//! front end in the process: Rust callers, the C ABI, JNI) and its Intel Trace
//! Collector stamper; and the process facts IBMTS reported (pid, thread id).

use crate::error::Result;
use crate::stamps::itc::{ItcFormat, ItcStamper};

pub use crate::os::{pid, thread_id};
use crate::segment::SharedBase;
use once_cell::sync::OnceCell;

static GLOBAL: OnceCell<SharedBase> = OnceCell::new();

/// The process's default segment (named by `HRTS_SEGMENT`, else `/hrts-<uid>`),
/// opened on first use. A failure is returned, not cached: a later call retries.
pub fn global() -> Result<&'static SharedBase> {
    GLOBAL.get_or_try_init(SharedBase::open_default)
}

/// Opens the process's default segment with an explicit configuration (for
/// front ends whose configuration does not come from the environment, such as a
/// JVM's system properties). If it is already open, returns the open one when it
/// has the same name and an error otherwise.
pub fn init_global(cfg: &crate::Config) -> Result<&'static SharedBase> {
    let base = GLOBAL.get_or_try_init(|| SharedBase::open(cfg))?;
    if !base.opened_as(cfg) {
        return Err(crate::Error::new(
            crate::ErrorKind::InvalidArgument,
            format!(
                "this process already uses segment {}; it cannot switch to {} (a process \
                 has one default segment: set it before the first time stamp)",
                base.name(),
                cfg.name
            ),
        ));
    }
    Ok(base)
}

static ITC: OnceCell<ItcStamper> = OnceCell::new();

/// The process's Intel Trace Collector stamper: its format comes from
/// `HRTS_ITC_EVENT_BITS` and `HRTS_ITC_TICK_NS` (13 bits and 1 ns by default)
/// and its run starts at its first use. Like ITC's local stamps, these are
/// unique within the process; convert them with [`ItcStamper::to_epoch_ns`].
pub fn itc() -> Result<&'static ItcStamper> {
    ITC.get_or_try_init(|| Ok(ItcStamper::new(ItcFormat::from_env()?, global()?.now_ns())))
}

/// The next ITC stamp of this process, from the default segment's clock.
pub fn itc_next() -> Result<u64> {
    let stamper = itc()?;
    stamper.stamp_at(global()?.now_ns_ordered())
}

/// The default segment if it is already open: the hot paths' accessor.
#[inline(always)]
pub fn global_if_open() -> Option<&'static SharedBase> {
    GLOBAL.get()
}

/// The start time of process `pid` in clock ticks since boot, which tells a
/// process from a later one that reuses its pid; `None` if /proc cannot say.
pub fn start_time(pid: u32) -> Option<u64> {
    crate::os::process_start_time(pid)
}

/// CPU time the calling thread has used, ns (`CLOCK_THREAD_CPUTIME_ID`): tells
/// a call that spent time working or spinning from one that was preempted.
pub fn thread_cpu_ns() -> u64 {
    crate::os::thread_cpu_ns()
}

/// Whether process `pid`, which started at `start_time` (0: unknown), can still
/// run: it exists, is not a zombie, and its pid was not reused since.
pub fn still_running(pid: u32, start_time: u64) -> bool {
    crate::os::process_still_running(pid, start_time)
}

/// The calling process's effective user id (on Windows the account's relative
/// id): what per-user names carry.
pub fn euid() -> u32 {
    crate::os::euid()
}

/// Nanoseconds since boot, counting time suspended (`CLOCK_BOOTTIME`; on
/// Windows the performance counter): one count for every process of the host
/// that no clock correction moves.
pub fn boottime_ns() -> u64 {
    crate::os::boottime_ns()
}
