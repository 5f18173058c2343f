//! Statistics, the C face of hrts-stats: the process-wide statistics instance,
//! its metrics by id, measuring points and dumps. The `HRTS_COUNTER_INCREMENT`-style
//! macros in the header cache each call site's metric id in a static. The
//! periodic JSON dump is in [`json`], the statistics shared between processes
//! in [`shared`].

pub(crate) mod json;
pub(crate) mod shared;

pub use json::*;
pub use shared::*;

use crate::boundary::c_calls;
use crate::status::{Failure, HrtsStatus};
use hrts_stats::{global, Config, Kind, Metric, MetricId, Statistics, TimerOp};
use std::ffi::{c_char, c_int, CStr, CString};
use std::sync::{Arc, OnceLock};

/// Kind of a counter metric, for `hrts_stats_metric`.
pub const HRTS_STATS_COUNTER: u32 = 1;
/// Kind of a gauge metric.
pub const HRTS_STATS_GAUGE: u32 = 2;
/// Kind of a timer metric.
pub const HRTS_STATS_TIMER: u32 = 3;
/// The instance id of a timer's default instance.
pub const HRTS_STATS_DEFAULT_INSTANCE: u64 = u64::MAX;

pub(crate) fn text<'a>(p: *const c_char, arg: &str, function: &str) -> Result<&'a str, Failure> {
    if p.is_null() {
        return Err(Failure::null(arg, function));
    }
    // SAFETY: non-NULL, and by the exported functions' contract a NUL-terminated
    // string that stays valid for the call.
    let s = unsafe { CStr::from_ptr(p) };
    s.to_str().map_err(|e| {
        Failure::new(
            HrtsStatus::E_INVALID_ARGUMENT,
            format!("{function}: `{arg}` is not valid UTF-8 ({e})"),
        )
    })
}

/// One statistics set of a dumped metric. Values that need at least one datum
/// are NaN when there is none.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
#[allow(non_camel_case_types)]
pub struct hrts_stats_statistics {
    pub count: u64,
    pub sum: f64,
    pub min: f64,
    pub max: f64,
    pub mean: f64,
    pub moving_avg: f64,
    pub interval_count: f64,
    pub interval_sum: f64,
    pub interval_mean: f64,
    /// Per second over the moving interval: data per second in a values set,
    /// the set's sum per second in a counter's delta sets (incr-deltas:
    /// amount added, decr-deltas: amount taken away, deltas: net change); 0
    /// when nothing is in the window.
    pub rate: f64,
    pub p50: f64,
    pub p90: f64,
    pub p99: f64,
    pub p99_9: f64,
}

/// One metric of a dump. `statistics` holds `statistics_count` sets: a
/// counter's values, incr-deltas, decr-deltas and deltas; a gauge's or a
/// timer's values.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
#[allow(non_camel_case_types)]
pub struct hrts_stats_metric_dump {
    /// The metric's name, valid until the dump is freed.
    pub name: *const c_char,
    /// `HRTS_STATS_COUNTER`, `_GAUGE` or `_TIMER`.
    pub kind: u32,
    pub statistics_count: u32,
    /// Last update, epoch nanoseconds on the hrts timeline: the update's own
    /// stamp for a timer, or a counter or gauge listed in `exact-stamps`; else
    /// the time of the processing pass that took it.
    pub timestamp: u64,
    /// A counter's value.
    pub counter_value: i64,
    /// A gauge's value, a timer's last duration (ns), a counter's value as a double.
    pub value: f64,
    pub statistics: [hrts_stats_statistics; 4],
}

/// A dump: its metrics, and its JSON text made on first request.
#[allow(non_camel_case_types)]
pub struct hrts_stats_dump {
    names: Vec<CString>,
    metrics: Vec<hrts_stats_metric_dump>,
    dump: Arc<hrts_stats::Dump>,
    json: OnceLock<CString>,
}

fn c_statistics(s: &Statistics) -> hrts_stats_statistics {
    let f = |v: Option<f64>| v.unwrap_or(f64::NAN);
    hrts_stats_statistics {
        count: s.count,
        sum: s.sum,
        min: f(s.min),
        max: f(s.max),
        mean: f(s.mean),
        moving_avg: f(s.moving_avg),
        interval_count: s.interval_count,
        interval_sum: s.interval_sum,
        interval_mean: f(s.interval_mean),
        rate: s.rate,
        p50: f(s.quantiles[0]),
        p90: f(s.quantiles[1]),
        p99: f(s.quantiles[2]),
        p99_9: f(s.quantiles[3]),
    }
}

