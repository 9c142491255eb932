//! Object storage end to end against an S3-compatible server on 127.0.0.1 (`common/s3.rs`):
//! `--warc s3://bucket/prefix/` streams the prefix's WARCs, `--out s3://bucket/prefix/`
//! uploads each part as it is committed together with the resume state; a run killed with
//! SIGKILL and rerun on a fresh staging folder (a pod without a disk) writes every record
//! exactly once; so does a feeds run killed and rerun the same way. One prefix is written by
//! one process at a time (its lock object), a run whose lock is taken over stops, and a WARC
//! run stopped with SIGTERM releases the lock. Shards over S3 with the engines' index variable, and a gzipped
//! `--warc-list` of relative keys under `--base-url s3://…`, give the same records.

use crate::common;
use crate::feed_hosts;
use crate::s3_server;

use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crate::feeds_shards::hosts_of_two_shards;
use article_pipeline::sink::read_part;
use s3_server::S3Server;

const WORDS: [&str; 12] = [
    "harbour",
    "council",
    "ferry",
    "timetable",
    "vote",
    "river",
    "bridge",
    "market",
    "winter",
    "school",
    "road",
    "park",
];

fn page(i: usize) -> String {
    let body = common::paragraphs(i as u64 + 7, 6, &WORDS);
    format!(
        "<html><head><title>P{i}</title></head><body><nav><a href=/>Home</a></nav><article>{body}</article></body></html>"
    )
}

/// Writes a WARC of `n` pages numbered from `first`; returns their record ids.
fn warc(path: &Path, first: usize, n: usize) -> Vec<String> {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    common::write_warc(path, (first..first + n).map(|i| (format!("http://s3.test/{i}"), page(i))))
}

fn pipeline(s3: &S3Server, args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_pipeline"));
    s3.env(&mut c);
    c.args(args).args(["--s3-endpoint", &s3.endpoint]);
    if !matches!(args[0], "status" | "dedup") {
        c.args(["--scorer", "simple", "--no-progress"]);
    }
    c
}

/// Record ids (with their count) of every part file under `dir`, recursively.
fn ids_under(dir: &Path) -> BTreeMap<String, usize> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            let name = e.file_name().to_string_lossy().into_owned();
            if p.is_dir() {
                stack.push(p);
            } else if name.starts_with("part-") && name.ends_with(".jsonl.zst") {
                for r in read_part(&p).unwrap() {
                    *out.entry(r["id"].as_str().unwrap().to_string()).or_default() += 1;
                }
            }
        }
    }
    out
}

