//! The shared segment's memory layout, stated once. C sees it only through the
//! C ABI's accessor functions and Java only through native calls, so this file is
//! the single source of truth.
//!
//! Every field is an atomic because other processes read and write the page
//! concurrently; plain fields would be data races.

use std::sync::atomic::{AtomicU32, AtomicU64, AtomicU8};

/// "HRTSBASE" in little-endian: the first eight bytes of every hrts segment.
pub const MAGIC: u64 = u64::from_le_bytes(*b"HRTSBASE");
/// Bumped whenever the meaning or position of any field changes. `magic` and
/// `layout_version` stay at offsets 0 and 8 in every version, so any version can
/// recognise any other and refuse it with a clear message.
///
/// 1: header, calibration and the two-slot base. 2: adds the extension area (unique
/// stamps and sequence numbers) after the header. 3: the page is a System V segment
/// named by a record in the POSIX name object (see `shm`); the mode (tracking or
/// frozen), the slope and tracking state in every slot, checksums over the slots and
/// the header's immutable fields, tie statistics and the pace check's result;
/// sequence blocks with complement copies. 4: the writer role proves it is alive
/// with a lock on the segment's name (not by pid), a stamp never waits for it: the
/// `reach` word, the stale mark in the seqlock word, publication by CAS.
pub const LAYOUT_VERSION: u32 = 4;
/// The minor version of the layout this library writes: pages of the same
/// `LAYOUT_VERSION` and any minor are opened; fields a newer minor adds lie in
/// the page's unused area (after [`MinorArea`]) and readers ignore what they do
/// not know (docs/PROTOCOL.md, "Layout versions"). 0: the layout as version 4
/// first defined it, so every version 4 page is a minor 0 page or newer. 1: each
/// slot's `quick` word (in bytes minor 0 left unused), which stamps check. 2:
/// the tie statistics' check word ([`StatsArea`]). 3: the system clock's error
/// bound ([`BoundArea`]). 4: how ordered reads are made ([`OrderedArea`]).
pub const LAYOUT_MINOR: u32 = 5;
/// One page: the whole segment.
pub const SEGMENT_SIZE: usize = 4096;
/// Bytes kept for the reason a counter source was chosen.
pub const REASON_LEN: usize = 192;

/// `state` word: see `storage` (the record and the page share it).
pub use crate::storage::{state_code, state_word, STATE_READY};

/// The time segment as the storage layer sees it.
pub const SPEC: crate::storage::Spec = crate::storage::Spec {
    what: "an hrts segment",
    magic: MAGIC,
    version: LAYOUT_VERSION,
    header_size: std::mem::size_of::<Header>() as u32,
    size: SEGMENT_SIZE,
    unlink_command: "`hrts unlink`",
    name_env: "HRTS_SEGMENT",
    group_env: "HRTS_GROUP",
};

// The page's first 32 bytes mirror the name's record.
const _: () = {
    use crate::storage::shm::{
        REC_HEADER_SIZE, REC_MAGIC, REC_SEGMENT_SIZE, REC_STATE, REC_VERSION,
    };
    assert!(std::mem::offset_of!(Header, magic) == REC_MAGIC);
    assert!(std::mem::offset_of!(Header, layout_version) == REC_VERSION);
    assert!(std::mem::offset_of!(Header, header_size) == REC_HEADER_SIZE);
    assert!(std::mem::offset_of!(Header, segment_size) == REC_SEGMENT_SIZE);
    assert!(std::mem::offset_of!(Header, state) == REC_STATE);
    assert!(SEGMENT_SIZE == crate::storage::NAME_SIZE);
};

/// `eval_monotonic` when no reliability evaluation ran.
pub const EVAL_NOT_RUN: u32 = 2;

