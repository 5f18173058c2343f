//! End to end in one process: hosts with skewed clocks record, sync with a real
//! UDP master on loopback, and merge; then every kind of bad input.

use hrts_core::ErrorKind;
use hrts_core::ItcFormat;
use hrts_trace::clock::{wall_ns, FnClock};
use hrts_trace::format::{
    map_flag_names, read_file, MAP_DISAGREEMENT, MAP_EXTRAPOLATED, MAP_INCOMPLETE, MAP_MASTER,
    MAP_UNSYNCED,
};
use hrts_trace::merge::{
    causality, check_order, merge, naive_causality, read_inputs, write_chrome_json, write_global,
    MappingKind, MergeOptions,
};
use hrts_trace::sync::{bind, serve, ServeOptions, ServeSummary};
use hrts_trace::{
    Clock, ClockInfo, EventKind, ReadOptions, Skew, SyncOptions, SyncPhase, TraceWriter,
    WriterOptions,
};
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// The "true" time all simulated hosts share: wall clock at first use, then
/// the monotonic clock.
fn true_ns() -> u64 {
    static START: OnceLock<(Instant, u64)> = OnceLock::new();
    let (i, w) = START.get_or_init(|| (Instant::now(), wall_ns()));
    w + i.elapsed().as_nanos() as u64
}

fn skewed(skew: Option<Skew>) -> Arc<dyn Clock> {
    Arc::new(FnClock(move || {
        let t = true_ns();
        skew.map_or(t, |s| s.apply(t))
    }))
}

/// A clock that jumps forward by `step_ns` once `after` has passed.
fn stepping(step_ns: u64, after: Duration) -> Arc<dyn Clock> {
    let start = Instant::now();
    Arc::new(FnClock(move || {
        true_ns() + if start.elapsed() > after { step_ns } else { 0 }
    }))
}

const MASTER_ID: u64 = 0x4d41_5354;

fn info(host: &str, id: u64, skew: bool) -> ClockInfo {
    ClockInfo {
        host: host.into(),
        clock_id: id,
        segment: "/test".into(),
        source: "test".into(),
        test_skew: skew,
        ..ClockInfo::default()
    }
}

/// A master on loopback that stops after `exchanges` answers (or 20 s idle).
fn master(exchanges: u64) -> (String, JoinHandle<ServeSummary>) {
    let socket = bind("127.0.0.1:0").unwrap();
    let addr = socket.local_addr().unwrap().to_string();
    let clock = skewed(None);
    let t = std::thread::spawn(move || {
        let opts = ServeOptions {
            idle_exit: Duration::from_secs(20),
            max_duration: Duration::from_secs(60),
            max_exchanges: exchanges,
        };
        serve(&socket, clock.as_ref(), "master", MASTER_ID, opts).unwrap()
    });
    (addr, t)
}

fn writer(dir: &Path, name: &str, clock: Arc<dyn Clock>, info: ClockInfo) -> TraceWriter {
    let opts = WriterOptions {
        host: None,
        label: name.into(),
        format: Some(ItcFormat::new(13, 1).unwrap()),
    };
    TraceWriter::with_clock(dir.join(format!("{name}.htr")), clock, info, opts).unwrap()
}

fn spin(d: Duration) {
    let t = Instant::now();
    while t.elapsed() < d {
        std::hint::spin_loop();
    }
}

const SYNC: SyncOptions = SyncOptions {
    exchanges: 20,
    reply_timeout: Duration::from_millis(500),
    first_answer_timeout: Duration::from_secs(5),
};

struct Host {
    name: &'static str,
    id: u64,
    skew: Option<Skew>,
}

