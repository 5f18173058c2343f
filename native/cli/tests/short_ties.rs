//! Issue 35, "Done when" 2: the fastest ties a per-user segment accepts (a tie
//! interval of 1 ms and a wrap threshold of one tick, so that every stamp past
//! it ties) keep every bounded stamp's interval around `CLOCK_REALTIME`.
//!
//! Four `hrts debug bound-check` processes stamp back to back for 30 s, each
//! bracketing every bounded stamp by two reads of `CLOCK_REALTIME`. The clock's
//! own bound is set to 0 (`HRTS_TEST_BOUND`), so the interval is the line's
//! own error as the ties publish it and nothing else: a tie that carried the
//! line further than it said shows as a miss.
//!
//! Before the fix (ties this close together could never slew a line that ran
//! ahead back down, and learned the frequency from microsecond baselines),
//! two-thirds of the intervals missed and the line ran tens of microseconds
//! ahead within seconds (with a threshold of 30,000 ticks, 12 ms in 5 s).
#![cfg(feature = "testing")]

use std::process::{Command, Stdio};

mod common;

#[test]
fn the_fastest_accepted_ties_keep_every_interval_around_the_clock() {
    let seg = common::Segment::new();
    let with_settings = |c: &mut Command| {
        c.env("HRTS_HOST", "off")
            .env("HRTS_TIE_INTERVAL_MS", "1")
            .env("HRTS_WRAP_THRESHOLD", "1")
            .env("HRTS_TEST_BOUND", "synchronized,0");
    };
    let mut info = seg.command();
    with_settings(&mut info);
    let out = info.arg("info").output().unwrap();
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("\nwrap threshold ticks: 1\n"), "{text}");

    let secs = 30;
    let stampers: Vec<_> = (0..4)
        .map(|_| {
            let mut c = seg.command();
            with_settings(&mut c);
            c.args(["debug", "bound-check", &(secs * 1000).to_string()])
                .stdout(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let mut misses = 0;
    for s in stampers {
        let out = s.wait_with_output().unwrap();
        assert!(out.status.success(), "{out:?}");
        let line = String::from_utf8_lossy(&out.stdout).trim().to_string();
        eprintln!("{line}");
        assert!(common::field(&line, "samples") > 10_000, "{line}");
        misses += common::field(&line, "misses");
    }
    let out = seg.command().arg("info").output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let ties = text.lines().find(|l| l.starts_with("ties: ")).unwrap();
    eprintln!("{ties} in {secs} s");
    assert_eq!(misses, 0, "intervals that missed CLOCK_REALTIME");
}