/// The C form of a dump; a snapshot of the shared statistics makes one per
/// process ([`shared`]), so the JSON text is only made when asked for.
pub(crate) fn c_dump(dump: Arc<hrts_stats::Dump>) -> Box<hrts_stats_dump> {
    let mut out = Box::new(hrts_stats_dump {
        names: Vec::with_capacity(dump.metrics.len()),
        metrics: Vec::with_capacity(dump.metrics.len()),
        dump,
        json: OnceLock::new(),
    });
    let out_ref = &mut *out;
    for (name, m) in &out_ref.dump.metrics {
        // Metric names have no control characters, so no NUL.
        let cname = CString::new(name.as_str()).unwrap_or_default();
        let sets = m.statistics();
        let mut statistics = [hrts_stats_statistics::default(); 4];
        for (slot, (_, s)) in statistics.iter_mut().zip(&sets) {
            *slot = c_statistics(s);
        }
        let (kind, counter_value, value) = match m {
            Metric::Counter(c) => (HRTS_STATS_COUNTER, c.value, c.value as f64),
            Metric::Gauge(g) => (HRTS_STATS_GAUGE, 0, g.value),
            Metric::Timer(t) => (HRTS_STATS_TIMER, 0, t.value as f64),
        };
        out_ref.metrics.push(hrts_stats_metric_dump {
            // The CString's heap buffer does not move when `names` grows.
            name: cname.as_ptr(),
            kind,
            statistics_count: sets.len() as u32,
            timestamp: m.timestamp(),
            counter_value,
            value,
            statistics,
        });
        out_ref.names.push(cname);
    }
    out
}

/// Runs `f` on the metric id `metric`, if it is one (measuring points ignore
/// anything else).
#[inline(always)]
fn with_id(metric: u64, f: impl FnOnce(MetricId)) {
    if let Some(id) = MetricId::from_bits(metric) {
        f(id)
    }
}

/// The dump behind a pointer.
///
/// # Safety
/// `dump` must be NULL or a dump not yet freed, for as long as the reference
/// is used.
unsafe fn dump_ref<'a>(dump: *const hrts_stats_dump) -> Option<&'a hrts_stats_dump> {
    // SAFETY: NULL or a live dump, by this function's contract.
    unsafe { dump.as_ref() }
}

