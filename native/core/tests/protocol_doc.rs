//! `docs/PROTOCOL.md` states the time page, the name record and the sequence
//! file as tables of `offset | size | field` rows. This test keeps those tables
//! equal to the code:
//!
//! - the header, slot and extension tables against `offset_of!` and `size_of`
//!   of the structs in `src/segment/layout.rs` (the file is compiled into this
//!   test, so its private layout is reachable without exporting it);
//! - the name record, the page's storage tag and the sequence file against what
//!   the library really writes: a segment is created, and the bytes at each
//!   documented offset are compared with the values the public API reports.
//!
//! Every table must tile its range: rows follow each other without gap or
//! overlap (unused bytes are rows whose field is in parentheses), so a field
//! added to a struct but not to the document fails here too.

use hrts_test_support::protocol_doc::{check, constants, document, place, u64_at};
use std::collections::BTreeMap;

/// What `layout.rs` reaches as `crate::storage`.
mod storage {
    pub use hrts_core::storage::*;
}

#[allow(dead_code, unused_imports)]
#[path = "../src/segment/layout.rs"]
mod layout;

use layout::{
    BoundArea, DisruptionArea, Extension, Header, HostArea, MinorArea, OrderedArea, Slot,
    StatsArea, BOUND_AREA_OFFSET, DISRUPTION_AREA_OFFSET, EXTENSION_OFFSET, HOST_AREA_OFFSET,
    MINOR_OFFSET, ORDERED_AREA_OFFSET, SEGMENT_SIZE, STATS_AREA_OFFSET,
};
use std::mem::{offset_of, size_of};

// ---------------------------------------------------------------- the document

/// The size of what `f` borrows: a field's size without an instance.
fn size_of_field<T, F>(_: impl Fn(&T) -> &F) -> usize {
    size_of::<F>()
}

macro_rules! field {
    ($t:ty, $f:ident) => {
        (
            stringify!($f),
            offset_of!($t, $f),
            size_of_field(|x: &$t| &x.$f),
        )
    };
    // A field wrapped in `Hot` (its own cache line): the word itself.
    ($t:ty, * $f:ident) => {
        (
            stringify!($f),
            offset_of!($t, $f),
            size_of_field(|x: &$t| &*x.$f),
        )
    };
}

const PAGE: &str = "Time page";
const HEADER: &str = "Time page header";
const SLOT: &str = "Base slot";
const EXTENSION: &str = "Extension area";
const MINOR: &str = "Minor version area";
const RECORD: &str = "Name record";

// ---------------------------------------------------------------- the structs

