//! Reading and validating a whole trace file.

use super::header::Header;
use super::record::{BoundRecord, Event, GlobalEvent, ProcRecord, Record, RunRecord, SyncRecord};
use super::MAX_RECORD_LEN;
use hrts_core::{Error, ErrorKind, Result};
use std::collections::HashMap;
use std::path::Path;

/// How strict reading is.
#[derive(Clone, Copy, Debug, Default)]
pub struct ReadOptions {
    /// Accept a file whose writer never closed it (no END record, or a record
    /// cut off at the end): keep the complete records, and mark the file
    /// incomplete. Without it, such a file is a `Truncated` error.
    pub allow_incomplete: bool,
}

/// A trace file's contents.
#[derive(Clone, Debug)]
pub struct TraceFile {
    pub path: String,
    pub header: Header,
    /// Names by id.
    pub names: HashMap<u32, String>,
    /// Local events (process files), in file order.
    pub events: Vec<Event>,
    pub syncs: Vec<SyncRecord>,
    /// The host's error bound as the writer read it (process traces of
    /// format version 2 on; none in older files), in file order.
    pub bounds: Vec<BoundRecord>,
    /// Global traces only.
    pub procs: Vec<ProcRecord>,
    pub global_events: Vec<GlobalEvent>,
    pub run: Option<RunRecord>,
    /// False when the file lacked its END record (read with `allow_incomplete`).
    pub complete: bool,
    /// Bytes dropped after the last complete record (incomplete files).
    pub torn_bytes: usize,
    /// Records read (END records included).
    pub records: u64,
}

impl TraceFile {
    /// The name of an event's name id ("?" if undefined, which reading rejects).
    pub fn name(&self, id: u32) -> &str {
        self.names.get(&id).map_or("?", String::as_str)
    }
}

/// Reads and validates the trace file at `path`.
pub fn read_file(path: &Path, opts: ReadOptions) -> Result<TraceFile> {
    let shown = path.display().to_string();
    let buf = std::fs::read(path).map_err(|e| {
        Error::from_io(
            format!("cannot read trace file {shown}"),
            &e,
            "check the path and its permissions",
        )
    })?;
    parse(&buf, &shown, opts)
}

/// Parses a trace file held in memory (`what` names it in errors).
pub fn parse(buf: &[u8], what: &str, opts: ReadOptions) -> Result<TraceFile> {
    let header = Header::decode(buf, what)?;
    let mut file = TraceFile {
        path: what.to_string(),
        header,
        names: HashMap::new(),
        events: Vec::new(),
        syncs: Vec::new(),
        bounds: Vec::new(),
        procs: Vec::new(),
        global_events: Vec::new(),
        run: None,
        complete: false,
        torn_bytes: 0,
        records: 0,
    };
    let global = file.header.is_global();
    let mut pos = Header::encoded_len(buf);
    let mut records: u64 = 0;
    let mut events: u64 = 0;
    let mut last_was_end = false;
    while pos < buf.len() {
        let torn = || {
            Error::new(
                ErrorKind::Truncated,
                format!(
                    "{what} ends inside a record at byte {pos} of {}: the file was cut short \
                     (its writer crashed or a copy is partial); `hrts merge --allow-incomplete` \
                     uses the records before it",
                    buf.len()
                ),
            )
        };
        if buf.len() - pos < 5 {
            if opts.allow_incomplete {
                file.torn_bytes = buf.len() - pos;
                break;
            }
            return Err(torn());
        }
        let t = buf[pos];
        let len = u32::from_le_bytes([buf[pos + 1], buf[pos + 2], buf[pos + 3], buf[pos + 4]]);
        if len > MAX_RECORD_LEN {
            return Err(Error::new(
                ErrorKind::Corrupt,
                format!("{what} has a record of {len} bytes at byte {pos}, more than any writer makes: the file is damaged"),
            ));
        }
        let body_end = pos + 5 + len as usize;
        if body_end > buf.len() {
            if opts.allow_incomplete {
                file.torn_bytes = buf.len() - pos;
                break;
            }
            return Err(torn());
        }
        let record = Record::decode(t, &buf[pos + 5..body_end])
            .map_err(|e| Error::new(e.kind(), format!("{what}, byte {pos}: {}", e.message())))?;
        last_was_end = false;
        match record {
            Record::Name { id, name } => {
                if let Some(old) = file.names.insert(id, name) {
                    if file.names[&id] != old {
                        return Err(damaged(what, &format!("name id {id} is defined twice")));
                    }
                }
            }
            Record::Event(e) if !global => {
                events += 1;
                file.events.push(e);
            }
            Record::Sync(s) if !global => file.syncs.push(s),
            Record::Bound(b) if !global => file.bounds.push(b),
            Record::End {
                records: r,
                events: n,
            } => {
                if r != records || n != events {
                    return Err(damaged(
                        what,
                        &format!(
                            "its end record counts {r} records and {n} events before it, but \
                             {records} and {events} are there"
                        ),
                    ));
                }
                last_was_end = true;
            }
            Record::Proc(p) if global => file.procs.push(p),
            Record::GlobalEvent(g) if global => {
                events += 1;
                file.global_events.push(g);
            }
            Record::Run(r) if global => file.run = Some(r),
            _ => {
                return Err(damaged(
                    what,
                    &format!(
                        "a {} trace holds a record of type {t} that belongs in the other kind",
                        if global { "global" } else { "process" }
                    ),
                ))
            }
        }
        records += 1;
        pos = body_end;
    }
    file.complete = last_was_end && file.torn_bytes == 0;
    file.records = records;
    if !file.complete && !opts.allow_incomplete {
        return Err(Error::new(
            ErrorKind::Truncated,
            format!(
                "{what} has no end record: its writer did not close it (crashed, killed, or \
                 still running); `hrts merge --allow-incomplete` uses the records it has"
            ),
        ));
    }
    let undefined = file
        .events
        .iter()
        .map(|e| e.name)
        .chain(file.global_events.iter().map(|g| g.event.name))
        .find(|id| !file.names.contains_key(id));
    if let Some(id) = undefined {
        return Err(damaged(
            what,
            &format!("an event uses name id {id}, which is not defined"),
        ));
    }
    if let Some((i, p)) = file
        .procs
        .iter()
        .enumerate()
        .find(|(i, p)| p.index as usize != *i)
    {
        return Err(damaged(
            what,
            &format!("process record {i} carries index {}", p.index),
        ));
    }
    if let Some(g) = file
        .global_events
        .iter()
        .find(|g| g.proc_index as usize >= file.procs.len())
    {
        return Err(damaged(
            what,
            &format!(
                "an event names process {}, which is not defined",
                g.proc_index
            ),
        ));
    }
    Ok(file)
}

fn damaged(what: &str, why: &str) -> Error {
    Error::new(
        ErrorKind::Corrupt,
        format!("{what}: {why}: the trace file is damaged"),
    )
}
