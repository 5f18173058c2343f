//! Process slots: registering a publishing instance, telling live from gone,
//! and reclaiming what gone processes held once the grace period is over.

use super::layout::{
    self, check, owner_of, process as pw, slot_generation, slot_phase, slot_state,
    INSTANCE_ID_BYTES, PHASE_CLAIMED, PHASE_FREE, PHASE_LIVE, PHASE_RECLAIMING, PROCESS_SLOTS,
    PROGRAM_BYTES,
};
use super::segment::StatsSegment;
use hrts_core::{Error, ErrorKind, Result};
use std::sync::atomic::fence;
use std::sync::atomic::Ordering::{AcqRel, Acquire, Relaxed, Release};

/// A registered slot: its index and the generation that claimed it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SlotId {
    pub slot: usize,
    pub generation: u32,
}

/// `text` as the NUL-padded words of a field of `N` bytes, cut to `N - 1`
/// bytes at a character boundary.
fn field_words<const N: usize>(text: &str) -> Vec<u64> {
    let mut bytes = [0u8; N];
    let mut n = text.len().min(N - 1);
    while !text.is_char_boundary(n) {
        n -= 1;
    }
    bytes[..n].copy_from_slice(&text.as_bytes()[..n]);
    bytes
        .chunks(8)
        .map(|c| u64::from_ne_bytes(c.try_into().unwrap_or_default()))
        .collect()
}

/// The text of a NUL-padded field's words.
fn field_text(words: &[u64]) -> String {
    let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_ne_bytes()).collect();
    let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
    String::from_utf8_lossy(&bytes[..end]).into_owned()
}

/// A slot this process registered: its id and its identity check (what its
/// published timestamps' checks start from).
#[derive(Clone, Copy, Debug)]
pub struct Registered {
    pub id: SlotId,
    pub identity: u64,
}

/// Registers instance `instance` of this process in a free slot, under a
/// program name and an instance id (empty: none), each cut to 31 bytes.
pub fn register(
    seg: &StatsSegment,
    instance: u32,
    program: &str,
    instance_id: &str,
    grace_ns: u64,
) -> Result<Registered> {
    let program = field_words::<PROGRAM_BYTES>(program);
    let instance_id = field_words::<INSTANCE_ID_BYTES>(instance_id);
    for attempt in 0..2 {
        for slot in 0..PROCESS_SLOTS {
            let state = seg.process(slot, pw::STATE).load(Acquire);
            if slot_phase(state) != PHASE_FREE {
                continue;
            }
            let generation = slot_generation(state).wrapping_add(1);
            let claimed = slot_state(generation, PHASE_CLAIMED);
            if seg
                .process(slot, pw::STATE)
                .compare_exchange(state, claimed, AcqRel, Relaxed)
                .is_err()
            {
                continue;
            }
            let pid = hrts_core::process::pid();
            seg.process(slot, pw::PID).store(pid as u64, Relaxed);
            let start = hrts_core::process::start_time(pid).unwrap_or(0);
            seg.process(slot, pw::START_TIME).store(start, Relaxed);
            seg.process(slot, pw::INSTANCE)
                .store(instance as u64, Relaxed);
            seg.process(slot, pw::GONE_SINCE).store(0, Relaxed);
            for (i, w) in program.iter().enumerate() {
                seg.process(slot, pw::PROGRAM + i).store(*w, Relaxed);
            }
            for (i, w) in instance_id.iter().enumerate() {
                seg.process(slot, pw::INSTANCE_ID + i).store(*w, Relaxed);
            }
            let identity = check::identity(
                generation,
                pid as u64,
                start,
                instance as u64,
                &program,
                &instance_id,
            );
            seg.process(slot, pw::CHECK).store(identity, Relaxed);
            // Publication 0: timestamp 0 in pair 0.
            seg.process(slot, pw::PUBLISHED_SEQ).store(0, Relaxed);
            seg.process(slot, pw::PUBLISHED).store(0, Relaxed);
            seg.process(slot, pw::PUBLISHED + 1)
                .store(check::published(identity, 0, 0), Relaxed);
            seg.header(layout::header::REGISTRATIONS)
                .fetch_add(1, Relaxed);
            seg.process(slot, pw::STATE)
                .store(slot_state(generation, PHASE_LIVE), Release);
            return Ok(Registered {
                id: SlotId { slot, generation },
                identity,
            });
        }
        if attempt == 0 && reclaim(seg, grace_ns, now_ns()) == 0 {
            break;
        }
    }
    Err(Error::new(
        ErrorKind::Full,
        format!(
            "statistics segment {}: all {PROCESS_SLOTS} process slots are in use; slots of \
             processes that are gone are reclaimed {} ms after they go ({}); stop some \
             statistics instances, or remove the segment with `hrts stats unlink` when no \
             process uses it",
            seg.name(),
            grace_ns / 1_000_000,
            super::ENV_GRACE_MS
        ),
    ))
}

