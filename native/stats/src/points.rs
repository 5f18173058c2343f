//! Measuring points: handles to one metric whose methods queue an event on the
//! calling thread's ring. Lock-free, allocation-free after the thread's first
//! measurement, and never waiting for another thread. While the instance is
//! stopped they do nothing.
//!
//! Counter deltas, gauge values and timers' recorded durations are summed into
//! the thread's cell for the metric and stamped by the processing pass that
//! takes them, unless the configuration lists the metric in `exact-stamps` (see
//! [`ExactStamps`](crate::config::ExactStamps)); timer instance events always
//! take precise stamps.

use crate::instance::Instance;
use crate::local::{ring_for, with_ring};
use crate::registry::Kind;
use crate::ring::kind;
use crate::shared::timers;
use hrts_core::{Error, ErrorKind, Result};
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;

/// The instance id of a timer's default instance.
pub const DEFAULT_INSTANCE: u64 = u64::MAX;

/// A counter's delta, a gauge's value or a timer's recorded duration. One
/// flag byte says whether it takes the fast path: a running instance's
/// pass-stamped metric.
#[inline(always)]
pub(crate) fn emit(inner: &Instance, id: u32, kind: u8, value: u64) {
    emit_stamped(inner, id, kind, value, || inner.now());
}

/// [`emit`] whose stamp, if the metric is exact, comes from `stamp`.
#[inline(always)]
fn emit_stamped(inner: &Instance, id: u32, kind: u8, value: u64, stamp: impl FnOnce() -> u64) {
    if inner.flags(id) != 0 {
        return emit_flagged(inner, id, kind, value, stamp);
    }
    // No closure on this path: the fold is then inlined into the caller.
    match ring_for(inner) {
        Some(ring) => ring.record_summed(id, kind, value),
        None => inner.count_lost(),
    }
}

/// An exact metric's event, or one that met a stopped instance (or a start or
/// stop under way).
#[inline(never)]
fn emit_flagged(inner: &Instance, id: u32, kind: u8, value: u64, stamp: impl FnOnce() -> u64) {
    if !inner.enabled() {
        return;
    }
    let Some(ring) = ring_for(inner) else {
        return inner.count_lost();
    };
    if inner.is_exact(id) {
        ring.record(id, kind, value, stamp);
    } else {
        ring.record_summed(id, kind, value);
    }
}

#[inline(always)]
pub(crate) fn emit_timer(inner: &Instance, id: u32, kind: u8, instance: u64) {
    if !inner.enabled() {
        return;
    }
    let ts = inner.now();
    with_ring(inner, |r| {
        r.record_unfoldable(ts, id, kind, instance);
    });
}

/// A counter: a signed 64-bit integer changed by deltas.
#[derive(Clone)]
pub struct Counter {
    inner: Arc<Instance>,
    id: u32,
}

impl Counter {
    pub(crate) fn new(inner: Arc<Instance>, id: u32) -> Counter {
        Counter { inner, id }
    }

    /// Changes the counter by `delta` (negative to decrease).
    #[inline(always)]
    pub fn add(&self, delta: i64) {
        emit(&self.inner, self.id, kind::COUNTER_ADD, delta as u64);
    }

    #[inline(always)]
    pub fn increment(&self) {
        self.add(1);
    }

    #[inline(always)]
    pub fn decrement(&self) {
        self.add(-1);
    }

    /// Sets the counter to `value` and restarts its statistics from it.
    pub fn init(&self, value: i64) {
        // Never folded: an init between folded deltas would reorder them.
        if self.inner.enabled() {
            let ts = self.inner.now();
            let summed = !self.inner.is_exact(self.id);
            with_ring(&self.inner, |r| {
                if r.record_unfoldable(ts, self.id, kind::COUNTER_INIT, value as u64) && summed {
                    r.init_queued();
                }
            });
        }
    }
}

/// A gauge: a value that is set.
#[derive(Clone)]
pub struct Gauge {
    inner: Arc<Instance>,
    id: u32,
}

impl Gauge {
    pub(crate) fn new(inner: Arc<Instance>, id: u32) -> Gauge {
        Gauge { inner, id }
    }

    /// Sets the gauge. NaN is an error (it would poison every statistic);
    /// infinities are kept.
    #[inline(always)]
    pub fn set(&self, value: f64) -> Result<()> {
        if value.is_nan() {
            return Err(nan());
        }
        emit(&self.inner, self.id, kind::GAUGE_SET, value.to_bits());
        Ok(())
    }
}

#[cold]
pub(crate) fn nan() -> Error {
    Error::new(
        ErrorKind::InvalidArgument,
        "a gauge cannot be set to NaN; the value was ignored",
    )
}

