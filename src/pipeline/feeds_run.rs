//! `pipeline --feeds feeds.txt`: poll feeds, fetch each new article once, extract, write.
//!
//! The async crawl (tokio + reqwest, [`crate::sources::fetch`]) runs on the source thread and
//! hands pages to the extraction threads through the engine's bounded channel, so a slow sink
//! slows fetching. State lives in SQLite (`OUT/state.sqlite`; copied to the bucket at every commit
//! for `--out s3://…`, see [`super::s3_output`]): each feed's ETag and
//! Last-Modified for conditional GETs, and every article URL seen with its status. An article
//! is `pending` until the part holding its record is committed: the sink marks the batch
//! `done` with the part's index just before the part is renamed into place, and on restart a
//! `done` article whose part file does not exist goes back to `pending`. A restart therefore
//! neither fetches a written article again nor loses one. Only permanent outcomes end an
//! article: a fetch that failed for a reason that may pass (timeout, network error, a 5xx or
//! 429 after the fetcher's own retries, robots.txt unavailable) leaves it `pending` with one
//! more attempt counted, and it is tried again on the next poll or run, up to
//! [`MAX_ATTEMPTS`] times; then it is `failed`.
//!
//! Attempts are counted in the database when they happen, not when a part commits: a crawl
//! killed before its part fills must not forget them, or an article that always fails would be
//! tried in every run for ever. For the same reason every fetch's start is counted before the
//! request goes out (`started`), and an article's outcome marks it `settled` (the transient
//! failure itself, or the record extracted, a second at most later): a start that never
//! settled is a process that died on the article, by a kill or a crash. An article that
//! [`MAX_CRASHES`] processes died on is given up (`abandoned`) instead of taking down every
//! later run too. So that the articles in flight beside such a page are not given up with it,
//! the next run tries each article a run died on alone, nothing else in flight, before
//! anything else; a stop (Ctrl-C, SIGTERM) or an error lets the fetches in flight go and takes
//! their starts back, so it is never counted as a run dying on them.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rusqlite::{Connection, OptionalExtension, params};
use url::Url;

use super::config::FeedsConfig;
use super::handoff::{Handoff, INBOX_EVERY, Inboxes, MAX_HOPS};
use super::shard::Shard;
use super::{Checkpoint, ItemSender, Origin, PipelineError, Progress, RunContext, Stats};
use crate::sink::record::Source;
use crate::sources::fetch::{FetchError, Fetched, Fetcher, Trust};
use crate::sources::frontier::{Frontier, FrontierLimits};
use crate::sources::poll_schedule::{FeedHealth, GONE_AFTER, PollHints, PollPolicy, PollResult, max_age, next_poll};
use crate::sources::warc_writer::{Exchange, WarcWriter};
use crate::sources::{Page, SourceEvent, feeds, http, url_id};

pub(crate) const STATE_FILE: &str = "state.sqlite";

/// How often the crawl reports its frontier (progress line, metrics gauges).
const REPORT_EVERY: Duration = Duration::from_millis(500);

/// Transient failures after which an article is given up (`status = 'failed'`).
pub const MAX_ATTEMPTS: u32 = 5;

/// Runs that ended (killed, crashed) while an article was being fetched or extracted, after
/// which it is given up: a page that crashes the process must not crash every run after it.
/// Above one, because a kill -9 also catches innocent articles in flight.
pub const MAX_CRASHES: u32 = 3;

/// Everything a feeds run needs.
pub struct FeedsRun<'a> {
    pub feeds: FeedsConfig,
    pub ctx: RunContext<'a>,
    /// Only the articles of this slice of the hosts (every shard polls every feed).
    pub shard: Option<super::shard::Shard>,
    /// With `shard`: the output root's inboxes, where pages a link of this shard led to on
    /// another shard's host go ([`super::handoff`]).
    pub inboxes: Option<Inboxes>,
}

fn db_err(path: &Path) -> impl Fn(rusqlite::Error) -> PipelineError + '_ {
    move |e| PipelineError::State { path: path.to_path_buf(), message: e.to_string() }
}

/// Runs `f` in an immediate transaction on `conn`, its errors named by `path`. Immediate: the
/// write lock is taken at BEGIN, waited for within the busy timeout; a deferred transaction
/// that reads, then writes, fails at once with SQLITE_BUSY_SNAPSHOT when the sink commits a
/// part in between (see `Crawl::record_poll`).
fn immediate<T>(
    conn: &Connection,
    path: &Path,
    f: impl FnOnce(&Connection) -> rusqlite::Result<T>,
) -> Result<T, PipelineError> {
    let run = || {
        let tx = rusqlite::Transaction::new_unchecked(conn, rusqlite::TransactionBehavior::Immediate)?;
        let value = f(conn)?;
        tx.commit()?;
        Ok(value)
    };
    run().map_err(db_err(path))
}

/// Opens (and creates) the state database.
pub fn open_state(path: &Path) -> Result<Connection, PipelineError> {
    let e = db_err(path);
    let conn = Connection::open(path).map_err(&e)?;
    conn.busy_timeout(Duration::from_secs(30)).map_err(&e)?;
    conn.execute_batch(
        "PRAGMA journal_mode=WAL;
         PRAGMA synchronous=FULL;
         CREATE TABLE IF NOT EXISTS feeds (url TEXT PRIMARY KEY, etag TEXT, last_modified TEXT, polled_at TEXT);
         CREATE TABLE IF NOT EXISTS articles (
             id INTEGER PRIMARY KEY AUTOINCREMENT, url TEXT UNIQUE NOT NULL, feed TEXT NOT NULL,
             status TEXT NOT NULL DEFAULT 'pending', part INTEGER);
         CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);",
    )
    .map_err(&e)?;
    // Columns added since the first version: databases written before get them.
    let columns: [(&str, &str, &str); 16] = [
        ("articles", "item", "TEXT"),
        ("articles", "attempts", "INTEGER NOT NULL DEFAULT 0"),
        ("articles", "started", "INTEGER NOT NULL DEFAULT 0"),
        ("articles", "settled", "INTEGER NOT NULL DEFAULT 0"),
        ("articles", "first_seen", "INTEGER"),
        ("articles", "last_seen", "INTEGER"),
        // How many times other shards had handed it over when this shard took it in
        // ([`super::handoff`]; 0: listed by this shard's own feeds first).
        ("articles", "handed", "INTEGER NOT NULL DEFAULT 0"),
        ("feeds", "next_poll", "INTEGER"),
        ("feeds", "interval_secs", "INTEGER"),
        ("feeds", "rate", "REAL"),
        ("feeds", "failures", "INTEGER NOT NULL DEFAULT 0"),
        ("feeds", "gone", "INTEGER NOT NULL DEFAULT 0"),
        ("feeds", "status", "TEXT NOT NULL DEFAULT 'active'"),
        ("feeds", "polls", "INTEGER NOT NULL DEFAULT 0"),
        ("feeds", "items", "INTEGER NOT NULL DEFAULT 0"),
        ("feeds", "last_error", "TEXT"),
    ];
    for (table, column, decl) in columns {
        let has = conn
            .prepare(&format!("SELECT 1 FROM pragma_table_info('{table}') WHERE name = '{column}'"))
            .and_then(|mut st| st.exists([]))
            .map_err(&e)?;
        if !has {
            conn.execute_batch(&format!("ALTER TABLE {table} ADD COLUMN {column} {decl};")).map_err(&e)?;
        }
    }
    // `listings`: what each feed listed at its last full answer (200), so that an answer of
    // 304 (nothing changed) can tell which articles the feed still lists: `forget` must never
    // prune those, or the feed's next full answer would bring them back as new. `pages`: the
    // page (final URL, after redirects) each fetched article led to, so that two links to one
    // page are one record (`Crawl::claim_page`). `inbox`: the entries of this shard's inbox
    // taken in, by name, with the article each names ([`super::handoff`]), so that an entry is
    // read once and leaves the inbox once its article is finished.
    conn.execute_batch(
        "CREATE TABLE IF NOT EXISTS hosts (host TEXT PRIMARY KEY, fetched INTEGER NOT NULL DEFAULT 0,
             failed INTEGER NOT NULL DEFAULT 0, bytes INTEGER NOT NULL DEFAULT 0, reasons TEXT NOT NULL DEFAULT '{}');
         CREATE INDEX IF NOT EXISTS articles_status ON articles (status);
         CREATE TABLE IF NOT EXISTS listings (feed TEXT NOT NULL, url TEXT NOT NULL, PRIMARY KEY (feed, url))
             WITHOUT ROWID;
         CREATE INDEX IF NOT EXISTS listings_url ON listings (url);
         CREATE TABLE IF NOT EXISTS pages (final_url TEXT PRIMARY KEY, url TEXT NOT NULL,
             written INTEGER NOT NULL DEFAULT 0) WITHOUT ROWID;
         CREATE TABLE IF NOT EXISTS inbox (name TEXT PRIMARY KEY, url TEXT NOT NULL) WITHOUT ROWID;
         CREATE INDEX IF NOT EXISTS pages_url ON pages (url);",
    )
    .map_err(&e)?;
    Ok(conn)
}

/// Opens the state database for writes that must survive the process, not the machine: the
/// start and the settling of a fetch, which tell a run that died on an article from one that
/// did not. In WAL mode a commit without an fsync survives a kill or a crash of the process;
/// what a power cut takes is at worst a start or a settling mark (one crash counted too many
/// or too few), and a part's commit (`synchronous=FULL`) fsyncs the log with everything
/// written before it, so no record ever depends on a lighter write.
fn open_light(path: &Path) -> Result<Connection, PipelineError> {
    let conn = open_state(path)?;
    conn.execute_batch("PRAGMA synchronous=NORMAL;").map_err(db_err(path))?;
    Ok(conn)
}

