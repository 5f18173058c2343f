//! Reading the shared statistics: `cargo bench -p hrts-stats --bench shared`.
//! Results: README.md here.
//!
//! One statistics instance publishes 10,000 counters (each with all four
//! statistics sets); a reader in the same run takes snapshots of the segment
//! (what `hrts stats` and the exporter do per request), next to the owning
//! process making its own dump of the same metrics (the in-process way to see
//! them).

#[cfg(target_arch = "x86_64")]
mod x86 {
    use criterion::Criterion;
    use hrts_stats::shared::StatsSegment;
    use hrts_stats::{Config, SharedMemory, Stats};
    use std::hint::black_box;
    use std::time::Duration;

    const METRICS: usize = 10_000;

    pub fn main() {
        let name = format!("/hrts-stats-bench-{}", std::process::id());
        let stats = Stats::new(Config {
            json_dump_interval: Duration::ZERO,
            metrics_dump_interval: Duration::ZERO,
            shared_memory: SharedMemory {
                name: Some(name.clone()),
                ..SharedMemory::default()
            },
            ..Config::default()
        });
        stats.start().expect("statistics start");
        for i in 0..METRICS {
            let c = stats
                .counter(&format!("bench.counter.{i:05}"))
                .expect("counter");
            c.add(i as i64 + 1);
        }
        stats.dump();
        let seg = StatsSegment::attach(&name)
            .expect("attach")
            .expect("segment exists");
        let seen: usize = seg
            .snapshot()
            .processes
            .iter()
            .map(|p| p.dump.metrics.len())
            .sum();
        assert!(seen >= METRICS, "published {seen} metrics");

        let mut c = Criterion::default()
            .sample_size(30)
            .measurement_time(Duration::from_secs(8))
            .configure_from_args();
        let mut g = c.benchmark_group("read_10000_metrics");
        g.bench_function("shared_snapshot", |b| b.iter(|| black_box(seg.snapshot())));
        g.bench_function("own_process_dump", |b| b.iter(|| black_box(stats.dump())));
        g.finish();
        c.final_summary();

        stats.stop();
        drop(stats);
        drop(seg);
        let _ = StatsSegment::unlink(&name);
    }
}

#[cfg(target_arch = "x86_64")]
fn main() {
    x86::main();
}

// criterion is a dev-dependency on x86-64 only (see Cargo.toml).
#[cfg(not(target_arch = "x86_64"))]
fn main() {}
