//! `pipeline status OUT`: what an output folder holds, read from its resume state without
//! running anything. A feeds run's `state.sqlite` gives every feed's schedule and health (last
//! poll, next poll, interval, new items, failures, parked), the articles by status, and the
//! per-host counts; a WARC run's `state.json` gives the finished inputs and the position in
//! the unfinished one. Both give the cumulative stats.

use std::path::Path;

use rusqlite::params;
use serde::Serialize;

use super::{PipelineError, Stats, feeds_run, warc_run};

/// One feed of a feeds run.
#[derive(Debug, Clone, Serialize)]
pub struct FeedStatus {
    pub url: String,
    /// `active` or `parked` (gone: 404/410 several polls in a row).
    pub status: String,
    pub polls: u64,
    /// New articles it has listed, over all polls.
    pub items: u64,
    /// Failed polls in a row.
    pub failures: u64,
    /// UTC, `YYYY-MM-DD HH:MM:SS`.
    pub last_poll: Option<String>,
    pub next_poll: Option<String>,
    pub interval_secs: Option<u64>,
    pub last_error: Option<String>,
}

/// What an output folder holds.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "mode", rename_all = "snake_case")]
pub enum RunStatus {
    Feeds {
        feeds: Vec<FeedStatus>,
        /// Articles by status: pending, done, failed.
        articles: std::collections::BTreeMap<String, u64>,
        /// A `--once` run finished its round (not stopped, not killed, not still running).
        finished: bool,
        stats: Stats,
    },
    Warc {
        /// Inputs read to the end.
        done: Vec<String>,
        /// The input being read and how many of its records are done.
        current: Option<(String, u64)>,
        /// Inputs that ended early: read again on resume, or given up after
        /// [`warc_run::MAX_INPUT_ATTEMPTS`] tries.
        retry: Vec<warc_run::Retry>,
        stats: Stats,
    },
    /// An output root of `--shard` runs (`OUT/shard-0000K/`).
    Shards {
        shards: Vec<ShardStatus>,
        /// Summed over the shards.
        stats: Stats,
    },
}

/// One shard of a sharded run.
#[derive(Debug, Clone, Serialize)]
pub struct ShardStatus {
    pub dir: String,
    pub shard: Option<super::shard::Shard>,
    /// Its inputs (WARC files; for feeds, the feed list).
    pub inputs: usize,
    pub done: usize,
    pub in_progress: usize,
    /// Inputs not started, or ended early and to be read again.
    pub pending: usize,
    /// Inputs given up after [`warc_run::MAX_INPUT_ATTEMPTS`] tries.
    pub failed: usize,
    /// Feeds: pages other shards handed over that wait in its inbox ([`super::handoff`]),
    /// taken in by its next round (or look) and left there until written.
    pub handed_waiting: usize,
    pub stats: Stats,
}

/// Adds `b` into `a` (counts summed; rates recomputed).
fn add(a: &mut Stats, b: &Stats) {
    a.records_in += b.records_in;
    a.written += b.written;
    a.near_duplicates += b.near_duplicates;
    a.dropped_near_duplicates += b.dropped_near_duplicates;
    for (k, v) in &b.skipped {
        *a.skipped.entry(k.clone()).or_default() += v;
    }
    for (k, v) in &b.failed {
        *a.failed.entry(k.clone()).or_default() += v;
    }
    a.html_bytes += b.html_bytes;
    a.text_bytes += b.text_bytes;
    a.parts += b.parts;
    a.elapsed_secs += b.elapsed_secs;
    a.mb_per_s = if a.elapsed_secs > 0.0 { a.html_bytes as f64 / 1e6 / a.elapsed_secs } else { 0.0 };
}

