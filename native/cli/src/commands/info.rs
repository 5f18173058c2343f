//! `hrts info`: every fact the segment records, one `key: value` per line.

use crate::exit::CliError;
use hrts_core::{Opened, SharedBase};
use std::fmt::Write as _;

pub fn opened_name(opened: Opened) -> &'static str {
    match opened {
        Opened::Created => "created",
        Opened::Attached => "attached",
        Opened::TookOver => "took-over",
    }
}

pub fn run(base: &SharedBase) -> Result<(), CliError> {
    let i = base.info();
    let mut s = String::new();
    let mut line = |key: &str, value: &dyn std::fmt::Display| {
        // Writing to a String cannot fail.
        let _ = writeln!(s, "{key}: {value}");
    };
    line("segment", &i.name);
    line("layout version", &i.layout_version);
    line("opened", &opened_name(base.opened()));
    line("source", &i.source.name());
    line("reason", &i.reason);
    line("frequency", &i.frequency);
    line("calibration spread ppb", &i.calibration_spread_ppb);
    line("calibration elapsed ns", &i.calibration_elapsed_ns);
    line("calibrations", &i.calibrations);
    // The creation-time reliability evaluation; absent for a software source.
    match &i.evaluation {
        None => line("evaluation", &"none"),
        Some(e) => {
            line(
                "evaluation",
                &if e.monotonic {
                    "monotonic"
                } else {
                    "not monotonic"
                },
            );
            let shift = e
                .max_shift_ns
                .map_or_else(|| "unbounded".to_string(), |ns| ns.to_string());
            line("evaluation max shift ns", &shift);
            line("evaluation cpus", &e.cpus);
        }
    }
    line("creator pid", &i.creator_pid);
    line("creator uid", &i.creator_uid);
    line("created epoch ns", &i.created_realtime_ns);
    line("generation", &i.base.generation);
    line("base counter", &i.base.counter);
    line("base ns", &i.base.ns);
    line("mult", &i.mult);
    line("shift", &i.shift);
    line("wrap threshold ticks", &i.wrap_threshold);
    line("moves", &i.moves);
    super::print(&s)
}
