//! hrts beside AWS ClockBound against the same chronyd (issue 23, "Done when" 6).
//!
//! Run by `scripts/clockbound-compare.sh`, inside the mount namespace where
//! clock-bound-d keeps its segment (`/var/run/clockbound/shm0` unless
//! `--clockbound-shm` says otherwise), with `hrts daemon --chrony` keeping a host
//! page in `--host-dir` from the same chronyd. For `--seconds` it alternates:
//!
//! - read cost: tight loops of `clock_gettime(CLOCK_REALTIME)`, hrts `now_ns`,
//!   hrts `now_bounded` and ClockBound's `now()`, interleaved, `--batch` calls a
//!   batch; the mean and the least of the batches' ns per call;
//! - intervals: one bounded stamp from each between two `CLOCK_REALTIME` readings;
//!   true time is `CLOCK_REALTIME + --offset-ns` (the follower chronyd's per-source
//!   `offset`, as in native/cli/tests/bound_chrony.rs), and a violation is an
//!   interval that certainly misses it. Widths (p50, p99) and statuses.
//!
//! Then it runs `--stop-cmd` (the script stops the serving chronyd) and goes on
//! for `--after-seconds`, printing each second's statuses and widths, so that
//! both sides' status changes show in one timeline.

use clock_bound_client::{ClockBoundClient, ClockStatus, CLOCKBOUND_SHM_DEFAULT_PATH};
use hrts_core::{BoundSource, SharedBase};
use std::collections::BTreeMap;
use std::hint::black_box;
use std::process::{Command, ExitCode};
use std::time::{Duration, Instant};

struct Args {
    host_dir: String,
    clockbound_shm: String,
    offset_ns: i64,
    seconds: u64,
    after_seconds: u64,
    stop_cmd: Option<String>,
    batch: u32,
}

fn usage() -> ! {
    eprintln!(
        "usage: hrts-clockbound-compare --host-dir DIR [--clockbound-shm PATH] [--offset-ns N] \
         [--seconds S] [--after-seconds S] [--stop-cmd CMD] [--batch N]"
    );
    std::process::exit(2)
}

fn parse_args() -> Args {
    let mut a = Args {
        host_dir: String::new(),
        clockbound_shm: CLOCKBOUND_SHM_DEFAULT_PATH.to_string(),
        offset_ns: 2_000_000,
        seconds: 30,
        after_seconds: 10,
        stop_cmd: None,
        batch: 1_000,
    };
    let mut it = std::env::args().skip(1);
    while let Some(k) = it.next() {
        let mut v = || it.next().unwrap_or_else(|| usage());
        let num = |s: String| s.parse().unwrap_or_else(|_| usage());
        match k.as_str() {
            "--host-dir" => a.host_dir = v(),
            "--clockbound-shm" => a.clockbound_shm = v(),
            "--offset-ns" => a.offset_ns = num(v()) as i64,
            "--seconds" => a.seconds = num(v()),
            "--after-seconds" => a.after_seconds = num(v()),
            "--stop-cmd" => a.stop_cmd = Some(v()),
            "--batch" => a.batch = num(v()) as u32,
            _ => usage(),
        }
    }
    if a.host_dir.is_empty() {
        usage()
    }
    a
}

fn clock_ns(id: libc::clockid_t) -> i64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: ts is a valid timespec to write.
    unsafe { libc::clock_gettime(id, &mut ts) };
    ts.tv_sec * 1_000_000_000 + ts.tv_nsec
}

fn realtime_ns() -> i64 {
    clock_ns(libc::CLOCK_REALTIME)
}

fn cb_status(s: &ClockStatus) -> &'static str {
    match s {
        ClockStatus::Unknown => "unknown",
        ClockStatus::Synchronized => "synchronized",
        ClockStatus::FreeRunning => "free-running",
        ClockStatus::Disrupted => "disrupted",
    }
}