/// Starts `cmd` and kills it with SIGKILL once `dir` holds `n` parts; fails if the run ends
/// first.
fn kill_after_parts(mut cmd: Command, dir: &Path, n: usize) {
    let mut child = cmd.stdout(Stdio::null()).stderr(Stdio::null()).spawn().unwrap();
    let start = Instant::now();
    let mut killed = false;
    while start.elapsed() < Duration::from_secs(120) && child.try_wait().unwrap().is_none() {
        if count_parts(dir) >= n {
            child.kill().unwrap(); // SIGKILL
            killed = true;
            break;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    child.wait().unwrap();
    assert!(killed, "the run finished before it could be killed");
}

fn count_parts(dir: &Path) -> usize {
    std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("part-"))
        .count()
}

#[test]
fn an_s3_run_killed_and_rerun_without_its_disk_writes_every_record_once() {
    let s3 = S3Server::start(&["crawl"]);
    let mut expected = Vec::new();
    for (f, first) in [("in/a.warc.gz", 0), ("in/b.warc.gz", 1000), ("in/c.warc.gz", 2000)] {
        expected.extend(warc(&s3.path("crawl", f), first, 700));
    }
    // Not a WARC: listed under the prefix but not read.
    std::fs::write(s3.path("crawl", "in/README.txt"), "not a warc").unwrap();
    let work = tempfile::tempdir().unwrap();
    let run = |staging: &str, resume: bool| {
        let mut args = vec![
            "--warc",
            "s3://crawl/in/",
            "--out",
            "s3://crawl/out/",
            "--part-bytes",
            "20000",
            "--threads",
            "2",
            "--staging",
        ];
        args.push(staging);
        if resume {
            args.push("--resume");
        }
        pipeline(&s3, &args)
    };
    let stage1 = work.path().join("stage1").display().to_string();
    let out = s3.path("crawl", "out");
    kill_after_parts(run(&stage1, false), &out, 3);
    assert!(s3.path("crawl", "out/state.json").exists(), "the resume state is in the bucket");
    // Rerun on an empty staging folder: everything it needs comes from the bucket.
    let stage2 = work.path().join("stage2").display().to_string();
    let o = run(&stage2, true).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let got = ids_under(&out);
    let twice: Vec<_> = got.iter().filter(|(_, n)| **n > 1).collect();
    assert!(twice.is_empty(), "written twice: {twice:?}");
    let mut want: Vec<String> = expected.clone();
    want.sort();
    assert_eq!(got.keys().cloned().collect::<Vec<_>>(), want);
    let stats: serde_json::Value =
        serde_json::from_slice(&std::fs::read(s3.path("crawl", "out/stats.json")).unwrap()).unwrap();
    assert_eq!(stats["written"], expected.len());
    // Staging keeps no part once the run is over (they are all in the bucket).
    assert_eq!(count_parts(Path::new(&stage2)), 0);
    // Without --resume the same output is refused (exit 2), naming the state.
    let o = run(&work.path().join("stage3").display().to_string(), false).output().unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", String::from_utf8_lossy(&o.stderr));
    // Named by its s3:// location, not the staging folder's copy.
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("s3://crawl/out/state.json"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    // A shard of the same output, staged afresh: the bucket holds an unsharded run, refused.
    let stage4 = work.path().join("stage4").display().to_string();
    let o = run(&stage4, true).args(["--shard", "0/2"]).output().unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("s3://crawl/out/") && stderr.contains("without --shard"), "{stderr}");
    assert_eq!(ids_under(&out), got);
}

#[test]
fn shards_over_s3_with_a_gzipped_list_give_the_records_of_one_process() {
    let s3 = S3Server::start(&["ccdata"]);
    let mut expected = Vec::new();
    let keys: Vec<String> = (0..5).map(|i| format!("crawl-data/seg{i}/warc/{i}.warc.gz")).collect();
    for (i, k) in keys.iter().enumerate() {
        expected.extend(warc(&s3.path("ccdata", k), i * 100, 60));
    }
    let work = tempfile::tempdir().unwrap();
    let list = work.path().join("warc.paths.gz");
    let mut gz = flate2::write::GzEncoder::new(std::fs::File::create(&list).unwrap(), Default::default());
    gz.write_all(keys.join("\n").as_bytes()).unwrap();
    gz.finish().unwrap();
    let list = list.display().to_string();
    let shard_run = |shard: &str, staging: &str| {
        let staging = work.path().join(staging).display().to_string();
        let args = ["--warc-list", &list, "--base-url", "s3://ccdata/", "--out", "s3://ccdata/out/", "--shard", shard];
        let mut c = pipeline(&s3, &args);
        c.args(["--staging", &staging, "--part-bytes", "5000"]);
        c
    };
    let children: Vec<_> = (0..2)
        .map(|k| {
            let mut c = shard_run("auto/2", &format!("stage{k}"));
            c.env("JOB_COMPLETION_INDEX", k.to_string()).env_remove("SLURM_ARRAY_TASK_ID");
            c.stdout(Stdio::null()).stderr(Stdio::piped()).spawn().unwrap()
        })
        .collect();
    for c in children {
        let o = c.wait_with_output().unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
    let got = ids_under(&s3.path("ccdata", "out"));
    assert!(got.values().all(|n| *n == 1), "a record written twice");
    expected.sort();
    assert_eq!(got.keys().cloned().collect::<Vec<_>>(), expected);
    for k in 0..2 {
        assert!(s3.path("ccdata", &format!("out/shard-0000{k}/shard.json")).exists());
    }
    // Status and the global dedup pass read the bucket; dedup writes back to it.
    let o = pipeline(&s3, &["status", "s3://ccdata/out/", "--json"]).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let status = String::from_utf8_lossy(&o.stdout);
    let status: serde_json::Value = serde_json::from_str(&status).unwrap();
    assert_eq!(status["mode"], "shards");
    for shard in status["shards"].as_array().unwrap() {
        assert_eq!((shard["in_progress"].as_u64(), shard["pending"].as_u64()), (Some(0), Some(0)), "{shard}");
        assert_eq!(shard["done"], shard["inputs"]);
    }
    assert_eq!(status["stats"]["written"], expected.len());
    let o =
        pipeline(&s3, &["dedup", "s3://ccdata/out/", "--out", "s3://ccdata/dedup/", "--write-parts"]).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(s3.path("ccdata", "dedup/removed.jsonl").exists());
    assert_eq!(ids_under(&s3.path("ccdata", "dedup")), got, "no near duplicates among distinct pages: all kept");
    assert!(lock_released(&s3, "ccdata", "dedup/"), "the dedup run released its output's lock");
    // A dedup output another machine is writing is refused, as a run's output is.
    forge_lock(&s3, "ccdata", "dedup/", "other-machine", 0);
    let o = pipeline(&s3, &["dedup", "s3://ccdata/out/", "--out", "s3://ccdata/dedup/"]).output().unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("another pipeline process writes this output"), "{stderr}");
    std::fs::remove_file(s3.path("ccdata", "dedup/.lock")).unwrap();
    // An input a run on another machine still writes (a shard's lock with a fresh heartbeat)
    // is refused before anything is downloaded; one whose run died long ago is read, with a
    // warning that it did not finish.
    forge_lock(&s3, "ccdata", "out/shard-00001/", "other-machine", 0);
    let o = pipeline(&s3, &["dedup", "s3://ccdata/out/", "--out", "s3://ccdata/dedup/"]).output().unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("s3://ccdata/out/shard-00001/.lock") && stderr.contains("still writes"), "{stderr}");
    assert!(lock_released(&s3, "ccdata", "dedup/"), "the refused dedup released its output's lock");
    let o = pipeline(&s3, &["status", "s3://ccdata/out/", "--json"]).output().unwrap();
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let running = v["running"].as_array().unwrap();
    assert_eq!(running.len(), 1, "{v}");
    let r = running[0].as_str().unwrap();
    assert!(r.contains("shard-00001/.lock") && r.contains("host other-machine") && !r.contains("ended"), "{r}");
    forge_lock(&s3, "ccdata", "out/shard-00001/", "other-machine", 1000);
    let o =
        pipeline(&s3, &["dedup", "s3://ccdata/out/", "--out", "s3://ccdata/dedup/", "--write-parts"]).output().unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{stderr}");
    assert!(stderr.contains("did not finish"), "{stderr}");
    let o = pipeline(&s3, &["status", "s3://ccdata/out/"]).output().unwrap();
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        stdout.contains("run lock: s3://ccdata/out/shard-00001/.lock") && stdout.contains("ended: no heartbeat"),
        "{stdout}"
    );
    assert_eq!(ids_under(&s3.path("ccdata", "dedup")), got);
    std::fs::remove_file(s3.path("ccdata", "out/shard-00001/.lock")).unwrap();
    // Rerun into its own prefix, the same dedup clears what an earlier result left there (a
    // part numbered past the new ones); into a prefix holding anything else, or one inside
    // its input, it is refused and nothing there is touched.
    std::fs::write(s3.path("ccdata", "dedup/part-00099.jsonl.zst"), b"left by a larger earlier result").unwrap();
    let o =
        pipeline(&s3, &["dedup", "s3://ccdata/out/", "--out", "s3://ccdata/dedup/", "--write-parts"]).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(!s3.path("ccdata", "dedup/part-00099.jsonl.zst").exists());
    assert_eq!(ids_under(&s3.path("ccdata", "dedup")), got);
    std::fs::create_dir_all(s3.path("ccdata", "mine")).unwrap();
    std::fs::write(s3.path("ccdata", "mine/part-00000.jsonl.zst"), b"someone's records").unwrap();
    for out in ["s3://ccdata/mine/", "s3://ccdata/out/dd/"] {
        let o = pipeline(&s3, &["dedup", "s3://ccdata/out/", "--out", out, "--write-parts"]).output().unwrap();
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{out}: {stderr}");
        assert!(stderr.contains("not empty") || stderr.contains("overlaps the input"), "{stderr}");
    }
    assert_eq!(std::fs::read(s3.path("ccdata", "mine/part-00000.jsonl.zst")).unwrap(), b"someone's records");
    assert!(!s3.path("ccdata", "out/dd").exists());
    // Rerunning a finished shard reads nothing again and writes nothing new: its cumulative
    // stats count no new input and no new part.
    let stats = || -> serde_json::Value {
        serde_json::from_slice(&std::fs::read(s3.path("ccdata", "out/shard-00001/stats.json")).unwrap()).unwrap()
    };
    let before = stats();
    assert!(before["records_in"].as_u64().unwrap() > 0);
    let o = shard_run("1/2", "again").output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(ids_under(&s3.path("ccdata", "out")), got);
    let after = stats();
    assert_eq!(
        (&after["records_in"], &after["parts"], &after["html_bytes"]),
        (&before["records_in"], &before["parts"], &before["html_bytes"]),
        "the rerun read inputs again"
    );
    // Another N, or no shard at all, from a pod whose staging folder is new: the bucket says
    // what the root holds, and the run is refused before it reads anything (an outside audit,
    // session 45, found 132 records for 72 when only the staging folder was asked).
    for (shard, fresh) in [(Some("0/3"), "n3"), (None, "plain")] {
        let staging = work.path().join(fresh).display().to_string();
        let mut args = vec!["--warc-list", &list, "--base-url", "s3://ccdata/", "--out", "s3://ccdata/out/"];
        if let Some(k) = shard {
            args.extend(["--shard", k]);
        }
        let o = pipeline(&s3, &args).args(["--staging", &staging]).output().unwrap();
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{shard:?}: {stderr}");
        assert!(stderr.contains("s3://ccdata/out/shard-0000"), "{stderr}");
    }
    assert_eq!(ids_under(&s3.path("ccdata", "out")), got);
}

