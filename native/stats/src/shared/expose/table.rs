//! A snapshot as a fixed-width table, for people (`hrts stats`): numbers and
//! durations in units one reads at a glance, control characters escaped so
//! that no name breaks a line.

use crate::dump::Metric;
use crate::incremental::Statistics;
use crate::shared::snapshot::{ProcessState, Snapshot};
use std::fmt::Write as _;

impl Snapshot {
    /// A fixed-width table: every metric of every process, then every name
    /// aggregated over all processes. Durations are in human units; RATE/S is
    /// [`Metric::rate`] (a counter's net change, a gauge's sets, a timer's
    /// measurements per second over the moving interval).
    pub fn to_table(&self) -> String {
        let live = self
            .processes
            .iter()
            .filter(|p| p.state == ProcessState::Live)
            .count();
        let mut out = format!(
            "statistics segment {}: {} processes ({live} live, {} exited)\n",
            self.segment,
            self.processes.len(),
            self.processes.len() - live
        );
        if self.has_damage() {
            let _ = writeln!(
                out,
                "DAMAGED, left out: {} process slots {:?} and {} metric cells {:?} do not match \
                 their check words (a process wrote over the segment; `hrts stats unlink` \
                 removes it once its programs have stopped)",
                self.damaged_slots.len(),
                self.damaged_slots,
                self.damaged_cells.len(),
                self.damaged_cells
            );
        }
        if self.processes.is_empty() {
            out.push_str("no process has published statistics\n");
            return out;
        }
        let mut rows = vec![[
            "PID", "INSTANCE", "PROGRAM", "STATE", "KIND", "NAME", "VALUE", "COUNT", "MEAN", "MIN",
            "MAX", "P99", "RATE/S",
        ]
        .map(String::from)
        .to_vec()];
        for p in &self.processes {
            let who = [
                p.pid.to_string(),
                p.instance.to_string(),
                printable(&p.program),
                p.state.name().to_string(),
            ];
            if p.dump.metrics.is_empty() {
                let mut row = who.to_vec();
                row.extend(["-", "(no metrics)"].map(String::from));
                row.extend(std::iter::repeat_n("-".to_string(), 7));
                rows.push(row);
            }
            for (name, m) in &p.dump.metrics {
                let mut row = who.to_vec();
                row.extend(metric_cells(name, m));
                rows.push(row);
            }
        }
        out.push('\n');
        layout(&rows, &[2, 3, 4, 5], &mut out);
        out.push_str("\nall processes (aggregated by name)\n");
        let mut rows = vec![[
            "KIND", "NAME", "VALUE", "COUNT", "MEAN", "MIN", "MAX", "P99", "RATE/S",
        ]
        .map(String::from)
        .to_vec()];
        for (name, m) in &self.aggregate().metrics {
            rows.push(metric_cells(name, m));
        }
        layout(&rows, &[0, 1], &mut out);
        out
    }
}

/// KIND NAME VALUE COUNT MEAN MIN MAX P99 RATE/S of one metric.
fn metric_cells(name: &str, m: &Metric) -> Vec<String> {
    let (value, stats, unit): (String, &Statistics, fn(f64) -> String) = match m {
        Metric::Counter(c) => (c.value.to_string(), &c.values, number),
        Metric::Gauge(g) => (number(g.value), &g.values, number),
        Metric::Timer(t) => (duration(t.value as f64), &t.values, duration),
    };
    let opt = |x: Option<f64>| x.map_or_else(|| "-".to_string(), unit);
    vec![
        m.type_name().to_string(),
        printable(name),
        value,
        stats.count.to_string(),
        opt(stats.mean),
        opt(stats.min),
        opt(stats.max),
        opt(stats.quantiles[2]),
        number(m.rate()),
    ]
}

/// Control characters shown as escapes, so that a name cannot break a line.
fn printable(s: &str) -> String {
    s.chars()
        .flat_map(|c| {
            let escaped: Vec<char> = if c.is_control() {
                c.escape_default().collect()
            } else {
                vec![c]
            };
            escaped
        })
        .collect()
}

