//! Test-only commands, compiled in with the `testing` feature (never in a
//! production build).
//!
//! `hrts debug hold-writer`: takes the base's writer role and never
//! releases it, as a writer killed mid-move would; a test then SIGKILLs this
//! process and checks that other processes recover. With `--until-eof` it
//! gives the role back (a late tie) when its stdin ends: a test SIGSTOPs it in
//! between. `hrts debug tie-loop MS` forces ties for MS milliseconds (a process
//! that holds the role most of the time, to be caught with a real SIGSTOP);
//! `hrts debug role` prints who holds the role. `hrts debug host-probe` and
//! `hrts debug offsets MS` are the host page's tests' reader (see `host_probe`).

use crate::exit::CliError;
use hrts_core::SharedBase;
use std::path::PathBuf;

#[derive(clap::Args, Debug)]
pub struct DebugArgs {
    #[command(subcommand)]
    pub command: DebugCommand,
}

#[derive(clap::Subcommand, Debug)]
pub enum DebugCommand {
    /// Take the base's writer role and never give it back (a test kills this process)
    HoldWriter {
        /// Give the role back (tie or move, then release) when stdin ends
        #[arg(long)]
        until_eof: bool,
    },
    /// Force ties (tracking) or moves (frozen) for MS milliseconds, back to back
    TieLoop {
        #[arg(value_parser = super::units::whole)]
        ms: u64,
    },
    /// Print the writer role's holder: `holder PID stale BOOL` (PID 0: free)
    Role,
    /// Every thread takes PER_THREAD unique stamps and writes them to DIR/<pid>-<thread>.u64
    UniqueDump {
        #[arg(value_parser = super::units::whole)]
        per_thread: u64,
        #[arg(value_parser = clap::value_parser!(u32).range(1..=1024))]
        threads: u32,
        dir: PathBuf,
    },
    /// Damage the segment ROUNDS times (the fuzz stage)
    Fuzz {
        #[arg(value_parser = super::units::whole)]
        rounds: u64,
        #[arg(value_parser = super::units::whole)]
        seed: u64,
    },
    /// Stamp for MS milliseconds, counting stamps off the clock (the fuzz stage's Rust reader)
    FuzzRead {
        #[arg(value_parser = super::units::whole)]
        ms: u64,
    },
    StatsRecord(super::stats::record::RecordArgs),
    /// For every stdin line print `EARLIEST LATEST` of a bounded stamp; a line `wait T` commit-
    /// waits for T first and prints `waited` (the commit-wait test's two processes)
    BoundEcho,
    /// Try every way of changing the host page without changing it; print what was refused
    HostProbe,
    /// Measure |stamp - CLOCK_REALTIME| once a millisecond for MS milliseconds; print p50/p99/max
    Offsets {
        #[arg(value_parser = super::units::whole)]
        ms: u64,
    },
    /// Take bounded stamps back to back for MS milliseconds, each between two reads of
    /// CLOCK_REALTIME; print how many intervals missed it, and p99/max of the offsets and half
    /// widths
    BoundCheck {
        #[arg(value_parser = super::units::whole)]
        ms: u64,
    },
}

/// Runs `hrts debug ...`.
pub fn run(args: &DebugArgs, segment: Option<&str>) -> Result<(), CliError> {
    let open = || super::open(segment);
    match &args.command {
        DebugCommand::HoldWriter { until_eof } => hold_writer(&open()?, *until_eof),
        DebugCommand::TieLoop { ms } => tie_loop(&open()?, *ms),
        DebugCommand::Role => {
            let (pid, stale) = open()?.writer_role_for_test();
            super::print(&format!("holder {pid} stale {stale}\n"))
        }
        DebugCommand::UniqueDump {
            per_thread,
            threads,
            dir,
        } => unique_dump(&open()?, *per_thread, *threads, dir),
        DebugCommand::Fuzz { rounds, seed } => super::fuzz::fuzz(&open()?, *rounds, *seed),
        DebugCommand::FuzzRead { ms } => super::fuzz::fuzz_read(&open()?, *ms),
        DebugCommand::StatsRecord(spec) => super::stats::record::run(spec, segment),
        DebugCommand::HostProbe => super::host_probe::host_probe(),
        DebugCommand::BoundEcho => bound_echo(&open()?),
        DebugCommand::Offsets { ms } => super::host_probe::offsets(&open()?, *ms),
        DebugCommand::BoundCheck { ms } => super::host_probe::bound_check(&open()?, *ms),
    }
}

