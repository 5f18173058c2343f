//! The statistics segment's memory layout, stated once. C and Java see it only
//! through the C ABI and native calls.
//!
//! ```text
//! offset 0            header (4096 bytes; the first 32 mirror the name's record)
//! PROCESSES_OFFSET    PROCESS_SLOTS process slots of 256 bytes: who publishes
//! INSTANCES_OFFSET    INSTANCE_SLOTS shared timer instances of 32 bytes
//! CELLS_OFFSET        CELLS metric cells of CELL_BYTES: one metric of one process
//! SEGMENT_SIZE - 4096 the storage layer's tag (last 64 bytes)
//! ```
//!
//! Every word is a `u64` read and written through atomics: other processes
//! read (and may damage) the page concurrently. Each word has exactly one
//! writer except the claim words, which change only by compare-and-swap.

use hrts_core::storage::Spec;

/// "HRTSSTAT" in little-endian.
pub const MAGIC: u64 = u64::from_le_bytes(*b"HRTSSTAT");
/// 4: process slots of 256 bytes, with the instance id a user sets
/// (`instance_id`, in the identity check); 3: check words in process slots
/// and after each payload buffer, the slot's `published` double-buffered; 2:
/// a statistics set has 14 words (`rate` after `interval-mean`); 1 had 13.
pub const LAYOUT_VERSION: u32 = 4;

pub const HEADER_BYTES: usize = 4096;

/// Registered statistics instances (normally one per process) at once.
pub const PROCESS_SLOTS: usize = 1024;
pub const PROCESS_SLOT_WORDS: usize = 32;
/// Shared timer instances running at once.
pub const INSTANCE_SLOTS: usize = 8192;
pub const INSTANCE_SLOT_WORDS: usize = 4;
/// Metric cells: every metric of every registered instance.
pub const CELLS: usize = 16_384;

/// Longest metric name stored (the registry's own limit).
pub const NAME_BYTES: usize = 256;
/// Bytes of a program name kept in a process slot (`/proc/PID/comm` has 15):
/// names of up to 31 bytes, NUL-padded.
pub const PROGRAM_BYTES: usize = 32;
/// Bytes of an instance id kept in a process slot: up to 31, NUL-padded.
pub const INSTANCE_ID_BYTES: usize = 32;

/// A statistics set: the 14 values of `dump::STATISTICS_KEYS`, in that order;
/// `count` as an integer, absent values as NaN.
pub const STATS_WORDS: usize = 14;
/// One published metric: timestamp, value, then up to four statistics sets
/// (a counter's values, increment, decrement and delta sets).
pub const PAYLOAD_WORDS: usize = 2 + 4 * STATS_WORDS;

// ---------------------------------------------------------------- process slots

/// Process slot words.
pub mod process {
    /// Claim word: generation (high 32 bits) and phase (low 8).
    pub const STATE: usize = 0;
    pub const PID: usize = 1;
    /// The process's start time (`/proc/PID/stat` field 22): a reused pid has
    /// another one.
    pub const START_TIME: usize = 2;
    /// Which instance of the process this is (1, 2, ...).
    pub const INSTANCE: usize = 3;
    /// When a reclaimer first saw the process gone (0: not seen gone).
    pub const GONE_SINCE: usize = 4;
    /// `check::identity` of the generation, pid, start time, instance,
    /// program and instance id: a reader shows the slot only if it matches.
    pub const CHECK: usize = 5;
    /// Publications of the instance's dump timestamp so far: the last one is
    /// in `PUBLISHED + 2 * (PUBLISHED_SEQ % 2)`.
    pub const PUBLISHED_SEQ: usize = 6;
    /// The program (service) name, NUL-padded (`PROGRAM_BYTES`).
    pub const PROGRAM: usize = 8;
    /// Two (timestamp, check) pairs: the timestamp of the instance's last
    /// publication and `check::published` of it.
    pub const PUBLISHED: usize = 12;
    /// The instance id the user set (`shared-memory.instance-id`,
    /// `HRTS_STATS_INSTANCE_ID`), NUL-padded (`INSTANCE_ID_BYTES`); all zero
    /// when none was set.
    pub const INSTANCE_ID: usize = 16;
}