/// Stores the timestamp of the dump a registered instance just published
/// (only the instance's publishing thread calls it): into the pair readers
/// are not directed to, then the publication's number (release).
pub fn set_published(seg: &StatsSegment, me: Registered, timestamp: u64) {
    let slot = me.id.slot;
    let next = seg
        .process(slot, pw::PUBLISHED_SEQ)
        .load(Relaxed)
        .wrapping_add(1);
    let at = pw::PUBLISHED + 2 * (next % 2) as usize;
    seg.process(slot, at).store(timestamp, Relaxed);
    seg.process(slot, at + 1)
        .store(check::published(me.identity, next, timestamp), Relaxed);
    seg.process(slot, pw::PUBLISHED_SEQ).store(next, Release);
}

/// A live slot as a reader sees it.
pub struct Slot {
    pub generation: u32,
    pub pid: u32,
    pub start: u64,
    pub instance: u32,
    pub program: String,
    pub instance_id: String,
    pub published: u64,
}

/// What reading a process slot gives.
pub enum ReadSlot {
    /// Not live (free, being registered or reclaimed), or re-registered while
    /// the reader read it.
    Nothing,
    /// Its words do not match its check words: left out, with its cells.
    Damaged,
    Live(Slot),
}

/// Reads process slot `slot`.
pub fn read_slot(seg: &StatsSegment, slot: usize) -> ReadSlot {
    let state = seg.process(slot, pw::STATE).load(Acquire);
    // Bits 31..8 are always 0, and only four phases exist.
    if state & 0xffff_ff00 != 0 || slot_phase(state) > PHASE_RECLAIMING {
        return ReadSlot::Damaged;
    }
    if slot_phase(state) != PHASE_LIVE {
        return ReadSlot::Nothing;
    }
    let generation = slot_generation(state);
    let pid = seg.process(slot, pw::PID).load(Relaxed);
    let start = seg.process(slot, pw::START_TIME).load(Relaxed);
    let instance = seg.process(slot, pw::INSTANCE).load(Relaxed);
    let mut words = [0u64; PROGRAM_BYTES / 8];
    for (i, w) in words.iter_mut().enumerate() {
        *w = seg.process(slot, pw::PROGRAM + i).load(Relaxed);
    }
    let mut id_words = [0u64; INSTANCE_ID_BYTES / 8];
    for (i, w) in id_words.iter_mut().enumerate() {
        *w = seg.process(slot, pw::INSTANCE_ID + i).load(Relaxed);
    }
    let identity = seg.process(slot, pw::CHECK).load(Relaxed);
    let mut published = None;
    for _ in 0..8 {
        let seq = seg.process(slot, pw::PUBLISHED_SEQ).load(Acquire);
        let at = pw::PUBLISHED + 2 * (seq % 2) as usize;
        let timestamp = seg.process(slot, at).load(Relaxed);
        let stored = seg.process(slot, at + 1).load(Relaxed);
        fence(Acquire);
        if seg.process(slot, pw::PUBLISHED_SEQ).load(Relaxed) == seq {
            published = Some((
                check::published(identity, seq, timestamp) == stored,
                timestamp,
            ));
            break;
        }
    }
    // Released and registered anew while this reader read: not damage.
    if seg.process(slot, pw::STATE).load(Relaxed) != state {
        return ReadSlot::Nothing;
    }
    let Some((published_ok, published)) = published else {
        return ReadSlot::Nothing; // published 8 times while this reader read
    };
    let (Ok(pid), Ok(instance)) = (u32::try_from(pid), u32::try_from(instance)) else {
        return ReadSlot::Damaged;
    };
    if !published_ok
        || check::identity(
            generation,
            pid as u64,
            start,
            instance as u64,
            &words,
            &id_words,
        ) != identity
    {
        return ReadSlot::Damaged;
    }
    ReadSlot::Live(Slot {
        generation,
        pid,
        start,
        instance,
        program: field_text(&words),
        instance_id: field_text(&id_words),
        published,
    })
}

