//! Helpers shared by the `hrts` integration tests; each test binary uses a part.
#![allow(dead_code)]

use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};

#[cfg(feature = "testing")]
pub mod daemon;

/// A segment name private to one test; removed on drop, even on failure.
pub struct Segment(pub String);

impl Segment {
    pub fn new() -> Segment {
        static N: AtomicUsize = AtomicUsize::new(0);
        let n = N.fetch_add(1, Ordering::Relaxed);
        let seg = Segment(format!("/hrts-itest-{}-{n}", std::process::id()));
        let _ = hrts_core::SharedBase::unlink(&seg.0);
        seg
    }

    pub fn shm_path(&self) -> String {
        format!("/dev/shm{}", self.0)
    }

    /// `hrts` with this segment selected through HRTS_SEGMENT.
    pub fn command(&self) -> Command {
        let mut c = command();
        c.env("HRTS_SEGMENT", &self.0);
        c
    }
}

impl Drop for Segment {
    fn drop(&mut self) {
        // Page and name: removing /dev/shm/NAME alone would leave the page behind.
        let _ = hrts_core::SharedBase::unlink(&self.0);
    }
}

/// The `hrts` binary, with none of the caller's HRTS_* settings that would
/// change what the tests see.
pub fn command() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_hrts"));
    for var in [
        "HRTS_SEGMENT",
        "HRTS_GROUP",
        "HRTS_WRAP_THRESHOLD",
        "HRTS_MODE",
        "HRTS_TIE_INTERVAL_MS",
        "HRTS_MAX_SLEW_PPM",
        "HRTS_STEP_THRESHOLD_MS",
        "HRTS_CALENDAR_CLOCK",
        "HRTS_BOUND_DRIFT_PPM",
        "HRTS_BOUND_VOID_S",
        "HRTS_VMCLOCK",
    ] {
        c.env_remove(var);
    }
    c
}

#[cfg(feature = "testing")]
/// Starts `hrts debug hold-writer` on `seg` and returns once it holds the
/// writer role (it never releases it: a test kills it).
pub fn spawn_writer_holder(seg: &Segment) -> std::process::Child {
    use std::io::{BufRead, BufReader};
    let mut holder = seg
        .command()
        .args(["debug", "hold-writer"])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("spawn hrts debug hold-writer");
    let mut line = String::new();
    BufReader::new(holder.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert_eq!(line, "holding\n");
    holder
}

/// A data line of `hrts track` output: its elapsed seconds and its offset
/// from CLOCK_REALTIME, ns; `None` for a comment line.
pub fn track_sample(line: &str) -> Option<(f64, i64)> {
    if line.starts_with('#') {
        return None;
    }
    let elapsed: f64 = line.split_whitespace().next().unwrap().parse().unwrap();
    let offset: i64 = line
        .split("  offset ")
        .nth(1)
        .and_then(|r| r.split(' ').next())
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no offset in {line:?}"));
    Some((elapsed, offset))
}

/// The HOST:PORT a started `hrts stats serve` (stdout piped) says it listens
/// on, from its first line.
pub fn served_address(server: &mut std::process::Child) -> String {
    use std::io::{BufRead, BufReader};
    let mut line = String::new();
    BufReader::new(server.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    line.trim_end()
        .strip_prefix("listening on http://")
        .unwrap_or_else(|| panic!("{line:?}"))
        .to_string()
}

/// A directory of the test's own, `hrts-NAME-PID` under the temporary
/// directory, made empty; removed on drop, even when an assertion fails.
pub struct TempDir(pub std::path::PathBuf);

impl TempDir {
    pub fn new(name: &str) -> TempDir {
        let d = std::env::temp_dir().join(format!("hrts-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        TempDir(d)
    }

    /// `name` inside the directory.
    pub fn at(&self, name: &str) -> std::path::PathBuf {
        self.0.join(name)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The rest of the line of `text` that starts with `key`, trimmed (a field of
/// `hrts trace info`, `hrts info` and the like).
pub fn value<'a>(text: &'a str, key: &str) -> &'a str {
    text.lines()
        .find_map(|l| l.strip_prefix(key))
        .unwrap_or_else(|| panic!("no {key:?} in\n{text}"))
        .trim()
}

/// A statistics segment name of the test's own (`/hrts-stats-TAG-PID`), removed
/// before the test uses it and on drop, even when an assertion fails.
pub struct StatsName(pub String);

impl StatsName {
    pub fn new(tag: &str) -> StatsName {
        let seg = StatsName(format!("/hrts-stats-{tag}-{}", std::process::id()));
        let _ = hrts_stats::shared::StatsSegment::unlink(&seg.0);
        seg
    }
}

impl Drop for StatsName {
    fn drop(&mut self) {
        let _ = hrts_stats::shared::StatsSegment::unlink(&self.0);
    }
}

/// Spawns `command` with its stdout piped and returns once it has printed its
/// first line (`hrts debug stats-record` prints it when its metrics are
/// published); killed on drop.
pub fn spawn_ready(mut command: Command) -> hrts_test_support::process::Reaped {
    use std::io::{BufRead, BufReader};
    let mut child = command
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    hrts_test_support::process::Reaped(child)
}

/// `hrts stats serve --listen 127.0.0.1:0 ARGS` from `command` (an `hrts`
/// with its environment set), once it listens: the server (killed on drop)
/// and its HOST:PORT.
pub fn serve_stats(
    mut command: Command,
    args: &[&str],
) -> (hrts_test_support::process::Reaped, String) {
    let mut server = command
        .args(["stats", "serve", "--listen", "127.0.0.1:0"])
        .args(args)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let addr = served_address(&mut server);
    (hrts_test_support::process::Reaped(server), addr)
}

/// This user's per-user segment (`/hrts-<uid>`), which every host reader
/// also opens (its unique stamps and sequence numbers keep their state
/// there): removed at the end if the test made it.
pub struct OwnSegment {
    name: String,
    existed: bool,
}

impl OwnSegment {
    pub fn new() -> OwnSegment {
        let name = hrts_core::default_segment_name();
        let existed = std::path::Path::new(&format!("/dev/shm{name}")).exists();
        OwnSegment { name, existed }
    }
}

impl Drop for OwnSegment {
    fn drop(&mut self) {
        if !self.existed {
            let _ = hrts_core::SharedBase::unlink(&self.name);
        }
    }
}

/// The number after `key` in a `key value key value ...` line (`hrts debug
/// bound-check`'s report).
pub fn field(line: &str, key: &str) -> u64 {
    let words: Vec<&str> = line.split_whitespace().collect();
    let at = words
        .windows(2)
        .position(|w| w[0] == key)
        .unwrap_or_else(|| panic!("no {key} in {line}"));
    words[at + 1].parse().unwrap()
}
