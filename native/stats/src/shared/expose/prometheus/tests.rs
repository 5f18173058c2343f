use super::super::tests::{sample, scrape};
use super::*;
use crate::shared::aggregate::tests::{counter, gauge, process, snapshot, timer};
use std::collections::HashMap;

/// OpenMetrics 1.0 text: every sample belongs to the family its TYPE line
/// names (a counter's samples add `_total` to it, a summary's `_sum` and
/// `_count`), timer families in seconds carry UNIT, the last line is EOF,
/// and the values are those of the 0.0.4 rendering.
#[test]
fn openmetrics_names_families_as_the_format_requires() {
    let snap = sample();
    let om = snap.to_prometheus_with(PrometheusOptions {
        openmetrics: true,
        ..Default::default()
    });
    assert!(om.ends_with("# EOF\n"), "{om}");
    assert_eq!(om.matches("# EOF").count(), 1);
    let mut types: HashMap<String, String> = HashMap::new();
    for line in om.lines() {
        if let Some(rest) = line.strip_prefix("# TYPE ") {
            let (name, kind) = rest.split_once(' ').unwrap();
            types.insert(name.to_string(), kind.to_string());
        }
    }
    assert_eq!(types["hrts_requests"], "counter", "{om}");
    assert!(!types.contains_key("hrts_requests_total"), "{om}");
    assert_eq!(types["hrts_latency_seconds"], "summary", "{om}");
    assert!(om.contains("# UNIT hrts_latency_seconds seconds\n"), "{om}");
    for line in om.lines().filter(|l| !l.starts_with('#')) {
        let name = line.split(['{', ' ']).next().unwrap();
        let family = types
            .keys()
            .filter(|f| {
                let kind = &types[f.as_str()];
                let suffixes: &[&str] = match kind.as_str() {
                    "counter" => &["_total"],
                    "summary" => &["", "_sum", "_count"],
                    _ => &[""],
                };
                suffixes.iter().any(|s| name == format!("{f}{s}"))
            })
            .count();
        assert_eq!(
            family, 1,
            "sample {line:?} belongs to no family (or two): {om}"
        );
    }
    // The same samples as the 0.0.4 text, which differs only in those lines.
    let text = snap.to_prometheus();
    let samples = |t: &str| {
        t.lines()
            .filter(|l| !l.starts_with('#'))
            .map(str::to_string)
            .collect::<Vec<_>>()
    };
    assert_eq!(samples(&om), samples(&text));
}

/// The value of the sample `metric` of the process with pid `who` (its
/// program is `p<pid>`), or with label state = `who`.
fn value_of(s: &prometheus_parse::Scrape, metric: &str, who: &str) -> prometheus_parse::Value {
    let found: Vec<_> = s
        .samples
        .iter()
        .filter(|x| {
            x.metric == metric
                && (x.labels.get("program") == Some(&format!("p{who}"))
                    || x.labels.get("state") == Some(who))
        })
        .collect();
    assert_eq!(found.len(), 1, "{metric} {who}: {found:?}");
    found[0].value.clone()
}

