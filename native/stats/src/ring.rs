//! Each measuring thread's queue: a single-producer ring of events in one
//! fixed block of 64-bit atomic words, plus per-metric fold cells.
//!
//! The producer (one thread, or one Java thread) appends events; the processing
//! thread consumes them. The producer never waits: when the ring is full it
//! folds the event into this thread's cell for the metric, a seqlock-protected
//! running summary (count, sum, min and max per sign of delta, last value, and
//! its place among the queued events), which the processing thread reads on its
//! next pass and applies as the difference to what it applied before. Folding
//! needs no time stamp: a folded run is stamped with the time of the next
//! queued event of its thread, or of the pass that takes it. Folding loses no event and keeps count,
//! sum, min and max exact; only the order-dependent statistics see a folded run
//! as one batch. Cells come in chunks of 64 metrics, allocated the first time a
//! thread folds an event of one of them.
//!
//! The block is plain words at fixed offsets so that another language (the Java
//! measuring points write it through a direct `ByteBuffer`) and, later, another
//! process can use it. Word offsets:
//!
//! | words | owner | contents |
//! |---|---|---|
//! | 0..8 | producer | head, cached tail, dropped, (unused), capacity, fold credit, fold cancels seen, init pending |
//! | 8..16 | consumer | tail, fold cancels |
//! | 16..24 | owner | closed flag |
//! | 24.. | both | events, 3 words each: time, meta (metric id + kind << 32), value |
//!
//! A chunk is one header line (unused; once a version the producer bumped after each
//! fold) and 64 cells of 16 words; see [`cell`].

use crate::registry::MAX_METRICS;
use std::sync::atomic::Ordering::{Acquire, Relaxed, Release};
use std::sync::atomic::{fence, AtomicPtr, AtomicU64};

pub const HEAD: usize = 0;
pub const CACHED_TAIL: usize = 1;
pub const DROPPED: usize = 2;
pub const CAPACITY: usize = 4;
/// Producer-private: events still to fold before queueing again.
pub const FOLD_CREDIT: usize = 5;
/// Producer-private: the last `FOLD_CANCEL` value the producer saw.
pub const FOLD_SEEN: usize = 6;
/// Producer-private: 0, or the ring position just past the thread's last
/// queued counter init while the consumer has not taken it. Until it has, the
/// thread queues its pass-stamped counter events (time 0: stamped when taken)
/// instead of summing them into cells, where a pass could not tell which of
/// them came before the init and which after. Gauge sets are not affected: no
/// init sets a gauge.
pub const INIT_PENDING: usize = 7;
/// Consumer-written: bumped to end every producer's folding run at once (at a
/// restart, or when the processing thread has found nothing queued for its
/// whole sleep schedule), so a burst long past does not keep later events
/// folded.
pub const FOLD_CANCEL: usize = 9;
/// After finding its ring full, a producer folds this many ring-fulls of
/// events before it queues again: under sustained overload most events then
/// stay in the thread's own cache instead of crossing to the processing thread
/// one cache line per 2.7 events (see the crate docs).
pub const FOLD_RUN_RINGS: u64 = 8;
pub const TAIL: usize = 8;
pub const CLOSED: usize = 16;
pub const EVENTS: usize = 24;
pub const EVENT_WORDS: usize = 3;

/// Metrics per chunk of fold cells.
pub const CHUNK_CELLS: usize = 64;
pub const CELL_WORDS: usize = 16;
/// Words before a chunk's first cell (a line, unused).
pub const CHUNK_HEADER_WORDS: usize = 8;
/// Words of a chunk: a header line, then the cells.
pub const CHUNK_WORDS: usize = CHUNK_HEADER_WORDS + CHUNK_CELLS * CELL_WORDS;
const CHUNKS: usize = MAX_METRICS / CHUNK_CELLS;

