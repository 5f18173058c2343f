//! `hrts trace record|info|dump`.

use super::print;
use super::sync::{host_clock, round_lines};
use super::units::non_empty;
use crate::exit::CliError;
use hrts_trace::format::{map_flag_names, read_file, ReadOptions, TraceFile};
use hrts_trace::{Clock, EventKind, SyncOptions, SyncPhase, TraceWriter, WriterOptions};
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Record events into a trace file; show a trace file's header or records.
#[derive(clap::Args, Debug)]
pub struct TraceArgs {
    #[command(subcommand)]
    pub command: TraceCommand,
}

#[derive(clap::Subcommand, Debug)]
pub enum TraceCommand {
    Record(RecordArgs),
    /// Print a trace file's header and counts as `key: value` lines
    Info {
        /// The trace file
        file: PathBuf,
    },
    /// Print a trace file's records, one per line
    ///
    /// Each line is one of:
    ///   e STAMP KIND ID NAME [PAYLOAD]          an event of a process trace
    ///   s PHASE MASTER_HOST EXCHANGES           a sync round
    ///   b AT STATUS SOURCE BOUND HALF WIDEST    a bound record (ns; AT on the local clock)
    ///   g STAMP PROC KIND ID LOCAL_STAMP NAME   an event of a merged trace
    ///   p INDEX HOST PID FLAGS FILE             a process of a merged trace
    #[command(verbatim_doc_comment)]
    Dump {
        /// The trace file
        file: PathBuf,
    },
}

/// Record one event per line of stdin into a trace file.
///
/// Each line is `KIND NAME [ID [PAYLOAD]]` with KIND one of instant, begin, end, send, recv
/// (blank lines and lines starting with # are skipped); each event's local ITC stamp is
/// printed. With --master it syncs with the master at the start and again at the end of
/// input.
#[derive(clap::Args, Debug)]
pub struct RecordArgs {
    /// The trace file to write
    #[arg(long, value_name = "FILE")]
    pub out: PathBuf,
    /// This host's name in the file (default: $HRTS_TRACE_HOST, else the hostname)
    #[arg(long, value_name = "NAME", value_parser = non_empty)]
    pub host: Option<String>,
    /// A label for the file's header
    #[arg(long, value_name = "TEXT", default_value = "hrts trace record")]
    pub label: String,
    /// Sync with this master (`hrts sync serve`) at the start and at the end
    #[arg(long, value_name = "HOST:PORT", value_parser = non_empty)]
    pub master: Option<String>,
    /// Ping-pong exchanges per sync round
    #[arg(long, value_name = "N", default_value_t = 50,
          value_parser = clap::value_parser!(u32).range(1..=10_000))]
    pub exchanges: u32,
}

/// Runs `hrts trace ...`.
pub fn run(args: &TraceArgs, segment: Option<&str>) -> Result<(), CliError> {
    match &args.command {
        TraceCommand::Record(r) => record(
            &r.out,
            r.host.as_deref(),
            &r.label,
            r.master.as_deref(),
            r.exchanges,
            segment,
        ),
        TraceCommand::Info { file } => info(file),
        TraceCommand::Dump { file } => dump(file),
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
    s.push_str(&super::trace_report::bound_lines(&f.bounds));
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
    for b in &f.bounds {
        writeln!(
            out,
            "b {} {} {} {} {} {}",
            b.at_ns,
            b.status.name(),
            b.source.name(),
            b.bound_ns,
            b.half_width_ns,
            b.widest_ns
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
