//! A fresh open that decides a damaged segment's page is gone removes it
//! (issue 35, item 5): 1,000 opens of a segment whose page lost its tag, alone
//! or with the name's record also damaged, leave no System V page behind.
//!
//! This test binary is a process of its own and every page it makes is created
//! by this process, so the pages counted are the System V segments whose
//! creator pid (`/proc/sysvipc/shm`) is this process's, whoever else makes
//! pages meanwhile.
#![cfg(feature = "testing")]

use hrts_core::storage::shm::REC_STATE;
use hrts_core::{Config, Opened, SharedBase};
use hrts_test_support::Rng;
use std::os::unix::fs::FileExt;
use std::sync::atomic::Ordering::SeqCst;
use std::time::Duration;

/// The page's storage tag: its last 64 bytes (see the core's `shm::TAG_LEN`).
const TAG_WORD: usize = (4096 - 64) / 8;
/// The record's page id (see the core's `shm::REC_SHMID`).
const REC_SHMID: u64 = 32;
const ROUNDS: u64 = 1_000;

/// System V pages this process created that still exist.
fn my_pages() -> usize {
    let me = std::process::id().to_string();
    std::fs::read_to_string("/proc/sysvipc/shm")
        .expect("/proc/sysvipc/shm")
        .lines()
        .skip(1)
        .filter(|l| l.split_whitespace().nth(4) == Some(me.as_str()))
        .count()
}

/// The page id the name's record holds.
fn recorded_page(name: &std::fs::File) -> i32 {
    let mut b = [0u8; 4];
    name.read_exact_at(&mut b, REC_SHMID).unwrap();
    i32::from_ne_bytes(b)
}

#[test]
fn opens_that_find_a_damaged_page_gone_leave_no_page_behind() {
    let name = format!("/hrts-gone-{}", std::process::id());
    let _ = SharedBase::unlink(&name);
    let mut cfg = Config::named(&name);
    // Every round makes a page: a short calibration and no evaluation (what
    // is tested is the old page's fate, not the calibration).
    cfg.calibration.budget = Duration::from_millis(1);
    cfg.evaluate_reliability = false;
    cfg.ready_timeout = Duration::from_millis(1);
    let before = my_pages();
    let mut rng = Rng(0x60e5);
    let mut kinds = [0u64; 6];
    for round in 0..ROUNDS {
        let base = SharedBase::open(&cfg).unwrap();
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(format!("/dev/shm{name}"))
            .unwrap();
        let old = recorded_page(&file);
        let tag = &base.page_words_for_test()[TAG_WORD];
        let kind = (round % 6) as usize;
        kinds[kind] += 1;
        let bit = 1u64 << (round / 6 % 64);
        match kind {
            // The tag alone: a random value, one bit, a small change.
            0 => tag.store(rng.next(), SeqCst),
            1 => {
                tag.fetch_xor(bit, SeqCst);
            }
            2 => {
                tag.fetch_add(rng.next() % 1000 + 1, SeqCst);
            }
            // With the record naming no page: only the key finds it.
            3 => {
                tag.store(rng.next(), SeqCst);
                file.write_all_at(&i32::MAX.to_ne_bytes(), REC_SHMID)
                    .unwrap();
            }
            // With the record saying the page was never finished.
            4 => {
                tag.fetch_xor(bit, SeqCst);
                file.write_all_at(&(1u64 << 32).to_ne_bytes(), REC_STATE as u64)
                    .unwrap();
            }
            // With the name emptied (the record lost).
            _ => {
                tag.fetch_xor(1 << (round % 32), SeqCst);
                file.set_len(0).unwrap();
            }
        }
        drop(base);
        let fresh = SharedBase::open(&cfg).unwrap_or_else(|e| panic!("round {round}: {e}"));
        assert_eq!(
            fresh.opened(),
            Opened::TookOver,
            "round {round}, damage {kind}"
        );
        assert_ne!(recorded_page(&file), old, "round {round}: a new page");
        let off = fresh.now_ns() as i64 - hrts_core::clock::realtime_ns() as i64;
        assert!(off.abs() < 1_000_000, "round {round}: {off} ns off");
    }
    SharedBase::unlink(&name).unwrap();
    let after = my_pages();
    eprintln!(
        "{ROUNDS} opens ({kinds:?} of the six damages): {before} pages before, {after} after"
    );
    assert_eq!(after, before, "pages left behind");
}
