//! Whether the hosts' own error bounds can place their events, instead of a
//! ping-pong sync with a master.
//!
//! A host whose time service vouches for its clock (synchronized) stamps true
//! time ± its bound, so its stamps need no mapping: events of different hosts
//! are ordered wherever their intervals do not overlap. That holds only when
//! every file says so for its whole run; anything less falls back to the
//! ping-pong sync, exactly as merges before bound records did.

use crate::format::TraceFile;
use hrts_core::BoundStatus;
use std::collections::HashMap;

/// How the merge put the hosts on one timeline.
#[derive(Clone, Debug, PartialEq)]
pub enum Basis {
    /// Each host's stamps as they are, ± the widest bound its records allow.
    Bounds(super::overlap::Unorderable),
    /// The ping-pong sync (or `--allow-unsynced`), as without bound records.
    Sync {
        /// Why the bounds were not used.
        why_not_bounds: String,
    },
}

/// Each clock's half width (ns) when every file's bound records say
/// synchronized and no file was synced with a master; else why not.
pub(crate) fn bound_widths(files: &[TraceFile]) -> Result<HashMap<u64, u64>, String> {
    for f in files {
        let host = &f.header.clock.host;
        if f.bounds.is_empty() {
            let why = if f.header.clock.test_skew {
                "its clock was skewed by HRTS_TEST_CLOCK_SKEW, which no time service vouches for"
            } else if f.header.version < 2 {
                "trace format version 1 has none"
            } else {
                "its writer's clock is not an hrts timeline"
            };
            return Err(format!(
                "host {host} has no bound record in {} ({why})",
                f.path
            ));
        }
        // A free-running host's interval still holds, but widens without a
        // limit the records could state: only a fresh word gives a width.
        if let Some(b) = f
            .bounds
            .iter()
            .find(|b| b.status != BoundStatus::Synchronized)
        {
            return Err(format!(
                "host {host}'s bound record in {} says {} (source {})",
                f.path,
                b.status.name(),
                b.source.name()
            ));
        }
    }
    // A run synced with a master asked for its fit, which is tighter than
    // any time service's bound.
    if let Some(s) = files.iter().flat_map(|f| &f.syncs).next() {
        return Err(format!(
            "the inputs carry ping-pong sync rounds with master {}: their fit is used",
            s.master_host
        ));
    }
    let mut widths: HashMap<u64, u64> = HashMap::new();
    for f in files {
        let widest = f.bounds.iter().map(|b| b.widest_ns).max().unwrap_or(0);
        let w = widths.entry(f.header.clock.clock_id).or_insert(0);
        *w = (*w).max(widest);
    }
    Ok(widths)
}
