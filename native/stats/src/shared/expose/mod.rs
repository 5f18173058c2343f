//! A [`Snapshot`](super::Snapshot) as its readers see it, one format a file: `json` (the
//! handystats dump shape, for programs), `prometheus` (the text exposition
//! format 0.0.4 or OpenMetrics 1.0, for scrapers) and `table` (for people).
//! The formats share nothing but the snapshot they render, so each file can
//! be read, and changed, without the others.

mod json;
mod prometheus;
mod table;

pub use prometheus::PrometheusOptions;

#[cfg(test)]
mod tests {
    use crate::shared::aggregate::tests::{counter, gauge, process, snapshot, timer};
    use crate::shared::snapshot::{ProcessState, Snapshot};
    use serde_json::json;

    /// Two live processes and an exited one with a counter, a gauge and a timer.
    pub(super) fn sample() -> Snapshot {
        let mut exited = process(300, vec![("requests", counter(2, 900, &[0.0, 1.0, 2.0]))]);
        exited.state = ProcessState::Exited;
        snapshot(vec![
            process(
                100,
                vec![
                    ("requests", counter(5, 1000, &[0.0, 5.0])),
                    ("queue size", gauge(3.5, 1000, &[1.0, 3.5])),
                    ("latency", timer(1500, 1000, &[1500.0, 2500.0])),
                ],
            ),
            process(
                200,
                vec![
                    ("requests", counter(7, 1100, &[0.0, 7.0])),
                    ("queue size", gauge(2.0, 1200, &[2.0])),
                    ("latency", timer(3_000_000, 1100, &[3_000_000.0])),
                ],
            ),
            exited,
        ])
    }

    /// The Prometheus text read back by a parser other than ours.
    pub(super) fn scrape(text: &str) -> prometheus_parse::Scrape {
        prometheus_parse::Scrape::parse(text.lines().map(|l| Ok(l.to_string()))).unwrap()
    }

    #[test]
    fn damaged_parts_are_named_in_every_view() {
        use prometheus_parse::Value as V;
        let mut snap = sample();
        assert!(!snap.to_table().contains("DAMAGED"));
        assert_eq!(
            snap.to_json_value()["damaged"],
            json!({"process_slots": [], "cells": []})
        );
        snap.damaged_slots = vec![4];
        snap.damaged_cells = vec![17, 230];
        let s = scrape(&snap.to_prometheus());
        let damaged = |part: &str| {
            s.samples
                .iter()
                .find(|x| x.metric == "hrts_stats_damaged" && x.labels.get("part") == Some(part))
                .map(|x| x.value.clone())
        };
        assert_eq!(damaged("process_slot"), Some(V::Gauge(1.0)));
        assert_eq!(damaged("cell"), Some(V::Gauge(2.0)));
        assert_eq!(
            snap.to_json_value()["damaged"],
            json!({"process_slots": [4], "cells": [17, 230]})
        );
        assert_eq!(snap.to_json(), snap.to_json_value().to_string());
        let table = snap.to_table();
        assert!(
            table.contains("DAMAGED, left out: 1 process slots [4] and 2 metric cells [17, 230]"),
            "{table}"
        );
    }
}
