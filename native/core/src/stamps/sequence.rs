//! Sequence numbers that never repeat: not between the processes of a segment,
//! not across crashes, not across the loss of the segment (a reboot, or
//! `hrts unlink` while processes still use it), and not between segments that
//! name the same sequence file.
//!
//! # The file reserves, the segment hands out
//!
//! The sequence file ([`file`](mod@file)) holds the first number nobody has reserved. A
//! segment hands out numbers only from a *block* `[start, limit)` reserved for
//! it in the file: under the file's `flock`, one process reads the file's value
//! `f`, takes `start = max(f, the segment's own limit)`, writes `start +
//! interval` to the file durably (write, fsync, rename, fsync of the directory),
//! and only then publishes the block in the segment. Blocks reserved in one
//! file never overlap, whichever segment reserved them, so
//!
//! - a segment that was unlinked keeps handing out its block, then reserves its
//!   next one from the file, above anything the new segment reserved meanwhile
//!   (and the other way round);
//! - two segments naming one file share its numbering;
//! - after a reboot, the file is above every number ever handed out.
//!
//! Numbers may be skipped (what is left of a block when its segment goes away),
//! never repeated. The file is written once per block (`HRTS_SEQ_INTERVAL`
//! numbers, 1000 by default). Every process of a segment must use the same
//! file: the segment records the file's identity (directory device and inode,
//! file name) and a process that would reserve from another file gets an error
//! instead. A damaged file is an error, never a silent restart at 0. Where the
//! file may live, and why, is in [`dir`].
//!
//! # Handing out: compare-and-swap, not fetch-add
//!
//! A `fetch_add` on the counter followed by a check against the limit can hand
//! out a number nobody reserved: a process takes `n` from an exhausted block
//! (`n >= limit`), another process publishes the next block `[s, s + N)` with
//! `s > n` (the file had moved on: another segment reserved the numbers in
//! between), and the first process now reads the new limit, finds `n < s + N`
//! and returns `n`, a number of the other segment's block.
//!
//! Here a number `n` is handed out only by a successful `compare_exchange` of
//! the counter from `n` to `n + 1`, after reading a limit `L > n` (acquire)
//! and a block record whose copies agree, with `start <= n`. A block is
//! published, under the lock, by storing `limit = 0`, `next = s`, the start and
//! the complement copies, and last `limit = L` (release). So:
//!
//! 1. Having read `L`, the exchange happens after that publication's `next = s`,
//!    and, being a read-modify-write, sees `s` or a later value of the counter.
//! 2. From `s` the counter only moves by exchanges of `+1` below `L`, or by a
//!    later publication, which sets it to at least `L`: `L` was in the file
//!    before its block was published, the file only grows, and a new block
//!    starts at or above the file's value. The counter never comes back below
//!    `L`.
//! 3. So the exchange finds the counter at `n < L` only when `s <= n < L`: `n`
//!    lies in the published block, and as the counter passes every value once,
//!    nobody else got `n`.
//!
//! While a block is being published its limit is 0 and no exchange validates.
//! A process killed holding the lock releases it (the kernel drops the
//! `flock`); killed after writing the file but before publishing, it leaves a
//! gap.
//!
//! # Damage
//!
//! The block's start and limit are kept with complement copies. A counter
//! outside its block (say set to 0 by something writing the segment), or a
//! record whose copies disagree, stops the fast path; under the lock a new
//! block is then reserved from the file, which is the authority: it starts at
//! the file's value, or above the segment's limit if that limit's copy still
//! agrees (which covers a file deleted while the segment lives). A process
//! killed while publishing leaves such a record; it is repaired the same way.
//!
//! The counter word itself checks itself: it holds the offset of the next
//! number in its block (bits 63..32) and a 32-bit check of the block's start
//! and that offset (bits 31..0), [`counter_word`]. For a fixed start the check
//! is a bijection of the offset, so any change of one of the word's bits (a
//! flipped bit, a stray write to either half) makes the word disagree with
//! itself, and the block is abandoned: a damaged counter skips numbers, never
//! repeats one. A block holds at most 2³² − 1 numbers. A write that happens to
//! store another offset together with its right check (one in 2³² for a random
//! value) is not detected; processes allowed to write the segment (its owner,
//! or its group with `HRTS_GROUP`) can do that on purpose, and they can also
//! move everyone's time base.