struct FeedsCheckpoint<'a> {
    conn: Connection,
    path: &'a Path,
    /// The bucket the output goes to, if any: it gets a copy of the database at every commit.
    mirror: Option<&'a dyn super::OutputMirror>,
    batch: Vec<String>,
    /// Articles whose fetch failed transiently since the last part.
    retry: Vec<String>,
    /// Per-host counts of the articles since the last part.
    hosts: std::collections::HashMap<String, super::HostStats>,
    /// A connection of its own for the settled marks, written without an fsync (see
    /// [`open_light`]).
    light: Connection,
    /// A failure to mark one, returned at the next part (`processed` cannot return one).
    error: Option<PipelineError>,
    /// This shard's inbox ([`super::handoff`]), cleared of finished articles at every commit.
    inbox: Option<(Inboxes, Shard)>,
}

impl FeedsCheckpoint<'_> {
    fn tally(&mut self, t: &super::HostTally) {
        self.hosts.entry(t.host.clone()).or_default().add(&t.counts);
    }

    /// Removes from the inbox the entries taken in whose article is finished (or forgotten
    /// since): the database names them, so nothing is listed. Called once the database that
    /// says so is durable (committed here, and in the bucket when there is one), so a rerun
    /// never lacks an article whose entry is gone. An entry's row goes after the entry, so a
    /// failure or a kill in between leaves it to the next commit; an entry taken in is not read
    /// again.
    fn clear_inbox(&self) {
        let Some((inboxes, me)) = &self.inbox else { return };
        let e = db_err(self.path);
        let result = (|| -> Result<(), PipelineError> {
            let finished: Vec<String> = self
                .conn
                .prepare_cached(
                    "SELECT inbox.name FROM inbox LEFT JOIN articles USING (url)
                     WHERE articles.status IS NULL OR articles.status IN ('done', 'failed')",
                )
                .and_then(|mut q| q.query_map([], |r| r.get(0))?.collect())
                .map_err(&e)?;
            let mut gone = self.conn.prepare_cached("DELETE FROM inbox WHERE name = ?1").map_err(&e)?;
            for name in &finished {
                inboxes.remove(*me, name)?;
                gone.execute(params![name]).map_err(&e)?;
            }
            Ok(())
        })();
        if let Err(err) = result {
            tracing::warn!("the inbox keeps pages already written (they are not taken in again): {err}");
        }
    }

    /// Marks an extracted article as settled: a run that dies now did not die on it.
    fn settle(&self, url: &str) -> Result<(), PipelineError> {
        immediate(&self.light, self.path, |c| {
            c.prepare_cached("UPDATE articles SET settled = started WHERE url = ?1")?.execute(params![url]).map(drop)
        })
    }
}

impl Checkpoint for FeedsCheckpoint<'_> {
    fn processed(&mut self, origin: &Origin) {
        match origin {
            Origin::Url(u, t) => {
                self.batch.push(u.clone());
                self.tally(t);
                if self.error.is_none()
                    && let Err(err) = self.settle(u)
                {
                    self.error = Some(err);
                }
            }
            Origin::UrlRetry(u, t) => {
                self.retry.push(u.clone());
                self.tally(t);
            }
            _ => {}
        }
    }

    fn prepare(&mut self, part: Option<u32>, stats: &Stats) -> Result<(), PipelineError> {
        if let Some(err) = self.error.take() {
            return Err(err);
        }
        let e = db_err(self.path);
        let tx = self.conn.transaction().map_err(&e)?;
        {
            let mut st = tx
                .prepare_cached("UPDATE articles SET status = 'done', part = ?2, settled = started WHERE url = ?1")
                .map_err(&e)?;
            // Their pages are written now (`Crawl::claim_page`).
            let mut written = tx.prepare_cached("UPDATE pages SET written = 1 WHERE url = ?1").map_err(&e)?;
            for u in &self.batch {
                st.execute(params![u, part]).map_err(&e)?;
                written.execute(params![u]).map_err(&e)?;
            }
            // The attempt itself was counted when it failed (`Crawl::finished`); the record of
            // the last one allowed ends the article.
            let mut st = tx
                .prepare_cached(
                    "UPDATE articles SET
                         status = CASE WHEN attempts >= ?2 OR started - settled >= ?3 THEN 'failed' ELSE 'pending' END
                     WHERE url = ?1 AND status = 'pending'",
                )
                .map_err(&e)?;
            for u in &self.retry {
                st.execute(params![u, MAX_ATTEMPTS, MAX_CRASHES]).map_err(&e)?;
            }
            // The hosts' counts of exactly these articles, in the same transaction.
            let mut read = tx.prepare_cached("SELECT reasons FROM hosts WHERE host = ?1").map_err(&e)?;
            let mut write = tx
                .prepare_cached(
                    "INSERT INTO hosts (host, fetched, failed, bytes, reasons) VALUES (?1, ?2, ?3, ?4, ?5)
                     ON CONFLICT(host) DO UPDATE SET fetched = fetched + excluded.fetched,
                         failed = failed + excluded.failed, bytes = bytes + excluded.bytes, reasons = excluded.reasons",
                )
                .map_err(&e)?;
            for (host, h) in &self.hosts {
                let old: Option<String> = read.query_row(params![host], |r| r.get(0)).optional().map_err(&e)?;
                let reasons = old.and_then(|j| serde_json::from_str(&j).ok()).unwrap_or_default();
                let mut merged = super::HostStats { reasons, ..Default::default() };
                merged.add(h);
                let reasons = serde_json::to_string(&merged.reasons).expect("reasons serialise");
                write.execute(params![host, h.fetched as i64, h.failed as i64, h.bytes as i64, reasons]).map_err(&e)?;
            }
        }
        let json = serde_json::to_string(stats).expect("stats serialise");
        tx.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('stats', ?1)", params![json]).map_err(&e)?;
        tx.commit().map_err(&e)?;
        self.batch.clear();
        self.retry.clear();
        self.hosts.clear();
        // Before the part goes up (see `s3_output`).
        if let Some(m) = self.mirror {
            publish_state(&self.conn, self.path, m)?;
        }
        Ok(())
    }

    fn committed(&mut self, part: u32) -> Result<(), PipelineError> {
        // No fsync of its own (`open_light`): lost in a power cut, it only makes the next run
        // take this part for one a crash may have lost, as before it was kept.
        self.light
            .execute(
                "INSERT OR REPLACE INTO meta (key, value) VALUES (?1, ?2)",
                params![COMMITTED_PART, part.to_string()],
            )
            .map_err(db_err(self.path))?;
        // The bucket's copy at once, not with the next part's: a consumer may read and delete
        // this part long before the next one fills, and a rerun from a copy that does not know
        // the part was in place would write its records again.
        if let Some(m) = self.mirror {
            publish_state(&self.conn, self.path, m)?;
        }
        self.clear_inbox();
        Ok(())
    }
}

/// The meta key of the highest part known to be in place (see [`Checkpoint::committed`]).
const COMMITTED_PART: &str = "committed_part";

/// Uploads a consistent copy of the state database (`VACUUM INTO` reads one snapshot while the
/// crawl goes on writing) under the database's own name.
fn publish_state(conn: &Connection, path: &Path, mirror: &dyn super::OutputMirror) -> Result<(), PipelineError> {
    let e = db_err(path);
    let copy = path.with_extension("sqlite.snapshot.tmp");
    let _ = std::fs::remove_file(&copy);
    conn.execute("VACUUM INTO ?1", params![copy.to_string_lossy()]).map_err(&e)?;
    mirror.publish_as(&copy, STATE_FILE)?;
    std::fs::remove_file(&copy).map_err(|err| PipelineError::State { path: copy.clone(), message: err.to_string() })
}

/// Runs a feeds pipeline; returns the (cumulative) stats, also written to `OUT/stats.json`.
pub fn run(run: &FeedsRun<'_>, progress: &dyn Progress) -> Result<Stats, PipelineError> {
    let ctx = &run.ctx;
    // Every shard polls every feed and keeps the articles of its own hosts (see `shard`), so
    // an article is fetched by one shard whichever feeds list it, and adding a feed moves
    // nothing.
    let feed_urls = feeds::read_feed_list(&run.feeds.list).map_err(|e| PipelineError::Source(e.to_string()))?;
    ctx.check_fresh(STATE_FILE)?;
    std::fs::create_dir_all(&ctx.out)
        .map_err(|e| PipelineError::State { path: ctx.out.clone(), message: e.to_string() })?;
    let db_path = ctx.out.join(STATE_FILE);
    let conn = open_state(&db_path)?;
    let e = db_err(&db_path);
    let next_part = recover_parts(&conn, &db_path, &ctx.out)?;
    let stats: Stats = conn
        .query_row("SELECT value FROM meta WHERE key = 'stats'", [], |r| r.get::<_, String>(0))
        .optional()
        .map_err(&e)?
        .and_then(|s| serde_json::from_str(&s).ok())
        .unwrap_or_default();
    let mut output = ctx.open_output()?;
    output.0.number_from(next_part);
    let mut checkpoint = FeedsCheckpoint {
        conn,
        path: &db_path,
        mirror: ctx.mirror,
        batch: Vec::new(),
        retry: Vec::new(),
        hosts: Default::default(),
        light: open_light(&db_path)?,
        error: None,
        inbox: run.inboxes.clone().zip(run.shard),
    };
    let fetcher = Fetcher::new(run.feeds.fetch_options()).map_err(|e| PipelineError::Source(e.to_string()))?;
    let warc_out = match &run.feeds.warc_out {
        Some(dir) => {
            std::fs::create_dir_all(dir)
                .map_err(|e| PipelineError::State { path: dir.clone(), message: e.to_string() })?;
            let name = format!("crawl-{}-{}.warc.gz", chrono::Utc::now().format("%Y%m%d%H%M%S"), std::process::id());
            let path = dir.join(name);
            let w = WarcWriter::create(&path, concat!("article-pipeline/", env!("CARGO_PKG_VERSION")))
                .map_err(|e| PipelineError::State { path: path.clone(), message: e.to_string() })?;
            Some(Mutex::new(w))
        }
        None => None,
    };
    let crawl = Crawl {
        fetcher,
        feeds: feed_urls,
        db_path: db_path.clone(),
        config: run.feeds.clone(),
        warc: warc_out,
        shard: run.shard,
        inboxes: run.inboxes.clone(),
        metrics: ctx.metrics.clone(),
    };
    let source = move |tx: &mut ItemSender| -> Result<(), PipelineError> {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .map_err(|e| PipelineError::Source(format!("cannot start the async runtime: {e}")))?;
        rt.block_on(crawl.run(tx, progress))
    };
    let mut stats = ctx.run(source, output, &mut checkpoint, stats, None, progress)?;
    // Per-host counts live in the state database (the crawl updates them as it goes); the
    // summary carries them too.
    let conn = open_state(&db_path)?;
    stats.hosts = host_stats(&conn).map_err(db_err(&db_path))?;
    let bytes = serde_json::to_vec_pretty(&stats).expect("stats serialise");
    let stats_path = ctx.out.join("stats.json");
    crate::sink::write_atomic(&stats_path, &bytes)?;
    if let Some(m) = ctx.mirror {
        // The polls since the last part, then the summary.
        publish_state(&conn, &db_path, m)?;
        m.publish(&stats_path)?;
    }
    // After the last part and the last copy of the database: the pages handed over that
    // this run finished leave the inbox.
    checkpoint.conn = conn;
    checkpoint.clear_inbox();
    Ok(stats)
}

