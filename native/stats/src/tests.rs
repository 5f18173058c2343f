//! End-to-end tests of an instance against brute-force references, driven on a
//! manual clock so that every stamp is known.

use crate::config::ExactStamps;
use crate::incremental::reference::expected;
use crate::incremental::{Params, RateOf, Statistics};
use crate::{Clock, Config, Dump, ManualClock, Metric, Stats};
use rand::{Rng, SeedableRng};
use std::time::Duration;

const T0: u64 = 1_700_000_000_000_000_000;
const MS: u64 = 1_000_000;

/// The defaults without publishing to shared memory (`shared::tests` covers
/// that, on segments of its own): these tests leave no segment behind.
fn unpublished() -> Config {
    Config {
        shared_memory: crate::SharedMemory {
            enable: false,
            ..Default::default()
        },
        ..Config::default()
    }
}

fn quiet_config() -> Config {
    Config {
        json_dump_interval: Duration::ZERO,
        metrics_dump_interval: Duration::ZERO,
        ..unpublished()
    }
}

/// Every counter and gauge event stamped when it happens: what the references
/// that stamp each event compare with.
fn exact(cfg: Config) -> Config {
    Config {
        exact_stamps: ExactStamps(vec!["*".into()]),
        ..cfg
    }
}

fn manual(cfg: Config) -> (Stats, ManualClock) {
    let (clock, hand) = Clock::manual(T0);
    let stats = Stats::with_clock(cfg, clock);
    stats.start().unwrap();
    (stats, hand)
}

fn params(cfg: &Config) -> Params {
    Params {
        alpha: cfg.moving_average_alpha,
        interval_ns: cfg.moving_interval.as_nanos() as f64,
    }
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
}

/// Compares a statistics set with the seed's formulas applied to `data`; its
/// rate with the reference's interval count (or sum, per `rate_of`) over the
/// moving interval in seconds.
fn assert_matches(
    what: &str,
    got: &Statistics,
    data: &[(f64, u64)],
    now: u64,
    p: &Params,
    rate_of: RateOf,
) {
    if data.is_empty() {
        assert_eq!(got.count, 0, "{what}");
        assert_eq!(got.rate, 0.0, "{what} rate");
        assert_eq!((got.min, got.max, got.mean), (None, None, None), "{what}");
        return;
    }
    let want = expected(data, now, p);
    assert_eq!(got.count, want.count, "{what} count");
    assert_eq!(got.sum, want.sum, "{what} sum");
    assert_eq!(got.min, Some(want.min), "{what} min");
    assert_eq!(got.max, Some(want.max), "{what} max");
    assert_eq!(got.mean, Some(want.sum / want.count as f64), "{what} mean");
    assert!(
        close(got.moving_avg.unwrap(), want.moving_avg),
        "{what} moving-avg"
    );
    assert!(
        close(got.interval_count, want.interval_count),
        "{what} interval-count"
    );
    assert!(
        close(got.interval_sum, want.interval_sum),
        "{what} interval-sum"
    );
    let per_window = match rate_of {
        RateOf::Count => want.interval_count,
        RateOf::Sum => want.interval_sum,
    };
    let want_rate = per_window / (p.interval_ns / 1e9);
    assert!(
        close(got.rate, want_rate),
        "{what} rate: {} vs {want_rate}",
        got.rate
    );
    for (q, level) in got.quantiles.iter().zip(crate::histogram::QUANTILES) {
        let n = want.sorted.len();
        let exact = want.sorted[((level * n as f64).ceil() as usize).clamp(1, n) - 1];
        let err = (q.unwrap() - exact).abs();
        assert!(
            err <= 0.01 * exact.abs(),
            "{what} p{level}: {q:?} vs {exact}"
        );
    }
}

