//! The command lines of `hrts sync`, `hrts trace` and `hrts merge`: each takes
//! the rest of the line, with options of its own.

use crate::exit::CliError;
use hrts_trace::merge::MergeOptions;
use hrts_trace::SyncPhase;
use std::path::PathBuf;
use std::time::Duration;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TraceCommand {
    /// `sync serve`: be the master.
    Serve {
        listen: String,
        idle_exit: Duration,
        max_duration: Duration,
        max_exchanges: u64,
    },
    /// `sync --master ADDR`: one round, printed and optionally recorded.
    Sync {
        master: String,
        out: Option<PathBuf>,
        exchanges: u32,
        phase: Option<SyncPhase>,
        host: Option<String>,
    },
    /// `trace record`: events from stdin into a trace file.
    Record {
        out: PathBuf,
        host: Option<String>,
        label: String,
        master: Option<String>,
        exchanges: u32,
    },
    Info(PathBuf),
    Dump(PathBuf),
    Merge {
        inputs: Vec<PathBuf>,
        out: PathBuf,
        json: Option<PathBuf>,
        opts: MergeFlags,
    },
    /// `--help` of one of these commands.
    Help(&'static str),
}

/// `hrts merge`'s fallbacks (see [`MergeOptions`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MergeFlags {
    pub allow_incomplete: bool,
    pub allow_unsynced: bool,
    pub extrapolate: bool,
    pub accept_disagreement: bool,
    pub max_drift_ppm: f64,
}

// The drift limit is parsed finite and positive, never NaN: equality is total.
impl Eq for MergeFlags {}

impl MergeFlags {
    pub fn options(&self) -> MergeOptions {
        MergeOptions {
            allow_incomplete: self.allow_incomplete,
            allow_unsynced: self.allow_unsynced,
            extrapolate: self.extrapolate,
            accept_disagreement: self.accept_disagreement,
            max_drift_ppm: self.max_drift_ppm,
            ..MergeOptions::default()
        }
    }
}

pub const SYNC_USAGE: &str = "\
Usage: hrts sync serve --listen HOST:PORT [--idle-exit SECS] [--max-seconds SECS]
                       [--max-exchanges N]
       hrts sync --master HOST:PORT [--out FILE] [--exchanges N]
                 [--phase start|periodic|end] [--host NAME]

`sync serve` makes this host the master: it answers ping-pong requests with its
clock until no request came for --idle-exit seconds (default 30), --max-seconds
passed (default 3600) or --max-exchanges were answered, then prints the run as
its gettimeofday measured it (first to last exchange).

`sync --master` runs one round of --exchanges (default 50) with the master,
prints the offset of this host's clock with its error bound (half the fastest
round trip), and with --out appends the round to FILE, a trace file of this
host's clock (created if missing). --phase defaults to start for a new FILE and
end for an existing one: run the same command before and after the work.
";

pub const TRACE_USAGE: &str = "\
Usage: hrts trace record --out FILE [--host NAME] [--label TEXT]
                         [--master HOST:PORT] [--exchanges N]
       hrts trace info FILE
       hrts trace dump FILE

`trace record` records one event per line of stdin, `KIND NAME [ID [PAYLOAD]]`
with KIND one of instant, begin, end, send, recv (blank lines and lines
starting with # are skipped), and prints each event's local ITC stamp. With
--master it syncs at the start and again at end of input.

`trace info` prints a trace file's header and counts as `key: value` lines;
`trace dump` prints its records, one per line:
  e STAMP KIND ID NAME [PAYLOAD]              an event of a process trace
  s PHASE MASTER_HOST EXCHANGES               a sync round
  g STAMP PROC KIND ID LOCAL_STAMP NAME       an event of a merged trace
  p INDEX HOST PID FLAGS FILE                 a process of a merged trace
";

pub const MERGE_USAGE: &str = "\
Usage: hrts merge FILE... --out GLOBAL [--json FILE] [--allow-incomplete]
                  [--allow-unsynced] [--extrapolate] [--accept-disagreement]
                  [--max-drift-ppm N]

Maps the process traces' local stamps onto the master's timeline (offset and
drift fitted per host from the sync rounds) and writes one global trace, plus a
Chrome/Perfetto JSON trace with --json. Prints each host's fit with its error
bound, the run's length, message causality (hrts's merge and the naive one that
takes local stamps as global) and throughput.

