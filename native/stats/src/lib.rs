//! hrts runtime statistics: user-defined counters, gauges and timers collected
//! inside a program with low overhead, aggregated by incremental statistics
//! (the design of handystats) and stamped on the shared hrts timeline, so that
//! statistics from several processes and languages line up.
//!
//! ```
//! use hrts_stats::{Clock, Config, Stats};
//! # let (clock, _hand) = Clock::manual(1_000);
//! # let mut config = Config::default();
//! # config.shared_memory.enable = false; // leaves no segment behind
//! # let stats = Stats::with_clock(config, clock);
//! // let stats = Stats::new(Config::from_json(r#"{"handystats": {"timer": {"idle-timeout": 500}}}"#)?);
//! stats.start()?;
//! let requests = stats.counter("requests")?;
//! requests.increment();
//! let latency = stats.timer("latency")?;
//! {
//!     let _span = latency.scope(); // measured until dropped
//! }
//! stats.gauge("queue size")?.set(3.0)?;
//! let dump = stats.dump();
//! assert!(dump.metrics.contains_key("requests"));
//! println!("{}", dump.to_json());
//! stats.stop();
//! # Ok::<(), hrts_core::Error>(())
//! ```
//!
//! How it works:
//! - **Measuring points** ([`Counter`], [`Gauge`], [`Timer`], and the macros
//!   below) write the calling thread's own queue (a ring of plain words and
//!   per-metric cells): no lock, no allocation after the thread's first
//!   measurement, no waiting. A counter or gauge event is summed into its cell
//!   (count, sum, min, max) and stamped by the pass that takes it, unless the
//!   configuration lists it in [`exact-stamps`](config::ExactStamps); a timer
//!   event is a stamped 24-byte event in the ring. A full ring folds events
//!   into the cells instead of blocking or growing.
//! - The **processing thread** takes every queue's events, orders them by time
//!   and applies them to each metric's [incremental statistics](incremental):
//!   min, max, sum, count, mean, moving average, interval count/sum/mean, and
//!   quantiles (p50, p90, p99, p99.9) from a [histogram] with at most 1 %
//!   relative error. It makes the [dumps](dump) at the configured intervals.
//! - **Configuration** ([`Config`]) uses the seed's JSON keys and defaults.
//!
//! - **Shared statistics** ([`shared`]): every started instance publishes its
//!   metrics to a named shared-memory segment that any process of the user reads
//!   (`hrts stats`, the Prometheus endpoint, typed snapshots), and timer
//!   instances can start in one process and stop in another.

pub mod clock;
pub mod config;
pub mod dump;
mod handle;
pub mod histogram;
pub mod incremental;
mod instance;
pub mod json_file;
mod local;
mod metric;
mod points;
mod processing;
pub mod registry;
// The queue layout, public for the hrts front ends of this workspace (the JNI
// library hands it to the Java measuring points); not part of the API:
// hidden from the docs, and free to change in any release.
#[doc(hidden)]
pub mod ring;
pub mod shared;
#[cfg(test)]
mod tests;

pub use clock::{Clock, ManualClock};
pub use config::{Config, SharedMemory};
pub use dump::{CounterDump, Dump, GaugeDump, Metric, TimerDump};
pub use handle::{global, Stats};
pub use hrts_core::{Error, ErrorKind, Result};
pub use incremental::Statistics;
pub use instance::{CONTROL_OFFSETS, FLAG_EXACT, FLAG_STOPPED};
pub use points::{Counter, Gauge, MetricId, Timer, TimerOp, TimerScope, DEFAULT_INSTANCE};
pub use processing::Health;
pub use registry::Kind;

#[doc(hidden)]
pub fn __handle<T>(name: &str, r: Result<T>) -> Option<T> {
    match r {
        Ok(h) => Some(h),
        Err(e) => {
            eprintln!("hrts-stats: measuring point {name:?} disabled: {e}");
            None
        }
    }
}