fn hold_writer(base: &SharedBase, until_eof: bool) -> Result<(), CliError> {
    base.hold_writer_role_for_test()?;
    super::print("holding\n")?;
    if !until_eof {
        loop {
            std::thread::sleep(std::time::Duration::from_secs(3600));
        }
    }
    let mut sink = Vec::new();
    let _ = std::io::Read::read_to_end(&mut std::io::stdin(), &mut sink);
    let released = base.release_writer_role_for_test();
    super::print(if released {
        "released\n"
    } else {
        "lost the role\n"
    })
}

/// `hrts debug tie-loop MS`: ties (or moves) back to back for MS milliseconds,
/// then prints how many it made.
fn tie_loop(base: &SharedBase, ms: u64) -> Result<(), CliError> {
    super::print("looping\n")?;
    let end = std::time::Instant::now() + std::time::Duration::from_millis(ms);
    let mut ties = 0u64;
    while std::time::Instant::now() < end {
        for _ in 0..100 {
            ties += base.force_move() as u64;
        }
    }
    super::print(&format!("ties {ties}\n"))
}

/// `hrts debug unique-dump PER_THREAD THREADS DIR` (hidden): every thread takes
/// PER_THREAD unique stamps, then writes them as little-endian u64s to
/// `DIR/<pid>-<thread>.u64`; a test gathers the files of many processes and
/// checks that no stamp repeats.
fn unique_dump(
    base: &SharedBase,
    per_thread: u64,
    threads: u32,
    dir: &std::path::Path,
) -> Result<(), CliError> {
    let stamps: Result<Vec<Vec<u64>>, hrts_core::Error> = std::thread::scope(|s| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                s.spawn(|| {
                    (0..per_thread)
                        .map(|_| base.next_unique())
                        .collect::<Result<Vec<u64>, _>>()
                })
            })
            .collect();
        // A worker only collects numbers; it cannot panic short of running out
        // of memory, which aborts anyway.
        workers
            .into_iter()
            .map(|w| w.join().unwrap_or_else(|_| Ok(Vec::new())))
            .collect()
    });
    for (t, list) in stamps?.iter().enumerate() {
        let bytes: Vec<u8> = list.iter().flat_map(|v| v.to_le_bytes()).collect();
        let path = dir.join(format!("{}-{t}.u64", std::process::id()));
        std::fs::write(&path, bytes).map_err(|e| {
            CliError::Core(hrts_core::Error::from_io(
                format!("write {}", path.display()),
                &e,
                "",
            ))
        })?;
    }
    Ok(())
}

/// `hrts debug bound-echo`: see [`DebugCommand::BoundEcho`].
fn bound_echo(base: &SharedBase) -> Result<(), CliError> {
    use std::io::{BufRead, Write};
    let mut out = std::io::stdout().lock();
    for line in std::io::stdin().lock().lines() {
        let line = line?;
        if let Some(t) = line.strip_prefix("wait ") {
            let t: u64 = t
                .trim()
                .parse()
                .map_err(|_| CliError::usage(format!("wait {t:?}: not a number")))?;
            base.commit_wait(t)?;
            writeln!(out, "waited")?;
        } else {
            let b = base.now_bounded()?;
            writeln!(out, "{} {}", b.earliest, b.latest)?;
        }
        out.flush()?;
    }
    Ok(())
}