Refused unless a flag accepts it (then flagged in the output):
  --allow-incomplete     files whose writer never closed them
  --allow-unsynced       hosts that never synced (local stamps taken as global)
  --extrapolate          events outside a host's sync window
  --accept-disagreement  sync samples that no steady clock explains, or a drift
                         beyond --max-drift-ppm (default 1000)
";

/// Whether `word` names a command parsed here.
pub fn owns(word: &str) -> bool {
    matches!(word, "sync" | "trace" | "merge")
}

/// Parses `hrts WORD REST...`; also returns `--segment NAME` if given.
pub fn parse(word: &str, rest: &[String]) -> Result<(TraceCommand, Option<String>), CliError> {
    let mut o = Opts::split(rest)?;
    let segment = o.take("--segment");
    if o.flag("-h") || o.flag("--help") {
        return Ok((
            TraceCommand::Help(match word {
                "sync" => SYNC_USAGE,
                "trace" => TRACE_USAGE,
                _ => MERGE_USAGE,
            }),
            segment,
        ));
    }
    let cmd = match word {
        "sync" => sync(&mut o)?,
        "trace" => trace(&mut o)?,
        _ => merge(&mut o)?,
    };
    o.finish(word)?;
    Ok((cmd, segment))
}

fn sync(o: &mut Opts) -> Result<TraceCommand, CliError> {
    if o.words.first().map(String::as_str) == Some("serve") {
        o.words.remove(0);
        let listen = o
            .take("--listen")
            .ok_or_else(|| CliError::usage("`hrts sync serve` needs --listen HOST:PORT"))?;
        return Ok(TraceCommand::Serve {
            listen,
            idle_exit: o.seconds("--idle-exit", 30.0)?,
            max_duration: o.seconds("--max-seconds", 3600.0)?,
            max_exchanges: o.number("--max-exchanges", 10_000_000)?,
        });
    }
    let master = o.take("--master").ok_or_else(|| {
        CliError::usage("`hrts sync` needs --master HOST:PORT (or `hrts sync serve --listen ...`)")
    })?;
    let phase = match o.take("--phase") {
        None => None,
        Some(p) => Some(SyncPhase::from_name(&p).ok_or_else(|| {
            CliError::usage(format!("--phase must be start, periodic or end, not {p:?}"))
        })?),
    };
    Ok(TraceCommand::Sync {
        master,
        out: o.take("--out").map(PathBuf::from),
        exchanges: exchanges(o)?,
        phase,
        host: o.take("--host"),
    })
}

fn exchanges(o: &mut Opts) -> Result<u32, CliError> {
    let n = o.number("--exchanges", 50)?;
    u32::try_from(n)
        .ok()
        .filter(|n| (1..=10_000).contains(n))
        .ok_or_else(|| CliError::usage(format!("--exchanges must be 1..10000, not {n}")))
}

fn trace(o: &mut Opts) -> Result<TraceCommand, CliError> {
    let sub = if o.words.is_empty() {
        String::new()
    } else {
        o.words.remove(0)
    };
    let file = |o: &mut Opts, what: &str| -> Result<PathBuf, CliError> {
        match o.words.as_slice() {
            [f] => {
                let f = PathBuf::from(f);
                o.words.clear();
                Ok(f)
            }
            _ => Err(CliError::usage(format!("usage: hrts trace {what} FILE"))),
        }
    };
    match sub.as_str() {
        "record" => Ok(TraceCommand::Record {
            out: o
                .take("--out")
                .map(PathBuf::from)
                .ok_or_else(|| CliError::usage("`hrts trace record` needs --out FILE"))?,
            host: o.take("--host"),
            label: o
                .take("--label")
                .unwrap_or_else(|| "hrts trace record".to_string()),
            master: o.take("--master"),
            exchanges: exchanges(o)?,
        }),
        "info" => Ok(TraceCommand::Info(file(o, "info")?)),
        "dump" => Ok(TraceCommand::Dump(file(o, "dump")?)),
        "" => Err(CliError::usage("usage: hrts trace record|info|dump ...")),
        other => Err(CliError::usage(format!(
            "unknown trace command {other:?}: use record, info or dump"
        ))),
    }
}

