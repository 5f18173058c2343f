//! Numbers in and out: the value parsers the commands' options share, and times
//! and durations in the units a person reads.

use std::time::Duration;

/// A non-negative integer argument.
pub fn whole(s: &str) -> Result<u64, String> {
    s.parse::<u64>()
        .map_err(|_| "not a whole number (0, 1, 2, ...)".to_string())
}

/// A non-negative number of seconds (`hrts test`'s DELAY).
pub fn delay_seconds(s: &str) -> Result<Duration, String> {
    s.parse::<f64>()
        .ok()
        .and_then(|s| Duration::try_from_secs_f64(s).ok())
        .ok_or_else(|| "DELAY must be a non-negative number of seconds".to_string())
}

/// A positive number of seconds.
pub fn positive_seconds(s: &str) -> Result<Duration, String> {
    s.parse::<f64>()
        .ok()
        .filter(|s| *s > 0.0)
        .and_then(|s| Duration::try_from_secs_f64(s).ok())
        .ok_or_else(|| "must be a positive number of seconds".to_string())
}

/// An option's value that must not be empty.
pub fn non_empty(s: &str) -> Result<String, String> {
    if s.is_empty() {
        Err("needs a non-empty value".to_string())
    } else {
        Ok(s.to_string())
    }
}

pub use hrts_core::utc::utc;

/// A duration in nanoseconds in the unit that suits it: ns, µs, ms, s, h or
/// days (three decimals below seconds' hours, two above).
pub fn duration(ns: f64) -> String {
    let a = ns.abs();
    if a < 1e3 {
        format!("{ns} ns")
    } else if a < 1e6 {
        format!("{:.3} µs", ns / 1e3)
    } else if a < 1e9 {
        format!("{:.3} ms", ns / 1e6)
    } else if a < 3600e9 {
        format!("{:.3} s", ns / 1e9)
    } else if a < 86_400e9 {
        format!("{:.2} h", ns / 3600e9)
    } else {
        format!("{:.2} days", ns / 86_400e9)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utc_dates() {
        assert_eq!(utc(0), "1970-01-01T00:00:00.000000000Z");
        // Figure 4's first IBMTS stamp: 1019168389 s.
        assert_eq!(
            utc(1_019_168_389_000_000_123),
            "2002-04-18T22:19:49.000000123Z"
        );
        assert_eq!(
            utc(1_795_614_176_123_456_789),
            "2026-11-25T13:42:56.123456789Z"
        );
        // Leap days: 2000 is a leap year, 2100 is not.
        assert_eq!(
            utc(951_782_400 * 1_000_000_000),
            "2000-02-29T00:00:00.000000000Z"
        );
        assert_eq!(
            utc(4_107_542_400 * 1_000_000_000),
            "2100-03-01T00:00:00.000000000Z"
        );
        assert_eq!(
            utc(u64::MAX),
            "2554-07-21T23:34:33.709551615Z",
            "the last time a u64 of ns holds"
        );
    }

    #[test]
    fn durations_in_human_units() {
        assert_eq!(duration(0.0), "0 ns");
        assert_eq!(duration(-40.0), "-40 ns");
        assert_eq!(duration(1_500.0), "1.500 µs");
        assert_eq!(duration(52_003_456.0), "52.003 ms");
        assert_eq!(duration(-2_000_000_000.0), "-2.000 s");
        assert_eq!(duration(7_200e9), "2.00 h");
        assert_eq!(duration(3.0 * 86_400e9), "3.00 days");
    }

    #[test]
    fn parsers_say_what_they_want() {
        assert_eq!(whole("12"), Ok(12));
        assert!(whole("-1").unwrap_err().contains("whole number"));
        assert_eq!(delay_seconds("0"), Ok(Duration::ZERO));
        assert!(delay_seconds("-1").is_err());
        assert!(positive_seconds("0").is_err());
        assert_eq!(positive_seconds("0.5"), Ok(Duration::from_millis(500)));
        assert!(non_empty("").is_err());
    }
}