#[test]
fn skewed_hosts_line_up_after_the_merge() {
    let dir = tempfile::tempdir().unwrap();
    let reference = true_ns();
    let hosts = [
        Host {
            name: "m",
            id: MASTER_ID,
            skew: None,
        },
        Host {
            name: "a",
            id: 1,
            skew: Some(Skew {
                offset_ns: 2_500_000_000,
                drift_ppm: 100.0,
                reference_ns: reference,
            }),
        },
        Host {
            name: "b",
            id: 2,
            skew: Some(Skew {
                offset_ns: -1_700_000_000,
                drift_ppm: -100.0,
                reference_ns: reference,
            }),
        },
        Host {
            name: "c",
            id: 3,
            skew: Some(Skew {
                offset_ns: 800_000_000,
                drift_ppm: 37.0,
                reference_ns: reference,
            }),
        },
    ];
    // Two processes per host, each syncing at the start and the end.
    let per_host = 2;
    let (addr, server) = master((hosts.len() * per_host * 2) as u64 * SYNC.exchanges as u64);
    let writers: Vec<(usize, TraceWriter)> = hosts
        .iter()
        .enumerate()
        .flat_map(|(h, host)| {
            let dir = dir.path().to_path_buf();
            (0..per_host).map(move |p| {
                let w = writer(
                    &dir,
                    &format!("{}{p}", host.name),
                    skewed(host.skew),
                    info(host.name, host.id, host.skew.is_some()),
                );
                (h, w)
            })
        })
        .collect();
    for (_, w) in &writers {
        w.sync(&addr, SyncPhase::Start, SYNC).unwrap();
    }
    // Messages from every process to every other, 300 us apart in true time:
    // far more than any loopback sync error, so hrts must get them all right.
    let mut id = 0;
    for round in 0..3 {
        for (s, (_, from)) in writers.iter().enumerate() {
            for (r, (_, to)) in writers.iter().enumerate() {
                if s == r {
                    continue;
                }
                id += 1;
                from.event(EventKind::Send, "send", id, &[round]).unwrap();
                spin(Duration::from_micros(300));
                to.event(EventKind::Receive, "recv", id, b"").unwrap();
            }
        }
        std::thread::sleep(Duration::from_millis(150));
    }
    for (_, w) in &writers {
        w.event(EventKind::Instant, "done", 0, b"").unwrap();
        w.sync(&addr, SyncPhase::End, SYNC).unwrap();
    }
    let paths: Vec<PathBuf> = writers
        .iter()
        .map(|(_, w)| w.path().to_path_buf())
        .collect();
    for (_, w) in &writers {
        w.close().unwrap();
    }
    let served = server.join().unwrap();

    let files = read_inputs(&paths, &MergeOptions::default()).unwrap();
    let naive = naive_causality(&files);
    let merged = merge(files, &MergeOptions::default()).unwrap();
    let hrts = causality(&merged);
    assert_eq!(hrts.messages, id);
    assert_eq!(hrts.violations, 0, "{hrts:?}");
    assert_eq!(hrts.unmatched_sends + hrts.unmatched_receives, 0);
    assert!(
        naive.violations > id / 4,
        "seconds of offset break the naive merge: {naive:?}"
    );
    assert_eq!(check_order(&merged), (0, 0));
    assert_eq!(merged.order_corrections, 0);

    // Offsets and drifts recovered within the reported bounds.
    for d in &merged.domains {
        let host = hosts.iter().find(|h| h.id == d.clock_id).unwrap();
        match host.skew {
            None => {
                assert_eq!(d.kind, MappingKind::Master);
                assert_eq!(d.flags, MAP_MASTER);
            }
            Some(s) => {
                assert_eq!(d.kind, MappingKind::Fit);
                assert_eq!(d.flags, 0, "{:?}", map_flag_names(d.flags));
                let t = d.ref_master_ns();
                let injected = s.offset_ns as f64 + (t - reference as f64) * s.drift_ppm * 1e-6;
                let err = (d.local_minus_master_ns() - injected).abs();
                assert!(
                    err <= d.fit.bound_ns,
                    "host {}: offset error {err} > bound {}",
                    d.host,
                    d.fit.bound_ns
                );
                let drift_err = (d.fit.local_rate_ppm() - s.drift_ppm).abs();
                let drift_bound = d.fit.drift_bound * 1e6;
                assert!(
                    drift_err <= drift_bound,
                    "host {}: drift error {drift_err} ppm > {drift_bound}",
                    d.host
                );
            }
        }
    }

    // The run lasts exactly what the master's gettimeofday says.
    assert_eq!(
        merged.run.wall_end_ns - merged.run.wall_start_ns,
        served.run_wall_ns()
    );
    assert_eq!(
        (merged.run.end_tick - merged.run.start_tick) * merged.header.tick_num,
        served.run_wall_ns() * merged.header.tick_den
    );
    assert!(
        merged.ticks_per_ns >= 2,
        "1 ns local ticks need finer global ones"
    );

    // Both outputs can be read back.
    let global = dir.path().join("global.htr");
    write_global(&merged, &global).unwrap();
    let back = read_file(&global, ReadOptions::default()).unwrap();
    assert!(back.header.is_global());
    assert_eq!(back.global_events.len(), merged.events.len());
    assert_eq!(back.procs.len(), paths.len());
    assert_eq!(back.run.as_ref(), Some(&merged.run));
    let json = dir.path().join("global.json");
    write_chrome_json(&merged, &json).unwrap();
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let events = v["traceEvents"].as_array().unwrap();
    // metadata (4 hosts + 8 processes) + events + one flow per send and receive
    let n = merged.events.len() + 2 * id as usize + hosts.len() + writers.len();
    assert_eq!(events.len(), n);
    assert!(events.iter().any(|e| e["ph"] == "s") && events.iter().any(|e| e["ph"] == "f"));
}

