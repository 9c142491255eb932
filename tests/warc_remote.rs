//! `pipeline --warc http://…` against an axum server on 127.0.0.1 serving a generated
//! .warc.gz: whole; dropping the connection halfway (the reader resumes with a Range request);
//! dropping it while ignoring ranges (the reader reads again and skips what it has); and
//! dropping it every time (the file is counted as failed and named, the run goes on). The
//! records equal a local read.

use std::path::Path;
use std::process::{Command, Output};
use std::sync::{Arc, Mutex};

use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, Uri};
use axum::response::Response;

use article_pipeline::sink::{list_parts, read_part};

use crate::common;

/// Requests seen: (path, Range header).
type Requests = Arc<Mutex<Vec<(String, Option<String>)>>>;

#[derive(Clone)]
struct Served {
    warc: Arc<Vec<u8>>,
    log: Requests,
}

fn page(i: usize) -> String {
    let p = format!("<p>Story {i} tells how the harbour council voted on the new ferry timetable today.</p>");
    format!(
        "<html><head><title>S{i}</title></head><body><nav><a href=/>Home</a></nav><article>{}</article></body></html>",
        p.repeat(8)
    )
}

fn warc(path: &Path) {
    common::write_warc(path, (0..40).map(|i| (format!("http://remote.test/{i}"), page(i))));
}

/// A body of `bytes` that fails (dropping the connection) after `cut` bytes, if given.
fn body(bytes: Vec<u8>, cut: Option<usize>) -> Body {
    match cut {
        None => Body::from(bytes),
        Some(cut) => {
            // The head and the first bytes go out; a moment later the connection is dropped.
            let first = Bytes::from(bytes[..cut.min(bytes.len())].to_vec());
            let stream = futures_util::stream::unfold(0u8, move |step| {
                let first = first.clone();
                async move {
                    match step {
                        0 => Some((Ok::<Bytes, std::io::Error>(first), 1)),
                        1 => {
                            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
                            Some((Err(std::io::Error::other("connection dropped by the test server")), 2))
                        }
                        _ => None,
                    }
                }
            });
            Body::from_stream(stream)
        }
    }
}

async fn handle(State(s): State<Served>, uri: Uri, headers: HeaderMap) -> Response {
    let path = uri.path().to_string();
    let range = headers.get("range").and_then(|v| v.to_str().ok()).map(str::to_string);
    let n = {
        let mut log = s.log.lock().unwrap();
        log.push((path.clone(), range.clone()));
        log.iter().filter(|(p, _)| *p == path).count()
    };
    let all = s.warc.as_ref().clone();
    let half = all.len() / 2;
    let start = range
        .as_deref()
        .and_then(|r| r.strip_prefix("bytes="))
        .and_then(|r| r.trim_end_matches('-').parse::<usize>().ok())
        .unwrap_or(0);
    let full = |cut| Response::builder().header("content-length", all.len()).body(body(all.clone(), cut)).unwrap();
    match path.as_str() {
        "/whole.warc.gz" => full(None),
        // Drops the first connection halfway; honours ranges.
        "/drop.warc.gz" if n == 1 => full(Some(half)),
        "/drop.warc.gz" => Response::builder()
            .status(206)
            .header("content-range", format!("bytes {start}-{}/{}", all.len() - 1, all.len()))
            .header("content-length", all.len() - start)
            .body(Body::from(all[start..].to_vec()))
            .unwrap(),
        // Drops the first connection halfway; ignores ranges (always 200, whole file).
        "/norange.warc.gz" => full(if n == 1 { Some(half) } else { None }),
        // Drops every connection.
        "/broken.warc.gz" => full(Some(half)),
        _ => Response::builder().status(404).body(Body::empty()).unwrap(),
    }
}

fn pipeline(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_pipeline")).args(args).output().expect("run pipeline")
}

fn texts(out: &Path) -> Vec<(String, String)> {
    list_parts(out)
        .unwrap()
        .iter()
        .flat_map(|p| read_part(p).unwrap())
        .map(|r| (r["id"].as_str().unwrap().to_string(), r["text"].as_str().unwrap().to_string()))
        .collect()
}

#[test]
fn remote_warcs_stream_resume_after_a_drop_and_match_a_local_read() {
    let dir = tempfile::tempdir().unwrap();
    let local = dir.path().join("local.warc.gz");
    warc(&local);
    let served = Served { warc: Arc::new(std::fs::read(&local).unwrap()), log: Arc::default() };
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
    let listener = rt.block_on(tokio::net::TcpListener::bind("127.0.0.1:0")).unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let app = axum::Router::new().fallback(handle).with_state(served.clone());
    rt.spawn(async move { axum::serve(listener, app).await.unwrap() });

    let reference_out = dir.path().join("ref");
    assert_eq!(
        pipeline(&["--warc", local.to_str().unwrap(), "--out", reference_out.to_str().unwrap()]).status.code(),
        Some(0)
    );
    let reference = texts(&reference_out);
    assert_eq!(reference.len(), 40);

    for name in ["whole", "drop", "norange"] {
        let out = dir.path().join(name);
        let url = format!("{base}/{name}.warc.gz");
        let o = pipeline(&["--warc", &url, "--out", out.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(0), "{name}: {}", String::from_utf8_lossy(&o.stderr));
        assert_eq!(texts(&out), reference, "{name}: records differ from the local read");
    }
    let log = served.log.lock().unwrap().clone();
    let ranges: Vec<&Option<String>> = log.iter().filter(|(p, _)| p == "/drop.warc.gz").map(|(_, r)| r).collect();
    assert_eq!(ranges.len(), 2);
    assert!(ranges[1].as_deref().is_some_and(|r| r.starts_with("bytes=") && r != "bytes=0-"), "{ranges:?}");

    // Two passes read a remote input twice (the first counts site memory) and write what two
    // passes over the local file write.
    let two = |input: &str, name: &str| {
        let out = dir.path().join(name);
        let o = pipeline(&["--warc", input, "--out", out.to_str().unwrap(), "--site-memory-two-pass"]);
        assert_eq!(o.status.code(), Some(0), "{name}: {}", String::from_utf8_lossy(&o.stderr));
        texts(&out)
    };
    let before = served.log.lock().unwrap().iter().filter(|(p, _)| p == "/whole.warc.gz").count();
    assert_eq!(two(&format!("{base}/whole.warc.gz"), "two-remote"), two(local.to_str().unwrap(), "two-local"));
    let after = served.log.lock().unwrap().iter().filter(|(p, _)| p == "/whole.warc.gz").count();
    assert_eq!(after - before, 2, "the first pass and the second each read the input once");

    // A server that drops every connection: the file fails, named, after bounded retries;
    // the other input is still read.
    let out = dir.path().join("broken");
    let url = format!("{base}/broken.warc.gz");
    let o = pipeline(&["--warc", &url, local.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("broken.warc.gz") && stderr.contains("gave up after"), "{stderr}");
    let got = texts(&out);
    assert!(got.len() >= 40, "the local file's records are written: {}", got.len());
}
