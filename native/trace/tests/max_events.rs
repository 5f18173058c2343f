//! The maximum number of events on one clock tick: counted as Intel Trace
//! Collector counts it and recorded in the trace file's header on close.

use hrts_core::ItcFormat;
use hrts_trace::clock::FnClock;
use hrts_trace::format::{read_file, Header, HEADER_EXTENSION_LEN};
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
        label: "max events".into(),
        format: Some(ItcFormat::new(13, 1_000).unwrap()),
    }
}

#[test]
fn a_clock_that_resolves_every_event_records_zero() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("fine.htr");
    let now = Arc::new(AtomicU64::new(1_000_000_000));
    let w = TraceWriter::with_clock(&path, manual(now.clone()), info(), opts()).unwrap();
    for _ in 0..5 {
        w.event(EventKind::Instant, "e", 0, b"").unwrap();
        now.fetch_add(1_000, Ordering::SeqCst);
    }
    // Before close the header does not know yet.
    w.flush().unwrap();
    let open = read_file(
        &path,
        ReadOptions {
            allow_incomplete: true,
        },
    )
    .unwrap();
    assert_eq!(open.header.max_events_per_tick, None);
    assert_eq!(w.close().unwrap().max_events_per_tick, 0);
    let f = read_file(&path, ReadOptions::default()).unwrap();
    assert_eq!(f.header.max_events_per_tick, Some(0));
}

#[test]
fn events_sharing_a_tick_are_counted_in_the_header_and_kept_by_append() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("coarse.htr");
    let now = Arc::new(AtomicU64::new(1_000_000_000));
    let w = TraceWriter::with_clock(&path, manual(now.clone()), info(), opts()).unwrap();
    // Four events on one tick: ITC reports 3.
    for _ in 0..4 {
        w.event(EventKind::Instant, "e", 0, b"").unwrap();
    }
    now.fetch_add(10_000, Ordering::SeqCst);
    w.event(EventKind::Instant, "e", 0, b"").unwrap();
    assert_eq!(w.close().unwrap().max_events_per_tick, 3);
    let f = read_file(&path, ReadOptions::default()).unwrap();
    assert_eq!(f.header.max_events_per_tick, Some(3));
    let bytes = std::fs::read(&path).unwrap();
    let at = Header::max_events_offset(&bytes).unwrap();
    assert_eq!(bytes[at..at + HEADER_EXTENSION_LEN], 3u64.to_le_bytes());

    // Continuing the file later keeps the larger of the old and new counts.
    now.fetch_add(1_000_000, Ordering::SeqCst);
    let w = TraceWriter::append(&path, manual(now.clone()), &info()).unwrap();
    w.event(EventKind::Instant, "e", 0, b"").unwrap();
    assert_eq!(w.close().unwrap().max_events_per_tick, 3);
    let f = read_file(&path, ReadOptions::default()).unwrap();
    assert_eq!(f.header.max_events_per_tick, Some(3));
    assert_eq!(f.events.len(), 6);
}

#[test]
fn a_file_from_before_the_field_reads_and_appends() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("old.htr");
    let now = Arc::new(AtomicU64::new(1_000_000_000));
    let w = TraceWriter::with_clock(&path, manual(now.clone()), info(), opts()).unwrap();
    w.event(EventKind::Instant, "e", 0, b"").unwrap();
    w.event(EventKind::Instant, "e", 0, b"").unwrap();
    w.close().unwrap();
    // Rewrite the header as the format's first writers did: no extension.
    let mut bytes = std::fs::read(&path).unwrap();
    let at = Header::max_events_offset(&bytes).unwrap();
    bytes.drain(at..at + HEADER_EXTENSION_LEN);
    let len = (at as u16).to_le_bytes();
    bytes[10..12].copy_from_slice(&len);
    std::fs::write(&path, &bytes).unwrap();
    let f = read_file(&path, ReadOptions::default()).unwrap();
    assert_eq!(f.header.max_events_per_tick, None);
    assert_eq!(f.events.len(), 2);
    // Appending works and leaves the old header as it was.
    now.fetch_add(1_000_000, Ordering::SeqCst);
    let w = TraceWriter::append(&path, manual(now), &info()).unwrap();
    w.event(EventKind::Instant, "e", 0, b"").unwrap();
    assert_eq!(w.close().unwrap().max_events_per_tick, 1);
    let f = read_file(&path, ReadOptions::default()).unwrap();
    assert_eq!(f.header.max_events_per_tick, None);
    assert_eq!(f.events.len(), 3);
}
