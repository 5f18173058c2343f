//! The Linux room of the platform layer: thin, panic-free wrappers over the few
//! OS facts every layer needs.

use std::cell::Cell;
use std::sync::atomic::{AtomicU32, Ordering::Relaxed};

// The process and thread ids are kept: a tie names its writer by both, and
// `getpid` and `gettid` are system calls (90 ns each on a KVM guest,
// 2026-11-28), three of them in every tie. A fork child must not go on with
// its parent's: the fork handler forgets the process id and counts the fork,
// which makes every thread's kept id stale.
static PID: AtomicU32 = AtomicU32::new(0);
static FORKS: AtomicU32 = AtomicU32::new(0);

thread_local! {
    /// (`FORKS` when it was kept, the id; 0 for none yet).
    static TID: Cell<(u32, u32)> = const { Cell::new((0, 0)) };
}

fn watch_forks() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        // SAFETY: `forked` is an extern "C" fn without arguments that only
        // stores to atomics, which is async-signal-safe as a fork child
        // handler must be.
        unsafe { libc::pthread_atfork(None, None, Some(forked)) };
    });
}

extern "C" fn forked() {
    PID.store(0, Relaxed);
    FORKS.fetch_add(1, Relaxed);
}

/// The calling process's id.
#[inline]
pub fn pid() -> u32 {
    match PID.load(Relaxed) {
        0 => pid_uncached(),
        p => p,
    }
}

#[cold]
fn pid_uncached() -> u32 {
    // The handler first: a fork after this read is then always seen.
    watch_forks();
    let p = std::process::id();
    PID.store(p, Relaxed);
    p
}

/// The calling thread's Linux thread id (`gettid`), distinct for every thread.
#[inline]
pub fn thread_id() -> u32 {
    let forks = FORKS.load(Relaxed);
    // A thread that is being torn down has no kept id: it asks the kernel.
    match TID.try_with(|t| t.get()) {
        Ok((f, id)) if id != 0 && f == forks => id,
        _ => thread_id_uncached(),
    }
}

#[cold]
fn thread_id_uncached() -> u32 {
    watch_forks();
    let forks = FORKS.load(Relaxed);
    // SAFETY: gettid takes no arguments, cannot fail and touches no memory.
    let id = unsafe { libc::gettid() as u32 };
    let _ = TID.try_with(|t| t.set((forks, id)));
    id
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

/// `CLOCK_BOOTTIME` in nanoseconds: `CLOCK_MONOTONIC` plus the time suspended.
pub fn boottime_ns() -> u64 {
    clock_ns(libc::CLOCK_BOOTTIME)
}

/// CPU time of the calling thread in nanoseconds.
pub fn thread_cpu_ns() -> u64 {
    clock_ns(libc::CLOCK_THREAD_CPUTIME_ID)
}

/// `CLOCK_MONOTONIC` in nanoseconds, for bounded waits.
pub fn monotonic_ns() -> u64 {
    clock_ns(libc::CLOCK_MONOTONIC)
}

/// The effective user id: the owner of the per-user segment and its files.
pub fn euid() -> u32 {
    // SAFETY: geteuid cannot fail.
    unsafe { libc::geteuid() }
}

/// A thread's CPU affinity mask, to restore after pinning.
pub struct CpuMask(libc::cpu_set_t);

fn empty_set() -> libc::cpu_set_t {
    // SAFETY: cpu_set_t is plain data; all-zero is the valid empty set.
    unsafe { std::mem::zeroed() }
}

/// The CPUs in the calling thread's affinity mask, and the mask itself
/// (`None`: sched_getaffinity failed).
pub fn affinity() -> Option<(Vec<u32>, CpuMask)> {
    let mut set = empty_set();
    // SAFETY: `set` is a valid, writable cpu_set_t of the size passed; pid 0 is the
    // calling thread.
    let rc =
        unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) };
    if rc != 0 {
        return None;
    }
    let cpus = (0..libc::CPU_SETSIZE as usize)
        // SAFETY: c < CPU_SETSIZE, the set's capacity.
        .filter(|&c| unsafe { libc::CPU_ISSET(c, &set) })
        .map(|c| c as u32)
        .collect();
    Some((cpus, CpuMask(set)))
}