/// One side's intervals in one phase (or one second).
#[derive(Default)]
struct Side {
    widths: Vec<i64>,
    statuses: BTreeMap<String, u64>,
    violations: u64,
    first_violation: Option<(i64, i64, i64, i64)>,
    /// Least room true time had after earliest / before latest, ns.
    slack_early: Option<i64>,
    slack_late: Option<i64>,
}

impl Side {
    /// Records `[earliest, latest]` (or why there was none) against true time
    /// in `[before, after] + offset`. Intervals under a status in which the
    /// side itself says not to trust them (ClockBound's unknown/disrupted)
    /// are counted by status only.
    fn record(&mut self, status: &str, interval: Option<(i64, i64)>, before: i64, after: i64) {
        *self.statuses.entry(status.to_string()).or_default() += 1;
        let Some((e, l)) = interval else { return };
        if e > after || l < before {
            self.violations += 1;
            self.first_violation.get_or_insert((before, e, l, after));
        }
        let (se, sl) = (after - e, l - before);
        self.slack_early = Some(self.slack_early.map_or(se, |m| m.min(se)));
        self.slack_late = Some(self.slack_late.map_or(sl, |m| m.min(sl)));
        self.widths.push(l - e);
    }

    fn merge(&mut self, other: &Side) {
        self.widths.extend_from_slice(&other.widths);
        for (k, v) in &other.statuses {
            *self.statuses.entry(k.clone()).or_default() += v;
        }
        self.violations += other.violations;
        if self.first_violation.is_none() {
            self.first_violation = other.first_violation;
        }
        for (mine, theirs) in [
            (&mut self.slack_early, other.slack_early),
            (&mut self.slack_late, other.slack_late),
        ] {
            if let Some(t) = theirs {
                *mine = Some(mine.map_or(t, |m| m.min(t)));
            }
        }
    }

    fn percentile(&self, p: f64) -> Option<i64> {
        let mut w = self.widths.clone();
        if w.is_empty() {
            return None;
        }
        w.sort_unstable();
        Some(w[((w.len() - 1) as f64 * p).round() as usize])
    }

    fn statuses_text(&self) -> String {
        self.statuses
            .iter()
            .map(|(k, v)| format!("{k} {v}"))
            .collect::<Vec<_>>()
            .join(", ")
    }

    fn width_text(&self, p: f64) -> String {
        self.percentile(p)
            .map_or("-".into(), |w| format!("{:.3}", w as f64 / 1e3))
    }
}

/// ns per call of the batches of one read.
#[derive(Default)]
struct Cost(Vec<f64>);

impl Cost {
    fn mean(&self) -> f64 {
        self.0.iter().sum::<f64>() / self.0.len().max(1) as f64
    }
    fn min(&self) -> f64 {
        self.0.iter().cloned().fold(f64::INFINITY, f64::min)
    }
}

fn timed(batch: u32, mut f: impl FnMut()) -> f64 {
    let t0 = clock_ns(libc::CLOCK_MONOTONIC);
    for _ in 0..batch {
        f();
    }
    (clock_ns(libc::CLOCK_MONOTONIC) - t0) as f64 / batch as f64
}

struct Reader {
    hrts: SharedBase,
    cb: ClockBoundClient,
    offset_ns: i64,
    first_error: BTreeMap<&'static str, String>,
}

impl Reader {
    /// One bounded stamp from each side, each between two CLOCK_REALTIME
    /// readings.
    fn sample(&mut self, hrts: &mut Side, cb: &mut Side) {
        let before = realtime_ns() + self.offset_ns;
        let r = self.hrts.now_bounded();
        let after = realtime_ns() + self.offset_ns;
        match r {
            Ok(b) => hrts.record(
                b.status.name(),
                Some((b.earliest as i64, b.latest as i64)),
                before,
                after,
            ),
            Err(e) => {
                let text = e.to_string();
                let status = match self.hrts.bound_state().map(|s| s.status) {
                    Some(s) => format!("error ({})", s.name()),
                    None => "error".to_string(),
                };
                self.first_error.entry("hrts").or_insert(text);
                hrts.record(&status, None, before, after);
            }
        }
        let before = realtime_ns() + self.offset_ns;
        let r = self.cb.now();
        let after = realtime_ns() + self.offset_ns;
        match r {
            Ok(n) => {
                let ns = |t: &nix::sys::time::TimeSpec| t.tv_sec() * 1_000_000_000 + t.tv_nsec();
                let trusted = matches!(
                    n.clock_status,
                    ClockStatus::Synchronized | ClockStatus::FreeRunning
                );
                let interval = trusted.then(|| (ns(&n.earliest), ns(&n.latest)));
                cb.record(cb_status(&n.clock_status), interval, before, after);
            }
            Err(e) => {
                self.first_error
                    .entry("clockbound")
                    .or_insert(format!("{e:?}"));
                cb.record("error", None, before, after);
            }
        }
    }
}

