//! Feeds runs against an axum server on 127.0.0.1 whose robots.txt first fails (503) and then
//! answers: the articles it held back are fetched on the next run, not lost; and with
//! `--warc-out`, a redirected article's request record is the request to the final URL. A
//! continuous run tries an article that always answers 503 at most `MAX_ATTEMPTS` times, and
//! so do runs killed before their part commits; an article that the process keeps dying on is
//! given up after `MAX_CRASHES` runs.

use std::collections::HashMap;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::extract::State;
use axum::http::{HeaderMap, Uri};
use axum::response::Response;

use article_pipeline::sink::{list_parts, read_part};
use article_pipeline::sources::warc::{WarcLimits, WarcReader};

use crate::common;

type Hits = Arc<Mutex<HashMap<String, u32>>>;

/// Two origins on 127.0.0.1 (two ports: the fetcher keeps robots.txt per origin): the feed's,
/// whose robots.txt always answers, and the articles', whose robots.txt first fails.
struct Server {
    feed_base: String,
    article_base: String,
    hits: Hits,
    _rt: tokio::runtime::Runtime,
}

#[derive(Clone)]
struct Site {
    hits: Hits,
    article_base: String,
    feed_base: String,
    /// How many times this origin's robots.txt answers 503 before it answers 200.
    robots_failures: u32,
    /// A path robots.txt disallows ("" for none).
    disallow: &'static str,
    name: &'static str,
}

fn start(robots_failures: u32) -> Server {
    start_with(robots_failures, "")
}

fn start_with(robots_failures: u32, disallow: &'static str) -> Server {
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
    let feed_l = rt.block_on(tokio::net::TcpListener::bind("127.0.0.1:0")).unwrap();
    let article_l = rt.block_on(tokio::net::TcpListener::bind("127.0.0.1:0")).unwrap();
    let feed_base = format!("http://{}", feed_l.local_addr().unwrap());
    let article_base = format!("http://{}", article_l.local_addr().unwrap());
    let hits: Hits = Arc::default();
    for (listener, name, failures) in [(feed_l, "feed", 0), (article_l, "articles", robots_failures)] {
        let site = Site {
            hits: hits.clone(),
            article_base: article_base.clone(),
            feed_base: feed_base.clone(),
            robots_failures: failures,
            disallow,
            name,
        };
        let app = axum::Router::new().fallback(handle).with_state(site);
        rt.spawn(async move { axum::serve(listener, app).await.unwrap() });
    }
    Server { feed_base, article_base, hits, _rt: rt }
}

fn page(title: &str) -> String {
    let para = format!("<p>The {title} story goes on with many words about the town council and its plans.</p>\n");
    format!(
        "<!doctype html><html><head><title>{title}</title></head><body><nav><a href=/>Home</a></nav>\
         <article><h1>{title}</h1>{}</article><footer>Copyright</footer></body></html>",
        para.repeat(8)
    )
}