/// A `--staging` folder that holds another run's files (a finished local run's output) is
/// refused before anything in it is touched: opening the staging removes the run files it
/// finds. A folder it staged before is its own (it names the prefix it mirrors).
#[test]
fn a_staging_folder_holding_another_run_is_refused_and_left_whole() {
    let s3 = S3Server::start(&["crawl"]);
    let work = tempfile::tempdir().unwrap();
    let input = work.path().join("in.warc.gz");
    warc(&input, 0, 20);
    let input = input.display().to_string();
    let local = work.path().join("local-run");
    let o = pipeline(&s3, &["--warc", &input, "--out", local.to_str().unwrap()]).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let before = ids_under(&local);
    assert_eq!(before.len(), 20);
    let o = pipeline(&s3, &["--warc", &input, "--out", "s3://crawl/x/", "--staging", local.to_str().unwrap()])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("not the staging folder of s3://crawl/x/"), "{stderr}");
    assert_eq!(ids_under(&local), before, "the local run's files were touched");
    assert!(local.join("state.json").exists());
    // Its own staging folder, reused by a rerun, is accepted.
    let staging = work.path().join("stage").display().to_string();
    for _ in 0..2 {
        let o = pipeline(&s3, &["--warc", &input, "--out", "s3://crawl/x/", "--staging", &staging, "--resume"])
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
    assert_eq!(ids_under(&s3.path("crawl", "x")).len(), 20);
}

#[test]
fn a_missing_object_is_one_failed_input_named_and_the_run_goes_on() {
    let s3 = S3Server::start(&["crawl"]);
    let ids = warc(&s3.path("crawl", "in/good.warc.gz"), 0, 5);
    let work = tempfile::tempdir().unwrap();
    let out = work.path().join("out").display().to_string();
    let o = pipeline(&s3, &["--warc", "s3://crawl/in/missing.warc.gz", "s3://crawl/in/good.warc.gz", "--out", &out])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stderr).contains("s3://crawl/in/missing.warc.gz"));
    assert_eq!(ids_under(Path::new(&out)).len(), ids.len());
    // The object that could not be read is pending, not done; once it is there, a resumed
    // run reads it, and only it.
    let st = pipeline(&s3, &["status", &out, "--json"]).output().unwrap();
    let st: serde_json::Value = serde_json::from_slice(&st.stdout).unwrap();
    assert_eq!(st["done"].as_array().unwrap().len(), 1, "{st}");
    assert_eq!(st["retry"][0]["input"], "s3://crawl/in/missing.warc.gz", "{st}");
    let late = warc(&s3.path("crawl", "in/missing.warc.gz"), 100, 4);
    let o = pipeline(
        &s3,
        &["--warc", "s3://crawl/in/missing.warc.gz", "s3://crawl/in/good.warc.gz", "--out", &out, "--resume"],
    )
    .output()
    .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let got = ids_under(Path::new(&out));
    assert_eq!(got.len(), ids.len() + late.len());
    assert!(got.values().all(|&n| n == 1), "{got:?}");
}

