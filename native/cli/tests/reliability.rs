//! What an attached process does not control must not crash it, lie to it or
//! make it repeat a number: real `hrts` processes, killed with SIGKILL, left
//! unreaped, run as other users.
//!
//! The tests that need other users (a directory planted by `nobody`, an unlink
//! by someone who may not) run only as root, which can create files for other
//! uids and start processes as them; elsewhere they say so and pass.

use std::io::Read;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

mod common;
use common::Segment;

const NOBODY: u32 = 65534;

fn is_root() -> bool {
    hrts_core::process::euid() == 0
}

/// A directory of this test, removed on drop.
struct Scratch(PathBuf);

impl Scratch {
    fn new(tag: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!("hrts-rel-{}-{tag}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        // Other uids this test runs `hrts` as must reach files inside.
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
        Scratch(dir)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// `hrts` on `seg` with no sequence settings from the caller's environment.
fn hrts(seg: &Segment) -> Command {
    let mut c = seg.command();
    for var in ["HRTS_SEQ_FILE", "HRTS_SEQ_INTERVAL"] {
        c.env_remove(var);
    }
    c
}

fn chown(path: &Path, uid: u32) {
    std::os::unix::fs::lchown(path, Some(uid), Some(uid)).unwrap();
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The state letter of `/proc/<pid>/stat`.
fn proc_state(pid: u32) -> Option<char> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat[stat.rfind(')')? + 1..].trim_start().chars().next()
}

/// Waits until `child`, killed and not reaped, is a zombie.
fn await_zombie(child: &Child) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while proc_state(child.id()) != Some('Z') {
        assert!(
            Instant::now() < deadline,
            "pid {} never became a zombie",
            child.id()
        );
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// Complete lines (a kill may cut the last one) of a finished `hrts seq`'s output.
fn numbers(path: &Path) -> Vec<u64> {
    let mut text = String::new();
    std::fs::File::open(path)
        .unwrap()
        .read_to_string(&mut text)
        .unwrap();
    let complete = &text[..text.rfind('\n').map_or(0, |i| i + 1)];
    complete
        .lines()
        .map(|l| l.parse().unwrap_or_else(|_| panic!("bad line {l:?}")))
        .collect()
}

/// Waits until `path` has some output (the process got its segment and a block).
fn await_output(path: &Path, child: &mut Child) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while std::fs::metadata(path).map_or(0, |m| m.len()) == 0 {
        if let Some(status) = child.try_wait().unwrap() {
            panic!("hrts seq exited early: {status}");
        }
        assert!(Instant::now() < deadline, "no output in {}", path.display());
        std::thread::sleep(Duration::from_millis(2));
    }
}

/// `hrts seq` with its output in `out`.
fn spawn_seq(mut cmd: Command, out: &Path) -> Child {
    cmd.args(["seq", "100000000"])
        .stdout(std::fs::File::create(out).unwrap())
        .spawn()
        .unwrap()
}

/// Kills (SIGKILL) and reaps, then checks that no number was issued twice and
/// that every process issued some. Returns each process's numbers.
fn kill_and_check(children: Vec<(Child, PathBuf)>) -> Vec<Vec<u64>> {
    let mut per_process = Vec::new();
    for (mut child, out) in children {
        child.kill().unwrap();
        child.wait().unwrap();
        per_process.push(numbers(&out));
    }
    let mut all: Vec<u64> = per_process.iter().flatten().copied().collect();
    let n = all.len();
    all.sort_unstable();
    let mut repeated: Vec<u64> = all
        .windows(2)
        .filter(|w| w[0] == w[1])
        .map(|w| w[0])
        .collect();
    repeated.dedup();
    assert!(
        repeated.is_empty(),
        "{} of {n} numbers issued twice, e.g. {:?}",
        repeated.len(),
        &repeated[..repeated.len().min(5)]
    );
    for (i, nums) in per_process.iter().enumerate() {
        assert!(!nums.is_empty(), "process {i} issued nothing");
        assert!(
            nums.windows(2).all(|w| w[0] < w[1]),
            "process {i} not increasing"
        );
    }
    per_process
}

#[test]
fn seq_never_repeats_across_five_unlinks_while_old_processes_keep_counting() {
    let seg = Segment::new();
    let dir = Scratch::new("unlink");
    let mut children = Vec::new();
    let mut at_unlink = Vec::new();
    for round in 0..5 {
        let out = dir.0.join(format!("round-{round}.txt"));
        // The default file, <state>/hrts/<segment>.seq: old and new segments share it.
        let mut cmd = hrts(&seg);
        cmd.env("XDG_STATE_HOME", dir.0.join("state"))
            .env("HRTS_SEQ_INTERVAL", "100");
        let mut child = spawn_seq(cmd, &out);
        await_output(&out, &mut child);
        std::thread::sleep(Duration::from_millis(100));
        let out_len = std::fs::metadata(&out).unwrap().len();
        let unlinked = hrts(&seg).arg("unlink").output().unwrap();
        assert!(unlinked.status.success(), "{}", text(&unlinked.stderr));
        assert!(text(&unlinked.stdout).starts_with("removed"));
        at_unlink.push(out_len);
        children.push((child, out));
    }
    std::thread::sleep(Duration::from_millis(300));
    let outs: Vec<PathBuf> = children.iter().map(|(_, o)| o.clone()).collect();
    kill_and_check(children);
    // The scenario happened: processes on unlinked segments went on counting.
    for (round, out) in outs.iter().enumerate() {
        let len = std::fs::metadata(out).unwrap().len();
        assert!(
            len > at_unlink[round],
            "round {round}: nothing issued after its segment was unlinked"
        );
    }
    let file = dir
        .0
        .join("state/hrts")
        .join(format!("{}.seq", &seg.0[1..]));
    assert!(file.exists(), "{}", file.display());
}

#[test]
fn two_segments_naming_one_sequence_file_never_share_a_number() {
    let (a, b) = (Segment::new(), Segment::new());
    let dir = Scratch::new("shared");
    let file = dir.0.join("state/shared.seq");
    let mut children = Vec::new();
    for (i, seg) in [&a, &b, &a, &b].into_iter().enumerate() {
        let out = dir.0.join(format!("p{i}.txt"));
        let mut cmd = hrts(seg);
        cmd.env("HRTS_SEQ_FILE", &file)
            .env("HRTS_SEQ_INTERVAL", if i % 2 == 0 { "70" } else { "30" });
        let mut child = spawn_seq(cmd, &out);
        await_output(&out, &mut child);
        children.push((child, out));
    }
    std::thread::sleep(Duration::from_millis(400));
    kill_and_check(children);
}

#[cfg(feature = "testing")]
#[test]
fn a_writer_killed_holding_the_base_and_not_reaped_does_not_block_reset() {
    let seg = Segment::new();
    let mut holder = common::spawn_writer_holder(&seg);
    holder.kill().unwrap(); // SIGKILL; not reaped until the end
    await_zombie(&holder);
    let reset = hrts(&seg).arg("reset").output().unwrap();
    assert!(
        reset.status.success(),
        "a zombie holds nothing: {}",
        text(&reset.stderr)
    );
    assert!(
        text(&reset.stdout).contains("generation: 2\n"),
        "{}",
        text(&reset.stdout)
    );
    holder.wait().unwrap();
}

#[test]
fn a_creator_killed_while_calibrating_and_not_reaped_is_replaced() {
    let mut took_over = false;
    for attempt in 0..10 {
        let seg = Segment::new();
        let mut creator = hrts(&seg).arg("now").stdout(Stdio::null()).spawn().unwrap();
        // Calibration alone takes about 100 ms; process start and segment
        // creation take a few.
        std::thread::sleep(Duration::from_millis(25 + 5 * attempt));
        creator.kill().unwrap();
        await_zombie(&creator);
        let info = hrts(&seg).arg("info").output().unwrap();
        creator.wait().unwrap();
        assert!(
            info.status.success(),
            "a zombie creator initialises nothing: {}",
            text(&info.stderr)
        );
        if text(&info.stdout).contains("opened: took-over\n") {
            took_over = true;
            break;
        }
    }
    assert!(
        took_over,
        "no attempt killed the creator mid-initialisation"
    );
}

/// `hrts` as another user, with no HOME or XDG_STATE_HOME (as services often run).
fn as_user(cmd: &mut Command, uid: u32) -> &mut Command {
    cmd.uid(uid)
        .gid(uid)
        .env_remove("HOME")
        .env_remove("XDG_STATE_HOME")
}

fn output(cmd: &mut Command) -> Output {
    cmd.output().unwrap()
}

#[test]
fn unlink_by_a_user_who_may_not_remove_the_segment_says_so_and_fails() {
    if !is_root() {
        eprintln!("skipped: needs root to run hrts as another user");
        return;
    }
    let seg = Segment::new();
    assert!(output(hrts(&seg).arg("now")).status.success());
    let denied = output(as_user(hrts(&seg).arg("unlink"), NOBODY));
    let (out, err) = (text(&denied.stdout), text(&denied.stderr));
    assert_eq!(
        denied.status.code(),
        Some(3),
        "stdout {out:?} stderr {err:?}"
    );
    assert!(!out.contains("did not exist"), "{out}");
    assert!(
        err.contains(&format!("segment {} was not removed", seg.0)),
        "{err}"
    );
    assert!(err.contains("only its owner or root"), "{err}");
    let info = output(hrts(&seg).arg("info"));
    assert!(
        text(&info.stdout).contains("opened: attached\n"),
        "still there"
    );
}

/// A directory as another user would plant it: theirs, mode 0777, with links
/// named like hrts's temporary and lock files.
fn plant(dir: &Path, seg: &Segment, precious: &Path, chosen: &Path) {
    std::fs::create_dir_all(dir).unwrap();
    let name = &seg.0[1..];
    for pid in 0..64 {
        let link = dir.join(format!("{name}.tmp.{pid}"));
        std::os::unix::fs::symlink(precious, &link).unwrap();
        chown(&link, NOBODY);
    }
    for (link, target) in [
        (format!("{name}.tmp"), precious),
        (format!("{name}.lock"), chosen),
    ] {
        let link = dir.join(link);
        std::os::unix::fs::symlink(target, &link).unwrap();
        chown(&link, NOBODY);
    }
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o777)).unwrap();
    chown(dir, NOBODY);
}

fn entries(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn root_refuses_a_sequence_directory_another_user_controls_and_touches_nothing() {
    if !is_root() {
        eprintln!("skipped: needs root to create files of another user");
        return;
    }
    let seg = Segment::new();
    let scratch = Scratch::new("planted");
    let precious = scratch.0.join("precious");
    std::fs::write(&precious, b"root's data\n").unwrap();
    let chosen = scratch.0.join("chosen-by-attacker");
    let theirs = scratch.0.join("theirs");
    plant(&theirs, &seg, &precious, &chosen);
    let before = entries(&theirs);
    let seq = |file: &Path| output(hrts(&seg).env("HRTS_SEQ_FILE", file).args(["seq", "3"]));
    let refused = seq(&theirs.join(format!("{}.seq", &seg.0[1..])));
    let err = text(&refused.stderr);
    assert_eq!(refused.status.code(), Some(3), "{err}");
    assert!(err.contains(theirs.to_str().unwrap()), "{err}");
    assert!(err.contains(&format!("belongs to uid {NOBODY}")), "{err}");
    assert!(
        text(&refused.stdout).is_empty(),
        "no number without a safe file"
    );
    assert_eq!(std::fs::read(&precious).unwrap(), b"root's data\n");
    assert!(!chosen.exists());
    assert_eq!(
        entries(&theirs),
        before,
        "nothing added, removed or replaced"
    );

    // Root's own directory, but writable by everyone: refused as well, sticky or not.
    let open = scratch.0.join("open");
    std::fs::create_dir(&open).unwrap();
    for mode in [0o777, 0o1777, 0o775] {
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(mode)).unwrap();
        let refused = seq(&open.join("n.seq"));
        let err = text(&refused.stderr);
        assert_eq!(refused.status.code(), Some(3), "mode {mode:o}: {err}");
        assert!(err.contains("writable by other users"), "{err}");
        assert!(entries(&open).is_empty(), "mode {mode:o}");
    }
    // A private directory inside a sticky one is fine.
    std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o1777)).unwrap();
    let ok = seq(&open.join("mine/n.seq"));
    assert!(ok.status.success(), "{}", text(&ok.stderr));
    assert_eq!(text(&ok.stdout), "0\n1\n2\n");
}

