//! `hrts merge`: per-process traces in, one global trace out.
//!
//! As the Intel Trace Collector does it, local stamps are replaced with global
//! ones by modifying their clock tick:
//! - each clock domain's local time is mapped to the master's by its fitted
//!   offset and drift (`domains`);
//! - master time is scaled so that the run (first to last sync exchange) lasts
//!   exactly what the master's gettimeofday measured;
//! - the global tick is finer than every local one (`1/K` ns, K a power of two
//!   chosen so that one local tick spans more than one global tick): events
//!   with different local ticks never share a global tick, and each process's
//!   order is kept;
//! - event counters are renumbered within each global tick, in (process, local
//!   stamp) order, carrying into the tick on overflow as ITC does, so every
//!   global stamp is unique.
//!
//! When every host's time service vouched for its clock throughout (each
//! file's bound records say synchronized) and nobody synced with a master,
//! the stamps need no mapping: each is true time ± its host's bound
//! (`basis`), and the merge says which events of different hosts it cannot
//! order because their intervals overlap (`overlap`).

mod basis;
mod check;
mod domains;
mod output;
mod overlap;

pub use basis::Basis;
pub use check::{causality, check_order, naive_causality, Causality};
pub use domains::{Domain, MappingKind};
pub use output::{write_chrome_json, write_global};
pub use overlap::{Interval, Pair, Unorderable, EXAMPLES};

use crate::clock::ClockInfo;
use crate::fit::DROP_FRACTION;
use crate::format::{
    read_file, GlobalEvent, Header, ProcRecord, ReadOptions, RunRecord, TraceFile, FLAG_GLOBAL,
    FORMAT_VERSION,
};
use hrts_core::{Error, ErrorKind, Result};
use std::collections::HashMap;
use std::path::Path;

/// What `hrts merge` accepts beyond the strict default. Each fallback is
/// flagged in the output (process flags and notes), never silent.
#[derive(Clone, Copy, Debug)]
pub struct MergeOptions {
    /// Read files whose writer never closed them (their complete records).
    pub allow_incomplete: bool,
    /// Take the stamps of a host that never synced as global (error unknown).
    pub allow_unsynced: bool,
    /// Map events outside a host's sync window (bound grows with distance).
    pub extrapolate: bool,
    /// Merge even when sync samples disagree with a steady clock.
    pub accept_disagreement: bool,
    /// Largest believable drift between two clocks, ppm.
    pub max_drift_ppm: f64,
    /// Share of each round's slowest exchanges dropped before fitting.
    pub drop_fraction: f64,
}

impl Default for MergeOptions {
    fn default() -> Self {
        MergeOptions {
            allow_incomplete: false,
            allow_unsynced: false,
            extrapolate: false,
            accept_disagreement: false,
            max_drift_ppm: 1000.0,
            drop_fraction: DROP_FRACTION,
        }
    }
}

/// A merged run.
#[derive(Clone, Debug)]
pub struct Merged {
    pub header: Header,
    pub names: Vec<String>,
    /// One per input file, in input order.
    pub procs: Vec<ProcRecord>,
    pub run: RunRecord,
    /// Sorted by global stamp.
    pub events: Vec<GlobalEvent>,
    pub domains: Vec<Domain>,
    /// Global ticks per nanosecond (the nominal period is 1/K ns).
    pub ticks_per_ns: u64,
    /// gettimeofday seconds per master-clock second over the run.
    pub wall_rate: f64,
    /// Fallbacks taken and other things the user must know.
    pub notes: Vec<String>,
    /// Global ticks raised to keep a process's order (0 unless float rounding
    /// bit; reported, never hidden).
    pub order_corrections: u64,
    /// Whether the hosts' error bounds or the ping-pong sync placed them.
    pub basis: Basis,
}

/// Reads every input, with the strictness `opts` asks for.
pub fn read_inputs(paths: &[impl AsRef<Path>], opts: &MergeOptions) -> Result<Vec<TraceFile>> {
    let read = ReadOptions {
        allow_incomplete: opts.allow_incomplete,
    };
    paths.iter().map(|p| read_file(p.as_ref(), read)).collect()
}

