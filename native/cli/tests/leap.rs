//! Issue 36, "Done when" 4: a leap second announced by the time service's
//! word (here the test build's simulated one, `HRTS_TEST_BOUND=
//! synchronized,50000,insert@T`, in place of the kernel's `STA_INS`) for a
//! moment `T` a few seconds from now. A `hrts daemon` publishes it; readers
//! (`hrts now --bound`, given the same variable so that they place the leap
//! at `T` rather than at the end of the UTC day) stamp from 2.5 s before `T`
//! to 2.5 s after it: from 1 s before `T` until a round after `T + 1 s` has
//! published a fresh word, each interval is a second wider on each side,
//! covering both readings of the repeated second; outside, as narrow as
//! before. The test prints how wide they became.
#![cfg(feature = "testing")]

use std::time::Duration;

mod common;
use common::daemon::Daemon;

#[test]
fn intervals_around_an_announced_leap_cover_both_readings_of_the_second() {
    let dir = common::TempDir::new("leap");
    let leap_at = hrts_core::clock::realtime_ns() + 8_000_000_000;
    let word = format!("synchronized,50000,insert@{leap_at}");
    let d = Daemon::start(
        &dir.0,
        &[("HRTS_TEST_BOUND", &word), ("HRTS_VMCLOCK", "off")],
        |_| {},
    );
    let info = d.info();
    assert!(info.contains("\nleap second: insert\n"), "{info}");
    let now = hrts_core::clock::realtime_ns();
    assert!(
        now < leap_at - 3_000_000_000,
        "the daemon took too long to be synchronized"
    );
    std::thread::sleep(Duration::from_nanos(leap_at - 2_500_000_000 - now));
    // (stamp − T, half width), ns.
    let mut seen: Vec<(i64, u64)> = Vec::new();
    while hrts_core::clock::realtime_ns() < leap_at + 2_500_000_000 {
        let mut c = common::daemon::on_host(&d.page);
        c.env("HRTS_TEST_BOUND", &word).args(["now", "--bound"]);
        let out = c.output().unwrap();
        assert!(out.status.success(), "{out:?}");
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        let mut f = text
            .split_whitespace()
            .map(|v| v.parse::<u64>().unwrap_or(0));
        let (e, l) = (f.next().unwrap(), f.next().unwrap());
        let mid = e / 2 + l / 2;
        seen.push((mid as i64 - leap_at as i64, (l - e) / 2));
        std::thread::sleep(Duration::from_millis(50));
    }
    let widest = |from: i64, to: i64| {
        seen.iter()
            .filter(|(t, _)| (from..to).contains(t))
            .map(|&(_, h)| h)
            .max()
            .unwrap_or(0)
    };
    let narrowest = |from: i64, to: i64| {
        seen.iter()
            .filter(|(t, _)| (from..to).contains(t))
            .map(|&(_, h)| h)
            .min()
            .unwrap_or(u64::MAX)
    };
    let s = 1_000_000_000i64;
    let before = widest(-3 * s, -s - 50_000_000);
    let around = narrowest(-s + 50_000_000, s - 50_000_000);
    // A round every 100 ms: a word learned after T + 1 s by 400 ms.
    let after = widest(s + 400_000_000, 3 * s);
    let wide: Vec<i64> = seen
        .iter()
        .filter(|(_, h)| *h >= 1_000_000_000)
        .map(|&(t, _)| t)
        .collect();
    eprintln!(
        "leap at T: half widths {before} ns before T - 1 s, at least {around} ns from T - 1 s \
         to T + 1 s, at most {after} ns after T + 1.4 s; widened from T {:+.0} ms to T {:+.0} ms \
         ({} of {} stamps)",
        *wide.first().unwrap_or(&0) as f64 / 1e6,
        *wide.last().unwrap_or(&0) as f64 / 1e6,
        wide.len(),
        seen.len()
    );
    assert!(before > 0 && before < 1_000_000, "{seen:?}");
    assert!(around >= 1_000_000_000, "{seen:?}");
    assert!(around < 1_001_000_000, "{seen:?}");
    assert!(after > 0 && after < 1_000_000, "{seen:?}");
}
