//! `hrts info` and `hrts eval` show the operating system's counter frequency
//! beside the calibrated one, with their difference in ppm.

mod common;

use common::Segment;
use hrts_core::clock::{self, SourceId};
use std::collections::HashMap;

fn key_values(text: &str) -> HashMap<&str, &str> {
    text.lines().filter_map(|l| l.split_once(": ")).collect()
}

/// Checks the os frequency lines of `map` against the calibrated `hz` of
/// counter `source`.
fn check(map: &HashMap<&str, &str>, source: &str, hz: u64, text: &str) {
    let id = SourceId::from_name(source).unwrap();
    match clock::os_frequency(id) {
        None => assert!(map["os frequency"].starts_with("none"), "{text}"),
        Some(os) => {
            assert_eq!(map["os frequency"], os.hz.to_string(), "{text}");
            assert_eq!(map["os frequency from"], os.from, "{text}");
            let ppm: f64 = map["os frequency difference ppm"].parse().unwrap();
            let expected = clock::difference_ppm(hz, os.hz);
            assert!((ppm - expected).abs() < 0.001, "{ppm} vs {expected}");
            assert_eq!(
                map.contains_key("os frequency warning"),
                clock::disagrees(expected),
                "{text}"
            );
        }
    }
}

#[test]
fn info_shows_the_reported_frequency_next_to_the_calibrated_one() {
    let seg = Segment::new();
    let out = seg.command().arg("info").output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let map = key_values(&text);
    let hz: u64 = map["frequency"].parse().unwrap();
    check(&map, map["source"], hz, &text);
}

#[test]
fn eval_shows_the_reported_frequency_next_to_the_calibrated_one() {
    let out = common::command()
        .args(["eval", "--budget-ms", "10", "--method", "cop"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    if out.status.code() == Some(1) && err.contains("no hardware counter") {
        return;
    }
    assert!(out.status.success(), "{err}");
    let text = String::from_utf8(out.stdout).unwrap();
    let map = key_values(&text);
    let hz: u64 = map["frequency"].parse().unwrap();
    check(&map, map["source"], hz, &text);
}