/// Sends back to pending the articles of a part a crash lost: one marked done just before
/// its rename, which never happened. Only parts above the last one known to be in place can
/// be (a database from before that was kept: only the highest part it names), since the sink
/// commits one part at a time. A lower part that is missing was taken away after it was
/// written, by a consumer that deletes what it has read: its articles stay done, or they
/// would be fetched and written a second time. Returns the number the next part must have at
/// least, so that no part name is given twice.
fn recover_parts(conn: &Connection, db_path: &Path, out: &Path) -> Result<u32, PipelineError> {
    let e = db_err(db_path);
    let parts: Vec<u32> = conn
        .prepare("SELECT DISTINCT part FROM articles WHERE status = 'done' AND part IS NOT NULL ORDER BY part")
        .and_then(|mut st| st.query_map([], |r| r.get::<_, u32>(0))?.collect())
        .map_err(&e)?;
    let in_place: Option<u32> = conn
        .query_row("SELECT value FROM meta WHERE key = ?1", params![COMMITTED_PART], |r| r.get::<_, String>(0))
        .optional()
        .map_err(&e)?
        .and_then(|v| v.parse().ok());
    let highest = parts.last().copied();
    let mut next = in_place.map_or(0, |p| p + 1);
    for &p in &parts {
        let may_be_lost = match in_place {
            Some(c) => p > c,
            None => Some(p) == highest,
        };
        let present = crate::sink::part_exists(out, p);
        if !present && may_be_lost {
            conn.execute("UPDATE articles SET status = 'pending', part = NULL WHERE part = ?1", params![p])
                .map_err(&e)?;
            continue;
        }
        if !present {
            tracing::warn!(
                "{}: part {p:05} is no longer there; taken as read and removed by a consumer, its articles are not \
                 written again",
                out.display()
            );
        }
        next = next.max(p + 1);
    }
    Ok(next)
}

/// Prunes articles that are finished (done or failed) and that no feed has listed for
/// `days`: an article a feed's last full answer holds (`listings`) keeps its row whatever its
/// age, so it is never fetched again; the database grows with the articles of the last
/// `days`, not with every article ever seen. Returns how many went.
///
/// A feed taken out of the list keeps that protection for `days` after its last poll, as its
/// articles do: a feed left out by mistake for one run, or moved to another list and back,
/// must not find its long-listed articles forgotten and fetch and write them again.
fn forget(conn: &Connection, feeds: &[Url], days: u64, now_unix: i64) -> Result<usize, rusqlite::Error> {
    let cutoff = now_unix - (days as i64) * 86_400;
    let listed: Vec<&str> = feeds.iter().map(Url::as_str).collect();
    let listed = serde_json::to_string(&listed).expect("feed URLs serialise");
    conn.execute(
        "DELETE FROM listings WHERE feed NOT IN (SELECT value FROM json_each(?1))
             AND feed NOT IN (SELECT url FROM feeds WHERE CAST(strftime('%s', polled_at) AS INTEGER) >= ?2)",
        params![listed, cutoff],
    )?;
    let n = conn.execute(
        "DELETE FROM articles WHERE status IN ('done', 'failed') AND coalesce(last_seen, first_seen) < ?1
             AND url NOT IN (SELECT url FROM listings)",
        params![cutoff],
    )?;
    // The pages of forgotten articles go with them (`Crawl::claim_page`).
    conn.execute("DELETE FROM pages WHERE url NOT IN (SELECT url FROM articles)", [])?;
    Ok(n)
}

/// The `hosts` table as stats.
pub fn host_stats(conn: &Connection) -> Result<std::collections::BTreeMap<String, super::HostStats>, rusqlite::Error> {
    let mut st = conn.prepare("SELECT host, fetched, failed, bytes, reasons FROM hosts ORDER BY host")?;
    let rows = st.query_map([], |r| {
        let reasons: String = r.get(4)?;
        Ok((
            r.get::<_, String>(0)?,
            super::HostStats {
                fetched: r.get::<_, i64>(1)? as u64,
                failed: r.get::<_, i64>(2)? as u64,
                bytes: r.get::<_, i64>(3)? as u64,
                reasons: serde_json::from_str(&reasons).unwrap_or_default(),
            },
        ))
    })?;
    rows.collect()
}

struct Crawl {
    fetcher: Fetcher,
    feeds: Vec<Url>,
    db_path: PathBuf,
    config: FeedsConfig,
    warc: Option<Mutex<WarcWriter>>,
    shard: Option<super::shard::Shard>,
    /// Where pages of other shards' hosts go, and this shard's own come from.
    inboxes: Option<Inboxes>,
    metrics: Option<Arc<super::metrics::Metrics>>,
}

/// The text of a panic's payload.
fn panic_message(p: &(dyn std::any::Any + Send)) -> String {
    p.downcast_ref::<&str>().map(|s| s.to_string()).or_else(|| p.downcast_ref::<String>().cloned()).unwrap_or_default()
}

/// What an article's fetch gave its host (counted when the article commits).
fn host_tally(host: &str, event: &SourceEvent, bytes: Option<u64>) -> super::HostTally {
    let (fetched, failed, reason) = match event {
        SourceEvent::Page(_) => (true, false, None),
        SourceEvent::Skipped { reason } => (bytes.is_some(), false, Some(format!("skipped:{reason}"))),
        SourceEvent::Failed { reason, .. } => (false, true, Some(format!("failed:{reason}"))),
    };
    let counts = super::HostStats {
        fetched: u64::from(fetched),
        failed: u64::from(failed),
        bytes: bytes.unwrap_or(0),
        reasons: reason.into_iter().map(|r| (r, 1)).collect(),
    };
    super::HostTally { host: host.to_string(), counts }
}

