//! The staged run: a source thread turns inputs into [`SourceEvent`]s, a pool of extraction
//! threads turns pages into [`Record`]s, and one sink thread puts results back in input
//! order, marks near duplicates and writes `.jsonl.zst` parts.
//!
//! Stages talk through bounded crossbeam channels, so a slow sink slows the source and the
//! memory in flight is bounded by the channel capacities times the page cap. Results are
//! written in input order (a reorder buffer bounded by the same capacities), which makes
//! runs deterministic and lets [`Checkpoint`]s resume exactly: whatever precedes the last
//! committed part is done, whatever follows is redone.

pub mod bootstrap_run;
pub mod config;
pub mod dedup_run;
pub mod feeds_run;
pub mod handoff;
pub mod interrupt;
pub mod metrics;
pub mod remote_lock;
pub mod s3_output;
pub mod shard;
pub mod status;
pub mod warc_run;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::sync::RwLock;
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, Sender, bounded};
use serde::{Deserialize, Serialize};

use crate::dedup::{Fingerprinter, Fingerprints, NearDuplicateIndex};
use crate::extract::Extractor;
use crate::sink::record::{ExtractionInfo, Metadata, Record};
use crate::sink::{PartSink, SinkError, SinkOptions};
use crate::site_memory::{HostView, SiteMemory, SiteMemoryOptions};
use crate::sources::SourceEvent;

/// The resume state files of every mode; a folder holding one belongs to that mode's run.
const STATE_FILES: [&str; 2] = [warc_run::STATE_FILE, feeds_run::STATE_FILE];

/// Is `name`, a file directly in an output folder, a run's own output there: a resume state
/// or a part?
pub fn is_run_output(name: &str) -> bool {
    STATE_FILES.contains(&name) || crate::sink::part_index(name).is_some()
}

pub use config::PipelineConfig;

/// Why a run could not go on.
#[derive(Debug, thiserror::Error)]
pub enum PipelineError {
    #[error(transparent)]
    Sink(#[from] SinkError),
    #[error("{}: {message}", path.display())]
    State { path: PathBuf, message: String },
    #[error("{0}")]
    Source(String),
    #[error(transparent)]
    Storage(#[from] crate::storage::StorageError),
}

/// Where committed files go besides the output folder: `--out s3://…` uploads each file the
/// moment it is durable locally, in the order they became durable (the resume state naming a
/// part before the part), so the remote copy is always a state a rerun can resume from.
pub trait OutputMirror: Sync {
    /// `path` (inside the output folder) was just written or committed.
    fn publish(&self, path: &Path) -> Result<(), PipelineError>;
    /// `path` (a consistent copy of a file the run keeps changing, such as a snapshot of the
    /// feeds database) was just written: it is published under `name`, relative to the output
    /// folder.
    fn publish_as(&self, path: &Path, name: &str) -> Result<(), PipelineError>;
    /// Where the file at `path` (inside the output folder) lives for the user: its remote
    /// location, which is what messages name.
    fn shown(&self, path: &Path) -> PathBuf;
}

/// Counters of a run, written to `OUT/stats.json`. Cumulative over resumed runs.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Stats {
    /// Inputs seen: pages, skipped and failed ones.
    pub records_in: u64,
    /// Records written.
    pub written: u64,
    /// Written records marked `near_duplicate_of`.
    pub near_duplicates: u64,
    /// Near duplicates not written (`--drop-near-duplicates`).
    pub dropped_near_duplicates: u64,
    pub skipped: BTreeMap<String, u64>,
    pub failed: BTreeMap<String, u64>,
    /// HTML bytes extracted.
    pub html_bytes: u64,
    /// Text bytes written.
    pub text_bytes: u64,
    /// Parts written.
    pub parts: u64,
    /// Seconds spent in runs (summed over resumes).
    pub elapsed_secs: f64,
    /// HTML megabytes per second over `elapsed_secs`.
    pub mb_per_s: f64,
    /// Feeds runs: per host (origin), articles fetched, failed and skipped by reason, and
    /// bytes received.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub hosts: BTreeMap<String, HostStats>,
    /// Failed inputs of this run alone (not saved): the exit code is 1 when this run met a
    /// failure, not when an earlier run did and this one read the input again successfully.
    #[serde(skip)]
    pub failed_this_run: u64,
}

/// What one host gave a feeds run.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct HostStats {
    pub fetched: u64,
    pub failed: u64,
    pub bytes: u64,
    /// `failed:<reason>` and `skipped:<reason>` counts.
    pub reasons: BTreeMap<String, u64>,
}

