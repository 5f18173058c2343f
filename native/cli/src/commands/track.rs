//! `hrts track [SECONDS] [--csv FILE] [--svg FILE]`: watches the segment follow
//! the calendar. It stamps every millisecond (so ties happen even if nothing else
//! stamps) and prints one line per tie (frozen mode: one per second): time,
//! offset from `CLOCK_REALTIME` now (narrowest bracket), the offset the tie
//! measured, the slope's correction, and the error bound a stamp gets then
//! (status and half width, as `hrts now --bound` gives it). Optionally writes
//! the rows as CSV and the offset over time, with the bound around it, as an
//! SVG plot, its steps and disruptions marked.

use super::track_marks::{marks, Counts};
use crate::exit::CliError;
use hrts_core::{BoundState, Mode, TrackingState};
use std::fmt::Write as _;
use std::fs::File;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

#[derive(clap::Args, Debug)]
pub struct TrackArgs {
    /// How long to watch, in seconds
    #[arg(value_name = "SECONDS", default_value = "10", value_parser = track_seconds)]
    pub seconds: Duration,
    /// Also write the lines as CSV to FILE
    #[arg(long, value_name = "FILE")]
    pub csv: Option<PathBuf>,
    /// Also plot the offset over time, with the error bound around it, as SVG to FILE
    #[arg(long, value_name = "FILE")]
    pub svg: Option<PathBuf>,
}

fn track_seconds(s: &str) -> Result<Duration, String> {
    s.parse::<f64>()
        .ok()
        .filter(|s| *s > 0.0 && *s <= 1e6)
        .map(Duration::from_secs_f64)
        .ok_or_else(|| "SECONDS must be a positive number of seconds up to 1000000".to_string())
}

/// One printed line.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Row {
    pub elapsed_s: f64,
    pub epoch_ns: u64,
    pub offset_ns: i64,
    pub state: TrackingState,
    pub generation: u64,
    /// The bound as the page holds it then (`None`: none published yet).
    pub bound: Option<BoundState>,
    /// Disruptions the writers saw so far (0 on a page that records none).
    pub disruptions: u64,
}

impl Row {
    /// Half the interval a stamp got, ns; 0 when the status gives none.
    fn half_width_ns(&self) -> u64 {
        self.bound.map_or(0, |b| b.half_width_ns)
    }

    fn bound_text(&self) -> String {
        match &self.bound {
            None => "bound none (no bound published yet)".to_string(),
            Some(b) if b.status.bounded() => format!(
                "bound {} ±{} ns (source {}, {} ns)",
                b.status.name(),
                b.half_width_ns,
                b.source.name(),
                b.bound_ns
            ),
            Some(b) => format!(
                "bound {} (source {}, {} ns)",
                b.status.name(),
                b.source.name(),
                b.bound_ns
            ),
        }
    }

    fn line(&self) -> String {
        let t = &self.state;
        let what = match t.mode {
            Mode::Tracking => format!("tie {:>5}", t.ties),
            Mode::Frozen => "frozen   ".to_string(),
        };
        format!(
            "{:9.3} s  {what}  offset {:+} ns  tie offset {:+} ns  correction {:+.3} ppm \
             (frequency {:+.3}, slew {:+.3})  pending {:+} ns  generation {}  {}",
            self.elapsed_s,
            self.offset_ns,
            t.last_offset_ns,
            t.correction_ppm(),
            t.frequency_ppb as f64 / 1000.0,
            t.slew_ppb as f64 / 1000.0,
            t.pending_ns,
            self.generation,
            self.bound_text()
        )
    }
}

pub const CSV_HEADER: &str = "elapsed_s,epoch_ns,offset_ns,tie_offset_ns,pending_ns,frequency_ppm,slew_ppm,correction_ppm,ties,steps,generation,bound_status,bound_source,bound_ns,bound_half_width_ns";

fn csv_row(r: &Row) -> String {
    let t = &r.state;
    format!(
        "{:.6},{},{},{},{},{:.3},{:.3},{:.3},{},{},{},{}",
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
        r.generation,
        match &r.bound {
            None => "none,,,".to_string(),
            Some(b) => format!(
                "{},{},{},{}",
                b.status.name(),
                b.source.name(),
                b.bound_ns,
                b.half_width_ns
            ),
        }
    )
}

