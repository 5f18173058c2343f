//! Memory stays flat: once every metric and thread has been seen, more events
//! do not grow the process. Its own test binary, so that no other test's
//! allocations move the resident size. HRTS_STATS_MEMORY_EVENTS sets the
//! number of events (default 10^7; the README quotes a run with 10^8).

use hrts_stats::{Clock, Config, Stats};
use std::time::Duration;

fn resident_bytes() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap();
    let pages: u64 = statm.split_whitespace().nth(1).unwrap().parse().unwrap();
    pages * 4096
}

#[test]
fn events_on_a_thousand_metrics_do_not_grow_memory_after_warm_up() {
    let events: u64 = std::env::var("HRTS_STATS_MEMORY_EVENTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10_000_000);
    // Dumps are made at fixed points only: a JSON dump of 1,000 metrics is a
    // few megabytes while it exists, which would blur the measurement.
    // Publishing to shared memory stays on (as in a program), to a segment of
    // the test's own.
    let shared = format!("/hrts-stats-memtest-{}", std::process::id());
    let mut cfg = Config {
        json_dump_interval: Duration::ZERO,
        metrics_dump_interval: Duration::ZERO,
        ..Config::default()
    };
    cfg.shared_memory.name = Some(shared.clone());
    let (clock, hand) = Clock::manual(1_700_000_000_000_000_000);
    let stats = Stats::with_clock(cfg, clock);
    stats.start().unwrap();
    let counters: Vec<_> = (0..400)
        .map(|i| stats.counter(&format!("counter {i}")).unwrap())
        .collect();
    let gauges: Vec<_> = (0..300)
        .map(|i| stats.gauge(&format!("gauge {i}")).unwrap())
        .collect();
    let timers: Vec<_> = (0..300)
        .map(|i| stats.timer(&format!("timer {i}")).unwrap())
        .collect();
    // A bounded workload: counters walk up and down, gauges and durations stay
    // in one range, so the histograms' octaves are all touched in warm-up.
    let run = |from: u64, to: u64| {
        for i in from..to {
            let k = (i % 1000) as usize;
            hand.advance(10);
            match k {
                0..=399 => counters[k].add(if (i / 1000) % 2 == 0 { 3 } else { -3 }),
                400..=699 => gauges[k - 400].set((i % 977) as f64).unwrap(),
                _ => timers[k - 700].record(1000 + i % 1_000_003),
            }
        }
    };
    let warm_up = events / 10;
    run(0, warm_up);
    // Twice: while the second is made the first is still held, which is the
    // high-water mark of dumping.
    stats.json_dump();
    stats.json_dump();
    let before = resident_bytes();
    run(warm_up, events);
    stats.json_dump();
    stats.json_dump();
    let after = resident_bytes();
    stats.stop();
    let _ = hrts_stats::shared::StatsSegment::unlink(&shared);
    let h = stats.health();
    eprintln!(
        "{events} events: resident {before} -> {after} bytes; folded {} dropped {}",
        h.folded_events, h.dropped_events
    );
    assert_eq!(h.dropped_events, 0);
    // Allocator noise (glibc moves its mmap threshold after the first big
    // frees) stays within a few MiB; one allocation per event would be over
    // 100 MiB at 10^7 events.
    assert!(
        after <= before + (4 << 20),
        "resident grew from {before} to {after} bytes"
    );
}
