//! `hrts trace` reports the maximum number of events on one clock tick, as
//! Intel Trace Collector counts it: at the end of `trace record` and in
//! `trace info`.

mod common;

use common::Segment;
use std::io::Write;
use std::process::{Command, Stdio};

/// Runs `c` with `stdin`; returns (stdout, stderr), asserting success.
fn run(mut c: Command, stdin: &str) -> (String, String) {
    let mut child = c
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn hrts");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let (o, e) = (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    );
    assert!(out.status.success(), "{o}{e}");
    (o, e)
}

#[test]
fn a_coarse_clock_is_reported_at_the_end_of_the_run_and_in_the_header() {
    let seg = Segment::new();
    let dir = std::env::temp_dir().join(format!("hrts-cli-max-events-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("coarse.htr");
    let file = file.to_str().unwrap();
    // One-hour ticks: the three events share one tick, so ITC reports 2.
    let mut c = seg.command();
    c.args(["trace", "record", "--out", file])
        .env("HRTS_ITC_TICK_NS", "3600000000000");
    let (_, err) = run(c, "instant a\ninstant b\ninstant c\n");
    assert!(
        err.contains("3 events; max events per tick: 2 (some tick held 3 events"),
        "{err}"
    );
    let mut c = seg.command();
    c.args(["trace", "info", file]);
    let (info, _) = run(c, "");
    assert!(info.contains("\nmax events per tick: 2\n"), "{info}");

    // Nanosecond ticks with one event: nothing shared a tick.
    let fine = dir.join("fine.htr");
    let fine = fine.to_str().unwrap();
    let mut c = seg.command();
    c.args(["trace", "record", "--out", fine])
        .env("HRTS_ITC_TICK_NS", "1");
    let (_, err) = run(c, "instant a\n");
    assert!(err.contains("max events per tick: 0 (every event"), "{err}");
    let mut c = seg.command();
    c.args(["trace", "info", fine]);
    assert!(run(c, "").0.contains("\nmax events per tick: 0\n"));
    std::fs::remove_dir_all(&dir).unwrap();
}
