//! The `hrts` binary as a script sees it: output formats and exit codes. Every
//! test uses a segment of its own, removed when the test ends.

use std::collections::HashMap;
use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::process::{Output, Stdio};
use std::time::{SystemTime, UNIX_EPOCH};

mod common;
use common::{command, Segment};

impl Segment {
    /// Runs `hrts --segment <this> args...`.
    fn run(&self, args: &[&str]) -> Output {
        hrts(&[&["--segment", &self.0], args].concat())
    }
}

fn hrts(args: &[&str]) -> Output {
    command().args(args).output().expect("run hrts")
}

fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8(o.stderr.clone()).unwrap()
}

/// Asserts success and returns stdout.
fn ok(o: Output) -> String {
    assert_eq!(o.status.code(), Some(0), "stderr: {}", stderr(&o));
    stdout(&o)
}

fn realtime_ns() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64
}

/// `hrts info`'s `key: value` lines (the lines below some of them, which
/// start with spaces and `=`, show the value in a person's units).
fn info(seg: &Segment) -> HashMap<String, String> {
    ok(seg.run(&["info"]))
        .lines()
        .filter(|l| !l.trim_start().starts_with("= "))
        .map(|l| {
            let (k, v) = l
                .split_once(": ")
                .unwrap_or_else(|| panic!("not key: value: {l:?}"));
            (k.to_string(), v.to_string())
        })
        .collect()
}

fn num(map: &HashMap<String, String>, key: &str) -> u64 {
    let v = map
        .get(key)
        .unwrap_or_else(|| panic!("info has no {key:?}: {map:?}"));
    v.parse()
        .unwrap_or_else(|_| panic!("{key}: {v:?} is not a number"))
}

#[test]
fn now_is_close_to_the_system_clock() {
    let seg = Segment::new();
    ok(seg.run(&["now"])); // create (and calibrate) outside the measured window
    let before = realtime_ns();
    let now: u64 = ok(seg.run(&["now"]))
        .trim()
        .parse()
        .expect("a plain integer");
    let after = realtime_ns();
    // A fresh segment's base is the realtime clock at creation; calibration error
    // over a second is microseconds. Allow for scheduling of the child process.
    assert!(
        now + 5_000_000 >= before && now <= after + 5_000_000,
        "{before} <= {now} <= {after}"
    );
}

#[test]
fn test_prints_the_header_and_n_well_formed_lines() {
    let seg = Segment::new();
    let out = ok(seg.run(&["test", "5"]));
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 6, "{out}");
    assert_eq!(
        lines[0],
        format!(
            "hrts High Resolution Timestamp Test: Version=0x{:016X}",
            hrts_core::ibmts::LOGIC_VERSION
        )
    );
    let mut previous = (0u64, 0u64);
    for line in &lines[1..] {
        // seconds.micros = HEX.HEX, the two halves the same value.
        let (dec, hex) = line.split_once(" = ").unwrap_or_else(|| panic!("{line:?}"));
        let (s, us) = dec.split_once('.').unwrap();
        let (hs, hus) = hex.split_once('.').unwrap();
        assert_eq!(us.len(), 6, "{line:?}");
        assert_eq!((hs.len(), hus.len()), (8, 8), "{line:?}");
        assert!(hex
            .chars()
            .all(|c| c == '.' || c.is_ascii_digit() || c.is_ascii_uppercase()));
        let (s, us): (u64, u64) = (s.parse().unwrap(), us.parse().unwrap());
        assert_eq!(u64::from_str_radix(hs, 16).unwrap(), s, "{line:?}");
        assert_eq!(u64::from_str_radix(hus, 16).unwrap(), us, "{line:?}");
        assert!(us < 1_000_000);
        assert!((s, us) >= previous, "stamps went backwards: {line:?}");
        assert!(s.abs_diff(realtime_ns() / 1_000_000_000) <= 2);
        previous = (s, us);
    }
}

