//! `docs/PROTOCOL.md` states the statistics segment as tables of
//! `offset | size | field` rows. This test keeps those tables equal to the
//! code: `src/shared/layout.rs` and `src/shared/codec.rs` are compiled into
//! this test (so their private constants are reachable without exporting
//! them), every row is compared with them, a real segment's header is read at
//! the documented offsets, and a payload the codec encodes is read back at the
//! documented offsets.
//!
//! Every table must tile its range: rows follow each other without gap or
//! overlap (unused bytes are rows whose field is in parentheses), so a word
//! added to the layout but not to the document fails here too.

use hrts_test_support::protocol_doc::{check, constants, document, place, u64_at};
use std::collections::BTreeMap;

// What `layout.rs` and `codec.rs` reach as `super::…` and `crate::…`.
use hrts_stats::shared::{ENV_GROUP, ENV_SEGMENT};
use hrts_stats::Kind;
mod registry {
    pub use hrts_stats::registry::MAX_NAME_LEN;
}
mod dump {
    pub use hrts_stats::dump::*;
}
mod incremental {
    pub use hrts_stats::incremental::*;
}

#[allow(dead_code, unused_imports)]
#[path = "../src/shared/layout.rs"]
mod layout;

#[allow(dead_code, unused_imports)]
#[path = "../src/shared/codec.rs"]
mod codec;

use hrts_core::storage::shm;
use layout::{cell, header, instance, process};

// ---------------------------------------------------------------- the document

const PAGE: &str = "Statistics page";
const HEADER: &str = "Statistics header";
const PROCESS: &str = "Process slot";
const INSTANCE: &str = "Timer instance";
const CELL: &str = "Metric cell";
const PAYLOAD: &str = "Payload";
const SET: &str = "Statistics set";

/// A word index of a table as (offset, size) in bytes.
fn word(name: &'static str, index: usize) -> (&'static str, usize, usize) {
    (name, index * 8, 8)
}

// ---------------------------------------------------------------- the layout

#[test]
fn the_statistics_tables_match_the_layout() {
    let doc = document();
    let tag = layout::SEGMENT_SIZE - shm::TAG_LEN;
    check(
        &doc,
        PAGE,
        0,
        layout::SEGMENT_SIZE,
        &[
            ("header", 0, layout::HEADER_BYTES),
            (
                "processes",
                layout::PROCESSES_OFFSET,
                layout::INSTANCES_OFFSET - layout::PROCESSES_OFFSET,
            ),
            (
                "instances",
                layout::INSTANCES_OFFSET,
                layout::CELLS_OFFSET - layout::INSTANCES_OFFSET,
            ),
            (
                "cells",
                layout::CELLS_OFFSET,
                layout::CELLS * layout::CELL_BYTES,
            ),
            ("tag", tag, 8),
        ],
    );
    check(
        &doc,
        HEADER,
        0,
        layout::HEADER_BYTES,
        &[
            ("magic", shm::REC_MAGIC, 8),
            ("layout_version", shm::REC_VERSION, 4),
            ("header_size", shm::REC_HEADER_SIZE, 4),
            ("segment_size", shm::REC_SEGMENT_SIZE, 8),
            ("state", shm::REC_STATE, 8),
            word("process_slots", header::PROCESS_SLOTS),
            word("instance_slots", header::INSTANCE_SLOTS),
            word("cells", header::CELLS),
            word("cell_words", header::CELL_WORDS),
            word("registrations", header::REGISTRATIONS),
        ],
    );
    check(
        &doc,
        PROCESS,
        0,
        layout::PROCESS_SLOT_WORDS * 8,
        &[
            word("state", process::STATE),
            word("pid", process::PID),
            word("start_time", process::START_TIME),
            word("instance", process::INSTANCE),
            word("gone_since", process::GONE_SINCE),
            word("check", process::CHECK),
            word("published_seq", process::PUBLISHED_SEQ),
            ("program", process::PROGRAM * 8, layout::PROGRAM_BYTES),
            word("published[0]", process::PUBLISHED),
            word("published_check[0]", process::PUBLISHED + 1),
            word("published[1]", process::PUBLISHED + 2),
            word("published_check[1]", process::PUBLISHED + 3),
            (
                "instance_id",
                process::INSTANCE_ID * 8,
                layout::INSTANCE_ID_BYTES,
            ),
        ],
    );
    check(
        &doc,
        INSTANCE,
        0,
        layout::INSTANCE_SLOT_WORDS * 8,
        &[
            word("key", instance::KEY),
            word("start", instance::START),
            word("pid", instance::PID),
        ],
    );
    let buffer = layout::PAYLOAD_WORDS * 8;
    check(
        &doc,
        CELL,
        0,
        layout::CELL_BYTES,
        &[
            word("owner", cell::OWNER),
            word("descriptor", cell::DESCRIPTOR),
            ("name", cell::NAME * 8, layout::NAME_BYTES),
            word("seq", cell::SEQ),
            ("buffers[0]", cell::BUFFERS * 8, buffer),
            word("checks[0]", cell::BUFFERS + layout::PAYLOAD_WORDS),
            (
                "buffers[1]",
                (cell::BUFFERS + layout::BUFFER_WORDS) * 8,
                buffer,
            ),
            word(
                "checks[1]",
                cell::BUFFERS + layout::BUFFER_WORDS + layout::PAYLOAD_WORDS,
            ),
        ],
    );
    let set = layout::STATS_WORDS * 8;
    check(
        &doc,
        PAYLOAD,
        0,
        buffer,
        &[
            word("timestamp", 0),
            word("value", 1),
            ("sets[0]", 16, set),
            ("sets[1]", 16 + set, set),
            ("sets[2]", 16 + 2 * set, set),
            ("sets[3]", 16 + 3 * set, set),
        ],
    );
    let keys: Vec<(&str, usize, usize)> = hrts_stats::dump::STATISTICS_KEYS
        .iter()
        .enumerate()
        .map(|(i, &k)| (k, i * 8, 8))
        .collect();
    assert_eq!(keys.len(), layout::STATS_WORDS);
    check(&doc, SET, 0, set, &keys);
}