#[test]
fn the_time_page_tables_match_the_layout() {
    let doc = document();
    let header = size_of::<Header>();
    let tag = SEGMENT_SIZE - hrts_core::storage::shm::TAG_LEN;
    check(
        &doc,
        PAGE,
        0,
        SEGMENT_SIZE,
        &[
            ("header", 0, header),
            ("extension", EXTENSION_OFFSET, size_of::<Extension>()),
            ("minor", MINOR_OFFSET, size_of::<MinorArea>()),
            ("host", HOST_AREA_OFFSET, size_of::<HostArea>()),
            ("stats", STATS_AREA_OFFSET, size_of::<StatsArea>()),
            ("bound", BOUND_AREA_OFFSET, size_of::<BoundArea>()),
            ("ordered", ORDERED_AREA_OFFSET, size_of::<OrderedArea>()),
            (
                "disruption",
                DISRUPTION_AREA_OFFSET,
                size_of::<DisruptionArea>(),
            ),
            ("tag", tag, 8),
        ],
    );
    let slots = offset_of!(Header, slots);
    check(
        &doc,
        HEADER,
        0,
        header,
        &[
            field!(Header, magic),
            field!(Header, layout_version),
            field!(Header, header_size),
            field!(Header, segment_size),
            field!(Header, state),
            field!(Header, init_started_ns),
            field!(Header, creator_pid),
            field!(Header, creator_uid),
            field!(Header, source_id),
            field!(Header, shift),
            field!(Header, freq_hz),
            field!(Header, mult),
            field!(Header, max_delta),
            field!(Header, wrap_threshold),
            field!(Header, calib_spread_ppb),
            field!(Header, calib_elapsed_ns),
            field!(Header, calibrations),
            field!(Header, eval_monotonic),
            field!(Header, eval_max_shift_ns),
            field!(Header, eval_cpus),
            field!(Header, reason_len),
            field!(Header, reason),
            field!(Header, created_realtime_ns),
            field!(Header, moves),
            field!(Header, writer_start_time),
            field!(Header, mode),
            field!(Header, eval_pace),
            field!(Header, eval_pace_ppb),
            field!(Header, tie_interval_ns),
            field!(Header, max_slew_ppb),
            field!(Header, step_ns),
            field!(Header, header_check),
            field!(Header, ties),
            field!(Header, steps),
            field!(Header, last_step_ns),
            field!(Header, largest_step_ns),
            field!(Header, repairs),
            field!(Header, last_offset_ns),
            field!(Header, reach),
            field!(Header, *seq),
            ("slots[0]", slots, size_of::<Slot>()),
            ("slots[1]", slots + size_of::<Slot>(), size_of::<Slot>()),
        ],
    );
    check(
        &doc,
        SLOT,
        0,
        size_of::<Slot>(),
        &[
            field!(Slot, counter),
            field!(Slot, ns),
            field!(Slot, frac),
            field!(Slot, mult),
            field!(Slot, generation),
            field!(Slot, freq_mult),
            field!(Slot, rate_mult),
            field!(Slot, residual),
            field!(Slot, tie_ns),
            field!(Slot, written),
            field!(Slot, check),
            field!(Slot, quick),
        ],
    );
    // The extension's table gives offsets in the page.
    let ext = |f: (&'static str, usize, usize)| (f.0, EXTENSION_OFFSET + f.1, f.2);
    check(
        &doc,
        EXTENSION,
        EXTENSION_OFFSET,
        EXTENSION_OFFSET + size_of::<Extension>(),
        &[
            ext(field!(Extension, *last_unique)),
            ext(field!(Extension, *seq_next)),
            ext(field!(Extension, seq_limit)),
            ext(field!(Extension, seq_ready)),
            ext(field!(Extension, _reserved)),
            ext(field!(Extension, seq_interval)),
            ext(field!(Extension, seq_start)),
            ext(field!(Extension, seq_start_check)),
            ext(field!(Extension, seq_limit_check)),
            ext(field!(Extension, seq_file_id)),
            ext(field!(Extension, seq_file_id_check)),
        ],
    );
    let minor = |f: (&'static str, usize, usize)| (f.0, MINOR_OFFSET + f.1, f.2);
    check(
        &doc,
        MINOR,
        MINOR_OFFSET,
        MINOR_OFFSET + size_of::<MinorArea>(),
        &[
            minor(field!(MinorArea, layout_minor)),
            minor(field!(MinorArea, _reserved)),
        ],
    );
    let host = |f: (&'static str, usize, usize)| (f.0, HOST_AREA_OFFSET + f.1, f.2);
    check(
        &doc,
        "Host area",
        HOST_AREA_OFFSET,
        HOST_AREA_OFFSET + size_of::<HostArea>(),
        &[
            host(field!(HostArea, daemon_pid)),
            host(field!(HostArea, untied_rounds)),
            host(field!(HostArea, daemon_started_ns)),
            host(field!(HostArea, heartbeat_ns)),
            host(field!(HostArea, round_ns)),
            host(field!(HostArea, restarts)),
        ],
    );
    check(
        &doc,
        "Statistics check",
        STATS_AREA_OFFSET,
        STATS_AREA_OFFSET + size_of::<StatsArea>(),
        &[(
            "stats_check",
            STATS_AREA_OFFSET + offset_of!(StatsArea, stats_check),
            8,
        )],
    );
    let bound = |f: (&'static str, usize, usize)| (f.0, BOUND_AREA_OFFSET + f.1, f.2);
    check(
        &doc,
        "Bound area",
        BOUND_AREA_OFFSET,
        BOUND_AREA_OFFSET + size_of::<BoundArea>(),
        &[
            bound(field!(BoundArea, version)),
            bound(field!(BoundArea, bound_ns)),
            bound(field!(BoundArea, as_of)),
            bound(field!(BoundArea, drift_ppb)),
            bound(field!(BoundArea, line_error_ns)),
            bound(field!(BoundArea, state)),
            bound(field!(BoundArea, fresh_ns)),
            bound(field!(BoundArea, void_ns)),
        ],
    );
    let ordered = |f: (&'static str, usize, usize)| (f.0, ORDERED_AREA_OFFSET + f.1, f.2);
    check(
        &doc,
        "Ordered read",
        ORDERED_AREA_OFFSET,
        ORDERED_AREA_OFFSET + size_of::<OrderedArea>(),
        &[
            ordered(field!(OrderedArea, ordered_read)),
            ordered(field!(OrderedArea, _reserved)),
        ],
    );
    let disruption = |f: (&'static str, usize, usize)| (f.0, DISRUPTION_AREA_OFFSET + f.1, f.2);
    check(
        &doc,
        "Disruption area",
        DISRUPTION_AREA_OFFSET,
        DISRUPTION_AREA_OFFSET + size_of::<DisruptionArea>(),
        &[
            disruption(field!(DisruptionArea, disruptions)),
            disruption(field!(DisruptionArea, last_disruption_ns)),
            disruption(field!(DisruptionArea, last_kind)),
            disruption(field!(DisruptionArea, phase)),
        ],
    );
}

#[test]
fn the_constants_match_the_layout() {
    let doc = document();
    let got = constants(&doc, "Time page constants");
    let want: BTreeMap<String, String> = [
        ("MAGIC", format!("{:#018x}", layout::MAGIC)),
        ("LAYOUT_VERSION", layout::LAYOUT_VERSION.to_string()),
        ("SEGMENT_SIZE", SEGMENT_SIZE.to_string()),
        ("REASON_LEN", layout::REASON_LEN.to_string()),
        ("EXTENSION_OFFSET", EXTENSION_OFFSET.to_string()),
        ("LAYOUT_MINOR", layout::LAYOUT_MINOR.to_string()),
        ("MINOR_OFFSET", MINOR_OFFSET.to_string()),
        (
            "MINOR_FIELDS_OFFSET",
            layout::MINOR_FIELDS_OFFSET.to_string(),
        ),
        ("SEQ_ONE", format!("{:#x}", layout::SEQ_ONE)),
        ("SEQ_STALE", format!("{:#x}", layout::SEQ_STALE)),
        ("STATE_EMPTY", hrts_core::storage::STATE_EMPTY.to_string()),
        (
            "STATE_INITIALISING",
            hrts_core::storage::STATE_INITIALISING.to_string(),
        ),
        ("STATE_READY", layout::STATE_READY.to_string()),
        (
            "MODE_TRACKING",
            (hrts_core::Mode::Tracking as u32).to_string(),
        ),
        ("MODE_FROZEN", (hrts_core::Mode::Frozen as u32).to_string()),
        ("PACE_NOT_RUN", layout::PACE_NOT_RUN.to_string()),
        ("PACE_SAME", layout::PACE_SAME.to_string()),
        ("PACE_DIFFERS", layout::PACE_DIFFERS.to_string()),
        ("PACE_STUCK", layout::PACE_STUCK.to_string()),
        ("EVAL_NOT_RUN", layout::EVAL_NOT_RUN.to_string()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    assert_eq!(got, want, "the table under \"Time page constants\"");
}

// ---------------------------------------------------------------- what is written

/// A segment name of this test alone, removed when dropped.
struct Scratch {
    name: String,
    dir: std::path::PathBuf,
}

impl Scratch {
    fn new(tag: &str) -> Scratch {
        let name = format!("/hrts-coretest-{}-protocoldoc-{tag}", std::process::id());
        let dir = std::env::temp_dir().join(format!("hrts-coretest{name}").replace('/', "-"));
        let _ = hrts_core::SharedBase::unlink(&name);
        Scratch { name, dir }
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = hrts_core::SharedBase::unlink(&self.name);
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// FNV-1a, 64 bits, as the document states it for the page tag and the
/// sequence file's check line.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

#[test]
fn the_name_record_and_the_page_hold_what_the_document_says() {
    let doc = document();
    let s = Scratch::new("record");
    let mut cfg = hrts_core::Config::named(&s.name);
    cfg.evaluate_reliability = false;
    cfg.seq_file = Some(s.dir.join("numbers.seq"));
    cfg.seq_interval = 7;
    let base = hrts_core::SharedBase::open(&cfg).unwrap();

    // The record: read from the name object's bytes.
    let record = std::fs::read(format!("/dev/shm{}", s.name)).unwrap();
    assert_eq!(record.len(), hrts_core::storage::NAME_SIZE);
    let rec = |f: &str| u64_at(&record, place(&doc, RECORD, f));
    let cname = hrts_core::storage::shm::validate_name(&s.name).unwrap();
    let fd = hrts_core::storage::shm::open_existing(&cname)
        .unwrap()
        .unwrap();
    let parsed = hrts_core::storage::shm::read_record(&fd).unwrap();
    let me = std::process::id();
    assert_eq!(rec("magic"), layout::MAGIC);
    assert_eq!(rec("layout_version"), layout::LAYOUT_VERSION as u64);
    assert_eq!(rec("header_size"), size_of::<Header>() as u64);
    assert_eq!(rec("segment_size"), SEGMENT_SIZE as u64);
    assert_eq!(
        rec("state"),
        hrts_core::storage::state_word(layout::STATE_READY, me)
    );
    assert_eq!(rec("shmid"), parsed.page.shmid as u32 as u64);
    assert_eq!(rec("cpid"), me as u64);
    assert_eq!(rec("cpid"), parsed.page.cpid as u64);
    assert_eq!(rec("ctime"), parsed.page.ctime as u64);
    let ns = std::fs::metadata("/proc/thread-self/ns/ipc").unwrap();
    assert_eq!(rec("ipc_ns"), std::os::unix::fs::MetadataExt::ino(&ns));
    assert_eq!(rec("ipc_ns_dev"), std::os::unix::fs::MetadataExt::dev(&ns));
    assert_eq!(
        parsed.page.ns,
        hrts_core::storage::shm::IpcNamespace::current().unwrap()
    );
    check(
        &doc,
        RECORD,
        0,
        hrts_core::storage::NAME_SIZE,
        &[
            ("magic", hrts_core::storage::shm::REC_MAGIC, 8),
            ("layout_version", hrts_core::storage::shm::REC_VERSION, 4),
            ("header_size", hrts_core::storage::shm::REC_HEADER_SIZE, 4),
            ("segment_size", hrts_core::storage::shm::REC_SEGMENT_SIZE, 8),
            ("state", hrts_core::storage::shm::REC_STATE, 8),
            ("shmid", place(&doc, RECORD, "shmid").0, 4),
            ("cpid", place(&doc, RECORD, "cpid").0, 4),
            ("ctime", place(&doc, RECORD, "ctime").0, 8),
            ("ipc_ns", place(&doc, RECORD, "ipc_ns").0, 8),
            ("ipc_ns_dev", place(&doc, RECORD, "ipc_ns_dev").0, 8),
        ],
    );

    // The page the record names, read at the document's offsets.
    let page = hrts_core::storage::shm::Page::attach(
        &s.name,
        &layout::SPEC,
        parsed.page,
        hrts_core::Sharing::Private,
    )
    .unwrap()
    .unwrap();
    let unique = base.next_unique().unwrap();
    let number = base.next_sequence().unwrap();
    let mut bytes = vec![0u8; SEGMENT_SIZE];
    for (i, b) in bytes.iter_mut().enumerate() {
        // SAFETY: the page is SEGMENT_SIZE bytes and stays attached while `page`
        // lives; nothing else writes it now (this test's segment, no stamps run).
        *b = unsafe { page.as_ptr().add(i).read_volatile() };
    }
    let header = |f: &str| u64_at(&bytes, place(&doc, HEADER, f));
    let info = base.info();
    assert_eq!(header("magic"), layout::MAGIC);
    assert_eq!(header("layout_version"), layout::LAYOUT_VERSION as u64);
    assert_eq!(header("state"), rec("state"));
    assert_eq!(header("creator_pid"), me as u64);
    assert_eq!(header("source_id"), info.source as u64);
    assert_eq!(header("freq_hz"), base.frequency());
    assert_eq!(header("mult"), info.mult);
    assert_eq!(header("shift"), info.shift as u64);
    assert_eq!(header("wrap_threshold"), base.wrap_threshold());
    assert_eq!(header("mode"), hrts_core::Mode::Tracking as u64);
    let seq = header("seq");
    assert_eq!(seq & 0xffff_ffff, 0, "no writer holds the role");
    let active = place(&doc, HEADER, &format!("slots[{}]", (seq >> 32) & 1)).0;
    let slot = |f: &str| {
        let (o, n) = place(&doc, SLOT, f);
        u64_at(&bytes, (active + o, n))
    };
    let b = base.base();
    assert_eq!(
        [
            slot("counter"),
            slot("ns"),
            slot("frac"),
            slot("mult"),
            slot("generation")
        ],
        [b.counter, b.ns, b.frac, b.mult, b.generation]
    );
    assert_eq!(slot("written"), seq >> 32);
    // The quick word as the document states it.
    let quick = b.counter
        ^ b.ns.rotate_left(16)
        ^ b.frac.rotate_left(32)
        ^ b.mult.rotate_left(48)
        ^ u64::from_le_bytes(*b"hrtsQUIK");
    assert_eq!(slot("quick"), quick);
    let ext = |f: &str| u64_at(&bytes, place(&doc, EXTENSION, f));
    assert_eq!(ext("last_unique"), unique);
    // The counter word as docs/PROTOCOL.md states it: offset 1 of the block
    // starting at `number`, and its check.
    let counter_word = |start: u64, offset: u32| {
        let mut h = start ^ 0x7365_7163_6865_636b;
        h = (h ^ (h >> 33)).wrapping_mul(0xff51_afd7_ed55_8ccd);
        h ^= h >> 33;
        let check = (h as u32) ^ offset.wrapping_mul(0x9e37_79b1).rotate_left(16);
        (offset as u64) << 32 | check as u64
    };
    assert_eq!(ext("seq_next"), counter_word(number, 1));
    assert_eq!(ext("seq_start"), number);
    assert_eq!(ext("seq_limit"), number + 7);
    assert_eq!(ext("seq_start_check"), !number);
    assert_eq!(ext("seq_limit_check"), !(number + 7));
    assert_eq!(ext("seq_file_id_check"), !ext("seq_file_id"));
    let minor = |f: &str| u64_at(&bytes, place(&doc, MINOR, f));
    assert_eq!(minor("layout_minor"), layout::LAYOUT_MINOR as u64);
    assert_eq!(minor("_reserved"), 0);
    let ordered = |f: &str| u64_at(&bytes, place(&doc, "Ordered read", f));
    assert_eq!(ordered("ordered_read"), base.ordered_read().code() as u64);
    assert_eq!(ordered("_reserved"), 0);

    // The storage tag: FNV-1a of the owner's uid (4 bytes, little-endian) and
    // the name; its low 32 bits are the page's System V key.
    let uid = hrts_core::process::euid();
    let hash = fnv1a(&[&uid.to_le_bytes()[..], s.name.as_bytes()].concat());
    assert_eq!(u64_at(&bytes, place(&doc, PAGE, "tag")), hash);
    let key = match hash as u32 as libc::key_t {
        0 => 1,
        k => k,
    };
    // SAFETY: a plain lookup (no IPC_CREAT): creates nothing.
    let shmid = unsafe { libc::shmget(key, 0, 0) };
    assert_eq!(shmid, parsed.page.shmid, "the page is found by its key");

    // The sequence file: the document's example, and the file just written.
    let text = std::fs::read_to_string(s.dir.join("numbers.seq")).unwrap();
    check_sequence_file(&doc, &text, number + 7);
}

/// The sequence file `text` has the shape of the document's example, holds
/// `next` and carries the FNV-1a check of its first two lines.
fn check_sequence_file(doc: &str, text: &str, next: u64) {
    let example = doc
        .split("```text\nhrts-sequence 2\n")
        .nth(1)
        .and_then(|rest| rest.split("```").next())
        .map(|rest| format!("hrts-sequence 2\n{rest}"))
        .expect("docs/PROTOCOL.md shows a sequence file (```text, first line hrts-sequence 2)");
    for file in [example.as_str(), text] {
        let lines: Vec<&str> = file.lines().collect();
        assert_eq!(lines.len(), 3, "{file:?}");
        assert_eq!(lines[0], "hrts-sequence 2", "{file:?}");
        assert!(lines[1].starts_with("next "), "{file:?}");
        let body = format!("{}\n{}\n", lines[0], lines[1]);
        assert_eq!(
            lines[2],
            format!("check {:016x}", fnv1a(body.as_bytes())),
            "{file:?}"
        );
    }
    assert_eq!(text.lines().nth(1), Some(format!("next {next}").as_str()));
}
