//! The records after the header: `type: u8, length: u32, body`.

use super::bytes::{put_f64, put_str, put_u32, put_u64, Cursor};
use crate::sync::{Exchange, SyncPhase};
use hrts_core::{BoundSource, BoundStatus, Error, ErrorKind, Result};

pub(crate) const T_NAME: u8 = 1;
pub(crate) const T_EVENT: u8 = 2;
pub(crate) const T_SYNC: u8 = 3;
pub(crate) const T_END: u8 = 4;
pub(crate) const T_BOUND: u8 = 5;
pub(crate) const T_PROC: u8 = 16;
pub(crate) const T_GEVENT: u8 = 17;
pub(crate) const T_RUN: u8 = 18;

/// What an event marks. Send and Receive with the same id are one message.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum EventKind {
    Instant = 0,
    Begin = 1,
    End = 2,
    Send = 3,
    Receive = 4,
}

impl EventKind {
    pub const ALL: [EventKind; 5] = [
        EventKind::Instant,
        EventKind::Begin,
        EventKind::End,
        EventKind::Send,
        EventKind::Receive,
    ];

    pub fn from_u8(v: u8) -> Option<EventKind> {
        EventKind::ALL.get(v as usize).copied()
    }

    pub fn name(self) -> &'static str {
        match self {
            EventKind::Instant => "instant",
            EventKind::Begin => "begin",
            EventKind::End => "end",
            EventKind::Send => "send",
            EventKind::Receive => "recv",
        }
    }

    pub fn from_name(s: &str) -> Option<EventKind> {
        match s {
            "receive" => Some(EventKind::Receive),
            _ => EventKind::ALL.into_iter().find(|k| k.name() == s),
        }
    }
}

/// One event of a process, with its name as an index into the file's names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Event {
    pub kind: EventKind,
    pub name: u32,
    /// ITC stamp: local in a process's file, global in a merged one.
    pub stamp: u64,
    /// Message id (Send/Receive), or any correlation the writer wants; 0 if none.
    pub id: u64,
    pub payload: Vec<u8>,
}

/// One sync round with the master: the exchanges that got an answer.
#[derive(Clone, Debug, PartialEq)]
pub struct SyncRecord {
    pub phase: SyncPhase,
    pub master_host: String,
    pub master_clock_id: u64,
    pub exchanges: Vec<Exchange>,
}

pub use crate::bound::BoundRecord;

/// Mapping flag: the process ran on the master's clock (identity, exact).
pub const MAP_MASTER: u32 = 1;
/// Mapping flag: never synced; local stamps taken as global (`--allow-unsynced`).
pub const MAP_UNSYNCED: u32 = 2;
/// Mapping flag: events outside the sync window (`--extrapolate`).
pub const MAP_EXTRAPOLATED: u32 = 4;
/// Mapping flag: sync samples disagree with a straight line (`--accept-disagreement`).
pub const MAP_DISAGREEMENT: u32 = 8;
/// Mapping flag: the file had no END record (`--allow-incomplete`).
pub const MAP_INCOMPLETE: u32 = 16;
/// Mapping flag: placed by its host's error bound (identity, the bound its
/// bound records allow), not by a ping-pong sync.
pub const MAP_BOUNDS: u32 = 32;

/// The flags' names, in bit order, for reports.
pub fn map_flag_names(flags: u32) -> Vec<&'static str> {
    [
        (MAP_MASTER, "master-clock"),
        (MAP_UNSYNCED, "unsynced"),
        (MAP_EXTRAPOLATED, "extrapolated"),
        (MAP_DISAGREEMENT, "disagreement"),
        (MAP_INCOMPLETE, "incomplete"),
        (MAP_BOUNDS, "bounds"),
    ]
    .into_iter()
    .filter(|(bit, _)| flags & bit != 0)
    .map(|(_, n)| n)
    .collect()
}

/// A process of a global trace and how its local stamps were mapped:
/// `master_ns = local_ns + offset_ns + drift * (local_ns - ref_local_ns)`.
#[derive(Clone, Debug, PartialEq)]
pub struct ProcRecord {
    pub index: u32,
    pub pid: u32,
    pub clock_id: u64,
    pub event_bits: u32,
    pub flags: u32,
    pub tick_num: u64,
    pub tick_den: u64,
    pub origin_ns: u64,
    pub ref_local_ns: u64,
    pub offset_ns: f64,
    pub drift: f64,
    /// Error bound of the mapping in ns (infinite when unknown).
    pub bound_ns: f64,
    pub events: u64,
    pub host: String,
    pub label: String,
    pub file: String,
}

