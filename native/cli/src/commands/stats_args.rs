//! The command lines of `hrts stats` (and, in test builds, `hrts debug
//! stats-record`): each takes the rest of the line. `--segment` there names
//! the statistics segment, not the time segment.

use crate::exit::CliError;
use std::time::Duration;

/// How `hrts stats` prints a snapshot.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Table,
    Json,
    Prometheus,
}

#[derive(Clone, Debug, PartialEq)]
pub enum StatsCommand {
    /// `hrts stats`: one snapshot, or one every `watch` (at most `count` frames).
    Show {
        format: Format,
        watch: Option<Duration>,
        count: Option<u64>,
    },
    /// `hrts stats unlink`.
    Unlink,
    /// `hrts stats serve --listen ADDR`.
    Serve { listen: String },
    /// Test builds only: `hrts debug stats-record ...`.
    #[cfg(feature = "testing")]
    Record(RecordSpec),
    /// `--help` of one of these commands.
    Help(&'static str),
}

// Gauge values are parsed never NaN: equality is total.
impl Eq for StatsCommand {}

/// What `hrts debug stats-record` records, `repeat` times over.
#[cfg(feature = "testing")]
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RecordSpec {
    pub counters: Vec<(String, i64)>,
    pub gauges: Vec<(String, f64)>,
    pub timers: Vec<(String, u64)>,
    pub repeat: u64,
}

/// Parses `hrts stats REST...`; also returns `--segment NAME` if given.
pub fn parse(rest: &[String]) -> Result<(StatsCommand, Option<String>), CliError> {
    let mut a = Args::new(rest);
    let mut segment = None;
    let mut format = Format::Table;
    let mut watch = None;
    let mut count = None;
    let mut listen = None;
    let mut words = Vec::new();
    while let Some(arg) = a.next() {
        match arg.as_str() {
            "-h" | "--help" => return Ok((StatsCommand::Help(crate::help::STATS_USAGE), segment)),
            "--segment" => segment = Some(a.value("--segment")?),
            "--json" | "--prometheus" => {
                let f = if arg == "--json" {
                    Format::Json
                } else {
                    Format::Prometheus
                };
                if format != Format::Table && format != f {
                    return Err(CliError::usage("give --json or --prometheus, not both"));
                }
                format = f;
            }
            "--watch" => {
                let secs = match a.optional_value() {
                    None => 1.0,
                    Some(v) => v
                        .parse::<f64>()
                        .ok()
                        .filter(|s| *s > 0.0 && *s <= 86_400.0)
                        .ok_or_else(|| {
                            CliError::usage(format!(
                                "--watch SECONDS must be a positive number up to 86400, not {v:?}"
                            ))
                        })?,
                };
                watch = Some(Duration::from_secs_f64(secs));
            }
            "--count" => {
                let v = a.value("--count")?;
                count = Some(v.parse::<u64>().ok().filter(|n| *n > 0).ok_or_else(|| {
                    CliError::usage(format!(
                        "--count must be a positive whole number, not {v:?}"
                    ))
                })?);
            }
            "--listen" => listen = Some(a.value("--listen")?),
            f if f.starts_with('-') && f.len() > 1 => {
                return Err(CliError::usage(format!(
                    "unknown option {f} for `hrts stats`"
                )))
            }
            _ => words.push(arg),
        }
    }
    if let Some(name) = &segment {
        if name.is_empty() {
            return Err(CliError::usage("--segment needs a non-empty name"));
        }
    }
    let show_options = format != Format::Table || watch.is_some() || count.is_some();
    let cmd = match words.as_slice() {
        [] => {
            if listen.is_some() {
                return Err(CliError::usage("--listen is an option of `hrts stats serve`"));
            }
            if count.is_some() && watch.is_none() {
                return Err(CliError::usage("--count goes with --watch"));
            }
            StatsCommand::Show {
                format,
                watch,
                count,
            }
        }
        [w] if w == "unlink" && listen.is_none() && !show_options => StatsCommand::Unlink,
        [w] if w == "serve" && !show_options => match listen {
            Some(listen) if !listen.is_empty() => StatsCommand::Serve { listen },
            _ => {
                return Err(CliError::usage(
                    "`hrts stats serve` needs --listen HOST:PORT, e.g. 127.0.0.1:9464",
                ))
            }
        },
        [w] if w == "unlink" || w == "serve" => {
            return Err(CliError::usage(format!(
                "`hrts stats {w}` takes {}",
                if w == "serve" {
                    "--listen HOST:PORT and --segment NAME only"
                } else {
                    "--segment NAME only"
                }
            )))
        }
        [w, ..] => {
            return Err(CliError::usage(format!(
                "unknown stats command {w:?}: use `hrts stats`, `hrts stats serve` or `hrts stats unlink`"
            )))
        }
    };
    Ok((cmd, segment))
}

/// Parses `hrts debug stats-record REST...`; also returns `--segment NAME`.
#[cfg(feature = "testing")]
pub fn parse_record(rest: &[String]) -> Result<(StatsCommand, Option<String>), CliError> {
    let mut a = Args::new(rest);
    let mut segment = None;
    let mut spec = RecordSpec {
        repeat: 1,
        ..RecordSpec::default()
    };
    while let Some(arg) = a.next() {
        match arg.as_str() {
            "-h" | "--help" => {
                return Ok((StatsCommand::Help(crate::help::STATS_RECORD_USAGE), segment))
            }
            "--segment" => segment = Some(a.value("--segment")?),
            "--counter" => {
                for (n, v) in pairs(&a.value("--counter")?, "--counter")? {
                    let d = v.parse::<i64>().map_err(|_| {
                        CliError::usage(format!("--counter {n}: DELTA must be a whole number, not {v:?}"))
                    })?;
                    spec.counters.push((n, d));
                }
            }
            "--gauge" => {
                for (n, v) in pairs(&a.value("--gauge")?, "--gauge")? {
                    let x = v.parse::<f64>().ok().filter(|x| !x.is_nan()).ok_or_else(|| {
                        CliError::usage(format!("--gauge {n}: VALUE must be a number, not {v:?}"))
                    })?;
                    spec.gauges.push((n, x));
                }
            }
            "--timer" => {
                for (n, v) in pairs(&a.value("--timer")?, "--timer")? {
                    let ns = v.parse::<u64>().map_err(|_| {
                        CliError::usage(format!(
                            "--timer {n}: NS must be a whole number of nanoseconds, not {v:?}"
                        ))
                    })?;
                    spec.timers.push((n, ns));
                }
            }
            "--repeat" => {
                let v = a.value("--repeat")?;
                spec.repeat = v.parse().map_err(|_| {
                    CliError::usage(format!("--repeat must be a whole number, not {v:?}"))
                })?;
            }
            other => {
                return Err(CliError::usage(format!(
                    "`hrts debug stats-record` does not take {other:?} (see `hrts debug stats-record --help`)"
                )))
            }
        }
    }
    Ok((StatsCommand::Record(spec), segment))
}

/// `NAME=VALUE[,NAME=VALUE...]`, each split at its last `=`.
#[cfg(feature = "testing")]
fn pairs(list: &str, option: &str) -> Result<Vec<(String, String)>, CliError> {
    list.split(',')
        .map(|item| match item.rsplit_once('=') {
            Some((n, v)) if !n.is_empty() => Ok((n.to_string(), v.to_string())),
            _ => Err(CliError::usage(format!(
                "{option} takes NAME=VALUE[,NAME=VALUE...], not {item:?}"
            ))),
        })
        .collect()
}

/// The arguments one at a time, with `--x V` and `--x=V` both read as a value.
struct Args<'a> {
    rest: std::slice::Iter<'a, String>,
    inline: Option<String>,
}

