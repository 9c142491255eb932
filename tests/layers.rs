//! The direction of imports between the top-level modules of `src/`: each may use the modules
//! below it in [`LAYERS`] (html at the bottom, the crawl pipeline at the top; the binary's
//! `cli/` uses anything), never one above it. A helper two modules share lives below both
//! (`gold/`, `transport.rs`, `model_file.rs` were moved there for this). [`KNOWN_BACK_ARROWS`]
//! is empty: an exception would have to be listed there, and a listed one that is gone fails
//! too, so the list only shrinks. Within a folder, [`no_import_cycles_within_a_folder`] checks
//! that no two modules import each other, directly or around a loop.

use std::collections::BTreeSet;
use std::path::Path;

/// Bottom to top.
const LAYERS: &[&str] = &[
    "model_file",
    "html",
    "features",
    "metadata",
    "dataset",
    "gold",
    "dedup",
    "site_memory",
    "scoring",
    "segment",
    "methods",
    "extract",
    "eval",
    "transport",
    "storage",
    "sources",
    "sink",
    "pipeline",
];

/// (from, to): imports that point up today.
const KNOWN_BACK_ARROWS: &[(&str, &str)] = &[];

/// The top-level modules a file's code (comments and `#[cfg(test)]` parts left out) names as
/// `crate::module`.
fn imports(code: &str) -> BTreeSet<String> {
    let code = code.split("#[cfg(test)]").next().unwrap_or("");
    let mut out = BTreeSet::new();
    for line in code.lines() {
        let line = line.split("//").next().unwrap_or("");
        let mut rest = line;
        while let Some(i) = rest.find("crate::") {
            rest = &rest[i + "crate::".len()..];
            let name: String = rest.chars().take_while(|c| c.is_ascii_lowercase() || *c == '_').collect();
            if !name.is_empty() {
                out.insert(name);
            }
            // `use crate::{a::x, b::y}`: every name at the start of a path in the braces.
            if let Some(group) = rest.strip_prefix('{') {
                let group = group.split('}').next().unwrap_or("");
                for part in group.split(',') {
                    let name: String =
                        part.trim().chars().take_while(|c| c.is_ascii_lowercase() || *c == '_').collect();
                    if !name.is_empty() {
                        out.insert(name);
                    }
                }
            }
        }
    }
    out
}

fn walk(dir: &Path, files: &mut Vec<std::path::PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            walk(&p, files);
        } else if p.extension().is_some_and(|x| x == "rs") {
            files.push(p);
        }
    }
}

#[test]
fn imports_point_down_the_layers() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    walk(&src, &mut files);
    let rank = |m: &str| LAYERS.iter().position(|l| *l == m);
    let mut arrows: BTreeSet<(String, String, String)> = BTreeSet::new();
    for f in &files {
        let rel = f.strip_prefix(&src).unwrap();
        let first = rel.components().next().unwrap().as_os_str().to_string_lossy().into_owned();
        let module = first.trim_end_matches(".rs").to_string();
        if matches!(module.as_str(), "lib" | "main" | "cli") {
            continue;
        }
        let from = rank(&module).unwrap_or_else(|| panic!("src/{first}: a module missing from LAYERS"));
        for to in imports(&std::fs::read_to_string(f).unwrap()) {
            let Some(to_rank) = rank(&to) else { continue };
            if to_rank > from {
                arrows.insert((module.clone(), to, rel.display().to_string()));
            }
        }
    }
    let found: BTreeSet<(&str, &str)> = arrows.iter().map(|(a, b, _)| (a.as_str(), b.as_str())).collect();
    let new: Vec<&(String, String, String)> =
        arrows.iter().filter(|(a, b, _)| !KNOWN_BACK_ARROWS.contains(&(a.as_str(), b.as_str()))).collect();
    assert!(new.is_empty(), "imports pointing up the layers (move the shared part below both): {new:?}");
    let gone: Vec<&(&str, &str)> = KNOWN_BACK_ARROWS.iter().filter(|k| !found.contains(k)).collect();
    assert!(gone.is_empty(), "back-arrows removed: take them off KNOWN_BACK_ARROWS: {gone:?}");
}

