//! Feeds runs split over shards against loopback hosts (127.0.0.1, 127.0.0.2, …): every shard
//! polls every feed and keeps the articles of its own hosts, so an article listed by feeds of
//! several shards is fetched and written once, one host's requests stay in one process, a
//! longer feed list moves nothing already written, and `pipeline status` shows a finished
//! `--once` round as done.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use article_pipeline::pipeline::shard::Shard;
use article_pipeline::sink::{list_parts, read_part};

use crate::common::{self, pipeline};
use crate::feed_hosts;

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

/// Shard `k`'s `stats.json` under `root`.
fn shard_stats(root: &Path, k: usize) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(root.join(format!("shard-{k:05}/stats.json"))).unwrap()).unwrap()
}

/// How many entries wait in shard `k`'s inbox under `root`.
fn inbox_entries(root: &Path, k: usize) -> usize {
    std::fs::read_dir(root.join(format!("shard-{k:05}/inbox"))).map_or(0, |d| d.count())
}

/// A `--once` round of shard `k` of 2 over the feeds of `list`, writing under `root`.
fn once_round(list: &Path, root: &Path, k: usize) {
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
    let shard = |k: usize| once_round(&list, &root, k);
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

/// Of the four loopback hosts `feed_hosts` starts, a redirecting one and an article one that
/// fall in different shards of 2 (shards own hosts by name): (host index, its shard) each.
pub fn hosts_of_two_shards() -> ((usize, usize), (usize, usize)) {
    let owner = |i: usize| Shard { k: 0, n: 2 }.owner(&format!("127.0.0.{}", i + 1)).k;
    let (r, j) = (0..4)
        .flat_map(|r| (0..4).map(move |j| (r, j)))
        .find(|&(r, j)| owner(r) != owner(j))
        .expect("four hosts fall in both of two shards");
    ((r, owner(r)), (j, owner(j)))
}

#[test]
fn a_page_that_cannot_be_handed_over_is_written_where_it_was_fetched_on_its_last_try() {
    let hosts = feed_hosts::start(4, 3);
    let ((r, kr), (j, kj)) = hosts_of_two_shards();
    let dir = tempfile::tempdir().unwrap();
    let list = dir.path().join("feeds.txt");
    std::fs::write(&list, format!("{}/via-{j}-0.xml", hosts.bases[r])).unwrap();
    let root = dir.path().join("root");
    // The other shard's inbox cannot be made: a file where its folder would be.
    std::fs::create_dir_all(root.join(format!("shard-{kj:05}"))).unwrap();
    std::fs::write(root.join(format!("shard-{kj:05}/inbox")), b"").unwrap();
    // Each --once round is one try, a failed input (exit 1) until the fifth, the last.
    let spec = format!("{kr}/2");
    let (list_s, root_s) = (list.to_str().unwrap(), root.to_str().unwrap());
    let args = [
        "--feeds",
        list_s,
        "--once",
        "--delay-ms",
        "0",
        "--allow-private-addresses",
        "--out",
        root_s,
        "--shard",
        &spec,
    ];
    for round in 1..=5 {
        let o = pipeline(&args);
        assert_eq!(o.status.code(), Some(if round < 5 { 1 } else { 0 }), "{}", String::from_utf8_lossy(&o.stderr));
        assert_eq!(urls(&root, 2).len(), if round < 5 { 0 } else { 3 }, "round {round}");
    }
    once_round(&list, &root, kr);
    assert!(urls(&root, 2).values().all(|&n| n == 1), "written twice: {:?}", urls(&root, 2));
    // The pages were downloaded on the last try only: a failed post is retried without them.
    let log = hosts.log.lock().unwrap().clone();
    assert_eq!(log.iter().filter(|(h, p, _)| *h == j && p.starts_with("/a/")).count(), 3);
}

#[test]
fn a_redirect_chain_that_comes_back_to_its_shard_is_written_once_there() {
    let hosts = feed_hosts::start(4, 3);
    let ((r, kr), (j, kj)) = hosts_of_two_shards();
    let base_r = &hosts.bases[r];
    let dir = tempfile::tempdir().unwrap();
    // Host r's articles plainly, and through a tracker on host r, then a shortener on host j
    // (the other shard's), back to host r.
    let list = dir.path().join("feeds.txt");
    std::fs::write(&list, format!("{base_r}/chain-{j}-{r}-0.xml\n{base_r}/feed-0.xml")).unwrap();
    let root = dir.path().join("root");
    for k in [kr, kj, kr, kj] {
        once_round(&list, &root, k);
    }
    let expected: BTreeMap<String, usize> = (0..3).map(|i| (format!("{base_r}/a/0/{i}"), 1)).collect();
    assert_eq!(urls(&root, 2), expected, "each page once");
    // Downloaded once each too: the other shard stopped at the redirect back.
    let log = hosts.log.lock().unwrap().clone();
    assert_eq!(log.iter().filter(|(h, p, _)| *h == r && p.starts_with("/a/")).count(), 3, "pages fetched twice");
    let stats = shard_stats(&root, kj);
    assert_eq!((stats["written"].as_u64(), stats["skipped"]["other_shard"].as_u64()), (Some(0), Some(3)), "{stats}");
    for k in [kr, kj] {
        assert_eq!(inbox_entries(&root, k), 0, "shard {k}'s inbox");
    }
}

#[test]
fn a_redirect_to_another_shards_host_is_written_once_by_that_shard() {
    let hosts = feed_hosts::start(4, 3);
    let ((r, kr), (j, kj)) = hosts_of_two_shards();
    let (base_r, base_j) = (&hosts.bases[r], &hosts.bases[j]);
    let dir = tempfile::tempdir().unwrap();
    // Host j's first feed both plainly and through host r's redirects; its second feed only
    // through the redirects.
    let feeds = [format!("{base_r}/via-{j}-0.xml"), format!("{base_r}/via-{j}-1.xml"), format!("{base_j}/feed-0.xml")];
    let list = dir.path().join("feeds.txt");
    std::fs::write(&list, feeds.join("\n")).unwrap();
    let root = dir.path().join("root");
    let shard = |k: usize| once_round(&list, &root, k);
    let expected: BTreeMap<String, usize> =
        (0..2).flat_map(|f| (0..3).map(move |i| (format!("{base_j}/a/{f}/{i}"), 1))).collect();
    let entries = || inbox_entries(&root, kj);
    // The redirecting host's shard first: it hands all six pages over; the article host's
    // shard takes them in as its round starts and writes each once, the three it also has
    // through plain links included; the inbox empties.
    shard(kr);
    assert_eq!(entries(), 6, "one entry per page handed over");
    let stats = shard_stats(&root, kr);
    assert_eq!(stats["skipped"]["other_shard"], 6, "{stats}");
    assert_eq!(stats["written"], 0, "{stats}");
    // `pipeline status` shows the pages waiting, and the shard they wait for as not done.
    let status = || -> serde_json::Value {
        let o = pipeline(&["status", root.to_str().unwrap(), "--json"]);
        serde_json::from_slice(&o.stdout).unwrap()
    };
    let st = status();
    let of_j = |st: &serde_json::Value| {
        st["shards"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["dir"].as_str().unwrap().ends_with(&format!("shard-{kj:05}")))
            .unwrap()
            .clone()
    };
    assert_eq!((of_j(&st)["handed_waiting"].as_u64(), of_j(&st)["in_progress"].as_u64()), (Some(6), Some(1)), "{st}");
    shard(kj);
    let st = status();
    assert_eq!((of_j(&st)["handed_waiting"].as_u64(), of_j(&st)["done"].as_u64()), (Some(0), Some(1)), "{st}");
    assert_eq!(urls(&root, 2), expected, "each page once, by the shard of its host");
    assert_eq!(entries(), 0, "pages written leave the inbox");
    // Rounds after, the shards at the same time as a job array runs them: nothing is written
    // again.
    for _ in 0..2 {
        std::thread::scope(|s| {
            s.spawn(|| shard(kr));
            s.spawn(|| shard(kj));
        });
    }
    assert_eq!(urls(&root, 2), expected, "records written twice on a rerun");
    let in_shard_j: usize =
        list_parts(&root.join(format!("shard-{kj:05}"))).unwrap().iter().map(|p| read_part(p).unwrap().len()).sum();
    assert_eq!(in_shard_j, 6, "the pages are the article host's shard's");
    // Each page was downloaded once: the redirecting host's shard stops at the redirect.
    let log = hosts.log.lock().unwrap().clone();
    let fetched = log.iter().filter(|(h, p, _)| *h == j && p.starts_with("/a/")).count();
    assert_eq!(fetched, 6, "pages fetched more than once");
}

#[test]
fn a_continuous_shard_takes_in_pages_handed_over_while_it_runs() {
    // The article host's shard crawls continuously (its feeds polled once an hour); the
    // redirecting host's shard hands it three pages after its first look at the inbox. It
    // finds them at its next look (every `INBOX_EVERY`, not only when a round starts) and
    // writes each once; the inbox is cleared by the end of the run.
    let hosts = feed_hosts::start(4, 3);
    let ((r, kr), (j, kj)) = hosts_of_two_shards();
    let (base_r, base_j) = (&hosts.bases[r], &hosts.bases[j]);
    let dir = tempfile::tempdir().unwrap();
    let list = dir.path().join("feeds.txt");
    std::fs::write(&list, format!("{base_r}/via-{j}-0.xml")).unwrap();
    let root = dir.path().join("root");
    let spec = format!("{kj}/2");
    let child = Command::new(env!("CARGO_BIN_EXE_pipeline"))
        .args(["--feeds", list.to_str().unwrap(), "--interval", "3600", "--min-interval", "3600"])
        .args(["--delay-ms", "0", "--allow-private-addresses", "--out", root.to_str().unwrap(), "--shard", &spec])
        .env("RUST_LOG", "warn")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut child = KillOnDrop(child);
    let downloads = || hosts.log.lock().unwrap().iter().filter(|(h, p, _)| *h == j && p.starts_with("/a/")).count();
    // The continuous shard's first poll (its feed's links are the other shard's, so it keeps
    // none; its first look at the inbox came before it), then the other shard's round, which
    // hands the pages over.
    let deadline = Instant::now() + Duration::from_secs(30);
    while !hosts.log.lock().unwrap().iter().any(|(h, p, _)| *h == r && p.ends_with(".xml")) {
        assert!(Instant::now() < deadline, "the continuous shard never polled its feed");
        std::thread::sleep(Duration::from_millis(20));
    }
    once_round(&list, &root, kr);
    let stats = shard_stats(&root, kr);
    assert_eq!((stats["written"].as_u64(), stats["skipped"]["other_shard"].as_u64()), (Some(0), Some(3)), "{stats}");
    // Settled (extracted and handed to the writer), not only requested: a stop lets go the
    // fetches it has not joined yet.
    let db = root.join(format!("shard-{kj:05}/state.sqlite"));
    let settled = || -> i64 {
        let c = rusqlite::Connection::open(&db).unwrap();
        c.query_row(
            "SELECT count(*) FROM articles WHERE url LIKE ?1 || '/a/%' AND started > 0 AND started = settled",
            [base_j],
            |r| r.get(0),
        )
        .unwrap_or(0)
    };
    let deadline = Instant::now() + article_pipeline::pipeline::handoff::INBOX_EVERY + Duration::from_secs(30);
    while settled() < 3 {
        assert!(Instant::now() < deadline, "the running shard did not take its inbox in ({} pages)", downloads());
        std::thread::sleep(Duration::from_millis(50));
    }
    let (status, stderr) = common::stop(&mut child.0, "TERM");
    assert_eq!(status.code(), Some(0), "{stderr}");
    let expected: BTreeMap<String, usize> = (0..3).map(|i| (format!("{base_j}/a/0/{i}"), 1)).collect();
    assert_eq!(urls(&root, 2), expected, "each page once, by the shard of its host");
    assert_eq!(inbox_entries(&root, kj), 0, "the inbox is cleared");
    assert_eq!(downloads(), 3, "pages fetched more than once");
}

/// A child process killed when the test ends, failed or not, so a failed assertion leaves no
/// crawl running.
struct KillOnDrop(std::process::Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn a_once_round_takes_in_the_pages_a_shard_beside_it_hands_over_before_it_ends() {
    // Shards of a job array run at the same time. The article host's shard is still busy with
    // its own articles (a slow host) when the redirecting host's shard hands it three more. It
    // looks at its inbox again before its round ends, so a one-off run writes them too,
    // instead of leaving them for a round that may never come.
    let ((r, kr), (j, kj)) = hosts_of_two_shards();
    let hosts = feed_hosts::start_with(4, 3, &[(j, Duration::from_secs(2))]);
    let (base_r, base_j) = (&hosts.bases[r], &hosts.bases[j]);
    let dir = tempfile::tempdir().unwrap();
    let (list_r, list_j) = (dir.path().join("r.txt"), dir.path().join("j.txt"));
    std::fs::write(&list_r, format!("{base_r}/via-{j}-0.xml")).unwrap();
    std::fs::write(&list_j, format!("{base_j}/feed-1.xml\n{base_r}/via-{j}-0.xml")).unwrap();
    let root = dir.path().join("root");
    std::thread::scope(|s| {
        let article_shard = s.spawn(|| once_round(&list_j, &root, kj));
        // Its own articles are being fetched: its first look at the inbox is behind it.
        let deadline = Instant::now() + Duration::from_secs(60);
        while !hosts.log.lock().unwrap().iter().any(|(h, p, _)| *h == j && p.starts_with("/a/1/")) {
            assert!(Instant::now() < deadline, "the article host's shard never fetched its articles");
            std::thread::sleep(Duration::from_millis(20));
        }
        once_round(&list_r, &root, kr);
        article_shard.join().unwrap();
    });
    let expected: BTreeMap<String, usize> =
        [0, 1].iter().flat_map(|f| (0..3).map(move |i| (format!("{base_j}/a/{f}/{i}"), 1))).collect();
    assert_eq!(urls(&root, 2), expected, "each page once, by the shard of its host, in this round");
    assert_eq!(inbox_entries(&root, kj), 0, "the inbox is cleared");
}
