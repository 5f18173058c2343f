//! A statistics instance: its registry, its threads' queues, the processing
//! thread and the latest dumps.

use crate::aggregate::{Aggregator, Health};
use crate::clock::Clock;
use crate::config::Config;
use crate::dump::Dump;
use crate::incremental::Params;
use crate::points::{Counter, Gauge, Timer};
use crate::registry::{Kind, Registry};
use crate::ring::Ring;
use crate::shared::publish::Publisher;
use crate::shared::{SharedConfig, StatsSegment};
use hrts_core::Result;
use std::sync::atomic::Ordering::{Acquire, Relaxed, Release};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// What measuring points read. The first line (enabled, idle timeout) changes
/// only at start and stop; the coarse clock, which the processing thread
/// rewrites on every pass, has a line of its own so that those writes do not
/// cost every measurement a cache miss. Byte offsets: enabled 0, idle timeout
/// 8, coarse clock 64 (see [`CONTROL_OFFSETS`]).
#[repr(C, align(64))]
pub(crate) struct Control {
    /// 1 while started: measuring points do nothing otherwise.
    pub enabled: AtomicU64,
    /// `timer.idle-timeout` in nanoseconds, for timer scopes.
    pub idle_ns: AtomicU64,
    _line: [u64; 6],
    /// The processing thread's latest stamp while it is draining queues, 0
    /// while it sleeps or dumps (measuring points then stamp for themselves).
    pub coarse: AtomicU64,
    _rest: [u64; 7],
}

/// Byte offsets in the control block of: enabled, the idle timeout (ns), the
/// coarse clock (for producers in other languages).
pub const CONTROL_OFFSETS: [usize; 3] = [0, 8, 64];

pub(crate) struct Inner {
    pub(crate) id: u64,
    pub(crate) control: Control,
    clock: OnceLock<Clock>,
    pub(crate) registry: Registry,
    config: Mutex<Config>,
    capacity: AtomicUsize,
    new_rings: Mutex<Vec<Arc<Ring>>>,
    has_new_rings: AtomicBool,
    agg: Mutex<Aggregator>,
    latest_dump: Mutex<Option<Arc<Dump>>>,
    latest_json: Mutex<Option<Arc<str>>>,
    worker: Mutex<Option<Worker>>,
    started_once: AtomicBool,
    lost: AtomicU64,
    /// This instance's registration in the shared statistics segment, from its
    /// first start (if `shared-memory.enable`) until it is dropped.
    shared: Mutex<Option<Publisher>>,
}

struct Worker {
    stop: Arc<AtomicBool>,
    handle: JoinHandle<()>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic while holding one of these locks leaves data that is still
    // consistent enough to report (at worst one pass half applied).
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Events a pass must find for the processing thread to run the next one
/// without sleeping first.
const BATCH: u64 = 256;

fn params(cfg: &Config) -> Params {
    Params {
        alpha: cfg.moving_average_alpha,
        interval_ns: cfg.moving_interval.as_nanos() as f64,
    }
}

impl Inner {
    #[inline(always)]
    pub(crate) fn enabled(&self) -> bool {
        self.control.enabled.load(Relaxed) != 0
    }

    /// A precise stamp.
    #[inline(always)]
    pub(crate) fn now(&self) -> u64 {
        match self.clock.get() {
            Some(c) => c.now(),
            None => 0,
        }
    }

    /// The coarse stamp if the processing thread keeps one fresh, else a
    /// precise one.
    #[inline(always)]
    pub(crate) fn coarse_now(&self) -> u64 {
        match self.control.coarse.load(Relaxed) {
            0 => self.now(),
            ns => ns,
        }
    }

