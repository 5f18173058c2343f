//! The statistics of every process merged by metric name: what `hrts stats`
//! shows as "all processes" and `--json` as `"aggregate"`.
//!
//! Rules, for each metric name, over live and exited processes alike:
//! - a name used with different kinds by different processes aggregates only
//!   the kind of the lowest pid (then lowest instance) that has it;
//! - a counter's value is the sum of the processes' values (saturating);
//! - a gauge's or timer's value is the one of the most recent update (the
//!   largest metric timestamp; on a tie, the lowest pid's);
//! - statistics sets are merged: count and sum added, min of the mins, max of
//!   the maxes, mean = sum / count, moving average = the count-weighted mean of
//!   the moving averages, interval count and interval sum added, interval
//!   mean = interval sum / interval count (`null` when that is 0), rates
//!   added (a sum of rates is a rate: events per second of all processes);
//! - quantiles are `null` unless exactly one process contributes data to the
//!   set: a quantile of the union cannot be computed from the parts' quantiles;
//! - the metric's timestamp is the largest of the processes'.
//!
//! A metric seen by only one process therefore aggregates to exactly its own
//! entry. The aggregate dump's timestamp is the newest of the processes' dump
//! timestamps (0 when there is no process).

use super::snapshot::{ProcessStats, Snapshot};
use crate::dump::{CounterDump, Dump, GaugeDump, Metric, TimerDump};
use crate::incremental::Statistics;
use std::collections::BTreeMap;

impl Snapshot {
    /// Every metric name of every process, merged by the rules of this module.
    pub fn aggregate(&self) -> Dump {
        let mut order: Vec<&ProcessStats> = self.processes.iter().collect();
        order.sort_by_key(|p| (p.pid, p.instance));
        // Per name: the kind that counts (the lowest pid's) and its entries.
        let mut by_name: BTreeMap<&str, Vec<&Metric>> = BTreeMap::new();
        for p in &order {
            for (name, metric) in &p.dump.metrics {
                let entries = by_name.entry(name.as_str()).or_default();
                if entries
                    .first()
                    .is_none_or(|first| first.type_name() == metric.type_name())
                {
                    entries.push(metric);
                }
            }
        }
        Dump {
            timestamp: order.iter().map(|p| p.dump.timestamp).max().unwrap_or(0),
            metrics: by_name
                .into_iter()
                .map(|(name, entries)| (name.to_string(), merge_metrics(&entries)))
                .collect(),
        }
    }
}

/// Merges entries of one kind (at least one, all of the first one's kind).
fn merge_metrics(entries: &[&Metric]) -> Metric {
    let timestamp = entries.iter().map(|m| m.timestamp()).max().unwrap_or(0);
    // The entry of the most recent update; `max_by_key` keeps the last of
    // equals, so walk in reverse for the lowest pid to win a tie.
    let newest = entries
        .iter()
        .rev()
        .max_by_key(|m| m.timestamp())
        .copied()
        .unwrap_or(entries[0]);
    let sets = |pick: fn(&Metric) -> Option<&Statistics>| -> Statistics {
        merge_statistics(entries.iter().filter_map(|m| pick(m)))
    };
    match newest {
        Metric::Counter(_) => {
            let counters: Vec<&CounterDump> = entries
                .iter()
                .filter_map(|m| match m {
                    Metric::Counter(c) => Some(&**c),
                    _ => None,
                })
                .collect();
            let value = counters
                .iter()
                .fold(0i64, |acc, c| acc.saturating_add(c.value));
            let merged = |pick: fn(&CounterDump) -> &Statistics| {
                merge_statistics(counters.iter().map(|c| pick(c)))
            };
            Metric::Counter(Box::new(CounterDump {
                timestamp,
                value,
                values: merged(|c| &c.values),
                incr_deltas: merged(|c| &c.incr_deltas),
                decr_deltas: merged(|c| &c.decr_deltas),
                deltas: merged(|c| &c.deltas),
            }))
        }
        Metric::Gauge(g) => Metric::Gauge(GaugeDump {
            timestamp,
            value: g.value,
            values: sets(|m| match m {
                Metric::Gauge(g) => Some(&g.values),
                _ => None,
            }),
        }),
        Metric::Timer(t) => Metric::Timer(TimerDump {
            timestamp,
            value: t.value,
            values: sets(|m| match m {
                Metric::Timer(t) => Some(&t.values),
                _ => None,
            }),
        }),
    }
}

