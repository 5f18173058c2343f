//! Bound records in one process: a writer records its clock's bound when it
//! opens and when it closes a file; a file of format version 1 continued by
//! a new writer stays version 1; merged by the records' widest bound.

use hrts_core::{BoundSource, BoundStatus, ItcFormat};
use hrts_trace::clock::BoundReading;
use hrts_trace::format::{read_file, BoundRecord, MAP_BOUNDS};
use hrts_trace::merge::{merge, read_inputs, Basis, MappingKind, MergeOptions};
use hrts_trace::{Clock, ClockInfo, EventKind, ReadOptions, TraceWriter, WriterOptions};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// A clock that reads 1 µs later each time, whose time service says
/// `status` with `widest_ns`.
struct Bounded {
    now: AtomicU64,
    status: BoundStatus,
    widest_ns: u64,
}

impl Clock for Bounded {
    fn now_ns(&self) -> u64 {
        self.now.fetch_add(1_000, Ordering::Relaxed)
    }

    fn bound(&self) -> Option<BoundRecord> {
        Some(BoundRecord {
            at_ns: self.now_ns(),
            status: self.status,
            source: BoundSource::Test,
            bound_ns: self.widest_ns / 2,
            half_width_ns: self.widest_ns / 2 + 10,
            widest_ns: self.widest_ns,
        })
    }
}

fn clock(start: u64, status: BoundStatus, widest_ns: u64) -> Arc<dyn Clock> {
    Arc::new(Bounded {
        now: AtomicU64::new(start),
        status,
        widest_ns,
    })
}

fn info(host: &str, id: u64) -> ClockInfo {
    ClockInfo {
        host: host.into(),
        clock_id: id,
        ..ClockInfo::default()
    }
}

fn writer(path: &Path, clock: Arc<dyn Clock>, info: ClockInfo) -> TraceWriter {
    let opts = WriterOptions {
        format: Some(ItcFormat::new(13, 1).unwrap()),
        ..WriterOptions::default()
    };
    TraceWriter::with_clock(path, clock, info, opts).unwrap()
}

const T0: u64 = 1_700_000_000_000_000_000;

#[test]
fn a_writer_records_the_bound_at_open_at_close_and_when_asked() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a.htr");
    let w = writer(
        &path,
        clock(T0, BoundStatus::Synchronized, 5_000),
        info("a", 1),
    );
    w.event(EventKind::Instant, "x", 0, b"").unwrap();
    w.record_bound().unwrap();
    w.close().unwrap();
    let f = read_file(&path, ReadOptions::default()).unwrap();
    assert_eq!(f.header.version, 2);
    assert_eq!(f.bounds.len(), 3);
    assert!(f.bounds.iter().all(|b| b.widest_ns == 5_000));
    assert!(f.bounds.windows(2).all(|w| w[0].at_ns < w[1].at_ns));
    assert!(f.bounds[0].at_ns < f.header.epoch_ns(f.events[0].stamp));

    // A clock no time service vouches for records none.
    let plain = dir.path().join("plain.htr");
    let fixed: Arc<dyn Clock> = Arc::new(hrts_trace::clock::FnClock(|| T0));
    writer(&plain, fixed, info("p", 2)).close().unwrap();
    assert!(read_file(&plain, ReadOptions::default())
        .unwrap()
        .bounds
        .is_empty());
}

/// A clock whose time service republishes its word when the test says
/// (`version`), each word fresh for `fresh_ns` after it is read.
struct Republishing {
    now: AtomicU64,
    version: AtomicU64,
    fresh_ns: u64,
}

impl Clock for Republishing {
    fn now_ns(&self) -> u64 {
        self.now.fetch_add(1_000, Ordering::Relaxed)
    }

    fn bound_reading(&self) -> Option<BoundReading> {
        let at_ns = self.now_ns();
        Some(BoundReading {
            record: BoundRecord {
                at_ns,
                status: BoundStatus::Synchronized,
                source: BoundSource::Test,
                bound_ns: 1_000,
                half_width_ns: 1_100,
                widest_ns: 2_000 + self.version.load(Ordering::Relaxed),
            },
            version: self.bound_version(),
            stale_at_ns: at_ns + self.fresh_ns,
        })
    }

    fn bound_version(&self) -> u64 {
        self.version.load(Ordering::Relaxed)
    }
}

