//! The rooms (top-level modules) of every crate of the workspace must not
//! import each other in a cycle: in the core, `clock` knows nothing of the
//! segment, the segment nothing of the stamps built on it; in the statistics
//! crate, the instance state knows nothing of the measuring points, the
//! queues or the public handle that use it. This reads the sources and checks,
//! for each crate in [`CRATES`], the graph of `crate::<room>` paths (test code
//! and comments excluded; a name the crate root re-exports counts as its
//! room), so a new cycle fails here instead of in a reader's head.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The crates checked, by directory under `native/`.
const CRATES: &[&str] = &["core", "stats", "trace", "capi", "jni", "bench-jni"];

/// Crates of the workspace not checked yet. To check one, move it from here
/// to [`CRATES`].
const NOT_CHECKED: &[&str] = &["cli"];

fn native_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The room a source file belongs to: its first path component under `src/`;
/// `None` for the crate root and the test helpers.
fn room_of(src: &Path, file: &Path) -> Option<String> {
    let rel = file.strip_prefix(src).unwrap();
    let first = rel.components().next()?.as_os_str().to_str()?;
    let room = first.trim_end_matches(".rs");
    (!["lib", "main", "testutil", "tests"].contains(&room)).then(|| room.to_string())
}

/// The file's code before its first test module, without comment lines.
fn non_test_code(text: &str) -> String {
    let code = match text.find("#[cfg(test)]\nmod ") {
        Some(i) => &text[..i],
        None => text,
    };
    code.lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The names the crate root re-exports (`pub use room::...::{A, B as C}`),
/// each with the room it comes from.
fn reexports(root: &str, rooms: &BTreeSet<String>) -> BTreeMap<String, String> {
    let mut names = BTreeMap::new();
    for (i, _) in root.match_indices("pub use ") {
        let body = &root[i + 8..];
        let body = body[..body.find(';').unwrap_or(body.len())].trim();
        let body = body.strip_prefix("crate::").unwrap_or(body);
        let room = body.split("::").next().unwrap_or("").trim();
        if !rooms.contains(room) {
            continue;
        }
        let items = match (body.find('{'), body.rfind('}')) {
            (Some(a), Some(b)) => body[a + 1..b].replace(['{', '}'], ","),
            _ => body.to_string(),
        };
        for item in items.split(',').map(str::trim) {
            let name = match item.split_once(" as ") {
                Some((_, alias)) => alias.trim(),
                None => item.rsplit("::").next().unwrap_or("").trim(),
            };
            if !name.is_empty() && name != "*" && name != "self" {
                names.insert(name.to_string(), room.to_string());
            }
        }
    }
    names
}

/// The first identifier of `text`.
fn ident(text: &str) -> String {
    text.chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect()
}

/// Each room of the crate in `native/<krate>` with the rooms it imports.
fn room_graph(krate: &str) -> BTreeMap<String, BTreeSet<String>> {
    let src = native_dir().join(krate).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let rooms: BTreeSet<String> = files.iter().filter_map(|f| room_of(&src, f)).collect();
    let root = ["lib.rs", "main.rs"]
        .iter()
        .filter_map(|f| std::fs::read_to_string(src.join(f)).ok())
        .collect::<String>();
    let exported = reexports(&non_test_code(&root), &rooms);
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for file in files {
        if file.file_name().is_some_and(|n| n == "tests.rs") {
            continue;
        }
        let Some(room) = room_of(&src, &file) else {
            continue;
        };
        // `super::` in `src/x.rs` or `src/x/mod.rs` is the crate root.
        let depth = file.strip_prefix(&src).unwrap().components().count();
        let super_is_root = depth == 1 || (depth == 2 && file.ends_with("mod.rs"));
        let code = non_test_code(&std::fs::read_to_string(&file).unwrap());
        let mut targets: Vec<String> = code
            .match_indices("crate::")
            .map(|(i, _)| ident(&code[i + 7..]))
            .collect();
        if super_is_root {
            targets.extend(
                code.match_indices("super::")
                    .map(|(i, _)| ident(&code[i + 7..])),
            );
        }
        let deps = graph.entry(room.clone()).or_default();
        for target in targets {
            let to = if rooms.contains(&target) {
                Some(target)
            } else {
                exported.get(&target).cloned()
            };
            if let Some(to) = to.filter(|t| *t != room) {
                deps.insert(to);
            }
        }
    }
    graph
}

fn find_cycle(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        node: &str,
        graph: &BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(i) = path.iter().position(|n| n == node) {
            let mut cycle = path[i..].to_vec();
            cycle.push(node.to_string());
            return Some(cycle);
        }
        if done.contains(node) {
            return None;
        }
        path.push(node.to_string());
        for next in graph.get(node).into_iter().flatten() {
            if let Some(c) = visit(next, graph, path, done) {
                return Some(c);
            }
        }
        path.pop();
        done.insert(node.to_string());
        None
    }
    let mut done = BTreeSet::new();
    graph
        .keys()
        .find_map(|n| visit(n, graph, &mut Vec::new(), &mut done))
}