/// Merges process traces (read with [`read_inputs`]) into one global trace.
pub fn merge(mut files: Vec<TraceFile>, opts: &MergeOptions) -> Result<Merged> {
    if files.is_empty() {
        return Err(invalid(
            "nothing to merge: give the process trace files".to_string(),
        ));
    }
    for f in &mut files {
        prepare(f)?;
    }
    let master = master_clock(&files)?;
    let bound_widths = basis::bound_widths(&files);
    let domains =
        domains::build(&files, master, bound_widths.as_ref().ok(), opts).map_err(|e| {
            match &bound_widths {
                // Say why the hosts' bounds could not stand in for what is missing.
                Err(why) => Error::new(
                    e.kind(),
                    format!("{} (bounds not used: {why})", e.message()),
                ),
                Ok(_) => e,
            }
        })?;
    let mut notes = notes_for(&files, &domains);
    let run = Run::measure(&files, opts, &mut notes)?;

    // Each process's local ns -> ns after the run start, on the wall scale.
    let mut maps = vec![None; files.len()];
    for d in &domains {
        for &i in &d.files {
            maps[i] = Some(ProcMap::new(d, &run));
        }
    }
    let maps: Vec<ProcMap> = maps.into_iter().map(|m| m.unwrap_or_default()).collect();

    let k = ticks_per_ns(&files, &maps)?;
    let earliest = files
        .iter()
        .zip(&maps)
        .filter_map(|(f, m)| f.events.first().map(|e| m.at(f.header.epoch_ns(e.stamp))))
        .fold(0.0f64, f64::min);
    // Whole nanoseconds before the run start, so that tick 0 is a whole epoch ns.
    let pre_ns = if earliest < 0.0 {
        (-earliest).ceil() as u64 + 1
    } else {
        0
    };
    let start_tick = pre_ns.checked_mul(k).ok_or_else(|| too_long(k, pre_ns))?;
    let end_tick = run
        .wall_ns
        .checked_mul(k)
        .and_then(|t| t.checked_add(start_tick))
        .ok_or_else(|| too_long(k, run.wall_ns))?;
    let event_bits = files
        .iter()
        .map(|f| f.header.event_bits)
        .max()
        .unwrap_or(13);
    let max_tick = u64::MAX >> event_bits;

    // Global ticks, process by process, in local order.
    let mut order_corrections = 0;
    let mut keyed: Vec<(u64, u32, u64, usize)> = Vec::new();
    for (p, (f, m)) in files.iter().zip(&maps).enumerate() {
        let mut prev: Option<(u64, u64)> = None; // (local tick, global tick)
        for (j, e) in f.events.iter().enumerate() {
            let local_tick = f.header.tick_of(e.stamp);
            let g =
                (m.at(f.header.epoch_ns(e.stamp)) * k as f64).floor() as i128 + start_tick as i128;
            let mut tick = u64::try_from(g.max(0)).unwrap_or(u64::MAX);
            if let Some((pl, pg)) = prev {
                let least = if local_tick > pl { pg + 1 } else { pg };
                if tick < least {
                    tick = least;
                    order_corrections += 1;
                }
            }
            if tick > max_tick {
                return Err(too_long(k, tick / k));
            }
            prev = Some((local_tick, tick));
            keyed.push((tick, p as u32, e.stamp, j));
        }
    }
    keyed.sort_unstable();

    // Names of all files in one table.
    let mut names: Vec<String> = Vec::new();
    let mut name_ids: HashMap<String, u32> = HashMap::new();
    let mut renames: Vec<HashMap<u32, u32>> = Vec::with_capacity(files.len());
    for f in &files {
        let mut m = HashMap::new();
        let mut local_names: Vec<(&u32, &String)> = f.names.iter().collect();
        local_names.sort();
        for (local, name) in local_names {
            let id = *name_ids.entry(name.clone()).or_insert_with(|| {
                names.push(name.clone());
                names.len() as u32 - 1
            });
            m.insert(*local, id);
        }
        renames.push(m);
    }

    // Global stamps: the tick, then a counter within it (carrying on overflow).
    let encode = |tick: u64| tick << event_bits;
    let mut taken: Vec<Vec<Option<crate::format::Event>>> = files
        .iter_mut()
        .map(|f| {
            std::mem::take(&mut f.events)
                .into_iter()
                .map(Some)
                .collect()
        })
        .collect();
    let mut events = Vec::with_capacity(keyed.len());
    let mut last: Option<u64> = None;
    for (tick, p, local, j) in keyed {
        let fresh = encode(tick);
        let stamp = match last {
            Some(l) if l >= fresh => l.checked_add(1).ok_or_else(|| too_long(k, tick / k))?,
            _ => fresh,
        };
        if stamp >> event_bits > max_tick {
            return Err(too_long(k, tick / k));
        }
        last = Some(stamp);
        let mut e = taken[p as usize][j].take().ok_or_else(|| {
            Error::new(
                ErrorKind::Corrupt,
                "internal error: an event was merged twice",
            )
        })?;
        e.name = renames[p as usize].get(&e.name).copied().unwrap_or(0);
        e.stamp = stamp;
        events.push(GlobalEvent {
            proc_index: p,
            local_stamp: local,
            event: e,
        });
    }

    let mut counts = vec![0u64; files.len()];
    for e in &events {
        counts[e.proc_index as usize] += 1;
    }
    let procs = files
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let d = domains.iter().find(|d| d.files.contains(&i));
            proc_record(i, f, d, counts[i])
        })
        .collect();
    let master_info = master_info(&files, &domains, master, &run);
    let header = Header {
        version: FORMAT_VERSION,
        flags: FLAG_GLOBAL,
        event_bits,
        pid: 0,
        tick_num: 1,
        tick_den: k,
        origin_ns: run.wall_start.saturating_sub(pre_ns),
        clock: master_info,
        label: format!("hrts merge of {} traces", files.len()),
        max_events_per_tick: events
            .iter()
            .map(|e| e.event.stamp & ((1u64 << event_bits) - 1))
            .max()
            .or(Some(0)),
    };
    let basis = match bound_widths {
        Ok(_) => Basis::Bounds(overlap::unorderable(
            &intervals(&files, &domains, &events),
            EXAMPLES,
        )),
        Err(why_not_bounds) => Basis::Sync { why_not_bounds },
    };
    if order_corrections > 0 {
        notes.push(format!(
            "{order_corrections} global ticks were raised by one to keep a process's order \
             (rounding at the limit of the tick resolution)"
        ));
    }
    Ok(Merged {
        header,
        names,
        procs,
        run: RunRecord {
            start_tick,
            end_tick,
            wall_start_ns: run.wall_start,
            wall_end_ns: run.wall_start + run.wall_ns,
            master_host: run.master_host.clone(),
        },
        events,
        domains,
        ticks_per_ns: k,
        wall_rate: run.rate,
        notes,
        order_corrections,
        basis,
    })
}

