//! Sibling modules (at every level, the top-level "rooms" as well as the
//! modules of a folder) of every crate of the workspace must not import each
//! other in a cycle: in the core, `clock` knows nothing of the
//! segment, the segment nothing of the stamps built on it; in the statistics
//! crate, the instance state knows nothing of the measuring points, the
//! queues or the public handle that use it. This reads the sources of each
//! crate in [`CRATES`] and checks the graph of the `crate::`, `super::` and
//! `self::` paths in them (test code and comments excluded; a name a module
//! imports or re-exports with `use` counts as the module it comes from), so a
//! new cycle fails here instead of in a reader's head.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The crates checked, by directory under `native/`.
const CRATES: &[&str] = &[
    "core",
    "stats",
    "trace",
    "capi",
    "jni",
    "bench-jni",
    "cli",
    // The harnesses the tests share (a dev-dependency only).
    "test-support",
    // Outside the workspace (a comparison with AWS ClockBound, run by hand), but its
    // modules are held to the same rule.
    "clockbound-compare",
];

fn native_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    files_ending(dir, "rs", out);
}

fn files_ending(dir: &Path, ext: &str, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files_ending(&path, ext, out);
        } else if path.extension().is_some_and(|e| e == ext) {
            out.push(path);
        }
    }
}

/// A module path under the crate root (`[]` is the root itself).
type ModPath = Vec<String>;

