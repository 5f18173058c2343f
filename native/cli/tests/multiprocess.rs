//! The shared base across real processes: many attachers at once, causality
//! between processes, and a writer killed with SIGKILL mid-move.

use hrts_core::{Config, SharedBase};
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Stdio};
use std::time::Duration;

mod common;
use common::Segment;

/// `key: value` lines of `hrts info` output.
fn parse_info(out: &str) -> std::collections::BTreeMap<String, String> {
    out.lines()
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
        .collect()
}

/// An `hrts echo` process: each line written to it is answered with a stamp.
struct Echo {
    child: Child,
    input: Option<ChildStdin>,
    output: BufReader<ChildStdout>,
}

impl Echo {
    fn spawn(seg: &Segment) -> Echo {
        let mut child = seg
            .command()
            .arg("echo")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("spawn hrts echo");
        let input = child.stdin.take();
        let output = BufReader::new(child.stdout.take().unwrap());
        Echo {
            child,
            input,
            output,
        }
    }

    /// Closes stdin and waits: `hrts echo` (and a faketime wrapper around it)
    /// ends normally.
    fn close(&mut self) {
        drop(self.input.take());
        let _ = self.child.wait();
    }

    fn stamp(&mut self) -> u64 {
        let input = self.input.as_mut().unwrap();
        input.write_all(b"\n").unwrap();
        input.flush().unwrap();
        let mut line = String::new();
        self.output.read_line(&mut line).unwrap();
        line.trim()
            .parse()
            .unwrap_or_else(|_| panic!("not a stamp: {line:?}"))
    }
}