/// Each merged event's interval: its local stamp ± its host's bound, the
/// latest end also covering the rest of the stamp's clock tick. One host's
/// widths are the same for all its events (its widest tick), as
/// `overlap::unorderable` needs.
fn intervals(files: &[TraceFile], domains: &[Domain], events: &[GlobalEvent]) -> Vec<Interval> {
    let mut host_of = vec![(0, 0, 0); files.len()];
    for (h, d) in domains.iter().enumerate() {
        let tick = d.files.iter().map(|&i| files[i].header.tick_num).max();
        let after = d.fit.bound_ns as u64 + tick.unwrap_or(1).saturating_sub(1);
        for &i in &d.files {
            host_of[i] = (h, d.fit.bound_ns as u64, after);
        }
    }
    events
        .iter()
        .map(|g| {
            let p = g.proc_index as usize;
            let (host, before, after) = host_of[p];
            let t = files[p].header.epoch_ns(g.local_stamp);
            Interval {
                host,
                earliest: t.saturating_sub(before),
                latest: t.saturating_add(after),
            }
        })
        .collect()
}

impl Merged {
    /// Epoch nanoseconds (master gettimeofday scale) of a global stamp, as a
    /// float with the sub-ns part.
    pub fn epoch_ns_f(&self, stamp: u64) -> f64 {
        self.header.origin_ns as f64
            + (stamp >> self.header.event_bits) as f64 / self.ticks_per_ns as f64
    }