/// Fold cell word offsets. Counter deltas are summed per sign (`POS_*` for
/// positive, `NEG_*` for negative, `ZERO_N` counts zeros); gauge values
/// (doubles) and durations use the `POS_*` words, and a gauge's sum is
/// `POS_SUM + NEG_SUM` (two partial sums; a producer may use the first alone).
///
/// The count words (`POS_N`, `NEG_N`, `ZERO_N`) hold twice the count, plus one
/// while the producer writes the cell: each is its sign's sequence word, and
/// their sum the cell's (see `Ring::write_cell`). [`Chunk::read_cell`] gives
/// the counts themselves.
pub mod cell {
    /// Unused (once a sequence word apart from the counts).
    pub const SEQ: usize = 0;
    pub const POS_N: usize = 1;
    pub const POS_SUM: usize = 2;
    pub const POS_MIN: usize = 3;
    pub const POS_MAX: usize = 4;
    pub const NEG_N: usize = 5;
    pub const NEG_SUM: usize = 6;
    pub const NEG_MIN: usize = 7;
    pub const NEG_MAX: usize = 8;
    pub const ZERO_N: usize = 9;
    /// The ring's head when the cell was last folded into: the folded events
    /// came after queued event `POS - 1` and before queued event `POS`.
    pub const POS: usize = 10;
    pub const LAST: usize = 11;
    pub const KIND: usize = 12;
}

/// Event kinds (the `meta` word's bits 32..40).
pub mod kind {
    pub const COUNTER_INIT: u8 = 1;
    pub const COUNTER_ADD: u8 = 2;
    pub const GAUGE_SET: u8 = 3;
    pub const TIMER_START: u8 = 4;
    pub const TIMER_STOP: u8 = 5;
    pub const TIMER_DISCARD: u8 = 6;
    pub const TIMER_HEARTBEAT: u8 = 7;
    pub const TIMER_RECORD: u8 = 8;
}

#[repr(C, align(64))]
struct Line([AtomicU64; 8]);

/// Word `i` of a block, without a bounds check on the measuring path: every
/// index used is a header constant, a masked event slot or a cell of a metric
/// below the chunk size, all inside the block by construction (checked in
/// debug builds).
#[inline(always)]
fn word(lines: &[Line], i: usize) -> &AtomicU64 {
    debug_assert!(
        i < lines.len() * 8,
        "word {i} outside a block of {} lines",
        lines.len()
    );
    // SAFETY: `Line` is repr(C) [AtomicU64; 8], so a slice of lines is
    // lines.len() * 8 contiguous AtomicU64s starting at its pointer, and `i` is
    // below that (see above), so the word is inside the allocation.
    unsafe { &*lines.as_ptr().cast::<AtomicU64>().add(i) }
}

fn lines(words: usize) -> Box<[Line]> {
    (0..words.div_ceil(8))
        .map(|_| Line(Default::default()))
        .collect()
}

const CHUNK_LINES: usize = CHUNK_WORDS.div_ceil(8);

/// 64 fold cells.
#[repr(C)]
pub struct Chunk {
    lines: [Line; CHUNK_LINES],
}

impl Chunk {
    fn new() -> Box<Chunk> {
        Box::new(Chunk {
            lines: std::array::from_fn(|_| Line(Default::default())),
        })
    }

    #[inline(always)]
    fn w(&self, i: usize) -> &AtomicU64 {
        word(&self.lines, i)
    }

    /// The chunk as raw memory (address, bytes), for the Java measuring points.
    pub fn as_raw(&self) -> (*const u8, usize) {
        (self.lines.as_ptr().cast(), self.lines.len() * 64)
    }

    /// Cell `i`'s version: the sum of its count words, 0 if never written,
    /// odd while being written, and greater after every write.
    pub fn cell_seq(&self, i: usize) -> u64 {
        let base = CHUNK_HEADER_WORDS + i * CELL_WORDS;
        let n = |k: usize| self.w(base + k).load(Acquire);
        n(cell::POS_N)
            .wrapping_add(n(cell::NEG_N))
            .wrapping_add(n(cell::ZERO_N))
    }

    /// A consistent copy of cell `i`, its count words turned into counts, or
    /// `None` if it was never written or the producer is writing it right now.
    pub fn read_cell(&self, i: usize) -> Option<[u64; CELL_WORDS]> {
        let base = CHUNK_HEADER_WORDS + i * CELL_WORDS;
        let before = self.cell_seq(i);
        if before == 0 || before & 1 == 1 {
            return None;
        }
        let mut out = [0u64; CELL_WORDS];
        for (k, v) in out.iter_mut().enumerate() {
            *v = self.w(base + k).load(Relaxed);
        }
        fence(Acquire);
        if self.cell_seq(i) != before {
            return None;
        }
        for k in [cell::POS_N, cell::NEG_N, cell::ZERO_N] {
            out[k] >>= 1;
        }
        Some(out)
    }
}

