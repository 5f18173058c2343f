//! Timer instances that start in one process and stop in another: a table of
//! running instances in the statistics segment, keyed by the timer's name and
//! the instance id, holding the start stamp on the shared timeline.
//!
//! A slot is taken by swapping its key word to `BUSY`, written, then published
//! by storing the real key (release); a stop takes it the same way, so exactly
//! one process stops an instance. A process killed while it holds a slot
//! `BUSY` leaves a slot that the next start reuses once that pid is gone.

use super::layout::{instance as iw, INSTANCE_SLOTS, PROBE};
use super::segment::StatsSegment;
use hrts_core::{Error, ErrorKind, Result};
use std::sync::atomic::Ordering::{AcqRel, Acquire, Relaxed, Release};

const FREE: u64 = 0;
const BUSY: u64 = u64::MAX;

/// The key of instance `instance` of timer `name`: never FREE or BUSY.
pub fn key(name: &str, instance: u64) -> u64 {
    let h = name
        .as_bytes()
        .iter()
        .fold(0xcbf2_9ce4_8422_2325u64, |h, &b| {
            (h ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3)
        });
    // splitmix64's finaliser over the name's hash and the instance.
    let mut z = h ^ instance.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    match z ^ (z >> 31) {
        FREE | BUSY => 1,
        k => k,
    }
}

fn slots(key: u64) -> impl Iterator<Item = usize> {
    let home = (key % INSTANCE_SLOTS as u64) as usize;
    (0..PROBE).map(move |i| (home + i) % INSTANCE_SLOTS)
}

/// Whether a slot holding `k` may be taken for another instance: an instance
/// idle past `idle_ns`, or a BUSY slot whose holder is gone.
fn stale(seg: &StatsSegment, slot: usize, k: u64, now: u64, idle_ns: u64) -> bool {
    match k {
        FREE => true,
        BUSY => {
            let pid = seg.instance(slot, iw::PID).load(Relaxed);
            !u32::try_from(pid).is_ok_and(|p| hrts_core::process::still_running(p, 0))
        }
        _ => now.saturating_sub(seg.instance(slot, iw::START).load(Relaxed)) > idle_ns,
    }
}

fn fill(seg: &StatsSegment, slot: usize, key: u64, start: u64) {
    seg.instance(slot, iw::START).store(start, Relaxed);
    seg.instance(slot, iw::KEY).store(key, Release);
}

/// Starts (or restarts) an instance at `now`.
pub fn start(seg: &StatsSegment, key: u64, now: u64, idle_ns: u64) -> Result<()> {
    let me = hrts_core::process::pid() as u64;
    // A running instance of the same key restarts in place.
    for slot in slots(key) {
        let kw = seg.instance(slot, iw::KEY);
        if kw.load(Acquire) == key && kw.compare_exchange(key, BUSY, AcqRel, Relaxed).is_ok() {
            seg.instance(slot, iw::PID).store(me, Relaxed);
            fill(seg, slot, key, now);
            return Ok(());
        }
    }
    for slot in slots(key) {
        let kw = seg.instance(slot, iw::KEY);
        let k = kw.load(Acquire);
        if stale(seg, slot, k, now, idle_ns)
            && kw.compare_exchange(k, BUSY, AcqRel, Relaxed).is_ok()
        {
            seg.instance(slot, iw::PID).store(me, Relaxed);
            fill(seg, slot, key, now);
            return Ok(());
        }
    }
    Err(Error::new(
        ErrorKind::Full,
        format!(
            "statistics segment {}: no room for another running shared timer instance near \
             this one ({PROBE} slots searched of {INSTANCE_SLOTS}); stop or discard shared \
             instances that are done (they also expire after the timer idle timeout)",
            seg.name()
        ),
    ))
}

/// Takes the instance of `key` if one is running: its start stamp.
pub fn take(seg: &StatsSegment, key: u64) -> Option<u64> {
    for slot in slots(key) {
        let kw = seg.instance(slot, iw::KEY);
        if kw.load(Acquire) != key {
            continue;
        }
        if kw.compare_exchange(key, BUSY, AcqRel, Relaxed).is_err() {
            continue; // another process took or restarted it just now
        }
        seg.instance(slot, iw::PID)
            .store(hrts_core::process::pid() as u64, Relaxed);
        let start = seg.instance(slot, iw::START).load(Relaxed);
        seg.instance(slot, iw::KEY).store(FREE, Release);
        return Some(start);
    }
    None
}

/// Shared instances running now (for `hrts stats` and tests).
pub fn running(seg: &StatsSegment) -> usize {
    (0..INSTANCE_SLOTS)
        .filter(|&s| !matches!(seg.instance(s, iw::KEY).load(Relaxed), FREE | BUSY))
        .count()
}