#[test]
fn test_with_a_delay_spaces_the_stamps() {
    let seg = Segment::new();
    let out = ok(seg.run(&["test", "3", "0.1"]));
    let us: Vec<u64> = out
        .lines()
        .skip(1)
        .map(|l| {
            let (s, rest) = l.split_once('.').unwrap();
            s.parse::<u64>().unwrap() * 1_000_000 + rest[..6].parse::<u64>().unwrap()
        })
        .collect();
    assert_eq!(us.len(), 3);
    for pair in us.windows(2) {
        let gap = pair[1] - pair[0];
        assert!((95_000..1_000_000).contains(&gap), "gap {gap} us");
    }
}

#[test]
fn info_fields_parse() {
    let seg = Segment::new();
    let first = info(&seg);
    assert_eq!(first["segment"], seg.0);
    assert_eq!(first["opened"], "created");
    assert_eq!(
        num(&first, "layout version"),
        hrts_core::LAYOUT_VERSION as u64
    );
    assert!(["tsc", "cntvct", "timebase", "monotonic-raw"].contains(&first["source"].as_str()));
    assert!(!first["reason"].is_empty());
    assert!(num(&first, "frequency") > 0);
    assert!(num(&first, "calibrations") >= 1);
    num(&first, "calibration spread ppb");
    num(&first, "calibration elapsed ns");
    match first["evaluation"].as_str() {
        "none" => assert_eq!(first["source"], "monotonic-raw", "only software skips it"),
        "monotonic" | "not monotonic" => {
            assert!(num(&first, "evaluation cpus") >= 1);
            let shift = &first["evaluation max shift ns"];
            assert!(
                shift == "unbounded" || shift.parse::<u64>().is_ok(),
                "{shift}"
            );
        }
        other => panic!("evaluation: {other:?}"),
    }
    // The creator was that `hrts info` process, which has exited since.
    assert_ne!(num(&first, "creator pid"), std::process::id() as u64);
    assert_eq!(
        num(&first, "creator uid"),
        hrts_core::process::euid() as u64
    );
    let created = num(&first, "created epoch ns");
    assert!(created.abs_diff(realtime_ns()) < 60_000_000_000);
    assert!(num(&first, "base ns") >= created);
    for key in [
        "generation",
        "base counter",
        "mult",
        "shift",
        "wrap threshold ticks",
        "moves",
    ] {
        num(&first, key);
    }
    assert!(num(&first, "mult") > 0 && (1..64).contains(&num(&first, "shift")));

    let second = info(&seg);
    assert_eq!(second["opened"], "attached");
    assert_eq!(second["creator pid"], first["creator pid"]);
    assert_eq!(second["frequency"], first["frequency"]);
}

#[test]
fn reset_bumps_the_generation_for_the_next_process() {
    let seg = Segment::new();
    let g0 = num(&info(&seg), "generation");
    let reset: HashMap<String, String> = ok(seg.run(&["reset"]))
        .lines()
        .filter_map(|l| l.split_once(": "))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    assert_eq!(num(&reset, "generation"), g0 + 1);
    assert!(num(&reset, "frequency") > 0);
    assert!(num(&reset, "microseconds") < 1_000_000);
    assert_eq!(
        num(&reset, "base ns"),
        num(&reset, "seconds") * 1_000_000_000
            + num(&reset, "microseconds") * 1_000
            + num(&reset, "base ns") % 1_000
    );
    let after = info(&seg);
    assert_eq!(num(&after, "generation"), g0 + 1);
    assert_eq!(after["base counter"], reset["base counter"]);
}

#[test]
fn unlink_removes_the_segment_and_says_whether_it_existed() {
    let seg = Segment::new();
    ok(seg.run(&["now"]));
    assert!(std::path::Path::new(&seg.shm_path()).exists());
    assert_eq!(
        ok(seg.run(&["unlink"])).trim(),
        format!("removed segment {}", seg.0)
    );
    assert!(!std::path::Path::new(&seg.shm_path()).exists());
    assert_eq!(
        ok(seg.run(&["unlink"])).trim(),
        format!("segment {} did not exist", seg.0)
    );
    // The next user creates a fresh one.
    assert_eq!(info(&seg)["opened"], "created");
}