pub struct Ring {
    lines: Box<[Line]>,
    mask: u64,
    /// Null until the producer first folds into the chunk; owned by the ring
    /// (freed when it drops). A plain pointer so that a measuring point reaches
    /// a cell with one load; an array of fixed length, so that finding a
    /// metric's chunk needs no bounds check.
    chunks: Box<[AtomicPtr<Chunk>; CHUNKS]>,
}

impl Drop for Ring {
    fn drop(&mut self) {
        for slot in self.chunks.iter() {
            let p = slot.load(Acquire);
            if !p.is_null() {
                // SAFETY: the pointer came from Box::into_raw in `chunk` and is
                // freed only here, once; nobody else holds the ring any more.
                drop(unsafe { Box::from_raw(p) });
            }
        }
    }
}

/// One event as the consumer reads it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RawEvent {
    pub ts: u64,
    pub metric: u32,
    pub kind: u8,
    pub value: u64,
}

impl Ring {
    /// A ring of `capacity` events (a power of two).
    pub fn new(capacity: usize) -> Ring {
        assert!(capacity.is_power_of_two());
        let ring = Ring {
            lines: lines(EVENTS + capacity * EVENT_WORDS),
            mask: capacity as u64 - 1,
            chunks: Box::new([const { AtomicPtr::new(std::ptr::null_mut()) }; CHUNKS]),
        };
        ring.w(CAPACITY).store(capacity as u64, Relaxed);
        ring
    }

    #[inline(always)]
    fn w(&self, i: usize) -> &AtomicU64 {
        word(&self.lines, i)
    }

    /// The block as raw memory: its address and length in bytes (for the Java
    /// measuring points, which write it directly).
    pub fn as_raw(&self) -> (*const u8, usize) {
        (self.lines.as_ptr().cast(), self.lines.len() * 64)
    }

    pub fn capacity(&self) -> u64 {
        self.mask + 1
    }

    /// Producer: the chunk of fold cells holding `metric`, created on first use.
    /// Only the producer creates chunks, so this never waits.
    pub fn chunk(&self, metric: u32) -> &Chunk {
        let slot = &self.chunks[metric as usize / CHUNK_CELLS];
        let mut p = slot.load(Acquire);
        if p.is_null() {
            p = Box::into_raw(Chunk::new());
            slot.store(p, Release);
        }
        // SAFETY: non-null slots hold a chunk from Box::into_raw that only
        // Drop frees, so it lives as long as `self`.
        unsafe { &*p }
    }

    /// The chunk holding `metric` if it exists.
    #[inline(always)]
    fn chunk_if_any(&self, metric: u32) -> Option<&Chunk> {
        // Metric ids are below MAX_METRICS (the registry gives no others), so
        // the index is in the array; the remainder only says so to the compiler.
        let p = self.chunks[metric as usize / CHUNK_CELLS % CHUNKS].load(Acquire);
        // SAFETY: as in `chunk`.
        (!p.is_null()).then(|| unsafe { &*p })
    }

    /// Consumer: the chunks created so far, by index.
    pub fn chunks(&self) -> impl Iterator<Item = (usize, &Chunk)> {
        (0..self.chunks.len())
            .filter_map(|i| self.chunk_if_any((i * CHUNK_CELLS) as u32).map(|c| (i, c)))
    }

    /// Producer: appends an event stamped by `ts`, or folds it (unstamped) if
    /// the ring is full or was full recently (see [`FOLD_RUN_RINGS`]).
    #[inline(always)]
    pub fn record(&self, metric: u32, kind: u8, value: u64, ts: impl FnOnce() -> u64) {
        let credit = self.w(FOLD_CREDIT).load(Relaxed);
        if credit > 0 {
            let cancel = self.w(FOLD_CANCEL).load(Relaxed);
            if cancel == self.w(FOLD_SEEN).load(Relaxed) {
                self.w(FOLD_CREDIT).store(credit - 1, Relaxed);
                self.fold(metric, kind, value);
                return;
            }
            self.w(FOLD_SEEN).store(cancel, Relaxed);
            self.w(FOLD_CREDIT).store(0, Relaxed);
        }
        if !self.push(metric, kind, value, ts) {
            self.w(FOLD_CREDIT)
                .store(FOLD_RUN_RINGS * (self.mask + 1), Relaxed);
            self.fold(metric, kind, value);
        }
    }

