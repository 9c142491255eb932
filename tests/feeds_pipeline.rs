//! `pipeline --feeds` against a real axum server on 127.0.0.1: RSS 2.0, RSS without a version,
//! Atom and JSON Feed, a broken feed, robots.txt with a disallowed path and a Crawl-delay, and
//! faults (a response slower than the timeout, 500 then 200, 429 with Retry-After, a redirect
//! loop, a 50 MB body, a wrong content type, gzip bodies, a windows-1252 page). Also the SSRF
//! guard, conditional GET on a second poll, the WARC archive, and kill -9 with `--resume`.

use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, Uri};
use axum::response::Response;
use serde_json::Value;

use article_pipeline::sink::{list_parts, read_part};

use crate::common;

#[derive(Default)]
struct Log {
    hits: HashMap<String, u32>,
    if_none_match: Vec<String>,
    concurrent: u32,
    max_concurrent: u32,
}

type Shared = Arc<Mutex<Log>>;

struct Server {
    base: String,
    log: Shared,
    _rt: tokio::runtime::Runtime,
}

fn start(articles: usize) -> Server {
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let listener = rt.block_on(tokio::net::TcpListener::bind("127.0.0.1:0")).unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let log: Shared = Arc::default();
    let state = (log.clone(), base.clone(), articles);
    let app = axum::Router::new().fallback(handle).with_state(state);
    rt.spawn(async move { axum::serve(listener, app).await.unwrap() });
    Server { base, log, _rt: rt }
}

fn page(title: &str, words: &str) -> String {
    let para = format!("<p>{words} {words} {words} {words} about the {title} story today.</p>\n");
    format!(
        "<!doctype html><html><head><title>{title}</title></head><body><nav><a href=/>Home</a> <a href=/x>World</a></nav>\
         <article><h1>{title}</h1>{}</article><footer><a href=/about>About</a> Copyright notice</footer></body></html>",
        para.repeat(6)
    )
}

fn html(body: impl Into<Body>) -> Response {
    Response::builder().header("content-type", "text/html; charset=utf-8").body(body.into()).unwrap()
}

fn xml(body: String) -> Response {
    Response::builder().header("content-type", "application/xml").body(Body::from(body)).unwrap()
}

fn gzip(data: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    std::io::Write::write_all(&mut e, data).unwrap();
    e.finish().unwrap()
}

async fn handle(
    State((log, base, articles)): State<(Shared, String, usize)>,
    uri: Uri,
    headers: HeaderMap,
) -> Response {
    let path = uri.path().to_string();
    // A request past the client's timeout keeps running here; it is not a concurrent request.
    let counted = path != "/slow";
    let hit = {
        let mut l = log.lock().unwrap();
        let n = l.hits.entry(path.clone()).or_default();
        *n += 1;
        let hit = *n;
        if let Some(v) = headers.get("if-none-match") {
            l.if_none_match.push(v.to_str().unwrap().to_string());
        }
        if counted {
            l.concurrent += 1;
            l.max_concurrent = l.max_concurrent.max(l.concurrent);
        }
        hit
    };
    let resp = respond(&path, hit, &base, articles, &headers).await;
    if counted {
        log.lock().unwrap().concurrent -= 1;
    }
    resp
}

