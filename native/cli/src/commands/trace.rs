//! `hrts trace record|info|dump`, and the dispatch of the trace commands.

use super::print;
use super::sync::{host_clock, round_lines};
use super::trace_args::TraceCommand;
use crate::exit::CliError;
use hrts_trace::format::{map_flag_names, read_file, ReadOptions, TraceFile};
use hrts_trace::{Clock, EventKind, SyncOptions, SyncPhase, TraceWriter, WriterOptions};
use std::io::{BufRead, Write};
use std::path::Path;
use std::sync::Arc;

/// Runs `hrts sync ...`, `hrts trace ...` or `hrts merge ...`.
pub fn run(cmd: &TraceCommand, segment: Option<&str>) -> Result<(), CliError> {
    match cmd {
        TraceCommand::Help(text) => print(text),
        TraceCommand::Serve {
            listen,
            idle_exit,
            max_duration,
            max_exchanges,
        } => super::sync::serve(listen, *idle_exit, *max_duration, *max_exchanges, segment),
        TraceCommand::Sync {
            master,
            out,
            exchanges,
            phase,
            host,
        } => super::sync::sync(
            master,
            out.as_deref(),
            *exchanges,
            *phase,
            host.as_deref(),
            segment,
        ),
        TraceCommand::Record {
            out,
            host,
            label,
            master,
            exchanges,
        } => record(
            out,
            host.as_deref(),
            label,
            master.as_deref(),
            *exchanges,
            segment,
        ),
        TraceCommand::Info(f) => info(f),
        TraceCommand::Dump(f) => dump(f),
        TraceCommand::Merge {
            inputs,
            out,
            json,
            opts,
        } => super::merge::run(inputs, out, json.as_deref(), opts),
    }
}

fn record(
    out: &Path,
    host: Option<&str>,
    label: &str,
    master: Option<&str>,
    exchanges: u32,
    segment: Option<&str>,
) -> Result<(), CliError> {
    let clock = host_clock(segment, host)?;
    let info = clock.info().clone();
    let clock: Arc<dyn Clock> = Arc::new(clock);
    let opts = WriterOptions {
        host: None,
        label: label.to_string(),
        format: None,
    };
    let writer = TraceWriter::with_clock(out, clock, info, opts)?;
    let sync = SyncOptions {
        exchanges,
        ..SyncOptions::default()
    };
    let result = record_lines(&writer, master, sync);
    // Close whatever happened, so the file is complete up to the failure.
    let closed = writer.close();
    result?;
    eprint!("{}", super::trace_report::end_of_run(&closed?));
    Ok(())
}

fn record_lines(
    writer: &TraceWriter,
    master: Option<&str>,
    sync: SyncOptions,
) -> Result<(), CliError> {
    if let Some(m) = master {
        let r = writer.sync(m, SyncPhase::Start, sync)?;
        eprint!("{}", round_lines(&r));
    }
    let stdin = std::io::stdin();
    let mut out = std::io::stdout().lock();
    for (n, line) in stdin.lock().lines().enumerate() {
        let line = line?;
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let mut parts = line.splitn(4, char::is_whitespace);
        let (kind, name) = (parts.next().unwrap_or(""), parts.next());
        let bad = |why: &str| {
            CliError::usage(format!(
                "stdin line {}: {why}: write `KIND NAME [ID [PAYLOAD]]` with KIND one of \
                 instant, begin, end, send, recv",
                n + 1
            ))
        };
        let kind =
            EventKind::from_name(kind).ok_or_else(|| bad(&format!("unknown kind {kind:?}")))?;
        let name = name.ok_or_else(|| bad("no event name"))?;
        let id = match parts.next() {
            None => 0,
            Some(i) => i
                .parse()
                .map_err(|_| bad(&format!("ID {i:?} is not a whole number")))?,
        };
        let payload = parts.next().unwrap_or("").trim();
        let stamp = writer.event(kind, name, id, payload.as_bytes())?;
        writeln!(out, "{stamp}")?;
        out.flush()?;
    }
    if let Some(m) = master {
        let r = writer.sync(m, SyncPhase::End, sync)?;
        eprint!("{}", round_lines(&r));
    }
    Ok(())
}

