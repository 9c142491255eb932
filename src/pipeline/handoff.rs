//! Pages one feeds shard reaches that belong to another. Shards own articles by host
//! ([`super::shard`]), but a link may redirect: a feed's tracking link on a host of shard A
//! can end at an article on a host of shard B, which B may fetch through its own plain link
//! too. Each shard's same-page check ([`super::feeds_run`]) sees only its own links, so both
//! would write the page. The page therefore belongs to the shard of the host it ends on: A
//! does not follow the redirect into B's host ([`crate::sources::fetch::Fetcher::fetch_until`]),
//! so the page is downloaded once, by B. It posts the redirect's target to B's inbox (`ROOT/shard-B/inbox/<hash>.json`,
//! on disk or in the bucket) and its own link ends as `other_shard`; B takes its inbox in as
//! articles of its own (a URL it already has is not added again) and writes each page once,
//! checked against its own links like any redirect.
//!
//! Nothing is written twice or lost whenever a process dies. A posts before its link is
//! marked done: killed in between, it fetches the link again and posts the same entry under
//! the same name. B removes an entry only once the article it names is finished in a state
//! that lasts (for a bucket, after the database holding it went up), so a B killed at any
//! point finds the entry again, and an article it already has is not added twice. A redirect
//! chain may cross shards more than once (a tracker on A's host, a shortener on B's, the story
//! back on A's): B stops at the redirect into A's host and hands the story back, so it is
//! written by its own shard, once. An entry counts its hand-offs; after [`MAX_HOPS`] the
//! receiver follows every redirect and writes the page wherever it ends, so a redirect cycle
//! between shards ends. B keeps the names of the entries it took in (its
//! `inbox` table), so each is read once however long it waits. A link whose page A cannot
//! post is tried again like a failed fetch, and on its last try written by A. These are the two
//! cases a page may be written twice, rather than not at all: that one, and a page whose
//! redirects cross shards more than [`MAX_HOPS`] times, written where they end and perhaps
//! also by its own shard.
//!
//! A `--once` shard takes its inbox in when it starts and again before its round ends, until a
//! look finds nothing new, so the pages a shard running beside it (a job array's) hands over
//! during the round are written in it; a page handed over after the round ended waits for the
//! next one (`pipeline status` shows the shard in progress). A continuous crawl looks every
//! [`INBOX_EVERY`].

use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::PipelineError;
use super::shard::Shard;
use crate::storage::{self, S3Url};

/// The folder of a shard's inbox, inside its output folder.
pub const INBOX_DIR: &str = "inbox";

/// The hand-offs a page may take; the shard that receives the last one writes it wherever its
/// redirects end.
pub const MAX_HOPS: u32 = 3;

/// How often a continuous crawl looks in its inbox (a LIST request for a bucket).
pub const INBOX_EVERY: Duration = Duration::from_secs(30);

/// The largest entry read: one holds a URL, a feed URL and a feed item; a larger file of that
/// name is not ours and must not fill the memory.
const ENTRY_MAX: u64 = 1 << 20;

/// One page handed over. Unknown fields are allowed: an entry a newer version posted is still
/// a page to write.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Handoff {
    /// Where the link ended: the article the receiving shard fetches and writes.
    pub url: String,
    /// The feed that listed the link.
    pub feed: String,
    /// The link as the feed listed it (the redirect), for the log.
    pub via: String,
    /// The feed item's metadata as JSON, as the articles table holds it.
    pub item: Option<String>,
    /// How many times the page has been handed over, this time included (1 for an entry
    /// written before the count was kept).
    #[serde(default = "one")]
    pub hops: u32,
}

fn one() -> u32 {
    1
}

/// Where the shards' inboxes live: under the output root on disk, or under its prefix in the
/// bucket (never in a staging folder, which holds one shard's files only).
#[derive(Debug, Clone)]
pub enum Inboxes {
    Local(PathBuf),
    Remote(S3Url),
}

