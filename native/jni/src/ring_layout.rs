//! The statistics queue layout the Java measuring points write
//! (`hrts_stats::ring`, the control block offsets), as one named list: the
//! generated Java class `io.hrts.stats.RingLayout` holds these names and
//! values, and `StatsNative.nLayout()` reports the values in the same order so
//! that the jar checks, once, that it was built with this library. The
//! `java_ring_layout_is_fresh` test keeps the committed Java file in step;
//! regenerate it with
//! `HRTS_BLESS=1 cargo test -p hrts-jni java_ring_layout_is_fresh`.

use hrts_stats::ring::{self, cell, kind};

/// One constant: the Java class it goes in (`""` for `RingLayout` itself,
/// else a nested class), the Rust path it comes from, its value.
pub(crate) struct Entry {
    // The names are read only where the Java source is generated (in tests);
    // the library itself reports the values.
    #[cfg_attr(not(test), allow(dead_code))]
    pub(crate) class: &'static str,
    #[cfg_attr(not(test), allow(dead_code))]
    pub(crate) path: &'static str,
    pub(crate) value: i64,
}

impl Entry {
    /// The Java name: the last part of the Rust path.
    #[cfg(test)]
    fn name(&self) -> &'static str {
        self.path.rsplit("::").next().unwrap_or(self.path).trim()
    }

    /// The Rust path, as written (`stringify!` spaces out the `::`).
    #[cfg(test)]
    fn rust_path(&self) -> String {
        match self.path.replace(' ', "") {
            p if p.starts_with("ring::") || p.starts_with("cell::") || p.starts_with("kind::") => {
                format!("hrts_stats::ring::{}", p.trim_start_matches("ring::"))
            }
            _ => {
                let i = ["ENABLED", "IDLE_NS", "COARSE"]
                    .iter()
                    .position(|n| *n == self.name())
                    .expect("a control offset");
                format!("hrts_stats::CONTROL_OFFSETS[{i}]")
            }
        }
    }
}

macro_rules! entries {
    ($($class:literal: $($seg:ident)::+),* $(,)?) => {
        &[$(Entry {
            class: $class,
            path: stringify!($($seg)::+),
            value: $($seg)::+ as i64,
        }),*]
    };
}

/// Every constant, in the order of `nLayout()`. Queue words and cell words
/// are 64-bit word offsets; control offsets are bytes.
pub(crate) const LAYOUT: &[Entry] = entries![
    "": ring::HEAD,
    "": ring::DROPPED,
    "": ring::TAIL,
    "": ring::EVENTS,
    "": ring::EVENT_WORDS,
    "": ring::CHUNK_CELLS,
    "": ring::CELL_WORDS,
    "": ring::CHUNK_HEADER_WORDS,
    "": ring::FOLD_CANCEL,
    "": ring::FOLD_RUN_RINGS,
    "Cell": cell::SEQ,
    "Cell": cell::POS_N,
    "Cell": cell::POS_SUM,
    "Cell": cell::POS_MIN,
    "Cell": cell::POS_MAX,
    "Cell": cell::NEG_N,
    "Cell": cell::NEG_SUM,
    "Cell": cell::NEG_MIN,
    "Cell": cell::NEG_MAX,
    "Cell": cell::ZERO_N,
    "Cell": cell::POS,
    "Cell": cell::LAST,
    "Cell": cell::KIND,
    "Kind": kind::COUNTER_INIT,
    "Kind": kind::COUNTER_ADD,
    "Kind": kind::GAUGE_SET,
    "Kind": kind::TIMER_START,
    "Kind": kind::TIMER_STOP,
    "Kind": kind::TIMER_DISCARD,
    "Kind": kind::TIMER_HEARTBEAT,
    "Kind": kind::TIMER_RECORD,
    "Control": ENABLED,
    "Control": IDLE_NS,
    "Control": COARSE,
];

const ENABLED: usize = hrts_stats::CONTROL_OFFSETS[0];
const IDLE_NS: usize = hrts_stats::CONTROL_OFFSETS[1];
const COARSE: usize = hrts_stats::CONTROL_OFFSETS[2];

/// What each Java class holds, in the order they are written.
#[cfg(test)]
const CLASSES: &[(&str, &str)] = &[
    (
        "",
        "Word offsets in a queue block: producer and consumer words, the events, the fold-cell \
         chunks.",
    ),
    (
        "Cell",
        "Word offsets in a fold cell (hrts_stats::ring::cell).",
    ),
    (
        "Kind",
        "Event kinds, the meta word's bits 32..40 (hrts_stats::ring::kind).",
    ),
    (
        "Control",
        "Byte offsets in the measuring points' control block (hrts_stats::CONTROL_OFFSETS).",
    ),
];