/// A timer: measures durations, by instance or by scope.
#[derive(Clone)]
pub struct Timer {
    inner: Arc<Instance>,
    id: u32,
}

impl Timer {
    pub(crate) fn new(inner: Arc<Instance>, id: u32) -> Timer {
        Timer { inner, id }
    }

    /// Starts (or restarts) the default instance.
    #[inline(always)]
    pub fn start(&self) {
        self.start_instance(DEFAULT_INSTANCE);
    }

    /// Stops the default instance and records its duration.
    #[inline(always)]
    pub fn stop(&self) {
        self.stop_instance(DEFAULT_INSTANCE);
    }

    /// Starts (or restarts) instance `id`; instances overlap freely.
    #[inline(always)]
    pub fn start_instance(&self, instance: u64) {
        emit_timer(&self.inner, self.id, kind::TIMER_START, instance);
    }

    /// Stops instance `id` and records its duration. A stop for an instance
    /// that is not running (never started, already stopped, discarded or idle
    /// past the timeout) records nothing and is counted in
    /// `hrts-stats.timer-stops-without-start` (or `…-instances-timed-out`).
    #[inline(always)]
    pub fn stop_instance(&self, instance: u64) {
        emit_timer(&self.inner, self.id, kind::TIMER_STOP, instance);
    }

    /// Drops instance `id` without recording anything.
    pub fn discard_instance(&self, instance: u64) {
        emit_timer(&self.inner, self.id, kind::TIMER_DISCARD, instance);
    }

    /// Tells the library instance `id` is alive, so the idle timeout counts
    /// from now.
    pub fn heartbeat_instance(&self, instance: u64) {
        emit_timer(&self.inner, self.id, kind::TIMER_HEARTBEAT, instance);
    }

    /// Measures a span on this thread: the duration is taken when the scope is
    /// stopped or dropped, and only then queued (one event instead of two).
    /// A scope idle for longer than the idle timeout records nothing, as an
    /// instance would; [`TimerScope::heartbeat`] keeps it alive.
    #[inline(always)]
    pub fn scope(&self) -> TimerScope<'_> {
        let enabled = self.inner.enabled();
        let now = if enabled { self.inner.now() } else { 0 };
        TimerScope {
            timer: self,
            start: now,
            alive: now,
            done: !enabled,
        }
    }

    /// Records a duration measured elsewhere (nanoseconds). Like a counter's
    /// delta, it is summed into the thread's cell and stamped by the pass that
    /// takes it, unless the timer is listed in `exact-stamps`.
    #[inline(always)]
    pub fn record(&self, duration_ns: u64) {
        emit(&self.inner, self.id, kind::TIMER_RECORD, duration_ns);
    }
}

impl Timer {
    /// Starts (or restarts) instance `instance` of this timer in the statistics
    /// segment, so that any process of the user may stop it: the span is
    /// measured on the shared timeline. Errors: the instance is not published
    /// (statistics not started, or `shared-memory.enable` is off), or the
    /// segment's table of running instances is full.
    pub fn start_shared(&self, instance: u64) -> Result<()> {
        timer_start(&self.inner, self.id, instance)
    }

    /// Stops instance `instance` started by any process (see
    /// [`start_shared`](Timer::start_shared)) and records its duration in this
    /// process's timer. Returns the duration, or `None` if no process started
    /// that instance, it was stopped already, or it was idle past this
    /// instance's timer idle timeout.
    pub fn stop_shared(&self, instance: u64) -> Result<Option<u64>> {
        timer_stop(&self.inner, self.id, instance, true)
    }

    /// Drops a shared instance without recording it; `false` if none was running.
    pub fn discard_shared(&self, instance: u64) -> Result<bool> {
        timer_stop(&self.inner, self.id, instance, false).map(|d| d.is_some())
    }
}

/// A running span of a [`Timer`]; records its duration when dropped.
#[must_use = "a timer scope measures until it is dropped"]
pub struct TimerScope<'a> {
    timer: &'a Timer,
    start: u64,
    alive: u64,
    done: bool,
}

impl TimerScope<'_> {
    /// Marks the span alive now (see [`Timer::scope`]).
    pub fn heartbeat(&mut self) {
        if !self.done {
            self.alive = self.timer.inner.now();
        }
    }

    /// Ends the span and records its duration.
    pub fn stop(mut self) {
        self.finish();
    }

    /// Ends the span without recording it.
    pub fn discard(mut self) {
        self.done = true;
    }

    #[inline(always)]
    fn finish(&mut self) {
        if self.done {
            return;
        }
        self.done = true;
        let inner = &self.timer.inner;
        if !inner.enabled() {
            return;
        }
        let now = inner.now();
        if now.saturating_sub(self.alive) > inner.control.idle_ns.load(Relaxed) {
            return;
        }
        let id = self.timer.id;
        let duration = now.saturating_sub(self.start);
        // The duration is exact either way; the event's time is the pass's,
        // or, for a timer in `exact-stamps`, this stop's.
        emit_stamped(inner, id, kind::TIMER_RECORD, duration, || now);
    }
}

