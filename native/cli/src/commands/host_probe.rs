//! Test-only (`testing` feature): what the host page's tests ask of a reader
//! that the public commands cannot do.
//!
//! `hrts debug host-probe` tries, as this process's user and in its
//! namespaces, every way it might change the host page (`$HRTS_HOST_DIR/time`)
//! without changing its bytes: open it for writing, truncate it to its own
//! size, chmod it to its own mode, map a read-only descriptor writable, create
//! a file beside it. One `what: result` line each: the errno's name when
//! refused, `allowed` when not.
//!
//! `hrts debug offsets MS` measures this process's timeline against
//! `CLOCK_REALTIME` the way `hrts track` does (the narrowest of five
//! brackets, [`SharedBase::offset_now`]) once a millisecond for MS
//! milliseconds, and prints `offsets: samples N p50 A p99 B max C median D`:
//! percentiles of |offset| and the signed median, ns.
//!
//! `hrts debug bound-check MS` takes bounded stamps back to back for MS
//! milliseconds, each between two reads of `CLOCK_REALTIME`, and prints
//! `bound-check: samples N misses M unbounded U offset p99 A max B half p99 C
//! max D`: how many intervals missed the clock (true time, as far as this
//! host knows it, lay outside `[earliest, latest]`), how many stamps got no
//! interval, and percentiles of |midpoint − clock| (from brackets under 2 µs)
//! and of the half widths, ns; then `first-unbounded A last-unbounded B
//! first-miss C last-miss D misses-after-unbounded E`: the `CLOCK_REALTIME`
//! (ns, 0 for none) read just after the first and last stamps that got no
//! interval (no refusal came after it, however long the reader was preempted
//! before it) and just before the first and last misses, and how many misses
//! came after the first stamp that got none (a test that disrupts the counter
//! tells the misses before the writer saw it from those after).
//! Several of them at once are the stampers of the short-ties test.

use crate::exit::CliError;
use hrts_core::{HostConfig, SharedBase};
use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::time::{Duration, Instant};

/// The name of an errno the probes can meet.
fn errno_name(e: &std::io::Error) -> String {
    match e.raw_os_error() {
        Some(libc::EACCES) => "EACCES".into(),
        Some(libc::EPERM) => "EPERM".into(),
        Some(libc::EROFS) => "EROFS".into(),
        Some(libc::ENOENT) => "ENOENT".into(),
        Some(libc::ELOOP) => "ELOOP".into(),
        Some(libc::ETXTBSY) => "ETXTBSY".into(),
        Some(n) => format!("errno {n}"),
        None => e.to_string(),
    }
}

fn c_path(path: &Path) -> CString {
    // A path from the environment or made here has no NUL byte; one that did
    // would fail every probe with ENOENT, which the test reports.
    CString::new(path.as_os_str().as_bytes()).unwrap_or_default()
}

/// `Ok` as `allowed`, an error as its errno's name.
fn outcome(r: std::io::Result<()>) -> String {
    match r {
        Ok(()) => "allowed".into(),
        Err(e) => errno_name(&e),
    }
}

fn check(rc: libc::c_int) -> std::io::Result<()> {
    if rc == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

pub fn host_probe() -> Result<(), CliError> {
    let dir = HostConfig::from_env().dir;
    let page = hrts_core::storage::host::page_path(&dir);
    let cpage = c_path(&page);
    let mut lines = format!("page: {}\n", page.display());

    let open_rw = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(&page)
        .map(drop);
    lines += &format!("open-rw: {}\n", outcome(open_rw));

    // SAFETY: `cpage` is a NUL-terminated path that lives across the call;
    // the page's own size changes none of its bytes.
    let truncate = check(unsafe { libc::truncate(cpage.as_ptr(), 4096) });
    lines += &format!("truncate: {}\n", outcome(truncate));

    let mode = std::fs::symlink_metadata(&page).map(|m| {
        use std::os::unix::fs::PermissionsExt;
        m.permissions().mode() & 0o7777
    });
    let chmod = mode.and_then(|mode| {
        // SAFETY: as above; its own mode again changes nothing.
        check(unsafe { libc::chmod(cpage.as_ptr(), mode as libc::mode_t) })
    });
    lines += &format!("chmod: {}\n", outcome(chmod));

    let map_write = std::fs::File::open(&page).and_then(|f| {
        use std::os::fd::AsRawFd;
        // SAFETY: a new shared mapping of one page of an open descriptor; on
        // success it is unmapped at once and nothing is written through it.
        let at = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                4096,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                f.as_raw_fd(),
                0,
            )
        };
        if at == libc::MAP_FAILED {
            return Err(std::io::Error::last_os_error());
        }
        // SAFETY: `at` is the mapping just made, 4096 bytes long.
        unsafe { libc::munmap(at, 4096) };
        Ok(())
    });
    lines += &format!("map-write: {}\n", outcome(map_write));

    let probe = dir.join(format!(".hrts-probe-{}", std::process::id()));
    let create = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&probe)
        .map(|_| {
            let _ = std::fs::remove_file(&probe);
        });
    lines += &format!("create: {}\n", outcome(create));
    super::print(&lines)
}