/// What the proxy saw of the requests: Range headers and multipart part numbers, in order.
type Seen = Arc<std::sync::Mutex<Vec<String>>>;

/// Notes the `range: bytes=…` headers and `partNumber=N` query parameters of request bytes.
fn note_requests(bytes: &[u8], seen: &Seen) {
    let text = String::from_utf8_lossy(bytes);
    for line in text.split("\r\n") {
        let lower = line.to_ascii_lowercase();
        if let Some(r) = lower.strip_prefix("range: ") {
            seen.lock().unwrap().push(format!("range {}", r.trim()));
        }
        if lower.starts_with("put ")
            && let Some(n) = lower.split("partnumber=").nth(1)
        {
            let n: String = n.chars().take_while(char::is_ascii_digit).collect();
            seen.lock().unwrap().push(format!("part {n}"));
        }
    }
}

/// A proxy in front of the server that, once, cuts a connection after `cut` bytes of
/// response (a connection dropped in the middle of an object); every other connection passes
/// whole. The flag says whether the cut happened; `Seen` what the requests asked for.
fn cutting_proxy(upstream: &str, cut: usize) -> (String, Arc<AtomicBool>, Seen, tokio::runtime::Runtime) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let listener = rt.block_on(tokio::net::TcpListener::bind("127.0.0.1:0")).unwrap();
    let addr = format!("http://{}", listener.local_addr().unwrap());
    let upstream = upstream.trim_start_matches("http://").to_string();
    let done = Arc::new(AtomicBool::new(false));
    let flag = done.clone();
    let seen: Seen = Arc::default();
    let log = seen.clone();
    rt.spawn(async move {
        loop {
            let Ok((client, _)) = listener.accept().await else { continue };
            let upstream = upstream.clone();
            let done = flag.clone();
            let log = log.clone();
            tokio::spawn(async move {
                let server = tokio::net::TcpStream::connect(upstream).await.unwrap();
                let (mut cr, mut cw) = client.into_split();
                let (mut sr, mut sw) = server.into_split();
                tokio::spawn(async move {
                    let mut buf = vec![0u8; 64 << 10];
                    loop {
                        let n = match cr.read(&mut buf).await {
                            Ok(0) | Err(_) => break,
                            Ok(n) => n,
                        };
                        note_requests(&buf[..n], &log);
                        if sw.write_all(&buf[..n]).await.is_err() {
                            break;
                        }
                    }
                });
                let mut sent = 0;
                let mut buf = vec![0u8; 64 << 10];
                loop {
                    let n = match sr.read(&mut buf).await {
                        Ok(0) | Err(_) => break,
                        Ok(n) => n,
                    };
                    let n = if sent + n >= cut && !done.swap(true, Ordering::SeqCst) { cut - sent.min(cut) } else { n };
                    if n == 0 || cw.write_all(&buf[..n]).await.is_err() {
                        break; // dropping both halves closes the connection mid-body
                    }
                    sent += n;
                    if done.load(Ordering::SeqCst) && sent >= cut && sent < cut + 1 {
                        break;
                    }
                }
            });
        }
    });
    (addr, done, seen, rt)
}

#[test]
fn a_large_file_goes_up_in_parts_and_a_dropped_read_resumes_at_its_offset() {
    use article_pipeline::storage::{self, S3Reader, S3Settings, S3Url};
    use std::io::Read;
    let s3 = S3Server::start(&["big"]);
    let (proxy, cut, seen, _rt) = cutting_proxy(&s3.endpoint, 3 << 20);
    storage::configure(S3Settings {
        endpoint: Some(proxy),
        access_key_id: Some(s3_server::ACCESS_KEY.into()),
        secret_access_key: Some(s3_server::SECRET_KEY.into()),
        region: Some("us-east-1".into()),
    });
    // 20 MB that does not repeat: three parts of at most 8 MB.
    let mut data = vec![0u8; 20 << 20];
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    for b in data.iter_mut() {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        *b = x as u8;
    }
    let work = tempfile::tempdir().unwrap();
    let local = work.path().join("blob");
    std::fs::write(&local, &data).unwrap();
    let url = S3Url::parse("s3://big/dir/blob.bin").unwrap();
    storage::upload(&local, &url).unwrap();
    assert!(std::fs::read(s3.path("big", "dir/blob.bin")).unwrap() == data, "uploaded bytes differ");
    assert!(!cut.load(Ordering::SeqCst), "no upload response is 3 MB long");
    // A multipart upload: at least three distinct parts went up.
    let parts: std::collections::BTreeSet<String> =
        seen.lock().unwrap().iter().filter_map(|l| l.strip_prefix("part ").map(str::to_string)).collect();
    assert!(parts.len() >= 3, "parts uploaded: {parts:?}");
    seen.lock().unwrap().clear();
    assert_eq!(storage::list(&S3Url::parse("s3://big/dir/").unwrap()).unwrap(), vec![(url.clone(), data.len() as u64)]);
    // A fenced upload whose fence fails just before completion (the run's lock was taken over
    // while its parts went up) is aborted: nothing of it appears.
    let fenced = S3Url::parse("s3://big/dir/fenced.bin").unwrap();
    let asked = std::sync::atomic::AtomicUsize::new(0);
    let r = storage::upload_fenced(&local, &fenced, || match asked.fetch_add(1, Ordering::SeqCst) {
        0 => Ok(()),
        _ => Err(storage::StorageError::Remote { url: fenced.to_string(), message: "the lock was taken over".into() }),
    });
    assert!(r.is_err_and(|e| e.to_string().contains("taken over")));
    assert_eq!(asked.load(Ordering::SeqCst), 2, "asked before the upload and before its completion");
    assert!(!s3.path("big", "dir/fenced.bin").exists());
    assert_eq!(storage::list(&S3Url::parse("s3://big/dir/").unwrap()).unwrap().len(), 1);
    seen.lock().unwrap().clear();
    // The read's connection is cut after 3 MB; the reader asks again from where it got to.
    let mut r = S3Reader::open(&url).unwrap();
    let mut back = Vec::new();
    r.read_to_end(&mut back).unwrap();
    assert!(cut.load(Ordering::SeqCst), "the proxy cut the read");
    // object_store retries a broken body itself (a ranged GET from the byte it got to); our
    // own resume is the bounded second line behind it. Either way a GET asked for the rest of
    // the object from an offset past its start, at most where the cut was.
    assert!(r.resumes() <= 1);
    let starts: Vec<u64> = seen
        .lock()
        .unwrap()
        .iter()
        .filter_map(|l| l.strip_prefix("range bytes=")?.split('-').next()?.parse().ok())
        .collect();
    assert!(starts.iter().any(|&n| n > 0 && n <= 3 << 20), "ranged GETs: {:?}", seen.lock().unwrap());
    assert!(back == data, "read bytes differ");
}

