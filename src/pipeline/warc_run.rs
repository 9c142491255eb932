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
//!
//! An input that ends early (it cannot be opened, as with a missing file or a store answering
//! 500, or it is cut short, or a read fails past the reader's retries) is not done: it is kept
//! in the state's `retry` list with how many of its records were read whole and how often it
//! was tried. A resumed run (and every rerun of a shard) reads it again from that record, so
//! the records already written stay and none is written twice, up to
//! [`MAX_INPUT_ATTEMPTS`] tries; then it counts as failed and `pipeline status` says so.
//!
//! Inputs are compared by their [`input_key`] (the canonical path of a file, the normalised
//! URL of a remote object), so one file named twice (`w.warc.gz`, `./w.warc.gz`, its absolute
//! path) is read once.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use super::OutputMirror;
use super::config::WarcConfig;
use super::{Checkpoint, ItemSender, Origin, PipelineError, Progress, RunContext, Stats};
use crate::sink;
use crate::site_memory::{FIRST_PASS_BATCH_PAGES, PageBlocks, SiteMemory};
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
    /// The number of the next part: one more than the last part in place. A resumed run
    /// numbers from here even when a consumer has deleted the parts it read (states written
    /// before this was kept have 0: the folder's own parts say).
    #[serde(default)]
    pub next_part: u32,
}

/// How far a WARC run got.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Position {
    /// Input files (canonical paths) read to the end.
    pub done: Vec<String>,
    /// The file being read and how many of its records are done.
    pub current: Option<(String, u64)>,
    /// Inputs that ended early, to be read again.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub retry: Vec<Retry>,
    pub stats: Stats,
}

/// An input that ended early: read again from record `done` on the next resume, until it has
/// been tried [`MAX_INPUT_ATTEMPTS`] times.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Retry {
    pub input: String,
    /// Times it was read and ended early.
    pub attempts: u32,
    /// Its records (events) read whole: the next read starts after them.
    pub done: u64,
}

impl Retry {
    /// Tried too often: counted as failed and not read again.
    pub fn given_up(&self) -> bool {
        self.attempts >= MAX_INPUT_ATTEMPTS
    }
}

/// How many times an input that ends early is read before it counts as failed.
pub const MAX_INPUT_ATTEMPTS: u32 = 5;

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
            Some((part, pos)) if crate::sink::part_exists(out, part) => pos,
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
                    n.ends_with(".warc") || n.ends_with(".warc.gz") || n.ends_with(".arc") || n.ends_with(".arc.gz")
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

/// The name an input is known by in the resume state, in shard assignment and when repeats
/// are removed: a local file's canonical path (its absolute path when it does not exist), an
/// `http(s)://` URL normalised by the URL standard (host case, default port, `..`), an
/// `s3://` location as given (its key is passed through unchanged).
pub fn input_key(path: &Path) -> String {
    let s = path.to_string_lossy();
    if s.starts_with("http://") || s.starts_with("https://") {
        return url::Url::parse(&s).map(|u| u.to_string()).unwrap_or_else(|_| s.into_owned());
    }
    if super::config::is_url(path) {
        return s.into_owned();
    }
    super::canonical_path(path).display().to_string()
}

/// The inputs with their [`input_key`]s, without repeats (first occurrence kept): each key is
/// computed once, for the resume state, shard assignment and the shard's manifest alike.
pub fn keyed_inputs(inputs: Vec<PathBuf>) -> Vec<(PathBuf, String)> {
    let mut seen = HashSet::new();
    inputs
        .into_iter()
        .map(|p| (input_key(&p), p))
        .filter(|(k, _)| seen.insert(k.clone()))
        .map(|(k, p)| (p, k))
        .collect()
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
            Origin::FileDone { file, cut } => {
                let key = &self.keys[*file];
                self.live.current = None;
                let earlier = self.live.retry.iter().position(|r| r.input == *key);
                match cut {
                    None => {
                        if let Some(i) = earlier {
                            self.live.retry.remove(i);
                        }
                        self.live.done.push(key.clone());
                    }
                    Some(done) => {
                        let i = earlier.unwrap_or_else(|| {
                            self.live.retry.push(Retry { input: key.clone(), ..Retry::default() });
                            self.live.retry.len() - 1
                        });
                        let r = &mut self.live.retry[i];
                        r.attempts += 1;
                        r.done = r.done.max(*done);
                    }
                }
            }
            Origin::Url(..) | Origin::UrlRetry(..) | Origin::Other => {}
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

    fn committed(&mut self, part: u32) -> Result<(), PipelineError> {
        // The part is in place: its position is committed now, not at the next part, so that
        // a consumer deleting it before then does not make a resumed run read its inputs again.
        if let Some((_, pos)) = self.state.pending.take() {
            self.state.committed = pos;
        }
        self.state.next_part = part + 1;
        self.state.save(self.out)?;
        if let Some(m) = self.mirror {
            m.publish(&self.out.join(STATE_FILE))?;
        }
        Ok(())
    }
}

