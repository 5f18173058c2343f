//! Measuring-point costs side by side in one run, as ratios to the floor:
//! `cargo bench -p hrts-stats --bench points`. Results: README.md here.
//!
//! Contenders: a bare relaxed `fetch_add` (the floor), the hdrhistogram crate's
//! `record`, the metrics crate (0.24) with a metrics-util atomic registry as
//! recorder, and two hrts stamps (the timer budget's base). The `threads` group
//! runs the counter increment on 1 and 2 threads and reports time per thread.

#[cfg(target_arch = "x86_64")]
mod x86 {
    use criterion::Criterion;
    use hrts_core::{Config as SegmentConfig, SharedBase};
    use hrts_stats::config::ExactStamps;
    use hrts_stats::{Clock, Config, Stats};
    use metrics::{
        Counter, Gauge, Histogram, Key, KeyName, Metadata, Recorder, SharedString, Unit,
    };
    use metrics_util::registry::{AtomicStorage, Registry};
    use std::hint::black_box;
    use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
    use std::sync::{Arc, Barrier};
    use std::time::{Duration, Instant};

    /// The usual way to give the metrics crate a recorder: metrics-util's
    /// registry with atomic storage.
    struct AtomicRecorder(Registry<Key, AtomicStorage>);

    impl Recorder for AtomicRecorder {
        fn describe_counter(&self, _: KeyName, _: Option<Unit>, _: SharedString) {}
        fn describe_gauge(&self, _: KeyName, _: Option<Unit>, _: SharedString) {}
        fn describe_histogram(&self, _: KeyName, _: Option<Unit>, _: SharedString) {}
        fn register_counter(&self, key: &Key, _: &Metadata<'_>) -> Counter {
            self.0
                .get_or_create_counter(key, |c| Counter::from_arc(c.clone()))
        }
        fn register_gauge(&self, key: &Key, _: &Metadata<'_>) -> Gauge {
            self.0
                .get_or_create_gauge(key, |g| Gauge::from_arc(g.clone()))
        }
        fn register_histogram(&self, key: &Key, _: &Metadata<'_>) -> Histogram {
            self.0
                .get_or_create_histogram(key, |h| Histogram::from_arc(h.clone()))
        }
    }

    /// The time of `iters` calls of `set` with 1, 2, 3, ...: a rising gauge.
    fn rising<R>(iters: u64, mut set: impl FnMut(f64) -> R) -> Duration {
        let mut x = 0.0;
        let start = Instant::now();
        for _ in 0..iters {
            x += 1.0;
            black_box(set(black_box(x)));
        }
        start.elapsed()
    }

    /// Time per operation per thread with `threads` threads each running `op`
    /// `iters` times at once.
    fn per_thread(threads: usize, iters: u64, op: impl Fn() + Send + Sync + 'static) -> Duration {
        let op = Arc::new(op);
        let barrier = Arc::new(Barrier::new(threads));
        let handles: Vec<_> = (0..threads)
            .map(|_| {
                let (op, barrier) = (op.clone(), barrier.clone());
                std::thread::spawn(move || {
                    barrier.wait();
                    let start = Instant::now();
                    for _ in 0..iters {
                        op();
                    }
                    start.elapsed()
                })
            })
            .collect();
        let total: Duration = handles.into_iter().map(|h| h.join().unwrap()).sum();
        total / threads as u32
    }

