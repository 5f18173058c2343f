//! `hrts sync serve` (the master) and `hrts sync --master` (one round).

use super::print;
use super::units::{non_empty, positive_seconds};
use crate::exit::CliError;
use hrts_trace::sync::{bind, serve_with, sync_round, Access, Peer, ServeOptions, SyncKey};
use hrts_trace::{
    Clock, HostClock, RoundResult, SyncOptions, SyncPhase, TraceWriter, WriterOptions,
};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// Synchronise this host's clock with a master's for a traced run, or be the master.
///
/// `hrts sync --master HOST:PORT` runs one round of --exchanges ping-pong exchanges with the
/// master, prints the offset of this host's clock with its error bound (half the fastest
/// round trip), and with --out appends the round to FILE, a trace file of this host's clock
/// (created if missing). --phase defaults to start for a new FILE and end for an existing
/// one: run the same command before and after the work.
///
/// `hrts sync serve --listen HOST:PORT` makes this host the master (see `hrts sync serve
/// --help`).
#[derive(clap::Args, Debug)]
#[command(subcommand_negates_reqs = true)]
pub struct SyncArgs {
    #[command(subcommand)]
    pub serve: Option<SyncCommand>,
    #[command(flatten)]
    pub round: RoundArgs,
}

#[derive(clap::Subcommand, Debug)]
pub enum SyncCommand {
    Serve(ServeArgs),
}

// One sync round with a master (flattened into SyncArgs).
#[derive(clap::Args, Debug)]
pub struct RoundArgs {
    /// The master (`hrts sync serve`) to sync with
    #[arg(long, value_name = "HOST:PORT", required = true, value_parser = non_empty)]
    pub master: Option<String>,
    /// Also record the round in FILE, a trace file of this host's clock
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Ping-pong exchanges in the round (default 50)
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=10_000))]
    pub exchanges: Option<u32>,
    /// Which round of the run this is, in FILE (default: start for a new file, end for an
    /// existing one)
    #[arg(long, value_enum)]
    pub phase: Option<Phase>,
    /// This host's name in FILE (default: $HRTS_TRACE_HOST, else the hostname)
    #[arg(long, value_name = "NAME", value_parser = non_empty)]
    pub host: Option<String>,
}

/// `--phase`.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    Start,
    Periodic,
    End,
}

impl Phase {
    pub fn phase(self) -> SyncPhase {
        match self {
            Phase::Start => SyncPhase::Start,
            Phase::Periodic => SyncPhase::Periodic,
            Phase::End => SyncPhase::End,
        }
    }
}

/// Be the clock-sync master of a traced run.
///
/// Answers ping-pong requests with this host's clock until no request came for --idle-exit
/// seconds, --max-seconds passed or --max-exchanges were answered, then prints the run as this
/// host's gettimeofday measured it (first to last exchange).
///
/// Only requests of the run get an answer: each carries a code made with the run's key,
/// $HRTS_SYNC_KEY (32 hex digits) or, when that is not set, a fresh key printed as `key: HEX`
/// (the clients' HRTS_SYNC_KEY). With --peers only those source addresses are answered; each
/// address gets at most --rate answers a second; an answer is never longer than its request.
/// Other datagrams get nothing. Listen on the trace network only, not on every interface.
#[derive(clap::Args, Debug)]
pub struct ServeArgs {
    /// Where to answer (UDP): an address of the trace network
    #[arg(long, value_name = "HOST:PORT", value_parser = non_empty)]
    pub listen: String,
    /// Answer only these clients: addresses or networks (ADDRESS/BITS), comma-separated
    #[arg(long, value_name = "ADDR[/BITS],...", value_delimiter = ',', value_parser = peer)]
    pub peers: Vec<Peer>,
    /// Most answers a second to one source address (beyond it, requests get nothing)
    #[arg(long, value_name = "N", default_value_t = hrts_trace::sync::DEFAULT_RATE,
          value_parser = clap::value_parser!(u32).range(1..))]
    pub rate: u32,
    /// Stop when no request came for this many seconds
    #[arg(long, value_name = "SECS", default_value = "30", value_parser = positive_seconds)]
    pub idle_exit: Duration,
    /// Stop after this many seconds
    #[arg(long = "max-seconds", value_name = "SECS", default_value = "3600",
          value_parser = positive_seconds)]
    pub max_seconds: Duration,
    /// Stop after answering this many exchanges
    #[arg(long, value_name = "N", default_value_t = 10_000_000,
          value_parser = super::units::whole)]
    pub max_exchanges: u64,
}

