//! `pipeline --feeds feeds.txt`: poll feeds, fetch each new article once, extract, write.
//!
//! The async crawl (tokio + reqwest, [`crate::sources::fetch`]) runs on the source thread and
//! hands pages to the extraction threads through the engine's bounded channel, so a slow sink
//! slows fetching. State lives in SQLite (`OUT/state.sqlite`): each feed's ETag and
//! Last-Modified for conditional GETs, and every article URL seen with its status. An article
//! is `pending` until the part holding its record is committed: the sink marks the batch
//! `done` with the part's index just before the part is renamed into place, and on restart a
//! `done` article whose part file does not exist goes back to `pending`. A restart therefore
//! neither fetches a written article again nor loses one. Only permanent outcomes end an
//! article: a fetch that failed for a reason that may pass (timeout, network error, a 5xx or
//! 429 after the fetcher's own retries, robots.txt unavailable) leaves it `pending` with one
//! more attempt counted, and it is tried again on the next poll or run, up to
//! [`MAX_ATTEMPTS`] times; then it is `failed`.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rusqlite::{Connection, OptionalExtension, params};
use url::Url;

use super::config::FeedsConfig;
use super::{Checkpoint, ItemSender, Origin, PipelineError, Progress, RunContext, Stats};
use crate::sink::record::Source;
use crate::sources::fetch::{Fetched, Fetcher, Trust};
use crate::sources::warc_writer::{Exchange, WarcWriter};
use crate::sources::{Page, SourceEvent, feeds, http, url_id};

pub(crate) const STATE_FILE: &str = "state.sqlite";

/// Transient failures after which an article is given up (`status = 'failed'`).
pub const MAX_ATTEMPTS: u32 = 5;

/// Everything a feeds run needs.
pub struct FeedsRun<'a> {
    pub feeds: FeedsConfig,
    pub ctx: RunContext<'a>,
}

fn db_err(path: &Path) -> impl Fn(rusqlite::Error) -> PipelineError + '_ {
    move |e| PipelineError::State { path: path.to_path_buf(), message: e.to_string() }
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
    // Databases written before attempts were counted get the column.
    let has_attempts = conn
        .prepare("SELECT 1 FROM pragma_table_info('articles') WHERE name = 'attempts'")
        .and_then(|mut st| st.exists([]))
        .map_err(&e)?;
    if !has_attempts {
        conn.execute_batch("ALTER TABLE articles ADD COLUMN attempts INTEGER NOT NULL DEFAULT 0;").map_err(&e)?;
    }
    Ok(conn)
}

struct FeedsCheckpoint<'a> {
    conn: Connection,
    path: &'a Path,
    batch: Vec<String>,
    /// Articles whose fetch failed transiently since the last part.
    retry: Vec<String>,
}

impl Checkpoint for FeedsCheckpoint<'_> {
    fn processed(&mut self, origin: &Origin) {
        match origin {
            Origin::Url(u) => self.batch.push(u.clone()),
            Origin::UrlRetry(u) => self.retry.push(u.clone()),
            _ => {}
        }
    }

    fn prepare(&mut self, part: Option<u32>, stats: &Stats) -> Result<(), PipelineError> {
        let e = db_err(self.path);
        let tx = self.conn.transaction().map_err(&e)?;
        {
            let mut st =
                tx.prepare_cached("UPDATE articles SET status = 'done', part = ?2 WHERE url = ?1").map_err(&e)?;
            for u in &self.batch {
                st.execute(params![u, part]).map_err(&e)?;
            }
            let mut st = tx
                .prepare_cached(
                    "UPDATE articles SET attempts = attempts + 1,
                         status = CASE WHEN attempts + 1 >= ?2 THEN 'failed' ELSE 'pending' END
                     WHERE url = ?1 AND status = 'pending'",
                )
                .map_err(&e)?;
            for u in &self.retry {
                st.execute(params![u, MAX_ATTEMPTS]).map_err(&e)?;
            }
        }
        let json = serde_json::to_string(stats).expect("stats serialise");
        tx.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('stats', ?1)", params![json]).map_err(&e)?;
        tx.commit().map_err(&e)?;
        self.batch.clear();
        self.retry.clear();
        Ok(())
    }
}

