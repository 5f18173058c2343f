use super::layout::{self, cell as cw};
use super::*;
use crate::{Clock, Config, Metric, Stats};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::AtomicU32;
use std::sync::atomic::Ordering::Relaxed;

/// A private statistics segment and a time segment of its own (so that no
/// test depends on the process's default one), removed when dropped.
struct TestSegment(String);

impl TestSegment {
    fn new(tag: &str) -> TestSegment {
        static N: AtomicU32 = AtomicU32::new(0);
        let name = format!(
            "/hrts-stats-test-{}-{tag}-{}",
            std::process::id(),
            N.fetch_add(1, Relaxed)
        );
        TestSegment(name)
    }

    fn time_name(&self) -> String {
        format!("{}-time", self.0)
    }

    /// A statistics instance on this test's segments.
    fn stats(&self) -> Stats {
        let base = hrts_core::SharedBase::open(&hrts_core::Config::named(&self.time_name()))
            .expect("time segment");
        Stats::with_clock(self.config(), Clock::Hrts(Box::leak(Box::new(base))))
    }

    fn config(&self) -> Config {
        Config {
            json_dump_interval: Duration::ZERO,
            metrics_dump_interval: Duration::ZERO,
            shared_memory: crate::SharedMemory {
                name: Some(self.0.clone()),
                grace: Some(Duration::ZERO),
                interval: Duration::from_millis(5),
                ..Default::default()
            },
            ..Config::default()
        }
    }

    fn attach(&self) -> StatsSegment {
        StatsSegment::attach(&self.0)
            .unwrap()
            .expect("segment exists")
    }
}

impl Drop for TestSegment {
    fn drop(&mut self) {
        let _ = StatsSegment::unlink(&self.0);
        let _ = hrts_core::SharedBase::unlink(&self.time_name());
    }
}

fn mine(snap: &Snapshot) -> Vec<&ProcessStats> {
    snap.processes
        .iter()
        .filter(|p| p.pid == std::process::id())
        .collect()
}

#[test]
fn a_dump_is_what_readers_see() {
    let t = TestSegment::new("dump");
    let stats = t.stats();
    stats.start().unwrap();
    let c = stats.counter("requests").unwrap();
    let g = stats.gauge("queue size").unwrap();
    let tm = stats.timer("latency").unwrap();
    for i in 0..1000 {
        c.add(i % 7);
        g.set(i as f64 / 4.0).unwrap();
        tm.record(1000 + i as u64);
    }
    let dump = stats.dump();
    let snap = t.attach().snapshot();
    let me = mine(&snap);
    assert_eq!(me.len(), 1, "{snap:?}");
    assert_eq!(me[0].state, ProcessState::Live);
    assert_eq!(
        me[0].dump, *dump,
        "the segment holds the process's latest dump"
    );
    assert!(!me[0].program.is_empty());
    stats.stop();
}

#[test]
fn changes_are_published_between_dumps_and_a_dropped_instance_frees_its_cells() {
    let t = TestSegment::new("interval");
    let stats = t.stats();
    stats.start().unwrap();
    let c = stats.counter("ticks").unwrap();
    c.add(5);
    let seg = t.attach();
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    let value = loop {
        let snap = seg.snapshot();
        if let Some(Metric::Counter(m)) = mine(&snap)
            .first()
            .and_then(|p| p.dump.metrics.get("ticks"))
        {
            if m.value == 5 {
                break m.value;
            }
        }
        assert!(std::time::Instant::now() < deadline, "never published");
        std::thread::sleep(Duration::from_millis(5));
    };
    assert_eq!(value, 5);
    stats.stop();
    drop(c);
    drop(stats);
    assert!(mine(&seg.snapshot()).is_empty(), "released on drop");
    let used = (0..layout::CELLS)
        .filter(|&i| seg.cell(i, cw::OWNER).load(Relaxed) != 0)
        .count();
    assert_eq!(used, 0);
}