async fn respond(path: &str, hit: u32, base: &str, articles: usize, headers: &HeaderMap) -> Response {
    let rss_item = |p: &str| {
        let p = p.replace('&', "&amp;");
        format!(
            "<item><title>{p}</title><link>{base}{p}</link><pubDate>Tue, 24 Nov 2026 09:30:00 GMT</pubDate>\
             <category>Harbour</category><description>&lt;p&gt;Summary of {p}&lt;/p&gt;</description></item>"
        )
    };
    match path {
        // The kill test (articles > 0) runs without a Crawl-delay to stay short.
        "/robots.txt" if articles > 0 => Response::new(Body::from("User-agent: *\nDisallow: /private/\n")),
        "/robots.txt" => Response::new(Body::from("User-agent: *\nDisallow: /private/\nCrawl-delay: 0.1\n")),
        "/rss.xml" => {
            if headers.get("if-none-match").is_some_and(|v| v == "\"rss-v1\"") {
                return Response::builder().status(304).body(Body::empty()).unwrap();
            }
            let items: String = ["/articles/1?utm_source=feed&utm_medium=rss#comments", "/private/secret", "/slow", "/flaky", "/limited", "/loop", "/huge", "/image", "/gz", "/latin1"]
                .iter()
                .map(|p| rss_item(p))
                .collect();
            Response::builder()
                .header("content-type", "application/rss+xml")
                .header("etag", "\"rss-v1\"")
                .body(Body::from(format!("<?xml version=\"1.0\"?><rss version=\"2.0\"><channel><title>Test</title>{items}</channel></rss>")))
                .unwrap()
        }
        "/noversion.xml" => xml(format!("<rss><channel><title>Old</title>{}</channel></rss>", rss_item("/articles/5"))),
        "/atom.xml" => xml(format!(
            "<?xml version=\"1.0\"?><feed xmlns=\"http://www.w3.org/2005/Atom\"><title>A</title><id>a</id><updated>2026-01-01T00:00:00Z</updated>\
             <entry><title>3</title><id>3</id><updated>2026-01-01T00:00:00Z</updated><link href=\"/articles/3\"/></entry>\
             <entry><title>1</title><id>1</id><updated>2026-01-01T00:00:00Z</updated><link href=\"{base}/articles/1\"/></entry></feed>"
        )),
        "/feed.json" => Response::builder()
            .header("content-type", "application/feed+json")
            .body(Body::from(format!(
                "{{\"version\":\"https://jsonfeed.org/version/1.1\",\"title\":\"J\",\"items\":[{{\"id\":\"4\",\"url\":\"{base}/articles/4\"}}]}}"
            )))
            .unwrap(),
        "/broken.xml" => xml("<html><body>this is not a feed</body></html>".to_string()),
        // A feed with a validator that answers 304 while it has not changed.
        "/etag.xml" => {
            if headers.get("if-none-match").is_some_and(|v| v == "\"e-v1\"") {
                return Response::builder().status(304).body(Body::empty()).unwrap();
            }
            let items: String = (0..3).map(|i| rss_item(&format!("/articles/e{i}"))).collect();
            Response::builder()
                .header("content-type", "application/rss+xml")
                .header("etag", "\"e-v1\"")
                .body(Body::from(format!("<rss version=\"2.0\"><channel><title>E</title>{items}</channel></rss>")))
                .unwrap()
        }
        // Links whose queries a URL library would spell otherwise.
        "/query.xml" => {
            let items: String =
                ["/articles/q1?a=1;b=2", "/articles/q2?s=a%20b", "/articles/q3?q=%E9", "/articles/q3?q=%E8"].iter().map(|p| rss_item(p)).collect();
            xml(format!("<rss version=\"2.0\"><channel><title>Q</title>{items}</channel></rss>"))
        }
        // Gone for three polls (the feed is parked), then a server error, then back.
        "/back.xml" if hit <= 3 => Response::builder().status(404).body(Body::from("not found")).unwrap(),
        // (Three 500s: one poll with its two retries.)
        "/back.xml" if hit <= 6 => Response::builder().status(500).body(Body::from("oops")).unwrap(),
        "/back.xml" => xml(format!("<rss version=\"2.0\"><channel><title>B</title>{}</channel></rss>", rss_item("/articles/b1"))),
        "/many.xml" => {
            let items: String = (0..articles).map(|i| rss_item(&format!("/articles/m{i}"))).collect();
            xml(format!("<rss version=\"2.0\"><channel><title>M</title>{items}</channel></rss>"))
        }
        "/ssrf.xml" => xml(format!(
            "<rss version=\"2.0\"><channel><title>S</title>{}{}</channel></rss>",
            rss_item("/articles/1"),
            "<item><link>http://localhost:1/admin</link></item>"
        )),
        // Feed hosts that redirect: to the cloud metadata address, to a loopback literal (this
        // server, whose /metadata logs a hit), to a loopback name, to a file: URL; and a feed
        // that moved, whose links are relative to where it is now.
        "/to-169.xml" => redirect(302, "http://169.254.169.254/latest/meta-data/"),
        "/to-self.xml" => redirect(302, &format!("{base}/metadata")),
        "/to-localhost.xml" => redirect(302, "http://localhost:1/feed.xml"),
        "/to-file.xml" => redirect(302, "file:///etc/passwd"),
        "/metadata" => xml(format!("<rss version=\"2.0\"><channel><title>Secret</title>{}</channel></rss>", rss_item("/articles/secret"))),
        "/moved.xml" => redirect(301, "/news/feed.xml"),
        "/news/feed.xml" => xml(
            "<rss version=\"2.0\"><channel><title>N</title><item><link>story-1.html</link></item>\
             <item><link>./story-2.html</link></item></channel></rss>"
                .to_string(),
        ),
        p if p.starts_with("/news/story-") => html(page("News story", &format!("words of {p}"))),
        "/slow" => {
            tokio::time::sleep(Duration::from_secs(30)).await;
            html(page("Slow", "slow"))
        }
        "/flaky" if hit == 1 => Response::builder().status(500).body(Body::from("oops")).unwrap(),
        "/flaky" => html(page("Flaky", "flaky recovered")),
        "/limited" if hit == 1 => Response::builder().status(429).header("retry-after", "1").body(Body::empty()).unwrap(),
        "/limited" => html(page("Limited", "patience rewarded")),
        "/loop" => Response::builder().status(302).header("location", "/loop2").body(Body::empty()).unwrap(),
        "/loop2" => Response::builder().status(302).header("location", "/loop").body(Body::empty()).unwrap(),
        "/huge" => {
            let chunk = bytes::Bytes::from(vec![b'a'; 1 << 20]);
            let stream = futures_util::stream::iter((0..50).map(move |_| Ok::<_, std::io::Error>(chunk.clone())));
            html(Body::from_stream(stream))
        }
        "/image" => Response::builder().header("content-type", "image/png").body(Body::from(vec![0x89, b'P', b'N', b'G'])).unwrap(),
        "/gz" => Response::builder()
            .header("content-type", "text/html")
            .header("content-encoding", "gzip")
            .body(Body::from(gzip(page("Compressed", "gzip deflated words").as_bytes())))
            .unwrap(),
        "/latin1" => {
            let p = page("Latin", "caf\u{e9} na\u{ef}ve r\u{e9}sum\u{e9}").replace("<head>", "<head><meta charset=\"windows-1252\">");
            let (bytes, _, _) = encoding_rs::WINDOWS_1252.encode(&p);
            Response::builder().header("content-type", "text/html").body(Body::from(bytes.into_owned())).unwrap()
        }
        p if p.starts_with("/articles/") => html(page(&format!("Article {}", &p[10..]), &format!("words of article {}", &p[10..]))),
        _ => Response::builder().status(StatusCode::NOT_FOUND).body(Body::from("not found")).unwrap(),
    }
}