#[test]
fn keys_with_unicode_percent_hash_and_star_are_read_and_written_as_named() {
    let s3 = S3Server::start(&["crawl"]);
    let a = warc(&s3.path("crawl", "in/ü x+%#*.warc.gz"), 0, 3);
    let b = warc(&s3.path("crawl", "in/plain 50%.warc.gz"), 10, 2);
    let work = tempfile::tempdir().unwrap();
    let staging = work.path().join("staging").display().to_string();
    let o = pipeline(&s3, &["--warc", "s3://crawl/in/", "--out", "s3://crawl/out/ü x+%/", "--staging", &staging])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    // Stored under the prefix as written, not a percent-encoded copy of it.
    let out = s3.path("crawl", "out/ü x+%");
    assert!(
        out.join("part-00000.jsonl.zst").is_file(),
        "{:?}",
        std::fs::read_dir(s3.path("crawl", "out")).unwrap().collect::<Vec<_>>()
    );
    let got = ids_under(&out);
    assert_eq!(got.len(), a.len() + b.len(), "{got:?}");
    // An object named directly, too.
    let out2 = work.path().join("direct").display().to_string();
    let o = pipeline(&s3, &["--warc", "s3://crawl/in/ü x+%#*.warc.gz", "--out", &out2]).output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(ids_under(Path::new(&out2)).len(), a.len());
}

/// A `--once` feeds run of the feeds in `list` to `s3://crawl/feeds/` in parts of 4 KB, staged
/// in `staging`.
fn feeds_to_s3(s3: &S3Server, list: &str, delay_ms: &str, staging: &str, resume: bool) -> Command {
    let mut args = vec!["--feeds", list, "--once", "--delay-ms", delay_ms, "--allow-private-addresses"];
    args.extend(["--out", "s3://crawl/feeds/", "--part-bytes", "4096", "--staging", staging]);
    if resume {
        args.push("--resume");
    }
    pipeline(s3, &args)
}

#[test]
fn a_feeds_run_to_s3_killed_and_rerun_without_its_disk_writes_every_article_once() {
    let s3 = S3Server::start(&["crawl"]);
    // 3 slow hosts of 80 articles each: long enough to be killed halfway.
    let slow: Vec<(usize, Duration)> = (0..3).map(|h| (h, Duration::from_millis(15))).collect();
    let hosts = feed_hosts::start_with(3, 80, &slow);
    let work = tempfile::tempdir().unwrap();
    let list = work.path().join("feeds.txt");
    let feeds: Vec<String> = hosts.bases.iter().map(|b| format!("{b}/feed-0.xml")).collect();
    std::fs::write(&list, feeds.join("\n")).unwrap();
    let list = list.display().to_string();
    let run = |staging: &str, resume: bool| feeds_to_s3(&s3, &list, "5", staging, resume);
    let stage1 = work.path().join("stage1").display().to_string();
    let out = s3.path("crawl", "feeds");
    kill_after_parts(run(&stage1, false), &out, 3);
    assert!(s3.path("crawl", "feeds/state.sqlite").exists(), "the feeds database is in the bucket");
    let before = ids_under(&out).len();
    assert!(before > 0 && before < 240, "{before} records before the kill");
    // Rerun on an empty staging folder: the database and parts come from the bucket.
    let fetches = || hosts.log.lock().unwrap().iter().filter(|(_, p, _)| p.starts_with("/a/")).count();
    // Counted once the log has been still for 300 ms: a request the killed run had sent can
    // reach the server after the kill.
    let mut fetched_before = fetches();
    loop {
        std::thread::sleep(Duration::from_millis(300));
        let now = fetches();
        if now == fetched_before {
            break;
        }
        fetched_before = now;
    }
    let stage2 = work.path().join("stage2").display().to_string();
    let o = run(&stage2, true).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let got = ids_under(&out);
    let twice: Vec<_> = got.iter().filter(|(_, n)| **n > 1).collect();
    assert!(twice.is_empty(), "written twice: {twice:?}");
    assert_eq!(got.len(), 240, "every article listed is written");
    // The rerun fetched exactly the articles the bucket's parts did not hold.
    assert_eq!(fetches() - fetched_before, 240 - before);
    let stats: serde_json::Value =
        serde_json::from_slice(&std::fs::read(s3.path("crawl", "feeds/stats.json")).unwrap()).unwrap();
    assert_eq!(stats["written"], 240, "{stats}");
    assert_eq!(count_parts(Path::new(&stage2)), 0, "staging keeps no part");
    // `pipeline status` reads the run from the bucket.
    let st = pipeline(&s3, &["status", "s3://crawl/feeds/", "--json"]).output().unwrap();
    assert!(st.status.success(), "{}", String::from_utf8_lossy(&st.stderr));
    let st: serde_json::Value = serde_json::from_slice(&st.stdout).unwrap();
    assert_eq!(st["articles"]["done"], 240, "{st}");
    // A feeds shard's N is in the bucket too (its shard.json): another N from a fresh staging
    // folder is refused before anything is fetched.
    let shard_run = |shard: &str, staging: &str| {
        let staging = work.path().join(staging).display().to_string();
        let args =
            ["--feeds", &list, "--once", "--allow-private-addresses", "--out", "s3://crawl/sharded/", "--shard", shard];
        pipeline(&s3, &args).args(["--staging", &staging]).output().unwrap()
    };
    let o = shard_run("0/2", "s2");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(s3.path("crawl", "sharded/shard-00000/shard.json").exists());
    let o = shard_run("0/3", "s3");
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("2 shards, not 3"), "{stderr}");
}