/// The Java source of `io.hrts.stats.RingLayout`.
#[cfg(test)]
pub(crate) fn java_source() -> String {
    use std::fmt::Write;
    let mut s = String::new();
    s.push_str(
        "// Generated from hrts_stats::ring by native/jni/src/ring_layout.rs; do not edit.\n\
         // Regenerate with `HRTS_BLESS=1 cargo test -p hrts-jni java_ring_layout_is_fresh`.\n\
         package io.hrts.stats;\n\n",
    );
    for (class, doc) in CLASSES {
        let indent = if class.is_empty() { "" } else { "    " };
        let name = if class.is_empty() {
            "RingLayout"
        } else {
            class
        };
        if class.is_empty() {
            writeln!(
                s,
                "/**\n * The native statistics queue layout (hrts_stats::ring), which the Java \
                 measuring points\n * write.\n *\n * <p>{doc}\n */"
            )
            .unwrap();
            writeln!(s, "final class {name} {{").unwrap();
            writeln!(s, "    private {name}() {{}}").unwrap();
        } else {
            writeln!(s).unwrap();
            writeln!(s, "    /** {doc} */").unwrap();
            writeln!(s, "    static final class {name} {{").unwrap();
            writeln!(s, "        private {name}() {{}}").unwrap();
        }
        for e in LAYOUT.iter().filter(|e| e.class == *class) {
            writeln!(s).unwrap();
            writeln!(s, "{indent}    /** {} */", e.rust_path()).unwrap();
            writeln!(
                s,
                "{indent}    static final int {} = {};",
                e.name(),
                e.value
            )
            .unwrap();
        }
        if !class.is_empty() {
            writeln!(s, "    }}").unwrap();
        }
    }
    writeln!(s).unwrap();
    writeln!(
        s,
        "    /** Every value above, in the order the native library's nLayout() reports them. */"
    )
    .unwrap();
    let all: Vec<String> = LAYOUT
        .iter()
        .map(|e| match e.class {
            "" => e.name().to_string(),
            c => format!("{c}.{}", e.name()),
        })
        .collect();
    writeln!(s, "    static final int[] ALL = {{").unwrap();
    let mut line = String::new();
    for name in all {
        if !line.is_empty() && 8 + line.len() + name.len() + 2 > 100 {
            writeln!(s, "        {}", line.trim_end()).unwrap();
            line.clear();
        }
        write!(line, "{name}, ").unwrap();
    }
    writeln!(s, "        {}", line.trim_end()).unwrap();
    writeln!(s, "    }};").unwrap();
    writeln!(s, "}}").unwrap();
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn committed() -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../../java/src/main/java/io/hrts/stats/RingLayout.java")
    }

    #[test]
    fn java_ring_layout_is_fresh() {
        let generated = java_source();
        let path = committed();
        if std::env::var_os("HRTS_BLESS").is_some_and(|v| v == "1") {
            std::fs::write(&path, &generated)
                .unwrap_or_else(|e| panic!("cannot write {}: {e}", path.display()));
            return;
        }
        let committed = std::fs::read_to_string(&path).unwrap_or_default();
        let line = committed
            .lines()
            .zip(generated.lines())
            .position(|(a, b)| a != b)
            .unwrap_or_else(|| committed.lines().count().min(generated.lines().count()));
        assert!(
            committed == generated,
            "java/src/main/java/io/hrts/stats/RingLayout.java is out of date with \
             hrts_stats::ring (first difference at line {}: committed {:?}, generated {:?}).\n\
             Regenerate it with `HRTS_BLESS=1 cargo test -p hrts-jni java_ring_layout_is_fresh` \
             and commit it.",
            line + 1,
            committed.lines().nth(line).unwrap_or("<end of file>"),
            generated.lines().nth(line).unwrap_or("<end of file>"),
        );
    }

    #[test]
    fn names_are_unique_within_a_class_and_values_fit_a_java_int() {
        for e in LAYOUT {
            assert!(i32::try_from(e.value).is_ok(), "{} = {}", e.path, e.value);
            let same = LAYOUT
                .iter()
                .filter(|o| o.class == e.class && o.name() == e.name())
                .count();
            assert_eq!(
                same,
                1,
                "{} appears {same} times in {:?}",
                e.name(),
                e.class
            );
            assert!(CLASSES.iter().any(|(c, _)| *c == e.class), "{}", e.class);
        }
        // Java finds a metric's chunk and cell by shift and mask.
        assert!(ring::CHUNK_CELLS.is_power_of_two());
    }
}