/// Rows padded to their columns' widths: the columns in `left` left-aligned,
/// the others (numbers) right-aligned.
fn layout(rows: &[Vec<String>], left: &[usize], out: &mut String) {
    let columns = rows.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..columns)
        .map(|i| {
            rows.iter()
                .filter_map(|r| r.get(i))
                .map(|c| c.chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    for row in rows {
        let mut line = String::new();
        for (i, cell) in row.iter().enumerate() {
            if i > 0 {
                line.push_str("  ");
            }
            let pad = " ".repeat(widths[i] - cell.chars().count());
            if left.contains(&i) {
                line.push_str(cell);
                line.push_str(&pad);
            } else {
                line.push_str(&pad);
                line.push_str(cell);
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
}

/// A plain number: whole numbers as integers, others to three decimals or
/// with an exponent when very large or small.
fn number(x: f64) -> String {
    if !x.is_finite() {
        return x.to_string();
    }
    let a = x.abs();
    if x.fract() == 0.0 && a < 1e15 {
        format!("{}", x as i64)
    } else if !(1e-3..1e15).contains(&a) {
        format!("{x:.3e}")
    } else {
        let s = format!("{x:.3}");
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    }
}

/// Nanoseconds in the largest unit that keeps the number at 1 or more, to
/// three significant digits: `950 ns`, `1.52 µs`, `12.3 ms`, `4.00 s`.
fn duration(ns: f64) -> String {
    let (v, unit) = match ns.abs() {
        a if a < 1e3 => (ns, "ns"),
        a if a < 1e6 => (ns / 1e3, "µs"),
        a if a < 1e9 => (ns / 1e6, "ms"),
        _ => (ns / 1e9, "s"),
    };
    if unit == "ns" && v.fract() == 0.0 {
        return format!("{v} ns");
    }
    let digits = match v.abs() {
        a if a >= 100.0 => 0,
        a if a >= 10.0 => 1,
        _ => 2,
    };
    format!("{v:.digits$} {unit}")
}

#[cfg(test)]
mod tests {
    use super::super::tests::sample;
    use super::*;
    use crate::shared::aggregate::tests::{process, snapshot};

    #[test]
    fn the_table_lists_every_process_and_the_aggregate() {
        let table = sample().to_table();
        let lines: Vec<&str> = table.lines().collect();
        assert_eq!(
            lines[0],
            "statistics segment /test: 3 processes (2 live, 1 exited)"
        );
        let header = lines[2];
        let name_col = header.find("NAME").unwrap();
        let rows: Vec<&str> = lines[3..]
            .iter()
            .take_while(|l| !l.is_empty())
            .copied()
            .collect();
        assert_eq!(rows.len(), 7, "{table}");
        for r in &rows {
            let name = &r[r
                .char_indices()
                .nth(header[..name_col].chars().count())
                .unwrap()
                .0..];
            assert!(
                ["latency", "queue size", "requests"]
                    .iter()
                    .any(|n| name.starts_with(n)),
                "NAME column misaligned in {r:?}\n{table}"
            );
        }
        let row = |pid: &str, name: &str| -> Vec<String> {
            rows.iter()
                .find(|r| r.split_whitespace().next() == Some(pid) && r.contains(name))
                .unwrap()
                .split("  ")
                .map(str::trim)
                .filter(|c| !c.is_empty())
                .map(String::from)
                .collect()
        };
        assert_eq!(
            row("100", "latency"),
            [
                "100", "1", "p100", "live", "timer", "latency", "1.50 µs", "2", "2.00 µs",
                "1.50 µs", "2.50 µs", "2.50 µs", "2"
            ]
        );
        assert_eq!(row("300", "requests")[3], "exited");
        assert_eq!(row("200", "queue size")[6], "2");
        let agg_at = lines
            .iter()
            .position(|l| *l == "all processes (aggregated by name)")
            .unwrap();
        let agg: Vec<&str> = lines[agg_at + 2..].to_vec();
        assert_eq!(agg.len(), 3);
        let requests: Vec<&str> = agg[2].split_whitespace().collect();
        assert_eq!(&requests[..4], ["counter", "requests", "14", "7"]);
        assert_eq!(requests[8], "7", "the processes' rates add: 2 + 2 + 3");
        assert_eq!(
            requests[7], "-",
            "quantiles of several processes are unknown"
        );
        let idle = snapshot(vec![process(42, vec![])]).to_table();
        let row: Vec<&str> = idle.lines().nth(3).unwrap().split_whitespace().collect();
        assert_eq!(
            row[..7],
            ["42", "1", "p42", "live", "-", "(no", "metrics)"],
            "{idle}"
        );
        let empty = snapshot(vec![]).to_table();
        assert_eq!(
            empty,
            "statistics segment /test: 0 processes (0 live, 0 exited)\n\
             no process has published statistics\n"
        );
    }

    #[test]
    fn numbers_and_durations_read_well() {
        assert_eq!(duration(950.0), "950 ns");
        assert_eq!(duration(2.25), "2.25 ns");
        assert_eq!(duration(12.5), "12.5 ns");
        assert_eq!(duration(1520.0), "1.52 µs");
        assert_eq!(duration(12_345_678.0), "12.3 ms");
        assert_eq!(duration(123_456_789.0), "123 ms");
        assert_eq!(duration(4e9), "4.00 s");
        assert_eq!(number(42.0), "42");
        assert_eq!(number(-3.5), "-3.5");
        assert_eq!(number(2.0 / 3.0), "0.667");
        assert_eq!(number(1e20), "1.000e20");
        assert_eq!(number(0.0001), "1.000e-4");
        assert_eq!(printable("a\nb"), "a\\nb");
    }
}
