//! The processing side: takes every thread's events and folded summaries, puts
//! them in time order and applies them to the metrics' states. Runs on the
//! processing thread (or on a caller asking for a fresh dump), never on a
//! measuring point.

use crate::dump::{Dump, Metric};
use crate::incremental::Params;
use crate::metric::{GaugeState, State, TimerOutcome, TimerState};
use crate::registry::{Kind, Registry};
use crate::ring::{cell, kind, RawEvent, Ring, CELL_WORDS, CHUNK_CELLS};
use std::collections::BTreeMap;
use std::sync::Arc;

/// One thing to apply: a single event (`n == 0`) or a folded summary.
#[derive(Clone, Copy, Debug)]
struct Item {
    ts: u64,
    /// Ring index and place within the ring (2 × position + 1 for an event,
    /// 2 × position for a run folded before the event at that position):
    /// the order among equal stamps.
    ring: u32,
    place: u64,
    metric: u32,
    kind: u8,
    value: u64,
    n: u64,
    sum: u64,
    min: u64,
    max: u64,
}

/// What the aggregator has applied from one fold cell: its counts and sums
/// when last read.
#[derive(Clone, Copy, Default)]
struct Taken {
    pos_n: u64,
    pos_sum: u64,
    neg_n: u64,
    neg_sum: u64,
    zero_n: u64,
}

impl Taken {
    /// The cell's version (see `Chunk::cell_seq`) when it was read: twice
    /// its counts.
    fn seq(&self) -> u64 {
        self.pos_n
            .wrapping_add(self.neg_n)
            .wrapping_add(self.zero_n)
            .wrapping_mul(2)
    }
}

struct ChunkTaken {
    cells: [Taken; CHUNK_CELLS],
}

struct Cursor {
    ring: Arc<Ring>,
    /// Newest time taken from this ring: one thread's events keep their order
    /// whatever their stamps.
    last_ts: u64,
    taken: Vec<Option<Box<ChunkTaken>>>,
}

/// Library-wide counts, reported as the `hrts-stats.*` gauges.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Health {
    pub dropped_events: u64,
    pub folded_events: u64,
    pub stops_without_start: u64,
    pub timed_out_instances: u64,
}

const INTERNAL: [&str; 4] = [
    "hrts-stats.dropped-events",
    "hrts-stats.folded-events",
    "hrts-stats.timer-stops-without-start",
    "hrts-stats.timer-instances-timed-out",
];

pub struct Aggregator {
    pub params: Params,
    pub idle_ns: u64,
    states: Vec<Option<State>>,
    cursors: Vec<Cursor>,
    scratch: Vec<Item>,
    /// Drops counted by rings already retired.
    retired: Health,
    health: Health,
    internal: Option<[u32; 4]>,
    /// Metrics applied since the last dump (for publishing only what changed).
    changed: Vec<u32>,
    is_changed: Vec<bool>,
}

impl Aggregator {
    pub fn new(params: Params, idle_ns: u64) -> Aggregator {
        Aggregator {
            params,
            idle_ns,
            states: Vec::new(),
            cursors: Vec::new(),
            scratch: Vec::new(),
            retired: Health::default(),
            health: Health::default(),
            internal: None,
            changed: Vec::new(),
            is_changed: Vec::new(),
        }
    }

    /// Forgets every metric's statistics (a restart), keeping the rings; what
    /// is still queued from before is discarded.
    pub fn reset(&mut self) {
        let mut discard = Vec::new();
        for c in &mut self.cursors {
            c.ring.drain(|_, _| {});
            take_cells(c, 0, &mut discard);
            c.ring.cancel_folding();
        }
        // Dropped and folded counts stay process totals; the rest restarts.
        self.states.clear();
        self.take_changed();
        self.health = Health {
            folded_events: self.health.folded_events,
            ..Health::default()
        };
    }

    pub fn adopt(&mut self, rings: impl IntoIterator<Item = Arc<Ring>>) {
        for ring in rings {
            self.cursors.push(Cursor {
                ring,
                last_ts: 0,
                taken: Vec::new(),
            });
        }
    }