    /// Producer: sums a pass-stamped event (a counter's delta, a gauge's value,
    /// a timer's recorded duration) into the thread's
    /// cell for the metric: no clock read, no queue slot, nothing shared with
    /// another core. Right after a counter init it is queued instead (see
    /// [`INIT_PENDING`]).
    #[inline(always)]
    pub fn record_summed(&self, metric: u32, kind: u8, value: u64) {
        // Only counter deltas need their place around a counter init; a gauge
        // (its kind a constant where it is set) skips the check.
        if kind != kind::GAUGE_SET
            && self.w(INIT_PENDING).load(Relaxed) != 0
            && self.queue_after_init(metric, kind, value)
        {
            return;
        }
        match self.chunk_if_any(metric) {
            Some(chunk) => Ring::sum(chunk, metric, kind, value),
            None => self.fold(metric, kind, value),
        }
    }

    /// The lean fold of a pass-stamped event (see [`Ring::write_cell`]): its
    /// place among the queued events is not kept, because the only queued
    /// events of a pass-stamped metric are a counter init and what follows it
    /// until the consumer has taken it, and the cell holds none of those (see
    /// [`INIT_PENDING`]): the consumer puts the cell first.
    #[inline(always)]
    fn sum(chunk: &Chunk, metric: u32, kind: u8, value: u64) {
        Ring::write_cell(chunk, metric, kind, value, None);
    }

    /// Sums an event into cell `metric` of `chunk` with the fewest stores that
    /// keep count, sum, min and max exact: min and max are written only when
    /// they change, a counter's last delta only with a place (`at`: the ring
    /// position the event came before, for folds from a full ring), so that an
    /// increment costs about a relaxed add.
    ///
    /// The written sign's count word is the sequence word: odd while the cell
    /// is written, two more after, so the sum of the count words is odd during
    /// any write and greater after each; the consumer copies a cell only when
    /// that sum is even and the same around the copy. One word per event
    /// carries both the count and the guard.
    #[inline(always)]
    fn write_cell(chunk: &Chunk, metric: u32, kind: u8, value: u64, at: Option<u64>) {
        let base = CHUNK_HEADER_WORDS + (metric as usize % CHUNK_CELLS) * CELL_WORDS;
        let w = |i: usize| chunk.w(base + i);
        let gauge = kind == kind::GAUGE_SET;
        let (n, sum, min, max) = match value as i64 {
            _ if gauge => (cell::POS_N, cell::POS_SUM, cell::POS_MIN, cell::POS_MAX),
            0 => (cell::ZERO_N, 0, 0, 0),
            d if d < 0 => (cell::NEG_N, cell::NEG_SUM, cell::NEG_MIN, cell::NEG_MAX),
            _ => (cell::POS_N, cell::POS_SUM, cell::POS_MIN, cell::POS_MAX),
        };
        let twice = w(n).load(Relaxed);
        w(n).store(twice | 1, Relaxed);
        fence(Release);
        let count = twice >> 1;
        if count == 0 {
            w(cell::KIND).store(kind as u64, Relaxed);
        }
        if sum != 0 {
            if count == 0 {
                w(sum).store(value, Relaxed);
                w(min).store(value, Relaxed);
                w(max).store(value, Relaxed);
                if gauge {
                    w(cell::NEG_SUM).store(0f64.to_bits(), Relaxed);
                }
            } else if gauge {
                // Two partial sums, by the count's parity (the second in the
                // negative sum's word, which a gauge has no other use for): a
                // float add waits for the previous one, and alternating halves
                // the chain that back-to-back sets wait on.
                let v = f64::from_bits(value);
                let part = if count & 1 == 0 { sum } else { cell::NEG_SUM };
                w(part).store(
                    (f64::from_bits(w(part).load(Relaxed)) + v).to_bits(),
                    Relaxed,
                );
                // A value equal to the cell's last (a gauge set again to what
                // it shows) was folded before, and min and max run for the
                // cell's life: they already cover it.
                if value != w(cell::LAST).load(Relaxed) {
                    if v < f64::from_bits(w(min).load(Relaxed)) {
                        w(min).store(value, Relaxed);
                    }
                    if v > f64::from_bits(w(max).load(Relaxed)) {
                        w(max).store(value, Relaxed);
                    }
                }
            } else {
                let v = value as i64;
                w(sum).store(
                    (w(sum).load(Relaxed) as i64).wrapping_add(v) as u64,
                    Relaxed,
                );
                if v < w(min).load(Relaxed) as i64 {
                    w(min).store(value, Relaxed);
                }
                if v > w(max).load(Relaxed) as i64 {
                    w(max).store(value, Relaxed);
                }
            }
        }
        if let Some(at) = at {
            w(cell::POS).store(at, Relaxed);
            w(cell::LAST).store(value, Relaxed);
        } else if kind != kind::COUNTER_ADD {
            // A gauge's value and a timer's last duration are what they show.
            w(cell::LAST).store(value, Relaxed);
        }
        w(n).store(twice + 2, Release);
    }

