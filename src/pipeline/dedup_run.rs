//! `pipeline dedup OUT… --out DEDUP`: the near-duplicate pass over every record of one or
//! more runs (a sharded root gives its shards in order), in bounded memory
//! ([`crate::dedup::global`]). Records are taken in root / shard / part / line order; each
//! cluster of records sharing an LSH band key or the exact-text hash keeps its first record.
//! Writes `DEDUP/removed.jsonl` (`{"id", "duplicate_of"}`), `DEDUP/stats.json`, and with
//! `write_parts` the kept records as `DEDUP/part-*.jsonl.zst`. The in-run
//! `near_duplicate_of` marks are left as they are.

use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

use serde::{Deserialize, Serialize};

use super::PipelineError;
use crate::dedup::global::PairSpill;
use crate::sink::{JsonlZstSink, SinkOptions, list_parts};

/// What `pipeline dedup` is asked to do.
#[derive(Debug, Clone)]
pub struct DedupRun {
    pub inputs: Vec<PathBuf>,
    pub out: PathBuf,
    /// Bytes of (key, record) pairs held before a sorted run is spilled.
    pub memory_budget: usize,
    pub write_parts: bool,
    pub sink: SinkOptions,
}

/// Counts of a dedup pass (`DEDUP/stats.json`).
#[derive(Debug, Clone, Default, Serialize)]
pub struct DedupStats {
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

/// The parts of the inputs in order: each input's own parts, then its `shard-*` folders'.
pub fn input_parts(inputs: &[PathBuf]) -> Result<Vec<PathBuf>, PipelineError> {
    fn io(p: &Path) -> impl Fn(std::io::Error) -> PipelineError + '_ {
        move |e| PipelineError::State { path: p.to_path_buf(), message: e.to_string() }
    }
    let mut parts = Vec::new();
    for root in inputs {
        parts.extend(list_parts(root).map_err(io(root))?);
        let mut shards: Vec<PathBuf> = std::fs::read_dir(root)
            .map_err(io(root))?
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.is_dir() && p.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with("shard-")))
            .collect();
        shards.sort();
        for s in shards {
            parts.extend(list_parts(&s).map_err(io(&s))?);
        }
    }
    Ok(parts)
}

/// Calls `f` with every line of every part, in order.
fn each_line(
    parts: &[PathBuf],
    mut f: impl FnMut(&Path, usize, &str) -> Result<(), PipelineError>,
) -> Result<(), PipelineError> {
    for part in parts {
        let err = |e: std::io::Error| PipelineError::State { path: part.clone(), message: e.to_string() };
        let decoder = zstd::Decoder::new(std::fs::File::open(part).map_err(err)?).map_err(err)?;
        for (n, line) in BufReader::with_capacity(1 << 20, decoder).lines().enumerate() {
            let line = line.map_err(err)?;
            f(part, n + 1, &line)?;
        }
    }
    Ok(())
}

fn hex(s: &str) -> Option<u64> {
    u64::from_str_radix(s, 16).ok()
}

/// Runs the pass; returns its counts (also in `DEDUP/stats.json`).
pub fn run(job: &DedupRun) -> Result<DedupStats, PipelineError> {
    let t0 = Instant::now();
    let parts = input_parts(&job.inputs)?;
    let state = |p: &Path, m: String| PipelineError::State { path: p.to_path_buf(), message: m };
    std::fs::create_dir_all(&job.out).map_err(|e| state(&job.out, e.to_string()))?;
    let spill_dir = job.out.join(".dedup-runs");
    let mut spill = PairSpill::new(&spill_dir, job.memory_budget).map_err(|e| state(&spill_dir, e.to_string()))?;
    // Pass 1: every record's keys. The exact hash joins the band keys with a marker bit so
    // that it cannot collide with a band key by construction of the value.
    each_line(&parts, |part, n, line| {
        let sig: Sig = serde_json::from_str(line).map_err(|e| state(part, format!("line {n}: {e}")))?;
        let bad = || state(part, format!("line {n}: fingerprints are not 16 hex digits"));
        let exact = hex(&sig.metadata.fingerprints.exact).ok_or_else(bad)?;
        let bands: Vec<u64> =
            sig.metadata.fingerprints.bands.iter().map(|b| hex(b).ok_or_else(bad)).collect::<Result<_, _>>()?;
        let keys = bands.into_iter().chain(std::iter::once(exact.rotate_left(1) ^ 0x9e37_79b9_7f4a_7c15));
        spill.add(keys).map_err(|e| state(&spill_dir, e.to_string()))?;
        Ok(())
    })?;
    let records = spill.records();
    let pairs = spill.pairs;
    let spilled_runs = spill.runs();
    let mut clusters = spill.cluster().map_err(|e| state(&spill_dir, e.to_string()))?;
    let _ = std::fs::remove_dir(&spill_dir);
    // Which records are the first of a cluster with duplicates (their ids are kept for pass 2).
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
    let mut root_ids: std::collections::HashMap<u32, String> = std::collections::HashMap::new();
    let mut sink = if job.write_parts { Some(JsonlZstSink::open(&job.out, job.sink.clone())?) } else { None };
    let mut i = 0u32;
    each_line(&parts, |part, n, line| {
        let sig: Sig = serde_json::from_str(line).map_err(|e| state(part, format!("line {n}: {e}")))?;
        let root = clusters.find(i);
        if root != i {
            let of = root_ids.get(&root).cloned().unwrap_or_default();
            serde_json::to_writer(&mut out, &serde_json::json!({"id": sig.id, "duplicate_of": of}))
                .map_err(|e| state(&removed_path, e.to_string()))?;
            out.write_all(b"\n").map_err(|e| state(&removed_path, e.to_string()))?;
        } else {
            if is_root[i as usize] {
                root_ids.insert(i, sig.id);
            }
            if let Some(s) = sink.as_mut() {
                let value: serde_json::Value =
                    serde_json::from_str(line).map_err(|e| state(part, format!("line {n}: {e}")))?;
                if s.write(&value)? {
                    s.commit()?;
                }
            }
        }
        i += 1;
        Ok(())
    })?;
    out.flush().map_err(|e| state(&removed_path, e.to_string()))?;
    if let Some(mut s) = sink {
        s.flush_part()?;
    }
    let stats = DedupStats {
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
