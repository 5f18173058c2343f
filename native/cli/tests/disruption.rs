//! Issue 36, "Done when" 1 (its Rust reader): the counter disrupted under a
//! running `hrts daemon`, as a live migration or a resume might, seen by the
//! daemon's local detection (the counter against `CLOCK_MONOTONIC_RAW` and
//! `CLOCK_BOOTTIME` across each round) and published as the status
//! `disrupted` until the counter's rate is learned again.
//!
//! For each of four events (the counter jumps forward 5 ms, jumps back 5 ms,
//! stops for 2 s, runs 300 ppm fast from then on), made by the test build's
//! counter hook (`HRTS_TEST_COUNTER`, in the daemon and the reader alike,
//! as a hypervisor's would be in every process): a daemon keeps a host page in
//! a directory of the test's (a round every 100 ms, the clock's own bound
//! fixed at 50 µs by `HRTS_TEST_BOUND`); once it is synchronized, one
//! `hrts debug bound-check` stamps back to back for 8 s, the event 2 s in
//! (10 s after the daemon's start).
//! Each run must show the reader getting no interval (`disrupted`) and no
//! interval that misses `CLOCK_REALTIME` in the whole run: not after the
//! daemon's next round has seen the event, and not before it either, when
//! only the reader's own check (its stamp between two reads of the clock)
//! stands between it and a line nobody has checked yet; `hrts info` must
//! count the disruption and name it, the daemon's health series (`hrts stats
//! --prometheus`) count it by kind, and the page be synchronized again at
//! the end.
#![cfg(feature = "testing")]

use std::fs::{self, File};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

mod common;

/// `hrts` on the host page in `dir`, trusting this user, with the event.
fn on_host(dir: &Path, event: &str) -> Command {
    let mut c = common::command();
    c.env("HRTS_HOST", "on")
        .env("HRTS_HOST_DIR", dir)
        .env("HRTS_HOST_USER", hrts_core::process::euid().to_string())
        .env("HRTS_TEST_COUNTER", event)
        .env_remove("HRTS_BOUND_DRIFT_PPM")
        .env_remove("HRTS_BOUND_VOID_S")
        .env_remove("HRTS_TEST_BOUND");
    c
}

struct Daemon(Child);

impl Drop for Daemon {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn info(dir: &Path, event: &str) -> String {
    let out = on_host(dir, event).arg("info").output().unwrap();
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// One event; `expect`: what `hrts info` may name it, `|`-separated.
fn run(name: &str, event: &str, expect: &str) {
    // Every host reader opens this user's per-user segment too, and `hrts
    // info` falls back to it until the daemon's page is ready.
    let _own = common::OwnSegment::new();
    let dir = common::TempDir::new(name);
    let page = dir.at("page");
    fs::create_dir_all(&page).unwrap();
    let log = dir.at("daemon.log");
    // The event 10 s after the start: the daemon's page (calibration and
    // evaluation) must be made and synchronized before it.
    let at = hrts_core::clock::realtime_ns() + 10_000_000_000;
    let event = format!("{event}@{at}");
    let _daemon = Daemon(
        on_host(&page, &event)
            .args(["daemon", "--foreground", "--dir"])
            .arg(&page)
            .env("HRTS_TIE_INTERVAL_MS", "100")
            .env("HRTS_TEST_BOUND", "synchronized,50000")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(File::create(&log).unwrap())
            .spawn()
            .unwrap(),
    );
    let started = Instant::now();
    loop {
        let text = info(&page, &event);
        if text.contains("\nbound status: synchronized\n") {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "no synchronized bound: {text}\n{}",
            fs::read_to_string(&log).unwrap_or_default()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    // Stamp from 2 s before the event to 6 s after it.
    let now = hrts_core::clock::realtime_ns();
    assert!(
        now < at - 2_000_000_000,
        "the daemon took {:.1} s to be synchronized, past the event's time",
        started.elapsed().as_secs_f64()
    );
    std::thread::sleep(Duration::from_nanos(
        (at - 2_000_000_000).saturating_sub(now),
    ));
    let out = on_host(&page, &event)
        .args(["debug", "bound-check", "8000"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let line = String::from_utf8_lossy(&out.stdout).trim().to_string();
    eprintln!("{event}: {line}");
    eprint!("{}", String::from_utf8_lossy(&out.stderr));
    let text = info(&page, &event);
    eprintln!(
        "{event}: {}",
        text.lines()
            .filter(|l| l.contains("disruption") || l.starts_with("bound status"))
            .collect::<Vec<_>>()
            .join("; ")
    );
    let first = common::field(&line, "first-unbounded");
    assert!(first > 0, "the reader never got `disrupted`: {line}");
    eprintln!(
        "{event}: first stamp without an interval {:.1} ms after the event, the last {:.1} ms \
         after it",
        (first as f64 - at as f64) / 1e6,
        (common::field(&line, "last-unbounded") as f64 - at as f64) / 1e6
    );
    assert!(
        first >= at - 1_000_000,
        "disrupted before the event: {line}"
    );
    assert_eq!(
        common::field(&line, "misses-after-unbounded"),
        0,
        "a miss after the disruption was seen"
    );
    assert!(common::field(&line, "samples") > 10_000, "{line}");
    assert_eq!(
        common::field(&line, "misses"),
        0,
        "an interval missed the clock before the daemon's round saw the disruption"
    );
    assert!(text.contains("\ndisruptions: 1\n"), "{text}");
    assert!(expect.split('|').any(|e| text.contains(e)), "{text}");
    assert!(text.contains("\nbound status: synchronized\n"), "{text}");
    // The daemon's health series (docs/statistics.md) count it too, by kind.
    let sample = |prom: &str, family: &str| {
        prom.lines()
            .find(|l| l.starts_with(&format!("{family}{{program=\"hrts-daemon\"")))
            .and_then(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
    };
    let kinds: Vec<String> = expect
        .split('|')
        .map(|e| {
            format!(
                "hrts_daemon_disruptions_ticks_{}_total",
                &e["counter ".len()..]
            )
        })
        .collect();
    let started = Instant::now();
    loop {
        let out = on_host(&page, &event)
            .args(["stats", "--prometheus"])
            .output()
            .unwrap();
        let prom = String::from_utf8_lossy(&out.stdout);
        let counted = sample(&prom, "hrts_daemon_disruptions_total") == Some(1.0)
            && kinds.iter().any(|k| sample(&prom, k) == Some(1.0))
            && sample(&prom, "hrts_daemon_status_synchronized") == Some(1.0);
        if counted {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "the health series do not count the disruption as one of {kinds:?}:\n{prom}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

// One test per event, each with its own daemon and page, so that the test
// runner overlaps their waits (each is about 20 s, most of it waiting for the
// daemon's page and the event's time).

#[test]
fn a_counter_that_jumps_forward_gives_no_interval_until_its_rate_is_learned_again() {
    run("djump", "jump:+5ms", "counter ahead");
}

#[test]
fn a_counter_that_jumps_back_gives_no_interval_until_its_rate_is_learned_again() {
    run("dback", "back:5ms", "counter behind");
}

#[test]
fn a_counter_that_stops_gives_no_interval_until_its_rate_is_learned_again() {
    // What the first round saw: a stop that began inside a round reads as a
    // counter that fell behind.
    run("dstop", "stop:2s", "counter stopped|counter behind");
}

#[test]
fn a_counter_that_runs_fast_gives_no_interval_until_its_rate_is_learned_again() {
    run("drate", "rate:+300ppm", "counter ahead");
}
