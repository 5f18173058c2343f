//! `hrts track [SECONDS] [--csv FILE] [--svg FILE]`: watches the segment follow
//! the calendar. It stamps every millisecond (so ties happen even if nothing else
//! stamps) and prints one line per tie (frozen mode: one per second): time,
//! offset from `CLOCK_REALTIME` now (narrowest bracket), the offset the tie
//! measured, and the slope's correction. Optionally writes the rows as CSV and
//! the offset over time as an SVG plot.

use crate::args::TrackOptions;
use crate::exit::CliError;
use hrts_core::{Mode, SharedBase, TrackingState};
use std::fmt::Write as _;
use std::io::Write as _;
use std::time::{Duration, Instant};

/// One printed line.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Row {
    pub elapsed_s: f64,
    pub epoch_ns: u64,
    pub offset_ns: i64,
    pub state: TrackingState,
    pub generation: u64,
}

impl Row {
    fn line(&self) -> String {
        let t = &self.state;
        let what = match t.mode {
            Mode::Tracking => format!("tie {:>5}", t.ties),
            Mode::Frozen => "frozen   ".to_string(),
        };
        format!(
            "{:9.3} s  {what}  offset {:+} ns  tie offset {:+} ns  correction {:+.3} ppm \
             (frequency {:+.3}, slew {:+.3})  pending {:+} ns  generation {}",
            self.elapsed_s,
            self.offset_ns,
            t.last_offset_ns,
            t.correction_ppm(),
            t.frequency_ppb as f64 / 1000.0,
            t.slew_ppb as f64 / 1000.0,
            t.pending_ns,
            self.generation
        )
    }
}

pub const CSV_HEADER: &str = "elapsed_s,epoch_ns,offset_ns,tie_offset_ns,pending_ns,frequency_ppm,slew_ppm,correction_ppm,ties,steps,generation";

fn csv_row(r: &Row) -> String {
    let t = &r.state;
    format!(
        "{:.6},{},{},{},{},{:.3},{:.3},{:.3},{},{},{}",
        r.elapsed_s,
        r.epoch_ns,
        r.offset_ns,
        t.last_offset_ns,
        t.pending_ns,
        t.frequency_ppb as f64 / 1000.0,
        t.slew_ppb as f64 / 1000.0,
        t.correction_ppm(),
        t.ties,
        t.steps,
        r.generation
    )
}

