//! Keeps the committed C header in step with the Rust source it is generated from.

use std::path::{Path, PathBuf};

fn crate_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn committed_header() -> PathBuf {
    crate_dir().join("../../include/hrts.h")
}

/// The header cbindgen generates from this crate today.
fn generate() -> String {
    let dir = crate_dir();
    let config = cbindgen::Config::from_file(dir.join("cbindgen.toml"))
        .unwrap_or_else(|e| panic!("native/capi/cbindgen.toml: {e}"));
    let bindings = cbindgen::Builder::new()
        .with_crate(&dir)
        .with_config(config)
        .generate()
        .unwrap_or_else(|e| panic!("cbindgen could not generate the header: {e}"));
    let mut out = Vec::new();
    bindings.write(&mut out);
    String::from_utf8(out).expect("cbindgen writes UTF-8")
}

fn first_difference(a: &str, b: &str) -> String {
    let line = a
        .lines()
        .zip(b.lines())
        .position(|(x, y)| x != y)
        .unwrap_or_else(|| a.lines().count().min(b.lines().count()));
    let show = |s: &str| s.lines().nth(line).unwrap_or("<end of file>").to_string();
    format!(
        "first difference at line {}:\n  committed: {}\n  generated: {}",
        line + 1,
        show(a),
        show(b)
    )
}

#[test]
fn header_is_fresh() {
    let generated = generate();
    let path = committed_header();
    if std::env::var_os("HRTS_BLESS").is_some_and(|v| v == "1") {
        std::fs::write(&path, &generated)
            .unwrap_or_else(|e| panic!("cannot write {}: {e}", path.display()));
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == generated,
        "include/hrts.h is out of date with native/capi ({}).\n\
         Regenerate it with `HRTS_BLESS=1 cargo test -p hrts-capi header_is_fresh` and commit it.",
        first_difference(&committed, &generated)
    );
}

#[test]
fn header_declares_every_export() {
    let header = generate();
    let mut source = String::new();
    for entry in std::fs::read_dir(crate_dir().join("src")).unwrap() {
        source += &std::fs::read_to_string(entry.unwrap().path()).unwrap();
    }
    let exports: Vec<&str> = source
        .split("extern \"C\" fn ")
        .skip(1)
        .map(|rest| rest.split('(').next().unwrap())
        .collect();
    // 25 default-segment and library-wide functions, 18 on segment handles.
    assert!(exports.len() >= 43, "found only {exports:?}");
    assert!(exports.contains(&"hrts_segment_open"), "{exports:?}");
    for name in exports {
        assert!(
            header.contains(&format!("{name}(")),
            "{name} missing from the header"
        );
    }
    assert!(Path::new(&committed_header()).parent().unwrap().is_dir());
}