#[test]
fn a_full_area_is_an_error_at_metric_creation() {
    let t = TestSegment::new("full");
    let stats = t.stats();
    stats.start().unwrap();
    // The library's own gauges take cells of their own at the first dump.
    let mut made = Vec::new();
    let err = loop {
        match stats.counter(&format!("c{}", made.len())) {
            Ok(c) => made.push(c),
            Err(e) => break e,
        }
        assert!(made.len() <= layout::CELLS, "never full");
    };
    assert_eq!(err.kind(), hrts_core::ErrorKind::Full, "{err}");
    assert!(
        err.message().contains(&t.0) && err.message().contains("cells"),
        "{err}"
    );
    assert_eq!(made.len(), layout::CELLS);
    // Measuring points of the metrics that have cells still work.
    made[0].add(3);
    stats.dump();
    stats.stop();
}

#[test]
fn a_shared_timer_starts_in_one_instance_and_stops_in_another() {
    let t = TestSegment::new("timer");
    let a = t.stats();
    let b = t.stats();
    a.start().unwrap();
    b.start().unwrap();
    let ta = a.timer("request").unwrap();
    let tb = b.timer("request").unwrap();
    let before = a.now();
    ta.start_shared(42).unwrap();
    let after_start = a.now();
    std::thread::sleep(Duration::from_millis(20));
    let before_stop = b.now();
    let d = tb.stop_shared(42).unwrap().expect("running");
    let after = b.now();
    assert!(d >= before_stop - after_start && d <= after - before, "{d}");
    assert_eq!(tb.stop_shared(42).unwrap(), None, "stopped once only");
    assert_eq!(tb.stop_shared(7).unwrap(), None, "never started");
    let dump = b.dump();
    let Some(Metric::Timer(m)) = dump.metrics.get("request") else {
        panic!("{dump:?}")
    };
    assert_eq!((m.values.count, m.value), (1, d));
    // Other instance ids and discards.
    ta.start_shared(1).unwrap();
    assert!(tb.discard_shared(1).unwrap());
    assert!(!tb.discard_shared(1).unwrap());
    assert_eq!(t.attach().running_shared_timers(), 0);
    a.stop();
    b.stop();
}

#[test]
fn an_unpublished_instance_says_so_for_shared_timers() {
    let (clock, _hand) = Clock::manual(1);
    let stats = Stats::with_clock(
        Config {
            shared_memory: crate::SharedMemory {
                enable: false,
                ..Default::default()
            },
            ..Config::default()
        },
        clock,
    );
    stats.start().unwrap();
    let e = stats.timer("x").unwrap().start_shared(1).unwrap_err();
    assert!(e.message().contains("does not publish"), "{e}");
    stats.stop();
}

#[test]
fn foreign_truncated_and_damaged_segments_are_refused_never_a_crash() {
    let t = TestSegment::new("damage");
    let stats = t.stats();
    stats.start().unwrap();
    stats.counter("a").unwrap().add(1);
    stats.dump();
    let seg = t.attach();
    // Damage every word of the cells and process table in turn with random
    // values: a snapshot may show wrong numbers but never panics or hangs.
    let words = seg.page_words();
    let mut rng = 0x1234_5678_9abc_def0u64;
    let mut next = || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    for _ in 0..2000 {
        let i = layout::PROCESSES_OFFSET / 8 + (next() as usize % 8192);
        words[i].store(next(), Relaxed);
        let c = layout::CELLS_OFFSET / 8 + (next() as usize % (64 * layout::CELL_WORDS));
        words[c].store(next(), Relaxed);
        let _ = seg.snapshot();
    }
    // A damaged header: a fresh attach is refused as corrupt.
    words[layout::header::CELLS].store(3, Relaxed);
    let e = StatsSegment::attach(&t.0).unwrap_err();
    assert_eq!(e.kind(), hrts_core::ErrorKind::Corrupt, "{e}");
    words[layout::header::CELLS].store(layout::CELLS as u64, Relaxed);
    stats.stop();
    drop(stats);
    drop(seg);
    // A foreign object and a truncated name.
    let _ = StatsSegment::unlink(&t.0);
    let path = format!("/dev/shm{}", t.0);
    std::fs::write(&path, [0xa5u8; 4096]).unwrap();
    std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o600)).unwrap();
    let e = StatsSegment::attach(&t.0).unwrap_err();
    assert_eq!(e.kind(), hrts_core::ErrorKind::Foreign, "{e}");
    assert!(e.message().contains("statistics segment"), "{e}");
    let e = t.stats().start().unwrap_err();
    assert_eq!(e.kind(), hrts_core::ErrorKind::Foreign, "writers too: {e}");
    std::fs::write(&path, [0u8; 100]).unwrap();
    let e = StatsSegment::attach(&t.0).unwrap_err();
    assert_eq!(e.kind(), hrts_core::ErrorKind::Truncated, "{e}");
    // The time segment's name is not a statistics segment either.
    std::fs::remove_file(&path).unwrap();
}