/// `eval_pace` values: not run, same pace on every CPU, different paces, a
/// counter that did not change.
pub const PACE_NOT_RUN: u32 = 0;
pub const PACE_SAME: u32 = 1;
pub const PACE_DIFFERS: u32 = 2;
pub const PACE_STUCK: u32 = 3;

/// One copy of the base. Two copies exist so a writer always writes the copy
/// readers are not using: readers never wait for a writer, and a writer that dies
/// mid-write leaves the active copy intact.
///
/// The four words a stamp reads come first, on one cache line of their own; the
/// rest is read only by ties, moves and validation.
#[repr(C, align(64))]
pub struct Slot {
    /// Counter value the base refers to.
    pub counter: AtomicU64,
    /// Calendar time at `counter`, whole nanoseconds since the Unix epoch.
    pub ns: AtomicU64,
    /// Sub-nanosecond remainder at `counter`, in units of 2^-shift ns; carrying it
    /// makes a moved base produce exactly the timeline of the unmoved one.
    pub frac: AtomicU64,
    /// The slope: nanoseconds per tick times 2^shift. The calibrated `mult` in
    /// frozen mode; in tracking mode the calibrated one corrected by the tracker
    /// (learned frequency plus a bounded slew), shared by every process.
    pub mult: AtomicU64,
    /// Bumped by every explicit reset (`set_base_info`), re-base, step and repair;
    /// never by a move or an ordinary tie.
    pub generation: AtomicU64,
    /// Tracking: the slope that follows the calendar's rate (the frequency-locked
    /// loop's estimate), without the slew.
    pub freq_mult: AtomicU64,
    /// Tracking: the calendar's average rate measured over the last interval
    /// (mult units), 0 when unknown.
    pub rate_mult: AtomicU64,
    /// Tracking: calendar minus line at `counter` (ns, two's complement) when the
    /// slot was written: the error still to absorb.
    pub residual: AtomicU64,
    /// Tracking: the calendar reading of the tie that wrote the slot, 0 for a
    /// move or a reset.
    pub tie_ns: AtomicU64,
    /// The seqlock count (high half of `seq`) under which the slot became active.
    pub written: AtomicU64,
    /// Checksum over every field above (`slot_check`).
    pub check: AtomicU64,
    /// Minor 1: [`slot_quick`] of the four words a stamp reads. Every stamp
    /// checks it, so a damaged line is never used for a stamp; the full `check`
    /// costs too much for that.
    pub quick: AtomicU64,
}

/// The segment header. Immutable fields are written by the initialising process
/// before it publishes `STATE_READY` (release) and never change afterwards.
#[repr(C, align(64))]
pub struct Header {
    // --- offsets 0..16 are fixed for all layout versions ---
    pub magic: AtomicU64,
    pub layout_version: AtomicU32,
    pub header_size: AtomicU32,
    // --- version 1 ---
    pub segment_size: AtomicU64,
    pub state: AtomicU64,
    /// CLOCK_MONOTONIC (system-wide) when initialisation began; bounds the wait
    /// for a creator that is alive but stuck.
    pub init_started_ns: AtomicU64,
    pub creator_pid: AtomicU32,
    pub creator_uid: AtomicU32,
    pub source_id: AtomicU32,
    pub shift: AtomicU32,
    pub freq_hz: AtomicU64,
    pub mult: AtomicU64,
    pub max_delta: AtomicU64,
    pub wrap_threshold: AtomicU64,
    pub calib_spread_ppb: AtomicU64,
    pub calib_elapsed_ns: AtomicU64,
    /// How many processes ran a calibration for this segment (1 unless a creator
    /// died mid-initialisation and was replaced).
    pub calibrations: AtomicU32,
    pub eval_monotonic: AtomicU32,
    pub eval_max_shift_ns: AtomicU64,
    pub eval_cpus: AtomicU32,
    pub reason_len: AtomicU32,
    pub reason: [AtomicU8; REASON_LEN],
    pub created_realtime_ns: AtomicU64,
    /// Count of base moves (diagnostics only).
    pub moves: AtomicU64,
    /// Writer bookkeeping, written only by the holder of the writer role.
    pub writer_start_time: AtomicU64,

