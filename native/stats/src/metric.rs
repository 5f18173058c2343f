//! The aggregated state of each metric kind, as the processing thread keeps it,
//! and what the seed says each kind collects.

use crate::dump::{CounterDump, GaugeDump, Metric, TimerDump};
use crate::incremental::{Incremental, Params, RateOf};
use std::collections::HashMap;

/// A counter: its value, and the statistics of its values, increasing deltas,
/// decreasing deltas (as magnitudes) and deltas. The values set's `rate` is
/// changes per second; each delta set's `rate` is its sum per second (how far
/// the counter moved up, down, or net).
///
/// A counter starts at 0 (or at the value of an `init`), and that starting value
/// is its first entry in `values`, as in the seed's example: deltas 1, 2, -3, 5,
/// 10 from 0 give the values 0, 1, 3, 0, 5, 15. `init` restarts the counter and
/// its statistics from the given value. The value is a signed 64-bit integer:
/// decrements may take it below zero, and it saturates at the ends of the range.
#[derive(Default)]
pub struct CounterState {
    value: i64,
    ts: u64,
    started: bool,
    values: Incremental,
    incr: Incremental,
    decr: Incremental,
    deltas: Incremental,
}

impl CounterState {
    fn start(&mut self, ts: u64, p: &Params) {
        if !self.started {
            self.started = true;
            self.values.add(self.value as f64, ts, p);
        }
        self.ts = self.ts.max(ts);
    }

    pub fn init(&mut self, value: i64, ts: u64, p: &Params) {
        *self = CounterState {
            value,
            ..CounterState::default()
        };
        self.start(ts, p);
    }

    pub fn add(&mut self, delta: i64, ts: u64, p: &Params) {
        self.start(ts, p);
        self.value = self.value.saturating_add(delta);
        self.values.add(self.value as f64, ts, p);
        self.deltas.add(delta as f64, ts, p);
        match delta.signum() {
            1 => self.incr.add(delta as f64, ts, p),
            -1 => self.decr.add(-(delta as f64), ts, p),
            _ => {}
        }
    }

    /// `n` deltas of one sign (or all zero) folded into their sum, min and max.
    /// The values they passed through are taken as evenly spaced, which is exact
    /// for equal deltas (the common increment by one).
    pub fn add_batch(&mut self, n: u64, sum: i64, min: i64, max: i64, ts: u64, p: &Params) {
        self.start(ts, p);
        let v0 = self.value;
        self.value = v0.saturating_add(sum);
        let (nf, v0f, sumf) = (n as f64, v0 as f64, sum as f64);
        let values_sum = nf * v0f + sumf * (nf + 1.0) / 2.0;
        let (vmin, vmax) = if min > 0 {
            ((v0f + min as f64), self.value as f64)
        } else if max < 0 {
            (self.value as f64, v0f + max as f64)
        } else {
            (v0f, v0f)
        };
        self.values.add_batch(n, values_sum, vmin, vmax, ts, p);
        self.deltas
            .add_batch(n, sumf, min as f64, max as f64, ts, p);
        if min > 0 {
            self.incr.add_batch(n, sumf, min as f64, max as f64, ts, p);
        } else if max < 0 {
            self.decr
                .add_batch(n, -sumf, -(max as f64), -(min as f64), ts, p);
        }
    }

    pub fn dump(&self, now: u64, p: &Params) -> Option<Metric> {
        self.started.then(|| {
            Metric::Counter(Box::new(CounterDump {
                timestamp: self.ts,
                value: self.value,
                values: self.values.snapshot(now, p),
                // The delta sets' rate is the amount per second (incr-deltas:
                // what Prometheus' rate() gives for a counter that only grows),
                // the values set's the changes per second.
                incr_deltas: self.incr.snapshot_rate_of(now, p, RateOf::Sum),
                decr_deltas: self.decr.snapshot_rate_of(now, p, RateOf::Sum),
                deltas: self.deltas.snapshot_rate_of(now, p, RateOf::Sum),
            }))
        })
    }
}

/// A gauge: the values it was set to.
#[derive(Default)]
pub struct GaugeState {
    value: Option<f64>,
    ts: u64,
    values: Incremental,
}