#[cfg(not(windows))]
mod dir;
#[cfg(windows)]
#[path = "sequence/dir_windows.rs"]
mod dir;
mod file;

use crate::error::{Error, ErrorKind, Result};
use crate::segment::layout::Extension;
use crate::segment::SharedBase;
use file::SeqFile;
use std::path::Path;
use std::sync::atomic::Ordering::{AcqRel, Acquire, Relaxed, Release};

/// The counter word of offset `offset` in the block starting at `start`:
/// `offset << 32 | check`, where the check is a bijection of the offset's low
/// 32 bits for a fixed start.
pub(crate) fn counter_word(start: u64, offset: u32) -> u64 {
    let mut h = start ^ 0x7365_7163_6865_636b;
    h = (h ^ (h >> 33)).wrapping_mul(0xff51_afd7_ed55_8ccd);
    h ^= h >> 33;
    let check = (h as u32) ^ offset.wrapping_mul(0x9e37_79b1).rotate_left(16);
    (offset as u64) << 32 | check as u64
}

/// The offset a counter word holds, if the word agrees with itself for a
/// block starting at `start`.
pub(crate) fn counter_offset(start: u64, word: u64) -> Option<u32> {
    let offset = (word >> 32) as u32;
    (counter_word(start, offset) == word).then_some(offset)
}

/// The most numbers a block holds (its offsets fit the counter word).
const MAX_BLOCK: u64 = u32::MAX as u64;

/// One reading of the segment's block record.
struct Block {
    /// The counter word as read.
    word: u64,
    /// The number it names; `None` if the word disagrees with itself.
    next: Option<u64>,
    start: u64,
    limit: u64,
    start_intact: bool,
    limit_intact: bool,
}

impl Block {
    fn load(ext: &Extension) -> Block {
        let word = ext.seq_next.load(Acquire);
        // Acquire: seeing a published limit makes its start and copies visible.
        let limit = ext.seq_limit.load(Acquire);
        let start = ext.seq_start.load(Relaxed);
        Block {
            word,
            next: counter_offset(start, word).and_then(|o| start.checked_add(o as u64)),
            start,
            limit,
            start_intact: ext.seq_start_check.load(Relaxed) == !start,
            limit_intact: ext.seq_limit_check.load(Relaxed) == !limit,
        }
    }

    /// The number that may be handed out next, if any.
    fn room(&self) -> Option<u64> {
        let next = self.next?;
        (self.start_intact && self.limit_intact && next < self.limit).then_some(next)
    }

    fn has_room(&self) -> bool {
        self.room().is_some()
    }

    /// The block's limit when its record can be believed, else 0.
    fn trusted_limit(&self) -> u64 {
        if self.limit_intact {
            self.limit
        } else {
            0
        }
    }
}

/// Hands out the next number of the published block, if it has one left.
fn take(ext: &Extension) -> Option<u64> {
    loop {
        let b = Block::load(ext);
        let next = b.room()?;
        // next < limit <= start + MAX_BLOCK: the offset fits.
        let after = counter_word(b.start, (next - b.start + 1) as u32);
        if ext
            .seq_next
            .compare_exchange_weak(b.word, after, AcqRel, Relaxed)
            .is_ok()
        {
            return Some(next);
        }
    }
}

/// Makes `[start, limit)` the segment's block; the caller holds the file's lock
/// and has written `limit` to the file.
fn publish(ext: &Extension, start: u64, limit: u64) {
    ext.seq_limit.store(0, Release);
    ext.seq_next.store(counter_word(start, 0), Release);
    ext.seq_start.store(start, Release);
    ext.seq_start_check.store(!start, Release);
    ext.seq_limit_check.store(!limit, Release);
    ext.seq_limit.store(limit, Release);
}