    // --- version 3: immutable once ready ---
    /// `MODE_TRACKING` or `MODE_FROZEN`, chosen by the creator.
    pub mode: AtomicU32,
    /// The pace check's verdict (`PACE_*`).
    pub eval_pace: AtomicU32,
    /// Largest pace difference between CPUs the pace check could not rule out, ppb.
    pub eval_pace_ppb: AtomicU64,
    /// Tracking: the tie interval, ns (the wrap threshold holds it in ticks).
    pub tie_interval_ns: AtomicU64,
    /// Tracking: the largest slew, and the largest learned frequency error, in ppb.
    pub max_slew_ppb: AtomicU64,
    /// Tracking: a calendar this far ahead of the line is followed by a step.
    pub step_ns: AtomicU64,
    /// Checksum over every immutable header field (`header_check`).
    pub header_check: AtomicU64,

    // --- version 3: tie statistics, written by the writer role's holder ---
    pub ties: AtomicU64,
    pub steps: AtomicU64,
    /// Signed size of the last step, ns.
    pub last_step_ns: AtomicU64,
    /// Signed size of the largest step, ns.
    pub largest_step_ns: AtomicU64,
    /// Damaged lines or header fields found and repaired by a tie or move.
    pub repairs: AtomicU64,
    /// Calendar minus line measured by the last tie, before its correction (ns).
    pub last_offset_ns: AtomicU64,
    /// Tracking: the counter value up to which stamps may use the active line
    /// without marking the seqlock word while the writer role is held (the
    /// holder's new line is built to be no lower than the active line up to
    /// here). Written only by the role's holder; only ever raised for one line.
    pub reach: AtomicU64,

    // --- the hot part: read by every stamp ---
    /// Seqlock word: high 32 bits count completed writes (the active slot is
    /// their parity); bit 31 is the stale mark (a stamp used the active line past
    /// `reach`); bits 30..0 hold the pid of the writer role's holder, or 0.
    pub seq: Hot<AtomicU64>,
    pub slots: [Slot; 2],
}

/// Puts a field on its own cache line so the hot read path shares no line with
/// fields written at other times.
#[repr(C, align(64))]
pub struct Hot<T>(pub T);

impl<T> std::ops::Deref for Hot<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}

/// Bytes after the header, kept for later layout versions (IBMTS's "array of
/// undefined size").
pub const EXTENSION_OFFSET: usize = std::mem::size_of::<Header>();

/// Layout version 2's use of the extension area. Zero is the initial state of
/// every field, which is what a fresh page holds.
#[repr(C)]
pub struct Extension {
    /// The last unique stamp issued by any process (epoch ns).
    pub last_unique: Hot<AtomicU64>,
    /// The next sequence number to hand out.
    pub seq_next: Hot<AtomicU64>,
    /// End (exclusive) of the block of sequence numbers reserved in the sequence
    /// file for this segment; 0 while a new block is being set up.
    pub seq_limit: AtomicU64,
    /// Unused (layout 2 marked the file loaded here).
    pub seq_ready: AtomicU32,
    pub _reserved: AtomicU32,
    /// Unused (layout 2 kept the persist interval here).
    pub seq_interval: AtomicU64,
    /// Start of the reserved block: `seq_start <= seq_next <= seq_limit`.
    pub seq_start: AtomicU64,
    /// `!seq_start` and `!seq_limit`: a block record whose copies disagree was
    /// damaged, and a new block is reserved from the file.
    pub seq_start_check: AtomicU64,
    pub seq_limit_check: AtomicU64,
    /// Identity of the sequence file the blocks come from (directory and name),
    /// and its complement: a process persisting to another file is refused.
    pub seq_file_id: AtomicU64,
    pub seq_file_id_check: AtomicU64,
}