/// What one phase (synchronized, or after the server stopped) saw.
#[derive(Default)]
struct Phase {
    hrts: Side,
    cb: Side,
    realtime: Cost,
    hrts_now: Cost,
    hrts_bounded: Cost,
    cb_now: Cost,
}

fn run_phase(
    r: &mut Reader,
    args: &Args,
    secs: u64,
    t_start: Instant,
    label: &str,
    timeline: &mut Vec<String>,
) -> Phase {
    let mut phase = Phase::default();
    let end = Instant::now() + Duration::from_secs(secs);
    let mut round = 0u64;
    while Instant::now() < end {
        let second_end = Instant::now() + Duration::from_secs(1);
        let (mut h, mut c) = (Side::default(), Side::default());
        while Instant::now() < second_end {
            // Read costs, the four reads in a rotating order.
            let batch = args.batch;
            for k in 0..4 {
                match (k + round) % 4 {
                    0 => phase.realtime.0.push(timed(batch, || {
                        black_box(realtime_ns());
                    })),
                    1 => phase.hrts_now.0.push(timed(batch, || {
                        black_box(r.hrts.now_ns());
                    })),
                    // Both ends of each interval, as a caller reads them:
                    // `black_box` of a whole `Result` copies it through the
                    // stack with loads wider than the stores that wrote it
                    // (a failed store forwarding, ~8 ns on AMD), which
                    // measures this loop, not the read.
                    2 => phase.hrts_bounded.0.push(timed(batch, || {
                        if let Ok(b) = r.hrts.now_bounded() {
                            black_box((b.earliest, b.latest));
                        }
                    })),
                    _ => phase.cb_now.0.push(timed(batch, || {
                        if let Ok(n) = r.cb.now() {
                            black_box((n.earliest, n.latest));
                        }
                    })),
                }
            }
            round += 1;
            // Intervals against true time (a few hundred thousand a second).
            for _ in 0..200 {
                r.sample(&mut h, &mut c);
            }
        }
        let t = t_start.elapsed().as_secs_f64();
        timeline.push(format!(
            "| {t:5.1} | {label} | {} | {} | {} | {} | {} | {} |",
            h.statuses_text(),
            h.width_text(0.5),
            h.violations,
            c.statuses_text(),
            c.width_text(0.5),
            c.violations
        ));
        eprintln!("{}", timeline.last().unwrap());
        phase.hrts.merge(&h);
        phase.cb.merge(&c);
    }
    phase
}