impl HostStats {
    /// Adds `other`'s counts into these.
    pub fn add(&mut self, other: &HostStats) {
        self.fetched += other.fetched;
        self.failed += other.failed;
        self.bytes += other.bytes;
        for (reason, n) in &other.reasons {
            *self.reasons.entry(reason.clone()).or_default() += n;
        }
    }
}

impl Stats {
    pub fn failures(&self) -> u64 {
        self.failed.values().sum()
    }
}

/// What the sink thread tells a run's bookkeeping.
pub trait Checkpoint {
    /// Called for every input, in input order, after its record (if any) was handed to the sink.
    fn processed(&mut self, origin: &Origin);
    /// Called just before part `part` is committed (renamed into place): once that part
    /// exists, everything processed so far is done. `None` at the end of a run with no part
    /// open. Implementations persist this so that a crash on either side of the rename
    /// resumes correctly.
    fn prepare(&mut self, part: Option<u32>, stats: &Stats) -> Result<(), PipelineError>;
    /// Called once part `part` is in place (and, for an `s3://` output, uploaded). A resumed
    /// run then knows that a part it cannot find was not lost by a crash but taken away (a
    /// consumer that deletes the parts it has read), and must not be written again.
    fn committed(&mut self, part: u32) -> Result<(), PipelineError>;
}

/// Where an input came from, for checkpoints.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// The `ordinal`-th event of input file `file` (0-based).
    File { file: usize, ordinal: u64 },
    /// Input file `file` has no more events. `cut`: it ended early (could not be opened, was
    /// cut short, or a read failed) at this event ordinal, the number of its events that were
    /// read whole; it stays pending, to be read again from there.
    FileDone { file: usize, cut: Option<u64> },
    /// An article URL of feeds mode, and what its fetch gave its host.
    Url(String, HostTally),
    /// An article URL of feeds mode whose fetch failed for a reason that may pass (timeout,
    /// network, 5xx, robots.txt unavailable): it stays pending, to be tried again.
    UrlRetry(String, HostTally),
    /// Anything else (a feed that failed to poll).
    Other,
}

/// What one article fetch gave its host (`counts` of one article). Counted into the run's
/// per-host stats when the article's outcome commits, in the same transaction, so a fetch
/// redone after a crash is counted once.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HostTally {
    pub host: String,
    pub counts: HostStats,
}

/// Live progress for a terminal display.
pub trait Progress: Sync {
    fn input(&self, _html_bytes: u64, _failed: bool) {}
    fn message(&self, _msg: &str) {}
}

/// No progress display.
pub struct NoProgress;
impl Progress for NoProgress {}

/// The source's end of the first channel: numbers inputs as they are sent (the source is
/// one thread, so numbering here keeps input order).
pub struct ItemSender {
    tx: Sender<Sequenced<Option<SourceEvent>>>,
    next: u64,
}

impl ItemSender {
    /// Sends one input (`None`: a marker with no event, such as the end of a file). Returns
    /// false when the run is stopping and the source should return.
    pub fn send(&mut self, origin: Origin, event: Option<SourceEvent>) -> bool {
        let seq = self.next;
        self.next += 1;
        self.tx.send(Sequenced { seq, origin, value: event }).is_ok()
    }
}

struct Sequenced<T> {
    seq: u64,
    origin: Origin,
    value: T,
}

