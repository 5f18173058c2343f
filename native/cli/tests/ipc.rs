//! A segment's page lives in one IPC namespace, its name in `/dev/shm`: a
//! process that shares the name but cannot reach the page gets an error, and
//! never a page (and a timeline) of its own. Real processes, real namespaces
//! (`unshare --ipc` keeps the mount namespace, so `/dev/shm` stays shared) and
//! real `IPC_SET`s.
//!
//! The namespace tests need root (`unshare --ipc`); elsewhere they say so and
//! pass.

use std::collections::HashSet;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Child, Command, Output, Stdio};

mod common;
use common::Segment;

const NOBODY: u32 = 65534;

fn is_root() -> bool {
    hrts_core::process::euid() == 0
}

/// Whether this process may make IPC namespaces; says why not otherwise.
fn can_unshare() -> bool {
    let ok = is_root()
        && Command::new("unshare")
            .args(["--ipc", "true"])
            .status()
            .is_ok_and(|s| s.success());
    if !ok {
        eprintln!("skipped: needs root and `unshare` (util-linux) to make an IPC namespace");
    }
    ok
}

/// `hrts ARGS` on `seg` in an IPC namespace of its own, same `/dev/shm`.
fn unshared(seg: &Segment, args: &[&str]) -> Command {
    let mut c = Command::new("unshare");
    c.arg("--ipc").arg(env!("CARGO_BIN_EXE_hrts")).args(args);
    // The settings common::command clears.
    for var in [
        "HRTS_GROUP",
        "HRTS_WRAP_THRESHOLD",
        "HRTS_MODE",
        "HRTS_TIE_INTERVAL_MS",
        "HRTS_MAX_SLEW_PPM",
        "HRTS_STEP_THRESHOLD_MS",
    ] {
        c.env_remove(var);
    }
    c.env("HRTS_SEGMENT", &seg.0);
    c
}

