//! One statistics instance's side of the segment: its registration, a cell per
//! metric, and publication of its metrics.

use super::cells::Claimed;
use super::processes::{self, Registered};
use super::segment::StatsSegment;
use super::{cells, codec, SharedConfig};
use crate::dump::Dump;
use crate::registry::Registry;
use hrts_core::Result;
use std::sync::atomic::AtomicU32;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;

/// How often a publisher looks for gone processes to reclaim.
const RECLAIM_EVERY_NS: u64 = 5_000_000_000;

/// Instances of this process that registered, for their numbers.
static INSTANCES: AtomicU32 = AtomicU32::new(0);

pub(crate) struct Publisher {
    pub(crate) seg: Arc<StatsSegment>,
    slot: Registered,
    /// The cell of each metric id, once claimed.
    cells: Vec<Option<Claimed>>,
    grace_ns: u64,
    next_reclaim: u64,
}

impl Publisher {
    /// Opens the segment and registers this instance.
    pub(crate) fn start(cfg: &SharedConfig) -> Result<Publisher> {
        Publisher::on(Arc::new(StatsSegment::open(cfg)?), cfg)
    }

    /// Registers this instance in `seg`, already open (`cfg.name` unused).
    pub(crate) fn on(seg: Arc<StatsSegment>, cfg: &SharedConfig) -> Result<Publisher> {
        let grace_ns = cfg.grace.as_nanos() as u64;
        let instance = INSTANCES.fetch_add(1, Relaxed) + 1;
        let now = processes::now_ns();
        processes::reclaim(&seg, grace_ns, now);
        let slot = processes::register(&seg, instance, &cfg.program, &cfg.instance_id, grace_ns)?;
        Ok(Publisher {
            seg,
            slot,
            cells: Vec::new(),
            grace_ns,
            next_reclaim: now + RECLAIM_EVERY_NS,
        })
    }

    /// The cell of metric `id`, claimed on first use.
    pub(crate) fn cell(&mut self, id: u32, registry: &Registry) -> Result<Option<Claimed>> {
        let i = id as usize;
        if let Some(Some(cell)) = self.cells.get(i) {
            return Ok(Some(*cell));
        }
        let Some(meta) = registry.meta(id) else {
            return Ok(None);
        };
        let kind = codec::kind_code(meta.kind);
        let cell = match cells::claim(&self.seg, self.slot.id, kind, &meta.name) {
            Ok(c) => c,
            Err(_) if processes::reclaim(&self.seg, self.grace_ns, processes::now_ns()) > 0 => {
                cells::claim(&self.seg, self.slot.id, kind, &meta.name)?
            }
            Err(e) => return Err(e),
        };
        if self.cells.len() <= i {
            self.cells.resize(i + 1, None);
        }
        self.cells[i] = Some(cell);
        Ok(Some(cell))
    }

    /// Claims cells for every metric the registry has (at start).
    pub(crate) fn claim_all(&mut self, registry: &Registry) -> Result<()> {
        for id in 0..registry.len() as u32 {
            self.cell(id, registry)?;
        }
        Ok(())
    }

    /// Publishes every metric of `dump` (metrics without a cell are skipped:
    /// their creation reported the error).
    pub(crate) fn publish(&mut self, dump: &Dump, registry: &Registry) {
        for (name, metric) in &dump.metrics {
            let Some(id) = registry.lookup(name) else {
                continue;
            };
            if let Ok(Some(cell)) = self.cell(id, registry) {
                cells::publish(&self.seg, cell, &codec::encode(metric));
            }
        }
        processes::set_published(&self.seg, self.slot, dump.timestamp);
        let now = processes::now_ns();
        if now >= self.next_reclaim {
            processes::reclaim(&self.seg, self.grace_ns, now);
            self.next_reclaim = now + RECLAIM_EVERY_NS;
        }
    }
}

impl Drop for Publisher {
    fn drop(&mut self) {
        for claimed in self.cells.iter().flatten() {
            cells::free(&self.seg, claimed.cell, self.slot.id);
        }
        processes::release(&self.seg, self.slot.id);
    }
}
