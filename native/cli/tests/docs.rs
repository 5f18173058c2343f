//! The docs cannot go stale: what they list is checked against the command and
//! the sources, so adding a command option, an `HRTS_*` variable, a C function,
//! a public Java method, a test stage or a directory without its doc fails here.
//!
//! - docs/cli.md quotes `hrts --help` exactly, names every option of every
//!   command (walked from the help), every variable of the help's Environment
//!   section and every exit code (as docs/operations.md does);
//! - the help names every environment variable the libraries read;
//! - docs/configuration.md names every `HRTS_*` variable the Rust, Java and C
//!   sources read (test hooks under `## Tests only`) and none that nothing reads;
//! - docs/c.md names every function of include/hrts.h;
//! - docs/java.md names every public method of `io.hrts.HighResTimestamp`;
//! - every figure of the README's opening and of docs/benchmarks.md's results
//!   says the machine (Intel or AMD) and the date it was measured on;
//! - DEVELOPERS.md names every stage of scripts/test.sh and every crate, test
//!   directory, packaging directory and script.
//!
//! Each failure says what is missing, where, and what to write.

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

/// The Environment section of `hrts --help`.
fn help_environment() -> String {
    help()
        .split("\nEnvironment:\n")
        .nth(1)
        .expect("an Environment section")
        .split("\n\n")
        .next()
        .unwrap()
        .to_string()
}

#[test]
fn the_help_names_every_environment_variable_the_libraries_read() {
    let environment = help_environment();
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

/// `hrts ARGS... --help` (long help: every option with its text).
fn help_of(path: &[String]) -> String {
    let out = common::command()
        .args(path)
        .arg("--help")
        .env_remove("COLUMNS")
        .output()
        .expect("run hrts ... --help");
    assert!(
        out.status.success(),
        "hrts {} --help failed",
        path.join(" ")
    );
    String::from_utf8(out.stdout).unwrap()
}

/// The lines of a help section (`Commands:`, `Options:`) up to the next heading.
fn section<'a>(help: &'a str, heading: &str) -> Vec<&'a str> {
    help.lines()
        .skip_while(|l| *l != heading)
        .skip(1)
        .take_while(|l| l.is_empty() || l.starts_with(' '))
        .collect()
}

/// A command of `hrts` as its help describes it.
struct Command {
    path: Vec<String>,
    subcommands: Vec<String>,
    /// Long options, `--help` and `--version` left out.
    options: Vec<String>,
}

/// Every command of `hrts`, walked from `hrts --help` through each
/// subcommand's help, so a new command or option is found without a list here.
fn commands() -> Vec<Command> {
    let mut found = Vec::new();
    let mut todo = vec![Vec::<String>::new()];
    while let Some(path) = todo.pop() {
        let help = help_of(&path);
        let subcommands: Vec<String> = section(&help, "Commands:")
            .iter()
            // A name is indented by two; its wrapped text by more.
            .filter(|l| l.starts_with("  ") && !l.starts_with("   "))
            .filter_map(|l| l.split_whitespace().next())
            // `help` is clap's; `debug` only exists in test builds (the `testing`
            // feature) and breaks the segment protocol on purpose: not for users.
            .filter(|name| *name != "help" && *name != "debug")
            .map(str::to_owned)
            .collect();
        let options = section(&help, "Options:")
            .iter()
            .filter(|l| {
                let t = l.trim_start();
                t.starts_with('-') && l.len() - t.len() <= 6
            })
            .filter_map(|l| l.split_whitespace().find(|w| w.starts_with("--")))
            .map(|w| w.trim_end_matches(',').to_owned())
            .filter(|o| o != "--help" && o != "--version")
            .collect();
        for sub in &subcommands {
            let mut p = path.clone();
            p.push(sub.clone());
            todo.push(p);
        }
        found.push(Command {
            path,
            subcommands,
            options,
        });
    }
    found.sort_by(|a, b| a.path.cmp(&b.path));
    found
}