#[test]
fn hrts_segment_environment_variable_names_the_segment() {
    let seg = Segment::new();
    let out = command()
        .env("HRTS_SEGMENT", &seg.0)
        .arg("info")
        .output()
        .unwrap();
    assert!(ok(out).contains(&format!("segment: {}\n", seg.0)));
    // --segment wins over the environment.
    let other = Segment::new();
    let out = command()
        .env("HRTS_SEGMENT", &seg.0)
        .args(["--segment", &other.0, "info"])
        .output()
        .unwrap();
    assert!(ok(out).contains(&format!("segment: {}\n", other.0)));
}

#[test]
fn echo_stamps_every_line_in_order() {
    let seg = Segment::new();
    ok(seg.run(&["now"]));
    let mut child = command()
        .args(["--segment", &seg.0, "echo"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let before = realtime_ns();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"a\nb\n\nlast without newline")
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let stamps: Vec<u64> = ok(out).lines().map(|l| l.parse().unwrap()).collect();
    assert_eq!(stamps.len(), 4);
    assert!(stamps.windows(2).all(|w| w[0] <= w[1]), "{stamps:?}");
    assert!(stamps[0] + 5_000_000 >= before);
}

#[test]
fn usage_errors_exit_2_with_a_message() {
    let seg = Segment::new();
    for args in [
        &[][..],
        &["frobnicate"],
        &["test"],
        &["test", "many"],
        &["test", "1", "2", "3"],
        &["now", "extra"],
        &["--bogus", "now"],
        &["now", "--method", "cop"],
        &["--segment"],
        &["eval", "--budget-ms", "0"],
    ] {
        let out = hrts(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(
            stderr(&out).starts_with("hrts: error: "),
            "{args:?}: {}",
            stderr(&out)
        );
        assert!(stdout(&out).is_empty());
    }
    // An invalid segment name or environment value is the caller's mistake too.
    let out = hrts(&["--segment", "no-slash", "now"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("must start with '/'"),
        "{}",
        stderr(&out)
    );
    let out = command()
        .env("HRTS_WRAP_THRESHOLD", "lots")
        .args(["--segment", &seg.0, "now"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("HRTS_WRAP_THRESHOLD"));
}

#[test]
fn help_documents_commands_and_exit_codes() {
    let help = ok(hrts(&["--help"]));
    for word in [
        "now",
        "info",
        "test",
        "eval",
        "reset",
        "unlink",
        "echo",
        "--segment",
        "Exit status",
    ] {
        assert!(help.contains(word), "--help lacks {word:?}");
    }
    assert!(!help.contains("hold-writer"), "debug commands stay hidden");
    assert_eq!(ok(hrts(&["help"])), help);
    let version = ok(hrts(&["--version"]));
    assert!(version.starts_with(&format!("hrts {} ", env!("CARGO_PKG_VERSION"))));
    assert!(version.contains(&hrts_core::ibmts::version_string(
        hrts_core::ibmts::LOGIC_VERSION
    )));
}

/// Puts `bytes` at the segment's name with the mode an hrts segment has, so only
/// the contents are wrong.
fn plant(seg: &Segment, bytes: &[u8]) {
    std::fs::write(seg.shm_path(), bytes).unwrap();
    std::fs::set_permissions(seg.shm_path(), std::fs::Permissions::from_mode(0o600)).unwrap();
}

#[test]
fn a_foreign_segment_is_refused_with_exit_3() {
    let seg = Segment::new();
    plant(&seg, &[0xA5; 4096]);
    for cmd in ["info", "now", "test"] {
        let args: &[&str] = if cmd == "test" {
            &["test", "1"]
        } else {
            &[cmd]
        };
        let out = seg.run(args);
        assert_eq!(out.status.code(), Some(3), "{cmd}: {}", stderr(&out));
        let err = stderr(&out);
        assert!(err.starts_with("hrts: error: "), "{err}");
        assert!(err.contains("not an hrts segment"), "{err}");
        assert!(err.contains(&seg.0), "the message names the segment: {err}");
    }
    // Nothing was overwritten, and unlink can still remove it.
    assert_eq!(std::fs::read(seg.shm_path()).unwrap(), vec![0xA5; 4096]);
    assert!(ok(seg.run(&["unlink"])).starts_with("removed"));
}

#[test]
fn a_truncated_segment_is_refused_with_exit_3() {
    let seg = Segment::new();
    plant(&seg, &[0x5A; 100]);
    let out = seg.run(&["info"]);
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert!(stderr(&out).contains("truncated"), "{}", stderr(&out));
}

#[test]
fn a_world_readable_segment_is_refused_with_exit_3() {
    let seg = Segment::new();
    ok(seg.run(&["now"]));
    std::fs::set_permissions(seg.shm_path(), std::fs::Permissions::from_mode(0o644)).unwrap();
    let out = seg.run(&["now"]);
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("refusing segment"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn eval_reports_every_method_and_a_verdict() {
    let out = hrts(&["eval", "--budget-ms", "20"]);
    if out.status.code() == Some(1) && stderr(&out).contains("no hardware counter") {
        return; // an architecture without one: nothing to evaluate
    }
    let text = ok(out);
    let blocks: Vec<&str> = text.split("\n\n").collect();
    assert_eq!(blocks.len(), 3, "{text}");
    for (block, method) in blocks.iter().zip(["cas-ordered-probes", "cpu-switching"]) {
        let map: HashMap<&str, &str> = block.lines().filter_map(|l| l.split_once(": ")).collect();
        assert_eq!(map["method"], method);
        assert!(["yes", "no"].contains(&map["monotonic"]));
        assert!(map["probes"].parse::<u64>().unwrap() >= 2);
        assert!(map["frequency"].parse::<u64>().unwrap() > 0);
        assert!(!map["cpus"].is_empty());
        // WTMLIB's pace check: this machine's counter runs at one pace.
        let pace = map["pace"];
        assert!(
            pace.starts_with("same on every CPU") || pace.starts_with("unknown"),
            "{pace}"
        );
    }
    assert!(blocks[2].trim().starts_with("verdict: "), "{text}");
}

#[test]
fn eval_takes_the_significance_asked_for() {
    // No probe sequence shows a billion hand-overs per CPU pair in 20 ms.
    let out = hrts(&["eval", "--budget-ms", "20", "--min-handovers", "1000000000"]);
    if out.status.code() == Some(1) && stderr(&out).contains("no hardware counter") {
        return;
    }
    let text = ok(out);
    for block in text.split("\n\n").take(2) {
        let map: HashMap<&str, &str> = block.lines().filter_map(|l| l.split_once(": ")).collect();
        if map["cpus"].contains(',') {
            assert_eq!(map["significant"], "no", "{block}");
        }
    }
    let bad = hrts(&["eval", "--min-handovers", "0"]);
    assert_eq!(bad.status.code(), Some(2), "{}", stderr(&bad));
}

#[cfg(feature = "testing")]
#[test]
fn a_killed_writer_is_recovered_from() {
    let seg = Segment::new();
    let g0 = num(&info(&seg), "generation");
    let mut holder = common::spawn_writer_holder(&seg);
    holder.kill().unwrap(); // SIGKILL: the role is never released
    holder.wait().unwrap();
    // The next writer sees a dead holder, recovers the role, and resets.
    let reset = ok(seg.run(&["reset"]));
    assert!(
        reset.contains(&format!("generation: {}\n", g0 + 1)),
        "{reset}"
    );
    let now: u64 = ok(seg.run(&["now"])).trim().parse().unwrap();
    assert!(now.abs_diff(realtime_ns()) < 50_000_000);
}

#[test]
fn seq_numbers_never_repeat_across_processes_and_a_lost_segment() {
    let seg = Segment::new();
    let dir = std::env::temp_dir().join(format!("hrts-clitest-seq-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let file = dir.join("n.seq");
    // HRTS_SEQ_FILE belongs to the segment HRTS_SEGMENT names, also when
    // --segment names it again: one file, whichever way it is chosen.
    let seq_by = |n: &str, also_by_option: bool| -> Vec<u64> {
        let mut cmd = seg.command();
        if also_by_option {
            cmd.args(["--segment", &seg.0]);
        }
        let out = cmd
            .env("HRTS_SEQ_FILE", &file)
            .env("HRTS_SEQ_INTERVAL", "10")
            .args(["seq", n])
            .output()
            .unwrap();
        ok(out).lines().map(|l| l.parse().unwrap()).collect()
    };
    let seq = |n: &str| seq_by(n, true);
    let first = seq_by("25", false);
    assert_eq!(first.len(), 25);
    assert!(first.windows(2).all(|w| w[0] < w[1]), "{first:?}");
    let second = seq("5");
    assert!(
        second[0] > *first.last().unwrap(),
        "a second process continues: {second:?}"
    );
    // The segment is lost (as at a reboot): numbering resumes above all of them.
    ok(seg.run(&["unlink"]));
    let third = seq("5");
    assert!(
        third[0] > *second.last().unwrap(),
        "{second:?} then {third:?}"
    );
    assert!(file.exists());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn unique_prints_increasing_stamps_that_continue_across_processes() {
    let seg = Segment::new();
    let parse = |out: &str| -> Vec<u64> { out.lines().map(|l| l.parse().unwrap()).collect() };
    let first = parse(&ok(seg.run(&["unique", "1000"])));
    assert_eq!(first.len(), 1000);
    assert!(first.windows(2).all(|w| w[0] < w[1]));
    assert!(first[0].abs_diff(realtime_ns()) < 1_000_000_000);
    let one = parse(&ok(seg.run(&["unique"])));
    assert_eq!(one.len(), 1, "the count defaults to 1");
    assert!(one[0] > *first.last().unwrap());
}

#[test]
fn info_shows_the_mode_and_the_tracking_state() {
    let seg = Segment::new();
    let i = info(&seg);
    assert_eq!(i["mode"], "tracking");
    for key in [
        "tie interval ns",
        "step threshold ns",
        "ties",
        "steps",
        "repairs",
    ] {
        num(&i, key);
    }
    assert_eq!(num(&i, "tie interval ns"), 1_000_000_000);
    for key in [
        "offset ns",
        "last tie offset ns",
        "pending ns",
        "last step ns",
    ] {
        i[key]
            .parse::<i64>()
            .unwrap_or_else(|_| panic!("{key}: {}", i[key]));
    }
    for key in [
        "frequency ppm",
        "slew ppm",
        "slope correction ppm",
        "max slew ppm",
    ] {
        i[key]
            .parse::<f64>()
            .unwrap_or_else(|_| panic!("{key}: {}", i[key]));
    }
    assert!(i["offset ns"].parse::<i64>().unwrap().abs() < 1_000_000);
    let ordered = i["ordered read"].as_str();
    if i["source"] == "tsc" {
        assert!(["rdtscp", "lfence-rdtsc"].contains(&ordered), "{ordered}");
    } else {
        assert_eq!(ordered, "fence");
    }
    if i["evaluation"] != "none" {
        assert!(
            i["evaluation pace"].starts_with("same on every CPU")
                || i["evaluation pace"].starts_with("unknown"),
            "{}",
            i["evaluation pace"]
        );
    }

    let frozen = Segment::new();
    let out = frozen
        .command()
        .env("HRTS_MODE", "frozen")
        .arg("info")
        .output()
        .unwrap();
    let text = ok(out);
    assert!(text.contains("\nmode: frozen\n"), "{text}");
    assert!(
        !text.contains("\nties: "),
        "no tie statistics for a frozen timeline"
    );

    let bad = Segment::new();
    let out = bad
        .command()
        .env("HRTS_MODE", "slewing")
        .arg("now")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("HRTS_MODE"), "{}", stderr(&out));
    let out = bad
        .command()
        .env("HRTS_MAX_SLEW_PPM", "0")
        .arg("now")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn track_prints_a_line_per_tie_and_writes_csv_and_svg() {
    let seg = Segment::new();
    let dir = std::env::temp_dir().join(format!("hrts-track-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (csv, svg) = (dir.join("t.csv"), dir.join("t.svg"));
    let out = seg
        .command()
        .env("HRTS_TIE_INTERVAL_MS", "200")
        .args(["track", "1.5", "--csv"])
        .arg(&csv)
        .arg("--svg")
        .arg(&svg)
        .output()
        .unwrap();
    let text = ok(out);
    let lines: Vec<&str> = text.lines().filter(|l| !l.starts_with('#')).collect();
    assert!(text.starts_with("# hrts track: segment"), "{text}");
    assert!(
        (4..=9).contains(&lines.len()),
        "{} lines: {text}",
        lines.len()
    );
    assert!(
        lines
            .iter()
            .all(|l| l.contains(" tie ") && l.contains(" ppm")),
        "{text}"
    );
    let rows = std::fs::read_to_string(&csv).unwrap();
    assert!(rows.starts_with("elapsed_s,epoch_ns,offset_ns,"));
    assert_eq!(rows.lines().count(), lines.len() + 1);
    let plot = std::fs::read_to_string(&svg).unwrap();
    assert!(plot.starts_with("<svg") && plot.contains("<polyline"));
    // A title naming the segment and mode, axes with ticks and a grid, the ties marked.
    assert!(
        plot.contains(&format!(
            "<title>hrts track: segment {}, mode tracking</title>",
            seg.0
        )),
        "{plot}"
    );
    assert!(plot.contains(">time since the start (s)</text>"), "{plot}");
    // In the unit that suits the offsets, or the bound around them where the clock is
    // synchronized.
    assert!(plot.contains(">offset ("), "{plot}");
    let count = |what: &str| plot.matches(what).count();
    assert!(count("<text class=\"tick-label x\"") >= 3, "{plot}");
    assert!(count("<text class=\"tick-label y\"") >= 3, "{plot}");
    assert_eq!(
        count("<line class=\"grid\""),
        count("<text class=\"tick-label ")
    );
    assert_eq!(count("<circle class=\"tie\""), lines.len(), "{plot}");
    std::fs::remove_dir_all(&dir).unwrap();
    assert!(num(&info(&seg), "ties") >= lines.len() as u64);
}

#[test]
fn a_malformed_or_foreign_hrts_source_is_refused_with_exit_2() {
    let seg = Segment::new();
    let foreign = hrts_core::clock::SourceId::ALL
        .into_iter()
        .find(|s| !s.supported())
        .unwrap()
        .name();
    let native = hrts_core::clock::SourceId::native().map(|s| s.name());
    for bad in ["foo", foreign] {
        let out = seg
            .command()
            .env("HRTS_SOURCE", bad)
            .arg("now")
            .output()
            .unwrap();
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "HRTS_SOURCE={bad}: {err}");
        assert!(err.starts_with("hrts: error: HRTS_SOURCE=\""), "{err}");
        assert!(err.contains(&format!("{bad:?}")), "{err}");
        assert!(
            err.contains("monotonic-raw"),
            "names what it accepts: {err}"
        );
        if let Some(n) = native {
            assert!(err.contains(n), "{err}");
        }
        assert!(stdout(&out).is_empty());
        assert!(
            !std::path::Path::new(&seg.shm_path()).exists(),
            "no segment is made on a wrong source"
        );
    }
    // A source this machine can read is used.
    let out = seg
        .command()
        .env("HRTS_SOURCE", " Monotonic-Raw ")
        .arg("info")
        .output()
        .unwrap();
    assert!(ok(out).contains("\nsource: monotonic-raw\n"));
}

#[test]
fn track_fails_at_once_on_an_output_file_it_cannot_write() {
    let seg = Segment::new();
    let bad = "/nonexistent-hrts-dir/plot";
    for option in ["--svg", "--csv"] {
        let started = std::time::Instant::now();
        let out = seg.run(&["track", "30", option, bad]);
        assert!(
            started.elapsed() < std::time::Duration::from_secs(10),
            "{option}: failed only after {:?}",
            started.elapsed()
        );
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(1), "{option}: {err}");
        assert!(
            err.starts_with(&format!("hrts: error: {option} {bad}: cannot write")),
            "{err}"
        );
        assert!(stdout(&out).is_empty(), "the run did not start");
    }
    assert!(
        !std::path::Path::new(&seg.shm_path()).exists(),
        "the segment is not even opened"
    );
}

/// Days since 1970-01-01 of a proleptic Gregorian date (for checking dates).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// `2026-11-25T13:42:56.123456789Z` as epoch ns.
fn parse_utc(s: &str) -> u64 {
    assert_eq!(s.len(), 30, "{s:?}");
    assert!(s.ends_with('Z') && &s[10..11] == "T", "{s:?}");
    let n = |r: std::ops::Range<usize>| s[r].parse::<i64>().unwrap();
    let days = days_from_civil(n(0..4), n(5..7), n(8..10));
    let secs = days * 86_400 + n(11..13) * 3600 + n(14..16) * 60 + n(17..19);
    secs as u64 * 1_000_000_000 + n(20..29) as u64
}

#[test]
fn info_shows_each_time_as_a_utc_date_and_each_duration_in_units() {
    let seg = Segment::new();
    let text = ok(seg.run(&["info"]));
    let lines: Vec<&str> = text.lines().collect();
    // What is below `key: value`, if it is a `= ...` line.
    let below = |key: &str| -> Option<String> {
        let i = lines
            .iter()
            .position(|l| l.starts_with(&format!("{key}: ")))
            .unwrap_or_else(|| panic!("no {key}: {text}"));
        let human = lines.get(i + 1)?.trim_start().strip_prefix("= ")?;
        // The `=` stands under the `:`.
        assert_eq!(lines[i + 1].find('='), Some(key.len()), "{}", lines[i + 1]);
        Some(human.to_string())
    };
    let raw = |key: &str| -> String {
        lines
            .iter()
            .find_map(|l| l.strip_prefix(&format!("{key}: ")))
            .unwrap()
            .to_string()
    };
    for key in ["created epoch ns", "base ns", "last tie epoch ns"] {
        let date = below(key).unwrap_or_else(|| panic!("no date below {key}: {text}"));
        assert_eq!(
            parse_utc(&date),
            raw(key).parse::<u64>().unwrap(),
            "{key}: {date}"
        );
    }
    for key in [
        "calibration elapsed ns",
        "offset ns",
        "tie interval ns",
        "step threshold ns",
        "pending ns",
    ] {
        let human = below(key).unwrap_or_else(|| panic!("no duration below {key}: {text}"));
        let (number, unit) = human.split_once(' ').unwrap();
        let scale = match unit {
            "ns" => 1.0,
            "µs" => 1e3,
            "ms" => 1e6,
            "s" => 1e9,
            other => panic!("{key}: unit {other:?}"),
        };
        let ns: f64 = raw(key).parse().unwrap();
        let shown: f64 = number.parse::<f64>().unwrap() * scale;
        assert!(
            (shown - ns).abs() <= scale / 1000.0 + 1e-9,
            "{key}: {human} for {ns} ns"
        );
    }
    assert_eq!(below("tie interval ns").unwrap(), "1.000 s");
    assert!(below("frequency").is_none() && below("ties").is_none());
}

#[test]
fn the_help_says_what_unlink_removes_and_completions_and_the_manual_are_generated() {
    let help = ok(hrts(&["--help"]));
    let unlink = help
        .lines()
        .skip_while(|l| !l.trim_start().starts_with("unlink "))
        .take(2)
        .collect::<Vec<_>>()
        .join(" ");
    assert!(unlink.contains("its name and its page"), "{unlink}");
    let stats = ok(hrts(&["stats", "--help"]));
    assert!(stats.contains("hrts_instance"), "{stats}");
    assert!(!stats.contains("labelled pid, instance"), "{stats}");
    assert!(ok(hrts(&["stats", "unlink", "--help"])).contains("its name and its page"));
    let bash = ok(hrts(&["completions", "bash"]));
    assert!(
        bash.contains("_hrts()") && bash.contains("complete "),
        "{bash}"
    );
    for word in ["now", "track", "stats", "--segment"] {
        assert!(bash.contains(word), "completion of {word}");
    }
    if cfg!(not(feature = "testing")) {
        assert!(
            !bash.contains("hold-writer"),
            "no debug commands in a production build"
        );
    }
    assert_eq!(hrts(&["completions", "tcsh"]).status.code(), Some(2));
    let man = ok(hrts(&["manpage"]));
    assert!(man.contains(".TH hrts 1"), "{man}");
    assert!(
        man.contains("One shared high\\-resolution timeline"),
        "{man}"
    );
}
