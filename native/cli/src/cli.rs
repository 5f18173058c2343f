//! The command line, declared with clap's derive: the commands, their options
//! and the help are generated from the declarations and doc comments below and
//! in each command's module (which declares its own options). Parsing errors
//! become usage errors (exit 2) printed the one way every error is.

use crate::commands::{
    self, daemon::DaemonArgs, eval::EvalArgs, merge::MergeArgs, seq::CountArgs, stats::StatsArgs,
    sync::SyncArgs, test_loop::TestArgs, trace::TraceArgs, track::TrackArgs, NowArgs,
};
use crate::exit::{self, CliError};
use clap::{CommandFactory, Parser, Subcommand};
use clap_complete::Shell;
use hrts_core::{env, ibmts};
use std::ffi::OsString;

#[cfg(windows)]
use commands::stats as stats_env;
#[cfg(not(windows))]
use hrts_stats::shared as stats_env;

/// One shared high-resolution timeline for every process on this host.
#[derive(Parser, Debug)]
#[command(
    name = "hrts",
    version = version(),
    max_term_width = 100,
    arg_required_else_help = false,
    after_help = after_help(),
)]
pub struct Cli {
    /// The segment to use, never the host page (default: $HRTS_SEGMENT, else the host page of
    /// `hrts daemon` when there is one, else /hrts-<uid>); for `hrts stats` the
    /// statistics segment (default: $HRTS_STATS_SEGMENT, else /hrts-stats-<uid>)
    #[arg(long, global = true, value_name = "NAME", value_parser = non_empty_name)]
    pub segment: Option<String>,

    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Print the current time as epoch nanoseconds; with --bound, an interval that holds true
    /// time: `EARLIEST LATEST STATUS`
    Now(NowArgs),
    /// Print the segment's facts as `key: value` lines (each time also as a UTC date, each
    /// duration also in µs/ms/s, on the line below)
    Info,
    /// The IBMTS installation test: a Version=0x... line, then N lines `seconds.micros =
    /// HEX.HEX`
    Test(TestArgs),
    /// Evaluate the hardware counter's reliability across CPUs (WTMLIB methods); progress on
    /// stderr, results on stdout
    Eval(EvalArgs),
    /// Watch the segment follow CLOCK_REALTIME: one line per tie (offset, correction, error
    /// bound and status), optionally as CSV and as an SVG plot
    Track(TrackArgs),
    /// Set the base anew (IBMTS setBaseInfo) for every process, bumping the generation; prints
    /// the new base: the explicit way to re-pair with the system clock at once
    Reset,
    /// Remove the segment: its name and its page (processes that have it open keep using it);
    /// says whether it existed
    Unlink,
    /// For every line on stdin print one ordered stamp (epoch ns)
    Echo,
    /// Print N sequence numbers shared by every process of the segment, never repeated, even
    /// after a reboot (persisted in the segment's sequence file every $HRTS_SEQ_INTERVAL
    /// numbers; see HRTS_SEQ_FILE)
    Seq(CountArgs),
    /// Print N unique stamps: epoch ns, each greater than every unique stamp any process got
    /// before
    Unique(CountArgs),
    Sync(SyncArgs),
    Trace(TraceArgs),
    Merge(MergeArgs),
    Stats(StatsArgs),
    /// Keep the host page (DIR/time, default /run/hrts/time): the one writer of a timeline every
    /// user and container of this host reads; mode and tie interval from HRTS_MODE,
    /// HRTS_TIE_INTERVAL_MS...
    Daemon(DaemonArgs),
    /// Print a shell completion script, e.g. `hrts completions bash >
    /// ~/.local/share/bash-completion/completions/hrts`
    Completions {
        /// The shell to complete in
        #[arg(value_enum)]
        shell: Shell,
    },
    /// Print the manual page (roff), e.g. `hrts manpage > hrts.1; man ./hrts.1`
    Manpage,
    /// Test builds only: commands that break the segment protocol on purpose
    #[cfg(feature = "testing")]
    #[command(hide = true)]
    Debug(commands::debug::DebugArgs),
}