// ------------------------------------------------------------- real processes

const CHILD_ENV: &str = "HRTS_STATS_TEST_CHILD";

/// Runs this test binary's `child_writer` as a separate process.
fn spawn_writer(segment: &str, mode: &str) -> Child {
    Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "shared::tests::child_writer",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD_ENV, format!("{segment} {mode}"))
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

/// In a child: publishes a counter, a gauge and a timer whose values keep a
/// checkable relation (value = count for the counter, gauge = counter's value,
/// every timer record 1000 ns) as fast as publication allows, until killed
/// (`spin`) or after printing one dump (`once`); with `-keep` after the mode,
/// gone processes are kept for 10 minutes instead of reclaimed at once.
#[test]
#[ignore = "the child process of the multi-process tests (spawned by them)"]
fn child_writer() {
    let spec = std::env::var(CHILD_ENV).expect("run by spawn_writer only");
    let (segment, mode) = spec.split_once(' ').unwrap();
    let (mode, keep) = match mode.strip_suffix("-keep") {
        Some(m) => (m, true),
        None => (mode, false),
    };
    let t = TestSegment(segment.to_string());
    let stats = t.stats();
    let mut cfg = t.config();
    cfg.shared_memory.interval = Duration::from_millis(1);
    if keep {
        cfg.shared_memory.grace = Some(Duration::from_secs(600));
    }
    stats.configure(cfg).unwrap();
    stats.start().unwrap();
    let c = stats.counter("n").unwrap();
    let g = stats.gauge("g").unwrap();
    let tm = stats.timer("t").unwrap();
    println!("ready");
    let mut i = 0u64;
    loop {
        i += 1;
        c.increment();
        g.set(i as f64).unwrap();
        tm.record(1000);
        if mode == "once" && i == 10_000 {
            println!("{}", stats.json_dump());
            break;
        }
        if i.is_multiple_of(16) {
            // Publishes all six metrics: the processes that kill this one hit
            // a publication often.
            stats.dump();
        }
    }
    std::mem::forget(t); // the parent removes the segment
    std::mem::forget(stats);
}

/// Reads the child's output byte by byte (nothing past the line is consumed)
/// up to its "ready" line; the test harness prints lines of its own first.
fn wait_ready(child: &mut Child) {
    use std::io::Read;
    let out = child.stdout.as_mut().unwrap();
    let mut line = Vec::new();
    let mut byte = [0u8];
    loop {
        assert_eq!(out.read(&mut byte).unwrap(), 1, "child ended before ready");
        if byte[0] != b'\n' {
            line.push(byte[0]);
        } else if line.ends_with(b"ready") {
            return;
        } else {
            line.clear();
        }
    }
}

/// A published metric of the child relation is whole: the counter's value
/// equals its count, the gauge's max equals its count, each timer record was
/// 1000 ns.
fn consistent(p: &ProcessStats) -> std::result::Result<(), String> {
    let m = &p.dump.metrics;
    if let Some(Metric::Counter(c)) = m.get("n") {
        if c.value as u64 != c.incr_deltas.count || c.values.max != Some(c.value as f64) {
            return Err(format!("counter torn: {c:?}"));
        }
    }
    if let Some(Metric::Gauge(g)) = m.get("g") {
        if g.values.max != Some(g.values.count as f64) {
            return Err(format!("gauge torn: {g:?}"));
        }
    }
    if let Some(Metric::Timer(t)) = m.get("t") {
        if t.values.sum != 1000.0 * t.values.count as f64 {
            return Err(format!("timer torn: {t:?}"));
        }
    }
    Ok(())
}

