//! Clock domains: the files that share one local clock (one host's timeline),
//! their pooled sync rounds, and how their local time maps to the master's.

use super::MergeOptions;
use crate::fit::{fit_line, fit_offset_only, pooled_samples, LineFit};
use crate::format::{
    SyncRecord, TraceFile, MAP_BOUNDS, MAP_DISAGREEMENT, MAP_EXTRAPOLATED, MAP_INCOMPLETE,
    MAP_MASTER, MAP_UNSYNCED,
};
use hrts_core::{Error, ErrorKind, Result};
use std::collections::HashMap;

/// How a domain's local time becomes master time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MappingKind {
    /// The master's own clock: identity, exact.
    Master,
    /// Offset and drift fitted to sync rounds.
    Fit,
    /// Offset only (one sync point, `--extrapolate`).
    OffsetOnly,
    /// Never synced: identity, error unknown (`--allow-unsynced`).
    Unsynced,
    /// Its time service vouched for it: identity, its error bound.
    Bounds,
}

impl MappingKind {
    pub fn name(self) -> &'static str {
        match self {
            MappingKind::Master => "master-clock",
            MappingKind::Fit => "fit",
            MappingKind::OffsetOnly => "offset-only",
            MappingKind::Unsynced => "unsynced",
            MappingKind::Bounds => "bounds",
        }
    }
}

/// One clock domain.
#[derive(Clone, Debug)]
pub struct Domain {
    pub clock_id: u64,
    pub host: String,
    /// Indices of its files among the inputs.
    pub files: Vec<usize>,
    pub kind: MappingKind,
    /// The mapping (identity for Master and Unsynced).
    pub fit: LineFit,
    pub flags: u32,
    pub rounds: usize,
    pub exchanges: usize,
    pub dropped: usize,
    /// First and last event of the domain (local ns), if any.
    pub events: Option<(u64, u64)>,
}

impl Domain {
    /// The local clock's offset from the master (local − master) at the
    /// domain's reference point, in ns.
    pub fn local_minus_master_ns(&self) -> f64 {
        -self.fit.offset_ns
    }

    /// The master's clock at the reference point.
    pub fn ref_master_ns(&self) -> f64 {
        self.fit.ref_local_ns as f64 + self.fit.offset_ns
    }
}

/// Groups `files` by clock and maps each group; `master` is the master's
/// clock id (None when nothing was synced); `bounds`, each clock's half
/// width when the hosts' error bounds place them instead of a sync.
pub fn build(
    files: &[TraceFile],
    master: Option<u64>,
    bounds: Option<&HashMap<u64, u64>>,
    opts: &MergeOptions,
) -> Result<Vec<Domain>> {
    let mut ids: Vec<u64> = Vec::new();
    for f in files {
        if !ids.contains(&f.header.clock.clock_id) {
            ids.push(f.header.clock.clock_id);
        }
    }
    ids.into_iter()
        .map(|id| {
            let members: Vec<usize> = (0..files.len())
                .filter(|&i| files[i].header.clock.clock_id == id)
                .collect();
            let width = bounds.and_then(|b| b.get(&id).copied());
            domain(files, id, members, master, width, opts)
        })
        .collect()
}