    /// Takes everything queued and folded, applies it in time order; returns
    /// how many queued events it took (folded runs are not counted: they wait
    /// losslessly in their cells, so finding only those is no reason to keep
    /// the processing thread awake). `now` stamps folded runs that no later
    /// queued event bounds.
    pub fn pass(&mut self, registry: &Registry, now: u64) -> u64 {
        let mut scratch = std::mem::take(&mut self.scratch);
        scratch.clear();
        let mut retire = Vec::new();
        let mut queued = 0;
        let mut folded = Vec::new();
        for (ci, c) in self.cursors.iter_mut().enumerate() {
            let closed = c.ring.is_closed();
            // Cells before the queue: a thread that has queued a counter init
            // sums nothing until the consumer has taken the init (the drain
            // below), so a cell read first holds only what came before the
            // init, and its place puts it there.
            folded.clear();
            take_cells(c, ci as u32, &mut folded);
            let first = scratch.len();
            let last_ts = &mut c.last_ts;
            queued += c.ring.drain(|pos, e: RawEvent| {
                // Time 0: a pass-stamped event queued after a counter init,
                // stamped below.
                if e.ts != 0 {
                    *last_ts = (*last_ts).max(e.ts);
                }
                scratch.push(Item {
                    ts: if e.ts == 0 { 0 } else { *last_ts },
                    ring: ci as u32,
                    place: pos.wrapping_mul(2).wrapping_add(1),
                    metric: e.metric,
                    kind: e.kind,
                    value: e.value,
                    n: 0,
                    sum: 0,
                    min: 0,
                    max: 0,
                });
            }) as u64;
            let events = first..scratch.len();
            // Unstamped events take the time of the next stamped one, else the pass's.
            let mut next_ts = now.max(c.last_ts);
            for e in scratch[events.clone()].iter_mut().rev() {
                if e.ts == 0 {
                    e.ts = next_ts;
                } else {
                    next_ts = e.ts;
                }
            }
            for mut run in folded.drain(..) {
                // Stamp a run with the first queued event of its metric after it
                // (a pass-stamped counter's init), if taken now; a summed cell
                // keeps no place, so it is before all of them.
                let next = scratch[events.clone()]
                    .iter()
                    .find(|e| e.metric == run.metric && e.place > run.place);
                run.ts = next.map_or(now.max(c.last_ts), |e| e.ts);
                self.health.folded_events += run.n;
                scratch.push(run);
            }
            if closed && c.ring.is_drained() {
                retire.push(ci);
            }
        }
        scratch.sort_unstable_by_key(|i| (i.ts, i.ring, i.place));
        for item in &scratch {
            self.apply(item, registry);
        }
        for ci in retire.into_iter().rev() {
            let c = self.cursors.swap_remove(ci);
            self.retired.dropped_events += c.ring.dropped();
        }
        self.scratch = scratch;
        queued
    }

    fn state(&mut self, id: u32, registry: &Registry) -> Option<&mut State> {
        let i = id as usize;
        if i >= self.states.len() {
            self.states.resize_with(i + 1, || None);
        }
        if self.states[i].is_none() {
            let meta = registry.meta(id)?;
            self.states[i] = Some(match meta.kind {
                Kind::Counter => State::Counter(Box::default()),
                Kind::Gauge => State::Gauge(GaugeState::default()),
                Kind::Timer => State::Timer(TimerState::default()),
            });
        }
        self.states[i].as_mut()
    }

