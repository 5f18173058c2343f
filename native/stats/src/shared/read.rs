//! Taking a snapshot: every live registration's metrics, read without locks.

use super::layout::{process as pw, slot_generation, slot_phase, PHASE_LIVE, PROCESS_SLOTS};
use super::processes;
use super::segment::StatsSegment;
use super::snapshot::{ProcessState, ProcessStats, Snapshot};
use super::{cells, codec, layout};
use crate::dump::Dump;
use std::collections::BTreeMap;
use std::sync::atomic::Ordering::{Acquire, Relaxed};

pub fn snapshot(seg: &StatsSegment, taken: u64) -> Snapshot {
    let mut by_slot: Vec<Option<ProcessStats>> = (0..PROCESS_SLOTS).map(|_| None).collect();
    let mut generations = vec![0u32; PROCESS_SLOTS];
    for (slot, entry) in by_slot.iter_mut().enumerate() {
        let state = seg.process(slot, pw::STATE).load(Acquire);
        if slot_phase(state) != PHASE_LIVE {
            continue;
        }
        generations[slot] = slot_generation(state) & 0x7fff_ffff;
        let pid = seg.process(slot, pw::PID).load(Relaxed);
        *entry = Some(ProcessStats {
            pid: pid as u32,
            instance: seg.process(slot, pw::INSTANCE).load(Relaxed) as u32,
            program: processes::program_of(seg, slot),
            state: if processes::slot_alive(seg, slot) {
                ProcessState::Live
            } else {
                ProcessState::Exited
            },
            dump: Dump {
                timestamp: seg.process(slot, pw::PUBLISHED).load(Relaxed),
                metrics: BTreeMap::new(),
            },
        });
    }
    for cell in 0..layout::CELLS {
        let Some(found) = cells::read(seg, cell) else {
            continue;
        };
        let slot = found.owner.slot;
        if generations[slot] != found.owner.generation {
            continue; // a cell of an earlier registration, being reclaimed
        }
        let (Some(entry), Some(metric)) = (
            by_slot[slot].as_mut(),
            codec::decode(found.kind, &found.payload),
        ) else {
            continue;
        };
        entry.dump.metrics.insert(found.name, metric);
    }
    let mut processes: Vec<ProcessStats> = by_slot.into_iter().flatten().collect();
    processes.sort_by_key(|p| (p.pid, p.instance));
    Snapshot {
        segment: seg.name().to_string(),
        taken,
        processes,
    }
}
