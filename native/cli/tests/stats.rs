//! `hrts stats` against real writer processes (`hrts debug stats-record`):
//! the table, JSON and Prometheus views, `--watch`, `serve` over HTTP,
//! `unlink`, and refused segments. Every test uses a time segment and a
//! statistics segment of its own, removed when it ends.

use serde_json::Value;
use std::os::unix::fs::PermissionsExt;
use std::process::{Command, Output};
use std::sync::atomic::{AtomicUsize, Ordering};

mod common;
use common::Segment;

/// A private time segment and statistics segment; both removed on drop.
struct Place {
    time: Segment,
    stats: String,
}

impl Place {
    fn new() -> Place {
        static N: AtomicUsize = AtomicUsize::new(0);
        let stats = format!(
            "/hrts-stats-itest-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        );
        let _ = hrts_stats::shared::StatsSegment::unlink(&stats);
        Place {
            time: Segment::new(),
            stats,
        }
    }

    /// `hrts` on this place's segments (the statistics one through the environment).
    fn command(&self) -> Command {
        let mut c = self.time.command();
        c.env("HRTS_STATS_SEGMENT", &self.stats);
        c
    }

    fn run(&self, args: &[&str]) -> Output {
        self.command().args(args).output().expect("run hrts")
    }
}

impl Drop for Place {
    fn drop(&mut self) {
        let _ = hrts_stats::shared::StatsSegment::unlink(&self.stats);
        // A name a test planted that unlink refused: still ours to remove.
        let _ = std::fs::remove_file(format!("/dev/shm{}", self.stats));
    }
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8(bytes.to_vec()).unwrap()
}

/// Asserts success and returns stdout.
fn ok(o: Output) -> String {
    assert_eq!(o.status.code(), Some(0), "stderr: {}", text(&o.stderr));
    text(&o.stdout)
}

#[test]
fn without_a_segment_it_says_so_and_shows_no_process() {
    let place = Place::new();
    let out = place.run(&["stats"]);
    assert_eq!(out.status.code(), Some(0));
    let err = text(&out.stderr);
    assert!(
        err.contains("no statistics segment") && err.contains(&place.stats),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(text(&out.stdout).contains("0 processes"));
    let json: Value = serde_json::from_str(&ok(place.run(&["stats", "--json"]))).unwrap();
    assert_eq!(json["segment"], place.stats.as_str());
    assert_eq!(json["processes"], serde_json::json!([]));
    assert_eq!(json["aggregate"], serde_json::json!({}));
    let prom = ok(place.run(&["stats", "--prometheus"]));
    assert!(
        prom.contains("hrts_stats_processes{state=\"live\"} 0\n"),
        "{prom}"
    );
    // --segment wins over the environment.
    let other = format!("{}-other", place.stats);
    let json: Value =
        serde_json::from_str(&ok(place.run(&["stats", "--json", "--segment", &other]))).unwrap();
    assert_eq!(json["segment"], other.as_str());
    let out = place.run(&["stats", "unlink"]);
    assert_eq!(
        ok(out),
        format!("statistics segment {} did not exist\n", place.stats)
    );
}

#[test]
fn stats_mistakes_are_usage_errors_that_say_what_is_wrong() {
    let place = Place::new();
    let out = place.run(&["stats", "--watch", "abc"]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.starts_with("hrts: error: invalid value 'abc' for '--watch"),
        "{err}"
    );
    assert!(
        err.contains("the watch interval must be a number of seconds"),
        "{err}"
    );
    assert!(!err.contains("unknown stats command"), "{err}");
    for args in [
        &["stats", "--json", "--prometheus"][..],
        &["stats", "--count", "2"],
        &["stats", "--watch", "0"],
        &["stats", "--json", "unlink"],
        &["stats", "--watch", "1", "serve", "--listen", "127.0.0.1:0"],
        &["stats", "serve"],
        &[
            "stats",
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--head-timeout-ms",
            "0",
        ],
        &[
            "stats",
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--request-timeout-ms",
            "x",
        ],
        &[
            "stats",
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--max-connections",
            "0",
        ],
        &["stats", "fly"],
        &["stats", "unlink", "extra"],
    ] {
        let out = place.run(args);
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.starts_with("hrts: error: "), "{args:?}: {err}");
        assert!(out.stdout.is_empty(), "{args:?}");
    }
    // A head deadline beyond the whole request's is refused before listening.
    let out = place.run(&[
        "stats",
        "serve",
        "--listen",
        "127.0.0.1:0",
        "--head-timeout-ms",
        "9000",
        "--request-timeout-ms",
        "8000",
    ]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.starts_with(
            "hrts: error: --head-timeout-ms 9000 is longer than --request-timeout-ms 8000"
        ),
        "{err}"
    );
    assert!(out.stdout.is_empty());
    // --segment may stand before the subcommand too.
    let other = format!("{}-other", place.stats);
    assert_eq!(
        ok(place.run(&["stats", "--segment", &other, "unlink"])),
        format!("statistics segment {other} did not exist\n")
    );
}

#[test]
fn serve_refuses_more_connections_than_its_open_files_limit_allows() {
    use std::os::unix::process::CommandExt;
    let place = Place::new();
    let mut c = place.command();
    c.args(["stats", "serve", "--listen", "127.0.0.1:0"])
        .args(["--max-connections", "1000"]);
    // SAFETY: setrlimit is async-signal-safe and touches only the child.
    unsafe {
        c.pre_exec(|| {
            let limit = libc::rlimit {
                rlim_cur: 256,
                rlim_max: 512,
            };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &limit) == 0 {
                Ok(())
            } else {
                Err(std::io::Error::last_os_error())
            }
        });
    }
    let out = c.output().unwrap();
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    // The soft limit was raised to the hard one, and the room left said.
    assert!(
        err.starts_with(
            "hrts: error: --max-connections 1000 needs 1064 file descriptors, but this \
             process may open only 512"
        ) && err.contains("give --max-connections 448 or less"),
        "{err}"
    );
    assert!(out.stdout.is_empty());
}

