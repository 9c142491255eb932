//! Loopback news hosts for the feeds tests and benchmarks: `n` axum servers on 127.0.0.1,
//! 127.0.0.2, … (distinct hosts to the crawler), each serving robots.txt, feeds
//! (`/feed-K.xml`: `per_feed` articles; `/grow-R.xml`: R new items per 10 s; `/gone.xml`: 410;
//! `/via-J-K.xml`: the articles of host J's `/feed-K.xml` through redirects on this host,
//! `/go/J/K/I` → 302 to host J's `/a/K/I`; `/chain-J-K-F.xml`: host K's `/a/F/I` through
//! a chain of redirects, `/hop/J/K/F/I` → 302 to host J's `/go/K/F/I`) and article pages, logging every request and the most requests in flight at once. A host
//! may be slow: every response waits `slow` first.

#![allow(dead_code)] // each test or bench uses part of it

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::extract::State;
use axum::http::Uri;
use axum::response::Response;

/// Every request: (host index, path, arrival).
pub type Log = Arc<Mutex<Vec<(usize, String, Instant)>>>;

/// Every article link any feed response listed (full URLs).
pub type Listed = Arc<Mutex<std::collections::HashSet<String>>>;

#[derive(Clone)]
struct Host {
    index: usize,
    base: String,
    log: Log,
    listed: Listed,
    /// Articles listed by /feed-N.xml: `per_feed` each.
    per_feed: usize,
    /// For /grow-N.xml: items appear over time, N per second since `start`.
    start: Instant,
    /// Where the /grow feeds' clock stopped ([`Hosts::freeze`]).
    frozen: Arc<Mutex<Option<Duration>>>,
    /// In flight right now, and the most at once.
    busy: Arc<Mutex<(u32, u32)>>,
    /// Wait before every response.
    slow: Duration,
    /// Every host's base URL (for the redirects to other hosts).
    all: Arc<std::sync::OnceLock<Vec<String>>>,
}

pub struct Hosts {
    pub bases: Vec<String>,
    pub log: Log,
    pub listed: Listed,
    pub busy: Vec<Arc<Mutex<(u32, u32)>>>,
    start: Instant,
    frozen: Arc<Mutex<Option<Duration>>>,
    _rt: tokio::runtime::Runtime,
}

impl Hosts {
    /// Stops the /grow feeds growing: a test that kills a run with a poll in flight then
    /// finds its items still listed when the resumed run polls, however long that takes.
    #[allow(dead_code)] // not every test binary freezes
    pub fn freeze(&self) {
        self.frozen.lock().unwrap().get_or_insert(self.start.elapsed());
    }
}

pub fn start(n: usize, per_feed: usize) -> Hosts {
    start_with(n, per_feed, &[])
}

/// `slow`: (host index, wait before each response).
pub fn start_with(n: usize, per_feed: usize, slow: &[(usize, Duration)]) -> Hosts {
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let log: Log = Arc::default();
    let listed: Listed = Arc::default();
    let t0 = Instant::now();
    let frozen: Arc<Mutex<Option<Duration>>> = Arc::default();
    let mut bases = Vec::new();
    let mut busy = Vec::new();
    let all: Arc<std::sync::OnceLock<Vec<String>>> = Arc::default();
    for i in 0..n {
        let addr = format!("127.0.0.{}:0", i + 1);
        let listener = rt.block_on(tokio::net::TcpListener::bind(&addr)).unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let b = Arc::new(Mutex::new((0, 0)));
        let slow = slow.iter().find(|(h, _)| *h == i).map(|(_, d)| *d).unwrap_or_default();
        let host = Host {
            index: i,
            base: base.clone(),
            log: log.clone(),
            listed: listed.clone(),
            per_feed,
            start: t0,
            frozen: frozen.clone(),
            busy: b.clone(),
            slow,
            all: all.clone(),
        };
        let app = axum::Router::new().fallback(handle).with_state(host);
        rt.spawn(async move { axum::serve(listener, app).await.unwrap() });
        bases.push(base);
        busy.push(b);
    }
    all.set(bases.clone()).unwrap();
    Hosts { bases, log, listed, busy, start: t0, frozen, _rt: rt }
}