/// Runs `hrts sync ...`.
pub fn run(args: &SyncArgs, segment: Option<&str>) -> Result<(), CliError> {
    let r = &args.round;
    if let Some(SyncCommand::Serve(s)) = &args.serve {
        let round = r.master.is_some()
            || r.out.is_some()
            || r.exchanges.is_some()
            || r.phase.is_some()
            || r.host.is_some();
        if round {
            return Err(CliError::usage(
                "--master, --out, --exchanges, --phase and --host are options of `hrts sync`, \
                 not of `hrts sync serve`",
            ));
        }
        return serve(s, segment);
    }
    let master = r
        .master
        .as_deref()
        .ok_or_else(|| CliError::usage("`hrts sync` needs --master HOST:PORT"))?;
    sync(
        master,
        r.out.as_deref(),
        r.exchanges.unwrap_or(50),
        r.phase.map(Phase::phase),
        r.host.as_deref(),
        segment,
    )
}

/// This host's clock: the segment of `--segment`/`HRTS_SEGMENT`, skewed by
/// `HRTS_TEST_CLOCK_SKEW` in tests.
pub fn host_clock(segment: Option<&str>, host: Option<&str>) -> Result<HostClock, CliError> {
    let mut clock = HostClock::with_base(super::open(segment)?)?;
    if let Some(h) = host {
        clock.set_host(h);
    }
    Ok(clock)
}

fn peer(text: &str) -> Result<Peer, String> {
    Peer::parse(text).map_err(|e| e.message().to_string())
}

fn serve(args: &ServeArgs, segment: Option<&str>) -> Result<(), CliError> {
    let clock = host_clock(segment, None)?;
    let (key, shown) = match SyncKey::from_env()? {
        Some(k) => (k, "from HRTS_SYNC_KEY".to_string()),
        None => {
            let k = SyncKey::random()?;
            (k, k.to_string())
        }
    };
    let socket = bind(&args.listen)?;
    let addr = socket.local_addr()?;
    let info = clock.info().clone();
    let peers = if args.peers.is_empty() {
        "any address with the key".to_string()
    } else {
        let list: Vec<String> = args.peers.iter().map(Peer::to_string).collect();
        list.join(",")
    };
    print(&format!(
        "listening: {addr}\nmaster host: {}\nmaster clock: {:#x}\nkey: {shown}\npeers: {peers}\n",
        info.host, info.clock_id
    ))?;
    let opts = ServeOptions {
        idle_exit: args.idle_exit,
        max_duration: args.max_seconds,
        max_exchanges: args.max_exchanges,
    };
    let access = Access {
        key,
        peers: args.peers.clone(),
        rate: args.rate,
    };
    let s = serve_with(&socket, &clock, &info.host, info.clock_id, opts, &access)?;
    print(&format!(
        "exchanges: {}\nrounds: {}\nignored: {}\nrefused: {}\nrate limited: {}\n\
         first wall ns: {}\nlast wall ns: {}\nrun wall ns: {}\n",
        s.exchanges,
        s.rounds,
        s.ignored,
        s.refused,
        s.limited,
        s.first_wall_ns,
        s.last_wall_ns,
        if s.exchanges == 0 { 0 } else { s.run_wall_ns() }
    ))
}

fn sync(
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
