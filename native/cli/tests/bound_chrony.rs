//! Bounded stamps from the host page against real chronyd processes (issue 23,
//! "Done when" 1 and 2):
//!
//! - in a network namespace of the test's own (only a loopback interface), one
//!   chronyd serves its clock as stratum 1 (`local stratum 1`) and a second one
//!   follows it every 1/16 s; both run with `-x` (neither ever adjusts the
//!   system clock), with configurations, sockets and pid files in a directory
//!   of the test's own. The follower's source has chrony's `offset` option of
//!   +2 ms, so chronyd takes true time to be the system clock + 2 ms (it says
//!   so: "System time: 0.002 seconds slow of NTP time") and its current
//!   correction is about that much: the bound has something real to cover;
//! - `hrts daemon --foreground --chrony <follower's socket>` (in the host's
//!   network namespace: a Unix socket is reached by its path) keeps a host page
//!   in a directory of the test's, tying every 100 ms;
//! - 1: once `hrts info` says `bound source: chrony` and `bound status:
//!   synchronized`, for 60 s (HRTS_TEST_BOUND_CHRONY_S shortens it) bounded
//!   stamps from `hrts debug bound-echo`, each between two CLOCK_REALTIME
//!   readings of the test's: true time (CLOCK_REALTIME + 2 ms) lies in
//!   [earliest, latest] every time;
//! - 2: the serving chronyd stopped (SIGSTOP), the follower's root dispersion
//!   grows and the interval with it; the daemon stopped (SIGSTOP, void-after 5 s),
//!   the readers' status ages to free-running, the interval never gets narrower
//!   than at the stop and still holds true time, and past void-after
//!   `hrts now --bound` fails (exit 5) saying so.
//!
//! Measured once on a 2-vCPU KVM guest: synchronized 0.7 s after the start;
//! 6,220,996 bounded stamps in 60 s, 0 violations, width p50 4.007 ms, p99
//! 4.014 ms (twice chronyd's 2 ms correction and a few µs), true time at least
//! 3.97 µs inside the latest end (before the fix in `published`, 4 and 7
//! stamps were refused while the daemon was mid-publication; now 0); the server
//! stopped for 5 s: width +11.7 µs (2.3 ppm); the daemon stopped: free-running
//! after 1 s, no interval 5.0 s after the stop; 73 s in all.
//!
//! Needs root (namespaces, chronyd); without it the test says so and is skipped.
#![cfg(feature = "testing")]

