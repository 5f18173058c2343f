//! In-process tests of the segment protocol. Cross-process behaviour (32 attachers,
//! causality, a writer killed with SIGKILL) is tested with real processes in
//! native/cli/tests/multiprocess.rs.

use super::layout::*;
use super::*;
use crate::clock::source;
use crate::error::ErrorKind;
#[cfg(not(windows))]
use crate::storage::STATE_INITIALISING;
use crate::testutil::{off_clock, Rng, TestName};
#[cfg(not(windows))]
use std::io::Write;
#[cfg(not(windows))]
use std::os::unix::fs::PermissionsExt;
#[cfg(not(windows))]
use std::os::unix::io::AsRawFd;
use std::sync::atomic::AtomicU64;
use std::sync::atomic::Ordering::SeqCst;
use std::sync::Arc;

#[cfg(not(windows))]
fn write_object(t: &TestName, bytes: &[u8], mode: u32) {
    let mut f = std::fs::File::create(t.path()).unwrap();
    f.write_all(bytes).unwrap();
    std::fs::set_permissions(t.path(), std::fs::Permissions::from_mode(mode)).unwrap();
}

fn expect_err(cfg: &Config, kind: ErrorKind, needle: &str) -> Error {
    let err = SharedBase::open(cfg).expect_err("open must fail");
    assert_eq!(err.kind(), kind, "{err}");
    assert!(err.message().contains(needle), "{err}");
    assert!(
        err.message().contains(&cfg.name),
        "message names the segment: {err}"
    );
    err
}

/// The pid of a process that has certainly exited.
fn dead_pid() -> u32 {
    #[cfg(not(windows))]
    let mut child = std::process::Command::new("true").spawn().unwrap();
    #[cfg(windows)]
    let mut child = std::process::Command::new("cmd")
        .args(["/c", "exit"])
        .spawn()
        .unwrap();
    let pid = child.id();
    child.wait().unwrap();
    pid
}

#[test]
fn create_then_attach_share_one_base() {
    let t = TestName::new("attach");
    let a = SharedBase::open(&t.cfg()).unwrap();
    assert_eq!(a.opened(), Opened::Created);
    let b = SharedBase::open(&t.cfg()).unwrap();
    assert_eq!(b.opened(), Opened::Attached);
    assert_eq!(a.base_info(), b.base_info());
    assert_eq!(a.scale(), b.scale());
    assert_eq!(a.source(), b.source());
    let info = b.info();
    assert_eq!(info.calibrations, 1);
    assert_eq!(info.creator_pid, crate::os::pid());
    assert_eq!(info.layout_version, LAYOUT_VERSION);
    assert!(!info.reason.is_empty());
    #[cfg(not(windows))]
    {
        let meta = std::fs::metadata(t.path()).unwrap();
        assert_eq!(meta.permissions().mode() & 0o777, 0o600);
        assert_eq!(meta.len(), SEGMENT_SIZE as u64);
    }
}

#[test]
fn stamps_match_the_system_clock_right_after_creation() {
    let t = TestName::new("realtime");
    let base = SharedBase::open(&t.cfg()).unwrap();
    // The best of several brackets bounds the scheduling noise of one read.
    let best = (0..200)
        .map(|_| {
            let before = crate::os::realtime_ns();
            let stamp = base.now_ns_ordered();
            let after = crate::os::realtime_ns();
            let mid = before / 2 + after / 2;
            (after - before, stamp as i64 - mid as i64)
        })
        .min_by_key(|&(width, _)| width)
        .unwrap();
    assert!(
        best.1.abs() < 2_000,
        "stamp is {} ns off CLOCK_REALTIME",
        best.1
    );
}

#[test]
fn later_calendar_changes_do_not_move_the_timeline_until_reset() {
    let t = TestName::new("jump");
    let offset = Arc::new(AtomicU64::new(0));
    let mut cfg = t.cfg();
    cfg.mode = Mode::Frozen;
    let o = offset.clone();
    cfg.calendar = Arc::new(move || crate::os::realtime_ns() + o.load(SeqCst));
    let base = SharedBase::open(&cfg).unwrap();
    let gen = base.base_info().generation;
    const HOUR: u64 = 3_600_000_000_000;
    offset.store(HOUR, SeqCst);
    let off = off_clock(|| base.now_ns());
    assert!(
        off.abs() < 10_000_000,
        "timeline moved with the calendar: {off} ns"
    );
    let info = base.set_base_info().unwrap();
    assert_eq!(info.generation, gen + 1);
    let off = off_clock(|| base.now_ns() - HOUR);
    assert!(
        off.abs() < 10_000_000,
        "reset ignored the calendar: {off} ns from an hour ahead"
    );
}

#[test]
fn a_million_moves_give_the_unmoved_timeline_bit_for_bit() {
    let t = TestName::new("moves");
    let mut cfg = t.cfg();
    cfg.mode = Mode::Frozen;
    cfg.wrap_threshold = Some(1);
    let base = SharedBase::open(&cfg).unwrap();
    let origin = base.base();
    assert_eq!(origin.frac, 0);
    let scale = base.scale();
    let moves_before = base.info().moves;
    let n = if cfg!(debug_assertions) {
        200_000
    } else {
        1_000_000
    };
    let mut counter = source::read_ordered(base.source());
    let mut expected_moves = 0;
    for _ in 0..n {
        // Steps of 1..=4096 ticks beyond the last value cover every remainder;
        // every step past the threshold of one tick moves the base.
        let step = 1 + (counter.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 52);
        counter += step;
        expected_moves += (step > 1) as u64;
        let reference = origin.ns as u128
            + (((counter - origin.counter) as u128 * scale.mult as u128) >> scale.shift);
        // Synthetic counters stand in for reads, so the moving path is driven directly.
        assert_eq!(base.stamp_with(|_| counter) as u128, reference);
        assert_eq!(
            base.ns_at(counter) as u128,
            reference,
            "read-only path agrees"
        );
    }
    let moved = base.info().moves - moves_before;
    assert_eq!(moved, expected_moves);
    assert!(moved > n as u64 / 2);
    assert_eq!(base.base().generation, origin.generation);
}

#[test]
fn ns_at_never_moves_the_base_whatever_the_counter() {
    let t = TestName::new("nsat");
    let mut cfg = t.cfg();
    cfg.wrap_threshold = Some(1);
    let base = SharedBase::open(&cfg).unwrap();
    let before = base.base();
    for junk in [
        0,
        1,
        u64::MAX,
        before.counter + (1 << 60),
        before.counter.wrapping_sub(1),
    ] {
        base.ns_at(junk);
    }
    assert_eq!(base.base(), before);
}