#[test]
fn prometheus_parser_reads_back_every_value() {
    use prometheus_parse::Value as V;
    let text = sample().to_prometheus();
    let s = scrape(&text);
    assert_eq!(value_of(&s, "hrts_stats_processes", "live"), V::Gauge(2.0));
    assert_eq!(
        value_of(&s, "hrts_stats_processes", "exited"),
        V::Gauge(1.0)
    );
    assert_eq!(value_of(&s, "hrts_requests_total", "100"), V::Counter(5.0));
    assert_eq!(value_of(&s, "hrts_requests_total", "200"), V::Counter(7.0));
    assert_eq!(value_of(&s, "hrts_requests_total", "300"), V::Counter(2.0));
    assert_eq!(value_of(&s, "hrts_queue_size", "100"), V::Gauge(3.5));
    assert_eq!(value_of(&s, "hrts_queue_size", "200"), V::Gauge(2.0));
    assert_eq!(
        value_of(&s, "hrts_latency_seconds_count", "100"),
        V::Untyped(2.0)
    );
    assert_eq!(
        value_of(&s, "hrts_latency_seconds_sum", "100"),
        V::Untyped(4e-6)
    );
    assert_eq!(
        value_of(&s, "hrts_latency_seconds_sum", "200"),
        V::Untyped(3e-3)
    );
    let V::Summary(q) = value_of(&s, "hrts_latency_seconds", "200") else {
        panic!("a timer is a summary")
    };
    assert_eq!(q.len(), 4);
    for (c, level) in q.iter().zip(QUANTILES) {
        assert_eq!(c.quantile, level);
        assert_eq!(c.count, 3e-3, "one datum: every quantile is it");
    }
    let sample = s
        .samples
        .iter()
        .find(|x| x.metric == "hrts_queue_size")
        .unwrap();
    assert_eq!(sample.labels.get("program"), Some("p100"));
    assert_eq!(sample.labels.get("hrts_instance"), Some("1"));
    assert_eq!(s.docs["hrts_queue_size"], "hrts gauge \"queue size\"");
    // The rates: a counter's net change, a gauge's sets and a timer's
    // measurements per second (the samples' data all in the window of 1 s).
    assert_eq!(
        value_of(&s, "hrts_requests_per_second", "100"),
        V::Gauge(2.0)
    );
    assert_eq!(
        value_of(&s, "hrts_requests_per_second", "300"),
        V::Gauge(3.0)
    );
    assert_eq!(
        value_of(&s, "hrts_queue_size_updates_per_second", "200"),
        V::Gauge(1.0)
    );
    assert_eq!(
        value_of(&s, "hrts_latency_measurements_per_second", "100"),
        V::Gauge(2.0)
    );
    assert_eq!(
        s.docs["hrts_requests_per_second"],
        "hrts counter \"requests\": net change of its value per second over the moving interval"
    );
}

/// Checks the text exposition format 0.0.4 line by line: one HELP and one
/// TYPE per family before its samples, all samples of a family together,
/// sample names of the family's kind, valid names, labels and values.
/// Returns the families' names and types.
fn check_exposition(text: &str) -> Vec<(String, String)> {
    fn valid_name(n: &str) -> bool {
        let mut b = n.bytes();
        b.next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == b'_' || c == b':')
            && b.all(|c| c.is_ascii_alphanumeric() || c == b'_' || c == b':')
    }
    assert!(text.ends_with('\n'));
    let mut families: Vec<(String, String)> = Vec::new();
    let mut help: Option<String> = None;
    let mut closed: HashSet<String> = HashSet::new();
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("# HELP ") {
            let name = rest.split(' ').next().unwrap();
            assert!(valid_name(name), "{line}");
            assert!(
                families.iter().all(|(f, _)| f != name),
                "second HELP: {line}"
            );
            if let Some((last, _)) = families.last() {
                closed.insert(last.clone());
            }
            help = Some(name.to_string());
            continue;
        }
        if let Some(rest) = line.strip_prefix("# TYPE ") {
            let (name, ty) = rest.split_once(' ').unwrap();
            assert_eq!(
                help.take().as_deref(),
                Some(name),
                "TYPE after its HELP: {line}"
            );
            assert!(["counter", "gauge", "summary"].contains(&ty), "{line}");
            families.push((name.to_string(), ty.to_string()));
            continue;
        }
        assert!(!line.starts_with('#') && !line.is_empty(), "{line:?}");
        let (family, ty) = families.last().expect("a sample before any TYPE");
        let (name, rest) = line.split_at(line.find(['{', ' ']).unwrap());
        let ok_names: Vec<String> = match ty.as_str() {
            "summary" => vec![
                family.clone(),
                format!("{family}_sum"),
                format!("{family}_count"),
            ],
            _ => vec![family.clone()],
        };
        assert!(
            ok_names.iter().any(|n| n == name),
            "{line} outside its family {family}"
        );
        assert!(!closed.contains(family));
        // Labels: name="value" pairs, values with \\, \" and \n escapes only.
        let mut chars = rest.chars().peekable();
        let mut label_names = Vec::new();
        if chars.peek() == Some(&'{') {
            chars.next();
            loop {
                let lname: String = std::iter::from_fn(|| chars.next_if(|c| *c != '=')).collect();
                assert!(valid_name(&lname), "label {lname:?} in {line}");
                label_names.push(lname);
                assert_eq!(chars.next(), Some('='));
                assert_eq!(chars.next(), Some('"'), "{line}");
                loop {
                    match chars.next().expect("unterminated label value") {
                        '\\' => {
                            assert!(matches!(chars.next(), Some('\\' | '"' | 'n')), "{line}")
                        }
                        '"' => break,
                        '\n' => panic!("raw newline"),
                        _ => {}
                    }
                }
                match chars.next() {
                    Some(',') => continue,
                    Some('}') => break,
                    other => panic!("{other:?} after a label in {line}"),
                }
            }
        }
        let mut dedup = label_names.clone();
        dedup.sort();
        dedup.dedup();
        assert_eq!(dedup.len(), label_names.len(), "{line}");
        let value: String = chars.collect();
        let value = value.strip_prefix(' ').expect("a space before the value");
        assert!(
            value.parse::<f64>().is_ok() || ["+Inf", "-Inf", "NaN"].contains(&value),
            "{line}"
        );
    }
    families
}