fn redirect(status: u16, to: &str) -> Response {
    Response::builder().status(status).header("location", to).body(Body::empty()).unwrap()
}

fn pipeline(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_pipeline")).args(args).output().expect("run pipeline")
}

fn records(out: &Path) -> Vec<Value> {
    list_parts(out).unwrap().iter().flat_map(|p| read_part(p).unwrap()).collect()
}

/// A feeds config over `feeds` with `extra` lines in `[feeds]`. Requests may take 10 s (a
/// loaded two-core CI box can be slow to answer), unless `extra` sets `timeout_secs` itself.
fn config(dir: &Path, feeds: &[String], extra: &str) -> String {
    let timeout = if extra.contains("timeout_secs") { "" } else { "timeout_secs = 10\n" };
    let list = dir.join("feeds.txt");
    std::fs::write(&list, format!("# test feeds\n{}\n", feeds.join("\n"))).unwrap();
    let cfg = dir.join("feeds.toml");
    std::fs::write(
        &cfg,
        format!(
            "[feeds]\nlist = 'feeds.txt'\nonce = true\ndelay_ms = 10\n{timeout}connect_timeout_secs = 2\nmax_retries = 2\n{extra}\n\
             [sink]\nout = 'out'\n[run]\nthreads = 2\n"
        ),
    )
    .unwrap();
    cfg.display().to_string()
}