    /// Queues an event while a counter init is not yet taken; false once the
    /// consumer has taken it (or the ring is full: the event is then summed,
    /// and may be applied before the init).
    #[cold]
    #[inline(never)]
    fn queue_after_init(&self, metric: u32, kind: u8, value: u64) -> bool {
        let until = self.w(INIT_PENDING).load(Relaxed);
        if self.w(TAIL).load(Acquire).wrapping_sub(until) as i64 >= 0 {
            self.w(INIT_PENDING).store(0, Relaxed);
            return false;
        }
        self.push(metric, kind, value, || 0)
    }

    /// Producer: appends an event that cannot be folded (timer instance events,
    /// counter inits); a full ring drops it and counts the drop. False if
    /// dropped.
    #[inline(always)]
    pub fn record_unfoldable(&self, ts: u64, metric: u32, kind: u8, value: u64) -> bool {
        let pushed = self.push(metric, kind, value, || ts);
        if !pushed {
            let d = self.w(DROPPED);
            d.store(d.load(Relaxed) + 1, Relaxed);
        }
        pushed
    }

    /// Producer: a counter init was just queued; see [`INIT_PENDING`].
    pub fn init_queued(&self) {
        let head = self.w(HEAD).load(Relaxed);
        // 0 means none pending: a head of 0 (after 2^64 events) waits for 1.
        self.w(INIT_PENDING).store(head.max(1), Relaxed);
    }

    #[inline(always)]
    fn push(&self, metric: u32, kind: u8, value: u64, ts: impl FnOnce() -> u64) -> bool {
        let head = self.w(HEAD).load(Relaxed);
        let tail = self.w(CACHED_TAIL).load(Relaxed);
        if head.wrapping_sub(tail) > self.mask {
            let tail = self.w(TAIL).load(Acquire);
            self.w(CACHED_TAIL).store(tail, Relaxed);
            if head.wrapping_sub(tail) > self.mask {
                return false;
            }
        }
        let at = EVENTS + (head & self.mask) as usize * EVENT_WORDS;
        self.w(at).store(ts(), Relaxed);
        self.w(at + 1)
            .store(metric as u64 | (kind as u64) << 32, Relaxed);
        self.w(at + 2).store(value, Relaxed);
        self.w(HEAD).store(head.wrapping_add(1), Release);
        true
    }

    /// Folds an event from a full ring (or a pass-stamped one whose chunk
    /// does not exist yet), keeping its place before the next queued event.
    #[inline(never)]
    fn fold(&self, metric: u32, kind: u8, value: u64) {
        let at = self.w(HEAD).load(Relaxed);
        Ring::write_cell(self.chunk(metric), metric, kind, value, Some(at));
    }

    /// Consumer: ends the producer's current folding run (see [`FOLD_CANCEL`]).
    pub fn cancel_folding(&self) {
        let c = self.w(FOLD_CANCEL);
        c.store(c.load(Relaxed) + 1, Relaxed);
    }

    /// Owner: no more events will come (the thread is exiting).
    pub fn close(&self) {
        self.w(CLOSED).store(1, Release);
    }

    pub fn is_closed(&self) -> bool {
        self.w(CLOSED).load(Acquire) != 0
    }

    pub fn dropped(&self) -> u64 {
        self.w(DROPPED).load(Relaxed)
    }