/// The first cell of a markdown table row (`\|` is a pipe inside a cell).
fn first_cell(row: &str) -> &str {
    let body = &row[1..];
    let bytes = body.as_bytes();
    let end = (0..bytes.len())
        .find(|&i| bytes[i] == b'|' && (i == 0 || bytes[i - 1] != b'\\'))
        .unwrap_or(body.len());
    &body[..end]
}

/// Whether `text` names `option` (not as the start of a longer option).
fn names_option(text: &str, option: &str) -> bool {
    text.match_indices(option).any(|(i, _)| {
        !text[i + option.len()..].starts_with(|c: char| c.is_ascii_alphanumeric() || c == '-')
    })
}

#[test]
fn docs_cli_md_names_every_option_of_every_command() {
    let path = repo().join("docs/cli.md");
    let doc = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    // The quoted `hrts --help` would name the top-level options by itself.
    let prose = match (doc.find(BEGIN), doc.find(END)) {
        (Some(a), Some(b)) => format!("{}{}", &doc[..a], &doc[b..]),
        _ => doc.clone(),
    };
    let commands = commands();
    assert!(
        commands.len() > 15,
        "the walk of `hrts --help` found only {} commands",
        commands.len()
    );
    let top = &commands[0];
    assert!(top.path.is_empty());
    let subcommands_of = |path: &[String]| -> &[String] {
        commands
            .iter()
            .find(|c| c.path == path)
            .map_or(&[], |c| c.subcommands.as_slice())
    };
    // Each table row whose first cell shows `hrts COMMAND ...` documents that
    // command; a cell may show several (`hrts trace info FILE`, `hrts trace dump FILE`).
    let mut rows: Vec<(Vec<String>, &str)> = Vec::new();
    for row in prose.lines().filter(|l| l.starts_with("| `hrts")) {
        for shown in first_cell(row).split("`hrts").skip(1) {
            let mut p: Vec<String> = Vec::new();
            for word in shown
                .split(|c: char| c.is_whitespace() || c == '`')
                .filter(|w| !w.is_empty())
            {
                if subcommands_of(&p).iter().any(|s| s == word) {
                    p.push(word.to_owned());
                } else {
                    break;
                }
            }
            rows.push((p, row));
        }
    }
    let mut missing = Vec::new();
    for option in &top.options {
        if !names_option(&prose, option) {
            missing.push(format!(
                "`hrts {option}` (an option of every command) is named nowhere in \
                 docs/cli.md: describe it where the doc says which segment a command uses"
            ));
        }
    }
    for command in &commands[1..] {
        let own: Vec<&String> = command
            .options
            .iter()
            .filter(|o| !top.options.contains(o))
            .collect();
        // A command that only groups others (`hrts trace`) needs no row of its own.
        if own.is_empty() && !command.subcommands.is_empty() {
            continue;
        }
        let name = command.path.join(" ");
        let documented: Vec<&str> = rows
            .iter()
            .filter(|(p, _)| *p == command.path)
            .map(|(_, row)| *row)
            .collect();
        if documented.is_empty() {
            missing.push(format!(
                "`hrts {name}` has no row in docs/cli.md's command tables: add a row \
                 `| \\`hrts {name} ...\\` | ... |` naming its options {own:?}"
            ));
            continue;
        }
        for option in own {
            if !documented.iter().any(|row| names_option(row, option)) {
                missing.push(format!(
                    "`hrts {name} {option}` is not named in the docs/cli.md row of \
                     `hrts {name}`: add it there as `hrts {name} --help` describes it"
                ));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "docs/cli.md does not describe every option of every command \
         (it promises to; `debug` is exempt, a test-build command):\n  {}",
        missing.join("\n  ")
    );
}

/// The `"HRTS_..."` string literals of some text (Java and C sources).
fn quoted_variables(text: &str) -> Vec<String> {
    text.split("\"HRTS_")
        .skip(1)
        .filter_map(|piece| {
            let tail: String = piece
                .chars()
                .take_while(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || *c == '_')
                .collect();
            piece[tail.len()..]
                .starts_with('"')
                .then(|| format!("HRTS_{tail}"))
        })
        .collect()
}

/// Every file under `dir` whose name ends with `ext`.
fn files_under(dir: &Path, ext: &str) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut dirs = vec![dir.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.to_string_lossy().ends_with(ext) {
                found.push(path);
            }
        }
    }
    found
}