/// Merges statistics sets of the same metric from several processes.
fn merge_statistics<'a>(sets: impl IntoIterator<Item = &'a Statistics>) -> Statistics {
    let mut out = Statistics::default();
    let mut contributors = 0usize;
    let mut contributor: Option<&Statistics> = None;
    let (mut weighted_avg, mut avg_weight) = (0.0f64, 0u64);
    for s in sets {
        out.count = out.count.saturating_add(s.count);
        out.sum += s.sum;
        out.min = combine(out.min, s.min, f64::min);
        out.max = combine(out.max, s.max, f64::max);
        out.interval_count += s.interval_count;
        out.interval_sum += s.interval_sum;
        out.rate += s.rate;
        if let (Some(avg), true) = (s.moving_avg, s.count > 0) {
            weighted_avg += avg * s.count as f64;
            avg_weight += s.count;
        }
        if s.count > 0 {
            contributors += 1;
            contributor = Some(s);
        }
    }
    out.mean = (out.count > 0).then(|| out.sum / out.count as f64);
    out.moving_avg = (avg_weight > 0).then(|| weighted_avg / avg_weight as f64);
    if let (1, Some(only)) = (contributors, contributor) {
        // One process's data: its own figures, not a rounding of them.
        out.moving_avg = only.moving_avg;
        out.quantiles = only.quantiles;
    }
    out.interval_mean = (out.interval_count > 0.0).then(|| out.interval_sum / out.interval_count);
    out
}

