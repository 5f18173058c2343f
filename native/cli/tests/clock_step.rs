//! Issue 36, "Done when" 3: a step of the system clock under a running
//! `hrts daemon`, made by libfaketime in the daemon alone (its
//! `CLOCK_REALTIME`, read through libc: `HRTS_CALENDAR_CLOCK=libc`; the
//! host's clock is never touched), is published as a disruption (`system
//! clock stepped`), not slewed through while synchronized.
//!
//! The daemon's offset is a file (`FAKETIME_TIMESTAMP_FILE`, re-read at
//! every read: `FAKETIME_NO_CACHE=1`; the monotonic clocks left real:
//! `FAKETIME_DONT_FAKE_MONOTONIC=1`): `+0`, then `+0.2` (a step of +200 ms),
//! then `+0` again (−200 ms). A reader under the same offset (its reference
//! clock is the daemon's) stamps 2.5 s around each step: it must get no
//! interval from the daemon's next round on, and none that misses its
//! clock from then; the daemon's `hrts info` counts each step.
//! Skipped, saying so, where libfaketime is not installed.
#![cfg(feature = "testing")]

use std::path::Path;
use std::process::Command;
use std::time::Duration;

mod common;
use common::daemon::Daemon;

const LIBFAKETIME: &[&str] = &[
    "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1",
    "/usr/lib/aarch64-linux-gnu/faketime/libfaketime.so.1",
    "/usr/lib/faketime/libfaketime.so.1",
];

/// Runs `c` under the offset in `offset_file`, its calendar read through
/// libc (so through libfaketime): the line it checks its intervals against
/// is then the faked clock, the daemon's.
fn faked(c: &mut Command, lib: &str, offset_file: &Path) {
    c.env("LD_PRELOAD", lib)
        .env("HRTS_CALENDAR_CLOCK", "libc")
        .env("FAKETIME_TIMESTAMP_FILE", offset_file)
        .env("FAKETIME_NO_CACHE", "1")
        .env("FAKETIME_DONT_FAKE_MONOTONIC", "1")
        .env_remove("FAKETIME");
}

/// Stamps 2.5 s under the offset, writing `offset` into the file 1 s in;
/// returns the reader's line and the (real) time of the write.
fn step(d: &Daemon, lib: &str, file: &Path, offset: &str) -> (String, u64) {
    let mut reader = d.bound_check(2_500);
    faked(&mut reader, lib, file);
    let reader = std::thread::spawn(move || reader.output().unwrap());
    std::thread::sleep(Duration::from_secs(1));
    let at = hrts_core::clock::kernel_realtime_ns();
    std::fs::write(file, format!("{offset}\n")).unwrap();
    let out = reader.join().unwrap();
    assert!(out.status.success(), "{out:?}");
    (String::from_utf8_lossy(&out.stdout).trim().to_string(), at)
}

#[test]
fn a_stepped_clock_is_a_disruption_not_a_slew() {
    let Some(lib) = LIBFAKETIME.iter().find(|p| Path::new(p).exists()) else {
        eprintln!("libfaketime is not installed (Debian: faketime): test skipped");
        return;
    };
    let dir = common::TempDir::new("clockstep");
    let file = dir.at("offset");
    std::fs::write(&file, "+0\n").unwrap();
    let d = Daemon::start(
        &dir.0,
        &[
            ("HRTS_TEST_BOUND", "synchronized,50000"),
            ("HRTS_VMCLOCK", "off"),
            // A calendar read through libfaketime (a file read at every
            // call) takes microseconds: the rate is learned again only
            // where the reads' error over a 100 ms round is under a quarter
            // of the drift bound, so the bound allows 500 ppm (still far
            // below a 200 ms step: 50 µs a round).
            ("HRTS_BOUND_DRIFT_PPM", "500"),
        ],
        |c| faked(c, lib, &file),
    );
    for (n, (offset, size)) in [("+0.2", "+200 ms"), ("+0", "-200 ms")]
        .into_iter()
        .enumerate()
    {
        let (line, at) = step(&d, lib, &file, offset);
        let (info, _) = d.wait_for(
            &format!("\ndisruptions: {}\n", n + 1),
            Duration::from_secs(5),
        );
        assert!(info.contains("system clock stepped"), "{info}");
        let (info, _) = d.wait_for("\nbound status: synchronized\n", Duration::from_secs(10));
        let first = common::field(&line, "first-unbounded");
        let last = common::field(&line, "last-unbounded");
        // The reader's times are its (faked) clock's: read before the step
        // they carry the old offset, after it the new one. Of the two
        // readings of a time, the one nearer the step is taken (its stamps'
        // own clock reads can see the step a moment before its `before`).
        let (old, new): (i64, i64) = if offset == "+0.2" {
            (0, 200_000_000)
        } else {
            (200_000_000, 0)
        };
        let since = |t: u64| {
            let (a, b) = (t as i64 - old - at as i64, t as i64 - new - at as i64);
            (if a.abs() < b.abs() { a } else { b }) as f64 / 1e6
        };
        eprintln!(
            "step {size}: the reader's first stamp without an interval {:.1} ms after it, the \
             last {:.1} ms after it; {line}; then {}",
            since(first),
            since(last),
            common::value(&info, "bound half width ns:")
        );
        assert!(first > 0, "the reader never got `disrupted`: {line}");
        assert!(since(first) > -1.0, "disrupted before the step: {line}");
        assert!(since(first) < 1_000.0, "seen late: {line}");
        assert_eq!(
            common::field(&line, "misses-after-unbounded"),
            0,
            "an interval missed the clock after the step was seen: {line}"
        );
    }
}
