//! What `hrts trace` says about a run's clock resolution: the maximum number
//! of events on one clock tick, counted as Intel Trace Collector counts it
//! (0: no two events shared a tick).

use hrts_trace::WriterSummary;

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
}
