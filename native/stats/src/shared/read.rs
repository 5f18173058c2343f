//! Taking a snapshot: every live registration's metrics, read without locks.
//! A slot or cell whose words fail their check is left out and listed in
//! [`Snapshot::damaged_slots`] / [`Snapshot::damaged_cells`].

use super::cells::{self, Read};
use super::processes::{self, ReadSlot};
use super::segment::StatsSegment;
use super::snapshot::{ProcessState, ProcessStats, Snapshot};
use super::{codec, layout};
use crate::dump::Dump;
use std::collections::BTreeMap;

/// What the reader made of a slot.
enum Seen {
    Nothing,
    Damaged,
    Live(u32, ProcessStats),
}

pub fn snapshot(seg: &StatsSegment, taken: u64) -> Snapshot {
    let mut damaged_slots = Vec::new();
    let mut damaged_cells = Vec::new();
    let mut by_slot: Vec<Seen> = (0..layout::PROCESS_SLOTS)
        .map(|slot| match processes::read_slot(seg, slot) {
            ReadSlot::Nothing => Seen::Nothing,
            ReadSlot::Damaged => {
                damaged_slots.push(slot);
                Seen::Damaged
            }
            ReadSlot::Live(s) => Seen::Live(
                s.generation & 0x7fff_ffff,
                ProcessStats {
                    pid: s.pid,
                    instance: s.instance,
                    program: s.program,
                    instance_id: s.instance_id,
                    state: if hrts_core::process::still_running(s.pid, s.start) {
                        ProcessState::Live
                    } else {
                        ProcessState::Exited
                    },
                    dump: Dump {
                        timestamp: s.published,
                        metrics: BTreeMap::new(),
                    },
                },
            ),
        })
        .collect();
    for cell in 0..layout::CELLS {
        let found = match cells::read(seg, cell) {
            Read::Nothing => continue,
            Read::Damaged => {
                damaged_cells.push(cell);
                continue;
            }
            Read::Found(found) => found,
        };
        match &mut by_slot[found.owner.slot] {
            Seen::Live(generation, entry) if *generation == found.owner.generation => {
                match codec::decode(found.kind, &found.payload) {
                    Some(metric) => {
                        entry.dump.metrics.insert(found.name, metric);
                    }
                    // A kind no writer writes, under a check that matched.
                    None => damaged_cells.push(cell),
                }
            }
            // The cells of a damaged slot cannot be told whose they are.
            Seen::Damaged => damaged_cells.push(cell),
            // A cell of an earlier registration, being reclaimed, or of one
            // that registered after this reader read its slot.
            _ => {}
        }
    }
    let mut processes: Vec<ProcessStats> = by_slot
        .into_iter()
        .filter_map(|s| match s {
            Seen::Live(_, p) => Some(p),
            _ => None,
        })
        .collect();
    processes.sort_by_key(|p| (p.pid, p.instance));
    Snapshot {
        segment: seg.name().to_string(),
        taken,
        processes,
        damaged_slots,
        damaged_cells,
    }
}