#[test]
fn counters_gauges_and_timers_match_the_brute_force_reference() {
    let cfg = exact(Config {
        moving_average_alpha: 0.25,
        moving_interval: Duration::from_millis(50),
        ..quiet_config()
    });
    let p = params(&cfg);
    let mut rng = rand::rngs::StdRng::seed_from_u64(2024);
    for round in 0..20 {
        let (stats, hand) = manual(cfg.clone());
        let counter = stats.counter("c").unwrap();
        let gauge = stats.gauge("g").unwrap();
        let timer = stats.timer("t").unwrap();
        let (mut values, mut incr, mut decr, mut deltas) = (vec![], vec![], vec![], vec![]);
        let (mut gauge_values, mut durations) = (vec![], vec![]);
        let mut value = 0i64;
        let mut running: Option<u64> = None;
        for i in 0..rng.random_range(1..600) {
            hand.advance(rng.random_range(0..20 * MS));
            let now = hand.now();
            match rng.random_range(0..10) {
                0 if round % 2 == 0 => {
                    let v = rng.random_range(-50..50);
                    counter.init(v);
                    value = v;
                    (values, incr, decr, deltas) = (vec![(v as f64, now)], vec![], vec![], vec![]);
                }
                0..=4 => {
                    let d = rng.random_range(-20i64..20);
                    if values.is_empty() {
                        values.push((0.0, now));
                    }
                    counter.add(d);
                    value += d;
                    values.push((value as f64, now));
                    deltas.push((d as f64, now));
                    if d > 0 {
                        incr.push((d as f64, now));
                    } else if d < 0 {
                        decr.push((-d as f64, now));
                    }
                }
                5..=6 => {
                    let v = rng.random::<f64>() * 1000.0 - 300.0;
                    gauge.set(v).unwrap();
                    gauge_values.push((v, now));
                }
                _ => match running.take() {
                    None => {
                        timer.start();
                        running = Some(now);
                    }
                    Some(start) => {
                        timer.stop();
                        durations.push(((now - start) as f64, now));
                    }
                },
            }
            if i % 97 == 0 {
                stats.flush();
            }
        }
        hand.advance(rng.random_range(0..60 * MS));
        let now = hand.now();
        let dump = stats.dump();
        stats.stop();
        assert_eq!(dump.timestamp, now);
        match dump.metrics.get("c") {
            Some(Metric::Counter(c)) => {
                assert_eq!(c.value, value);
                assert_eq!(c.timestamp, values.last().unwrap().1);
                assert_matches("values", &c.values, &values, now, &p, RateOf::Count);
                assert_matches("incr-deltas", &c.incr_deltas, &incr, now, &p, RateOf::Sum);
                assert_matches("decr-deltas", &c.decr_deltas, &decr, now, &p, RateOf::Sum);
                assert_matches("deltas", &c.deltas, &deltas, now, &p, RateOf::Sum);
            }
            None => assert!(values.is_empty()),
            other => panic!("{other:?}"),
        }
        match dump.metrics.get("g") {
            Some(Metric::Gauge(g)) => {
                assert_eq!(g.value, gauge_values.last().unwrap().0);
                assert_matches(
                    "gauge values",
                    &g.values,
                    &gauge_values,
                    now,
                    &p,
                    RateOf::Count,
                );
            }
            None => assert!(gauge_values.is_empty()),
            other => panic!("{other:?}"),
        }
        match dump.metrics.get("t") {
            Some(Metric::Timer(t)) => {
                assert_eq!(t.value as f64, durations.last().unwrap().0);
                assert_matches("durations", &t.values, &durations, now, &p, RateOf::Count);
            }
            None => assert!(durations.is_empty()),
            other => panic!("{other:?}"),
        }
    }
}

/// The exact rate over the window `(now - T, now]`: what `rate` approximates.
fn window_rate(data: &[(f64, u64)], now: u64, p: &Params, rate_of: RateOf) -> f64 {
    let from = now as f64 - p.interval_ns;
    let inside = data.iter().filter(|d| d.1 as f64 > from && d.1 <= now);
    let per_window: f64 = match rate_of {
        RateOf::Count => inside.count() as f64,
        RateOf::Sum => inside.map(|d| d.0).sum(),
    };
    per_window / (p.interval_ns / 1e9)
}

/// On steady streams (events spaced by a jittered period, at least ten windows
/// long) the rate is within 5 % of the exact rate over the last moving
/// interval. handystats' interval count is an approximation: from the first
/// datum it approaches the window's count as `1 - exp(-t / T)` (so the first
/// windows read low), it is exact for evenly spaced data after that and off by
/// a few per cent with jittered spacing and amounts.
#[test]
fn the_rate_matches_the_exact_window_rate_of_steady_streams() {
    let cfg = exact(Config {
        moving_interval: Duration::from_millis(200),
        ..quiet_config()
    });
    let p = params(&cfg);
    let mut rng = rand::rngs::StdRng::seed_from_u64(77);
    for _ in 0..10 {
        let (stats, hand) = manual(cfg.clone());
        let counter = stats.counter("c").unwrap();
        let gauge = stats.gauge("g").unwrap();
        let timer = stats.timer("t").unwrap();
        let (mut incr, mut sets, mut durations) = (vec![], vec![], vec![]);
        // 300 to 3000 events per second for 10 to 20 windows.
        let period = rng.random_range(300_000..3_000_000u64);
        let end = hand.now() + rng.random_range(2000..4000) * MS;
        let mut n = 0;
        while hand.now() < end {
            n += 1;
            if n % 256 == 0 {
                stats.flush(); // no queue fills up: no event is folded
            }
            hand.advance(period / 2 + rng.random_range(0..period));
            let now = hand.now();
            let d = rng.random_range(1..10);
            counter.add(d);
            incr.push((d as f64, now));
            gauge.set(d as f64).unwrap();
            sets.push((d as f64, now));
            let ns = rng.random_range(100..10_000);
            timer.record(ns);
            durations.push((ns as f64, now));
        }
        let now = hand.now();
        let dump = stats.dump();
        stats.stop();
        let within = |what: &str, got: f64, want: f64| {
            assert!(
                (got - want).abs() <= 0.05 * want,
                "{what}: rate {got}/s, exact window rate {want}/s"
            );
        };
        let Some(Metric::Counter(c)) = dump.metrics.get("c") else {
            panic!("no counter")
        };
        within(
            "incr-deltas",
            c.incr_deltas.rate,
            window_rate(&incr, now, &p, RateOf::Sum),
        );
        within(
            "deltas",
            c.deltas.rate,
            window_rate(&incr, now, &p, RateOf::Sum),
        );
        within(
            "values",
            c.values.rate,
            window_rate(&incr, now, &p, RateOf::Count),
        );
        assert_eq!(c.decr_deltas.rate, 0.0);
        assert_eq!(dump.metrics["c"].rate(), c.deltas.rate);
        let Some(Metric::Gauge(g)) = dump.metrics.get("g") else {
            panic!("no gauge")
        };
        within(
            "gauge",
            g.values.rate,
            window_rate(&sets, now, &p, RateOf::Count),
        );
        assert_eq!(dump.metrics["g"].rate(), g.values.rate);
        let Some(Metric::Timer(t)) = dump.metrics.get("t") else {
            panic!("no timer")
        };
        within(
            "timer",
            t.values.rate,
            window_rate(&durations, now, &p, RateOf::Count),
        );
        assert_eq!(dump.metrics["t"].rate(), t.values.rate);
    }
}