/// The C constants of include/hrts.h named `HRTS_...` (status codes such as
/// `HRTS_E_OS`, which the C library's status names quote as strings).
fn c_constants() -> Vec<String> {
    let header = std::fs::read_to_string(repo().join("include/hrts.h")).unwrap();
    header
        .lines()
        .filter_map(|l| {
            let l = l.trim_start();
            let l = l.strip_prefix("#define ").unwrap_or(l);
            let name: String = l
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            (name.starts_with("HRTS_") && !name.ends_with("_H")).then_some(name)
        })
        .collect()
}

/// Every `HRTS_*` environment variable the non-test sources read: Rust library
/// and command code of every crate, the Java library, the C header.
fn variables_read_anywhere() -> Vec<String> {
    let mut all = Vec::new();
    for entry in std::fs::read_dir(repo().join("native")).unwrap() {
        let krate = entry.unwrap().file_name().to_string_lossy().into_owned();
        if repo().join("native").join(&krate).join("src").is_dir() {
            all.extend(variables_read_by(&krate));
        }
    }
    for (dir, ext) in [("java/src/main", ".java"), ("include", ".h")] {
        for file in files_under(&repo().join(dir), ext) {
            all.extend(quoted_variables(&std::fs::read_to_string(file).unwrap()));
        }
    }
    // C status names (`HRTS_E_OS`, `"HRTS_E_UNKNOWN_STATUS"` for a value that is none)
    // are strings of the C library, not variables.
    let constants = c_constants();
    all.retain(|v| !constants.contains(v) && !v.starts_with("HRTS_E_"));
    all.sort();
    all.dedup();
    all
}

/// Hooks of test builds and of `hrts debug` (the `testing` feature), not for users.
fn test_only(var: &str) -> bool {
    var.starts_with("HRTS_TEST_") || var.starts_with("HRTS_FUZZ_")
}

const TESTS_ONLY_HEADING: &str = "\n## Tests only\n";

#[test]
fn docs_configuration_md_names_every_variable_read_and_only_those() {
    let path = repo().join("docs/configuration.md");
    let doc = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let (users, tests) = match doc.find(TESTS_ONLY_HEADING) {
        Some(at) => {
            let rest = &doc[at + TESTS_ONLY_HEADING.len()..];
            let end = rest.find("\n## ").unwrap_or(rest.len());
            (
                format!("{}{}", &doc[..at], &rest[end..]),
                rest[..end].to_owned(),
            )
        }
        None => (doc.clone(), String::new()),
    };
    let read = variables_read_anywhere();
    for must in [
        "HRTS_SEGMENT",
        "HRTS_STATS_PROGRAM",
        "HRTS_TEST_BOUND",
        "HRTS_ITC_TICK_NS",
    ] {
        assert!(
            read.iter().any(|v| v == must),
            "the scan missed {must}: {read:?}"
        );
    }
    let names = |text: &str, var: &str| {
        text.match_indices(var).any(|(i, _)| {
            !text[i + var.len()..].starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_')
        })
    };
    let mut wrong = Vec::new();
    for var in &read {
        if test_only(var) {
            if !names(&tests, var) {
                wrong.push(format!(
                    "{var} is read by the sources but not named under docs/configuration.md's \
                     heading `## Tests only`: describe it there (it is a test build's hook)"
                ));
            }
        } else if !names(&users, var) {
            wrong.push(format!(
                "{var} is read by the sources but named nowhere in docs/configuration.md \
                 outside `## Tests only`: add a row for it to the table of its part"
            ));
        }
    }
    let mut documented = quoted_variables(&doc.replace('`', "\""));
    documented.extend(
        doc.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .filter(|w| w.starts_with("HRTS_") && w.len() > 5)
            .map(str::to_owned),
    );
    documented.sort();
    documented.dedup();
    for var in documented.iter().filter(|v| !read.contains(v)) {
        wrong.push(format!(
            "docs/configuration.md names {var}, which no source reads (Rust src, Java \
             src/main, include/): remove it, or name what reads it"
        ));
    }
    assert!(
        wrong.is_empty(),
        "docs/configuration.md does not match the environment variables the sources read:\n  {}",
        wrong.join("\n  ")
    );
}