/// One host that syncs per `phases`, and a master-clock process.
fn run_one(dir: &Path, clock: Arc<dyn Clock>, phases: &[SyncPhase], gap: Duration) -> Vec<PathBuf> {
    let (addr, server) = master(phases.len() as u64 * SYNC.exchanges as u64 + 2 * 20);
    let m = writer(dir, "m0", skewed(None), info("m", MASTER_ID, false));
    let h = writer(dir, "h0", clock, info("h", 7, true));
    m.sync(&addr, SyncPhase::Start, SYNC).unwrap();
    if phases.contains(&SyncPhase::Start) {
        h.sync(&addr, SyncPhase::Start, SYNC).unwrap();
    }
    h.event(EventKind::Begin, "work", 0, b"").unwrap();
    std::thread::sleep(gap);
    h.event(EventKind::End, "work", 0, b"").unwrap();
    if phases.contains(&SyncPhase::End) {
        h.sync(&addr, SyncPhase::End, SYNC).unwrap();
    }
    m.sync(&addr, SyncPhase::End, SYNC).unwrap();
    m.close().unwrap();
    h.close().unwrap();
    server.join().unwrap();
    vec![dir.join("m0.htr"), dir.join("h0.htr")]
}

fn merge_err(paths: &[PathBuf], opts: MergeOptions) -> hrts_core::Error {
    let files = read_inputs(paths, &opts);
    match files {
        Err(e) => e,
        Ok(f) => merge(f, &opts).expect_err("merge should fail"),
    }
}

fn skew_a() -> Option<Skew> {
    Some(Skew {
        offset_ns: 3_000_000_000,
        drift_ppm: 50.0,
        reference_ns: 0,
    })
}

#[test]
fn sync_missing_at_one_end_is_an_error_or_a_flagged_extrapolation() {
    let dir = tempfile::tempdir().unwrap();
    let paths = run_one(
        dir.path(),
        skewed(skew_a()),
        &[SyncPhase::Start],
        Duration::from_millis(30),
    );
    let e = merge_err(&paths, MergeOptions::default());
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    assert!(e.message().contains("missing at the end"), "{e}");
    assert!(e.message().contains("--extrapolate"), "{e}");
    let opts = MergeOptions {
        extrapolate: true,
        ..MergeOptions::default()
    };
    let m = merge(read_inputs(&paths, &opts).unwrap(), &opts).unwrap();
    let d = m.domains.iter().find(|d| d.host == "h").unwrap();
    assert_eq!(d.kind, MappingKind::OffsetOnly);
    assert!(d.flags & MAP_EXTRAPOLATED != 0);
    assert!(
        m.notes.iter().any(|n| n.contains("extrapolated")),
        "{:?}",
        m.notes
    );
    assert!(m.procs[1].flags & MAP_EXTRAPOLATED != 0);

    let dir = tempfile::tempdir().unwrap();
    let paths = run_one(
        dir.path(),
        skewed(skew_a()),
        &[SyncPhase::End],
        Duration::from_millis(30),
    );
    let e = merge_err(&paths, MergeOptions::default());
    assert!(e.message().contains("missing at the start"), "{e}");
}

#[test]
fn a_host_that_never_synced_is_an_error_or_a_flagged_identity() {
    let dir = tempfile::tempdir().unwrap();
    let paths = run_one(dir.path(), skewed(skew_a()), &[], Duration::from_millis(5));
    let e = merge_err(&paths, MergeOptions::default());
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    assert!(e.message().contains("never synced"), "{e}");
    assert!(e.message().contains("--allow-unsynced"), "{e}");
    let opts = MergeOptions {
        allow_unsynced: true,
        ..MergeOptions::default()
    };
    let m = merge(read_inputs(&paths, &opts).unwrap(), &opts).unwrap();
    let d = m.domains.iter().find(|d| d.host == "h").unwrap();
    assert_eq!((d.kind, d.flags), (MappingKind::Unsynced, MAP_UNSYNCED));
    assert!(d.fit.bound_ns.is_infinite());
    assert!(m.notes.iter().any(|n| n.contains("never synced")));
}