/// Everything a WARC run needs.
pub struct WarcRun<'a> {
    /// The inputs with their keys, as [`keyed_inputs`] gives them.
    pub inputs: Vec<(PathBuf, String)>,
    pub ctx: RunContext<'a>,
}

/// Runs a WARC pipeline; returns the run's (cumulative) stats, also written to `OUT/stats.json`.
pub fn run(run: &WarcRun<'_>, progress: &dyn Progress) -> Result<Stats, PipelineError> {
    let ctx = &run.ctx;
    ctx.check_fresh(STATE_FILE)?;
    let previous = if ctx.resume { WarcState::load(&ctx.out)? } else { None };
    let mut output = ctx.open_output()?;
    let next_part = previous.as_ref().map_or(0, |s| s.next_part);
    output.0.number_from(next_part);
    let position = previous.map(|s| s.resolve(&ctx.out)).unwrap_or_default();
    let stats = position.stats.clone();
    let (inputs, keys): (Vec<PathBuf>, Vec<String>) = run.inputs.iter().cloned().unzip();
    let mut done: HashSet<String> = position.done.iter().cloned().collect();
    // Inputs that ended early are read again from their first record not read whole, unless
    // they were tried too often.
    let mut restart: std::collections::HashMap<String, u64> = std::collections::HashMap::new();
    for r in &position.retry {
        if r.given_up() {
            done.insert(r.input.clone());
        } else {
            restart.insert(r.input.clone(), r.done);
        }
    }
    let counted_ahead = count_first(ctx, &run.inputs, &done)?;
    let resume_at = position.current.clone();
    let state = WarcState { version: 1, committed: position.clone(), pending: None, next_part };
    let mut checkpoint =
        WarcCheckpoint { out: &ctx.out, keys: keys.clone(), live: position, state, mirror: ctx.mirror };

    let source = move |tx: &mut ItemSender| -> Result<(), PipelineError> {
        for (file, path) in inputs.iter().enumerate() {
            if done.contains(&keys[file]) {
                continue;
            }
            let skip = match &resume_at {
                Some((k, n)) if *k == keys[file] => *n,
                _ => restart.get(&keys[file]).copied().unwrap_or(0),
            };
            let mut cut = None;
            match sources::warc_events(path) {
                Ok(events) => {
                    for (ordinal, event) in events.enumerate().skip(skip as usize) {
                        let ordinal = ordinal as u64;
                        if let SourceEvent::Failed { reason, .. } = &event
                            && sources::warc::ends_file(reason)
                        {
                            cut = Some(ordinal);
                        }
                        if !tx.send(Origin::File { file, ordinal }, Some(event)) {
                            return Ok(()); // the sink stopped
                        }
                    }
                }
                Err(e) => {
                    cut = Some(skip);
                    let event = SourceEvent::Failed { reason: e.reason(), message: e.to_string() };
                    if !tx.send(Origin::File { file, ordinal: skip }, Some(event)) {
                        return Ok(());
                    }
                }
            }
            if !tx.send(Origin::FileDone { file, cut }, None) {
                return Ok(());
            }
        }
        Ok(())
    };
    ctx.run(source, output, &mut checkpoint, stats, counted_ahead, progress)
}

