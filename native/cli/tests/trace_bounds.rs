//! Traces that carry their hosts' error bounds, as a user runs them: two
//! "hosts" (two segments) whose bound a test build fixes (HRTS_TEST_BOUND),
//! recorded by real `hrts trace record` processes and merged by `hrts merge`,
//! by their intervals when both are synchronized and by the ping-pong sync
//! otherwise.

#![cfg(feature = "testing")]

mod common;

use common::{value, Segment, TempDir};
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Output, Stdio};
use std::time::Duration;

/// A bound far wider than the pipes' round trips, far narrower than the
/// pauses between the events meant to be orderable.
const WIDE: &str = "synchronized,200000000";
const UNSYNCHRONIZED: &str = "unsynchronized,16000000000";

/// A running `hrts trace record` of one host, fed one event at a time.
struct Recorder {
    child: Child,
    stdin: Option<ChildStdin>,
    out: BufReader<ChildStdout>,
}

impl Recorder {
    fn start(seg: &Segment, host: &str, bound: &str, file: &Path) -> Recorder {
        let mut child = seg
            .command()
            .args(["trace", "record", "--out"])
            .arg(file)
            .env("HRTS_TRACE_HOST", host)
            .env("HRTS_TEST_BOUND", bound)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn hrts trace record");
        let stdin = child.stdin.take();
        let out = BufReader::new(child.stdout.take().unwrap());
        Recorder { child, stdin, out }
    }

    /// Records `line` and returns its local stamp once the process printed it.
    fn event(&mut self, line: &str) -> u64 {
        let stdin = self.stdin.as_mut().unwrap();
        writeln!(stdin, "{line}").unwrap();
        stdin.flush().unwrap();
        let mut stamp = String::new();
        self.out.read_line(&mut stamp).unwrap();
        stamp
            .trim()
            .parse()
            .unwrap_or_else(|_| panic!("no stamp for {line:?}: {stamp:?}"))
    }