/// A failed input: its reason and a message naming it.
type Failure = (&'static str, String);

/// One unit of work of the frontier.
enum Work {
    /// Poll feed number `n` of the feed list.
    Poll(usize),
    /// Fetch an article.
    Article {
        url: String,
        /// The feed that listed it.
        feed: String,
        /// Its feed item, as JSON.
        item: Option<String>,
        /// How many times other shards handed it over ([`super::handoff`]).
        handed: u32,
        /// Its last try: a transient failure now gives it up.
        last_try: bool,
    },
}

/// What a finished unit of work gives back to the loop.
enum Done {
    Poll(usize, Result<Fetched, crate::sources::fetch::FetchError>),
    Article(String, SourceEvent, bool, Option<u64>),
}

/// A feed as the loop schedules it.
struct FeedSlot {
    url: Url,
    host: String,
    next_poll: Instant,
    queued: bool,
    parked: bool,
    polled_this_run: bool,
    /// When it was last polled (unix seconds), for the observed rate.
    last_poll: Option<i64>,
    health: FeedHealth,
}

/// The crawl loop's state between wake-ups.
struct LoopState {
    slots: Vec<FeedSlot>,
    frontier: Frontier<Work>,
    /// Articles queued, in flight, or fetched and not yet committed.
    queued: HashSet<String>,
    /// Transient failures resting before their next try.
    resting: HashMap<String, Instant>,
    /// The pages (final URLs) articles of this process claimed (`Crawl::claim_page`).
    claims: HashSet<String>,
    /// Articles whose fetch has started and not finished.
    in_flight: HashSet<String>,
    /// Articles a run died with in flight (a start never settled), to be tried one at a time
    /// with nothing else in flight, and the one being tried: a run that dies then has died on
    /// it alone, and the innocent articles in flight beside a page that crashes the process
    /// settle on their own try instead of being given up with it.
    suspects: std::collections::VecDeque<(String, Work)>,
    alone: Option<String>,
    /// The other pending articles are held back until the suspects are tried.
    holding: bool,
    tasks: tokio::task::JoinSet<(String, Done)>,
    /// The pending articles must be read again from the state database.
    refresh: bool,
}

impl LoopState {
    /// Feeds due for a poll join their host's queue (with `--once`, every feed not yet polled;
    /// a parked feed only when its next check is due, once a `--max-interval`).
    fn queue_due_feeds(&mut self, once: bool, now: Instant) {
        for (n, s) in self.slots.iter_mut().enumerate() {
            let due = if once { !s.polled_this_run && (!s.parked || s.next_poll <= now) } else { s.next_poll <= now };
            if due && !s.queued {
                s.queued = true;
                self.frontier.push(&s.host, Work::Poll(n), now);
            }
        }
    }

    /// When the loop must wake: a host ready, a feed due (unless `no_polls`), a rest over;
    /// marks the pending articles for a refresh when a rest ends by then.
    fn wake(&mut self, no_polls: bool) -> Instant {
        let next_feed =
            if no_polls { None } else { self.slots.iter().filter(|s| !s.queued).map(|s| s.next_poll).min() };
        let wake = [self.frontier.next_ready(), next_feed, self.resting.values().min().copied()]
            .into_iter()
            .flatten()
            .min()
            .unwrap_or_else(|| Instant::now() + Duration::from_secs(3600));
        if self.resting.values().any(|t| *t <= wake) {
            self.refresh = true;
        }
        wake
    }
}

/// Ctrl-C, or SIGTERM (what Kubernetes and systemd send before they kill a process): stop
/// starting work, let what is in flight finish, then end the run normally (the sink commits
/// what was extracted, an `s3://` output's lock is released; `--resume` continues). A second
/// signal aborts.
fn stop_on_ctrl_c() -> tokio::sync::watch::Receiver<bool> {
    let (stop_tx, stop) = tokio::sync::watch::channel(false);
    tokio::spawn(async move {
        if super::interrupt::interrupted().await {
            tracing::warn!(
                "interrupted: stopping; the fetches in flight are let go, fetched again on --resume (Ctrl-C again to abort)"
            );
            let _ = stop_tx.send(true);
            if super::interrupt::interrupted().await {
                std::process::exit(130);
            }
        }
    });
    stop
}

/// A feed's conditional-GET validators (ETag, Last-Modified) from the state database.
fn validators(conn: &Connection, feed: &Url) -> Result<Option<(String, String)>, rusqlite::Error> {
    conn.prepare_cached("SELECT etag, last_modified FROM feeds WHERE url = ?1")?
        .query_row(params![feed.as_str()], |r| {
            Ok((r.get::<_, Option<String>>(0)?.unwrap_or_default(), r.get::<_, Option<String>>(1)?.unwrap_or_default()))
        })
        .optional()
}

/// Adds the inbox entries `new` (name, page) as pending articles, and notes each name as
/// taken in ([`Crawl::take_inbox`]); returns how many pending articles it added or changed. A
/// URL the shard already has is not added again: a page it wrote or gave up stays as it is,
/// and a pending one (even while it is being fetched) keeps the fewest hand-offs it was
/// reached by, since the shorter path may still hand it on ([`MAX_HOPS`]).
fn take_in(c: &Connection, new: &[(String, Handoff)], now: i64) -> rusqlite::Result<usize> {
    let mut ins = c.prepare_cached(
        "INSERT INTO articles (url, feed, item, first_seen, last_seen, handed)
         VALUES (?1, ?2, ?3, ?4, ?4, ?5)
         ON CONFLICT(url) DO UPDATE SET handed = min(handed, excluded.handed)
             WHERE status = 'pending' AND handed > excluded.handed",
    )?;
    let mut taken = c.prepare_cached("INSERT OR REPLACE INTO inbox (name, url) VALUES (?1, ?2)")?;
    let mut added = 0;
    for (name, h) in new {
        added += ins.execute(params![h.url, h.feed, h.item, now, h.hops.clamp(1, MAX_HOPS)])?;
        taken.execute(params![name, h.url])?;
    }
    Ok(added)
}

fn unix_now() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs() as i64).unwrap_or(0)
}

impl Crawl {
    fn policy(&self) -> PollPolicy {
        PollPolicy {
            default: Duration::from_secs(self.config.interval_secs),
            min: Duration::from_secs(self.config.min_interval_secs),
            max: Duration::from_secs(self.config.max_interval_secs),
        }
    }