#[test]
fn every_crate_is_listed() {
    let mut found: Vec<String> = std::fs::read_dir(native_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("Cargo.toml").is_file())
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    found.sort();
    let mut listed: Vec<String> = CRATES
        .iter()
        .chain(NOT_CHECKED)
        .map(|c| c.to_string())
        .collect();
    listed.sort();
    assert_eq!(
        found, listed,
        "every crate under native/ belongs in CRATES (or, for now, NOT_CHECKED)"
    );
}

#[test]
fn rooms_of_every_crate_import_each_other_without_cycles() {
    for krate in CRATES {
        let graph = room_graph(krate);
        if let Some(cycle) = find_cycle(&graph) {
            panic!(
                "import cycle between rooms of native/{krate}: {}",
                cycle.join(" -> ")
            );
        }
    }
}

#[test]
fn core_rooms_depend_in_the_documented_direction() {
    let graph = room_graph("core");
    for room in ["clock", "storage", "segment", "stamps", "process", "ibmts"] {
        assert!(graph.contains_key(room), "room {room} not found: {graph:?}");
    }
    // The direction the crate docs state: the clock depends on no other room
    // but the shared helpers, the segment not on the stamps built on it.
    let clock: Vec<_> = graph["clock"].iter().collect();
    assert!(
        graph["clock"].iter().all(|d| d == "error" || d == "os"),
        "clock imports {clock:?}"
    );
    assert!(
        graph["storage"].iter().all(|d| d == "error" || d == "os"),
        "storage imports {:?}",
        graph["storage"]
    );
    assert!(
        !graph["segment"].contains("stamps") && !graph["segment"].contains("process"),
        "segment imports {:?}",
        graph["segment"]
    );
}

#[test]
fn the_stats_instance_state_is_a_leaf_of_its_users() {
    let graph = room_graph("stats");
    for user in ["stats", "points", "local"] {
        assert!(
            graph[user].contains("instance"),
            "{user} imports {:?}",
            graph[user]
        );
        assert!(
            !graph["instance"].contains(user),
            "instance imports {:?}",
            graph["instance"]
        );
    }
    assert!(
        !graph["shared"].contains("instance"),
        "shared imports {:?}",
        graph["shared"]
    );
}

#[test]
fn reexported_names_count_as_their_room() {
    let rooms: BTreeSet<String> = ["points", "stats", "other"]
        .map(String::from)
        .into_iter()
        .collect();
    let names = reexports(
        "pub use points::{Counter, Gauge as G};\npub use crate::stats::{global, Stats};\n\
         pub use hrts_core::{Error, Result};\npub use other::inner::Thing;\n",
        &rooms,
    );
    let expect = [
        ("Counter", "points"),
        ("G", "points"),
        ("global", "stats"),
        ("Stats", "stats"),
        ("Thing", "other"),
    ];
    assert_eq!(
        names,
        expect
            .iter()
            .map(|(n, r)| (n.to_string(), r.to_string()))
            .collect()
    );
}

#[test]
fn the_cycle_finder_finds_cycles() {
    let mut g: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    g.entry("a".into()).or_default().insert("b".into());
    g.entry("b".into()).or_default().insert("c".into());
    assert_eq!(find_cycle(&g), None);
    g.entry("c".into()).or_default().insert("a".into());
    let cycle = find_cycle(&g).expect("a -> b -> c -> a");
    assert_eq!(cycle.first(), cycle.last());
    assert_eq!(cycle.len(), 4);
}