/// An entry's name: the same for the same page, so posting twice writes one entry, and the
/// receiver can tell an entry it has taken in by its name alone.
pub fn entry_name(url: &str) -> String {
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

    /// Posts `h` to shard `to`'s inbox, atomically: a reader sees the whole entry or none.
    /// An entry that would be larger than a reader takes goes without its feed item.
    pub fn post(&self, to: Shard, h: &Handoff) -> Result<(), PipelineError> {
        let mut body = serde_json::to_vec(h).expect("a handoff serialises");
        if body.len() as u64 > ENTRY_MAX {
            body = serde_json::to_vec(&Handoff { item: None, ..h.clone() }).expect("a handoff serialises");
        }
        let name = entry_name(&h.url);
        match self {
            Inboxes::Local(root) => {
                let dir = Self::local_dir(root, to);
                let at = |path: &std::path::Path| {
                    let path = path.to_path_buf();
                    move |e: std::io::Error| PipelineError::State { path, message: e.to_string() }
                };
                std::fs::create_dir_all(&dir).map_err(at(&dir))?;
                // A temporary name of this process's own: two shards may post the same page
                // at once (both redirect to it).
                let tmp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
                {
                    use std::io::Write;
                    let mut f = std::fs::File::create(&tmp).map_err(at(&tmp))?;
                    f.write_all(&body).and_then(|()| f.sync_all()).map_err(at(&tmp))?;
                }
                let path = dir.join(&name);
                std::fs::rename(&tmp, &path).map_err(at(&path))?;
                std::fs::File::open(&dir).and_then(|d| d.sync_all()).map_err(at(&dir))?;
            }
            Inboxes::Remote(root) => {
                let url = Self::remote_dir(root, to).join(&name);
                off_runtime(|| storage::put_small(&url, body))?;
            }
        }
        Ok(())
    }

    /// The names of the entries in shard `of`'s inbox (a listing, nothing read).
    pub fn names(&self, of: Shard) -> Result<Vec<String>, PipelineError> {
        let mut names = match self {
            Inboxes::Local(root) => {
                let dir = Self::local_dir(root, of);
                let at = |e: std::io::Error| PipelineError::State { path: dir.clone(), message: e.to_string() };
                match std::fs::read_dir(&dir) {
                    Ok(entries) => entries
                        .map(|e| e.map(|e| e.file_name().to_string_lossy().into_owned()))
                        .collect::<Result<Vec<_>, _>>()
                        .map_err(at)?,
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
                    Err(e) => return Err(at(e)),
                }
            }
            Inboxes::Remote(root) => {
                let dir = Self::remote_dir(root, of);
                off_runtime(|| storage::list(&dir))?
                    .into_iter()
                    .filter_map(|(url, _)| url.key.strip_prefix(&dir.key).map(str::to_owned))
                    .collect()
            }
        };
        names.retain(|n| is_entry(n));
        names.sort();
        Ok(names)
    }

    /// Reads entry `name` of shard `of`'s inbox; None when it is gone or is not an entry
    /// (too large, not its JSON, another page's name), which is left alone and named in the log.
    pub fn read(&self, of: Shard, name: &str) -> Result<Option<Handoff>, PipelineError> {
        let (bytes, shown) = match self {
            Inboxes::Local(root) => {
                let path = Self::local_dir(root, of).join(name);
                let small = match std::fs::metadata(&path) {
                    Ok(m) => m.is_file() && m.len() <= ENTRY_MAX,
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
                    Err(e) => return Err(PipelineError::State { path, message: e.to_string() }),
                };
                let bytes = if small {
                    match std::fs::read(&path) {
                        Ok(b) => b,
                        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
                        Err(e) => return Err(PipelineError::State { path, message: e.to_string() }),
                    }
                } else {
                    Vec::new()
                };
                (bytes, path.display().to_string())
            }
            Inboxes::Remote(root) => {
                let url = Self::remote_dir(root, of).join(name);
                match off_runtime(|| storage::read_small(&url)) {
                    // Larger than an entry (up to the store's small-object cap): not one.
                    Ok(Some((bytes, _, _))) if bytes.len() as u64 <= ENTRY_MAX => (bytes, url.to_string()),
                    Ok(Some(_)) => (Vec::new(), url.to_string()),
                    Ok(None) => return Ok(None),
                    Err(e) => return Err(e.into()),
                }
            }
        };
        match serde_json::from_slice::<Handoff>(&bytes) {
            Ok(h) if entry_name(&h.url) == name => Ok(Some(h)),
            _ => {
                tracing::warn!("{shown}: not a page handed over by another shard; left alone");
                Ok(None)
            }
        }
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

/// The entries in the inbox of the shard folder `dir` (none when it has no inbox).
pub fn waiting(dir: &std::path::Path) -> usize {
    std::fs::read_dir(dir.join(INBOX_DIR))
        .map_or(0, |d| d.flatten().filter(|e| e.file_name().to_str().is_some_and(is_entry)).count())
}

/// Is a file of an inbox, by its name, an entry (not a temporary file of a post)?
pub fn is_entry(name: &str) -> bool {
    name.ends_with(".json") && !name.starts_with('.') && !name.contains('/')
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        // Whatever bytes a file of an entry's name holds, reading it gives the entry it
        // names or nothing, never a panic.
        #[test]
        fn any_bytes_in_an_inbox_read_as_the_entry_named_or_none(bytes in proptest::collection::vec(any::<u8>(), 0..400), url in "https://[a-z]{1,8}\\.test/[a-z0-9/]{0,20}") {
            let dir = tempfile::tempdir().unwrap();
            let inboxes = Inboxes::Local(dir.path().to_path_buf());
            let b = Shard { k: 1, n: 2 };
            let name = entry_name(&url);
            let inbox = dir.path().join("shard-00001").join(INBOX_DIR);
            std::fs::create_dir_all(&inbox).unwrap();
            std::fs::write(inbox.join(&name), &bytes).unwrap();
            if let Some(h) = inboxes.read(b, &name).unwrap() {
                prop_assert_eq!(entry_name(&h.url), name.clone());
            }
            // A real entry under a name, with the same bytes beside it, reads back whole.
            let h = Handoff { url: url.clone(), feed: String::from_utf8_lossy(&bytes).into_owned(), via: url.clone(), item: None, hops: 1 };
            inboxes.post(b, &h).unwrap();
            prop_assert_eq!(inboxes.read(b, &name).unwrap(), Some(h));
        }
    }

    fn entry(url: &str) -> Handoff {
        Handoff {
            url: url.into(),
            feed: "https://f.test/rss".into(),
            via: "https://r.test/go/1".into(),
            item: None,
            hops: 1,
        }
    }

    #[test]
    fn a_page_posted_twice_is_one_entry_and_foreign_files_are_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        let inboxes = Inboxes::Local(dir.path().to_path_buf());
        let b = Shard { k: 1, n: 2 };
        assert!(inboxes.names(b).unwrap().is_empty(), "no inbox yet is an empty one");
        inboxes.post(b, &entry("https://b.test/a/1")).unwrap();
        inboxes.post(b, &entry("https://b.test/a/1")).unwrap();
        inboxes.post(b, &entry("https://b.test/a/2")).unwrap();
        let inbox = dir.path().join("shard-00001").join(INBOX_DIR);
        std::fs::write(inbox.join("notes.json"), b"{}").unwrap();
        std::fs::write(inbox.join("0000000000000000.json"), b"not json").unwrap();
        std::fs::write(inbox.join(".x.json.1.tmp"), b"half").unwrap();
        let names = inboxes.names(b).unwrap();
        assert_eq!(names.len(), 4, "{names:?}");
        let got: Vec<Handoff> = names.iter().filter_map(|n| inboxes.read(b, n).unwrap()).collect();
        let urls: Vec<&str> = got.iter().map(|h| h.url.as_str()).collect();
        assert_eq!(urls.len(), 2, "{urls:?}");
        assert!(urls.contains(&"https://b.test/a/1") && urls.contains(&"https://b.test/a/2"));
        assert_eq!(inboxes.read(b, "ffffffffffffffff.json").unwrap(), None, "gone");
        assert!(inboxes.names(Shard { k: 0, n: 2 }).unwrap().is_empty(), "shard 0's inbox is its own");
        for h in &got {
            inboxes.remove(b, &entry_name(&h.url)).unwrap();
            inboxes.remove(b, &entry_name(&h.url)).unwrap();
        }
        assert_eq!(inboxes.names(b).unwrap().len(), 2, "the files that are not entries stay");
        // A feed item too large for a reader goes without it.
        let big = Handoff { item: Some("x".repeat(ENTRY_MAX as usize)), ..entry("https://b.test/a/3") };
        inboxes.post(b, &big).unwrap();
        let back = inboxes.read(b, &entry_name("https://b.test/a/3")).unwrap().unwrap();
        assert_eq!(back, Handoff { item: None, ..big });
    }
}
