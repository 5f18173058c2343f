//! The two methods that take the probes: threads pinned to every CPU of the
//! caller's affinity mask, ordered by compare-and-swap (COP), and one thread
//! moving itself from CPU to CPU (see the parent module).

use super::analysis::report;
use super::{Method, Probe, ReliabilityConfig, Report};
use crate::clock::source::{self, SourceId};
use crate::error::{Error, ErrorKind, Result};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// How long (spin iterations, ~1-2 µs) a COP thread that just recorded a probe
/// leaves the next sequence number to the other threads.
const HANDOVER_SPINS: u32 = 256;

/// The CPUs in the calling thread's affinity mask, and the mask itself.
fn affinity() -> Result<(Vec<u32>, crate::os::CpuMask)> {
    crate::os::affinity()
        .ok_or_else(|| Error::os("sched_getaffinity", "cannot tell which CPUs to evaluate"))
}

use crate::os::{current_cpu, pin_to, set_affinity};

fn check_source(id: SourceId) -> Result<()> {
    if id.supported() {
        Ok(())
    } else {
        Err(Error::new(
            ErrorKind::Source,
            format!(
                "cannot evaluate {}: this architecture has no such counter",
                id.name()
            ),
        ))
    }
}

/// CAS-ordered probes across every CPU in the caller's affinity mask. `hz` converts
/// the shift to ns. Bounded by `cfg.budget` plus thread start-up (at most
/// `cfg.startup` for threads to pin themselves, and as much for the first probe).
pub fn evaluate_cop(id: SourceId, hz: u64, cfg: &ReliabilityConfig) -> Result<Report> {
    check_source(id)?;
    let (cpus, _) = affinity()?;
    if cpus.is_empty() {
        return Err(Error::new(ErrorKind::Os, "the affinity mask is empty"));
    }
    let t0 = crate::os::monotonic_raw_ns();
    let seq = Arc::new(AtomicU64::new(0));
    let ready = Arc::new(AtomicUsize::new(0));
    let go = Arc::new(AtomicBool::new(false));
    let stop = Arc::new(AtomicBool::new(false));
    let max = cfg.max_probes.max(2);
    let startup = u64::try_from(cfg.startup.as_nanos()).unwrap_or(u64::MAX);
    let mut handles = Vec::new();
    let mut note = String::new();
    for &cpu in &cpus {
        let (seq, ready, go, stop) = (seq.clone(), ready.clone(), go.clone(), stop.clone());
        let spawned = std::thread::Builder::new()
            .name(format!("hrts-cop-{cpu}"))
            .spawn(move || -> Option<Vec<Probe>> {
                let pinned = pin_to(cpu) && current_cpu() == Some(cpu);
                ready.fetch_add(1, Ordering::AcqRel);
                if !pinned {
                    return None;
                }
                let give_up = crate::os::monotonic_ns().saturating_add(startup);
                while !go.load(Ordering::Acquire) {
                    if stop.load(Ordering::Acquire) || crate::os::monotonic_ns() > give_up {
                        return Some(Vec::new());
                    }
                    std::hint::spin_loop();
                }
                let mut local = Vec::with_capacity(4096);
                loop {
                    let s = seq.load(Ordering::Acquire);
                    if s >= max || stop.load(Ordering::Relaxed) {
                        break;
                    }
                    let c = source::read_fenced(id);
                    if seq
                        .compare_exchange(s, s + 1, Ordering::AcqRel, Ordering::Relaxed)
                        .is_ok()
                    {
                        local.push(Probe {
                            seq: s,
                            cpu,
                            counter: c,
                        });
                        // The winner holds the cache line and would usually win
                        // again; yielding the next number for a short while makes
                        // cross-CPU hand-overs (the only informative pairs) common.
                        // Ordering is unaffected: it comes from the CAS alone.
                        for _ in 0..HANDOVER_SPINS {
                            if seq.load(Ordering::Relaxed) != s + 1 {
                                break;
                            }
                            std::hint::spin_loop();
                        }
                    }
                }
                Some(local)
            });
        match spawned {
            Ok(h) => handles.push((cpu, h)),
            Err(e) => note.push_str(&format!("CPU {cpu} skipped: thread not started ({e}); ")),
        }
    }
    // Wait (bounded) for every thread to pin itself, then start them together.
    let wait_until = crate::os::monotonic_ns().saturating_add(startup);
    while ready.load(Ordering::Acquire) < handles.len() && crate::os::monotonic_ns() < wait_until {
        std::thread::sleep(Duration::from_micros(100));
    }
    go.store(true, Ordering::Release);
    // The budget starts with the first probe: a thread pinned to a CPU that
    // others keep busy may run only tens of milliseconds after `go` (under
    // Wine at nice 19 beside the cargo stage, a 30 ms budget ran out before
    // any probe). That wait is start-up too, bounded as the pinning is.
    let first_probe_by = crate::os::monotonic_ns().saturating_add(startup);
    while seq.load(Ordering::Relaxed) == 0 && crate::os::monotonic_ns() < first_probe_by {
        std::thread::sleep(Duration::from_micros(100));
    }
    let start = crate::os::monotonic_ns();
    let budget = u64::try_from(cfg.budget.as_nanos()).unwrap_or(u64::MAX);
    while crate::os::monotonic_ns().saturating_sub(start) < budget
        && seq.load(Ordering::Relaxed) < max
    {
        std::thread::sleep(Duration::from_micros(500).min(cfg.budget));
    }
    stop.store(true, Ordering::Release);
    let mut probes = Vec::new();
    for (cpu, h) in handles {
        match h.join() {
            Ok(Some(mut v)) => probes.append(&mut v),
            Ok(None) => note.push_str(&format!(
                "CPU {cpu} skipped: could not pin a thread to it; "
            )),
            Err(_) => note.push_str(&format!("CPU {cpu} skipped: probe thread failed; ")),
        }
    }
    // A failed thread may have won CASes it did not report only if it panicked;
    // the sequence then has gaps, which would fabricate adjacency. Keep it honest.
    probes.sort_by_key(|p| p.seq);
    if probes.iter().enumerate().any(|(i, p)| p.seq != i as u64) {
        return Err(Error::new(
            ErrorKind::Source,
            "reliability probes have gaps in their sequence (a probe thread failed); evaluation is void",
        ));
    }
    if probes.is_empty() {
        return Err(Error::new(
            ErrorKind::Source,
            format!(
                "no reliability probes were collected; {}",
                note.trim_end_matches("; ")
            ),
        ));
    }
    let elapsed = crate::os::monotonic_raw_ns().saturating_sub(t0);
    Ok(report(
        Method::CasOrderedProbes,
        id,
        hz,
        &probes,
        None,
        elapsed,
        note,
        cfg.min_handovers,
    ))
}

