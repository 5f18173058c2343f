//! Metric cells: claimed by a registered instance, written only by it, read by
//! anyone.
//!
//! A publication writes the payload buffer readers are *not* directed to, then
//! advances the cell's sequence word (release). A reader copies the buffer the
//! sequence word names and accepts the copy only if the word has not moved
//! meanwhile. A writer killed mid-publication leaves the sequence word, and so
//! the last complete buffer, as they were: nothing torn is ever shown.
//!
//! Each buffer ends with a check word over the cell's owner word,
//! descriptor, name, the publication's number and the payload
//! (`layout::check`): a cell whose words were damaged is reported as damaged,
//! never read as numbers.

use super::codec::Payload;
use super::layout::{
    self, cell as cw, check, owner_damaged, owner_of, owner_word, BUFFER_WORDS, CELLS, NAME_BYTES,
    PAYLOAD_WORDS,
};
use super::processes::SlotId;
use super::segment::StatsSegment;
use hrts_core::{Error, ErrorKind, Result};
use std::sync::atomic::Ordering::{AcqRel, Acquire, Relaxed, Release};
use std::sync::atomic::{fence, AtomicUsize};

/// Where cell searches start: spreads processes over the area so that claims
/// rarely meet.
static HINT: AtomicUsize = AtomicUsize::new(0);

/// A claimed cell: its index and its identity (`check::cell`), which its
/// publications' check words start from.
#[derive(Clone, Copy, Debug)]
pub struct Claimed {
    pub cell: usize,
    pub identity: u64,
}

/// Claims a free cell for metric `name` of kind `kind` (a `KIND_*`).
pub fn claim(seg: &StatsSegment, owner: SlotId, kind: u64, name: &str) -> Result<Claimed> {
    let start = HINT.load(Relaxed) % CELLS;
    for i in 0..CELLS {
        let cell = (start + i) % CELLS;
        if seg.cell(cell, cw::OWNER).load(Relaxed) != 0 {
            continue;
        }
        let claimed = owner_word(owner.slot, owner.generation, false);
        if seg
            .cell(cell, cw::OWNER)
            .compare_exchange(0, claimed, AcqRel, Relaxed)
            .is_err()
        {
            continue;
        }
        let bytes = name.as_bytes();
        let len = bytes.len().min(NAME_BYTES - 1);
        let descriptor = kind | (len as u64) << 8;
        seg.cell(cell, cw::DESCRIPTOR).store(descriptor, Relaxed);
        let mut padded = [0u8; NAME_BYTES];
        padded[..len].copy_from_slice(&bytes[..len]);
        let mut words = [0u64; NAME_BYTES / 8];
        for (w, chunk) in padded.chunks(8).enumerate() {
            words[w] = u64::from_ne_bytes(chunk.try_into().unwrap_or_default());
            seg.cell(cell, cw::NAME + w).store(words[w], Relaxed);
        }
        seg.cell(cell, cw::SEQ).store(0, Relaxed);
        let ready = owner_word(owner.slot, owner.generation, true);
        seg.cell(cell, cw::OWNER).store(ready, Release);
        HINT.store(cell + 1, Relaxed);
        return Ok(Claimed {
            cell,
            identity: check::cell(ready, descriptor, &words),
        });
    }
    Err(Error::new(
        ErrorKind::Full,
        format!(
            "cannot publish metric {name:?}: all {CELLS} metric cells of statistics segment {} \
             are in use; cells of processes that are gone are reclaimed after the grace period \
             ({}); use fewer metric names (names should not carry unbounded values), or turn \
             publishing off for this instance (\"shared-memory\": {{\"enable\": false}})",
            seg.name(),
            super::ENV_GRACE_MS
        ),
    ))
}

