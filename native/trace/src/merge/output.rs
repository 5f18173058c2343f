//! Writing a merged run: the global trace file and a Chrome/Perfetto JSON trace.

use super::{Basis, Interval, Merged};
use crate::format::{map_flag_names, EventKind, Record};
use hrts_core::{Error, Result};
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;

fn create(path: &Path) -> Result<BufWriter<File>> {
    File::create(path)
        .map(|f| BufWriter::with_capacity(1 << 20, f))
        .map_err(|e| {
            Error::from_io(
                format!("cannot create {}", path.display()),
                &e,
                "check that its directory exists and is writable",
            )
        })
}

fn io_err(path: &Path) -> impl Fn(std::io::Error) -> Error + '_ {
    move |e| {
        Error::from_io(
            format!("cannot write {}", path.display()),
            &e,
            "check free space and permissions",
        )
    }
}

/// Writes the global trace: header, names, processes (with their mappings),
/// the run, the events in global order, END.
pub fn write_global(m: &Merged, path: &Path) -> Result<()> {
    let mut out = create(path)?;
    let err = io_err(path);
    out.write_all(&m.header.encode()).map_err(&err)?;
    let mut buf = Vec::with_capacity(1 << 16);
    let put = |r: Record, buf: &mut Vec<u8>, out: &mut BufWriter<File>| {
        buf.clear();
        r.encode(buf);
        out.write_all(buf)
    };
    for (id, name) in m.names.iter().enumerate() {
        let r = Record::Name {
            id: id as u32,
            name: name.clone(),
        };
        put(r, &mut buf, &mut out).map_err(&err)?;
    }
    for p in &m.procs {
        put(Record::Proc(p.clone()), &mut buf, &mut out).map_err(&err)?;
    }
    put(Record::Run(m.run.clone()), &mut buf, &mut out).map_err(&err)?;
    for g in &m.events {
        put(Record::GlobalEvent(g.clone()), &mut buf, &mut out).map_err(&err)?;
    }
    let end = Record::End {
        records: (m.names.len() + m.procs.len() + 1 + m.events.len()) as u64,
        events: m.events.len() as u64,
    };
    put(end, &mut buf, &mut out).map_err(&err)?;
    out.flush().map_err(&err)?;
    Ok(())
}

/// Writes a Chrome trace-event JSON file (opens in Perfetto's UI and
/// chrome://tracing): one "process" per host, one "thread" per traced
/// process, messages as flow arrows from send to receive. Times are µs since
/// the global trace's tick 0.
pub fn write_chrome_json(m: &Merged, path: &Path) -> Result<()> {
    let mut out = create(path)?;
    write_chrome(m, &mut out).map_err(io_err(path))?;
    out.flush().map_err(io_err(path))
}

/// The merge's basis for `otherData`: `"order":"bounds"` with the count of
/// unorderable pairs and the first of them, or `"order":"sync"` with why the
/// hosts' bounds were not used.
fn basis_json(m: &Merged) -> String {
    let json = |s: &str| serde_json::to_string(s).unwrap_or_else(|_| "\"?\"".to_string());
    let u = match &m.basis {
        Basis::Sync { why_not_bounds } => {
            return format!(
                "\"order\":\"sync\",\"bounds_not_used\":{}",
                json(why_not_bounds)
            )
        }
        Basis::Bounds(u) => u,
    };
    let event = |i: usize, iv: &Interval| {
        let g = &m.events[i];
        let p = &m.procs[g.proc_index as usize];
        format!(
            "{{\"host\":{},\"pid\":{},\"kind\":\"{}\",\"name\":{},\"id\":{},\"stamp\":{},\
             \"earliest_epoch_ns\":{},\"latest_epoch_ns\":{}}}",
            json(&p.host),
            p.pid,
            g.event.kind.name(),
            json(&m.names[g.event.name as usize]),
            g.event.id,
            g.event.stamp,
            iv.earliest,
            iv.latest
        )
    };
    let examples: Vec<String> = u
        .examples
        .iter()
        .map(|p| {
            format!(
                "{{\"first\":{},\"second\":{}}}",
                event(p.first, &p.first_interval),
                event(p.second, &p.second_interval)
            )
        })
        .collect();
    format!(
        "\"order\":\"bounds\",\"unorderable_pairs\":{},\"unorderable_examples\":[{}]",
        u.pairs,
        examples.join(",")
    )
}

