//! The state of one statistics instance, which the public handle
//! ([`Stats`](crate::Stats)), the measuring points, each thread's queues and
//! the shared publication all work on: its control block, registry, queues,
//! aggregator, latest dumps, processing thread and shared-segment publisher.
//! It imports none of the modules that use it.

use crate::clock::Clock;
use crate::config::Config;
use crate::dump::Dump;
use crate::incremental::Params;
use crate::processing::Aggregator;
use crate::registry::{Registry, MAX_METRICS};
use crate::ring::Ring;
use crate::shared::publish::Publisher;
use crate::shared::{SharedConfig, StatsSegment};
use hrts_core::Result;
use std::sync::atomic::Ordering::{Acquire, Relaxed, Release};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, AtomicUsize};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// What measuring points read; it changes only at start and stop. Byte
/// offsets: enabled 0, idle timeout 8, and 64, once a coarse clock, now always
/// 0 (see [`CONTROL_OFFSETS`]).
#[repr(C, align(64))]
pub(crate) struct Control {
    /// 1 while started: measuring points do nothing otherwise.
    pub enabled: AtomicU64,
    /// `timer.idle-timeout` in nanoseconds, for timer scopes.
    pub idle_ns: AtomicU64,
    _line: [u64; 6],
    /// Always 0: once a coarse clock for measuring points, kept so that the
    /// offsets producers in other languages read stay put.
    pub coarse: AtomicU64,
    _rest: [u64; 7],
}

/// Byte offsets in the control block of: enabled, the idle timeout (ns), and
/// a word that is always 0 (once the coarse clock), for producers in other
/// languages.
pub const CONTROL_OFFSETS: [usize; 3] = [0, 8, 64];

/// One statistics instance; [`Stats`](crate::Stats) handles share it in an
/// `Arc`, as do its measuring points and its processing thread.
pub(crate) struct Instance {
    /// Never reused: the thread-local queue cache keys on it.
    pub(crate) id: u64,
    pub(crate) control: Control,
    pub(crate) clock: OnceLock<Clock>,
    pub(crate) registry: Registry,
    pub(crate) config: Mutex<Config>,
    pub(crate) capacity: AtomicUsize,
    pub(crate) new_rings: Mutex<Vec<Arc<Ring>>>,
    pub(crate) has_new_rings: AtomicBool,
    pub(crate) agg: Mutex<Aggregator>,
    pub(crate) latest_dump: Mutex<Option<Arc<Dump>>>,
    pub(crate) latest_json: Mutex<Option<Arc<str>>>,
    pub(crate) worker: Mutex<Option<Worker>>,
    pub(crate) started_once: AtomicBool,
    pub(crate) lost: AtomicU64,
    /// This instance's registration in the shared statistics segment, from its
    /// first start (if `shared-memory.enable`) until it is dropped.
    pub(crate) shared: Mutex<Option<Publisher>>,
    /// One byte per metric id: [`FLAG_EXACT`] if its events are stamped one by
    /// one (see [`ExactStamps`](crate::config::ExactStamps)), [`FLAG_STOPPED`]
    /// while the instance is stopped; read by every counter, gauge and recorded
    /// duration event, in Rust, C and Java.
    pub(crate) flags: Box<[AtomicU8; MAX_METRICS]>,
    #[cfg(test)]
    pub(crate) paused: AtomicBool,
}

pub(crate) struct Worker {
    pub(crate) stop: Arc<AtomicBool>,
    pub(crate) handle: JoinHandle<()>,
}

pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic while holding one of these locks leaves data that is still
    // consistent enough to report (at worst one pass half applied).
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// A metric flag: its counter, gauge or recorded-duration events are stamped
/// one by one.
pub const FLAG_EXACT: u8 = 1;
/// A metric flag: the instance is stopped (measuring points do nothing).
pub const FLAG_STOPPED: u8 = 2;

/// Events a pass must find for the processing thread to run the next one
/// without sleeping first.
const BATCH: u64 = 256;

/// The next instance id.
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

pub(crate) fn params(cfg: &Config) -> Params {
    Params {
        alpha: cfg.moving_average_alpha,
        interval_ns: cfg.moving_interval.as_nanos() as f64,
    }
}

impl Instance {
    /// A stopped instance with this configuration and clock (unset: the hrts
    /// timeline, set at the first start).
    pub(crate) fn new(config: Config, clock: OnceLock<Clock>) -> Instance {
        let agg = Aggregator::new(params(&config), config.timer_idle_timeout.as_nanos() as u64);
        Instance {
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
            flags: (0..MAX_METRICS)
                .map(|_| AtomicU8::new(FLAG_STOPPED))
                .collect::<Box<[_]>>()
                .try_into()
                .unwrap_or_else(|_| unreachable!("MAX_METRICS flags were made")),
            #[cfg(test)]
            paused: AtomicBool::new(false),
        }
    }

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