#[test]
fn an_event_records_the_bound_again_when_the_word_changes_or_ages() {
    let dir = tempfile::tempdir().unwrap();
    let bounds_of = |path: &Path| read_file(path, ReadOptions::default()).unwrap().bounds;

    // A new word: recorded at the first event after it, once.
    let path = dir.path().join("words.htr");
    let c = Arc::new(Republishing {
        now: AtomicU64::new(T0),
        version: AtomicU64::new(1),
        fresh_ns: u64::MAX / 2,
    });
    let w = writer(&path, c.clone(), info("w", 3));
    for _ in 0..5 {
        w.event(EventKind::Instant, "x", 0, b"").unwrap();
    }
    c.version.store(2, Ordering::Relaxed);
    for _ in 0..5 {
        w.event(EventKind::Instant, "x", 0, b"").unwrap();
    }
    w.close().unwrap();
    let widest: Vec<u64> = bounds_of(&path).iter().map(|b| b.widest_ns).collect();
    // Open, the new word, close.
    assert_eq!(widest, vec![2_001, 2_002, 2_002]);
    let f = read_file(&path, ReadOptions::default()).unwrap();
    let sixth = f.header.epoch_ns(f.events[5].stamp);
    assert!(f.bounds[1].at_ns > sixth && f.bounds[1].at_ns < sixth + 3_000);

    // The same word past its freshness: recorded again at the first event
    // after it goes stale (each clock read is 1 µs later; fresh for 10 µs).
    let path = dir.path().join("ages.htr");
    let c = Arc::new(Republishing {
        now: AtomicU64::new(T0),
        version: AtomicU64::new(7),
        fresh_ns: 10_000,
    });
    let w = writer(&path, c, info("a", 4));
    for _ in 0..30 {
        w.event(EventKind::Instant, "x", 0, b"").unwrap();
    }
    w.close().unwrap();
    let at: Vec<u64> = bounds_of(&path).iter().map(|b| b.at_ns - T0).collect();
    // Open, then every 10 clock reads (an event's and the reading's own), close.
    assert!(at.len() >= 5, "{at:?}");
    assert!(at.windows(2).all(|p| p[1] - p[0] <= 12_000), "{at:?}");
}

/// Turns a file into what format version 1 wrote: version 1, no BOUND
/// records, the END record's count matching.
fn as_version_1(path: &Path) {
    let buf = std::fs::read(path).unwrap();
    let header_len = u16::from_le_bytes([buf[10], buf[11]]) as usize;
    let mut out = buf[..header_len].to_vec();
    out[8..10].copy_from_slice(&1u16.to_le_bytes());
    let (mut pos, mut records) = (header_len, 0u64);
    while pos < buf.len() {
        let len = u32::from_le_bytes(buf[pos + 1..pos + 5].try_into().unwrap()) as usize;
        let record = &buf[pos..pos + 5 + len];
        match record[0] {
            5 => {}
            4 => {
                out.extend_from_slice(&record[..5]);
                out.extend_from_slice(&records.to_le_bytes());
                out.extend_from_slice(&record[13..]);
                records += 1;
            }
            _ => {
                out.extend_from_slice(record);
                records += 1;
            }
        }
        pos += 5 + len;
    }
    std::fs::write(path, out).unwrap();
}

#[test]
fn a_version_1_file_continued_stays_version_1() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("old.htr");
    let c = clock(T0, BoundStatus::Synchronized, 5_000);
    let w = writer(&path, c.clone(), info("a", 1));
    w.event(EventKind::Instant, "x", 0, b"").unwrap();
    w.close().unwrap();
    as_version_1(&path);
    let w = TraceWriter::append(&path, c, &info("a", 1)).unwrap();
    w.event(EventKind::Instant, "y", 0, b"").unwrap();
    w.close().unwrap();
    let f = read_file(&path, ReadOptions::default()).unwrap();
    assert_eq!(f.header.version, 1);
    assert!(f.bounds.is_empty());
    assert_eq!(f.events.len(), 2);
}

#[test]
fn synchronized_files_merge_by_their_widest_bound() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a.htr"), dir.path().join("b.htr"));
    // Host a's events at T0 + 2, 3, 4 µs ± 5 µs, host b's at T0 + 3.5 µs
    // ± 100 ns: within reach of all three.
    let wa = writer(
        &a,
        clock(T0, BoundStatus::Synchronized, 5_000),
        info("a", 1),
    );
    let wb = writer(
        &b,
        clock(T0 + 1_500, BoundStatus::Synchronized, 100),
        info("b", 2),
    );
    for _ in 0..3 {
        wa.event(EventKind::Instant, "a", 0, b"").unwrap();
    }
    wb.event(EventKind::Instant, "b-near", 0, b"").unwrap();
    wa.close().unwrap();
    wb.close().unwrap();
    let m = merge(
        read_inputs(&[&a, &b], &MergeOptions::default()).unwrap(),
        &MergeOptions::default(),
    )
    .unwrap();
    assert!(m.domains.iter().all(|d| d.kind == MappingKind::Bounds));
    assert!(m.procs.iter().all(|p| p.flags & MAP_BOUNDS != 0));
    assert_eq!(m.procs[0].bound_ns, 5_000.0);
    let Basis::Bounds(u) = &m.basis else {
        panic!("{:?}", m.basis)
    };
    assert_eq!(u.pairs, 3, "b's event lies within 5.1 µs of each of a's");

    // One free-running file keeps the bounds out, and the merge refuses as
    // it always did for hosts that never synced, saying why.
    let c = dir.path().join("c.htr");
    writer(&c, clock(T0, BoundStatus::FreeRunning, 0), info("c", 3))
        .close()
        .unwrap();
    let files = read_inputs(&[&a, &b, &c], &MergeOptions::default()).unwrap();
    let e = merge(files, &MergeOptions::default()).unwrap_err();
    assert!(
        e.message()
            .contains("(bounds not used: host c's bound record in"),
        "{e}"
    );
    assert!(
        e.message().contains("says free-running (source test))"),
        "{e}"
    );
}