enum Outcome {
    Record(Box<Record>, u64),
    Skipped(&'static str, u64),
    Failed(&'static str, String),
    Marker,
}

/// Knobs of the engine.
pub struct EngineOptions {
    pub threads: usize,
    pub drop_near_duplicates: bool,
    /// Items in flight per channel (per thread).
    pub queue_per_thread: usize,
}

/// What every run needs besides its source and its checkpoint.
pub struct RunContext<'a> {
    /// Output folder.
    pub out: PathBuf,
    /// Continue the run recorded in `out`.
    pub resume: bool,
    pub sink: SinkOptions,
    pub engine: EngineOptions,
    pub extractor: &'a Extractor<'a>,
    pub fingerprinter: &'a Fingerprinter,
    /// Object storage the output is uploaded to, if any.
    pub mirror: Option<&'a dyn OutputMirror>,
    /// Site memory learned as pages arrive ([`crate::site_memory`]; off when `min_pages` is
    /// 0), saved in `OUT/site_memory.bin` at every commit and read back on resume.
    pub site_memory: SiteMemoryOptions,
    /// Counters and gauges for `--metrics-addr` ([`metrics`]), if served.
    pub metrics: Option<std::sync::Arc<metrics::Metrics>>,
}

/// How often the sink thread hands its counters to the metrics (they are read on a scrape).
const METRICS_EVERY: std::time::Duration = std::time::Duration::from_millis(250);

/// Where a run keeps its site memory.
pub const SITE_MEMORY_FILE: &str = "site_memory.bin";

/// The file a run holds locked in its output folder while it runs ([`lock_output`]).
pub const LOCK_FILE: &str = ".lock";

/// Takes the output folder `out` for this process (`OUT/.lock`, an exclusive advisory lock
/// held until the returned file drops): a second process on the same folder, say a shard's
/// command run twice, would number and rename the same parts as the first and race it, and for
/// an `s3://` output would clear the staging folder under it. Refused, not waited for. Taken
/// before anything in the folder is touched and held until the run's last upload. An `s3://`
/// output is locked in its staging folder here, and in the bucket by
/// [`remote_lock::RemoteLock`], which sees two machines on one prefix.
pub fn lock_output(out: &Path) -> Result<std::fs::File, PipelineError> {
    lock_output_within(out, PROBE_GRACE)
}

/// [`lock_output`], waiting up to `grace` for a probe's lock to be let go.
fn lock_output_within(out: &Path, grace: Duration) -> Result<std::fs::File, PipelineError> {
    let at = |path: &Path, message: String| PipelineError::State { path: path.to_path_buf(), message };
    std::fs::create_dir_all(out).map_err(|e| at(out, e.to_string()))?;
    let path = out.join(LOCK_FILE);
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(|e| at(&path, e.to_string()))?;
    // `pipeline status` and `pipeline dedup` ask whether a run holds the lock by taking it
    // shared for an instant ([`is_held`]): a run starting at that instant must not take that
    // for another run. A run's lock is held for as long as the run lasts, a probe's for
    // microseconds, so a lock still held after a short wait is a run's.
    let deadline = std::time::Instant::now() + grace;
    loop {
        match file.try_lock() {
            Ok(()) => return Ok(file),
            Err(std::fs::TryLockError::WouldBlock) if std::time::Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(10));
            }
            Err(std::fs::TryLockError::WouldBlock) => {
                return Err(at(
                    &path,
                    "another pipeline process is running on this output folder: wait for it to end, or choose \
                     another folder"
                        .into(),
                ));
            }
            Err(std::fs::TryLockError::Error(e)) => return Err(at(&path, e.to_string())),
        }
    }
}

/// How long [`lock_output`] waits for a lock held by a probe ([`is_held`]) to be let go.
const PROBE_GRACE: Duration = Duration::from_millis(500);

/// The lock files of live runs in the output folder `root`: its own `.lock` and its `shard-*`
/// folders', each held by a running process ([`lock_output`]). Each lock is asked for
/// shared, so two readers do not see each other, and let go at once.
pub fn running_in(root: &Path) -> Vec<PathBuf> {
    let mut folders = vec![root.to_path_buf()];
    folders.extend(shard::shard_dirs(root).unwrap_or_default());
    folders.into_iter().map(|dir| dir.join(LOCK_FILE)).filter(|path| is_held(path)).collect()
}