/// A metric that stops changing shows its rate falling to zero over one
/// moving interval.
#[test]
fn the_rate_decays_to_zero_once_updates_stop() {
    let cfg = exact(Config {
        moving_interval: Duration::from_millis(100),
        ..quiet_config()
    });
    let (stats, hand) = manual(cfg);
    let c = stats.counter("c").unwrap();
    for i in 0..2000 {
        hand.advance(MS);
        c.add(2);
        if i % 256 == 0 {
            stats.flush();
        }
    }
    // Evenly spaced, 20 windows on: within 1e-6 of 100 increments of 2 in
    // the last 100 ms (the start-up shortfall is 0.99^2000 of it).
    let rate = |stats: &Stats| match &stats.dump().metrics["c"] {
        Metric::Counter(c) => (c.values.rate, c.incr_deltas.rate),
        other => panic!("{other:?}"),
    };
    let (changes, amount) = rate(&stats);
    assert!((changes - 1000.0).abs() < 1e-3, "{changes}");
    assert!((amount - 2000.0).abs() < 1e-3, "{amount}");
    hand.advance(50 * MS);
    let (changes, amount) = rate(&stats);
    assert!((changes - 500.0).abs() < 1e-3, "{changes}");
    assert!((amount - 1000.0).abs() < 1e-3, "{amount}");
    hand.advance(50 * MS);
    assert_eq!(rate(&stats), (0.0, 0.0));
    stats.stop();
}

#[test]
fn the_seeds_counter_example() {
    // Stamped per event, or by passes that each take one event: the same.
    for (cfg, pass_per_event) in [(exact(quiet_config()), false), (quiet_config(), true)] {
        let (stats, hand) = manual(cfg);
        let c = stats.counter("events").unwrap();
        for d in [1, 2, -3, 5, 10] {
            hand.advance(MS);
            c.add(d);
            if pass_per_event {
                stats.flush();
            }
        }
        let dump = stats.dump();
        stats.stop();
        the_seeds_counter_values(&dump);
    }
}

fn the_seeds_counter_values(dump: &Dump) {
    let Some(Metric::Counter(c)) = dump.metrics.get("events") else {
        panic!()
    };
    // Values 0, 1, 3, 0, 5, 15; positive deltas 1, 2, 5, 10; negative 3.
    assert_eq!(c.value, 15);
    assert_eq!(
        (c.values.count, c.values.sum, c.values.min, c.values.max),
        (6, 24.0, Some(0.0), Some(15.0))
    );
    assert_eq!((c.incr_deltas.count, c.incr_deltas.sum), (4, 18.0));
    assert_eq!(
        (c.decr_deltas.count, c.decr_deltas.sum, c.decr_deltas.max),
        (1, 3.0, Some(3.0))
    );
    assert_eq!(
        (c.deltas.count, c.deltas.sum, c.deltas.min),
        (5, 15.0, Some(-3.0))
    );
}

fn timer_dump(dump: &Dump, name: &str) -> (u64, Vec<u64>) {
    match dump.metrics.get(name) {
        Some(Metric::Timer(t)) => (
            t.values.count,
            vec![t.values.min.unwrap() as u64, t.values.max.unwrap() as u64],
        ),
        None => (0, vec![]),
        other => panic!("{other:?}"),
    }
}