/// Frees a slot this process registered, and every cell it owns.
pub fn release(seg: &StatsSegment, id: SlotId) {
    let live = slot_state(id.generation, PHASE_LIVE);
    let reclaiming = slot_state(id.generation, PHASE_RECLAIMING);
    if seg
        .process(id.slot, pw::STATE)
        .compare_exchange(live, reclaiming, AcqRel, Relaxed)
        .is_ok()
    {
        free_cells(seg, id);
        seg.process(id.slot, pw::STATE)
            .store(slot_state(id.generation, PHASE_FREE), Release);
    }
}

/// Whether the process of `slot` still runs.
pub fn slot_alive(seg: &StatsSegment, slot: usize) -> bool {
    let pid = seg.process(slot, pw::PID).load(Relaxed);
    let start = seg.process(slot, pw::START_TIME).load(Relaxed);
    u32::try_from(pid).is_ok_and(|pid| hrts_core::process::still_running(pid, start))
}

fn free_cells(seg: &StatsSegment, id: SlotId) {
    for cell in 0..layout::CELLS {
        let word = seg.cell(cell, layout::cell::OWNER).load(Relaxed);
        if let Some((slot, generation, _)) = owner_of(word) {
            if slot == id.slot && generation == id.generation & 0x7fff_ffff {
                let _ = seg
                    .cell(cell, layout::cell::OWNER)
                    .compare_exchange(word, 0, AcqRel, Relaxed);
            }
        }
    }
}

/// One reclaiming pass: notes when each registered process was first seen
/// gone, and frees the slots (and cells) of those gone for longer than
/// `grace_ns`. Returns how many slots it freed.
pub fn reclaim(seg: &StatsSegment, grace_ns: u64, now: u64) -> usize {
    let mut freed = 0;
    for slot in 0..PROCESS_SLOTS {
        let state = seg.process(slot, pw::STATE).load(Acquire);
        let phase = slot_phase(state);
        if phase != PHASE_LIVE && phase != PHASE_CLAIMED && phase != PHASE_RECLAIMING {
            continue;
        }
        if slot_alive(seg, slot) {
            continue;
        }
        let gone = seg.process(slot, pw::GONE_SINCE);
        let since = match gone.compare_exchange(0, now, AcqRel, Acquire) {
            Ok(_) => now,
            Err(t) => t,
        };
        // A reclaimer that died mid-reclaim left phase RECLAIMING: finish its job
        // after the same grace.
        if now.saturating_sub(since) < grace_ns {
            continue;
        }
        let id = SlotId {
            slot,
            generation: slot_generation(state),
        };
        let reclaiming = slot_state(id.generation, PHASE_RECLAIMING);
        if state != reclaiming
            && seg
                .process(slot, pw::STATE)
                .compare_exchange(state, reclaiming, AcqRel, Relaxed)
                .is_err()
        {
            continue;
        }
        free_cells(seg, id);
        if seg
            .process(slot, pw::STATE)
            .compare_exchange(
                reclaiming,
                slot_state(id.generation, PHASE_FREE),
                AcqRel,
                Relaxed,
            )
            .is_ok()
        {
            freed += 1;
        }
    }
    freed
}

/// Nanoseconds since boot (`CLOCK_BOOTTIME`), for the grace period only: one
/// count for every process of the host, which no clock correction moves.
pub fn now_ns() -> u64 {
    hrts_core::process::boottime_ns()
}