/// Is the lock file `path` held by a running process ([`lock_output`])? No lock file: no run
/// has written there, or one that staged elsewhere (an s3:// output).
pub fn is_held(path: &Path) -> bool {
    std::fs::File::open(path).is_ok_and(|f| matches!(f.try_lock_shared(), Err(std::fs::TryLockError::WouldBlock)))
}

/// Refuses to read the output folder `root` while a run still writes it ([`running_in`]): a
/// pass over a run's records (`pipeline dedup`) made meanwhile would see only the parts
/// committed so far.
pub fn refuse_if_running(root: &Path) -> Result<(), PipelineError> {
    match running_in(root).into_iter().next() {
        Some(path) => Err(PipelineError::State {
            path,
            message: "a pipeline run still writes this output folder: read it once the run has ended".into(),
        }),
        None => Ok(()),
    }
}

impl RunContext<'_> {
    /// Refuses an output folder holding an earlier run (its `state_file`) unless resuming.
    /// Refuses an output folder that holds another run: without `--resume`, any resume state
    /// (of either mode) or any part; with `--resume`, the state of the other mode. The check
    /// looks at every mode's files, not the current one's only, so a `--warc` run cannot add
    /// parts to a feeds run's folder and overwrite its `stats.json`.
    fn check_fresh(&self, state_file: &str) -> Result<(), PipelineError> {
        // Named as the user knows it: the s3:// location of a remote output, not its staging.
        let shown = |path: PathBuf| self.mirror.map_or_else(|| path.clone(), |m| m.shown(&path));
        let refuse =
            |path: PathBuf, message: &str| Err(PipelineError::State { path: shown(path), message: message.into() });
        for other in STATE_FILES.iter().filter(|f| **f != state_file) {
            let path = self.out.join(other);
            if path.exists() {
                return refuse(
                    path,
                    "the output folder holds a run of the other mode (WARC or feeds): choose another folder",
                );
            }
        }
        if self.resume {
            return Ok(());
        }
        let path = self.out.join(state_file);
        if path.exists() {
            return refuse(
                path,
                "the output folder holds an earlier run: pass --resume to continue it, or choose another folder",
            );
        }
        let part = std::fs::read_dir(&self.out)
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.path())
            .find(|p| p.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with("part-")));
        if let Some(path) = part {
            return refuse(path, "the output folder holds parts of an earlier run: choose another folder");
        }
        Ok(())
    }

    /// Opens the sink (removing parts a crash left unfinished) and, when resuming, reads the
    /// committed parts back into the near-duplicate index.
    fn open_output(&self) -> Result<(PartSink, NearDuplicateIndex), PipelineError> {
        let sink = PartSink::open(&self.out, self.sink.clone())?;
        let mut index = NearDuplicateIndex::new();
        if self.resume {
            rebuild_index(&self.out, &mut index)?;
        }
        Ok((sink, index))
    }

    /// The run's site memory when it is on: the one saved in the output folder, when resuming
    /// or after a first pass (`counted_ahead`: the inputs whose pages it counted,
    /// [`SiteMemoryOptions::two_pass`]), else the `from` file's or an empty one.
    fn open_site_memory(&self, counted_ahead: Option<HashSet<String>>) -> Result<Option<SiteMemory>, PipelineError> {
        if !self.site_memory.enabled() {
            return Ok(None);
        }
        let saved = self.out.join(SITE_MEMORY_FILE);
        let path = match &self.site_memory.from {
            _ if (self.resume || counted_ahead.is_some()) && saved.exists() => saved,
            Some(from) => from.clone(),
            None => return Ok(Some(SiteMemory::new(self.site_memory.clone()))),
        };
        let mut m = read_site_memory(&path, &self.site_memory)?;
        if let Some(inputs) = counted_ahead {
            // The first pass's counts, written before any record (`warc_run::count_first`).
            m.set_counted_ahead(inputs);
        }
        Ok(Some(m))
    }

    /// Runs the stages, then writes `OUT/stats.json`; returns the (cumulative) stats.
    /// `counted_ahead`: the inputs a two-pass run's first pass counted into the saved memory.
    fn run<S>(
        &self,
        source: S,
        output: (PartSink, NearDuplicateIndex),
        checkpoint: &mut dyn Checkpoint,
        mut stats: Stats,
        counted_ahead: Option<HashSet<String>>,
        progress: &dyn Progress,
    ) -> Result<Stats, PipelineError>
    where
        S: FnOnce(&mut ItemSender) -> Result<(), PipelineError> + Send,
    {
        let (mut sink, mut index) = output;
        let memory = self.open_site_memory(counted_ahead)?.map(RwLock::new);
        let site_path = self.out.join(SITE_MEMORY_FILE);
        let mut stages = Stages {
            sink: &mut sink,
            index: &mut index,
            checkpoint,
            stats: &mut stats,
            mirror: self.mirror,
            site: memory.as_ref().map(|m| (m, site_path.as_path())),
            metrics: self.metrics.as_deref(),
        };
        run_engine(source, self.extractor, self.fingerprinter, &mut stages, &self.engine, progress)?;
        let bytes = serde_json::to_vec_pretty(&stats).expect("stats serialise");
        let path = self.out.join("stats.json");
        crate::sink::write_atomic(&path, &bytes)?;
        if let Some(m) = self.mirror {
            m.publish(&path)?;
        }
        Ok(stats)
    }
}