fn domain(
    files: &[TraceFile],
    clock_id: u64,
    members: Vec<usize>,
    master: Option<u64>,
    bound_width: Option<u64>,
    opts: &MergeOptions,
) -> Result<Domain> {
    let host = files[members[0]].header.clock.host.clone();
    let names = || {
        members
            .iter()
            .map(|&i| files[i].path.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let events = event_range(files, &members);
    let rounds: Vec<&SyncRecord> = members.iter().flat_map(|&i| &files[i].syncs).collect();
    let incomplete = members.iter().any(|&i| !files[i].complete);
    let mut flags = if incomplete { MAP_INCOMPLETE } else { 0 };
    let (samples, exchanges, dropped) = pooled_samples(rounds.iter().copied(), opts.drop_fraction);
    let span = events.unwrap_or((0, 0));
    let mut d = Domain {
        clock_id,
        host: host.clone(),
        files: members.clone(),
        kind: MappingKind::Master,
        fit: LineFit::exact(span),
        flags,
        rounds: rounds.len(),
        exchanges,
        dropped,
        events,
    };
    if let Some(width) = bound_width {
        // Its stamps are true time ± its bound already.
        d.kind = MappingKind::Bounds;
        d.fit.bound_ns = width as f64;
        d.flags |= MAP_BOUNDS;
        return Ok(d);
    }
    if master == Some(clock_id) {
        d.flags |= MAP_MASTER;
        return Ok(d);
    }
    if samples.is_empty() {
        if !opts.allow_unsynced {
            return Err(Error::new(
                ErrorKind::InvalidArgument,
                format!(
                    "host {host} (clock {clock_id:#x}: {}) never synced with the master, so its \
                     stamps cannot be placed on the global timeline: run `hrts sync --master \
                     ADDR` on it at the start and the end of the run (or sync from the writer), \
                     or pass --allow-unsynced to take its local stamps as global (flagged, \
                     error unknown)",
                    names()
                ),
            ));
        }
        d.kind = MappingKind::Unsynced;
        d.fit = LineFit::unknown(span);
        d.flags |= MAP_UNSYNCED;
        return Ok(d);
    }
    let window = (samples[0].x, samples[samples.len() - 1].x);
    let covered = events.is_none_or(|(lo, hi)| window.0 <= lo && hi <= window.1);
    let max_drift = opts.max_drift_ppm * 1e-6;
    let (kind, fit) = if covered && rounds.len() >= 2 {
        (MappingKind::Fit, fit_line(&samples, max_drift))
    } else if covered {
        (
            MappingKind::OffsetOnly,
            fit_offset_only(&samples, max_drift),
        )
    } else if !opts.extrapolate {
        return Err(missing_end(&host, &names(), window, events));
    } else if rounds.len() >= 2 && window.1 > window.0 {
        flags |= MAP_EXTRAPOLATED;
        (MappingKind::Fit, fit_line(&samples, max_drift))
    } else {
        flags |= MAP_EXTRAPOLATED;
        (
            MappingKind::OffsetOnly,
            fit_offset_only(&samples, max_drift),
        )
    };
    let fit = fit.ok_or_else(|| Error::new(ErrorKind::InvalidArgument, "no sync samples"))?;
    d.kind = kind;
    if !fit.consistent {
        if !opts.accept_disagreement {
            return Err(Error::new(
                ErrorKind::InvalidArgument,
                format!(
                    "host {host} ({}): the clocks disagree beyond the bound: no steady clock \
                     (a straight line with a drift under {} ppm, --max-drift-ppm) passes within \
                     half a round trip of all {} kept sync exchanges; the fitted line (rate \
                     {:+.1} ppm) misses one by {:.1} us more than its half round trip: the clock \
                     did not run at a steady rate (stepped or slewed during the run); pass \
                     --accept-disagreement to merge with this fit anyway (flagged)",
                    names(),
                    opts.max_drift_ppm,
                    fit.samples,
                    fit.local_rate_ppm(),
                    fit.worst_miss_ns.max(0.0) / 1e3
                ),
            ));
        }
        flags |= MAP_DISAGREEMENT;
    }
    d.fit = fit;
    d.flags = flags;
    Ok(d)
}

fn missing_end(host: &str, names: &str, window: (u64, u64), events: Option<(u64, u64)>) -> Error {
    let (lo, hi) = events.unwrap_or(window);
    let secs = |ns: u64| ns as f64 / 1e9;
    let which = match (lo < window.0, hi > window.1) {
        (true, true) => format!(
            "its sync records lie inside its events (from {:.3} s after the first event to \
             {:.3} s before the last): sync records are missing at both ends",
            secs(window.0 - lo),
            secs(hi - window.1)
        ),
        (true, false) => format!(
            "its events start {:.3} s before its first sync: sync records are missing at the \
             start",
            secs(window.0 - lo)
        ),
        _ => format!(
            "its events go on {:.3} s after its last sync: sync records are missing at the \
             end (did the process stop before its end sync?)",
            secs(hi - window.1)
        ),
    };
    Error::new(
        ErrorKind::InvalidArgument,
        format!(
            "host {host} ({names}): {which}; sync at the start and the end of the run, or pass \
             --extrapolate to map the events outside the sync window anyway (flagged, with a \
             growing bound)"
        ),
    )
}

/// The local times of a domain's first and last event.
fn event_range(files: &[TraceFile], members: &[usize]) -> Option<(u64, u64)> {
    members
        .iter()
        .flat_map(|&i| {
            let h = &files[i].header;
            files[i].events.iter().map(move |e| h.epoch_ns(e.stamp))
        })
        .fold(None, |acc, t| match acc {
            None => Some((t, t)),
            Some((lo, hi)) => Some((lo.min(t), hi.max(t))),
        })
}