/// Where the minor version is kept: right after the extension area, in bytes
/// version 3 first left unused (zero, which is minor 0).
pub const MINOR_OFFSET: usize = EXTENSION_OFFSET + std::mem::size_of::<Extension>();

/// The minor version word. The creator writes it before the page is ready and
/// it never changes; the fields of later minor versions follow it.
#[repr(C)]
pub struct MinorArea {
    /// The minor version of the layout the page's creator wrote.
    pub layout_minor: AtomicU32,
    /// Unused, zero.
    pub _reserved: AtomicU32,
}

/// Where the fields of minor versions above 0 may go: from here to the storage
/// layer's last 64 bytes.
pub const MINOR_FIELDS_OFFSET: usize = MINOR_OFFSET + std::mem::size_of::<MinorArea>();

/// The host page only (`hrts daemon`, see `segment::host`): the service's
/// signs of life, in the room for minor fields; zero in per-user segments.
/// Diagnostics: no stamp reads them, and no check word covers them.
#[repr(C)]
pub struct HostArea {
    /// The daemon's pid (in its own pid namespace) while it runs, else 0.
    pub daemon_pid: AtomicU32,
    /// Rounds in a row in which the running daemon could not tie (tracking),
    /// 0 while it ties: readers then count its bound as free-running, and
    /// `hrts info` says since when.
    pub untied_rounds: AtomicU32,
    /// `CLOCK_REALTIME` (ns) when the running daemon started.
    pub daemon_started_ns: AtomicU64,
    /// `CLOCK_REALTIME` (ns) at the daemon's latest round: a reader that finds
    /// it old knows how long the service has been gone or stopped.
    pub heartbeat_ns: AtomicU64,
    /// Time between the daemon's rounds, ns.
    pub round_ns: AtomicU64,
    /// Daemons that adopted the page after the one that made it.
    pub restarts: AtomicU64,
}

/// Where the host page keeps its [`HostArea`].
pub const HOST_AREA_OFFSET: usize = MINOR_FIELDS_OFFSET;

const _: () = assert!(HOST_AREA_OFFSET + std::mem::size_of::<HostArea>() <= SEGMENT_SIZE - 64);

/// Minor 2: the check word of the header's tie statistics (`ties`, `moves`,
/// `steps`, `last_step_ns`, `largest_step_ns`, `repairs`, `last_offset_ns`),
/// written by the writer role's holder after them (see `tie_stats`).
#[repr(C)]
pub struct StatsArea {
    pub stats_check: AtomicU64,
}

/// Where the page keeps its [`StatsArea`]: after the host area.
pub const STATS_AREA_OFFSET: usize = HOST_AREA_OFFSET + std::mem::size_of::<HostArea>();

const _: () = assert!(STATS_AREA_OFFSET + std::mem::size_of::<StatsArea>() <= SEGMENT_SIZE - 64);
const _: () = assert!(STATS_AREA_OFFSET.is_multiple_of(8));

/// Minor 3: how wrong the system clock may be, as the writer last learned it
/// (see `segment::bound`). Written by the writer role's holder under a
/// sequence word of its own; stamps that want an interval read it.
#[repr(C)]
pub struct BoundArea {
    /// Even: the fields below are whole; odd: a writer is writing them.
    pub version: AtomicU64,
    /// The clock's error bound at `as_of`, ns.
    pub bound_ns: AtomicU64,
    /// The counter value when the bound was learned (ticks: time namespaces
    /// shift `CLOCK_MONOTONIC`, never the counter).
    pub as_of: AtomicU64,
    /// How fast the bound grows after `as_of`, ppb (default 50 ppm).
    pub drift_ppb: AtomicU64,
    /// The line's own error at `as_of`: calendar minus line still to absorb,
    /// plus half the tie's bracket, ns.
    pub line_error_ns: AtomicU64,
    /// `status | source << 8 | leap << 16` (`clock::bound` codes).
    pub state: AtomicU64,
    /// Age after which a synchronized bound counts as free-running, ns.
    pub fresh_ns: AtomicU64,
    /// Age after which nothing is known any more, ns.
    pub void_ns: AtomicU64,
}