/// An event of a global trace: its process, global stamp and original local stamp.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GlobalEvent {
    pub proc_index: u32,
    pub local_stamp: u64,
    /// `event.stamp` is the global stamp; `event.name` indexes the global names.
    pub event: Event,
}

/// The run as the master measured it: ticks of the global trace and
/// gettimeofday readings on the master at its first and last sync exchange.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunRecord {
    pub start_tick: u64,
    pub end_tick: u64,
    pub wall_start_ns: u64,
    pub wall_end_ns: u64,
    pub master_host: String,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Record {
    Name {
        id: u32,
        name: String,
    },
    Event(Event),
    Sync(SyncRecord),
    Bound(BoundRecord),
    /// Closes a file: the number of records and events before it.
    End {
        records: u64,
        events: u64,
    },
    Proc(ProcRecord),
    GlobalEvent(GlobalEvent),
    Run(RunRecord),
}

impl Record {
    /// Appends the record (type, length, body) to `out`.
    pub fn encode(&self, out: &mut Vec<u8>) {
        let start = out.len();
        out.push(0);
        put_u32(out, 0);
        let t = match self {
            Record::Name { id, name } => {
                put_u32(out, *id);
                out.extend_from_slice(name.as_bytes());
                T_NAME
            }
            Record::Event(e) => {
                put_event(out, e);
                T_EVENT
            }
            Record::Sync(s) => {
                out.push(s.phase as u8);
                put_u64(out, s.master_clock_id);
                put_str(out, &s.master_host);
                put_u32(out, s.exchanges.len() as u32);
                for x in &s.exchanges {
                    for v in [x.t0, x.t1, x.t2, x.t3, x.wall] {
                        put_u64(out, v);
                    }
                }
                T_SYNC
            }
            Record::Bound(b) => {
                put_u64(out, b.at_ns);
                out.push(b.status.code() as u8);
                out.push(b.source as u8);
                put_u64(out, b.bound_ns);
                put_u64(out, b.half_width_ns);
                put_u64(out, b.widest_ns);
                T_BOUND
            }
            Record::End { records, events } => {
                put_u64(out, *records);
                put_u64(out, *events);
                T_END
            }
            Record::Proc(p) => {
                put_u32(out, p.index);
                put_u32(out, p.pid);
                put_u64(out, p.clock_id);
                put_u32(out, p.event_bits);
                put_u32(out, p.flags);
                put_u64(out, p.tick_num);
                put_u64(out, p.tick_den);
                put_u64(out, p.origin_ns);
                put_u64(out, p.ref_local_ns);
                put_f64(out, p.offset_ns);
                put_f64(out, p.drift);
                put_f64(out, p.bound_ns);
                put_u64(out, p.events);
                put_str(out, &p.host);
                put_str(out, &p.label);
                put_str(out, &p.file);
                T_PROC
            }
            Record::GlobalEvent(g) => {
                put_u32(out, g.proc_index);
                put_u64(out, g.local_stamp);
                put_event(out, &g.event);
                T_GEVENT
            }
            Record::Run(r) => {
                put_u64(out, r.start_tick);
                put_u64(out, r.end_tick);
                put_u64(out, r.wall_start_ns);
                put_u64(out, r.wall_end_ns);
                put_str(out, &r.master_host);
                T_RUN
            }
        };
        out[start] = t;
        let len = (out.len() - start - 5) as u32;
        out[start + 1..start + 5].copy_from_slice(&len.to_le_bytes());
    }

