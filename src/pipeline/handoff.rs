//! Pages one feeds shard reaches that belong to another. Shards own articles by host
//! ([`super::shard`]), but a link may redirect: a feed's tracking link on a host of shard A
//! can end at an article on a host of shard B, which B may fetch through its own plain link
//! too. Each shard's same-page check ([`super::feeds_run`]) sees only its own links, so both
//! would write the page. The page therefore belongs to the shard of the host it ends on: A
//! does not write it. It posts the final URL to B's inbox (`ROOT/shard-B/inbox/<hash>.json`,
//! on disk or in the bucket) and its own link ends as `other_shard`; B takes its inbox in as
//! articles of its own (a URL it already has is not added again) and writes each page once,
//! checked against its own links like any redirect.
//!
//! Nothing is written twice or lost whenever a process dies. A posts before its link is
//! marked done: killed in between, it fetches the link again and posts the same entry under
//! the same name. B removes an entry only once the article it names is finished in a state
//! that lasts (for a bucket, after the database holding it went up), so a B killed at any
//! point finds the entry again, and an article it already has is not added twice. An article
//! handed over is never handed on: a page whose redirects cross shards twice is written by
//! the second shard, not sent round.
//!
//! A `--once` shard takes its inbox in when it starts, so a page handed to it after its round
//! ended is written in its next round; a continuous crawl looks every [`INBOX_EVERY`].

use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::PipelineError;
use super::shard::Shard;
use crate::storage::{self, S3Url};

/// The folder of a shard's inbox, inside its output folder.
pub const INBOX_DIR: &str = "inbox";

/// How often a continuous crawl looks in its inbox (a LIST request for a bucket).
pub const INBOX_EVERY: Duration = Duration::from_secs(30);

/// The largest entry read: one holds a URL, a feed URL and a feed item; a larger file of that
/// name is not ours and must not fill the memory.
const ENTRY_MAX: u64 = 1 << 20;

/// One page handed over.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Handoff {
    /// Where the link ended: the article the receiving shard fetches and writes.
    pub url: String,
    /// The feed that listed the link.
    pub feed: String,
    /// The link as the feed listed it (the redirect), for the log.
    pub via: String,
    /// The feed item's metadata as JSON, as the articles table holds it.
    pub item: Option<String>,
}

/// Where the shards' inboxes live: under the output root on disk, or under its prefix in the
/// bucket (never in a staging folder, which holds one shard's files only).
#[derive(Debug, Clone)]
pub enum Inboxes {
    Local(PathBuf),
    Remote(S3Url),
}

/// An entry's file name: the same for the same page, so posting twice writes one entry.
fn entry_name(url: &str) -> String {
    format!("{:016x}.json", xxhash_rust::xxh3::xxh3_64(url.as_bytes()))
}

