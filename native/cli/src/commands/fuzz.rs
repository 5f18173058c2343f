//! Test-only (`testing` feature): the fuzz stage's damaging process and its Rust reader.
//!
//! `hrts debug fuzz ROUNDS SEED` damages the live segment named by HRTS_SEGMENT
//! ROUNDS times — random words, bit flips, small integer changes, a whole random
//! page, the name object truncated, shrunk, grown or scribbled — and after each
//! damage opens the segment afresh in this process (a full attach, with a short
//! ready timeout). A fresh open must either refuse (an error) or give a time within
//! 1 ms of CLOCK_REALTIME. Then it lets the segment repair itself the way attached
//! processes do (a tie, which validates first) and undoes what only a person could
//! (the name's record, the page's storage tag). Every hundredth round the damage
//! is left for the attached readers to notice at their next tie. Every five
//! hundredth a real `hrts now` process opens the damaged segment: it must not be
//! killed by a signal or hang.
//!
//! `hrts debug fuzz-read MS` is the Rust reader: it stamps for MS milliseconds and
//! counts stamps more than 1 ms from CLOCK_REALTIME (what a damaged line would
//! give; since every stamp checks its line's quick word, the stage requires 0).

use crate::exit::CliError;
use hrts_core::{Config, OpenRequest, SharedBase};
use std::io::Write;
use std::os::unix::fs::FileExt;
use std::os::unix::process::ExitStatusExt;
use std::sync::atomic::Ordering::SeqCst;
use std::time::{Duration, Instant};

/// How far a fresh open's answer may be from the system clock.
const TOLERANCE_NS: i64 = 1_000_000;
/// Bytes of the name object's record.
const RECORD_LEN: usize = hrts_core::storage::shm::REC_LEN;
/// The page's storage tag: its last 64 bytes (see the core's `shm::TAG_OFFSET`).
const TAG_WORD: usize = (4096 - 64) / 8;

/// A failure of the harness itself (exit 1).
fn failed(message: impl Into<String>) -> CliError {
    CliError::Io(std::io::Error::other(message.into()))
}

/// splitmix64: small, seedable, good enough for positions and values.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

#[derive(Default)]
struct Counts {
    rounds: u64,
    refused: u64,
    answered: u64,
    wrong: u64,
    unrepaired: u64,
    left: u64,
    unnoticed: u64,
    notice_ms_max: u64,
    spawned: u64,
    spawn_killed: u64,
    spawn_hung: u64,
    spawn_wrong: u64,
}

/// The time of a fresh open: `None` if it refused, else the offset from the
/// system clock read right before and after (0 when inside that bracket).
fn fresh_open_offset(cfg: &Config) -> Option<i64> {
    let base = match SharedBase::open(cfg) {
        Ok(b) => b,
        Err(e) => {
            if std::env::var_os("HRTS_FUZZ_DEBUG").is_some() {
                eprintln!("refused: {e}");
            }
            return None;
        }
    };
    let before = hrts_core::clock::realtime_ns() as i64;
    let stamp = base.now_ns() as i64;
    let after = hrts_core::clock::realtime_ns() as i64;
    Some(if stamp < before {
        stamp - before
    } else if stamp > after {
        stamp - after
    } else {
        0
    })
}