pub fn offsets(base: &SharedBase, ms: u64) -> Result<(), CliError> {
    super::print(&format!("timeline: {}\n", base.timeline()))?;
    let start = Instant::now();
    let end = start + Duration::from_millis(ms);
    let mut signed = Vec::with_capacity(ms as usize + 1);
    let mut next = start;
    while Instant::now() < end {
        signed.push(base.offset_now());
        next += Duration::from_millis(1);
        std::thread::sleep(next.saturating_duration_since(Instant::now()));
    }
    let mut abs: Vec<u64> = signed.iter().map(|o| o.unsigned_abs()).collect();
    abs.sort_unstable();
    signed.sort_unstable();
    let n = abs.len();
    if n == 0 {
        return super::print("offsets: samples 0\n");
    }
    super::print(&format!(
        "offsets: samples {n} p50 {} p99 {} max {} median {}\n",
        abs[n / 2],
        abs[n * 99 / 100],
        abs[n - 1],
        signed[n / 2]
    ))
}

/// `hrts debug bound-check MS` (see the module's comment).
pub fn bound_check(base: &SharedBase, ms: u64) -> Result<(), CliError> {
    let end = Instant::now() + Duration::from_millis(ms);
    let (mut misses, mut unbounded) = (0u64, 0u64);
    let (mut first_unbounded, mut last_unbounded) = (0u64, 0u64);
    let (mut first_miss, mut last_miss, mut misses_after) = (0u64, 0u64, 0u64);
    let (mut offsets, mut halves) = (Vec::new(), Vec::new());
    while Instant::now() < end {
        for _ in 0..64 {
            let before = hrts_core::clock::realtime_ns();
            let b = base.now_bounded();
            let after = hrts_core::clock::realtime_ns();
            let Ok(b) = b else {
                unbounded += 1;
                if first_unbounded == 0 {
                    first_unbounded = after;
                }
                last_unbounded = after;
                continue;
            };
            if b.earliest > after || b.latest < before {
                misses += 1;
                if first_miss == 0 {
                    first_miss = before;
                }
                last_miss = before;
                if first_unbounded != 0 {
                    misses_after += 1;
                }
                // The first few, to stderr: by how much and with what
                // bracket, which says whether the line or the bracket erred.
                if misses <= 5 {
                    let (ahead, behind) = (
                        b.earliest.saturating_sub(after),
                        before.saturating_sub(b.latest),
                    );
                    eprintln!(
                        "bound-check: miss: interval [{}, {}] ({:?}, half {} ns), clock in \
                         [{before}, {after}] (bracket {} ns): earliest ahead by {ahead} ns, \
                         latest behind by {behind} ns",
                        b.earliest,
                        b.latest,
                        b.status,
                        (b.latest - b.earliest) / 2,
                        // A clock stepped back between the reads (a test's
                        // libfaketime) makes `after` the smaller.
                        after.abs_diff(before)
                    );
                }
            }
            halves.push((b.latest - b.earliest) / 2);
            // Offsets only from tight brackets: one the scheduler stretched
            // says nothing of the line.
            if after.saturating_sub(before) < 2_000 {
                let mid = b.earliest / 2 + b.latest / 2;
                offsets.push(mid.abs_diff(before / 2 + after / 2));
            }
        }
    }
    let pct = |v: &mut Vec<u64>| {
        v.sort_unstable();
        match v.len() {
            0 => (0, 0),
            n => (v[n * 99 / 100], v[n - 1]),
        }
    };
    let (off99, off_max) = pct(&mut offsets);
    let (half99, half_max) = pct(&mut halves);
    super::print(&format!(
        "bound-check: samples {} misses {misses} unbounded {unbounded} offset p99 {off99} max \
         {off_max} half p99 {half99} max {half_max} first-unbounded {first_unbounded} \
         last-unbounded {last_unbounded} first-miss {first_miss} last-miss {last_miss} \
         misses-after-unbounded {misses_after}\n",
        halves.len() as u64 + unbounded
    ))
}