#[test]
fn a_foreign_or_truncated_statistics_segment_is_refused_with_exit_3() {
    for bytes in [vec![0xA5u8; 8192], vec![0x5A; 100]] {
        let place = Place::new();
        let path = format!("/dev/shm{}", place.stats);
        std::fs::write(&path, &bytes).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        for args in [
            &["stats"][..],
            &["stats", "--json"],
            &["stats", "--prometheus"],
        ] {
            let out = place.run(args);
            assert_eq!(
                out.status.code(),
                Some(3),
                "{args:?}: {}",
                text(&out.stderr)
            );
            let err = text(&out.stderr);
            assert!(err.starts_with("hrts: error: "), "{err}");
            assert!(out.stdout.is_empty());
        }
        // Nothing was overwritten, and unlink still removes it.
        assert_eq!(std::fs::read(&path).unwrap(), bytes);
        assert!(ok(place.run(&["stats", "unlink"])).starts_with("removed statistics segment"));
    }
}

#[cfg(feature = "testing")]
mod with_writers {
    use super::*;
    use std::io::{BufRead, BufReader, Read, Write};
    use std::net::TcpStream;
    use std::process::{Child, Stdio};
    /// A child process killed (if still running) when the test ends, pass or fail.
    struct Reaped(Child);

    impl Drop for Reaped {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }

    /// An `hrts debug stats-record` process, its dump, and its stdin (closing
    /// it ends the process).
    struct Writer {
        child: Child,
        dump: Value,
    }

    impl Writer {
        fn spawn(place: &Place, args: &[&str]) -> Writer {
            Writer::spawn_with(place, &[], args)
        }

        /// A writer with these environment variables.
        fn spawn_with(place: &Place, env: &[(&str, &str)], args: &[&str]) -> Writer {
            let mut child = place
                .command()
                .envs(env.iter().copied())
                .args(["debug", "stats-record"])
                .args(args)
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .spawn()
                .expect("spawn hrts debug stats-record");
            let mut line = String::new();
            BufReader::new(child.stdout.take().unwrap())
                .read_line(&mut line)
                .unwrap();
            let dump = serde_json::from_str(&line)
                .unwrap_or_else(|e| panic!("the writer's dump {line:?}: {e}"));
            Writer { child, dump }
        }

        fn pid(&self) -> u64 {
            u64::from(self.child.id())
        }

        /// Closes stdin and waits for a clean exit.
        fn finish(mut self) {
            drop(self.child.stdin.take());
            let status = self.child.wait().unwrap();
            assert!(status.success(), "{status:?}");
        }
    }

    impl Drop for Writer {
        fn drop(&mut self) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }

