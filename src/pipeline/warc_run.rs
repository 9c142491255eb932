//! `pipeline --warc FILES…`: WARC files read in order on the source thread, and the resume
//! state of such a run (`OUT/state.json`).
//!
//! The state is written once per part, just before the part is renamed into place: the
//! position it completes (input files finished so far and, for the file being read, how many
//! of its records are done) as pending, next to the last durable position; loading takes the
//! pending one only if its part exists. Because the sink writes in
//! input order, "done" is exact: `--resume` skips finished files, skips that many records of
//! the unfinished one, rebuilds the near-duplicate index from the committed parts, and
//! continues numbering parts, so no record is written twice or lost.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::OutputMirror;
use super::config::WarcConfig;
use super::{Checkpoint, ItemSender, Origin, PipelineError, Progress, RunContext, Stats};
use crate::sink;
use crate::sources::{self, SourceEvent};
use crate::storage;

/// Resume state of a WARC run: the position of the last durable part, and the position of
/// the part being committed (valid once that part's file exists).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WarcState {
    pub version: u32,
    pub committed: Position,
    /// Part index and the position it completes.
    pub pending: Option<(u32, Position)>,
}

/// How far a WARC run got.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Position {
    /// Input files (canonical paths) read to the end.
    pub done: Vec<String>,
    /// The file being read and how many of its records are done.
    pub current: Option<(String, u64)>,
    pub stats: Stats,
}

pub(crate) const STATE_FILE: &str = "state.json";

impl WarcState {
    pub fn load(out: &Path) -> Result<Option<Self>, PipelineError> {
        let path = out.join(STATE_FILE);
        match std::fs::read(&path) {
            Ok(bytes) => serde_json::from_slice(&bytes)
                .map(Some)
                .map_err(|e| PipelineError::State { path, message: format!("unreadable resume state: {e}") }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(PipelineError::State { path, message: e.to_string() }),
        }
    }

    /// The position to resume from: the pending one if its part made it to disk.
    pub fn resolve(self, out: &Path) -> Position {
        match self.pending {
            Some((part, pos)) if out.join(format!("part-{part:05}.jsonl.zst")).exists() => pos,
            _ => self.committed,
        }
    }

    fn save(&self, out: &Path) -> Result<(), PipelineError> {
        let bytes = serde_json::to_vec_pretty(self).expect("state serialises");
        sink::write_atomic(&out.join(STATE_FILE), &bytes).map_err(PipelineError::from)
    }
}

/// The inputs of a run, in order: files and URLs as given; folders and `s3://…/` prefixes
/// give their `*.warc` and `*.warc.gz` files (sorted); each list file gives its lines, the
/// relative ones under `base_url` (Common Crawl's `warc.paths.gz` holds such lines).
pub fn expand_inputs(config: &WarcConfig) -> Result<Vec<PathBuf>, PipelineError> {
    let mut out = Vec::new();
    for p in &config.paths {
        let s = p.to_string_lossy();
        if storage::is_s3(&s) {
            let url = storage::S3Url::parse(&s)?;
            if url.is_prefix() {
                out.extend(storage::list_warcs(&url)?.into_iter().map(|u| PathBuf::from(u.to_string())));
            } else {
                out.push(p.clone());
            }
        } else if p.is_dir() {
            let mut inside: Vec<PathBuf> = std::fs::read_dir(p)
                .into_iter()
                .flatten()
                .flatten()
                .map(|e| e.path())
                .filter(|f| {
                    let n = f.to_string_lossy();
                    n.ends_with(".warc") || n.ends_with(".warc.gz")
                })
                .collect();
            inside.sort();
            out.extend(inside);
        } else {
            out.push(p.clone());
        }
    }
    for list in &config.lists {
        out.extend(read_list(list, &config.base_url)?);
    }
    Ok(out)
}

/// One input per line of a list file (gzip when its name ends in `.gz`); blank lines and `#`
/// comments are skipped.
pub fn read_list(list: &Path, base_url: &str) -> Result<Vec<PathBuf>, PipelineError> {
    use std::io::Read;
    let err = |m: String| PipelineError::State { path: list.to_path_buf(), message: m };
    let file = std::fs::File::open(list).map_err(|e| err(format!("cannot read: {e}")))?;
    let mut text = String::new();
    let read = if list.to_string_lossy().ends_with(".gz") {
        flate2::read::MultiGzDecoder::new(file).read_to_string(&mut text)
    } else {
        std::io::BufReader::new(file).read_to_string(&mut text)
    };
    read.map_err(|e| err(format!("cannot read as a list of inputs: {e}")))?;
    Ok(text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| PathBuf::from(resolve_line(l, base_url)))
        .collect())
}

/// A list line as an input: URLs and absolute paths as they are, other lines under `base`.
fn resolve_line(line: &str, base: &str) -> String {
    if line.contains("://") || line.starts_with('/') || base.is_empty() {
        return line.to_string();
    }
    if base.contains("://") {
        format!("{}/{}", base.trim_end_matches('/'), line.trim_start_matches("./"))
    } else {
        Path::new(base).join(line).display().to_string()
    }
}

fn key(path: &Path) -> String {
    if super::config::is_url(path) {
        return path.display().to_string();
    }
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf()).display().to_string()
}

