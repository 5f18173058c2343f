//! The vertical marks of `hrts track`'s plot: where the timeline stepped
//! forward to catch up with the system clock, and where the writer saw the
//! counter or the clock disrupted (no interval until the counter's rate is
//! learned again), each with its legend line.

use std::fmt::Write as _;

/// What the marks need of a row of `hrts track`.
pub(super) struct Counts {
    pub elapsed_s: f64,
    pub steps: u64,
    pub disruptions: u64,
}

/// One kind of mark: its class, colour, dashes and legend text, and whether
/// the later of two rows has one more.
struct Kind {
    class: &'static str,
    colour: &'static str,
    dashes: &'static str,
    legend: &'static str,
    grew: fn(&Counts, &Counts) -> bool,
}

const KINDS: [Kind; 2] = [
    Kind {
        class: "step",
        colour: "#d62728",
        dashes: "4 3",
        legend: "step forward",
        grew: |a, b| b.steps > a.steps,
    },
    Kind {
        class: "disruption",
        colour: "#9467bd",
        dashes: "1 2",
        legend: "disruption (no interval until learned again)",
        grew: |a, b| b.disruptions > a.disruptions,
    },
];

/// The marks between `y1` (top) and `y0` (bottom) at `x(elapsed)`, and their
/// legend lines from (`lx`, `legend_y`) down; returns the SVG and the legend
/// lines written.
pub(super) fn marks(
    rows: &[Counts],
    x: &dyn Fn(f64) -> f64,
    (y0, y1): (f64, f64),
    (lx, legend_y): (f64, f64),
) -> (String, usize) {
    let mut s = String::new();
    let mut legends = 0;
    for k in &KINDS {
        let (class, colour, dashes) = (k.class, k.colour, k.dashes);
        let mut seen = false;
        for pair in rows.windows(2) {
            if (k.grew)(&pair[0], &pair[1]) {
                seen = true;
                let at = x(pair[1].elapsed_s);
                let _ = writeln!(
                    s,
                    r##"<line class="{class}" x1="{at:.1}" y1="{y1:.1}" x2="{at:.1}" y2="{y0:.1}" stroke="{colour}" stroke-dasharray="{dashes}"/>"##
                );
            }
        }
        if seen {
            let ly = legend_y + 18.0 * legends as f64;
            let _ = writeln!(
                s,
                r##"<line x1="{:.1}" y1="{ly:.1}" x2="{:.1}" y2="{ly:.1}" stroke="{colour}" stroke-dasharray="{dashes}"/><text class="legend" x="{:.1}" y="{:.1}">{}</text>"##,
                lx - 4.0,
                lx + 4.0,
                lx + 8.0,
                ly + 4.0,
                k.legend
            );
            legends += 1;
        }
    }
    (s, legends)
}
