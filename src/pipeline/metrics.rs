//! Prometheus metrics of a running pipeline (`--metrics-addr 127.0.0.1:9898`): the run's
//! counters (records, skips and failures by reason, bytes, MB/s, parts, the last commit) and,
//! for a feeds crawl, the frontier's and the feeds' gauges, served as `GET /metrics` in the
//! Prometheus text exposition format (version 0.0.4) by a small HTTP/1.1 server on its own
//! thread. Off by default; loopback addresses only unless the user allows others.

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use super::Stats;

/// What the server reports; the sink thread and the feeds loop update it.
#[derive(Debug, Default)]
pub struct Metrics {
    inner: Mutex<Snapshot>,
}

#[derive(Debug, Default, Clone)]
struct Snapshot {
    stats: Stats,
    last_commit: Option<f64>,
    /// Gauges by name (and label set), set by the feeds loop.
    gauges: BTreeMap<String, f64>,
}

impl Metrics {
    /// Takes the run's counters as they are now.
    pub fn set_stats(&self, stats: &Stats) {
        let mut s = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        // The per-host table of a feeds crawl is left out: it can be large, and is in `status`.
        s.stats = Stats { hosts: BTreeMap::new(), ..stats.clone() };
    }

    /// Notes that a part was committed now.
    pub fn committed(&self) {
        let now = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0.0, |d| d.as_secs_f64());
        self.inner.lock().unwrap_or_else(|e| e.into_inner()).last_commit = Some(now);
    }

    /// Sets a gauge: `name` with its labels as Prometheus writes them (`feeds{status="ok"}`).
    pub fn set_gauge(&self, name: &str, value: f64) {
        self.inner.lock().unwrap_or_else(|e| e.into_inner()).gauges.insert(name.to_string(), value);
    }

    /// The metrics in the text exposition format.
    pub fn render(&self) -> String {
        let s = self.inner.lock().unwrap_or_else(|e| e.into_inner()).clone();
        let mut out = String::new();
        let mut metric = |name: &str, kind: &str, help: &str, samples: &[(String, f64)]| {
            out.push_str(&format!("# HELP article_pipeline_{name} {help}\n# TYPE article_pipeline_{name} {kind}\n"));
            for (labels, v) in samples {
                out.push_str(&format!("article_pipeline_{name}{labels} {v}\n"));
            }
        };
        let one = |v: f64| vec![(String::new(), v)];
        let by_reason = |m: &BTreeMap<String, u64>| -> Vec<(String, f64)> {
            m.iter().map(|(r, n)| (format!("{{reason=\"{}\"}}", escape(r)), *n as f64)).collect()
        };
        let st = &s.stats;
        metric("records_in_total", "counter", "Inputs seen (records, skips and failures).", &one(st.records_in as f64));
        metric("records_written_total", "counter", "Records written.", &one(st.written as f64));
        metric("near_duplicates_total", "counter", "Records marked near-duplicate.", &one(st.near_duplicates as f64));
        metric("skipped_total", "counter", "Inputs skipped, by reason.", &by_reason(&st.skipped));
        metric("failed_total", "counter", "Inputs failed, by reason.", &by_reason(&st.failed));
        metric("html_bytes_total", "counter", "Bytes of HTML extracted.", &one(st.html_bytes as f64));
        metric("text_bytes_total", "counter", "Bytes of text written.", &one(st.text_bytes as f64));
        metric("parts_total", "counter", "Output parts committed.", &one(st.parts as f64));
        metric("mb_per_second", "gauge", "MB of HTML per second over the run.", &one(st.mb_per_s));
        if let Some(t) = s.last_commit {
            metric("last_commit_timestamp_seconds", "gauge", "Unix time of the last commit.", &one(t));
        }
        let mut by_name: BTreeMap<&str, Vec<(String, f64)>> = BTreeMap::new();
        for (k, v) in &s.gauges {
            let (name, labels) = k.split_once('{').map_or((k.as_str(), String::new()), |(n, l)| (n, format!("{{{l}")));
            by_name.entry(name).or_default().push((labels, *v));
        }
        for (name, samples) in by_name {
            metric(name, "gauge", "Feeds crawl state.", &samples);
        }
        out
    }
}

/// A label value with `\`, `"` and newlines escaped, as the format asks.
fn escape(v: &str) -> String {
    v.replace('\\', "\\\\").replace('"', "\\\"").replace('\n', "\\n")
}

/// Is `addr` one the server may listen on: loopback, or anything when `allow_remote`?
pub fn check_addr(addr: &str, allow_remote: bool) -> Result<SocketAddr, String> {
    let a: SocketAddr = addr.parse().map_err(|_| format!("run.metrics_addr `{addr}` is not an address:port"))?;
    if !a.ip().is_loopback() && !allow_remote {
        return Err(format!(
            "run.metrics_addr `{addr}` is not a loopback address; pass --metrics-allow-remote to serve metrics to others"
        ));
    }
    Ok(a)
}