    /// The run's length in global ticks times the nominal tick: ns.
    pub fn run_ns(&self) -> f64 {
        (self.run.end_tick - self.run.start_tick) as f64 / self.ticks_per_ns as f64
    }
}

/// Sorts a file's events by stamp and rejects what a process file cannot hold.
fn prepare(f: &mut TraceFile) -> Result<()> {
    if f.header.is_global() {
        return Err(invalid(format!(
            "{} is a merged (global) trace: merge the per-process traces it came from",
            f.path
        )));
    }
    if f.header.tick_den != 1 {
        return Err(Error::new(
            ErrorKind::Corrupt,
            format!(
                "{}: a process trace with a fractional tick: the file is damaged",
                f.path
            ),
        ));
    }
    f.events.sort_by_key(|e| e.stamp);
    if let Some(w) = f.events.windows(2).find(|w| w[0].stamp == w[1].stamp) {
        return Err(Error::new(
            ErrorKind::Corrupt,
            format!(
                "{}: two events share the local stamp {:#x}, which a writer never issues: the \
                 file is damaged or was concatenated from two",
                f.path, w[0].stamp
            ),
        ));
    }
    Ok(())
}

/// The one master every sync record names.
fn master_clock(files: &[TraceFile]) -> Result<Option<u64>> {
    let mut masters: Vec<(u64, &str, &str)> = Vec::new();
    for f in files {
        for s in &f.syncs {
            if !masters.iter().any(|m| m.0 == s.master_clock_id) {
                masters.push((s.master_clock_id, &s.master_host, &f.path));
            }
        }
    }
    match masters.as_slice() {
        [] => Ok(None),
        [(id, _, _)] => Ok(Some(*id)),
        [a, b, ..] => Err(invalid(format!(
            "the traces were synced with different masters (host {} in {}, host {} in {}): \
             merge the traces of one run, synced with one master",
            a.1, a.2, b.1, b.2
        ))),
    }
}

/// The run on the master's clock and by its gettimeofday.
struct Run {
    /// Master clock at the first sync exchange.
    master_start: u64,
    wall_start: u64,
    /// The run's length by gettimeofday.
    wall_ns: u64,
    /// wall ns per master-clock ns.
    rate: f64,
    master_host: String,
}

impl Run {
    fn measure(files: &[TraceFile], opts: &MergeOptions, notes: &mut Vec<String>) -> Result<Run> {
        let mut first: Option<(u64, u64)> = None;
        let mut last: Option<(u64, u64)> = None;
        let mut master_host = String::new();
        for s in files.iter().flat_map(|f| &f.syncs) {
            master_host.clone_from(&s.master_host);
            for x in s.exchanges.iter().filter(|x| x.rtt_ns().is_some()) {
                if first.is_none_or(|(t, _)| t > x.t1) {
                    first = Some((x.t1, x.wall));
                }
                if last.is_none_or(|(t, _)| t < x.t1) {
                    last = Some((x.t1, x.wall));
                }
            }
        }
        let (Some(first), Some(last)) = (first, last) else {
            // Nothing synced (every domain unsynced or the master's own): the
            // run is the span of the events on their own clocks.
            let times = files.iter().flat_map(|f| {
                let h = &f.header;
                f.events.iter().map(move |e| h.epoch_ns(e.stamp))
            });
            let (lo, hi) = times.fold((u64::MAX, 0), |(lo, hi), t| (lo.min(t), hi.max(t)));
            let lo = if lo == u64::MAX { 0 } else { lo };
            notes.push(
                "no sync exchange in any input: the run is the span of the events, not \
                 measured by a master's gettimeofday"
                    .to_string(),
            );
            return Ok(Run {
                master_start: lo,
                wall_start: lo,
                wall_ns: hi.saturating_sub(lo),
                rate: 1.0,
                master_host: files[0].header.clock.host.clone(),
            });
        };
        let clock_ns = last.0 - first.0;
        let wall_ns = last.1 as i128 - first.1 as i128;
        let rate = if clock_ns == 0 {
            1.0
        } else {
            wall_ns as f64 / clock_ns as f64
        };
        // A system clock stepped during the run shows as a difference far
        // beyond any drift; the 1 ms slack keeps short runs, where a few us of
        // tracking slew are many ppm, from looking stepped.
        let allowed = opts.max_drift_ppm * 1e-6 * clock_ns as f64 + 1e6;
        if wall_ns < 0 || (wall_ns as f64 - clock_ns as f64).abs() > allowed {
            if !opts.accept_disagreement {
                return Err(invalid(format!(
                    "the master's gettimeofday moved {:.6} s while its clock moved {:.6} s \
                     between the first and the last sync exchange: its system clock was stepped \
                     during the run; pass --accept-disagreement to scale to gettimeofday anyway \
                     (flagged)",
                    wall_ns as f64 / 1e9,
                    clock_ns as f64 / 1e9
                )));
            }
            notes.push(format!(
                "the master's gettimeofday and its clock disagree over the run (rate {rate:.9}): \
                 merged with --accept-disagreement"
            ));
        }
        Ok(Run {
            master_start: first.0,
            wall_start: first.1,
            wall_ns: wall_ns.max(0) as u64,
            rate: if wall_ns < 0 { 1.0 } else { rate },
            master_host,
        })
    }
}

