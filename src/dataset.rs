//! Dataset manifests: one JSON object per line describing a page and its gold text
//! (`{"id","dataset","split","html","url","site","year","lang","gold":{...},"license"}`).
//!
//! This module only reads manifests and resolves page paths; extraction, scoring and
//! training live in `extract`, `eval` and `training`.

use std::io::BufRead;
use std::path::{Path, PathBuf};

use serde::Deserialize;

/// Errors reading a manifest; each names the file and, where it helps, the line.
#[derive(Debug, thiserror::Error)]
pub enum ManifestError {
    #[error("cannot read manifest `{path}`: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}:{line}: invalid manifest line: {source}")]
    Json {
        path: PathBuf,
        line: usize,
        #[source]
        source: serde_json::Error,
    },
}

/// The gold annotation of a page.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct Gold {
    /// Gold main text as the source gives it.
    #[serde(default)]
    pub text: Option<String>,
    #[serde(default)]
    pub title: Option<String>,
    /// Snippets a correct extraction must contain.
    #[serde(default)]
    pub with: Option<Vec<String>>,
    /// Snippets a correct extraction must not contain.
    #[serde(default)]
    pub without: Option<Vec<String>>,
    /// Publication date `YYYY-MM-DD`: absent when the set has no date gold, `Some(None)` when
    /// the page rightly has none.
    #[serde(default, deserialize_with = "present")]
    pub date: Option<Option<String>>,
}

/// A field that is present (even as null) is `Some`.
fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Option<String>>, D::Error> {
    Option::<String>::deserialize(d).map(Some)
}

/// One manifest line. Unknown keys are ignored: manifests are data, not configuration.
#[derive(Debug, Clone, Deserialize)]
pub struct ManifestEntry {
    pub id: String,
    #[serde(default)]
    pub dataset: Option<String>,
    #[serde(default)]
    pub split: Option<String>,
    /// Page path, relative to the manifest's folder or absolute.
    pub html: String,
    #[serde(default)]
    pub url: Option<String>,
    #[serde(default)]
    pub site: Option<String>,
    #[serde(default)]
    pub year: Option<i64>,
    #[serde(default)]
    pub lang: Option<String>,
    #[serde(default)]
    pub gold: Gold,
    /// Kind of page (`article`, `listing`, `forum`, `product`, …): from the line, or from a
    /// `provenance.jsonl` beside the manifest (wcxb has one).
    #[serde(default)]
    pub page_type: Option<String>,
    /// The page path resolved against the manifest's folder (filled in by [`read_manifest`]).
    #[serde(skip)]
    pub path: PathBuf,
}

impl ManifestEntry {
    /// Dataset name, `?` when the manifest does not say.
    pub fn dataset_name(&self) -> &str {
        self.dataset.as_deref().unwrap_or("?")
    }
}

/// Reads every entry of `path`, keeping only `split` when given.
pub fn read_manifest(path: &Path, split: Option<&str>) -> Result<Vec<ManifestEntry>, ManifestError> {
    read_entries(path, split, true)
}

fn read_entries(path: &Path, split: Option<&str>, keep_gold: bool) -> Result<Vec<ManifestEntry>, ManifestError> {
    let io_err = |source| ManifestError::Io { path: path.to_path_buf(), source };
    let file = std::fs::File::open(path).map_err(io_err)?;
    let base = path
        .canonicalize()
        .ok()
        .and_then(|p| p.parent().map(Path::to_path_buf))
        .unwrap_or_else(|| path.parent().map(Path::to_path_buf).unwrap_or_default());
    let page_types = provenance_page_types(&base.join("provenance.jsonl"));
    let mut out = Vec::new();
    for (i, line) in std::io::BufReader::new(file).lines().enumerate() {
        let line = line.map_err(io_err)?;
        if line.trim().is_empty() {
            continue;
        }
        let mut entry: ManifestEntry = serde_json::from_str(&line).map_err(|source| ManifestError::Json {
            path: path.to_path_buf(),
            line: i + 1,
            source,
        })?;
        if let Some(want) = split
            && entry.split.as_deref() != Some(want)
        {
            continue;
        }
        let html = Path::new(&entry.html);
        entry.path = if html.is_absolute() { html.to_path_buf() } else { base.join(html) };
        if entry.page_type.is_none() {
            entry.page_type = page_types.get(&entry.id).cloned();
        }
        if !keep_gold {
            entry.gold = Gold::default();
        }
        out.push(entry);
    }
    Ok(out)
}

/// `id` → `page_type` of a provenance file (none when it is missing; unreadable lines are
/// skipped: provenance is descriptive, not needed to score).
fn provenance_page_types(path: &Path) -> std::collections::HashMap<String, String> {
    #[derive(Deserialize)]
    struct Line {
        id: String,
        page_type: Option<String>,
    }
    let Ok(text) = std::fs::read_to_string(path) else { return Default::default() };
    text.lines()
        .filter_map(|l| serde_json::from_str::<Line>(l).ok())
        .filter_map(|l| Some((l.id, l.page_type?)))
        .collect()
}

/// Reads several manifests in order.
pub fn read_manifests(paths: &[PathBuf], split: Option<&str>) -> Result<Vec<ManifestEntry>, ManifestError> {
    read_all(paths, split, true)
}

/// Every entry of several manifests, any split, without its gold: the unlabelled pages site
/// memory counts (a pool of wcxb's 1,329 pages holds 13 MB of gold text nothing reads).
pub fn read_unlabelled(paths: &[PathBuf]) -> Result<Vec<ManifestEntry>, ManifestError> {
    read_all(paths, None, false)
}

fn read_all(paths: &[PathBuf], split: Option<&str>, keep_gold: bool) -> Result<Vec<ManifestEntry>, ManifestError> {
    let mut all = Vec::new();
    for p in paths {
        all.extend(read_entries(p, split, keep_gold)?);
    }
    Ok(all)
}

/// The distinct dataset names of `entries`, sorted, and their split when they share one (for a
/// model's training summary).
pub fn sources_of<'a>(entries: impl Iterator<Item = &'a ManifestEntry> + Clone) -> (Vec<String>, Option<String>) {
    let mut datasets: Vec<String> = entries.clone().map(|e| e.dataset_name().to_string()).collect();
    datasets.sort();
    datasets.dedup();
    let mut splits: Vec<&str> = entries.filter_map(|e| e.split.as_deref()).collect();
    splits.sort();
    splits.dedup();
    (datasets, (splits.len() == 1).then(|| splits[0].to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn page_types_come_from_the_line_or_the_provenance_file() {
        let dir = tempfile::tempdir().unwrap();
        let m = dir.path().join("manifest.jsonl");
        std::fs::write(
            &m,
            "{\"id\":\"a\",\"html\":\"html/a.html\"}\n{\"id\":\"b\",\"html\":\"html/b.html\",\"page_type\":\"forum\"}\n\
             {\"id\":\"c\",\"html\":\"html/c.html\"}\n",
        )
        .unwrap();
        std::fs::write(
            dir.path().join("provenance.jsonl"),
            "{\"id\":\"a\",\"page_type\":\"listing\"}\nnot json\n{\"id\":\"b\",\"page_type\":\"article\"}\n",
        )
        .unwrap();
        let e = read_manifest(&m, None).unwrap();
        let types: Vec<Option<&str>> = e.iter().map(|x| x.page_type.as_deref()).collect();
        assert_eq!(types, [Some("listing"), Some("forum"), None], "the line wins over provenance");
    }
}