/// A local path as one name: canonical when it exists, else absolute (so `w.warc.gz`,
/// `./w.warc.gz` and its absolute path are one input, and an output inside an input is seen).
pub fn canonical_path(p: &Path) -> PathBuf {
    std::fs::canonicalize(p).or_else(|_| std::path::absolute(p)).unwrap_or_else(|_| p.to_path_buf())
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
    let parts = crate::sink::list_parts(out)
        .map_err(|e| PipelineError::State { path: out.to_path_buf(), message: e.to_string() })?;
    for part in parts {
        let err = |m: String| PipelineError::State { path: part.clone(), message: m };
        if crate::sink::is_parquet(&part) {
            for v in crate::sink::read_part(&part).map_err(|e| err(e.to_string()))? {
                let r: Slim = serde_json::from_value(v).map_err(|e| err(e.to_string()))?;
                if r.metadata.near_duplicate_of.is_none() {
                    index.check_and_insert(&r.id, &r.metadata.fingerprints);
                }
            }
            continue;
        }
        let file = std::fs::File::open(&part).map_err(|e| err(e.to_string()))?;
        let decoder = zstd::Decoder::new(file).map_err(|e| err(e.to_string()))?;
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

/// The sink thread's state.
struct Stages<'a> {
    sink: &'a mut PartSink,
    index: &'a mut NearDuplicateIndex,
    checkpoint: &'a mut dyn Checkpoint,
    stats: &'a mut Stats,
    mirror: Option<&'a dyn OutputMirror>,
    /// The site memory and where it is saved.
    site: Option<(&'a RwLock<SiteMemory>, &'a Path)>,
    metrics: Option<&'a metrics::Metrics>,
}

/// Runs `source` (on its own thread; it sends inputs and returns when done) through the
/// extraction threads into the sink. Failed inputs are logged and counted, never fatal; the
/// run stops early only if the sink or the checkpoint fails.
fn run_engine<S>(
    source: S,
    extractor: &Extractor<'_>,
    fingerprinter: &Fingerprinter,
    stages: &mut Stages<'_>,
    options: &EngineOptions,
    progress: &dyn Progress,
) -> Result<(), PipelineError>
where
    S: FnOnce(&mut ItemSender) -> Result<(), PipelineError> + Send,
{
    let threads = options.threads.max(1);
    let cap = threads * options.queue_per_thread.max(1);
    let (item_tx, item_rx) = bounded::<Sequenced<Option<SourceEvent>>>(cap);
    let (done_tx, done_rx) = bounded::<Sequenced<Outcome>>(cap);
    let started = Instant::now();
    let base_elapsed = stages.stats.elapsed_secs;
    let model = extractor.scorer().model_id();
    let site = stages.site.map(|(m, _)| m);

    std::thread::scope(|scope| -> Result<(), PipelineError> {
        let source_handle = scope.spawn(move || source(&mut ItemSender { tx: item_tx, next: 0 }));
        for _ in 0..threads {
            let rx = item_rx.clone();
            let tx = done_tx.clone();
            let model = model.clone();
            scope.spawn(move || {
                for it in rx {
                    let outcome = work(it.value, extractor, fingerprinter, &model, site);
                    if tx.send(Sequenced { seq: it.seq, origin: it.origin, value: outcome }).is_err() {
                        break;
                    }
                }
            });
        }
        drop(item_rx);
        drop(done_tx);

        let result = sink_loop(&done_rx, stages, options, progress, started, base_elapsed);
        // On a sink failure, stop the other stages by closing our end.
        drop(done_rx);
        let source_result =
            source_handle.join().unwrap_or_else(|_| Err(PipelineError::Source("source thread panicked".into())));
        result?;
        source_result
    })
}

fn sink_loop(
    done_rx: &Receiver<Sequenced<Outcome>>,
    stages: &mut Stages<'_>,
    options: &EngineOptions,
    progress: &dyn Progress,
    started: Instant,
    base_elapsed: f64,
) -> Result<(), PipelineError> {
    let mut next = 0u64;
    let mut waiting: HashMap<u64, Sequenced<Outcome>> = HashMap::new();
    let commit = |st: &mut Stages<'_>| -> Result<(), PipelineError> {
        let part = st.sink.open_part();
        if part.is_some() {
            st.stats.parts += 1;
        }
        st.stats.elapsed_secs = base_elapsed + started.elapsed().as_secs_f64();
        st.stats.mb_per_s = st.stats.html_bytes as f64 / 1e6 / st.stats.elapsed_secs.max(1e-9);
        // The memory first: a resumed run starts from it warm. It may hold pages of records
        // after this part (extracted, not yet written); those count once more when the resumed
        // run reads them again, which moves counts, never records.
        if let Some((memory, path)) = st.site {
            let bytes = memory.read().unwrap_or_else(|e| e.into_inner()).to_bytes();
            crate::sink::write_atomic(path, &bytes)?;
            if let Some(m) = st.mirror {
                m.publish(path)?;
            }
        }
        st.checkpoint.prepare(part, st.stats)?;
        if part.is_some() {
            let committed = st.sink.commit()?;
            if let Some(m) = st.mirror {
                m.publish(&committed.path)?;
            }
            st.checkpoint.committed(committed.index)?;
            if let Some(m) = st.metrics {
                m.committed();
            }
        }
        if let Some(m) = st.metrics {
            m.set_stats(st.stats);
        }
        Ok(())
    };
    let mut last_metrics = Instant::now();
    for done in done_rx {
        waiting.insert(done.seq, done);
        while let Some(d) = waiting.remove(&next) {
            next += 1;
            let full = apply(d.value, stages, options, progress)?;
            stages.checkpoint.processed(&d.origin);
            // Every quarter second, and whenever the sink has caught up (so a scrape of an
            // idle crawl shows its last record, not the one before the last update).
            if let Some(m) = stages.metrics
                && (last_metrics.elapsed() >= METRICS_EVERY || (waiting.is_empty() && done_rx.is_empty()))
            {
                last_metrics = Instant::now();
                stages.stats.elapsed_secs = base_elapsed + started.elapsed().as_secs_f64();
                stages.stats.mb_per_s = stages.stats.html_bytes as f64 / 1e6 / stages.stats.elapsed_secs.max(1e-9);
                m.set_stats(stages.stats);
            }
            if full {
                commit(stages)?;
            }
        }
    }
    commit(stages)
}

