//! The daemon's own health as hrts statistics: at every round it records what
//! `hrts info` shows of the host page (ties, untied rounds, repairs, steps,
//! disruptions, the offset each tie measured, the bound and its parts, the
//! status, the time sources) in a statistics segment of its own, the file
//! [`FILE`] beside the host page, which `hrts stats` and `hrts stats serve`
//! read with every other process's statistics (see `docs/statistics.md`).
//!
//! The file, not a shared-memory name: a name in `/dev/shm` is anyone's to
//! take first, and a segment others may write is a segment others may
//! damage. The daemon makes the file anew at start (see
//! `StatsSegment::create_file`), readable by everyone and writable by the
//! daemon only; readers map it read-only and trust it only when it is owned
//! by root or the service user. When it cannot be made, the daemon logs why
//! and keeps the page without it: health statistics never stop the daemon.

use hrts_core::{BoundSource, BoundStatus, DisruptionKind, HostDaemon};
use hrts_stats::shared::StatsSegment;
use hrts_stats::{Clock, Config, Counter, Gauge, ManualClock, Stats, Timer};
use std::path::{Path, PathBuf};

/// The statistics file's name in the host page's directory.
pub const FILE: &str = "stats";
/// The program label its series carry.
pub const PROGRAM: &str = "hrts-daemon";

/// Where the daemon keeping `dir` publishes its health.
pub fn path(dir: &Path) -> PathBuf {
    dir.join(FILE)
}

const KINDS: [DisruptionKind; 6] = [
    DisruptionKind::CounterAhead,
    DisruptionKind::CounterBehind,
    DisruptionKind::CounterStopped,
    DisruptionKind::Suspend,
    DisruptionKind::VmclockMarker,
    DisruptionKind::ClockStep,
];

const BOUND_SOURCES: [BoundSource; 5] = [
    BoundSource::None,
    BoundSource::Chrony,
    BoundSource::Kernel,
    BoundSource::Test,
    BoundSource::Vmclock,
];

/// A disruption kind's short name in its series' name: "ticks", not
/// "counter", which Prometheus's linter keeps for the counter type.
fn kind_name(k: DisruptionKind) -> &'static str {
    match k {
        DisruptionKind::CounterAhead => "ticks_ahead",
        DisruptionKind::CounterBehind => "ticks_behind",
        DisruptionKind::CounterStopped => "ticks_stopped",
        DisruptionKind::Suspend => "suspend",
        DisruptionKind::VmclockMarker => "vmclock_marker",
        DisruptionKind::ClockStep => "clock_step",
    }
}

/// The page's running counts as last seen, to add only what a round changed.
#[derive(Default, Clone, Copy)]
struct Seen {
    ties: u64,
    repairs: u64,
    steps: u64,
    disruptions: u64,
}

struct Metrics {
    rounds: Counter,
    ties: Counter,
    untied: Counter,
    repairs: Counter,
    steps: Counter,
    disruptions: Counter,
    by_kind: Vec<(DisruptionKind, Counter)>,
    offset: Gauge,
    offset_abs: Timer,
    bound: Gauge,
    line_error: Gauge,
    shift: Gauge,
    drift: Gauge,
    slope_error: Gauge,
    age: Gauge,
    half_width: Gauge,
    status: Vec<(BoundStatus, Gauge)>,
    bound_source: Vec<(BoundSource, Gauge)>,
    pending: Gauge,
    last_disruption: Gauge,
}

/// The daemon's health statistics, published to [`path`].
pub struct Health {
    stats: Stats,
    clock: ManualClock,
    m: Metrics,
    seen: Seen,
}