impl GaugeState {
    pub fn set(&mut self, v: f64, ts: u64, p: &Params) {
        self.set_batch(1, v, v, v, v, ts, p);
    }

    #[allow(clippy::too_many_arguments)]
    pub fn set_batch(
        &mut self,
        n: u64,
        sum: f64,
        min: f64,
        max: f64,
        last: f64,
        ts: u64,
        p: &Params,
    ) {
        if ts >= self.ts || self.value.is_none() {
            self.value = Some(last);
            self.ts = ts;
        }
        self.values.add_batch(n, sum, min, max, ts, p);
    }

    pub fn dump(&self, now: u64, p: &Params) -> Option<Metric> {
        self.value.map(|value| {
            Metric::Gauge(GaugeDump {
                timestamp: self.ts,
                value,
                values: self.values.snapshot(now, p),
            })
        })
    }
}

#[derive(Clone, Copy, Debug)]
struct Instance {
    start: u64,
    alive: u64,
}

/// What happened to a timer event that could not be used.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimerOutcome {
    Ok,
    /// A stop (or heartbeat) for an instance that is not running.
    NotStarted,
    /// The instance had seen no event for longer than the idle timeout.
    TimedOut,
}

/// A timer: the durations of its correctly finished instances, in nanoseconds.
#[derive(Default)]
pub struct TimerState {
    last: Option<u64>,
    ts: u64,
    durations: Incremental,
    instances: HashMap<u64, Instance>,
}

impl TimerState {
    /// Starts (or restarts) an instance.
    pub fn start(&mut self, instance: u64, ts: u64) {
        self.instances.insert(
            instance,
            Instance {
                start: ts,
                alive: ts,
            },
        );
    }

    pub fn heartbeat(&mut self, instance: u64, ts: u64, idle: u64) -> TimerOutcome {
        match self.instances.get_mut(&instance) {
            None => TimerOutcome::NotStarted,
            Some(i) if ts.saturating_sub(i.alive) > idle => {
                self.instances.remove(&instance);
                TimerOutcome::TimedOut
            }
            Some(i) => {
                i.alive = i.alive.max(ts);
                TimerOutcome::Ok
            }
        }
    }

    pub fn stop(&mut self, instance: u64, ts: u64, idle: u64, p: &Params) -> TimerOutcome {
        match self.instances.remove(&instance) {
            None => TimerOutcome::NotStarted,
            Some(i) if ts.saturating_sub(i.alive) > idle => TimerOutcome::TimedOut,
            Some(i) => {
                self.record(ts.saturating_sub(i.start), ts, p);
                TimerOutcome::Ok
            }
        }
    }

    pub fn discard(&mut self, instance: u64) {
        self.instances.remove(&instance);
    }

    pub fn record(&mut self, duration: u64, ts: u64, p: &Params) {
        self.record_batch(1, duration as f64, duration, duration, duration, ts, p);
    }

    #[allow(clippy::too_many_arguments)]
    pub fn record_batch(
        &mut self,
        n: u64,
        sum: f64,
        min: u64,
        max: u64,
        last: u64,
        ts: u64,
        p: &Params,
    ) {
        if ts >= self.ts || self.last.is_none() {
            self.last = Some(last);
            self.ts = ts;
        }
        self.durations
            .add_batch(n, sum, min as f64, max as f64, ts, p);
    }

    /// Drops instances idle for longer than `idle` at `now`; returns how many.
    pub fn sweep(&mut self, now: u64, idle: u64) -> usize {
        let before = self.instances.len();
        self.instances
            .retain(|_, i| now.saturating_sub(i.alive) <= idle);
        before - self.instances.len()
    }

    pub fn running(&self) -> usize {
        self.instances.len()
    }

    pub fn dump(&self, now: u64, p: &Params) -> Option<Metric> {
        self.last.map(|value| {
            Metric::Timer(TimerDump {
                timestamp: self.ts,
                value,
                values: self.durations.snapshot(now, p),
            })
        })
    }
}

/// One metric's state.
pub enum State {
    Counter(Box<CounterState>),
    Gauge(GaugeState),
    Timer(TimerState),
}
