//! The core's rooms (top-level modules) must not import each other in a cycle:
//! `clock` knows nothing of the segment, the segment nothing of the stamps built
//! on it. This reads the sources and checks the graph of `crate::<room>` paths
//! (test code excluded), so a new cycle fails here instead of in a reader's head.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

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

/// The room a source file belongs to: its first path component under `src/`.
fn room_of(src: &Path, file: &Path) -> Option<String> {
    let rel = file.strip_prefix(src).unwrap();
    let first = rel.components().next()?.as_os_str().to_str()?;
    let room = first.trim_end_matches(".rs");
    (room != "lib" && room != "testutil").then(|| room.to_string())
}

/// The file's code before its first test module.
fn non_test_code(text: &str) -> &str {
    match text.find("#[cfg(test)]\nmod ") {
        Some(i) => &text[..i],
        None => text,
    }
}

fn room_graph() -> BTreeMap<String, BTreeSet<String>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for file in files {
        if file.file_name().is_some_and(|n| n == "tests.rs") {
            continue;
        }
        let Some(room) = room_of(&src, &file) else {
            continue;
        };
        let text = std::fs::read_to_string(&file).unwrap();
        let code = non_test_code(&text);
        let deps = graph.entry(room.clone()).or_default();
        for (i, _) in code.match_indices("crate::") {
            let target: String = code[i + 7..]
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            if !target.is_empty() && target != room {
                deps.insert(target);
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
fn rooms_import_each_other_without_cycles() {
    let graph = room_graph();
    for room in ["clock", "storage", "segment", "stamps", "process", "ibmts"] {
        assert!(graph.contains_key(room), "room {room} not found: {graph:?}");
    }
    if let Some(cycle) = find_cycle(&graph) {
        panic!("import cycle between rooms: {}", cycle.join(" -> "));
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