#[test]
fn timer_instances_overlap_time_out_and_heartbeat() {
    let cfg = Config {
        timer_idle_timeout: Duration::from_millis(100),
        ..quiet_config()
    };
    let (stats, hand) = manual(cfg);
    let t = stats.timer("work").unwrap();
    // Overlapping instances and the default one.
    t.start_instance(1);
    hand.advance(10 * MS);
    t.start_instance(2);
    t.start();
    hand.advance(30 * MS);
    t.stop_instance(1); // 40 ms
    hand.advance(5 * MS);
    t.stop_instance(2); // 35 ms
    t.stop(); // 35 ms
    let (count, minmax) = timer_dump(&stats.dump(), "work");
    assert_eq!((count, minmax), (3, vec![35 * MS, 40 * MS]));

    // Heartbeats keep an instance alive past the idle timeout.
    t.start_instance(3);
    for _ in 0..3 {
        hand.advance(80 * MS);
        t.heartbeat_instance(3);
    }
    hand.advance(80 * MS);
    t.stop_instance(3); // 320 ms, never idle for 100 ms
                        // Without them it is dropped, at its stop or by the sweep.
    t.start_instance(4);
    t.start_instance(5);
    hand.advance(101 * MS);
    t.stop_instance(4);
    stats.flush();
    assert_eq!(stats.running_timer_instances(), 0);
    let (count, minmax) = timer_dump(&stats.dump(), "work");
    assert_eq!((count, minmax), (4, vec![35 * MS, 320 * MS]));
    // A discarded instance records nothing; stops without a start are counted.
    t.start_instance(6);
    t.discard_instance(6);
    t.stop_instance(6);
    t.stop_instance(77);
    let dump = stats.dump();
    assert_eq!(timer_dump(&dump, "work").0, 4);
    let h = stats.health();
    assert_eq!((h.timed_out_instances, h.stops_without_start), (2, 2));
    let Some(Metric::Gauge(g)) = dump.metrics.get("hrts-stats.timer-stops-without-start") else {
        panic!()
    };
    assert_eq!(g.value, 2.0);
    stats.stop();
}

#[test]
fn a_timer_scope_measures_heartbeats_and_times_out() {
    let cfg = Config {
        timer_idle_timeout: Duration::from_millis(100),
        ..quiet_config()
    };
    let (stats, hand) = manual(cfg);
    let t = stats.timer("scoped").unwrap();
    {
        let _s = t.scope();
        hand.advance(7 * MS);
    }
    {
        let mut s = t.scope();
        hand.advance(90 * MS);
        s.heartbeat();
        hand.advance(90 * MS);
        s.stop(); // 180 ms
    }
    {
        let _s = t.scope();
        hand.advance(150 * MS); // idle too long: nothing recorded
    }
    t.scope().discard();
    t.record(5 * MS);
    let (count, minmax) = timer_dump(&stats.dump(), "scoped");
    assert_eq!((count, minmax), (3, vec![5 * MS, 180 * MS]));
    stats.stop();
}

#[test]
fn a_full_queue_folds_without_losing_count_sum_min_or_max() {
    let cfg = Config {
        queue_capacity: 16,
        ..quiet_config()
    };
    let (stats, hand) = manual(cfg);
    let c = stats.counter("folded").unwrap();
    let g = stats.gauge("folded gauge").unwrap();
    let mut rng = rand::rngs::StdRng::seed_from_u64(5);
    // Many metrics interleaved: each keeps its own fold cell.
    let others: Vec<_> = (0..300)
        .map(|i| stats.counter(&format!("other {i}")).unwrap())
        .collect();
    let (mut value, mut n_incr, mut sum_incr, mut n_decr, mut sum_decr) = (0i64, 0, 0i64, 0, 0i64);
    let (mut max_incr, mut max_decr) = (0i64, 0i64);
    let (mut gsum, mut gmin, mut gmax) = (0.0f64, f64::MAX, f64::MIN);
    for _ in 0..10_000 {
        hand.advance(1000);
        let d = if rng.random_bool(0.7) {
            rng.random_range(1..10)
        } else {
            -rng.random_range(1..10)
        };
        c.add(d);
        value += d;
        if d > 0 {
            (n_incr, sum_incr, max_incr) = (n_incr + 1, sum_incr + d, max_incr.max(d));
        } else {
            (n_decr, sum_decr, max_decr) = (n_decr + 1, sum_decr - d, max_decr.max(-d));
        }
        let v = rng.random_range(0..1000) as f64;
        g.set(v).unwrap();
        others[rng.random_range(0..others.len())].add(1);
        (gsum, gmin, gmax) = (gsum + v, gmin.min(v), gmax.max(v));
    }
    let dump = stats.dump();
    stats.stop();
    let h = stats.health();
    // The processing thread drains meanwhile; most events still meet a full queue.
    assert!(h.folded_events > 5_000, "{h:?}");
    assert_eq!(h.dropped_events, 0);
    let Some(Metric::Counter(m)) = dump.metrics.get("folded") else {
        panic!()
    };
    assert_eq!(m.value, value);
    assert_eq!(
        (
            m.incr_deltas.count,
            m.incr_deltas.sum as i64,
            m.incr_deltas.max
        ),
        (n_incr, sum_incr, Some(max_incr as f64))
    );
    assert_eq!(
        (
            m.decr_deltas.count,
            m.decr_deltas.sum as i64,
            m.decr_deltas.max
        ),
        (n_decr, sum_decr, Some(max_decr as f64))
    );
    assert_eq!(m.deltas.count, 10_000);
    assert_eq!(m.values.count, 10_001);
    let others_total: i64 = (0..300)
        .map(|i| match dump.metrics.get(&format!("other {i}")) {
            Some(Metric::Counter(c)) => c.value,
            _ => 0,
        })
        .sum();
    assert_eq!(others_total, 10_000);
    let Some(Metric::Gauge(gd)) = dump.metrics.get("folded gauge") else {
        panic!()
    };
    assert_eq!(
        (gd.values.count, gd.values.min, gd.values.max),
        (10_000, Some(gmin), Some(gmax))
    );
    assert!(close(gd.values.sum, gsum));
}