fn read(path: &Path) -> Result<TraceFile, CliError> {
    // Show what an incomplete file holds rather than refusing it.
    let f = read_file(
        path,
        ReadOptions {
            allow_incomplete: true,
        },
    )?;
    Ok(f)
}

fn info(path: &Path) -> Result<(), CliError> {
    let f = read(path)?;
    let h = &f.header;
    let c = &h.clock;
    let tick = if h.tick_den == 1 {
        h.tick_num.to_string()
    } else {
        format!("{}/{}", h.tick_num, h.tick_den)
    };
    let mut s = format!(
        "file: {}\nkind: {}\nformat version: {}\nhost: {}\npid: {}\nlabel: {}\nclock id: {:#x}\n\
         segment: {}\nsource: {}\nfrequency hz: {}\ncalibration spread ppb: {}\n\
         segment created ns: {}\ngeneration: {}\ntest clock skew: {}\nevent bits: {}\n\
         tick ns: {tick}\nnominal period s: {:e}\norigin ns: {}\ncomplete: {}\nnames: {}\n",
        path.display(),
        if h.is_global() { "global" } else { "process" },
        h.version,
        c.host,
        h.pid,
        h.label,
        c.clock_id,
        c.segment,
        c.source,
        c.frequency_hz,
        c.calibration_spread_ppb,
        c.segment_created_ns,
        c.generation,
        if c.test_skew { "yes" } else { "no" },
        h.event_bits,
        h.nominal_period_s(),
        h.origin_ns,
        if f.complete { "yes" } else { "no" },
        f.names.len()
    );
    s.push_str(&super::trace_report::info_line(h.max_events_per_tick));
    if h.is_global() {
        s.push_str(&format!(
            "events: {}\nprocesses: {}\n",
            f.global_events.len(),
            f.procs.len()
        ));
        if let Some(r) = &f.run {
            s.push_str(&format!(
                "master host: {}\nrun start tick: {}\nrun end tick: {}\nrun wall start ns: {}\n\
                 run wall end ns: {}\nrun wall ns: {}\n",
                r.master_host,
                r.start_tick,
                r.end_tick,
                r.wall_start_ns,
                r.wall_end_ns,
                r.wall_end_ns - r.wall_start_ns
            ));
        }
    } else {
        s.push_str(&format!(
            "events: {}\nsync rounds: {}\nsync exchanges: {}\n",
            f.events.len(),
            f.syncs.len(),
            f.syncs.iter().map(|r| r.exchanges.len()).sum::<usize>()
        ));
    }
    print(&s)
}

fn dump(path: &Path) -> Result<(), CliError> {
    let f = read(path)?;
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    for s in &f.syncs {
        writeln!(
            out,
            "s {} {} {}",
            s.phase.name(),
            s.master_host,
            s.exchanges.len()
        )?;
    }
    for e in &f.events {
        write!(
            out,
            "e {} {} {} {}",
            e.stamp,
            e.kind.name(),
            e.id,
            f.name(e.name)
        )?;
        if !e.payload.is_empty() {
            write!(out, " {}", String::from_utf8_lossy(&e.payload))?;
        }
        writeln!(out)?;
    }
    for p in &f.procs {
        let flags = map_flag_names(p.flags).join(",");
        let flags = if flags.is_empty() {
            "-".to_string()
        } else {
            flags
        };
        writeln!(out, "p {} {} {} {flags} {}", p.index, p.host, p.pid, p.file)?;
    }
    for g in &f.global_events {
        let e = &g.event;
        writeln!(
            out,
            "g {} {} {} {} {} {}",
            e.stamp,
            g.proc_index,
            e.kind.name(),
            e.id,
            g.local_stamp,
            f.name(e.name)
        )?;
    }
    out.flush()?;
    Ok(())
}