fn page(title: &str) -> String {
    let para = format!("<p>The {title} report says the harbour council met again to discuss the budget plans.</p>\n");
    format!(
        "<!doctype html><html><head><title>{title}</title></head><body><nav><a href=/>Home</a></nav>\
         <article><h1>{title}</h1>{}</article><footer>Copyright</footer></body></html>",
        para.repeat(6)
    )
}

/// A feed of `links`, each noted in `listed` as the response is made.
fn rss(listed: &Listed, links: impl Iterator<Item = String>) -> Response {
    let links: Vec<String> = links.collect();
    listed.lock().unwrap().extend(links.iter().cloned());
    let items: String = links.iter().map(|l| format!("<item><title>t</title><link>{l}</link></item>")).collect();
    Response::builder()
        .header("content-type", "application/rss+xml")
        .body(Body::from(format!(
            "<?xml version=\"1.0\"?><rss version=\"2.0\"><channel><title>T</title>{items}</channel></rss>"
        )))
        .unwrap()
}

async fn handle(State(h): State<Host>, uri: Uri) -> Response {
    let path = uri.path().to_string();
    h.log.lock().unwrap().push((h.index, path.clone(), Instant::now()));
    {
        let mut b = h.busy.lock().unwrap();
        b.0 += 1;
        b.1 = b.1.max(b.0);
    }
    if !h.slow.is_zero() {
        tokio::time::sleep(h.slow).await;
    }
    let resp = respond(&h, &path).await;
    h.busy.lock().unwrap().0 -= 1;
    resp
}

async fn respond(h: &Host, path: &str) -> Response {
    let base = &h.base;
    if path == "/robots.txt" {
        return Response::new(Body::from("User-agent: *\nAllow: /\n"));
    }
    if path == "/gone.xml" {
        return Response::builder().status(410).body(Body::empty()).unwrap();
    }
    if let Some(feed) = path.strip_prefix("/feed-").and_then(|p| p.strip_suffix(".xml")) {
        return rss(&h.listed, (0..h.per_feed).map(|i| format!("{base}/a/{feed}/{i}")));
    }
    if let Some((j, feed)) = path.strip_prefix("/via-").and_then(|p| p.strip_suffix(".xml")?.split_once('-')) {
        return rss(&h.listed, (0..h.per_feed).map(|i| format!("{base}/go/{j}/{feed}/{i}")));
    }
    if let Some(rest) = path.strip_prefix("/chain-").and_then(|p| p.strip_suffix(".xml")) {
        let (j, rest) = rest.split_once('-').unwrap();
        let (k, feed) = rest.split_once('-').unwrap();
        return rss(&h.listed, (0..h.per_feed).map(|i| format!("{base}/hop/{j}/{k}/{feed}/{i}")));
    }
    if let Some(rest) = path.strip_prefix("/hop/") {
        let (j, rest) = rest.split_once('/').unwrap();
        let to = format!("{}/go/{rest}", h.all.get().unwrap()[j.parse::<usize>().unwrap()]);
        return Response::builder().status(302).header("location", to).body(Body::empty()).unwrap();
    }
    if let Some(rest) = path.strip_prefix("/go/") {
        let (j, rest) = rest.split_once('/').unwrap();
        let to = format!("{}/a/{rest}", h.all.get().unwrap()[j.parse::<usize>().unwrap()]);
        return Response::builder().status(302).header("location", to).body(Body::empty()).unwrap();
    }
    if let Some(rate) = path.strip_prefix("/grow-").and_then(|p| p.strip_suffix(".xml")) {
        // `rate` new items per 10 seconds since the server started; the newest 20 listed.
        let rate: u64 = rate.parse().unwrap();
        let elapsed = h.frozen.lock().unwrap().unwrap_or_else(|| h.start.elapsed());
        let n = elapsed.as_millis() as u64 * rate / 10_000 + 1;
        return rss(&h.listed, (n.saturating_sub(20)..n).rev().map(|i| format!("{base}/g/{rate}/{i}")));
    }
    if path.starts_with("/a/") || path.starts_with("/g/") {
        return Response::builder()
            .header("content-type", "text/html; charset=utf-8")
            .body(Body::from(page(path)))
            .unwrap();
    }
    Response::builder().status(404).body(Body::empty()).unwrap()
}