    /// Loads every feed's schedule from the state database.
    fn slots(&self, conn: &Connection) -> Result<Vec<FeedSlot>, PipelineError> {
        let e = db_err(&self.db_path);
        let now_unix = unix_now();
        let now = Instant::now();
        let mut out = Vec::with_capacity(self.feeds.len());
        let mut st = conn
            .prepare("SELECT next_poll, rate, failures, gone, status, polled_at FROM feeds WHERE url = ?1")
            .map_err(&e)?;
        for url in &self.feeds {
            type Row = (Option<i64>, Option<f64>, u32, u32, String, Option<String>);
            let row: Option<Row> = st
                .query_row(params![url.as_str()], |r| {
                    Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?, r.get(5)?))
                })
                .optional()
                .map_err(&e)?;
            let (next_poll, rate, failures, gone, status, polled_at) =
                row.unwrap_or((None, None, 0, 0, "active".into(), None));
            // A --once run polls every active feed, whatever its schedule says; a parked one
            // is checked again on its schedule (once a --max-interval) in either mode.
            let parked = status == "parked";
            let wait =
                if self.config.once && !parked { 0 } else { next_poll.map(|t| (t - now_unix).max(0)).unwrap_or(0) };
            let last_poll = polled_at
                .and_then(|t| chrono::NaiveDateTime::parse_from_str(&t, "%Y-%m-%d %H:%M:%S").ok())
                .map(|t| t.and_utc().timestamp());
            out.push(FeedSlot {
                host: crate::sources::frontier::host_key(url),
                url: url.clone(),
                next_poll: now + Duration::from_secs(wait as u64),
                queued: false,
                parked,
                polled_this_run: false,
                last_poll,
                health: FeedHealth { rate, failures, gone },
            });
        }
        Ok(out)
    }

    /// The crawl loop: queue due feeds and pending articles, start what the frontier allows,
    /// and act on each finished fetch, until Ctrl-C or (with `--once`) every feed is polled
    /// and every article settled.
    async fn run(self, tx: &mut ItemSender, progress: &dyn Progress) -> Result<(), PipelineError> {
        let this = Arc::new(self);
        // Its writes (polls, starts, attempts) need no fsync of their own: see `open_light`.
        let conn = open_light(&this.db_path)?;
        let e = db_err(&this.db_path);
        conn.execute("DELETE FROM meta WHERE key = 'once_finished'", []).map_err(&e)?;
        let slots = this.slots(&conn)?;
        for s in slots.iter().filter(|s| s.parked) {
            tracing::warn!(
                "{}: parked (gone: 404/410 {} polls in a row); asked again once every {} s until it answers",
                s.url,
                GONE_AFTER,
                this.config.max_interval_secs
            );
        }
        let limits =
            FrontierLimits { max_connections: this.config.max_connections, per_host: this.config.per_host_connections };
        let mut st = LoopState {
            slots,
            frontier: Frontier::new(limits),
            queued: HashSet::new(),
            resting: HashMap::new(),
            claims: HashSet::new(),
            in_flight: HashSet::new(),
            suspects: Default::default(),
            alone: None,
            holding: false,
            tasks: tokio::task::JoinSet::new(),
            refresh: true,
        };
        this.forget(&conn)?;
        this.take_inbox(&conn, &mut st)?;
        let result = this.crawl(&conn, &mut st, tx, progress).await;
        // However the crawl ended (done, Ctrl-C or SIGTERM, the engine stopped, an error), the
        // fetches still in flight are let go, and their starts taken back: the run did not die
        // on them, and three such ends must not give them up as articles that crash the
        // process. A stop no longer waits for them either: a fetch with its retries can take
        // minutes, longer than Kubernetes or Slurm waits between SIGTERM and SIGKILL.
        st.tasks.abort_all();
        while st.tasks.join_next().await.is_some() {}
        if let Err(err) = this.take_back_starts(&conn, &st.in_flight) {
            tracing::warn!("the fetches in flight stay counted as started: {err}");
        }
        result
    }

    /// Takes back the starts of fetches let go unfinished (see [`Self::run`]).
    fn take_back_starts(&self, conn: &Connection, urls: &HashSet<String>) -> Result<(), PipelineError> {
        if urls.is_empty() {
            return Ok(());
        }
        immediate(conn, &self.db_path, |c| {
            let mut st = c.prepare_cached("UPDATE articles SET started = max(settled, started - 1) WHERE url = ?1")?;
            urls.iter().try_for_each(|u| st.execute(params![u]).map(drop))
        })
    }

    /// The loop of [`Self::run`].
    async fn crawl(
        self: &Arc<Self>,
        conn: &Connection,
        st: &mut LoopState,
        tx: &mut ItemSender,
        progress: &dyn Progress,
    ) -> Result<(), PipelineError> {
        let e = db_err(&self.db_path);
        let mut stop = stop_on_ctrl_c();
        let mut last_report = Instant::now();
        let mut last_forget = Instant::now();
        let mut last_inbox = Instant::now();
        loop {
            let now = Instant::now();
            if now.duration_since(last_forget) >= Duration::from_secs(86_400) {
                last_forget = now;
                self.forget(conn)?;
            }
            if !self.config.once && now.duration_since(last_inbox) >= INBOX_EVERY {
                self.take_inbox(conn, st)?;
                // From the end of the look: a slow look must not start the next at once.
                last_inbox = Instant::now();
            }
            if st.refresh && !self.queue_pending(conn, st, now, tx)? {
                return Ok(());
            }
            let alone = self.try_suspects(conn, st, now)?;
            if !alone {
                st.queue_due_feeds(self.config.once, now);
            }
            self.start_ready(conn, st, now)?;
            if last_report.elapsed() >= REPORT_EVERY {
                last_report = Instant::now();
                let c = st.frontier.counts(Instant::now());
                let line = format!(
                    "hosts ready {} / waiting {} / in flight {}; queued {}",
                    c.hosts_ready, c.hosts_waiting, c.hosts_in_flight, c.pending
                );
                tracing::debug!("frontier: {line}");
                progress.message(&line);
                if let Some(m) = &self.metrics {
                    m.set_gauge("hosts{state=\"ready\"}", c.hosts_ready as f64);
                    m.set_gauge("hosts{state=\"waiting\"}", c.hosts_waiting as f64);
                    m.set_gauge("hosts{state=\"in_flight\"}", c.hosts_in_flight as f64);
                    m.set_gauge("queue_length", c.pending as f64);
                    m.set_gauge("fetches_in_flight", st.tasks.len() as f64);
                    let parked = st.slots.iter().filter(|s| s.parked).count();
                    let polled = st.slots.iter().filter(|s| !s.parked && s.polled_this_run).count();
                    m.set_gauge("feeds{status=\"parked\"}", parked as f64);
                    m.set_gauge("feeds{status=\"polled\"}", polled as f64);
                    m.set_gauge("feeds{status=\"not_polled_yet\"}", (st.slots.len() - parked - polled) as f64);
                }
            }
            // A parked feed whose next check is not due is done for this round.
            let all_polled = st.slots.iter().all(|s| s.polled_this_run || s.parked && s.next_poll > now);
            if st.tasks.is_empty() && self.config.once && all_polled && st.frontier.is_idle() {
                // Shards of a job array run side by side: one may have handed pages over
                // during this round, and they are this round's too, or a one-off run would
                // leave them waiting for a round that never comes. The round ends when a look
                // at the inbox finds nothing new.
                if self.take_inbox(conn, st)? {
                    continue;
                }
                // `pipeline status` tells a finished --once round from one in progress.
                conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('once_finished', datetime('now'))", [])
                    .map_err(&e)?;
                return Ok(());
            }
            let mut wake = st.wake(self.config.once || alone);
            if alone {
                // Until the suspect settles (its record extracted): asked of the database.
                wake = wake.min(Instant::now() + Duration::from_millis(50));
            }
            if self.metrics.is_some() {
                // The gauges stay current while the crawl waits for its next poll.
                wake = wake.min(last_report + REPORT_EVERY);
            }
            if self.inboxes.is_some() && !self.config.once {
                wake = wake.min(last_inbox + INBOX_EVERY);
            }
            tokio::select! {
                joined = st.tasks.join_next(), if !st.tasks.is_empty() => {
                    let Some(Ok((host, done))) = joined else { continue };
                    if !self.finished(conn, st, host, done, tx)? {
                        return Ok(());
                    }
                }
                _ = tokio::time::sleep_until(wake.into()) => {}
                _ = stop.changed() => return Ok(()),
            }
        }
    }

    /// Queues the pending articles of the state database that are not queued yet (at start,
    /// after a poll found new ones, after a rest). `false`: the engine has stopped.
    fn queue_pending(
        &self,
        conn: &Connection,
        st: &mut LoopState,
        now: Instant,
        tx: &mut ItemSender,
    ) -> Result<bool, PipelineError> {
        let e = db_err(&self.db_path);
        st.refresh = false;
        st.resting.retain(|_, t| *t > now);
        let mut q = conn
            .prepare_cached(
                "SELECT url, feed, item, attempts, started - settled, handed FROM articles WHERE status = 'pending'
                 ORDER BY id",
            )
            .map_err(&e)?;
        let rows = q
            .query_map([], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, Option<String>>(2)?,
                    r.get::<_, u32>(3)?,
                    r.get::<_, i64>(4)?,
                    r.get::<_, u32>(5)?,
                ))
            })
            .map_err(&e)?;
        let rows: Vec<_> = rows.collect::<Result<_, _>>().map_err(&e)?;
        drop(q);
        // While suspects are tried alone, the other articles wait: not queued now, they are
        // queued by the refresh that follows the last suspect.
        let new = |url: &String| !st.resting.contains_key(url) && !st.queued.contains(url);
        let suspect = |a: u32, c: i64| c > 0 && c < i64::from(MAX_CRASHES) && a < MAX_ATTEMPTS;
        st.holding = st.holding || rows.iter().any(|(url, _, _, a, c, _)| suspect(*a, *c) && new(url));
        // `queued` holds what is queued, in flight, or fetched and not yet committed: all still
        // pending here. What is no longer pending (its part committed) leaves it, so it stays
        // as small as the pending set instead of growing with every article since the start of
        // a continuous run.
        let mut pending_now = HashSet::new();
        for (url, feed, item, attempts, crashes, handed) in rows {
            pending_now.insert(url.clone());
            if st.resting.contains_key(&url) || st.queued.contains(&url) {
                continue;
            }
            // Out of tries before its last failure's record was committed (the run was
            // killed), or the processes it was in flight in died: given up now, and the part
            // that commits this record marks it failed.
            let given_up = if attempts >= MAX_ATTEMPTS {
                Some(("given_up", format!("{url}: given up after {attempts} failed attempts")))
            } else if crashes >= i64::from(MAX_CRASHES) {
                let message = format!(
                    "{url}: abandoned: {crashes} runs ended (killed or crashed) while it was being fetched or \
                     extracted; it is not tried again, in case it is what brings the process down"
                );
                Some(("abandoned", message))
            } else {
                None
            };
            if given_up.is_none() && st.holding && !suspect(attempts, crashes) {
                continue;
            }
            let Ok(parsed) = Url::parse(&url) else { continue };
            let host = crate::sources::frontier::host_key(&parsed);
            st.queued.insert(url.clone());
            if let Some((reason, message)) = given_up {
                tracing::warn!("{message}");
                let event = SourceEvent::Failed { reason, message };
                let tally = host_tally(&host, &event, None);
                if !tx.send(Origin::UrlRetry(url, tally), Some(event)) {
                    return Ok(false);
                }
                continue;
            }
            // Refused without asking the network (a private address, a bad scheme): settled
            // here, not queued for a turn on its host.
            if let Err(err) = self.fetcher.precheck(&parsed, Trust::Feed) {
                let event = SourceEvent::Failed { reason: err.reason(), message: err.to_string() };
                let tally = host_tally(&host, &event, None);
                if !tx.send(Origin::Url(url, tally), Some(event)) {
                    return Ok(false);
                }
                continue;
            }
            let last_try = attempts + 1 >= MAX_ATTEMPTS;
            let work = Work::Article { url, feed, item, handed, last_try };
            if suspect(attempts, crashes) {
                st.suspects.push_back((host, work));
            } else {
                st.frontier.push(&host, work, now);
            }
        }
        st.queued.retain(|u| pending_now.contains(u));
        Ok(true)
    }

    /// Tries the suspects one at a time (see [`LoopState::suspects`]); true while one is
    /// tried or waits its turn, when nothing else may start.
    fn try_suspects(&self, conn: &Connection, st: &mut LoopState, now: Instant) -> Result<bool, PipelineError> {
        if let Some(url) = &st.alone {
            // Settled (its outcome counted or its record extracted), or no longer pending.
            let open: Option<i64> = conn
                .query_row(
                    "SELECT started - settled FROM articles WHERE url = ?1 AND status = 'pending'",
                    params![url],
                    |r| r.get(0),
                )
                .optional()
                .map_err(db_err(&self.db_path))?;
            if st.in_flight.contains(url) || (open.is_some_and(|n| n > 0) && st.queued.contains(url)) {
                return Ok(true);
            }
            st.alone = None;
        }
        if st.suspects.is_empty() {
            if st.holding {
                // The last suspect settled: the articles held back are queued now.
                st.holding = false;
                st.refresh = true;
                return Ok(true);
            }
            return Ok(false);
        }
        // Alone: once what is in flight has finished.
        if st.tasks.is_empty() {
            let (host, work) = st.suspects.pop_front().expect("not empty");
            if let Work::Article { url, .. } = &work {
                tracing::warn!("{url}: a run ended while it was in flight; tried alone");
                st.alone = Some(url.clone());
            }
            st.frontier.push(&host, work, now);
        }
        Ok(true)
    }

    /// Starts whatever may start: ready hosts, free connections.
    fn start_ready(self: &Arc<Self>, conn: &Connection, st: &mut LoopState, now: Instant) -> Result<(), PipelineError> {
        let mut ready = Vec::new();
        while let Some(next) = st.frontier.pop(now) {
            if let (_, Work::Article { url, .. }) = &next {
                st.in_flight.insert(url.clone());
            }
            ready.push(next);
        }
        // Every article's start is on disk before its request goes out (one transaction for
        // all that start now): a run that dies during the fetch or the extraction is then
        // known to have died on it (see the module's introduction).
        if ready.iter().any(|(_, w)| matches!(w, Work::Article { .. })) {
            immediate(conn, &self.db_path, |c| {
                let mut st = c.prepare_cached("UPDATE articles SET started = started + 1 WHERE url = ?1")?;
                for (_, w) in &ready {
                    if let Work::Article { url, .. } = w {
                        st.execute(params![url])?;
                    }
                }
                Ok(())
            })?;
        }
        for (host, work) in ready {
            let this = self.clone();
            // Read on the loop's connection: a task has none of its own.
            let validators = match &work {
                Work::Poll(n) => validators(conn, &this.feeds[*n]).map_err(db_err(&self.db_path))?,
                Work::Article { .. } => None,
            };
            // What to report if the task panics (a bug): the host's turn must end and the unit
            // must get an outcome, or `--once` would wait for it for ever.
            let unit = match &work {
                Work::Poll(n) => Err(*n),
                Work::Article { url, .. } => Ok(url.clone()),
            };
            let task = async move {
                match work {
                    Work::Poll(n) => {
                        let feed = this.feeds[n].clone();
                        let v = validators.as_ref().map(|(a, b)| (a.as_str(), b.as_str()));
                        let r = this.fetcher.fetch(&feed, Trust::User, v).await;
                        if let Ok(f) = &r {
                            this.archive(f);
                        }
                        Done::Poll(n, r)
                    }
                    Work::Article { url, feed, item, handed, last_try } => {
                        let (event, transient, bytes) = this.article(&url, &feed, item, handed, last_try).await;
                        Done::Article(url, event, transient, bytes)
                    }
                }
            };
            st.tasks.spawn(async move {
                use futures_util::FutureExt;
                let done = std::panic::AssertUnwindSafe(task).catch_unwind().await.unwrap_or_else(|p| {
                    let why = panic_message(p.as_ref());
                    match unit {
                        Err(n) => Done::Poll(n, Err(FetchError::Internal { message: why })),
                        Ok(url) => {
                            let message = format!("{url}: internal error (please report it): {why}");
                            Done::Article(url, SourceEvent::Failed { reason: "internal_error", message }, false, None)
                        }
                    }
                });
                (host, done)
            });
        }
        Ok(())
    }

    /// Acts on a finished poll or fetch: ends the host's turn, records a poll, sends an
    /// article's outcome to the engine. `false`: the engine has stopped.
    fn finished(
        &self,
        conn: &Connection,
        st: &mut LoopState,
        host: String,
        done: Done,
        tx: &mut ItemSender,
    ) -> Result<bool, PipelineError> {
        match done {
            Done::Poll(n, result) => {
                let ready = self.ready_at(&self.feeds[n]);
                st.frontier.done(&host, ready);
                let slot = &mut st.slots[n];
                slot.queued = false;
                slot.polled_this_run = true;
                let (new_items, failed) = self.record_poll(conn, slot, result)?;
                if new_items > 0 {
                    st.refresh = true;
                }
                if let Some((reason, message)) = failed {
                    return Ok(tx.send(Origin::Other, Some(SourceEvent::Failed { reason, message })));
                }
                Ok(true)
            }
            Done::Article(url, mut event, transient, bytes) => {
                st.in_flight.remove(&url);
                let parsed = Url::parse(&url).ok();
                let ready = parsed.as_ref().map(|u| self.ready_at(u)).unwrap_or_else(Instant::now);
                st.frontier.done(&host, ready);
                match &event {
                    SourceEvent::Page(page) => {
                        if let Some(owner) = self.claim_page(conn, &url, &page.final_url, &mut st.claims)? {
                            tracing::info!(
                                "{url}: leads to {}, the page of {owner}: not written twice",
                                page.final_url
                            );
                            event = SourceEvent::Skipped { reason: "same_page" };
                        }
                    }
                    // No page this time: a claim an earlier, unfinished try made is let go.
                    _ => self.release_claims(conn, &url, &mut st.claims)?,
                }
                let tally = host_tally(&host, &event, bytes);
                let origin = if transient {
                    // Pending still: tried again after a rest (in --once mode, by the next
                    // run), its attempt counted now. In --once mode it stays in `queued`, so
                    // this run does not take it again; in a continuous run it rests, at most
                    // `MAX_ATTEMPTS` tries in all (the audit of session 45 saw a URL answering
                    // 503 tried for as long as no part committed).
                    let attempts = self.count_attempt(conn, &url)?;
                    if !self.config.once {
                        // Its last allowed attempt: it stays in `queued`, not taken again;
                        // the part that commits its record marks it failed.
                        if attempts < MAX_ATTEMPTS {
                            st.queued.remove(&url);
                            let rest = Duration::from_secs(self.config.min_interval_secs);
                            st.resting.insert(url.clone(), Instant::now() + rest);
                        }
                    }
                    Origin::UrlRetry(url, tally)
                } else {
                    // Marked done when its part commits; it stays in `queued` so that it is
                    // not fetched again before that.
                    Origin::Url(url, tally)
                };
                // Blocking send: the engine's bounded channel is the backpressure.
                Ok(tx.send(origin, Some(event)))
            }
        }
    }

    /// Takes in the pages other shards handed over ([`super::handoff`]) as pending articles
    /// of this shard; one it already has (listed by its own feeds, or taken in before) is not
    /// added again, and an entry taken in is not read again. An entry that cannot be read, or
    /// that names another shard's host, is left for a later look, named in the log. `true`:
    /// it added (or changed) pending articles.
    fn take_inbox(&self, conn: &Connection, st: &mut LoopState) -> Result<bool, PipelineError> {
        let (Some(me), Some(inboxes)) = (self.shard, &self.inboxes) else { return Ok(false) };
        let e = db_err(&self.db_path);
        let names = match inboxes.names(me) {
            Ok(names) => names,
            Err(err) => {
                tracing::warn!("the pages other shards handed over wait for the next look: {err}");
                return Ok(false);
            }
        };
        if let Some(m) = &self.metrics {
            // Taken in or not: every entry is a page handed over and not yet written.
            m.set_gauge("handed_waiting", names.len() as f64);
        }
        let mut new = Vec::new();
        {
            let mut taken = conn.prepare_cached("SELECT 1 FROM inbox WHERE name = ?1").map_err(&e)?;
            for name in names {
                if taken.exists(params![name]).map_err(&e)? {
                    continue;
                }
                match inboxes.read(me, &name) {
                    Ok(Some(h)) => {
                        let host = Url::parse(&h.url).ok().and_then(|u| u.host_str().map(str::to_owned));
                        if host.is_some_and(|h| me.owns(&h)) {
                            new.push((name, h));
                        } else {
                            tracing::warn!("{}: handed over to this shard, but not on one of its hosts", h.url);
                        }
                    }
                    Ok(None) => {}
                    Err(err) => tracing::warn!("a page handed over waits for the next look: {err}"),
                }
            }
        }
        if new.is_empty() {
            return Ok(false);
        }
        let now = unix_now();
        let added = immediate(conn, &self.db_path, |c| take_in(c, &new, now))?;
        if added > 0 {
            tracing::info!("{added} pages handed over by other shards");
            st.refresh = true;
        }
        Ok(added > 0)
    }

    /// Claims the page at `final_url` (where the fetch of `url` ended, after redirects) for
    /// `url`; returns the article whose record holds it, if another. Two links of a feed (a
    /// tracking redirect and the plain link, or two feeds' redirectors) that lead to one page
    /// are one record: the first fetched is written, the others are skipped as `same_page`.
    ///
    /// A claim counts only once it is sure to be written: its record committed (`written`,
    /// set with the part), or made in this process (`claims`), whose engine commits the
    /// owner's record before the skip of any later article. A claim a run that died left
    /// (its owner pending again, and maybe failing now) is taken over, or the page would
    /// never be written.
    fn claim_page(
        &self,
        conn: &Connection,
        url: &str,
        final_url: &str,
        claims: &mut HashSet<String>,
    ) -> Result<Option<String>, PipelineError> {
        let here = claims.contains(final_url);
        let other = immediate(conn, &self.db_path, |c| {
            c.prepare_cached("INSERT OR IGNORE INTO pages (final_url, url) VALUES (?1, ?2)")?
                .execute(params![final_url, url])?;
            let (owner, written): (String, bool) = c
                .prepare_cached("SELECT url, written FROM pages WHERE final_url = ?1")?
                .query_row(params![final_url], |r| Ok((r.get(0)?, r.get(1)?)))?;
            if owner == url {
                return Ok(None);
            }
            if written || here {
                return Ok(Some(owner));
            }
            c.prepare_cached("UPDATE pages SET url = ?2 WHERE final_url = ?1")?.execute(params![final_url, url])?;
            Ok(None)
        })?;
        if other.is_none() {
            claims.insert(final_url.to_string());
        }
        Ok(other)
    }

    /// Lets go the claims of `url` whose record was not written (see [`Self::claim_page`]).
    fn release_claims(&self, conn: &Connection, url: &str, claims: &mut HashSet<String>) -> Result<(), PipelineError> {
        let gone: Vec<String> = immediate(conn, &self.db_path, |c| {
            c.prepare_cached("DELETE FROM pages WHERE url = ?1 AND written = 0 RETURNING final_url")?
                .query_map(params![url], |r| r.get(0))?
                .collect()
        })?;
        for f in gone {
            claims.remove(&f);
        }
        Ok(())
    }

    /// Counts a transient failure of an article (it settles the start) and returns its
    /// attempts so far.
    fn count_attempt(&self, conn: &Connection, url: &str) -> Result<u32, PipelineError> {
        let n = immediate(conn, &self.db_path, |c| {
            c.query_row(
                "UPDATE articles SET attempts = attempts + 1, settled = started WHERE url = ?1 RETURNING attempts",
                params![url],
                |r| r.get(0),
            )
            .optional()
        })?;
        Ok(n.unwrap_or(MAX_ATTEMPTS))
    }

    fn forget(&self, conn: &Connection) -> Result<(), PipelineError> {
        let n = forget(conn, &self.feeds, self.config.forget_after_days, unix_now()).map_err(db_err(&self.db_path))?;
        if n > 0 {
            tracing::info!("forgot {n} articles no feed has listed for {} days", self.config.forget_after_days);
        }
        Ok(())
    }

    /// When the host of `url` may be asked again.
    fn ready_at(&self, url: &Url) -> Instant {
        self.fetcher.ready_at(url).unwrap_or_else(|| Instant::now() + self.fetcher.delay(url))
    }

    /// Stores a poll's outcome and the feed's next poll; returns the number of new articles
    /// and, for a failed poll, its reason and message.
    fn record_poll(
        &self,
        conn: &Connection,
        slot: &mut FeedSlot,
        result: Result<Fetched, crate::sources::fetch::FetchError>,
    ) -> Result<(u64, Option<Failure>), PipelineError> {
        let e = db_err(&self.db_path);
        let now_unix = unix_now();
        let feed = slot.url.clone();
        let elapsed = slot.last_poll.map(|t| Duration::from_secs((now_unix - t).max(1) as u64));
        let status = result.as_ref().ok().map(|f| f.status);
        // One transaction for the whole poll: a feed of 100,000 items is one commit (one
        // fsync), not one per item.
        // Immediate (the write lock taken at BEGIN): a deferred transaction that reads first and
        // writes later (a 304's `SELECT EXISTS`, then its insert) fails at once with
        // SQLITE_BUSY_SNAPSHOT when the sink commits a part in between, whatever the busy
        // timeout, and that error ended a continuous crawl. Waiting at BEGIN honours the timeout.
        let tx = rusqlite::Transaction::new_unchecked(conn, rusqlite::TransactionBehavior::Immediate).map_err(&e)?;
        let (outcome, new_items, failed, validators) = match poll_result(&feed, result) {
            Ok(Some(parsed)) => {
                let mut new = 0;
                let mut ins = conn
                    .prepare_cached(
                        "INSERT OR IGNORE INTO articles (url, feed, first_seen, last_seen, item) VALUES (?1, ?2, ?3, ?3, ?4)",
                    )
                    .map_err(&e)?;
                let mut seen = conn.prepare_cached("UPDATE articles SET last_seen = ?2 WHERE url = ?1").map_err(&e)?;
                let mut known = conn.prepare_cached("SELECT 1 FROM articles WHERE url = ?1").map_err(&e)?;
                conn.execute("DELETE FROM listings WHERE feed = ?1", params![feed.as_str()]).map_err(&e)?;
                let mut listed =
                    conn.prepare_cached("INSERT OR IGNORE INTO listings (feed, url) VALUES (?1, ?2)").map_err(&e)?;
                for (i, l) in parsed.feed.links.iter().enumerate() {
                    if self.shard.is_some_and(|s| !s.owns(l.host_str().unwrap_or(""))) {
                        continue; // another shard's host
                    }
                    // An article a database of an earlier version holds under its former
                    // spelling is that article, not a new one.
                    let former = crate::sources::feeds::former_spelling(l);
                    if let Some(f) = former
                        && known.exists(params![f.as_str()]).map_err(&e)?
                    {
                        seen.execute(params![f.as_str(), now_unix]).map_err(&e)?;
                        listed.execute(params![feed.as_str(), f.as_str()]).map_err(&e)?;
                        continue;
                    }
                    let item = parsed.feed.items.get(i).and_then(|it| serde_json::to_string(it).ok());
                    let n = ins.execute(params![l.as_str(), feed.as_str(), now_unix, item]).map_err(&e)?;
                    if n == 0 {
                        seen.execute(params![l.as_str(), now_unix]).map_err(&e)?;
                    }
                    listed.execute(params![feed.as_str(), l.as_str()]).map_err(&e)?;
                    new += n as u64;
                }
                let hints = PollHints {
                    ttl: parsed.feed.ttl_secs.map(Duration::from_secs),
                    update_period: parsed.feed.update_period_secs.map(Duration::from_secs),
                    max_age: parsed.max_age,
                };
                // The first poll's items are the feed's backlog, not its rate.
                let elapsed = if slot.last_poll.is_some() { elapsed } else { None };
                (
                    PollResult::Ok { new_items: new, elapsed, hints },
                    new,
                    None,
                    Some((parsed.etag, parsed.last_modified)),
                )
            }
            Ok(None) => {
                // Not modified. What the feed's last full answer listed is in `listings`, which
                // `forget` never prunes. A database from before `listings` has none for the
                // feed until its next full answer: the articles it first listed count as seen.
                let listed: bool = conn
                    .query_row("SELECT EXISTS (SELECT 1 FROM listings WHERE feed = ?1)", params![feed.as_str()], |r| {
                        r.get(0)
                    })
                    .map_err(&e)?;
                if !listed {
                    conn.execute(
                        "UPDATE articles SET last_seen = ?2 WHERE feed = ?1",
                        params![feed.as_str(), now_unix],
                    )
                    .map_err(&e)?;
                }
                let hints = PollHints::default();
                (PollResult::Ok { new_items: 0, elapsed, hints }, 0, None, None)
            }
            Err(failure) => {
                let gone = matches!(status, Some(404 | 410));
                (if gone { PollResult::Gone } else { PollResult::Failed }, 0, Some(failure), None)
            }
        };
        // A parked feed comes back only when it answers (200 or 304): a 404 or any other
        // failure leaves it parked, its health as it was, until its next check.
        let next = if slot.parked && !matches!(outcome, PollResult::Ok { .. }) {
            None
        } else {
            next_poll(&self.policy(), &mut slot.health, outcome)
        };
        slot.parked = next.is_none();
        let interval = next.unwrap_or(self.policy().max);
        slot.next_poll = Instant::now() + interval;
        slot.last_poll = Some(now_unix);
        if slot.parked {
            tracing::warn!(
                "{feed}: parked: it answered 404/410 {GONE_AFTER} polls in a row; asked again once every {} s",
                self.config.max_interval_secs
            );
        }
        conn.execute(
            "INSERT INTO feeds (url, polled_at, next_poll, interval_secs, rate, failures, gone, status, polls, items, last_error)
             VALUES (?1, datetime('now'), ?2, ?3, ?4, ?5, ?6, ?7, 1, ?8, ?9)
             ON CONFLICT(url) DO UPDATE SET polled_at = excluded.polled_at, next_poll = excluded.next_poll,
                 interval_secs = excluded.interval_secs, rate = excluded.rate, failures = excluded.failures,
                 gone = excluded.gone, status = excluded.status, polls = polls + 1, items = items + excluded.items,
                 last_error = excluded.last_error",
            params![
                feed.as_str(),
                now_unix + interval.as_secs() as i64,
                interval.as_secs() as i64,
                slot.health.rate,
                slot.health.failures,
                slot.health.gone,
                if slot.parked { "parked" } else { "active" },
                new_items as i64,
                failed.as_ref().map(|(_, m)| m.clone()),
            ],
        )
        .map_err(&e)?;
        if let Some((etag, modified)) = validators {
            conn.execute(
                "UPDATE feeds SET etag = ?2, last_modified = ?3 WHERE url = ?1",
                params![feed.as_str(), etag, modified],
            )
            .map_err(&e)?;
        }
        tx.commit().map_err(&e)?;
        Ok((new_items, failed))
    }

    fn archive(&self, f: &Fetched) {
        if let Some(w) = &self.warc {
            let response = f.raw_response();
            let ex = Exchange {
                url: &f.final_url,
                date: &f.fetched_at,
                request: &f.request,
                response: &response,
                ip: f.ip.as_deref(),
            };
            let mut w = w.lock().expect("warc writer lock");
            if let Err(err) = w.write_exchange(&ex).and_then(|_| w.flush()) {
                tracing::error!("{}: cannot write WARC record: {err}", w.path().display());
            }
        }
    }

    /// Fetches one article and turns it into a source event; true when it failed for a
    /// reason that may pass, so that it is tried again; the bytes received, if any.
    async fn article(
        &self,
        url: &str,
        feed: &str,
        item_json: Option<String>,
        handed: u32,
        last_try: bool,
    ) -> (SourceEvent, bool, Option<u64>) {
        let Ok(parsed) = Url::parse(url) else {
            return (SourceEvent::Failed { reason: "bad_url", message: format!("{url}: not a URL") }, false, None);
        };
        // A redirect to another shard's host is not followed: that shard fetches the page
        // ([`super::handoff`]), so it is downloaded once. Not for an article handed over
        // `MAX_HOPS` times: it is written here, wherever its redirects end.
        let handing = match (self.shard, &self.inboxes) {
            (Some(me), Some(inboxes)) if handed < MAX_HOPS => Some((me, inboxes)),
            _ => None,
        };
        let foreign = |next: &Url| handing.is_some_and(|(me, _)| me.owner(next.host_str().unwrap_or("")) != me);
        let mut f = self.fetcher.fetch_until(&parsed, Trust::Feed, None, &foreign).await;
        // Stopped at a redirect (the statuses `exchange` follows) into another shard's host.
        let stopped = f.as_ref().ok().filter(|f| matches!(f.status, 301 | 302 | 303 | 307 | 308)).and_then(|f| {
            let next = Url::parse(&f.final_url).ok()?.join(f.header("location")?.trim()).ok()?;
            foreign(&next).then_some((next, f.body.len() as u64))
        });
        if let (Some((next, bytes)), Some((me, inboxes))) = (stopped, handing) {
            let owner = me.owner(next.host_str().unwrap_or(""));
            let h = Handoff {
                url: next.to_string(),
                feed: feed.to_string(),
                via: url.to_string(),
                item: item_json.clone(),
                hops: handed + 1,
            };
            let inboxes = inboxes.clone();
            let posted = tokio::task::spawn_blocking(move || inboxes.post(owner, &h))
                .await
                .unwrap_or_else(|join| Err(PipelineError::Source(format!("the post ended early: {join}"))));
            match posted {
                Ok(()) => {
                    tracing::info!("{url}: redirects to {next}, a page of shard {}'s host: handed over to it", owner.k);
                    // The redirect's bytes count for the article's host (its first).
                    return (SourceEvent::Skipped { reason: "other_shard" }, false, Some(bytes));
                }
                // Its last try: the page is fetched and written here rather than lost (that
                // shard may write it too).
                Err(err) if last_try => {
                    tracing::warn!("{url}: cannot hand {next} over to its shard ({err}); written here instead");
                    f = self.fetcher.fetch(&parsed, Trust::Feed, None).await;
                }
                // Tried again, as a fetch that failed for a reason that may pass.
                Err(err) => {
                    let message = format!("{url}: cannot hand {next} over to the shard of its host: {err}");
                    return (SourceEvent::Failed { reason: "handoff_failed", message }, true, Some(bytes));
                }
            }
        }
        let item = item_json.and_then(|j| serde_json::from_str(&j).ok());
        let f = match f {
            Ok(f) => f,
            // robots.txt said no: a policy decision, not a failure (counted as skipped).
            Err(err @ crate::sources::fetch::FetchError::Robots { .. }) => {
                tracing::info!("{err}");
                return (SourceEvent::Skipped { reason: err.reason() }, false, None);
            }
            Err(err) => {
                let transient = err.is_transient();
                return (SourceEvent::Failed { reason: err.reason(), message: err.to_string() }, transient, None);
            }
        };
        self.archive(&f);
        let bytes = Some(f.body.len() as u64);
        if !(200..300).contains(&f.status) {
            let transient = f.status >= 500 || f.status == 429;
            let message = format!("{url}: HTTP status {}", f.status);
            return (SourceEvent::Failed { reason: "http_status", message }, transient, bytes);
        }
        (self.page(url, feed, f, item), false, bytes)
    }

    /// A fetched 2xx article as a page event.
    fn page(&self, url: &str, feed: &str, mut f: Fetched, item: Option<crate::metadata::FeedItem>) -> SourceEvent {
        let content_type = f.header("content-type").map(str::to_string);
        let content_language = f.header("content-language").map(str::to_string);
        let last_modified = f.header("last-modified").map(str::to_string);
        // Archived above; the raw body is not needed any more.
        let raw = std::mem::take(&mut f.body);
        let body = match http::decode_content(raw, f.header("content-encoding"), self.config.max_body_bytes as usize) {
            Ok(b) => b,
            Err(err) => return SourceEvent::Failed { reason: "bad_http", message: format!("{url}: {err}") },
        };
        if !http::is_html(content_type.as_deref(), &body) {
            return SourceEvent::Skipped { reason: "not_html" };
        }
        SourceEvent::Page(Box::new(Page {
            id: url_id(url),
            url: url.to_string(),
            final_url: f.final_url,
            source: Source::Feed { feed: feed.to_string() },
            fetched_at: Some(f.fetched_at),
            status: Some(f.status),
            http_charset: content_type.as_deref().and_then(http::charset),
            content_type,
            body,
            content_language,
            last_modified,
            feed_item: item,
        }))
    }
}

