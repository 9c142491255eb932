//! Feed crawling at scale, against loopback hosts (127.0.0.1 … 127.0.0.N, one axum server
//! each; `tests/common/feed_hosts.rs`). Prints wall time, requests per second and the
//! pipeline's peak RSS for:
//!
//! 1. N hosts × M articles at delay d, N = 2, 20, 100: a polite crawl needs about
//!    (M + 2) · d per host (robots.txt, the feed, M articles); hosts proceed side by side.
//!    Also the smallest gap between two requests to one host as the servers saw them (the
//!    tests check politeness by requests in flight, which does not depend on timing).
//! 2. The same with one slow host (every response 2 s): the others finish as before.
//! 3. 1,000 feeds over 100 hosts, one `--once` round: every article once.
//! 4. A continuous soak of 30+ poll cycles (`--interval 1 --min-interval 1 --max-interval 2`)
//!    over feeds that gain items at different rates: RSS over time, then kill -9 and
//!    `--resume --once`: no item lost or written twice.
//!
//! `cargo bench --bench feeds_crawl` (set FEEDS_BENCH=1,2,3 to run a subset).

#[path = "../tests/common/feed_hosts.rs"]
mod feed_hosts;

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use article_pipeline::sink::{list_parts, read_part};
use feed_hosts::{Hosts, start, start_with};

fn pipeline() -> Command {
    Command::new(env!("CARGO_BIN_EXE_pipeline"))
}

