//! `docs/PROTOCOL.md` states the layouts (the time page, the name record, the
//! statistics segment) as tables of `offset | size | field` rows. The tests
//! that hold those tables to the code read them with this.
//!
//! Every table must tile its range: rows follow each other without gap or
//! overlap (unused bytes are rows whose field is in parentheses), so a word
//! added to the layout but not to the document fails a [`check`].

use std::collections::BTreeMap;
use std::path::Path;

/// One `offset | size | field` row.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Row {
    pub offset: usize,
    pub size: usize,
    pub field: String,
}

impl Row {
    /// Rows whose field is in parentheses describe bytes no field uses.
    pub fn is_filler(&self) -> bool {
        self.field.starts_with('(')
    }
}

/// The text of `docs/PROTOCOL.md`.
pub fn document() -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/PROTOCOL.md");
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}

/// The lines after the heading `heading` (its text without the `#`s).
pub fn after<'a>(doc: &'a str, heading: &str) -> impl Iterator<Item = &'a str> {
    let mut lines = doc.lines();
    lines
        .by_ref()
        .find(|l| l.starts_with('#') && l.trim_start_matches('#').trim() == heading)
        .unwrap_or_else(|| panic!("docs/PROTOCOL.md has no heading {heading:?}"));
    lines
}

/// The cells of a table line, trimmed.
pub fn cells(line: &str) -> Vec<String> {
    line.trim()
        .trim_matches('|')
        .split('|')
        .map(|c| c.trim().to_string())
        .collect()
}

/// A cell's number: decimal, or hexadecimal after `0x`; backquotes allowed.
pub fn number(cell: &str, heading: &str) -> usize {
    let cell = cell.trim().trim_matches('`');
    let parsed = match cell.strip_prefix("0x") {
        Some(hex) => usize::from_str_radix(hex, 16),
        None => cell.parse(),
    };
    parsed.unwrap_or_else(|_| panic!("under {heading:?}: {cell:?} is not a number"))
}

/// The first `offset | size | field` table after the heading `heading`.
pub fn table(doc: &str, heading: &str) -> Vec<Row> {
    let mut lines = after(doc, heading).skip_while(|l| !l.starts_with('|'));
    let head = cells(lines.next().unwrap_or_default());
    assert!(
        head.len() >= 3 && head[..3] == ["offset", "size", "field"],
        "the table under {heading:?} must start with columns offset | size | field, has {head:?}"
    );
    lines.next(); // the alignment row
    lines
        .take_while(|l| l.starts_with('|'))
        .map(|l| {
            let c = cells(l);
            Row {
                offset: number(&c[0], heading),
                size: number(&c[1], heading),
                field: c[2].trim_matches('`').to_string(),
            }
        })
        .collect()
}

/// The first two-column table after the heading `heading` (a table of
/// constants: name, value), backquotes removed.
pub fn constants(doc: &str, heading: &str) -> BTreeMap<String, String> {
    after(doc, heading)
        .skip_while(|l| !l.starts_with('|'))
        .skip(2)
        .take_while(|l| l.starts_with('|'))
        .map(|l| {
            let c = cells(l);
            (
                c[0].trim_matches('`').to_string(),
                c[1].trim_matches('`').to_string(),
            )
        })
        .collect()
}

/// Checks that the rows under `heading` tile `start..end` and that their named
/// fields are exactly `expected` (name, offset, size).
pub fn check(
    doc: &str,
    heading: &str,
    start: usize,
    end: usize,
    expected: &[(&str, usize, usize)],
) {
    let rows = table(doc, heading);
    let mut at = start;
    for r in &rows {
        assert_eq!(
            r.offset, at,
            "under {heading:?}: row {r:?} should start at {at} (rows must follow each other)"
        );
        at = r.offset + r.size;
    }
    assert_eq!(
        at, end,
        "under {heading:?}: the rows end at {at}, the layout at {end}"
    );
    let documented: BTreeMap<&str, (usize, usize)> = rows
        .iter()
        .filter(|r| !r.is_filler())
        .map(|r| (r.field.as_str(), (r.offset, r.size)))
        .collect();
    let code: BTreeMap<&str, (usize, usize)> = expected
        .iter()
        .map(|&(name, offset, size)| (name, (offset, size)))
        .collect();
    for (name, got) in &documented {
        match code.get(name) {
            Some(want) => assert_eq!(
                got, want,
                "under {heading:?}: field {name} is documented at (offset, size) {got:?}, the \
                 code has {want:?}"
            ),
            None => panic!("under {heading:?}: the document names a field {name} the code has not"),
        }
    }
    for name in code.keys() {
        assert!(
            documented.contains_key(name),
            "under {heading:?}: field {name} of the code is missing from the document"
        );
    }
}

/// Where the document puts field `field` in the table under `heading`:
/// (offset, size).
pub fn place(doc: &str, heading: &str, field: &str) -> (usize, usize) {
    table(doc, heading)
        .into_iter()
        .find(|r| r.field == field)
        .map(|r| (r.offset, r.size))
        .unwrap_or_else(|| panic!("under {heading:?}: no field {field}"))
}

/// The word of 4 or 8 bytes at `at` (offset, size) of `bytes`, native order.
pub fn u64_at(bytes: &[u8], at: (usize, usize)) -> u64 {
    match at.1 {
        4 => u32::from_ne_bytes(bytes[at.0..at.0 + 4].try_into().unwrap()) as u64,
        8 => u64::from_ne_bytes(bytes[at.0..at.0 + 8].try_into().unwrap()),
        n => panic!("a word of {n} bytes"),
    }
}
