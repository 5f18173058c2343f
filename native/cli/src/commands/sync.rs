//! `hrts sync serve` (the master) and `hrts sync --master` (one round).

use super::print;
use crate::exit::CliError;
use hrts_trace::sync::{bind, serve as serve_on, sync_round, ServeOptions};
use hrts_trace::{
    Clock, HostClock, RoundResult, SyncOptions, SyncPhase, TraceWriter, WriterOptions,
};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

/// This host's clock: the segment of `--segment`/`HRTS_SEGMENT`, skewed by
/// `HRTS_TEST_CLOCK_SKEW` in tests.
pub fn host_clock(segment: Option<&str>, host: Option<&str>) -> Result<HostClock, CliError> {
    let mut clock = HostClock::with_base(super::open(segment)?)?;
    if let Some(h) = host {
        clock.set_host(h);
    }
    Ok(clock)
}

pub fn serve(
    listen: &str,
    idle_exit: Duration,
    max_duration: Duration,
    max_exchanges: u64,
    segment: Option<&str>,
) -> Result<(), CliError> {
    let clock = host_clock(segment, None)?;
    let socket = bind(listen)?;
    let addr = socket.local_addr()?;
    let info = clock.info().clone();
    print(&format!(
        "listening: {addr}\nmaster host: {}\nmaster clock: {:#x}\n",
        info.host, info.clock_id
    ))?;
    let opts = ServeOptions {
        idle_exit,
        max_duration,
        max_exchanges,
    };
    let s = serve_on(&socket, &clock, &info.host, info.clock_id, opts)?;
    print(&format!(
        "exchanges: {}\nrounds: {}\nignored: {}\nfirst wall ns: {}\nlast wall ns: {}\n\
         run wall ns: {}\n",
        s.exchanges,
        s.rounds,
        s.ignored,
        s.first_wall_ns,
        s.last_wall_ns,
        if s.exchanges == 0 { 0 } else { s.run_wall_ns() }
    ))
}

pub fn sync(
    master: &str,
    out: Option<&Path>,
    exchanges: u32,
    phase: Option<SyncPhase>,
    host: Option<&str>,
    segment: Option<&str>,
) -> Result<(), CliError> {
    let clock = host_clock(segment, host)?;
    let info = clock.info().clone();
    let clock: Arc<dyn Clock> = Arc::new(clock);
    let opts = SyncOptions {
        exchanges,
        ..SyncOptions::default()
    };
    let Some(path) = out else {
        let round = sync_round(master, clock.as_ref(), opts)?;
        return print(&round_lines(&round));
    };
    let (writer, phase) = if path.exists() {
        let w = TraceWriter::append(path, clock, &info)?;
        (w, phase.unwrap_or(SyncPhase::End))
    } else {
        let opts = WriterOptions {
            host: None,
            label: "hrts sync".to_string(),
            format: None,
        };
        let w = TraceWriter::with_clock(path, clock, info, opts)?;
        (w, phase.unwrap_or(SyncPhase::Start))
    };
    let round = writer.sync(master, phase, opts);
    writer.close()?;
    let round = round?;
    print(&format!(
        "{}phase: {}\nfile: {}\n",
        round_lines(&round),
        phase.name(),
        path.display()
    ))
}

pub fn round_lines(r: &RoundResult) -> String {
    format!(
        "master: {}\nmaster host: {}\nexchanges: {}\nlost: {}\nlocal minus master ns: {:.1}\n\
         bound ns: {:.1}\n",
        r.master,
        r.master_host,
        r.exchanges.len(),
        r.lost,
        -r.offset_ns,
        r.bound_ns
    )
}