/// Gives the calling thread the affinity mask `mask`.
pub fn set_affinity(mask: &CpuMask) -> bool {
    // SAFETY: `mask.0` is a valid cpu_set_t; pid 0 is the calling thread.
    unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mask.0) == 0 }
}

/// Pins the calling thread to one CPU.
pub fn pin_to(cpu: u32) -> bool {
    if cpu as usize >= libc::CPU_SETSIZE as usize {
        return false;
    }
    let mut one = empty_set();
    // SAFETY: `cpu` was checked to be below CPU_SETSIZE, the set's capacity.
    unsafe { libc::CPU_SET(cpu as usize, &mut one) };
    set_affinity(&CpuMask(one))
}

/// The CPU the calling thread runs on (it may move right after).
pub fn current_cpu() -> Option<u32> {
    // SAFETY: sched_getcpu has no preconditions.
    let c = unsafe { libc::sched_getcpu() };
    u32::try_from(c).ok()
}

/// Whether a process with this pid can still run (it may belong to another
/// user). A zombie, killed or exited but not yet reaped by its parent, is dead: it
/// will never run again, so nothing it holds will ever be released by it.
#[cfg(test)]
pub fn process_alive(pid: u32) -> bool {
    process_exists(pid) && !has_exited(pid)
}

/// Whether `kill` finds a process with this pid (a zombie included).
fn process_exists(pid: u32) -> bool {
    if pid == 0 || pid > i32::MAX as u32 {
        return false;
    }
    // SAFETY: signal 0 performs only the existence and permission check.
    let rc = unsafe { libc::kill(pid as libc::pid_t, 0) };
    rc == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

/// Whether `/proc/<pid>/stat` shows a process that has exited. Only ever turns
/// "exists" into "dead" when /proc can be believed: it must be mounted for our own
/// pid namespace (else its pid N is another process than `kill`'s pid N), and a
/// process hidden by `hidepid` or unreadable stays alive, the safe answer.
#[cfg(test)]
fn has_exited(pid: u32) -> bool {
    if !proc_is_ours() {
        return false;
    }
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| stat_shows_exited(&stat))
}

/// `/proc/self` names our own pid: /proc is mounted for our pid namespace.
fn proc_is_ours() -> bool {
    static OURS: once_cell::sync::OnceCell<bool> = once_cell::sync::OnceCell::new();
    *OURS.get_or_init(|| {
        std::fs::read_link("/proc/self")
            .ok()
            .and_then(|p| p.to_str()?.parse::<u32>().ok())
            == Some(pid())
    })
}

/// State `X` (dead), or `Z` (zombie) with at most one thread. A thread-group leader
/// that called `pthread_exit` also shows `Z` while its other threads run on, which
/// the thread count (field 20) tells apart.
fn stat_shows_exited(stat: &str) -> bool {
    // The command name may hold spaces and parentheses; fields resume after the last ')'.
    let Some(rest) = stat.rfind(')').map(|i| &stat[i + 1..]) else {
        return false;
    };
    let mut fields = rest.split_whitespace();
    let state = fields.next();
    let threads = fields.nth(16).and_then(|t| t.parse::<u64>().ok());
    match state {
        Some("X") => true,
        Some("Z") => threads.is_some_and(|t| t <= 1),
        _ => false,
    }
}

/// The start time of a process in clock ticks since boot (field 22 of
/// `/proc/<pid>/stat`), which tells a live process from a reused pid.
pub fn process_start_time(pid: u32) -> Option<u64> {
    start_time_in(&std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?)
}

fn start_time_in(stat: &str) -> Option<u64> {
    // The command name may hold spaces and parentheses; fields resume after the last ')'.
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_whitespace().nth(19)?.parse().ok()
}