fn write_chrome(m: &Merged, out: &mut impl Write) -> std::io::Result<()> {
    let host_of: Vec<usize> = (0..m.procs.len())
        .map(|i| {
            m.domains
                .iter()
                .position(|d| d.files.contains(&i))
                .unwrap_or(0)
                + 1
        })
        .collect();
    let json = |s: &str| serde_json::to_string(s).unwrap_or_else(|_| "\"?\"".to_string());
    let names: Vec<String> = m.names.iter().map(|n| json(n)).collect();
    writeln!(
        out,
        "{{\"displayTimeUnit\":\"ns\",\"otherData\":{{\"producer\":\"hrts merge\",\
         \"master\":{},\"tick_ns\":\"1/{}\",\"run_ns\":{},\"origin_epoch_ns\":{},{}}},\
         \"traceEvents\":[",
        json(&m.run.master_host),
        m.ticks_per_ns,
        m.run.wall_end_ns - m.run.wall_start_ns,
        m.header.origin_ns,
        basis_json(m)
    )?;
    let mut first = true;
    let mut sep = |out: &mut dyn Write| -> std::io::Result<()> {
        if !first {
            out.write_all(b",\n")?;
        }
        first = false;
        Ok(())
    };
    for (i, d) in m.domains.iter().enumerate() {
        sep(out)?;
        let flags = map_flag_names(d.flags).join(",");
        write!(
            out,
            "{{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":{},\"args\":{{\"name\":{}}}}}",
            i + 1,
            json(&format!(
                "host {} ({}, bound {:.1} us{}{})",
                d.host,
                d.kind.name(),
                d.fit.bound_ns / 1e3,
                if flags.is_empty() { "" } else { ", " },
                flags
            ))
        )?;
    }
    for (i, p) in m.procs.iter().enumerate() {
        sep(out)?;
        write!(
            out,
            "{{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":{},\"tid\":{},\"args\":{{\"name\":{}}}}}",
            host_of[i],
            i + 1,
            json(&format!("pid {} {}", p.pid, p.label))
        )?;
    }
    let k = m.ticks_per_ns as f64;
    let bits = m.header.event_bits;
    for g in &m.events {
        let e = &g.event;
        let ts = (e.stamp >> bits) as f64 / k / 1e3;
        let (pid, tid) = (host_of[g.proc_index as usize], g.proc_index + 1);
        let name = &names[e.name as usize];
        let ph = match e.kind {
            EventKind::Begin => "\"B\"",
            EventKind::End => "\"E\"",
            EventKind::Instant => "\"i\",\"s\":\"t\"",
            EventKind::Send | EventKind::Receive => "\"X\",\"dur\":0",
        };
        sep(out)?;
        write!(
            out,
            "{{\"ph\":{ph},\"name\":{name},\"pid\":{pid},\"tid\":{tid},\"ts\":{ts},\
             \"args\":{{\"stamp\":{},\"id\":{}",
            e.stamp, e.id
        )?;
        if !e.payload.is_empty() {
            let text = match std::str::from_utf8(&e.payload) {
                Ok(s) => json(s),
                Err(_) => json(
                    &e.payload
                        .iter()
                        .map(|b| format!("{b:02x}"))
                        .collect::<String>(),
                ),
            };
            write!(out, ",\"payload\":{text}")?;
        }
        out.write_all(b"}}")?;
        let flow = match e.kind {
            EventKind::Send => Some("\"s\""),
            EventKind::Receive => Some("\"f\",\"bp\":\"e\""),
            _ => None,
        };
        if let Some(ph) = flow {
            sep(out)?;
            write!(
                out,
                "{{\"ph\":{ph},\"cat\":\"message\",\"name\":\"message\",\"id\":{},\
                 \"pid\":{pid},\"tid\":{tid},\"ts\":{ts}}}",
                e.id
            )?;
        }
    }
    out.write_all(b"\n]}\n")
}