c_calls! {
    /// Applies a statistics configuration in JSON (the seed's
    /// `{"handystats": {...}}` shape or its inner object). Only while stopped.
    /// Errors name the bad key: `HRTS_E_INVALID_ARGUMENT`.
    ///
    /// # Safety
    /// `json` must be NULL (`HRTS_E_NULL_POINTER`) or a NUL-terminated string.
    unsafe fn hrts_stats_configure_json(json: *const c_char) -> () {
        let cfg = Config::from_json(text(json, "json", FUNCTION)?)?;
        Ok(global().configure(cfg)?)
    }

    /// Reads a statistics configuration file (JSON, see
    /// `hrts_stats_configure_json`). Only while stopped.
    ///
    /// # Safety
    /// `path` must be NULL (`HRTS_E_NULL_POINTER`) or a NUL-terminated string.
    unsafe fn hrts_stats_configure_file(path: *const c_char) -> () {
        let cfg = Config::from_file(text(path, "path", FUNCTION)?)?;
        Ok(global().configure(cfg)?)
    }

    /// Starts collecting (the seed's HANDY_INIT): measuring points record and the
    /// processing thread runs. Does nothing if already running. Opens the
    /// process's hrts segment if needed.
    fn hrts_stats_start() -> () {
        Ok(global().start()?)
    }

    /// Stops collecting (the seed's finalize): applies what is queued, makes the
    /// final dumps, stops the processing thread. Does nothing if not running.
    fn hrts_stats_stop() -> () {
        global().stop();
        Ok(())
    }

    /// 1 while collecting, 0 otherwise.
    #[on_panic(0)]
    fn hrts_stats_is_running() -> c_int {
        global().is_running() as c_int
    }

    /// The id of metric `name` of `kind` (`HRTS_STATS_COUNTER`, `_GAUGE`,
    /// `_TIMER`), created on first use; ids are never 0. Errors
    /// (`HRTS_E_INVALID_ARGUMENT`): an empty, too long (over 255 bytes) or non-UTF-8
    /// name, a name already used by another kind, an unknown kind, too many metrics.
    ///
    /// # Safety
    /// `name` must be NULL or a NUL-terminated string; `out` NULL or writable.
    unsafe fn hrts_stats_metric(name: *const c_char, kind: u32) -> (out: u64) {
        let name = text(name, "name", FUNCTION)?;
        let kind = match kind {
            HRTS_STATS_COUNTER => Kind::Counter,
            HRTS_STATS_GAUGE => Kind::Gauge,
            HRTS_STATS_TIMER => Kind::Timer,
            other => {
                return Err(Failure::new(
                    HrtsStatus::E_INVALID_ARGUMENT,
                    format!(
                        "{FUNCTION}: kind {other} is none of HRTS_STATS_COUNTER, _GAUGE, _TIMER"
                    ),
                ))
            }
        };
        Ok(global().metric_id(name, kind)?.to_bits())
    }

    /// Sets a counter and restarts its statistics from that value. An id that is
    /// not a counter's is ignored, as are all measuring points while stopped.
    fn hrts_stats_counter_init(counter: u64, value: i64) {
        with_id(counter, |id| global().counter_init_id(id, value))
    }

    /// Changes a counter by `delta` (negative decreases; the value saturates at
    /// the ends of int64_t). Unless the configuration lists the counter in
    /// `exact-stamps`, the delta takes no stamp: it is summed into the calling
    /// thread's cell and stamped by the processing pass that takes it.
    fn hrts_stats_counter_add(counter: u64, delta: i64) {
        with_id(counter, |id| global().counter_add_id(id, delta))
    }

    /// Sets a gauge. NaN is refused with `HRTS_E_INVALID_ARGUMENT`. Stamped as a
    /// counter's delta is (see `hrts_stats_counter_add`).
    fn hrts_stats_gauge_set(gauge: u64, value: f64) -> () {
        if let Some(id) = MetricId::from_bits(gauge) {
            global().gauge_set_id(id, value)?;
        }
        Ok(())
    }

    /// Starts (or restarts) a timer instance; `HRTS_STATS_DEFAULT_INSTANCE` is the
    /// default one.
    fn hrts_stats_timer_start(timer: u64, instance: u64) {
        with_id(timer, |id| global().timer_id(id, TimerOp::Start, instance))
    }

    /// Stops a timer instance and records its duration. A stop without a running
    /// instance records nothing and is counted in the dump's
    /// `hrts-stats.timer-stops-without-start`.
    fn hrts_stats_timer_stop(timer: u64, instance: u64) {
        with_id(timer, |id| global().timer_id(id, TimerOp::Stop, instance))
    }

    /// Drops a timer instance without recording it.
    fn hrts_stats_timer_discard(timer: u64, instance: u64) {
        with_id(timer, |id| global().timer_id(id, TimerOp::Discard, instance))
    }

    /// Keeps a timer instance alive: its idle timeout counts from now.
    fn hrts_stats_timer_heartbeat(timer: u64, instance: u64) {
        with_id(timer, |id| global().timer_id(id, TimerOp::Heartbeat, instance))
    }

    /// Records a duration measured by the caller, in nanoseconds.
    fn hrts_stats_timer_record(timer: u64, duration_ns: u64) {
        with_id(timer, |id| global().timer_record_id(id, duration_ns))
    }

    /// Makes a dump now, after applying everything queued so far, and hands it to
    /// the caller, who frees it with `hrts_stats_dump_free`. It waits for the
    /// processing thread's current pass, never for a measuring point.
    ///
    /// # Safety
    /// `out` must be NULL (`HRTS_E_NULL_POINTER`) or writable.
    unsafe fn hrts_stats_dump_now() -> (out: *mut hrts_stats_dump) {
        Ok(Box::into_raw(c_dump(global().dump())))
    }

    /// The latest dump the library made (every `metrics-dump.interval`, on demand,
    /// or at stop), or NULL written to `out` if there is none yet.
    ///
    /// # Safety
    /// `out` must be NULL (`HRTS_E_NULL_POINTER`) or writable.
    unsafe fn hrts_stats_dump_last() -> (out: *mut hrts_stats_dump) {
        Ok(global()
            .last_dump()
            .map_or(std::ptr::null_mut(), |d| Box::into_raw(c_dump(d))))
    }

    /// How many metrics the dump holds (0 for NULL).
    ///
    /// # Safety
    /// `dump` must be NULL or a dump not yet freed.
    #[on_panic(0)]
    unsafe fn hrts_stats_dump_len(dump: *const hrts_stats_dump) -> usize {
        // SAFETY: NULL or a live dump, by the contract.
        unsafe { dump_ref(dump) }.map_or(0, |d| d.metrics.len())
    }

    /// The `index`-th metric of the dump (names in byte order), or NULL when out of
    /// range. Valid until the dump is freed.
    ///
    /// # Safety
    /// `dump` must be NULL or a dump not yet freed.
    #[on_panic(std::ptr::null())]
    unsafe fn hrts_stats_dump_metric(
        dump: *const hrts_stats_dump,
        index: usize,
    ) -> *const hrts_stats_metric_dump {
        // SAFETY: NULL or a live dump, by the contract.
        unsafe { dump_ref(dump) }
            .and_then(|d| d.metrics.get(index))
            .map_or(std::ptr::null(), |m| m as *const _)
    }

    /// The dump as JSON in the seed's shape, valid until the dump is freed ("" for
    /// NULL).
    ///
    /// # Safety
    /// `dump` must be NULL or a dump not yet freed.
    #[on_panic(c"".as_ptr())]
    unsafe fn hrts_stats_dump_json(dump: *const hrts_stats_dump) -> *const c_char {
        // SAFETY: NULL or a live dump, by the contract.
        unsafe { dump_ref(dump) }.map_or(c"".as_ptr(), |d| {
            d.json
                // serde_json escapes control characters, so the text has no NUL.
                .get_or_init(|| CString::new(d.dump.to_json()).unwrap_or_default())
                .as_ptr()
        })
    }

    /// Frees a dump; NULL is ignored.
    ///
    /// # Safety
    /// `dump` must be NULL or a dump from `hrts_stats_dump_now`/`_last` not yet
    /// freed; it must not be used afterwards.
    unsafe fn hrts_stats_dump_free(dump: *mut hrts_stats_dump) {
        if !dump.is_null() {
            // SAFETY: a pointer from Box::into_raw in this module, freed once
            // (the contract).
            drop(unsafe { Box::from_raw(dump) });
        }
    }
}
