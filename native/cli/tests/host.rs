//! The host page kept by `hrts daemon`, with real processes, a real second
//! user and real namespaces (issue 22, "Done when" 1, 2, 3 and 6):
//!
//! 1. another user and a process in its own pid, IPC and mount namespaces
//!    (the directory bind-mounted read-only) read the host timeline: 10,000
//!    ping-pongs each with root agree within the cross-CPU shift bound, while
//!    the daemon ties every half millisecond and while it is stopped; neither
//!    can write the page, and nothing they do changes its bytes;
//! 2. 2 + 2 stampers in two pid namespaces for 60 s (30 s in the test
//!    command: `HRTS_TEST_HOST_SECS`), the daemon tying every half
//!    millisecond: no stamp backwards, one generation, no repair;
//! 3. a stamper whose CLOCK_REALTIME runs 100 ppm fast (libfaketime) leaves
//!    everybody else's offset from CLOCK_REALTIME where it was (p99 ≤ 1 µs);
//! 6. a page owned by another user, a symbolic link, a truncated or foreign
//!    file and a page others may write are refused, `hrts info` says why, the
//!    reader stamps on its per-user segment; a daemon replaces a foreign or
//!    truncated page and logs why.
//!
//! Measured once on a 2-vCPU KVM guest: 0 ping-pong stamps outside
//! [before, after] at all; 0 backward stamps in about 58 million over the
//! pid-namespace minute (the daemon tied 112,662 times); offsets p99 25 ns
//! without the faked clock, 16 ns beside it.
//!
//! Every process that should read the host page gets HRTS_HOST=on and a
//! directory of the test's own (HRTS_HOST_DIR), and trusts only root and this
//! test's user (HRTS_HOST_USER): `/run/hrts` is never touched. The tests run
//! one at a time (the pid-namespace one keeps both CPUs of a small machine
//! busy for half a minute). What needs another user or namespaces needs root (as
//! CI runs them); without it those tests (and the other user's page in the
//! refusals) say so and are skipped.
#![cfg(feature = "testing")]

use hrts_core::{Config, HostConfig, SharedBase};
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdout, Command, Output, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

mod common;

static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner())
}

fn hrts() -> &'static str {
    env!("CARGO_BIN_EXE_hrts")
}