/// Runs a blocking object-storage call on a thread of its own: the storage client drives its
/// own runtime, which cannot be entered from the crawl's.
fn off_runtime<T: Send>(f: impl FnOnce() -> T + Send) -> T {
    std::thread::scope(|s| s.spawn(f).join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
}

impl Inboxes {
    fn local_dir(root: &std::path::Path, to: Shard) -> PathBuf {
        to.dir(root).join(INBOX_DIR)
    }

    fn remote_dir(root: &S3Url, to: Shard) -> S3Url {
        root.join(&format!("{}/{INBOX_DIR}/", to.name()))
    }

    /// Posts `h` to shard `to`'s inbox (atomically: a reader sees the whole entry or none).
    pub fn post(&self, to: Shard, h: &Handoff) -> Result<(), PipelineError> {
        let body = serde_json::to_vec(h).expect("a handoff serialises");
        let name = entry_name(&h.url);
        match self {
            Inboxes::Local(root) => {
                let dir = Self::local_dir(root, to);
                std::fs::create_dir_all(&dir)
                    .map_err(|e| PipelineError::State { path: dir.clone(), message: e.to_string() })?;
                crate::sink::write_atomic(&dir.join(name), &body)?;
            }
            Inboxes::Remote(root) => {
                let url = Self::remote_dir(root, to).join(&name);
                off_runtime(|| storage::put_small(&url, body))?;
            }
        }
        Ok(())
    }

    /// The entries in shard `of`'s inbox, by name. A file that is not an entry (another name,
    /// too large, not its JSON) is left alone and named in the log.
    pub fn list(&self, of: Shard) -> Result<Vec<(String, Handoff)>, PipelineError> {
        let mut out = Vec::new();
        let mut take = |name: String, bytes: &[u8], shown: &dyn std::fmt::Display| match serde_json::from_slice::<Handoff>(
            bytes,
        ) {
            Ok(h) if entry_name(&h.url) == name => out.push((name, h)),
            _ => tracing::warn!("{shown}: not a page handed over by another shard; left alone"),
        };
        match self {
            Inboxes::Local(root) => {
                let dir = Self::local_dir(root, of);
                let at = |e: std::io::Error| PipelineError::State { path: dir.clone(), message: e.to_string() };
                let entries = match std::fs::read_dir(&dir) {
                    Ok(entries) => entries,
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(out),
                    Err(e) => return Err(at(e)),
                };
                let mut paths: Vec<PathBuf> =
                    entries.map(|e| e.map(|e| e.path())).collect::<Result<_, _>>().map_err(at)?;
                paths.sort();
                for path in paths {
                    let Some(name) = path.file_name().and_then(|n| n.to_str()).map(str::to_owned) else { continue };
                    // Our own temporary files (`write_atomic`) are not entries yet.
                    if !name.ends_with(".json") {
                        continue;
                    }
                    let small = std::fs::metadata(&path).is_ok_and(|m| m.is_file() && m.len() <= ENTRY_MAX);
                    let bytes = if small { std::fs::read(&path).unwrap_or_default() } else { Vec::new() };
                    take(name, &bytes, &path.display());
                }
            }
            Inboxes::Remote(root) => {
                let dir = Self::remote_dir(root, of);
                off_runtime(|| -> Result<(), PipelineError> {
                    for (url, size) in storage::list(&dir)? {
                        let Some(name) = url.key.strip_prefix(&dir.key).map(str::to_owned) else { continue };
                        if !name.ends_with(".json") || name.contains('/') {
                            continue;
                        }
                        let bytes = if size <= ENTRY_MAX {
                            storage::read_small(&url)?.map(|(b, _, _)| b).unwrap_or_default()
                        } else {
                            Vec::new()
                        };
                        take(name, &bytes, &url);
                    }
                    Ok(())
                })?;
            }
        }
        Ok(out)
    }

    /// Removes the entry `name` from shard `of`'s inbox (none there is no error).
    pub fn remove(&self, of: Shard, name: &str) -> Result<(), PipelineError> {
        match self {
            Inboxes::Local(root) => {
                let path = Self::local_dir(root, of).join(name);
                match std::fs::remove_file(&path) {
                    Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                        Err(PipelineError::State { path, message: e.to_string() })
                    }
                    _ => Ok(()),
                }
            }
            Inboxes::Remote(root) => {
                let url = Self::remote_dir(root, of).join(name);
                Ok(off_runtime(|| storage::delete(&url))?)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(url: &str) -> Handoff {
        Handoff { url: url.into(), feed: "https://f.test/rss".into(), via: "https://r.test/go/1".into(), item: None }
    }

    #[test]
    fn a_page_posted_twice_is_one_entry_and_foreign_files_are_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        let inboxes = Inboxes::Local(dir.path().to_path_buf());
        let b = Shard { k: 1, n: 2 };
        assert!(inboxes.list(b).unwrap().is_empty(), "no inbox yet is an empty one");
        inboxes.post(b, &entry("https://b.test/a/1")).unwrap();
        inboxes.post(b, &entry("https://b.test/a/1")).unwrap();
        inboxes.post(b, &entry("https://b.test/a/2")).unwrap();
        let inbox = dir.path().join("shard-00001").join(INBOX_DIR);
        std::fs::write(inbox.join("notes.json"), b"{}").unwrap();
        std::fs::write(inbox.join("0000000000000000.json"), b"not json").unwrap();
        std::fs::write(inbox.join(".x.json.tmp"), b"half").unwrap();
        let got = inboxes.list(b).unwrap();
        let urls: Vec<&str> = got.iter().map(|(_, h)| h.url.as_str()).collect();
        assert_eq!(urls.len(), 2, "{urls:?}");
        assert!(urls.contains(&"https://b.test/a/1") && urls.contains(&"https://b.test/a/2"));
        assert!(inboxes.list(Shard { k: 0, n: 2 }).unwrap().is_empty(), "shard 0's inbox is its own");
        for (name, _) in &got {
            inboxes.remove(b, name).unwrap();
            inboxes.remove(b, name).unwrap();
        }
        assert!(inboxes.list(b).unwrap().is_empty());
        assert!(inbox.join("notes.json").exists(), "a file that is not an entry stays");
    }
}
