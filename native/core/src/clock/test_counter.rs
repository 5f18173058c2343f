//! Test builds only (`testing` feature): a disrupted counter, so that tests
//! can make every process's counter jump forward, jump back, stop or change
//! rate at one moment, as a live migration or a resume might, without
//! touching the host's clocks.
//!
//! `HRTS_TEST_COUNTER=EVENT@REALTIME_NS`, read by each process at its first
//! counter read, where EVENT is `jump:+5ms` (forward), `back:5ms`, `stop:2s`
//! (the counter stands still that long, then goes on from where it stood) or
//! `rate:+300ppm` (from then on it runs that much fast), and REALTIME_NS the
//! `CLOCK_REALTIME` at which it happens. Each process turns the moment and
//! the sizes into ticks of its counter by measuring the counter against
//! `CLOCK_MONOTONIC_RAW` for 5 ms, so processes agree on the moment within
//! some microseconds. Durations take `us`, `ms` or `s`.

use std::sync::atomic::Ordering::Relaxed;
use std::sync::atomic::{AtomicU64, AtomicU8};

/// Environment variable: the event (see the module's comment).
pub const ENV_TEST_COUNTER: &str = "HRTS_TEST_COUNTER";

const UNREAD: u8 = 0;
const OFF: u8 = 1;
const JUMP: u8 = 2;
const BACK: u8 = 3;
const STOP: u8 = 4;
const RATE: u8 = 5;

/// Per source (indexed by its id, 1 to 4): each counts in its own ticks.
const SOURCES: usize = 5;
#[allow(clippy::declare_interior_mutable_const)]
const UNSET: AtomicU8 = AtomicU8::new(UNREAD);
#[allow(clippy::declare_interior_mutable_const)]
const ZERO: AtomicU64 = AtomicU64::new(0);
static KIND: [AtomicU8; SOURCES] = [UNSET; SOURCES];
/// The counter value (unhooked) at which the event happens.
static AT: [AtomicU64; SOURCES] = [ZERO; SOURCES];
/// Ticks (jump, back, stop) or ppb (rate).
static SIZE: [AtomicU64; SOURCES] = [ZERO; SOURCES];

/// The hooked value of a read `c` of the counter source numbered `id` (its
/// `SourceId` as a number: the source module calls this one, not the other
/// way round); `raw` reads it unhooked (used once per source, to set the hook
/// up from the environment).
#[inline(always)]
pub(crate) fn apply(id: usize, c: u64, raw: impl Fn() -> u64) -> u64 {
    let i = id.min(SOURCES - 1);
    match KIND[i].load(Relaxed) {
        OFF => c,
        UNREAD => {
            set_up(i, raw);
            transform(i, c)
        }
        _ => transform(i, c),
    }
}

#[cold]
fn set_up(i: usize, raw: impl Fn() -> u64) {
    let Some((kind, size, at_ns)) = std::env::var(ENV_TEST_COUNTER)
        .ok()
        .as_deref()
        .and_then(parse)
    else {
        KIND[i].store(OFF, Relaxed);
        return;
    };
    // Ticks per ns, measured over 5 ms against CLOCK_MONOTONIC_RAW, each end
    // the narrowest of 9 raw–counter–raw brackets (a preemption inside one
    // would otherwise skew it by its whole length).
    let pair = || {
        let mut best = (u64::MAX, 0, 0);
        for _ in 0..9 {
            let r0 = crate::os::monotonic_raw_ns();
            let c = raw();
            let r1 = crate::os::monotonic_raw_ns();
            if r1 - r0 < best.0 {
                best = (r1 - r0, c, r0 + (r1 - r0) / 2);
            }
        }
        (best.1, best.2)
    };
    let (c0, r0) = pair();
    while crate::os::monotonic_raw_ns() < r0 + 5_000_000 {
        std::hint::spin_loop();
    }
    let (c1, r1) = pair();
    let per_ns = (c1 - c0) as f64 / (r1 - r0) as f64;
    let (c, now) = loop {
        let r0 = crate::os::realtime_ns();
        let c = raw();
        let r1 = crate::os::realtime_ns();
        if r1 - r0 < 20_000 {
            break (c, r0 + (r1 - r0) / 2);
        }
    };
    let at = c as i128 + ((at_ns as i128 - now as i128) as f64 * per_ns) as i128;
    let size = match kind {
        RATE => size,
        _ => (size as f64 * per_ns) as u64,
    };
    AT[i].store(at.max(0) as u64, Relaxed);
    SIZE[i].store(size, Relaxed);
    KIND[i].store(kind, Relaxed);
}

fn transform(i: usize, c: u64) -> u64 {
    let (at, size) = (AT[i].load(Relaxed), SIZE[i].load(Relaxed));
    if c < at {
        return c;
    }
    match KIND[i].load(Relaxed) {
        JUMP => c.wrapping_add(size),
        BACK => c.wrapping_sub(size),
        STOP if c < at.saturating_add(size) => at,
        STOP => c - size,
        RATE => c + ((c - at) as u128 * size as u128 / 1_000_000_000) as u64,
        _ => c,
    }
}

/// `jump:+5ms@T` → (kind, ns or ppb, T).
fn parse(s: &str) -> Option<(u8, u64, u64)> {
    let (event, at) = s.trim().split_once('@')?;
    let (kind, arg) = event.split_once(':')?;
    let arg = arg.trim_start_matches('+');
    let ns = |a: &str| -> Option<u64> {
        let (num, unit) = a.split_at(a.find(|ch: char| !ch.is_ascii_digit())?);
        let n: u64 = num.parse().ok()?;
        Some(match unit {
            "us" => n * 1_000,
            "ms" => n * 1_000_000,
            "s" => n * 1_000_000_000,
            _ => return None,
        })
    };
    let (kind, size) = match kind {
        "jump" => (JUMP, ns(arg)?),
        "back" => (BACK, ns(arg)?),
        "stop" => (STOP, ns(arg)?),
        "rate" => (RATE, arg.strip_suffix("ppm")?.parse::<u64>().ok()? * 1_000),
        _ => return None,
    };
    Some((kind, size, at.trim().parse().ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_parse_and_transform_the_counter() {
        assert_eq!(parse("jump:+5ms@100"), Some((JUMP, 5_000_000, 100)));
        assert_eq!(parse("back:5ms@7"), Some((BACK, 5_000_000, 7)));
        assert_eq!(parse("stop:2s@7"), Some((STOP, 2_000_000_000, 7)));
        assert_eq!(parse("rate:+300ppm@7"), Some((RATE, 300_000, 7)));
        assert_eq!(parse("rate:300@7"), None);
        assert_eq!(parse("jump:5ms"), None);
    }
}
