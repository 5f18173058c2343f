//! Command-line parsing (std only: the grammar is a handful of words).

use crate::exit::CliError;
use hrts_core::clock::SourceId;
use std::time::Duration;

/// Which reliability method(s) `hrts eval` runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Methods {
    Cop,
    Switching,
    Both,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EvalOptions {
    pub methods: Methods,
    pub budget: Duration,
    pub source: Option<SourceId>,
}

/// `hrts track [SECONDS] [--csv FILE] [--svg FILE]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TrackOptions {
    /// How long to watch (default 10 s).
    pub duration: Duration,
    pub csv: Option<std::path::PathBuf>,
    pub svg: Option<std::path::PathBuf>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Command {
    Now,
    Info,
    Test {
        count: u64,
        delay: Duration,
    },
    Eval(EvalOptions),
    Track(TrackOptions),
    Reset,
    Unlink,
    Echo,
    Seq {
        count: u64,
    },
    /// `unique [N]`: N unique stamps.
    Unique {
        count: u64,
    },
    /// Test builds only: each of `threads` threads takes `per_thread` unique stamps and
    /// writes them to its own file in `dir` (multi-process uniqueness tests).
    #[cfg(feature = "testing")]
    UniqueDump {
        per_thread: u64,
        threads: u32,
        dir: std::path::PathBuf,
    },
    /// Test builds only: take the writer role and never give it back (killed by a test).
    #[cfg(feature = "testing")]
    HoldWriter,
    /// Test builds only: damage the segment `rounds` times (the fuzz stage).
    #[cfg(feature = "testing")]
    Fuzz {
        rounds: u64,
        seed: u64,
    },
    /// Test builds only: stamp for `ms` milliseconds, counting stamps off the clock.
    #[cfg(feature = "testing")]
    FuzzRead {
        ms: u64,
    },
    /// `sync ...`, `trace ...`, `merge ...` (parsed by their own module).
    Trace(crate::commands::trace_args::TraceCommand),
    /// `stats ...` (and, in test builds, `debug stats-record ...`), parsed by
    /// their own module; `--segment` names the statistics segment for them.
    Stats(crate::commands::stats_args::StatsCommand),
    Help,
    Version,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Invocation {
    /// `--segment NAME`, overriding HRTS_SEGMENT.
    pub segment: Option<String>,
    pub command: Command,
}

/// Parses the arguments after the program name. Global options may stand
/// anywhere; command options are only accepted by their command.
pub fn parse<I: IntoIterator<Item = String>>(args: I) -> Result<Invocation, CliError> {
    let mut segment = None;
    let mut help = false;
    let mut version = false;
    let mut words = Vec::new();
    let mut options: Vec<(String, String)> = Vec::new();
    let mut traced = None;
    let mut stats = None;
    let mut it = args.into_iter();
    while let Some(arg) = it.next() {
        if words.is_empty() && crate::commands::trace_args::owns(&arg) {
            let rest: Vec<String> = it.by_ref().collect();
            let (cmd, seg) = crate::commands::trace_args::parse(&arg, &rest)?;
            segment = seg.or(segment);
            traced = Some(cmd);
            break;
        }
        if words.is_empty() && arg == "stats" {
            let rest: Vec<String> = it.by_ref().collect();
            let (cmd, seg) = crate::commands::stats_args::parse(&rest)?;
            segment = seg.or(segment);
            stats = Some(cmd);
            break;
        }
        #[cfg(feature = "testing")]
        if words.len() == 1 && words[0] == "debug" && arg == "stats-record" {
            let rest: Vec<String> = it.by_ref().collect();
            let (cmd, seg) = crate::commands::stats_args::parse_record(&rest)?;
            segment = seg.or(segment);
            stats = Some(cmd);
            words.clear();
            break;
        }
        let (flag, inline) = match arg.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f.to_string(), Some(v.to_string())),
            _ => (arg.clone(), None),
        };
        let mut value = |name: &str| {
            inline
                .clone()
                .or_else(|| it.next())
                .ok_or_else(|| CliError::usage(format!("{name} needs a value")))
        };
        match flag.as_str() {
            "-h" | "--help" => help = true,
            "-V" | "--version" => version = true,
            "--segment" => segment = Some(value("--segment")?),
            "--method" | "--budget-ms" | "--source" | "--csv" | "--svg" => {
                let v = value(&flag)?;
                options.push((flag, v));
            }
            "--" => words.extend(it.by_ref()),
            f if f.starts_with('-') && f.len() > 1 => {
                return Err(CliError::usage(format!("unknown option {f}")));
            }
            _ => words.push(arg),
        }
    }
    if let Some(name) = &segment {
        if name.is_empty() {
            return Err(CliError::usage("--segment needs a non-empty name"));
        }
    }
    let command = if help {
        Command::Help
    } else if version {
        Command::Version
    } else if let Some(cmd) = traced {
        Command::Trace(cmd)
    } else if let Some(cmd) = stats {
        Command::Stats(cmd)
    } else {
        command(&words, &options)?
    };
    for (flag, _) in &options {
        let track_flag = flag == "--csv" || flag == "--svg";
        match (&command, track_flag) {
            (Command::Eval(_), false) | (Command::Track(_), true) => {}
            (_, false) => {
                return Err(CliError::usage(format!(
                    "{flag} is an option of `hrts eval` only"
                )))
            }
            (_, true) => {
                return Err(CliError::usage(format!(
                    "{flag} is an option of `hrts track` only"
                )))
            }
        }
    }
    Ok(Invocation { segment, command })
}