/// A process's local ns -> wall-scale ns after the run start:
/// `base + (x - ref) * slope`.
#[derive(Clone, Copy, Debug, Default)]
struct ProcMap {
    base: f64,
    ref_x: u64,
    slope: f64,
}

impl ProcMap {
    fn new(d: &Domain, run: &Run) -> ProcMap {
        let f = &d.fit;
        let to_master_start = (f.ref_local_ns as i128 - run.master_start as i128) as f64;
        ProcMap {
            base: (to_master_start + f.offset_ns) * run.rate,
            ref_x: f.ref_local_ns,
            slope: (1.0 + f.drift) * run.rate,
        }
    }

    fn at(&self, x: u64) -> f64 {
        self.base + (x as i128 - self.ref_x as i128) as f64 * self.slope
    }
}

/// K: the smallest power of two that makes one local tick of every process
/// span more than one global tick (by 0.1 %, far beyond float rounding).
fn ticks_per_ns(files: &[TraceFile], maps: &[ProcMap]) -> Result<u64> {
    let least = files
        .iter()
        .zip(maps)
        .filter(|(f, _)| !f.events.is_empty())
        .map(|(f, m)| f.header.tick_num as f64 * m.slope)
        .fold(f64::INFINITY, f64::min);
    let mut k = 1u64;
    while least.is_finite() && (k as f64) * least < 1.001 {
        k *= 2;
        if k > 1 << 30 {
            return Err(invalid(format!(
                "a clock mapping compresses time by {least}: no global tick can keep its events \
                 apart; check the inputs' sync records"
            )));
        }
    }
    Ok(k)
}

fn proc_record(i: usize, f: &TraceFile, d: Option<&Domain>, events: u64) -> ProcRecord {
    let h = &f.header;
    let (fit, flags) = d.map_or((None, 0), |d| (Some(&d.fit), d.flags));
    ProcRecord {
        index: i as u32,
        pid: h.pid,
        clock_id: h.clock.clock_id,
        event_bits: h.event_bits,
        flags,
        tick_num: h.tick_num,
        tick_den: h.tick_den,
        origin_ns: h.origin_ns,
        ref_local_ns: fit.map_or(0, |f| f.ref_local_ns),
        offset_ns: fit.map_or(0.0, |f| f.offset_ns),
        drift: fit.map_or(0.0, |f| f.drift),
        bound_ns: fit.map_or(f64::INFINITY, |f| f.bound_ns),
        events,
        host: h.clock.host.clone(),
        label: h.label.clone(),
        file: f.path.clone(),
    }
}

