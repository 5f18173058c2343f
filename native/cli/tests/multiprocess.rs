//! The shared base across real processes: many attachers at once, causality
//! between processes, and a writer killed with SIGKILL mid-move.

use hrts_core::{Config, SharedBase};
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering::SeqCst};
use std::time::{Duration, Instant};

const HRTS: &str = env!("CARGO_BIN_EXE_hrts");

/// A segment name of this test alone, unlinked when dropped.
struct TestName(String);

impl TestName {
    fn new(tag: &str) -> TestName {
        static N: AtomicU64 = AtomicU64::new(0);
        let name = format!("/hrts-mptest-{}-{tag}-{}", std::process::id(), N.fetch_add(1, SeqCst));
        let _ = SharedBase::unlink(&name);
        TestName(name)
    }
}

impl Drop for TestName {
    fn drop(&mut self) {
        let _ = SharedBase::unlink(&self.0);
    }
}

fn hrts(seg: &TestName) -> Command {
    let mut cmd = Command::new(HRTS);
    cmd.env("HRTS_SEGMENT", &seg.0);
    cmd
}

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
    input: ChildStdin,
    output: BufReader<ChildStdout>,
}

impl Echo {
    fn spawn(seg: &TestName) -> Echo {
        let mut child = hrts(seg)
            .arg("echo")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("spawn hrts echo");
        let input = child.stdin.take().unwrap();
        let output = BufReader::new(child.stdout.take().unwrap());
        Echo {
            child,
            input,
            output,
        }
    }

    fn stamp(&mut self) -> u64 {
        self.input.write_all(b"\n").unwrap();
        self.input.flush().unwrap();
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
    let seg = TestName::new("32");
    let children: Vec<_> = (0..32)
        .map(|_| {
            hrts(&seg)
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
            assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
            parse_info(&String::from_utf8(out.stdout).unwrap())
        })
        .collect();
    let created = infos.iter().filter(|i| i["opened"] == "created").count();
    assert_eq!(created, 1, "exactly one process creates and calibrates");
    for key in ["calibrations", "frequency", "source", "base counter", "base ns", "creator pid"] {
        let first = &infos[0][key];
        assert!(infos.iter().all(|i| &i[key] == first), "{key} differs between processes");
    }
    assert_eq!(infos[0]["calibrations"], "1");
}

#[test]
fn stamps_follow_causality_between_processes() {
    let seg = TestName::new("causal");
    let base = SharedBase::open(&Config::named(&seg.0)).unwrap();
    let mut echoes: Vec<Echo> = (0..8).map(|_| Echo::spawn(&seg)).collect();
    let mut last = base.now_ns_ordered();
    for round in 0..4000 {
        let before = base.now_ns_ordered();
        assert!(before >= last, "round {round}: parent went backwards");
        let theirs = echoes[round % echoes.len()].stamp();
        let after = base.now_ns_ordered();
        assert!(
            before <= theirs && theirs <= after,
            "round {round}: child stamp {theirs} outside [{before}, {after}]"
        );
        last = after;
    }
}

#[test]
fn a_writer_killed_holding_the_base_is_recovered_from() {
    let seg = TestName::new("killed");
    // A small threshold makes every process try to move the base all the time.
    let mut cfg = Config::named(&seg.0);
    cfg.wrap_threshold = Some(10_000);
    let base = SharedBase::open(&cfg).unwrap();
    let done = watchdog(Duration::from_secs(60));

    let mut holder = hrts(&seg)
        .args(["debug", "hold-writer"])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(holder.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert_eq!(line.trim(), "holding");
    let held_by = base.info().base;
    // While the role is held nobody waits: stamps go on, with the exact path.
    let mut last = base.now_ns();
    let start = Instant::now();
    while start.elapsed() < Duration::from_millis(20) {
        let now = base.now_ns();
        assert!(now >= last);
        last = now;
    }
    assert_eq!(base.info().base, held_by, "nobody moved the base while held");

    holder.kill().unwrap();
    holder.wait().unwrap();

    let mut echoes: Vec<Echo> = (0..4).map(|_| Echo::spawn(&seg)).collect();
    let moves_before = base.info().moves;
    for round in 0..2000 {
        let theirs = echoes[round % echoes.len()].stamp();
        assert!(theirs >= last, "round {round}: {theirs} < {last}");
        let mine = base.now_ns();
        assert!(mine >= theirs, "round {round}: {mine} < {theirs}");
        last = mine;
    }
    assert!(base.info().moves > moves_before, "the base moves again after recovery");
    done.send(()).unwrap();
}
