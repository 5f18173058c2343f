//! `hrts debug stats-record` (test builds only): a Rust process that publishes
//! statistics for the multi-process tests. It starts the global statistics
//! instance (which publishes to the statistics segment), records what the
//! command line says `--repeat` times, prints the instance's own JSON dump as
//! one line, then stays alive until its stdin is closed (or it is killed), so
//! that readers see it live.

use crate::commands::print;
use crate::exit::CliError;
use hrts_stats::shared::ENV_SEGMENT;

/// Test builds only: publish statistics from a Rust process.
///
/// Starts the global statistics instance (publishing to the statistics segment --segment,
/// default $HRTS_STATS_SEGMENT), then N times (--repeat, default 1) adds each DELTA to its
/// counter, sets each gauge to VALUE and records NS nanoseconds in each timer, in that order.
/// Prints the instance's JSON dump (`json_dump()`) as one line, then waits until stdin is
/// closed (or the process is killed). Options may repeat; a NAME is split from its value at
/// its last `=` and cannot contain a comma.
#[derive(clap::Args, Debug)]
pub struct RecordArgs {
    /// Counters to add to
    #[arg(long = "counter", value_name = "NAME=DELTA[,...]", value_parser = pairs::<i64>)]
    counter: Vec<Pairs<i64>>,
    /// Gauges to set
    #[arg(long = "gauge", value_name = "NAME=VALUE[,...]", value_parser = gauges)]
    gauge: Vec<Pairs<f64>>,
    /// Timers to record in
    #[arg(long = "timer", value_name = "NAME=NS[,...]", value_parser = pairs::<u64>)]
    timer: Vec<Pairs<u64>>,
    /// How many times to record all of them
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = crate::commands::units::whole)]
    pub repeat: u64,
}

/// `NAME=VALUE,...` of one option.
type Pairs<T> = Vec<(String, T)>;

/// `NAME=VALUE[,NAME=VALUE...]`, each split at its last `=`.
fn pairs<T: std::str::FromStr>(list: &str) -> Result<Pairs<T>, String> {
    list.split(',')
        .map(|item| match item.rsplit_once('=') {
            Some((n, v)) if !n.is_empty() => v
                .parse::<T>()
                .map(|v| (n.to_string(), v))
                .map_err(|_| format!("{n}: {v:?} is not a number of the right kind")),
            _ => Err(format!("write NAME=VALUE[,NAME=VALUE...], not {item:?}")),
        })
        .collect()
}

fn gauges(list: &str) -> Result<Pairs<f64>, String> {
    let p = pairs::<f64>(list)?;
    match p.iter().find(|(_, v)| v.is_nan()) {
        Some((n, _)) => Err(format!("{n}: a gauge value must be a number, not NaN")),
        None => Ok(p),
    }
}

impl RecordArgs {
    pub fn counters(&self) -> Pairs<i64> {
        self.counter.concat()
    }

    pub fn gauges(&self) -> Pairs<f64> {
        self.gauge.concat()
    }

    pub fn timers(&self) -> Pairs<u64> {
        self.timer.concat()
    }
}

pub fn run(spec: &RecordArgs, segment: Option<&str>) -> Result<(), CliError> {
    if let Some(name) = segment {
        // The global instance takes its segment from the environment; no
        // other thread runs yet.
        std::env::set_var(ENV_SEGMENT, name);
    }
    let stats = hrts_stats::global();
    stats.start()?;
    let counters = spec
        .counters()
        .iter()
        .map(|(n, d)| Ok((stats.counter(n)?, *d)))
        .collect::<hrts_core::Result<Vec<_>>>()?;
    let gauges = spec
        .gauges()
        .iter()
        .map(|(n, v)| Ok((stats.gauge(n)?, *v)))
        .collect::<hrts_core::Result<Vec<_>>>()?;
    let timers = spec
        .timers()
        .iter()
        .map(|(n, ns)| Ok((stats.timer(n)?, *ns)))
        .collect::<hrts_core::Result<Vec<_>>>()?;
    for _ in 0..spec.repeat {
        for (c, d) in &counters {
            c.add(*d);
        }
        for (g, v) in &gauges {
            g.set(*v)?;
        }
        for (t, ns) in &timers {
            t.record(*ns);
        }
    }
    print(&format!("{}\n", stats.json_dump()))?;
    // Until stdin closes: a test ends the writer by closing the pipe.
    std::io::copy(&mut std::io::stdin().lock(), &mut std::io::sink())?;
    stats.stop();
    Ok(())
}