/// A successful poll: the feed, its validators and its server's cache lifetime.
struct Polled {
    feed: feeds::ParsedFeed,
    etag: Option<String>,
    last_modified: Option<String>,
    max_age: Option<Duration>,
}

type PollOutcome = Result<Option<Polled>, (&'static str, String)>;

/// The parsed feed of a poll (`None` when not modified), or why the poll failed.
fn poll_result(feed: &Url, result: Result<Fetched, crate::sources::fetch::FetchError>) -> PollOutcome {
    let mut f = result.map_err(|e| ("feed_fetch", e.to_string()))?;
    if f.status == 304 {
        return Ok(None);
    }
    if !(200..300).contains(&f.status) {
        return Err(("feed_fetch", format!("{feed}: HTTP status {}", f.status)));
    }
    let raw = std::mem::take(&mut f.body);
    let body = http::decode_content(raw, f.header("content-encoding"), 16 << 20)
        .map_err(|e| ("feed_parse", format!("{feed}: {e}")))?;
    // Relative links resolve against where the feed was found, after redirects.
    let base = Url::parse(&f.final_url).unwrap_or_else(|_| feed.clone());
    let parsed =
        feeds::parse_feed_full(&body, &base).map_err(|e| ("feed_parse", format!("{feed}: not a feed: {e}")))?;
    Ok(Some(Polled {
        feed: parsed,
        etag: f.header("etag").map(str::to_string),
        last_modified: f.header("last-modified").map(str::to_string),
        max_age: max_age(f.header("cache-control"), f.header("expires")),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A state database whose articles `a0`, `a1`, `a2` are done in parts 0, 1, 2, with the
    /// last part known to be in place, if any.
    fn state(dir: &Path, in_place: Option<u32>) -> Connection {
        let conn = open_state(&dir.join(STATE_FILE)).unwrap();
        for p in 0..3 {
            conn.execute(
                "INSERT INTO articles (url, feed, status, part) VALUES (?1, 'f', 'done', ?2)",
                params![format!("a{p}"), p],
            )
            .unwrap();
        }
        if let Some(p) = in_place {
            conn.execute("INSERT INTO meta (key, value) VALUES (?1, ?2)", params![COMMITTED_PART, p.to_string()])
                .unwrap();
        }
        conn
    }

    fn statuses(conn: &Connection) -> Vec<String> {
        let mut st = conn.prepare("SELECT status FROM articles ORDER BY url").unwrap();
        st.query_map([], |r| r.get(0)).unwrap().collect::<Result<_, _>>().unwrap()
    }

    fn put_part(dir: &Path, p: u32) {
        std::fs::write(dir.join(format!("part-{p:05}.jsonl.zst")), b"").unwrap();
    }

    #[test]
    fn a_feed_left_out_of_the_list_keeps_its_listings_until_it_is_as_old_as_its_articles() {
        let dir = tempfile::tempdir().unwrap();
        let conn = open_state(&dir.path().join(STATE_FILE)).unwrap();
        let day = 86_400;
        let now = 1_000 * day;
        // Feed f listed article a 500 days ago and has answered 304 since (the last a week
        // ago); it is left out of today's list.
        conn.execute(
            "INSERT INTO feeds (url, polled_at) VALUES ('https://f.test/rss', datetime(?1, 'unixepoch'))",
            params![now - 7 * day],
        )
        .unwrap();
        conn.execute(
            "INSERT INTO articles (url, feed, status, first_seen, last_seen) VALUES ('https://f.test/a', 'https://f.test/rss', 'done', ?1, ?1)",
            params![now - 500 * day],
        )
        .unwrap();
        conn.execute("INSERT INTO listings (feed, url) VALUES ('https://f.test/rss', 'https://f.test/a')", []).unwrap();
        let other = [Url::parse("https://g.test/rss").unwrap()];
        assert_eq!(forget(&conn, &other, 365, now).unwrap(), 0, "forgotten the week its feed was left out");
        // A year after its last poll it goes, with its articles.
        assert_eq!(forget(&conn, &other, 365, now + 366 * day).unwrap(), 1);
        let listings: i64 = conn.query_row("SELECT count(*) FROM listings", [], |r| r.get(0)).unwrap();
        assert_eq!(listings, 0);
    }

    #[test]
    fn only_a_part_above_the_last_in_place_is_taken_for_lost() {
        // Part 2 was marked done and the process died before its rename; part 0 was read and
        // deleted by a consumer. Only part 2's article is fetched again, under the name 2.
        let dir = tempfile::tempdir().unwrap();
        let conn = state(dir.path(), Some(1));
        put_part(dir.path(), 1);
        let next = recover_parts(&conn, &dir.path().join(STATE_FILE), dir.path()).unwrap();
        assert_eq!(statuses(&conn), ["done", "done", "pending"]);
        assert_eq!(next, 2);
    }

    #[test]
    fn parts_gone_below_the_last_in_place_stay_done_and_their_names_are_not_given_again() {
        let dir = tempfile::tempdir().unwrap();
        let conn = state(dir.path(), Some(2));
        let next = recover_parts(&conn, &dir.path().join(STATE_FILE), dir.path()).unwrap();
        assert_eq!(statuses(&conn), ["done", "done", "done"]);
        assert_eq!(next, 3);
    }

    #[test]
    fn a_database_from_before_the_mark_suspects_only_its_highest_part() {
        let dir = tempfile::tempdir().unwrap();
        let conn = state(dir.path(), None);
        let next = recover_parts(&conn, &dir.path().join(STATE_FILE), dir.path()).unwrap();
        assert_eq!(statuses(&conn), ["done", "done", "pending"]);
        assert_eq!(next, 2);
    }

    #[test]
    fn a_page_taken_in_again_keeps_its_fewest_hand_offs_and_a_finished_one_stays_finished() {
        let dir = tempfile::tempdir().unwrap();
        let conn = state(dir.path(), None);
        let entry = |name: &str, url: &str, hops: u32| {
            let h = Handoff { url: url.into(), feed: "f".into(), via: "v".into(), item: None, hops };
            (name.to_string(), h)
        };
        let handed = |url: &str| -> (String, u32) {
            conn.query_row("SELECT status, handed FROM articles WHERE url = ?1", params![url], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })
            .unwrap()
        };
        // A new page, reached by its third hand-off; hops above the limit count as the limit.
        assert_eq!(take_in(&conn, &[entry("n1", "p", 3), entry("n2", "q", 99)], 1).unwrap(), 2);
        assert_eq!(handed("p"), ("pending".into(), 3));
        assert_eq!(handed("q"), ("pending".into(), MAX_HOPS));
        // Reached again by a shorter path: it may still hand on. By a path as long (above the
        // limit, counted as the limit) or longer: unchanged.
        assert_eq!(take_in(&conn, &[entry("n3", "p", 1), entry("n4", "q", MAX_HOPS + 1)], 2).unwrap(), 1);
        assert_eq!(take_in(&conn, &[entry("n6", "p", 2)], 2).unwrap(), 0);
        assert_eq!(handed("p"), ("pending".into(), 1));
        assert_eq!(handed("q"), ("pending".into(), MAX_HOPS));
        // A page already written is not made pending again, whatever its path.
        assert_eq!(take_in(&conn, &[entry("n5", "a0", 1)], 3).unwrap(), 0);
        assert_eq!(handed("a0").0, "done");
        // Every entry is noted as taken in, so none is read again.
        let taken: i64 = conn.query_row("SELECT count(*) FROM inbox", [], |r| r.get(0)).unwrap();
        assert_eq!(taken, 6);
    }
}