#[test]
fn colliding_names_get_families_of_their_own() {
    let mut odd = process(
        2,
        vec![
            ("k", gauge(1.0, 1, &[1.0])),
            ("a.b", counter(3, 1, &[3.0])),
            ("y_seconds_count", gauge(2.0, 1, &[2.0])),
        ],
    );
    odd.program = "we\"ird\\name\nx".into();
    let snap = snapshot(vec![
        process(
            1,
            vec![
                ("a-b", counter(2, 1, &[2.0])),
                ("a_b", counter(1, 1, &[1.0])),
                ("k", counter(4, 1, &[4.0])),
                ("x", counter(5, 1, &[5.0])),
                ("x_total", gauge(6.0, 1, &[6.0])),
                ("x_per_second", gauge(6.5, 1, &[6.5])),
                ("y", timer(7, 1, &[7.0])),
                ("stats_processes", gauge(8.0, 1, &[8.0])),
                ("µ/s", gauge(9.0, 1, &[9.0])),
                ("inf", gauge(f64::INFINITY, 1, &[1.0])),
            ],
        ),
        odd,
    ]);
    let text = snap.to_prometheus();
    let families: HashMap<String, String> = check_exposition(&text).into_iter().collect();
    let want = [
        ("hrts_stats_processes", "gauge"),
        ("hrts_stats_damaged", "gauge"),
        ("hrts_a_b_total", "counter"),
        ("hrts_a_b_2_total", "counter"),
        ("hrts_a_b_3_total", "counter"),
        ("hrts_k_total", "counter"),
        ("hrts_k", "gauge"),
        ("hrts_x_total", "counter"),
        ("hrts_x_total_2", "gauge"),
        ("hrts_y_seconds", "summary"),
        ("hrts_y_seconds_count_2", "gauge"),
        ("hrts_stats_processes_2", "gauge"),
        ("hrts____s", "gauge"),
        ("hrts_inf", "gauge"),
        ("hrts_x_per_second_2", "gauge"),
        // The rate gauges, with the suffix (and number) of their metric.
        ("hrts_a_b_per_second", "gauge"),
        ("hrts_a_b_2_per_second", "gauge"),
        ("hrts_a_b_3_per_second", "gauge"),
        ("hrts_k_per_second", "gauge"),
        ("hrts_k_updates_per_second", "gauge"),
        ("hrts_x_per_second", "gauge"),
        ("hrts_x_total_2_updates_per_second", "gauge"),
        ("hrts_x_per_second_2_updates_per_second", "gauge"),
        ("hrts_y_measurements_per_second", "gauge"),
        ("hrts_y_seconds_count_2_updates_per_second", "gauge"),
        ("hrts_stats_processes_2_updates_per_second", "gauge"),
        ("hrts____s_updates_per_second", "gauge"),
        ("hrts_inf_updates_per_second", "gauge"),
    ];
    for (name, ty) in want {
        assert_eq!(
            families.get(name).map(String::as_str),
            Some(ty),
            "{name} in\n{text}"
        );
    }
    assert_eq!(families.len(), want.len(), "{text}");
    // Which hrts metric each family carries, said in its HELP.
    assert!(text.contains("# HELP hrts_a_b_total hrts counter \"a_b\"\n"));
    assert!(text.contains("# HELP hrts_a_b_2_total hrts counter \"a-b\"\n"));
    assert!(text.contains("# HELP hrts_a_b_3_total hrts counter \"a.b\"\n"));
    assert!(text.contains("# HELP hrts_x_per_second_2 hrts gauge \"x_per_second\"\n"));
    assert!(text.contains("program=\"we\\\"ird\\\\name\\nx\""), "{text}");
    assert!(text.contains("hrts_inf{program=\"p1\",hrts_instance=\"1\"} +Inf\n"));
    // A gauge and a counter of one name in two processes: each where it belongs.
    assert!(text.contains("hrts_k_total{program=\"p1\",hrts_instance=\"1\"} 4\n"));
    assert!(text.contains("hrts_k{program=\"we\\\"ird"));
    check_exposition(&sample().to_prometheus());
    let empty = snapshot(vec![]).to_prometheus();
    assert_eq!(check_exposition(&empty).len(), 2);
    assert!(empty.contains("hrts_stats_processes{state=\"live\"} 0\n"));
}