impl SharedBase {
    /// The next sequence number, shared by every process of the segment, never
    /// repeated (see the module docs).
    pub fn next_sequence(&self) -> Result<u64> {
        if self.user.is_some() {
            // A host page reader: the numbers are the per-user segment's.
            return self.state_segment()?.next_sequence();
        }
        let ext = self.extension();
        loop {
            if let Some(n) = take(ext) {
                return Ok(n);
            }
            self.reserve_block()?;
        }
    }

    /// The sequence file of this segment.
    pub fn seq_file(&self) -> &Path {
        &self.seq_file
    }

    /// Reserves a new block in the file and publishes it, unless another process
    /// did while this one waited for the lock.
    fn reserve_block(&self) -> Result<()> {
        let file = SeqFile::open(&self.seq_file)?;
        let _locked = file.lock()?;
        let ext = self.extension();
        let block = Block::load(ext);
        if block.has_room() {
            return Ok(());
        }
        let id = file.identity();
        let recorded = ext.seq_file_id.load(Acquire);
        if ext.seq_file_id_check.load(Acquire) == !recorded && recorded != id {
            return Err(Error::new(
                ErrorKind::InvalidArgument,
                format!(
                    "segment {} takes its sequence numbers from another file than {}; every \
                     process of a segment must use the same sequence file, or numbers could \
                     repeat after a reboot: give them all the same HRTS_SEQ_FILE (it applies \
                     to the segment HRTS_SEGMENT names, else /hrts-<uid>; any other segment \
                     uses each user's <state dir>/hrts/<segment>.seq), or, if that file's \
                     directory was moved or recreated, remove the segment with `hrts unlink`",
                    self.name,
                    file.path().display()
                ),
            ));
        }
        let on_file = file.read()?.unwrap_or(0);
        let start = on_file.max(block.trusted_limit());
        let limit = start
            .checked_add(self.seq_interval.min(MAX_BLOCK))
            .ok_or_else(|| {
                Error::new(
                    ErrorKind::Persist,
                    format!(
                        "sequence file {} is at {start}: no room left for {} more numbers",
                        file.path().display(),
                        self.seq_interval
                    ),
                )
            })?;
        file.write(limit)?;
        publish(ext, start, limit);
        ext.seq_file_id.store(id, Release);
        ext.seq_file_id_check.store(!id, Release);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::TestName;
    use std::sync::Arc;

    fn on_file(t: &TestName) -> Option<u64> {
        SeqFile::open(&t.seq_file()).unwrap().read().unwrap()
    }

    /// `per_thread` numbers from a thread on each of `bases`, sorted.
    fn from_threads(bases: &[Arc<SharedBase>], per_thread: usize) -> Vec<u64> {
        let threads: Vec<_> = bases
            .iter()
            .cloned()
            .map(|base| {
                std::thread::spawn(move || {
                    (0..per_thread)
                        .map(|_| base.next_sequence().unwrap())
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        let mut all: Vec<u64> = threads
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect();
        all.sort_unstable();
        all
    }

    #[test]
    fn numbers_are_shared_persisted_and_resume_above_after_the_segment_is_gone() {
        let t = TestName::new("seq");
        let mut cfg = t.cfg();
        cfg.seq_interval = 100;
        let a = Arc::new(SharedBase::open(&cfg).unwrap());
        let b = Arc::new(SharedBase::open(&cfg).unwrap());
        let all = from_threads(&[a.clone(), b.clone()], 1000);
        assert_eq!(
            all,
            (0..2000).collect::<Vec<_>>(),
            "one shared counter, no gaps, no repeats"
        );
        assert_eq!(on_file(&t), Some(2000), "the last block ends at 2000");

        drop((a, b));
        SharedBase::unlink(&t.0).unwrap(); // the reboot
        let c = SharedBase::open(&cfg).unwrap();
        assert_eq!(c.next_sequence().unwrap(), 2000);
        assert_eq!(on_file(&t), Some(2100));
    }

    #[test]
    fn a_damaged_file_stops_numbering_instead_of_restarting_at_zero() {
        let t = TestName::new("seqdamaged");
        std::fs::create_dir_all(t.seq_file().parent().unwrap()).unwrap();
        std::fs::write(t.seq_file(), "hrts-sequence 2\nnext 5\n").unwrap();
        let base = SharedBase::open(&t.cfg()).unwrap();
        let err = base.next_sequence().unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Persist);
        assert!(err.message().contains("damaged"), "{err}");
    }

    #[test]
    fn a_damaged_counter_or_block_record_never_reissues_a_number() {
        let t = TestName::new("seqcounter");
        let mut cfg = t.cfg();
        cfg.seq_interval = 100;
        let base = SharedBase::open(&cfg).unwrap();
        let ext = base.extension();
        let mut issued = std::collections::HashSet::new();
        let take = |issued: &mut std::collections::HashSet<u64>, n: usize| {
            for _ in 0..n {
                let v = base.next_sequence().unwrap();
                assert!(issued.insert(v), "{v} issued twice");
            }
        };
        take(&mut issued, 150); // 0..150; the block is [100, 200)
        type Damage = Box<dyn Fn(&Extension)>;
        let damage: Vec<(&str, Damage)> = vec![
            ("counter zeroed", Box::new(|e| e.seq_next.store(0, Relaxed))),
            (
                "counter below its block",
                Box::new(|e| e.seq_next.store(e.seq_start.load(Relaxed) - 1, Relaxed)),
            ),
            (
                "one bit of the counter flipped",
                Box::new(|e| {
                    let w = e.seq_next.load(Relaxed);
                    e.seq_next.store(w ^ (1 << 33), Relaxed)
                }),
            ),
            (
                "start's copy",
                Box::new(|e| e.seq_start_check.store(1, Relaxed)),
            ),
            (
                "start lowered, its copy kept",
                Box::new(|e| e.seq_start.store(0, Relaxed)),
            ),
            (
                "limit raised without its copy",
                Box::new(|e| e.seq_limit.store(u64::MAX, Relaxed)),
            ),
            (
                "everything zeroed",
                Box::new(|e| {
                    for w in [
                        &*e.seq_next,
                        &e.seq_limit,
                        &e.seq_start,
                        &e.seq_start_check,
                        &e.seq_limit_check,
                    ] {
                        w.store(0, Relaxed)
                    }
                }),
            ),
        ];
        for (what, hurt) in &damage {
            let file_before = on_file(&t).unwrap();
            hurt(ext);
            let n = base.next_sequence().unwrap();
            assert!(
                n >= file_before,
                "{what}: {n} comes from a fresh block at the file's {file_before}"
            );
            assert!(issued.insert(n), "{what}: {n} issued twice");
            take(&mut issued, 120);
        }
        // The file deleted and the counter zeroed: the intact limit still holds.
        let limit = ext.seq_limit.load(Relaxed);
        std::fs::remove_file(t.seq_file()).unwrap();
        ext.seq_next.store(0, Relaxed);
        assert_eq!(base.next_sequence().unwrap(), limit);
    }

    #[test]
    fn segments_sharing_a_file_and_an_unlinked_segment_never_share_a_number() {
        let t = TestName::new("seqshare");
        let other = TestName::new("seqshare2");
        let mut cfg = t.cfg();
        cfg.seq_interval = 70;
        let mut other_cfg = other.cfg();
        other_cfg.seq_file = cfg.seq_file.clone();
        other_cfg.seq_interval = 50;
        let old = SharedBase::open(&cfg).unwrap();
        old.next_sequence().unwrap();
        SharedBase::unlink(&t.0).unwrap();
        let bases = [
            Arc::new(old),
            Arc::new(SharedBase::open(&cfg).unwrap()),
            Arc::new(SharedBase::open(&other_cfg).unwrap()),
        ];
        let two_each: Vec<_> = bases.iter().flat_map(|b| [b.clone(), b.clone()]).collect();
        let mut all = from_threads(&two_each, 2000);
        let n = all.len();
        all.dedup();
        assert_eq!(all.len(), n, "{} numbers issued twice", n - all.len());
    }

    #[test]
    fn a_process_with_another_file_is_refused_when_it_would_reserve() {
        let t = TestName::new("seqotherfile");
        let mut cfg = t.cfg();
        cfg.seq_interval = 10;
        let a = SharedBase::open(&cfg).unwrap();
        let mut elsewhere = cfg.clone();
        let other_file = t.seq_file().with_file_name("elsewhere.seq");
        elsewhere.seq_file = Some(other_file.clone());
        let b = SharedBase::open(&elsewhere).unwrap();
        assert_eq!(a.next_sequence().unwrap(), 0);
        // The block a reserved is the segment's, whoever hands it out.
        for want in 1..10 {
            assert_eq!(b.next_sequence().unwrap(), want);
        }
        let err = b.next_sequence().unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidArgument);
        assert!(err.message().contains("another file"), "{err}");
        assert!(err.message().contains("elsewhere.seq"), "{err}");
        assert_eq!(a.next_sequence().unwrap(), 10);
        let _ = std::fs::remove_file(&other_file);
        let _ = std::fs::remove_file(other_file.with_extension("lock"));
    }

    #[test]
    fn a_counter_word_detects_every_single_bit_flip() {
        for start in [0u64, 1, 100, u64::MAX - 5, 0x1234_5678_9abc_def0] {
            for offset in [0u32, 1, 2, 999, u32::MAX - 1] {
                let w = counter_word(start, offset);
                assert_eq!(counter_offset(start, w), Some(offset));
                for bit in 0..64 {
                    assert_eq!(counter_offset(start, w ^ (1 << bit)), None, "bit {bit}");
                }
            }
        }
    }

    /// The run: 10,000 single-bit flips of the sequence words while
    /// four threads of two attachments draw numbers: no number twice.
    #[test]
    fn ten_thousand_bit_flips_of_the_sequence_state_repeat_no_number() {
        use std::sync::atomic::AtomicBool;
        let t = TestName::new("seqflips");
        let mut cfg = t.cfg();
        cfg.seq_interval = 1000;
        let bases = [
            Arc::new(SharedBase::open(&cfg).unwrap()),
            Arc::new(SharedBase::open(&cfg).unwrap()),
        ];
        let stop = Arc::new(AtomicBool::new(false));
        let drawn = Arc::new(std::sync::atomic::AtomicU64::new(0));
        let drawers: Vec<_> = (0..4)
            .map(|i| {
                let base = bases[i % 2].clone();
                let (stop, drawn) = (stop.clone(), drawn.clone());
                std::thread::spawn(move || {
                    let mut got = Vec::new();
                    while !stop.load(Relaxed) {
                        got.push(base.next_sequence().unwrap());
                        drawn.fetch_add(1, Relaxed);
                    }
                    got
                })
            })
            .collect();
        let ext = bases[0].extension();
        let words = [
            &*ext.seq_next,
            &ext.seq_limit,
            &ext.seq_start,
            &ext.seq_start_check,
            &ext.seq_limit_check,
        ];
        let mut rng = 0x0123_4567_89ab_cdefu64;
        for _ in 0..10_000 {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            // Most flips hit the counter, the word that changes all the time.
            let w = if rng.is_multiple_of(4) {
                words[(rng >> 8) as usize % words.len()]
            } else {
                words[0]
            };
            w.fetch_xor(1 << ((rng >> 16) % 64), Relaxed);
            // Every tenth flip is followed by a draw, however the threads are
            // scheduled. The flipper never yields between flips: beside four
            // spinning drawers each yield gave a drawer a whole time slice, and
            // 10,000 of them took 100-360 s on a loaded 2-core machine.
            if !rng.is_multiple_of(10) {
                continue;
            }
            let seen = drawn.load(Relaxed);
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
            let mut spins = 0u32;
            while drawn.load(Relaxed) == seen {
                assert!(
                    std::time::Instant::now() < deadline,
                    "no number drawn for 10 s after a flip"
                );
                // A drawer on the other core draws within microseconds; yield
                // only when none is running.
                spins += 1;
                if spins < 10_000 {
                    std::hint::spin_loop();
                } else {
                    std::thread::yield_now();
                }
            }
        }
        stop.store(true, Relaxed);
        let mut all: Vec<u64> = drawers
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect();
        let n = all.len();
        all.sort_unstable();
        all.dedup();
        assert_eq!(
            all.len(),
            n,
            "{} numbers issued twice of {n}",
            n - all.len()
        );
        assert!(n >= 500, "the threads drew {n} numbers");
    }
}