pub const PHASE_FREE: u64 = 0;
/// Claimed; the owner is writing the slot's fields.
pub const PHASE_CLAIMED: u64 = 1;
/// Fields written; readers show it.
pub const PHASE_LIVE: u64 = 2;
/// A reclaimer is freeing its cells.
pub const PHASE_RECLAIMING: u64 = 3;

pub fn slot_state(generation: u32, phase: u64) -> u64 {
    ((generation as u64) << 32) | phase
}
pub fn slot_generation(state: u64) -> u32 {
    (state >> 32) as u32
}
pub fn slot_phase(state: u64) -> u64 {
    state & 0xff
}

// ---------------------------------------------------------------- cells

/// Cell words.
pub mod cell {
    /// Claim word: 0 free, else `owner_word(slot, generation, ready)`.
    pub const OWNER: usize = 0;
    /// Kind (1 counter, 2 gauge, 3 timer) in the low 8 bits, name length above.
    pub const DESCRIPTOR: usize = 1;
    /// The name (`NAME_BYTES`).
    pub const NAME: usize = 2;
    /// Publications so far: the last complete one is in buffer `SEQ % 2`.
    pub const SEQ: usize = NAME + super::NAME_BYTES / 8;
    /// Two buffers of `BUFFER_WORDS`: a payload and its check word
    /// (`check::publication`); a writer writes the one readers are not told
    /// to read, so a writer killed mid-publication leaves the last one whole.
    pub const BUFFERS: usize = SEQ + 1;
}
/// A cell's payload buffer: the payload, then its check word.
pub const BUFFER_WORDS: usize = PAYLOAD_WORDS + 1;
/// Words of a cell, rounded up to whole cache lines.
pub const CELL_WORDS: usize = (cell::BUFFERS + 2 * BUFFER_WORDS).div_ceil(8) * 8;
pub const CELL_BYTES: usize = CELL_WORDS * 8;

const READY_BIT: u64 = 1 << 63;

/// A cell's owner word: the slot index + 1, the slot's generation, and whether
/// the descriptor and name are written.
pub fn owner_word(slot: usize, generation: u32, ready: bool) -> u64 {
    (ready as u64) << 63 | ((generation as u64 & 0x7fff_ffff) << 32) | (slot as u64 + 1)
}
/// (slot, generation, ready) of an owner word; `None` for a free cell or a slot
/// index out of range (damage: see `owner_damaged`).
pub fn owner_of(word: u64) -> Option<(usize, u32, bool)> {
    let slot = (word as u32 as usize).checked_sub(1)?;
    (slot < PROCESS_SLOTS).then_some((
        slot,
        ((word >> 32) & 0x7fff_ffff) as u32,
        word & READY_BIT != 0,
    ))
}

/// Whether an owner word can only come from damage: not free, and naming no
/// slot.
pub fn owner_damaged(word: u64) -> bool {
    word != 0 && owner_of(word).is_none()
}

pub const KIND_COUNTER: u64 = 1;
pub const KIND_GAUGE: u64 = 2;
pub const KIND_TIMER: u64 = 3;

// ---------------------------------------------------------------- check words

/// The check words: a hash of the words they protect that changes whenever
/// any one of those words changes (each step is a bijection of the running
/// value for a fixed word), and with probability 1 − 2⁻⁶⁴ when several do.
/// They catch damage (a stray write, a flipped bit), not a process that
/// writes the segment on purpose and recomputes them.
pub mod check {
    const K: u64 = 0x9e37_79b9_7f4a_7c15;

    fn step(h: u64, w: u64) -> u64 {
        (h.rotate_left(23) ^ w).wrapping_mul(K)
    }

