//! Stamps with error bounds, across real processes: `hrts now --bound` on this
//! machine as it is, and commit wait between two processes.

mod common;

use common::Segment;

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

/// The bound settings are read like every other HRTS_* variable: a malformed
/// or out-of-range value is refused with exit 2 and a message naming it, for
/// the default segment and a named one alike, before any segment is opened.
#[test]
fn malformed_bound_settings_are_refused_naming_the_variable() {
    let seg = Segment::new();
    for var in ["HRTS_BOUND_DRIFT_PPM", "HRTS_BOUND_VOID_S"] {
        for value in ["abc", "", "0", "-5", "1.5", "99999999999"] {
            for named in [false, true] {
                let mut cmd = common::command();
                if named {
                    cmd.args(["--segment", &seg.0]);
                }
                let out = cmd
                    .env(var, value)
                    .args(["now", "--bound"])
                    .output()
                    .unwrap();
                let stderr = String::from_utf8_lossy(&out.stderr);
                let what = format!("{var}={value:?} (--segment: {named})");
                assert_eq!(out.status.code(), Some(2), "{what}: {stderr}");
                assert!(
                    stderr.contains(&format!("{var}={value:?} is not a whole number")),
                    "{what}: {stderr}"
                );
                assert!(out.stdout.is_empty(), "{what}");
            }
        }
    }
    assert!(
        !std::path::Path::new(&seg.shm_path()).exists(),
        "nothing was opened"
    );
    // In range, the same variables are taken (the creator's first word; ties a
    // minute apart, so that no tie publishes another before `info` reads it).
    let out = seg
        .command()
        .env("HRTS_TIE_INTERVAL_MS", "60000")
        .env("HRTS_BOUND_DRIFT_PPM", "20")
        .env("HRTS_BOUND_VOID_S", "30")
        .arg("info")
        .output()
        .unwrap();
    let info = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{info}");
    assert!(info.contains("\nbound drift ppm: 20\n"), "{info}");
}

/// Commit wait drives `hrts debug bound-echo`, which test builds alone have.
#[cfg(feature = "testing")]
mod commit_wait {
    use super::*;
    use std::io::{BufRead, BufReader, Write};
    use std::process::{Child, ChildStdin, ChildStdout, Stdio};

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
}

/// `hrts track` shows the bound and status on every line and in the CSV, and
/// shades it around the offset in the plot.
#[test]
#[cfg(feature = "testing")]
fn track_shows_the_bound_and_its_status_and_plots_it_around_the_offset() {
    let seg = Segment::new();
    let dir = common::TempDir::new("track-bound");
    let (csv, svg) = (dir.at("t.csv"), dir.at("t.svg"));
    let out = seg
        .command()
        .env("HRTS_TIE_INTERVAL_MS", "200")
        .env("HRTS_TEST_BOUND", "synchronized,20000")
        .args(["track", "1.2", "--csv"])
        .arg(&csv)
        .arg("--svg")
        .arg(&svg)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = text.lines().filter(|l| !l.starts_with('#')).collect();
    assert!(lines.len() >= 3, "{text}");
    let mut widest = 0;
    for l in &lines {
        let bound = l
            .split("  bound synchronized ±")
            .nth(1)
            .unwrap_or_else(|| panic!("{l}"));
        let (half, rest) = bound.split_once(" ns").unwrap();
        assert_eq!(rest, " (source test, 20000 ns)", "{l}");
        let half: u64 = half.parse().unwrap();
        assert!(half > 20_000 && half < 1_000_000, "{l}");
        widest = widest.max(half);
    }
    let rows = std::fs::read_to_string(&csv).unwrap();
    let header: Vec<&str> = rows.lines().next().unwrap().split(',').collect();
    let status = header.iter().position(|c| *c == "bound_status").unwrap();
    let half = header
        .iter()
        .position(|c| *c == "bound_half_width_ns")
        .unwrap();
    for row in rows.lines().skip(1) {
        let f: Vec<&str> = row.split(',').collect();
        assert_eq!(f[status], "synchronized", "{row}");
        assert!(f[half].parse::<u64>().unwrap() > 20_000, "{row}");
    }
    let plot = std::fs::read_to_string(&svg).unwrap();
    assert_eq!(
        plot.matches("<path class=\"bound synchronized\"").count(),
        1,
        "{plot}"
    );
    assert!(plot.contains(">bound: offset ± half width (synchronized)</text>"));
    // The band is µs wide, the offsets far smaller: the axis is in µs.
    assert!(
        plot.contains(">offset (µs)</text>"),
        "widest ±{widest} ns: {plot}"
    );
}