/// Waits for a child, sampling its resident memory; returns (wall, peak RSS in MB, samples).
fn watch(mut child: Child, stop_after: Option<Duration>) -> (Duration, f64, Vec<(f64, f64)>) {
    let t0 = Instant::now();
    let pid = child.id();
    let (mut peak, mut samples) = (0f64, Vec::new());
    loop {
        if let Ok(s) = std::fs::read_to_string(format!("/proc/{pid}/status")) {
            let kb = |key: &str| {
                s.lines()
                    .find_map(|l| l.strip_prefix(key))
                    .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
                    .unwrap_or(0.0)
            };
            peak = peak.max(kb("VmHWM:") / 1024.0);
            samples.push((t0.elapsed().as_secs_f64(), kb("VmRSS:") / 1024.0));
        }
        if child.try_wait().unwrap().is_some() {
            return (t0.elapsed(), peak, samples);
        }
        if stop_after.is_some_and(|d| t0.elapsed() >= d) {
            child.kill().unwrap();
            child.wait().unwrap();
            return (t0.elapsed(), peak, samples);
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn feeds_file(dir: &Path, urls: &[String]) -> String {
    let p = dir.join("feeds.txt");
    std::fs::write(&p, urls.join("\n")).unwrap();
    p.display().to_string()
}

fn once(list: &str, out: &Path, delay_ms: u64, extra: &[&str]) -> Child {
    pipeline()
        .args(["--feeds", list, "--once", "--allow-private-addresses", "--no-progress"])
        .args(["--delay-ms", &delay_ms.to_string(), "--out", out.to_str().unwrap()])
        .args(extra)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

fn records(out: &Path) -> Vec<serde_json::Value> {
    list_parts(out).unwrap().iter().flat_map(|p| read_part(p).unwrap()).collect()
}

fn requests(h: &Hosts) -> usize {
    h.log.lock().unwrap().len()
}

fn wanted(n: u32) -> bool {
    std::env::var("FEEDS_BENCH").map(|v| v.split(',').any(|x| x.trim() == n.to_string())).unwrap_or(true)
}

fn main() {
    // libtest-style arguments (`--bench`) are ignored.
    let (m, d) = (20usize, 200u64);
    if wanted(1) || wanted(2) {
        println!(
            "1/2. N hosts x {m} articles at delay {d} ms (polite bound (M+2)*d = {:.1} s)",
            (m + 2) as f64 * d as f64 / 1000.0
        );
        for (n, slow) in [(2, false), (20, false), (100, false), (20, true)] {
            if (slow && !wanted(2)) || (!slow && !wanted(1)) {
                continue;
            }
            let hosts = if slow { start_with(n, m, &[(0, Duration::from_secs(2))]) } else { start(n, m) };
            let dir = tempfile::tempdir().unwrap();
            let feeds: Vec<String> = hosts.bases.iter().map(|b| format!("{b}/feed-x.xml")).collect();
            let list = feeds_file(dir.path(), &feeds);
            let out = dir.path().join("out");
            let (wall, peak, _) = watch(once(&list, &out, d, &[]), None);
            let log = hosts.log.lock().unwrap().clone();
            let t0 = log.iter().map(|(_, _, t)| *t).min().unwrap();
            // When the last request to each fast host arrived.
            let fast_done = (usize::from(slow)..n)
                .map(|h| log.iter().filter(|(i, _, _)| *i == h).map(|(_, _, t)| *t - t0).max().unwrap())
                .max()
                .unwrap();
            let min_gap = (0..n)
                .filter_map(|h| {
                    let t: Vec<Instant> = log.iter().filter(|(i, _, _)| *i == h).map(|(_, _, t)| *t).collect();
                    t.windows(2).map(|w| w[1] - w[0]).min()
                })
                .min()
                .unwrap_or_default();
            println!(
                "   N={n:<3}{} wall {:>5.2} s, fast hosts done after {:>5.2} s ({:.2} x bound), smallest gap on one host {:.1} ms (delay {d} ms), {} requests ({:.0}/s), {} records, peak RSS {:.0} MB",
                if slow { " (host 0 slow: 2 s per response)" } else { "" },
                wall.as_secs_f64(),
                fast_done.as_secs_f64(),
                fast_done.as_secs_f64() / ((m + 2) as f64 * d as f64 / 1000.0),
                min_gap.as_secs_f64() * 1000.0,
                requests(&hosts),
                requests(&hosts) as f64 / wall.as_secs_f64(),
                records(&out).len(),
                peak
            );
        }
    }
    if wanted(3) {
        let hosts = start(100, 5);
        let dir = tempfile::tempdir().unwrap();
        let mut feeds = Vec::new();
        for b in &hosts.bases {
            for f in 0..10 {
                feeds.push(format!("{b}/feed-{f}.xml"));
            }
        }
        let list = feeds_file(dir.path(), &feeds);
        let out = dir.path().join("out");
        let (wall, peak, _) = watch(once(&list, &out, 50, &[]), None);
        let recs = records(&out);
        let mut urls: Vec<&str> = recs.iter().map(|r| r["metadata"]["url"].as_str().unwrap()).collect();
        urls.sort_unstable();
        urls.dedup();
        let article_requests = hosts.log.lock().unwrap().iter().filter(|(_, p, _)| p.starts_with("/a/")).count();
        println!(
            "3. 1000 feeds over 100 hosts, 5000 articles, delay 50 ms: wall {:.2} s, {} requests ({:.0}/s), {} records ({} distinct), {} article requests, peak RSS {:.0} MB",
            wall.as_secs_f64(),
            requests(&hosts),
            requests(&hosts) as f64 / wall.as_secs_f64(),
            recs.len(),
            urls.len(),
            article_requests,
            peak
        );
    }
    if wanted(4) {
        let hosts = start(4, 0);
        let dir = tempfile::tempdir().unwrap();
        let rates = [100, 30, 10, 1];
        let feeds: Vec<String> = hosts.bases.iter().zip(rates).map(|(b, r)| format!("{b}/grow-{r}.xml")).collect();
        let list = feeds_file(dir.path(), &feeds);
        let out = dir.path().join("out");
        let args = [
            "--feeds",
            &list,
            "--interval",
            "1",
            "--min-interval",
            "1",
            "--max-interval",
            "2",
            "--delay-ms",
            "10",
            "--allow-private-addresses",
            "--no-progress",
            "--part-bytes",
            "65536",
            "--out",
            out.to_str().unwrap(),
        ];
        let child = pipeline().args(args).stdout(Stdio::null()).stderr(Stdio::null()).spawn().unwrap();
        let (wall, peak, samples) = watch(child, Some(Duration::from_secs(75)));
        let polls: Vec<usize> = feeds
            .iter()
            .map(|f| {
                let path = f.rsplit_once('/').unwrap().1;
                hosts.log.lock().unwrap().iter().filter(|(_, p, _)| p.ends_with(path)).count()
            })
            .collect();
        let rss_at = |t: f64| samples.iter().find(|(s, _)| *s >= t).map(|(_, r)| *r).unwrap_or(0.0);
        println!(
            "4. soak: {:.0} s continuous then kill -9; polls per feed (new items per 10 s {rates:?}): {polls:?}; RSS MB at 10/30/50/70 s: {:.1} {:.1} {:.1} {:.1}; peak {:.0} MB",
            wall.as_secs_f64(),
            rss_at(10.0),
            rss_at(30.0),
            rss_at(50.0),
            rss_at(70.0),
            peak
        );
        let mut resume = args.to_vec();
        resume.extend(["--resume", "--once"]);
        let (_, _, _) =
            watch(pipeline().args(&resume).stdout(Stdio::null()).stderr(Stdio::null()).spawn().unwrap(), None);
        let recs = records(&out);
        let mut urls: Vec<&str> = recs.iter().map(|r| r["metadata"]["url"].as_str().unwrap()).collect();
        let n = urls.len();
        urls.sort_unstable();
        urls.dedup();
        let fetched: std::collections::HashSet<String> = hosts
            .log
            .lock()
            .unwrap()
            .iter()
            .filter(|(_, p, _)| p.starts_with("/g/"))
            .map(|(_, p, _)| p.clone())
            .collect();
        println!(
            "   after kill -9 and --resume --once: {n} records, {} distinct, {} distinct articles ever fetched (equal = nothing lost or duplicated)",
            urls.len(),
            fetched.len()
        );
        let db = out.join("state.sqlite");
        println!("   state.sqlite: {} KB", std::fs::metadata(db).map(|m| m.len() / 1024).unwrap_or(0));
    }
}