pub fn fuzz(base: &SharedBase, rounds: u64, seed: u64) -> Result<(), CliError> {
    let name = base.name().to_string();
    let mut cfg = OpenRequest::named(name.as_str()).resolve()?;
    cfg.ready_timeout = Duration::from_millis(20);
    // A fresh open that finds the page gone makes a new one: a short calibration
    // and no reliability evaluation keep such rounds near 10 ms, not 200 (what is
    // tested is the damage's handling, not the calibration).
    cfg.calibration.budget = Duration::from_millis(5);
    cfg.evaluate_reliability = false;
    let path = format!("/dev/shm{name}");
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(&path)
        .map_err(|e| failed(format!("open {path}: {e}")))?;
    let mut record = [0u8; RECORD_LEN];
    file.read_exact_at(&mut record, 0)
        .map_err(|e| failed(format!("read {path}: {e}")))?;
    let page = base.page_words_for_test();
    let tag = page[TAG_WORD].load(SeqCst);
    let exe = std::env::current_exe()?;
    let mut rng = Rng(seed);
    let mut c = Counts::default();
    let started = Instant::now();

    for round in 0..rounds {
        c.rounds += 1;
        let name_damage = damage(&mut rng, page, &file);
        // Every hundredth page damage stays for the attached readers to notice.
        let leave = !name_damage && round % 100 == 50;
        match fresh_open_offset(&cfg) {
            None => c.refused += 1,
            Some(off) if off.abs() > TOLERANCE_NS => {
                c.wrong += 1;
                if c.wrong <= 5 {
                    eprintln!("fuzz: round {round}: a fresh open answered {off} ns off");
                }
            }
            Some(_) => c.answered += 1,
        }
        if round % 500 == 250 {
            spawn_now(&exe, &name, &mut c);
        }
        if leave {
            c.left += 1;
            let t0 = Instant::now();
            while base.validate().is_err() && t0.elapsed() < Duration::from_secs(2) {
                std::thread::sleep(Duration::from_micros(200));
            }
            c.notice_ms_max = c.notice_ms_max.max(t0.elapsed().as_millis() as u64);
            if base.validate().is_err() {
                c.unnoticed += 1;
            }
        }
        // What a person would undo: the name (truncated or scribbled) and the tag
        // that finds the page by key; then the segment repairs itself.
        let _ = file.set_len(4096);
        remove_replacement(&file, &record, tag);
        let _ = file.write_all_at(&record, 0);
        page[TAG_WORD].store(tag, SeqCst);
        // A damaged seqlock word may name a writer: the first try frees it.
        for _ in 0..3 {
            if base.validate().is_ok() {
                break;
            }
            base.force_move();
        }
        if let Err(e) = base.validate() {
            c.unrepaired += 1;
            if c.unrepaired <= 5 {
                eprintln!("fuzz: round {round}: not repaired by a tie: {e}");
            }
            base.set_base_info()?;
        }
    }
    let secs = started.elapsed().as_secs_f64();
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "fuzzer: rounds {} in {secs:.1} s: fresh opens refused {}, answered within 1 ms {}, \
         answered wrong {}; left for readers {}, unnoticed {}, longest {} ms; not repaired by \
         a tie {}; processes {}, killed {}, hung {}, wrong {}",
        c.rounds,
        c.refused,
        c.answered,
        c.wrong,
        c.left,
        c.unnoticed,
        c.notice_ms_max,
        c.unrepaired,
        c.spawned,
        c.spawn_killed,
        c.spawn_hung,
        c.spawn_wrong
    )?;
    let failures = c.wrong + c.unnoticed + c.spawn_killed + c.spawn_hung + c.spawn_wrong;
    writeln!(
        out,
        "fuzzer: {} passed, {failures} failed",
        c.rounds + c.spawned - failures.min(c.rounds + c.spawned)
    )?;
    if failures > 0 {
        return Err(failed(format!("fuzz: {failures} failures")));
    }
    Ok(())
}

/// A fresh open that found the page gone (its id damaged, or the page's tag)
/// made a new page and recorded it; the original record is put back next, which
/// would leave that page behind. It is removed if it carries this name's tag, so
/// a damaged id that happens to name another page is never touched.
fn remove_replacement(file: &std::fs::File, original: &[u8; RECORD_LEN], tag: u64) {
    let mut now = [0u8; RECORD_LEN];
    if file.read_exact_at(&mut now, 0).is_err() || now[32..36] == original[32..36] {
        return;
    }
    let shmid = i32::from_ne_bytes([now[32], now[33], now[34], now[35]]);
    // SAFETY: plain system call; a read-only attach of any id either fails or
    // maps a whole segment, which is only read below if it has a page's size.
    let at = unsafe { libc::shmat(shmid, std::ptr::null(), libc::SHM_RDONLY) };
    if at as isize == -1 {
        return;
    }
    // SAFETY: shmid_ds is plain data, valid when zeroed.
    let mut ds: libc::shmid_ds = unsafe { std::mem::zeroed() };
    // SAFETY: `ds` is a valid shmid_ds to fill.
    let sized =
        unsafe { libc::shmctl(shmid, libc::IPC_STAT, &mut ds) } == 0 && ds.shm_segsz == 4096;
    // SAFETY: the segment is 4096 bytes (checked), so its tag word is inside it.
    let ours = sized && unsafe { *(at as *const u64).add(TAG_WORD) } == tag;
    if ours {
        // SAFETY: plain system call on a page this harness's damage created.
        unsafe { libc::shmctl(shmid, libc::IPC_RMID, std::ptr::null_mut()) };
    }
    // SAFETY: `at` was returned by shmat above.
    unsafe { libc::shmdt(at) };
}