    /// Consumer: calls `f` with the position and contents of every event
    /// published so far, then frees them.
    pub fn drain(&self, mut f: impl FnMut(u64, RawEvent)) -> usize {
        let tail = self.w(TAIL).load(Relaxed);
        let head = self.w(HEAD).load(Acquire);
        let n = head.wrapping_sub(tail);
        for i in 0..n {
            let pos = tail.wrapping_add(i);
            let at = EVENTS + (pos & self.mask) as usize * EVENT_WORDS;
            let meta = self.w(at + 1).load(Relaxed);
            f(
                pos,
                RawEvent {
                    ts: self.w(at).load(Relaxed),
                    metric: meta as u32,
                    kind: (meta >> 32) as u8,
                    value: self.w(at + 2).load(Relaxed),
                },
            );
        }
        if n > 0 {
            // Only on news: a store to this line costs the producer a miss when
            // it next reads the fold cancels beside it.
            self.w(TAIL).store(head, Release);
        }
        n as usize
    }

    /// Consumer: true when no published event is left.
    pub fn is_drained(&self) -> bool {
        self.w(HEAD).load(Acquire) == self.w(TAIL).load(Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn drain_all(r: &Ring) -> Vec<RawEvent> {
        let mut v = Vec::new();
        r.drain(|_, e| v.push(e));
        v
    }

    #[test]
    fn events_come_out_in_order_and_wrap() {
        let r = Ring::new(16);
        for round in 0..5u64 {
            for i in 0..10u64 {
                r.record(7, kind::COUNTER_ADD, i, || round * 100 + i);
            }
            let got = drain_all(&r);
            assert_eq!(got.len(), 10);
            assert_eq!(
                got[3],
                RawEvent {
                    ts: round * 100 + 3,
                    metric: 7,
                    kind: kind::COUNTER_ADD,
                    value: 3
                }
            );
        }
        assert!(r.is_drained());
        assert_eq!(r.chunks().count(), 0);
    }

    #[test]
    fn while_a_counter_init_is_pending_deltas_queue_and_gauge_sets_are_summed() {
        let r = Ring::new(16);
        r.record_unfoldable(5, 1, kind::COUNTER_INIT, 10);
        r.init_queued();
        r.record_summed(1, kind::COUNTER_ADD, 3);
        r.record_summed(2, kind::GAUGE_SET, 2.5f64.to_bits());
        // The delta queued behind the init (time 0: stamped when taken), the
        // gauge set in its cell.
        let kinds: Vec<_> = drain_all(&r)
            .iter()
            .map(|e| (e.metric, e.kind, e.ts))
            .collect();
        assert_eq!(
            kinds,
            vec![(1, kind::COUNTER_INIT, 5), (1, kind::COUNTER_ADD, 0)]
        );
        let c = r.chunk(2).read_cell(2).unwrap();
        assert_eq!((c[cell::POS_N], f64::from_bits(c[cell::LAST])), (1, 2.5));
        // Once the init is taken, deltas are summed again.
        r.record_summed(1, kind::COUNTER_ADD, 4);
        assert!(drain_all(&r).is_empty());
        assert_eq!(r.chunk(1).read_cell(1).unwrap()[cell::POS_SUM], 4);
    }

    #[test]
    fn a_gauge_set_again_to_its_value_keeps_min_max_sum_and_count_exact() {
        let r = Ring::new(16);
        let sets = [2.0f64, 2.0, 7.0, 7.0, -1.0, -1.0, 3.0];
        for v in sets {
            r.record_summed(9, kind::GAUGE_SET, v.to_bits());
        }
        let c = r.chunk(9).read_cell(9).unwrap();
        let f = |k: usize| f64::from_bits(c[k]);
        assert_eq!(
            (
                c[cell::POS_N],
                f(cell::POS_SUM) + f(cell::NEG_SUM),
                f(cell::POS_MIN),
                f(cell::POS_MAX),
                f(cell::LAST)
            ),
            (7, sets.iter().sum::<f64>(), -1.0, 7.0, 3.0)
        );
    }

    #[test]
    fn a_full_ring_folds_per_metric_and_sign_exactly() {
        let r = Ring::new(16);
        for i in 0..16u64 {
            r.record(1, kind::COUNTER_ADD, 1, || i);
        }
        let stamp = || -> u64 { panic!("a folded event needs no stamp") };
        for d in [5i64, 2, 0, 9, -4, 3, -1] {
            r.record(70, kind::COUNTER_ADD, d as u64, stamp);
        }
        r.record(3, kind::GAUGE_SET, 2.5f64.to_bits(), stamp);
        r.record(3, kind::GAUGE_SET, (-1.0f64).to_bits(), stamp);
        let chunks: Vec<_> = r.chunks().map(|(i, _)| i).collect();
        assert_eq!(chunks, vec![0, 1]);
        let c = r.chunk(70).read_cell(70 % CHUNK_CELLS).unwrap();
        let i = |k: usize| c[k] as i64;
        assert_eq!(
            (
                i(cell::POS_N),
                i(cell::POS_SUM),
                i(cell::POS_MIN),
                i(cell::POS_MAX)
            ),
            (4, 19, 2, 9)
        );
        assert_eq!(
            (
                i(cell::NEG_N),
                i(cell::NEG_SUM),
                i(cell::NEG_MIN),
                i(cell::NEG_MAX)
            ),
            (2, -5, -4, -1)
        );
        assert_eq!((i(cell::ZERO_N), c[cell::POS], i(cell::LAST)), (1, 16, -1));
        let g = r.chunk(3).read_cell(3).unwrap();
        let f = |k: usize| f64::from_bits(g[k]);
        assert_eq!(
            (
                g[cell::POS_N],
                f(cell::POS_SUM) + f(cell::NEG_SUM),
                f(cell::POS_MIN),
                f(cell::POS_MAX)
            ),
            (2, 1.5, -1.0, 2.5)
        );
        assert_eq!(r.chunk(3).read_cell(4), None);
        assert_eq!(
            r.chunk(3).cell_seq(3),
            4,
            "two positive folds: twice the count"
        );
        assert_eq!(drain_all(&r).len(), 16);
        // The ring has room again, but the producer keeps folding for a while.
        let folded = |r: &Ring| r.chunk(1).read_cell(1).map_or(0, |c| c[cell::POS_N]);
        r.record(1, kind::COUNTER_ADD, 1, stamp);
        assert_eq!((folded(&r), drain_all(&r).len()), (1, 0));
        let credit = FOLD_RUN_RINGS * 16 - 9; // the first fold set it, 8 used it
        for _ in 0..credit {
            r.record(1, kind::COUNTER_ADD, 1, stamp);
        }
        r.record(1, kind::COUNTER_ADD, 1, || 1000);
        assert_eq!((folded(&r), drain_all(&r).len()), (1 + credit, 1));
        // A cancelled run queues again at once.
        for i in 0..16 {
            r.record_unfoldable(i, 1, kind::TIMER_START, 1);
        }
        r.record(1, kind::COUNTER_ADD, 1, stamp); // full: starts a run
        assert_eq!(drain_all(&r).len(), 16);
        r.record(1, kind::COUNTER_ADD, 1, stamp); // still in the run
        r.cancel_folding();
        r.record(1, kind::COUNTER_ADD, 1, || 2000);
        assert_eq!(drain_all(&r).len(), 1);
        // Unfoldable events queue while there is room and are dropped after.
        for i in 0..16 {
            r.record_unfoldable(i, 1, kind::TIMER_START, 1);
        }
        assert_eq!(r.dropped(), 0);
        r.record_unfoldable(300, 1, kind::TIMER_START, 1);
        assert_eq!(r.dropped(), 1);
    }

    #[test]
    fn a_concurrent_producer_never_loses_or_duplicates() {
        use std::sync::Arc;
        let r = Arc::new(Ring::new(64));
        let total = 200_000u64;
        let p = {
            let r = r.clone();
            std::thread::spawn(move || {
                for i in 0..total {
                    r.record((i % 100) as u32, kind::COUNTER_ADD, 1, || i);
                }
                r.close();
            })
        };
        let mut seen = 0u64;
        let mut taken = vec![0u64; 100];
        loop {
            let closed = r.is_closed();
            seen += r.drain(|_, _| {}) as u64;
            for (ci, chunk) in r.chunks() {
                for k in 0..CHUNK_CELLS {
                    let m = ci * CHUNK_CELLS + k;
                    if let Some(c) = chunk.read_cell(k) {
                        seen += c[cell::POS_N] - taken[m];
                        taken[m] = c[cell::POS_N];
                    }
                }
            }
            if closed && r.is_drained() {
                break;
            }
        }
        p.join().unwrap();
        // The last pass after `closed` may have missed a cell read that raced
        // with the last fold; read once more.
        for (ci, chunk) in r.chunks() {
            for k in 0..CHUNK_CELLS {
                if let Some(c) = chunk.read_cell(k) {
                    seen += c[cell::POS_N] - taken[ci * CHUNK_CELLS + k];
                }
            }
        }
        assert_eq!(seen, total);
        assert_eq!(r.dropped(), 0);
    }
}