/// Runs a feeds pipeline; returns the (cumulative) stats, also written to `OUT/stats.json`.
pub fn run(run: &FeedsRun<'_>, progress: &dyn Progress) -> Result<Stats, PipelineError> {
    let ctx = &run.ctx;
    let feed_urls = feeds::read_feed_list(&run.feeds.list).map_err(|e| PipelineError::Source(e.to_string()))?;
    ctx.check_fresh(STATE_FILE)?;
    std::fs::create_dir_all(&ctx.out)
        .map_err(|e| PipelineError::State { path: ctx.out.clone(), message: e.to_string() })?;
    let db_path = ctx.out.join(STATE_FILE);
    let conn = open_state(&db_path)?;
    let e = db_err(&db_path);
    // Articles marked done in a part that never made it to disk go back to pending.
    let mut lost = Vec::new();
    {
        let mut st = conn
            .prepare("SELECT DISTINCT part FROM articles WHERE status = 'done' AND part IS NOT NULL")
            .map_err(&e)?;
        let parts = st.query_map([], |r| r.get::<_, u32>(0)).map_err(&e)?;
        for p in parts {
            let p = p.map_err(&e)?;
            if !ctx.out.join(format!("part-{p:05}.jsonl.zst")).exists() {
                lost.push(p);
            }
        }
    }
    for p in lost {
        conn.execute("UPDATE articles SET status = 'pending', part = NULL WHERE part = ?1", params![p]).map_err(&e)?;
    }
    let stats: Stats = conn
        .query_row("SELECT value FROM meta WHERE key = 'stats'", [], |r| r.get::<_, String>(0))
        .optional()
        .map_err(&e)?
        .and_then(|s| serde_json::from_str(&s).ok())
        .unwrap_or_default();
    let output = ctx.open_output()?;
    let mut checkpoint = FeedsCheckpoint { conn, path: &db_path, batch: Vec::new(), retry: Vec::new() };
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
    let crawl =
        Crawl { fetcher, feeds: feed_urls, db_path: db_path.clone(), config: run.feeds.clone(), warc: warc_out };
    let source = move |tx: &mut ItemSender| -> Result<(), PipelineError> {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .map_err(|e| PipelineError::Source(format!("cannot start the async runtime: {e}")))?;
        rt.block_on(crawl.run(tx))
    };
    ctx.run(source, output, &mut checkpoint, stats, progress)
}

struct Crawl {
    fetcher: Fetcher,
    feeds: Vec<Url>,
    db_path: PathBuf,
    config: FeedsConfig,
    warc: Option<Mutex<WarcWriter>>,
}

/// Articles fetched at once (across hosts; each host still gets one request at a time).
const CONCURRENT_FETCHES: usize = 16;