    fn two_writers(place: &Place) -> (Writer, Writer) {
        let a = Writer::spawn(
            place,
            &[
                "--counter",
                "requests=3",
                "--gauge",
                "queue=2.5",
                "--timer",
                "latency=1500",
                "--repeat",
                "4",
            ],
        );
        let b = Writer::spawn(
            place,
            &[
                "--counter",
                "requests=5,errors=1",
                "--gauge",
                "queue=7",
                "--timer",
                "latency=2500000",
            ],
        );
        (a, b)
    }

    fn process(json: &Value, pid: u64) -> &Value {
        json["processes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["pid"] == pid)
            .unwrap_or_else(|| panic!("no process {pid} in {json}"))
    }

    /// The parts of a metric's dump entry that do not move with time.
    fn settled(metric: &Value) -> Value {
        let v = &metric["values"];
        serde_json::json!([
            metric["type"],
            metric["value"],
            v["count"],
            v["sum"],
            v["min"],
            v["max"]
        ])
    }

    #[test]
    fn json_shows_each_process_as_its_own_dump_and_the_aggregate() {
        let place = Place::new();
        let (a, b) = two_writers(&place);
        let json: Value = serde_json::from_str(&ok(place.run(&["stats", "--json"]))).unwrap();
        assert_eq!(json["segment"], place.stats.as_str());
        for w in [&a, &b] {
            let p = process(&json, w.pid());
            assert_eq!(p["state"], "live");
            assert_eq!(p["program"], "hrts");
            let own = w.dump.as_object().unwrap();
            for (name, metric) in own {
                assert_eq!(settled(&p["metrics"][name]), settled(metric), "{name}");
            }
        }
        let agg = &json["aggregate"];
        assert_eq!(agg["requests"]["value"], 4 * 3 + 5);
        assert_eq!(agg["errors"]["value"], 1);
        assert_eq!(agg["queue"]["value"], 7, "the newer gauge value");
        assert_eq!(agg["queue"]["values"]["count"], 5);
        assert_eq!(agg["latency"]["values"]["count"], 5);
        assert_eq!(agg["latency"]["values"]["sum"], 4 * 1500 + 2_500_000);
        assert_eq!(agg["latency"]["values"]["p99"], Value::Null);
        // Rates of one snapshot: the aggregate's is the sum of the processes'.
        let sets = [
            ("requests", "deltas"),
            ("requests", "values"),
            ("queue", "values"),
            ("latency", "values"),
        ];
        for (name, set) in sets {
            let rate = |m: &Value| m[name][set]["rate"].as_f64().unwrap();
            let parts = rate(&process(&json, a.pid())["metrics"])
                + rate(&process(&json, b.pid())["metrics"]);
            let total = rate(agg);
            assert!(
                (total - parts).abs() <= 1e-9 * parts.max(1.0) && total >= 0.0,
                "{name} {set}: aggregate rate {total}, processes' {parts}"
            );
        }
        // Writer a's four increments of 3, at most 12 in the 1 s window.
        let a_rate = process(&json, a.pid())["metrics"]["requests"]["deltas"]["rate"]
            .as_f64()
            .unwrap();
        assert!((0.0..=12.0).contains(&a_rate), "{a_rate}");
        a.finish();
        b.finish();
    }

    #[test]
    fn table_and_prometheus_show_the_recorded_values() {
        let place = Place::new();
        let (a, b) = two_writers(&place);
        let table = ok(place.run(&["stats"]));
        assert!(table.contains("(2 live, 0 exited)"), "{table}");
        let row = |pid: u64, name: &str| -> Vec<String> {
            table
                .lines()
                .find(|l| {
                    let w: Vec<&str> = l.split_whitespace().collect();
                    w.first() == Some(&pid.to_string().as_str()) && w.get(5) == Some(&name)
                })
                .unwrap_or_else(|| panic!("no row {pid} {name} in\n{table}"))
                .split_whitespace()
                .map(String::from)
                .collect()
        };
        assert_eq!(row(a.pid(), "latency")[6..8], ["1.50", "µs"]);
        assert_eq!(row(b.pid(), "latency")[6..8], ["2.50", "ms"]);
        assert_eq!(row(a.pid(), "requests")[6], "12");
        assert!(table.contains("all processes (aggregated by name)"));
        let prom = ok(place.run(&["stats", "--prometheus"]));
        // Two live processes of one program without instance ids: each with its pid.
        let labels =
            |w: &Writer| format!("program=\"hrts\",hrts_instance=\"1\",pid=\"{}\"", w.pid());
        for line in [
            format!("hrts_requests_total{{{}}} 12", labels(&a)),
            format!("hrts_requests_total{{{}}} 5", labels(&b)),
            format!("hrts_queue{{{}}} 2.5", labels(&a)),
            format!("hrts_queue{{{}}} 7.0", labels(&b)),
            format!("hrts_latency_seconds_count{{{}}} 4", labels(&a)),
            format!("hrts_latency_seconds_sum{{{}}} 0.0025", labels(&b)),
            "hrts_stats_processes{state=\"live\"} 2".to_string(),
            "# TYPE hrts_requests_per_second gauge".to_string(),
            "# TYPE hrts_queue_updates_per_second gauge".to_string(),
            "# TYPE hrts_latency_measurements_per_second gauge".to_string(),
        ] {
            assert!(prom.lines().any(|l| l == line), "no {line:?} in\n{prom}");
        }
        // The rates decay with time: present, and within what was recorded
        // (writer a: 4 increments of 3, 4 sets, 4 durations in a 1 s window).
        for (family, most) in [
            ("hrts_requests_per_second", 12.0),
            ("hrts_queue_updates_per_second", 4.0),
            ("hrts_latency_measurements_per_second", 4.0),
        ] {
            let prefix = format!("{family}{{{}}} ", labels(&a));
            let value: f64 = prom
                .lines()
                .find_map(|l| l.strip_prefix(&prefix))
                .unwrap_or_else(|| panic!("no {prefix:?} in\n{prom}"))
                .parse()
                .unwrap();
            assert!((0.0..=most).contains(&value), "{family}: {value}");
        }
        assert!(table.lines().any(|l| l.ends_with("RATE/S")), "{table}");
        a.finish();
        b.finish();
    }

    /// The `hrts_requests_total` lines of `hrts stats --prometheus` (and ARGS).
    fn requests_lines(place: &Place, args: &[&str]) -> Vec<String> {
        let mut all = vec!["stats", "--prometheus"];
        all.extend(args);
        ok(place.run(&all))
            .lines()
            .filter(|l| l.starts_with("hrts_requests_total{"))
            .map(String::from)
            .collect()
    }

    #[test]
    fn a_named_service_keeps_its_series_across_a_restart() {
        let place = Place::new();
        let env = [
            ("HRTS_STATS_PROGRAM", "checkout"),
            ("HRTS_STATS_INSTANCE_ID", "eu-1"),
        ];
        let first = Writer::spawn_with(&place, &env, &["--counter", "requests_total=4"]);
        let json: Value = serde_json::from_str(&ok(place.run(&["stats", "--json"]))).unwrap();
        let p = process(&json, first.pid());
        assert_eq!(
            (&p["program"], &p["instance_id"]),
            (&"checkout".into(), &"eu-1".into())
        );
        let want = |v: u32| {
            format!("hrts_requests_total{{program=\"checkout\",hrts_instance=\"eu-1\"}} {v}")
        };
        assert_eq!(requests_lines(&place, &[]), [want(4)]);
        let first_pid = first.pid();
        first.finish();
        // Exited, not restarted: still its series.
        assert_eq!(requests_lines(&place, &[]), [want(4)]);
        // The restart (another pid) takes the series over at once; no pid label.
        let second = Writer::spawn_with(&place, &env, &["--counter", "requests_total=1"]);
        assert_ne!(second.pid(), first_pid);
        assert_eq!(requests_lines(&place, &[]), [want(1)]);
        let prom = ok(place.run(&["stats", "--prometheus"]));
        assert!(
            prom.contains("hrts_stats_processes{state=\"exited\"} 1\n"),
            "{prom}"
        );
        assert!(!prom.contains("pid="), "{prom}");
        assert!(!prom.contains("_total_total"), "{prom}");
        // --pid-label: both registrations, each with its pid.
        let mut with_pid = requests_lines(&place, &["--pid-label"]);
        with_pid.sort();
        let labelled = |pid: u64, v: u32| {
            format!(
                "hrts_requests_total{{program=\"checkout\",hrts_instance=\"eu-1\",pid=\"{pid}\"}} {v}"
            )
        };
        let mut expected = vec![labelled(first_pid, 4), labelled(second.pid(), 1)];
        expected.sort();
        assert_eq!(with_pid, expected);
        second.finish();
    }

    #[test]
    fn a_service_name_the_slot_cannot_keep_is_refused_with_what_to_do() {
        let place = Place::new();
        for (var, value) in [
            ("HRTS_STATS_PROGRAM", "a-service-name-of-more-than-31-bytes"),
            ("HRTS_STATS_INSTANCE_ID", "tab\there"),
        ] {
            let out = place
                .command()
                .env(var, value)
                .args(["debug", "stats-record", "--counter", "n=1"])
                .stdin(Stdio::null())
                .output()
                .unwrap();
            let err = text(&out.stderr);
            assert!(!out.status.success(), "{var}: {err}");
            assert!(
                err.contains(var) && err.contains("1 to 31 bytes"),
                "{var}: {err}"
            );
        }
    }

    #[test]
    fn watch_prints_count_frames() {
        let place = Place::new();
        let w = Writer::spawn(&place, &["--counter", "n=1"]);
        let out = ok(place.run(&["stats", "--json", "--watch", "0.05", "--count", "3"]));
        let frames: Vec<Value> = out
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(frames.len(), 3, "{out}");
        for f in &frames {
            assert_eq!(process(f, w.pid())["metrics"]["n"]["value"], 1);
        }
        assert!(
            !out.contains('\x1b'),
            "no terminal codes when not on a terminal"
        );
        w.finish();
    }

    /// One HTTP/1.1 exchange: status, headers (lower-cased names) and body.
    fn http(addr: &str, method: &str, path: &str) -> (u16, Vec<(String, String)>, String) {
        http_with(addr, method, path, "")
    }

    /// A request with extra header lines (each ending in CRLF).
    fn http_with(
        addr: &str,
        method: &str,
        path: &str,
        extra: &str,
    ) -> (u16, Vec<(String, String)>, String) {
        let mut s = TcpStream::connect(addr).unwrap();
        write!(
            s,
            "{method} {path} HTTP/1.1\r\nHost: {addr}\r\n{extra}Connection: close\r\n\r\n"
        )
        .unwrap();
        let mut raw = String::new();
        s.read_to_string(&mut raw).unwrap();
        let (head, body) = raw.split_once("\r\n\r\n").unwrap();
        let mut lines = head.lines();
        let status = lines
            .next()
            .unwrap()
            .split(' ')
            .nth(1)
            .unwrap()
            .parse()
            .unwrap();
        let headers = lines
            .filter_map(|l| l.split_once(": "))
            .map(|(k, v)| (k.to_ascii_lowercase(), v.to_string()))
            .collect();
        (status, headers, body.to_string())
    }

    fn header<'a>(headers: &'a [(String, String)], name: &str) -> Option<&'a str> {
        headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    #[test]
    fn serve_answers_metrics_and_json_until_terminated() {
        let place = Place::new();
        let mut server = Reaped(
            place
                .command()
                .args([
                    "stats",
                    "serve",
                    "--listen",
                    "127.0.0.1:0",
                    "--refresh-ms",
                    "0",
                ])
                .stdout(Stdio::piped())
                .spawn()
                .unwrap(),
        );
        let addr = common::served_address(&mut server.0);
        assert!(!addr.ends_with(":0"), "the real port: {addr}");
        // Before any writer: no segment, no process.
        let (status, _, body) = http(&addr, "GET", "/metrics");
        assert_eq!(status, 200);
        assert!(
            body.contains("hrts_stats_processes{state=\"live\"} 0\n"),
            "{body}"
        );
        // --refresh-ms 0: a snapshot per request, a writer started now is in the next one.
        let w = Writer::spawn(&place, &["--counter", "hits=9"]);
        let (status, headers, body) = http(&addr, "GET", "/metrics");
        assert_eq!(status, 200);
        assert_eq!(
            header(&headers, "content-type"),
            Some("text/plain; version=0.0.4; charset=utf-8")
        );
        let want = "hrts_hits_total{program=\"hrts\",hrts_instance=\"1\"} 9";
        assert!(body.lines().any(|l| l == want), "{body}");
        // What Prometheus asks for: OpenMetrics first, 0.0.4 as the fallback.
        let prometheus_accept = "Accept: application/openmetrics-text;version=1.0.0,\
            application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,\
            */*;q=0.1\r\n";
        let (status, headers, om) = http_with(&addr, "GET", "/metrics", prometheus_accept);
        assert_eq!(status, 200);
        assert_eq!(
            header(&headers, "content-type"),
            Some("application/openmetrics-text; version=1.0.0; charset=utf-8")
        );
        assert!(om.lines().any(|l| l == want), "{om}");
        assert!(om.contains("# TYPE hrts_hits counter\n"), "{om}");
        assert!(om.ends_with("# EOF\n"), "{om}");
        // Declined (q=0) or plain text only: the 0.0.4 format.
        for accept in [
            "Accept: application/openmetrics-text;q=0,text/plain;version=0.0.4\r\n",
            "Accept: text/plain\r\n",
        ] {
            let (_, headers, _) = http_with(&addr, "GET", "/metrics", accept);
            assert_eq!(
                header(&headers, "content-type"),
                Some("text/plain; version=0.0.4; charset=utf-8"),
                "{accept}"
            );
        }
        let (status, headers, body) = http(&addr, "GET", "/stats.json?pretty=no");
        assert_eq!(status, 200);
        assert_eq!(header(&headers, "content-type"), Some("application/json"));
        let json: Value = serde_json::from_str(&body).unwrap();
        assert_eq!(process(&json, w.pid())["metrics"]["hits"]["value"], 9);
        assert_eq!(http(&addr, "GET", "/").0, 404);
        assert_eq!(http(&addr, "GET", "/metrics/x").0, 404);
        let (status, headers, _) = http(&addr, "POST", "/metrics");
        assert_eq!(status, 405);
        assert_eq!(header(&headers, "allow"), Some("GET, HEAD"));
        assert_eq!(http(&addr, "DELETE", "/stats.json").0, 405);
        // SAFETY: kill has no memory effects; the pid is our own child's.
        assert_eq!(
            unsafe { libc::kill(server.0.id() as i32, libc::SIGTERM) },
            0
        );
        let status = server.0.wait().unwrap();
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(status.signal(), Some(libc::SIGTERM));
        w.finish();
    }