#[test]
fn clocks_that_disagree_beyond_the_bound_are_refused_unless_accepted() {
    let dir = tempfile::tempdir().unwrap();
    // A 5 ms step between the start and the end sync, with a periodic round
    // in between so that no straight line fits.
    let clock = stepping(5_000_000, Duration::from_millis(80));
    let (addr, _server) = master(3 * 20 + 2 * 20);
    let m = writer(dir.path(), "m0", skewed(None), info("m", MASTER_ID, false));
    let h = writer(dir.path(), "h0", clock, info("h", 7, true));
    m.sync(&addr, SyncPhase::Start, SYNC).unwrap();
    h.sync(&addr, SyncPhase::Start, SYNC).unwrap();
    h.event(EventKind::Instant, "a", 0, b"").unwrap();
    std::thread::sleep(Duration::from_millis(40));
    h.sync(&addr, SyncPhase::Periodic, SYNC).unwrap();
    std::thread::sleep(Duration::from_millis(100));
    h.event(EventKind::Instant, "b", 0, b"").unwrap();
    h.sync(&addr, SyncPhase::End, SYNC).unwrap();
    m.sync(&addr, SyncPhase::End, SYNC).unwrap();
    let paths = [m.path().to_path_buf(), h.path().to_path_buf()];
    m.close().unwrap();
    h.close().unwrap();
    let e = merge_err(&paths, MergeOptions::default());
    assert!(e.message().contains("disagree beyond the bound"), "{e}");
    assert!(e.message().contains("did not run at a steady rate"), "{e}");
    assert!(e.message().contains("--accept-disagreement"), "{e}");
    let opts = MergeOptions {
        accept_disagreement: true,
        ..MergeOptions::default()
    };
    let merged = merge(read_inputs(&paths, &opts).unwrap(), &opts).unwrap();
    assert!(merged.procs[1].flags & MAP_DISAGREEMENT != 0);
    assert!(
        merged.procs[1].bound_ns > 1e5,
        "the bound shows the step: {}",
        merged.procs[1].bound_ns
    );
}

#[test]
fn truncated_foreign_and_damaged_files_are_refused_clearly() {
    let dir = tempfile::tempdir().unwrap();
    let paths = run_one(
        dir.path(),
        skewed(skew_a()),
        &[SyncPhase::Start, SyncPhase::End],
        Duration::from_millis(5),
    );
    let full = std::fs::read(&paths[1]).unwrap();
    let opts = MergeOptions::default();

    // Cut inside the last record, and just before the END record.
    let cut = dir.path().join("cut.htr");
    for keep in [full.len() - 3, full.len() - 21] {
        std::fs::write(&cut, &full[..keep]).unwrap();
        let e = merge_err(&[paths[0].clone(), cut.clone()], opts);
        assert_eq!(e.kind(), ErrorKind::Truncated, "{e}");
        assert!(e.message().contains("--allow-incomplete"), "{e}");
    }
    let lenient = MergeOptions {
        allow_incomplete: true,
        ..opts
    };
    let m = merge(
        read_inputs(&[paths[0].clone(), cut.clone()], &lenient).unwrap(),
        &lenient,
    )
    .unwrap();
    assert!(m.procs[1].flags & MAP_INCOMPLETE != 0);
    assert!(m.notes.iter().any(|n| n.contains("never closed")));

    // Cut inside the header.
    std::fs::write(&cut, &full[..30]).unwrap();
    assert_eq!(
        merge_err(std::slice::from_ref(&cut), lenient).kind(),
        ErrorKind::Truncated
    );

    // Not a trace at all.
    let foreign = dir.path().join("foreign.htr");
    std::fs::write(&foreign, b"{\"traceEvents\":[]}").unwrap();
    let e = merge_err(&[foreign], opts);
    assert_eq!(e.kind(), ErrorKind::Foreign);
    assert!(e.message().contains("not an hrts trace file"), "{e}");

    // A record length beyond anything a writer makes.
    let mut bad = full.clone();
    let first_record = u16::from_le_bytes([full[10], full[11]]) as usize;
    bad[first_record + 1..first_record + 5].copy_from_slice(&u32::MAX.to_le_bytes());
    std::fs::write(&cut, &bad).unwrap();
    assert_eq!(
        merge_err(std::slice::from_ref(&cut), opts).kind(),
        ErrorKind::Corrupt
    );

    // Missing file.
    let e = merge_err(&[dir.path().join("nope.htr")], opts);
    assert_eq!(e.kind(), ErrorKind::Os);

    // A merged trace is not an input; nor is nothing.
    let files = read_inputs(&paths, &opts).unwrap();
    let merged = merge(files, &opts).unwrap();
    let global = dir.path().join("g.htr");
    write_global(&merged, &global).unwrap();
    assert!(merge_err(&[global], opts)
        .message()
        .contains("merged (global) trace"));
    assert!(merge(Vec::new(), &opts).is_err());
}

