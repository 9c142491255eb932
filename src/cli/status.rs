//! `pipeline status OUT`: prints what an output folder's run has done, from its resume state
//! (feeds: every feed's last and next poll, interval, items, failures; articles by status;
//! per-host counts; WARC: finished inputs and the position in the unfinished one), and the
//! locks of the runs writing it now (`running` in the JSON: the root's and each shard's lock
//! held by a live process; for an `s3://` output every run lock in the bucket, each saying
//! whether its holder still runs).

use std::path::PathBuf;

use clap::Args;

use article_pipeline::pipeline::status::{RunStatus, status};
use article_pipeline::pipeline::{self, remote_lock, s3_output};
use article_pipeline::storage;

use super::Outcome;

#[derive(Debug, Args)]
pub struct StatusArgs {
    /// The output folder of a run, or its s3://bucket/prefix/.
    out: PathBuf,
    /// Endpoint of an S3-compatible store (default: AWS_ENDPOINT_URL, else AWS).
    #[arg(long, value_name = "URL")]
    s3_endpoint: Option<String>,
    /// Print JSON instead of tables.
    #[arg(long)]
    json: bool,
}

pub fn exec(args: StatusArgs) -> anyhow::Result<Outcome> {
    // Who writes the output now (the locks of live runs: the root's and the shards'), and
    // for an s3:// output also runs that ended without releasing theirs.
    let (s, running) = match args.out.to_str().filter(|o| storage::is_s3(o)) {
        Some(url) => {
            // The state files only (no parts), into a folder removed afterwards.
            storage::set_endpoint(args.s3_endpoint.clone());
            let url = storage::S3Url::parse(url)?;
            let locks = remote_lock::locks_under(&url)?;
            let local = s3_output::default_staging(&url).join(format!("status-{}", std::process::id()));
            s3_output::pull_tree(&url, &local, false)?;
            let s = status(&local);
            let _ = std::fs::remove_dir_all(&local);
            (s?, locks.iter().map(ToString::to_string).collect::<Vec<_>>())
        }
        None => {
            let s = status(&args.out)?;
            let held = pipeline::running_in(&args.out);
            (s, held.iter().map(|p| format!("{} (held by a running process)", p.display())).collect())
        }
    };
    if args.json {
        let mut v = serde_json::to_value(&s)?;
        v["running"] = serde_json::json!(running);
        println!("{}", serde_json::to_string_pretty(&v)?);
        return Ok(Outcome::Ok);
    }
    if running.is_empty() {
        println!("no run writes this output now");
    }
    for r in &running {
        println!("run lock: {r}");
    }
    match &s {
        RunStatus::Feeds { feeds, articles, finished, stats } => {
            println!("feeds run in {}{}", args.out.display(), if *finished { " (--once round finished)" } else { "" });
            println!(
                "{:<8} {:>5} {:>6} {:>4}  {:<19}  {:<19}  {:>8}  url",
                "status", "polls", "items", "fail", "last poll (UTC)", "next poll (UTC)", "interval"
            );
            for f in feeds {
                println!(
                    "{:<8} {:>5} {:>6} {:>4}  {:<19}  {:<19}  {:>7}s  {}{}",
                    f.status,
                    f.polls,
                    f.items,
                    f.failures,
                    f.last_poll.as_deref().unwrap_or("-"),
                    f.next_poll.as_deref().unwrap_or("-"),
                    f.interval_secs.map(|v| v.to_string()).unwrap_or_else(|| "-".into()),
                    f.url,
                    f.last_error.as_deref().map(|e| format!("  ({e})")).unwrap_or_default()
                );
            }
            let by: Vec<String> = articles.iter().map(|(k, n)| format!("{k} {n}")).collect();
            println!("articles: {}", if by.is_empty() { "none".into() } else { by.join(", ") });
            if !stats.hosts.is_empty() {
                println!("{:>8} {:>7} {:>12}  host", "fetched", "failed", "bytes");
                for (h, c) in &stats.hosts {
                    println!("{:>8} {:>7} {:>12}  {h}", c.fetched, c.failed, c.bytes);
                }
            }
            println!("records written {}, failed {}", stats.written, stats.failures());
        }
        RunStatus::Shards { shards, stats } => {
            println!("sharded run in {}", args.out.display());
            println!(
                "{:<14} {:>6} {:>6} {:>11} {:>7} {:>7} {:>9} {:>7} {:>7}",
                "shard", "inputs", "done", "in progress", "pending", "gave up", "written", "failed", "handed"
            );
            for s in shards {
                let name = s.shard.map(|x| format!("{}/{}", x.k, x.n)).unwrap_or_else(|| s.dir.clone());
                println!(
                    "{:<14} {:>6} {:>6} {:>11} {:>7} {:>7} {:>9} {:>7} {:>7}",
                    name,
                    s.inputs,
                    s.done,
                    s.in_progress,
                    s.pending,
                    s.failed,
                    s.stats.written,
                    s.stats.failures(),
                    s.handed_waiting
                );
            }
            println!(
                "all shards: records written {}, failed {}, {:.1} MB of HTML",
                stats.written,
                stats.failures(),
                stats.html_bytes as f64 / 1e6
            );
        }
        RunStatus::Warc { done, current, retry, stats } => {
            println!("WARC run in {}", args.out.display());
            println!("inputs done: {}", done.len());
            for d in done {
                println!("  {d}");
            }
            if let Some((file, n)) = current {
                println!("in progress: {file} ({n} records done)");
            }
            let (failed, pending): (Vec<_>, Vec<_>) = retry.iter().partition(|r| r.given_up());
            if !pending.is_empty() {
                println!("pending (ended early, read again on --resume): {}", pending.len());
                for r in pending {
                    println!("  {} ({} records done, {} attempt(s))", r.input, r.done, r.attempts);
                }
            }
            if !failed.is_empty() {
                println!("failed (given up after {} attempts): {}", failed[0].attempts, failed.len());
                for r in failed {
                    println!("  {} ({} records done)", r.input, r.done);
                }
            }
            println!("records written {}, failed {}", stats.written, stats.failures());
        }
    }
    Ok(Outcome::Ok)
}
