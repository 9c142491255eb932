//! `pipeline --warc FILES…`: WARC files read in order on the source thread, and the resume
//! state of such a run (`OUT/state.json`).
//!
//! The state is written after every committed part: the input files finished so far and,
//! for the file being read, how many of its records are done. Because the sink writes in
//! input order, "done" is exact: `--resume` skips finished files, skips that many records of
//! the unfinished one, rebuilds the near-duplicate index from the committed parts, and
//! continues numbering parts, so no record is written twice or lost.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::{Checkpoint, EngineOptions, Item, Origin, PipelineError, Progress, Stats, run_engine};
use crate::dedup::{Fingerprinter, Fingerprints, NearDuplicateIndex};
use crate::extract::Extractor;
use crate::sink::{self, JsonlZstSink, SinkOptions};
use crate::sources::{self, SourceEvent};

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

const STATE_FILE: &str = "state.json";

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

/// The files of a run: files as given; folders give their `*.warc` and `*.warc.gz` files.
pub fn expand_inputs(paths: &[PathBuf]) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for p in paths {
        if p.is_dir() {
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
    out
}

fn key(path: &Path) -> String {
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf()).display().to_string()
}

struct WarcCheckpoint<'a> {
    out: &'a Path,
    keys: Vec<String>,
    /// Position of everything processed so far.
    live: Position,
    state: WarcState,
}

impl Checkpoint for WarcCheckpoint<'_> {
    fn processed(&mut self, origin: &Origin) {
        match origin {
            Origin::File { file, ordinal } => self.live.current = Some((self.keys[*file].clone(), ordinal + 1)),
            Origin::FileDone { file } => {
                self.live.done.push(self.keys[*file].clone());
                self.live.current = None;
            }
            Origin::Url(_) | Origin::Other => {}
        }
    }

    fn prepare(&mut self, part: Option<u32>, stats: &Stats) -> Result<(), PipelineError> {
        self.live.stats = stats.clone();
        match part {
            Some(p) => self.state.pending = Some((p, self.live.clone())),
            None => {
                self.state.committed = self.live.clone();
                self.state.pending = None;
            }
        }
        self.state.save(self.out)
    }

    fn committed(&mut self) -> Result<(), PipelineError> {
        if let Some((_, pos)) = self.state.pending.take() {
            self.state.committed = pos;
            self.state.save(self.out)?;
        }
        Ok(())
    }
}

/// Everything a WARC run needs.
pub struct WarcRun<'a> {
    pub inputs: Vec<PathBuf>,
    pub out: PathBuf,
    pub resume: bool,
    pub sink: SinkOptions,
    pub engine: EngineOptions,
    pub extractor: &'a Extractor<'a>,
    pub fingerprinter: &'a Fingerprinter,
}

/// Runs a WARC pipeline; returns the run's (cumulative) stats, also written to `OUT/stats.json`.
pub fn run(run: &WarcRun<'_>, progress: &dyn Progress) -> Result<Stats, PipelineError> {
    let previous = if run.resume { WarcState::load(&run.out)? } else { None };
    if !run.resume && run.out.join(STATE_FILE).exists() {
        return Err(PipelineError::State {
            path: run.out.join(STATE_FILE),
            message: "the output folder holds an earlier run: pass --resume to continue it, or choose another folder"
                .into(),
        });
    }
    let mut sink = JsonlZstSink::open(&run.out, run.sink.clone())?;
    let mut index = NearDuplicateIndex::new();
    if previous.is_some() {
        rebuild_index(&run.out, &mut index)?;
    }
    let position = previous.map(|s| s.resolve(&run.out)).unwrap_or_default();
    let mut stats = position.stats.clone();
    let keys: Vec<String> = run.inputs.iter().map(|p| key(p)).collect();
    let done: std::collections::HashSet<String> = position.done.iter().cloned().collect();
    let resume_at = position.current.clone();
    let state = WarcState { version: 1, committed: position.clone(), pending: None };
    let mut checkpoint = WarcCheckpoint { out: &run.out, keys: keys.clone(), live: position, state };
    let inputs = run.inputs.clone();

    let source = move |tx: &crossbeam_channel::Sender<Item>| -> Result<(), PipelineError> {
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
                    for (ordinal, (_offset, event)) in events.enumerate() {
                        let ordinal = ordinal as u64;
                        if ordinal < skip {
                            continue;
                        }
                        if tx.send(Item { origin: Origin::File { file, ordinal }, event: Some(event) }).is_err() {
                            return Ok(()); // the sink stopped
                        }
                    }
                }
                Err(e) => {
                    let event = SourceEvent::Failed { reason: e.reason(), message: e.to_string() };
                    if tx.send(Item { origin: Origin::File { file, ordinal: 0 }, event: Some(event) }).is_err() {
                        return Ok(());
                    }
                }
            }
            if tx.send(Item { origin: Origin::FileDone { file }, event: None }).is_err() {
                return Ok(());
            }
        }
        Ok(())
    };
    run_engine(
        source,
        run.extractor,
        run.fingerprinter,
        &mut sink,
        &mut index,
        &mut checkpoint,
        &mut stats,
        &run.engine,
        progress,
    )?;
    let bytes = serde_json::to_vec_pretty(&stats).expect("stats serialise");
    sink::write_atomic(&run.out.join("stats.json"), &bytes)?;
    Ok(stats)
}

/// Reads the committed parts back into the near-duplicate index (originals only).
pub fn rebuild_index(out: &Path, index: &mut NearDuplicateIndex) -> Result<(), PipelineError> {
    #[derive(Deserialize)]
    struct Slim {
        id: String,
        metadata: SlimMeta,
    }
    #[derive(Deserialize)]
    struct SlimMeta {
        fingerprints: Fingerprints,
        near_duplicate_of: Option<String>,
    }
    let parts =
        sink::list_parts(out).map_err(|e| PipelineError::State { path: out.to_path_buf(), message: e.to_string() })?;
    for part in parts {
        let err = |m: String| PipelineError::State { path: part.clone(), message: m };
        let file = std::fs::File::open(&part).map_err(|e| err(e.to_string()))?;
        let decoder = zstd::Decoder::new(file).map_err(|e| err(e.to_string()))?;
        use std::io::BufRead;
        for line in std::io::BufReader::new(decoder).lines() {
            let line = line.map_err(|e| err(e.to_string()))?;
            let r: Slim = serde_json::from_str(&line).map_err(|e| err(e.to_string()))?;
            if r.metadata.near_duplicate_of.is_none() {
                index.check_and_insert(&r.id, &r.metadata.fingerprints);
            }
        }
    }
    Ok(())
}
