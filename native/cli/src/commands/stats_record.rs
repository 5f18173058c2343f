//! `hrts debug stats-record` (test builds only): a Rust process that publishes
//! statistics for the multi-process tests. It starts the global statistics
//! instance (which publishes to the statistics segment), records what the
//! command line says `--repeat` times, prints the instance's own JSON dump as
//! one line, then stays alive until its stdin is closed (or it is killed), so
//! that readers see it live.

use super::stats_args::RecordSpec;
use crate::exit::CliError;
use hrts_stats::shared::ENV_SEGMENT;

pub fn run(spec: &RecordSpec, segment: Option<&str>) -> Result<(), CliError> {
    if let Some(name) = segment {
        // The global instance takes its segment from the environment; no
        // other thread runs yet.
        std::env::set_var(ENV_SEGMENT, name);
    }
    let stats = hrts_stats::global();
    stats.start()?;
    let counters = spec
        .counters
        .iter()
        .map(|(n, d)| Ok((stats.counter(n)?, *d)))
        .collect::<hrts_core::Result<Vec<_>>>()?;
    let gauges = spec
        .gauges
        .iter()
        .map(|(n, v)| Ok((stats.gauge(n)?, *v)))
        .collect::<hrts_core::Result<Vec<_>>>()?;
    let timers = spec
        .timers
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
    super::print(&format!("{}\n", stats.json_dump()))?;
    // Until stdin closes: a test ends the writer by closing the pipe.
    std::io::copy(&mut std::io::stdin().lock(), &mut std::io::sink())?;
    stats.stop();
    Ok(())
}
