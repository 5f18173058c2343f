//! The public handle on a statistics instance ([`Stats`]): creating,
//! configuring, starting and stopping it, looking up its metrics (by handle or
//! by id, for the C ABI and Java), its dumps, and the process-wide instance.
//! The instance's state is in [`crate::instance`].

use crate::clock::Clock;
use crate::config::Config;
use crate::dump::Dump;
use crate::instance::{lock, params, Control, Instance, Worker};
use crate::points::{
    emit, emit_timer, nan, timer_of, timer_start, timer_stop, Counter, Gauge, MetricId, Timer,
    TimerOp,
};
use crate::processing::Health;
use crate::registry::Kind;
use crate::ring::{kind, Ring};
use hrts_core::Result;
use std::sync::atomic::AtomicBool;
use std::sync::atomic::Ordering::{Acquire, Relaxed, Release};
use std::sync::{Arc, OnceLock};

/// A set of metrics with its processing thread: the seed's library instance.
///
/// Most programs use the process-wide one, [`global`](crate::global()).
/// Cloning gives another handle to the same instance. The processing thread
/// holds the instance while it runs: call [`stop`](Stats::stop) before letting
/// an instance of your own go, or its thread runs until the process ends.
#[derive(Clone)]
pub struct Stats {
    pub(crate) inner: Arc<Instance>,
}

impl Stats {
    /// An instance stamped on the hrts timeline (the process's default segment,
    /// opened when the instance starts).
    pub fn new(config: Config) -> Stats {
        Stats::build(config, OnceLock::new())
    }

    /// An instance with its own clock (tests use [`Clock::manual`]).
    pub fn with_clock(config: Config, clock: Clock) -> Stats {
        let cell = OnceLock::new();
        let _ = cell.set(clock);
        Stats::build(config, cell)
    }

    fn build(config: Config, clock: OnceLock<Clock>) -> Stats {
        Stats {
            inner: Arc::new(Instance::new(config, clock)),
        }
    }

    /// Replaces the configuration; only while stopped.
    pub fn configure(&self, config: Config) -> Result<()> {
        let worker = lock(&self.inner.worker);
        if worker.is_some() {
            return Err(hrts_core::Error::new(
                hrts_core::ErrorKind::InvalidArgument,
                "statistics are running: stop them before changing the configuration",
            ));
        }
        *lock(&self.inner.config) = config;
        Ok(())
    }

    /// The configuration in force (or to be used at the next start).
    pub fn config(&self) -> Config {
        lock(&self.inner.config).clone()
    }

    /// Publishes this instance's metrics to `seg` (one opened by
    /// [`StatsSegment::create_file`](crate::shared::StatsSegment::create_file),
    /// say) instead of the configured segment, from now on and whatever
    /// `shared-memory.enable` says. An instance that already publishes keeps
    /// its segment: call this before the first [`start`](Stats::start).
    pub fn publish_to(&self, seg: crate::shared::StatsSegment) -> Result<()> {
        self.inner
            .join(&lock(&self.inner.config).clone(), Some(seg))
    }

    /// Starts collecting: measuring points record from now on and the processing
    /// thread runs. Calling it again while running does nothing. A start after a
    /// [`stop`](Stats::stop) begins from empty statistics (metric names and
    /// handles stay valid).
    pub fn start(&self) -> Result<()> {
        let inner = &self.inner;
        let mut worker = lock(&inner.worker);
        if worker.is_some() {
            return Ok(());
        }
        if inner.clock.get().is_none() {
            let _ = inner.clock.set(Clock::hrts()?);
        }
        let cfg = lock(&inner.config).clone();
        inner.join_shared(&cfg)?;
        {
            let mut agg = lock(&inner.agg);
            if inner.has_new_rings.swap(false, Acquire) {
                agg.adopt(lock(&inner.new_rings).drain(..));
            }
            if inner.started_once.swap(true, Relaxed) {
                agg.reset();
            }
            agg.params = params(&cfg);
            agg.idle_ns = cfg.timer_idle_timeout.as_nanos() as u64;
        }
        inner.capacity.store(cfg.queue_capacity, Relaxed);
        inner
            .control
            .idle_ns
            .store(cfg.timer_idle_timeout.as_nanos() as u64, Relaxed);
        *lock(&inner.latest_dump) = None;
        *lock(&inner.latest_json) = None;
        let stop = Arc::new(AtomicBool::new(false));
        let handle = {
            let inner = inner.clone();
            let stop = stop.clone();
            std::thread::Builder::new()
                .name("hrts-stats".into())
                .spawn(move || inner.run(&stop, cfg))
                .map_err(|e| hrts_core::Error::from_io("starting the statistics thread", &e, ""))?
        };
        // Flags before `enabled`: a Java producer reads them after it.
        inner.set_all_flags(&lock(&inner.config), true);
        inner.control.enabled.store(1, Release);
        *worker = Some(Worker { stop, handle });
        Ok(())
    }