/// The functions include/hrts.h declares: each name followed by `(` at the
/// end of a declaration's first line (the header is cbindgen's, one
/// declaration per statement, return type first).
fn c_functions() -> Vec<String> {
    let header = std::fs::read_to_string(repo().join("include/hrts.h")).unwrap();
    let mut found: Vec<String> = header
        .lines()
        .filter(|l| !l.starts_with(' ') && !l.starts_with('#') && !l.starts_with("/*"))
        .filter_map(|l| {
            let before = &l[..l.find('(')?];
            let name = before.rsplit([' ', '*']).next()?;
            name.starts_with("hrts_").then(|| name.to_owned())
        })
        .collect();
    found.sort();
    found.dedup();
    found
}

#[test]
fn docs_c_md_names_every_function_of_the_header() {
    let functions = c_functions();
    for must in [
        "hrts_get_epoch_nanoseconds",
        "hrts_segment_open",
        "hrts_stats_start",
    ] {
        assert!(
            functions.iter().any(|f| f == must),
            "the scan of include/hrts.h missed {must}: {functions:?}"
        );
    }
    let doc = std::fs::read_to_string(repo().join("docs/c.md")).unwrap();
    let missing: Vec<&String> = functions
        .iter()
        .filter(|f| {
            !doc.match_indices(f.as_str()).any(|(i, _)| {
                !doc[i + f.len()..].starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_')
            })
        })
        .collect();
    assert!(
        missing.is_empty(),
        "docs/c.md does not name {} of the {} functions include/hrts.h declares: {missing:?}.\n\
         Name each in full (not as `_ordered` after another) where docs/c.md lists the \
         functions of its part, with what it does as the header's comment says.",
        missing.len(),
        functions.len()
    );
}

/// The public methods of a Java class: members (indented by four) declared
/// `public`, whose first line holds the name and its `(`; the constructor left out.
fn java_public_methods(path: &str, class: &str) -> Vec<String> {
    let source = std::fs::read_to_string(repo().join(path)).unwrap();
    let mut found: Vec<String> = source
        .lines()
        .filter(|l| l.starts_with("    public ") && !l.starts_with("     "))
        .filter_map(|l| {
            let before = &l[..l.find('(')?];
            if before.contains('=') {
                return None;
            }
            let name = before.rsplit(' ').next()?;
            (name != class).then(|| name.to_owned())
        })
        .collect();
    found.sort();
    found.dedup();
    found
}

#[test]
fn docs_java_md_names_every_public_method_of_high_res_timestamp() {
    let methods = java_public_methods(
        "java/src/main/java/io/hrts/HighResTimestamp.java",
        "HighResTimestamp",
    );
    for must in ["getEpochNanoseconds", "calcTimeStamp", "commitWait"] {
        assert!(
            methods.iter().any(|m| m == must),
            "the scan of HighResTimestamp.java missed {must}: {methods:?}"
        );
    }
    let doc = std::fs::read_to_string(repo().join("docs/java.md")).unwrap();
    let missing: Vec<&String> = methods
        .iter()
        .filter(|m| {
            // `name(`, `name` or `HighResTimestamp.name(`, each in code quotes.
            !doc.contains(&format!("`{m}("))
                && !doc.contains(&format!("`{m}`"))
                && !doc.contains(&format!("`HighResTimestamp.{m}("))
        })
        .collect();
    assert!(
        missing.is_empty(),
        "docs/java.md does not name {} of the {} public methods of io.hrts.HighResTimestamp: \
         {missing:?}.\nDescribe each under `## The API` as `name(...)`, from its Javadoc.",
        missing.len(),
        methods.len()
    );
}