    /// Registers in the shared statistics segment at the first start that asks
    /// for it, and claims a cell for every metric created so far.
    fn join_shared(&self, cfg: &Config) -> Result<()> {
        let mut shared = lock(&self.shared);
        if shared.is_some() || !cfg.shared_memory.enable {
            return Ok(());
        }
        let mut sc = SharedConfig::from_env()?;
        if let Some(name) = &cfg.shared_memory.name {
            sc.name = name.clone();
        }
        if let Some(grace) = cfg.shared_memory.grace {
            sc.grace = grace;
        }
        let mut publisher = Publisher::start(&sc)?;
        publisher.claim_all(&self.registry)?;
        *shared = Some(publisher);
        Ok(())
    }

    pub(crate) fn new_ring(&self) -> Arc<Ring> {
        let ring = Arc::new(Ring::new(self.capacity.load(Relaxed)));
        lock(&self.new_rings).push(ring.clone());
        self.has_new_rings.store(true, Release);
        ring
    }

    pub(crate) fn count_lost(&self) {
        self.lost.fetch_add(1, Relaxed);
    }

    /// One processing pass under the aggregator lock.
    fn pass(&self, agg: &mut Aggregator) -> u64 {
        if self.has_new_rings.swap(false, Acquire) {
            agg.adopt(lock(&self.new_rings).drain(..));
        }
        agg.pass(&self.registry, self.now())
    }

    fn make_dump(&self, agg: &mut Aggregator) -> Arc<Dump> {
        let dump = Arc::new(agg.dump(self.now(), &self.registry));
        self.publish(&dump);
        *lock(&self.latest_dump) = Some(dump.clone());
        dump
    }

    /// Writes a dump to this instance's cells (called with the aggregator
    /// locked, so publications never interleave).
    fn publish(&self, dump: &Dump) {
        if let Some(p) = lock(&self.shared).as_mut() {
            p.publish(dump, &self.registry);
        }
    }

    /// The shared statistics segment this instance publishes to, if it does.
    pub(crate) fn shared_segment(&self) -> Option<Arc<StatsSegment>> {
        lock(&self.shared).as_ref().map(|p| p.seg.clone())
    }

    /// The cell of a metric just looked up, claimed on first use.
    pub(crate) fn claim_cell(&self, id: u32) -> Result<()> {
        if let Some(p) = lock(&self.shared).as_mut() {
            p.cell(id, &self.registry)?;
        }
        Ok(())
    }

    pub(crate) fn idle_ns(&self) -> u64 {
        self.control.idle_ns.load(Relaxed)
    }

    fn make_json(&self, dump: &Dump) {
        *lock(&self.latest_json) = Some(dump.to_json().into());
    }

