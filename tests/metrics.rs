//! `--metrics-addr`: Prometheus metrics scraped from a running `pipeline --warc`, parsed as the
//! text exposition format; a non-loopback address is refused unless allowed.

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