/// Where the page keeps its [`BoundArea`]: after the statistics check.
pub const BOUND_AREA_OFFSET: usize = STATS_AREA_OFFSET + std::mem::size_of::<StatsArea>();

const _: () = assert!(BOUND_AREA_OFFSET + std::mem::size_of::<BoundArea>() <= SEGMENT_SIZE - 64);

/// Minor 4: how every process of the page makes an ordered counter read,
/// chosen and written by the creator before the page is ready, never changed.
/// Read once at attach into the handle, so the stamp's hot path reads nothing
/// more from the page.
#[repr(C)]
pub struct OrderedArea {
    /// An `OrderedRead` code: 1 the source's fenced read (`lfence; rdtsc`),
    /// 2 `rdtscp`. Anything else (0 on older pages) means the fenced read.
    pub ordered_read: AtomicU32,
    /// Unused, zero.
    pub _reserved: AtomicU32,
}

/// Where the page keeps its [`OrderedArea`]: after the bound area.
pub const ORDERED_AREA_OFFSET: usize = BOUND_AREA_OFFSET + std::mem::size_of::<BoundArea>();

const _: () =
    assert!(ORDERED_AREA_OFFSET + std::mem::size_of::<OrderedArea>() <= SEGMENT_SIZE - 64);
const _: () = assert!(ORDERED_AREA_OFFSET.is_multiple_of(8));

/// Minor 5: the disruptions of the counter or the clock the writers saw (see
/// `segment::disruption`). Written by the writer role's holder under the
/// role's lock; `hrts info` reads it; stamps never do (a disruption reaches
/// them as the bound word's status `disrupted`).
#[repr(C)]
pub struct DisruptionArea {
    /// Disruptions seen since the page was made.
    pub disruptions: AtomicU64,
    /// `CLOCK_REALTIME` (ns) when the last one was seen.
    pub last_disruption_ns: AtomicU64,
    /// What the last one was (a `disruption::Kind` code; 0 none).
    pub last_kind: AtomicU64,
    /// 0: none pending; 1: disrupted, the rate not learned since; 2: learned
    /// once since, awaiting a second learning that agrees within the drift.
    pub phase: AtomicU64,
}

/// Where the page keeps its [`DisruptionArea`]: after the ordered read.
pub const DISRUPTION_AREA_OFFSET: usize = ORDERED_AREA_OFFSET + std::mem::size_of::<OrderedArea>();

const _: () =
    assert!(DISRUPTION_AREA_OFFSET + std::mem::size_of::<DisruptionArea>() <= SEGMENT_SIZE - 64);
const _: () = assert!(DISRUPTION_AREA_OFFSET.is_multiple_of(8));
const _: () = assert!(BOUND_AREA_OFFSET.is_multiple_of(8));
const _: () = assert!(HOST_AREA_OFFSET.is_multiple_of(8));
const _: () = assert!(EXTENSION_OFFSET.is_multiple_of(64));
const _: () = assert!(MINOR_OFFSET.is_multiple_of(8));
const _: () = assert!(MINOR_FIELDS_OFFSET <= SEGMENT_SIZE - 64);
const _: () = assert!(std::mem::size_of::<Slot>() == 128);
// The page's last 64 bytes belong to the storage layer (`storage::shm::TAG_LEN`).
const _: () = assert!(EXTENSION_OFFSET + std::mem::size_of::<Extension>() <= SEGMENT_SIZE - 64);
const _: () = assert!(std::mem::size_of::<Header>() <= SEGMENT_SIZE / 2);
const _: () = assert!(std::mem::align_of::<Header>() <= 4096);