    fn run(&self, stop: &AtomicBool, cfg: Config) {
        let manual = self.clock.get().is_some_and(Clock::is_manual);
        let sleeps = cfg.sleep_on_empty;
        let mut step = 0;
        let start = Instant::now();
        let due = |interval: Duration| (!interval.is_zero()).then(|| start + interval);
        let mut next_metrics = due(cfg.metrics_dump_interval);
        let mut next_json = due(cfg.json_dump_interval);
        let mut next_sweep = start;
        let publish_every = cfg.shared_memory.interval;
        let mut next_publish = start + publish_every;
        while !stop.load(Acquire) {
            if !manual {
                self.control.coarse.store(self.now(), Relaxed);
            }
            let mut agg = lock(&self.agg);
            let applied = self.pass(&mut agg);
            let now = Instant::now();
            // Anything that may take long starts with the coarse clock off, so
            // that measuring points meanwhile stamp for themselves.
            self.control.coarse.store(0, Relaxed);
            if now >= next_sweep {
                agg.sweep(self.now());
                next_sweep = now + Duration::from_millis(10);
            }
            if now >= next_publish {
                if lock(&self.shared).is_some() {
                    let changed = agg.dump_changed(self.now(), &self.registry);
                    self.publish(&changed);
                }
                next_publish = now + publish_every;
            }
            let metrics_due = next_metrics.is_some_and(|t| now >= t);
            let json_due = next_json.is_some_and(|t| now >= t);
            if metrics_due || json_due {
                let dump = self.make_dump(&mut agg);
                drop(agg);
                if json_due {
                    self.make_json(&dump);
                    crate::json_file::write(
                        cfg.json_dump_file.as_deref(),
                        lock(&self.latest_json).as_deref(),
                    );
                }
                let advance = |t: &mut Option<Instant>, iv: Duration| {
                    if let Some(t) = t {
                        while *t <= now {
                            *t += iv;
                        }
                    }
                };
                advance(&mut next_metrics, cfg.metrics_dump_interval);
                advance(&mut next_json, cfg.json_dump_interval);
            } else {
                drop(agg);
            }
            if applied < BATCH {
                if applied == 0 && step == sleeps.len() - 1 && step > 0 {
                    // Nothing queued for a whole sleep schedule: whatever burst
                    // made producers fold is over.
                    lock(&self.agg).cancel_folding();
                }
                // Few events are no reason to poll again at once: every poll
                // takes the producers' queue lines from their caches, so it
                // pays to let them fill a batch first.
                std::thread::park_timeout(sleeps[step]);
                step = (step + 1).min(sleeps.len() - 1);
            } else {
                step = 0;
            }
        }
        self.control.coarse.store(0, Relaxed);
    }
}

/// A set of metrics with its processing thread: the seed's library instance.
///
/// Most programs use the process-wide one, [`global`](crate::global()).
/// Cloning gives another handle to the same instance. The processing thread
/// holds the instance while it runs: call [`stop`](Stats::stop) before letting
/// an instance of your own go, or its thread runs until the process ends.
#[derive(Clone)]
pub struct Stats {
    pub(crate) inner: Arc<Inner>,
}

static NEXT_ID: AtomicU64 = AtomicU64::new(1);

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
        let agg = Aggregator::new(params(&config), config.timer_idle_timeout.as_nanos() as u64);
        Stats {
            inner: Arc::new(Inner {
                id: NEXT_ID.fetch_add(1, Relaxed),
                control: Control {
                    enabled: AtomicU64::new(0),
                    idle_ns: AtomicU64::new(config.timer_idle_timeout.as_nanos() as u64),
                    _line: [0; 6],
                    coarse: AtomicU64::new(0),
                    _rest: [0; 7],
                },
                clock,
                registry: Registry::default(),
                capacity: AtomicUsize::new(config.queue_capacity),
                config: Mutex::new(config),
                new_rings: Mutex::new(Vec::new()),
                has_new_rings: AtomicBool::new(false),
                agg: Mutex::new(agg),
                latest_dump: Mutex::new(None),
                latest_json: Mutex::new(None),
                worker: Mutex::new(None),
                started_once: AtomicBool::new(false),
                lost: AtomicU64::new(0),
                shared: Mutex::new(None),
            }),
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
        self.inner.claim_cell(id)?;
        Ok(Counter::new(self.inner.clone(), id))
    }

    /// The gauge `name`, created on first use.
    pub fn gauge(&self, name: &str) -> Result<Gauge> {
        let id = self.inner.registry.id(name, Kind::Gauge)?;
        self.inner.claim_cell(id)?;
        Ok(Gauge::new(self.inner.clone(), id))
    }

    /// The timer `name`, created on first use.
    pub fn timer(&self, name: &str) -> Result<Timer> {
        let id = self.inner.registry.id(name, Kind::Timer)?;
        self.inner.claim_cell(id)?;
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
    /// languages (offsets in [`CONTROL_OFFSETS`]).
    pub fn control_block(&self) -> *const u8 {
        (&self.inner.control as *const Control).cast()
    }

    /// A precise stamp from this instance's clock (0 before its first start if
    /// it uses the hrts timeline).
    pub fn now(&self) -> u64 {
        self.inner.now()
    }
}

impl Drop for Inner {
    fn drop(&mut self) {
        // The worker holds an Arc<Inner>, so by now it has been stopped.
        self.control.enabled.store(0, Relaxed);
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