/// Publishes a payload in a cell this instance owns. Only the owner calls it,
/// from one thread at a time.
pub fn publish(seg: &StatsSegment, claimed: Claimed, payload: &Payload) {
    let cell = claimed.cell;
    let seq = seg.cell(cell, cw::SEQ).load(Relaxed);
    // 0 means "never published": a wrapped (or damaged) count skips it.
    let next = match seq.wrapping_add(1) {
        0 => 1,
        n => n,
    };
    let base = buffer(next);
    for (i, &w) in payload.iter().enumerate() {
        seg.cell(cell, base + i).store(w, Relaxed);
    }
    seg.cell(cell, base + PAYLOAD_WORDS)
        .store(check::publication(claimed.identity, next, payload), Relaxed);
    seg.cell(cell, cw::SEQ).store(next, Release);
}

/// The first word of the buffer publication `seq` is in.
fn buffer(seq: u64) -> usize {
    cw::BUFFERS + (seq % 2) as usize * BUFFER_WORDS
}

/// What a reader finds in a cell.
pub struct Found {
    pub owner: SlotId,
    pub kind: u64,
    pub name: String,
    pub payload: Payload,
}

/// What reading a cell gives.
pub enum Read {
    /// Free, being claimed, never published, or changing under the reader
    /// (freed, claimed anew, or published more than 8 times while it read).
    Nothing,
    /// Its words do not match its check word (or its owner word names no
    /// slot): left out, reported as damaged.
    Damaged,
    Found(Box<Found>),
}

/// Reads cell `cell`.
pub fn read(seg: &StatsSegment, cell: usize) -> Read {
    let owner_word_before = seg.cell(cell, cw::OWNER).load(Acquire);
    let Some((slot, generation, ready)) = owner_of(owner_word_before) else {
        return if owner_damaged(owner_word_before) {
            Read::Damaged
        } else {
            Read::Nothing
        };
    };
    if !ready {
        return Read::Nothing;
    }
    let descriptor = seg.cell(cell, cw::DESCRIPTOR).load(Relaxed);
    let mut words = [0u64; NAME_BYTES / 8];
    for (w, word) in words.iter_mut().enumerate() {
        *word = seg.cell(cell, cw::NAME + w).load(Relaxed);
    }
    let identity = check::cell(owner_word_before, descriptor, &words);
    for _ in 0..8 {
        let seq = seg.cell(cell, cw::SEQ).load(Acquire);
        if seq == 0 {
            return Read::Nothing;
        }
        let base = buffer(seq);
        let mut payload = [0u64; PAYLOAD_WORDS];
        for (i, w) in payload.iter_mut().enumerate() {
            *w = seg.cell(cell, base + i).load(Relaxed);
        }
        let stored_check = seg.cell(cell, base + PAYLOAD_WORDS).load(Relaxed);
        fence(Acquire);
        if seg.cell(cell, cw::SEQ).load(Relaxed) != seq {
            continue;
        }
        // The cell may have been freed and claimed anew while we copied.
        if seg.cell(cell, cw::OWNER).load(Relaxed) != owner_word_before {
            return Read::Nothing;
        }
        if check::publication(identity, seq, &payload) != stored_check {
            return Read::Damaged;
        }
        let len = ((descriptor >> 8) as usize).min(NAME_BYTES - 1);
        let mut name = [0u8; NAME_BYTES];
        for (chunk, w) in name.chunks_mut(8).zip(words) {
            chunk.copy_from_slice(&w.to_ne_bytes());
        }
        return Read::Found(Box::new(Found {
            owner: SlotId { slot, generation },
            kind: descriptor & 0xff,
            name: String::from_utf8_lossy(&name[..len]).into_owned(),
            payload,
        }));
    }
    Read::Nothing
}

/// Frees a cell this instance owns (its metric is gone with the instance).
pub fn free(seg: &StatsSegment, cell: usize, owner: SlotId) {
    let word = owner_word(owner.slot, owner.generation, true);
    let _ = seg
        .cell(cell, layout::cell::OWNER)
        .compare_exchange(word, 0, AcqRel, Relaxed);
}