#[test]
fn the_constants_match_the_layout() {
    let doc = document();
    let got = constants(&doc, "Statistics constants");
    let want: BTreeMap<String, String> = [
        ("MAGIC", format!("{:#018x}", layout::MAGIC)),
        ("LAYOUT_VERSION", layout::LAYOUT_VERSION.to_string()),
        ("HEADER_BYTES", layout::HEADER_BYTES.to_string()),
        ("PROCESS_SLOTS", layout::PROCESS_SLOTS.to_string()),
        ("INSTANCE_SLOTS", layout::INSTANCE_SLOTS.to_string()),
        ("CELLS", layout::CELLS.to_string()),
        ("CELL_BYTES", layout::CELL_BYTES.to_string()),
        ("PAYLOAD_WORDS", layout::PAYLOAD_WORDS.to_string()),
        ("SEGMENT_SIZE", layout::SEGMENT_SIZE.to_string()),
        ("PROBE", layout::PROBE.to_string()),
        ("PHASE_FREE", layout::PHASE_FREE.to_string()),
        ("PHASE_CLAIMED", layout::PHASE_CLAIMED.to_string()),
        ("PHASE_LIVE", layout::PHASE_LIVE.to_string()),
        ("PHASE_RECLAIMING", layout::PHASE_RECLAIMING.to_string()),
        ("KIND_COUNTER", layout::KIND_COUNTER.to_string()),
        ("KIND_GAUGE", layout::KIND_GAUGE.to_string()),
        ("KIND_TIMER", layout::KIND_TIMER.to_string()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    assert_eq!(got, want, "the table under \"Statistics constants\"");
}

// ---------------------------------------------------------------- what is written

/// A segment name of this test alone, removed when dropped.
struct Scratch(String);

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = hrts_stats::shared::StatsSegment::unlink(&self.0);
    }
}

