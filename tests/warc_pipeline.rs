//! `pipeline --warc` end to end on WARC files the tests write (gzip and plain, a truncated
//! last record, a corrupt member in the middle, non-HTML and non-response records), the
//! records read back from the .jsonl.zst parts, kill -9 and `--resume`, and config files.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use article_pipeline::pipeline::shard::Shard;
use article_pipeline::pipeline::warc_run::input_key;
use article_pipeline::sink::{list_parts, read_part};
use article_pipeline::sources::warc_writer::{Exchange, WarcWriter};
use serde_json::Value;

fn pipeline(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_pipeline")).args(args).output().expect("run pipeline")
}

const WORDS: &[&str] = &[
    "council",
    "river",
    "budget",
    "school",
    "harbor",
    "festival",
    "library",
    "bridge",
    "election",
    "museum",
    "storm",
    "market",
    "garden",
    "station",
    "hospital",
    "orchestra",
    "stadium",
    "vineyard",
    "factory",
    "airport",
    "island",
];

/// A news-like page: navigation, an article of `paras` paragraphs drawn from `seed`, a footer.
fn page(seed: usize, paras: usize) -> String {
    let mut s = seed as u64 + 1;
    let mut word = || {
        s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        WORDS[(s >> 33) as usize % WORDS.len()]
    };
    let mut body = String::new();
    for _ in 0..paras {
        body.push_str("<p>");
        for _ in 0..40 {
            body.push_str(word());
            body.push(' ');
        }
        body.push_str("today.</p>\n");
    }
    format!(
        "<!doctype html><html><head><title>Story {seed}</title></head><body>\
         <nav><a href=/>Home</a> <a href=/news>News</a> <a href=/sport>Sport</a></nav>\
         <article><h1>Story number {seed}</h1>{body}</article>\
         <footer><a href=/about>About us</a> <a href=/privacy>Privacy</a></footer></body></html>"
    )
}

fn http(content_type: &str, body: &[u8], extra: &str) -> Vec<u8> {
    let mut r = format!("HTTP/1.1 200 OK\r\nContent-Type: {content_type}\r\n{extra}\r\n").into_bytes();
    r.extend_from_slice(body);
    r
}

fn exchange(w: &mut WarcWriter, url: &str, response: &[u8]) -> (u64, String) {
    let ex = Exchange {
        url,
        date: "2026-11-22T10:00:00Z",
        request: b"GET / HTTP/1.1\r\n\r\n",
        response,
        ip: Some("127.0.0.1"),
    };
    let (offset, id) = w.write_exchange(&ex).unwrap();
    (offset, id.trim_matches(['<', '>']).to_string())
}

/// Runs the pipeline and checks it was refused as a usage or state error (exit 2) with
/// `needle` in its message.
fn refused(args: &[&str], needle: &str) {
    let o = pipeline(args);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{args:?}: {stderr}");
    assert!(stderr.contains(needle), "{args:?}: {stderr}");
}

fn records(out: &Path) -> Vec<Value> {
    list_parts(out).unwrap().iter().flat_map(|p| read_part(p).unwrap()).collect()
}

/// A mixed WARC: 6 article pages (page 4 a near copy of page 0), a PDF, a 404, a gzip-encoded
/// chunked page, a windows-1252 page, and a revisit record. Returns the HTML pages' ids in order.
fn mixed_warc(path: &Path) -> Vec<String> {
    let mut w = WarcWriter::create(path, "test").unwrap();
    let mut ids = Vec::new();
    for i in 0..6 {
        let html = if i == 4 { page(0, 6).replace("Story 0", "Story 0 (updated)") } else { page(i, 6) };
        ids.push(
            exchange(&mut w, &format!("http://news.test/{i}"), &http("text/html; charset=utf-8", html.as_bytes(), ""))
                .1,
        );
    }
    exchange(&mut w, "http://news.test/doc.pdf", &http("application/pdf", b"%PDF-1.4 binary", ""));
    let mut not_found = b"HTTP/1.1 404 Not Found\r\nContent-Type: text/html\r\n\r\n".to_vec();
    not_found.extend_from_slice(page(99, 3).as_bytes());
    exchange(&mut w, "http://news.test/missing", &not_found);
    // gzip content-coding inside chunked transfer-coding.
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    std::io::Write::write_all(&mut gz, page(6, 6).as_bytes()).unwrap();
    let gz = gz.finish().unwrap();
    let mut chunked = Vec::new();
    for c in gz.chunks(1000) {
        chunked.extend_from_slice(format!("{:x}\r\n", c.len()).as_bytes());
        chunked.extend_from_slice(c);
        chunked.extend_from_slice(b"\r\n");
    }
    chunked.extend_from_slice(b"0\r\n\r\n");
    ids.push(
        exchange(
            &mut w,
            "http://news.test/gz",
            &http("text/html", &chunked, "Content-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n"),
        )
        .1,
    );
    let latin = page(7, 6).replace("today", "caf\u{e9}");
    let (latin, _, _) = encoding_rs::WINDOWS_1252.encode(&latin);
    ids.push(exchange(&mut w, "http://news.test/latin", &http("text/html; charset=windows-1252", &latin, "")).1);
    w.write_record(
        &[("WARC-Type", "revisit"), ("WARC-Target-URI", "http://news.test/0")],
        "application/http",
        b"",
        None,
    )
    .unwrap();
    w.finish().unwrap();
    ids
}