    fn finish(mut self) {
        drop(self.stdin.take());
        let out = self.child.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

fn run(c: &mut Command) -> Output {
    c.output().expect("run hrts")
}

fn ok(c: &mut Command) -> String {
    let out = run(c);
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    text
}

/// A process trace read back through `hrts trace info` and `dump`: each
/// event's name and local epoch ns, and the widest bound of its records.
struct Recorded {
    host: String,
    events: Vec<(String, u64)>,
    widest_ns: u64,
}

fn recorded(file: &Path) -> Recorded {
    let info = ok(common::command().args(["trace", "info"]).arg(file));
    let dump = ok(common::command().args(["trace", "dump"]).arg(file));
    let origin: u64 = value(&info, "origin ns:").parse().unwrap();
    let bits: u32 = value(&info, "event bits:").parse().unwrap();
    let tick: u64 = value(&info, "tick ns:").parse().unwrap();
    let mut events = Vec::new();
    let mut widest_ns = 0;
    for line in dump.lines() {
        let f: Vec<&str> = line.split(' ').collect();
        match f[0] {
            "e" => {
                let stamp: u64 = f[1].parse().unwrap();
                events.push((f[4].to_string(), origin + (stamp >> bits) * tick));
            }
            "b" => widest_ns = widest_ns.max(f[6].parse().unwrap()),
            _ => {}
        }
    }
    Recorded {
        host: value(&info, "host:").to_string(),
        events,
        widest_ns,
    }
}

/// The names of a global trace's events, in its order.
fn global_order(file: &Path) -> Vec<String> {
    let dump = ok(common::command().args(["trace", "dump"]).arg(file));
    dump.lines()
        .filter(|l| l.starts_with("g "))
        .map(|l| l.rsplit(' ').next().unwrap().to_string())
        .collect()
}

/// Two synchronized hosts, no master: the merge places each event at its
/// stamp ± its host's bound, reports the pair whose intervals overlap (a send
/// and its receive, moments apart) and orders the others as they happened
/// (each a second after the last). The expected pairs are worked out here
/// from the files' own records, independently of the merge.
#[test]
fn synchronized_hosts_merge_by_their_intervals_and_name_the_pairs_they_cannot_order() {
    let (alpha, beta) = (Segment::new(), Segment::new());
    let dir = TempDir::new("trace-bounds");
    let (a_file, b_file) = (dir.at("alpha.htr"), dir.at("beta.htr"));
    let mut a = Recorder::start(&alpha, "alpha", WIDE, &a_file);
    let mut b = Recorder::start(&beta, "beta", WIDE, &b_file);
    a.event("send request 1");
    b.event("recv request 1");
    std::thread::sleep(Duration::from_secs(1));
    a.event("instant alpha-after");
    std::thread::sleep(Duration::from_secs(1));
    b.event("instant beta-last");
    a.finish();
    b.finish();

    // What the files say, and the pairs that follows from it.
    let files = [recorded(&a_file), recorded(&b_file)];
    for f in &files {
        assert!(
            f.widest_ns >= 200_000_000 && f.widest_ns < 201_000_000,
            "host {}: the test bound, plus the line's error, shift and drift: {}",
            f.host,
            f.widest_ns
        );
    }
    let mut expected = Vec::new();
    for (name_a, ta) in &files[0].events {
        for (name_b, tb) in &files[1].events {
            if ta.abs_diff(*tb) <= files[0].widest_ns + files[1].widest_ns {
                expected.push((name_a.clone(), name_b.clone()));
            }
        }
    }
    assert_eq!(
        expected,
        [("request".to_string(), "request".to_string())],
        "the send and its receive are moments apart, the rest a second"
    );

    let report = ok(common::command()
        .arg("merge")
        .args([&a_file, &b_file])
        .arg("--out")
        .arg(dir.at("g.htr"))
        .arg("--json")
        .arg(dir.at("g.json")));
    assert!(report.contains("\norder: by error bounds"), "{report}");
    assert!(
        report.contains("clock host=alpha processes=1 mapping=bounds"),
        "{report}"
    );
    let bound_of = |host: &str| -> f64 {
        let line = report
            .lines()
            .find(|l| l.starts_with(&format!("clock host={host} ")))
            .unwrap();
        value(&line.replace(' ', "\n"), "bound_ns=")
            .parse()
            .unwrap()
    };
    assert_eq!(bound_of("alpha"), files[0].widest_ns as f64);
    assert_eq!(bound_of("beta"), files[1].widest_ns as f64);
    assert!(
        report.contains(
            "\nunorderable: 1 pairs of events on different hosts whose intervals overlap"
        ),
        "{report}"
    );
    let pair = value(&report, "unorderable pair:");
    let (first, second) = pair.split_once(" | ").unwrap();
    let (send_t, recv_t) = (files[0].events[0].1, files[1].events[0].1);
    let (wa, wb) = (files[0].widest_ns, files[1].widest_ns);
    assert!(
        first.starts_with("alpha pid=")
            && first.ends_with(&format!(
                " send request id=1 earliest={} latest={}",
                send_t - wa,
                send_t + wa
            )),
        "{pair}"
    );
    assert!(
        second.starts_with("beta pid=")
            && second.ends_with(&format!(
                " recv request id=1 earliest={} latest={}",
                recv_t - wb,
                recv_t + wb
            )),
        "{pair}"
    );

    // The orderable events in the order they happened.
    let order = global_order(&dir.at("g.htr"));
    let at = |name: &str| order.iter().position(|n| n == name).unwrap();
    assert_eq!(order.len(), 4, "{order:?}");
    assert!(
        at("request").max(order.iter().rposition(|n| n == "request").unwrap()) < at("alpha-after")
    );
    assert!(at("alpha-after") < at("beta-last"), "{order:?}");

    // The same in the JSON's otherData, for scripts.
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.at("g.json")).unwrap()).unwrap();
    let other = &json["otherData"];
    assert_eq!(other["order"], "bounds");
    assert_eq!(other["unorderable_pairs"], 1);
    let example = &other["unorderable_examples"][0];
    assert_eq!(example["first"]["host"], "alpha");
    assert_eq!(example["first"]["kind"], "send");
    assert_eq!(example["second"]["kind"], "recv");
    assert_eq!(example["second"]["earliest_epoch_ns"], recv_t - wb);
}

/// Rewrites a trace file as format version 1 wrote it: no BOUND records
/// (type 5), version 1, the END record's count matching.
fn as_version_1(from: &Path, to: &Path) {
    let buf = std::fs::read(from).unwrap();
    let header_len = u16::from_le_bytes([buf[10], buf[11]]) as usize;
    let mut out = buf[..header_len].to_vec();
    out[8..10].copy_from_slice(&1u16.to_le_bytes());
    let (mut pos, mut records) = (header_len, 0u64);
    while pos < buf.len() {
        let t = buf[pos];
        let len = u32::from_le_bytes(buf[pos + 1..pos + 5].try_into().unwrap()) as usize;
        let record = &buf[pos..pos + 5 + len];
        match t {
            5 => {}
            4 => {
                out.extend_from_slice(&record[..5]);
                out.extend_from_slice(&records.to_le_bytes());
                out.extend_from_slice(&record[13..]);
                records += 1;
            }
            _ => {
                out.extend_from_slice(record);
                records += 1;
            }
        }
        pos += 5 + len;
    }
    std::fs::write(to, out).unwrap();
}