    fn apply(&mut self, it: &Item, registry: &Registry) {
        let (p, idle) = (self.params, self.idle_ns);
        let m = it.metric as usize;
        if m >= self.is_changed.len() {
            self.is_changed.resize(m + 1, false);
        }
        if !std::mem::replace(&mut self.is_changed[m], true) {
            self.changed.push(it.metric);
        }
        let mut outcome = TimerOutcome::Ok;
        match (self.state(it.metric, registry), it.kind) {
            (Some(State::Counter(c)), kind::COUNTER_INIT) => c.init(it.value as i64, it.ts, &p),
            (Some(State::Counter(c)), kind::COUNTER_ADD) if it.n == 0 => {
                c.add(it.value as i64, it.ts, &p)
            }
            (Some(State::Counter(c)), kind::COUNTER_ADD) => {
                c.add_batch(it.n, it.sum as i64, it.min as i64, it.max as i64, it.ts, &p)
            }
            (Some(State::Gauge(g)), kind::GAUGE_SET) if it.n == 0 => {
                g.set(f64::from_bits(it.value), it.ts, &p)
            }
            (Some(State::Gauge(g)), kind::GAUGE_SET) => g.set_batch(
                it.n,
                f64::from_bits(it.sum),
                f64::from_bits(it.min),
                f64::from_bits(it.max),
                f64::from_bits(it.value),
                it.ts,
                &p,
            ),
            (Some(State::Timer(t)), kind::TIMER_START) => t.start(it.value, it.ts),
            (Some(State::Timer(t)), kind::TIMER_STOP) => {
                outcome = t.stop(it.value, it.ts, idle, &p)
            }
            (Some(State::Timer(t)), kind::TIMER_HEARTBEAT) => {
                outcome = t.heartbeat(it.value, it.ts, idle)
            }
            (Some(State::Timer(t)), kind::TIMER_DISCARD) => t.discard(it.value),
            (Some(State::Timer(t)), kind::TIMER_RECORD) if it.n == 0 => {
                t.record(it.value, it.ts, &p)
            }
            (Some(State::Timer(t)), kind::TIMER_RECORD) => t.record_batch(
                it.n,
                it.sum as i64 as f64,
                it.min,
                it.max,
                it.value,
                it.ts,
                &p,
            ),
            // Unknown ids or kinds can only come from a damaged queue (a foreign
            // writer): they are ignored rather than trusted.
            _ => {}
        }
        match outcome {
            TimerOutcome::Ok => {}
            TimerOutcome::NotStarted => {
                self.health.stops_without_start += (it.kind == kind::TIMER_STOP) as u64
            }
            TimerOutcome::TimedOut => self.health.timed_out_instances += 1,
        }
    }

    /// Queues still attached (threads alive, or with events not yet taken).
    pub fn queues(&self) -> usize {
        self.cursors.len()
    }

    /// Ends every producer's folding run (see `ring::FOLD_CANCEL`).
    pub fn cancel_folding(&self) {
        for c in &self.cursors {
            c.ring.cancel_folding();
        }
    }

    /// Drops timer instances idle for longer than the idle timeout.
    pub fn sweep(&mut self, now: u64) {
        for s in self.states.iter_mut().flatten() {
            if let State::Timer(t) = s {
                if t.running() > 0 {
                    self.health.timed_out_instances += t.sweep(now, self.idle_ns) as u64;
                }
            }
        }
    }

    /// Timer instances currently running, over all timers.
    pub fn running_instances(&self) -> usize {
        self.states
            .iter()
            .flatten()
            .map(|s| match s {
                State::Timer(t) => t.running(),
                _ => 0,
            })
            .sum()
    }

    pub fn health(&self) -> Health {
        let mut h = self.health;
        h.dropped_events = self.retired.dropped_events;
        for c in &self.cursors {
            h.dropped_events += c.ring.dropped();
        }
        h
    }

    /// A dump at `now`; the library's own gauges are set first.
    pub fn dump(&mut self, now: u64, registry: &Registry) -> Dump {
        let ids = *self
            .internal
            .get_or_insert_with(|| INTERNAL.map(|name| registry.internal(name, Kind::Gauge)));
        let h = self.health();
        let values = [
            h.dropped_events,
            h.folded_events,
            h.stops_without_start,
            h.timed_out_instances,
        ];
        let p = self.params;
        for (id, v) in ids.into_iter().zip(values) {
            if let Some(State::Gauge(g)) = self.state(id, registry) {
                g.set(v as f64, now, &p);
            }
        }
        self.take_changed();
        let all = 0..self.states.len() as u32;
        self.dump_of(all, now, registry)
    }

    /// A dump of only the metrics that events changed since the last dump of
    /// either kind (statistics that merely age, such as interval counts, are
    /// refreshed by the next full dump).
    pub fn dump_changed(&mut self, now: u64, registry: &Registry) -> Dump {
        let ids = self.take_changed();
        self.dump_of(ids.into_iter(), now, registry)
    }

