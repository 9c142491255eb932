//! `pipeline dedup OUT… --out DEDUP`: the near-duplicate pass over every record of one or
//! more runs (a sharded root gives its shards in order), in bounded memory
//! ([`crate::dedup::global`]). Records are taken in root / shard / part / line order; each
//! cluster of records sharing an LSH band key or the exact-text hash keeps its first record.
//! Writes `DEDUP/removed.jsonl`, `DEDUP/stats.json`, and with `write_parts` the kept records
//! as `DEDUP/part-*.jsonl.zst`. The in-run `near_duplicate_of` marks are left as they are.
//!
//! Ids are not unique across inputs (one URL fetched by two runs has one `url:` id), so a
//! record is named by its place too: each line of `removed.jsonl` is
//! `{"id", "part", "line", "duplicate_of", "duplicate_of_part", "duplicate_of_line"}`, where
//! `part` is the part file as read and `line` is 1-based. Exact-id twins are removed like
//! any other duplicate, by place, never as duplicates of themselves.
//!
//! **Rerunning.** `DEDUP/dedup.json` names the inputs and options. A second run into a folder
//! holding the same dedup (finished, or killed at any point) starts it over, so it ends with
//! the same files as one run; a folder holding anything else, or an output inside an input
//! (which the pass would read back), is refused before anything is written.
//!
//! **Inputs still written.** An input folder (or one of its shards) that a live run holds
//! locked is refused before anything is read: the pass would see only the parts committed so
//! far ([`super::refuse_if_running`]; `s3://` inputs are asked the same of their prefix's lock
//! before they are downloaded, [`super::remote_lock::refuse_if_written`]).
//!
//! **Damage.** A part that cannot be read to its end, or a line that is not a record, is
//! reported, counted in `failed`, and left out of both passes; the pass goes on.

use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

use serde::{Deserialize, Serialize};

use super::PipelineError;
use crate::dedup::global::PairSpill;
use crate::sink::{PartSink, SinkOptions, list_parts};

/// What `pipeline dedup` is asked to do.
#[derive(Debug, Clone)]
pub struct DedupRun {
    pub inputs: Vec<PathBuf>,
    /// How `DEDUP/dedup.json` names each input (an `s3://` input's URL, where `inputs` holds
    /// its downloaded copy); an input without one is named by its canonical path.
    pub names: Vec<String>,
    pub out: PathBuf,
    /// Bytes of (key, record) pairs held before a sorted run is spilled.
    pub memory_budget: usize,
    pub write_parts: bool,
    pub sink: SinkOptions,
}

/// Counts of a dedup pass (`DEDUP/stats.json`).
#[derive(Debug, Clone, Default, Serialize)]
pub struct DedupStats {
    /// Parts cut short and lines that are not records (reported, left out).
    pub failed: u64,
    pub parts: usize,
    pub records: u64,
    pub removed: u64,
    /// Clusters of two or more records.
    pub clusters: u64,
    pub pairs: u64,
    pub spilled_runs: usize,
    pub seconds: f64,
}

#[derive(Deserialize)]
struct Sig {
    id: String,
    metadata: SigMeta,
}

#[derive(Deserialize)]
struct SigMeta {
    fingerprints: SigFp,
}

#[derive(Deserialize)]
struct SigFp {
    exact: String,
    bands: Vec<String>,
}

/// `DEDUP/dedup.json`: what a dedup folder was made from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct DedupManifest {
    version: u32,
    /// The inputs' canonical paths, in order.
    inputs: Vec<String>,
    write_parts: bool,
}

const MANIFEST: &str = "dedup.json";
const SPILL_DIR: &str = ".dedup-runs";