/// What the command line asks for: a command to run, or a text clap made
/// (`--help`, `--version`) to print.
pub enum Invocation {
    Run(Cli),
    Print(String),
}

/// Parses the whole command line (program name first).
pub fn parse<I: IntoIterator<Item = OsString>>(args: I) -> Result<Invocation, CliError> {
    match Cli::try_parse_from(args) {
        Ok(cli) => Ok(Invocation::Run(cli)),
        // --help, --version, `hrts help`: the text goes to stdout, exit 0.
        Err(e) if !e.use_stderr() => Ok(Invocation::Print(e.render().to_string())),
        Err(e) => Err(CliError::from_clap(&e)),
    }
}

impl Invocation {
    pub fn run(self) -> Result<(), CliError> {
        match self {
            Invocation::Print(text) => commands::print(&text),
            Invocation::Run(cli) => cli.run(),
        }
    }
}

impl Cli {
    fn run(self) -> Result<(), CliError> {
        let segment = self.segment.as_deref();
        let open = || commands::open(segment);
        match self.command {
            Command::Now(args) => commands::now(&open()?, &args),
            Command::Info => commands::info::run(&open()?),
            Command::Test(args) => commands::test_loop::run(&open()?, &args),
            Command::Eval(args) => commands::eval::run(&args),
            Command::Track(args) => commands::track::run(segment, &args),
            Command::Reset => commands::reset::run(&open()?),
            Command::Unlink => commands::unlink(segment),
            Command::Echo => commands::echo::run(&open()?),
            Command::Seq(args) => commands::seq::run(&open()?, args.count),
            Command::Unique(args) => commands::seq::unique(&open()?, args.count),
            Command::Sync(args) => commands::sync::run(&args, segment),
            Command::Trace(args) => commands::trace::run(&args, segment),
            Command::Merge(args) => commands::merge::run(&args),
            Command::Stats(args) => commands::stats::run(&args, segment),
            Command::Daemon(args) => commands::daemon::run(&args),
            Command::Completions { shell } => {
                let mut out = Vec::new();
                clap_complete::generate(shell, &mut Cli::command(), "hrts", &mut out);
                commands::print(&String::from_utf8_lossy(&out))
            }
            Command::Manpage => {
                let mut out = Vec::new();
                clap_mangen::Man::new(Cli::command()).render(&mut out)?;
                commands::print(&String::from_utf8_lossy(&out))
            }
            #[cfg(feature = "testing")]
            Command::Debug(args) => commands::debug::run(&args, segment),
        }
    }
}

/// `--segment`: a name, not an empty string.
fn non_empty_name(s: &str) -> Result<String, String> {
    if s.is_empty() {
        Err("the segment needs a non-empty name, e.g. /hrts-myapp".to_string())
    } else {
        Ok(s.to_string())
    }
}

/// `hrts --version` prints `hrts X.Y.Z (logic version a.b.c.d, 0x...)`.
pub fn version() -> String {
    format!(
        "{} (logic version {}, {:#018x})",
        env!("CARGO_PKG_VERSION"),
        ibmts::version_string(ibmts::LOGIC_VERSION),
        ibmts::LOGIC_VERSION
    )
}

