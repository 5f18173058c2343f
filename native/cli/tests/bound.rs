//! Stamps with error bounds, across real processes: `hrts now --bound` on this
//! machine as it is, and commit wait between two processes.

mod common;

use common::Segment;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Stdio};

/// `hrts now --bound` says what the kernel says: an interval around the clock
/// when it is synchronized, else exit 5 and why (this machine's kernel may
/// report STA_UNSYNC: no time service runs here).
#[test]
fn now_bound_answers_as_the_kernel_says() {
    let seg = Segment::new();
    // A tie publishes the kernel's word.
    let out = seg.command().args(["now", "--bound"]).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let clock = hrts_core::clock::realtime_ns();
    match out.status.code() {
        Some(0) => {
            let f: Vec<&str> = stdout.split_whitespace().collect();
            assert_eq!(f.len(), 3, "{stdout}");
            let (e, l): (u64, u64) = (f[0].parse().unwrap(), f[1].parse().unwrap());
            assert!(e <= clock + 1_000_000_000 && e <= l, "{stdout}");
            assert!(["synchronized", "free-running"].contains(&f[2]), "{stdout}");
        }
        Some(5) => {
            assert!(stdout.is_empty(), "{stdout}");
            assert!(
                stderr.contains("not synchronized") || stderr.contains("no bound"),
                "{stderr}"
            );
        }
        other => panic!("exit {other:?}: {stdout} {stderr}"),
    }
    let info = seg.command().arg("info").output().unwrap();
    let info = String::from_utf8_lossy(&info.stdout);
    assert!(info.contains("\nbound status: "), "{info}");
}

struct Echo {
    child: Child,
    stdin: ChildStdin,
    out: BufReader<ChildStdout>,
}

impl Echo {
    fn spawn(seg: &Segment) -> Echo {
        let mut child = seg
            .command()
            .args(["debug", "bound-echo"])
            .env("HRTS_TEST_BOUND", "synchronized,20000")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let out = BufReader::new(child.stdout.take().unwrap());
        Echo { child, stdin, out }
    }

    fn ask(&mut self, line: &str) -> String {
        writeln!(self.stdin, "{line}").unwrap();
        self.stdin.flush().unwrap();
        let mut answer = String::new();
        self.out.read_line(&mut answer).unwrap();
        assert!(!answer.is_empty(), "the bound-echo process ended");
        answer.trim().to_string()
    }

    fn interval(&mut self) -> (u64, u64) {
        let a = self.ask("now");
        let mut f = a.split(' ').map(|v| v.parse::<u64>().unwrap());
        (f.next().unwrap(), f.next().unwrap())
    }
}

impl Drop for Echo {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// TrueTime's commit wait, between two processes: one takes its write's
/// stamp t (the latest of its interval) and waits until `after(t)`; the
/// other's interval, taken after that, starts after t. 10,000 rounds, with a
/// fixed 20 µs bound from the test build's HRTS_TEST_BOUND.
#[test]
fn after_a_commit_wait_every_later_interval_starts_after_the_commit() {
    let seg = Segment::new();
    let (mut writer, mut reader) = (Echo::spawn(&seg), Echo::spawn(&seg));
    let mut widest = 0;
    for round in 0..10_000 {
        let (e, t) = writer.interval();
        widest = widest.max(t - e);
        assert_eq!(writer.ask(&format!("wait {t}")), "waited");
        let (earliest, latest) = reader.interval();
        assert!(
            earliest > t,
            "round {round}: the reader's interval [{earliest}, {latest}] starts before the \
             commit {t}"
        );
    }
    eprintln!("10,000 commit waits: 0 violations, widest interval {widest} ns");
    assert!(
        widest >= 40_000,
        "the test bound is 20 µs each side: {widest}"
    );
}