    /// Parses the body of a record of type `t`.
    pub fn decode(t: u8, body: &[u8]) -> Result<Record> {
        Ok(match t {
            T_NAME => {
                let mut c = Cursor::new(body, "a name record");
                let id = c.u32()?;
                let name = String::from_utf8(c.rest().to_vec()).map_err(|_| {
                    corrupt("a name record holds a name that is not UTF-8".to_string())
                })?;
                Record::Name { id, name }
            }
            T_EVENT => {
                let mut c = Cursor::new(body, "an event record");
                Record::Event(get_event(&mut c)?)
            }
            T_SYNC => {
                let mut c = Cursor::new(body, "a sync record");
                let phase = SyncPhase::from_u8(c.u8()?)
                    .ok_or_else(|| corrupt("a sync record has an unknown phase".to_string()))?;
                let master_clock_id = c.u64()?;
                let master_host = c.str()?;
                let n = c.u32()? as usize;
                if c.remaining() != n * 40 {
                    return Err(corrupt(format!(
                        "a sync record announces {n} exchanges but holds {} bytes of them",
                        c.remaining()
                    )));
                }
                let mut exchanges = Vec::with_capacity(n);
                for _ in 0..n {
                    exchanges.push(Exchange {
                        t0: c.u64()?,
                        t1: c.u64()?,
                        t2: c.u64()?,
                        t3: c.u64()?,
                        wall: c.u64()?,
                    });
                }
                Record::Sync(SyncRecord {
                    phase,
                    master_host,
                    master_clock_id,
                    exchanges,
                })
            }
            T_BOUND => {
                let mut c = Cursor::new(body, "a bound record");
                let at_ns = c.u64()?;
                // A status this reader does not know vouches for nothing.
                let status = BoundStatus::from_code(c.u8()? as u32).unwrap_or(BoundStatus::Unknown);
                Record::Bound(BoundRecord {
                    at_ns,
                    status,
                    source: BoundSource::from_code(c.u8()? as u32),
                    bound_ns: c.u64()?,
                    half_width_ns: c.u64()?,
                    widest_ns: c.u64()?,
                })
            }
            T_END => {
                let mut c = Cursor::new(body, "an end record");
                Record::End {
                    records: c.u64()?,
                    events: c.u64()?,
                }
            }
            T_PROC => {
                let mut c = Cursor::new(body, "a process record");
                Record::Proc(ProcRecord {
                    index: c.u32()?,
                    pid: c.u32()?,
                    clock_id: c.u64()?,
                    event_bits: c.u32()?,
                    flags: c.u32()?,
                    tick_num: c.u64()?,
                    tick_den: c.u64()?,
                    origin_ns: c.u64()?,
                    ref_local_ns: c.u64()?,
                    offset_ns: c.f64()?,
                    drift: c.f64()?,
                    bound_ns: c.f64()?,
                    events: c.u64()?,
                    host: c.str()?,
                    label: c.str()?,
                    file: c.str()?,
                })
            }
            T_GEVENT => {
                let mut c = Cursor::new(body, "a global event record");
                let proc_index = c.u32()?;
                let local_stamp = c.u64()?;
                Record::GlobalEvent(GlobalEvent {
                    proc_index,
                    local_stamp,
                    event: get_event(&mut c)?,
                })
            }
            T_RUN => {
                let mut c = Cursor::new(body, "a run record");
                Record::Run(RunRecord {
                    start_tick: c.u64()?,
                    end_tick: c.u64()?,
                    wall_start_ns: c.u64()?,
                    wall_end_ns: c.u64()?,
                    master_host: c.str()?,
                })
            }
            other => {
                return Err(corrupt(format!(
                    "record type {other} is unknown to trace format version {}",
                    super::FORMAT_VERSION
                )))
            }
        })
    }
}

fn put_event(out: &mut Vec<u8>, e: &Event) {
    put_event_fields(out, e.kind, e.name, e.stamp, e.id, &e.payload);
}

fn put_event_fields(
    out: &mut Vec<u8>,
    kind: EventKind,
    name: u32,
    stamp: u64,
    id: u64,
    payload: &[u8],
) {
    out.push(kind as u8);
    put_u32(out, name);
    put_u64(out, stamp);
    put_u64(out, id);
    out.extend_from_slice(payload);
}

/// Appends a whole EVENT record without building an [`Event`] (the writers'
/// path: no allocation per event).
pub fn encode_event(
    out: &mut Vec<u8>,
    kind: EventKind,
    name: u32,
    stamp: u64,
    id: u64,
    payload: &[u8],
) {
    out.push(T_EVENT);
    put_u32(out, (21 + payload.len()) as u32);
    put_event_fields(out, kind, name, stamp, id, payload);
}

fn get_event(c: &mut Cursor<'_>) -> Result<Event> {
    let k = c.u8()?;
    let kind =
        EventKind::from_u8(k).ok_or_else(|| corrupt(format!("an event has unknown kind {k}")))?;
    Ok(Event {
        kind,
        name: c.u32()?,
        stamp: c.u64()?,
        id: c.u64()?,
        payload: c.rest().to_vec(),
    })
}