    pub fn main() {
        let name = format!("/hrts-stats-bench-{}", std::process::id());
        let base: &'static SharedBase = Box::leak(Box::new(
            SharedBase::open(&SegmentConfig::named(&name)).unwrap(),
        ));
        // The default configuration publishes to shared memory, as in a program;
        // to a segment of the run's own.
        let shared_name = format!("{name}-stats");
        let mut config = Config::default();
        config.shared_memory.name = Some(shared_name.clone());
        // One counter stamped per event, as every counter was before issue 24.
        config.exact_stamps = ExactStamps(vec!["bench exact counter".into()]);
        let stats = Stats::with_clock(config, Clock::Hrts(base));
        stats.start().unwrap();
        metrics::set_global_recorder(AtomicRecorder(Registry::atomic())).unwrap();

        let mut c = Criterion::default()
            .warm_up_time(Duration::from_millis(500))
            .measurement_time(Duration::from_secs(2))
            .sample_size(30)
            .configure_from_args();

        let mut g = c.benchmark_group("points");
        let floor = AtomicU64::new(0);
        g.bench_function("floor_fetch_add_relaxed", |b| {
            b.iter(|| black_box(&floor).fetch_add(1, Relaxed))
        });
        let counter = stats.counter("bench counter").unwrap();
        g.bench_function("hrts_counter_increment", |b| {
            b.iter(|| black_box(&counter).increment())
        });
        let exact = stats.counter("bench exact counter").unwrap();
        g.bench_function("hrts_counter_increment_exact_stamps", |b| {
            b.iter(|| black_box(&exact).increment())
        });
        // Gauges are set to what metrics' gauge is set to below: one value, and a
        // rising one (each set a new maximum). The rising value is a local of the
        // routine, not a captured variable, so that the benchmark's own add is not a
        // chain through memory.
        let gauge = stats.gauge("bench gauge").unwrap();
        // `set` returns a Result (NaN is refused): the routines keep whether it was
        // Ok, as a caller does, rather than handing criterion the whole Result to
        // move through memory on every call.
        g.bench_function("hrts_gauge_set", |b| {
            b.iter(|| black_box(&gauge).set(black_box(1.5)).is_ok())
        });
        g.bench_function("hrts_gauge_set_rising", |b| {
            b.iter_custom(|iters| rising(iters, |x| black_box(&gauge).set(x).is_ok()))
        });
        let timer = stats.timer("bench timer").unwrap();
        g.bench_function("hrts_timer_start_stop", |b| {
            b.iter(|| {
                timer.start();
                timer.stop();
            })
        });
        g.bench_function("hrts_timer_scope", |b| {
            b.iter(|| drop(black_box(timer.scope())))
        });
        g.bench_function("two_hrts_stamps", |b| {
            b.iter(|| (black_box(base.now_ns()), black_box(base.now_ns())))
        });
        let mut hdr =
            hdrhistogram::Histogram::<u64>::new_with_bounds(1, 3_600_000_000_000, 2).unwrap();
        let mut v = 0u64;
        g.bench_function("hdrhistogram_record", |b| {
            b.iter(|| {
                v = (v + 7919) % 1_000_000 + 1;
                hdr.record(black_box(v)).unwrap()
            })
        });
        let mc = metrics::counter!("bench counter");
        g.bench_function("metrics_counter_increment", |b| {
            b.iter(|| black_box(&mc).increment(1))
        });
        g.bench_function("metrics_counter_macro_per_call", |b| {
            b.iter(|| metrics::counter!("bench counter").increment(1))
        });
        let mg = metrics::gauge!("bench gauge");
        g.bench_function("metrics_gauge_set", |b| {
            b.iter(|| black_box(&mg).set(black_box(1.5)))
        });
        g.bench_function("metrics_gauge_set_rising", |b| {
            b.iter_custom(|iters| rising(iters, |x| black_box(&mg).set(x)))
        });
        let mh = metrics::histogram!("bench timer");
        g.bench_function("metrics_histogram_record", |b| {
            b.iter(|| black_box(&mh).record(black_box(1500.0)))
        });
        g.finish();

        let mut g = c.benchmark_group("threads");
        for threads in [1usize, 2] {
            let counter = stats.counter("bench threads").unwrap();
            g.bench_function(format!("hrts_counter_increment_{threads}t"), |b| {
                b.iter_custom(|iters| {
                    let counter = counter.clone();
                    per_thread(threads, iters, move || black_box(&counter).increment())
                })
            });
            g.bench_function(format!("floor_own_fetch_add_{threads}t"), |b| {
                b.iter_custom(|iters| {
                    // Each thread its own atomic on its own cache line: what the
                    // machine gives work that shares nothing.
                    per_thread(threads, iters, || {
                        #[repr(align(128))]
                        struct Own(AtomicU64);
                        thread_local!(static OWN: Own = const { Own(AtomicU64::new(0)) });
                        OWN.with(|o| black_box(&o.0).fetch_add(1, Relaxed));
                    })
                })
            });
            let floor = Arc::new(AtomicU64::new(0));
            g.bench_function(format!("floor_shared_fetch_add_{threads}t"), |b| {
                b.iter_custom(|iters| {
                    let floor = floor.clone();
                    per_thread(threads, iters, move || {
                        black_box(&floor).fetch_add(1, Relaxed);
                    })
                })
            });
        }
        g.finish();
        c.final_summary();

        stats.stop();
        let h = stats.health();
        println!("hrts-stats health after the run: {h:?}");
        SharedBase::unlink(&name).unwrap();
        drop(stats);
        let _ = hrts_stats::shared::StatsSegment::unlink(&shared_name);
    }
}

fn main() {
    #[cfg(target_arch = "x86_64")]
    x86::main();
    #[cfg(not(target_arch = "x86_64"))]
    println!("hrts-stats benches compare against x86-64 builds of their contenders; skipped here");
}