#[test]
fn traces_synced_with_two_masters_are_not_mixed() {
    let d1 = tempfile::tempdir().unwrap();
    let d2 = tempfile::tempdir().unwrap();
    let a = run_one(
        d1.path(),
        skewed(skew_a()),
        &[SyncPhase::Start, SyncPhase::End],
        Duration::ZERO,
    );
    // The second run's master has another clock id.
    let socket = bind("127.0.0.1:0").unwrap();
    let addr = socket.local_addr().unwrap().to_string();
    let clock = skewed(None);
    std::thread::spawn(move || {
        let opts = ServeOptions {
            max_exchanges: 20,
            ..ServeOptions::default()
        };
        serve(&socket, clock.as_ref(), "other", 99, opts)
    });
    let w = writer(d2.path(), "x", skewed(None), info("x", 5, false));
    w.sync(&addr, SyncPhase::Start, SYNC).unwrap();
    w.close().unwrap();
    let e = merge_err(
        &[a[1].clone(), d2.path().join("x.htr")],
        MergeOptions::default(),
    );
    assert!(e.message().contains("different masters"), "{e}");
}

#[test]
fn a_writer_refuses_after_close_and_appending_keeps_stamps_unique() {
    let dir = tempfile::tempdir().unwrap();
    let clock = skewed(None);
    let path = dir.path().join("w.htr");
    let w = TraceWriter::with_clock(
        &path,
        clock.clone(),
        info("h", 1, false),
        WriterOptions::default(),
    )
    .unwrap();
    let s1 = w.event(EventKind::Instant, "x", 0, b"").unwrap();
    w.close().unwrap();
    let e = w.event(EventKind::Instant, "x", 0, b"").unwrap_err();
    assert!(e.message().contains("already closed"), "{e}");
    let big = vec![0u8; hrts_trace::format::MAX_PAYLOAD_LEN + 1];
    let w2 = TraceWriter::append(&path, clock.clone(), &info("h", 1, false)).unwrap();
    assert!(w2.event(EventKind::Instant, "x", 0, &big).is_err());
    let s2 = w2.event(EventKind::Instant, "y", 0, b"").unwrap();
    assert!(s2 > s1);
    w2.close().unwrap();
    let f = read_file(&path, ReadOptions::default()).unwrap();
    assert_eq!(f.events.len(), 2);
    assert_eq!(f.names.len(), 2);
    // Another clock may not append.
    let e = TraceWriter::append(&path, clock, &info("h", 2, false))
        .err()
        .unwrap();
    assert!(e.message().contains("another clock"), "{e}");
}

#[test]
fn periodic_rounds_are_recorded_between_start_and_end() {
    use hrts_trace::PeriodicSync;
    let dir = tempfile::tempdir().unwrap();
    let (addr, _server) = master(1_000);
    let skew = Some(Skew {
        offset_ns: -400_000_000,
        drift_ppm: -80.0,
        reference_ns: true_ns(),
    });
    let w = Arc::new(writer(dir.path(), "p", skewed(skew), info("p", 11, true)));
    w.sync(&addr, SyncPhase::Start, SYNC).unwrap();
    let periodic = PeriodicSync::start(w.clone(), &addr, Duration::from_millis(40), SYNC).unwrap();
    for i in 0..20 {
        w.event(EventKind::Instant, "tick", i, b"").unwrap();
        std::thread::sleep(Duration::from_millis(10));
    }
    let rounds = periodic.stop().unwrap();
    assert!(rounds >= 2, "{rounds} periodic rounds in 200 ms at 40 ms");
    w.sync(&addr, SyncPhase::End, SYNC).unwrap();
    w.close().unwrap();
    let f = read_file(w.path(), ReadOptions::default()).unwrap();
    let phases: Vec<SyncPhase> = f.syncs.iter().map(|s| s.phase).collect();
    assert_eq!(phases.first(), Some(&SyncPhase::Start));
    assert_eq!(phases.last(), Some(&SyncPhase::End));
    assert_eq!(
        phases.iter().filter(|p| **p == SyncPhase::Periodic).count() as u64,
        rounds
    );
    let m = merge(vec![f], &MergeOptions::default()).unwrap();
    assert_eq!(m.domains[0].rounds as u64, rounds + 2);
    assert!((m.domains[0].local_minus_master_ns() + 4e8).abs() < 1e6);
    assert!(PeriodicSync::start(w, &addr, Duration::from_millis(1), SYNC).is_err());
}
