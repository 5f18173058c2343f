//! Epoch nanoseconds as text for people: `hrts info`'s lines and the
//! command line's reports share this one rendering.

/// Epoch nanoseconds as a UTC date and time, ISO 8601 with nanoseconds:
/// `2026-11-25T13:42:56.123456789Z`.
pub fn utc(epoch_ns: u64) -> String {
    let secs = epoch_ns / 1_000_000_000;
    let nanos = epoch_ns % 1_000_000_000;
    let (days, day_secs) = (secs / 86_400, secs % 86_400);
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{nanos:09}Z",
        day_secs / 3600,
        day_secs % 3600 / 60,
        day_secs % 60
    )
}

/// The proleptic Gregorian date of a day number counted from 1970-01-01
/// (Howard Hinnant's `civil_from_days`, for days on or after the epoch).
fn civil_from_days(days: u64) -> (u64, u64, u64) {
    let z = days + 719_468;
    let era = z / 146_097;
    let doe = z % 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + u64::from(m <= 2);
    (y, m, d)
}