    fn take_changed(&mut self) -> Vec<u32> {
        for &id in &self.changed {
            self.is_changed[id as usize] = false;
        }
        std::mem::take(&mut self.changed)
    }

    fn dump_of(&self, ids: impl Iterator<Item = u32>, now: u64, registry: &Registry) -> Dump {
        let p = self.params;
        let mut metrics = BTreeMap::new();
        for id in ids {
            let Some(Some(s)) = self.states.get(id as usize) else {
                continue;
            };
            let dumped: Option<Metric> = match s {
                State::Counter(c) => c.dump(now, &p),
                State::Gauge(g) => g.dump(now, &p),
                State::Timer(t) => t.dump(now, &p),
            };
            if let (Some(m), Some(meta)) = (dumped, registry.meta(id)) {
                metrics.insert(meta.name.to_string(), m);
            }
        }
        Dump {
            timestamp: now,
            metrics,
        }
    }
}

/// Turns what is new in each fold cell of `c` into summary items (stamped by
/// the caller). A cell whose sequence word is unchanged since the last take has
/// nothing new; one being written (odd) is looked at again next pass.
fn take_cells(c: &mut Cursor, ring: u32, out: &mut Vec<Item>) {
    for (ci, chunk) in c.ring.chunks() {
        if c.taken.len() <= ci {
            c.taken.resize_with(ci + 1, || None);
        }
        let taken = c.taken[ci].get_or_insert_with(|| {
            Box::new(ChunkTaken {
                cells: [Taken::default(); CHUNK_CELLS],
            })
        });
        for (k, t) in taken.cells.iter_mut().enumerate() {
            if chunk.cell_seq(k) == t.seq() {
                continue;
            }
            if let Some(w) = chunk.read_cell(k) {
                take_cell(((ci * CHUNK_CELLS) + k) as u32, ring, &w, t, out);
            }
        }
    }
}

fn take_cell(metric: u32, ring: u32, w: &[u64; CELL_WORDS], t: &mut Taken, out: &mut Vec<Item>) {
    let kind = w[cell::KIND] as u8;
    let float = kind == kind::GAUGE_SET;
    let mut push = |n: u64, sum: u64, min: u64, max: u64| {
        out.push(Item {
            ts: 0,
            ring,
            place: w[cell::POS].wrapping_mul(2),
            metric,
            kind,
            value: w[cell::LAST],
            n,
            sum,
            min,
            max,
        })
    };
    // A gauge's sum is in two parts (see `cell`); `Taken` keeps their total.
    let pos_sum = if float {
        (f64::from_bits(w[cell::POS_SUM]) + f64::from_bits(w[cell::NEG_SUM])).to_bits()
    } else {
        w[cell::POS_SUM]
    };
    // A cell's sums run on (wrapping) for as long as its thread lives; a pass's
    // share of positive deltas that comes out negative (or of negative deltas
    // that comes out positive) went past the end of the range: the counter
    // saturates there, as one event at a time would have taken it.
    if w[cell::POS_N] > t.pos_n {
        let sum = if float {
            (f64::from_bits(pos_sum) - f64::from_bits(t.pos_sum)).to_bits()
        } else {
            match w[cell::POS_SUM].wrapping_sub(t.pos_sum) as i64 {
                s if s < 0 => i64::MAX as u64,
                s => s as u64,
            }
        };
        push(
            w[cell::POS_N] - t.pos_n,
            sum,
            w[cell::POS_MIN],
            w[cell::POS_MAX],
        );
    }
    if w[cell::NEG_N] > t.neg_n {
        let sum = match w[cell::NEG_SUM].wrapping_sub(t.neg_sum) as i64 {
            s if s >= 0 => i64::MIN as u64,
            s => s as u64,
        };
        push(
            w[cell::NEG_N] - t.neg_n,
            sum,
            w[cell::NEG_MIN],
            w[cell::NEG_MAX],
        );
    }
    if w[cell::ZERO_N] > t.zero_n {
        push(w[cell::ZERO_N] - t.zero_n, 0, 0, 0);
    }
    *t = Taken {
        pos_n: w[cell::POS_N],
        pos_sum,
        neg_n: w[cell::NEG_N],
        neg_sum: w[cell::NEG_SUM],
        zero_n: w[cell::ZERO_N],
    };
}