/// Bytes of pages a first pass holds at once, beside [`FIRST_PASS_BATCH_PAGES`] (its pages
/// wait in memory until their batch is tokenized).
const FIRST_PASS_BATCH_BYTES: usize = 4 << 20;

/// The first pass of a two-pass run ([`SiteMemoryOptions::two_pass`](crate::site_memory::SiteMemoryOptions::two_pass)):
/// the blocks of every page of the sampled inputs (one in
/// [`first_pass_every`](crate::site_memory::SiteMemoryOptions::first_pass_every), by their
/// place in the run's input list) not done yet, counted into the run's memory (the `from`
/// file's, or an empty one) and saved as `OUT/site_memory.bin` before any record is written.
/// A resumed run whose first pass was saved keeps it. Inputs that cannot be read are passed
/// over here: the second pass reports them. Returns the sampled inputs, as their pages name
/// them (None when the run has no first pass).
fn count_first(
    ctx: &RunContext<'_>,
    inputs: &[(PathBuf, String)],
    done: &HashSet<String>,
) -> Result<Option<HashSet<String>>, PipelineError> {
    let o = &ctx.site_memory;
    if !o.enabled() || !o.two_pass {
        return Ok(None);
    }
    let every = o.first_pass_every.max(1) as usize;
    let sampled: Vec<&(PathBuf, String)> = inputs.iter().step_by(every).collect();
    let names = sampled.iter().map(|(path, _)| path.display().to_string()).collect();
    let saved = ctx.out.join(super::SITE_MEMORY_FILE);
    if ctx.resume && saved.exists() {
        return Ok(Some(names));
    }
    let started = std::time::Instant::now();
    tracing::info!(
        "site memory, first pass: counting the blocks of every page of {} of the {} inputs",
        sampled.len(),
        inputs.len()
    );
    let mut memory = match &o.from {
        Some(from) => super::read_site_memory(from, o)?,
        None => SiteMemory::new(o.clone()),
    };
    let lenient = ctx.extractor.options().lenient_raw_text;
    // Pages are tokenized on the run's threads, a batch at a time, and counted in input order
    // (a host's templates form in the order its pages come).
    let threads = ctx.engine.threads.max(1);
    let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().map_err(|e| PipelineError::State {
        path: ctx.out.clone(),
        message: format!("cannot start the first pass's threads: {e}"),
    })?;
    let mut pages = 0u64;
    let mut batch: Vec<Box<sources::Page>> = Vec::new();
    let mut batch_bytes = 0usize;
    let mut count = |batch: &mut Vec<Box<sources::Page>>, memory: &mut SiteMemory| {
        let blocks: Vec<Option<(String, PageBlocks)>> = pool.install(|| {
            batch
                .par_iter()
                .map(|page| {
                    let host = crate::site_memory::host_key(&page.final_url)?;
                    let b = crate::site_memory::page_blocks(&page.body, page.http_charset.as_deref(), lenient)?;
                    Some((host, b))
                })
                .collect()
        });
        for (host, b) in blocks.into_iter().flatten() {
            memory.observe(&host, &b.sketch, &b.hashes);
            pages += 1;
        }
        batch.clear();
    };
    for (path, _) in sampled.into_iter().filter(|(_, key)| !done.contains(key)) {
        let Ok(events) = sources::warc_events(path) else { continue };
        for event in events {
            let SourceEvent::Page(page) = event else { continue };
            batch_bytes += page.body.len();
            batch.push(page);
            if batch.len() >= FIRST_PASS_BATCH_PAGES || batch_bytes >= FIRST_PASS_BATCH_BYTES {
                count(&mut batch, &mut memory);
                batch_bytes = 0;
            }
        }
    }
    count(&mut batch, &mut memory);
    sink::write_atomic(&saved, &memory.to_bytes())?;
    if let Some(m) = ctx.mirror {
        m.publish(&saved)?;
    }
    tracing::info!(
        "site memory, first pass: {pages} pages of {} host template(s) counted in {:.1} s",
        memory.hosts(),
        started.elapsed().as_secs_f64()
    );
    Ok(Some(names))
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