    /// Stops collecting: measuring points become no-ops, the processing thread
    /// applies what is queued, makes the final dumps and exits. Calling it again
    /// (or before any start) does nothing. The dumps stay readable.
    pub fn stop(&self) {
        let inner = &self.inner;
        let mut worker = lock(&inner.worker);
        let Some(w) = worker.take() else { return };
        inner.control.enabled.store(0, Release);
        inner.set_all_flags(&lock(&inner.config), false);
        w.stop.store(true, Release);
        w.handle.thread().unpark();
        let _ = w.handle.join();
        let mut agg = lock(&inner.agg);
        inner.pass(&mut agg);
        agg.sweep(inner.now());
        let dump = inner.make_dump(&mut agg);
        drop(agg);
        inner.make_json(&dump);
    }

    pub fn is_running(&self) -> bool {
        self.inner.enabled()
    }

    /// The counter `name`, created on first use. Errors: a bad name, a name
    /// used by another kind of metric, too many metrics.
    pub fn counter(&self, name: &str) -> Result<Counter> {
        let id = self.inner.registry.id(name, Kind::Counter)?;
        self.inner.registered(id)?;
        Ok(Counter::new(self.inner.clone(), id))
    }

    /// The gauge `name`, created on first use.
    pub fn gauge(&self, name: &str) -> Result<Gauge> {
        let id = self.inner.registry.id(name, Kind::Gauge)?;
        self.inner.registered(id)?;
        Ok(Gauge::new(self.inner.clone(), id))
    }

    /// The timer `name`, created on first use.
    pub fn timer(&self, name: &str) -> Result<Timer> {
        let id = self.inner.registry.id(name, Kind::Timer)?;
        self.inner.registered(id)?;
        Ok(Timer::new(self.inner.clone(), id))
    }

    /// Applies everything queued so far (and drops idle timer instances) now,
    /// on the calling thread.
    pub fn flush(&self) {
        let mut agg = lock(&self.inner.agg);
        self.inner.pass(&mut agg);
        agg.sweep(self.inner.now());
    }

    /// A metrics dump made now, after applying everything queued so far. It
    /// waits for the processing thread's current pass, never for a measuring
    /// point.
    pub fn dump(&self) -> Arc<Dump> {
        let mut agg = lock(&self.inner.agg);
        self.inner.pass(&mut agg);
        agg.sweep(self.inner.now());
        self.inner.make_dump(&mut agg)
    }

    /// A JSON dump made now (see [`Stats::dump`]).
    pub fn json_dump(&self) -> String {
        let dump = self.dump();
        let json: Arc<str> = dump.to_json().into();
        *lock(&self.inner.latest_json) = Some(json.clone());
        json.to_string()
    }

    /// The latest metrics dump (made every `metrics-dump.interval`, by
    /// [`dump`](Stats::dump), or at stop), if any.
    pub fn last_dump(&self) -> Option<Arc<Dump>> {
        lock(&self.inner.latest_dump).clone()
    }

    /// The latest JSON dump (made every `json-dump.interval`, by
    /// [`json_dump`](Stats::json_dump), or at stop), if any.
    pub fn last_json_dump(&self) -> Option<Arc<str>> {
        lock(&self.inner.latest_json).clone()
    }

    /// Library-wide counts: events dropped or folded by full queues, timer
    /// stops without a start, instances dropped after the idle timeout.
    pub fn health(&self) -> Health {
        let mut h = lock(&self.inner.agg).health();
        h.dropped_events += self.inner.lost.load(Relaxed);
        h
    }

    /// Queues attached now: one per thread that has measured and is alive (or
    /// whose last events are not applied yet), one per foreign producer.
    pub fn queues(&self) -> usize {
        let mut agg = lock(&self.inner.agg);
        if self.inner.has_new_rings.swap(false, Acquire) {
            agg.adopt(lock(&self.inner.new_rings).drain(..));
        }
        agg.queues()
    }

    /// Timer instances running now (after the last pass).
    pub fn running_timer_instances(&self) -> usize {
        lock(&self.inner.agg).running_instances()
    }