use hrts_test_support::chrony::{euid, in_new_netns, root_or_skip, server_conf, Chronyd, TestDir};
use std::collections::BTreeMap;
use std::fs::{self, File};
use std::io::{self, BufRead, BufReader, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

mod common;

/// The port the serving chronyd answers NTP on, inside the test's namespace.
const NTP_PORT: u16 = 11124;
/// True time minus the host clock: the follower's per-source `offset`, ns.
const OFFSET_NS: u64 = 2_000_000;
/// The daemon's void-after, s.
const VOID_S: u64 = 5;

fn realtime_ns() -> u64 {
    hrts_core::clock::realtime_ns()
}

fn signal(pid: u32, sig: libc::c_int) {
    // SAFETY: signalling a child process of this test.
    assert_eq!(unsafe { libc::kill(pid as libc::pid_t, sig) }, 0);
}

/// SIGSTOP `pid` and wait until the kernel has stopped it.
fn pause(pid: u32) {
    signal(pid, libc::SIGSTOP);
    let stat = format!("/proc/{pid}/stat");
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let s = fs::read_to_string(&stat).unwrap();
        // pid (comm) STATE ...: the state follows the last ')'.
        if s.rsplit(')').next().unwrap().trim_start().starts_with('T') {
            return;
        }
        assert!(Instant::now() < deadline, "not stopped: {s}");
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// `hrts daemon --foreground`, its stderr in a log file; killed on drop.
struct Daemon {
    child: Child,
    log: PathBuf,
}

impl Daemon {
    fn log_text(&self) -> String {
        fs::read_to_string(&self.log).unwrap_or_default()
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `hrts` reading the host page in `page_dir`, trusting root and this user.
fn on_host(page_dir: &Path) -> Command {
    let mut c = common::command();
    c.env("HRTS_HOST", "on")
        .env("HRTS_HOST_DIR", page_dir)
        .env("HRTS_HOST_USER", euid().to_string())
        .env_remove("HRTS_BOUND_DRIFT_PPM")
        .env_remove("HRTS_BOUND_VOID_S")
        .env_remove("HRTS_TEST_BOUND");
    c
}

/// `key: value` lines of `hrts info`.
fn info(page_dir: &Path) -> BTreeMap<String, String> {
    let out = on_host(page_dir).arg("info").output().unwrap();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_once(": "))
        .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
        .collect()
}

/// `hrts debug bound-echo` on the host page: one bounded stamp per line.
struct Echo {
    child: Child,
    stdin: ChildStdin,
    out: BufReader<ChildStdout>,
}

impl Echo {
    fn spawn(page_dir: &Path) -> Echo {
        let mut child = on_host(page_dir)
            .args(["debug", "bound-echo"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let out = BufReader::new(child.stdout.take().unwrap());
        Echo { child, stdin, out }
    }

    /// A bounded stamp with CLOCK_REALTIME read before and after it:
    /// `(before, earliest, latest, after)`, or the error that ended the
    /// process (`hrts debug bound-echo` exits at the first error).
    fn try_stamp(&mut self, line: &mut String) -> Result<(u64, u64, u64, u64), String> {
        let before = realtime_ns();
        let asked = self
            .stdin
            .write_all(b"now\n")
            .and_then(|()| self.stdin.flush());
        line.clear();
        if asked.is_ok() {
            let _ = self.out.read_line(line);
        }
        let after = realtime_ns();
        if line.is_empty() {
            let _ = self.child.wait();
            let mut why = String::new();
            let _ = io::Read::read_to_string(self.child.stderr.as_mut().unwrap(), &mut why);
            return Err(why);
        }
        let mut f = line.split_whitespace().map(|v| v.parse::<u64>().unwrap());
        let (earliest, latest) = (f.next().unwrap(), f.next().unwrap());
        Ok((before, earliest, latest, after))
    }
}

/// What `now_bounded` says when it found the bound area in the middle of a
/// publication (an odd version on every one of its few tries): a reader that
/// meets the daemon preempted inside its publication is refused, although the
/// bound is fresh. Counted and reported, never taken for an interval.
const TORN_READ: &str = "holds no bound yet";

impl Drop for Echo {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Whether true time (CLOCK_REALTIME + OFFSET_NS, read before and after)
/// certainly lies outside [earliest, latest].
fn violates(before: u64, earliest: u64, latest: u64, after: u64) -> bool {
    earliest > after + OFFSET_NS || latest < before + OFFSET_NS
}

fn percentile(sorted: &[u64], p: f64) -> u64 {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

/// The median width of `n` bounded stamps (a new echo after a torn read).
fn median_width(echo: &mut Echo, page_dir: &Path, n: usize) -> u64 {
    let mut line = String::new();
    let mut w = Vec::with_capacity(n);
    while w.len() < n {
        match echo.try_stamp(&mut line) {
            Ok((b, e, l, a)) => {
                assert!(
                    !violates(b, e, l, a),
                    "[{e}, {l}] misses [{b}, {a}] + offset"
                );
                w.push(l - e);
            }
            Err(why) => {
                assert!(
                    why.contains(TORN_READ),
                    "hrts debug bound-echo failed: {why}"
                );
                *echo = Echo::spawn(page_dir);
            }
        }
    }
    w.sort_unstable();
    percentile(&w, 0.5)
}

#[test]
fn bounds_from_a_real_chronyd_hold_true_time() {
    if !root_or_skip("two chronyd in a network namespace of the test's") {
        return;
    }
    let started = Instant::now();
    let _own = common::OwnSegment::new();
    let dir = TestDir::new("bound");
    let page_dir = dir.path("run");
    fs::create_dir(&page_dir).unwrap();
    fs::set_permissions(&page_dir, fs::Permissions::from_mode(0o755)).unwrap();
    let client_sock = dir.path("client/chronyd.sock");
    let server_conf = server_conf(NTP_PORT, &dir.path("server/chronyd.sock"));
    let client_conf = format!(
        "server 127.0.0.1 port {NTP_PORT} iburst minpoll -4 maxpoll -4 offset {:.6}\nport 0\n\
         cmdport 0\nbindcmdaddress {}\n",
        OFFSET_NS as f64 / 1e9,
        client_sock.display()
    );
    let root = dir.root().to_path_buf();
    let (mut server, mut client) = in_new_netns(move || {
        (
            Chronyd::start(&root, "server", &server_conf),
            Chronyd::start(&root, "client", &client_conf),
        )
    });

    let log = dir.path("daemon.log");
    let mut daemon = Daemon {
        child: common::command()
            .args(["daemon", "--foreground", "--dir"])
            .arg(&page_dir)
            .arg("--chrony")
            .arg(&client_sock)
            .env("HRTS_TIE_INTERVAL_MS", "100")
            .env("HRTS_BOUND_VOID_S", VOID_S.to_string())
            .env_remove("HRTS_BOUND_DRIFT_PPM")
            .env_remove("HRTS_TEST_BOUND")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(File::create(&log).unwrap())
            .spawn()
            .unwrap(),
        log,
    };

    // Until the readers see chronyd's word, synchronized.
    let mut last = BTreeMap::new();
    let synced_after = loop {
        if let Some(status) = daemon.child.try_wait().unwrap() {
            panic!("hrts daemon exited ({status}): {}", daemon.log_text());
        }
        server.assert_running();
        client.assert_running();
        if daemon.log_text().contains("a round every") {
            last = info(&page_dir);
            if last.get("bound source").map(String::as_str) == Some("chrony")
                && last.get("bound status").map(String::as_str) == Some("synchronized")
            {
                break started.elapsed();
            }
        }
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "no synchronized bound from chronyd within 30 s; hrts info: {last:?}\n{}\n{}\n{}",
            daemon.log_text(),
            server.log(),
            client.log()
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    let bound_lines: BTreeMap<&String, &String> = last
        .iter()
        .filter(|(k, _)| k.starts_with("bound "))
        .collect();
    eprintln!(
        "synchronized bound from chronyd {:.1} s after the start: {bound_lines:?}",
        synced_after.as_secs_f64()
    );

    // 1. True time inside every interval.
    let secs: u64 = std::env::var("HRTS_TEST_BOUND_CHRONY_S")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(60);
    let mut echo = Echo::spawn(&page_dir);
    let mut line = String::new();
    let mut widths = Vec::with_capacity(4_000_000);
    let (mut violations, mut first_violation) = (0u64, None);
    let (mut torn, mut first_torn) = (0u64, None);
    // The least room true time had on either side, ns.
    let (mut slack_early, mut slack_late) = (i64::MAX, i64::MAX);
    let end = Instant::now() + Duration::from_secs(secs);
    while Instant::now() < end {
        for _ in 0..1_000 {
            let (b, e, l, a) = match echo.try_stamp(&mut line) {
                Ok(stamp) => stamp,
                Err(why) => {
                    assert!(
                        why.contains(TORN_READ),
                        "hrts debug bound-echo failed: {why}"
                    );
                    torn += 1;
                    first_torn.get_or_insert(why);
                    echo = Echo::spawn(&page_dir);
                    continue;
                }
            };
            if violates(b, e, l, a) {
                violations += 1;
                first_violation.get_or_insert((b, e, l, a));
            }
            slack_early = slack_early.min((a + OFFSET_NS) as i64 - e as i64);
            slack_late = slack_late.min(l as i64 - (b + OFFSET_NS) as i64);
            widths.push(l - e);
        }
    }
    server.assert_running();
    client.assert_running();
    widths.sort_unstable();
    let (p50, p99) = (percentile(&widths, 0.5), percentile(&widths, 0.99));
    eprintln!(
        "{} bounded stamps in {secs} s: {violations} violations (true time = CLOCK_REALTIME + \
         {OFFSET_NS} ns), width p50 {p50} ns, p99 {p99} ns, max {} ns; least room for true \
         time: {slack_early} ns after earliest, {slack_late} ns before latest",
        widths.len(),
        widths[widths.len() - 1]
    );
    // A reader that finds the daemon in the middle of a publication looks
    // again (for up to 5 ms): a fresh bound is never refused.
    assert_eq!(
        torn,
        0,
        "bounded stamps refused while the bound was fresh: {}",
        first_torn.unwrap_or_default().trim_end()
    );
    assert_eq!(
        violations, 0,
        "first (before, earliest, latest, after): {first_violation:?}"
    );
    if secs >= 60 {
        assert!(widths.len() >= 100_000, "{} stamps", widths.len());
    }
    // The bound covers chronyd's correction of about the offset: the
    // interval is at least twice as wide.
    assert!(p50 >= 2 * OFFSET_NS * 99 / 100, "p50 {p50}");

    // 2a. The serving chronyd stops: the follower's root dispersion grows,
    // and the interval with it.
    let w0 = median_width(&mut echo, &page_dir, 201);
    let ns0: u64 = info(&page_dir)["bound ns"].parse().unwrap();
    pause(server.pid());
    let t0 = Instant::now();
    std::thread::sleep(Duration::from_secs(5));
    let w1 = median_width(&mut echo, &page_dir, 201);
    let i1 = info(&page_dir);
    let ns1: u64 = i1["bound ns"].parse().unwrap();
    let grown_s = t0.elapsed().as_secs_f64();
    eprintln!(
        "the server stopped for {grown_s:.1} s: width {w0} -> {w1} ns (+{} ns, {:.2} ppm), \
         chronyd's bound {ns0} -> {ns1} ns; status {}",
        w1 as i64 - w0 as i64,
        (w1 as f64 - w0 as f64) / grown_s / 1e3,
        i1["bound status"]
    );
    assert!(
        ns1 > ns0 && w1 > w0,
        "no growth: width {w0} -> {w1}, bound {ns0} -> {ns1}"
    );
    // chronyd still says "synchronised"; its last update, 5 s old, is over 8
    // polls of 1/16 s (and 1 s) ago: the daemon publishes free-running.
    assert_eq!(i1["bound status"], "free-running", "{i1:?}");
    client.assert_running();

    // 2b. The daemon stops: free-running once the word is older than fresh
    // (1 s), never narrower than at the stop, true time inside, then past
    // void-after an error that says so.
    pause(daemon.child.id());
    let stopped = Instant::now();
    let mut w_stop = None;
    let (mut n, mut free_running, mut torn_after_stop) = (0u64, 0u64, 0u64);
    let (error, failed_after) = loop {
        let before = realtime_ns();
        let out = on_host(&page_dir)
            .args(["now", "--bound"])
            .output()
            .unwrap();
        let after = realtime_ns();
        let age = stopped.elapsed();
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        match out.status.code() {
            Some(0) => {
                let f: Vec<&str> = stdout.split_whitespace().collect();
                assert_eq!(f.len(), 3, "{stdout}");
                let (e, l): (u64, u64) = (f[0].parse().unwrap(), f[1].parse().unwrap());
                assert!(
                    !violates(before, e, l, after),
                    "{stdout}: true time in [{}, {}]",
                    before + OFFSET_NS,
                    after + OFFSET_NS
                );
                let w = l - e;
                let w_stop = *w_stop.get_or_insert(w);
                assert!(w >= w_stop, "{age:?} after the stop: width {w} < {w_stop}");
                if age > Duration::from_millis(1_100) {
                    assert_eq!(f[2], "free-running", "{age:?} after the stop");
                    free_running += 1;
                } else {
                    assert!(["synchronized", "free-running"].contains(&f[2]), "{stdout}");
                }
                n += 1;
            }
            Some(5) if stderr.contains(TORN_READ) => torn_after_stop += 1,
            Some(5) => break (stderr, age),
            other => panic!("hrts now --bound: exit {other:?}: {stdout} {stderr}"),
        }
        assert!(
            age < Duration::from_secs(VOID_S + 3),
            "still an interval {age:?} after the daemon stopped"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    let w_last = one_echo(&page_dir);
    eprintln!(
        "the daemon stopped: {n} intervals ({free_running} free-running, {torn_after_stop} torn \
         reads), width at the stop {} ns; no interval {:.2} s after the stop: {}",
        w_stop.unwrap_or(0),
        failed_after.as_secs_f64(),
        error.trim_end()
    );
    assert!(w_last.is_none(), "bound-echo still answers: {w_last:?}");
    assert!(free_running > 0);
    assert!(
        failed_after >= Duration::from_millis(VOID_S * 1_000 - 200),
        "void after {failed_after:?}, void-after {VOID_S} s"
    );
    assert!(error.contains("past its void-after"), "{error}");
    drop(echo);
    drop(daemon);
    drop((server, client));
    eprintln!("took {:.1} s", started.elapsed().as_secs_f64());
}

/// A fresh `hrts debug bound-echo`'s answer, or `None` once it fails.
fn one_echo(page_dir: &Path) -> Option<String> {
    let mut echo = Echo::spawn(page_dir);
    echo.stdin.write_all(b"now\n").ok()?;
    echo.stdin.flush().ok()?;
    let mut line = String::new();
    echo.out.read_line(&mut line).ok()?;
    Some(line).filter(|l| !l.is_empty())
}