impl Crawl {
    async fn run(self, tx: &mut ItemSender) -> Result<(), PipelineError> {
        let this = Arc::new(self);
        let conn = open_state(&this.db_path)?;
        let e = db_err(&this.db_path);
        let mut in_flight = std::collections::HashSet::new();
        // Ctrl-C: stop starting fetches, let those in flight finish, then end the run normally
        // (the sink commits what was extracted; `--resume` continues). A second Ctrl-C aborts.
        let (stop_tx, mut stop) = tokio::sync::watch::channel(false);
        tokio::spawn(async move {
            if tokio::signal::ctrl_c().await.is_ok() {
                tracing::warn!("interrupted: finishing the fetches in flight (Ctrl-C again to abort)");
                let _ = stop_tx.send(true);
                if tokio::signal::ctrl_c().await.is_ok() {
                    std::process::exit(130);
                }
            }
        });
        loop {
            let poll_started = Instant::now();
            // Poll every feed (concurrently; per-host politeness still applies).
            let mut polls = tokio::task::JoinSet::new();
            for feed in this.feeds.clone() {
                let validators: Option<(String, String)> = conn
                    .query_row("SELECT etag, last_modified FROM feeds WHERE url = ?1", params![feed.as_str()], |r| {
                        Ok((
                            r.get::<_, Option<String>>(0)?.unwrap_or_default(),
                            r.get::<_, Option<String>>(1)?.unwrap_or_default(),
                        ))
                    })
                    .optional()
                    .map_err(&e)?;
                let this = this.clone();
                polls.spawn(async move {
                    let v = validators.as_ref().map(|(a, b)| (a.as_str(), b.as_str()));
                    let r = this.fetcher.fetch(&feed, Trust::User, v).await;
                    if let Ok(f) = &r {
                        this.archive(f);
                    }
                    (feed, r)
                });
            }
            while let Some(joined) = polls.join_next().await {
                let Ok((feed, result)) = joined else { continue };
                match poll_result(&feed, result) {
                    Ok(Some((links, etag, modified))) => {
                        conn.execute(
                            "INSERT OR REPLACE INTO feeds (url, etag, last_modified, polled_at) VALUES (?1, ?2, ?3, datetime('now'))",
                            params![feed.as_str(), etag, modified],
                        )
                        .map_err(&e)?;
                        let mut st = conn
                            .prepare_cached("INSERT OR IGNORE INTO articles (url, feed) VALUES (?1, ?2)")
                            .map_err(&e)?;
                        for l in &links {
                            st.execute(params![l.as_str(), feed.as_str()]).map_err(&e)?;
                        }
                    }
                    Ok(None) => tracing::debug!("{feed}: not modified"),
                    Err((reason, message)) => {
                        if !tx.send(Origin::Other, Some(SourceEvent::Failed { reason, message })) {
                            return Ok(());
                        }
                    }
                }
            }
            // Fetch every pending article not already on its way.
            let pending: Vec<(String, String)> = {
                let mut st =
                    conn.prepare("SELECT url, feed FROM articles WHERE status = 'pending' ORDER BY id").map_err(&e)?;
                let rows = st.query_map([], |r| Ok((r.get(0)?, r.get(1)?))).map_err(&e)?;
                rows.collect::<Result<_, _>>().map_err(&e)?
            };
            let mut fetches = tokio::task::JoinSet::new();
            let queue: Vec<(String, String)> =
                pending.into_iter().filter(|(u, _)| in_flight.insert(u.clone())).collect();
            let mut queue = queue.into_iter();
            let mut open = true;
            loop {
                if *stop.borrow() {
                    open = false;
                }
                while open && fetches.len() < CONCURRENT_FETCHES {
                    match queue.next() {
                        Some((url, feed)) => {
                            let this = this.clone();
                            fetches.spawn(async move {
                                let event = this.article(&url, &feed).await;
                                (url, event)
                            });
                        }
                        None => open = false,
                    }
                }
                let Some(joined) = fetches.join_next().await else { break };
                let Ok((url, (event, transient))) = joined else { continue };
                let origin = if transient {
                    // Still pending: the next poll may take it again.
                    in_flight.remove(&url);
                    Origin::UrlRetry(url)
                } else {
                    Origin::Url(url)
                };
                // Blocking send: the engine's bounded channel is the backpressure.
                if !tx.send(origin, Some(event)) {
                    return Ok(());
                }
            }
            if this.config.once || *stop.borrow() {
                return Ok(());
            }
            let next = poll_started + Duration::from_secs(this.config.interval_secs);
            tokio::select! {
                _ = tokio::time::sleep_until(next.into()) => {}
                _ = stop.changed() => return Ok(()),
            }
        }
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
    /// reason that may pass, so that it is tried again.
    async fn article(&self, url: &str, feed: &str) -> (SourceEvent, bool) {
        let Ok(parsed) = Url::parse(url) else {
            return (SourceEvent::Failed { reason: "bad_url", message: format!("{url}: not a URL") }, false);
        };
        let f = match self.fetcher.fetch(&parsed, Trust::Feed, None).await {
            Ok(f) => f,
            // robots.txt said no: a policy decision, not a failure (counted as skipped).
            Err(err @ crate::sources::fetch::FetchError::Robots { .. }) => {
                tracing::info!("{err}");
                return (SourceEvent::Skipped { reason: err.reason() }, false);
            }
            Err(err) => {
                let transient = err.is_transient();
                return (SourceEvent::Failed { reason: err.reason(), message: err.to_string() }, transient);
            }
        };
        self.archive(&f);
        if !(200..300).contains(&f.status) {
            let transient = f.status >= 500 || f.status == 429;
            let message = format!("{url}: HTTP status {}", f.status);
            return (SourceEvent::Failed { reason: "http_status", message }, transient);
        }
        (self.page(url, feed, f), false)
    }

    /// A fetched 2xx article as a page event.
    fn page(&self, url: &str, feed: &str, mut f: Fetched) -> SourceEvent {
        let content_type = f.header("content-type").map(str::to_string);
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
        }))
    }
}

type PollOutcome = Result<Option<(Vec<Url>, Option<String>, Option<String>)>, (&'static str, String)>;

/// New links of a polled feed (`None` when not modified), or why the poll failed.
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
    let links = feeds::parse_feed(&body, feed).map_err(|e| ("feed_parse", format!("{feed}: not a feed: {e}")))?;
    Ok(Some((links, f.header("etag").map(str::to_string), f.header("last-modified").map(str::to_string))))
}