fn output(cmd: &mut Command) -> Output {
    cmd.output().unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The name's record: its first 64 bytes as the file holds them.
fn record(seg: &Segment) -> Vec<u8> {
    let mut bytes = std::fs::read(seg.shm_path()).unwrap();
    bytes.truncate(64);
    bytes
}

/// The System V id of the page the record names.
fn shmid(seg: &Segment) -> i32 {
    i32::from_ne_bytes(record(seg)[32..36].try_into().unwrap())
}

/// Sets the page's mode with `IPC_SET` (which also moves its change time).
fn ipc_set_mode(shmid: i32, mode: u16) {
    // SAFETY: zeroed is a valid shmid_ds; IPC_STAT fills it, IPC_SET reads it.
    unsafe {
        let mut ds: libc::shmid_ds = std::mem::zeroed();
        assert_eq!(libc::shmctl(shmid, libc::IPC_STAT, &mut ds), 0, "IPC_STAT");
        ds.shm_perm.mode = mode as _;
        assert_eq!(libc::shmctl(shmid, libc::IPC_SET, &mut ds), 0, "IPC_SET");
    }
}

/// Asserts exit 3 (segment refused) with every one of `words` in stderr.
fn assert_refused(out: &Output, words: &[&str]) {
    let err = text(&out.stderr);
    let stdout = text(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(3),
        "stdout ({} lines) {:?}... stderr {err:?}",
        stdout.lines().count(),
        stdout.lines().next().unwrap_or("")
    );
    for w in words {
        assert!(err.contains(w), "{w:?} missing from: {err}");
    }
}

/// `hrts unique N` or `hrts seq N`, stdout piped.
fn spawn_numbers(mut cmd: Command, what: &str, n: usize) -> Child {
    cmd.args([what, &n.to_string()])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

fn numbers(out: &Output) -> Vec<u64> {
    text(&out.stdout)
        .lines()
        .map(|l| l.parse().unwrap_or_else(|_| panic!("not a number: {l:?}")))
        .collect()
}

/// Counts values that occur more than once.
fn repeats(lists: &[&[u64]]) -> usize {
    let mut seen = HashSet::new();
    lists
        .iter()
        .flat_map(|l| l.iter())
        .filter(|v| !seen.insert(**v))
        .count()
}

const REFUSAL: &[&str] = &[
    "another IPC namespace",
    "cannot reach",
    "--ipc=host",
    "HRTS_SEGMENT",
    "hrts unlink",
];

#[test]
fn a_process_in_another_ipc_namespace_is_refused_and_changes_nothing() {
    if !can_unshare() {
        return;
    }
    let seg = Segment::new();
    assert!(output(seg.command().arg("info")).status.success());
    let before = record(&seg);
    for args in [&["now"][..], &["info"], &["unique", "3"]] {
        assert_refused(&output(&mut unshared(&seg, args)), REFUSAL);
        assert_eq!(record(&seg), before, "hrts {args:?} rewrote the record");
    }
    let info = output(seg.command().arg("info"));
    assert!(
        text(&info.stdout).contains("opened: attached\n"),
        "{}",
        text(&info.stdout)
    );
    assert_eq!(record(&seg), before);
}

#[test]
fn unique_stamps_and_sequence_numbers_from_two_ipc_namespaces_never_repeat() {
    if !can_unshare() {
        return;
    }
    let seg = Segment::new();
    let dir = std::env::temp_dir().join(format!("hrts-ipc-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let seq_file: PathBuf = dir.join("numbers.seq");
    assert!(output(seg.command().arg("info")).status.success());
    let before = record(&seg);
    let n = 300_000;
    for what in ["unique", "seq"] {
        // Both sides at once, twice each.
        let children: Vec<(bool, Child)> = (0..2)
            .flat_map(|_| {
                let mut host = seg.command();
                host.env("HRTS_SEQ_FILE", &seq_file);
                let mut other = unshared(&seg, &[]);
                other.env("HRTS_SEQ_FILE", &seq_file);
                [
                    (true, spawn_numbers(host, what, n)),
                    (false, spawn_numbers(other, what, n)),
                ]
            })
            .collect();
        let outputs: Vec<(bool, Output)> = children
            .into_iter()
            .map(|(in_host, c)| (in_host, c.wait_with_output().unwrap()))
            .collect();
        let mut lists = Vec::new();
        for (in_host, out) in &outputs {
            if *in_host {
                assert!(out.status.success(), "{}", text(&out.stderr));
                assert_eq!(numbers(out).len(), n);
            } else {
                assert_refused(out, REFUSAL);
            }
            lists.push(numbers(out));
        }
        let all: Vec<&[u64]> = lists.iter().map(Vec::as_slice).collect();
        assert_eq!(repeats(&all), 0, "{what}: numbers issued twice");
        assert_eq!(record(&seg), before, "{what}: the record was rewritten");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_page_made_in_another_ipc_namespace_is_refused_even_once_that_namespace_is_gone() {
    if !can_unshare() {
        return;
    }
    let seg = Segment::new();
    // The namespace's process makes the segment and keeps it attached.
    let mut other = unshared(&seg, &["echo"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    {
        use std::io::{BufRead, Write};
        let mut input = other.stdin.take().unwrap();
        input.write_all(b"\n").unwrap();
        let mut line = String::new();
        std::io::BufReader::new(other.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        assert!(line.trim().parse::<u64>().is_ok(), "{line:?}");
        let before = record(&seg);
        assert_refused(&output(seg.command().arg("now")), REFUSAL);
        assert_eq!(record(&seg), before);
        drop(input);
    }
    // Its last process ends: the namespace and its page are gone, the name is
    // not. Nothing here can tell that from a namespace it cannot see.
    other.wait().unwrap();
    let before = record(&seg);
    assert_refused(&output(seg.command().arg("now")), REFUSAL);
    assert_eq!(record(&seg), before);
    // The fix the message gives: remove the name (no page here to remove).
    let unlink = output(seg.command().arg("unlink"));
    assert!(unlink.status.success(), "{}", text(&unlink.stderr));
    let info = output(seg.command().arg("info"));
    assert!(
        text(&info.stdout).contains("opened: created\n"),
        "{}",
        text(&info.stdout)
    );
}

#[test]
fn a_page_whose_mode_was_changed_with_ipc_set_is_refused_never_replaced() {
    let seg = Segment::new();
    let mut cfg = hrts_core::Config::named(&seg.0);
    cfg.evaluate_reliability = false;
    // Attached before the change, stamping through it.
    let base = hrts_core::SharedBase::open(&cfg).unwrap();
    let before = record(&seg);
    let id = shmid(&seg);

    // The same mode again: only the page's change time moves. Same page, same record.
    ipc_set_mode(id, 0o600);
    let info = output(seg.command().arg("info"));
    assert!(
        text(&info.stdout).contains("opened: attached\n"),
        "{} {}",
        text(&info.stdout),
        text(&info.stderr)
    );
    assert_eq!(record(&seg), before, "an IPC_SET made the record change");

    ipc_set_mode(id, 0o640);
    let n = 200_000;
    let child = spawn_numbers(seg.command(), "unique", n);
    let mine: Vec<u64> = (0..n).map(|_| base.next_unique().unwrap()).collect();
    let out = child.wait_with_output().unwrap();
    let shm_id = format!("shm id {id}");
    let words = [
        "IPC_SET",
        "its mode 0640 is not 0600",
        &shm_id,
        "hrts unlink",
    ];
    assert_refused(&out, &words);
    assert_eq!(repeats(&[&mine, &numbers(&out)]), 0);
    assert_refused(&output(seg.command().arg("now")), &words);
    assert_eq!(record(&seg), before, "the record names another page");

    // Restored: the same page again.
    ipc_set_mode(id, 0o600);
    let info = output(seg.command().arg("info"));
    assert!(text(&info.stdout).contains("opened: attached\n"));
    assert_eq!(record(&seg), before);
}

/// Removes a System V segment at the end of the test (a page another user
/// made, which the test's own unlink does not look for).
struct RemovePage(i32);

impl Drop for RemovePage {
    fn drop(&mut self) {
        // SAFETY: IPC_RMID ignores the buffer argument.
        unsafe { libc::shmctl(self.0, libc::IPC_RMID, std::ptr::null_mut()) };
    }
}

#[test]
fn a_page_its_owner_may_no_longer_inspect_is_an_error_with_or_without_its_record() {
    if !is_root() {
        eprintln!("skipped: needs root to run hrts as another user");
        return;
    }
    let seg = Segment::new();
    let as_nobody = |args: &[&str]| {
        let mut c = seg.command();
        c.args(args)
            .uid(NOBODY)
            .gid(NOBODY)
            .env_remove("HOME")
            .env_remove("XDG_STATE_HOME");
        output(&mut c)
    };
    let made = as_nobody(&["info"]);
    assert!(made.status.success(), "{}", text(&made.stderr));
    let id = shmid(&seg);
    let _cleanup = RemovePage(id);
    ipc_set_mode(id, 0o000);
    let words = ["IPC_SET", "cannot be inspected", &format!("shm id {id}")];
    assert_refused(&as_nobody(&["now"]), &words);
    // The record lost: the page is still found by its key, and is not replaced.
    std::fs::remove_file(seg.shm_path()).unwrap();
    assert_refused(&as_nobody(&["now"]), &words);
    assert!(
        std::fs::metadata(seg.shm_path()).is_err(),
        "the failed creator removes the name it made"
    );
}
