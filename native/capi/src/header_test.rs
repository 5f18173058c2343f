//! Keeps the committed C header in step with the Rust source it is generated from.
//!
//! cbindgen reads the crate for the types, constants and their docs, and the
//! declarations of the exports from a source file written here from every
//! `c_calls!` block's `DECLARATIONS` (cbindgen does not see what a macro
//! generates; see `boundary`). The functions appear in the header in the order
//! of [`MODULES`], each module's in the order of its block.

use crate::boundary::Declaration;
use std::fmt::Write;
use std::path::{Path, PathBuf};

/// Every module with a `c_calls!` block, in the header's order.
const MODULES: &[(&str, &[Declaration])] = &[
    ("library", crate::library::DECLARATIONS),
    ("segments", crate::segments::DECLARATIONS),
    ("time", crate::time::DECLARATIONS),
    ("unique", crate::unique::DECLARATIONS),
    ("bounds", crate::bounds::DECLARATIONS),
    ("counter", crate::counter::DECLARATIONS),
    ("statistics", crate::statistics::DECLARATIONS),
    ("statistics::json", crate::statistics::json::DECLARATIONS),
    (
        "statistics::shared",
        crate::statistics::shared::DECLARATIONS,
    ),
    ("traces", crate::traces::DECLARATIONS),
];

fn crate_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn committed_header() -> PathBuf {
    crate_dir().join("../../include/hrts.h")
}

/// The exports' declarations as Rust source that cbindgen reads: each a
/// `#[no_mangle] extern "C"` function with its doc and an empty body.
fn exports_source() -> String {
    let mut src = String::from("// The exports `c_calls!` generates, for cbindgen.\n");
    for (_, declarations) in MODULES {
        for d in *declarations {
            for line in d.docs {
                writeln!(src, "#[doc = {line:?}]").unwrap();
            }
            let ret = if d.ret.is_empty() {
                String::new()
            } else {
                format!(" -> {}", d.ret)
            };
            writeln!(
                src,
                "#[no_mangle]\npub extern \"C\" fn {}({}){ret} {{}}\n",
                d.name, d.params
            )
            .unwrap();
        }
    }
    src
}

/// The header cbindgen generates from this crate today.
fn generate() -> String {
    let dir = crate_dir();
    let config = cbindgen::Config::from_file(dir.join("cbindgen.toml"))
        .unwrap_or_else(|e| panic!("native/capi/cbindgen.toml: {e}"));
    // A file of this process's own: tests run in parallel, and so may two test
    // runs of separate worktrees.
    let exports = std::env::temp_dir().join(format!(
        "hrts_capi_exports_{}_{:?}.rs",
        std::process::id(),
        std::thread::current().id()
    ));
    std::fs::write(&exports, exports_source())
        .unwrap_or_else(|e| panic!("cannot write {}: {e}", exports.display()));
    let bindings = cbindgen::Builder::new()
        .with_src(&exports)
        .with_crate(&dir)
        .with_config(config)
        .generate();
    let _ = std::fs::remove_file(&exports);
    let bindings =
        bindings.unwrap_or_else(|e| panic!("cbindgen could not generate the header: {e}"));
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

/// Every source file of the crate, with its path under `src`.
fn sources() -> Vec<(String, String)> {
    fn walk(dir: &Path, out: &mut Vec<(String, String)>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let text = std::fs::read_to_string(&path).unwrap();
                out.push((path.display().to_string(), text));
            }
        }
    }
    let mut out = Vec::new();
    walk(&crate_dir().join("src"), &mut out);
    out
}

#[test]
fn header_declares_every_export() {
    let header = generate();
    // Every export comes from a `c_calls!` block, and every block is listed.
    let mut blocks = 0;
    for (path, text) in sources() {
        if path.ends_with("boundary.rs") {
            continue; // the macro itself and its own test block
        }
        assert!(
            !text.contains(concat!("extern ", "\"C\" fn")),
            "{path}: write exports in a `c_calls!` block, not by hand"
        );
        blocks += text.matches(concat!("\nc_calls! ", "{")).count();
    }
    assert_eq!(
        blocks,
        MODULES.len(),
        "a module with a `c_calls!` block is missing from MODULES"
    );
    let names: Vec<&str> = MODULES
        .iter()
        .flat_map(|(_, d)| d.iter().map(|d| d.name))
        .collect();
    // 90 when the calls were first generated (a bound, not a count to keep: a
    // new call touches only its definition).
    assert!(names.len() >= 90, "{names:?}");
    let mut unique = names.clone();
    unique.sort_unstable();
    unique.dedup();
    assert_eq!(unique.len(), names.len(), "an export is defined twice");
    for name in names {
        assert!(
            name.starts_with("hrts_"),
            "{name}: not in the library's namespace"
        );
        assert!(
            header.contains(&format!(" {name}(")) || header.contains(&format!("*{name}(")),
            "{name} missing from the header"
        );
    }
}