fn master_info(
    files: &[TraceFile],
    domains: &[Domain],
    master: Option<u64>,
    run: &Run,
) -> ClockInfo {
    let from_file = master.and_then(|id| {
        domains
            .iter()
            .find(|d| d.clock_id == id)
            .map(|d| files[d.files[0]].header.clock.clone())
    });
    let mut info = from_file.unwrap_or_else(|| ClockInfo {
        host: run.master_host.clone(),
        clock_id: master.unwrap_or(0),
        ..ClockInfo::default()
    });
    info.test_skew = files.iter().any(|f| f.header.clock.test_skew);
    info
}

fn notes_for(files: &[TraceFile], domains: &[Domain]) -> Vec<String> {
    let mut notes = Vec::new();
    if files.iter().any(|f| f.header.clock.test_skew) {
        notes.push(
            "some inputs were recorded with HRTS_TEST_CLOCK_SKEW (a test-only clock skew)"
                .to_string(),
        );
    }
    for d in domains {
        let what = match d.kind {
            MappingKind::Unsynced => {
                Some("never synced: its local stamps were taken as global (error unknown)")
            }
            MappingKind::OffsetOnly => {
                Some("synced at one point only: drift taken as 0, bound grows with distance")
            }
            _ => None,
        };
        if let Some(w) = what {
            notes.push(format!("host {} {w}", d.host));
        }
        for (flag, w) in [
            (
                crate::format::MAP_EXTRAPOLATED,
                "has events outside its sync window (extrapolated)",
            ),
            (
                crate::format::MAP_DISAGREEMENT,
                "has sync samples that disagree with a steady clock (accepted)",
            ),
            (
                crate::format::MAP_INCOMPLETE,
                "has files whose writer never closed them (their complete records were used)",
            ),
        ] {
            if d.flags & flag != 0 {
                notes.push(format!("host {} {w}", d.host));
            }
        }
    }
    notes
}

fn invalid(message: String) -> Error {
    Error::new(ErrorKind::InvalidArgument, message)
}