async fn handle(State(site): State<Site>, uri: Uri, _h: HeaderMap) -> Response {
    let path = uri.path().to_string();
    let hit = {
        let mut h = site.hits.lock().unwrap();
        let n = h.entry(format!("{}{path}", site.name)).or_default();
        *n += 1;
        *n
    };
    let ok = |ct: &str, body: String| Response::builder().header("content-type", ct).body(Body::from(body)).unwrap();
    let base = &site.article_base;
    // A feed listing these paths of the articles' host, each titled by its path.
    let listing = |paths: &[&str]| {
        let items: String =
            paths.iter().map(|p| format!("<item><title>{p}</title><link>{base}{p}</link></item>")).collect();
        ok(
            "application/rss+xml",
            format!("<?xml version=\"1.0\"?><rss version=\"2.0\"><channel><title>T</title>{items}</channel></rss>"),
        )
    };
    match path.as_str() {
        "/robots.txt" if hit <= site.robots_failures => Response::builder().status(503).body(Body::empty()).unwrap(),
        "/robots.txt" if site.disallow.is_empty() => ok("text/plain", "User-agent: *\nAllow: /\n".into()),
        "/robots.txt" => ok("text/plain", format!("User-agent: *\nDisallow: {}\n", site.disallow)),
        "/feed.xml" => listing(&["/a/1", "/a/2", "/moved"]),
        "/flaky.xml" => ok(
            "application/rss+xml",
            format!(
                "<?xml version=\"1.0\"?><rss version=\"2.0\"><channel><title>T</title>\
                 <item><title>ok</title><link>{base}/a/1</link></item>\
                 <item><title>flaky</title><link>{base}/flaky</link></item></channel></rss>"
            ),
        ),
        "/hang.xml" => ok(
            "application/rss+xml",
            format!(
                "<?xml version=\"1.0\"?><rss version=\"2.0\"><channel><title>T</title>\
                 <item><title>ok</title><link>{base}/a/1</link></item>\
                 <item><title>hangs</title><link>{base}/hang</link></item></channel></rss>"
            ),
        ),
        "/same.xml" => listing(&["/a/1", "/to/1?utm_source=x&amp;ref=feed", "/to/1?ref=other"]),
        "/stale.xml" => listing(&["/once-to/1", "/a/1", "/hang-once"]),
        // A redirector that leads to an article once, then is gone.
        "/once-to/1" if hit == 1 => {
            Response::builder().status(301).header("location", "/a/1").body(Body::empty()).unwrap()
        }
        "/once-to/1" => Response::builder().status(404).body(Body::empty()).unwrap(),
        // Hangs the first time (the run is killed meanwhile), answers after.
        "/hang-once" if hit == 1 => {
            tokio::time::sleep(Duration::from_secs(300)).await;
            Response::builder().status(503).body(Body::empty()).unwrap()
        }
        "/hang-once" => ok("text/html; charset=utf-8", page("/hang-once")),
        // A tracking redirect to an article the feed also lists.
        "/to/1" => Response::builder().status(301).header("location", "/a/1").body(Body::empty()).unwrap(),
        // An article of the feed's host, slow to answer, and one of the articles' host that
        // hangs: both in flight at once.
        "/crashy.xml" => ok(
            "application/rss+xml",
            format!(
                "<?xml version=\"1.0\"?><rss version=\"2.0\"><channel><title>T</title>\
                 <item><title>slow</title><link>{}/slow/1</link></item>\
                 <item><title>hangs</title><link>{base}/hang</link></item></channel></rss>",
                site.feed_base
            ),
        ),
        "/slow/1" => {
            tokio::time::sleep(Duration::from_millis(1500)).await;
            ok("text/html; charset=utf-8", page("/slow/1"))
        }
        // Always busy: a transient failure, every time.
        "/flaky" => Response::builder().status(503).body(Body::empty()).unwrap(),
        // Never answers while a test lasts: the process is killed with this fetch in flight, as
        // a page that crashes the crawler would take it down.
        "/hang" => {
            tokio::time::sleep(Duration::from_secs(300)).await;
            Response::builder().status(503).body(Body::empty()).unwrap()
        }
        "/moved" => Response::builder().status(302).header("location", "/a/3?from=moved").body(Body::empty()).unwrap(),
        p if p.starts_with("/a/") => ok("text/html; charset=utf-8", page(p)),
        _ => Response::builder().status(404).body(Body::empty()).unwrap(),
    }
}

fn pipeline(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_pipeline")).args(args).env("RUST_LOG", "warn").output().expect("run pipeline")
}

fn urls(out: &Path) -> Vec<String> {
    let mut v: Vec<String> = list_parts(out)
        .unwrap()
        .iter()
        .flat_map(|p| read_part(p).unwrap())
        .map(|r| r["metadata"]["url"].as_str().unwrap().to_string())
        .collect();
    v.sort();
    v
}