    /// Metric `id`'s flags: 0 for a pass-stamped metric of a running instance (the measuring point's fast path, one load), else
    /// [`FLAG_EXACT`] and [`FLAG_STOPPED`] bits. An id that is no metric's reads
    /// as stopped.
    #[inline(always)]
    pub(crate) fn flags(&self, id: u32) -> u8 {
        self.flags
            .get(id as usize)
            .map_or(FLAG_STOPPED, |f| f.load(Relaxed))
    }

    /// Whether metric `id` is stamped per event (`exact-stamps`).
    #[inline(always)]
    pub(crate) fn is_exact(&self, id: u32) -> bool {
        self.flags(id) & FLAG_EXACT != 0
    }

    /// A metric was looked up: its cell in the shared segment is claimed and its
    /// flags set from the configuration in force.
    pub(crate) fn registered(&self, id: u32) -> Result<()> {
        let cfg = lock(&self.config);
        self.set_flags(id, &cfg, self.enabled());
        drop(cfg);
        self.claim_cell(id)
    }

    fn set_flags(&self, id: u32, cfg: &Config, running: bool) {
        if let (Some(meta), Some(flag)) = (self.registry.meta(id), self.flags.get(id as usize)) {
            let exact = cfg.exact_stamps.covers(&meta.name) as u8 * FLAG_EXACT;
            let stopped = if running { 0 } else { FLAG_STOPPED };
            flag.store(exact | stopped, Relaxed);
        }
    }

    /// Sets every metric's flags: at start from the configuration in force
    /// (it may have changed while stopped), at stop.
    pub(crate) fn set_all_flags(&self, cfg: &Config, running: bool) {
        for id in 0..self.registry.len() as u32 {
            self.set_flags(id, cfg, running);
        }
    }

    /// Registers in the shared statistics segment at the first start that asks
    /// for it, and claims a cell for every metric created so far.
    pub(crate) fn join_shared(&self, cfg: &Config) -> Result<()> {
        self.join(cfg, None)
    }

    /// As [`join_shared`](Self::join_shared), in `seg` if given (then even
    /// with `shared-memory.enable` off), else in the configured segment.
    pub(crate) fn join(&self, cfg: &Config, seg: Option<StatsSegment>) -> Result<()> {
        let mut shared = lock(&self.shared);
        if shared.is_some() || (seg.is_none() && !cfg.shared_memory.enable) {
            return Ok(());
        }
        let mut sc = SharedConfig::from_env()?;
        if let Some(name) = &cfg.shared_memory.name {
            sc.name = name.clone();
        }
        if let Some(grace) = cfg.shared_memory.grace {
            sc.grace = grace;
        }
        if let Some(program) = &cfg.shared_memory.program {
            sc.program = program.clone();
        }
        if let Some(id) = &cfg.shared_memory.instance_id {
            sc.instance_id = id.clone();
        }
        let mut publisher = match seg {
            Some(seg) => Publisher::on(Arc::new(seg), &sc)?,
            None => Publisher::start(&sc)?,
        };
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
    pub(crate) fn pass(&self, agg: &mut Aggregator) -> u64 {
        if self.has_new_rings.swap(false, Acquire) {
            agg.adopt(lock(&self.new_rings).drain(..));
        }
        agg.pass(&self.registry, self.now())
    }

    pub(crate) fn make_dump(&self, agg: &mut Aggregator) -> Arc<Dump> {
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

    pub(crate) fn make_json(&self, dump: &Dump) {
        *lock(&self.latest_json) = Some(dump.to_json().into());
    }

    pub(crate) fn run(&self, stop: &AtomicBool, cfg: Config) {
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
            let mut agg = lock(&self.agg);
            #[cfg(test)]
            if self.paused.load(Acquire) {
                drop(agg);
                std::thread::park_timeout(Duration::from_millis(1));
                continue;
            }
            let applied = self.pass(&mut agg);
            let now = Instant::now();
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
    }

    /// Tests: the processing thread takes nothing until the instance stops
    /// (only the caller's `flush` does), so that a test knows which pass took
    /// which event. Returns once a pass under way has ended.
    #[cfg(test)]
    pub(crate) fn pause_processing(&self) {
        self.paused.store(true, Release);
        drop(lock(&self.agg));
    }
}

impl Drop for Instance {
    fn drop(&mut self) {
        // The worker holds an Arc<Instance>, so by now it has been stopped.
        self.control.enabled.store(0, Relaxed);
    }
}