/// Checks the output folder and makes it ready: refuses an output inside an input (or an
/// input inside the output) and a non-empty folder that holds anything but this same dedup;
/// clears what an earlier run of this same dedup left, then records the manifest.
fn prepare_out(job: &DedupRun) -> Result<(), PipelineError> {
    let refuse = |path: &Path, message: String| Err(PipelineError::State { path: path.to_path_buf(), message });
    let out = super::canonical_path(&job.out);
    for i in &job.inputs {
        let c = super::canonical_path(i);
        if out.starts_with(&c) || c.starts_with(&out) {
            return refuse(
                &job.out,
                format!(
                    "the dedup output overlaps the input `{}`: it would read its own records; choose another --out",
                    i.display()
                ),
            );
        }
    }
    let manifest = manifest(job);
    let state = |e: std::io::Error| PipelineError::State { path: job.out.clone(), message: e.to_string() };
    let entries: Vec<PathBuf> = match std::fs::read_dir(&job.out) {
        Ok(rd) => rd.flatten().map(|e| e.path()).collect(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(e) => return Err(state(e)),
    };
    if !entries.is_empty() {
        let earlier: Option<DedupManifest> =
            std::fs::read(job.out.join(MANIFEST)).ok().and_then(|b| serde_json::from_slice(&b).ok());
        if earlier.as_ref() != Some(&manifest) {
            return refuse(
                &job.out,
                "the output folder is not empty and holds no earlier run of this same dedup (same inputs and \
                 options): choose an empty --out"
                    .into(),
            );
        }
        // The same dedup, finished or killed: start it over, so the result is one run's.
        for p in entries {
            let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
            if name.starts_with("part-") || matches!(name, "removed.jsonl" | "stats.json") {
                std::fs::remove_file(&p).map_err(state)?;
            } else if name == SPILL_DIR {
                std::fs::remove_dir_all(&p).map_err(state)?;
            }
        }
    }
    std::fs::create_dir_all(&job.out).map_err(state)?;
    let bytes = serde_json::to_vec_pretty(&manifest).expect("manifest serialises");
    crate::sink::write_atomic(&job.out.join(MANIFEST), &bytes)?;
    Ok(())
}

/// Why the run in `input` has not finished, if its resume state says so: a WARC input being
/// read or to be read again, or a shard with inputs in progress or pending.
fn unfinished(input: &Path) -> Option<String> {
    use super::status::RunStatus;
    match super::status::status(input).ok()? {
        RunStatus::Warc { current: Some((file, _)), .. } => Some(format!("{file} was being read")),
        RunStatus::Warc { retry, .. } => {
            let pending = retry.iter().filter(|r| !r.given_up()).count();
            (pending > 0).then(|| format!("{pending} input(s) to be read again"))
        }
        RunStatus::Shards { shards, .. } => {
            let open: Vec<&str> =
                shards.iter().filter(|s| s.in_progress + s.pending > 0).map(|s| s.dir.as_str()).collect();
            (!open.is_empty()).then(|| format!("shard(s) with inputs left: {}", open.join(", ")))
        }
        RunStatus::Feeds { .. } => None,
    }
}

/// What `dedup.json` says of `job`.
fn manifest(job: &DedupRun) -> DedupManifest {
    let inputs = job
        .inputs
        .iter()
        .enumerate()
        .map(|(k, i)| job.names.get(k).cloned().unwrap_or_else(|| super::canonical_path(i).display().to_string()))
        .collect();
    DedupManifest { version: 1, inputs, write_parts: job.write_parts }
}

/// Makes the `s3://` prefix `remote` ready for `job`'s output (its lock held): refuses one
/// that holds anything but an earlier run of this same dedup (its `dedup.json` naming the same
/// inputs and options), which the upload would overwrite; clears what an earlier run of it
/// left there, so no part of a larger earlier result stays beside the new ones; then records
/// the manifest, first, so a run killed mid-upload is recognised by its rerun.
pub fn prepare_remote_out(job: &DedupRun, remote: &crate::storage::S3Url) -> Result<(), PipelineError> {
    use crate::storage;
    let remote = remote.as_prefix();
    let manifest = manifest(job);
    let held: Vec<_> = storage::list(&remote)?
        .into_iter()
        .filter(|(u, _)| u.key.strip_prefix(&remote.key) != Some(super::remote_lock::LOCK_OBJECT))
        .collect();
    if !held.is_empty() {
        let earlier = storage::read_small(&remote.join(MANIFEST))?
            .and_then(|(b, _, _)| serde_json::from_slice::<DedupManifest>(&b).ok());
        if earlier.as_ref() != Some(&manifest) {
            return Err(PipelineError::State {
                path: PathBuf::from(remote.to_string()),
                message: "the output prefix is not empty and holds no earlier run of this same dedup (same inputs \
                          and options): its objects would be overwritten; choose an empty --out"
                    .into(),
            });
        }
        for (url, _) in held {
            let name = url.key.strip_prefix(&remote.key).unwrap_or("");
            if name.starts_with("part-") || matches!(name, "removed.jsonl" | "stats.json") {
                storage::delete(&url)?;
            }
        }
    }
    let bytes = serde_json::to_vec_pretty(&manifest).expect("manifest serialises");
    storage::put_small(&remote.join(MANIFEST), bytes)?;
    Ok(())
}

/// Removes the spill folder however the pass ends.
struct SpillGuard(PathBuf);

impl Drop for SpillGuard {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The parts of the inputs in order: each input's own parts, then its `shard-*` folders'.
pub fn input_parts(inputs: &[PathBuf]) -> Result<Vec<PathBuf>, PipelineError> {
    fn io(p: &Path) -> impl Fn(std::io::Error) -> PipelineError + '_ {
        move |e| PipelineError::State { path: p.to_path_buf(), message: e.to_string() }
    }
    let mut parts = Vec::new();
    for root in inputs {
        parts.extend(list_parts(root).map_err(io(root))?);
        for s in super::shard::shard_dirs(root).map_err(io(root))? {
            parts.extend(list_parts(&s).map_err(io(&s))?);
        }
    }
    Ok(parts)
}

/// Calls `f` with every line of every part, in order; returns how many parts could not be
/// opened or read to their end (reported when `report`, so the second pass does not say it
/// again). A damaged part's lines read before the damage are given, so both passes see the same
/// lines.
fn each_line(
    parts: &[PathBuf],
    report: bool,
    mut f: impl FnMut(&Path, usize, &str) -> Result<(), PipelineError>,
) -> Result<u64, PipelineError> {
    let mut failed = 0;
    for part in parts {
        let mut damaged = |line: usize, e: std::io::Error| {
            failed += 1;
            if report {
                tracing::warn!("{}: line {line}: unreadable, the rest of the part is left out: {e}", part.display());
            }
        };
        if crate::sink::is_parquet(part) {
            // A Parquet part: its rows as the JSON lines of a `.jsonl.zst` part.
            match crate::sink::read_part(part) {
                Ok(records) => {
                    for (n, r) in records.iter().enumerate() {
                        f(part, n + 1, &r.to_string())?;
                    }
                }
                Err(e) => damaged(0, e),
            }
            continue;
        }
        let decoder = match std::fs::File::open(part).and_then(zstd::Decoder::new) {
            Ok(d) => d,
            Err(e) => {
                damaged(0, e);
                continue;
            }
        };
        for (n, line) in BufReader::with_capacity(1 << 20, decoder).lines().enumerate() {
            match line {
                Ok(line) => f(part, n + 1, &line)?,
                Err(e) => {
                    damaged(n + 1, e);
                    break;
                }
            }
        }
    }
    Ok(failed)
}

/// A record's id and keys, or None for a line that is not a record.
fn signature(line: &str) -> Option<(String, u64, Vec<u64>)> {
    let sig: Sig = serde_json::from_str(line).ok()?;
    let exact = hex(&sig.metadata.fingerprints.exact)?;
    let bands = sig.metadata.fingerprints.bands.iter().map(|b| hex(b)).collect::<Option<Vec<u64>>>()?;
    Some((sig.id, exact, bands))
}

fn hex(s: &str) -> Option<u64> {
    u64::from_str_radix(s, 16).ok()
}

/// Runs the pass; returns its counts (also in `DEDUP/stats.json`).
pub fn run(job: &DedupRun) -> Result<DedupStats, PipelineError> {
    let t0 = Instant::now();
    for (k, i) in job.inputs.iter().enumerate() {
        super::refuse_if_running(i)?;
        // A run that ended early (killed, or stopped by a signal: its lock gone) left whole
        // parts, but not all of them: said, not refused.
        if let Some(why) = unfinished(i) {
            let name = job.names.get(k).cloned().unwrap_or_else(|| i.display().to_string());
            tracing::warn!("{name}: the run that wrote it has not finished ({why}); its committed parts are read");
        }
    }
    let parts = input_parts(&job.inputs)?;
    prepare_out(job)?;
    let state = |p: &Path, m: String| PipelineError::State { path: p.to_path_buf(), message: m };
    let spill_dir = job.out.join(SPILL_DIR);
    let _cleanup = SpillGuard(spill_dir.clone());
    let mut spill = PairSpill::new(&spill_dir, job.memory_budget).map_err(|e| state(&spill_dir, e.to_string()))?;
    // Pass 1: every record's keys. The exact hash joins the band keys with a marker bit so
    // that it cannot collide with a band key by construction of the value.
    let mut bad_lines = 0u64;
    let damaged_parts = each_line(&parts, true, |part, n, line| {
        let Some((_, exact, bands)) = signature(line) else {
            bad_lines += 1;
            tracing::warn!("{}: line {n}: not a record with fingerprints; left out", part.display());
            return Ok(());
        };
        let keys = bands.into_iter().chain(std::iter::once(exact.rotate_left(1) ^ 0x9e37_79b9_7f4a_7c15));
        spill.add(keys).map_err(|e| state(&spill_dir, e.to_string()))?;
        Ok(())
    })?;
    let failed = damaged_parts + bad_lines;
    let records = spill.records();
    let pairs = spill.pairs;
    let spilled_runs = spill.runs();
    let mut clusters = spill.cluster().map_err(|e| state(&spill_dir, e.to_string()))?;
    // Which records are the first of a cluster with duplicates (their places are kept for pass 2).
    let mut is_root = vec![false; records as usize];
    let mut removed = 0u64;
    for i in 0..records {
        let r = clusters.find(i);
        if r != i {
            is_root[r as usize] = true;
            removed += 1;
        }
    }
    let cluster_count = is_root.iter().filter(|x| **x).count() as u64;
    // Pass 2: removed.jsonl (and the kept records).
    let removed_path = job.out.join("removed.jsonl");
    let mut out =
        BufWriter::new(std::fs::File::create(&removed_path).map_err(|e| state(&removed_path, e.to_string()))?);
    let mut roots: std::collections::HashMap<u32, (String, String, usize)> = std::collections::HashMap::new();
    let mut sink = if job.write_parts { Some(PartSink::open(&job.out, job.sink.clone())?) } else { None };
    let mut i = 0u32;
    // The inputs must read as they did in pass 1: a part that vanished, was cut short or grew
    // in between (a run or another dedup writing them) would give every later record another
    // record's verdict.
    let changed = |part: &Path| PipelineError::State {
        path: part.to_path_buf(),
        message: "the inputs changed between the dedup's two passes (a run or another process writes them): \
                  nothing is kept; run the dedup again once they are still"
            .into(),
    };
    let damaged_again = each_line(&parts, false, |part, n, line| {
        let Some((id, _, _)) = signature(line) else { return Ok(()) };
        if i >= records {
            return Err(changed(part));
        }
        let root = clusters.find(i);
        let place = || part.display().to_string();
        if root != i {
            let (of, of_part, of_line) = roots.get(&root).cloned().unwrap_or_default();
            let entry = serde_json::json!({
                "id": id, "part": place(), "line": n,
                "duplicate_of": of, "duplicate_of_part": of_part, "duplicate_of_line": of_line,
            });
            serde_json::to_writer(&mut out, &entry).map_err(|e| state(&removed_path, e.to_string()))?;
            out.write_all(b"\n").map_err(|e| state(&removed_path, e.to_string()))?;
        } else {
            if is_root[i as usize] {
                roots.insert(i, (id, place(), n));
            }
            if let Some(s) = sink.as_mut() {
                let record: crate::sink::Record =
                    serde_json::from_str(line).map_err(|e| state(part, format!("line {n}: {e}")))?;
                if s.write(&record)? {
                    s.commit()?;
                }
            }
        }
        i += 1;
        Ok(())
    })?;
    if i != records || damaged_again != damaged_parts {
        return Err(changed(&job.out));
    }
    out.flush().map_err(|e| state(&removed_path, e.to_string()))?;
    if let Some(mut s) = sink {
        s.flush_part()?;
    }
    let stats = DedupStats {
        failed,
        parts: parts.len(),
        records: u64::from(records),
        removed,
        clusters: cluster_count,
        pairs,
        spilled_runs,
        seconds: t0.elapsed().as_secs_f64(),
    };
    let bytes = serde_json::to_vec_pretty(&stats).expect("stats serialise");
    crate::sink::write_atomic(&job.out.join("stats.json"), &bytes)?;
    Ok(stats)
}