#[test]
fn pages_handed_over_are_written_once_by_a_shard_killed_and_rerun_without_its_disk() {
    let s3 = S3Server::start(&["crawl"]);
    let ((r, kr), (j, kj)) = hosts_of_two_shards();
    // The article host slow: the shard writing its 100 pages is killed after its first part.
    let hosts = feed_hosts::start_with(4, 100, &[(j, Duration::from_millis(25))]);
    let work = tempfile::tempdir().unwrap();
    let list = work.path().join("feeds.txt");
    std::fs::write(&list, format!("{}/via-{j}-0.xml", hosts.bases[r])).unwrap();
    let list = list.display().to_string();
    let shard_run = |k: usize, staging: &str| {
        let staging = work.path().join(staging).display().to_string();
        let spec = format!("{k}/2");
        let args =
            ["--feeds", &list, "--once", "--delay-ms", "0", "--allow-private-addresses", "--out", "s3://crawl/sh/"];
        let mut c = pipeline(&s3, &args);
        c.args(["--shard", &spec, "--staging", &staging, "--part-bytes", "4096"]);
        c
    };
    let o = shard_run(kr, "r1").output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let inbox = s3.path("crawl", &format!("sh/shard-{kj:05}/inbox"));
    let entries = || std::fs::read_dir(&inbox).map_or(0, |d| d.count());
    assert_eq!(entries(), 100);
    let out = s3.path("crawl", &format!("sh/shard-{kj:05}"));
    kill_after_parts(shard_run(kj, "j1"), &out, 1);
    let before = ids_under(&out).len();
    assert!(before > 0 && before < 100, "{before} pages written before the kill");
    assert!(entries() > 0, "the pages not yet written stay handed over");
    let o = shard_run(kj, "j2").output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let got = ids_under(&out);
    assert_eq!(got.len(), 100, "every page handed over is written");
    assert!(got.values().all(|&n| n == 1), "written twice: {got:?}");
    assert_eq!(entries(), 0, "and leaves the inbox");
}

#[test]
fn a_redirect_to_another_shards_host_goes_to_that_shard_through_the_bucket() {
    let s3 = S3Server::start(&["crawl"]);
    let hosts = feed_hosts::start(4, 3);
    let ((r, kr), (j, kj)) = hosts_of_two_shards();
    let work = tempfile::tempdir().unwrap();
    let list = work.path().join("feeds.txt");
    let (base_r, base_j) = (&hosts.bases[r], &hosts.bases[j]);
    let feeds = [format!("{base_r}/via-{j}-0.xml"), format!("{base_r}/via-{j}-1.xml"), format!("{base_j}/feed-0.xml")];
    std::fs::write(&list, feeds.join("\n")).unwrap();
    let list = list.display().to_string();
    // Every run on a staging folder of its own: pods without disks, on any machine.
    let runs = std::cell::Cell::new(0);
    let shard_run = |k: usize| {
        runs.set(runs.get() + 1);
        let staging = work.path().join(format!("stage{}", runs.get())).display().to_string();
        let spec = format!("{k}/2");
        let args =
            ["--feeds", &list, "--once", "--delay-ms", "0", "--allow-private-addresses", "--out", "s3://crawl/sh/"];
        let o = pipeline(&s3, &args).args(["--shard", &spec, "--staging", &staging]).output().unwrap();
        assert!(o.status.success(), "shard {k}: {}", String::from_utf8_lossy(&o.stderr));
    };
    let inbox = s3.path("crawl", &format!("sh/shard-{kj:05}/inbox"));
    let entries =
        || std::fs::read_dir(&inbox).map_or(0, |d| d.filter(|e| e.as_ref().is_ok_and(|e| e.path().is_file())).count());
    shard_run(kj);
    shard_run(kr);
    assert_eq!(entries(), 6, "the redirecting host's shard handed its six pages over in the bucket");
    let st = pipeline(&s3, &["status", "s3://crawl/sh/", "--json"]).output().unwrap();
    let st: serde_json::Value = serde_json::from_slice(&st.stdout).unwrap();
    let waiting: Vec<u64> =
        st["shards"].as_array().unwrap().iter().map(|s| s["handed_waiting"].as_u64().unwrap()).collect();
    assert_eq!(waiting.iter().sum::<u64>(), 6, "pipeline status counts the pages waiting: {st}");
    shard_run(kj);
    let out = s3.path("crawl", "sh");
    let got = ids_under(&out);
    assert_eq!(got.len(), 6, "{got:?}");
    assert!(got.values().all(|&n| n == 1), "written twice: {got:?}");
    assert_eq!(entries(), 0, "pages written leave the inbox");
    assert_eq!(ids_under(&out.join(format!("shard-{kr:05}"))).len(), 0, "the redirecting host's shard wrote none");
    shard_run(kr);
    shard_run(kj);
    assert_eq!(ids_under(&out), got, "a rerun writes nothing again");
}