fn command(words: &[String], options: &[(String, String)]) -> Result<Command, CliError> {
    let Some((name, rest)) = words.split_first() else {
        return Err(CliError::usage("no command given"));
    };
    let no_args = |cmd: Command| {
        if rest.is_empty() {
            Ok(cmd)
        } else {
            Err(CliError::usage(format!(
                "`hrts {name}` takes no arguments, got {:?}",
                rest[0]
            )))
        }
    };
    match name.as_str() {
        "now" => no_args(Command::Now),
        "info" => no_args(Command::Info),
        "reset" => no_args(Command::Reset),
        "unlink" => no_args(Command::Unlink),
        "echo" => no_args(Command::Echo),
        "help" => no_args(Command::Help),
        "test" => test_args(rest),
        "seq" => match rest {
            [] => Ok(Command::Seq { count: 1 }),
            [n] => Ok(Command::Seq {
                count: whole(n, "seq: N")?,
            }),
            _ => Err(CliError::usage("usage: hrts seq [N]")),
        },
        "unique" => match rest {
            [] => Ok(Command::Unique { count: 1 }),
            [n] => Ok(Command::Unique {
                count: whole(n, "unique: N")?,
            }),
            _ => Err(CliError::usage("usage: hrts unique [N]")),
        },
        "track" => {
            let duration = match rest {
                [] => Duration::from_secs(10),
                [secs] => secs
                    .parse::<f64>()
                    .ok()
                    .filter(|s| *s > 0.0 && *s <= 1e6)
                    .map(Duration::from_secs_f64)
                    .ok_or_else(|| {
                        CliError::usage(format!(
                            "track: SECONDS must be a positive number of seconds, not {secs:?}"
                        ))
                    })?,
                _ => {
                    return Err(CliError::usage(
                        "usage: hrts track [SECONDS] [--csv FILE] [--svg FILE]",
                    ))
                }
            };
            let file = |name: &str| {
                options
                    .iter()
                    .rev()
                    .find(|(f, _)| f == name)
                    .map(|(_, v)| std::path::PathBuf::from(v))
            };
            Ok(Command::Track(TrackOptions {
                duration,
                csv: file("--csv"),
                svg: file("--svg"),
            }))
        }
        "eval" => {
            if !rest.is_empty() {
                return Err(CliError::usage(format!(
                    "`hrts eval` takes no arguments, got {:?}",
                    rest[0]
                )));
            }
            eval_options(options).map(Command::Eval)
        }
        #[cfg(feature = "testing")]
        "debug" => match rest {
            [what] if what == "hold-writer" => Ok(Command::HoldWriter),
            [what, rounds, seed] if what == "fuzz" => Ok(Command::Fuzz {
                rounds: whole(rounds, "fuzz: ROUNDS")?,
                seed: whole(seed, "fuzz: SEED")?,
            }),
            [what, ms] if what == "fuzz-read" => Ok(Command::FuzzRead {
                ms: whole(ms, "fuzz-read: MS")?,
            }),
            [what, n, threads, dir] if what == "unique-dump" => Ok(Command::UniqueDump {
                per_thread: whole(n, "unique-dump: PER_THREAD")?,
                threads: u32::try_from(whole(threads, "unique-dump: THREADS")?)
                    .ok()
                    .filter(|&t| (1..=1024).contains(&t))
                    .ok_or_else(|| CliError::usage("unique-dump: THREADS must be 1..1024"))?,
                dir: dir.into(),
            }),
            _ => Err(CliError::usage(
                "usage: hrts debug hold-writer | hrts debug unique-dump PER_THREAD THREADS DIR | \
                 hrts debug fuzz ROUNDS SEED | hrts debug fuzz-read MS | \
                 hrts debug stats-record [OPTIONS] (see `hrts debug stats-record --help`)",
            )),
        },
        other => Err(CliError::usage(format!("unknown command {other:?}"))),
    }
}