fn too_long(k: u64, ns: u64) -> Error {
    invalid(format!(
        "the merged run spans {:.0} s, more than global stamps of 1/{k} ns ticks can hold: merge \
         shorter runs, or use fewer event bits (HRTS_ITC_EVENT_BITS) when recording",
        ns as f64 / 1e9
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::{Event, EventKind, SyncRecord, FORMAT_VERSION};
    use crate::sync::{Exchange, SyncPhase};

    const T0: u64 = 1_700_000_000_000_000_000;

    /// A process file of clock `clock` with `tick_ns` ticks and `bits` event
    /// bits; events as (kind, tick, counter, id).
    fn file(
        clock: u64,
        tick_ns: u64,
        bits: u32,
        events: &[(EventKind, u64, u64, u64)],
    ) -> TraceFile {
        TraceFile {
            path: format!("clock{clock}"),
            header: Header {
                version: FORMAT_VERSION,
                flags: 0,
                event_bits: bits,
                pid: clock as u32,
                tick_num: tick_ns,
                tick_den: 1,
                origin_ns: T0,
                clock: ClockInfo {
                    host: format!("h{clock}"),
                    clock_id: clock,
                    ..ClockInfo::default()
                },
                label: String::new(),
                max_events_per_tick: None,
            },
            names: [(0, "e".to_string())].into_iter().collect(),
            events: events
                .iter()
                .map(|&(kind, tick, n, id)| Event {
                    kind,
                    name: 0,
                    stamp: tick << bits | n,
                    id,
                    payload: vec![],
                })
                .collect(),
            syncs: vec![],
            bounds: vec![],
            procs: vec![],
            global_events: vec![],
            run: None,
            complete: true,
            torn_bytes: 0,
            records: 0,
        }
    }

    /// A sync round of the master's own clock `clock` at `at` (ns after T0),
    /// its wall clock `wall_skip` ns ahead.
    fn round(clock: u64, at: u64, wall_skip: u64, phase: SyncPhase) -> SyncRecord {
        let t = T0 + at;
        SyncRecord {
            phase,
            master_host: "m".into(),
            master_clock_id: clock,
            exchanges: vec![Exchange {
                t0: t,
                t1: t + 1_000,
                t2: t + 1_500,
                t3: t + 2_500,
                wall: t + 1_000 + wall_skip,
            }],
        }
    }

    #[test]
    fn coarse_ticks_keep_their_order_and_share_no_global_stamp() {
        use EventKind::*;
        // us ticks, 2 event bits: five events of two processes on one tick,
        // so the fifth global stamp carries into the next tick.
        let a = file(
            1,
            1_000,
            2,
            &[
                (Send, 10, 0, 1),
                (Instant, 10, 1, 0),
                (Instant, 10, 2, 0),
                (Instant, 10, 3, 0),
                (Instant, 11, 0, 0),
            ],
        );
        let mut b = file(
            1,
            1_000,
            2,
            &[
                (Instant, 10, 0, 0),
                (Receive, 12, 0, 1),
                (Instant, 12, 1, 0),
            ],
        );
        b.syncs = vec![
            round(1, 0, 0, SyncPhase::Start),
            round(1, 50_000, 0, SyncPhase::End),
        ];
        let m = merge(vec![a, b], &MergeOptions::default()).unwrap();
        assert_eq!(
            m.ticks_per_ns, 1,
            "1 us local ticks need no finer global tick than 1 ns"
        );
        assert_eq!(check_order(&m), (0, 0));
        let c = causality(&m);
        assert_eq!((c.messages, c.violations), (1, 0));
        // Global ticks are ns: larger numbers than the local us ticks.
        assert!(m
            .events
            .iter()
            .all(|g| g.event.stamp >> 2 > g.local_stamp >> 2));
        assert_eq!(m.run.end_tick - m.run.start_tick, 50_000);
        let on_tick: Vec<(u32, u64)> = m.events[..5]
            .iter()
            .map(|g| (g.proc_index, g.event.stamp))
            .collect();
        let tick = on_tick[0].1 >> 2;
        assert!(
            on_tick[..4].iter().all(|&(p, s)| p == 0 && s >> 2 == tick),
            "{on_tick:?}"
        );
        assert_eq!(
            on_tick[4],
            (1, (tick + 1) << 2),
            "the fifth carried: {on_tick:?}"
        );
        // Four events on that global tick: ITC's count, in the global header.
        let most = m.events.iter().map(|g| g.event.stamp & 3).max();
        assert_eq!(most, Some(3));
        assert_eq!(m.header.max_events_per_tick, most);
    }

    #[test]
    fn a_master_whose_gettimeofday_was_stepped_is_refused_unless_accepted() {
        let mut f = file(1, 1, 13, &[(EventKind::Instant, 10_000, 0, 0)]);
        f.syncs = vec![
            round(1, 0, 0, SyncPhase::Start),
            round(1, 1_000_000_000, 5_000_000_000, SyncPhase::End),
        ];
        let e = merge(vec![f.clone()], &MergeOptions::default()).unwrap_err();
        assert!(e.message().contains("stepped"), "{e}");
        let opts = MergeOptions {
            accept_disagreement: true,
            ..MergeOptions::default()
        };
        let m = merge(vec![f], &opts).unwrap();
        assert_eq!(m.run.wall_end_ns - m.run.wall_start_ns, 6_000_000_000);
        assert!(
            m.notes.iter().any(|n| n.contains("--accept-disagreement")),
            "{:?}",
            m.notes
        );
    }

    #[test]
    fn duplicate_local_stamps_and_global_inputs_are_refused() {
        let f = file(
            1,
            1,
            13,
            &[(EventKind::Instant, 5, 0, 0), (EventKind::Instant, 5, 0, 0)],
        );
        let e = merge(
            vec![f],
            &MergeOptions {
                allow_unsynced: true,
                ..MergeOptions::default()
            },
        )
        .unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Corrupt);
        assert!(e.message().contains("share the local stamp"), "{e}");
        let mut g = file(1, 1, 13, &[]);
        g.header.flags = FLAG_GLOBAL;
        assert!(merge(vec![g], &MergeOptions::default()).is_err());
    }
}