/// Seqlock word helpers.
pub const SEQ_ONE: u64 = 1 << 32;
/// The stale mark: a stamp used the active line past the holder's `reach`
/// (or, with the role free, past the threshold without taking the role).
pub const SEQ_STALE: u64 = 1 << 31;
/// The holder's pid bits.
pub const SEQ_PID_MASK: u64 = SEQ_STALE - 1;
/// The pid of the writer role's holder (diagnostics), 0 when the role is free.
pub fn seq_writer(word: u64) -> u32 {
    (word & SEQ_PID_MASK) as u32
}
pub fn seq_stale(word: u64) -> bool {
    word & SEQ_STALE != 0
}
pub fn seq_slot(word: u64) -> usize {
    ((word >> 32) & 1) as usize
}
/// The count of completed writes (the high half).
pub fn seq_count(word: u64) -> u64 {
    word >> 32
}
/// A snapshot read from the slot active at `before` is consistent when, at
/// `after`, no write has completed since: the count is the same (the role may
/// have been taken or marked meanwhile; a writer writes only the other slot).
/// A stamp never accepts a line whose successor was published before its
/// second load, so every stamp from a line was taken before that line was
/// replaced.
#[inline(always)]
pub fn snapshot_valid(before: u64, after: u64) -> bool {
    (before ^ after) >> 32 == 0
}

/// A 64-bit mix of `words`: not cryptographic, but every single-word or
/// single-bit change gives another value (each round is a bijection of the state).
pub fn checksum(salt: u64, words: impl IntoIterator<Item = u64>) -> u64 {
    let mut h = salt ^ 0x9E37_79B9_7F4A_7C15;
    for w in words {
        h = (h ^ w).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        h ^= h >> 31;
        h = h.wrapping_mul(0x94D0_49BB_1331_11EB);
        h ^= h >> 29;
    }
    h
}

const SLOT_SALT: u64 = u64::from_le_bytes(*b"hrtsSLOT");
const HEADER_SALT: u64 = u64::from_le_bytes(*b"hrtsHEAD");

/// The checksum of a slot's fields (everything but `check`).
pub fn slot_check(words: &[u64; 10]) -> u64 {
    checksum(SLOT_SALT, words.iter().copied())
}

const QUICK_SALT: u64 = u64::from_le_bytes(*b"hrtsQUIK");

/// The check a stamp makes on the four words it reads: a few ALU operations
/// that run beside the counter read. Any change of one word, and any change of
/// one bit position in several words, gives another value (the rotations keep
/// equal changes in two words from cancelling).
#[inline(always)]
pub fn slot_quick(counter: u64, ns: u64, frac: u64, mult: u64) -> u64 {
    counter ^ ns.rotate_left(16) ^ frac.rotate_left(32) ^ mult.rotate_left(48) ^ QUICK_SALT
}

/// One of the header's immutable words, of either width.
#[derive(Clone, Copy)]
pub enum Word<'a> {
    U64(&'a AtomicU64),
    U32(&'a AtomicU32),
}

impl Word<'_> {
    pub fn load(self) -> u64 {
        match self {
            Word::U64(a) => a.load(std::sync::atomic::Ordering::Relaxed),
            Word::U32(a) => a.load(std::sync::atomic::Ordering::Relaxed) as u64,
        }
    }
    pub fn store(self, v: u64) {
        match self {
            Word::U64(a) => a.store(v, std::sync::atomic::Ordering::Relaxed),
            Word::U32(a) => a.store(v as u32, std::sync::atomic::Ordering::Relaxed),
        }
    }
}