fn main() -> ExitCode {
    let args = parse_args();
    // The host page: `hrts daemon --dir DIR` keeps it, trusted as this user's.
    // SAFETY: no other thread runs yet.
    unsafe {
        std::env::set_var("HRTS_HOST", "on");
        std::env::set_var("HRTS_HOST_DIR", &args.host_dir);
        if std::env::var_os("HRTS_HOST_USER").is_none() {
            std::env::set_var("HRTS_HOST_USER", hrts_core::process::euid().to_string());
        }
    }
    let hrts = match SharedBase::open_default() {
        Ok(b) => b,
        Err(e) => {
            eprintln!("hrts: opening the host page in {}: {e}", args.host_dir);
            return ExitCode::FAILURE;
        }
    };
    match hrts.bound_state() {
        Some(s) if s.source == BoundSource::Chrony => {}
        other => {
            eprintln!(
                "hrts: {} is not the host page with chronyd's bound (bound state {other:?})",
                hrts.name()
            );
            return ExitCode::FAILURE;
        }
    }
    let cb = match ClockBoundClient::new_with_path(&args.clockbound_shm) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("ClockBound: opening {}: {e:?}", args.clockbound_shm);
            return ExitCode::FAILURE;
        }
    };
    let mut r = Reader {
        hrts,
        cb,
        offset_ns: args.offset_ns,
        first_error: BTreeMap::new(),
    };
    let t_start = Instant::now();
    let mut timeline = vec![
        "| t, s | phase | hrts statuses (samples) | hrts width p50, µs | hrts violations | \
         ClockBound statuses (samples) | ClockBound width p50, µs | ClockBound violations |"
            .to_string(),
        "|---:|---|---|---:|---:|---|---:|---:|".to_string(),
    ];
    let synced = run_phase(
        &mut r,
        &args,
        args.seconds,
        t_start,
        "served",
        &mut timeline,
    );
    let mut after = None;
    if let Some(cmd) = &args.stop_cmd {
        let t = t_start.elapsed().as_secs_f64();
        let st = Command::new("sh").arg("-c").arg(cmd).status();
        eprintln!("{t:.1} s: ran {cmd:?}: {st:?}");
        timeline.push(format!("| {t:5.1} | `{cmd}` | | | | | | |"));
        after = Some(run_phase(
            &mut r,
            &args,
            args.after_seconds,
            t_start,
            "server stopped",
            &mut timeline,
        ));
    }

    println!(
        "### Read cost (ns per call; batches of {} calls, interleaved)\n",
        args.batch
    );
    println!("| read | phase | mean of batches | least batch | batches |");
    println!("|---|---|---:|---:|---:|");
    let phases: Vec<(&str, &Phase)> = std::iter::once(("served", &synced))
        .chain(after.as_ref().map(|p| ("server stopped", p)))
        .collect();
    for (label, p) in &phases {
        for (name, c) in [
            ("`clock_gettime(CLOCK_REALTIME)`", &p.realtime),
            ("hrts `now_ns` (no bound)", &p.hrts_now),
            ("hrts `now_bounded`", &p.hrts_bounded),
            ("ClockBound `now()`", &p.cb_now),
        ] {
            println!(
                "| {name} | {label} | {:.2} | {:.2} | {} |",
                c.mean(),
                c.min(),
                c.0.len()
            );
        }
    }
    println!(
        "\n### Intervals (true time = CLOCK_REALTIME + {} ns)\n",
        args.offset_ns
    );
    println!(
        "| side | phase | intervals | width p50, µs | width p99, µs | violations | least room \
         after earliest / before latest, µs | statuses (samples) |"
    );
    println!("|---|---|---:|---:|---:|---:|---|---|");
    for (label, p) in &phases {
        for (name, s) in [("hrts", &p.hrts), ("ClockBound", &p.cb)] {
            let room = |v: Option<i64>| v.map_or("-".into(), |v| format!("{:.3}", v as f64 / 1e3));
            println!(
                "| {name} | {label} | {} | {} | {} | {} | {} / {} | {} |",
                s.widths.len(),
                s.width_text(0.5),
                s.width_text(0.99),
                s.violations,
                room(s.slack_early),
                room(s.slack_late),
                s.statuses_text()
            );
        }
    }
    println!("\n### Timeline (one line a second)\n");
    for l in &timeline {
        println!("{l}");
    }
    for (side, e) in &r.first_error {
        println!("\nfirst error from {side}: {e}");
    }
    let mut violated = false;
    for (label, p) in &phases {
        for (name, s) in [("hrts", &p.hrts), ("ClockBound", &p.cb)] {
            if let Some(v) = s.first_violation {
                violated = true;
                println!(
                    "first violation, {name}, {label}: (true time from, earliest, latest, \
                     true time to) = {v:?}"
                );
            }
        }
    }
    if violated {
        ExitCode::from(3)
    } else {
        ExitCode::SUCCESS
    }
}