fn merge(o: &mut Opts) -> Result<TraceCommand, CliError> {
    let out = o
        .take("--out")
        .map(PathBuf::from)
        .ok_or_else(|| CliError::usage("`hrts merge` needs --out GLOBAL_FILE"))?;
    let max_drift_ppm = match o.take("--max-drift-ppm") {
        None => 1000.0,
        Some(v) => v
            .parse::<f64>()
            .ok()
            .filter(|d| d.is_finite() && *d > 0.0)
            .ok_or_else(|| {
                CliError::usage(format!(
                    "--max-drift-ppm must be a positive number, not {v:?}"
                ))
            })?,
    };
    let opts = MergeFlags {
        allow_incomplete: o.flag("--allow-incomplete"),
        allow_unsynced: o.flag("--allow-unsynced"),
        extrapolate: o.flag("--extrapolate"),
        accept_disagreement: o.flag("--accept-disagreement"),
        max_drift_ppm,
    };
    let inputs: Vec<PathBuf> = o.words.drain(..).map(PathBuf::from).collect();
    if inputs.is_empty() {
        return Err(CliError::usage(
            "`hrts merge` needs the process trace files to merge",
        ));
    }
    Ok(TraceCommand::Merge {
        inputs,
        out,
        json: o.take("--json").map(PathBuf::from),
        opts,
    })
}

/// Options that take a value (`--x V` or `--x=V`); every other `-...` is a flag.
const VALUED: &[&str] = &[
    "--segment",
    "--listen",
    "--idle-exit",
    "--max-seconds",
    "--max-exchanges",
    "--master",
    "--out",
    "--exchanges",
    "--phase",
    "--host",
    "--label",
    "--json",
    "--max-drift-ppm",
];

/// The words and options of one command line, consumed as they are parsed;
/// whatever is left over is a usage error.
struct Opts {
    words: Vec<String>,
    values: Vec<(String, String)>,
    flags: Vec<String>,
}

impl Opts {
    fn split(args: &[String]) -> Result<Opts, CliError> {
        let mut o = Opts {
            words: Vec::new(),
            values: Vec::new(),
            flags: Vec::new(),
        };
        let mut it = args.iter();
        while let Some(a) = it.next() {
            if a == "--" {
                o.words.extend(it.by_ref().cloned());
                break;
            }
            if !a.starts_with('-') || a.len() == 1 {
                o.words.push(a.clone());
                continue;
            }
            let (name, inline) = match a.split_once('=') {
                Some((n, v)) if n.starts_with("--") => (n.to_string(), Some(v.to_string())),
                _ => (a.clone(), None),
            };
            if VALUED.contains(&name.as_str()) {
                let v = match inline {
                    Some(v) => v,
                    None => it
                        .next()
                        .cloned()
                        .ok_or_else(|| CliError::usage(format!("{name} needs a value")))?,
                };
                if v.is_empty() {
                    return Err(CliError::usage(format!("{name} needs a non-empty value")));
                }
                o.values.push((name, v));
            } else {
                o.flags.push(name);
            }
        }
        Ok(o)
    }

    fn take(&mut self, name: &str) -> Option<String> {
        let i = self.values.iter().rposition(|(n, _)| n == name)?;
        let v = self.values.remove(i).1;
        self.values.retain(|(n, _)| n != name);
        Some(v)
    }

    fn flag(&mut self, name: &str) -> bool {
        let had = self.flags.iter().any(|f| f == name);
        self.flags.retain(|f| f != name);
        had
    }

    fn number(&mut self, name: &str, default: u64) -> Result<u64, CliError> {
        match self.take(name) {
            None => Ok(default),
            Some(v) => v
                .parse()
                .map_err(|_| CliError::usage(format!("{name} must be a whole number, not {v:?}"))),
        }
    }

    fn seconds(&mut self, name: &str, default: f64) -> Result<Duration, CliError> {
        let v = match self.take(name) {
            None => return Ok(Duration::from_secs_f64(default)),
            Some(v) => v,
        };
        v.parse::<f64>()
            .ok()
            .filter(|s| *s > 0.0)
            .and_then(|s| Duration::try_from_secs_f64(s).ok())
            .ok_or_else(|| {
                CliError::usage(format!(
                    "{name} must be a positive number of seconds, not {v:?}"
                ))
            })
    }