/// The entries of a directory of the repository, as `dir/name`.
fn entries_of(dir: &str) -> Vec<String> {
    let mut found: Vec<String> = std::fs::read_dir(repo().join(dir))
        .unwrap()
        .map(|e| format!("{dir}/{}", e.unwrap().file_name().to_string_lossy()))
        .collect();
    found.sort();
    found
}

#[test]
fn developers_md_names_every_stage_crate_test_directory_and_script() {
    let doc = std::fs::read_to_string(repo().join("DEVELOPERS.md")).unwrap();
    let mut missing = Vec::new();
    let test_sh = std::fs::read_to_string(repo().join("scripts/test.sh")).unwrap();
    let stages: Vec<&str> = test_sh
        .lines()
        .filter_map(|l| l.strip_prefix("describe "))
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    assert!(
        stages.len() > 20,
        "found only the stages {stages:?} in scripts/test.sh"
    );
    for stage in stages {
        if !doc.contains(&format!("| `{stage}` |")) {
            missing.push(format!(
                "the stage {stage} of scripts/test.sh has no row `| \\`{stage}\\` | ... |` in \
                 DEVELOPERS.md's table of stages: add one, as `scripts/test.sh --list` describes it"
            ));
        }
    }
    // Where things live: every crate, test directory, packaging directory and script.
    let mut paths = Vec::new();
    for dir in ["native", "tests", "packaging", "scripts"] {
        paths.extend(entries_of(dir));
    }
    for path in paths.iter().filter(|p| !p.ends_with(".md")) {
        let name = path.rsplit('/').next().unwrap();
        // Scripts are named by file in the `scripts/` row; the others by path.
        let named = if path.starts_with("scripts/") {
            doc.contains(&format!("`{name}`")) || doc.contains(&format!("`{path}`"))
        } else {
            doc.contains(&format!("`{path}`")) || doc.contains(&format!("`{path}/`"))
        };
        if !named {
            missing.push(format!(
                "{path} is not named in DEVELOPERS.md (as `{path}`): say what it is under \
                 `## Where things live`"
            ));
        }
    }
    assert!(
        missing.is_empty(),
        "DEVELOPERS.md does not describe the repository as it is:\n  {}",
        missing.join("\n  ")
    );
}

#[test]
fn docs_cli_md_environment_table_names_every_variable_of_the_help() {
    let environment = help_environment();
    let doc = std::fs::read_to_string(repo().join("docs/cli.md")).unwrap();
    let table = doc
        .split("\n## Environment\n")
        .nth(1)
        .expect("docs/cli.md has a section `## Environment`")
        .split("\n## ")
        .next()
        .unwrap();
    let missing: Vec<&str> = environment
        .lines()
        .filter_map(|l| l.strip_prefix("  "))
        .filter(|l| l.starts_with("HRTS_"))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|var| !table.contains(&format!("`{var}`")))
        .collect();
    assert!(
        missing.is_empty(),
        "docs/cli.md's `## Environment` table lacks {missing:?}, which `hrts --help` lists: \
         add a row for each, as the help and docs/configuration.md describe it"
    );
}