impl<'a> Args<'a> {
    fn new(rest: &'a [String]) -> Args<'a> {
        Args {
            rest: rest.iter(),
            inline: None,
        }
    }

    /// The next argument; `--x=V` gives `--x` and keeps V for [`value`](Args::value).
    fn next(&mut self) -> Option<String> {
        let arg = self.rest.next()?;
        match arg.split_once('=') {
            Some((flag, v)) if flag.starts_with("--") => {
                self.inline = Some(v.to_string());
                Some(flag.to_string())
            }
            _ => {
                self.inline = None;
                Some(arg.clone())
            }
        }
    }

    fn value(&mut self, name: &str) -> Result<String, CliError> {
        self.inline
            .take()
            .or_else(|| self.rest.next().cloned())
            .ok_or_else(|| CliError::usage(format!("{name} needs a value")))
    }

    /// A value given inline, or a following argument that is a number.
    fn optional_value(&mut self) -> Option<String> {
        if let Some(v) = self.inline.take() {
            return Some(v);
        }
        let next = self.rest.as_slice().first()?;
        if next.parse::<f64>().is_ok() {
            self.rest.next().cloned()
        } else {
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(args: &[&str]) -> Result<(StatsCommand, Option<String>), CliError> {
        parse(&args.iter().map(|s| s.to_string()).collect::<Vec<_>>())
    }

    fn usage(args: &[&str]) -> String {
        match p(args) {
            Err(CliError::Usage(m)) => m,
            other => panic!("{args:?} should be a usage error, got {other:?}"),
        }
    }

    fn show(format: Format, watch: Option<f64>, count: Option<u64>) -> StatsCommand {
        StatsCommand::Show {
            format,
            watch: watch.map(Duration::from_secs_f64),
            count,
        }
    }

    #[test]
    fn show_options_parse() {
        assert_eq!(p(&[]).unwrap(), (show(Format::Table, None, None), None));
        assert_eq!(
            p(&["--json", "--segment", "/s"]).unwrap(),
            (show(Format::Json, None, None), Some("/s".into()))
        );
        assert_eq!(
            p(&["--prometheus", "--watch"]).unwrap().0,
            show(Format::Prometheus, Some(1.0), None)
        );
        assert_eq!(
            p(&["--watch", "0.5", "--count", "3"]).unwrap().0,
            show(Format::Table, Some(0.5), Some(3))
        );
        assert_eq!(
            p(&["--watch=2", "--json"]).unwrap().0,
            show(Format::Json, Some(2.0), None)
        );
        assert!(usage(&["--json", "--prometheus"]).contains("not both"));
        assert!(usage(&["--watch", "0"]).contains("positive"));
        assert!(usage(&["--count", "2"]).contains("--watch"));
        assert!(usage(&["--watch", "--count", "0"]).contains("positive whole"));
        assert!(usage(&["--bogus"]).contains("unknown option --bogus"));
        assert!(usage(&["--segment"]).contains("needs a value"));
        assert!(usage(&["--segment="]).contains("non-empty"));
        assert!(usage(&["fly"]).contains("unknown stats command"));
        assert!(usage(&["--listen", "x"]).contains("serve"));
    }

    #[test]
    fn serve_and_unlink_parse() {
        assert_eq!(
            p(&["serve", "--listen", "127.0.0.1:0", "--segment=/s"]).unwrap(),
            (
                StatsCommand::Serve {
                    listen: "127.0.0.1:0".into()
                },
                Some("/s".into())
            )
        );
        assert_eq!(p(&["unlink"]).unwrap().0, StatsCommand::Unlink);
        assert!(usage(&["serve"]).contains("--listen"));
        assert!(usage(&["serve", "--listen", "x", "--json"]).contains("only"));
        assert!(usage(&["unlink", "--watch"]).contains("--segment NAME only"));
        assert!(usage(&["unlink", "now"]).contains("unknown stats command"));
        assert!(matches!(
            p(&["serve", "--help"]).unwrap().0,
            StatsCommand::Help(_)
        ));
    }

    #[cfg(feature = "testing")]
    #[test]
    fn record_options_parse() {
        let r =
            |args: &[&str]| parse_record(&args.iter().map(|s| s.to_string()).collect::<Vec<_>>());
        let (StatsCommand::Record(spec), seg) = r(&[
            "--counter",
            "a=1,b=-2",
            "--gauge=g=2.5",
            "--timer",
            "t=1500",
            "--repeat",
            "3",
            "--segment",
            "/s",
        ])
        .unwrap() else {
            panic!()
        };
        assert_eq!(seg.as_deref(), Some("/s"));
        assert_eq!(
            spec,
            RecordSpec {
                counters: vec![("a".into(), 1), ("b".into(), -2)],
                gauges: vec![("g".into(), 2.5)],
                timers: vec![("t".into(), 1500)],
                repeat: 3,
            }
        );
        let StatsCommand::Record(spec) = r(&["--counter", "x=y=4"]).unwrap().0 else {
            panic!()
        };
        assert_eq!(spec.counters, vec![("x=y".into(), 4)]);
        assert_eq!(spec.repeat, 1);
        for bad in [
            &["--counter", "a"][..],
            &["--counter", "a=x"],
            &["--timer", "t=-1"],
            &["--gauge", "g=nan"],
            &["extra"],
        ] {
            assert!(matches!(r(bad), Err(CliError::Usage(_))), "{bad:?}");
        }
    }
}