#[test]
fn eight_threads_of_a_million_increments_give_the_exact_count() {
    let (stats, _hand) = manual(quiet_config());
    let threads: Vec<_> = (0..8)
        .map(|_| {
            let c = stats.counter("hits").unwrap();
            std::thread::spawn(move || {
                for _ in 0..1_000_000 {
                    c.increment();
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let dump = stats.dump();
    stats.stop();
    let Some(Metric::Counter(c)) = dump.metrics.get("hits") else {
        panic!()
    };
    assert_eq!(c.value, 8_000_000);
    assert_eq!((c.incr_deltas.count, c.incr_deltas.sum), (8_000_000, 8e6));
    assert_eq!((c.deltas.min, c.deltas.max), (Some(1.0), Some(1.0)));
    assert_eq!((c.values.min, c.values.max), (Some(0.0), Some(8e6)));
    assert_eq!(stats.health().dropped_events, 0);
}

#[test]
fn bad_input_gives_errors_or_documented_results() {
    let (stats, _hand) = manual(quiet_config());
    assert!(stats.counter("").unwrap_err().message().contains("empty"));
    assert!(stats
        .gauge(&"g".repeat(10_000))
        .unwrap_err()
        .message()
        .contains("too long"));
    let g = stats.gauge("level").unwrap();
    assert!(g.set(f64::NAN).unwrap_err().message().contains("NaN"));
    g.set(f64::INFINITY).unwrap();
    assert!(stats
        .timer("level")
        .unwrap_err()
        .message()
        .contains("is a gauge"));
    let c = stats.counter("down").unwrap();
    c.add(i64::MIN);
    c.add(-5); // saturates instead of wrapping
    c.decrement();
    let dump = stats.dump();
    let Some(Metric::Counter(m)) = dump.metrics.get("down") else {
        panic!()
    };
    assert_eq!(m.value, i64::MIN);
    assert_eq!(m.decr_deltas.count, 3);
    let Some(Metric::Gauge(l)) = dump.metrics.get("level") else {
        panic!()
    };
    assert_eq!((l.values.count, l.value), (1, f64::INFINITY));
    assert!(dump.to_json().contains("\"level\""));
    stats.stop();
}

#[test]
fn start_and_stop_are_idempotent_and_nothing_is_recorded_while_stopped() {
    let (clock, _hand) = Clock::manual(T0);
    let stats = Stats::with_clock(quiet_config(), clock);
    let c = stats.counter("n").unwrap();
    c.increment(); // not started yet
    stats.stop();
    stats.start().unwrap();
    stats.start().unwrap();
    assert!(stats.is_running());
    assert!(stats
        .configure(unpublished())
        .unwrap_err()
        .message()
        .contains("stop"));
    c.add(5);
    stats.stop();
    stats.stop();
    c.add(100); // stopped
    let Some(Metric::Counter(m)) = stats.last_dump().unwrap().metrics.get("n").cloned() else {
        panic!()
    };
    assert_eq!(m.value, 5);
    assert!(stats.last_json_dump().unwrap().contains("\"n\""));
    // A restart begins from empty statistics; handles stay valid.
    stats.start().unwrap();
    c.add(2);
    let Some(Metric::Counter(m)) = stats.dump().metrics.get("n").cloned() else {
        panic!()
    };
    assert_eq!((m.value, m.deltas.count), (2, 1));
    stats.stop();
}

#[test]
fn the_processing_thread_makes_dumps_at_the_configured_intervals() {
    let cfg = Config {
        json_dump_interval: Duration::from_millis(5),
        metrics_dump_interval: Duration::from_millis(5),
        ..unpublished()
    };
    let (stats, _hand) = manual(cfg);
    stats.counter("ticks").unwrap().add(3);
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        let json = stats.last_json_dump();
        let dump = stats.last_dump();
        if let (Some(j), Some(d)) = (json, dump) {
            if j.contains("\"ticks\"") && d.metrics.contains_key("ticks") {
                break;
            }
        }
        assert!(std::time::Instant::now() < deadline, "no dump within 10 s");
        std::thread::sleep(Duration::from_millis(2));
    }
    stats.stop();
}

#[test]
fn the_json_dump_has_the_seeds_shape() {
    let (stats, hand) = manual(quiet_config());
    stats.inner.pause_processing();
    stats.counter("events count").unwrap().add(2);
    stats.gauge("queue").unwrap().set(1.5).unwrap();
    let t = stats.timer("latency").unwrap();
    t.start();
    hand.advance(1500);
    t.stop();
    let v: serde_json::Value = serde_json::from_str(&stats.json_dump()).unwrap();
    stats.stop();
    let stats_keys: Vec<&str> = crate::dump::STATISTICS_KEYS.to_vec();
    let check_stats = |s: &serde_json::Value| {
        let m = s.as_object().unwrap();
        let mut keys: Vec<&str> = m.keys().map(String::as_str).collect();
        keys.sort();
        let mut want = stats_keys.clone();
        want.sort();
        assert_eq!(keys, want);
        assert!(m["count"].is_u64());
    };
    let c = &v["events count"];
    assert_eq!(c["type"], "counter");
    assert_eq!(c["value"], 2);
    // Pass-stamped: taken by the dump's pass, after the clock moved.
    assert_eq!(c["timestamp"], T0 + 1500);
    for k in ["values", "incr-deltas", "decr-deltas", "deltas"] {
        check_stats(&c[k]);
    }
    assert_eq!(c["values"]["min"], 0);
    assert_eq!(c["values"]["max"], 2);
    assert_eq!(c["decr-deltas"]["min"], serde_json::Value::Null);
    assert_eq!(c.as_object().unwrap().len(), 7);
    assert_eq!(v["queue"]["type"], "gauge");
    assert_eq!(v["queue"]["value"], 1.5);
    check_stats(&v["queue"]["values"]);
    assert_eq!(v["latency"]["type"], "timer");
    assert_eq!(v["latency"]["value"], 1500);
    assert_eq!(v["latency"]["timestamp"], T0 + 1500);
    assert_eq!(v["latency"]["values"]["p50"], 1500);
    assert_eq!(v["latency"].as_object().unwrap().len(), 4);
    for name in [
        "dropped-events",
        "folded-events",
        "timer-stops-without-start",
        "timer-instances-timed-out",
    ] {
        assert_eq!(v[format!("hrts-stats.{name}")]["type"], "gauge");
    }
}

#[test]
fn stamps_come_from_the_shared_timeline() {
    let name = format!("/hrts-stats-test-{}", std::process::id());
    let cfg = hrts_core::Config::named(&name);
    let base: &'static hrts_core::SharedBase =
        Box::leak(Box::new(hrts_core::SharedBase::open(&cfg).unwrap()));
    let stats = Stats::with_clock(quiet_config(), Clock::Hrts(base));
    stats.start().unwrap();
    let before = base.now_ns();
    stats.counter("c").unwrap().increment();
    let t = stats.timer("t").unwrap();
    {
        let _s = t.scope();
        std::thread::sleep(Duration::from_millis(2));
    }
    let dump = stats.dump();
    let after = base.now_ns();
    stats.stop();
    hrts_core::SharedBase::unlink(&name).unwrap();
    for m in dump.metrics.values() {
        assert!(
            (before..=after).contains(&m.timestamp()),
            "{before} {} {after}",
            m.timestamp()
        );
    }
    let Some(Metric::Timer(t)) = dump.metrics.get("t") else {
        panic!()
    };
    assert!(
        t.value >= 2_000_000 && t.value < after - before,
        "{}",
        t.value
    );
}

#[test]
fn macros_use_the_global_instance() {
    // The only test of this binary that uses the global instance, on a segment
    // of its own that it removes.
    let name = format!("/hrts-stats-macros-{}", std::process::id());
    std::env::set_var("HRTS_SEGMENT", &name);
    let g = crate::global();
    g.configure(unpublished()).unwrap();
    g.start().unwrap();
    for i in 0..3 {
        crate::counter_increment!("macro events");
        crate::counter_increment!("macro events", 10);
        crate::counter_decrement!("macro events", 2);
        crate::gauge_set!("macro gauge", i);
        crate::gauge_set!("macro gauge", f64::NAN); // ignored
        crate::timer_start!("macro timer");
        crate::timer_start!("macro timer", 7);
        crate::timer_heartbeat!("macro timer", 7);
        crate::timer_stop!("macro timer", 7);
        crate::timer_stop!("macro timer");
        crate::timer_start!("macro timer", 8);
        crate::timer_discard!("macro timer", 8);
        let _s = crate::timer_scope!("macro timer");
    }
    crate::counter_init!("macro init", 40);
    crate::counter_increment!(""); // refused: disabled, reported on stderr
    let dump = g.dump();
    g.stop();
    hrts_core::SharedBase::unlink(&name).unwrap();
    let Some(Metric::Counter(c)) = dump.metrics.get("macro events") else {
        panic!()
    };
    assert_eq!((c.value, c.deltas.count), (27, 9));
    let Some(Metric::Gauge(gd)) = dump.metrics.get("macro gauge") else {
        panic!()
    };
    assert_eq!((gd.value, gd.values.count), (2.0, 3));
    let Some(Metric::Timer(t)) = dump.metrics.get("macro timer") else {
        panic!()
    };
    assert_eq!(t.values.count, 9);
    let Some(Metric::Counter(i)) = dump.metrics.get("macro init") else {
        panic!()
    };
    assert_eq!(i.value, 40);
    assert!(!dump.metrics.contains_key(""));
}

#[test]
fn ids_measure_like_handles_and_ignore_the_wrong_kind() {
    use crate::{Kind, MetricId, TimerOp};
    let (stats, hand) = manual(quiet_config());
    let c = stats.metric_id("by id", Kind::Counter).unwrap();
    let g = stats.metric_id("gauge by id", Kind::Gauge).unwrap();
    let t = stats.metric_id("timer by id", Kind::Timer).unwrap();
    assert_eq!(MetricId::from_bits(c.to_bits()), Some(c));
    assert_eq!(MetricId::from_bits(0), None);
    assert_eq!(MetricId::from_bits(c.to_bits() | 7 << 32), None);
    assert_eq!(MetricId::from_bits(1 << 32 | 0xffff_ffff), None);
    // An id no metric has yet (but could have) measures nothing harmful.
    stats.counter_add_id(MetricId::from_bits(1 << 32 | 60_000).unwrap(), 1);
    stats.counter_init_id(c, 10);
    stats.counter_add_id(c, 5);
    stats.counter_add_id(g, 100); // a gauge id: ignored
    stats.gauge_set_id(g, 2.5).unwrap();
    assert!(stats.gauge_set_id(g, f64::NAN).is_err());
    stats.timer_id(t, TimerOp::Start, 1);
    hand.advance(40);
    stats.timer_id(t, TimerOp::Heartbeat, 1);
    stats.timer_id(t, TimerOp::Stop, 1);
    stats.timer_id(t, TimerOp::Start, 2);
    stats.timer_id(t, TimerOp::Discard, 2);
    stats.timer_record_id(t, 60);
    assert_eq!(stats.idle_timeout_ns(), 10_000_000_000);
    let dump = stats.dump();
    stats.stop();
    let Some(Metric::Counter(m)) = dump.metrics.get("by id") else {
        panic!()
    };
    assert_eq!(m.value, 15);
    let Some(Metric::Gauge(m)) = dump.metrics.get("gauge by id") else {
        panic!()
    };
    assert_eq!(m.value, 2.5);
    let Some(Metric::Timer(m)) = dump.metrics.get("timer by id") else {
        panic!()
    };
    assert_eq!((m.values.count, m.values.sum), (2, 100.0));
}

#[test]
fn the_queues_of_exited_threads_are_retired() {
    let (stats, _hand) = manual(quiet_config());
    let c = stats.counter("churn").unwrap();
    for round in 0..10 {
        let threads: Vec<_> = (0..10)
            .map(|_| {
                let c = c.clone();
                std::thread::spawn(move || {
                    for _ in 0..5000 {
                        c.increment(); // fills the queue: folds too
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        let Some(Metric::Counter(m)) = stats.dump().metrics.get("churn").cloned() else {
            panic!()
        };
        assert_eq!(m.value, (round + 1) * 50_000);
        // The dump's pass took every closed queue's last events and let it go.
        assert_eq!(stats.queues(), 0, "round {round}");
    }
    stats.stop();
}

/// Pass-stamped counters and gauges (the default): every event is applied at
/// the time of the pass that takes it. Against a brute-force reference that
/// stamps each event with its pass's time, the value, count, sum, min, max,
/// interval count and sum and the rate are exact; the moving average and the
/// counter's value statistics see each pass's events of one sign as one batch
/// of equal events (exact for equal deltas, such as increments by one), so the
/// moving average is only held to the data's range here. The error in time
/// is the pass's lag: one sleep step (10 ms by default) at most while the
/// processing thread is idle.
#[test]
fn pass_stamped_counters_and_gauges_match_a_reference_stamped_at_each_pass() {
    let cfg = Config {
        moving_interval: Duration::from_millis(50),
        ..quiet_config()
    };
    let p = params(&cfg);
    let mut rng = rand::rngs::StdRng::seed_from_u64(2026);
    for _ in 0..20 {
        let (stats, hand) = manual(cfg.clone());
        stats.inner.pause_processing();
        let counter = stats.counter("c").unwrap();
        let gauge = stats.gauge("g").unwrap();
        let (mut incr, mut decr, mut deltas, mut sets) = (vec![], vec![], vec![], vec![]);
        let (mut pending_c, mut pending_g) = (vec![], vec![]);
        let mut value = 0i64;
        for _ in 0..rng.random_range(1..800) {
            hand.advance(rng.random_range(0..2 * MS));
            if rng.random_range(0..2) == 0 {
                let d = rng.random_range(-20i64..20);
                counter.add(d);
                value += d;
                pending_c.push(d);
            } else {
                let v = (rng.random_range(0..2000) as f64) / 4.0 - 100.0;
                gauge.set(v).unwrap();
                pending_g.push(v);
            }
            if rng.random_range(0..8) == 0 {
                stats.flush();
                let now = hand.now();
                for d in pending_c.drain(..) {
                    deltas.push((d as f64, now));
                    match d.signum() {
                        1 => incr.push((d as f64, now)),
                        -1 => decr.push((-d as f64, now)),
                        _ => {}
                    }
                }
                sets.extend(pending_g.drain(..).map(|v| (v, now)));
            }
        }
        stats.flush();
        let taken = hand.now();
        for d in pending_c.drain(..) {
            deltas.push((d as f64, taken));
            match d.signum() {
                1 => incr.push((d as f64, taken)),
                -1 => decr.push((-d as f64, taken)),
                _ => {}
            }
        }
        sets.extend(pending_g.drain(..).map(|v| (v, taken)));
        hand.advance(rng.random_range(0..60 * MS));
        let now = hand.now();
        let dump = stats.dump();
        stats.stop();
        let check = |what: &str, got: &Statistics, data: &[(f64, u64)], rate_of: RateOf| {
            if data.is_empty() {
                assert_eq!(got.count, 0, "{what}");
                return;
            }
            let want = expected(data, now, &p);
            assert_eq!(
                (got.count, got.sum, got.min, got.max),
                (want.count, want.sum, Some(want.min), Some(want.max)),
                "{what}"
            );
            assert!(
                close(got.interval_count, want.interval_count),
                "{what} interval count {} vs {}",
                got.interval_count,
                want.interval_count
            );
            assert!(close(got.interval_sum, want.interval_sum), "{what}");
            let per_window = match rate_of {
                RateOf::Count => want.interval_count,
                RateOf::Sum => want.interval_sum,
            };
            assert!(
                close(got.rate, per_window / (p.interval_ns / 1e9)),
                "{what} rate"
            );
            // A pass's events count as that many equal to their mean: the
            // moving average depends on an order the pass does not keep, and
            // stays within the data's range.
            let avg = got.moving_avg.unwrap();
            assert!(
                want.min <= avg && avg <= want.max,
                "{what} moving average {avg} outside [{}, {}]",
                want.min,
                want.max
            );
        };
        if let Some(Metric::Counter(c)) = dump.metrics.get("c") {
            assert_eq!(c.value, value);
            check("incr-deltas", &c.incr_deltas, &incr, RateOf::Sum);
            check("decr-deltas", &c.decr_deltas, &decr, RateOf::Sum);
            check("deltas", &c.deltas, &deltas, RateOf::Sum);
            assert_eq!(c.values.count, deltas.len() as u64 + 1);
        } else {
            assert!(deltas.is_empty());
        }
        if let Some(Metric::Gauge(g)) = dump.metrics.get("g") {
            assert_eq!(g.value, sets.last().unwrap().0);
            check("gauge", &g.values, &sets, RateOf::Count);
        } else {
            assert!(sets.is_empty());
        }
    }
}

/// A counter init queued between summed deltas of the same thread splits them:
/// those before it are wiped by it, those after count from it, even when the
/// whole sequence is taken by one pass.
#[test]
fn an_init_among_summed_deltas_of_one_pass_keeps_its_place() {
    let (stats, hand) = manual(quiet_config());
    stats.inner.pause_processing();
    let c = stats.counter("c").unwrap();
    for _ in 0..3 {
        hand.advance(MS);
        c.add(5);
        c.add(-2);
        c.init(100);
        c.add(7);
        c.add(-1);
        stats.flush();
        let Some(Metric::Counter(m)) = stats.dump().metrics.get("c").cloned() else {
            panic!()
        };
        assert_eq!(m.value, 106);
        assert_eq!((m.deltas.count, m.deltas.sum), (2, 6.0));
        assert_eq!(
            (m.values.count, m.values.min, m.values.max),
            (3, Some(100.0), Some(107.0))
        );
    }
    // After the pass that took the init, deltas are summed again.
    c.add(1);
    stats.flush();
    assert!(stats.health().folded_events > 0);
    stats.stop();
}

/// On the hrts timeline, a pass-stamped event's time (a counter's, a gauge's, a
/// timer's recorded duration's) lies between the moment it happened and the
/// end of the pass that took it.
#[test]
fn a_pass_stamped_event_is_stamped_between_its_moment_and_its_pass() {
    let stats = Stats::new(quiet_config());
    stats.start().unwrap();
    let c = stats.counter("c").unwrap();
    let g = stats.gauge("g").unwrap();
    let t = stats.timer("t").unwrap();
    for i in 0..20 {
        let before = stats.now();
        c.increment();
        g.set(1.0).unwrap();
        t.record(1000 + i);
        drop(t.scope());
        stats.flush();
        let after = stats.now();
        let dump = stats.dump();
        let Metric::Timer(m) = &dump.metrics["t"] else {
            panic!()
        };
        assert_eq!(m.values.count, 2 * (i + 1), "every duration counted");
        for name in ["c", "g", "t"] {
            let ts = match &dump.metrics[name] {
                Metric::Counter(m) => m.timestamp,
                Metric::Gauge(m) => m.timestamp,
                Metric::Timer(m) => m.timestamp,
            };
            assert!(
                before <= ts && ts <= after,
                "{name}: {before} <= {ts} <= {after}"
            );
        }
    }
    stats.stop();
}