#[test]
fn readers_continue_while_a_writer_holds_the_word_and_a_dead_one_is_recovered() {
    let t = TestName::new("deadwriter");
    // No tie of its own may move the word between the test's steps.
    let base = SharedBase::open(&t.quiet_cfg()).unwrap();
    let h = base.header();
    let word = h.seq.load(SeqCst);
    let before = base.now_ns();
    // A writer that died mid-move: its pid holds the word, the inactive slot is junk.
    h.seq.store(word | dead_pid() as u64, SeqCst);
    store_junk(&h.slots[seq_slot(word) ^ 1]);
    let during = base.now_ns();
    assert!(during >= before);
    // Nobody holds the role's lock: the holder is dead, and its role is taken
    // over at once (the junk it left in the inactive slot is overwritten).
    assert!(base.force_move(), "the dead writer's role is taken over");
    assert_eq!(h.seq.load(SeqCst), (word & !0xffff_ffff) + SEQ_ONE);
    assert!(base.now_ns() >= during);
    assert_eq!(
        base.info().tracking.repairs,
        0,
        "the active line was intact"
    );
}

#[test]
fn a_live_writer_is_never_robbed() {
    let t = TestName::new("livewriter");
    let base = SharedBase::open(&t.cfg()).unwrap();
    base.hold_writer_role_for_test().unwrap();
    let held = base.header().seq.load(SeqCst);
    assert_eq!(seq_writer(held), crate::os::pid());
    assert!(!base.force_move());
    assert_eq!(base.header().seq.load(SeqCst), held);
    let t0 = base.now_ns();
    assert!(base.now_ns() >= t0, "readers do not wait for the writer");
}

/// Set in the child of [`a_killed_holder_of_the_writer_role_is_taken_over`]:
/// the segment whose writer role it holds until it is killed.
const ROLE_HOLDER_ENV: &str = "HRTS_TEST_ROLE_HOLDER";

