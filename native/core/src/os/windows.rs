//! The Windows room of the platform layer: the same facts as the Linux room,
//! from Win32, plus the kernel-object helpers the Windows twins of the
//! storage, liveness and sequence-file modules share.
//!
//! Clocks: the calendar is `GetSystemTimePreciseAsFileTime` (100 ns steps since
//! 1601, moved to the Unix epoch); every monotonic clock is
//! `QueryPerformanceCounter` in nanoseconds. Windows has no unslewed clock like
//! `CLOCK_MONOTONIC_RAW`: QPC is the one monotonic counter the system promises,
//! and it is what IBMTS used when it could not trust the TSC.

use once_cell::sync::OnceCell;
use windows_sys::Win32::Foundation::{CloseHandle, LocalFree, FILETIME, HANDLE, STILL_ACTIVE};
use windows_sys::Win32::Security::Authorization::{
    ConvertSidToStringSidW, ConvertStringSecurityDescriptorToSecurityDescriptorW, SDDL_REVISION_1,
};
use windows_sys::Win32::Security::{
    GetTokenInformation, TokenUser, PSECURITY_DESCRIPTOR, SECURITY_ATTRIBUTES, TOKEN_QUERY,
    TOKEN_USER,
};
use windows_sys::Win32::System::Performance::{QueryPerformanceCounter, QueryPerformanceFrequency};
use windows_sys::Win32::System::SystemInformation::GetSystemTimePreciseAsFileTime;
use windows_sys::Win32::System::Threading::{
    GetCurrentProcess, GetCurrentProcessorNumber, GetCurrentThread, GetCurrentThreadId,
    GetExitCodeProcess, GetProcessAffinityMask, GetProcessTimes, GetThreadTimes, OpenProcess,
    OpenProcessToken, SetThreadAffinityMask, PROCESS_QUERY_LIMITED_INFORMATION,
};

/// 100 ns intervals from 1601-01-01 (FILETIME's epoch) to 1970-01-01.
const FILETIME_UNIX_OFFSET: u64 = 116_444_736_000_000_000;

fn filetime_u64(ft: &FILETIME) -> u64 {
    ((ft.dwHighDateTime as u64) << 32) | ft.dwLowDateTime as u64
}

/// The calling process's id.
pub fn pid() -> u32 {
    std::process::id()
}

/// The calling thread's id, distinct for every live thread of the system.
pub fn thread_id() -> u32 {
    // SAFETY: GetCurrentThreadId takes no arguments and cannot fail.
    unsafe { GetCurrentThreadId() }
}

/// The calendar in nanoseconds since the Unix epoch
/// (`GetSystemTimePreciseAsFileTime`, 100 ns resolution).
pub fn realtime_ns() -> u64 {
    let mut ft = FILETIME {
        dwLowDateTime: 0,
        dwHighDateTime: 0,
    };
    // SAFETY: `ft` is a valid, writable FILETIME; the call cannot fail.
    unsafe { GetSystemTimePreciseAsFileTime(&mut ft) };
    filetime_u64(&ft)
        .saturating_sub(FILETIME_UNIX_OFFSET)
        .wrapping_mul(100)
}

/// `QueryPerformanceFrequency`, read once (it is fixed at boot).
pub fn qpc_frequency() -> u64 {
    static FREQ: OnceCell<u64> = OnceCell::new();
    *FREQ.get_or_init(|| {
        let mut f: i64 = 0;
        // SAFETY: `f` is a valid, writable i64; since Windows XP the call cannot fail.
        unsafe { QueryPerformanceFrequency(&mut f) };
        (f as u64).max(1)
    })
}

/// `QueryPerformanceCounter` in its own ticks ([`qpc_frequency`] a second).
pub fn qpc_ticks() -> u64 {
    let mut c: i64 = 0;
    // SAFETY: `c` is a valid, writable i64; since Windows XP the call cannot fail.
    unsafe { QueryPerformanceCounter(&mut c) };
    c as u64
}

fn qpc_ns() -> u64 {
    // u128: the product of ticks and 10^9 overflows u64 after 30 minutes at 10 MHz.
    ((qpc_ticks() as u128 * 1_000_000_000) / qpc_frequency() as u128) as u64
}

/// The fallback counter in nanoseconds: `QueryPerformanceCounter`.
pub fn monotonic_raw_ns() -> u64 {
    qpc_ns()
}

/// Monotonic nanoseconds that include time suspended (QPC counts through sleep).
pub fn boottime_ns() -> u64 {
    qpc_ns()
}

/// Monotonic nanoseconds, for bounded waits.
pub fn monotonic_ns() -> u64 {
    qpc_ns()
}