struct WarcCheckpoint<'a> {
    out: &'a Path,
    keys: Vec<String>,
    /// Position of everything processed so far.
    live: Position,
    state: WarcState,
    mirror: Option<&'a dyn OutputMirror>,
}

impl Checkpoint for WarcCheckpoint<'_> {
    fn processed(&mut self, origin: &Origin) {
        match origin {
            Origin::File { file, ordinal } => self.live.current = Some((self.keys[*file].clone(), ordinal + 1)),
            Origin::FileDone { file } => {
                self.live.done.push(self.keys[*file].clone());
                self.live.current = None;
            }
            Origin::Url(_) | Origin::UrlRetry(_) | Origin::Other => {}
        }
    }

    fn prepare(&mut self, part: Option<u32>, stats: &Stats) -> Result<(), PipelineError> {
        self.live.stats = stats.clone();
        // `prepare` is called after the previous part was renamed: its position is durable.
        if let Some((_, pos)) = self.state.pending.take() {
            self.state.committed = pos;
        }
        match part {
            Some(p) => self.state.pending = Some((p, self.live.clone())),
            None => self.state.committed = self.live.clone(),
        }
        self.state.save(self.out)?;
        if let Some(m) = self.mirror {
            m.publish(&self.out.join(STATE_FILE))?;
        }
        Ok(())
    }
}

/// Everything a WARC run needs.
pub struct WarcRun<'a> {
    pub inputs: Vec<PathBuf>,
    pub ctx: RunContext<'a>,
}

/// Runs a WARC pipeline; returns the run's (cumulative) stats, also written to `OUT/stats.json`.
pub fn run(run: &WarcRun<'_>, progress: &dyn Progress) -> Result<Stats, PipelineError> {
    let ctx = &run.ctx;
    ctx.check_fresh(STATE_FILE)?;
    let previous = if ctx.resume { WarcState::load(&ctx.out)? } else { None };
    let output = ctx.open_output()?;
    let position = previous.map(|s| s.resolve(&ctx.out)).unwrap_or_default();
    let stats = position.stats.clone();
    let keys: Vec<String> = run.inputs.iter().map(|p| key(p)).collect();
    let done: std::collections::HashSet<String> = position.done.iter().cloned().collect();
    let resume_at = position.current.clone();
    let state = WarcState { version: 1, committed: position.clone(), pending: None };
    let mut checkpoint =
        WarcCheckpoint { out: &ctx.out, keys: keys.clone(), live: position, state, mirror: ctx.mirror };
    let inputs = run.inputs.clone();

    let source = move |tx: &mut ItemSender| -> Result<(), PipelineError> {
        for (file, path) in inputs.iter().enumerate() {
            if done.contains(&keys[file]) {
                continue;
            }
            let skip = match &resume_at {
                Some((k, n)) if *k == keys[file] => *n,
                _ => 0,
            };
            match sources::warc_events(path) {
                Ok(events) => {
                    for (ordinal, event) in events.enumerate().skip(skip as usize) {
                        if !tx.send(Origin::File { file, ordinal: ordinal as u64 }, Some(event)) {
                            return Ok(()); // the sink stopped
                        }
                    }
                }
                Err(e) => {
                    let event = SourceEvent::Failed { reason: e.reason(), message: e.to_string() };
                    if !tx.send(Origin::File { file, ordinal: 0 }, Some(event)) {
                        return Ok(());
                    }
                }
            }
            if !tx.send(Origin::FileDone { file }, None) {
                return Ok(());
            }
        }
        Ok(())
    };
    ctx.run(source, output, &mut checkpoint, stats, progress)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn list_lines_resolve_under_the_base() {
        let cc = super::super::config::COMMON_CRAWL_BASE;
        assert_eq!(
            resolve_line("crawl-data/CC-MAIN-2026-40/segments/1/warc/a.warc.gz", cc),
            "https://data.commoncrawl.org/crawl-data/CC-MAIN-2026-40/segments/1/warc/a.warc.gz"
        );
        assert_eq!(resolve_line("x/a.warc.gz", "s3://commoncrawl/"), "s3://commoncrawl/x/a.warc.gz");
        assert_eq!(resolve_line("x/a.warc.gz", "/data/cc"), "/data/cc/x/a.warc.gz");
        assert_eq!(resolve_line("https://h/a.warc.gz", cc), "https://h/a.warc.gz");
        assert_eq!(resolve_line("/abs/a.warc", cc), "/abs/a.warc");
    }

    #[test]
    fn a_gzipped_list_gives_its_lines_in_order() {
        use std::io::Write;
        let dir = tempfile::tempdir().unwrap();
        let list = dir.path().join("warc.paths.gz");
        let mut gz = flate2::write::GzEncoder::new(std::fs::File::create(&list).unwrap(), Default::default());
        gz.write_all(b"# a comment\nb/2.warc.gz\n\n  a/1.warc.gz  \n").unwrap();
        gz.finish().unwrap();
        let got = read_list(&list, "s3://cc/").unwrap();
        assert_eq!(got, vec![PathBuf::from("s3://cc/b/2.warc.gz"), PathBuf::from("s3://cc/a/1.warc.gz")]);
        let missing = read_list(&dir.path().join("nope.txt"), "").unwrap_err().to_string();
        assert!(missing.contains("nope.txt"), "{missing}");
    }
}