/// A file `--csv` or `--svg` names, opened before the run so that a path that
/// cannot be written fails at once, and written when the run is over.
struct Output {
    path: PathBuf,
    file: File,
}

impl Output {
    fn open(path: &Path, option: &str) -> Result<Output, CliError> {
        let file = File::options()
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)
            .map_err(|e| {
                hrts_core::Error::from_io(
                    format!("{option} {}: cannot write", path.display()),
                    &e,
                    "give a file in a directory you can write",
                )
            })?;
        Ok(Output {
            path: path.to_path_buf(),
            file,
        })
    }

    fn write(mut self, text: &str) -> Result<(), CliError> {
        self.file
            .set_len(0)
            .and_then(|()| self.file.write_all(text.as_bytes()))
            .map_err(|e| {
                CliError::Core(hrts_core::Error::from_io(
                    format!("write {}", self.path.display()),
                    &e,
                    "",
                ))
            })
    }
}

pub fn run(segment: Option<&str>, options: &TrackArgs) -> Result<(), CliError> {
    let csv_out = options
        .csv
        .as_deref()
        .map(|p| Output::open(p, "--csv"))
        .transpose()?;
    let svg_out = options
        .svg
        .as_deref()
        .map(|p| Output::open(p, "--svg"))
        .transpose()?;
    let base = super::open(segment)?;
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
    while start.elapsed() < options.seconds {
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
                bound: base.bound_state(),
                disruptions: base.disruptions().map_or(0, |d| d.count),
            };
            writeln!(out, "{}", row.line())?;
            out.flush()?;
            rows.push(row);
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    if let Some(file) = csv_out {
        let mut text = format!("{CSV_HEADER}\n");
        for r in &rows {
            text.push_str(&csv_row(r));
            text.push('\n');
        }
        file.write(&text)?;
    }
    if let Some(file) = svg_out {
        file.write(&svg(base.name(), state.mode, &rows))?;
    }
    Ok(())
}

/// The band's colour for a status that gives an interval.
fn bound_colour(status: hrts_core::BoundStatus) -> &'static str {
    match status {
        hrts_core::BoundStatus::Synchronized => "#2ca02c",
        _ => "#ff7f0e",
    }
}

/// Round tick positions covering `lo..=hi`: about `target` of them, spaced 1,
/// 2 or 5 times a power of ten. Returns the step and the ticks (from a
/// multiple of the step at or below `lo` to one at or above `hi`).
fn ticks(lo: f64, hi: f64, target: f64) -> (f64, Vec<f64>) {
    let raw = ((hi - lo) / target).max(f64::MIN_POSITIVE);
    let magnitude = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|m| m * magnitude)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * magnitude);
    let first = (lo / step).floor() as i64;
    let last = (hi / step).ceil() as i64;
    (step, (first..=last).map(|i| i as f64 * step).collect())
}

/// A tick label with the decimals its step needs (never "-0").
fn tick_label(v: f64, step: f64) -> String {
    let decimals = if step >= 1.0 {
        0
    } else {
        (-step.log10()).ceil() as usize
    };
    let text = format!("{v:.decimals$}");
    if text
        .trim_start_matches('-')
        .chars()
        .all(|c| c == '0' || c == '.')
    {
        text.trim_start_matches('-').to_string()
    } else {
        text
    }
}

/// The unit that suits offsets up to `max_abs_ns`: its name and size in ns.
fn offset_unit(max_abs_ns: f64) -> (&'static str, f64) {
    if max_abs_ns < 1e3 {
        ("ns", 1.0)
    } else if max_abs_ns < 1e6 {
        ("µs", 1e3)
    } else if max_abs_ns < 1e9 {
        ("ms", 1e6)
    } else {
        ("s", 1e9)
    }
}