/// A non-negative integer argument.
fn whole(s: &str, what: &str) -> Result<u64, CliError> {
    s.parse::<u64>()
        .map_err(|_| CliError::usage(format!("{what} must be a whole number, not {s:?}")))
}

fn test_args(rest: &[String]) -> Result<Command, CliError> {
    let (count, delay) = match rest {
        [n] => (n, None),
        [n, d] => (n, Some(d)),
        _ => return Err(CliError::usage("usage: hrts test N [DELAY_SECONDS]")),
    };
    let count = whole(count, "test: N")?;
    let delay = match delay {
        None => Duration::ZERO,
        Some(d) => d
            .parse::<f64>()
            .ok()
            .and_then(|s| Duration::try_from_secs_f64(s).ok())
            .ok_or_else(|| {
                CliError::usage(format!(
                    "test: DELAY must be a non-negative number of seconds, not {d:?}"
                ))
            })?,
    };
    Ok(Command::Test { count, delay })
}

fn eval_options(options: &[(String, String)]) -> Result<EvalOptions, CliError> {
    let mut eval = EvalOptions {
        methods: Methods::Both,
        budget: Duration::from_millis(200),
        source: None,
    };
    for (flag, v) in options {
        match flag.as_str() {
            "--method" => {
                eval.methods = match v.as_str() {
                    "cop" => Methods::Cop,
                    "switching" => Methods::Switching,
                    "both" => Methods::Both,
                    _ => {
                        return Err(CliError::usage(format!(
                            "--method must be cop, switching or both, not {v:?}"
                        )))
                    }
                }
            }
            "--budget-ms" => {
                let ms = v
                    .parse::<u64>()
                    .ok()
                    .filter(|&ms| (1..=60_000).contains(&ms));
                eval.budget = Duration::from_millis(ms.ok_or_else(|| {
                    CliError::usage(format!("--budget-ms must be 1..60000, not {v:?}"))
                })?);
            }
            "--source" => {
                eval.source = Some(SourceId::from_name(v).ok_or_else(|| {
                    CliError::usage(format!(
                        "--source must be one of tsc, cntvct, timebase, monotonic-raw, not {v:?}"
                    ))
                })?);
            }
            _ => unreachable!("parse() confines the other options to their command"),
        }
    }
    Ok(eval)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(args: &[&str]) -> Result<Invocation, CliError> {
        parse(args.iter().map(|s| s.to_string()))
    }

    fn usage_message(args: &[&str]) -> String {
        match p(args) {
            Err(CliError::Usage(m)) => m,
            other => panic!("{args:?} should be a usage error, got {other:?}"),
        }
    }

    #[test]
    fn global_segment_option_anywhere() {
        for args in [
            &["--segment", "/x", "now"][..],
            &["now", "--segment", "/x"],
            &["--segment=/x", "now"],
        ] {
            let inv = p(args).unwrap();
            assert_eq!(inv.segment.as_deref(), Some("/x"));
            assert_eq!(inv.command, Command::Now);
        }
    }

    #[test]
    fn test_takes_count_and_optional_delay() {
        assert_eq!(
            p(&["test", "10"]).unwrap().command,
            Command::Test {
                count: 10,
                delay: Duration::ZERO
            }
        );
        assert_eq!(
            p(&["test", "3", "0.25"]).unwrap().command,
            Command::Test {
                count: 3,
                delay: Duration::from_millis(250)
            }
        );
        assert!(usage_message(&["test"]).contains("hrts test N"));
        assert!(usage_message(&["test", "ten"]).contains("whole number"));
        assert!(usage_message(&["test", "1", "-1"]).contains("unknown option"));
        assert!(usage_message(&["test", "1", "soon"]).contains("DELAY"));
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
        assert_eq!(e.methods, Methods::Cop);
        assert_eq!(e.budget, Duration::from_millis(20));
        assert_eq!(e.source, Some(SourceId::MonotonicRaw));
        assert!(usage_message(&["now", "--method", "cop"]).contains("eval"));
        assert!(usage_message(&["eval", "--method", "x"]).contains("cop"));
        assert!(usage_message(&["eval", "--budget-ms", "0"]).contains("1..60000"));
    }

    #[test]
    fn track_takes_seconds_and_output_files() {
        let Command::Track(t) = p(&["track", "2.5", "--csv", "a.csv", "--svg=b.svg"])
            .unwrap()
            .command
        else {
            panic!()
        };
        assert_eq!(t.duration, Duration::from_millis(2500));
        assert_eq!(t.csv.as_deref(), Some(std::path::Path::new("a.csv")));
        assert_eq!(t.svg.as_deref(), Some(std::path::Path::new("b.svg")));
        let Command::Track(t) = p(&["track"]).unwrap().command else {
            panic!()
        };
        assert_eq!(
            (t.duration, t.csv, t.svg),
            (Duration::from_secs(10), None, None)
        );
        assert!(usage_message(&["track", "0"]).contains("SECONDS"));
        assert!(usage_message(&["now", "--csv", "x"]).contains("hrts track"));
        assert!(usage_message(&["track", "--method", "cop"]).contains("hrts eval"));
    }

    #[test]
    fn mistakes_are_usage_errors() {
        assert!(usage_message(&[]).contains("no command"));
        assert!(usage_message(&["frobnicate"]).contains("unknown command"));
        assert!(usage_message(&["now", "extra"]).contains("takes no arguments"));
        assert!(usage_message(&["--bogus"]).contains("unknown option"));
        assert!(usage_message(&["now", "--segment"]).contains("needs a value"));
        assert!(usage_message(&["seq", "1", "2"]).contains("hrts seq [N]"));
        assert!(usage_message(&["unique", "x"]).contains("whole number"));
        assert!(usage_message(&["seq", "-"]).contains("whole number"));
    }

    #[test]
    fn help_and_version_win() {
        assert_eq!(p(&["--help"]).unwrap().command, Command::Help);
        assert_eq!(p(&["now", "-h"]).unwrap().command, Command::Help);
        assert_eq!(p(&["help"]).unwrap().command, Command::Help);
        assert_eq!(p(&["-V"]).unwrap().command, Command::Version);
    }

    #[cfg(feature = "testing")]
    #[test]
    fn debug_commands_parse_in_test_builds() {
        assert!(usage_message(&["debug"]).contains("hold-writer"));
        assert!(usage_message(&["debug", "unique-dump", "1", "0", "/d"]).contains("THREADS"));
        assert_eq!(
            p(&["debug", "hold-writer"]).unwrap().command,
            Command::HoldWriter
        );
    }

    #[cfg(not(feature = "testing"))]
    #[test]
    fn debug_commands_do_not_exist_in_production_builds() {
        assert!(usage_message(&["debug", "hold-writer"]).contains("unknown command"));
    }
}