impl Drop for Echo {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Fails the test (instead of hanging CI) if it runs past `limit`.
#[cfg(feature = "testing")]
fn watchdog(limit: Duration) -> std::sync::mpsc::Sender<()> {
    let (tx, rx) = std::sync::mpsc::channel::<()>();
    std::thread::spawn(move || {
        if rx.recv_timeout(limit).is_err() {
            eprintln!("watchdog: test exceeded {limit:?}; some process hangs");
            std::process::exit(101);
        }
    });
    tx
}

#[test]
fn thirty_two_processes_at_once_share_one_calibration_and_base() {
    let seg = Segment::new();
    let children: Vec<_> = (0..32)
        .map(|_| {
            seg.command()
                .arg("info")
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let infos: Vec<_> = children
        .into_iter()
        .map(|c| {
            let out = c.wait_with_output().unwrap();
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
            parse_info(&String::from_utf8(out.stdout).unwrap())
        })
        .collect();
    let created = infos.iter().filter(|i| i["opened"] == "created").count();
    assert_eq!(created, 1, "exactly one process creates and calibrates");
    for key in [
        "calibrations",
        "frequency",
        "source",
        "base counter",
        "base ns",
        "creator pid",
    ] {
        let first = &infos[0][key];
        assert!(
            infos.iter().all(|i| &i[key] == first),
            "{key} differs between processes"
        );
    }
    assert_eq!(infos[0]["calibrations"], "1");
}

#[test]
fn stamps_follow_causality_between_processes() {
    let seg = Segment::new();
    let base = SharedBase::open(&Config::named(&seg.0)).unwrap();
    let mut echoes: Vec<Echo> = (0..8).map(|_| Echo::spawn(&seg)).collect();
    let mut last = base.now_ns_ordered();
    for round in 0..4000 {
        last = causal_round(&base, &mut echoes, round, last);
    }
}

/// One round of the causality check: a parent stamp, a child's stamp taken after
/// its message arrived, a parent stamp after the reply; the child's must lie between
/// the two, and the parent's never go back. Returns the last parent stamp.
fn causal_round(base: &SharedBase, echoes: &mut [Echo], round: usize, last: u64) -> u64 {
    let before = base.now_ns_ordered();
    assert!(before >= last, "round {round}: parent went backwards");
    let n = echoes.len();
    let theirs = echoes[round % n].stamp();
    let after = base.now_ns_ordered();
    assert!(
        before <= theirs && theirs <= after,
        "round {round}: child stamp {theirs} outside [{before}, {after}]"
    );
    after
}

#[cfg(feature = "testing")]
#[test]
fn a_writer_killed_holding_the_base_is_recovered_from() {
    let seg = Segment::new();
    // A small threshold makes every process try to move the base all the time.
    let mut cfg = Config::named(&seg.0);
    cfg.wrap_threshold = Some(10_000);
    let base = SharedBase::open(&cfg).unwrap();
    let done = watchdog(Duration::from_secs(60));

    let mut holder = common::spawn_writer_holder(&seg);
    let held_by = base.info().base;
    // While the role is held nobody waits: stamps go on, with the exact path.
    let mut last = base.now_ns();
    let start = std::time::Instant::now();
    while start.elapsed() < Duration::from_millis(20) {
        let now = base.now_ns();
        assert!(now >= last);
        last = now;
    }
    assert_eq!(
        base.info().base,
        held_by,
        "nobody moved the base while held"
    );

    holder.kill().unwrap();
    holder.wait().unwrap();

    let mut echoes: Vec<Echo> = (0..4).map(|_| Echo::spawn(&seg)).collect();
    let moves_before = base.info().moves;
    for round in 0..2000 {
        let n = echoes.len();
        let theirs = echoes[round % n].stamp();
        assert!(theirs >= last, "round {round}: {theirs} < {last}");
        let mine = base.now_ns();
        assert!(mine >= theirs, "round {round}: {mine} < {theirs}");
        last = mine;
    }
    assert!(
        base.info().moves > moves_before,
        "the base moves again after recovery"
    );
    done.send(()).unwrap();
}

#[cfg(feature = "testing")]
#[test]
fn unique_stamps_from_8_processes_of_2_threads_never_repeat() {
    let seg = Segment::new();
    let dir = std::env::temp_dir().join(format!("hrts-unique-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let per_thread = 1_000_000u64;
    let children: Vec<_> = (0..8)
        .map(|_| {
            seg.command()
                .args(["debug", "unique-dump", &per_thread.to_string(), "2"])
                .arg(&dir)
                .spawn()
                .unwrap()
        })
        .collect();
    for mut c in children {
        assert!(c.wait().unwrap().success());
    }
    let mut all = Vec::with_capacity(16 * per_thread as usize);
    let mut files = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let bytes = std::fs::read(entry.unwrap().path()).unwrap();
        let stamps: Vec<u64> = bytes
            .chunks_exact(8)
            .map(|c| u64::from_le_bytes(c.try_into().unwrap()))
            .collect();
        assert_eq!(stamps.len() as u64, per_thread);
        assert!(
            stamps.windows(2).all(|w| w[0] < w[1]),
            "a thread's unique stamps must strictly increase"
        );
        all.extend(stamps);
        files += 1;
    }
    assert_eq!(files, 16, "8 processes x 2 threads");
    let n = all.len();
    all.sort_unstable();
    all.dedup();
    assert_eq!(all.len(), n, "{} duplicate unique stamps", n - all.len());
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Unique stamps read the counter unordered and take their order from the CAS
/// on the segment alone: processes that run together never get the same stamp,
/// each one's stamps increase, and what a process takes after another has
/// finished (here: after `wait`) is greater than everything that one got.
#[test]
fn unique_stamps_of_processes_running_together_are_in_order_with_their_start_and_end() {
    let seg = Segment::new();
    let base = SharedBase::open(&Config::named(&seg.0)).unwrap();
    let per_child = 200_000u64;
    let mut all = Vec::new();
    let mut last = base.next_unique().unwrap();
    for round in 0..3 {
        let first = last;
        let children: Vec<_> = (0..4)
            .map(|_| {
                seg.command()
                    .args(["unique", &per_child.to_string()])
                    .stdout(Stdio::piped())
                    .spawn()
                    .unwrap()
            })
            .collect();
        // The parent takes stamps while the children run.
        let mine: Vec<u64> = (0..per_child)
            .map(|_| base.next_unique().unwrap())
            .collect();
        assert!(mine.windows(2).all(|w| w[0] < w[1]) && mine[0] > first);
        all.extend(mine);
        for c in children {
            let out = c.wait_with_output().unwrap();
            assert!(out.status.success());
            let theirs: Vec<u64> = String::from_utf8(out.stdout)
                .unwrap()
                .lines()
                .map(|l| l.parse().unwrap())
                .collect();
            assert_eq!(theirs.len() as u64, per_child);
            assert!(
                theirs[0] > first && theirs.windows(2).all(|w| w[0] < w[1]),
                "round {round}: a child's stamps start above {first} and increase"
            );
            all.extend(theirs);
        }
        last = base.next_unique().unwrap();
        let most = *all.iter().max().unwrap();
        assert!(
            last > most,
            "round {round}: {last} taken after every child ended, not above {most}"
        );
    }
    let n = all.len();
    all.sort_unstable();
    all.dedup();
    assert_eq!(all.len(), n, "{} duplicate unique stamps", n - all.len());
}

#[test]
fn sequence_numbers_survive_sigkill_and_reboots_without_repeating() {
    let seg = Segment::new();
    let dir = std::env::temp_dir().join(format!("hrts-seq-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let seq_file = dir.join("numbers.seq");
    let mut seen = std::collections::HashSet::new();
    let mut rng = 0x2545_F491_4F6C_DD1Du64;
    let mut next_random = move |bound: u64| {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng % bound
    };
    for round in 0..50 {
        let mut children: Vec<Child> = (0..3)
            .map(|_| {
                seg.command()
                    .env("HRTS_SEQ_FILE", &seq_file)
                    .env("HRTS_SEQ_INTERVAL", "50")
                    .args(["seq", "100000000"])
                    .stdout(Stdio::piped())
                    .spawn()
                    .unwrap()
            })
            .collect();
        // Wait until numbers flow (the first process calibrates a new segment),
        // then kill at a random moment.
        let mut outputs: Vec<BufReader<ChildStdout>> = children
            .iter_mut()
            .map(|c| BufReader::new(c.stdout.take().unwrap()))
            .collect();
        let mut first = String::new();
        outputs[0].read_line(&mut first).unwrap();
        std::thread::sleep(Duration::from_millis(next_random(30)));
        for c in &mut children {
            c.kill().unwrap(); // SIGKILL
        }
        let mut issued = 0;
        for (mut c, mut out) in children.into_iter().zip(outputs) {
            c.wait().unwrap();
            let mut text = String::new();
            std::io::Read::read_to_string(&mut out, &mut text).unwrap();
            if issued == 0 {
                text.insert_str(0, &first);
            }
            // A line cut by the kill has no newline; every complete line was issued.
            let complete = &text[..text.rfind('\n').map_or(0, |i| i + 1)];
            for line in complete.lines() {
                let n: u64 = line.parse().unwrap_or_else(|_| panic!("bad line {line:?}"));
                assert!(seen.insert(n), "round {round}: {n} issued twice");
                issued += 1;
            }
        }
        assert!(issued > 0, "round {round}: no process got a number");
        SharedBase::unlink(&seg.0).unwrap(); // the simulated reboot
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_frozen_segment_re_pairs_when_its_last_process_has_gone() {
    let seg = Segment::new();
    let info = |seg: &Segment| {
        let out = seg
            .command()
            .env("HRTS_MODE", "frozen")
            .arg("info")
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        parse_info(&String::from_utf8(out.stdout).unwrap())
    };
    // A process holds the segment (it created it, in frozen mode).
    let mut holder = {
        let mut c = seg.command();
        c.env("HRTS_MODE", "frozen");
        let mut child = c
            .arg("echo")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut input = child.stdin.take().unwrap();
        let mut output = BufReader::new(child.stdout.take().unwrap());
        input.write_all(b"\n").unwrap();
        let mut line = String::new();
        output.read_line(&mut line).unwrap();
        (child, input, output)
    };
    let first = info(&seg);
    assert_eq!(first["mode"], "frozen");
    assert_eq!(first["opened"], "attached");
    assert_eq!(
        first["generation"], "1",
        "a process is attached: no re-pair"
    );
    // SIGKILL: no chance to say goodbye; the kernel drops its lock.
    holder.0.kill().unwrap();
    holder.0.wait().unwrap();
    let second = info(&seg);
    assert_eq!(
        second["generation"], "2",
        "the first process after the last re-pairs"
    );
    assert_eq!(second["calibrations"], "1", "and keeps the calibration");
    assert_eq!(second["frequency"], first["frequency"]);
    assert_ne!(second["base counter"], first["base counter"]);
    // That `info` process has exited too: the next one re-pairs again.
    assert_eq!(info(&seg)["generation"], "3");
}

/// libfaketime, which fakes CLOCK_REALTIME for a process (not the TSC hrts reads).
fn faketime() -> Option<std::path::PathBuf> {
    let ok = std::process::Command::new("faketime")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        eprintln!("skipped: the `faketime` command (Debian package faketime) is not installed");
        return None;
    }
    Some("faketime".into())
}

/// `hrts ARGS` under faketime: CLOCK_REALTIME runs 100 ppm fast (from the
/// wrapper's start), CLOCK_MONOTONIC and CLOCK_MONOTONIC_RAW stay real (the
/// calibration reference must be the machine's). Ties read libc's
/// clock_gettime (`HRTS_CALENDAR_CLOCK=libc`), so the faked clock reaches the
/// line: by default they read the kernel's, which libfaketime cannot shift.
fn faked(seg: &Segment, script: &str) -> std::process::Command {
    let mut c = std::process::Command::new("faketime");
    c.args(["-f", "+0 x1.0001", "sh", "-c", script])
        .env("FAKETIME_DONT_FAKE_MONOTONIC", "1")
        .env("HRTS_CALENDAR_CLOCK", "libc")
        .env("HRTS", env!("CARGO_BIN_EXE_hrts"))
        .env("HRTS_SEGMENT", &seg.0)
        .env_remove("HRTS_MODE")
        .env_remove("HRTS_TIE_INTERVAL_MS");
    c
}

#[test]
fn eight_processes_under_a_100_ppm_fast_clock_share_one_tracked_line() {
    if faketime().is_none() {
        return;
    }
    let seg = Segment::new();
    let secs = 12;
    // One faketime wrapper, so the eight share one faked clock.
    let script =
        format!("for i in 1 2 3 4 5 6 7 8; do \"$HRTS\" track {secs} > \"$OUT.$i\" & done; wait");
    let dir = std::env::temp_dir().join(format!("hrts-faketime-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let status = faked(&seg, &script)
        .env("OUT", dir.join("track"))
        .status()
        .unwrap();
    assert!(status.success());
    let mut offsets = Vec::new();
    for i in 1..=8 {
        let text = std::fs::read_to_string(dir.join(format!("track.{i}"))).unwrap();
        for (elapsed, offset) in text.lines().filter_map(common::track_sample) {
            // Converged after the first ties (the rate is learned in one).
            if elapsed > 4.0 {
                offsets.push(offset.unsigned_abs());
            }
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
    offsets.sort_unstable();
    assert!(offsets.len() >= 8 * (secs - 6), "{} lines", offsets.len());
    let (p99, max) = (offsets[offsets.len() * 99 / 100], *offsets.last().unwrap());
    eprintln!(
        "8 processes under faketime x1.0001: {} offsets, p99 {p99} ns, max {max} ns",
        offsets.len()
    );
    assert!(p99 <= 1_000 && max <= 5_000, "p99 {p99} ns, max {max} ns");
    // Ties are the segment's, not each process's: about one per second.
    let out = seg.command().arg("info").output().unwrap();
    let info = parse_info(&String::from_utf8(out.stdout).unwrap());
    let ties: u64 = info["ties"].parse().unwrap();
    assert!(
        (secs as u64 - 1..=secs as u64 + 2).contains(&ties),
        "{ties} ties"
    );
    assert!(
        (info["frequency ppm"].parse::<f64>().unwrap() - 100.0).abs() < 1.0,
        "{info:?}"
    );
}

#[test]
fn stamps_follow_causality_between_processes_whose_clocks_are_faked() {
    if faketime().is_none() {
        return;
    }
    let seg = Segment::new();
    let base = SharedBase::open(&Config::named(&seg.0)).unwrap();
    // Each echo has its own faketime wrapper: their CLOCK_REALTIMEs differ
    // (100 ppm fast from different starts) and ties by any of them must still
    // never take the shared timeline backwards.
    let mut echoes: Vec<Echo> = (0..8)
        .map(|_| {
            let mut child = faked(&seg, "exec \"$HRTS\" echo")
                .env("HRTS_TIE_INTERVAL_MS", "50")
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .spawn()
                .unwrap();
            let input = child.stdin.take();
            let output = BufReader::new(child.stdout.take().unwrap());
            Echo {
                child,
                input,
                output,
            }
        })
        .collect();
    let mut last = base.now_ns_ordered();
    let start = std::time::Instant::now();
    let mut round = 0;
    while start.elapsed() < Duration::from_secs(4) {
        last = causal_round(&base, &mut echoes, round, last);
        round += 1;
    }
    assert!(base.info().tracking.ties >= 3, "the faked processes tied");
    // End them with EOF, not SIGKILL: faketime then removes its shared memory.
    for e in echoes.iter_mut() {
        e.close();
    }
}