fn corrupt(what: String) -> Error {
    Error::new(
        ErrorKind::Corrupt,
        format!("{what}: the trace file is damaged"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(r: Record) {
        let mut b = Vec::new();
        r.encode(&mut b);
        let len = u32::from_le_bytes(b[1..5].try_into().unwrap()) as usize;
        assert_eq!(len, b.len() - 5);
        assert_eq!(Record::decode(b[0], &b[5..]).unwrap(), r);
    }

    #[test]
    fn every_record_round_trips() {
        round_trip(Record::Name {
            id: 7,
            name: "compute ✓".into(),
        });
        round_trip(Record::Event(Event {
            kind: EventKind::Send,
            name: 7,
            stamp: 123 << 13 | 4,
            id: 99,
            payload: vec![1, 2, 3],
        }));
        round_trip(Record::Sync(SyncRecord {
            phase: SyncPhase::End,
            master_host: "m".into(),
            master_clock_id: 5,
            exchanges: vec![Exchange {
                t0: 1,
                t1: 2,
                t2: 3,
                t3: 4,
                wall: 5,
            }],
        }));
        round_trip(Record::Bound(BoundRecord {
            at_ns: 1_700_000_000_000_000_000,
            status: BoundStatus::Synchronized,
            source: BoundSource::Chrony,
            bound_ns: 40_000,
            half_width_ns: 41_000,
            widest_ns: 190_000,
        }));
        round_trip(Record::Bound(BoundRecord::unknown(5)));
        round_trip(Record::End {
            records: 10,
            events: 8,
        });
        round_trip(Record::Proc(ProcRecord {
            index: 1,
            pid: 2,
            clock_id: 3,
            event_bits: 13,
            flags: MAP_EXTRAPOLATED,
            tick_num: 1,
            tick_den: 1,
            origin_ns: 4,
            ref_local_ns: 5,
            offset_ns: -2.5e9,
            drift: 1e-4,
            bound_ns: f64::INFINITY,
            events: 6,
            host: "h".into(),
            label: "l".into(),
            file: "f".into(),
        }));
        round_trip(Record::GlobalEvent(GlobalEvent {
            proc_index: 3,
            local_stamp: 77,
            event: Event {
                kind: EventKind::Receive,
                name: 0,
                stamp: 1,
                id: 2,
                payload: vec![],
            },
        }));
        round_trip(Record::Run(RunRecord {
            start_tick: 1,
            end_tick: 2,
            wall_start_ns: 3,
            wall_end_ns: 4,
            master_host: "m".into(),
        }));
    }

    #[test]
    fn damaged_bodies_are_corrupt_not_panics() {
        let mut b = Vec::new();
        Record::Event(Event {
            kind: EventKind::Begin,
            name: 1,
            stamp: 2,
            id: 3,
            payload: vec![],
        })
        .encode(&mut b);
        for cut in 0..b.len() - 5 {
            let e = Record::decode(b[0], &b[5..5 + cut]).unwrap_err();
            assert_eq!(e.kind(), ErrorKind::Corrupt);
        }
        let mut bad_kind = b.clone();
        bad_kind[5] = 9;
        assert!(Record::decode(bad_kind[0], &bad_kind[5..])
            .unwrap_err()
            .message()
            .contains("unknown kind 9"));
        assert!(Record::decode(200, &[]).is_err());
        let mut sync = Vec::new();
        Record::Sync(SyncRecord {
            phase: SyncPhase::Start,
            master_host: "m".into(),
            master_clock_id: 1,
            exchanges: vec![],
        })
        .encode(&mut sync);
        sync.extend_from_slice(&[0; 3]);
        assert!(Record::decode(sync[0], &sync[5..]).is_err());
        assert_eq!(EventKind::from_name("receive"), Some(EventKind::Receive));
        assert_eq!(
            map_flag_names(MAP_MASTER | MAP_INCOMPLETE | MAP_BOUNDS),
            ["master-clock", "incomplete", "bounds"]
        );
        // A bound record cut short is damage; a status from a later hrts is
        // taken as unknown (it vouches for nothing here).
        let mut bound = Vec::new();
        Record::Bound(BoundRecord::unknown(1)).encode(&mut bound);
        assert!(Record::decode(bound[0], &bound[5..bound.len() - 1]).is_err());
        bound[5 + 8] = 77;
        assert_eq!(
            Record::decode(bound[0], &bound[5..]).unwrap(),
            Record::Bound(BoundRecord::unknown(1))
        );
    }
}