    /// A queue for a producer that is not a Rust thread (the Java measuring
    /// points write it directly). Call [`Ring::close`] when its producer is gone.
    pub fn attach_ring(&self) -> Arc<Ring> {
        self.inner.new_ring()
    }

    /// The measuring points' control block: its address, for producers in other
    /// languages (offsets in [`CONTROL_OFFSETS`](crate::CONTROL_OFFSETS)).
    pub fn control_block(&self) -> *const u8 {
        (&self.inner.control as *const Control).cast()
    }

    /// One byte of flags per metric id, for producers in other languages: bit
    /// [`FLAG_EXACT`](crate::FLAG_EXACT) if the metric's counter, gauge or
    /// recorded-duration events are stamped one by one (`exact-stamps`), bit
    /// [`FLAG_STOPPED`](crate::FLAG_STOPPED) while the instance is stopped. The
    /// address of [`MAX_METRICS`](crate::registry::MAX_METRICS) bytes that live
    /// as long as the instance.
    pub fn exact_flags(&self) -> *const u8 {
        self.inner.flags.as_ptr().cast()
    }

    /// A precise stamp from this instance's clock (0 before its first start if
    /// it uses the hrts timeline).
    pub fn now(&self) -> u64 {
        self.inner.now()
    }
}

/// Measuring by metric id: what the C ABI and the Java producer use.
impl Stats {
    /// The id of metric `name` of `kind`, created on first use.
    pub fn metric_id(&self, name: &str, kind: Kind) -> Result<MetricId> {
        let id = self.inner.registry.id(name, kind)?;
        self.inner.registered(id)?;
        Ok(MetricId { id, kind })
    }

    /// [`Counter::add`] by id.
    #[inline(always)]
    pub fn counter_add_id(&self, m: MetricId, delta: i64) {
        if m.kind == Kind::Counter {
            emit(&self.inner, m.id, kind::COUNTER_ADD, delta as u64);
        }
    }

    /// [`Counter::init`] by id.
    pub fn counter_init_id(&self, m: MetricId, value: i64) {
        if m.kind == Kind::Counter {
            Counter::new(self.inner.clone(), m.id).init(value);
        }
    }

    /// [`Gauge::set`] by id.
    #[inline(always)]
    pub fn gauge_set_id(&self, m: MetricId, value: f64) -> Result<()> {
        if value.is_nan() {
            return Err(nan());
        }
        if m.kind == Kind::Gauge {
            emit(&self.inner, m.id, kind::GAUGE_SET, value.to_bits());
        }
        Ok(())
    }

    /// A timer instance event by id.
    #[inline(always)]
    pub fn timer_id(&self, m: MetricId, op: TimerOp, instance: u64) {
        if m.kind == Kind::Timer {
            let k = match op {
                TimerOp::Start => kind::TIMER_START,
                TimerOp::Stop => kind::TIMER_STOP,
                TimerOp::Discard => kind::TIMER_DISCARD,
                TimerOp::Heartbeat => kind::TIMER_HEARTBEAT,
            };
            emit_timer(&self.inner, m.id, k, instance);
        }
    }

    /// [`Timer::record`] by id: a duration measured by the caller, which may
    /// also have applied the idle timeout (see [`Stats::idle_timeout_ns`]).
    #[inline(always)]
    pub fn timer_record_id(&self, m: MetricId, duration_ns: u64) {
        if m.kind == Kind::Timer {
            emit(&self.inner, m.id, kind::TIMER_RECORD, duration_ns);
        }
    }

    /// [`Timer::start_shared`] by id.
    pub fn timer_start_shared_id(&self, m: MetricId, instance: u64) -> Result<()> {
        timer_start(&self.inner, timer_of(m)?, instance)
    }

    /// [`Timer::stop_shared`] (`record` true) or [`Timer::discard_shared`] by id.
    pub fn timer_stop_shared_id(
        &self,
        m: MetricId,
        instance: u64,
        record: bool,
    ) -> Result<Option<u64>> {
        timer_stop(&self.inner, timer_of(m)?, instance, record)
    }

    /// The timer idle timeout in force, in nanoseconds.
    pub fn idle_timeout_ns(&self) -> u64 {
        self.inner.control.idle_ns.load(Relaxed)
    }
}

static GLOBAL: OnceLock<Stats> = OnceLock::new();

/// The process-wide instance that the macros, the C ABI and Java use. It is
/// stamped on the hrts timeline and configured with the seed's defaults until
/// [`Stats::configure`] says otherwise; nothing is recorded before
/// [`Stats::start`].
pub fn global() -> &'static Stats {
    GLOBAL.get_or_init(|| Stats::new(Config::default()))
}