impl Drop for TimerScope<'_> {
    #[inline(always)]
    fn drop(&mut self) {
        self.finish();
    }
}

macro_rules! debug_by_name {
    ($($ty:ident),*) => {$(
        impl std::fmt::Debug for $ty {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                let name = self.inner.registry.meta(self.id).map_or("?", |m| &m.name);
                f.debug_tuple(stringify!($ty)).field(&name).finish()
            }
        }
    )*};
}
debug_by_name!(Counter, Gauge, Timer);

/// A metric as a plain number, for the C ABI and JNI (which cannot hold Rust
/// handles on a hot path): the metric's id and kind packed into a non-zero
/// `u64`. Measuring through an id of the wrong kind, or one from another
/// instance, does nothing harmful: the event is ignored or lands on that id's
/// metric of the same kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct MetricId {
    pub(crate) id: u32,
    pub(crate) kind: Kind,
}

impl MetricId {
    pub fn to_bits(self) -> u64 {
        let k = match self.kind {
            Kind::Counter => 1u64,
            Kind::Gauge => 2,
            Kind::Timer => 3,
        };
        k << 32 | self.id as u64
    }

    /// The id `to_bits` gave, or `None` for a number no id packs to.
    pub fn from_bits(bits: u64) -> Option<MetricId> {
        let kind = match bits >> 32 {
            1 => Kind::Counter,
            2 => Kind::Gauge,
            3 => Kind::Timer,
            _ => return None,
        };
        let id = bits as u32;
        // Below the registry's limit, so that a measuring point can index by it.
        ((id as usize) < crate::registry::MAX_METRICS).then_some(MetricId { id, kind })
    }

    pub fn kind(self) -> Kind {
        self.kind
    }
}

/// What a timer event does to an instance.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimerOp {
    Start,
    Stop,
    Discard,
    Heartbeat,
}

pub(crate) fn timer_of(m: MetricId) -> Result<u32> {
    if m.kind == Kind::Timer {
        Ok(m.id)
    } else {
        Err(Error::new(
            ErrorKind::InvalidArgument,
            format!("metric id is a {}, not a timer", m.kind.name()),
        ))
    }
}

// ------------------------------------------------ shared timer instances

// A timer instance started in one process and stopped in another: the start
// stamp waits in the statistics segment's table (`shared::timers`).

fn not_published(what: &str) -> Error {
    Error::new(
        ErrorKind::InvalidArgument,
        format!(
            "{what}: this statistics instance does not publish to shared memory (start it first, \
             with \"shared-memory\": {{\"enable\": true}}, the default)"
        ),
    )
}

fn timer_key(inner: &Instance, id: u32, instance: u64) -> Result<u64> {
    let meta = inner
        .registry
        .meta(id)
        .ok_or_else(|| Error::new(ErrorKind::InvalidArgument, "unknown timer id"))?;
    Ok(timers::key(&meta.name, instance))
}

/// Starts instance `instance` of timer `id` in the shared table.
pub(crate) fn timer_start(inner: &Instance, id: u32, instance: u64) -> Result<()> {
    let seg = inner
        .shared_segment()
        .ok_or_else(|| not_published("starting a shared timer instance"))?;
    timers::start(
        &seg,
        timer_key(inner, id, instance)?,
        inner.now(),
        inner.idle_ns(),
    )
}

/// Takes instance `instance` of timer `id` from the shared table: its
/// duration (recorded if `record`), or `None` if it was not running or was idle
/// past the timeout.
pub(crate) fn timer_stop(
    inner: &Arc<Instance>,
    id: u32,
    instance: u64,
    record: bool,
) -> Result<Option<u64>> {
    let seg = inner
        .shared_segment()
        .ok_or_else(|| not_published("stopping a shared timer instance"))?;
    let key = timer_key(inner, id, instance)?;
    let now = inner.now();
    let Some(start) = timers::take(&seg, key) else {
        return Ok(None);
    };
    let duration = now.saturating_sub(start);
    if start == 0 || duration > inner.idle_ns() {
        return Ok(None); // idle past the timeout: dropped, as a local instance would be
    }
    if record {
        Timer::new(inner.clone(), id).record(duration);
    }
    Ok(Some(duration))
}