/// The metrics server; stops when dropped.
pub struct MetricsServer {
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
    addr: SocketAddr,
}

impl MetricsServer {
    /// Listens on `addr` and serves `metrics` until dropped.
    pub fn start(addr: SocketAddr, metrics: Arc<Metrics>) -> std::io::Result<MetricsServer> {
        let listener = TcpListener::bind(addr)?;
        let addr = listener.local_addr()?;
        listener.set_nonblocking(true)?;
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let thread = std::thread::Builder::new().name("metrics".into()).spawn(move || {
            while !flag.load(Ordering::Relaxed) {
                match listener.accept() {
                    Ok((stream, _)) => {
                        let _ = answer(stream, &metrics);
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                        std::thread::sleep(Duration::from_millis(20));
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(20)),
                }
            }
        })?;
        Ok(MetricsServer { stop, thread: Some(thread), addr })
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }
}

impl Drop for MetricsServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Reads one request head (bounded in size and time) and answers it.
fn answer(mut stream: TcpStream, metrics: &Metrics) -> std::io::Result<()> {
    stream.set_nonblocking(false)?;
    stream.set_read_timeout(Some(Duration::from_secs(2)))?;
    stream.set_write_timeout(Some(Duration::from_secs(2)))?;
    let mut head = Vec::new();
    let mut buf = [0u8; 1024];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") && head.len() < 8192 {
        let n = stream.read(&mut buf)?;
        if n == 0 {
            break;
        }
        head.extend_from_slice(&buf[..n]);
    }
    let line = String::from_utf8_lossy(&head);
    let mut parts = line.split_whitespace();
    let (method, path) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
    let (status, body, kind) = match (method, path.split('?').next().unwrap_or("")) {
        ("GET", "/metrics") => ("200 OK", metrics.render(), "text/plain; version=0.0.4; charset=utf-8"),
        ("GET", _) => ("404 Not Found", "not found: try /metrics\n".to_string(), "text/plain"),
        _ => ("405 Method Not Allowed", "GET /metrics only\n".to_string(), "text/plain"),
    };
    let response = format!(
        "HTTP/1.1 {status}\r\nContent-Type: {kind}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(response.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn get(addr: SocketAddr, path: &str) -> String {
        let mut s = TcpStream::connect(addr).unwrap();
        s.write_all(format!("GET {path} HTTP/1.1\r\nHost: x\r\n\r\n").as_bytes()).unwrap();
        let mut out = String::new();
        s.read_to_string(&mut out).unwrap();
        out
    }

    /// Parses the text format: every sample line is `name{labels} value` with a number value,
    /// and every metric has its HELP and TYPE lines first.
    fn parse(text: &str) -> BTreeMap<String, f64> {
        let mut out = BTreeMap::new();
        let mut typed = std::collections::HashSet::new();
        for line in text.lines() {
            if let Some(rest) = line.strip_prefix("# TYPE ") {
                typed.insert(rest.split_whitespace().next().unwrap().to_string());
                continue;
            }
            if line.starts_with('#') || line.is_empty() {
                continue;
            }
            let (key, value) = line.rsplit_once(' ').unwrap();
            let name = key.split('{').next().unwrap();
            assert!(typed.contains(name), "{name} has no TYPE line");
            out.insert(key.to_string(), value.parse::<f64>().unwrap());
        }
        out
    }

    #[test]
    fn metrics_are_served_in_the_text_format() {
        let m = Arc::new(Metrics::default());
        let mut st = Stats { written: 7, html_bytes: 1000, ..Stats::default() };
        st.failed.insert("warc_truncated".into(), 2);
        m.set_stats(&st);
        m.committed();
        m.set_gauge("feeds{status=\"ok\"}", 3.0);
        m.set_gauge("feeds{status=\"parked\"}", 1.0);
        let server = MetricsServer::start("127.0.0.1:0".parse().unwrap(), m.clone()).unwrap();
        let response = get(server.addr(), "/metrics");
        assert!(response.starts_with("HTTP/1.1 200 OK"), "{response}");
        let body = response.split_once("\r\n\r\n").unwrap().1;
        let v = parse(body);
        assert_eq!(v["article_pipeline_records_written_total"], 7.0);
        assert_eq!(v["article_pipeline_failed_total{reason=\"warc_truncated\"}"], 2.0);
        assert_eq!(v["article_pipeline_feeds{status=\"parked\"}"], 1.0);
        assert!(v["article_pipeline_last_commit_timestamp_seconds"] > 1.7e9);
        assert!(get(server.addr(), "/other").starts_with("HTTP/1.1 404"));
    }

    #[test]
    fn only_loopback_unless_allowed() {
        assert!(check_addr("127.0.0.1:9898", false).is_ok());
        assert!(check_addr("[::1]:9898", false).is_ok());
        assert!(check_addr("0.0.0.0:9898", false).unwrap_err().contains("loopback"));
        assert!(check_addr("0.0.0.0:9898", true).is_ok());
        assert!(check_addr("localhost", false).is_err());
    }
}