#[test]
fn sigkill_mid_publication_leaves_nothing_torn_and_gone_processes_are_reclaimed() {
    let t = TestSegment::new("kill");
    let seg_name = t.0.clone();
    let mut survivor = spawn_writer(&seg_name, "spin");
    wait_ready(&mut survivor);
    let seg = loop {
        if let Some(s) = StatsSegment::attach(&seg_name).unwrap() {
            break s;
        }
    };
    let mut rng = 0x9e37_79b9_7f4a_7c15u64;
    for round in 0..50 {
        let mut victim = spawn_writer(&seg_name, "spin");
        wait_ready(&mut victim);
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        // Read (and check) while the victim writes, then kill it at a random moment.
        let until = std::time::Instant::now() + Duration::from_micros(2000 + rng % 20_000);
        while std::time::Instant::now() < until {
            for p in &seg.snapshot().processes {
                if let Err(e) = consistent(p) {
                    panic!("round {round}, live read of pid {}: {e}", p.pid);
                }
            }
        }
        victim.kill().unwrap();
        victim.wait().unwrap();
        let snap = seg.snapshot();
        let live: Vec<_> = snap
            .processes
            .iter()
            .filter(|p| p.pid == survivor.id())
            .collect();
        assert_eq!(live.len(), 1, "round {round}: the survivor is listed");
        assert_eq!(live[0].state, ProcessState::Live);
        for p in &snap.processes {
            if let Err(e) = consistent(p) {
                panic!("round {round}, pid {} ({:?}): {e}", p.pid, p.state);
            }
        }
        if let Some(v) = snap.processes.iter().find(|p| p.pid == victim.id()) {
            assert_eq!(v.state, ProcessState::Exited, "round {round}");
        }
    }
    // With a grace of 0, the survivor's next reclaim pass (every 5 s) or this
    // process's registration frees the killed ones.
    let reclaimer = t.stats();
    reclaimer.start().unwrap();
    let snap = seg.snapshot();
    let exited = snap
        .processes
        .iter()
        .filter(|p| p.state == ProcessState::Exited)
        .count();
    assert_eq!(exited, 0, "gone processes reclaimed: {:?}", snap.processes);
    assert!(snap.processes.iter().any(|p| p.pid == survivor.id()));
    survivor.kill().unwrap();
    survivor.wait().unwrap();
    reclaimer.stop();
}

#[test]
fn another_process_reads_what_a_process_dumped() {
    let t = TestSegment::new("child");
    let mut child = spawn_writer(&t.0, "once");
    wait_ready(&mut child);
    let out = child.wait_with_output().unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    let line = text
        .lines()
        .find(|l| l.starts_with('{'))
        .expect("a dump line");
    let json: serde_json::Value = serde_json::from_str(line).unwrap();
    let snap = t.attach().snapshot();
    let p = snap
        .processes
        .iter()
        .find(|p| p.pid == child_pid_of(&snap, &json))
        .expect("the exited child is still listed");
    assert_eq!(p.state, ProcessState::Exited);
    assert_eq!(
        p.dump.to_json_value(),
        json,
        "what it dumped is what we read"
    );
}

/// The pid of the snapshot entry whose counter matches the child's dump.
fn child_pid_of(snap: &Snapshot, json: &serde_json::Value) -> u32 {
    snap.processes
        .iter()
        .find(|p| p.dump.to_json_value()["n"]["value"] == json["n"]["value"])
        .map(|p| p.pid)
        .unwrap_or(0)
}

// ------------------------------------------------------------- damage

/// The metric cells owned by `slot` (any generation), ascending.
fn cells_of(words: &[std::sync::atomic::AtomicU64], slot: usize) -> Vec<usize> {
    (0..layout::CELLS)
        .filter(|&c| {
            let w =
                words[layout::CELLS_OFFSET / 8 + c * layout::CELL_WORDS + cw::OWNER].load(Relaxed);
            layout::owner_of(w).is_some_and(|(s, _, _)| s == slot)
        })
        .collect()
}

/// The slot registered by `pid`.
fn slot_of(words: &[std::sync::atomic::AtomicU64], pid: u32) -> usize {
    (0..layout::PROCESS_SLOTS)
        .find(|&s| {
            let base = layout::PROCESSES_OFFSET / 8 + s * layout::PROCESS_SLOT_WORDS;
            layout::slot_phase(words[base].load(Relaxed)) == layout::PHASE_LIVE
                && words[base + layout::process::PID].load(Relaxed) == pid as u64
        })
        .expect("the writer's slot")
}