    /// The kill loop from the command line: writers killed with SIGKILL
    /// while they record, 50 rounds; `hrts stats --json` answers every round,
    /// lists the survivor as live with exactly what it dumped, and every
    /// killed writer it still lists as exited.
    #[test]
    fn stats_keeps_working_while_writers_are_killed() {
        let place = Place::new();
        let survivor = Writer::spawn(
            &place,
            &[
                "--counter",
                "kept=7",
                "--timer",
                "kept.t=1000",
                "--repeat",
                "3",
            ],
        );
        let mut rng = 0x2545_f491_4f6c_dd1du64;
        for round in 0..50 {
            let victim = Reaped(
                place
                    .command()
                    .args(["debug", "stats-record", "--counter", "doomed=1"])
                    .args(["--gauge", "doomed.g=2", "--repeat", "100000000"])
                    .stdin(Stdio::piped())
                    .stdout(Stdio::null())
                    .spawn()
                    .expect("spawn a writer"),
            );
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            std::thread::sleep(std::time::Duration::from_millis(5 + rng % 40));
            let victim_pid = u64::from(victim.0.id());
            drop(victim); // SIGKILL, then reaped
            let json: Value = serde_json::from_str(&ok(place.run(&["stats", "--json"])))
                .unwrap_or_else(|e| panic!("round {round}: {e}"));
            let me = process(&json, survivor.pid());
            assert_eq!(me["state"], "live", "round {round}");
            for name in ["kept", "kept.t"] {
                assert_eq!(
                    settled(&me["metrics"][name]),
                    settled(&survivor.dump[name]),
                    "round {round}: {name}"
                );
            }
            if let Some(v) = json["processes"]
                .as_array()
                .unwrap()
                .iter()
                .find(|p| p["pid"] == victim_pid)
            {
                assert_eq!(v["state"], "exited", "round {round}");
            }
        }
        survivor.finish();
    }

    #[test]
    fn unlink_removes_the_statistics_segment() {
        let place = Place::new();
        Writer::spawn(&place, &["--counter", "n=1"]).finish();
        assert_eq!(
            ok(place.run(&["stats", "unlink"])),
            format!("removed statistics segment {}\n", place.stats)
        );
        assert_eq!(
            ok(place.run(&["stats", "unlink"])),
            format!("statistics segment {} did not exist\n", place.stats)
        );
        let out = place.run(&["stats"]);
        assert!(text(&out.stderr).contains("no statistics segment"));
    }
}
