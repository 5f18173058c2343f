//! `hrts sync`, `hrts trace` and `hrts merge` as a user runs them: two "hosts"
//! (two segments) and a master on loopback.

mod common;

use common::{value, Segment};
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Output, Stdio};

fn run(mut c: Command, stdin: &str) -> Output {
    let mut child = c
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn hrts");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

fn ok(c: Command, stdin: &str) -> String {
    let out = run(c, stdin);
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{}{}",
        text,
        String::from_utf8_lossy(&out.stderr)
    );
    text
}

/// The run's key, shared by the master and its clients.
const KEY: &str = "5eb1c0ffee0ddba11f00dfacade0b0e5";

#[test]
fn two_hosts_sync_record_and_merge() {
    let (alpha, beta) = (Segment::new(), Segment::new());
    let dir = std::env::temp_dir().join(format!("hrts-cli-trace-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = |name: &str| dir.join(name).to_str().unwrap().to_string();

    let mut master = alpha.command();
    master
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
        .env("HRTS_SYNC_KEY", KEY)
        .stdout(Stdio::piped());
    let mut master = master.spawn().unwrap();
    let mut lines = BufReader::new(master.stdout.take().unwrap()).lines();
    let first = lines.next().unwrap().unwrap();
    let addr = first.strip_prefix("listening: ").expect(&first).to_string();

    let sync = |phase: &str| {
        let mut c = beta.command();
        c.args([
            "sync",
            "--master",
            &addr,
            "--out",
            &p("beta.sync"),
            "--host",
            "beta",
        ])
        .args(["--exchanges", "20"])
        .env("HRTS_SYNC_KEY", KEY);
        let out = ok(c, "");
        assert_eq!(value(&out, "phase:"), phase);
        assert!(value(&out, "bound ns:").parse::<f64>().unwrap() > 0.0);
        assert!(
            value(&out, "local minus master ns:")
                .parse::<f64>()
                .unwrap()
                .abs()
                < 1e6
        );
    };
    sync("start");
    let mut c = beta.command();
    c.args(["trace", "record", "--out", &p("beta.htr")])
        .env("HRTS_TRACE_HOST", "beta");
    let stamps = ok(c, "# a comment\nbegin work\n\nsend request 1 hello there\n");
    assert_eq!(stamps.lines().count(), 2, "{stamps}");
    let mut c = alpha.command();
    c.args(["trace", "record", "--out", &p("alpha.htr")])
        .env("HRTS_TRACE_HOST", "alpha");
    ok(c, "recv request 1\n");
    let mut c = beta.command();
    c.args(["trace", "record", "--out", &p("beta2.htr")])
        .env("HRTS_TRACE_HOST", "beta");
    ok(c, "end work\n");
    sync("end");
    let served: Vec<String> = lines.map(Result::unwrap).collect();
    assert!(master.wait().unwrap().success());
    let served = served.join("\n");
    let run_ns = value(&served, "run wall ns:");

    // The master's own clock may not append to beta's file.
    let mut c = alpha.command();
    c.args(["sync", "--master", &addr, "--out", &p("beta.sync")])
        .env("HRTS_SYNC_KEY", KEY);
    let out = run(c, "");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("another clock"));

    let mut c = common::command();
    c.args([
        "merge",
        &p("alpha.htr"),
        &p("beta.htr"),
        &p("beta2.htr"),
        &p("beta.sync"),
    ])
    .args(["--out", &p("g.htr"), "--json", &p("g.json")]);
    let report = ok(c, "");
    assert!(
        report.contains("causality hrts: 1 messages, 0 violations"),
        "{report}"
    );
    assert!(
        report.contains("clock host=alpha processes=1 mapping=master-clock"),
        "{report}"
    );
    assert!(
        report.contains("clock host=beta processes=3 mapping=fit"),
        "{report}"
    );
    assert!(
        report.contains("unique: 4 events, 0 sharing a global stamp, 0 out of"),
        "{report}"
    );

    let mut c = common::command();
    c.args(["trace", "info", &p("g.htr")]);
    let info = ok(c, "");
    assert_eq!(value(&info, "kind:"), "global");
    assert_eq!(
        value(&info, "run wall ns:"),
        run_ns,
        "the run lasts what the master measured"
    );
    let mut c = common::command();
    c.args(["trace", "dump", &p("g.htr")]);
    let dump = ok(c, "");
    assert_eq!(
        dump.lines().filter(|l| l.starts_with("g ")).count(),
        4,
        "{dump}"
    );
    assert!(dump.contains(" send 1 "), "{dump}");
    let json: String = std::fs::read_to_string(p("g.json")).unwrap();
    assert!(json.starts_with("{\"displayTimeUnit\""));

    // Mistakes: exit 2 for usage, 3 for files that are not traces.
    let mut c = beta.command();
    c.args(["trace", "record", "--out", &p("bad.htr")]);
    let out = run(c, "fly away\n");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("stdin line 1"));
    std::fs::write(p("foreign.htr"), "hello").unwrap();
    let mut c = common::command();
    c.args(["merge", &p("foreign.htr"), "--out", &p("x.htr")]);
    let out = run(c, "");
    assert_eq!(out.status.code(), Some(3));
    let mut c = common::command();
    c.args(["merge", "--out", &p("x.htr")]);
    assert_eq!(run(c, "").status.code(), Some(2));
    let mut c = common::command();
    c.args(["sync", "--help"]);
    assert!(ok(c, "").contains("hrts sync serve --listen"));
    let _ = std::fs::remove_dir_all(&dir);
}
