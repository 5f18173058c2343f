//! Metric cells: claimed by a registered instance, written only by it, read by
//! anyone.
//!
//! A publication writes the payload buffer readers are *not* directed to, then
//! advances the cell's sequence word (release). A reader copies the buffer the
//! sequence word names and accepts the copy only if the word has not moved
//! meanwhile. A writer killed mid-publication leaves the sequence word, and so
//! the last complete buffer, as they were: nothing torn is ever shown.

use super::codec::Payload;
use super::layout::{self, cell as cw, owner_of, owner_word, CELLS, NAME_BYTES, PAYLOAD_WORDS};
use super::processes::SlotId;
use super::segment::StatsSegment;
use hrts_core::{Error, ErrorKind, Result};
use std::sync::atomic::Ordering::{AcqRel, Acquire, Relaxed, Release};
use std::sync::atomic::{fence, AtomicUsize};

/// Where cell searches start: spreads processes over the area so that claims
/// rarely meet.
static HINT: AtomicUsize = AtomicUsize::new(0);

/// Claims a free cell for metric `name` of kind `kind` (a `KIND_*`).
pub fn claim(seg: &StatsSegment, owner: SlotId, kind: u64, name: &str) -> Result<usize> {
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
        seg.cell(cell, cw::DESCRIPTOR)
            .store(kind | (len as u64) << 8, Relaxed);
        let mut padded = [0u8; NAME_BYTES];
        padded[..len].copy_from_slice(&bytes[..len]);
        for (w, chunk) in padded.chunks(8).enumerate() {
            let word = u64::from_ne_bytes(chunk.try_into().unwrap_or_default());
            seg.cell(cell, cw::NAME + w).store(word, Relaxed);
        }
        seg.cell(cell, cw::SEQ).store(0, Relaxed);
        seg.cell(cell, cw::OWNER)
            .store(owner_word(owner.slot, owner.generation, true), Release);
        HINT.store(cell + 1, Relaxed);
        return Ok(cell);
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
pub fn publish(seg: &StatsSegment, cell: usize, payload: &Payload) {
    let seq = seg.cell(cell, cw::SEQ).load(Relaxed);
    let next = seq.wrapping_add(1);
    let base = cw::BUFFERS + (next % 2) as usize * PAYLOAD_WORDS;
    for (i, &w) in payload.iter().enumerate() {
        seg.cell(cell, base + i).store(w, Relaxed);
    }
    seg.cell(cell, cw::SEQ).store(next, Release);
}

/// What a reader finds in a cell.
pub struct Found {
    pub owner: SlotId,
    pub kind: u64,
    pub name: String,
    pub payload: Payload,
}

/// Reads cell `cell`: `None` if it is free, not ready, never published, or kept
/// changing under the reader.
pub fn read(seg: &StatsSegment, cell: usize) -> Option<Found> {
    let owner_word_before = seg.cell(cell, cw::OWNER).load(Acquire);
    let (slot, generation, ready) = owner_of(owner_word_before)?;
    if !ready {
        return None;
    }
    let descriptor = seg.cell(cell, cw::DESCRIPTOR).load(Relaxed);
    let len = ((descriptor >> 8) as usize).min(NAME_BYTES - 1);
    let mut name = [0u8; NAME_BYTES];
    for (w, chunk) in name.chunks_mut(8).enumerate() {
        chunk.copy_from_slice(&seg.cell(cell, cw::NAME + w).load(Relaxed).to_ne_bytes());
    }
    for _ in 0..8 {
        let seq = seg.cell(cell, cw::SEQ).load(Acquire);
        if seq == 0 {
            return None;
        }
        let base = cw::BUFFERS + (seq % 2) as usize * PAYLOAD_WORDS;
        let mut payload = [0u64; PAYLOAD_WORDS];
        for (i, w) in payload.iter_mut().enumerate() {
            *w = seg.cell(cell, base + i).load(Relaxed);
        }
        fence(Acquire);
        if seg.cell(cell, cw::SEQ).load(Relaxed) != seq {
            continue;
        }
        // The cell may have been freed and claimed anew while we copied.
        if seg.cell(cell, cw::OWNER).load(Relaxed) != owner_word_before {
            return None;
        }
        return Some(Found {
            owner: SlotId { slot, generation },
            kind: descriptor & 0xff,
            name: String::from_utf8_lossy(&name[..len]).into_owned(),
            payload,
        });
    }
    None
}

/// Frees a cell this instance owns (its metric is gone with the instance).
pub fn free(seg: &StatsSegment, cell: usize, owner: SlotId) {
    let word = owner_word(owner.slot, owner.generation, true);
    let _ = seg
        .cell(cell, layout::cell::OWNER)
        .compare_exchange(word, 0, AcqRel, Relaxed);
}