#[test]
fn names_keep_one_prefix_and_one_suffix() {
    let snap = snapshot(vec![process(
        1,
        vec![
            ("requests_total", counter(3, 1, &[3.0])),
            ("hrts-stats.dropped-events", gauge(2.0, 1, &[2.0])),
            ("latency_seconds", timer(10, 1, &[10.0])),
            ("gc_ms", timer(10, 1, &[10.0])),
            ("load_ns", timer(10, 1, &[10.0])),
            ("db_total", timer(10, 1, &[10.0])),
            ("bytes_total", gauge(1.0, 1, &[1.0])),
            ("_total", counter(1, 1, &[1.0])),
        ],
    )]);
    let text = snap.to_prometheus();
    let families: HashMap<String, String> = check_exposition(&text).into_iter().collect();
    for (name, ty) in [
        ("hrts_requests_total", "counter"),
        ("hrts_requests_per_second", "gauge"),
        ("hrts_stats_dropped_events", "gauge"),
        ("hrts_latency_seconds", "summary"),
        ("hrts_latency_measurements_per_second", "gauge"),
        ("hrts_gc_seconds", "summary"),
        ("hrts_load_seconds", "summary"),
        // Only a counter's _total goes: a timer's and a gauge's stay.
        ("hrts_db_total_seconds", "summary"),
        ("hrts_bytes_total", "gauge"),
        // Nothing left without the suffix: kept whole.
        ("hrts__total_total", "counter"),
    ] {
        assert_eq!(
            families.get(name).map(String::as_str),
            Some(ty),
            "{name} in\n{text}"
        );
    }
    assert!(!text.contains("hrts_hrts_"), "{text}");
    assert!(!text.contains("requests_total_total"), "{text}");
    assert!(!text.contains("seconds_seconds"), "{text}");
    assert!(text.contains("# HELP hrts_requests_total hrts counter \"requests_total\"\n"));
    assert!(text.contains("# HELP hrts_gc_seconds hrts timer (seconds) \"gc_ms\"\n"));
    // A counter with and one without the suffix: the later one numbered.
    let both = snapshot(vec![process(
        1,
        vec![
            ("requests", counter(1, 1, &[1.0])),
            ("requests_total", counter(2, 1, &[2.0])),
        ],
    )])
    .to_prometheus();
    let families: HashMap<String, String> = check_exposition(&both).into_iter().collect();
    assert!(families.contains_key("hrts_requests_total"), "{both}");
    assert!(families.contains_key("hrts_requests_2_total"), "{both}");
    assert!(both.contains("# HELP hrts_requests_2_total hrts counter \"requests_total\"\n"));
}

/// `process(pid, …)` under program `program`, instance number 1.
fn of_program(pid: u32, program: &str, state: ProcessState, value: i64) -> ProcessStats {
    let mut p = process(pid, vec![("requests", counter(value, 1, &[value as f64]))]);
    p.program = program.to_string();
    p.state = state;
    p.dump.timestamp = 1000 + pid as u64;
    p
}