/// [`process_alive`] and, unless `start_time` is 0 (unknown), that the pid was
/// not reused since (its [`process_start_time`] is `start_time`), from one read
/// of `/proc/<pid>/stat`.
pub fn process_still_running(pid: u32, start_time: u64) -> bool {
    if !process_exists(pid) {
        return false;
    }
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok();
    if proc_is_ours() && stat.as_deref().is_some_and(stat_shows_exited) {
        return false;
    }
    start_time == 0
        || stat
            .as_deref()
            .and_then(start_time_in)
            .is_none_or(|t| t == start_time)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_kept_ids_are_the_kernels_and_a_fork_child_gets_its_own() {
        // SAFETY: getpid and gettid take no arguments and cannot fail.
        let (kernel_pid, kernel_tid) = unsafe { (libc::getpid() as u32, libc::gettid() as u32) };
        assert_eq!((pid(), thread_id()), (kernel_pid, kernel_tid));
        assert_eq!((pid(), thread_id()), (kernel_pid, kernel_tid), "kept");
        let other = std::thread::spawn(thread_id).join().unwrap();
        assert_ne!(other, kernel_tid);
        // SAFETY: the child only reads ids (atomics, its thread-local and two
        // system calls) and leaves with _exit, which a child of a
        // multi-threaded process may do.
        let child = unsafe { libc::fork() };
        assert!(child >= 0, "fork failed");
        if child == 0 {
            // SAFETY: as above.
            let (p, t) = unsafe { (libc::getpid() as u32, libc::gettid() as u32) };
            let ok = pid() == p && thread_id() == t && p != kernel_pid;
            // SAFETY: _exit ends the child without running the parent's
            // atexit handlers or destructors.
            unsafe { libc::_exit(if ok { 0 } else { 1 }) };
        }
        let mut status = 0;
        // SAFETY: `child` is our own child and `status` a valid int.
        assert_eq!(unsafe { libc::waitpid(child, &mut status, 0) }, child);
        assert!(
            libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
            "the fork child saw its parent's ids (status {status})"
        );
        assert_eq!(
            (pid(), thread_id()),
            (kernel_pid, kernel_tid),
            "the parent keeps its own"
        );
    }

    #[test]
    fn own_process_is_alive_and_has_a_start_time() {
        assert!(process_alive(pid()));
        assert!(process_start_time(pid()).unwrap() > 0);
        assert!(!process_alive(0));
    }

    #[test]
    fn a_killed_child_that_is_not_reaped_is_dead() {
        let mut child = std::process::Command::new("sleep")
            .arg("100")
            .spawn()
            .unwrap();
        let id = child.id();
        assert!(process_alive(id));
        // SAFETY: signalling our own child, which has not been reaped (its pid is ours).
        assert_eq!(unsafe { libc::kill(id as libc::pid_t, libc::SIGKILL) }, 0);
        let deadline = monotonic_ns() + 10_000_000_000;
        while process_alive(id) && monotonic_ns() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        let stat = std::fs::read_to_string(format!("/proc/{id}/stat")).unwrap();
        assert!(stat_shows_exited(&stat), "still unreaped, a zombie: {stat}");
        assert!(!process_alive(id), "a zombie is dead");
        assert!(!process_still_running(id, 0), "for the one-read check too");
        child.wait().unwrap();
    }

    #[test]
    fn still_running_compares_the_start_time_unless_unknown() {
        let me = pid();
        let start = process_start_time(me).unwrap();
        assert!(process_still_running(me, start));
        assert!(process_still_running(me, 0));
        assert!(!process_still_running(me, start + 1), "a reused pid");
        assert!(!process_still_running(0, 0));
    }

    #[test]
    fn stat_lines_tell_zombies_from_leaders_whose_threads_run_on() {
        let line = |state: &str, threads: u32| {
            format!(
                "42 (a) b (c)) {state} 1 42 42 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 {threads} 0 \
                 12345 0 0"
            )
        };
        assert!(stat_shows_exited(&line("Z", 1)));
        assert!(stat_shows_exited(&line("X", 1)));
        assert!(
            !stat_shows_exited(&line("Z", 3)),
            "leader gone, threads running"
        );
        for state in ["R", "S", "D", "T", "t"] {
            assert!(!stat_shows_exited(&line(state, 1)), "{state}");
        }
        assert!(!stat_shows_exited("garbage"));
        assert!(
            !stat_shows_exited("1 (x) Z"),
            "no thread count: not proven dead"
        );
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