#[test]
fn feeds_are_polled_articles_fetched_once_and_faults_counted() {
    let server = start(0);
    let dir = tempfile::tempdir().unwrap();
    let b = &server.base;
    let feeds: Vec<String> = ["rss.xml", "noversion.xml", "atom.xml", "feed.json", "broken.xml"]
        .iter()
        .map(|f| format!("{b}/{f}"))
        .collect();
    // /slow answers after 30 s, past a timeout of 2 s; /huge is cut at 1 MB.
    let cfg = config(
        dir.path(),
        &feeds,
        "allow_private_addresses = true\nwarc_out = 'warc'\ntimeout_secs = 2\nmax_body_bytes = 1000000",
    );
    let o = pipeline(&["--config", &cfg]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{stderr}");
    let out = dir.path().join("out");
    let recs = records(&out);
    let mut urls: Vec<String> =
        recs.iter().map(|r| r["metadata"]["url"].as_str().unwrap().replace(b.as_str(), "")).collect();
    urls.sort();
    assert_eq!(
        urls,
        ["/articles/1", "/articles/3", "/articles/4", "/articles/5", "/flaky", "/gz", "/latin1", "/limited"],
        "{stderr}"
    );
    let by_url = |u: &str| recs.iter().find(|r| r["metadata"]["url"] == format!("{b}{u}")).unwrap();
    assert!(by_url("/gz")["text"].as_str().unwrap().contains("gzip deflated words"));
    assert!(by_url("/latin1")["text"].as_str().unwrap().contains("café naïve résumé"));
    assert!(by_url("/flaky")["text"].as_str().unwrap().contains("flaky recovered"));
    assert_eq!(by_url("/articles/1")["metadata"]["source"]["kind"], "feed");
    // The feed item's own fields, and its date where the page has none.
    let m = &by_url("/articles/1")["metadata"];
    let listed = "/articles/1?utm_source=feed&utm_medium=rss#comments";
    assert_eq!(m["feed"]["title"], listed);
    assert_eq!(m["feed"]["summary"], format!("Summary of {listed}"), "HTML in the description is dropped");
    assert_eq!(m["feed"]["categories"], serde_json::json!(["Harbour"]));
    assert_eq!(m["feed"]["published"], "2026-11-24T09:30:00+00:00");
    assert_eq!((&m["published"], &m["date_source"]), (&Value::from("2026-11-24T09:30:00Z"), &Value::from("feed")));
    assert_eq!(m["categories"], serde_json::json!(["Harbour"]));
    assert!(!by_url("/articles/1")["text"].as_str().unwrap().contains("Copyright"));

    let stats: Value = serde_json::from_slice(&std::fs::read(out.join("stats.json")).unwrap()).unwrap();
    assert_eq!(stats["written"], 8);
    // robots.txt's no is policy, not failure: skipped.
    assert_eq!(stats["skipped"]["robots_disallowed"], 1, "{stats}");
    assert!(stats["failed"].get("robots_disallowed").is_none(), "{stats}");
    assert_eq!(stats["failed"]["timeout"], 1, "{stats}");
    assert_eq!(stats["failed"]["too_many_redirects"], 1, "{stats}");
    assert_eq!(stats["failed"]["too_large"], 1, "{stats}");
    assert_eq!(stats["failed"]["feed_parse"], 1, "{stats}");
    assert_eq!(stats["skipped"]["not_html"], 1, "{stats}");
    for needle in ["/slow: timed out", "broken.xml: not a feed"] {
        assert!(stderr.contains(needle), "{needle} not in {stderr}");
    }

    {
        let log = server.log.lock().unwrap();
        // Each article once although two feeds list /articles/1; retries as configured.
        assert_eq!(log.hits["/articles/1"], 1);
        assert_eq!(log.hits["/flaky"], 2);
        assert_eq!(log.hits["/limited"], 2);
        assert_eq!(log.hits["/slow"], 3);
        assert!(!log.hits.contains_key("/private/secret"));
        assert_eq!(log.hits["/robots.txt"], 1);
        // One request at a time per host. (Their spacing by the Crawl-delay is timing, reported
        // by `cargo bench --bench feeds_crawl`, not asserted here.)
        assert_eq!(log.max_concurrent, 1);
    }

    // The WARC archive replays to the same records.
    let warcs: Vec<String> =
        std::fs::read_dir(dir.path().join("warc")).unwrap().map(|e| e.unwrap().path().display().to_string()).collect();
    assert_eq!(warcs.len(), 1);
    let replay = dir.path().join("replay");
    let o = pipeline(&["--warc", &warcs[0], "--out", replay.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let mut texts: Vec<String> = records(&replay).iter().map(|r| r["text"].as_str().unwrap().to_string()).collect();
    let mut want: Vec<String> = recs.iter().map(|r| r["text"].as_str().unwrap().to_string()).collect();
    texts.sort();
    want.sort();
    assert_eq!(texts, want);

    // A second poll sends the ETag and gets 304; nothing written or permanently failed is
    // fetched again; only the article that timed out (transient) is tried again, and times
    // out again. Stats stay cumulative, so the exit code still says inputs failed.
    let hits_before = server.log.lock().unwrap().hits.clone();
    let o = pipeline(&["--config", &cfg, "--resume"]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("/slow: timed out"), "{stderr}");
    let log = server.log.lock().unwrap();
    assert!(log.if_none_match.contains(&"\"rss-v1\"".to_string()));
    let asked_again: Vec<&String> =
        log.hits.iter().filter(|(p, n)| hits_before.get(*p) != Some(n)).map(|(p, _)| p).collect();
    let mut asked_again: Vec<&str> = asked_again.into_iter().map(String::as_str).collect();
    asked_again.sort_unstable();
    // (robots.txt is asked again by the new process.)
    assert_eq!(
        asked_again,
        ["/atom.xml", "/broken.xml", "/feed.json", "/noversion.xml", "/robots.txt", "/rss.xml", "/slow"]
    );
    let again = records(&out);
    assert_eq!(again.len(), 8);
    let ids: HashSet<&str> = again.iter().map(|r| r["id"].as_str().unwrap()).collect();
    assert_eq!(ids.len(), 8, "a record was written twice");
    let stats: Value = serde_json::from_slice(&std::fs::read(out.join("stats.json")).unwrap()).unwrap();
    assert_eq!(stats["written"], 8, "{stats}");
    assert_eq!(stats["failed"]["timeout"], 2, "{stats}");
}

#[test]
fn feed_links_to_private_addresses_are_refused_without_the_flag() {
    let server = start(0);
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(dir.path(), &[format!("{}/ssrf.xml", server.base)], "");
    let o = pipeline(&["--config", &cfg]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{stderr}");
    assert!(records(&dir.path().join("out")).is_empty());
    let stats: Value = serde_json::from_slice(&std::fs::read(dir.path().join("out/stats.json")).unwrap()).unwrap();
    assert_eq!(stats["failed"]["ssrf_blocked"], 2, "{stats}");
    assert!(stderr.contains("--allow-private-addresses"), "{stderr}");
    let log = server.log.lock().unwrap();
    // The feed itself (listed by the user) was fetched; nothing it linked to was.
    assert_eq!(log.hits.get("/ssrf.xml"), Some(&1));
    assert_eq!(log.hits.len(), 2, "{:?}", log.hits.keys()); // the feed and its host's robots.txt
}

#[test]
fn a_listed_feed_is_trusted_but_not_where_it_redirects() {
    let server = start(0);
    let dir = tempfile::tempdir().unwrap();
    let feeds: Vec<String> =
        ["to-169", "to-self", "to-localhost", "to-file"].iter().map(|f| format!("{}/{f}.xml", server.base)).collect();
    let cfg = config(dir.path(), &feeds, "warc_out = 'warc'");
    let o = pipeline(&["--config", &cfg]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{stderr}");
    assert!(records(&dir.path().join("out")).is_empty());
    // Every listed feed was asked for; no hop it redirected to was.
    let log = server.log.lock().unwrap();
    for f in ["/to-169.xml", "/to-self.xml", "/to-localhost.xml", "/to-file.xml"] {
        assert_eq!(log.hits.get(f), Some(&1), "{f}: {:?}", log.hits);
    }
    assert_eq!(log.hits.get("/metadata"), None, "a redirect reached a private address");
    assert!(
        stderr.contains("redirect to http://169.254.169.254/latest/meta-data/: 169.254.169.254 is a private address"),
        "{stderr}"
    );
    assert!(stderr.contains("redirect to http://localhost:1/feed.xml: localhost is a loopback name"), "{stderr}");
    // A file: URL is a bad redirect, not a private address (no flag would allow it).
    let file_line = stderr.lines().find(|l| l.contains("file:///etc/passwd")).expect("the file: redirect is reported");
    assert!(file_line.contains("not an http or https URL") && !file_line.contains("--allow"), "{file_line}");
    // The archive holds the feeds' 302s and nothing from behind them.
    let warc = std::fs::read_dir(dir.path().join("warc")).unwrap().next().unwrap().unwrap().path();
    let mut text = Vec::new();
    std::io::Read::read_to_end(&mut flate2::read::MultiGzDecoder::new(std::fs::File::open(warc).unwrap()), &mut text)
        .unwrap();
    let text = String::from_utf8_lossy(&text);
    assert!(!text.contains("Secret") && !text.contains("WARC-Target-URI: http://169.254"), "{text}");
}

#[test]
fn a_moved_feed_resolves_relative_links_against_its_new_address() {
    let server = start(0);
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(dir.path(), &[format!("{}/moved.xml", server.base)], "allow_private_addresses = true");
    let o = pipeline(&["--config", &cfg]);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let mut urls: Vec<String> =
        records(&dir.path().join("out")).iter().map(|r| r["metadata"]["url"].as_str().unwrap().to_string()).collect();
    urls.sort();
    assert_eq!(urls, [format!("{}/news/story-1.html", server.base), format!("{}/news/story-2.html", server.base)]);
}

#[test]
fn a_robots_txt_larger_than_the_body_cap_is_read_to_500_kib_and_obeyed() {
    // A host whose robots.txt is 700 KB (the body cap is 100 KB): its first 500 KiB are parsed,
    // so the host stays available and its rules apply.
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
    let listener = rt.block_on(tokio::net::TcpListener::bind("127.0.0.1:0")).unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let feed_base = base.clone();
    let app = axum::Router::new().fallback(move |uri: Uri| {
        let base = feed_base.clone();
        async move {
            match uri.path() {
                "/robots.txt" => {
                    let mut r = String::from("User-agent: *\nDisallow: /private/\n");
                    while r.len() < 700_000 {
                        r.push_str("# a very long robots.txt, padded with comments\n");
                    }
                    Response::new(Body::from(r))
                }
                "/feed.xml" => xml(format!(
                    "<rss version=\"2.0\"><channel><title>R</title><item><link>{base}/articles/ok</link></item>\
                     <item><link>{base}/private/no</link></item></channel></rss>"
                )),
                p => html(page("Robots", &format!("words of {p}"))),
            }
        }
    });
    rt.spawn(async move { axum::serve(listener, app).await.unwrap() });
    let dir = tempfile::tempdir().unwrap();
    let cfg =
        config(dir.path(), &[format!("{base}/feed.xml")], "allow_private_addresses = true\nmax_body_bytes = 100000");
    let o = pipeline(&["--config", &cfg]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    let urls: Vec<String> =
        records(&dir.path().join("out")).iter().map(|r| r["metadata"]["url"].as_str().unwrap().to_string()).collect();
    assert_eq!(urls, [format!("{base}/articles/ok")], "{stderr}");
    let stats: Value = serde_json::from_slice(&std::fs::read(dir.path().join("out/stats.json")).unwrap()).unwrap();
    assert!(
        stats["failed"].get("robots_unavailable").is_none() && stats["failed"].get("feed_fetch").is_none(),
        "{stats}"
    );
    assert_eq!(
        stats["skipped"]["robots_disallowed"].as_u64().or(stats["failed"]["robots_disallowed"].as_u64()),
        Some(1),
        "{stats}"
    );
}

#[test]
fn kill_9_during_a_feeds_run_then_resume_writes_every_article_once() {
    let server = start(300);
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(dir.path(), &[format!("{}/many.xml", server.base)], "allow_private_addresses = true");
    // Small parts so that parts are committed while the crawl goes on.
    let cfg_text = std::fs::read_to_string(&cfg).unwrap().replace("[sink]\n", "[sink]\npart_bytes = 8192\n");
    std::fs::write(&cfg, cfg_text).unwrap();
    let out = dir.path().join("out");
    let mut child = Command::new(env!("CARGO_BIN_EXE_pipeline"))
        .args(["--config", &cfg])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let start = Instant::now();
    let mut killed = false;
    while start.elapsed() < Duration::from_secs(60) {
        if list_parts(&out).map(|p| p.len() >= 2).unwrap_or(false) {
            if child.try_wait().unwrap().is_none() {
                child.kill().unwrap();
                killed = true;
            }
            break;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    child.wait().unwrap();
    assert!(killed, "the run ended before it could be killed");
    let o = pipeline(&["--config", &cfg, "--resume"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let urls: Vec<String> = records(&out).iter().map(|r| r["metadata"]["url"].as_str().unwrap().to_string()).collect();
    let unique: HashSet<&String> = urls.iter().collect();
    assert_eq!(unique.len(), urls.len(), "an article was written twice");
    assert_eq!(urls.len(), 300, "an article was lost");
    // Per-host counts are of committed articles, not of fetches: an article fetched again
    // after the kill counts once.
    let st = pipeline(&["status", out.to_str().unwrap(), "--json"]);
    let st: Value = serde_json::from_slice(&st.stdout).unwrap();
    let hosts = st["stats"]["hosts"].as_object().unwrap();
    assert_eq!(hosts.len(), 1, "{st}");
    let host = hosts.values().next().unwrap();
    assert_eq!(host["fetched"], 300, "{st}");
    assert_eq!(st["articles"]["done"], 300, "{st}");
}

#[test]
fn ctrl_c_in_continuous_mode_stops_cleanly_and_resume_finishes() {
    let server = start(60);
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(dir.path(), &[format!("{}/many.xml", server.base)], "allow_private_addresses = true");
    // Continuous mode (no --once), small parts, a per-host delay so the crawl takes a while.
    let text = std::fs::read_to_string(&cfg)
        .unwrap()
        .replace("once = true", "once = false\ninterval_secs = 3600")
        .replace("delay_ms = 10", "delay_ms = 200")
        .replace("[sink]\n", "[sink]\npart_bytes = 4096\n");
    std::fs::write(&cfg, text).unwrap();
    let out = dir.path().join("out");
    let mut child = Command::new(env!("CARGO_BIN_EXE_pipeline"))
        .args(["--config", &cfg])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Until a part is written (one request per 200 ms on this host: the 60 articles take 12 s).
    let deadline = Instant::now() + Duration::from_secs(60);
    while list_parts(&out).map_or(true, |p| p.is_empty()) {
        assert!(Instant::now() < deadline, "no part written in 60 s");
        std::thread::sleep(Duration::from_millis(20));
    }
    // A second process on the same folder is refused while the first runs (exit 2), rather
    // than racing it for the same part names. (The first holds the lock from before it opens
    // its database.)
    let deadline = Instant::now() + Duration::from_secs(30);
    while !out.join("state.sqlite").exists() {
        assert!(Instant::now() < deadline, "the first process never opened its database");
        std::thread::sleep(Duration::from_millis(20));
    }
    let o = pipeline(&["--config", &cfg, "--resume", "--once"]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("another pipeline process is running"), "{stderr}");
    let (status, stderr) = common::stop(&mut child, "INT");
    assert!(status.success(), "{status:?}: {stderr}");
    assert!(stderr.contains("interrupted"), "{stderr}");
    let first = records(&out).len();
    assert!(first > 0 && first < 60, "{first} records before the interrupt");
    assert!(out.join("stats.json").exists());
    // Resuming fetches the rest; nothing is written twice.
    let o = pipeline(&["--config", &cfg, "--resume", "--once"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let urls: Vec<String> = records(&out).iter().map(|r| r["metadata"]["url"].as_str().unwrap().to_string()).collect();
    assert_eq!(urls.iter().collect::<HashSet<_>>().len(), 60);
    assert_eq!(urls.len(), 60);
}

/// The state database of a feeds run's output, for moving its clock.
fn state_db(out: &Path) -> rusqlite::Connection {
    rusqlite::Connection::open(out.join("state.sqlite")).unwrap()
}

/// An article a feed still lists is never forgotten and fetched again: the outside audit of
/// session 45 saw `forget` prune such articles while the feed answered 304 (a 304 did not count
/// as seeing them), and the feed's next full answer fetch and write all of them again. What a
/// feed listed at its last full answer is kept whatever its age (`listings`); a database from
/// before `listings` is kept by the 304s refreshing the articles the feed first listed. Days
/// pass by moving `last_seen` back in the database.
#[test]
fn articles_a_feed_still_lists_are_not_forgotten_and_fetched_again() {
    let server = start(0);
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(
        dir.path(),
        &[format!("{}/etag.xml", server.base)],
        "allow_private_addresses = true\nforget_after_days = 1",
    );
    let out = dir.path().join("out");
    assert!(pipeline(&["--config", &cfg]).status.success());
    assert_eq!(records(&out).len(), 3);
    let age = |days: f64| {
        let n = state_db(&out)
            .execute("UPDATE articles SET last_seen = last_seen - ?1", [(days * 86_400.0) as i64])
            .unwrap();
        assert_eq!(n, 3);
    };
    let feed_changed = || state_db(&out).execute("UPDATE feeds SET etag = NULL, last_modified = NULL", []).unwrap();
    let resume = || {
        let o = pipeline(&["--config", &cfg, "--resume"]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    };
    // A database from before `listings`: most of a day later, a poll answered 304; then past
    // `forget_after_days` since the last full answer, the feed changes (a full answer listing
    // the same three).
    state_db(&out).execute("DELETE FROM listings", []).unwrap();
    age(0.9);
    resume();
    assert!(server.log.lock().unwrap().if_none_match.contains(&"\"e-v1\"".to_string()));
    age(0.2);
    feed_changed();
    resume();
    // The crawl stopped for five days; the feed changed meanwhile.
    age(5.0);
    feed_changed();
    resume();
    let urls: Vec<String> = records(&out).iter().map(|r| r["metadata"]["url"].as_str().unwrap().to_string()).collect();
    assert_eq!(urls.len(), 3, "articles written again: {urls:?}");
    let log = server.log.lock().unwrap();
    assert_eq!(log.hits["/etag.xml"], 4);
    for i in 0..3 {
        assert_eq!(log.hits[&format!("/articles/e{i}")], 1);
    }
}

/// A link's query is kept as the feed wrote it: two articles that differ only in a byte that is
/// not UTF-8 (`?q=%E9`, `?q=%E8`) are two records (decoding and encoding the query again made
/// them one URL, and the second was never fetched), and `;` or `%20` are not rewritten. A
/// database of an earlier version, which holds such articles under the rewritten spelling, does
/// not take them for new.
#[test]
fn query_strings_are_kept_as_listed_and_earlier_spellings_are_known() {
    let server = start(0);
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(dir.path(), &[format!("{}/query.xml", server.base)], "allow_private_addresses = true");
    let out = dir.path().join("out");
    let o = pipeline(&["--config", &cfg]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let mut urls: Vec<String> =
        records(&out).iter().map(|r| r["metadata"]["url"].as_str().unwrap().to_string()).collect();
    urls.sort();
    let b = &server.base;
    assert_eq!(
        urls,
        [
            format!("{b}/articles/q1?a=1;b=2"),
            format!("{b}/articles/q2?s=a%20b"),
            format!("{b}/articles/q3?q=%E8"),
            format!("{b}/articles/q3?q=%E9")
        ]
    );
    // The database as an earlier version wrote it; the feed polled again lists the same links.
    for (now, then) in [("q1?a=1;b=2", "q1?a=1%3Bb%3D2"), ("q2?s=a%20b", "q2?s=a+b")] {
        let db = state_db(&out);
        for table in ["articles", "listings"] {
            let n = db
                .execute(
                    &format!("UPDATE {table} SET url = ?2 WHERE url = ?1"),
                    [format!("{b}/articles/{now}"), format!("{b}/articles/{then}")],
                )
                .unwrap();
            assert_eq!(n, 1, "{table} {now}");
        }
    }
    let o = pipeline(&["--config", &cfg, "--resume"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(records(&out).len(), 4, "an article of the earlier spelling fetched again");
    let log = server.log.lock().unwrap();
    assert_eq!(log.hits["/query.xml"], 2);
    assert_eq!((log.hits["/articles/q1"], log.hits["/articles/q2"], log.hits["/articles/q3"]), (1, 1, 2));
}

/// A feed parked after three 404s is asked again once a `--max-interval` and comes back when it
/// answers, not on a mere failure (the audit of session 45 found it parked for good: nothing
/// ever asked it again). Time passes by moving the feed's next poll in the database.
#[test]
fn a_parked_feed_is_asked_again_and_comes_back() {
    let server = start(0);
    let dir = tempfile::tempdir().unwrap();
    let extra = "allow_private_addresses = true\nmax_interval_secs = 3600";
    let cfg = config(dir.path(), &[format!("{}/back.xml", server.base)], extra);
    let out = dir.path().join("out");
    let run = |code: i32| {
        let o = pipeline(&["--config", &cfg, "--resume"]);
        assert_eq!(o.status.code(), Some(code), "{}", String::from_utf8_lossy(&o.stderr));
    };
    let status = || -> String { state_db(&out).query_row("SELECT status FROM feeds", [], |r| r.get(0)).unwrap() };
    let hits = || server.log.lock().unwrap().hits["/back.xml"];
    let due = || state_db(&out).execute("UPDATE feeds SET next_poll = 0", []).unwrap();
    // Each run: whether the clock is moved to the feed's next check first, then the exit code,
    // the feed's requests so far and its status.
    let steps = [
        (false, 1, 1, "active"),
        (false, 1, 2, "active"),
        (false, 1, 3, "parked"),
        // Not due: a --once run leaves it alone.
        (false, 0, 3, "parked"),
        // Due: asked; a server error (one poll and its two retries) leaves it parked.
        (true, 1, 6, "parked"),
        (false, 0, 6, "parked"),
        // Due again: it answers, is active again, and its article is fetched.
        (true, 0, 7, "active"),
    ];
    for (i, (make_due, code, requests, want)) in steps.into_iter().enumerate() {
        if make_due {
            due();
        }
        run(code);
        assert_eq!((hits(), status().as_str()), (requests, want), "run {i}");
    }
    assert_eq!(records(&out).len(), 1);
}