/// Combines two optional values with `f`; a missing one does not count.
fn combine(a: Option<f64>, b: Option<f64>, f: fn(f64, f64) -> f64) -> Option<f64> {
    match (a, b) {
        (Some(a), Some(b)) => Some(f(a, b)),
        (a, b) => a.or(b),
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::incremental::{Incremental, Params};
    use crate::shared::ProcessState;
    use rand::{Rng, SeedableRng};

    const P: Params = Params {
        alpha: 0.125,
        interval_ns: 1e9,
    };

    /// The statistics of `values`, all at time `t`, seen at time `t`.
    pub(crate) fn stats_of(values: &[f64], t: u64) -> Statistics {
        let mut inc = Incremental::default();
        for &v in values {
            inc.add(v, t, &P);
        }
        inc.snapshot(t, &P)
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
    }

    pub(crate) fn process(pid: u32, metrics: Vec<(&str, Metric)>) -> ProcessStats {
        ProcessStats {
            pid,
            instance: 1,
            program: format!("p{pid}"),
            instance_id: String::new(),
            state: ProcessState::Live,
            dump: Dump {
                timestamp: 1000 + pid as u64,
                metrics: metrics
                    .into_iter()
                    .map(|(n, m)| (n.to_string(), m))
                    .collect(),
            },
        }
    }

    pub(crate) fn snapshot(processes: Vec<ProcessStats>) -> Snapshot {
        Snapshot {
            segment: "/test".into(),
            taken: 5000,
            processes,
            damaged_slots: Vec::new(),
            damaged_cells: Vec::new(),
        }
    }

    pub(crate) fn gauge(value: f64, ts: u64, values: &[f64]) -> Metric {
        Metric::Gauge(GaugeDump {
            timestamp: ts,
            value,
            values: stats_of(values, ts),
        })
    }

    pub(crate) fn timer(value: u64, ts: u64, values: &[f64]) -> Metric {
        Metric::Timer(TimerDump {
            timestamp: ts,
            value,
            values: stats_of(values, ts),
        })
    }

    pub(crate) fn counter(value: i64, ts: u64, values: &[f64]) -> Metric {
        let s = stats_of(values, ts);
        Metric::Counter(Box::new(CounterDump {
            timestamp: ts,
            value,
            values: s.clone(),
            incr_deltas: s.clone(),
            decr_deltas: stats_of(&[], ts),
            deltas: s,
        }))
    }

    #[test]
    fn merged_sets_equal_the_statistics_of_the_concatenated_values() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(13);
        for _ in 0..200 {
            let parts: Vec<Vec<f64>> = (0..rng.random_range(1..6))
                .map(|_| {
                    (0..rng.random_range(0..50))
                        .map(|_| rng.random_range(-1000i64..1000) as f64 * 0.5)
                        .collect()
                })
                .collect();
            let t = 7_000_000_000;
            let sets: Vec<Statistics> = parts.iter().map(|p| stats_of(p, t)).collect();
            let merged = merge_statistics(&sets);
            let all: Vec<f64> = parts.concat();
            let want = stats_of(&all, t);
            assert_eq!(merged.count, want.count);
            assert!(close(merged.sum, want.sum));
            assert_eq!((merged.min, merged.max), (want.min, want.max));
            match (merged.mean, want.mean) {
                (Some(a), Some(b)) => assert!(close(a, b)),
                (a, b) => assert_eq!(a, b),
            }
            // All data at one instant and seen then: the windows hold everything.
            assert!(close(merged.interval_count, want.interval_count));
            assert!(close(merged.interval_sum, want.interval_sum));
            assert_eq!(merged.interval_mean.is_some(), want.interval_mean.is_some());
            if let (Some(a), Some(b)) = (merged.interval_mean, want.interval_mean) {
                assert!(close(a, b));
            }
            // The rate of all processes' data is the sum of their rates.
            assert!(
                close(merged.rate, want.rate),
                "{} {}",
                merged.rate,
                want.rate
            );
            assert!(close(merged.rate, sets.iter().map(|s| s.rate).sum()));
            // Moving average: count-weighted mean of the parts' averages.
            let (num, den) = sets
                .iter()
                .filter(|s| s.count > 0)
                .fold((0.0, 0u64), |(n, d), s| {
                    (n + s.moving_avg.unwrap() * s.count as f64, d + s.count)
                });
            match merged.moving_avg {
                Some(m) => assert!(close(m, num / den as f64)),
                None => assert_eq!(den, 0),
            }
            let contributing: Vec<&Statistics> = sets.iter().filter(|s| s.count > 0).collect();
            if contributing.len() == 1 {
                assert_eq!(merged.quantiles, contributing[0].quantiles);
                assert_eq!(&merged, contributing[0]);
            } else {
                assert_eq!(merged.quantiles, [None; 4]);
            }
        }
    }

    #[test]
    fn a_metric_of_one_process_aggregates_to_itself() {
        let m = counter(7, 40, &[0.0, 3.0, 7.0]);
        let snap = snapshot(vec![
            process(10, vec![("only", m.clone())]),
            process(11, vec![]),
        ]);
        let agg = snap.aggregate();
        assert_eq!(agg.metrics["only"], m);
        assert_eq!(agg.timestamp, 1011);
        assert_eq!(snapshot(vec![]).aggregate().metrics.len(), 0);
        assert_eq!(snapshot(vec![]).aggregate().timestamp, 0);
    }

    #[test]
    fn counters_add_gauges_and_timers_take_the_newest_value() {
        let snap = snapshot(vec![
            process(
                30,
                vec![
                    ("c", counter(5, 100, &[1.0, 5.0])),
                    ("g", gauge(1.5, 300, &[1.5])),
                    ("t", timer(20, 100, &[20.0, 40.0])),
                ],
            ),
            process(
                20,
                vec![
                    ("c", counter(-2, 200, &[-2.0])),
                    ("g", gauge(9.0, 200, &[9.0, 8.0])),
                    ("t", timer(70, 400, &[70.0])),
                ],
            ),
        ]);
        let agg = snap.aggregate();
        let Metric::Counter(c) = &agg.metrics["c"] else {
            panic!()
        };
        assert_eq!((c.value, c.timestamp), (3, 200));
        assert_eq!((c.values.count, c.values.sum), (3, 4.0));
        assert_eq!((c.values.min, c.values.max), (Some(-2.0), Some(5.0)));
        assert_eq!(c.values.quantiles, [None; 4]);
        let Metric::Gauge(g) = &agg.metrics["g"] else {
            panic!()
        };
        assert_eq!((g.value, g.timestamp, g.values.count), (1.5, 300, 3));
        assert_eq!(g.values.mean, Some((1.5 + 9.0 + 8.0) / 3.0));
        let Metric::Timer(t) = &agg.metrics["t"] else {
            panic!()
        };
        assert_eq!((t.value, t.timestamp, t.values.count), (70, 400, 3));
        assert_eq!(t.values.sum, 130.0);
    }

    #[test]
    fn a_tie_in_time_goes_to_the_lowest_pid() {
        let snap = snapshot(vec![
            process(9, vec![("g", gauge(2.0, 50, &[2.0]))]),
            process(4, vec![("g", gauge(1.0, 50, &[1.0]))]),
        ]);
        let Metric::Gauge(g) = &snap.aggregate().metrics["g"] else {
            panic!()
        };
        assert_eq!(g.value, 1.0);
    }

    #[test]
    fn a_name_with_two_kinds_aggregates_the_lowest_pids_kind_only() {
        let snap = snapshot(vec![
            process(8, vec![("x", gauge(4.0, 10, &[4.0]))]),
            process(3, vec![("x", counter(2, 5, &[0.0, 2.0]))]),
            process(5, vec![("x", counter(3, 6, &[0.0, 3.0]))]),
        ]);
        let Metric::Counter(c) = &snap.aggregate().metrics["x"] else {
            panic!("the lowest pid's kind is a counter")
        };
        assert_eq!((c.value, c.timestamp, c.values.count), (5, 6, 4));
    }

    #[test]
    fn counter_values_saturate() {
        let snap = snapshot(vec![
            process(1, vec![("c", counter(i64::MAX - 1, 1, &[1.0]))]),
            process(2, vec![("c", counter(5, 1, &[1.0]))]),
        ]);
        let Metric::Counter(c) = &snap.aggregate().metrics["c"] else {
            panic!()
        };
        assert_eq!(c.value, i64::MAX);
    }
}