/// One thread visits every CPU of the caller's affinity mask in turn (and returns to
/// the first), reading the counter before and after each move, for as many rounds
/// as `cfg.budget` allows (at least one). The thread's original mask is restored.
pub fn evaluate_cpu_switching(id: SourceId, hz: u64, cfg: &ReliabilityConfig) -> Result<Report> {
    check_source(id)?;
    let (cpus, original) = affinity()?;
    if cpus.is_empty() {
        return Err(Error::new(ErrorKind::Os, "the affinity mask is empty"));
    }
    let t0 = crate::os::monotonic_raw_ns();
    let budget = u64::try_from(cfg.budget.as_nanos()).unwrap_or(u64::MAX);
    let mut probes: Vec<Probe> = Vec::new();
    let mut switches = 0u64;
    let mut failed: Vec<u32> = Vec::new();
    let mut seq = 0u64;
    let mut record = |probes: &mut Vec<Probe>, cpu: u32| {
        let c = source::read_fenced(id);
        probes.push(Probe {
            seq,
            cpu,
            counter: c,
        });
        seq += 1;
    };
    // The CPU the thread is pinned to; until the first move it may float, and a
    // read then could not be attributed to a CPU.
    let mut pinned: Option<u32> = None;
    'rounds: loop {
        // Visit every CPU and come back to the first, per the WTMLIB argument that the
        // first and last reads of a tour must be on the same CPU.
        let tour = cpus.iter().chain(cpus.first());
        for &cpu in tour {
            if failed.contains(&cpu) {
                continue;
            }
            if pinned == Some(cpu) {
                // Already here (a one-CPU mask, or the tour's return): just read.
                record(&mut probes, cpu);
                continue;
            }
            if let Some(here) = pinned {
                record(&mut probes, here);
            }
            if !pin_to(cpu) || current_cpu() != Some(cpu) {
                failed.push(cpu);
                pinned = None;
                continue;
            }
            if pinned.is_some() {
                switches += 1;
            }
            pinned = Some(cpu);
            record(&mut probes, cpu);
            if probes.len() as u64 >= cfg.max_probes {
                break 'rounds;
            }
        }
        if crate::os::monotonic_raw_ns().saturating_sub(t0) >= budget {
            break;
        }
    }
    let restored = set_affinity(&original);
    let mut note = String::new();
    if !failed.is_empty() {
        note.push_str(&format!("could not move to CPUs {failed:?}; "));
    }
    if !restored {
        note.push_str("the thread's original affinity mask could not be restored; ");
    }
    let elapsed = crate::os::monotonic_raw_ns().saturating_sub(t0);
    Ok(report(
        Method::CpuSwitching,
        id,
        hz,
        &probes,
        Some(switches),
        elapsed,
        note,
        cfg.min_handovers,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::reliability::Pace;

    #[test]
    fn cop_on_this_machine() {
        let id = SourceId::native().unwrap_or(SourceId::MonotonicRaw);
        let (mask, _) = affinity().unwrap();
        let cfg = ReliabilityConfig {
            budget: Duration::from_millis(30),
            // Under Wine at nice 19 beside the cargo stage, threads pinned to
            // its busy CPUs ran over a second late (2026-11-29): this checks
            // the machine's counters, not its scheduling.
            startup: Duration::from_secs(5),
            ..ReliabilityConfig::default()
        };
        let r = evaluate_cop(id, 1_000_000_000, &cfg).unwrap();
        assert_eq!(r.method, Method::CasOrderedProbes);
        assert!(r.probes >= 2, "{r:?}");
        assert!(r.cpus.iter().all(|c| mask.contains(c)), "{r:?} vs {mask:?}");
        // Real, synchronised counters: monotonic. (A VM with skewed TSCs would fail
        // here, and rightly: that is what the evaluation exists to catch.)
        // Except under qemu-ppc64le, where mftb is emulated by an unfenced host
        // rdtsc that the host CPU may execute ahead of the emulated CAS: the probes
        // then see reordering the hardware would not. qemu-user passes the host's
        // /proc/cpuinfo through, which has no `timebase` line, unlike every real
        // ppc64 Linux.
        let emulated_ppc =
            cfg!(target_arch = "powerpc64") && source::nominal_frequency(id).is_none();
        if !emulated_ppc {
            assert!(r.monotonic, "{r:?}");
        }
        if r.cpus.len() == 1 {
            assert_eq!(r.max_shift_ticks, Some(0));
            assert!(r.note.contains("only one CPU"), "{r:?}");
        }
        // A runaway, not the machine's scheduling: a thread pinned to a CPU
        // that others keep busy starts, and ends for its join, when that CPU
        // runs it (under Wine at nice 19 beside the cargo stage, 2026-11-28:
        // 2.7 s for a 30 ms budget, one CPU's probes).
        assert!(r.elapsed_ns < 20_000_000_000, "{r:?}");
        // This machine's counter runs at one pace on every CPU.
        if !emulated_ppc {
            assert!(
                matches!(r.pace, Pace::Same { .. } | Pace::Unknown),
                "{:?}",
                r.pace
            );
        }
    }

    #[test]
    fn cpu_switching_on_this_machine_restores_the_mask() {
        let id = SourceId::native().unwrap_or(SourceId::MonotonicRaw);
        let (before, _) = affinity().unwrap();
        let cfg = ReliabilityConfig {
            budget: Duration::from_millis(10),
            ..ReliabilityConfig::default()
        };
        let r = evaluate_cpu_switching(id, 1_000_000_000, &cfg).unwrap();
        let (after, _) = affinity().unwrap();
        assert_eq!(before, after);
        assert_eq!(r.method, Method::CpuSwitching);
        if before.len() > 1 {
            assert!(r.switches >= before.len() as u64, "{r:?}");
        }
        assert!(r.monotonic, "{r:?}");
        assert!(r.cpus.iter().all(|c| before.contains(c)), "{r:?}");
        if before.len() > 1 {
            assert!(r.max_shift_ticks.is_some(), "{r:?}");
            assert_eq!(r.cpus.len(), before.len(), "{r:?}");
        }
    }

    #[test]
    fn a_single_cpu_mask_is_reported_honestly() {
        // Run in a fresh thread so narrowing its mask cannot affect other tests.
        std::thread::spawn(|| {
            let cpu = current_cpu().unwrap();
            assert!(pin_to(cpu));
            let id = SourceId::native().unwrap_or(SourceId::MonotonicRaw);
            // A budget that collects probes even under qemu on a loaded machine
            // (5 ms collected none there): what is checked is the report, not speed.
            let cfg = ReliabilityConfig {
                budget: Duration::from_millis(200),
                ..ReliabilityConfig::default()
            };
            for r in [
                evaluate_cop(id, 1_000_000_000, &cfg).unwrap(),
                evaluate_cpu_switching(id, 1_000_000_000, &cfg).unwrap(),
            ] {
                assert_eq!(r.cpus, vec![cpu], "{r:?}");
                assert_eq!(r.max_shift_ticks, Some(0));
                assert!(r.note.contains("only one CPU"), "{r:?}");
                assert!(r.monotonic);
            }
        })
        .join()
        .unwrap();
    }
}