#[test]
fn the_var_tmp_fallback_is_refused_when_planted_and_created_private_otherwise() {
    if !is_root() {
        eprintln!("skipped: needs root to run hrts as another user");
        return;
    }
    // A uid with no account: the victim, running hrts with no HOME (a service).
    let victim = 3_000_000 + std::process::id() % 1_000_000;
    let fallback = PathBuf::from(format!("/var/tmp/hrts-{victim}"));
    struct Remove(PathBuf);
    impl Drop for Remove {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
    let _cleanup = Remove(fallback.clone());
    let seg = Segment::new();
    let scratch = Scratch::new("fallback");
    let precious = scratch.0.join("victims-file");
    std::fs::write(&precious, b"the victim's data\n").unwrap();
    chown(&precious, victim);
    let chosen = scratch.0.join("chosen-by-attacker");
    plant(&fallback.join("hrts"), &seg, &precious, &chosen);
    std::fs::set_permissions(&fallback, std::fs::Permissions::from_mode(0o777)).unwrap();
    chown(&fallback, NOBODY);
    let before = entries(&fallback.join("hrts"));

    let seq = || output(as_user(hrts(&seg).args(["seq", "3"]), victim));
    let refused = seq();
    let err = text(&refused.stderr);
    assert_eq!(refused.status.code(), Some(3), "{err}");
    assert!(err.contains(fallback.to_str().unwrap()), "{err}");
    assert!(err.contains(&format!("belongs to uid {NOBODY}")), "{err}");
    assert!(err.contains("rm -r"), "says what to do: {err}");
    assert_eq!(std::fs::read(&precious).unwrap(), b"the victim's data\n");
    assert!(!chosen.exists());
    assert_eq!(entries(&fallback.join("hrts")), before);

    // A link planted there, to a directory of the victim's own (which the
    // attacker could later re-point to an empty one), is not followed either.
    std::fs::remove_dir_all(&fallback).unwrap();
    let victims_dir = scratch.0.join("victims-dir");
    std::fs::create_dir(&victims_dir).unwrap();
    std::fs::set_permissions(&victims_dir, std::fs::Permissions::from_mode(0o700)).unwrap();
    chown(&victims_dir, victim);
    std::os::unix::fs::symlink(&victims_dir, &fallback).unwrap();
    chown(&fallback, NOBODY);
    let refused = seq();
    let err = text(&refused.stderr);
    assert_eq!(refused.status.code(), Some(3), "{err}");
    assert!(err.contains("symbolic link of uid 65534"), "{err}");
    assert!(entries(&victims_dir).is_empty());
    std::fs::remove_file(&fallback).unwrap();

    // Without a plant, the victim's own directory is made private to it.
    let ok = seq();
    assert!(ok.status.success(), "{}", text(&ok.stderr));
    assert_eq!(text(&ok.stdout), "0\n1\n2\n");
    for dir in [fallback.clone(), fallback.join("hrts")] {
        let meta = std::fs::metadata(&dir).unwrap();
        assert_eq!(meta.uid(), victim, "{}", dir.display());
        assert_eq!(
            meta.mode() & 0o077,
            0,
            "{} mode {:o}",
            dir.display(),
            meta.mode()
        );
    }
    assert!(fallback
        .join("hrts")
        .join(format!("{}.seq", &seg.0[1..]))
        .exists());
}