/// CPU time (kernel plus user) of the calling thread in nanoseconds.
pub fn thread_cpu_ns() -> u64 {
    let zero = || FILETIME {
        dwLowDateTime: 0,
        dwHighDateTime: 0,
    };
    let (mut c, mut e, mut k, mut u) = (zero(), zero(), zero(), zero());
    // SAFETY: the pseudo-handle of the calling thread and four valid, writable FILETIMEs.
    unsafe { GetThreadTimes(GetCurrentThread(), &mut c, &mut e, &mut k, &mut u) };
    (filetime_u64(&k) + filetime_u64(&u)).wrapping_mul(100)
}

/// A kernel handle, closed on drop.
#[derive(Debug)]
pub struct Handle(pub HANDLE);

// SAFETY: a kernel handle is a process-wide value; any thread may use or close it.
unsafe impl Send for Handle {}
// SAFETY: as above; the functions used on shared handles are thread-safe.
unsafe impl Sync for Handle {}

impl Drop for Handle {
    fn drop(&mut self) {
        if !self.0.is_null() {
            // SAFETY: the handle is owned by this value and closed once.
            unsafe { CloseHandle(self.0) };
        }
    }
}

/// The text as a NUL-terminated UTF-16 string for the `W` functions.
pub fn wide(s: &str) -> Vec<u16> {
    s.encode_utf16().chain(std::iter::once(0)).collect()
}

/// The calling process's user: its SID as text (`S-1-5-21-...`) and its
/// relative id (the last part), read once from the process token.
fn user() -> &'static (String, u32) {
    static USER: OnceCell<(String, u32)> = OnceCell::new();
    USER.get_or_init(|| read_user().unwrap_or_else(|| ("S-1-0-0".to_string(), 0)))
}

fn read_user() -> Option<(String, u32)> {
    let mut token: HANDLE = std::ptr::null_mut();
    // SAFETY: the pseudo-handle of this process and a valid, writable HANDLE.
    if unsafe { OpenProcessToken(GetCurrentProcess(), TOKEN_QUERY, &mut token) } == 0 {
        return None;
    }
    let token = Handle(token);
    // u64 words: TOKEN_USER holds pointers and must be aligned for them.
    let mut buf = [0u64; 64];
    let mut len = 0u32;
    // SAFETY: `buf` is writable for the size passed; `len` receives the size used.
    let ok = unsafe {
        GetTokenInformation(
            token.0,
            TokenUser,
            buf.as_mut_ptr().cast(),
            std::mem::size_of_val(&buf) as u32,
            &mut len,
        )
    };
    if ok == 0 {
        return None;
    }
    // SAFETY: the call succeeded, so `buf` starts with a TOKEN_USER whose SID
    // points into `buf`, which lives to the end of this function.
    let sid = unsafe { (*(buf.as_ptr() as *const TOKEN_USER)).User.Sid };
    let mut text: *mut u16 = std::ptr::null_mut();
    // SAFETY: `sid` is a valid SID; `text` receives a LocalAlloc'd string.
    if unsafe { ConvertSidToStringSidW(sid, &mut text) } == 0 {
        return None;
    }
    // SAFETY: `text` is a NUL-terminated UTF-16 string from the call above.
    let s = unsafe {
        let n = (0..).take_while(|&i| *text.add(i) != 0).count();
        String::from_utf16_lossy(std::slice::from_raw_parts(text, n))
    };
    // SAFETY: `text` was allocated by ConvertSidToStringSidW with LocalAlloc.
    unsafe { LocalFree(text.cast()) };
    let rid = s.rsplit('-').next()?.parse().unwrap_or(0);
    Some((s, rid))
}

/// The user's SID as text: the part of every kernel object name that makes it
/// this user's.
pub fn user_sid() -> &'static str {
    &user().0
}

/// The user's relative id, standing in for the Unix uid in names and in the
/// segment's creator field (a local account's RID, e.g. 1000).
pub fn euid() -> u32 {
    user().1
}

/// Security attributes that admit only the calling user (and nobody else: a
/// protected DACL with one entry granting the user all access).
pub struct OwnerOnly {
    sd: PSECURITY_DESCRIPTOR,
    pub attrs: SECURITY_ATTRIBUTES,
}

impl OwnerOnly {
    pub fn new() -> std::io::Result<OwnerOnly> {
        let sddl = wide(&format!("D:P(A;;GA;;;{})", user_sid()));
        let mut sd: PSECURITY_DESCRIPTOR = std::ptr::null_mut();
        // SAFETY: `sddl` is NUL-terminated; `sd` receives a LocalAlloc'd descriptor.
        let ok = unsafe {
            ConvertStringSecurityDescriptorToSecurityDescriptorW(
                sddl.as_ptr(),
                SDDL_REVISION_1,
                &mut sd,
                std::ptr::null_mut(),
            )
        };
        if ok == 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(OwnerOnly {
            sd,
            attrs: SECURITY_ATTRIBUTES {
                nLength: std::mem::size_of::<SECURITY_ATTRIBUTES>() as u32,
                lpSecurityDescriptor: sd,
                bInheritHandle: 0,
            },
        })
    }
}