#[test]
fn warc_records_are_extracted_fingerprinted_and_written_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let warc = dir.path().join("mixed.warc.gz");
    let ids = mixed_warc(&warc);
    let out = dir.path().join("out");
    let o = pipeline(&["--warc", warc.to_str().unwrap(), "--out", out.to_str().unwrap(), "--threads", "2"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let recs = records(&out);
    let got: Vec<&str> = recs.iter().map(|r| r["id"].as_str().unwrap()).collect();
    assert_eq!(got, ids);
    let r0 = &recs[0];
    assert!(r0["text"].as_str().unwrap().contains("today."));
    assert!(!r0["text"].as_str().unwrap().contains("Privacy"));
    let m = &r0["metadata"];
    assert_eq!(m["url"], "http://news.test/0");
    assert_eq!(m["source"]["kind"], "warc");
    assert!(m["source"]["offset"].as_u64().unwrap() > 0);
    assert_eq!(m["status"], 200);
    assert_eq!(m["html_title"], "Story 0");
    assert_eq!(m["title"], "Story number 0", "the <h1> is the article's title");
    assert!(m["lang"].is_string(), "the language of the (random-word) text");
    assert!(m["authors"].as_array().unwrap().is_empty());
    assert_eq!(m["fetched_at"], "2026-11-22T10:00:00Z");
    assert_eq!(m["extraction"]["scorer"], "nb");
    assert_eq!(m["fingerprints"]["minhash"].as_array().unwrap().len(), 112);
    assert_eq!(m["fingerprints"]["bands"].as_array().unwrap().len(), 14);
    assert!(m["near_duplicate_of"].is_null());
    // The near copy points at the first one.
    assert_eq!(recs[4]["metadata"]["near_duplicate_of"], ids[0].as_str());
    // Content- and transfer-coding undone; windows-1252 decoded.
    assert!(recs[6]["text"].as_str().unwrap().contains("today."));
    assert!(recs[7]["text"].as_str().unwrap().contains("café"));
    assert_eq!(recs[7]["metadata"]["charset"], "windows-1252");

    let stats: Value = serde_json::from_slice(&std::fs::read(out.join("stats.json")).unwrap()).unwrap();
    assert_eq!(stats["written"], 8);
    assert_eq!(stats["near_duplicates"], 1);
    assert_eq!(stats["skipped"]["not_html"], 1);
    assert_eq!(stats["skipped"]["http_status"], 1);
    assert_eq!(stats["skipped"]["revisit"], 1);
    assert_eq!(stats["skipped"]["not_response"], 11); // warcinfo + 10 requests

    // --drop-near-duplicates leaves the copy out.
    let out2 = dir.path().join("out2");
    let o = pipeline(&["--warc", warc.to_str().unwrap(), "--out", out2.to_str().unwrap(), "--drop-near-duplicates"]);
    assert!(o.status.success());
    assert_eq!(records(&out2).len(), 7);

    // A second run into the same folder without --resume is refused (exit 2), nothing changes.
    let o = pipeline(&["--warc", warc.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(records(&out).len(), 8);
}

#[test]
fn damaged_warcs_count_failures_keep_good_records_and_exit_1() {
    let dir = tempfile::tempdir().unwrap();
    // gzip with a corrupt member in the middle.
    let corrupt = dir.path().join("corrupt.warc.gz");
    let mut w = WarcWriter::create(&corrupt, "test").unwrap();
    let mut offsets = Vec::new();
    for i in 0..5 {
        offsets.push(exchange(&mut w, &format!("http://a.test/{i}"), &http("text/html", page(i, 4).as_bytes(), "")).0);
    }
    w.finish().unwrap();
    let mut bytes = std::fs::read(&corrupt).unwrap();
    let o = offsets[2] as usize;
    for b in &mut bytes[o + 30..o + 80] {
        *b = !*b;
    }
    std::fs::write(&corrupt, &bytes).unwrap();
    // Plain WARC with a truncated last record.
    let plain = dir.path().join("truncated.warc");
    let gz_path = dir.path().join("t.warc.gz");
    let mut w = WarcWriter::create(&gz_path, "test").unwrap();
    for i in 10..14 {
        exchange(&mut w, &format!("http://b.test/{i}"), &http("text/html", page(i, 4).as_bytes(), ""));
    }
    w.finish().unwrap();
    let mut unz = Vec::new();
    std::io::Read::read_to_end(
        &mut flate2::read::MultiGzDecoder::new(std::fs::File::open(&gz_path).unwrap()),
        &mut unz,
    )
    .unwrap();
    unz.truncate(unz.len() - 200);
    std::fs::write(&plain, &unz).unwrap();
    let missing = dir.path().join("missing.warc.gz");

    let out = dir.path().join("out");
    let o = pipeline(&[
        "--warc",
        corrupt.to_str().unwrap(),
        plain.to_str().unwrap(),
        missing.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    // A missing input is a usage error before anything runs.
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("missing.warc.gz"));

    let o = pipeline(&["--warc", corrupt.to_str().unwrap(), plain.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains(&format!("corrupt.warc.gz: record at byte {}", offsets[2])), "{stderr}");
    assert!(stderr.contains("truncated.warc: record at byte"), "{stderr}");
    let urls: Vec<String> = records(&out).iter().map(|r| r["metadata"]["url"].as_str().unwrap().to_string()).collect();
    assert_eq!(
        urls,
        [
            "http://a.test/0",
            "http://a.test/1",
            "http://a.test/3",
            "http://a.test/4",
            "http://b.test/10",
            "http://b.test/11",
            "http://b.test/12"
        ]
    );
    let stats: Value = serde_json::from_slice(&std::fs::read(out.join("stats.json")).unwrap()).unwrap();
    assert_eq!(stats["failed"]["warc_corrupt_gzip"], 1);
    assert_eq!(stats["failed"]["warc_truncated"], 1);
}

/// A WARC of `n` pages, with its response ids in order.
fn big_warc(path: &Path, n: usize) -> Vec<String> {
    let mut w = WarcWriter::create(path, "test").unwrap();
    let ids = (0..n)
        .map(|i| {
            exchange(&mut w, &format!("http://big.test/{i}"), &http("text/html", page(i + 1000, 8).as_bytes(), "")).1
        })
        .collect();
    w.finish().unwrap();
    ids
}

fn wait_for_parts(out: &Path, n: usize, child: &mut std::process::Child) -> bool {
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(120) {
        if list_parts(out).map(|p| p.len() >= n).unwrap_or(false) {
            return true;
        }
        if child.try_wait().unwrap().is_some() {
            return false;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    false
}

#[test]
fn kill_9_then_resume_loses_and_duplicates_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a.warc.gz");
    let b = dir.path().join("b.warc.gz");
    let mut ids = big_warc(&a, 1500);
    ids.extend(big_warc(&b, 1500));
    let out = dir.path().join("out");
    let args = |resume: bool| {
        let mut v: Vec<String> = vec![
            "--warc".into(),
            a.display().to_string(),
            b.display().to_string(),
            "--out".into(),
            out.display().to_string(),
            "--part-bytes".into(),
            "20000".into(),
            "--threads".into(),
            "2".into(),
            "--scorer".into(),
            "simple".into(),
        ];
        if resume {
            v.push("--resume".into());
        }
        v
    };
    let mut killed_mid_run = false;
    // Kill once early (first file) and once later (second file), resuming each time.
    for (round, parts) in [(0, 2), (1, 40)] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_pipeline"))
            .args(args(round > 0))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        if wait_for_parts(&out, parts, &mut child) && child.try_wait().unwrap().is_none() {
            child.kill().unwrap(); // SIGKILL
            killed_mid_run = true;
            child.wait().unwrap();
            // A dedup of what the killed run committed says it did not finish.
            let dd = dir.path().join(format!("dd{round}"));
            let o = pipeline(&["dedup", out.to_str().unwrap(), "--out", dd.to_str().unwrap()]);
            let stderr = String::from_utf8_lossy(&o.stderr);
            assert_eq!(o.status.code(), Some(0), "{stderr}");
            assert!(stderr.contains("has not finished"), "{stderr}");
        }
        child.wait().unwrap();
    }
    let o = pipeline(&args(true).iter().map(String::as_str).collect::<Vec<_>>());
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(killed_mid_run, "the run finished before it could be killed");
    let got: Vec<String> = records(&out).iter().map(|r| r["id"].as_str().unwrap().to_string()).collect();
    let unique: HashSet<&String> = got.iter().collect();
    assert_eq!(unique.len(), got.len(), "duplicated records");
    assert_eq!(got, ids, "lost or reordered records");
    let stats: Value = serde_json::from_slice(&std::fs::read(out.join("stats.json")).unwrap()).unwrap();
    assert_eq!(stats["written"], 3000);
    assert!(!std::fs::read_dir(&out).unwrap().any(|e| e.unwrap().file_name().to_string_lossy().ends_with(".tmp")));
}

#[test]
fn config_files_run_and_report_every_problem() {
    let dir = tempfile::tempdir().unwrap();
    let warc = dir.path().join("in.warc.gz");
    let ids = big_warc(&warc, 3);
    let config = dir.path().join("p.toml");
    std::fs::write(&config, "[warc]\npaths = ['in.warc.gz']\n[extractor]\nscorer = 'simple'\n[sink]\nout = 'out'\n")
        .unwrap();
    let o = pipeline(&["--config", config.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let recs = records(&dir.path().join("out"));
    assert_eq!(recs.iter().map(|r| r["id"].as_str().unwrap()).collect::<Vec<_>>(), ids);
    assert_eq!(recs[0]["metadata"]["extraction"]["scorer"], "simple");

    std::fs::write(
        &config,
        "[warc]\npaths = ['in.warc.gz']\nrecursive = true\n[sink]\nout = 'out'\nlevel = 3\n[extractor]\nscorr = 'nb'\n",
    )
    .unwrap();
    let o = pipeline(&["--config", config.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2));
    for key in ["warc.recursive", "sink.level", "extractor.scorr"] {
        assert!(stderr.contains(key), "{key} missing in: {stderr}");
    }

    // The shipped example configurations parse.
    for name in ["warc-offline.toml", "news-feeds.toml"] {
        let p: PathBuf = [env!("CARGO_MANIFEST_DIR"), "pipelines", name].iter().collect();
        article_pipeline::pipeline::PipelineConfig::load(&p).unwrap();
    }
}

/// A WARC of `n` HTML pages, `http://HOST/0` … of `paras` paragraphs each.
fn pages_warc(path: &Path, host: &str, n: usize, paras: usize) {
    let mut w = WarcWriter::create(path, "test").unwrap();
    for i in 0..n {
        exchange(&mut w, &format!("http://{host}/{i}"), &http("text/html", page(i, paras).as_bytes(), ""));
    }
    w.finish().unwrap();
}

#[test]
fn a_crc_damaged_last_member_is_one_gzip_failure_and_each_record_counts_once() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("crc.warc.gz");
    pages_warc(&path, "c.test", 7, 4);
    let mut bytes = std::fs::read(&path).unwrap();
    let n = bytes.len();
    bytes[n - 8] ^= 0xff; // the last member's CRC32
    std::fs::write(&path, &bytes).unwrap();
    let out = dir.path().join("out");
    let o = pipeline(&["--warc", path.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("corrupt gzip member"), "{stderr}");
    let urls: Vec<String> = records(&out).iter().map(|r| r["metadata"]["url"].as_str().unwrap().to_string()).collect();
    assert_eq!(urls, (0..6).map(|i| format!("http://c.test/{i}")).collect::<Vec<_>>());
    let stats: Value = serde_json::from_slice(&std::fs::read(out.join("stats.json")).unwrap()).unwrap();
    assert_eq!(stats["failed"]["warc_corrupt_gzip"], 1, "{stats}");
    assert!(stats["failed"].get("warc_truncated").is_none(), "{stats}");
    assert_eq!(stats["written"], 6, "{stats}");
}

#[test]
fn an_output_folder_of_another_run_is_refused_whatever_the_mode() {
    let dir = tempfile::tempdir().unwrap();
    let warc = dir.path().join("in.warc.gz");
    mixed_warc(&warc);
    // A feeds run (its feed unreachable) leaves its state in `feeds-out`.
    let feeds = dir.path().join("feeds.txt");
    // A loopback port nothing listens on (bound, then released), not a fixed one.
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    std::fs::write(&feeds, format!("http://127.0.0.1:{port}/feed.xml\n")).unwrap();
    let feeds_out = dir.path().join("feeds-out");
    let o = pipeline(&["--feeds", feeds.to_str().unwrap(), "--once", "--out", feeds_out.to_str().unwrap()]);
    assert!(feeds_out.join("state.sqlite").exists(), "{}", String::from_utf8_lossy(&o.stderr));
    for resume in [false, true] {
        let mut args = vec!["--warc", warc.to_str().unwrap(), "--out", feeds_out.to_str().unwrap()];
        if resume {
            args.push("--resume");
        }
        refused(&args, "other mode");
        assert!(list_parts(&feeds_out).unwrap().is_empty(), "resume={resume}: a part was added");
    }

    // A WARC run's folder is refused to a feeds run, and a folder holding only parts (its
    // state file lost) to any run without --resume.
    let warc_out = dir.path().join("warc-out");
    assert_eq!(
        pipeline(&["--warc", warc.to_str().unwrap(), "--out", warc_out.to_str().unwrap()]).status.code(),
        Some(0)
    );
    let stats_before = std::fs::read(warc_out.join("stats.json")).unwrap();
    let o = pipeline(&["--feeds", feeds.to_str().unwrap(), "--once", "--out", warc_out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", String::from_utf8_lossy(&o.stderr));
    std::fs::remove_file(warc_out.join("state.json")).unwrap();
    refused(&["--warc", warc.to_str().unwrap(), "--out", warc_out.to_str().unwrap()], "part-00000.jsonl.zst");
    assert_eq!(std::fs::read(warc_out.join("stats.json")).unwrap(), stats_before, "stats.json was overwritten");
    assert_eq!(list_parts(&warc_out).unwrap().len(), 1);
}

#[test]
fn shards_run_side_by_side_cover_every_input_once_and_a_killed_shard_resumes() {
    let dir = tempfile::tempdir().unwrap();
    // Seven WARC files (the sort order is not the creation order), one larger.
    let mut files = Vec::new();
    for (i, name) in ["e", "b", "g", "a", "f", "c"].iter().enumerate() {
        let p = dir.path().join(format!("{name}.warc.gz"));
        let mut w = WarcWriter::create(&p, "test").unwrap();
        for j in 0..4 {
            let url = format!("http://{name}.test/{j}");
            exchange(&mut w, &url, &http("text/html", page(i * 10 + j, 5).as_bytes(), ""));
        }
        w.finish().unwrap();
        files.push(p);
    }
    let big = dir.path().join("d.warc.gz");
    big_warc(&big, 1500);
    files.push(big);
    let paths: Vec<String> = files.iter().map(|p| p.display().to_string()).collect();

    // One process over everything: the reference.
    let single = dir.path().join("single");
    let mut args: Vec<&str> = vec!["--warc"];
    args.extend(paths.iter().map(String::as_str));
    args.extend(["--out", single.to_str().unwrap(), "--threads", "1"]);
    assert_eq!(pipeline(&args).status.code(), Some(0));

    // Three shards at once, K from the variable a Slurm job array sets.
    let root = dir.path().join("sharded");
    let shard_cmd = |k: usize| {
        let mut c = Command::new(env!("CARGO_BIN_EXE_pipeline"));
        c.arg("--warc").args(&paths).args(["--out", root.to_str().unwrap(), "--threads", "1", "--shard", "auto/3"]);
        c.args(["--part-bytes", "8192"])
            .env("SLURM_ARRAY_TASK_ID", k.to_string())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        c
    };
    let mut children: Vec<_> = (0..3).map(|k| shard_cmd(k).spawn().unwrap()).collect();
    // The shard holding the large file is killed once it has committed a part, then rerun.
    let big_shard = (0..3).find(|&k| Shard { k, n: 3 }.owns(&input_key(&files[6]))).unwrap();
    let big_out = root.join(format!("shard-{big_shard:05}"));
    assert!(wait_for_parts(&big_out, 1, &mut children[big_shard]), "the shard finished before it could be killed");
    // It may end between the check and the kill: kill only a running process.
    if children[big_shard].try_wait().unwrap().is_none() {
        children[big_shard].kill().unwrap();
    }
    children[big_shard].wait().unwrap();
    for (k, c) in children.into_iter().enumerate() {
        if k != big_shard {
            let o = c.wait_with_output().unwrap();
            assert_eq!(o.status.code(), Some(0), "shard {k}: {}", String::from_utf8_lossy(&o.stderr));
        }
    }
    let o = shard_cmd(big_shard).output().unwrap();
    assert_eq!(o.status.code(), Some(0), "rerun: {}", String::from_utf8_lossy(&o.stderr));

    // The union of the shards' records is the single run's, each once, each file in one shard.
    let mut by_file: std::collections::HashMap<String, HashSet<usize>> = std::collections::HashMap::new();
    let mut sharded: Vec<(String, String)> = Vec::new();
    for k in 0..3 {
        for r in records(&root.join(format!("shard-{k:05}"))) {
            by_file.entry(r["metadata"]["source"]["file"].as_str().unwrap().to_string()).or_default().insert(k);
            sharded.push((r["id"].as_str().unwrap().to_string(), r["text"].as_str().unwrap().to_string()));
        }
    }
    assert!(by_file.values().all(|s| s.len() == 1), "a file was read by two shards: {by_file:?}");
    assert_eq!(by_file.len(), 7);
    let mut reference: Vec<(String, String)> = records(&single)
        .iter()
        .map(|r| (r["id"].as_str().unwrap().to_string(), r["text"].as_str().unwrap().to_string()))
        .collect();
    sharded.sort();
    reference.sort();
    assert_eq!(sharded.len(), reference.len(), "records written more or less than once");
    assert!(sharded == reference, "the shards' records differ from the single run's");

    // `pipeline status` on the root: every input done, counts summed.
    let st = pipeline(&["status", root.to_str().unwrap(), "--json"]);
    assert!(st.status.success(), "{}", String::from_utf8_lossy(&st.stderr));
    let st: Value = serde_json::from_slice(&st.stdout).unwrap();
    assert_eq!(st["mode"], "shards");
    let shards = st["shards"].as_array().unwrap();
    assert_eq!(shards.len(), 3);
    assert_eq!(shards.iter().map(|s| s["done"].as_u64().unwrap()).sum::<u64>(), 7);
    assert!(shards.iter().all(|s| s["pending"] == 0 && s["in_progress"] == 0), "{st}");
    assert_eq!(st["stats"]["written"].as_u64().unwrap() as usize, reference.len());
}

/// Whether an output root is sharded is fixed like its N: a sharded run over a root an
/// unsharded run wrote, or the reverse, would find no state that has seen the inputs and write
/// every record again (an outside audit, session 45: 144 records for 72). Both are refused
/// (exit 2) before anything is written, naming what the root holds.
#[test]
fn a_root_written_with_shards_or_without_refuses_the_other_way() {
    let dir = tempfile::tempdir().unwrap();
    let warc = dir.path().join("a.warc.gz");
    pages_warc(&warc, "a.test", 4, 5);
    let warc = warc.to_str().unwrap();

    let plain = dir.path().join("plain");
    let plain_s = plain.to_str().unwrap();
    assert_eq!(pipeline(&["--warc", warc, "--out", plain_s]).status.code(), Some(0));
    let before = records(&plain).len();
    for k in ["0/2", "1/2"] {
        refused(&["--warc", warc, "--out", plain_s, "--shard", k], "without --shard");
    }
    assert!(!plain.join("shard-00000").exists() && !plain.join("shard-00001").exists());
    assert_eq!(records(&plain).len(), before);
    // The unsharded run itself may still resume.
    assert_eq!(pipeline(&["--warc", warc, "--out", plain_s, "--resume"]).status.code(), Some(0));
    assert_eq!(records(&plain).len(), before);

    let sharded = dir.path().join("sharded");
    let sharded_s = sharded.to_str().unwrap();
    for k in ["0/2", "1/2"] {
        assert_eq!(pipeline(&["--warc", warc, "--out", sharded_s, "--shard", k]).status.code(), Some(0));
    }
    for resume in [false, true] {
        let mut args = vec!["--warc", warc, "--out", sharded_s];
        if resume {
            args.push("--resume");
        }
        refused(&args, "--shard K/2");
    }
    assert!(list_parts(&sharded).unwrap().is_empty(), "the unsharded run wrote parts into the sharded root");
}

#[test]
fn dedup_across_shards_matches_an_all_pairs_computation() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a.warc.gz");
    let b = dir.path().join("b.warc.gz");
    let mut w = WarcWriter::create(&a, "test").unwrap();
    for i in 0..6 {
        exchange(&mut w, &format!("http://a.test/{i}"), &http("text/html", page(i, 6).as_bytes(), ""));
    }
    w.finish().unwrap();
    let mut w = WarcWriter::create(&b, "test").unwrap();
    // A near copy of a/0, an exact copy of a/1, a near copy of a near copy, and new pages.
    let near = page(0, 6).replace("Story 0", "Story 0 (updated)");
    exchange(&mut w, "http://b.test/near", &http("text/html", near.as_bytes(), ""));
    exchange(&mut w, "http://b.test/same", &http("text/html", page(1, 6).as_bytes(), ""));
    exchange(
        &mut w,
        "http://b.test/near2",
        &http("text/html", near.replace("(updated)", "(corrected)").as_bytes(), ""),
    );
    for i in 50..53 {
        exchange(&mut w, &format!("http://b.test/{i}"), &http("text/html", page(i, 6).as_bytes(), ""));
    }
    w.finish().unwrap();
    let root = dir.path().join("root");
    for k in 0..2 {
        let shard = format!("{k}/2");
        let o = pipeline(&[
            "--warc",
            a.to_str().unwrap(),
            b.to_str().unwrap(),
            "--out",
            root.to_str().unwrap(),
            "--shard",
            &shard,
        ]);
        assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    }
    let dd = dir.path().join("dedup");
    let o = pipeline(&[
        "dedup",
        root.to_str().unwrap(),
        "--out",
        dd.to_str().unwrap(),
        "--memory-mb",
        "1",
        "--write-parts",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));

    // All pairs: records in shard order sharing a band key or the exact hash, joined.
    let recs: Vec<Value> = (0..2).flat_map(|k| records(&root.join(format!("shard-{k:05}")))).collect();
    let keys: Vec<HashSet<String>> = recs
        .iter()
        .map(|r| {
            let fp = &r["metadata"]["fingerprints"];
            let mut k: HashSet<String> =
                fp["bands"].as_array().unwrap().iter().map(|b| b.as_str().unwrap().to_string()).collect();
            k.insert(format!("exact:{}", fp["exact"].as_str().unwrap()));
            k
        })
        .collect();
    let mut root_of: Vec<usize> = (0..recs.len()).collect();
    fn find(r: &mut [usize], mut x: usize) -> usize {
        while r[x] != x {
            x = r[x];
        }
        x
    }
    for i in 0..recs.len() {
        for j in i + 1..recs.len() {
            if !keys[i].is_disjoint(&keys[j]) {
                let (ri, rj) = (find(&mut root_of, i), find(&mut root_of, j));
                let (lo, hi) = (ri.min(rj), ri.max(rj));
                root_of[hi] = lo;
            }
        }
    }
    let mut want = Vec::new();
    for i in 0..recs.len() {
        let r = find(&mut root_of, i);
        if r != i {
            want.push((recs[i]["id"].as_str().unwrap().to_string(), recs[r]["id"].as_str().unwrap().to_string()));
        }
    }
    assert!(want.len() >= 2, "the input should hold near duplicates across shards: {want:?}");
    let got: Vec<(String, String)> = std::fs::read_to_string(dd.join("removed.jsonl"))
        .unwrap()
        .lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            (v["id"].as_str().unwrap().to_string(), v["duplicate_of"].as_str().unwrap().to_string())
        })
        .collect();
    assert_eq!(got, want);
    let kept = records(&dd);
    assert_eq!(kept.len(), recs.len() - want.len());
    let removed: HashSet<&str> = want.iter().map(|(id, _)| id.as_str()).collect();
    assert!(kept.iter().all(|r| !removed.contains(r["id"].as_str().unwrap())));
}

fn status_json(out: &Path) -> Value {
    let st = pipeline(&["status", out.to_str().unwrap(), "--json"]);
    assert!(st.status.success(), "{}", String::from_utf8_lossy(&st.stderr));
    serde_json::from_slice(&st.stdout).unwrap()
}

/// Record ids with how many times each was written.
fn id_counts(out: &Path) -> std::collections::BTreeMap<String, usize> {
    let mut m = std::collections::BTreeMap::new();
    for r in records(out) {
        *m.entry(r["id"].as_str().unwrap().to_string()).or_default() += 1;
    }
    m
}

#[test]
fn an_input_cut_short_stays_pending_and_resume_reads_the_rest_once() {
    let dir = tempfile::tempdir().unwrap();
    let whole = dir.path().join("whole.warc.gz");
    let ids = big_warc(&whole, 300);
    let bytes = std::fs::read(&whole).unwrap();
    let input = dir.path().join("w0.warc.gz");
    std::fs::write(&input, &bytes[..bytes.len() / 3]).unwrap();
    let out = dir.path().join("out");
    let run = |resume: bool| {
        let mut a = vec!["--warc", input.to_str().unwrap(), "--out", out.to_str().unwrap(), "--threads", "2"];
        a.extend(["--part-bytes", "20000"]);
        if resume {
            a.push("--resume");
        }
        pipeline(&a)
    };
    let o = run(false);
    assert_eq!(o.status.code(), Some(1), "{}", String::from_utf8_lossy(&o.stderr));
    let first = id_counts(&out);
    assert!(!first.is_empty() && first.len() < 150, "{} records from a third of the file", first.len());
    let st = status_json(&out);
    assert_eq!(st["done"].as_array().unwrap().len(), 0, "a cut input was saved as done: {st}");
    assert_eq!(st["retry"][0]["attempts"], 1, "{st}");
    // Its WARC records read whole (requests and responses) before the cut.
    assert_eq!(st["retry"][0]["done"].as_u64().unwrap(), st["stats"]["records_in"].as_u64().unwrap() - 1, "{st}");

    // The whole file in its place: the rest of its records, none twice, exit 0.
    std::fs::write(&input, &bytes).unwrap();
    let o = run(true);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let got = id_counts(&out);
    assert!(got.values().all(|&n| n == 1), "records written twice");
    assert_eq!(got.keys().cloned().collect::<HashSet<_>>(), ids.iter().cloned().collect::<HashSet<_>>());
    let st = status_json(&out);
    assert_eq!(st["done"].as_array().unwrap().len(), 1, "{st}");
    assert!(st.get("retry").is_none_or(|r| r.as_array().unwrap().is_empty()), "{st}");
    // Done now: another resume reads nothing.
    let o = run(true);
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(id_counts(&out), got);
}

#[test]
fn an_input_that_keeps_failing_is_given_up_after_its_attempts() {
    let dir = tempfile::tempdir().unwrap();
    let whole = dir.path().join("whole.warc.gz");
    big_warc(&whole, 20);
    let bytes = std::fs::read(&whole).unwrap();
    let input = dir.path().join("cut.warc.gz");
    std::fs::write(&input, &bytes[..bytes.len() / 2]).unwrap();
    let good = dir.path().join("good.warc");
    let mut w = WarcWriter::create(&good, "test").unwrap();
    exchange(&mut w, "http://good.test/1", &http("text/html", page(5, 5).as_bytes(), ""));
    w.finish().unwrap();
    let out = dir.path().join("out");
    let max = article_pipeline::pipeline::warc_run::MAX_INPUT_ATTEMPTS;
    let mut written = Vec::new();
    for attempt in 1..=max + 1 {
        let mut a = vec!["--warc", input.to_str().unwrap(), good.to_str().unwrap(), "--out", out.to_str().unwrap()];
        if attempt > 1 {
            a.push("--resume");
        }
        let o = pipeline(&a);
        let expect = if attempt <= max { 1 } else { 0 };
        assert_eq!(o.status.code(), Some(expect), "attempt {attempt}: {}", String::from_utf8_lossy(&o.stderr));
        let st = status_json(&out);
        let tries = st["retry"][0]["attempts"].as_u64().unwrap();
        assert_eq!(tries, attempt.min(max) as u64, "{st}");
        written.push(id_counts(&out));
    }
    // Each attempt re-read only the cut record onwards: nothing was written twice.
    assert!(written.last().unwrap().values().all(|&n| n == 1));
    assert_eq!(written[0], *written.last().unwrap());
    let text = pipeline(&["status", out.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(text.contains(&format!("given up after {max} attempts")), "{text}");
}

#[test]
fn one_file_named_three_ways_is_read_once() {
    let dir = tempfile::tempdir().unwrap();
    let w6 = dir.path().join("w6.warc.gz");
    let ids = big_warc(&w6, 20);
    let list = dir.path().join("list.txt");
    std::fs::write(&list, format!("w6.warc.gz\n./w6.warc.gz\n{}\n", w6.display())).unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_pipeline"))
        .current_dir(dir.path())
        .args(["--warc", "w6.warc.gz", "./w6.warc.gz", w6.to_str().unwrap(), "--warc-list", "list.txt"])
        .args(["--base-url", dir.path().to_str().unwrap(), "--out", "out"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let got = id_counts(&dir.path().join("out"));
    assert_eq!(got.len(), ids.len());
    assert!(got.values().all(|&n| n == 1), "a repeated input was read again");
}

#[test]
fn shards_refuse_another_n_and_an_added_input_moves_no_other() {
    let dir = tempfile::tempdir().unwrap();
    let mut files = Vec::new();
    let mut all_ids = Vec::new();
    for i in 0..8 {
        let p = dir.path().join(format!("w{i}.warc.gz"));
        let mut w = WarcWriter::create(&p, "test").unwrap();
        for j in 0..3 {
            let url = format!("http://s{i}.test/{j}");
            all_ids.push(exchange(&mut w, &url, &http("text/html", page(i * 10 + j, 4).as_bytes(), "")).1);
        }
        w.finish().unwrap();
        files.push(p.display().to_string());
    }
    let root = dir.path().join("root");
    let shard = |k: usize, n: usize, inputs: &[String]| {
        let spec = format!("{k}/{n}");
        let mut a = vec!["--warc"];
        a.extend(inputs.iter().map(String::as_str));
        a.extend(["--out", root.to_str().unwrap(), "--shard", spec.as_str()]);
        pipeline(&a)
    };
    let lines = || (0..3).map(|k| records(&root.join(format!("shard-{k:05}"))).len()).sum::<usize>();
    // A run without --shard holds the root and has written nothing yet (its lock held, as
    // `lock_output` holds it): a shard run is refused, before and after taking its own lock,
    // and writes nothing; once that run has ended, its lock file left behind says nothing.
    std::fs::create_dir_all(&root).unwrap();
    let held = std::fs::OpenOptions::new().create(true).truncate(false).write(true).open(root.join(".lock")).unwrap();
    held.lock().unwrap();
    let o = shard(0, 3, &files[..7]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("written without --shard") && stderr.contains(".lock"), "{stderr}");
    assert!(!root.join("shard-00000").exists(), "nothing written");
    drop(held);
    for k in 0..3 {
        assert_eq!(shard(k, 3, &files[..7]).status.code(), Some(0));
    }
    assert_eq!(lines(), 21);
    // Another N for the same root: refused before anything is written.
    let o = shard(0, 2, &files[..7]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("3 shards, not 2"), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(lines(), 21);
    // One input more: only it is read, by the shard it belongs to.
    for k in 0..3 {
        assert_eq!(shard(k, 3, &files).status.code(), Some(0));
    }
    let mut got: Vec<String> = (0..3)
        .flat_map(|k| records(&root.join(format!("shard-{k:05}"))))
        .map(|r| r["id"].as_str().unwrap().to_string())
        .collect();
    got.sort();
    all_ids.sort();
    assert_eq!(got, all_ids, "records missing or written twice");
    let st = status_json(&root);
    let shards = st["shards"].as_array().unwrap();
    assert_eq!(shards.iter().map(|s| s["inputs"].as_u64().unwrap()).sum::<u64>(), 8, "{st}");
    assert_eq!(shards.iter().map(|s| s["done"].as_u64().unwrap()).sum::<u64>(), 8, "{st}");
}

#[test]
fn dedup_names_records_by_place_reruns_to_the_same_result_and_refuses_its_inputs() {
    let dir = tempfile::tempdir().unwrap();
    let w = dir.path().join("w.warc.gz");
    let ids = big_warc(&w, 40);
    // Two runs of the same file: every record has an exact-id twin.
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    for out in [&a, &b] {
        let o = pipeline(&["--warc", w.to_str().unwrap(), "--out", out.to_str().unwrap(), "--part-bytes", "20000"]);
        assert_eq!(o.status.code(), Some(0));
    }
    let dd = dir.path().join("dd");
    let dedup = |out: &Path, mb: &str| {
        let mut args = vec!["dedup", a.to_str().unwrap(), b.to_str().unwrap(), "--out", out.to_str().unwrap()];
        args.extend(["--write-parts", "--memory-mb", mb]);
        pipeline(&args)
    };
    let o = dedup(&dd, "1");
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let removed = std::fs::read_to_string(dd.join("removed.jsonl")).unwrap();
    let lines: Vec<Value> = removed.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), ids.len(), "each twin removed once");
    for l in &lines {
        // Same id, different places: never a record listed as a duplicate of itself.
        assert_eq!(l["id"], l["duplicate_of"]);
        assert_ne!((&l["part"], &l["line"]), (&l["duplicate_of_part"], &l["duplicate_of_line"]), "{l}");
        assert!(l["part"].as_str().unwrap().contains("/b/part-"), "{l}");
        assert!(l["duplicate_of_part"].as_str().unwrap().contains("/a/part-"), "{l}");
        assert!(l["line"].as_u64().unwrap() >= 1);
    }
    let kept = id_counts(&dd);
    assert_eq!(kept.len(), ids.len());
    assert!(kept.values().all(|&n| n == 1));

    // The same dedup again, and again after a "kill" that left parts but no removed.jsonl or
    // stats.json: the same files, nothing twice.
    let o = dedup(&dd, "1");
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(std::fs::read_to_string(dd.join("removed.jsonl")).unwrap(), removed);
    assert_eq!(id_counts(&dd), kept);
    std::fs::remove_file(dd.join("removed.jsonl")).unwrap();
    std::fs::remove_file(dd.join("stats.json")).unwrap();
    let o = dedup(&dd, "1");
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(std::fs::read_to_string(dd.join("removed.jsonl")).unwrap(), removed);
    assert_eq!(id_counts(&dd), kept);

    // Refused before anything is written: an output that is an input or inside one, a folder
    // holding something else, another dedup's folder, and absurd memory budgets.
    let before = id_counts(&a);
    for bad in [a.clone(), a.join("dd"), dir.path().to_path_buf()] {
        let o = dedup(&bad, "1");
        assert_eq!(o.status.code(), Some(2), "{}: {}", bad.display(), String::from_utf8_lossy(&o.stderr));
    }
    assert_eq!(id_counts(&a), before);
    assert!(!a.join("dd").exists() && !a.join("removed.jsonl").exists());
    let other = dir.path().join("other");
    std::fs::create_dir(&other).unwrap();
    std::fs::write(other.join("notes.txt"), "mine").unwrap();
    assert_eq!(dedup(&other, "1").status.code(), Some(2));
    let o = pipeline(&["dedup", a.to_str().unwrap(), "--out", dd.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "another dedup's folder: {}", String::from_utf8_lossy(&o.stderr));
    for mb in ["0", "99999999"] {
        let o = dedup(&dir.path().join(format!("m{mb}")), mb);
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "--memory-mb {mb}: {stderr}");
        assert!(stderr.contains("--memory-mb") && stderr.contains("not in 1..=1048576"), "{stderr}");
    }
    // An input a run still writes (its `.lock` held, as `lock_output` holds it while the run
    // goes on; here, or in a shard's folder) is refused before anything is read or written:
    // only its parts committed so far would be deduplicated.
    let shard = a.join("shard-00000");
    std::fs::create_dir(&shard).unwrap();
    for held in [a.join(".lock"), shard.join(".lock")] {
        let lock = std::fs::OpenOptions::new().create(true).truncate(false).write(true).open(&held).unwrap();
        lock.lock().unwrap();
        let fresh = dir.path().join("while-running");
        let o = dedup(&fresh, "1");
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{stderr}");
        assert!(stderr.contains("still writes") && stderr.contains(&held.display().to_string()), "{stderr}");
        assert!(!fresh.exists(), "nothing written");
        // `pipeline status` says who writes it.
        let o = pipeline(&["status", a.to_str().unwrap(), "--json"]);
        let v: Value = serde_json::from_slice(&o.stdout).unwrap();
        assert!(v["running"][0].as_str().unwrap().starts_with(&held.display().to_string()), "{v}");
        drop(lock);
    }
    // Once the run has ended (its lock file stays, unlocked) the input is read.
    let o = pipeline(&["status", a.to_str().unwrap(), "--json"]);
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["running"], serde_json::json!([]), "{v}");
    let o = dedup(&dir.path().join("after-run"), "1");
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    std::fs::remove_dir_all(&shard).unwrap();
    // A large budget is not reserved up front.
    let o = dedup(&dir.path().join("big"), "30000");
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
}

#[test]
fn dedup_over_a_damaged_part_reports_it_goes_on_and_exits_1() {
    let dir = tempfile::tempdir().unwrap();
    let w = dir.path().join("w.warc.gz");
    big_warc(&w, 40);
    let a = dir.path().join("a");
    let o = pipeline(&["--warc", w.to_str().unwrap(), "--out", a.to_str().unwrap(), "--part-bytes", "20000"]);
    assert_eq!(o.status.code(), Some(0));
    let parts = list_parts(&a).unwrap();
    assert!(parts.len() >= 2);
    let bytes = std::fs::read(&parts[0]).unwrap();
    std::fs::write(&parts[0], &bytes[..bytes.len() / 2]).unwrap();
    let dd = dir.path().join("dd");
    let o = pipeline(&["dedup", a.to_str().unwrap(), "--out", dd.to_str().unwrap(), "--write-parts"]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains(&parts[0].display().to_string()), "{stderr}");
    assert!(!dd.join(".dedup-runs").exists());
    let stats: Value = serde_json::from_slice(&std::fs::read(dd.join("stats.json")).unwrap()).unwrap();
    assert_eq!(stats["failed"], 1, "{stats}");
    // The other parts' records are all kept.
    let later: usize = parts[1..].iter().map(|p| read_part(p).unwrap().len()).sum();
    assert!(records(&dd).len() >= later);
}

#[test]
fn parts_a_consumer_deleted_are_not_written_again_and_their_names_not_reused() {
    // A consumer that loads each part and deletes it (an indexer draining the folder) must not
    // get those records a second time when the run resumes with more input, nor a new part
    // under a name it has already read: the last part's position is committed once the part
    // is in place, and the state keeps the next part's number.
    let dir = tempfile::tempdir().unwrap();
    let inputs = dir.path().join("in");
    std::fs::create_dir_all(&inputs).unwrap();
    pages_warc(&inputs.join("w0.warc.gz"), "first.test", 60, 30);
    let out = dir.path().join("out");
    let run = |resume: bool| {
        let mut a = vec!["--warc", inputs.to_str().unwrap(), "--out", out.to_str().unwrap(), "--threads", "2"];
        a.extend(["--part-bytes", "4096"]);
        if resume {
            a.push("--resume");
        }
        pipeline(&a)
    };
    let o = run(false);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let first: Vec<String> =
        list_parts(&out).unwrap().iter().map(|p| p.file_name().unwrap().to_string_lossy().into()).collect();
    assert!(first.len() >= 2, "{first:?}");
    assert_eq!(records(&out).len(), 60);
    for p in list_parts(&out).unwrap() {
        std::fs::remove_file(p).unwrap();
    }
    pages_warc(&inputs.join("w1.warc.gz"), "second.test", 10, 6);
    let o = run(true);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let urls: Vec<String> = records(&out).iter().map(|r| r["metadata"]["url"].as_str().unwrap().to_string()).collect();
    assert_eq!(urls.len(), 10, "{urls:?}");
    assert!(urls.iter().all(|u| u.starts_with("http://second.test/")), "{urls:?}");
    for p in list_parts(&out).unwrap() {
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        assert!(!first.contains(&name), "{name} was a name the consumer had read already");
    }
}

#[test]
fn two_shard_runs_with_different_n_started_together_are_never_both_let_through() {
    // The review of session 47: both passed the layout check on an empty root and then found
    // the other's folder without a shard.json (no N to compare), so a root got shards of two
    // N and inputs written twice. Each run now names its N before it looks again.
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("w.warc.gz");
    pages_warc(&input, "race.test", 40, 4);
    for round in 0..10 {
        let root = dir.path().join(format!("root{round}"));
        let spawn = |spec: &str| {
            Command::new(env!("CARGO_BIN_EXE_pipeline"))
                .args(["--warc", input.to_str().unwrap(), "--out", root.to_str().unwrap(), "--shard", spec])
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        };
        let (a, b) = (spawn("0/2"), spawn("1/3"));
        let (a, b) = (a.wait_with_output().unwrap(), b.wait_with_output().unwrap());
        let codes = (a.status.code(), b.status.code());
        assert!(codes != (Some(0), Some(0)), "round {round}: both ran on one root");
        // The one let through (if either) is alone with its N: a rerun of it goes on, and the
        // refused one left no shard.json behind to refuse it.
        let ns: Vec<usize> = std::fs::read_dir(&root)
            .unwrap()
            .flatten()
            .filter_map(|e| article_pipeline::pipeline::shard::ShardManifest::read(&e.path()))
            .map(|m| m.shard.n)
            .collect();
        assert!(ns.windows(2).all(|w| w[0] == w[1]), "round {round}: shards of N {ns:?}");
    }
}