/// Every environment variable hrts reads (the library, the statistics and the
/// traces), for the help: name and meaning.
pub const ENVIRONMENT: &[(&str, &str)] = &[
    (
        env::SEGMENT,
        "the segment's name, e.g. /hrts-myapp (never the host page)",
    ),
    (
        env::HOST,
        "off: never use the host page of `hrts daemon` (default on: use it when valid)",
    ),
    (
        env::BOUND_DRIFT_PPM,
        "the system clock's largest drift between two learnings of its error bound, ppm, \
         1..1000000 (default 50); the writer's (daemon's, tying process's) value counts",
    ),
    (
        env::BOUND_VOID_S,
        "seconds after which an error bound is void and `hrts now --bound` fails, \
         1..604800 (default 60); the writer's value counts",
    ),
    (
        env::VMCLOCK,
        "the hypervisor's VMClock device a writer reads at its ties (default \
         /dev/vmclock0 where there is one; off: none): a new disruption marker gives \
         `disrupted`, an unreliable clock `unknown`, its max error widens the bound",
    ),
    (
        env::HOST_DIR,
        "the host page's directory (default /run/hrts)",
    ),
    (
        env::HOST_USER,
        "the service user whose host page is trusted besides root's (default hrts)",
    ),
    (
        env::GROUP,
        "share a segment this process creates with this group (name or gid)",
    ),
    (
        env::MODE,
        "a new segment's mode: tracking (default; follows CLOCK_REALTIME, slewed, \
         never backward) or frozen (IBMTS: the calendar is read when the base is made); \
         creator only",
    ),
    (
        env::SOURCE,
        "the counter a new segment reads: tsc, cntvct, timebase or monotonic-raw \
         (default: this machine's hardware counter when it is reliable); creator only",
    ),
    (
        env::TIE_INTERVAL_MS,
        "tracking: time between ties in ms, 1..60000 (default 1000; creator only)",
    ),
    (
        env::MAX_SLEW_PPM,
        "tracking: largest slew and frequency correction in ppm, 1..50000 (default 500; \
         creator only)",
    ),
    (
        env::STEP_THRESHOLD_MS,
        "tracking: a system clock this many ms ahead is followed by a step forward \
         (default 100; creator only)",
    ),
    (
        env::WRAP_THRESHOLD,
        "counter ticks after which the base moves (frozen) or the segment ties \
         (tracking; default: the tie interval); creator only",
    ),
    (
        env::CALENDAR_CLOCK,
        "how ties read CLOCK_REALTIME: kernel (default: the vDSO or the system call, \
         which no LD_PRELOAD shifts) or libc (tests whose shifted clock must reach the line)",
    ),
    (
        env::SEQ_FILE,
        "where `seq` persists the high-water mark of the segment HRTS_SEGMENT names (else \
         /hrts-<uid>); any other segment (--segment) uses its own \
         ~/.local/state/hrts/<segment>.seq, the default",
    ),
    (
        env::SEQ_INTERVAL,
        "numbers issued between two writes of that file (default 1000)",
    ),
    (
        stats_env::ENV_SEGMENT,
        "the statistics segment's name (default /hrts-stats-<uid>)",
    ),
    (
        stats_env::ENV_GROUP,
        "share a statistics segment this process creates with this group",
    ),
    (
        stats_env::ENV_GRACE_MS,
        "how long, in ms, the metrics of a process that has gone stay readable \
         (default 60000)",
    ),
    (
        stats_env::ENV_PROGRAM,
        "the program (service) name a process publishes statistics under, its Prometheus \
         label program (default: the process's name; Java: its main class or jar)",
    ),
    (
        stats_env::ENV_INSTANCE_ID,
        "a stable id of the process among its program's (a replica's name or number), \
         its Prometheus label hrts_instance, kept across restarts (default: none)",
    ),
    (
        env::ITC_EVENT_BITS,
        "trace stamps: low bits counting the events of one tick (default 13)",
    ),
    (env::ITC_TICK_NS, "trace stamps: the tick in ns (default 1)"),
    (
        hrts_trace::ENV_TRACE_HOST,
        "this host's name in trace files (default: the hostname)",
    ),
    (
        hrts_trace::sync::ENV_KEY,
        "the sync run's key, 32 hex digits (`hrts sync serve` prints one when unset)",
    ),
    (
        hrts_trace::ENV_TEST_CLOCK_SKEW,
        "tests only: OFFSET_NS,DRIFT_PPM[,REF_NS] skews the clock of traces and sync, \
         to play several hosts",
    ),
    (
        hrts_core::clock::bound::ENV_TEST_BOUND,
        "test builds only: STATUS,NS[,insert|delete@EPOCH_NS] (e.g. synchronized,20000) \
         fixes the error bound a writer learns, and may announce a leap second at that moment",
    ),
];