impl Drop for OwnerOnly {
    fn drop(&mut self) {
        // SAFETY: `sd` was allocated with LocalAlloc by the conversion above.
        unsafe { LocalFree(self.sd) };
    }
}

/// A process's affinity mask (up to 64 CPUs, one processor group).
pub struct CpuMask(usize);

/// The CPUs the calling thread may run on, and that mask. Windows has no
/// call that reads a thread's mask: setting one returns the previous, so the
/// process's mask is set and the thread's put back at once.
pub fn affinity() -> Option<(Vec<u32>, CpuMask)> {
    let (mut process, mut system) = (0usize, 0usize);
    // SAFETY: the pseudo-handle of this process and two valid, writable masks.
    if unsafe { GetProcessAffinityMask(GetCurrentProcess(), &mut process, &mut system) } == 0 {
        return None;
    }
    // SAFETY: the pseudo-handle of the calling thread; the process's own mask.
    let thread = unsafe { SetThreadAffinityMask(GetCurrentThread(), process) };
    if thread == 0 {
        return None;
    }
    set_affinity(&CpuMask(thread));
    let cpus = (0..usize::BITS)
        .filter(|c| thread & (1usize << c) != 0)
        .collect();
    Some((cpus, CpuMask(thread)))
}

/// Gives the calling thread the affinity mask `mask`.
pub fn set_affinity(mask: &CpuMask) -> bool {
    // SAFETY: the pseudo-handle of the calling thread; a mask of the process's CPUs.
    unsafe { SetThreadAffinityMask(GetCurrentThread(), mask.0) != 0 }
}

/// Pins the calling thread to one CPU (of the first 64).
pub fn pin_to(cpu: u32) -> bool {
    cpu < usize::BITS && set_affinity(&CpuMask(1usize << cpu))
}

/// The CPU the calling thread runs on (it may move right after).
pub fn current_cpu() -> Option<u32> {
    // SAFETY: GetCurrentProcessorNumber has no preconditions.
    Some(unsafe { GetCurrentProcessorNumber() })
}

fn open_process(pid: u32) -> Option<Handle> {
    if pid == 0 {
        return None;
    }
    // SAFETY: OpenProcess only looks the pid up; a failure returns null.
    let h = unsafe { OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, 0, pid) };
    (!h.is_null()).then_some(Handle(h))
}

/// Whether a process with this pid still runs. One we may not open (another
/// user's) counts as running, the safe answer.
#[cfg(test)]
pub fn process_alive(pid: u32) -> bool {
    process_still_running(pid, 0)
}

/// The creation time of a process (100 ns since 1601), which tells a live
/// process from a reused pid.
pub fn process_start_time(pid: u32) -> Option<u64> {
    let h = open_process(pid)?;
    let zero = || FILETIME {
        dwLowDateTime: 0,
        dwHighDateTime: 0,
    };
    let (mut c, mut e, mut k, mut u) = (zero(), zero(), zero(), zero());
    // SAFETY: an open process handle and four valid, writable FILETIMEs.
    let ok = unsafe { GetProcessTimes(h.0, &mut c, &mut e, &mut k, &mut u) };
    (ok != 0).then(|| filetime_u64(&c))
}

/// Whether the process runs and, unless `start_time` is 0 (unknown), was not
/// replaced by another with the same pid since.
pub fn process_still_running(pid: u32, start_time: u64) -> bool {
    let Some(h) = open_process(pid) else {
        // Gone, or not ours to open: only a missing process is proven dead.
        return pid != 0
            && std::io::Error::last_os_error().raw_os_error()
                != Some(windows_sys::Win32::Foundation::ERROR_INVALID_PARAMETER as i32);
    };
    let mut code = 0u32;
    // SAFETY: an open process handle and a valid, writable u32.
    if unsafe { GetExitCodeProcess(h.0, &mut code) } != 0 && code != STILL_ACTIVE as u32 {
        return false;
    }
    start_time == 0 || process_start_time(pid).is_none_or(|t| t == start_time)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clocks_advance_and_the_calendar_is_in_this_century() {
        let a = monotonic_raw_ns();
        assert!(realtime_ns() > 1_600_000_000_000_000_000);
        assert!(monotonic_raw_ns() >= a);
    }

    #[test]
    fn own_process_is_alive_and_the_user_has_a_sid() {
        assert!(process_alive(pid()));
        assert!(process_start_time(pid()).unwrap() > 0);
        assert!(!process_alive(0));
        assert!(user_sid().starts_with("S-1-"), "{}", user_sid());
        let me = pid();
        let start = process_start_time(me).unwrap();
        assert!(process_still_running(me, start));
        assert!(!process_still_running(me, start + 1), "a reused pid");
    }

    #[test]
    fn thread_ids_differ_between_threads() {
        let main = thread_id();
        let other = std::thread::spawn(thread_id).join().unwrap();
        assert_ne!(main, other);
    }
}