/// Every header field that never changes once the segment is ready (the
/// reason's bytes aside), in the order the checksum covers them.
pub fn immutable_words(h: &Header) -> [Word<'_>; 24] {
    use Word::{U32, U64};
    [
        U64(&h.segment_size),
        U32(&h.header_size),
        U32(&h.creator_pid),
        U32(&h.creator_uid),
        U32(&h.source_id),
        U32(&h.shift),
        U64(&h.freq_hz),
        U64(&h.mult),
        U64(&h.max_delta),
        U64(&h.wrap_threshold),
        U64(&h.calib_spread_ppb),
        U64(&h.calib_elapsed_ns),
        U32(&h.calibrations),
        U32(&h.eval_monotonic),
        U64(&h.eval_max_shift_ns),
        U32(&h.eval_cpus),
        U32(&h.reason_len),
        U64(&h.created_realtime_ns),
        U32(&h.mode),
        U32(&h.eval_pace),
        U64(&h.eval_pace_ppb),
        U64(&h.tie_interval_ns),
        U64(&h.max_slew_ppb),
        U64(&h.step_ns),
    ]
}

/// The checksum of the header's immutable fields and reason, as `initialise`
/// leaves them.
pub fn header_check(h: &Header) -> u64 {
    let reason: [u8; REASON_LEN] =
        std::array::from_fn(|i| h.reason[i].load(std::sync::atomic::Ordering::Relaxed));
    header_check_of(&immutable_words(h).map(Word::load), &reason)
}

/// `header_check` of the immutable fields' values and the reason's bytes.
pub fn header_check_of(words: &[u64], reason: &[u8]) -> u64 {
    // The reason's bytes eight to a word.
    let reason = reason
        .chunks(8)
        .map(|chunk| chunk.iter().fold(0u64, |w, &b| (w << 8) | b as u64));
    checksum(HEADER_SALT, words.iter().copied().chain(reason))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checksums_change_with_every_word() {
        let base = [1u64, 2, 3, 4, 5, 6, 7, 8, 9, 10];
        let c = slot_check(&base);
        for i in 0..10 {
            for bit in [0, 1, 31, 63] {
                let mut w = base;
                w[i] ^= 1 << bit;
                assert_ne!(slot_check(&w), c, "word {i} bit {bit}");
            }
        }
    }

    #[test]
    fn fixed_offsets_never_move() {
        assert_eq!(std::mem::offset_of!(Header, magic), 0);
        assert_eq!(std::mem::offset_of!(Header, layout_version), 8);
        // tests/c/hrts_test.c damages this word from outside (check_damage_is_reported).
        assert_eq!(std::mem::offset_of!(Header, freq_hz), 56);
        assert_eq!(std::mem::offset_of!(Header, seq) % 64, 0);
        const { assert!(SEGMENT_SIZE - EXTENSION_OFFSET >= 2048) };
    }

    #[test]
    fn snapshot_validity_follows_the_two_slot_protocol() {
        let s = |n: u64, pid: u32| (n << 32) | pid as u64;
        assert!(snapshot_valid(s(7, 0), s(7, 0)));
        // A writer holds the word, or a stamp marked it: it writes the other slot.
        assert!(snapshot_valid(s(7, 0), s(7, 42)));
        assert!(snapshot_valid(s(7, 42), s(7, 42 | SEQ_STALE as u32)));
        // A write completed: the line read may be older than a stamp taken
        // after the new one was published.
        assert!(!snapshot_valid(s(7, 0), s(8, 0)));
        assert!(!snapshot_valid(s(7, 0), s(8, 42)));
        assert!(!snapshot_valid(s(7, 0), s(9, 0)));
        assert!(!snapshot_valid(s(u32::MAX as u64, 0), s(0, 0)));
        assert_eq!(seq_slot(s(7, 0)), 1);
        assert_eq!(seq_writer(s(7, 42)), 42);
        assert_eq!(seq_writer(s(7, 42 | SEQ_STALE as u32)), 42);
        assert!(seq_stale(s(7, SEQ_STALE as u32)) && !seq_stale(s(7, 42)));
        assert_eq!(seq_count(s(7, 42)), 7);
    }
}