    /// The hash of `words` after `seed`.
    pub fn hash(seed: u64, words: impl IntoIterator<Item = u64>) -> u64 {
        let mut h = words
            .into_iter()
            .fold(step(0x6872_7473_6368_6b31, seed), step);
        // splitmix64's finaliser: every input bit reaches every output bit.
        h = (h ^ (h >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        h = (h ^ (h >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        h ^ (h >> 31)
    }

    /// A process slot's `CHECK`: its generation, pid, start time, instance,
    /// program and instance id words.
    pub fn identity(
        generation: u32,
        pid: u64,
        start: u64,
        instance: u64,
        program: &[u64],
        instance_id: &[u64],
    ) -> u64 {
        hash(
            generation as u64,
            [pid, start, instance]
                .into_iter()
                .chain(program.iter().copied())
                .chain(instance_id.iter().copied()),
        )
    }

    /// A slot's published timestamp check: the slot's identity check, the
    /// publication's number and the timestamp.
    pub fn published(identity: u64, seq: u64, timestamp: u64) -> u64 {
        hash(identity, [seq, timestamp])
    }

    /// A cell's identity (not stored): its owner word with the ready bit,
    /// descriptor and name words.
    pub fn cell(owner: u64, descriptor: u64, name: &[u64]) -> u64 {
        hash(
            owner,
            std::iter::once(descriptor).chain(name.iter().copied()),
        )
    }

    /// A payload buffer's check word: the cell's identity, the publication's
    /// number (`seq`) and the payload.
    pub fn publication(cell: u64, seq: u64, payload: &[u64]) -> u64 {
        hash(cell, std::iter::once(seq).chain(payload.iter().copied()))
    }
}

// ---------------------------------------------------------------- timer instances

/// Shared timer instance words.
pub mod instance {
    /// Claim word: 0 free, else the key (timer name and instance id hashed, never 0).
    pub const KEY: usize = 0;
    /// The start stamp (epoch ns); 0 while the starter is still writing it.
    pub const START: usize = 1;
    /// Who started it.
    pub const PID: usize = 2;
}
/// How far a key's slot is searched for (linear probing).
pub const PROBE: usize = 64;

// ---------------------------------------------------------------- the page

/// The header's words after the record's 32 bytes.
pub mod header {
    pub const PROCESS_SLOTS: usize = 4;
    pub const INSTANCE_SLOTS: usize = 5;
    pub const CELLS: usize = 6;
    pub const CELL_WORDS: usize = 7;
    /// The next instance number per pid is not kept here; this counts
    /// registrations, for `hrts stats` to show churn.
    pub const REGISTRATIONS: usize = 8;
}

pub const PROCESSES_OFFSET: usize = HEADER_BYTES;
pub const INSTANCES_OFFSET: usize = PROCESSES_OFFSET + PROCESS_SLOTS * PROCESS_SLOT_WORDS * 8;
pub const CELLS_OFFSET: usize = INSTANCES_OFFSET + INSTANCE_SLOTS * INSTANCE_SLOT_WORDS * 8;
/// The last 4096 bytes stay clear of the cells: the storage layer's tag is in
/// their last 64.
pub const SEGMENT_SIZE: usize = CELLS_OFFSET + CELLS * CELL_BYTES + 4096;

const _: () = assert!(process::INSTANCE_ID + INSTANCE_ID_BYTES / 8 <= PROCESS_SLOT_WORDS);
const _: () = assert!(process::PROGRAM + PROGRAM_BYTES / 8 <= process::PUBLISHED);
const _: () = assert!(CELL_BYTES.is_multiple_of(64));
const _: () = assert!(CELLS_OFFSET.is_multiple_of(64));
const _: () = assert!(SEGMENT_SIZE.is_multiple_of(4096));
const _: () = assert!(NAME_BYTES > crate::registry::MAX_NAME_LEN);

/// The statistics segment as the storage layer sees it.
pub const SPEC: Spec = Spec {
    what: "an hrts statistics segment",
    magic: MAGIC,
    version: LAYOUT_VERSION,
    header_size: HEADER_BYTES as u32,
    size: SEGMENT_SIZE,
    unlink_command: "`hrts stats unlink`",
    name_env: super::ENV_SEGMENT,
    group_env: super::ENV_GROUP,
};
