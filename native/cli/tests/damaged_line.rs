//! A damaged line while another process holds the writer role (issue 35, item
//! 4): this process cannot repair it, and none of its stamps may go backward.
//!
//! `hrts debug hold-writer` (a real process) takes the role and keeps it; this
//! process damages the active slot in 10,000 rounds (one of the four words a
//! stamp reads: a random value, a bit flip or a small change; two of them random
//! values; or
//! the whole slot with its check words), stamps, puts the words back and stamps
//! again. Its calendar clock reads 20 ms behind the system clock, as after the
//! clock was stepped back while the line slews toward it: a damaged line that
//! were answered from the calendar would take the stamps 20 ms back.
#![cfg(feature = "testing")]

use hrts_core::{Config, ErrorKind, SharedBase};
use hrts_test_support::Rng;
use std::sync::atomic::Ordering::SeqCst;
use std::sync::Arc;

mod common;
use common::Segment;

const ROUNDS: u64 = 10_000;
const STAMPS_DAMAGED: u64 = 3;
const BEHIND_NS: u64 = 20_000_000;

#[test]
fn a_damaged_line_beside_a_holder_never_takes_this_process_backward() {
    let seg = Segment::new();
    assert!(seg.command().arg("now").status().unwrap().success());
    let mut holder = common::spawn_writer_holder(&seg);
    let mut cfg = Config::named(&seg.0);
    cfg.calendar = Arc::new(|| hrts_core::clock::realtime_ns() - BEHIND_NS);
    let base = SharedBase::open(&cfg).unwrap();
    assert_eq!(
        base.writer_role_for_test().0,
        holder.id(),
        "the other process holds the role"
    );
    let mut rng = Rng(0xda4a9e);
    let (mut last, mut backward, mut off) = (base.now_ns(), 0u64, 0u64);
    let mut stamp = |base: &SharedBase, ordered: bool| {
        let before = hrts_core::clock::realtime_ns();
        let ns = if ordered {
            base.now_ns_ordered()
        } else {
            base.now_ns()
        };
        let after = hrts_core::clock::realtime_ns();
        if ns < last {
            backward += 1;
        }
        // The line follows the system clock: the calendar's answer would not.
        if ns + 1_000_000 < before || ns > after + 1_000_000 {
            off += 1;
        }
        last = ns;
    };
    let mut kinds = [0u64; 5];
    for round in 0..ROUNDS {
        let words = base.active_line_words_for_test();
        let saved: Vec<u64> = words.iter().map(|w| w.load(SeqCst)).collect();
        let kind = (round % 5) as usize;
        kinds[kind] += 1;
        let one = (rng.next() % 4) as usize;
        match kind {
            0 => words[one].store(saved[one] ^ (rng.next() | 1), SeqCst),
            1 => {
                words[one].fetch_xor(1 << (rng.next() % 64), SeqCst);
            }
            2 => {
                let delta = rng.next() % 2000 + 1;
                words[one].store(saved[one].wrapping_sub(delta), SeqCst);
            }
            3 => {
                let other = (one + 1 + (rng.next() % 3) as usize) % 4;
                words[one].store(rng.next(), SeqCst);
                words[other].store(rng.next(), SeqCst);
            }
            _ => {
                for w in &words {
                    w.store(rng.next(), SeqCst);
                }
            }
        }
        for i in 0..STAMPS_DAMAGED {
            stamp(&base, i == 1);
        }
        for (w, v) in words.iter().zip(&saved) {
            w.store(*v, SeqCst);
        }
        stamp(&base, false);
    }
    let _ = holder.kill();
    let _ = holder.wait();
    eprintln!(
        "{ROUNDS} rounds ({kinds:?} of the five damages): {backward} backward, {off} off the \
         clock by over 1 ms; {}",
        base.line_damage()
            .map_or("no damage reported".into(), |e| e.to_string())
    );
    assert_eq!(backward, 0, "stamps went backward");
    assert_eq!(off, 0, "stamps were answered off the line");
    assert_eq!(
        base.damaged_line_stamps(),
        ROUNDS * STAMPS_DAMAGED,
        "every stamp from a damaged line is counted"
    );
    let report = base.line_damage().expect("the damage is reported");
    assert_eq!(report.kind(), ErrorKind::Corrupt);
    // Rounds of one damaged word are answered by correcting it, the others
    // from this process's copy of the line, read whole at attach.
    let corrected = (kinds[0] + kinds[1] + kinds[2]) * STAMPS_DAMAGED;
    let copied = (kinds[3] + kinds[4]) * STAMPS_DAMAGED;
    assert!(
        report.message().contains(&format!(
            "{corrected} answered from the line with its damaged word corrected, {copied} from \
             this process's copy of the line, 0 from"
        )),
        "{report}"
    );
}