impl Health {
    /// Makes the statistics file in `dir` and starts recording; the error
    /// says why it could not (the caller logs it and goes on without).
    pub fn start(dir: &Path, daemon: &HostDaemon) -> hrts_core::Result<Health> {
        let seg = StatsSegment::create_file(&path(dir))?;
        let mut cfg = Config::default();
        cfg.shared_memory.enable = false; // nothing in /dev/shm: only the file
        cfg.shared_memory.program = Some(PROGRAM.to_string());
        // A few events a round: the processing thread need not poll within
        // milliseconds, and nobody reads a JSON dump of the daemon's.
        cfg.sleep_on_empty = vec![std::time::Duration::from_millis(50)];
        cfg.json_dump_interval = std::time::Duration::ZERO;
        // Stamped with the daemon's own line, set at each round: the stats
        // crate's default clock would open a per-user segment for nothing.
        let (clock, hand) = Clock::manual(daemon.base().now_ns());
        let stats = Stats::with_clock(cfg, clock);
        let c = |n: &str| stats.counter(n);
        let g = |n: &str| stats.gauge(n);
        let info = daemon.base().info();
        let m = Metrics {
            rounds: c("daemon.rounds_total")?,
            ties: c("daemon.ties_total")?,
            untied: c("daemon.untied_rounds_total")?,
            repairs: c("daemon.repairs_total")?,
            steps: c("daemon.steps_total")?,
            disruptions: c("daemon.disruptions_total")?,
            by_kind: KINDS
                .iter()
                .map(|&k| Ok((k, c(&format!("daemon.disruptions.{}_total", kind_name(k)))?)))
                .collect::<hrts_core::Result<_>>()?,
            offset: g("daemon.offset_seconds")?,
            // Each tie's |offset| as a duration: its quantiles over the
            // moving window (a summary), where the gauge has only the last.
            offset_abs: stats.timer("daemon.tie_offset_abs")?,
            bound: g("daemon.bound.published_seconds")?,
            line_error: g("daemon.bound.line_error_seconds")?,
            shift: g("daemon.bound.shift_seconds")?,
            drift: g("daemon.bound.drift_ratio")?,
            slope_error: g("daemon.bound.slope_error_ratio")?,
            age: g("daemon.bound.age_seconds")?,
            half_width: g("daemon.bound.half_width_seconds")?,
            status: BoundStatus::ALL
                .iter()
                .map(|&s| {
                    Ok((
                        s,
                        g(&format!("daemon.status.{}", s.name().replace('-', "_")))?,
                    ))
                })
                .collect::<hrts_core::Result<_>>()?,
            bound_source: BOUND_SOURCES
                .iter()
                .map(|&s| Ok((s, g(&format!("daemon.bound_source.{}", s.name()))?)))
                .collect::<hrts_core::Result<_>>()?,
            pending: g("daemon.disruption_pending")?,
            last_disruption: g("daemon.last_disruption_timestamp_seconds")?,
        };
        let source = g(&format!("daemon.tick_source.{}", info.source.name()))?;
        let frequency = g("daemon.tick_frequency_hertz")?;
        stats.publish_to(seg)?;
        stats.start()?;
        // Fixed for the page's life (measuring points record only once
        // started): the counter that gives the ticks, as an info-style gauge
        // of 1, and its rate.
        source.set(1.0)?;
        frequency.set(info.frequency as f64)?;
        // The page's counts so far (a restarted daemon adopts them): the
        // counters continue from them.
        let d = daemon.base().disruptions().map_or(0, |d| d.count);
        let seen = Seen {
            ties: info.tracking.ties,
            repairs: info.tracking.repairs,
            steps: info.tracking.steps,
            disruptions: d,
        };
        m.ties.init(seen.ties as i64);
        m.repairs.init(seen.repairs as i64);
        m.steps.init(seen.steps as i64);
        m.disruptions.init(seen.disruptions as i64);
        // The daemon's own: from 0, shown before the first event.
        for k in m
            .by_kind
            .iter()
            .map(|(_, k)| k)
            .chain([&m.rounds, &m.untied])
        {
            k.init(0);
        }
        let mut health = Health {
            stats,
            clock: hand,
            m,
            seen,
        };
        health.record_bound(daemon);
        Ok(health)
    }

    /// What one round did and left: counts, the tie's offset, the bound.
    pub fn record(&mut self, daemon: &HostDaemon, round: &hrts_core::DaemonRound) {
        self.clock.set(daemon.base().now_ns());
        let m = &self.m;
        m.rounds.increment();
        let ties = daemon.base().tracking_state().ties;
        let now = Seen {
            ties,
            repairs: round.repairs,
            steps: round.steps,
            disruptions: self.seen.disruptions,
        };
        // The page's counts start again from 0 when a repair finds them
        // damaged: a counter reset, as Prometheus reads it.
        add(&m.ties, self.seen.ties, now.ties);
        add(&m.repairs, self.seen.repairs, now.repairs);
        add(&m.steps, self.seen.steps, now.steps);
        if round.published {
            let _ = m.offset.set(round.offset_ns as f64 / 1e9);
            m.offset_abs.record(round.offset_ns.unsigned_abs());
        } else if daemon.base().service().is_some_and(|s| s.untied_rounds > 0) {
            m.untied.increment();
        }
        self.seen = now;
        self.record_bound(daemon);
    }

    fn record_bound(&mut self, daemon: &HostDaemon) {
        let m = &self.m;
        let base = daemon.base();
        if let Some(d) = base.disruptions() {
            if d.count > self.seen.disruptions {
                let new = (d.count - self.seen.disruptions) as i64;
                m.disruptions.add(new);
                // The page keeps the last kind only: what one round saw is
                // put down to it.
                if let Some((_, k)) = m.by_kind.iter().find(|(k, _)| Some(*k) == d.last_kind) {
                    k.add(new);
                }
            }
            self.seen.disruptions = d.count;
            let _ = m.pending.set(d.pending as u8 as f64);
            let _ = m.last_disruption.set(d.last_ns as f64 / 1e9);
        }
        let b = base.bound_state();
        let status = b.map_or(BoundStatus::Unknown, |b| b.status);
        for (s, g) in &m.status {
            let _ = g.set((*s == status) as u8 as f64);
        }
        let source = b.map_or(BoundSource::None, |b| b.source);
        for (s, g) in &m.bound_source {
            let _ = g.set((*s == source) as u8 as f64);
        }
        if let Some(b) = b {
            let secs = |ns: u64| ns as f64 / 1e9;
            let _ = m.bound.set(secs(b.bound_ns));
            let _ = m.line_error.set(secs(b.line_error_ns));
            let _ = m.shift.set(secs(b.shift_ns));
            let _ = m.drift.set(b.drift_ppb as f64 / 1e9);
            let _ = m.slope_error.set(b.slope_error_ppb as f64 / 1e9);
            let _ = m.age.set(secs(b.age_ns));
            let _ = m.half_width.set(secs(b.half_width_ns));
        }
    }

    /// Publishes the last values (the file stays for readers to see them).
    pub fn stop(self) {
        self.stats.stop();
    }
}

/// Adds to `c` what a page count went from `was` to `now`; a count that
/// went down was started again: `c` starts again with it.
fn add(c: &Counter, was: u64, now: u64) {
    if now >= was {
        if now > was {
            c.add((now - was) as i64);
        }
    } else {
        c.init(now as i64);
    }
}