fn shard_status(dir: &Path) -> Result<ShardStatus, PipelineError> {
    let manifest = super::shard::ShardManifest::read(dir);
    let inputs = manifest.as_ref().map_or(0, |m| m.inputs.len());
    let waiting = super::handoff::waiting(dir);
    let (done, in_progress, failed, stats) = match status(dir) {
        Ok(RunStatus::Warc { done, current, retry, stats }) => {
            // Counted against the shard's own inputs, so a state naming inputs the shard no
            // longer has cannot show more done than inputs.
            let mine: std::collections::HashSet<&str> =
                manifest.as_ref().map(|m| m.inputs.iter().map(String::as_str).collect()).unwrap_or_default();
            let ours = |k: &str| manifest.is_none() || mine.contains(k);
            let done = done.iter().filter(|k| ours(k)).count();
            let failed = retry.iter().filter(|r| r.given_up() && ours(&r.input)).count();
            let current = current.is_some_and(|(k, _)| ours(&k));
            (done, usize::from(current), failed, stats)
        }
        // A feeds shard is in progress until its state says the last `--once` round ended,
        // and while pages handed to it wait to be written.
        Ok(RunStatus::Feeds { stats, finished, .. }) => {
            let finished = finished && waiting == 0;
            (usize::from(finished), usize::from(!finished), 0, stats)
        }
        // A folder other shards handed pages to before it ever ran has work waiting.
        Ok(RunStatus::Shards { .. }) | Err(_) => (0, usize::from(waiting > 0), 0, Stats::default()),
    };
    Ok(ShardStatus {
        dir: dir.display().to_string(),
        shard: manifest.map(|m| m.shard),
        inputs,
        done,
        in_progress,
        pending: inputs.saturating_sub(done + in_progress + failed),
        failed,
        handed_waiting: waiting,
        stats,
    })
}

/// Reads the status of the run in `out`.
pub fn status(out: &Path) -> Result<RunStatus, PipelineError> {
    let db = out.join(feeds_run::STATE_FILE);
    if db.exists() {
        return feeds_status(&db);
    }
    let shard_dirs = super::shard::shard_dirs(out).unwrap_or_default();
    if !shard_dirs.is_empty() && !out.join(warc_run::STATE_FILE).exists() {
        let shards = shard_dirs.iter().map(|d| shard_status(d)).collect::<Result<Vec<_>, _>>()?;
        let mut stats = Stats::default();
        for s in &shards {
            add(&mut stats, &s.stats);
        }
        return Ok(RunStatus::Shards { shards, stats });
    }
    match warc_run::WarcState::load(out)? {
        Some(state) => {
            let pos = state.resolve(out);
            Ok(RunStatus::Warc { done: pos.done, current: pos.current, retry: pos.retry, stats: pos.stats })
        }
        None => Err(PipelineError::State {
            path: out.to_path_buf(),
            message: "no run here (neither state.sqlite nor state.json)".into(),
        }),
    }
}

fn feeds_status(db: &Path) -> Result<RunStatus, PipelineError> {
    let conn = feeds_run::open_state(db)?;
    let e = |err: rusqlite::Error| PipelineError::State { path: db.to_path_buf(), message: err.to_string() };
    let mut st = conn
        .prepare(
            "SELECT url, status, polls, items, failures, polled_at,
                    CASE WHEN next_poll IS NULL THEN NULL ELSE datetime(next_poll, 'unixepoch') END,
                    interval_secs, last_error
             FROM feeds ORDER BY url",
        )
        .map_err(e)?;
    let feeds = st
        .query_map([], |r| {
            Ok(FeedStatus {
                url: r.get(0)?,
                status: r.get(1)?,
                polls: r.get::<_, i64>(2)? as u64,
                items: r.get::<_, i64>(3)? as u64,
                failures: r.get::<_, i64>(4)? as u64,
                last_poll: r.get(5)?,
                next_poll: r.get(6)?,
                interval_secs: r.get::<_, Option<i64>>(7)?.map(|v| v as u64),
                last_error: r.get(8)?,
            })
        })
        .map_err(e)?
        .collect::<Result<Vec<_>, _>>()
        .map_err(e)?;
    let mut articles = std::collections::BTreeMap::new();
    let mut st = conn.prepare("SELECT status, count(*) FROM articles GROUP BY status").map_err(e)?;
    for row in st.query_map(params![], |r| Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?))).map_err(e)? {
        let (k, n) = row.map_err(e)?;
        articles.insert(k, n as u64);
    }
    let mut stats: Stats = conn
        .query_row("SELECT value FROM meta WHERE key = 'stats'", [], |r| r.get::<_, String>(0))
        .ok()
        .and_then(|s| serde_json::from_str(&s).ok())
        .unwrap_or_default();
    stats.hosts = feeds_run::host_stats(&conn).map_err(e)?;
    let finished = conn.query_row("SELECT 1 FROM meta WHERE key = 'once_finished'", [], |_| Ok(())).is_ok();
    Ok(RunStatus::Feeds { feeds, articles, finished, stats })
}
