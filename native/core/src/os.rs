//! Thin, panic-free wrappers over the few OS facts every layer needs.

/// The calling process's id.
pub fn pid() -> u32 {
    std::process::id()
}

/// The calling thread's Linux thread id (`gettid`), distinct for every thread.
pub fn thread_id() -> u32 {
    // SAFETY: gettid takes no arguments, cannot fail and touches no memory.
    unsafe { libc::gettid() as u32 }
}

fn clock_ns(clock: libc::clockid_t) -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; the clock ids used here exist on
    // every Linux kernel hrts supports, so the call only writes `ts`.
    unsafe { libc::clock_gettime(clock, &mut ts) };
    (ts.tv_sec as u64)
        .wrapping_mul(1_000_000_000)
        .wrapping_add(ts.tv_nsec as u64)
}

/// `CLOCK_REALTIME` in nanoseconds since the Unix epoch.
pub fn realtime_ns() -> u64 {
    clock_ns(libc::CLOCK_REALTIME)
}

/// `CLOCK_MONOTONIC_RAW` in nanoseconds: not slewed by NTP, the calibration reference.
pub fn monotonic_raw_ns() -> u64 {
    clock_ns(libc::CLOCK_MONOTONIC_RAW)
}

/// `CLOCK_MONOTONIC` in nanoseconds, for bounded waits.
pub fn monotonic_ns() -> u64 {
    clock_ns(libc::CLOCK_MONOTONIC)
}

/// Whether a process with this pid exists (it may belong to another user).
pub fn process_alive(pid: u32) -> bool {
    if pid == 0 || pid > i32::MAX as u32 {
        return false;
    }
    // SAFETY: signal 0 performs only the existence and permission check.
    let rc = unsafe { libc::kill(pid as libc::pid_t, 0) };
    rc == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

/// The start time of a process in clock ticks since boot (field 22 of
/// `/proc/<pid>/stat`), which tells a live process from a reused pid.
pub fn process_start_time(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name may hold spaces and parentheses; fields resume after the last ')'.
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_whitespace().nth(19)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn own_process_is_alive_and_has_a_start_time() {
        assert!(process_alive(pid()));
        assert!(process_start_time(pid()).unwrap() > 0);
        assert!(!process_alive(0));
    }

    #[test]
    fn thread_ids_differ_between_threads() {
        let main = thread_id();
        let other = std::thread::spawn(thread_id).join().unwrap();
        assert_ne!(main, other);
        assert_eq!(main, thread_id(), "stable within a thread");
    }

    #[test]
    fn clocks_advance() {
        let a = monotonic_raw_ns();
        let r = realtime_ns();
        assert!(r > 1_600_000_000_000_000_000);
        assert!(monotonic_raw_ns() >= a);
    }
}