/// The handle of a macro's call site, looked up once in the global instance.
#[doc(hidden)]
#[macro_export]
macro_rules! __cached {
    ($ty:ident, $make:ident, $name:expr) => {{
        static HANDLE: ::std::sync::OnceLock<::core::option::Option<$crate::$ty>> =
            ::std::sync::OnceLock::new();
        HANDLE
            .get_or_init(|| {
                let name: &str = $name;
                $crate::__handle(name, $crate::global().$make(name))
            })
            .as_ref()
    }};
}

/// Sets a counter of the global instance and restarts its statistics:
/// `counter_init!("connections", 0)`.
///
/// Every macro looks its metric up once per call site, so the name must be the
/// same each time the call site runs (a literal or constant). A name the
/// registry refuses disables the call site and is reported once on stderr.
#[macro_export]
macro_rules! counter_init {
    ($name:expr, $value:expr) => {
        if let Some(c) = $crate::__cached!(Counter, counter, $name) {
            c.init($value)
        }
    };
}

/// Increments a counter of the global instance by 1 or by a delta:
/// `counter_increment!("events count")`, `counter_increment!("bytes", n)`.
#[macro_export]
macro_rules! counter_increment {
    ($name:expr) => {
        $crate::counter_change!($name, 1)
    };
    ($name:expr, $delta:expr) => {
        $crate::counter_change!($name, $delta)
    };
}

/// Decrements a counter of the global instance by 1 or by a delta.
#[macro_export]
macro_rules! counter_decrement {
    ($name:expr) => {
        $crate::counter_change!($name, -1)
    };
    ($name:expr, $delta:expr) => {
        $crate::counter_change!($name, -($delta as i64))
    };
}

/// Changes a counter of the global instance by a signed delta.
#[macro_export]
macro_rules! counter_change {
    ($name:expr, $delta:expr) => {
        if let Some(c) = $crate::__cached!(Counter, counter, $name) {
            c.add($delta as i64)
        }
    };
}

/// Sets a gauge of the global instance; NaN is ignored.
#[macro_export]
macro_rules! gauge_set {
    ($name:expr, $value:expr) => {
        if let Some(g) = $crate::__cached!(Gauge, gauge, $name) {
            let _ = g.set($value as f64);
        }
    };
}

/// Starts a timer instance of the global instance (the default one without an id).
#[macro_export]
macro_rules! timer_start {
    ($name:expr) => {
        $crate::timer_start!($name, $crate::DEFAULT_INSTANCE)
    };
    ($name:expr, $instance:expr) => {
        if let Some(t) = $crate::__cached!(Timer, timer, $name) {
            t.start_instance($instance)
        }
    };
}

/// Stops a timer instance of the global instance and records its duration.
#[macro_export]
macro_rules! timer_stop {
    ($name:expr) => {
        $crate::timer_stop!($name, $crate::DEFAULT_INSTANCE)
    };
    ($name:expr, $instance:expr) => {
        if let Some(t) = $crate::__cached!(Timer, timer, $name) {
            t.stop_instance($instance)
        }
    };
}

/// Drops a timer instance of the global instance without recording it.
#[macro_export]
macro_rules! timer_discard {
    ($name:expr) => {
        $crate::timer_discard!($name, $crate::DEFAULT_INSTANCE)
    };
    ($name:expr, $instance:expr) => {
        if let Some(t) = $crate::__cached!(Timer, timer, $name) {
            t.discard_instance($instance)
        }
    };
}

/// Keeps a timer instance of the global instance alive past the idle timeout.
#[macro_export]
macro_rules! timer_heartbeat {
    ($name:expr) => {
        $crate::timer_heartbeat!($name, $crate::DEFAULT_INSTANCE)
    };
    ($name:expr, $instance:expr) => {
        if let Some(t) = $crate::__cached!(Timer, timer, $name) {
            t.heartbeat_instance($instance)
        }
    };
}

/// A scope of a timer of the global instance, measured until dropped:
/// `let _t = timer_scope!("parse");`. `None` if the name was refused.
#[macro_export]
macro_rules! timer_scope {
    ($name:expr) => {
        $crate::__cached!(Timer, timer, $name).map(|t| t.scope())
    };
}