/// Word indices (into the page) a check word covers: every word of a slot but
/// `gone_since` and the unused ones, every word of a cell up to its buffers'
/// ends.
fn covered(slot: usize, cells: &[usize]) -> Vec<usize> {
    let base = layout::PROCESSES_OFFSET / 8 + slot * layout::PROCESS_SLOT_WORDS;
    let mut out: Vec<usize> = (0..layout::PROCESS_SLOT_WORDS)
        .filter(|&w| {
            w != layout::process::GONE_SINCE
                && w != 7
                && w < layout::process::INSTANCE_ID + layout::INSTANCE_ID_BYTES / 8
        })
        .map(|w| base + w)
        .collect();
    for &c in cells {
        let base = layout::CELLS_OFFSET / 8 + c * layout::CELL_WORDS;
        out.extend((0..cw::BUFFERS + 2 * layout::BUFFER_WORDS).map(|w| base + w));
    }
    out
}

/// A value no writer of the child relation publishes: what a buggy or
/// hostile process would plant (the examples among them).
fn absurd(rng: &mut u64) -> u64 {
    *rng ^= *rng << 13;
    *rng ^= *rng >> 7;
    *rng ^= *rng << 17;
    match *rng % 8 {
        0 => (-5.9e18f64) as i64 as u64,
        1 => 2_800_000_000,
        2 => 17_514_144_000_000_000_000, // the year 2525 in epoch ns
        3 => u64::from_ne_bytes(*b"\xff\xfegarb\x00\x01"),
        4 => (-5.9e18f64).to_bits(),
        5 => 0,
        6 => u64::MAX,
        _ => *rng,
    }
}

/// Whether everything a snapshot shows is what the writers published: only
/// their pids, this program's name, the child relation, names of the child's
/// metrics and timestamps between `since` and now.
fn plausible(
    snap: &Snapshot,
    pids: &[u32],
    names: &[String],
    since: u64,
) -> std::result::Result<(), String> {
    let now = read_time() + 1_000_000_000;
    for p in &snap.processes {
        if !pids.contains(&p.pid) {
            return Err(format!("pid {} is no writer's", p.pid));
        }
        if p.instance != 1 || p.program.is_empty() || p.program.contains('\u{fffd}') {
            return Err(format!(
                "pid {}: instance {} program {:?}",
                p.pid, p.instance, p.program
            ));
        }
        if p.dump.timestamp != 0 && !(since..now).contains(&p.dump.timestamp) {
            return Err(format!("pid {}: published at {}", p.pid, p.dump.timestamp));
        }
        for (name, m) in &p.dump.metrics {
            if !names.contains(name) {
                return Err(format!("pid {}: metric name {name:?}", p.pid));
            }
            if !(since..now).contains(&m.timestamp()) {
                return Err(format!("pid {}: {name} at {}", p.pid, m.timestamp()));
            }
        }
        consistent(p).map_err(|e| format!("pid {}: {e}", p.pid))?;
    }
    Ok(())
}

