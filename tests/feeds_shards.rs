//! Feeds runs split over shards against loopback hosts (127.0.0.1, 127.0.0.2, …): every shard
//! polls every feed and keeps the articles of its own hosts, so an article listed by feeds of
//! several shards is fetched and written once, one host's requests stay in one process, a
//! longer feed list moves nothing already written, and `pipeline status` shows a finished
//! `--once` round as done.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Output};

use article_pipeline::sink::{list_parts, read_part};

use crate::feed_hosts;

fn pipeline(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_pipeline")).args(args).output().expect("run pipeline")
}

/// Record URLs under `root`'s shard folders, with how often each was written.
fn urls(root: &Path, n: usize) -> BTreeMap<String, usize> {
    let mut m = BTreeMap::new();
    for k in 0..n {
        for p in list_parts(&root.join(format!("shard-{k:05}"))).unwrap_or_default() {
            for r in read_part(&p).unwrap() {
                *m.entry(r["metadata"]["url"].as_str().unwrap().to_string()).or_default() += 1;
            }
        }
    }
    m
}

#[test]
fn an_article_listed_in_two_shards_is_written_once_and_a_new_feed_moves_nothing() {
    let hosts = feed_hosts::start(4, 5);
    let dir = tempfile::tempdir().unwrap();
    // Each host's feed listed twice under two URLs (the query is ignored by the server): the
    // same articles reach whichever shard a feed URL would have fallen in.
    let mut feeds: Vec<String> = Vec::new();
    for b in &hosts.bases {
        feeds.push(format!("{b}/feed-0.xml"));
        feeds.push(format!("{b}/feed-0.xml?mirror=1"));
    }
    let list = dir.path().join("feeds.txt");
    std::fs::write(&list, feeds.join("\n")).unwrap();
    let root = dir.path().join("root");
    let shard = |k: usize| {
        let spec = format!("{k}/2");
        let o = pipeline(&[
            "--feeds",
            list.to_str().unwrap(),
            "--once",
            "--delay-ms",
            "0",
            "--allow-private-addresses",
            "--out",
            root.to_str().unwrap(),
            "--shard",
            &spec,
        ]);
        assert_eq!(o.status.code(), Some(0), "shard {k}: {}", String::from_utf8_lossy(&o.stderr));
    };
    shard(0);
    shard(1);
    let got = urls(&root, 2);
    assert_eq!(got.len(), 20, "{got:?}");
    assert!(got.values().all(|&n| n == 1), "an article was written by two shards: {got:?}");
    // Each host's articles were fetched by one shard only.
    let log = hosts.log.lock().unwrap().clone();
    let fetched = log.iter().filter(|(_, p, _)| p.starts_with("/a/")).count();
    assert_eq!(fetched, 20, "articles fetched more than once");

    // A longer list (one feed more, new articles on host 0): only the new articles come.
    feeds.insert(3, format!("{}/feed-1.xml", hosts.bases[0]));
    std::fs::write(&list, feeds.join("\n")).unwrap();
    shard(0);
    shard(1);
    let got = urls(&root, 2);
    assert_eq!(got.len(), 25, "{got:?}");
    assert!(got.values().all(|&n| n == 1), "records written twice after the list grew: {got:?}");

    // Both shards finished their --once round: status shows them done, none in progress.
    let st = pipeline(&["status", root.to_str().unwrap(), "--json"]);
    let st: serde_json::Value = serde_json::from_slice(&st.stdout).unwrap();
    for s in st["shards"].as_array().unwrap() {
        assert_eq!(s["in_progress"], 0, "{st}");
        assert_eq!(s["done"], 1, "{st}");
    }
}