#[test]
fn a_restarted_process_continues_its_series_without_a_pid() {
    use ProcessState::{Exited, Live};
    // The writer as it was, exited, and its restart (another pid).
    let before = snapshot(vec![of_program(100, "checkout", Live, 5)]);
    let after = snapshot(vec![
        of_program(100, "checkout", Exited, 5),
        of_program(200, "checkout", Live, 1),
    ]);
    let line = |snap: &Snapshot| -> Vec<String> {
        snap.to_prometheus()
            .lines()
            .filter(|l| l.starts_with("hrts_requests_total{"))
            .map(String::from)
            .collect()
    };
    assert_eq!(
        line(&before),
        ["hrts_requests_total{program=\"checkout\",hrts_instance=\"1\"} 5"]
    );
    assert_eq!(
        line(&after),
        ["hrts_requests_total{program=\"checkout\",hrts_instance=\"1\"} 1"],
        "the live restart replaces the exited process, under the same labels"
    );
    assert!(after
        .to_prometheus()
        .contains("hrts_stats_processes{state=\"exited\"} 1\n"));
    // Gone, not restarted: the last to publish stays exposed.
    let gone = snapshot(vec![
        of_program(100, "checkout", Exited, 5),
        of_program(200, "checkout", Exited, 7),
    ]);
    assert_eq!(
        line(&gone),
        ["hrts_requests_total{program=\"checkout\",hrts_instance=\"1\"} 7"]
    );
    // Two live replicas without instance ids: each keeps its own series, with its pid.
    let twins = snapshot(vec![
        of_program(100, "checkout", Live, 5),
        of_program(200, "checkout", Live, 7),
        of_program(300, "billing", Live, 9),
    ]);
    assert_eq!(
        line(&twins),
        [
            "hrts_requests_total{program=\"checkout\",hrts_instance=\"1\",pid=\"100\"} 5",
            "hrts_requests_total{program=\"checkout\",hrts_instance=\"1\",pid=\"200\"} 7",
            "hrts_requests_total{program=\"billing\",hrts_instance=\"1\"} 9",
        ]
    );
    check_exposition(&twins.to_prometheus());
    // With instance ids they need no pid; a second instance in a process is ID/N.
    let mut a = of_program(100, "checkout", Live, 5);
    a.instance_id = "a".into();
    let mut b = of_program(200, "checkout", Live, 7);
    b.instance_id = "b".into();
    let mut b2 = of_program(200, "checkout", Live, 8);
    b2.instance_id = "b".into();
    b2.instance = 2;
    let named = snapshot(vec![a, b, b2]);
    assert_eq!(
        line(&named),
        [
            "hrts_requests_total{program=\"checkout\",hrts_instance=\"a\"} 5",
            "hrts_requests_total{program=\"checkout\",hrts_instance=\"b\"} 7",
            "hrts_requests_total{program=\"checkout\",hrts_instance=\"b/2\"} 8",
        ]
    );
    // The pid label on request: every registration, each with its pid.
    let with_pid = after.to_prometheus_with(PrometheusOptions {
        pid_label: true,
        ..Default::default()
    });
    check_exposition(&with_pid);
    let lines: Vec<&str> = with_pid
        .lines()
        .filter(|l| l.starts_with("hrts_requests_total{"))
        .collect();
    assert_eq!(
        lines,
        [
            "hrts_requests_total{program=\"checkout\",hrts_instance=\"1\",pid=\"100\"} 5",
            "hrts_requests_total{program=\"checkout\",hrts_instance=\"1\",pid=\"200\"} 1",
        ]
    );
}

#[test]
fn a_timer_without_quantiles_has_sum_and_count_only() {
    let mut m = timer(10, 1, &[10.0, 20.0]);
    if let Metric::Timer(t) = &mut m {
        t.values.quantiles = [None; 4];
    }
    let text = snapshot(vec![process(1, vec![("t", m)])]).to_prometheus();
    check_exposition(&text);
    assert!(!text.contains("quantile"));
    assert!(text.contains("hrts_t_seconds_sum{program=\"p1\",hrts_instance=\"1\"} 3e-8\n"));
    assert!(text.contains("hrts_t_seconds_count{program=\"p1\",hrts_instance=\"1\"} 2\n"));
}

#[test]
fn values_and_names_are_valid() {
    assert_eq!(float(0.5), "0.5");
    assert_eq!(float(1e300), "1e300");
    assert_eq!(float(f64::NEG_INFINITY), "-Inf");
    assert_eq!(float(f64::NAN), "NaN");
    assert_eq!(sanitise("a.b-c:d_9"), "a_b_c:d_9");
}
