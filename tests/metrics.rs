//! `--metrics-addr`: Prometheus metrics scraped from a running `pipeline --warc` and a running
//! feeds crawl, parsed as the text exposition format (the crawl's counters agree with its
//! `stats.json` at the end); a non-loopback address is refused unless allowed.

use crate::feed_hosts;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use article_pipeline::sources::warc_writer::{Exchange, WarcWriter};

fn warc(path: &std::path::Path, n: usize) {
    let mut w = WarcWriter::create(path, "test").unwrap();
    for i in 0..n {
        let body = format!(
            "<html><body><h1>Story {i}</h1>{}</body></html>",
            format!("<p>The council met about item {i} and the harbour budget, and residents spoke at length.</p>")
                .repeat(8)
        );
        let mut response = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n".to_vec();
        response.extend_from_slice(body.as_bytes());
        let url = format!("https://site{}.test/story/{i}", i % 7);
        let ex = Exchange {
            url: &url,
            date: "2026-11-26T00:00:00Z",
            request: b"GET / HTTP/1.1\r\n\r\n",
            response: &response,
            ip: None,
        };
        w.write_exchange(&ex).unwrap();
    }
    w.finish().unwrap();
}

/// The samples of a scrape: `name{labels}` → value; every sample's metric has a TYPE line.
fn parse(text: &str) -> std::collections::BTreeMap<String, f64> {
    let mut typed = std::collections::HashSet::new();
    let mut out = std::collections::BTreeMap::new();
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("# TYPE ") {
            let mut f = rest.split_whitespace();
            let name = f.next().unwrap().to_string();
            assert!(matches!(f.next(), Some("counter" | "gauge")), "{line}");
            typed.insert(name);
        } else if !line.starts_with('#') && !line.is_empty() {
            let (key, value) = line.rsplit_once(' ').unwrap();
            assert!(typed.contains(key.split('{').next().unwrap()), "no TYPE for {line}");
            out.insert(key.to_string(), value.parse::<f64>().unwrap_or_else(|_| panic!("bad value: {line}")));
        }
    }
    out
}

fn scrape(addr: &str) -> Option<String> {
    let mut s = TcpStream::connect(addr).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    s.write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n").ok()?;
    let mut out = String::new();
    s.read_to_string(&mut out).ok()?;
    let (head, body) = out.split_once("\r\n\r\n")?;
    assert!(head.starts_with("HTTP/1.1 200") && head.contains("text/plain; version=0.0.4"), "{head}");
    Some(body.to_string())
}

#[test]
fn metrics_are_scraped_during_a_warc_run() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.warc.gz");
    warc(&input, 4000);
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let addr = format!("127.0.0.1:{port}");
    let out = dir.path().join("out");
    let mut child = Command::new(env!("CARGO_BIN_EXE_pipeline"))
        .args(["--warc", input.to_str().unwrap(), "--out", out.to_str().unwrap(), "--threads", "1"])
        .args(["--metrics-addr", &addr, "--part-bytes", "200000"])
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let start = Instant::now();
    let mut seen: Option<std::collections::BTreeMap<String, f64>> = None;
    while start.elapsed() < Duration::from_secs(120) {
        if let Some(body) = scrape(&addr) {
            let v = parse(&body);
            if v.get("article_pipeline_records_written_total").copied().unwrap_or(0.0) > 0.0 {
                seen = Some(v);
                break;
            }
        }
        if child.try_wait().unwrap().is_some() {
            break;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    let status = child.wait().unwrap();
    assert!(status.success());
    let v = seen.expect("no scrape with records written while the run lasted");
    assert!(v["article_pipeline_html_bytes_total"] > 0.0);
    assert!(v.contains_key("article_pipeline_mb_per_second"));
    assert!(v["article_pipeline_records_in_total"] >= v["article_pipeline_records_written_total"]);
    assert!(scrape(&addr).is_none(), "the server stops with the run");
}

#[test]
fn a_remote_metrics_address_needs_permission() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.warc.gz");
    warc(&input, 1);
    let out = dir.path().join("out");
    let o = Command::new(env!("CARGO_BIN_EXE_pipeline"))
        .args(["--warc", input.to_str().unwrap(), "--out", out.to_str().unwrap(), "--metrics-addr", "0.0.0.0:0"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("loopback"), "{}", String::from_utf8_lossy(&o.stderr));
}

#[test]
fn metrics_are_scraped_during_a_feeds_crawl_and_agree_with_its_stats() {
    let hosts = feed_hosts::start(2, 30);
    let dir = tempfile::tempdir().unwrap();
    let list = dir.path().join("feeds.txt");
    let feeds: Vec<String> = hosts.bases.iter().map(|b| format!("{b}/feed-0.xml")).collect();
    std::fs::write(&list, feeds.join("\n")).unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let addr = format!("127.0.0.1:{port}");
    let out = dir.path().join("out");
    // Continuous mode: the crawl stays up (next poll in an hour) until it is interrupted. 50 ms
    // between a host's requests keep the crawl under way for 1.5 s or more, for a scrape to
    // see it on a loaded machine.
    let mut child = Command::new(env!("CARGO_BIN_EXE_pipeline"))
        .args(["--feeds", list.to_str().unwrap(), "--out", out.to_str().unwrap(), "--interval", "3600"])
        .args(["--delay-ms", "50", "--allow-private-addresses", "--metrics-addr", &addr, "--scorer", "simple"])
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let start = Instant::now();
    let mut last = None;
    let mut seen = None;
    let mut during = false;
    while start.elapsed() < Duration::from_secs(120) && child.try_wait().unwrap().is_none() {
        if let Some(v) = scrape(&addr).map(|b| parse(&b)) {
            let written = v.get("article_pipeline_records_written_total").copied().unwrap_or(0.0);
            during |= written > 0.0 && written < 60.0;
            let idle = v.get("article_pipeline_queue_length") == Some(&0.0)
                && v.get("article_pipeline_fetches_in_flight") == Some(&0.0);
            if written == 60.0 && idle {
                last = Some(v);
                break;
            }
            seen = Some(v);
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    if last.is_none() {
        let _ = child.kill();
    }
    let v = last.unwrap_or_else(|| panic!("the crawl never showed its 60 records and went idle: {seen:?}"));
    assert!(during, "no scrape saw the crawl under way");
    assert_eq!(v["article_pipeline_feeds{status=\"polled\"}"], 2.0, "{v:?}");
    assert!(v.contains_key("article_pipeline_hosts{state=\"waiting\"}"), "{v:?}");
    let o = Command::new("kill").args(["-INT", &child.id().to_string()]).output().unwrap();
    assert!(o.status.success());
    assert!(child.wait().unwrap().success());
    let stats: serde_json::Value = serde_json::from_slice(&std::fs::read(out.join("stats.json")).unwrap()).unwrap();
    for (metric, field) in [
        ("records_written_total", "written"),
        ("records_in_total", "records_in"),
        ("html_bytes_total", "html_bytes"),
        ("text_bytes_total", "text_bytes"),
        ("near_duplicates_total", "near_duplicates"),
    ] {
        assert_eq!(v[&format!("article_pipeline_{metric}")], stats[field].as_f64().unwrap(), "{metric} vs {field}");
    }
}