/// Whether this run is root; says what is skipped otherwise.
fn root_or_skip(what: &str) -> bool {
    let root = hrts_core::process::euid() == 0;
    if !root {
        eprintln!("skipped: {what}: needs root (CI runs as root)");
    }
    root
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// `key: value` lines (the first `: ` splits).
fn key_values(out: &str) -> BTreeMap<String, String> {
    out.lines()
        .filter_map(|l| l.split_once(": "))
        .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
        .collect()
}

fn signal(pid: u32, sig: libc::c_int) {
    // SAFETY: signalling a child process of this test.
    assert_eq!(unsafe { libc::kill(pid as libc::pid_t, sig) }, 0);
}

/// The settings `common::command` clears, for commands that wrap `hrts`
/// (unshare, faketime).
const SETTINGS: &[&str] = &[
    "HRTS_SEGMENT",
    "HRTS_GROUP",
    "HRTS_WRAP_THRESHOLD",
    "HRTS_MODE",
    "HRTS_TIE_INTERVAL_MS",
    "HRTS_MAX_SLEW_PPM",
    "HRTS_STEP_THRESHOLD_MS",
    "HRTS_CALENDAR_CLOCK",
];

/// Points `c` at the host page in `dir`, trusting root and this test's user.
fn on_host(c: &mut Command, dir: &Path) {
    for var in SETTINGS {
        c.env_remove(var);
    }
    c.env("HRTS_HOST", "on")
        .env("HRTS_HOST_DIR", dir)
        .env("HRTS_HOST_USER", hrts_core::process::euid().to_string());
}

/// A directory of the test's own under the temp directory, mode 0755 (every
/// user may read the page): the page's directory `run/` and the daemons'
/// logs. Removed on drop.
struct HostDir {
    root: PathBuf,
    dir: PathBuf,
}

impl HostDir {
    fn new(tag: &str) -> HostDir {
        use std::os::unix::fs::PermissionsExt;
        static N: AtomicUsize = AtomicUsize::new(0);
        let n = N.fetch_add(1, Ordering::Relaxed);
        let root = std::env::temp_dir().join(format!("hrts-host-{}-{tag}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let dir = root.join("run");
        std::fs::create_dir_all(&dir).unwrap();
        for d in [&root, &dir] {
            std::fs::set_permissions(d, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        HostDir { root, dir }
    }

    fn page(&self) -> PathBuf {
        self.dir.join("time")
    }

    /// `hrts` reading the host page here.
    fn hrts(&self) -> Command {
        let mut c = Command::new(hrts());
        on_host(&mut c, &self.dir);
        c
    }

    /// This (root) process's own reader of the page.
    fn open(&self) -> SharedBase {
        let cfg = Config::named(&hrts_core::default_segment_name()).with_host_page(HostConfig {
            dir: self.dir.clone(),
            user: hrts_core::process::euid().to_string(),
        });
        SharedBase::open(&cfg).unwrap()
    }
}

impl Drop for HostDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

/// `hrts daemon --foreground` on a `HostDir`, its stderr in a log file;
/// SIGKILLed on drop (a test that passes stops it with SIGTERM).
struct Daemon {
    child: Child,
    log: PathBuf,
}

impl Daemon {
    /// Starts it and returns once its page is ready (it logged its round).
    fn start(host: &HostDir, env: &[(&str, &str)]) -> Daemon {
        static N: AtomicUsize = AtomicUsize::new(0);
        let log = host
            .root
            .join(format!("daemon-{}.log", N.fetch_add(1, Ordering::Relaxed)));
        let mut c = common::command();
        c.args(["daemon", "--foreground", "--dir"])
            .arg(&host.dir)
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).unwrap());
        let mut d = Daemon {
            child: c.spawn().unwrap(),
            log,
        };
        let deadline = Instant::now() + Duration::from_secs(30);
        while !d.log_text().contains("a round every") {
            if let Some(status) = d.child.try_wait().unwrap() {
                panic!("hrts daemon exited at start ({status}): {}", d.log_text());
            }
            assert!(
                Instant::now() < deadline,
                "no ready daemon: {}",
                d.log_text()
            );
            std::thread::sleep(Duration::from_millis(10));
        }
        d
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }

    fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// SIGSTOP, and waits until the kernel has stopped it.
    fn pause(&self) {
        signal(self.pid(), libc::SIGSTOP);
        let stat = format!("/proc/{}/stat", self.pid());
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            let s = std::fs::read_to_string(&stat).unwrap();
            // pid (comm) STATE ...: the state follows the last ')'.
            if s.rsplit(')').next().unwrap().trim_start().starts_with('T') {
                return;
            }
            assert!(Instant::now() < deadline, "not stopped: {s}");
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    /// SIGTERM: it must stop cleanly. Returns its log.
    fn stop(mut self) -> String {
        signal(self.pid(), libc::SIGTERM);
        let status = self.child.wait().unwrap();
        let log = self.log_text();
        assert!(status.success(), "{status}: {log}");
        assert!(log.contains("stopping:"), "{log}");
        log
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A user of its own, made with `useradd` (no home, no shell); its per-user
/// segment and the user are removed on drop, also when the test fails.
struct TestUser {
    name: String,
    uid: u32,
    gid: u32,
}

/// Runs a user-database command, again while another one holds its lock.
fn user_db(args: &[&str]) -> Output {
    let mut last = None;
    for _ in 0..50 {
        let out = Command::new(args[0]).args(&args[1..]).output().unwrap();
        if out.status.success() {
            return out;
        }
        last = Some(out);
        std::thread::sleep(Duration::from_millis(100));
    }
    let out = last.unwrap();
    panic!("{args:?}: {} {}", out.status, text(&out.stderr));
}

impl TestUser {
    fn new() -> TestUser {
        static N: AtomicUsize = AtomicUsize::new(0);
        let name = format!(
            "hrtst{}x{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        );
        user_db(&[
            "useradd",
            "--no-create-home",
            "--user-group",
            "--shell",
            "/usr/sbin/nologin",
            &name,
        ]);
        let id = |flag: &str| -> u32 {
            text(&user_db(&["id", flag, &name]).stdout)
                .trim()
                .parse()
                .unwrap()
        };
        let (uid, gid) = (id("-u"), id("-g"));
        TestUser { name, uid, gid }
    }

    /// `hrts` as this user (no supplementary groups), reading the host page in `host`.
    fn hrts(&self, host: &HostDir) -> Command {
        let mut c = host.hrts();
        c.uid(self.uid)
            .gid(self.gid)
            .current_dir("/")
            .env_remove("HOME")
            .env_remove("XDG_STATE_HOME");
        c
    }
}

impl Drop for TestUser {
    fn drop(&mut self) {
        let _ = SharedBase::unlink(&format!("/hrts-{}", self.uid));
        let out = Command::new("userdel").arg(&self.name).output();
        if !out.as_ref().is_ok_and(|o| o.status.success()) {
            std::thread::sleep(Duration::from_millis(500));
            let _ = Command::new("userdel").arg(&self.name).status();
        }
    }
}

/// `hrts ARGS` in new pid, IPC and mount namespaces, as a container would
/// run it: the host page's directory bind-mounted read-only over itself, and
/// a `/dev/shm` of its own, as a container's IPC namespace comes with one.
/// (A host reader opens its per-user segment for unique stamps and sequence
/// numbers; with the host's `/dev/shm` that segment's page would be in the
/// host's IPC namespace and those would be refused, as ipc.rs shows for
/// segments, while its stamps still come from the host page: see
/// `ipc_namespace_beside_the_hosts_dev_shm`.)
fn in_namespaces(host: &HostDir) -> Command {
    let mut c = Command::new("unshare");
    c.args([
        "--pid",
        "--fork",
        "--ipc",
        "--mount",
        "--propagation",
        "private",
        "sh",
        "-c",
        "mount -t tmpfs -o mode=1777 hrts-test-shm /dev/shm && \
         mount --bind \"$HRTS_HOST_DIR\" \"$HRTS_HOST_DIR\" && \
         mount -o remount,bind,ro \"$HRTS_HOST_DIR\" && exec \"$@\"",
        "sh",
        hrts(),
    ]);
    on_host(&mut c, &host.dir);
    c
}

/// A process in an IPC namespace of its own that shares the host's
/// `/dev/shm` (where root's per-user segment names a page of the host's IPC
/// namespace): it stamps the host line all the same; only what needs its
/// per-user segment (unique stamps) is refused, with the reason.
fn ipc_namespace_beside_the_hosts_dev_shm(host: &HostDir, timeline: &str) {
    let ns = || {
        let mut c = Command::new("unshare");
        c.args(["--ipc", hrts()]);
        on_host(&mut c, &host.dir);
        c
    };
    let info = run_ok(ns(), &["info"]);
    assert!(info.starts_with(&format!("{timeline}\n")), "{info}");
    let now: u64 = run_ok(ns(), &["now"]).trim().parse().unwrap();
    assert!(now.abs_diff(hrts_core::clock::realtime_ns()) < 1_000_000_000);
    let unique = run(ns(), &["unique"]);
    assert_eq!(unique.status.code(), Some(3), "{}", text(&unique.stderr));
    assert!(
        text(&unique.stderr).contains("another IPC namespace"),
        "{}",
        text(&unique.stderr)
    );
}

/// Runs `c` with `args`; it must not be killed by a signal.
fn run(mut c: Command, args: &[&str]) -> Output {
    let out = c.args(args).output().unwrap();
    assert!(
        out.status.signal().is_none(),
        "hrts {args:?} was killed: {} {}",
        out.status,
        text(&out.stderr)
    );
    out
}

fn run_ok(c: Command, args: &[&str]) -> String {
    let out = run(c, args);
    assert!(
        out.status.success(),
        "hrts {args:?}: {} {}",
        out.status,
        text(&out.stderr)
    );
    text(&out.stdout)
}

/// What a ping-pong found.
#[derive(Debug, Default)]
struct PingPong {
    rounds: u64,
    /// Rounds whose echo stamp lay outside [before, after] at all.
    outside: u64,
    /// ... by more than the cross-CPU shift bound.
    violations: u64,
    /// The farthest an echo stamp lay outside, ns (0: never).
    worst_ns: u64,
}

/// `rounds` round trips over pipes with `hrts echo` (started by `echo`):
/// this process stamps, writes a line; the echo stamps once it has read it
/// and answers; this process stamps again. The echo's stamp must lie in
/// [before, after], give or take `bound_ns` (the cross-CPU shift bound).
fn ping_pong(base: &SharedBase, mut echo: Command, rounds: u64, bound_ns: u64) -> PingPong {
    let mut child = echo
        .arg("echo")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    let mut output = BufReader::new(child.stdout.take().unwrap());
    let mut r = PingPong::default();
    let mut line = String::new();
    for round in 0..rounds {
        // Unordered before the write (an early read only makes it smaller),
        // ordered after the answer (it must not be read before it arrived).
        let before = base.now_ns();
        input.write_all(b"\n").unwrap();
        input.flush().unwrap();
        line.clear();
        output.read_line(&mut line).unwrap();
        let after = base.now_ns_ordered();
        let theirs: u64 = line
            .trim()
            .parse()
            .unwrap_or_else(|_| panic!("round {round}: not a stamp: {line:?}"));
        let outside = before
            .saturating_sub(theirs)
            .max(theirs.saturating_sub(after));
        r.rounds += 1;
        if outside > 0 {
            r.outside += 1;
            r.worst_ns = r.worst_ns.max(outside);
            if outside > bound_ns {
                r.violations += 1;
                if r.violations <= 5 {
                    eprintln!(
                        "round {round}: {before} <= {theirs} <= {after} fails by {outside} ns"
                    );
                }
            }
        }
    }
    drop(input);
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "hrts echo: {}", text(&out.stderr));
    r
}

/// The cross-CPU shift bound as the core uses it: none for the kernel's
/// clock, else the evaluation's, at most 1 µs (1 µs when it could not be
/// bounded, or when the evaluation failed on a loaded machine and the page
/// has no evaluation).
fn shift_bound(info: &BTreeMap<String, String>) -> u64 {
    if info["source"] == "monotonic-raw" {
        return 0;
    }
    info.get("evaluation max shift ns")
        .and_then(|v| v.parse::<u64>().ok())
        .map_or(1_000, |ns| ns.min(1_000))
}

/// `hrts debug host-probe`'s answers.
fn probe(c: Command) -> BTreeMap<String, String> {
    key_values(&run_ok(c, &["debug", "host-probe"]))
}

#[test]
fn another_user_and_a_namespaced_process_read_the_host_timeline_and_cannot_change_it() {
    let _one = serial();
    if !root_or_skip("another user (useradd) and namespaces (unshare)") {
        return;
    }
    let _own = common::OwnSegment::new();
    let user = TestUser::new();
    let host = HostDir::new("readers");
    // Ties every half millisecond: many fall inside the ping-pongs.
    let daemon = Daemon::start(&host, &[("HRTS_TIE_INTERVAL_MS", "1")]);
    let page = host.page();
    let timeline = format!("timeline: host service {}", page.display());
    let base = host.open();
    assert_eq!(
        format!("timeline: {}", base.timeline()),
        timeline,
        "this (root) process"
    );
    let info = key_values(&run_ok(host.hrts(), &["info"]));
    let bound = shift_bound(&info);
    let rounds = 10_000;
    let everyone = ["root", "another user", "pid+ipc+mount namespaces"];
    let hrts_as = |who: &str| match who {
        "root" => host.hrts(),
        "another user" => user.hrts(&host),
        _ => in_namespaces(&host),
    };
    let mut results = Vec::new();
    let mut ping = |phase: &str, who: &'static str| {
        let r = ping_pong(&base, hrts_as(who), rounds, bound);
        eprintln!(
            "{who}, daemon {phase}: ping-pong with root, {} rounds: {} outside [before, after], \
             {} beyond the {bound} ns shift bound, worst {} ns",
            r.rounds, r.outside, r.violations, r.worst_ns
        );
        results.push((who, phase.to_string(), r));
    };

    for who in everyone {
        let info = run_ok(hrts_as(who), &["info"]);
        assert!(info.starts_with(&format!("{timeline}\n")), "{who}: {info}");
        assert!(info.contains("\nservice: "), "{who}: {info}");
        ping("tying", who);
    }

    // Everything else the others do happens while the daemon is stopped: no
    // byte of the page may change until it goes on.
    daemon.pause();
    let before = std::fs::read(&page).unwrap();
    let paused = key_values(&run_ok(host.hrts(), &["info"]));
    for who in everyone {
        // A reader may not reset (re-pair) the host page.
        let reset = run(hrts_as(who), &["reset"]);
        assert_eq!(reset.status.code(), Some(3), "{who}: hrts reset");
        let err = text(&reset.stderr);
        assert!(err.contains("a reset is not possible here"), "{who}: {err}");
        // Stamps, unique stamps (their state is per-user): all fine.
        run_ok(hrts_as(who), &["now"]);
        run_ok(hrts_as(who), &["unique", "3"]);
        run_ok(hrts_as(who), &["info"]);
        if who != "root" {
            let mut p = probe(hrts_as(who));
            eprintln!("{who}: {p:?}");
            assert_eq!(p.remove("page"), Some(page.display().to_string()));
            let expected: &[&str] = if who == "another user" {
                &["EACCES"]
            } else {
                &["EROFS", "EACCES"]
            };
            assert!(expected.contains(&p["open-rw"].as_str()), "{who}: {p:?}");
            assert_eq!(p.len(), 5, "{p:?}");
            for (what, answer) in &p {
                assert_ne!(answer, "allowed", "{who}: {what} {p:?}");
            }
        }
        ping("stopped", who);
    }
    ipc_namespace_beside_the_hosts_dev_shm(&host, &timeline);
    let after = std::fs::read(&page).unwrap();
    signal(daemon.pid(), libc::SIGCONT);
    assert!(
        before == after,
        "the page changed while its daemon was stopped"
    );
    for (who, phase, r) in &results {
        assert_eq!(r.rounds, rounds, "{who}");
        assert_eq!(r.violations, 0, "{who}, daemon {phase}: {r:?}");
    }
    // The daemon goes on with the same line. (`hrts info` calls it gone
    // once it missed three rounds and 250 ms: a loaded machine can delay a
    // sleeping daemon, so it gets a few looks.)
    let ties = |i: &BTreeMap<String, String>| i["ties"].parse::<u64>().unwrap();
    let mut again = key_values(&run_ok(host.hrts(), &["info"]));
    for _ in 0..20 {
        if again["service"].starts_with("running") {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
        again = key_values(&run_ok(host.hrts(), &["info"]));
    }
    assert!(again["service"].starts_with("running"), "{again:?}");
    assert_eq!(again["generation"], "1");
    assert_eq!(again["repairs"], "0");
    assert!(ties(&again) > ties(&paused), "it ties again: {again:?}");
    eprintln!("the daemon tied {} times", ties(&again) - ties(&info));
    drop(base);
    let log = daemon.stop();
    assert!(!log.contains("repaired"), "{log}");
}

/// A Rust stamper (`hrts debug fuzz-read MS`): it counts stamps backwards,
/// stamps more than 1 ms from CLOCK_REALTIME and slow stamps.
struct Stamper {
    child: Child,
    out: BufReader<ChildStdout>,
}

impl Stamper {
    fn spawn(mut c: Command, ms: u64) -> Stamper {
        let mut child = c
            .args(["debug", "fuzz-read", &ms.to_string()])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut out = BufReader::new(child.stdout.take().unwrap());
        let mut line = String::new();
        out.read_line(&mut line).unwrap();
        // It says which timeline it stamps: the host page, always, here.
        assert!(
            line.starts_with("attached (timeline: host service "),
            "{line}"
        );
        Stamper { child, out }
    }

    /// Its counts: stamps, off, backwards, errors, slow, longest.
    fn finish(mut self) -> BTreeMap<String, u64> {
        let mut line = String::new();
        self.out.read_line(&mut line).unwrap();
        assert!(self.child.wait().unwrap().success(), "{line}");
        let words: Vec<&str> = line.split_whitespace().skip(2).collect();
        words
            .chunks(2)
            .map(|kv| (kv[0].to_string(), kv[1].parse().unwrap()))
            .collect()
    }
}

impl Drop for Stamper {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `unshare --pid --fork --mount-proc hrts`: its pids mean nothing here.
fn in_pid_namespace(host: &HostDir) -> Command {
    let mut c = Command::new("unshare");
    c.args(["--pid", "--fork", "--mount-proc", hrts()]);
    on_host(&mut c, &host.dir);
    c
}

/// How long the pid-namespace run lasts: 30 s in the test command (about
/// 60,000 daemon rounds, the crossings of the fast path's end among them);
/// HRTS_TEST_HOST_SECS sets another length (the 60 s its issue was closed
/// on, a longer soak, or a quick local run).
fn pid_namespace_secs() -> u64 {
    std::env::var("HRTS_TEST_HOST_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(30)
}

#[test]
fn stampers_in_two_pid_namespaces_share_the_line_the_daemon_keeps() {
    let _one = serial();
    if !root_or_skip("pid namespaces (unshare)") {
        return;
    }
    let _own = common::OwnSegment::new();
    let host = HostDir::new("pidns");
    // The fastest ties the daemon allows: a tie interval of 1 ms and a fast
    // path of 2,000,000 ticks (under a millisecond at most frequencies) give
    // a round every 0.5 ms, the daemon's floor; readers cross the fast path's
    // end whenever a round is late.
    let daemon = Daemon::start(
        &host,
        &[
            ("HRTS_TIE_INTERVAL_MS", "1"),
            ("HRTS_WRAP_THRESHOLD", "2000000"),
        ],
    );
    let log = daemon.log_text();
    assert!(log.contains("a round every 0.5 ms"), "{log}");
    let timeline = format!("timeline: host service {}", host.page().display());
    let before = key_values(&run_ok(host.hrts(), &["info"]));
    let inside = run_ok(in_pid_namespace(&host), &["info"]);
    assert!(inside.starts_with(&format!("{timeline}\n")), "{inside}");
    assert_eq!(before["generation"], "1");
    assert_eq!(before["repairs"], "0");

    let secs = pid_namespace_secs();
    let ms = secs * 1000;
    let stampers = vec![
        Stamper::spawn(host.hrts(), ms),
        Stamper::spawn(host.hrts(), ms),
        Stamper::spawn(in_pid_namespace(&host), ms),
        Stamper::spawn(in_pid_namespace(&host), ms),
    ];
    let results: Vec<_> = stampers.into_iter().map(Stamper::finish).collect();
    let after = key_values(&run_ok(host.hrts(), &["info"]));
    let ties = |i: &BTreeMap<String, String>| i["ties"].parse::<u64>().unwrap();
    eprintln!(
        "two pid namespaces, {secs} s: daemon ties {} (generation {} -> {}, repairs {} -> {})",
        ties(&after) - ties(&before),
        before["generation"],
        after["generation"],
        before["repairs"],
        after["repairs"]
    );
    for (i, r) in results.iter().enumerate() {
        let place = if i < 2 { "host" } else { "new pid namespace" };
        eprintln!("stamper {i} ({place}): {r:?}");
        assert!(r["stamps"] > 1000, "stamper {i}: {r:?}");
        assert_eq!(r["backwards"], 0, "stamper {i}: {r:?}");
        assert_eq!(r["off"], 0, "stamper {i}: {r:?}");
        // A vCPU descheduled under a stamp counts as its CPU time (4 stampers
        // and a daemon share 2 CPUs here): a few in tens of millions. A
        // stamp that waited for the daemon would be slow at many of its
        // hundred thousand ties.
        assert!(r["slow"] <= 20, "stamper {i}: {r:?}");
    }
    assert_eq!(after["generation"], "1");
    assert_eq!(after["repairs"], "0");
    assert!(
        ties(&after) - ties(&before) >= secs * 100,
        "the daemon tied {} times in {secs} s",
        ties(&after) - ties(&before)
    );
    let log = daemon.stop();
    for word in ["repaired", "new generation", "stepped"] {
        assert!(!log.contains(word), "{log}");
    }
}

/// `hrts debug offsets MS` in `n` processes at once: per process (p50, p99,
/// max) of |stamp − CLOCK_REALTIME|, ns.
fn offsets(host: &HostDir, n: usize, ms: u64) -> Vec<(u64, u64, u64)> {
    let children: Vec<Child> = (0..n)
        .map(|_| {
            host.hrts()
                .args(["debug", "offsets", &ms.to_string()])
                .stdout(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    children
        .into_iter()
        .map(|c| {
            let out = c.wait_with_output().unwrap();
            assert!(out.status.success());
            let text = text(&out.stdout);
            assert!(text.starts_with("timeline: host service "), "{text}");
            let line = text.lines().last().unwrap();
            let w: Vec<&str> = line.split_whitespace().collect();
            let at = |key: &str| -> u64 {
                let i = w.iter().position(|x| *x == key).unwrap();
                w[i + 1].parse().unwrap()
            };
            assert!(at("samples") >= ms * 9 / 10, "{line}");
            (at("p50"), at("p99"), at("max"))
        })
        .collect()
}

#[test]
fn a_stamper_under_a_100_ppm_fast_clock_cannot_drag_the_host_line() {
    let _one = serial();
    let ok = Command::new("faketime")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(
        ok,
        "the `faketime` command (Debian package faketime) is missing: scripts/bootstrap.sh \
         installs it"
    );
    let _own = common::OwnSegment::new();
    let host = HostDir::new("faketime");
    let daemon = Daemon::start(&host, &[]);
    // The daemon learns the rate in its first ties (one a second).
    std::thread::sleep(Duration::from_secs(5));
    let ms = 15_000;
    let control = offsets(&host, 2, ms);
    eprintln!("offsets, no faked clock (p50, p99, max ns): {control:?}");

    // Its CLOCK_REALTIME runs 100 ppm fast; its calendar reads go through
    // libc (HRTS_CALENDAR_CLOCK=libc), so a tie of its would carry the faked
    // clock into the line. CLOCK_MONOTONIC stays real.
    let faked = || {
        let mut c = Command::new("faketime");
        c.args(["-f", "+0 x1.0001", hrts()]);
        on_host(&mut c, &host.dir);
        c.env("FAKETIME_DONT_FAKE_MONOTONIC", "1")
            .env("HRTS_CALENDAR_CLOCK", "libc");
        c
    };
    let info = run_ok(faked(), &["info"]);
    assert!(info.starts_with("timeline: host service "), "{info}");
    let stamper = Stamper::spawn(faked(), ms + 3_000);
    let beside = offsets(&host, 2, ms);
    eprintln!("offsets beside the faked stamper (p50, p99, max ns): {beside:?}");
    let s = stamper.finish();
    eprintln!("the faked stamper: {s:?}");
    assert_eq!(s["backwards"], 0, "{s:?}");
    // Its own clock ran away from the line (over 1 ms after 10 s at 100
    // ppm), and the line did not follow it.
    assert!(s["off"] > 0, "its clock was not faked: {s:?}");
    for (what, list) in [("control", &control), ("beside faketime", &beside)] {
        for (p50, p99, max) in list {
            assert!(*p99 <= 1_000, "{what}: p50 {p50} p99 {p99} max {max} ns");
        }
    }
    let after = key_values(&run_ok(host.hrts(), &["info"]));
    eprintln!(
        "daemon: frequency {} ppm, generation {}, steps {}",
        after["frequency ppm"], after["generation"], after["steps"]
    );
    assert_eq!(after["generation"], "1");
    assert_eq!(after["steps"], "0");
    daemon.stop();
}

/// xorshift64: reproducible bytes that are no hrts page.
fn noise(n: usize) -> Vec<u8> {
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}

#[test]
fn planted_linked_truncated_foreign_and_writable_pages_are_refused_and_said_so() {
    use std::os::unix::fs::PermissionsExt;
    let _one = serial();
    let _own = common::OwnSegment::new();
    // The one case that needs root: a page owned by another user.
    let user = root_or_skip("a page owned by another user (useradd, chown)").then(TestUser::new);
    // A whole page, kept by no daemon any more: what the plants copy.
    let good = HostDir::new("good");
    Daemon::start(&good, &[]).stop();
    let valid = std::fs::read(good.page()).unwrap();
    assert_eq!(valid.len(), 4096);
    let mode = |path: &Path, mode: u32| {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap()
    };
    type Plant<'a> = Box<dyn Fn(&Path) + 'a>;
    let mut cases: Vec<(&str, Plant, String)> = Vec::new();
    if let Some(user) = &user {
        cases.push((
            "another user's page",
            Box::new(|p: &Path| {
                std::fs::write(p, &valid).unwrap();
                mode(p, 0o644);
                std::os::unix::fs::chown(p, Some(user.uid), Some(user.gid)).unwrap();
            }),
            format!("it is owned by uid {}, not by root", user.uid),
        ));
    }
    let others: Vec<(&str, Plant, &str)> = vec![
        (
            "a symbolic link to a whole page",
            Box::new(|p: &Path| std::os::unix::fs::symlink(good.page(), p).unwrap()),
            "it is a symbolic link",
        ),
        (
            "a truncated file",
            Box::new(|p: &Path| {
                std::fs::write(p, &valid[..100]).unwrap();
                mode(p, 0o644);
            }),
            "it has 100 bytes, a host page has 4096",
        ),
        (
            "a foreign file",
            Box::new(|p: &Path| {
                std::fs::write(p, noise(4096)).unwrap();
                mode(p, 0o644);
            }),
            "it is not an hrts page",
        ),
        (
            "a page others may write",
            Box::new(|p: &Path| {
                std::fs::write(p, &valid).unwrap();
                mode(p, 0o666);
            }),
            "its mode 0666 lets others write it",
        ),
    ];
    cases.extend(
        others
            .into_iter()
            .map(|(w, p, why)| (w, p, why.to_string())),
    );
    let own = hrts_core::default_segment_name();
    for (what, plant, why) in &cases {
        let host = HostDir::new("planted");
        plant(&host.page());
        let info = run_ok(host.hrts(), &["info"]);
        let first = info.lines().next().unwrap();
        eprintln!("{what}: {first}");
        let page = host.page().display().to_string();
        assert!(
            first.starts_with(&format!("timeline: per-user segment {own} (")),
            "{what}: {first}"
        );
        assert!(first.contains(&page), "{what}: {first}");
        let refused = format!("host page {page} refused: {why}");
        assert!(first.contains(&refused), "{what}: {first}");
        assert!(first.contains("HRTS_HOST=off"), "{what}: {first}");
        assert_eq!(key_values(&info)["segment"], own, "{what}");
        // It stamps, on its per-user segment's line (near the system clock).
        let now: u64 = run_ok(host.hrts(), &["now"]).trim().parse().unwrap();
        let clock = hrts_core::clock::realtime_ns();
        assert!(clock.abs_diff(now) < 10_000_000_000, "{what}: {now}");
    }

    // A daemon finds a foreign or truncated page: it makes a new one and says why.
    for (what, bytes, why) in [
        ("foreign", noise(4096), "it is not an hrts page"),
        (
            "truncated",
            valid[..100].to_vec(),
            "it has 100 bytes, a host page has 4096",
        ),
    ] {
        let host = HostDir::new("replaced");
        std::fs::write(host.page(), &bytes).unwrap();
        let daemon = Daemon::start(&host, &[]);
        let log = daemon.log_text();
        let made = format!("made {} (", host.page().display());
        let line = log.lines().find(|l| l.contains(&made)).unwrap_or_default();
        eprintln!("a daemon on a {what} page: {line}");
        assert!(line.contains(why), "{what}: {log}");
        let info = run_ok(host.hrts(), &["info"]);
        assert!(
            info.starts_with(&format!(
                "timeline: host service {}\n",
                host.page().display()
            )),
            "{what}: {info}"
        );
        assert_eq!(std::fs::read(host.page()).unwrap().len(), 4096);
        daemon.stop();
    }
}

/// Takes every lock the calling user can take on every entry of a directory
/// (flock shared and exclusive; OFD and POSIX read and write locks on the
/// whole file, through every mode it may open the file in), prints what it
/// holds, keeps it all for the given seconds, then exits.
const LOCK_EVERYTHING: &str = r#"
import fcntl, os, struct, sys, time
d, secs = sys.argv[1], float(sys.argv[2])
F_OFD_SETLK = getattr(fcntl, "F_OFD_SETLK", 37)
held, opened, refused, fds = 0, [], [], []
for name in [None] + sorted(os.listdir(d)):
    path = d if name is None else os.path.join(d, name)
    for mode in (os.O_RDONLY, os.O_RDWR, os.O_WRONLY):
        try:
            fd = os.open(path, mode | os.O_NONBLOCK | os.O_NOFOLLOW)
        except OSError as e:
            refused.append("%s:%d:%s" % (name, mode, e.strerror))
            continue
        fds.append(fd)
        opened.append("%s:%d" % (name, mode))
        for op in (fcntl.LOCK_SH, fcntl.LOCK_EX):
            try:
                fcntl.flock(fd, op | fcntl.LOCK_NB); held += 1
            except OSError:
                pass
        for kind in (fcntl.F_RDLCK, fcntl.F_WRLCK):
            for cmd in (F_OFD_SETLK, fcntl.F_SETLK):
                try:
                    fcntl.fcntl(fd, cmd, struct.pack("hhxxxxqqixxxx", kind, 0, 0, 0, 0)); held += 1
                except OSError:
                    pass
print("holding %d locks; opened %s; refused %s" % (held, " ".join(opened), " ".join(refused)), flush=True)
time.sleep(secs)
"#;

/// Whether a bounded stamp of `base` holds `CLOCK_REALTIME` read around it,
/// and its status.
fn interval_holds(base: &SharedBase) -> (bool, hrts_core::BoundStatus) {
    let before = hrts_core::clock::realtime_ns();
    let b = base
        .now_bounded()
        .expect("a bounded stamp of the host page");
    let after = hrts_core::clock::realtime_ns();
    (b.earliest <= after && b.latest >= before, b.status)
}

fn ties(host: &HostDir) -> u64 {
    key_values(&run_ok(host.hrts(), &["info"]))["ties"]
        .parse()
        .unwrap()
}

/// Issue 35, "Done when" 1: user `nobody` holds every lock it can take on every
/// file of the daemon's directory for 10 s: the daemon keeps tying, a restart
/// succeeds, and readers' intervals hold the clock throughout.
#[test]
fn an_unprivileged_user_holding_every_lock_stops_neither_ties_nor_a_restart() {
    let _one = serial();
    if !root_or_skip("another user's locks") {
        return;
    }
    let _own = common::OwnSegment::new();
    let host = HostDir::new("locks");
    let env = [
        ("HRTS_TIE_INTERVAL_MS", "100"),
        ("HRTS_TEST_BOUND", "synchronized,50000"),
    ];
    let daemon = Daemon::start(&host, &env);
    let lock = host.dir.join("daemon.lock");
    let mode =
        std::os::unix::fs::PermissionsExt::mode(&std::fs::metadata(&lock).unwrap().permissions());
    assert_eq!(mode & 0o777, 0o600, "{}", lock.display());

    let mut locker = Command::new("python3")
        .args(["-c", LOCK_EVERYTHING])
        .arg(&host.dir)
        .arg("10")
        .uid(65534)
        .gid(65534)
        .current_dir("/")
        .stdout(Stdio::piped())
        .spawn()
        .expect("python3 (scripts/bootstrap.sh installs it)");
    let mut said = String::new();
    BufReader::new(locker.stdout.take().unwrap())
        .read_line(&mut said)
        .unwrap();
    eprintln!("nobody: {}", said.trim());
    let held: u32 = said
        .strip_prefix("holding ")
        .and_then(|s| s.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{said}"));
    // A real attack: nobody opened the page and holds locks on it, but could
    // not open the daemon's lock file.
    let opened = said.split("; refused").next().unwrap();
    assert!(held > 0 && opened.contains(" time:0"), "{said}");
    assert!(!opened.contains(" daemon.lock:"), "{said}");

    let reader = host.open();
    let start = Instant::now();
    let first_ties = ties(&host);
    let (mut stamps, mut misses, mut restarted) = (0u64, 0u64, None);
    let mut daemon = Some(daemon);
    while start.elapsed() < Duration::from_secs(9) {
        if restarted.is_none() && start.elapsed() > Duration::from_secs(4) {
            let before = ties(&host);
            assert!(before > first_ties, "no tie while nobody held the locks");
            daemon.take().unwrap().stop();
            daemon = Some(Daemon::start(&host, &env));
            restarted = Some(before);
        }
        let (holds, status) = interval_holds(&reader);
        stamps += 1;
        misses += (!holds) as u64;
        assert_eq!(status, hrts_core::BoundStatus::Synchronized);
        std::thread::sleep(Duration::from_millis(1));
    }
    let last_ties = ties(&host);
    assert!(
        last_ties > restarted.unwrap(),
        "the restarted daemon made no tie ({last_ties})"
    );
    assert_eq!(
        misses, 0,
        "{misses} of {stamps} intervals missed CLOCK_REALTIME"
    );
    eprintln!(
        "ties {first_ties} -> {last_ties} while nobody held {held} locks; {stamps} intervals, 0 missed"
    );
    assert!(locker.wait().unwrap().success());
    daemon.unwrap().stop();
}

/// A daemon that cannot tie says so at once: `hrts info` says since when, and
/// every reader's interval is free-running until the next tie. Root (the only
/// user besides the daemon's who can open its lock file) holds the role's lock.
#[test]
fn a_daemon_that_cannot_tie_says_so_and_readers_free_run() {
    let _one = serial();
    if !root_or_skip("holding the daemon's role lock") {
        return;
    }
    let _own = common::OwnSegment::new();
    let host = HostDir::new("untied");
    let daemon = Daemon::start(
        &host,
        &[
            ("HRTS_TIE_INTERVAL_MS", "100"),
            ("HRTS_TEST_BOUND", "synchronized,50000"),
        ],
    );
    let reader = host.open();
    assert_eq!(
        interval_holds(&reader),
        (true, hrts_core::BoundStatus::Synchronized)
    );
    let lock = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(host.dir.join("daemon.lock"))
        .unwrap();
    let whole_file = |kind: libc::c_int| {
        // SAFETY: zeroed is a valid struct flock; the fields that matter are set.
        let mut fl: libc::flock = unsafe { std::mem::zeroed() };
        fl.l_type = kind as libc::c_short;
        fl.l_whence = libc::SEEK_SET as libc::c_short;
        // SAFETY: the descriptor is open and `fl` valid; F_OFD_SETLK never blocks.
        let rc = unsafe {
            libc::fcntl(
                std::os::fd::AsRawFd::as_raw_fd(&lock),
                libc::F_OFD_SETLK,
                &fl,
            )
        };
        assert_eq!(rc, 0, "{}", std::io::Error::last_os_error());
    };
    whole_file(libc::F_WRLCK);
    let wait_for = |what: &str, done: &dyn Fn() -> bool| {
        let deadline = Instant::now() + Duration::from_secs(10);
        while !done() {
            assert!(
                Instant::now() < deadline,
                "{what}: {}",
                run_ok(host.hrts(), &["info"])
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    };
    wait_for("free-running", &|| {
        interval_holds(&reader).1 == hrts_core::BoundStatus::FreeRunning
    });
    let info = key_values(&run_ok(host.hrts(), &["info"]));
    assert!(info["service"].starts_with("not tying since"), "{info:?}");
    let (holds, _) = interval_holds(&reader);
    assert!(holds, "a free-running interval must still hold the clock");
    whole_file(libc::F_UNLCK);
    wait_for("synchronized again", &|| {
        interval_holds(&reader).1 == hrts_core::BoundStatus::Synchronized
    });
    let info = key_values(&run_ok(host.hrts(), &["info"]));
    assert!(info["service"].starts_with("running"), "{info:?}");
    daemon.stop();
}