#[test]
fn a_new_segment_holds_its_header_where_the_document_says() {
    let doc = document();
    let name = Scratch(format!(
        "/hrts-statstest-{}-protocoldoc",
        std::process::id()
    ));
    let _ = hrts_stats::shared::StatsSegment::unlink(&name.0);
    let cfg = hrts_stats::shared::SharedConfig {
        name: name.0.clone(),
        sharing: hrts_core::Sharing::Private,
        grace: std::time::Duration::from_secs(60),
        program: "protocol_doc".into(),
        instance_id: String::new(),
    };
    let _seg = hrts_stats::shared::StatsSegment::open(&cfg).unwrap();
    let page = hrts_core::storage::attach_existing(&layout::SPEC, &name.0, None)
        .unwrap()
        .unwrap();
    let mut bytes = vec![0u8; layout::HEADER_BYTES];
    for (i, b) in bytes.iter_mut().enumerate() {
        // SAFETY: the page is SEGMENT_SIZE (> HEADER_BYTES) bytes and stays
        // attached while `page` lives; the header no longer changes once ready.
        *b = unsafe { page.as_ptr().add(i).read_volatile() };
    }
    let h = |f: &str| u64_at(&bytes, place(&doc, HEADER, f));
    assert_eq!(h("magic"), layout::MAGIC);
    assert_eq!(h("layout_version"), layout::LAYOUT_VERSION as u64);
    assert_eq!(h("header_size"), layout::HEADER_BYTES as u64);
    assert_eq!(h("segment_size"), layout::SEGMENT_SIZE as u64);
    assert_eq!(
        h("state"),
        hrts_core::storage::state_word(hrts_core::storage::STATE_READY, std::process::id())
    );
    assert_eq!(h("process_slots"), layout::PROCESS_SLOTS as u64);
    assert_eq!(h("instance_slots"), layout::INSTANCE_SLOTS as u64);
    assert_eq!(h("cells"), layout::CELLS as u64);
    assert_eq!(h("cell_words"), layout::CELL_WORDS as u64);
    assert_eq!(h("registrations"), 0);
}

fn statistics(k: f64) -> hrts_stats::Statistics {
    hrts_stats::Statistics {
        min: Some(k + 0.125),
        max: Some(k + 0.25),
        sum: k + 0.375,
        count: 1000 + k as u64,
        mean: Some(k + 0.5),
        moving_avg: None,
        interval_count: k + 0.625,
        interval_sum: k + 0.75,
        interval_mean: Some(k + 0.875),
        rate: k + 1.0625,
        quantiles: [Some(k + 1.125), Some(k + 1.25), None, Some(k + 1.5)],
    }
}

#[test]
fn a_payload_holds_its_words_where_the_document_says() {
    let doc = document();
    let sets = [
        statistics(10.0),
        statistics(20.0),
        statistics(30.0),
        statistics(40.0),
    ];
    let counter = hrts_stats::Metric::Counter(Box::new(hrts_stats::CounterDump {
        timestamp: 1_700_000_000_123_456_789,
        value: -42,
        values: sets[0].clone(),
        incr_deltas: sets[1].clone(),
        decr_deltas: sets[2].clone(),
        deltas: sets[3].clone(),
    }));
    let words = codec::encode(&counter);
    let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_ne_bytes()).collect();
    let p = |f: &str| u64_at(&bytes, place(&doc, PAYLOAD, f));
    assert_eq!(p("timestamp"), 1_700_000_000_123_456_789);
    assert_eq!(p("value") as i64, -42);
    for (i, s) in sets.iter().enumerate() {
        let (start, _) = place(&doc, PAYLOAD, &format!("sets[{i}]"));
        for (key, value) in hrts_stats::dump::STATISTICS_KEYS.iter().zip(s.fields()) {
            let (o, n) = place(&doc, SET, key);
            let got = u64_at(&bytes, (start + o, n));
            let want = if *key == "count" {
                s.count
            } else {
                value.unwrap_or(f64::NAN).to_bits()
            };
            assert_eq!(got, want, "sets[{i}].{key}");
        }
    }
    // Kinds and the descriptor's kind codes.
    assert_eq!(codec::kind_code(Kind::Counter), layout::KIND_COUNTER);
    assert_eq!(codec::kind_code(Kind::Gauge), layout::KIND_GAUGE);
    assert_eq!(codec::kind_code(Kind::Timer), layout::KIND_TIMER);
}