fn apply(
    outcome: Outcome,
    Stages { sink, index, stats, .. }: &mut Stages<'_>,
    options: &EngineOptions,
    progress: &dyn Progress,
) -> Result<bool, PipelineError> {
    match outcome {
        Outcome::Marker => Ok(false),
        Outcome::Skipped(reason, html_bytes) => {
            stats.records_in += 1;
            stats.html_bytes += html_bytes;
            *stats.skipped.entry(reason.to_string()).or_default() += 1;
            progress.input(html_bytes, false);
            Ok(false)
        }
        Outcome::Failed(reason, message) => {
            stats.records_in += 1;
            stats.failed_this_run += 1;
            *stats.failed.entry(reason.to_string()).or_default() += 1;
            tracing::warn!("{message}");
            progress.message(&message);
            progress.input(0, true);
            Ok(false)
        }
        Outcome::Record(mut record, html_bytes) => {
            stats.records_in += 1;
            stats.html_bytes += html_bytes;
            progress.input(html_bytes, false);
            let dup = index.check_and_insert(&record.id, &record.metadata.fingerprints).map(str::to_string);
            if dup.is_some() {
                if options.drop_near_duplicates {
                    stats.dropped_near_duplicates += 1;
                    return Ok(false);
                }
                stats.near_duplicates += 1;
            }
            record.metadata.near_duplicate_of = dup;
            stats.written += 1;
            stats.text_bytes += record.text.len() as u64;
            Ok(sink.write(&record)?)
        }
    }
}