fn xml_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// Runs of consecutive rows that give an interval with one status: the
/// stretches the plot shades (a row without one breaks the band).
fn bound_runs(rows: &[Row]) -> Vec<(hrts_core::BoundStatus, std::ops::Range<usize>)> {
    let mut runs: Vec<(hrts_core::BoundStatus, std::ops::Range<usize>)> = Vec::new();
    for (i, r) in rows.iter().enumerate() {
        let Some(status) = r.bound.map(|b| b.status).filter(|s| s.bounded()) else {
            continue;
        };
        match runs.last_mut() {
            Some((s, run)) if *s == status && run.end == i => run.end = i + 1,
            _ => runs.push((status, i..i + 1)),
        }
    }
    runs
}

/// The offset from CLOCK_REALTIME over the run, as a plot: a title naming the
/// segment and mode, a time axis (s) and an offset axis (in the unit that suits
/// the offsets) with ticks, labels and a grid, the offset as a line with the
/// error bound shaded around it (offset ± half width, one shade per status;
/// none where the status gives no interval), each tie (tracking mode) or
/// sample (frozen mode) marked, and each step marked. Plain SVG 1.1, no
/// scripts or external references.
pub fn svg(name: &str, mode: Mode, rows: &[Row]) -> String {
    let (w, h, left, right, top, bottom) = (800.0, 450.0, 80.0, 30.0, 60.0, 60.0);
    let max_abs = rows
        .iter()
        .map(|r| r.offset_ns.unsigned_abs() as f64 + r.half_width_ns() as f64)
        .fold(0.0, f64::max);
    let (unit, per) = offset_unit(max_abs);
    let values: Vec<f64> = rows.iter().map(|r| r.offset_ns as f64 / per).collect();
    let halves: Vec<f64> = rows
        .iter()
        .map(|r| r.half_width_ns() as f64 / per)
        .collect();
    let lo = values
        .iter()
        .zip(&halves)
        .map(|(v, b)| v - b)
        .fold(0.0, f64::min);
    let hi = values
        .iter()
        .zip(&halves)
        .map(|(v, b)| v + b)
        .fold(0.0, f64::max);
    let (lo, hi) = if hi - lo < 1e-9 {
        (-1.0, 1.0)
    } else {
        (lo, hi)
    };
    let (y_step, y_ticks) = ticks(lo, hi, 6.0);
    let (y_lo, y_hi) = (y_ticks[0], y_ticks[y_ticks.len() - 1]);
    let t_end = rows.iter().map(|r| r.elapsed_s).fold(1e-3, f64::max);
    let (t_step, t_ticks) = ticks(0.0, t_end, 8.0);
    let t_hi = t_ticks[t_ticks.len() - 1];
    let x = |t: f64| left + (w - left - right) * t / t_hi;
    let y = |v: f64| top + (h - top - bottom) * (y_hi - v) / (y_hi - y_lo);
    let (x0, x1, y0, y1) = (x(0.0), x(t_hi), y(y_lo), y(y_hi));
    let name = xml_escape(name);
    let title = format!("hrts track: segment {name}, mode {}", mode.name());
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(s, "<title>{title}</title>");
    let _ = writeln!(s, r#"<rect width="{w}" height="{h}" fill="white"/>"#);
    let _ = writeln!(
        s,
        r#"<text class="title" x="{}" y="22" text-anchor="middle" font-size="15">{title}</text>"#,
        w / 2.0
    );
    let _ = writeln!(
        s,
        r##"<text class="subtitle" x="{}" y="40" text-anchor="middle" fill="#555">offset of the timeline from CLOCK_REALTIME</text>"##,
        w / 2.0
    );
    // The grid and the ticks with their labels.
    for &t in &t_ticks {
        let at = x(t);
        let _ = writeln!(
            s,
            r##"<line class="grid" x1="{at:.1}" y1="{y1:.1}" x2="{at:.1}" y2="{y0:.1}" stroke="#e3e3e3"/>"##
        );
        let _ = writeln!(
            s,
            r##"<line class="tick" x1="{at:.1}" y1="{y0:.1}" x2="{at:.1}" y2="{:.1}" stroke="#000"/>"##,
            y0 + 5.0
        );
        let _ = writeln!(
            s,
            r#"<text class="tick-label x" x="{at:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
            y0 + 18.0,
            tick_label(t, t_step)
        );
    }
    for &v in &y_ticks {
        let at = y(v);
        let zero = v.abs() < y_step * 1e-6;
        let _ = writeln!(
            s,
            r##"<line class="grid" x1="{x0:.1}" y1="{at:.1}" x2="{x1:.1}" y2="{at:.1}" stroke="{}"/>"##,
            if zero { "#999" } else { "#e3e3e3" }
        );
        let _ = writeln!(
            s,
            r##"<line class="tick" x1="{:.1}" y1="{at:.1}" x2="{x0:.1}" y2="{at:.1}" stroke="#000"/>"##,
            x0 - 5.0
        );
        let _ = writeln!(
            s,
            r#"<text class="tick-label y" x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"#,
            x0 - 8.0,
            at + 4.0,
            tick_label(v, y_step)
        );
    }
    // The axes and their titles.
    let _ = writeln!(
        s,
        r##"<path class="axes" d="M{x0:.1},{y1:.1} V{y0:.1} H{x1:.1}" fill="none" stroke="#000"/>"##
    );
    let _ = writeln!(
        s,
        r#"<text class="axis-title x" x="{:.1}" y="{:.1}" text-anchor="middle">time since the start (s)</text>"#,
        (x0 + x1) / 2.0,
        h - 15.0
    );
    let _ = writeln!(
        s,
        r#"<text class="axis-title y" transform="translate(20,{:.1}) rotate(-90)" text-anchor="middle">offset ({unit})</text>"#,
        (y0 + y1) / 2.0
    );
    // Steps and disruptions, with their legend lines below the first.
    let lx = x1 - 250.0;
    let counts: Vec<Counts> = rows
        .iter()
        .map(|r| Counts {
            elapsed_s: r.elapsed_s,
            steps: r.state.steps,
            disruptions: r.disruptions,
        })
        .collect();
    let (marked, legends) = marks(&counts, &x, (y0, y1), (lx, y1 + 30.0));
    s.push_str(&marked);
    // The bound: what a stamp's interval spans around the offset.
    let runs = bound_runs(rows);
    for (status, run) in &runs {
        let upper = run.clone().map(|i| {
            format!(
                "{:.1},{:.1}",
                x(rows[i].elapsed_s),
                y(values[i] + halves[i])
            )
        });
        let lower = run.clone().rev().map(|i| {
            format!(
                "{:.1},{:.1}",
                x(rows[i].elapsed_s),
                y(values[i] - halves[i])
            )
        });
        let outline: Vec<String> = upper.chain(lower).collect();
        let _ = writeln!(
            s,
            r#"<path class="bound {}" d="M{} Z" fill="{}" fill-opacity="0.2" stroke="{}" stroke-opacity="0.5"/>"#,
            status.name(),
            outline.join(" L"),
            bound_colour(*status),
            bound_colour(*status)
        );
    }
    let points: Vec<String> = rows
        .iter()
        .zip(&values)
        .map(|(r, v)| format!("{:.1},{:.1}", x(r.elapsed_s), y(*v)))
        .collect();
    let _ = writeln!(
        s,
        r##"<polyline class="offset" points="{}" fill="none" stroke="#1f77b4" stroke-width="1.5"/>"##,
        points.join(" ")
    );
    let (marker, what) = match mode {
        Mode::Tracking => ("tie", "tie (offset measured, slope corrected)"),
        Mode::Frozen => ("sample", "sample (a frozen timeline is not tied)"),
    };
    for p in &points {
        let (px, py) = p.split_once(',').unwrap_or(("0", "0"));
        let _ = writeln!(
            s,
            r##"<circle class="{marker}" cx="{px}" cy="{py}" r="3" fill="#1f77b4"/>"##
        );
    }
    // The legend, top right inside the plot.
    let _ = writeln!(
        s,
        r##"<circle cx="{:.1}" cy="{:.1}" r="3" fill="#1f77b4"/><text class="legend" x="{:.1}" y="{:.1}">{what}</text>"##,
        lx,
        y1 + 12.0,
        lx + 8.0,
        y1 + 16.0
    );
    // One legend line per bound status the run showed, and one for rows
    // without an interval, so that a plot without a band says why.
    let mut legend_y = y1 + 30.0 + 18.0 * legends as f64;
    let mut shown: Vec<hrts_core::BoundStatus> = Vec::new();
    for (status, _) in &runs {
        if shown.contains(status) {
            continue;
        }
        shown.push(*status);
        let _ = writeln!(
            s,
            r#"<rect x="{:.1}" y="{:.1}" width="8" height="8" fill="{}" fill-opacity="0.4"/><text class="legend" x="{:.1}" y="{:.1}">bound: offset ± half width ({})</text>"#,
            lx - 4.0,
            legend_y - 4.0,
            bound_colour(*status),
            lx + 8.0,
            legend_y + 4.0,
            status.name()
        );
        legend_y += 18.0;
    }
    let unbounded: Vec<&str> = rows
        .iter()
        .filter(|r| r.half_width_ns() == 0)
        .map(|r| r.bound.map_or("none published", |b| b.status.name()))
        .fold(Vec::new(), |mut seen, n| {
            if !seen.contains(&n) {
                seen.push(n);
            }
            seen
        });
    if !unbounded.is_empty() {
        let _ = writeln!(
            s,
            r#"<text class="legend no-bound" x="{:.1}" y="{:.1}">no bound: {}</text>"#,
            lx + 8.0,
            legend_y + 4.0,
            unbounded.join(", ")
        );
    }
    s.push_str("</svg>\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use hrts_core::{BoundSource, BoundStatus, Leap};

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
                statistics_valid: true,
            },
            generation: 1,
            bound: None,
            disruptions: 0,
        }
    }

    fn bound(status: BoundStatus, half_width_ns: u64) -> Option<BoundState> {
        Some(BoundState {
            status,
            source: BoundSource::Test,
            leap: Leap::None,
            bound_ns: 20_000,
            line_error_ns: 300,
            drift_ppb: 50_000,
            age_ns: 400_000_000,
            half_width_ns,
            shift_ns: 100,
            fresh_ns: 3_000_000_000,
            slope_error_ppb: 1,
        })
    }

    #[test]
    fn rows_print_and_serialise_the_bound_and_its_status() {
        let mut r = row(1.5, -12);
        assert!(r.line().ends_with("  bound none (no bound published yet)"));
        assert!(csv_row(&r).ends_with(",1,none,,,"), "{}", csv_row(&r));
        r.bound = bound(BoundStatus::Synchronized, 40_420);
        let line = r.line();
        assert!(
            line.ends_with("  bound synchronized ±40420 ns (source test, 20000 ns)"),
            "{line}"
        );
        assert_eq!(
            common_offset(&line),
            -12,
            "the offset stays where readers find it"
        );
        assert!(csv_row(&r).ends_with(",1,synchronized,test,20000,40420"));
        r.bound = bound(BoundStatus::Unsynchronized, 0);
        assert!(r
            .line()
            .ends_with("  bound unsynchronized (source test, 20000 ns)"));
        assert_eq!(
            csv_row(&r).split(',').count(),
            CSV_HEADER.split(',').count()
        );
    }

    /// The offset as the multi-process tests read it (tests/common).
    fn common_offset(line: &str) -> i64 {
        line.split("  offset ")
            .nth(1)
            .unwrap()
            .split(' ')
            .next()
            .unwrap()
            .parse()
            .unwrap()
    }

    #[test]
    fn the_plot_shades_the_bound_around_the_offset_per_status() {
        // 0..4 synchronized ±2 µs, 5 unsynchronized, 6..9 free-running ±3 µs.
        let rows: Vec<Row> = (0..10)
            .map(|i| {
                let mut r = row(i as f64, 500);
                r.bound = match i {
                    0..=4 => bound(BoundStatus::Synchronized, 2_000),
                    5 => bound(BoundStatus::Unsynchronized, 0),
                    _ => bound(BoundStatus::FreeRunning, 3_000),
                };
                r
            })
            .collect();
        let svg = svg("/b", Mode::Tracking, &rows);
        let bands = elements(&svg, "path", "bound synchronized");
        assert_eq!(bands.len(), 1);
        assert_eq!(elements(&svg, "path", "bound free-running").len(), 1);
        // The band's outline: five points above the line, five below.
        let d = bands[0].0.split(" d=\"M").nth(1).unwrap();
        let d = &d[..d.find(" Z").unwrap()];
        let ys: Vec<f64> = d
            .split(" L")
            .map(|p| p.split_once(',').unwrap().1.parse().unwrap())
            .collect();
        assert_eq!(ys.len(), 10);
        // The axis reaches the band: offset 0.5 µs + 3 µs, in µs.
        let axis = elements(&svg, "text", "axis-title y")[0].1;
        assert_eq!(axis, "offset (µs)");
        let y_values: Vec<f64> = elements(&svg, "text", "tick-label y")
            .iter()
            .map(|(_, t)| t.parse().unwrap())
            .collect();
        assert!(*y_values.last().unwrap() >= 3.5, "{y_values:?}");
        assert!(y_values[0] <= -1.5, "{y_values:?}");
        // Above the line is up (smaller y), symmetric around it.
        let line_y = ys[0] + (ys[9] - ys[0]) / 2.0;
        assert!(ys[..5].iter().all(|y| *y < line_y) && ys[5..].iter().all(|y| *y > line_y));
        assert!(svg.contains(">bound: offset ± half width (synchronized)</text>"));
        assert!(svg.contains(">bound: offset ± half width (free-running)</text>"));
        assert!(svg.contains(">no bound: unsynchronized</text>"));
        // Without a bound, no band and the legend says so.
        let plain = super::svg("/p", Mode::Tracking, &rows[..0]);
        assert!(!plain.contains("class=\"bound"));
        let none = super::svg("/p", Mode::Tracking, &[row(0.0, 1)]);
        assert!(none.contains(">no bound: none published</text>"));
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
        let svg = svg("/hrts-x", Mode::Tracking, &rows);
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
        assert!(super::svg("/x", Mode::Tracking, &[]).contains(" points=\"\""));
    }

    /// The elements of one kind with one class, as their attribute text and
    /// their content (for <text>).
    fn elements<'a>(svg: &'a str, tag: &str, class: &str) -> Vec<(&'a str, &'a str)> {
        let open = format!("<{tag} class=\"{class}\"");
        svg.match_indices(&open)
            .map(|(i, _)| {
                let rest = &svg[i + open.len()..];
                let end = rest.find('>').unwrap();
                let attrs = &rest[..end];
                let content = if attrs.ends_with('/') {
                    ""
                } else {
                    let body = &rest[end + 1..];
                    &body[..body.find("</").unwrap()]
                };
                (attrs, content)
            })
            .collect()
    }

    fn attr(attrs: &str, name: &str) -> f64 {
        let key = format!(" {name}=\"");
        let v = &attrs[attrs.find(&key).unwrap() + key.len()..];
        v[..v.find('"').unwrap()].parse().unwrap()
    }

    #[test]
    fn the_plot_has_a_title_axes_ticks_a_grid_and_marked_ties() {
        // Offsets from -3.2 µs to +1.5 µs over 20 s, with a step at 12 s.
        let rows: Vec<Row> = (0..=20)
            .map(|i| {
                let mut r = row(i as f64, (i * 337 % 4700) - 3200);
                r.state.steps = u64::from(i >= 12);
                r.disruptions = u64::from(i >= 15);
                r
            })
            .collect();
        let svg = svg("/hrts-plot<&>", Mode::Tracking, &rows);
        // The title names the segment (escaped) and the mode.
        let titles = elements(&svg, "text", "title");
        assert_eq!(titles.len(), 1);
        assert_eq!(
            titles[0].1,
            "hrts track: segment /hrts-plot&lt;&amp;&gt;, mode tracking"
        );
        assert!(svg
            .contains("<title>hrts track: segment /hrts-plot&lt;&amp;&gt;, mode tracking</title>"));
        // Axis titles with units.
        let axis: Vec<&str> = ["axis-title x", "axis-title y"]
            .iter()
            .map(|c| elements(&svg, "text", c)[0].1)
            .collect();
        assert_eq!(axis, ["time since the start (s)", "offset (µs)"]);
        // Time ticks: round numbers from 0 past 20 s, one grid line each.
        let x_labels: Vec<f64> = elements(&svg, "text", "tick-label x")
            .iter()
            .map(|(_, t)| t.parse().unwrap())
            .collect();
        assert!(x_labels.len() >= 4, "{x_labels:?}");
        assert_eq!(x_labels[0], 0.0);
        assert!(*x_labels.last().unwrap() >= 20.0);
        let steps: Vec<f64> = x_labels.windows(2).map(|w| w[1] - w[0]).collect();
        assert!(
            steps.iter().all(|s| (s - steps[0]).abs() < 1e-9),
            "{x_labels:?}"
        );
        // Offset ticks: in µs, covering -3.2..1.5, one "0" and no "-0".
        let y_labels: Vec<&str> = elements(&svg, "text", "tick-label y")
            .iter()
            .map(|(_, t)| *t)
            .collect();
        assert_eq!(
            y_labels.iter().filter(|l| **l == "0").count(),
            1,
            "{y_labels:?}"
        );
        assert!(!y_labels.contains(&"-0"), "{y_labels:?}");
        let y_values: Vec<f64> = y_labels.iter().map(|l| l.parse().unwrap()).collect();
        assert!(
            y_values[0] <= -3.2 && *y_values.last().unwrap() >= 1.5,
            "{y_values:?}"
        );
        let grid = elements(&svg, "line", "grid");
        assert_eq!(grid.len(), x_labels.len() + y_labels.len());
        assert_eq!(
            elements(&svg, "line", "tick").len(),
            x_labels.len() + y_labels.len()
        );
        // Every grid line lies inside the canvas; vertical ones span the plot.
        for (a, _) in &grid {
            for k in ["x1", "x2"] {
                assert!((0.0..=800.0).contains(&attr(a, k)));
            }
            for k in ["y1", "y2"] {
                assert!((0.0..=450.0).contains(&attr(a, k)));
            }
        }
        // One marker per tie, on the line; the step marked once.
        let ties = elements(&svg, "circle", "tie");
        assert_eq!(ties.len(), rows.len());
        assert_eq!(elements(&svg, "line", "step").len(), 1);
        assert!(svg.contains(">tie (offset measured, slope corrected)</text>"));
        assert!(svg.contains(">step forward</text>"));
        // The disruption at 15 s, marked once, below the step in the legend.
        assert_eq!(elements(&svg, "line", "disruption").len(), 1);
        assert!(svg.contains(">disruption (no interval until learned again)</text>"));
        // A frozen run's points are samples, not ties.
        let frozen = super::svg("/f", Mode::Frozen, &rows[..3]);
        assert!(frozen.contains("mode frozen</text>"));
        assert_eq!(elements(&frozen, "circle", "sample").len(), 3);
        assert!(elements(&frozen, "circle", "tie").is_empty());
    }

    #[test]
    fn ticks_are_round_and_cover_the_range() {
        let (step, t) = ticks(0.0, 20.0, 8.0);
        assert_eq!(step, 5.0);
        assert_eq!(t, [0.0, 5.0, 10.0, 15.0, 20.0]);
        let (step, t) = ticks(-3.2, 1.5, 6.0);
        assert_eq!(step, 1.0);
        assert_eq!(t.first(), Some(&-4.0));
        assert_eq!(t.last(), Some(&2.0));
        assert_eq!(tick_label(-0.0, 1.0), "0");
        assert_eq!(tick_label(0.25, 0.05), "0.25");
        assert_eq!(tick_label(-1e-17, 0.1), "0.0");
        assert_eq!(offset_unit(999.0), ("ns", 1.0));
        assert_eq!(offset_unit(2.5e6), ("ms", 1e6));
    }
}