/// The damage run: 3,000 random and 3,000 targeted damages of the
/// slots and cells of two live writers and one that exited, with a reader
/// taking a snapshot after each. Nothing shown is absurd; a damaged word of
/// the exited writer (whose cells nobody rewrites) is always reported as
/// damaged or left out, never shown.
#[test]
fn damaged_slots_and_cells_are_reported_as_damaged_never_as_numbers() {
    let t = TestSegment::new("checks");
    let since = read_time();
    let mut done = spawn_writer(&t.0, "once-keep");
    wait_ready(&mut done);
    done.wait_with_output().unwrap();
    let mut live = [
        spawn_writer(&t.0, "spin-keep"),
        spawn_writer(&t.0, "spin-keep"),
    ];
    for w in &mut live {
        wait_ready(w);
    }
    let seg = t.attach();
    let words = seg.page_words();
    let snap = seg.snapshot();
    let done = snap
        .processes
        .iter()
        .find(|p| p.state == ProcessState::Exited)
        .expect("the exited writer is listed");
    let done_pid = done.pid;
    let names: Vec<String> = done.dump.metrics.keys().cloned().collect();
    let pids = [done_pid, live[0].id(), live[1].id()];
    let exited_slot = slot_of(words, done_pid);
    let exited_cells = cells_of(words, exited_slot);
    assert_eq!(exited_cells.len(), names.len());
    let exited_words = covered(exited_slot, &exited_cells);
    let live_words: Vec<usize> = live
        .iter()
        .flat_map(|w| {
            let s = slot_of(words, w.id());
            covered(s, &cells_of(words, s))
        })
        .collect();
    let mut rng = 0x2545_f491_4f6c_dd1du64;
    let (mut reported, mut left_out, mut shown_whole, mut unread) = (0u32, 0u32, 0u32, 0u32);
    let mut damage = |pool: &[usize], targeted: bool| {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        let at = pool[rng as usize % pool.len()];
        let before = words[at].load(Relaxed);
        let value = if targeted {
            absurd(&mut rng)
        } else {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            if rng.is_multiple_of(2) {
                before ^ (1 << ((rng >> 1) % 64))
            } else {
                rng
            }
        };
        words[at].store(value, Relaxed);
        (at, before, value)
    };
    // Each round damages one word of a live writer and one of the exited
    // writer (whose words stay put), then reads: 1,500 rounds of random
    // values and bit flips, 1,500 of values a buggy or hostile process
    // would plant.
    for round in 0..3000 {
        let targeted = round >= 1500;
        let (live_at, live_before, live_value) = damage(&live_words, targeted);
        let (at, before, value) = damage(&exited_words, targeted);
        let snap = seg.snapshot();
        if let Err(e) = plausible(&snap, &pids, &names, since) {
            panic!(
                "round {round}: words {live_at} {live_before:#x} -> {live_value:#x} and {at} \
                 {before:#x} -> {value:#x}: {e}"
            );
        }
        words[live_at].store(live_before, Relaxed);
        if value != before {
            let slot_base = layout::PROCESSES_OFFSET / 8 + exited_slot * layout::PROCESS_SLOT_WORDS;
            let in_slot = (slot_base..slot_base + layout::PROCESS_SLOT_WORDS).contains(&at);
            let cell = at.saturating_sub(layout::CELLS_OFFSET / 8) / layout::CELL_WORDS;
            let cell_base = layout::CELLS_OFFSET / 8 + cell * layout::CELL_WORDS;
            let seq = words[cell_base + cw::SEQ].load(Relaxed);
            let idle =
                cell_base + cw::BUFFERS + (seq.wrapping_add(1) % 2) as usize * layout::BUFFER_WORDS;
            let pair = slot_base
                + layout::process::PUBLISHED
                + 2 * (words[slot_base + layout::process::PUBLISHED_SEQ]
                    .load(Relaxed)
                    .wrapping_add(1)
                    % 2) as usize;
            if (!in_slot && (idle..idle + layout::BUFFER_WORDS).contains(&at))
                || (in_slot && (pair..pair + 2).contains(&at))
            {
                // The buffer (or pair) no reader is directed to: the next
                // publication overwrites it.
                unread += 1;
            } else if (in_slot && snap.damaged_slots.contains(&exited_slot))
                || (!in_slot && snap.damaged_cells.contains(&cell))
            {
                reported += 1;
            } else {
                let shown = snap.processes.iter().find(|p| p.pid == done_pid);
                // Left out (a free or unpublished cell, a slot no longer
                // live) is no number either; the same dump as before is not
                // damage that shows.
                match shown {
                    Some(p) if !in_slot && p.dump.metrics.len() == names.len() => shown_whole += 1,
                    _ => left_out += 1,
                }
            }
        }
        words[at].store(before, Relaxed);
    }
    // Readers of every kind use this snapshot; the live writers kept writing.
    eprintln!(
        "damage of the exited writer: {reported} reported as damaged, {left_out} left out, \
         {unread} in buffers no reader reads, {shown_whole} shown as if whole"
    );
    assert!(reported > 1500, "{reported} of ~3000 reported");
    assert!(
        shown_whole == 0,
        "a damaged word of a cell that nobody rewrites changed nothing it shows {shown_whole} times"
    );
    // The live writers' next publications overwrite what a restored (by
    // then stale) word left.
    std::thread::sleep(Duration::from_millis(100));
    let after = seg.snapshot();
    assert!(!after.has_damage(), "everything restored: {after:?}");
    for mut w in live {
        w.kill().unwrap();
        w.wait().unwrap();
    }
}