#[test]
fn every_exit_code_of_the_help_is_in_cli_md_and_operations_md() {
    let help = help();
    let codes: Vec<String> = help
        .split("\nExit status:\n")
        .nth(1)
        .expect("an Exit status section")
        .lines()
        .filter_map(|l| l.strip_prefix("  "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|w| w.chars().all(|c| c.is_ascii_digit()))
        .map(str::to_owned)
        .collect();
    assert!(
        codes.len() >= 5,
        "found only the exit codes {codes:?} in the help"
    );
    let cli = std::fs::read_to_string(repo().join("docs/cli.md")).unwrap();
    let operations = std::fs::read_to_string(repo().join("docs/operations.md")).unwrap();
    // operations.md sums them up in one sentence: "Exit codes: 0 ok, 1 ..., 5 ...".
    let sentence = operations
        .split("Exit codes:")
        .nth(1)
        .expect("docs/operations.md has a sentence `Exit codes: ...`")
        .split("Errors go")
        .next()
        .unwrap()
        .replace('\n', " ");
    let mut missing = Vec::new();
    for code in &codes {
        if !cli.contains(&format!("\n| {code} |")) {
            missing.push(format!(
                "docs/cli.md's Exit status table has no row `| {code} | ... |`"
            ));
        }
        if !sentence.contains(&format!(" {code} ")) {
            missing.push(format!(
                "docs/operations.md's `Exit codes: ...` sentence does not give {code}"
            ));
        }
    }
    assert!(
        missing.is_empty(),
        "the exit codes `hrts --help` lists ({codes:?}) are not all documented:\n  {}",
        missing.join("\n  ")
    );
}

/// Whether `text` holds a measured figure: a number with a unit of time or
/// rate (`12.3 ns`, `25 µs`, `43 M/s`) or a ratio (`1.52 ×`).
fn has_figure(text: &str) -> bool {
    let units = ["ns", "µs", "ms", "M/s", "×"];
    let chars: Vec<char> = text.chars().collect();
    (0..chars.len()).any(|i| {
        if !chars[i].is_ascii_digit()
            || chars
                .get(i + 1)
                .is_some_and(|c| c.is_ascii_digit() || *c == '.')
        {
            return false;
        }
        let rest: String = chars[i + 1..].iter().collect();
        let rest = rest.strip_prefix(' ').unwrap_or(&rest);
        units.iter().any(|u| {
            rest.starts_with(u) && !rest[u.len()..].starts_with(|c: char| c.is_alphanumeric())
        })
    })
}

/// Whether `text` names a measuring machine and a date (`2026-11-28`).
fn dated_machine(text: &str) -> bool {
    let b = text.as_bytes();
    let date = (0..b.len().saturating_sub(9)).any(|i| {
        let d = &b[i..i + 10];
        d[..4].iter().all(u8::is_ascii_digit)
            && d[4] == b'-'
            && d[5..7].iter().all(u8::is_ascii_digit)
            && d[7] == b'-'
            && d[8..].iter().all(u8::is_ascii_digit)
    });
    date && (text.contains("Intel") || text.contains("AMD"))
}

/// The figures of `text` (markdown) that neither say, nor follow a paragraph
/// that says, their machine and date: a paragraph must say it itself, a table
/// by the paragraph before it.
fn undated_figures(text: &str) -> Vec<String> {
    let mut bad = Vec::new();
    let mut context = String::new();
    for block in text.split("\n\n") {
        let block = block.trim();
        if block.starts_with('|') {
            for row in block.lines().filter(|r| has_figure(r)) {
                if !dated_machine(&context) {
                    bad.push(row.to_string());
                }
            }
        } else if !block.starts_with('#') && !block.starts_with("```") {
            if has_figure(block) && !dated_machine(block) {
                bad.push(block.to_string());
            }
            context = block.to_string();
        }
    }
    bad
}

#[test]
fn every_figure_of_the_readme_and_the_benchmarks_page_says_its_machine_and_date() {
    let readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    // The opening, up to the first heading: the headline's figures.
    let opening = &readme[..readme.find("\n## ").unwrap()];
    let benchmarks = std::fs::read_to_string(repo().join("docs/benchmarks.md")).unwrap();
    for (file, text) in [
        ("README.md", opening),
        ("docs/benchmarks.md", benchmarks.as_str()),
    ] {
        let bad = undated_figures(text);
        assert!(
            bad.is_empty(),
            "{file}: these figures say no machine (Intel or AMD) and date (YYYY-MM-DD), \
             in their paragraph or the one before their table; add them from the report \
             under the benchmarks: {bad:#?}"
        );
    }
    // The checker itself: a bare figure is found, a dated one passes.
    assert_eq!(undated_figures("a stamp costs 8.35 ns").len(), 1);
    assert_eq!(
        undated_figures("one run\n\n| a | 1.17 × `rdtsc` |").len(),
        1
    );
    assert!(undated_figures("on an Intel guest, 2026-11-28:\n\n| a | 12.3 ns |").is_empty());
    assert!(undated_figures("see 2 files and 10,000 metrics").is_empty());
}