/// The help's closing sections: the environment and the exit status, from the
/// tables they describe.
fn after_help() -> String {
    let mut s = String::from("Environment:\n");
    for (name, meaning) in ENVIRONMENT {
        s.push_str(&hanging(name, meaning, 26));
    }
    s.push_str("\nExit status:\n");
    for (code, meaning) in exit::CODES {
        s.push_str(&hanging(&code.to_string(), meaning, 5));
    }
    s.push_str("Errors are printed to stderr as `hrts: error: <message>`.");
    s
}

/// `  TERM  text...` with the text wrapped at 90 columns and its lines after the
/// first indented to `column`.
fn hanging(term: &str, text: &str, column: usize) -> String {
    const WIDTH: usize = 90;
    let mut out = String::new();
    let mut line = format!("  {term:<w$}", w = column - 2);
    for word in text.split_whitespace() {
        if line.chars().count() + 1 + word.chars().count() > WIDTH && line.len() > column {
            out.push_str(line.trim_end());
            out.push('\n');
            line = " ".repeat(column);
        }
        if line.len() > column && !line.ends_with(' ') {
            line.push(' ');
        }
        line.push_str(word);
    }
    out.push_str(&line);
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn p(args: &[&str]) -> Result<Cli, String> {
        let argv = std::iter::once("hrts").chain(args.iter().copied());
        match parse(argv.map(OsString::from)) {
            Ok(Invocation::Run(cli)) => Ok(cli),
            Ok(Invocation::Print(text)) => Err(format!("printed: {text}")),
            Err(e) => {
                assert_eq!(e.code(), exit::USAGE, "{e}");
                Err(e.to_string())
            }
        }
    }

    fn usage(args: &[&str]) -> String {
        match p(args) {
            Err(m) => m,
            Ok(cli) => panic!("{args:?} should be a usage error, got {cli:?}"),
        }
    }

    #[test]
    fn the_declarations_are_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn global_segment_option_anywhere() {
        for args in [
            &["--segment", "/x", "now"][..],
            &["now", "--segment", "/x"],
            &["--segment=/x", "now"],
        ] {
            let cli = p(args).unwrap();
            assert_eq!(cli.segment.as_deref(), Some("/x"));
            assert!(matches!(cli.command, Command::Now(_)));
        }
        assert!(usage(&["--segment=", "now"]).contains("non-empty"));
        assert!(usage(&["now", "--segment"]).contains("--segment"));
    }

    #[test]
    fn test_takes_count_and_optional_delay() {
        let Command::Test(t) = p(&["test", "3", "0.25"]).unwrap().command else {
            panic!()
        };
        assert_eq!((t.count, t.delay), (3, Duration::from_millis(250)));
        let Command::Test(t) = p(&["test", "10"]).unwrap().command else {
            panic!()
        };
        assert_eq!((t.count, t.delay), (10, Duration::ZERO));
        assert!(usage(&["test"]).contains("<N>"));
        assert!(usage(&["test", "ten"]).contains("whole number"));
        assert!(usage(&["test", "1", "soon"]).contains("DELAY"));
        assert!(usage(&["test", "1", "2", "3"]).contains("unexpected argument"));
    }

    #[test]
    fn eval_options_are_parsed_and_confined_to_eval() {
        let Command::Eval(e) = p(&[
            "eval",
            "--method",
            "cop",
            "--budget-ms=20",
            "--source",
            "monotonic-raw",
        ])
        .unwrap()
        .command
        else {
            panic!()
        };
        assert_eq!(e.method, commands::eval::Methods::Cop);
        assert_eq!(e.budget_ms, 20);
        assert_eq!(e.source, Some(hrts_core::clock::SourceId::MonotonicRaw));
        assert!(usage(&["now", "--method", "cop"]).contains("--method"));
        assert!(usage(&["eval", "--method", "x"]).contains("cop"));
        assert!(usage(&["eval", "--budget-ms", "0"]).contains("1..=60000"));
        assert!(usage(&["eval", "--source", "hpet"]).contains("monotonic-raw"));
    }

    #[test]
    fn track_takes_seconds_and_output_files() {
        let Command::Track(t) = p(&["track", "2.5", "--csv", "a.csv", "--svg=b.svg"])
            .unwrap()
            .command
        else {
            panic!()
        };
        assert_eq!(t.seconds, Duration::from_millis(2500));
        assert_eq!(t.csv.as_deref(), Some(std::path::Path::new("a.csv")));
        assert_eq!(t.svg.as_deref(), Some(std::path::Path::new("b.svg")));
        let Command::Track(t) = p(&["track"]).unwrap().command else {
            panic!()
        };
        assert_eq!(
            (t.seconds, t.csv, t.svg),
            (Duration::from_secs(10), None, None)
        );
        assert!(usage(&["track", "0"]).contains("SECONDS"));
        assert!(usage(&["now", "--csv", "x"]).contains("--csv"));
        assert!(usage(&["track", "--method", "cop"]).contains("--method"));
    }

    #[test]
    fn mistakes_are_usage_errors() {
        assert!(usage(&[]).contains("requires a subcommand"));
        assert!(usage(&["frobnicate"]).contains("unrecognized subcommand"));
        assert!(usage(&["now", "extra"]).contains("unexpected argument"));
        assert!(usage(&["--bogus"]).contains("unexpected argument '--bogus'"));
        assert!(usage(&["seq", "1", "2"]).contains("unexpected argument"));
        assert!(usage(&["unique", "x"]).contains("whole number"));
        assert!(usage(&["seq", "-"]).contains("whole number"));
        let Command::Seq(s) = p(&["seq"]).unwrap().command else {
            panic!()
        };
        assert_eq!(s.count, 1, "N defaults to 1");
    }

    #[test]
    fn help_and_version_are_printed_not_run() {
        for args in [&["--help"][..], &["help"], &["now", "-h"], &["-V"]] {
            assert!(p(args).unwrap_err().starts_with("printed: "), "{args:?}");
        }
        let Ok(Invocation::Print(v)) = parse(["hrts", "--version"].map(OsString::from)) else {
            panic!()
        };
        assert_eq!(v, format!("hrts {}\n", version()));
    }

    #[test]
    fn stats_options_parse() {
        use commands::stats::{Format, StatsAction};
        let stats = |args: &[&str]| match p(&[&["stats"], args].concat()).map(|c| c.command) {
            Ok(Command::Stats(s)) => s,
            other => panic!("{args:?}: {other:?}"),
        };
        let s = stats(&[]);
        assert_eq!((s.format(), s.watch, s.count), (Format::Table, None, None));
        let s = stats(&["--prometheus", "--watch"]);
        assert_eq!(
            (s.format(), s.watch),
            (Format::Prometheus, Some(Duration::from_secs(1)))
        );
        let s = stats(&["--watch", "0.5", "--count", "3", "--json"]);
        assert_eq!(
            (s.format(), s.watch, s.count),
            (Format::Json, Some(Duration::from_millis(500)), Some(3))
        );
        assert_eq!(stats(&["--watch=2"]).watch, Some(Duration::from_secs(2)));
        assert!(matches!(
            stats(&["serve", "--listen", "127.0.0.1:0"]).action,
            Some(StatsAction::Serve { .. })
        ));
        assert!(matches!(
            stats(&["unlink"]).action,
            Some(StatsAction::Unlink)
        ));
        let cli = p(&["stats", "unlink", "--segment", "/s"]).unwrap();
        assert_eq!(cli.segment.as_deref(), Some("/s"));
        assert!(usage(&["stats", "--json", "--prometheus"]).contains("cannot be used with"));
        assert!(stats(&["--prometheus", "--pid-label"]).pid_label);
        assert!(!stats(&["--prometheus"]).pid_label);
        assert!(usage(&["stats", "--pid-label"]).contains("--prometheus"));
        assert!(matches!(
            stats(&["serve", "--listen", "127.0.0.1:0", "--pid-label"]).action,
            Some(StatsAction::Serve {
                pid_label: true,
                ..
            })
        ));
        assert!(usage(&["stats", "--watch", "0"]).contains("watch interval"));
        let abc = usage(&["stats", "--watch", "abc"]);
        assert!(
            abc.contains("the watch interval must be a number of seconds"),
            "{abc}"
        );
        assert!(!abc.contains("unknown stats command"));
        assert!(usage(&["stats", "--count", "2"]).contains("--watch"));
        assert!(usage(&["stats", "--watch", "--count", "0"]).contains("positive whole"));
        assert!(usage(&["stats", "fly"]).contains("unrecognized subcommand"));
        assert!(usage(&["stats", "serve"]).contains("--listen"));
        assert!(usage(&["stats", "unlink", "--watch"]).contains("--watch"));
        let cli = p(&["stats", "--segment", "/s", "unlink"]).unwrap();
        assert_eq!(cli.segment.as_deref(), Some("/s"));
    }

    #[test]
    fn sync_trace_and_merge_parse() {
        use commands::sync::SyncCommand;
        use commands::trace::TraceCommand;
        let Command::Sync(s) = p(&[
            "sync",
            "serve",
            "--listen",
            "0.0.0.0:7700",
            "--idle-exit=2.5",
        ])
        .unwrap()
        .command
        else {
            panic!()
        };
        let Some(SyncCommand::Serve(serve)) = s.serve else {
            panic!()
        };
        assert_eq!(serve.listen, "0.0.0.0:7700");
        assert_eq!(serve.idle_exit, Duration::from_millis(2500));
        assert_eq!(serve.max_seconds, Duration::from_secs(3600));
        assert_eq!(serve.max_exchanges, 10_000_000);
        let Command::Sync(s) = p(&[
            "sync",
            "--master",
            "m:1",
            "--out",
            "f",
            "--phase",
            "end",
            "--exchanges",
            "20",
        ])
        .unwrap()
        .command
        else {
            panic!()
        };
        assert_eq!(s.round.master.as_deref(), Some("m:1"));
        assert_eq!(s.round.exchanges, Some(20));
        assert_eq!(
            s.round.phase.map(|p| p.phase()),
            Some(hrts_trace::SyncPhase::End)
        );
        let cli = p(&["sync", "--segment", "/s", "serve", "--listen", "x"]).unwrap();
        assert_eq!(cli.segment.as_deref(), Some("/s"));
        assert!(usage(&["sync"]).contains("--master"));
        assert!(usage(&["sync", "serve"]).contains("--listen"));
        assert!(usage(&["sync", "--master", "m:1", "--phase", "middle"]).contains("periodic"));
        assert!(usage(&["sync", "--master", "m:1", "--exchanges", "0"]).contains("1..=10000"));
        assert!(usage(&["sync", "--master", "m:1", "extra"]).contains("'extra'"));
        assert!(
            usage(&["sync", "serve", "--listen", "x", "--idle-exit", "0"]).contains("positive")
        );
        let Command::Trace(t) = p(&["trace", "record", "--out", "a.htr", "--master=m:1"])
            .unwrap()
            .command
        else {
            panic!()
        };
        let TraceCommand::Record(r) = t.command else {
            panic!()
        };
        assert_eq!(
            (r.master.as_deref(), r.exchanges, r.label.as_str()),
            (Some("m:1"), 50, "hrts trace record")
        );
        assert!(usage(&["trace", "dump"]).contains("<FILE>"));
        assert!(usage(&["trace", "record"]).contains("--out"));
        assert!(usage(&["trace", "fly"]).contains("unrecognized subcommand"));
        let Command::Merge(m) = p(&[
            "merge",
            "a",
            "b",
            "--out",
            "g",
            "--json",
            "g.json",
            "--extrapolate",
        ])
        .unwrap()
        .command
        else {
            panic!()
        };
        assert_eq!(m.inputs.len(), 2);
        assert_eq!(m.json, Some("g.json".into()));
        let o = m.options();
        assert!(o.extrapolate && !o.allow_unsynced);
        assert_eq!((o.max_drift_ppm, o.drop_fraction), (1000.0, 0.1));
        assert!(usage(&["merge", "--out", "g"]).contains("<FILE>"));
        assert!(usage(&["merge", "a"]).contains("--out"));
        assert!(usage(&["merge", "a", "--out", "g", "--max-drift-ppm", "-1"]).contains("-1"));
    }

    #[cfg(feature = "testing")]
    #[test]
    fn debug_commands_parse_in_test_builds() {
        use commands::debug::DebugCommand;
        let debug = |args: &[&str]| match p(&[&["debug"], args].concat()).map(|c| c.command) {
            Ok(Command::Debug(d)) => d.command,
            other => panic!("{args:?}: {other:?}"),
        };
        assert!(matches!(
            debug(&["hold-writer"]),
            DebugCommand::HoldWriter { until_eof: false }
        ));
        assert!(matches!(
            debug(&["hold-writer", "--until-eof"]),
            DebugCommand::HoldWriter { until_eof: true }
        ));
        assert!(matches!(
            debug(&["tie-loop", "5"]),
            DebugCommand::TieLoop { ms: 5 }
        ));
        assert!(matches!(debug(&["role"]), DebugCommand::Role));
        assert!(usage(&["debug"]).contains("hold-writer"));
        assert!(usage(&["debug", "unique-dump", "1", "0", "/d"]).contains("1..=1024"));
        let DebugCommand::StatsRecord(r) = debug(&[
            "stats-record",
            "--counter",
            "a=1,b=-2",
            "--gauge=g=2.5",
            "--timer",
            "t=1500",
            "--repeat",
            "3",
            "--counter",
            "x=y=4",
        ]) else {
            panic!()
        };
        assert_eq!(
            r.counters(),
            vec![("a".into(), 1), ("b".into(), -2), ("x=y".into(), 4)]
        );
        assert_eq!(r.gauges(), vec![("g".into(), 2.5)]);
        assert_eq!(r.timers(), vec![("t".into(), 1500)]);
        assert_eq!(r.repeat, 3);
        for bad in [
            &["--counter", "a"][..],
            &["--counter", "a=x"],
            &["--timer", "t=-1"],
            &["--gauge", "g=nan"],
            &["extra"],
        ] {
            usage(&[&["debug", "stats-record"], bad].concat());
        }
    }

    #[cfg(not(feature = "testing"))]
    #[test]
    fn debug_commands_do_not_exist_in_production_builds() {
        assert!(usage(&["debug", "hold-writer"]).contains("unrecognized subcommand"));
    }

    #[test]
    fn the_help_lists_every_variable_and_exit_code() {
        let help = Cli::command().render_help().to_string();
        for (name, _) in ENVIRONMENT {
            assert!(help.contains(&format!("\n  {name} ")), "{name} in {help}");
        }
        for (code, _) in exit::CODES {
            assert!(help.contains(&format!("\n  {code}  ")), "{code} in {help}");
        }
        assert!(help.lines().all(|l| l.chars().count() <= 100), "{help}");
    }
}