/// Applies one random damage; true if it hit the name object rather than the page.
fn damage(rng: &mut Rng, page: &[std::sync::atomic::AtomicU64], file: &std::fs::File) -> bool {
    let at = rng.below(page.len() as u64) as usize;
    match rng.below(10) {
        0 => page[at].store(rng.next(), SeqCst),
        1 | 2 => {
            page[at].fetch_xor(1 << rng.below(64), SeqCst);
        }
        3 | 4 => {
            let delta = rng.below(2001) as i64 - 1000;
            let v = page[at].load(SeqCst).wrapping_add(delta as u64);
            page[at].store(v, SeqCst);
        }
        5 => {
            let byte = rng.below(8) * 8;
            let v = page[at].load(SeqCst) ^ ((rng.below(255) + 1) << byte);
            page[at].store(v, SeqCst);
        }
        6 => {
            for w in page {
                w.store(rng.next(), SeqCst);
            }
        }
        7 => {
            let _ = file.set_len(rng.below(4096));
            return true;
        }
        8 => {
            let _ = file.set_len(4096 + rng.below(1 << 20));
            return true;
        }
        _ => {
            let bytes = rng.next().to_ne_bytes();
            let _ = file.write_all_at(&bytes, rng.below(RECORD_LEN as u64));
            return true;
        }
    }
    false
}

/// A real process opens the damaged segment: it must answer within 1 ms or
/// refuse, never be killed by a signal or hang.
fn spawn_now(exe: &std::path::Path, name: &str, c: &mut Counts) {
    c.spawned += 1;
    let child = std::process::Command::new(exe)
        .args(["--segment", name, "now"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn();
    let Ok(mut child) = child else {
        c.spawn_wrong += 1;
        return;
    };
    let deadline = Instant::now() + Duration::from_secs(10);
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(1)),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                c.spawn_hung += 1;
                return;
            }
        }
    };
    if status.signal().is_some() {
        c.spawn_killed += 1;
        return;
    }
    let mut text = String::new();
    if let Some(mut out) = child.stdout.take() {
        let _ = std::io::Read::read_to_string(&mut out, &mut text);
    }
    if status.success() {
        let now = hrts_core::clock::realtime_ns() as i64;
        match text.trim().parse::<i64>() {
            // Read after the child exited: its stamp is earlier, never later.
            Ok(ns) if ns <= now + TOLERANCE_NS && now - ns < 10_000_000_000 => {}
            _ => c.spawn_wrong += 1,
        }
    }
}

/// The Rust reader: stamps for `ms` milliseconds, counting stamps more than 1 ms
/// from CLOCK_REALTIME (read right before and after each), backward steps,
/// stamps that used over 1 ms of the thread's CPU time (a stamp that waits
/// spins or yields; one that was preempted does not count), and the longest
/// bracket, ns (preemption included). It stops early once the file HRTS_FUZZ_STOP
/// names exists (looked for every 65536 stamps).
pub fn fuzz_read(base: &SharedBase, ms: u64) -> Result<(), CliError> {
    println!("attached (timeline: {})", base.timeline());
    std::io::stdout().flush()?;
    let stop = hrts_core::clock::realtime_ns() + ms * 1_000_000;
    let (mut count, mut off, mut backwards, mut last) = (0u64, 0u64, 0u64, 0u64);
    let (mut slow, mut longest) = (0u64, 0u64);
    let stop_file = std::env::var_os("HRTS_FUZZ_STOP").map(std::path::PathBuf::from);
    loop {
        let before = hrts_core::clock::realtime_ns();
        if before >= stop {
            break;
        }
        if count & 0xffff == 0 && stop_file.as_ref().is_some_and(|f| f.exists()) {
            break;
        }
        let cpu = hrts_core::process::thread_cpu_ns();
        let ns = base.now_ns();
        let cpu = hrts_core::process::thread_cpu_ns().saturating_sub(cpu);
        let after = hrts_core::clock::realtime_ns();
        count += 1;
        longest = longest.max(after.saturating_sub(before));
        if cpu > 1_000_000 {
            slow += 1;
        }
        if ns + TOLERANCE_NS as u64 <= before || ns > after + TOLERANCE_NS as u64 {
            off += 1;
        }
        if ns < last {
            backwards += 1;
        }
        last = ns;
    }
    println!(
        "reader rust: stamps {count} off {off} backwards {backwards} errors 0 slow {slow} \
         longest {longest}"
    );
    Ok(())
}
