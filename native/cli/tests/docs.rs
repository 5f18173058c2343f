//! What the documentation says about the `hrts` command matches the command:
//! docs/cli.md quotes `hrts --help` exactly, and the help names every
//! environment variable the libraries read.

use std::path::{Path, PathBuf};

mod common;

const BEGIN: &str = "<!-- BEGIN hrts --help -->\n```text\n";
const END: &str = "```\n<!-- END hrts --help -->";

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// `hrts --help` as a pipe gets it (no terminal: 100 columns).
fn help() -> String {
    let out = common::command()
        .arg("--help")
        .env_remove("COLUMNS")
        .output()
        .expect("run hrts --help");
    assert!(out.status.success());
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn docs_cli_md_quotes_the_help() {
    let path = repo().join("docs/cli.md");
    let doc = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let start = doc
        .find(BEGIN)
        .unwrap_or_else(|| panic!("docs/cli.md has no line {BEGIN:?}"))
        + BEGIN.len();
    let end = start
        + doc[start..]
            .find(END)
            .unwrap_or_else(|| panic!("docs/cli.md has no line {END:?} after the BEGIN line"));
    let help = help();
    if std::env::var_os("HRTS_BLESS").is_some_and(|v| v == "1") {
        let blessed = format!("{}{help}{}", &doc[..start], &doc[end..]);
        std::fs::write(&path, blessed)
            .unwrap_or_else(|e| panic!("cannot write {}: {e}", path.display()));
        return;
    }
    let quoted = &doc[start..end];
    let differs = quoted
        .lines()
        .zip(help.lines())
        .position(|(a, b)| a != b)
        .unwrap_or(quoted.lines().count().min(help.lines().count()));
    assert!(
        quoted == help,
        "docs/cli.md's copy of `hrts --help` is out of date (first difference at its line \
         {}: {:?} where the command prints {:?}).\nRewrite it with \
         `HRTS_BLESS=1 cargo test -p hrts-cli --test docs docs_cli_md_quotes_the_help` \
         and commit it.",
        differs + 1,
        quoted.lines().nth(differs),
        help.lines().nth(differs)
    );
}

/// A source file up to its inline test module (`#[cfg(test)]` then `mod NAME {`;
/// a `#[cfg(test)] mod tests;` declaration holds no code and stays).
fn without_test_module(text: &str) -> &str {
    let mut from = 0;
    while let Some(i) = text[from..].find("#[cfg(test)]") {
        let at = from + i;
        let next = text[at..].lines().nth(1).unwrap_or("").trim();
        if next.starts_with("mod ") && next.ends_with('{') {
            return &text[..at];
        }
        from = at + 1;
    }
    text
}

/// The `"HRTS_..."` string literals of a crate's library code: its `src`
/// files, without test files and without inline test modules.
fn variables_read_by(krate: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut dirs = vec![repo().join("native").join(krate).join("src")];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
                continue;
            }
            let name = path.file_name().unwrap().to_string_lossy();
            if !name.ends_with(".rs") || name == "tests.rs" || name.ends_with("_test.rs") {
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap();
            let code = without_test_module(&text);
            for piece in code.split("\"HRTS_").skip(1) {
                let tail: String = piece
                    .chars()
                    .take_while(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || *c == '_')
                    .collect();
                if piece[tail.len()..].starts_with('"') {
                    found.push(format!("HRTS_{tail}"));
                }
            }
        }
    }
    found.sort();
    found.dedup();
    found
}

#[test]
fn the_help_names_every_environment_variable_the_libraries_read() {
    let help = help();
    let environment = help
        .split("\nEnvironment:\n")
        .nth(1)
        .expect("an Environment section")
        .split("\n\n")
        .next()
        .unwrap();
    let mut all = Vec::new();
    for krate in ["core", "stats", "trace"] {
        let vars = variables_read_by(krate);
        assert!(
            !vars.is_empty(),
            "no HRTS_ variable found in native/{krate}"
        );
        all.extend(vars);
    }
    for must in [
        "HRTS_SEGMENT",
        "HRTS_SOURCE",
        "HRTS_STATS_SEGMENT",
        "HRTS_TRACE_HOST",
    ] {
        assert!(
            all.iter().any(|v| v == must),
            "the scan missed {must}: {all:?}"
        );
    }
    // Test builds' hooks (HRTS_TEST_*, `testing` feature) are not for users.
    for var in all.iter().filter(|v| !v.starts_with("HRTS_TEST_")) {
        assert!(
            environment.contains(&format!("\n  {var} "))
                || environment.starts_with(&format!("  {var} ")),
            "`hrts --help` does not name {var} in its Environment section:\n{environment}"
        );
    }
}