/// Writes a lock object under `s3://bucket/prefix` as another machine's run would hold it,
/// its last heartbeat `ago` seconds back.
fn forge_lock(s3: &S3Server, bucket: &str, prefix: &str, host: &str, ago: u64) {
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs();
    let holder =
        serde_json::json!({"host": host, "pid": 1, "run": "forged", "since": now - ago, "heartbeat": now - ago});
    let path = s3.path(bucket, &format!("{prefix}.lock"));
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, holder.to_string()).unwrap();
    // The store's time of the write is the file's: as old as the heartbeat.
    let when = std::time::SystemTime::now() - Duration::from_secs(ago);
    std::fs::File::options().write(true).open(&path).unwrap().set_modified(when).unwrap();
    // s3s-fs keeps the ETag of an object PUT through it in a file beside the buckets: without
    // it the ETag is computed from the bytes now there, as a real store's would change.
    let root = s3.path(bucket, "").parent().unwrap().to_path_buf();
    for e in std::fs::read_dir(root).unwrap().flatten() {
        if e.file_name().to_string_lossy().ends_with(".internal.json") {
            std::fs::remove_file(e.path()).unwrap();
        }
    }
}

/// Is the lock under `s3://bucket/prefix` released: absent, or the tombstone a run leaves as it
/// ends (src/pipeline/remote_lock.rs)?
fn lock_released(s3: &S3Server, bucket: &str, prefix: &str) -> bool {
    match std::fs::read(s3.path(bucket, &format!("{prefix}.lock"))) {
        Err(_) => true,
        Ok(bytes) => serde_json::from_slice::<serde_json::Value>(&bytes).is_ok_and(|v| v["released"] == true),
    }
}

fn lock_host(s3: &S3Server, bucket: &str, prefix: &str) -> Option<String> {
    let bytes = std::fs::read(s3.path(bucket, &format!("{prefix}.lock"))).ok()?;
    let v: serde_json::Value = serde_json::from_slice(&bytes).ok()?;
    Some(v["host"].as_str()?.to_string())
}

#[test]
fn one_process_at_a_time_writes_a_prefix_and_a_run_whose_lock_is_taken_over_stops() {
    let s3 = S3Server::start(&["crawl"]);
    let work = tempfile::tempdir().unwrap();
    let stage = |name: &str| work.path().join(name).display().to_string();
    let input = work.path().join("in");
    warc(&input.join("a.warc.gz"), 0, 10);
    let warc_run = |prefix: &str, staging: &str| {
        let out = format!("s3://crawl/{prefix}");
        pipeline(&s3, &["--warc", input.to_str().unwrap(), "--out", &out, "--staging", staging]).output().unwrap()
    };
    // Another machine writes the prefix (its heartbeat is fresh): refused before anything is
    // written, the holder named.
    forge_lock(&s3, "crawl", "busy/", "other-machine", 0);
    let o = warc_run("busy/", &stage("s1"));
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("another pipeline process writes this output") && stderr.contains("other-machine"),
        "{stderr}"
    );
    let names: Vec<String> = std::fs::read_dir(s3.path("crawl", "busy"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, [".lock"]);
    // A root's lock is a run without --shard, though it wrote nothing yet; a shard folder's
    // lock, a sharded run: neither kind starts over the other.
    let sharded = pipeline(&s3, &["--warc", input.to_str().unwrap(), "--out", "s3://crawl/busy/", "--shard", "0/2"])
        .args(["--staging", &stage("s1b")])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&sharded.stderr);
    assert_eq!(sharded.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("without --shard"), "{stderr}");
    forge_lock(&s3, "crawl", "split/shard-00001/", "other-machine", 0);
    let o = warc_run("split/", &stage("s1c"));
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("holds a sharded run"), "{stderr}");
    // A lock with no heartbeat for an hour is a dead machine's: taken over, and released at
    // the run's end.
    forge_lock(&s3, "crawl", "stale/", "other-machine", 3600);
    let o = warc_run("stale/", &stage("s2"));
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(ids_under(&s3.path("crawl", "stale")).len(), 10);
    assert!(lock_released(&s3, "crawl", "stale/"), "the lock is released");

    // Two processes at once on one prefix, each with its own staging folder (two machines).
    // 2 hosts of 80 articles, 50 ms a request: about 4 s, long enough for what follows.
    let slow: Vec<(usize, Duration)> = (0..2).map(|h| (h, Duration::from_millis(50))).collect();
    let hosts = feed_hosts::start_with(2, 80, &slow);
    let list = work.path().join("feeds.txt");
    let feeds: Vec<String> = hosts.bases.iter().map(|b| format!("{b}/feed-0.xml")).collect();
    std::fs::write(&list, feeds.join("\n")).unwrap();
    let list = list.display().to_string();
    let feeds_run = |staging: &str, resume: bool| feeds_to_s3(&s3, &list, "50", staging, resume);
    let mut first = feeds_run(&stage("f1"), false).stdout(Stdio::null()).stderr(Stdio::piped()).spawn().unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while count_parts(&s3.path("crawl", "feeds")) < 2 {
        assert!(Instant::now() < deadline, "the first run wrote no part");
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(lock_host(&s3, "crawl", "feeds/").is_some(), "the first run holds the lock");
    let o = feeds_run(&stage("f2"), true).output().unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("another pipeline process writes this output"), "{stderr}");
    // The first run's lock is taken over behind its back (it paused past the stale time, as
    // far as another machine could tell): it stops at its next upload, and writes nothing more.
    forge_lock(&s3, "crawl", "feeds/", "other-machine", 0);
    let status = first.wait().unwrap();
    let mut stderr = String::new();
    std::io::Read::read_to_string(first.stderr.as_mut().unwrap(), &mut stderr).unwrap();
    assert!(!status.success(), "{stderr}");
    assert!(stderr.contains("taken over by another process"), "{stderr}");
    assert_eq!(lock_host(&s3, "crawl", "feeds/").as_deref(), Some("other-machine"), "the successor's lock stays");
    // Once that holder is gone, a rerun finishes: every article once.
    forge_lock(&s3, "crawl", "feeds/", "other-machine", 3600);
    let o = feeds_run(&stage("f3"), true).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let got = ids_under(&s3.path("crawl", "feeds"));
    assert!(got.values().all(|n| *n == 1), "written twice: {got:?}");
    assert_eq!(got.len(), 160);
    assert!(lock_released(&s3, "crawl", "feeds/"));
}