/// Files without bound records (as format version 1 wrote them) merge as
/// they always did, and so do files whose records say unsynchronized: the
/// same global trace, byte for byte; the report says why the bounds were not
/// used.
#[test]
fn traces_without_bound_records_or_unsynchronized_merge_as_before() {
    let (alpha, beta) = (Segment::new(), Segment::new());
    let dir = TempDir::new("trace-bounds-old");
    std::fs::create_dir_all(dir.at("v1")).unwrap();
    let mut a = Recorder::start(&alpha, "alpha", UNSYNCHRONIZED, &dir.at("alpha.htr"));
    let mut b = Recorder::start(&beta, "beta", UNSYNCHRONIZED, &dir.at("beta.htr"));
    a.event("send request 1");
    b.event("recv request 1");
    a.event("instant done");
    a.finish();
    b.finish();
    for name in ["alpha.htr", "beta.htr"] {
        as_version_1(&dir.at(name), &dir.at(&format!("v1/{name}")));
    }
    let v1_info = ok(common::command()
        .args(["trace", "info"])
        .arg(dir.at("v1/alpha.htr")));
    assert_eq!(value(&v1_info, "format version:"), "1");
    assert_eq!(value(&v1_info, "bound records:"), "0");
    let info = ok(common::command()
        .args(["trace", "info"])
        .arg(dir.at("alpha.htr")));
    assert_eq!(value(&info, "format version:"), "2");
    assert_eq!(value(&info, "bound records:"), "2");
    assert_eq!(
        value(&info, "bound status:"),
        "unsynchronized (not synchronized throughout)"
    );

    // Relative names, so that the two global traces name the same files.
    let merge_in = |sub: &Path| {
        ok(common::command().current_dir(sub).args([
            "merge",
            "alpha.htr",
            "beta.htr",
            "--out",
            "g.htr",
            "--allow-unsynced",
        ]))
    };
    let v2 = merge_in(&dir.0);
    let v1 = merge_in(&dir.at("v1"));
    assert!(
        v2.contains(
            "\norder: by ping-pong sync, as without bound records (bounds not used: host alpha's \
             bound record in alpha.htr says unsynchronized (source test))\n"
        ),
        "{v2}"
    );
    assert!(
        v1.contains(
            "(bounds not used: host alpha has no bound record in alpha.htr (trace format \
             version 1 has none))\n"
        ),
        "{v1}"
    );
    for report in [&v1, &v2] {
        assert!(report.contains("mapping=unsynced"), "{report}");
        assert!(!report.contains("unorderable"), "{report}");
    }
    assert_eq!(
        std::fs::read(dir.at("g.htr")).unwrap(),
        std::fs::read(dir.at("v1/g.htr")).unwrap(),
        "bound records that say unsynchronized change nothing in the merge"
    );
}

/// One synchronized host and one that is not: the ping-pong sync places
/// them, as without bounds, and the report says which host kept the bounds
/// out. Without its sync rounds the merge refuses as it always did, and its
/// error says why the bounds could not stand in.
#[test]
fn one_unsynchronized_host_falls_back_to_the_ping_pong_sync_and_says_why() {
    const KEY: &str = "0123456789abcdef0123456789abcdef";
    let (alpha, beta) = (Segment::new(), Segment::new());
    let dir = TempDir::new("trace-bounds-mixed");
    let mut master = alpha
        .command()
        .args([
            "sync",
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--idle-exit",
            "20",
        ])
        .args(["--max-exchanges", "40"])
        .env("HRTS_TRACE_HOST", "alpha")
        .env("HRTS_TEST_BOUND", WIDE)
        .env("HRTS_SYNC_KEY", KEY)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(master.stdout.take().unwrap()).lines();
    let first = lines.next().unwrap().unwrap();
    let addr = first.strip_prefix("listening: ").expect(&first).to_string();
    let sync = || {
        ok(beta
            .command()
            .args([
                "sync",
                "--master",
                &addr,
                "--exchanges",
                "20",
                "--host",
                "beta",
            ])
            .arg("--out")
            .arg(dir.at("beta.sync"))
            .env("HRTS_TEST_BOUND", UNSYNCHRONIZED)
            .env("HRTS_SYNC_KEY", KEY));
    };
    sync();
    let mut b = Recorder::start(&beta, "beta", UNSYNCHRONIZED, &dir.at("beta.htr"));
    let mut a = Recorder::start(&alpha, "alpha", WIDE, &dir.at("alpha.htr"));
    b.event("send request 1");
    a.event("recv request 1");
    a.finish();
    b.finish();
    sync();
    for l in lines {
        l.unwrap();
    }
    assert!(master.wait().unwrap().success());

    let merge = |inputs: &[&str]| {
        let mut c = common::command();
        c.current_dir(&dir.0)
            .arg("merge")
            .args(inputs)
            .args(["--out", "g.htr"]);
        run(&mut c)
    };
    let out = merge(&["alpha.htr", "beta.htr", "beta.sync"]);
    let report = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{report}");
    assert!(
        report.contains(
            "\norder: by ping-pong sync, as without bound records (bounds not used: host beta's \
             bound record in beta.htr says unsynchronized (source test))\n"
        ),
        "{report}"
    );
    assert!(
        report.contains("clock host=alpha processes=1 mapping=master-clock"),
        "{report}"
    );
    assert!(
        report.contains("clock host=beta processes=2 mapping=fit"),
        "{report}"
    );
    assert!(
        report.contains("causality hrts: 1 messages, 0 violations"),
        "{report}"
    );

    let out = merge(&["alpha.htr", "beta.htr"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("never synced with the master"), "{err}");
    assert!(
        err.contains(
            "(bounds not used: host beta's bound record in beta.htr says unsynchronized (source \
             test))"
        ),
        "{err}"
    );
}
