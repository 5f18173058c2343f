//! What `hrts trace` says about a run's clock: its resolution (the maximum
//! number of events on one clock tick, counted as Intel Trace Collector
//! counts it; 0: no two events shared a tick) and its error bound.

use hrts_trace::format::BoundRecord;
use hrts_trace::WriterSummary;

/// The `trace info` lines for a file's bound records: how many, and the
/// widest bound a merge would take (the last record's status and source).
pub fn bound_lines(bounds: &[BoundRecord]) -> String {
    let Some(last) = bounds.last() else {
        return "bound records: 0\n".to_string();
    };
    let synchronized = bounds
        .iter()
        .all(|b| b.status == hrts_core::BoundStatus::Synchronized);
    format!(
        "bound records: {}\nbound status: {}{}\nbound source: {}\nbound ns: {}\n\
         bound widest ns: {}\n",
        bounds.len(),
        last.status.name(),
        if synchronized {
            ""
        } else {
            " (not synchronized throughout)"
        },
        last.source.name(),
        bounds.iter().map(|b| b.bound_ns).max().unwrap_or(0),
        bounds.iter().map(|b| b.widest_ns).max().unwrap_or(0)
    )
}

/// The `trace info` line for a header's count (`None`: the file's writer never
/// closed it, or wrote it before the header had the field).
pub fn info_line(max_events_per_tick: Option<u64>) -> String {
    match max_events_per_tick {
        Some(n) => format!("max events per tick: {n}\n"),
        None => "max events per tick: unknown\n".to_string(),
    }
}

/// The line `trace record` prints (to stderr) when the run ends.
pub fn end_of_run(summary: &WriterSummary) -> String {
    let n = summary.max_events_per_tick;
    let meaning = if n == 0 {
        "every event had a clock tick of its own".to_string()
    } else {
        format!(
            "some tick held {} events: the clock's resolution was too low to tell them apart",
            n.saturating_add(1)
        )
    };
    format!(
        "hrts: {} events; max events per tick: {n} ({meaning})\n",
        summary.events
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_count_as_itc_does() {
        assert_eq!(info_line(Some(0)), "max events per tick: 0\n");
        assert_eq!(info_line(None), "max events per tick: unknown\n");
        let s = |n| WriterSummary {
            events: 9,
            sync_rounds: 0,
            max_events_per_tick: n,
        };
        assert!(end_of_run(&s(0)).contains("max events per tick: 0 (every event"));
        assert!(end_of_run(&s(3)).contains("max events per tick: 3 (some tick held 4 events"));
    }

    #[test]
    fn bound_lines_give_the_widest_and_say_when_a_record_was_not_synchronized() {
        use hrts_core::{BoundSource, BoundStatus};
        assert_eq!(bound_lines(&[]), "bound records: 0\n");
        let b = |status, widest| BoundRecord {
            at_ns: 1,
            status,
            source: BoundSource::Test,
            bound_ns: 20_000,
            half_width_ns: 20_500,
            widest_ns: widest,
        };
        let sync = BoundStatus::Synchronized;
        assert_eq!(
            bound_lines(&[b(sync, 170_000), b(sync, 171_000)]),
            "bound records: 2\nbound status: synchronized\nbound source: test\n\
             bound ns: 20000\nbound widest ns: 171000\n"
        );
        let mixed = bound_lines(&[b(BoundStatus::FreeRunning, 0), b(sync, 170_000)]);
        assert!(mixed.contains("bound status: synchronized (not synchronized throughout)\n"));
    }
}