#[test]
fn the_import_reader_sees_paths_and_groups_but_not_comments() {
    let code = "use crate::html::Token;\nuse crate::{scoring::X, extract};\n// crate::sink in a comment\nlet a = crate::dedup::f();\n#[cfg(test)]\nuse crate::eval;";
    let got: Vec<String> = imports(code).into_iter().collect();
    assert_eq!(got, ["dedup", "extract", "html", "scoring"]);
}

/// The sibling modules of folder `folder` (its files and subfolders, `mod.rs` left out) that a
/// file's code names: `super::x` from a file directly in the folder, `crate::folder::x` (or,
/// in the binary's `cli/`, `super::x`) from anywhere in it. Comments and tests are left out.
fn sibling_refs(code: &str, folder: &str, direct: bool) -> BTreeSet<String> {
    let code = code.split("#[cfg(test)]").next().unwrap_or("");
    let mut out = BTreeSet::new();
    let full = format!("crate::{folder}::");
    for line in code.lines() {
        let line = line.split("//").next().unwrap_or("");
        let mut prefixes = vec![full.as_str()];
        if direct {
            prefixes.push("super::");
        }
        for p in prefixes {
            let mut rest = line;
            while let Some(i) = rest.find(p) {
                // `super::super::…` leaves the folder.
                let before = &rest[..i];
                rest = &rest[i + p.len()..];
                if p == "super::" && (before.ends_with("super::") || rest.starts_with("super::")) {
                    while let Some(r) = rest.strip_prefix("super::") {
                        rest = r;
                    }
                    continue;
                }
                let mut names = vec![rest];
                if let Some(group) = rest.strip_prefix('{') {
                    names = group.split('}').next().unwrap_or("").split(',').collect();
                }
                for n in names {
                    let name: String = n
                        .trim()
                        .chars()
                        .take_while(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '_')
                        .collect();
                    if !name.is_empty() {
                        out.insert(name);
                    }
                }
            }
        }
    }
    out
}

/// No two modules of one folder import each other, directly or around a loop: within a folder
/// (`eval/`, `methods/`, `cli/` …) a shared helper lives in a module both use, not in one of
/// them. Each folder's `mod.rs` (the registration and the table) is left out.
#[test]
fn no_import_cycles_within_a_folder() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut cycles = Vec::new();
    for dir in std::fs::read_dir(&src).unwrap().flatten().map(|e| e.path()).filter(|p| p.is_dir()) {
        let folder = dir.file_name().unwrap().to_string_lossy().into_owned();
        let mut files = Vec::new();
        walk(&dir, &mut files);
        let mut edges: BTreeSet<(String, String)> = BTreeSet::new();
        let mut nodes: BTreeSet<String> = BTreeSet::new();
        for f in &files {
            let rel = f.strip_prefix(&dir).unwrap();
            let first = rel.components().next().unwrap().as_os_str().to_string_lossy().into_owned();
            let module = first.trim_end_matches(".rs").to_string();
            if module == "mod" {
                continue;
            }
            nodes.insert(module.clone());
            let direct = rel.components().count() == 1;
            for to in sibling_refs(&std::fs::read_to_string(f).unwrap(), &folder, direct) {
                if to != module {
                    edges.insert((module.clone(), to));
                }
            }
        }
        // A cycle: a module that reaches itself.
        for start in &nodes {
            let mut seen = BTreeSet::new();
            let mut stack: Vec<&str> = edges.iter().filter(|(a, _)| a == start).map(|(_, b)| b.as_str()).collect();
            while let Some(n) = stack.pop() {
                if n == start {
                    cycles.push(format!("{folder}/{start}"));
                    break;
                }
                if seen.insert(n) {
                    stack.extend(edges.iter().filter(|(a, _)| a == n).map(|(_, b)| b.as_str()));
                }
            }
        }
    }
    assert!(cycles.is_empty(), "modules on an import cycle within their folder: {cycles:?}");
}

#[test]
fn the_sibling_reader_sees_super_and_crate_paths() {
    let code = "use super::{lcs::f, metrics};\nuse super::super::x;\nuse crate::eval::units::U;\n// super::tune\n";
    let got: Vec<String> = sibling_refs(code, "eval", true).into_iter().collect();
    assert_eq!(got, ["lcs", "metrics", "units"]);
}