/// The module a source file holds: `src/a/b.rs` and `src/a/b/mod.rs` are
/// `a::b`, `src/lib.rs` and `src/main.rs` the root; `None` for test code.
fn module_of(src: &Path, file: &Path) -> Option<ModPath> {
    let rel = file.strip_prefix(src).unwrap();
    let mut path: ModPath = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    let last = path.pop()?;
    if last == "tests.rs" || last == "testutil.rs" {
        return None;
    }
    match last.trim_end_matches(".rs") {
        "mod" => {}
        "lib" | "main" if path.is_empty() => {}
        name => path.push(name.to_string()),
    }
    Some(path)
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

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// The paths a use tree or path at the start of `s` names (`a::{b, c::d as
/// e}` gives `a::b` and `a::c::d`), each with the name it is known by; `self`
/// is left out (`self::x` is `x`, `a::{self}` is `a`).
fn use_tree(s: &str) -> Vec<(ModPath, String)> {
    fn tree(s: &[char], i: &mut usize, prefix: &ModPath, out: &mut Vec<(ModPath, String)>) {
        let mut segs = prefix.clone();
        let skip_ws = |i: &mut usize| {
            while *i < s.len() && s[*i].is_whitespace() {
                *i += 1;
            }
        };
        loop {
            skip_ws(i);
            if *i < s.len() && s[*i] == '{' {
                *i += 1;
                loop {
                    skip_ws(i);
                    if *i >= s.len() || s[*i] == '}' {
                        *i += 1;
                        return;
                    }
                    let before = *i;
                    tree(s, i, &segs, out);
                    if *i == before {
                        *i += 1; // `*` or anything else that names no module
                    }
                    skip_ws(i);
                    if *i < s.len() && s[*i] == ',' {
                        *i += 1;
                    }
                }
            }
            let start = *i;
            while *i < s.len() && is_ident(s[*i]) {
                *i += 1;
            }
            let id: String = s[start..*i].iter().collect();
            if id.is_empty() {
                if *i < s.len() && s[*i] == '*' {
                    *i += 1;
                    out.push((segs, "*".to_string()));
                    return;
                }
                break;
            }
            if id != "self" {
                segs.push(id);
            }
            if s[*i..].starts_with(&[':', ':']) {
                *i += 2;
                continue;
            }
            skip_ws(i);
            if s[*i..].starts_with(&['a', 's', ' ']) {
                *i += 3;
                skip_ws(i);
                let start = *i;
                while *i < s.len() && is_ident(s[*i]) {
                    *i += 1;
                }
                let alias: String = s[start..*i].iter().collect();
                out.push((segs, alias));
                return;
            }
            break;
        }
        let name = segs.last().cloned().unwrap_or_default();
        out.push((segs, name));
    }
    let chars: Vec<char> = s.chars().collect();
    let mut out = Vec::new();
    tree(&chars, &mut 0, &Vec::new(), &mut out);
    out
}

/// Every path in `code` that starts with `crate::`, `super::` or `self::`.
fn prefixed_paths(code: &str) -> Vec<ModPath> {
    let mut out = Vec::new();
    let mut at = 0;
    while let Some(i) = ["crate::", "super::", "self::"]
        .iter()
        .filter_map(|k| code[at..].find(k).map(|j| at + j))
        .min()
    {
        let before = code[..i].chars().next_back();
        if before.is_some_and(is_ident) {
            at = i + 1;
            continue;
        }
        let paths = use_tree(&code[i..]);
        out.extend(paths.into_iter().map(|(p, _)| p));
        // Past the whole path, so `super::super::x` is read once.
        let len = code[i..]
            .find(|c: char| !(is_ident(c) || c == ':'))
            .unwrap_or(code.len() - i);
        at = i + len.max(1);
    }
    out
}

/// The crate's modules, each with its code.
fn modules(krate: &str) -> BTreeMap<ModPath, String> {
    let src = native_dir().join(krate).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    files
        .iter()
        .filter_map(|f| {
            let code = non_test_code(&std::fs::read_to_string(f).unwrap());
            module_of(&src, f).map(|m| (m, code))
        })
        .collect()
}

/// Where `path`, written in module `from`, leads: the deepest module it
/// names, or (for an item a module imports or re-exports with `use`) the
/// module the item comes from. `None` for a path outside the crate.
fn resolve(
    from: &ModPath,
    path: &[String],
    mods: &BTreeMap<ModPath, String>,
    names: &BTreeMap<ModPath, BTreeMap<String, ModPath>>,
) -> Option<ModPath> {
    let mut segs = path.iter().peekable();
    let mut cur: ModPath = match segs.peek().map(|s| s.as_str()) {
        Some("crate") => {
            segs.next();
            Vec::new()
        }
        Some("super") => {
            let mut m = from.clone();
            while segs.peek().is_some_and(|s| *s == "super") {
                segs.next();
                m.pop();
            }
            m
        }
        Some(first) if mods.contains_key(&[from.clone(), vec![first.to_string()]].concat()) => {
            from.clone()
        }
        _ => return None,
    };
    for seg in segs {
        let next = [cur.clone(), vec![seg.clone()]].concat();
        if mods.contains_key(&next) {
            cur = next;
        } else {
            return Some(
                names
                    .get(&cur)
                    .and_then(|n| n.get(seg))
                    .cloned()
                    .unwrap_or(cur),
            );
        }
    }
    Some(cur)
}

/// The crate's module graph at every level: an edge `a -> b` between two
/// modules with the same parent when code in `a` (or below it) names `b` (or
/// something in or below it). A child naming its parent, or a parent its
/// child, is no edge. Keys are module paths (`shared::cells`); every module
/// is a key.
fn module_graph(krate: &str) -> BTreeMap<String, BTreeSet<String>> {
    let mods = modules(krate);
    // What each module's `use` statements bring in, by name.
    let no_names = BTreeMap::new();
    let mut names: BTreeMap<ModPath, BTreeMap<String, ModPath>> = BTreeMap::new();
    for (m, code) in &mods {
        for (i, _) in code.match_indices("use ") {
            if code[..i].chars().next_back().is_some_and(is_ident) {
                continue;
            }
            for (path, name) in use_tree(&code[i + 4..]) {
                let path = path
                    .strip_prefix(&[String::from("self")][..])
                    .unwrap_or(&path);
                if let Some(to) = resolve(m, path, &mods, &no_names) {
                    names.entry(m.clone()).or_default().insert(name, to);
                }
            }
        }
    }
    let key = |p: &[String]| p.join("::");
    let mut graph: BTreeMap<String, BTreeSet<String>> = mods
        .keys()
        .filter(|m| !m.is_empty())
        .map(|m| (key(m), BTreeSet::new()))
        .collect();
    for (m, code) in &mods {
        for path in prefixed_paths(code) {
            let Some(to) = resolve(m, &path, &mods, &names) else {
                continue;
            };
            let common = m.iter().zip(&to).take_while(|(a, b)| a == b).count();
            if common < m.len() && common < to.len() {
                graph
                    .entry(key(&m[..=common]))
                    .or_default()
                    .insert(key(&to[..=common]));
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
    let mut listed: Vec<String> = CRATES.iter().map(|c| c.to_string()).collect();
    listed.sort();
    assert_eq!(found, listed, "every crate under native/ belongs in CRATES");
}

#[test]
fn modules_of_every_crate_import_each_other_without_cycles() {
    for krate in CRATES {
        let graph = module_graph(krate);
        if let Some(cycle) = find_cycle(&graph) {
            panic!(
                "import cycle between modules of native/{krate}: {}",
                cycle.join(" -> ")
            );
        }
    }
}

#[test]
fn core_rooms_depend_in_the_documented_direction() {
    let graph = module_graph("core");
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
    let graph = module_graph("stats");
    for user in ["handle", "points", "local"] {
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
fn use_trees_and_paths_are_read_whole() {
    let names = |s: &str| -> Vec<String> {
        use_tree(s)
            .into_iter()
            .map(|(p, n)| format!("{} as {n}", p.join("::")))
            .collect()
    };
    assert_eq!(
        names("super::{cells, layout::{self, CELLS as C}, x::*};"),
        [
            "super::cells as cells",
            "super::layout as layout",
            "super::layout::CELLS as C",
            "super::x as *"
        ]
    );
    assert_eq!(names("crate::a::B::new(1)"), ["crate::a::B::new as new"]);
    let paths: Vec<String> = prefixed_paths(
        "use super::super::x::Y;\nlet a = crate::b::f(self::c::D, $crate::e);\nmyself::z;",
    )
    .iter()
    .map(|p| p.join("::"))
    .collect();
    assert_eq!(
        paths,
        ["super::super::x::Y", "crate::b::f", "c::D", "crate::e"]
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

/// Issue 40's ceiling: a source file a reader must hold in their head stays
/// under 900 lines (`wc -l`); test files and generated code are not counted.
#[test]
fn no_source_file_is_over_900_lines() {
    let mut files = Vec::new();
    for krate in CRATES {
        let src = native_dir().join(krate).join("src");
        let mut rs = Vec::new();
        rust_files(&src, &mut rs);
        files.extend(rs.into_iter().filter(|f| module_of(&src, f).is_some()));
    }
    files_ending(
        &native_dir().join("../java/src/main/java"),
        "java",
        &mut files,
    );
    assert!(files.len() > 50, "found only {} source files", files.len());
    let long: Vec<String> = files
        .iter()
        .filter_map(|f| {
            let lines = std::fs::read_to_string(f).unwrap().lines().count();
            (lines > 900).then(|| format!("{} ({lines} lines)", f.display()))
        })
        .collect();
    assert!(
        long.is_empty(),
        "split these by topic into files under 900 lines: {long:?}"
    );
}