fn run(feeds: &Path, out: &Path, extra: &[&str]) -> Output {
    let mut args = vec![
        "--feeds",
        feeds.to_str().unwrap(),
        "--once",
        "--delay-ms",
        "10",
        "--allow-private-addresses",
        "--out",
        out.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    pipeline(&args)
}

#[test]
fn articles_held_back_by_an_unavailable_robots_txt_are_fetched_on_the_next_run() {
    // robots.txt fails on the first run (the fetcher retries nothing for robots.txt; one
    // request per run), then answers.
    let server = start(1);
    let dir = tempfile::tempdir().unwrap();
    let feeds = dir.path().join("feeds.txt");
    std::fs::write(&feeds, format!("{}/feed.xml\n", server.feed_base)).unwrap();
    let out = dir.path().join("out");

    let first = run(&feeds, &out, &[]);
    let stderr = String::from_utf8_lossy(&first.stderr);
    assert_eq!(first.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("robots.txt is unavailable"), "{stderr}");
    assert!(urls(&out).is_empty());
    let stats: serde_json::Value = serde_json::from_slice(&std::fs::read(out.join("stats.json")).unwrap()).unwrap();
    assert_eq!(stats["failed"]["robots_unavailable"], 3, "{stats}");

    // The stats stay cumulative (the first run's failures remain counted), but the exit code
    // is this run's: nothing failed now, so 0.
    let second = run(&feeds, &out, &["--resume"]);
    assert_eq!(second.status.code(), Some(0), "{}", String::from_utf8_lossy(&second.stderr));
    let stats: serde_json::Value = serde_json::from_slice(&std::fs::read(out.join("stats.json")).unwrap()).unwrap();
    assert_eq!(stats["failed"]["robots_unavailable"], 3, "{stats}");
    assert!(!String::from_utf8_lossy(&second.stderr).contains("robots.txt is unavailable"));
    let b = &server.article_base;
    assert_eq!(urls(&out), [format!("{b}/a/1"), format!("{b}/a/2"), format!("{b}/moved")]);
    // A third run has nothing left to fetch.
    let third = run(&feeds, &out, &["--resume"]);
    assert_eq!(third.status.code(), Some(0));
    assert_eq!(urls(&out).len(), 3);
    assert_eq!(server.hits.lock().unwrap()["articles/a/1"], 1, "fetched once");
}

#[test]
fn a_transient_failure_is_given_up_after_the_attempt_limit() {
    // robots.txt never answers: every run fails transiently; after MAX_ATTEMPTS runs the
    // articles are given up and a further run asks for nothing.
    let server = start(u32::MAX);
    let dir = tempfile::tempdir().unwrap();
    let feeds = dir.path().join("feeds.txt");
    std::fs::write(&feeds, format!("{}/feed.xml\n", server.feed_base)).unwrap();
    let out = dir.path().join("out");
    let limit = article_pipeline::pipeline::feeds_run::MAX_ATTEMPTS;
    for i in 0..limit {
        let o = run(&feeds, &out, if i == 0 { &[] } else { &["--resume"] });
        assert_eq!(o.status.code(), Some(1), "run {i}: {}", String::from_utf8_lossy(&o.stderr));
    }
    let robots_asks = server.hits.lock().unwrap()["articles/robots.txt"];
    let o = run(&feeds, &out, &["--resume"]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(!stderr.contains("robots.txt is unavailable"), "{stderr}");
    let stats: serde_json::Value = serde_json::from_slice(&std::fs::read(out.join("stats.json")).unwrap()).unwrap();
    assert_eq!(stats["failed"]["robots_unavailable"], 3 * limit, "{stats}");
    assert_eq!(server.hits.lock().unwrap()["articles/robots.txt"], robots_asks, "a given-up article was tried again");
}

#[test]
fn a_redirected_article_is_archived_with_the_request_to_its_final_url() {
    let server = start(0);
    let dir = tempfile::tempdir().unwrap();
    let feeds = dir.path().join("feeds.txt");
    std::fs::write(&feeds, format!("{}/feed.xml\n", server.feed_base)).unwrap();
    let out = dir.path().join("out");
    let warcs = dir.path().join("warc");
    let o = run(&feeds, &out, &["--warc-out", warcs.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let file = std::fs::read_dir(&warcs).unwrap().next().unwrap().unwrap().path();
    let records: Vec<_> =
        WarcReader::open(&file, WarcLimits::default(), |_| true).unwrap().map(|r| r.unwrap()).collect();
    let final_url = format!("{}/a/3?from=moved", server.article_base);
    let response = records
        .iter()
        .find(|r| r.warc_type() == "response" && r.header("WARC-Target-URI") == Some(final_url.as_str()))
        .unwrap_or_else(|| {
            let uris: Vec<_> = records.iter().map(|r| (r.warc_type(), r.header("WARC-Target-URI"))).collect();
            panic!("no response archived under {final_url}: {uris:?}")
        });
    let request_id = response.header("WARC-Concurrent-To").expect("the response names its request");
    let request = records
        .iter()
        .find(|r| r.warc_type() == "request" && r.header("WARC-Record-ID") == Some(request_id))
        .expect("the request record the response names");
    let head = String::from_utf8_lossy(&request.block);
    assert!(head.starts_with("GET /a/3?from=moved HTTP/1.1\r\n"), "{head}");
    let host = server.article_base.trim_start_matches("http://");
    assert!(head.contains(&format!("\r\nHost: {host}\r\n")), "{head}");
    assert_eq!(request.header("WARC-Target-URI"), Some(final_url.as_str()));
}

#[test]
fn a_polite_run_that_skips_a_disallowed_article_exits_0() {
    let server = start_with(0, "/a/2");
    let dir = tempfile::tempdir().unwrap();
    let feeds = dir.path().join("feeds.txt");
    std::fs::write(&feeds, format!("{}/feed.xml\n", server.feed_base)).unwrap();
    let out = dir.path().join("out");
    let o = run(&feeds, &out, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let stats: serde_json::Value = serde_json::from_slice(&std::fs::read(out.join("stats.json")).unwrap()).unwrap();
    assert_eq!(stats["skipped"]["robots_disallowed"], 1, "{stats}");
    assert_eq!(stats["written"], 2, "{stats}");
    assert!(!server.hits.lock().unwrap().contains_key("articles/a/2"));
}

#[test]
fn a_continuous_run_tries_a_transiently_failing_article_at_most_the_attempt_limit() {
    // One article always answers 503. A continuous run rests it `min_interval_secs` (1 s here)
    // between tries and gives it up after MAX_ATTEMPTS tries in all, though no part commits
    // in between; the other article is written once. (The fetcher's own retries are off, so
    // a try is one request.)
    let settings = "once = false\ninterval_secs = 3600\nmin_interval_secs = 1\ndelay_ms = 10\nmax_retries = 0\n";
    let (server, dir, cfg) = crawl("/flaky.xml", settings);
    let limit = article_pipeline::pipeline::feeds_run::MAX_ATTEMPTS;
    let tries = || server.hits.lock().unwrap().get("articles/flaky").copied().unwrap_or(0);
    let mut child = Command::new(env!("CARGO_BIN_EXE_pipeline"))
        .args(["--config", cfg.to_str().unwrap()])
        .env("RUST_LOG", "warn")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while tries() < limit {
        assert!(Instant::now() < deadline, "only {} tries in a minute", tries());
        std::thread::sleep(Duration::from_millis(50));
    }
    // Three more rests' time: no further try.
    std::thread::sleep(Duration::from_secs(3));
    assert_eq!(tries(), limit, "tried again after the attempt limit");
    // SIGTERM, as Kubernetes stops a pod: the run ends as on Ctrl-C, committing what it has.
    let (status, stderr) = common::stop(&mut child, "TERM");
    assert_eq!(status.code(), Some(1), "an article failed: {stderr}");
    assert!(stderr.contains("interrupted"), "{stderr}");
    let out = dir.path().join("out");
    assert_eq!(urls(&out), [format!("{}/a/1", server.article_base)]);
    let st = pipeline(&["status", out.to_str().unwrap(), "--json"]);
    let st: serde_json::Value = serde_json::from_slice(&st.stdout).unwrap();
    assert_eq!(st["articles"]["failed"], 1, "{st}");
    assert_eq!(st["articles"]["done"], 1, "{st}");
    // Given up: a later run asks for it no more.
    let o = pipeline(&["--config", cfg.to_str().unwrap(), "--resume", "--once"]);
    assert!(o.status.code().is_some_and(|c| c <= 1), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(tries(), limit);
    assert_eq!(urls(&out).len(), 1);
}

/// A server, and a folder holding a list of its feed `feed` and a config crawling it with
/// `settings` (TOML lines of `[feeds]`; private addresses allowed, output in `out`).
fn crawl(feed: &str, settings: &str) -> (Server, tempfile::TempDir, std::path::PathBuf) {
    let server = start(0);
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("feeds.txt"), format!("{}{feed}\n", server.feed_base)).unwrap();
    let cfg = dir.path().join("feeds.toml");
    let toml = format!("[feeds]\nlist = 'feeds.txt'\n{settings}allow_private_addresses = true\n[sink]\nout = 'out'\n");
    std::fs::write(&cfg, toml).unwrap();
    (server, dir, cfg)
}

fn state_db(out: &Path) -> rusqlite::Connection {
    rusqlite::Connection::open(out.join("state.sqlite")).unwrap()
}

/// The article's row: (attempts, started, settled, status); None before it is listed.
fn article_row(out: &Path, path: &str) -> Option<(u32, u32, u32, String)> {
    if !out.join("state.sqlite").exists() {
        return None;
    }
    use rusqlite::OptionalExtension;
    state_db(out)
        .query_row("SELECT attempts, started, settled, status FROM articles WHERE url LIKE '%' || ?1", [path], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))
        })
        .optional()
        .ok()
        .flatten()
}

/// Starts a run of `cfg` (resuming its output or not), its output and log thrown away.
fn spawn_run(cfg: &Path, resume: bool) -> std::process::Child {
    let mut args = vec!["--config", cfg.to_str().unwrap()];
    if resume {
        args.push("--resume");
    }
    Command::new(env!("CARGO_BIN_EXE_pipeline"))
        .args(&args)
        .env("RUST_LOG", "warn")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

/// Starts a continuous or `--once` run of `cfg`, waits until `ready` holds of the output
/// folder (at most a minute), then kills the process with SIGKILL.
fn run_until_then_kill_9(cfg: &Path, out: &Path, resume: bool, ready: impl Fn(&Path) -> bool) {
    let mut child = spawn_run(cfg, resume);
    let deadline = Instant::now() + Duration::from_secs(60);
    while !ready(out) {
        if let Some(s) = child.try_wait().unwrap() {
            panic!("the run ended ({s}) before it could be killed");
        }
        assert!(Instant::now() < deadline, "not ready within a minute");
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
}

#[test]
fn attempts_are_counted_though_every_run_is_killed_before_its_part_commits() {
    // The review of session 47: attempts were counted when a part committed, so an article
    // failing in a crawl killed before its part filled was tried again in every run, for ever.
    // Each run here is a continuous crawl killed (SIGKILL) right after its one try of /flaky
    // (the rest between tries is an hour): after MAX_ATTEMPTS runs it is given up.
    let settings = "once = false\ninterval_secs = 3600\nmin_interval_secs = 3600\ndelay_ms = 10\nmax_retries = 0\n";
    let (server, dir, cfg) = crawl("/flaky.xml", settings);
    let out = dir.path().join("out");
    let limit = article_pipeline::pipeline::feeds_run::MAX_ATTEMPTS;
    let tries = || server.hits.lock().unwrap().get("articles/flaky").copied().unwrap_or(0);
    for i in 0..limit {
        run_until_then_kill_9(&cfg, &out, i > 0, |out| article_row(out, "/flaky").is_some_and(|r| r.0 > i));
        assert_eq!(tries(), i + 1, "run {i}");
    }
    let (attempts, _, _, status) = article_row(&out, "/flaky").unwrap();
    assert_eq!((attempts, status.as_str()), (limit, "pending"), "its last failure's record was never committed");
    // The next run does not ask for it: it is given up, and that is recorded as its failure.
    let cfg_once = dir.path().join("once.toml");
    std::fs::write(&cfg_once, std::fs::read_to_string(&cfg).unwrap().replace("once = false", "once = true")).unwrap();
    let o = pipeline(&["--config", cfg_once.to_str().unwrap(), "--resume"]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("given up after 5 failed attempts"), "{stderr}");
    assert_eq!(tries(), limit, "tried after the attempt limit");
    assert_eq!(article_row(&out, "/flaky").unwrap().3, "failed");
    let stats: serde_json::Value = serde_json::from_slice(&std::fs::read(out.join("stats.json")).unwrap()).unwrap();
    assert_eq!(stats["failed"]["given_up"], 1, "{stats}");
    assert_eq!(urls(&out), [format!("{}/a/1", server.article_base)]);
}

#[test]
fn an_article_the_process_keeps_dying_on_is_abandoned_and_its_neighbours_are_not() {
    // A page that brings the process down (here: a fetch in flight when it is killed, as an
    // out-of-memory kill would leave it) must not bring down every later run. After
    // MAX_CRASHES runs died with it in flight it is given up; the article fetched and
    // extracted before it in the same runs is not (it was settled), and is written once.
    let (server, dir, cfg) = crawl("/hang.xml", "once = true\ndelay_ms = 10\nmax_retries = 0\n");
    let out = dir.path().join("out");
    let limit = article_pipeline::pipeline::feeds_run::MAX_CRASHES;
    let hangs = || server.hits.lock().unwrap().get("articles/hang").copied().unwrap_or(0);
    for i in 0..limit {
        let asked = |out: &Path| {
            hangs() > i && article_row(out, "/a/1").is_some_and(|(_, started, settled, _)| settled == started)
        };
        run_until_then_kill_9(&cfg, &out, i > 0, asked);
    }
    assert_eq!(hangs(), limit);
    let o = pipeline(&["--config", cfg.to_str().unwrap(), "--resume"]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("abandoned: 3 runs ended"), "{stderr}");
    assert_eq!(hangs(), limit, "an abandoned article was asked again");
    assert_eq!(article_row(&out, "/hang").unwrap().3, "failed");
    assert_eq!(article_row(&out, "/a/1").unwrap().3, "done");
    assert_eq!(urls(&out), [format!("{}/a/1", server.article_base)]);
    let stats: serde_json::Value = serde_json::from_slice(&std::fs::read(out.join("stats.json")).unwrap()).unwrap();
    assert_eq!(stats["failed"]["abandoned"], 1, "{stats}");
    // Settled for good: the next run asks for nothing.
    let o = pipeline(&["--config", cfg.to_str().unwrap(), "--resume"]);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(hangs(), limit);
}

#[test]
fn articles_of_parts_a_consumer_deleted_are_not_fetched_again() {
    // A consumer that loads each part and deletes it: the next poll writes nothing again.
    // Before, a part missing at start was taken for one a crash lost, its articles fetched and
    // written a second time.
    let server = start(0);
    let dir = tempfile::tempdir().unwrap();
    let feeds = dir.path().join("feeds.txt");
    std::fs::write(&feeds, format!("{}/feed.xml\n", server.feed_base)).unwrap();
    let out = dir.path().join("out");
    let o = run(&feeds, &out, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(urls(&out).len(), 3);
    let fetched = server.hits.lock().unwrap().get("articles/a/1").copied();
    for p in list_parts(&out).unwrap() {
        std::fs::remove_file(p).unwrap();
    }
    let o = run(&feeds, &out, &["--resume"]);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(urls(&out), Vec::<String>::new());
    assert_eq!(server.hits.lock().unwrap().get("articles/a/1").copied(), fetched, "fetched again");
}

#[test]
fn links_that_lead_to_one_page_are_one_record() {
    // The feed lists an article and two tracking links that redirect to it: one record, the
    // two others skipped as the same page, in this run and the next.
    let server = start(0);
    let dir = tempfile::tempdir().unwrap();
    let feeds = dir.path().join("feeds.txt");
    std::fs::write(&feeds, format!("{}/same.xml\n", server.feed_base)).unwrap();
    let out = dir.path().join("out");
    let o = run(&feeds, &out, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(urls(&out), [format!("{}/a/1", server.article_base)]);
    let stats: serde_json::Value = serde_json::from_slice(&std::fs::read(out.join("stats.json")).unwrap()).unwrap();
    assert_eq!(stats["skipped"]["same_page"], 2, "{stats}");
    let o = run(&feeds, &out, &["--resume"]);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(urls(&out).len(), 1);
}

#[test]
fn a_page_claimed_by_a_run_that_died_is_written_by_the_next_link_to_it() {
    // The review of session 48: a redirect's claim on its page was kept from a run that died
    // before the part committed. When that redirect then failed (404), the plain link to the
    // page was skipped as the same page, and the page was never written.
    let (server, dir, cfg) = crawl("/stale.xml", "once = true\ndelay_ms = 10\nmax_retries = 0\n");
    let out = dir.path().join("out");
    let settled = |out: &Path, path: &str| article_row(out, path).is_some_and(|(_, a, b, _)| a > 0 && a == b);
    // Run 1: the redirect claims /a/1, /a/1 is skipped as its page, then the run dies.
    run_until_then_kill_9(&cfg, &out, false, |out| {
        settled(out, "/once-to/1")
            && settled(out, "/a/1")
            && server.hits.lock().unwrap().contains_key("articles/hang-once")
    });
    assert!(list_parts(&out).unwrap().is_empty(), "nothing committed before the kill");
    // Run 2: the redirect is gone (404); /a/1 is written.
    let o = pipeline(&["--config", cfg.to_str().unwrap(), "--resume"]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "the 404 is a failed input: {stderr}");
    let base = &server.article_base;
    assert_eq!(urls(&out), [format!("{base}/a/1"), format!("{base}/hang-once")], "{stderr}");
}

#[test]
fn sigterm_lets_a_fetch_in_flight_go_at_once_without_counting_it_against_the_article() {
    // A stop (SIGTERM, as Kubernetes and Slurm send) no longer waits for the fetches in flight,
    // which with their retries can outlast the grace before SIGKILL, and their starts are
    // taken back: however many times a crawl is stopped with an article in flight, it is not
    // given up as one the process dies on.
    let (server, dir, cfg) = crawl("/hang.xml", "once = false\ninterval_secs = 3600\ndelay_ms = 10\nmax_retries = 0\n");
    let out = dir.path().join("out");
    let hangs = || server.hits.lock().unwrap().get("articles/hang").copied().unwrap_or(0);
    let rounds = article_pipeline::pipeline::feeds_run::MAX_CRASHES + 1;
    for i in 0..rounds {
        let mut child = spawn_run(&cfg, i > 0);
        let deadline = Instant::now() + Duration::from_secs(60);
        while hangs() <= i {
            assert!(Instant::now() < deadline, "round {i}: /hang not asked");
            std::thread::sleep(Duration::from_millis(20));
        }
        let o = Command::new("kill").args(["-TERM", &child.id().to_string()]).output().unwrap();
        assert!(o.status.success());
        let deadline = Instant::now() + Duration::from_secs(10);
        while child.try_wait().unwrap().is_none() {
            assert!(Instant::now() < deadline, "round {i}: SIGTERM waited for the fetch in flight");
            std::thread::sleep(Duration::from_millis(20));
        }
        let (attempts, started, settled, status) = article_row(&out, "/hang").unwrap();
        assert_eq!((attempts, status.as_str()), (0, "pending"), "round {i}");
        assert_eq!(started, settled, "round {i}: the stop was counted as a run dying on it");
    }
    assert_eq!(urls(&out), [format!("{}/a/1", server.article_base)]);
}

#[test]
fn an_article_in_flight_beside_a_page_the_process_dies_on_is_not_given_up_with_it() {
    // The review of session 48: every article in flight when a run died got a crash counted,
    // so a page that crashes the process took the articles fetched beside it down with it.
    // A run dies here (SIGKILL) with two articles in flight, of two hosts: a slow one and one
    // that never answers. The next runs try each alone: the slow one settles and is written,
    // the other alone is given up after MAX_CRASHES runs.
    let (server, dir, cfg) = crawl("/crashy.xml", "once = true\ndelay_ms = 10\nmax_retries = 0\n");
    let out = dir.path().join("out");
    let hits = |path: &str| server.hits.lock().unwrap().get(path).copied().unwrap_or(0);
    let limit = article_pipeline::pipeline::feeds_run::MAX_CRASHES;
    // Both in flight, then the kill.
    run_until_then_kill_9(&cfg, &out, false, |_| hits("articles/hang") == 1 && hits("feed/slow/1") == 1);
    assert_eq!(article_row(&out, "/slow/1").map(|r| r.1 - r.2), Some(1), "a start not settled");
    for i in 1..limit {
        run_until_then_kill_9(&cfg, &out, true, |_| hits("articles/hang") > i);
    }
    // Tried alone, the slow article settled before the hanging one started.
    let (_, started, settled, _) = article_row(&out, "/slow/1").unwrap();
    assert_eq!(started, settled, "the slow article was in flight when a later run died");
    let o = pipeline(&["--config", cfg.to_str().unwrap(), "--resume"]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("abandoned"), "{stderr}");
    assert_eq!(urls(&out), [format!("{}/slow/1", server.feed_base)]);
    assert_eq!(hits("articles/hang"), limit);
}