    /// Anything not consumed is a mistake.
    fn finish(&self, word: &str) -> Result<(), CliError> {
        if let Some((n, _)) = self.values.first() {
            return Err(CliError::usage(format!(
                "`hrts {word}` does not take {n} here"
            )));
        }
        if let Some(f) = self.flags.first() {
            return Err(CliError::usage(format!(
                "unknown option {f} for `hrts {word}`"
            )));
        }
        if let Some(w) = self.words.first() {
            return Err(CliError::usage(format!(
                "`hrts {word}` does not take the argument {w:?}"
            )));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(args: &[&str]) -> Result<(TraceCommand, Option<String>), CliError> {
        let rest: Vec<String> = args[1..].iter().map(|s| s.to_string()).collect();
        parse(args[0], &rest)
    }

    fn usage(args: &[&str]) -> String {
        match p(args) {
            Err(CliError::Usage(m)) => m,
            other => panic!("{args:?} should be a usage error, got {other:?}"),
        }
    }

    #[test]
    fn sync_commands_parse() {
        let (c, seg) = p(&[
            "sync",
            "serve",
            "--listen",
            "0.0.0.0:7700",
            "--idle-exit=2.5",
            "--segment",
            "/s",
        ])
        .unwrap();
        assert_eq!(seg.as_deref(), Some("/s"));
        assert_eq!(
            c,
            TraceCommand::Serve {
                listen: "0.0.0.0:7700".into(),
                idle_exit: Duration::from_millis(2500),
                max_duration: Duration::from_secs(3600),
                max_exchanges: 10_000_000
            }
        );
        let (c, _) = p(&[
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
        .unwrap();
        assert_eq!(
            c,
            TraceCommand::Sync {
                master: "m:1".into(),
                out: Some("f".into()),
                exchanges: 20,
                phase: Some(SyncPhase::End),
                host: None
            }
        );
        assert!(usage(&["sync"]).contains("--master"));
        assert!(usage(&["sync", "serve"]).contains("--listen"));
        assert!(usage(&["sync", "--master", "m:1", "--phase", "middle"])
            .contains("start, periodic or end"));
        assert!(usage(&["sync", "--master", "m:1", "--exchanges", "0"]).contains("1..10000"));
        assert!(usage(&["sync", "--master", "m:1", "--bogus"]).contains("unknown option --bogus"));
        assert!(usage(&["sync", "--master", "m:1", "extra"]).contains("\"extra\""));
        assert!(
            usage(&["sync", "serve", "--listen", "x", "--idle-exit", "0"]).contains("positive")
        );
        assert!(usage(&["sync", "--master"]).contains("needs a value"));
    }

    #[test]
    fn trace_and_merge_commands_parse() {
        let (c, _) = p(&["trace", "record", "--out", "a.htr", "--master=m:1"]).unwrap();
        assert!(matches!(
            c,
            TraceCommand::Record {
                master: Some(_),
                exchanges: 50,
                ..
            }
        ));
        assert_eq!(
            p(&["trace", "info", "x"]).unwrap().0,
            TraceCommand::Info("x".into())
        );
        assert!(usage(&["trace", "dump"]).contains("hrts trace dump FILE"));
        assert!(usage(&["trace", "record"]).contains("--out"));
        assert!(usage(&["trace", "fly"]).contains("record, info or dump"));
        let (c, _) = p(&[
            "merge",
            "a",
            "b",
            "--out",
            "g",
            "--json",
            "g.json",
            "--extrapolate",
        ])
        .unwrap();
        let TraceCommand::Merge {
            inputs, json, opts, ..
        } = c
        else {
            panic!()
        };
        assert_eq!(inputs.len(), 2);
        assert_eq!(json, Some("g.json".into()));
        assert!(opts.extrapolate && !opts.allow_unsynced);
        assert_eq!(opts.options().drop_fraction, 0.1);
        assert!(usage(&["merge", "--out", "g"]).contains("process trace files"));
        assert!(usage(&["merge", "a"]).contains("--out"));
        assert!(usage(&["merge", "a", "--out", "g", "--max-drift-ppm", "-1"]).contains("positive"));
        assert!(matches!(
            p(&["merge", "--help"]).unwrap().0,
            TraceCommand::Help(_)
        ));
        assert!(owns("merge") && !owns("now"));
    }
}