pub fn run(base: &SharedBase, options: &TrackOptions) -> Result<(), CliError> {
    let state = base.tracking_state();
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "# hrts track: segment {}, mode {}, tie interval {} ms, max slew {} ppm; {}",
        base.name(),
        state.mode.name(),
        state.tie_interval_ns / 1_000_000,
        state.max_slew_ppb / 1000,
        match state.mode {
            Mode::Tracking => "one line per tie",
            Mode::Frozen => "one line per second (a frozen timeline is not tied)",
        }
    )?;
    out.flush()?;
    let start = Instant::now();
    let mut rows = Vec::new();
    let mut seen_ties = state.ties;
    let mut next_frozen = Duration::ZERO;
    while start.elapsed() < options.duration {
        // Stamping is what ties: whoever notices the interval has passed ties.
        base.now_ns();
        let state = base.tracking_state();
        let due = match state.mode {
            Mode::Tracking => state.ties != seen_ties,
            Mode::Frozen => start.elapsed() >= next_frozen,
        };
        if due {
            seen_ties = state.ties;
            next_frozen += Duration::from_secs(1);
            let row = Row {
                elapsed_s: start.elapsed().as_secs_f64(),
                epoch_ns: hrts_core::clock::realtime_ns(),
                offset_ns: base.offset_now(),
                state,
                generation: base.base_info().generation,
            };
            writeln!(out, "{}", row.line())?;
            out.flush()?;
            rows.push(row);
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    if let Some(path) = &options.csv {
        let mut text = format!("{CSV_HEADER}\n");
        for r in &rows {
            text.push_str(&csv_row(r));
            text.push('\n');
        }
        write_file(path, &text)?;
    }
    if let Some(path) = &options.svg {
        write_file(path, &svg(base.name(), &rows))?;
    }
    Ok(())
}

fn write_file(path: &std::path::Path, text: &str) -> Result<(), CliError> {
    std::fs::write(path, text).map_err(|e| {
        CliError::Core(hrts_core::Error::from_io(
            format!("write {}", path.display()),
            &e,
            "",
        ))
    })
}

/// A plot of the offset (ns) over elapsed time: axes, a zero line, the min and
/// max labelled, one polyline. Plain SVG 1.1, no scripts or external references.
pub fn svg(name: &str, rows: &[Row]) -> String {
    let (w, h, left, right, top, bottom) = (800.0, 400.0, 90.0, 20.0, 40.0, 50.0);
    let t_max = rows.iter().map(|r| r.elapsed_s).fold(1e-3, f64::max);
    let lo = rows.iter().map(|r| r.offset_ns as f64).fold(0.0, f64::min);
    let hi = rows.iter().map(|r| r.offset_ns as f64).fold(0.0, f64::max);
    let (lo, hi) = if hi - lo < 1.0 {
        (lo - 1.0, hi + 1.0)
    } else {
        (lo, hi)
    };
    let x = |t: f64| left + (w - left - right) * t / t_max;
    let y = |v: f64| top + (h - top - bottom) * (hi - v) / (hi - lo);
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(s, r#"<rect width="{w}" height="{h}" fill="white"/>"#);
    let _ = writeln!(
        s,
        r#"<text x="{left}" y="24" font-size="14">hrts track: segment {} - offset from CLOCK_REALTIME (ns) over time (s)</text>"#,
        name.replace(['<', '>', '&', '"'], "_")
    );
    let (x0, x1, y0, y1) = (x(0.0), x(t_max), y(lo), y(hi));
    let _ = writeln!(
        s,
        r##"<path d="M{x0:.1},{y1:.1} V{y0:.1} H{x1:.1}" fill="none" stroke="#000"/>"##
    );
    let z = y(0.0);
    let _ = writeln!(
        s,
        r##"<line x1="{x0:.1}" y1="{z:.1}" x2="{x1:.1}" y2="{z:.1}" stroke="#999" stroke-dasharray="4 4"/>"##
    );
    for (v, at) in [(hi, y1), (0.0, z), (lo, y0)] {
        let _ = writeln!(
            s,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="end">{v:.0}</text>"#,
            left - 6.0,
            at + 4.0
        );
    }
    for (t, anchor) in [(0.0, "start"), (t_max, "end")] {
        let _ = writeln!(
            s,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="{anchor}">{t:.1} s</text>"#,
            x(t),
            y0 + 20.0
        );
    }
    let points: Vec<String> = rows
        .iter()
        .map(|r| format!("{:.1},{:.1}", x(r.elapsed_s), y(r.offset_ns as f64)))
        .collect();
    let _ = writeln!(
        s,
        r##"<polyline points="{}" fill="none" stroke="#1f77b4" stroke-width="1.5"/>"##,
        points.join(" ")
    );
    s.push_str("</svg>\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(t: f64, off: i64) -> Row {
        Row {
            elapsed_s: t,
            epoch_ns: 1,
            offset_ns: off,
            state: TrackingState {
                mode: Mode::Tracking,
                tie_interval_ns: 1_000_000_000,
                max_slew_ppb: 500_000,
                step_threshold_ns: 100_000_000,
                ties: 3,
                last_tie_ns: 1,
                last_offset_ns: -40,
                pending_ns: -40,
                frequency_ppb: 100_123,
                slew_ppb: -40,
                correction_ppb: 100_083,
                steps: 0,
                last_step_ns: 0,
                largest_step_ns: 0,
                repairs: 0,
            },
            generation: 1,
        }
    }

    #[test]
    fn rows_print_and_serialise_every_number() {
        let r = row(1.5, -12);
        let line = r.line();
        assert!(line.contains("tie     3"), "{line}");
        assert!(line.contains("offset -12 ns"), "{line}");
        assert!(line.contains("correction +100.083 ppm"), "{line}");
        assert_eq!(
            csv_row(&r).split(',').count(),
            CSV_HEADER.split(',').count()
        );
        assert!(csv_row(&r).starts_with("1.500000,1,-12,-40,-40,100.123,-0.040,100.083,3,0,1"));
    }

    #[test]
    fn the_plot_has_one_point_per_row_inside_the_canvas() {
        let rows: Vec<Row> = (0..50).map(|i| row(i as f64, (i * 7 % 23) - 11)).collect();
        let svg = svg("/hrts-x", &rows);
        assert!(svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""));
        assert!(svg.trim_end().ends_with("</svg>"));
        let points = svg
            .split("points=\"")
            .nth(1)
            .unwrap()
            .split('"')
            .next()
            .unwrap();
        let xy: Vec<(f64, f64)> = points
            .split(' ')
            .map(|p| {
                let (x, y) = p.split_once(',').unwrap();
                (x.parse().unwrap(), y.parse().unwrap())
            })
            .collect();
        assert_eq!(xy.len(), 50);
        assert!(xy
            .iter()
            .all(|&(x, y)| (0.0..=800.0).contains(&x) && (0.0..=400.0).contains(&y)));
        assert!(
            xy.windows(2).all(|w| w[0].0 < w[1].0),
            "time runs left to right"
        );
        // An empty run still gives a valid document.
        assert!(super::svg("/x", &[]).contains("<polyline points=\"\""));
    }
}