#[test]
fn a_killed_holder_of_the_writer_role_is_taken_over() {
    if let Ok(name) = std::env::var(ROLE_HOLDER_ENV) {
        // The child: this test binary run again for this test alone.
        let mut cfg = Config::named(&name);
        cfg.evaluate_reliability = false;
        let base = SharedBase::open(&cfg).unwrap();
        base.hold_writer_role_for_test().unwrap();
        // On a line of its own: libtest has just printed "test NAME ... ".
        println!("\nrole held");
        std::io::Write::flush(&mut std::io::stdout()).unwrap();
        loop {
            std::thread::sleep(std::time::Duration::from_secs(1));
        }
    }
    let t = TestName::new("killedholder");
    let base = SharedBase::open(&t.cfg()).unwrap();
    // Under an emulator (scripts/cross-test.sh), the child runs under the same one.
    let runner = std::env::var("HRTS_TEST_SELF_RUNNER").unwrap_or_default();
    let mut words = runner.split_whitespace();
    let mut command = match words.next() {
        Some(emulator) => {
            let mut c = std::process::Command::new(emulator);
            c.args(words).arg(std::env::current_exe().unwrap());
            c
        }
        None => std::process::Command::new(std::env::current_exe().unwrap()),
    };
    let mut child = hrts_test_support::process::Reaped(
        command
            .args([
                "--exact",
                "segment::tests::a_killed_holder_of_the_writer_role_is_taken_over",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(ROLE_HOLDER_ENV, &t.0)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap(),
    );
    let out = std::io::BufReader::new(child.0.stdout.take().unwrap());
    let held = std::io::BufRead::lines(out).any(|l| l.is_ok_and(|l| l == "role held"));
    assert!(held, "the child took the writer role");
    let word = base.header().seq.load(SeqCst);
    assert_ne!(seq_writer(word), 0, "the child holds the word");
    assert!(
        !base.force_move(),
        "a live holder in another process is not robbed"
    );
    let before = base.now_ns();
    // Killed (SIGKILL, TerminateProcess): it releases nothing itself; the
    // kernel releases its lock (Linux) or abandons its mutex (Windows).
    child.0.kill().unwrap();
    child.0.wait().unwrap();
    base.next_probe_ns.store(0, SeqCst);
    base.last_probed.store(0, SeqCst);
    assert!(base.force_move(), "the killed holder's role is taken over");
    assert_eq!(
        seq_writer(base.header().seq.load(SeqCst)),
        0,
        "and released"
    );
    assert!(base.now_ns() >= before);
}

#[test]
fn a_holder_in_another_handle_is_proven_alive_by_its_lock_not_its_pid() {
    // Two handles of one process have two open file descriptions of the name,
    // so they see each other's lock as two processes would.
    let t = TestName::new("lockheld");
    let a = SharedBase::open(&t.cfg()).unwrap();
    let b = SharedBase::open(&t.cfg()).unwrap();
    std::thread::scope(|s| {
        let (held_tx, held_rx) = std::sync::mpsc::channel();
        let (go_tx, go_rx) = std::sync::mpsc::channel::<()>();
        let holder = s.spawn(move || {
            a.hold_writer_role_for_test().unwrap();
            held_tx.send(()).unwrap();
            go_rx.recv().unwrap();
            assert!(a.release_writer_role_for_test());
        });
        held_rx.recv().unwrap();
        let word = b.header().seq.load(SeqCst);
        // Its pid is ours and alive either way: only the lock tells.
        assert!(!b.force_move(), "a live holder is not robbed");
        b.next_probe_ns.store(0, SeqCst);
        b.last_probed.store(0, SeqCst);
        assert!(!b.force_move(), "not on a second look either");
        assert_eq!(b.header().seq.load(SeqCst), word);
        go_tx.send(()).unwrap();
        holder.join().unwrap();
    });
    let w = b.header().seq.load(SeqCst);
    assert_eq!(seq_writer(w), 0, "released");
    assert!(b.force_move(), "free again");
    assert_eq!(b.info().tracking.repairs, 0);
}

#[test]
fn a_stopped_holder_costs_stamps_nothing_and_its_late_line_stays_above_them() {
    let t = TestName::new("stalled");
    let mut cfg = t.cfg();
    cfg.tracking.interval = std::time::Duration::from_millis(2);
    let a = SharedBase::open(&cfg).unwrap();
    let b = SharedBase::open(&cfg).unwrap();
    let gen = b.base_info().generation;
    std::thread::scope(|s| {
        let (held_tx, held_rx) = std::sync::mpsc::channel();
        let (go_tx, go_rx) = std::sync::mpsc::channel::<()>();
        let holder = s.spawn(move || {
            a.hold_writer_role_for_test().unwrap();
            held_tx.send(()).unwrap();
            // Stopped: it does nothing until told.
            go_rx.recv().unwrap();
            assert!(a.release_writer_role_for_test(), "its late tie publishes");
        });
        held_rx.recv().unwrap();
        let word = b.header().seq.load(SeqCst);
        // 100 tie intervals with the role held: every stamp past the threshold
        // takes the current line, none waits.
        let start = std::time::Instant::now();
        let (mut last, mut count, mut worst) = (0, 0u64, 0u64);
        while start.elapsed() < std::time::Duration::from_millis(200) {
            let before = crate::clock::kernel::realtime_ns();
            let now = b.now_ns();
            let after = crate::clock::kernel::realtime_ns();
            assert!(now >= last, "backward: {now} < {last}");
            last = now;
            count += 1;
            let off = if now < before {
                before - now
            } else {
                now.saturating_sub(after)
            };
            worst = worst.max(off);
        }
        // A stamp that waited for the holder would wait out a tie interval (2 ms):
        // at most 100 in 200 ms. (On an idle machine tens of thousands; 657 under
        // qemu on a loaded one.)
        assert!(count > 300, "{count} stamps in 200 ms: they waited");
        assert!(worst < 1_000_000, "a stamp {worst} ns off the calendar");
        let marked = b.header().seq.load(SeqCst);
        assert_eq!(marked & !SEQ_STALE, word, "not robbed, not published");
        assert!(seq_stale(marked), "stamps past the reach marked the word");
        go_tx.send(()).unwrap();
        holder.join().unwrap();
        // The late line is no lower than anything the old line gave.
        let after = b.now_ns();
        assert!(after >= last, "after the late tie: {after} < {last}");
    });
    assert!(
        b.offset_now().abs() < 100_000,
        "the late line follows the calendar: {} ns off",
        b.offset_now()
    );
    assert_eq!(b.base_info().generation, gen, "a slew, no step");
    assert_eq!(b.info().tracking.repairs, 0, "no repair");
    assert!(!seq_stale(b.header().seq.load(SeqCst)));
}

fn store_junk(slot: &Slot) {
    slot.counter.store(u64::MAX / 3, SeqCst);
    slot.ns.store(5, SeqCst);
}

#[test]
fn a_counter_far_behind_the_base_re_bases_instead_of_going_back() {
    for mode in [Mode::Frozen, Mode::Tracking] {
        let t = TestName::new("backstep");
        let mut cfg = t.cfg();
        cfg.mode = mode;
        let base = SharedBase::open(&cfg).unwrap();
        let first = base.now_ns();
        let gen = base.base_info().generation;
        // As if the counter had been reset: it reads ten seconds behind the base.
        // Wrapping: on a machine booted seconds ago this lies just below 2^64.
        let reset = base.base().counter.wrapping_sub(base.frequency() * 10);
        let after = base.stamp_with(|_| reset);
        assert!(
            after >= first,
            "{mode:?}: went backwards: {after} < {first}"
        );
        assert_eq!(base.base_info().generation, gen + 1, "{mode:?}");
        assert!(
            base.stamp_with(|_| reset.wrapping_add(1000)) >= after,
            "{mode:?}"
        );
        assert_eq!(
            base.info().tracking.repairs,
            0,
            "{mode:?}: no damage involved"
        );
    }
}

#[cfg(not(windows))]
#[test]
fn a_creator_that_died_before_ready_is_replaced() {
    let t = TestName::new("deadcreator");
    let mut page = vec![0u8; SEGMENT_SIZE];
    let word = state_word(STATE_INITIALISING, dead_pid());
    let at = std::mem::offset_of!(Header, state);
    page[at..at + 8].copy_from_slice(&word.to_ne_bytes());
    write_object(&t, &page, 0o600);
    let base = SharedBase::open(&t.cfg()).unwrap();
    assert_eq!(base.opened(), Opened::TookOver);
    assert!(base.now_ns() > 0);
}

#[cfg(not(windows))]
#[test]
fn an_object_never_sized_is_taken_over_after_the_wait() {
    let t = TestName::new("unsized");
    write_object(&t, &[], 0o600);
    let mut cfg = t.cfg();
    cfg.ready_timeout = std::time::Duration::from_millis(50);
    let base = SharedBase::open(&cfg).unwrap();
    assert_eq!(base.opened(), Opened::TookOver);
}

#[cfg(not(windows))]
#[test]
fn a_live_creator_that_never_finishes_times_out() {
    let t = TestName::new("stuck");
    let mut page = vec![0u8; SEGMENT_SIZE];
    let word = state_word(STATE_INITIALISING, crate::os::pid());
    let at = std::mem::offset_of!(Header, state);
    page[at..at + 8].copy_from_slice(&word.to_ne_bytes());
    write_object(&t, &page, 0o600);
    // A live initialiser holds the name's lock for the whole initialisation.
    let holder = std::fs::File::open(t.path()).unwrap();
    // SAFETY: the descriptor is open; flock touches only its lock.
    assert_eq!(unsafe { libc::flock(holder.as_raw_fd(), libc::LOCK_EX) }, 0);
    let mut cfg = t.cfg();
    cfg.ready_timeout = std::time::Duration::from_millis(50);
    expect_err(&cfg, ErrorKind::Timeout, "still being initialised");
    // Once its lock is released (the process died), the next opener takes over.
    drop(holder);
    assert_eq!(SharedBase::open(&cfg).unwrap().opened(), Opened::TookOver);
}

/// Stamps from `base` for a while, checking they never go backwards.
#[cfg(not(windows))]
fn stamp_a_while(base: &SharedBase) -> u64 {
    let mut last = 0;
    for _ in 0..100_000 {
        let now = base.now_ns();
        assert!(now >= last, "went backwards: {now} < {last}");
        last = now;
    }
    last
}

#[cfg(not(windows))]
#[test]
fn truncating_shrinking_or_growing_the_name_never_reaches_an_attached_reader() {
    let t = TestName::new("resize");
    let base = SharedBase::open(&t.cfg()).unwrap();
    let generation = base.base_info().generation;
    let file = std::fs::OpenOptions::new()
        .write(true)
        .open(t.path())
        .unwrap();

    // Grown: a fresh open still finds the record and attaches the same page.
    file.set_len(1 << 20).unwrap();
    stamp_a_while(&base);
    let again = SharedBase::open(&t.cfg()).unwrap();
    assert_eq!(again.opened(), Opened::Attached);
    again.force_move();
    assert_eq!(base.info().moves, again.info().moves, "one page");

    // Shrunk: fresh opens are refused, attached readers go on.
    file.set_len(100).unwrap();
    stamp_a_while(&base);
    expect_err(&t.cfg(), ErrorKind::Truncated, "truncated");

    // Truncated to nothing: the record is gone, so after the wait (a creator may
    // be about to size it) a fresh open finds the page by its key and links it
    // again: one timeline, nothing left behind.
    file.set_len(0).unwrap();
    stamp_a_while(&base);
    let mut cfg = t.cfg();
    cfg.ready_timeout = std::time::Duration::from_millis(20);
    let fresh = SharedBase::open(&cfg).unwrap();
    assert_eq!(fresh.opened(), Opened::Attached);
    assert_eq!(
        fresh.page.id(),
        base.page.id(),
        "the same page, linked again"
    );
    assert_eq!(base.base_info().generation, generation);
    stamp_a_while(&base);
    // The record was wiped (zeros, a state that says nobody started): the same.
    let fd = shm::open_existing(&shm::validate_name(&t.0).unwrap())
        .unwrap()
        .unwrap();
    shm::write_record(&fd, &SPEC, 0, shm::PageId::default()).unwrap();
    assert_eq!(SharedBase::open(&cfg).unwrap().page.id(), base.page.id());
}

#[cfg(not(windows))]
#[test]
fn a_removed_page_is_replaced_and_a_reused_page_id_is_not_trusted() {
    let t = TestName::new("ipcrm");
    let base = SharedBase::open(&t.cfg()).unwrap();
    // `ipcrm` of the page: it lives on while attached (Linux lets new openers
    // join it, keeping one timeline) and is gone when the last one detaches;
    // the next opener then makes a new page.
    let id = base.page.id();
    assert!(shm::remove_page(id.shmid));
    stamp_a_while(&base);
    let joined = SharedBase::open(&t.cfg()).unwrap();
    assert_eq!(joined.opened(), Opened::Attached);
    assert_eq!(joined.page.id(), id);
    drop((base, joined));
    let next = SharedBase::open(&t.cfg()).unwrap();
    assert_eq!(next.opened(), Opened::TookOver);
    assert_ne!(next.page.id(), id);

    // A record naming a live page that is not the one it was written for (an id
    // reused by another segment) is not attached.
    let other = TestName::new("ipcrm-other");
    let other_base = SharedBase::open(&other.cfg()).unwrap();
    let fd = shm::open_existing(&shm::validate_name(&t.0).unwrap())
        .unwrap()
        .unwrap();
    let forged = shm::PageId {
        ctime: other_base.page.id().ctime - 1,
        ..other_base.page.id()
    };
    shm::write_record(&fd, &SPEC, state_word(STATE_READY, 1), forged).unwrap();
    let relinked = SharedBase::open(&t.cfg()).unwrap();
    assert_eq!(relinked.page.id(), next.page.id(), "found again by its key");
    assert_ne!(relinked.page.id().shmid, other_base.page.id().shmid);
    stamp_a_while(&other_base);
}

#[cfg(not(windows))]
#[test]
fn links_and_fifos_under_the_name_say_what_they_are() {
    let t = TestName::new("link");
    std::os::unix::fs::symlink("/etc/hostname", t.path()).unwrap();
    expect_err(&t.cfg(), ErrorKind::Foreign, "symbolic link");
    std::fs::remove_file(t.path()).unwrap();

    let t = TestName::new("fifo");
    let path = std::ffi::CString::new(t.path()).unwrap();
    // SAFETY: a valid path; mkfifo creates only that file.
    assert_eq!(unsafe { libc::mkfifo(path.as_ptr(), 0o600) }, 0);
    let start = std::time::Instant::now();
    expect_err(&t.cfg(), ErrorKind::Foreign, "FIFO");
    assert!(
        start.elapsed() < std::time::Duration::from_secs(1),
        "no wait"
    );
    std::fs::remove_file(t.path()).unwrap();
}

#[cfg(not(windows))]
#[test]
fn unlink_removes_page_and_name_and_attached_readers_keep_the_page() {
    let t = TestName::new("unlinkpage");
    let base = SharedBase::open(&t.cfg()).unwrap();
    let id = base.page.id();
    assert!(SharedBase::unlink(&t.0).unwrap());
    assert!(!std::path::Path::new(&t.path()).exists());
    stamp_a_while(&base);
    assert!(!SharedBase::unlink(&t.0).unwrap(), "nothing left to remove");
    drop(base);
    // SAFETY: zeroed is a valid shmid_ds; IPC_STAT only writes it.
    let mut ds: libc::shmid_ds = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    let rc = unsafe { libc::shmctl(id.shmid, libc::IPC_STAT, &mut ds) };
    assert!(
        rc != 0 || ds.shm_cpid as u32 != id.cpid,
        "the page is gone once its last user detached"
    );
}

#[cfg(not(windows))]
#[test]
fn foreign_truncated_and_mis_moded_objects_are_refused() {
    let t = TestName::new("foreign");
    write_object(&t, &[0xA5; SEGMENT_SIZE], 0o600);
    expect_err(&t.cfg(), ErrorKind::Foreign, "not an hrts segment");

    let t = TestName::new("short");
    write_object(&t, &[0; 100], 0o600);
    expect_err(&t.cfg(), ErrorKind::Truncated, "truncated");

    let t = TestName::new("mode");
    write_object(&t, &[0; SEGMENT_SIZE], 0o644);
    expect_err(&t.cfg(), ErrorKind::Permission, "every user");
    std::fs::set_permissions(t.path(), std::fs::Permissions::from_mode(0o640)).unwrap();
    expect_err(&t.cfg(), ErrorKind::Permission, "not 0600");
}

#[cfg(not(windows))]
#[test]
fn another_users_segment_is_refused() {
    let t = TestName::new("owner");
    write_object(&t, &[0; SEGMENT_SIZE], 0o600);
    let path = std::ffi::CString::new(t.path()).unwrap();
    // SAFETY: a valid path; chown touches only that file.
    if unsafe { libc::chown(path.as_ptr(), 65534, u32::MAX) } != 0 {
        eprintln!("skipped: changing a file's owner needs root");
        return;
    }
    let err = if crate::os::euid() == 0 {
        expect_err(&t.cfg(), ErrorKind::Permission, "belongs to uid 65534")
    } else {
        expect_err(&t.cfg(), ErrorKind::Permission, "another user")
    };
    assert!(err.message().contains("HRTS_SEGMENT"));
}

#[test]
fn other_layout_versions_and_corrupt_fields_are_refused() {
    let t = TestName::new("version");
    let base = SharedBase::open(&t.cfg()).unwrap();
    let h = base.header();
    h.layout_version.store(LAYOUT_VERSION + 1, SeqCst);
    expect_err(&t.cfg(), ErrorKind::Version, "a newer hrts");
    h.layout_version.store(LAYOUT_VERSION - 1, SeqCst);
    expect_err(&t.cfg(), ErrorKind::Version, "an older hrts");
    h.layout_version.store(LAYOUT_VERSION, SeqCst);

    let mult = h.mult.load(SeqCst);
    h.mult.store(u64::MAX, SeqCst);
    expect_err(&t.cfg(), ErrorKind::Corrupt, "conversion range");
    h.mult.store(0, SeqCst);
    expect_err(&t.cfg(), ErrorKind::Corrupt, "calibration is invalid");
    h.mult.store(mult, SeqCst);

    h.source_id.store(77, SeqCst);
    expect_err(&t.cfg(), ErrorKind::Corrupt, "unknown counter source");
    h.source_id.store(base.source() as u32, SeqCst);

    let state = h.state.load(SeqCst);
    h.state.store(0xdead_beef_0000_0001, SeqCst);
    expect_err(&t.cfg(), ErrorKind::Corrupt, "state word");
    h.state.store(state, SeqCst);
    assert!(
        SharedBase::open(&t.cfg()).is_ok(),
        "restored segment opens again"
    );
}

/// The rule of docs/PROTOCOL.md's "Layout versions": a page whose creator
/// wrote a newer minor version of this layout (fields this library does not
/// know, in the room after the minor version word) opens, stamps, moves and
/// validates as usual, and nothing here touches the fields it does not know.
#[test]
fn a_page_of_a_newer_minor_version_is_opened_and_its_new_fields_left_alone() {
    let t = TestName::new("minor");
    let creator = SharedBase::open(&t.cfg()).unwrap();
    assert_eq!(creator.info().layout_minor, LAYOUT_MINOR);
    // Make the page what a creator of minor LAYOUT_MINOR + 1 would have made:
    // its minor version word, and new fields after it.
    creator
        .minor_area()
        .layout_minor
        .store(LAYOUT_MINOR + 1, SeqCst);
    let words = creator.page_words_for_test();
    let first = MINOR_FIELDS_OFFSET / 8;
    let last = (SEGMENT_SIZE - 64) / 8 - 1;
    let after = (DISRUPTION_AREA_OFFSET + std::mem::size_of::<DisruptionArea>()) / 8;
    let newer: Vec<(usize, u64)> = [first, first + 1, after, after + 3, last]
        .into_iter()
        .map(|i| (i, 0xA5A5_0000_0000_0000 | i as u64))
        .collect();
    for &(i, v) in &newer {
        words[i].store(v, SeqCst);
    }

    let reader = SharedBase::open(&t.cfg()).unwrap();
    assert_eq!(reader.opened(), Opened::Attached);
    let info = reader.info();
    assert_eq!(
        (info.layout_version, info.layout_minor),
        (LAYOUT_VERSION, LAYOUT_MINOR + 1)
    );
    reader.validate().unwrap();
    let off = off_clock(|| reader.now_ns());
    assert!(off.abs() < 1_000_000, "{off} ns off");
    assert!(reader.next_unique().unwrap() < reader.next_unique().unwrap());
    reader.force_move();
    reader.set_base_info().unwrap();
    reader.validate().unwrap();
    assert_eq!(
        reader.info().tracking.repairs,
        0,
        "nothing was seen as damage"
    );
    for &(i, v) in &newer {
        assert_eq!(
            words[i].load(SeqCst),
            v,
            "word {i} of the newer minor's fields"
        );
    }
    assert_eq!(
        creator.minor_area().layout_minor.load(SeqCst),
        LAYOUT_MINOR + 1
    );
}

/// A creator that died before its page was ready leaves whatever it wrote in
/// the room for later minor versions; the process that replaces it clears it.
#[test]
fn a_new_page_holds_this_minor_version_and_nothing_after_it() {
    use std::mem::size_of;
    let t = TestName::new("minor0");
    let base = SharedBase::open(&t.cfg()).unwrap();
    let words = base.page_words_for_test();
    // Zero but for the statistics' check word (minor 2), which a new page's
    // zero statistics have, the bound area (minor 3), which the creator
    // fills with its first pairing, and the ordered read's choice (minor 4).
    let check = STATS_AREA_OFFSET / 8;
    let bound = BOUND_AREA_OFFSET / 8..(BOUND_AREA_OFFSET + size_of::<BoundArea>()) / 8;
    let ordered = ORDERED_AREA_OFFSET / 8;
    assert!(words[MINOR_FIELDS_OFFSET / 8..(SEGMENT_SIZE - 64) / 8]
        .iter()
        .enumerate()
        .map(|(i, w)| (MINOR_FIELDS_OFFSET / 8 + i, w))
        .all(|(i, w)| i == check || i == ordered || bound.contains(&i) || w.load(SeqCst) == 0));
    assert_eq!(words[bound.start].load(SeqCst), 2, "one publication, whole");
    assert_eq!(
        words[check].load(SeqCst),
        super::tie_stats::TieStats::default().check()
    );
    let minor = base.minor_area();
    assert_eq!(minor.layout_minor.load(SeqCst), LAYOUT_MINOR);
    let dirty = MinorArea {
        layout_minor: 9.into(),
        _reserved: 1.into(),
    };
    let later: Vec<AtomicU64> = (1..5).map(AtomicU64::new).collect();
    super::init::initialise_minor(&dirty, &later);
    assert_eq!(dirty.layout_minor.load(SeqCst), LAYOUT_MINOR);
    assert_eq!(dirty._reserved.load(SeqCst), 0);
    assert!(later.iter().all(|w| w.load(SeqCst) == 0));
}

/// The creator records how ordered reads are made (minor 4); every handle
/// attached later uses what the page says, not a measurement of its own; a page
/// of an older minor, or with a code this library does not know, gets the fence.
#[test]
fn the_ordered_read_is_the_creators_choice_and_old_pages_get_the_fence() {
    use source::OrderedRead;
    let t = TestName::new("ordered");
    let creator = SharedBase::open(&t.cfg()).unwrap();
    let area = ordered_area_of(&creator.page);
    let recorded = area.ordered_read.load(SeqCst);
    assert_eq!(creator.ordered_read().code(), recorded);
    if creator.source() == source::SourceId::Tsc && source::rdtscp_supported() {
        assert!(
            [OrderedRead::CODE_FENCE, OrderedRead::CODE_RDTSCP].contains(&recorded),
            "{recorded}"
        );
    } else {
        assert_eq!(recorded, OrderedRead::CODE_FENCE);
    }
    let rdtscp = OrderedRead::rdtscp().unwrap_or(OrderedRead::fence());
    let attach = || SharedBase::open(&t.cfg()).unwrap();
    let stamps_in_order = |b: &SharedBase| {
        let (a, o) = (b.now_ns_ordered(), b.now_ns_ordered());
        assert!(a <= o, "{a} {o}");
    };
    // `hrts info` (and Java's SegmentInfo) names the read this handle makes.
    let shown = |b: &SharedBase| {
        let fields = b.info().fields();
        let (_, v) = fields.iter().find(|(k, _)| *k == "ordered read").unwrap();
        v.clone()
    };
    // Whichever the creator chose, an attacher follows the page.
    for want in [OrderedRead::fence(), rdtscp] {
        area.ordered_read.store(want.code(), SeqCst);
        let b = attach();
        assert_eq!(b.ordered_read(), want);
        assert_eq!(shown(&b), want.name(b.source()));
        stamps_in_order(&b);
    }
    // Unknown codes (damage, a newer minor's) and missing ones are the fence.
    for code in [OrderedRead::CODE_NONE, 7, u32::MAX] {
        area.ordered_read.store(code, SeqCst);
        assert_eq!(attach().ordered_read(), OrderedRead::fence(), "{code}");
    }
    // A page of minor 3 has no such field: what its bytes hold is not read.
    area.ordered_read.store(OrderedRead::CODE_RDTSCP, SeqCst);
    creator.minor_area().layout_minor.store(3, SeqCst);
    let old = attach();
    assert_eq!(old.ordered_read(), OrderedRead::fence());
    assert_eq!(shown(&old), OrderedRead::fence().name(old.source()));
    stamps_in_order(&old);
    creator
        .minor_area()
        .layout_minor
        .store(LAYOUT_MINOR, SeqCst);
    assert_eq!(attach().ordered_read(), rdtscp);
}

/// Another major version is refused, by a message that names both versions.
#[test]
fn another_major_version_is_refused_naming_both_versions() {
    let t = TestName::new("major");
    let base = SharedBase::open(&t.cfg()).unwrap();
    let h = base.header();
    h.layout_version.store(LAYOUT_VERSION + 1, SeqCst);
    let e = expect_err(&t.cfg(), ErrorKind::Version, "a newer hrts");
    assert!(
        e.message()
            .contains(&format!("layout version {}", LAYOUT_VERSION + 1))
            && e.message()
                .contains(&format!("understands version {LAYOUT_VERSION}")),
        "{e}"
    );
    // A newer minor does not make another major acceptable.
    base.minor_area()
        .layout_minor
        .store(LAYOUT_MINOR + 1, SeqCst);
    expect_err(&t.cfg(), ErrorKind::Version, "a newer hrts");
    h.layout_version.store(LAYOUT_VERSION, SeqCst);
    assert!(SharedBase::open(&t.cfg()).is_ok());
}

#[cfg(not(windows))]
#[test]
fn group_mode_is_explicit_and_never_world_accessible() {
    let t = TestName::new("group");
    // SAFETY: getegid cannot fail.
    let gid = unsafe { libc::getegid() };
    let mut cfg = t.cfg();
    cfg.sharing = Sharing::Group(gid);
    let _base = SharedBase::open(&cfg).unwrap();
    let meta = std::fs::metadata(t.path()).unwrap();
    assert_eq!(meta.permissions().mode() & 0o777, 0o660);
    // A private opener refuses the group-readable segment rather than using it.
    expect_err(&t.cfg(), ErrorKind::Permission, "not 0600");
    assert!(SharedBase::open(&cfg).is_ok());
}

#[test]
fn bad_names_are_rejected_before_touching_the_system() {
    for name in ["", "/", "noslash", "/a/b"] {
        let cfg = Config::named(name);
        let err = SharedBase::open(&cfg).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidArgument, "{name:?}");
    }
}

#[cfg(not(windows))]
#[test]
fn a_frozen_segment_re_pairs_when_the_last_process_has_gone() {
    let t = TestName::new("frozen");
    let offset = Arc::new(AtomicU64::new(0));
    let mut cfg = t.cfg();
    cfg.mode = Mode::Frozen;
    let o = offset.clone();
    cfg.calendar = Arc::new(move || crate::os::realtime_ns() + o.load(SeqCst));
    // Each handle has its own open of the presence file, as a process would.
    let a = SharedBase::open(&cfg).unwrap();
    assert_eq!(a.mode(), Mode::Frozen);
    const HOUR: u64 = 3_600_000_000_000;
    offset.store(HOUR, SeqCst);
    let b = SharedBase::open(&cfg).unwrap();
    assert_eq!(b.opened(), Opened::Attached);
    assert_eq!(
        b.base_info().generation,
        1,
        "someone is attached: no re-pair"
    );
    assert!(off_clock(|| b.now_ns()).abs() < 10_000_000);
    drop(a);
    drop(b);
    let c = SharedBase::open(&cfg).unwrap();
    assert_eq!(c.opened(), Opened::Attached);
    assert_eq!(
        c.base_info().generation,
        2,
        "the next one after all left re-pairs"
    );
    let off = off_clock(|| c.now_ns() - HOUR);
    assert!(
        off.abs() < 10_000_000,
        "re-paired with the calendar: {off} ns from an hour ahead"
    );
    assert_eq!(c.info().calibrations, 1, "the calibration is kept");
    // A tracking segment never re-pairs that way.
    let t2 = TestName::new("tracking");
    let mut cfg2 = t2.cfg();
    cfg2.calendar = cfg.calendar.clone();
    drop(SharedBase::open(&cfg2).unwrap());
    let d = SharedBase::open(&cfg2).unwrap();
    assert_eq!(d.base_info().generation, 1);
    assert!(!presence::path(&t2.0).exists());
    drop(c);
    drop(t);
    assert!(
        !presence::path(&cfg.name).exists(),
        "unlink removes the presence file"
    );
}

/// Stores `v` into the active slot's field `f`, as damage would.
fn damage_active(base: &SharedBase, f: impl Fn(&Slot) -> &AtomicU64, v: impl Fn(u64) -> u64) {
    let h = base.header();
    let slot = &h.slots[seq_slot(h.seq.load(SeqCst))];
    let a = f(slot);
    a.store(v(a.load(SeqCst)), SeqCst);
}

#[test]
fn damaged_lines_are_refused_at_attach_and_repaired_by_the_next_tie_or_move() {
    type Field = fn(&Slot) -> &AtomicU64;
    type Damage = (&'static str, Field, fn(u64) -> u64);
    let damages: [Damage; 5] = [
        ("ns = 2^62", |s| &s.ns, |_| 1 << 62),
        ("mult x 2/3", |s| &s.mult, |m| m / 3 * 2),
        ("frac = 2^63", |s| &s.frac, |_| 1 << 63),
        (
            "counter - 1 s",
            |s| &s.counter,
            |c| c.wrapping_sub(1_000_000_000),
        ),
        ("checksum", |s| &s.check, |c| c ^ 1),
    ];
    for mode in [Mode::Tracking, Mode::Frozen] {
        for (what, field, value) in damages {
            let t = TestName::new("damage");
            let mut cfg = t.cfg();
            cfg.mode = mode;
            let attached = SharedBase::open(&cfg).unwrap();
            attached.validate().unwrap();
            damage_active(&attached, field, value);
            let e = attached.validate().unwrap_err();
            assert_eq!(e.kind(), ErrorKind::Corrupt, "{mode:?} {what}: {e}");
            let e = SharedBase::open(&cfg).unwrap_err();
            assert_eq!(
                e.kind(),
                ErrorKind::Corrupt,
                "{mode:?} {what}: fresh open: {e}"
            );
            // The attached process notices at its next move or tie and repairs.
            // (A frozen move may find nothing to move once the line is repaired.)
            attached.force_move();
            attached.validate().unwrap();
            assert_eq!(attached.info().tracking.repairs, 1, "{mode:?} {what}");
            let off = off_clock(|| attached.now_ns());
            assert!(
                off.abs() < 1_000_000,
                "{mode:?} {what}: {off} ns off after repair"
            );
            assert!(SharedBase::open(&cfg).is_ok(), "{mode:?} {what}");
        }
    }
}

#[test]
fn a_damaged_header_is_refused_at_attach_and_restored_by_the_next_tie() {
    let t = TestName::new("hdamage");
    let cfg = t.cfg();
    let attached = SharedBase::open(&cfg).unwrap();
    let h = attached.header();
    for (what, word) in [
        ("frequency", &h.freq_hz),
        ("created", &h.created_realtime_ns),
        ("step threshold", &h.step_ns),
    ] {
        word.fetch_add(1, SeqCst);
        let e = SharedBase::open(&cfg).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Corrupt, "{what}: {e}");
        assert!(attached.validate().is_err(), "{what}");
        assert!(attached.force_move());
        attached.validate().unwrap();
        assert!(SharedBase::open(&cfg).is_ok(), "{what}: restored");
    }
    h.reason[3].fetch_xor(1, SeqCst);
    assert_eq!(
        SharedBase::open(&cfg).unwrap_err().kind(),
        ErrorKind::Corrupt
    );
    assert_eq!(attached.info().tracking.repairs, 3);
}

#[test]
fn random_damage_never_gives_a_fresh_open_a_wrong_time() {
    for mode in [Mode::Tracking, Mode::Frozen] {
        let t = TestName::new("fuzz");
        let mut cfg = t.cfg();
        cfg.mode = mode;
        cfg.ready_timeout = std::time::Duration::from_millis(20);
        let keeper = SharedBase::open(&cfg).unwrap();
        let words = |b: &SharedBase| {
            // SAFETY: the mapping is SEGMENT_SIZE bytes, 8-aligned, and every
            // access goes through atomics.
            unsafe {
                std::slice::from_raw_parts(
                    b.page.as_ptr() as *const AtomicU64,
                    EXTENSION_OFFSET / 8,
                )
            }
        };
        let page = words(&keeper);
        let pristine: Vec<u64> = page.iter().map(|w| w.load(SeqCst)).collect();
        let mut rng = Rng(0x5eed_u64 + mode as u64);
        let (mut refused, mut answered) = (0, 0);
        let rounds = if cfg!(debug_assertions) { 1500 } else { 10_000 };
        for round in 0..rounds {
            let at = (rng.next() % page.len() as u64) as usize;
            let v = match rng.next() % 4 {
                0 => rng.next(),
                1 => pristine[at] ^ (1 << (rng.next() % 64)),
                2 => pristine[at]
                    .wrapping_add(rng.next() % 1000)
                    .wrapping_sub(500),
                _ => 0,
            };
            page[at].store(v, SeqCst);
            match SharedBase::open(&cfg) {
                Ok(b) => {
                    let off = off_clock(|| b.now_ns());
                    assert!(
                        off.abs() < 1_000_000,
                        "{mode:?} round {round}: word {at} := {v:#x} gave a time {off} ns off"
                    );
                    answered += 1;
                }
                Err(_) => refused += 1,
            }
            for (w, &p) in page.iter().zip(&pristine) {
                w.store(p, SeqCst);
            }
        }
        eprintln!("{mode:?}: {refused} damaged opens refused, {answered} answered within 1 ms");
        assert!(refused > rounds / 10);
    }
}

/// A simulated host for the real shared code: a counter and a calendar driven
/// by one simulated clock (ns), each read costing 10 ns of it.
#[derive(Default)]
struct SimClock {
    t: AtomicU64,
    hz: AtomicU64,
    c0: AtomicU64,
    r0: AtomicU64,
    /// Calendar rate error, ppb (as i64 bits), and its steps so far (ns, i64 bits).
    y_ppb: AtomicU64,
    stepped: AtomicU64,
}

impl SimClock {
    fn counter(&self) -> u64 {
        let t = self.t.fetch_add(10, SeqCst);
        self.c0
            .load(SeqCst)
            .wrapping_add((t as u128 * self.hz.load(SeqCst) as u128 / 1_000_000_000) as u64)
    }
    fn calendar_at(&self, t: u64) -> i128 {
        let t = t as i128;
        let y = self.y_ppb.load(SeqCst) as i64 as i128;
        self.r0.load(SeqCst) as i128
            + t
            + t * y / 1_000_000_000
            + self.stepped.load(SeqCst) as i64 as i128
    }
    fn calendar(&self) -> u64 {
        self.calendar_at(self.t.fetch_add(10, SeqCst)) as u64
    }
    fn error(&self, stamp: u64) -> i64 {
        (stamp as i128 - self.calendar_at(self.t.load(SeqCst))) as i64
    }
}

#[test]
fn the_shared_timeline_tracks_a_simulated_calendar_with_one_tie_per_interval() {
    // The simulated counter runs at the calibrated frequency from an origin far
    // behind the real one, so the first stamp re-bases onto the simulated host.
    // "Far behind" wraps below zero on a machine booted minutes ago; the other two
    // origins are a counter just reset and one that wraps past 2^64 mid-run.
    tracks_a_simulated_calendar("far behind", |base| {
        base.base()
            .counter
            .wrapping_sub(base.frequency().wrapping_mul(1000))
    });
    tracks_a_simulated_calendar("near zero", |_| 3);
    tracks_a_simulated_calendar("wrapping past 2^64", |base| {
        0u64.wrapping_sub(base.frequency().wrapping_mul(60))
    });
}

fn tracks_a_simulated_calendar(origin: &str, c0: impl Fn(&SharedBase) -> u64) {
    eprintln!("simulated counter origin: {origin}");
    let t = TestName::new("simtrack");
    let sim = Arc::new(SimClock::default());
    sim.r0
        .store(crate::os::realtime_ns() + 2_000_000_000, SeqCst);
    sim.y_ppb.store(100_000, SeqCst); // the calendar runs 100 ppm fast
    let mut cfg = t.cfg();
    let s = sim.clone();
    cfg.calendar = Arc::new(move || s.calendar());
    let base = SharedBase::open(&cfg).unwrap();
    sim.hz.store(base.frequency(), SeqCst);
    sim.c0.store(c0(&base), SeqCst);
    // Past the old line's committed floor (its base plus 1.25 intervals), so the
    // re-base lands on the simulated calendar rather than on the floor.
    sim.t.store(5_000_000_000, SeqCst);
    let ties0 = base.info().tracking.ties;
    let mut last = 0;
    let mut errs = Vec::new();
    let mut run = |secs: u64, errs: &mut Vec<u64>, keep_after: u64| {
        for i in 0..secs * 1000 {
            sim.t.fetch_add(1_000_000, SeqCst);
            let v = base.stamp_with(|_| sim.counter());
            assert!(v >= last, "backward stamp at {i}: {v} < {last}");
            last = v;
            if i >= keep_after * 1000 {
                errs.push(sim.error(v).unsigned_abs());
            }
        }
    };
    run(120, &mut errs, 30);
    let ties = base.info().tracking.ties - ties0;
    assert!(
        (119..=122).contains(&ties),
        "{ties} ties in 120 s at a 1 s interval"
    );
    errs.sort_unstable();
    let (p99, max) = (errs[errs.len() * 99 / 100], *errs.last().unwrap());
    eprintln!("shared timeline at +100 ppm: p99 {p99} ns, max {max} ns, {ties} ties");
    assert!(p99 <= 1000 && max <= 5000, "p99 {p99} max {max}");
    let st = base.tracking_state();
    assert!((st.frequency_ppb - 100_000).abs() < 200, "{st:?}");

    // Ten idle minutes, then a step of the calendar forward and one backward.
    sim.t.fetch_add(600_000_000_000, SeqCst);
    let mut errs = Vec::new();
    run(5, &mut errs, 1);
    assert!(
        errs.iter().all(|&e| e < 5000),
        "after idling: {:?}",
        errs.iter().max()
    );
    let gen = base.base_info().generation;
    sim.stepped.store(1_000_000_000, SeqCst);
    run(3, &mut Vec::new(), 0);
    assert_eq!(base.base_info().generation, gen + 1);
    // The step closes the measured offset: the calendar's 1 s plus the line's
    // error at that tie (well under a millisecond either way).
    let step = base.tracking_state().last_step_ns;
    assert!((step - 1_000_000_000).abs() < 1_000_000, "step {step} ns");
    sim.stepped.store(0, SeqCst);
    run(10, &mut Vec::new(), 0);
    let st = base.tracking_state();
    assert_eq!(
        base.base_info().generation,
        gen + 1,
        "never a step backward"
    );
    assert!(
        st.pending_ns < -990_000_000 && st.slew_ppb < -499_000,
        "{st:?}"
    );
}

/// Minor 1: a stamp checks the four words it reads. A damaged word of the
/// active line, in either mode, never reaches an attached reader's stamp, with
/// the role free (the stamp repairs the line) or held by another live process
/// (the stamp comes from elsewhere); a line without its quick word (as a
/// library of minor 0 writes it) is used and then rewritten with it.
#[test]
fn an_attached_reader_never_stamps_from_a_damaged_line() {
    for mode in [Mode::Tracking, Mode::Frozen] {
        for held in [false, true] {
            let t = TestName::new("quick");
            let mut cfg = t.cfg();
            cfg.mode = mode;
            let reader = SharedBase::open(&cfg).unwrap();
            let holder = SharedBase::open(&cfg).unwrap();
            let h = reader.header();
            for (i, word) in ["counter", "ns", "frac", "mult"].into_iter().enumerate() {
                let active = seq_slot(h.seq.load(SeqCst));
                let slot = &h.slots[active];
                let target = [&slot.counter, &slot.ns, &slot.frac, &slot.mult][i];
                if held {
                    holder.hold_writer_role_for_test().unwrap();
                }
                // A millisecond's worth of slope, or half a second of time.
                let delta = if word == "mult" { 1 << 22 } else { 1 << 29 };
                target.fetch_add(delta, SeqCst);
                let off = off_clock(|| reader.now_ns());
                assert!(
                    off.abs() < 1_000_000,
                    "{mode:?}, role held {held}: {word} damaged gave a stamp {off} ns off"
                );
                if held {
                    assert!(holder.release_writer_role_for_test());
                }
                // Repaired by the next stamp that can take the role.
                let _ = reader.now_ns();
                reader.validate().unwrap_or_else(|e| {
                    panic!("{mode:?}, role held {held}: {word} damage not repaired: {e}")
                });
            }
            // Lines without the quick word, as a writer of minor 0 leaves them.
            for slot in &h.slots {
                slot.quick.store(0, SeqCst);
            }
            let off = off_clock(|| reader.now_ns());
            assert!(
                off.abs() < 1_000_000,
                "{mode:?}: a minor-0 line gave a stamp {off} ns off"
            );
            let active = &h.slots[seq_slot(h.seq.load(SeqCst))];
            assert_ne!(
                active.quick.load(SeqCst),
                0,
                "{mode:?}: the line was not rewritten"
            );
            reader.validate().unwrap();
        }
    }
}