/// Extraction of one input (runs on the worker threads).
fn work(
    event: Option<SourceEvent>,
    extractor: &Extractor<'_>,
    fingerprinter: &Fingerprinter,
    model: &str,
    site: Option<&RwLock<SiteMemory>>,
) -> Outcome {
    let page = match event {
        None => return Outcome::Marker,
        Some(SourceEvent::Skipped { reason }) => return Outcome::Skipped(reason, 0),
        Some(SourceEvent::Failed { reason, message }) => return Outcome::Failed(reason, message),
        Some(SourceEvent::Page(p)) => p,
    };
    let bytes = page.body.len() as u64;
    match page_record(*page, extractor, fingerprinter, model, site) {
        PageOutcome::Record(record) => Outcome::Record(record, bytes),
        PageOutcome::NoText => Outcome::Skipped("no_text", bytes),
        PageOutcome::Failed { reason, message } => Outcome::Failed(reason, message),
    }
}

/// What became of one page: the record the pipeline writes (before near-duplicate marking),
/// no text, or a failure with its reason and a message naming the page.
#[derive(Debug)]
pub enum PageOutcome {
    Record(Box<Record>),
    NoText,
    Failed { reason: &'static str, message: String },
}

/// A site memory saved in a file (a run's `site_memory.bin`, or `--site-memory-from`), under
/// this run's options; a file that cannot be read is a failure of the run, named.
fn read_site_memory(path: &Path, options: &SiteMemoryOptions) -> Result<SiteMemory, PipelineError> {
    let err = |message: String| PipelineError::State { path: path.to_path_buf(), message };
    let bytes = std::fs::read(path).map_err(|e| err(e.to_string()))?;
    SiteMemory::from_bytes(&bytes, options.clone()).map_err(err)
}

/// Extracts and fingerprints one page into the record the crawl pipeline writes: the one
/// place records are built, shared by the pipeline's workers and the Python package.
/// `model` is the scorer's model identity ("" for none). With a site memory, the page is
/// judged by what its host's earlier pages of its template hold, then counted into it (online:
/// a page never counts for itself).
pub fn page_record(
    page: crate::sources::Page,
    extractor: &Extractor<'_>,
    fingerprinter: &Fingerprinter,
    model: &str,
    site: Option<&RwLock<SiteMemory>>,
) -> PageOutcome {
    let host = site.and_then(|_| crate::site_memory::host_key(&page.final_url));
    let extracted = match (site, host.as_deref()) {
        (Some(memory), Some(host)) => {
            let input = match &page.source {
                crate::sources::Source::Warc { file, .. } => Some(file.as_str()),
                crate::sources::Source::Feed { .. } => None,
            };
            let (options, counted) = {
                let m = memory.read().unwrap_or_else(|e| e.into_inner());
                (m.options().clone(), m.counted_ahead(input))
            };
            // A snapshot of the host's counts, taken when the extractor knows the page's
            // layout: no lock is held while the page is extracted. After a first pass
            // (`two_pass`) the page is counted already: its own blocks are taken out.
            let lookup = |sketch: &[u64]| {
                HostView::new(memory.read().unwrap_or_else(|e| e.into_inner()).snapshot(host, sketch), counted)
            };
            let mut p = extractor.page_with_size_hint(page.http_charset.as_deref(), page.body.len());
            let x = p.write(&page.body).and_then(|()| p.end_with_site(&lookup, &options));
            if let Ok(x) = &x
                && !counted
            {
                let b = &x.site_blocks;
                memory.write().unwrap_or_else(|e| e.into_inner()).observe(host, &b.sketch, &b.hashes);
            }
            x
        }
        _ => extractor.extract(&page.body, page.http_charset.as_deref()),
    };
    let x = match extracted {
        Ok(x) => x,
        Err(e) => {
            return PageOutcome::Failed {
                reason: e.reason(),
                message: format!("{} ({}): {e}", page.url, describe_source(&page.source)),
            };
        }
    };
    if x.text.trim().is_empty() {
        return PageOutcome::NoText;
    }
    let fingerprints = fingerprinter.fingerprint(&x.text);
    let cx = crate::metadata::Context {
        url: &page.final_url,
        content_language: page.content_language.as_deref(),
        fetched_at: page.fetched_at.as_deref(),
        feed: page.feed_item.as_ref(),
        last_modified: page.last_modified.as_deref(),
        ..Default::default()
    };
    let (article, best_title) = x.article_meta(cx).unwrap_or_default();
    let title = best_title.or_else(|| x.title.clone());
    let record = Record {
        id: page.id,
        text: x.text,
        metadata: Metadata {
            url: page.url,
            final_url: page.final_url,
            source: page.source,
            fetched_at: page.fetched_at,
            status: page.status,
            content_type: page.content_type,
            charset: x.encoding.map(str::to_string),
            title,
            html_title: x.title,
            article,
            feed: page.feed_item,
            extraction: ExtractionInfo {
                scorer: x.scorer.to_string(),
                model: (!model.is_empty()).then(|| model.to_string()),
                span: x.span,
                score: x.score,
                tokens: x.tokens,
                site_memory: x.site_memory,
            },
            fingerprints,
            near_duplicate_of: None,
            structure: x.structure,
        },
    };
    PageOutcome::Record(Box::new(record))
}

fn describe_source(s: &crate::sink::record::Source) -> String {
    match s {
        crate::sink::record::Source::Warc { file, offset } => format!("{file} at byte {offset}"),
        crate::sink::record::Source::Feed { feed } => format!("from feed {feed}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_starting_while_a_probe_looks_at_its_lock_is_not_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(LOCK_FILE);
        // A probe (`is_held`, as `pipeline status` asks) holds the lock shared at the instant
        // the run starts; here for 100 ms, to be sure the run meets it.
        let probe = std::fs::File::create(&path).unwrap();
        probe.lock_shared().unwrap();
        let release = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(100));
            drop(probe);
        });
        // (Waiting longer than a run does: a loaded CI box may not run the release thread
        // within the 500 ms grace.)
        let lock = lock_output_within(dir.path(), Duration::from_secs(30)).expect("a probe is not a run");
        release.join().unwrap();
        assert!(is_held(&path));
        // A run's lock is: the second run is refused once the grace has passed.
        let started = Instant::now();
        let err = lock_output(dir.path()).unwrap_err().to_string();
        assert!(err.contains("another pipeline process is running"), "{err}");
        assert!(started.elapsed() >= PROBE_GRACE);
        drop(lock);
        assert!(!is_held(&path));
    }
}
