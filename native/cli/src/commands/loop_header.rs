//! The self-test loop's header, IBMTS Figure 4's three lines, in the one
//! format `hrts test` and Java's `SelfTest` share:
//!
//! ```text
//! hrts High Resolution Timestamp Test: Version=0x0000000100000003
//! Beginning loop for 10 iterations, using a 0 second delay each pass.
//! Expect to complete at 22:19:50 UTC.
//! ```
//!
//! The version is `hrts_get_version()`'s, in 16 upper-case hex digits; the
//! completion time is UTC in 24-hour form.

/// The first line (`hrts test` prints it on stdout, before the stamps).
pub fn title(version: u64) -> String {
    format!("hrts High Resolution Timestamp Test: Version=0x{version:016X}")
}

/// The second and third lines, for `iterations` passes `delay_seconds` apart
/// that will end at `end_epoch_seconds`.
pub fn plan(iterations: u64, delay_seconds: f64, end_epoch_seconds: u64) -> String {
    format!(
        "Beginning loop for {iterations} iterations, using a {delay_seconds} second delay each pass.\n\
         Expect to complete at {} UTC.",
        utc_time_of_day(end_epoch_seconds)
    )
}

/// `HH:MM:SS` of an epoch second, in UTC.
fn utc_time_of_day(epoch_seconds: u64) -> String {
    let s = epoch_seconds % 86_400;
    format!("{:02}:{:02}:{:02}", s / 3600, s % 3600 / 60, s % 60)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The same text as `SelfTestTest.loopHeaderIsTheCliFormat` in Java.
    #[test]
    fn figure_4_in_the_shared_format() {
        // Figure 4's version and first stamp (1019168389 is 22:19:49 UTC).
        let text = format!(
            "{}\n{}",
            title(0x0001_0000_0000_0005),
            plan(10, 0.0, 1_019_168_390)
        );
        assert_eq!(
            text,
            "hrts High Resolution Timestamp Test: Version=0x0001000000000005\n\
             Beginning loop for 10 iterations, using a 0 second delay each pass.\n\
             Expect to complete at 22:19:50 UTC."
        );
        assert_eq!(
            plan(3, 2.5, 0),
            "Beginning loop for 3 iterations, using a 2.5 second delay each pass.\n\
             Expect to complete at 00:00:00 UTC."
        );
        assert_eq!(
            title(0xABCD),
            "hrts High Resolution Timestamp Test: Version=0x000000000000ABCD"
        );
    }
}
