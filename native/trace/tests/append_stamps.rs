//! `TraceWriter::append` continues a file's stamps after its last one: events
//! appended on the same clock tick as the file's last stamp never repeat a
//! stamp the file already holds.

use hrts_core::ItcFormat;
use hrts_trace::clock::FnClock;
use hrts_trace::format::read_file;
use hrts_trace::{Clock, ClockInfo, EventKind, ReadOptions, TraceWriter, WriterOptions};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// A clock that stands still at the value in `now` (tests move it).
fn manual(now: Arc<AtomicU64>) -> Arc<dyn Clock> {
    Arc::new(FnClock(move || now.load(Ordering::SeqCst)))
}

fn info() -> ClockInfo {
    ClockInfo {
        host: "h".into(),
        clock_id: 7,
        segment: "/test".into(),
        source: "test".into(),
        ..ClockInfo::default()
    }
}

fn opts() -> WriterOptions {
    WriterOptions {
        host: None,
        label: "append".into(),
        format: Some(ItcFormat::new(13, 1_000).unwrap()),
    }
}

fn stamps(path: &std::path::Path) -> Vec<u64> {
    let f = read_file(path, ReadOptions::default()).unwrap();
    f.events.iter().map(|e| e.stamp).collect()
}

#[test]
fn events_appended_on_the_files_last_tick_get_new_stamps() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("same-tick.htr");
    let now = Arc::new(AtomicU64::new(1_000_000_000));
    let w = TraceWriter::with_clock(&path, manual(now.clone()), info(), opts()).unwrap();
    // An earlier tick, then three events on the last one: event counters 0, 1, 2.
    w.event(EventKind::Instant, "e", 0, b"").unwrap();
    now.fetch_add(5_000, Ordering::SeqCst);
    for _ in 0..3 {
        w.event(EventKind::Instant, "e", 0, b"").unwrap();
    }
    w.close().unwrap();
    let old = stamps(&path);
    let format = ItcFormat::new(13, 1_000).unwrap();
    assert_eq!(
        old.iter().map(|s| format.decode(*s).1).collect::<Vec<_>>(),
        [0, 0, 1, 2]
    );

    // Appended while the clock is still on that tick.
    let w = TraceWriter::append(&path, manual(now.clone()), &info()).unwrap();
    let mut returned = Vec::new();
    for _ in 0..4 {
        returned.push(w.event(EventKind::Instant, "e", 0, b"").unwrap());
    }
    let summary = w.close().unwrap();
    let last_old = *old.last().unwrap();
    assert_eq!(
        returned,
        (1..=4).map(|i| last_old + i).collect::<Vec<_>>(),
        "the appended events continue after the file's last stamp {last_old}"
    );
    let all = stamps(&path);
    assert_eq!(all.len(), 8);
    assert!(
        all.windows(2).all(|w| w[0] < w[1]),
        "stamps repeat or go back: {all:?}"
    );
    // Seven events on one tick now: ITC reports 6.
    assert_eq!(summary.max_events_per_tick, 6);

    // A later tick starts again at event 0.
    now.fetch_add(10_000, Ordering::SeqCst);
    let w = TraceWriter::append(&path, manual(now), &info()).unwrap();
    let s = w.event(EventKind::Instant, "e", 0, b"").unwrap();
    w.close().unwrap();
    assert_eq!(format.decode(s).1, 0);
    assert!(s > *all.last().unwrap());
}