#[test]
fn a_warc_run_to_s3_stopped_with_sigterm_releases_its_lock_and_resumes_exactly_once() {
    let s3 = S3Server::start(&["crawl"]);
    let work = tempfile::tempdir().unwrap();
    let input = work.path().join("in");
    // Small parts, each uploaded: a run of a few seconds.
    let ids = warc(&input.join("a.warc.gz"), 0, 3000);
    let run = |staging: &str, resume: bool| {
        let staging = work.path().join(staging).display().to_string();
        let mut c =
            pipeline(&s3, &["--warc", input.to_str().unwrap(), "--out", "s3://crawl/w/", "--part-bytes", "4096"]);
        c.args(["--staging", &staging]);
        if resume {
            c.arg("--resume");
        }
        c
    };
    let out = s3.path("crawl", "w");
    let mut child = run("s1", false).stdout(Stdio::null()).stderr(Stdio::piped()).spawn().unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while count_parts(&out) < 3 {
        assert!(Instant::now() < deadline && child.try_wait().unwrap().is_none(), "no parts while running");
        std::thread::sleep(Duration::from_millis(5));
    }
    assert!(out.join(".lock").exists());
    let o = Command::new("kill").args(["-TERM", &child.id().to_string()]).output().unwrap();
    assert!(o.status.success());
    let status = child.wait().unwrap();
    let mut stderr = String::new();
    std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut stderr).unwrap();
    assert_eq!(status.code(), Some(130), "{stderr}");
    assert!(lock_released(&s3, "crawl", "w/"), "the lock is released: {stderr}");
    let before = ids_under(&out).len();
    assert!(before > 0 && before < 3000, "{before} records before the signal");
    // The rerun, as from another machine's empty staging folder, finishes: every record once.
    let o = run("s2", true).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let got = ids_under(&out);
    assert!(got.values().all(|n| *n == 1), "written twice");
    assert_eq!(got.len(), ids.len());
}

/// The bucket's feeds database says the highest part it names is in place (its
/// `committed_part` is that part), read from a copy of the object.
fn bucket_knows_its_last_part_is_in_place(s3: &S3Server, work: &Path) -> bool {
    let Ok(bytes) = std::fs::read(s3.path("crawl", "feeds/state.sqlite")) else { return false };
    let copy = work.join("probe.sqlite");
    std::fs::write(&copy, bytes).unwrap();
    let Ok(db) = rusqlite::Connection::open(&copy) else { return false };
    let highest: Option<i64> =
        db.query_row("SELECT max(part) FROM articles WHERE status = 'done'", [], |r| r.get(0)).unwrap_or(None);
    let in_place: Option<String> =
        db.query_row("SELECT value FROM meta WHERE key = 'committed_part'", [], |r| r.get(0)).ok();
    highest.is_some() && highest.map(|h| h.to_string()) == in_place
}

#[test]
fn parts_a_consumer_deleted_from_the_bucket_are_not_written_again() {
    // The review of session 48: a continuous crawl's bucket learnt that a part was in place
    // only with the next part's upload, so a consumer that read and deleted the newest part,
    // then a pod killed before the next one, got that part's articles fetched and written a
    // second time. The run is frozen (SIGSTOP) while the bucket is looked at, so the kill
    // comes exactly when the bucket has all its parts and says so.
    let s3 = S3Server::start(&["crawl"]);
    let slow = [(0, Duration::from_millis(40))];
    let hosts = feed_hosts::start_with(1, 60, &slow);
    let work = tempfile::tempdir().unwrap();
    let list = work.path().join("feeds.txt");
    std::fs::write(&list, format!("{}/feed-0.xml\n", hosts.bases[0])).unwrap();
    let list = list.display().to_string();
    let stage = |name: &str| work.path().join(name).display().to_string();
    let out = s3.path("crawl", "feeds");
    // A continuous crawl (no --once): nothing but the parts tells the bucket what is in place.
    let s1 = stage("s1");
    let args = ["--feeds", &list, "--delay-ms", "5", "--allow-private-addresses", "--out", "s3://crawl/feeds/"];
    let mut child = pipeline(&s3, &args)
        .args(["--part-bytes", "4096", "--staging", &s1])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let pid = child.id().to_string();
    let signal = |sig: &str| assert!(Command::new("kill").args([sig, &pid]).status().unwrap().success());
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        assert!(Instant::now() < deadline, "no part in place in 120 s");
        assert!(child.try_wait().unwrap().is_none(), "the run ended before it could be killed");
        std::thread::sleep(Duration::from_millis(20));
        signal("-STOP");
        if count_parts(&out) >= 1 && bucket_knows_its_last_part_is_in_place(&s3, work.path()) {
            break;
        }
        signal("-CONT");
    }
    child.kill().unwrap(); // SIGKILL, while stopped
    child.wait().unwrap();
    // The consumer has read every part and deletes them.
    let read = ids_under(&out);
    for e in std::fs::read_dir(&out).unwrap().flatten() {
        if e.file_name().to_string_lossy().starts_with("part-") {
            std::fs::remove_file(e.path()).unwrap();
        }
    }
    let o = feeds_to_s3(&s3, &list, "5", &stage("s2"), true).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let again: Vec<_> = ids_under(&out).into_keys().filter(|id| read.contains_key(id)).collect();
    assert!(again.is_empty(), "written again after the consumer deleted them: {again:?}");
    assert_eq!(read.len() + ids_under(&out).len(), 60, "every article once");
}
