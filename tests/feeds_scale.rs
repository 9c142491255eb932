//! Feeds at crawl scale against axum servers on distinct loopback addresses (127.0.0.1,
//! 127.0.0.2, …: distinct hosts): the per-host frontier lets hosts proceed side by side while
//! each keeps its politeness delay; many feeds over many hosts are fetched exactly once; the
//! adaptive schedule polls a busy feed more often than a quiet one; a gone feed is parked;
//! `pipeline status` reports it all. Timings are measured by `scripts/bench-feeds.sh`, not
//! asserted here.

use std::collections::HashMap;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use article_pipeline::sink::{list_parts, read_part};

use crate::feed_hosts;
use feed_hosts::start;

fn pipeline(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_pipeline")).args(args).output().expect("run pipeline")
}

fn records(out: &Path) -> Vec<serde_json::Value> {
    list_parts(out).unwrap().iter().flat_map(|p| read_part(p).unwrap()).collect()
}

fn feeds_file(dir: &Path, urls: &[String]) -> String {
    let p = dir.join("feeds.txt");
    std::fs::write(&p, urls.join("\n")).unwrap();
    p.display().to_string()
}

#[test]
fn hosts_proceed_side_by_side_and_each_keeps_its_delay() {
    // Two hosts, 30 articles each, 100 ms delay: a host-blind pool of slots would drain the
    // first host before starting the second; the frontier interleaves them.
    let hosts = start(2, 30);
    let dir = tempfile::tempdir().unwrap();
    let feeds: Vec<String> = hosts.bases.iter().map(|b| format!("{b}/feed-x.xml")).collect();
    let list = feeds_file(dir.path(), &feeds);
    let out = dir.path().join("out");
    let o = pipeline(&[
        "--feeds",
        &list,
        "--once",
        "--delay-ms",
        "100",
        "--allow-private-addresses",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(records(&out).len(), 60);
    let log = hosts.log.lock().unwrap().clone();
    // When host 0 has had half its articles, host 1 has had a sixth of its own (a pool that
    // drained host 0 first would give none; the bound leaves host 0 a head start of 1 s, its
    // robots.txt and feed answered first on a loaded machine).
    let articles: Vec<usize> = log.iter().filter(|(_, p, _)| p.starts_with("/a/")).map(|(h, _, _)| *h).collect();
    let half = articles.iter().enumerate().filter(|(_, h)| **h == 0).nth(14).unwrap().0;
    let other = articles[..half].iter().filter(|h| **h == 1).count();
    assert!(other >= 5, "host 1 had {other} articles when host 0 had 15: {articles:?}");
    // Politeness per host: one request at a time, starts at least the delay apart.
    for (i, b) in hosts.busy.iter().enumerate() {
        assert_eq!(b.lock().unwrap().1, 1, "host {i} had concurrent requests");
    }
    // The gaps between requests are timing, measured by `cargo bench --bench feeds_crawl`
    // (smallest gap on one host), not asserted here: server-side arrival times under a busy
    // 2-thread runtime can come closer than the client's spacing.
}

#[test]
fn many_feeds_over_many_hosts_fetch_every_article_exactly_once() {
    // 220 feeds over 20 hosts (10 feeds of 3 articles each per host, and each host's first
    // feed listed again under another URL): one --once round fetches each of the 600 distinct
    // articles exactly once.
    let hosts = start(20, 3);
    let dir = tempfile::tempdir().unwrap();
    let mut feeds = Vec::new();
    for b in &hosts.bases {
        for f in 0..10 {
            feeds.push(format!("{b}/feed-{f}.xml"));
        }
        feeds.push(format!("{b}/feed-0.xml?again")); // the same articles through another feed
    }
    let list = feeds_file(dir.path(), &feeds);
    let out = dir.path().join("out");
    let o = pipeline(&[
        "--feeds",
        &list,
        "--once",
        "--delay-ms",
        "20",
        "--allow-private-addresses",
        "--max-connections",
        "16",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let recs = records(&out);
    assert_eq!(recs.len(), 20 * 10 * 3);
    let log = hosts.log.lock().unwrap().clone();
    let mut per_url: HashMap<(usize, String), u32> = HashMap::new();
    for (h, p, _) in log.iter().filter(|(_, p, _)| p.starts_with("/a/")) {
        *per_url.entry((*h, p.clone())).or_default() += 1;
    }
    assert_eq!(per_url.len(), 600);
    assert!(per_url.values().all(|n| *n == 1), "an article was fetched twice");
    for (i, b) in hosts.busy.iter().enumerate() {
        assert_eq!(b.lock().unwrap().1, 1, "host {i} had concurrent requests");
    }
    // Per-host counts in stats.json and in `pipeline status`.
    let stats: serde_json::Value = serde_json::from_slice(&std::fs::read(out.join("stats.json")).unwrap()).unwrap();
    let h0 = &stats["hosts"][&hosts.bases[0]];
    assert_eq!(h0["fetched"], 30, "{stats}");
    assert!(h0["bytes"].as_u64().unwrap() > 30 * 500);
    let st = pipeline(&["status", out.to_str().unwrap(), "--json"]);
    assert!(st.status.success(), "{}", String::from_utf8_lossy(&st.stderr));
    let st: serde_json::Value = serde_json::from_slice(&st.stdout).unwrap();
    assert_eq!(st["mode"], "feeds");
    assert_eq!(st["feeds"].as_array().unwrap().len(), 220);
    assert_eq!(st["articles"]["done"], 600);
}

#[test]
fn a_gone_feed_is_parked_and_reported() {
    let hosts = start(1, 2);
    let dir = tempfile::tempdir().unwrap();
    let b = &hosts.bases[0];
    let list = feeds_file(dir.path(), &[format!("{b}/feed-1.xml"), format!("{b}/gone.xml")]);
    let out = dir.path().join("out");
    for i in 0..3 {
        let mut args = vec!["--feeds", &list, "--once", "--delay-ms", "10", "--allow-private-addresses"];
        if i > 0 {
            args.push("--resume");
        }
        args.extend(["--out", out.to_str().unwrap()]);
        let o = pipeline(&args);
        assert_eq!(o.status.code(), Some(1), "{}", String::from_utf8_lossy(&o.stderr));
    }
    let polls_of_gone = || hosts.log.lock().unwrap().iter().filter(|(_, p, _)| p == "/gone.xml").count();
    assert_eq!(polls_of_gone(), 3);
    let o = pipeline(&[
        "--feeds",
        &list,
        "--once",
        "--delay-ms",
        "10",
        "--allow-private-addresses",
        "--resume",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(String::from_utf8_lossy(&o.stderr).contains("gone.xml: parked"), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(polls_of_gone(), 3, "a parked feed is not polled");
    let st = pipeline(&["status", out.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&st.stdout);
    let line = text.lines().find(|l| l.contains("gone.xml")).unwrap();
    assert!(line.starts_with("parked"), "{text}");
    assert!(text.contains("articles: done 2"), "{text}");
}

#[test]
fn the_schedule_polls_a_busy_feed_more_often_than_a_quiet_one_and_writes_each_item_once() {
    // Continuous mode: /grow-50 gains 5 items a second, /grow-1 one item every 10 seconds.
    // Intervals are bounded to 1..4 s. Once the busy feed has been polled more often and a part
    // is committed, kill -9, then --resume --once: every item the feeds listed is written
    // exactly once.
    let hosts = start(2, 0);
    let dir = tempfile::tempdir().unwrap();
    let list =
        feeds_file(dir.path(), &[format!("{}/grow-50.xml", hosts.bases[0]), format!("{}/grow-1.xml", hosts.bases[1])]);
    let out = dir.path().join("out");
    let args = [
        "--feeds",
        &list,
        "--interval",
        "2",
        "--min-interval",
        "1",
        "--max-interval",
        "4",
        "--delay-ms",
        "10",
        "--allow-private-addresses",
        "--part-bytes",
        "4096",
        "--out",
        out.to_str().unwrap(),
    ];
    let mut child = Command::new(env!("CARGO_BIN_EXE_pipeline"))
        .args(args)
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(dir.path().join("run.log")).unwrap())
        .spawn()
        .unwrap();
    // Until the schedule has shown itself (the busy feed polled at least two more times than
    // the quiet one) and a part is committed, at most a minute: then kill -9.
    let polls = |feed: &str| hosts.log.lock().unwrap().iter().filter(|(_, p, _)| p == feed).count();
    let t0 = Instant::now();
    while t0.elapsed() < Duration::from_secs(60) && child.try_wait().unwrap().is_none() {
        let parts = list_parts(&out).map(|p| p.len()).unwrap_or(0);
        if polls("/grow-50.xml") >= polls("/grow-1.xml") + 2 && parts >= 1 {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(child.try_wait().unwrap().is_none(), "the continuous run ended by itself");
    // The kill may come with a poll in flight: its items are listed, not yet stored, and must
    // still be listed when the resumed run polls.
    hosts.freeze();
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    let (busy, quiet) = (polls("/grow-50.xml"), polls("/grow-1.xml"));
    let run_log = std::fs::read_to_string(dir.path().join("run.log")).unwrap();
    assert!(busy >= quiet + 2, "busy feed polled {busy} times, quiet feed {quiet}\n{run_log}");
    let mut resume = args.to_vec();
    resume.extend(["--resume", "--once"]);
    let o = pipeline(&resume);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let recs = records(&out);
    let mut urls: Vec<String> = recs.iter().map(|r| r["metadata"]["url"].as_str().unwrap().to_string()).collect();
    let n = urls.len();
    urls.sort_unstable();
    urls.dedup();
    assert_eq!(urls.len(), n, "a record was written twice");
    // Every article any feed response listed is written, and nothing else: compared with what
    // the feeds listed, not with what was fetched.
    let listed: std::collections::BTreeSet<String> = hosts.listed.lock().unwrap().iter().cloned().collect();
    let written: std::collections::BTreeSet<String> = urls.into_iter().collect();
    let lost: Vec<&String> = listed.difference(&written).collect();
    let extra: Vec<&String> = written.difference(&listed).collect();
    assert!(lost.is_empty() && extra.is_empty(), "listed but not written: {lost:?}; written but not listed: {extra:?}");
}
