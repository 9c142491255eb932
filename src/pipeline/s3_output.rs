//! `--out s3://bucket/prefix/`: the run writes into a local staging folder exactly as it
//! writes any output folder, and every file is uploaded the moment it is durable there, in
//! the same order (`state.json` naming a part before the part, the part before the state
//! that counts it as committed). The remote copy is therefore always a state a rerun can
//! resume from, whatever moment the process was killed at: a Kubernetes pod with no
//! persistent disk reruns the same command and continues.
//!
//! A feeds run's database (`state.sqlite`), which the crawl updates continuously, goes up as a
//! consistent copy (`VACUUM INTO`) made after each part's articles are marked `done` and
//! before the part itself, so the bucket never holds a part whose articles the bucket's
//! database still calls pending (a rerun would write them twice); a database naming a part
//! the bucket lacks sends its articles back to pending, as on a local disk.
//!
//! At start the staging folder is made a copy of the remote one (the remote is the truth):
//! run files left there by an earlier process are removed, and the remote state and parts are
//! downloaded (the parts because resuming reads them back into the near-duplicate index).
//! Uploaded parts are removed from staging, so it holds one part being written at a time.
//!
//! The prefix is locked for the run (`PREFIX/.lock`, [`super::remote_lock`]), so a second
//! machine on the same prefix is refused, and every upload first checks the lock is still
//! this run's.

use std::path::{Path, PathBuf};

use super::remote_lock::{self, LOCK_OBJECT, RemoteLock};
use super::shard::{RootLayout, ShardManifest};
use super::{OutputMirror, PipelineError};
use crate::storage::{self, S3Url};

/// An output folder mirrored to an S3 prefix, holding the prefix's lock
/// ([`super::remote_lock`]) for as long as it lives.
pub struct S3Output {
    local: PathBuf,
    remote: S3Url,
    lock: RemoteLock,
}

/// Files of a run inside its output folder (the only ones staging removes).
fn is_run_file(name: &str) -> bool {
    name.starts_with("part-")
        || name.starts_with(".part-")
        || matches!(name, "state.json" | "stats.json" | "shard.json" | "site_memory.bin")
        // The feeds database, and the journal files SQLite keeps beside it: a journal left by
        // an earlier process must never meet the database downloaded from the bucket.
        || name.starts_with(super::feeds_run::STATE_FILE)
        || name.ends_with(".tmp")
        || name.ends_with(".download")
}

/// The file naming the `s3://` prefix a staging folder mirrors.
const STAGING_MARK: &str = ".staging-of";

/// Refuses a staging folder `local` that holds the run files of something else than `remote`'s
/// staging (a finished local run's output given as `--staging`), which opening would delete;
/// else marks it as `remote`'s. A folder under the default staging root is this crate's own.
fn check_staging(local: &Path, remote: &S3Url) -> Result<(), PipelineError> {
    let at = |e: std::io::Error| PipelineError::State { path: local.to_path_buf(), message: e.to_string() };
    let mark = local.join(STAGING_MARK);
    let name = remote.to_string();
    let ours = std::fs::read_to_string(&mark).is_ok_and(|m| m.trim() == name)
        || local.starts_with(std::env::temp_dir().join("article-pipeline-staging"));
    if !ours {
        let holds_run_files = std::fs::read_dir(local)
            .map_err(at)?
            .flatten()
            .any(|e| e.path().is_file() && is_run_file(&e.file_name().to_string_lossy()));
        if holds_run_files {
            return Err(PipelineError::State {
                path: local.to_path_buf(),
                message: format!(
                    "this folder holds a run's files but is not the staging folder of {name}: staging would delete \
                     them; choose an empty --staging (or, if it is this prefix's staging left by an earlier version, \
                     empty it: the bucket holds the run)"
                ),
            });
        }
    }
    std::fs::write(&mark, format!("{name}\n")).map_err(at)
}

/// Where `remote` is staged when `--staging` is not given.
pub fn default_staging(remote: &S3Url) -> PathBuf {
    let key: String =
        remote.key.chars().map(|c| if c.is_ascii_alphanumeric() || "-_.".contains(c) { c } else { '_' }).collect();
    std::env::temp_dir().join("article-pipeline-staging").join(&remote.bucket).join(key)
}

impl S3Output {
    /// Makes `local` a copy of the objects directly under `remote` (sub-prefixes, such as
    /// other shards' folders, are left alone).
    pub fn open(remote: S3Url, local: PathBuf) -> Result<S3Output, PipelineError> {
        let remote = remote.as_prefix();
        // Before anything is read or written: another machine may be writing this prefix.
        let lock = RemoteLock::take(&remote)?;
        let at = |e: std::io::Error| PipelineError::State { path: local.clone(), message: e.to_string() };
        std::fs::create_dir_all(&local).map_err(at)?;
        check_staging(&local, &remote)?;
        for entry in std::fs::read_dir(&local).map_err(at)? {
            let entry = entry.map_err(at)?;
            let name = entry.file_name().to_string_lossy().into_owned();
            if entry.path().is_file() && is_run_file(&name) {
                std::fs::remove_file(entry.path()).map_err(at)?;
            }
        }
        pull(&remote, &local, false, true)?;
        Ok(S3Output { local, remote, lock })
    }

    /// After a run: removes the parts staging still holds (downloaded for resuming; every
    /// one is in the bucket).
    pub fn finish(&self) -> Result<(), PipelineError> {
        let at = |e: std::io::Error| PipelineError::State { path: self.local.clone(), message: e.to_string() };
        for entry in std::fs::read_dir(&self.local).map_err(at)? {
            let entry = entry.map_err(at)?;
            if crate::sink::part_index(&entry.file_name().to_string_lossy()).is_some() {
                std::fs::remove_file(entry.path()).map_err(at)?;
            }
        }
        Ok(())
    }

    /// Ctrl-C and SIGTERM release the prefix's lock and end the process
    /// ([`RemoteLock::release_on_signal`]; for runs that do not stop gracefully).
    pub fn release_lock_on_signal(&self) {
        self.lock.release_on_signal();
    }

    pub fn local(&self) -> &Path {
        &self.local
    }

    pub fn remote(&self) -> &S3Url {
        &self.remote
    }
}

impl OutputMirror for S3Output {
    fn publish_as(&self, path: &Path, name: &str) -> Result<(), PipelineError> {
        storage::upload_fenced(path, &self.remote.join(name), || self.lock.check())?;
        Ok(())
    }

    fn publish(&self, path: &Path) -> Result<(), PipelineError> {
        let rel = path.strip_prefix(&self.local).map_err(|_| PipelineError::State {
            path: path.to_path_buf(),
            message: format!("not inside the staging folder {}", self.local.display()),
        })?;
        let rel = rel.to_string_lossy().replace('\\', "/");
        storage::upload_fenced(path, &self.remote.join(&rel), || self.lock.check())?;
        if rel.rsplit('/').next().is_some_and(|n| n.starts_with("part-")) {
            // Durable remotely; this process never reads it again (resuming downloads it).
            let _ = std::fs::remove_file(path);
        }
        Ok(())
    }

    fn shown(&self, path: &Path) -> PathBuf {
        match path.strip_prefix(&self.local) {
            Ok(rel) => PathBuf::from(self.remote.join(&rel.to_string_lossy().replace('\\', "/")).to_string()),
            Err(_) => path.to_path_buf(),
        }
    }
}

/// Downloads the run files under `remote` (shard folders included) into `local`, keeping
/// their relative paths. Without `with_parts` each part is an empty file of its name:
/// `pipeline status` only asks whether a part exists (the resume state counts a part's
/// records once the part is there), `pipeline dedup` reads them all. So is each entry of a
/// shard's inbox ([`super::handoff`]), which `status` counts. Returns the files
/// fetched.
pub fn pull_tree(remote: &S3Url, local: &Path, with_parts: bool) -> Result<usize, PipelineError> {
    pull(&remote.as_prefix(), local, true, with_parts)
}

/// The run files under `remote` (a prefix) into `local`: those directly under it, or with
/// `recursive` those of its sub-prefixes too (shard folders).
fn pull(remote: &S3Url, local: &Path, recursive: bool, with_parts: bool) -> Result<usize, PipelineError> {
    let mut n = 0;
    for (url, _) in storage::list(remote)? {
        let Some(rel) = url.key.strip_prefix(&remote.key) else { continue };
        let name = rel.rsplit('/').next().unwrap_or(rel);
        let inbox_entry = recursive
            && rel.split('/').rev().nth(1) == Some(super::handoff::INBOX_DIR)
            && super::handoff::is_entry(name);
        if (!recursive && rel.contains('/'))
            || !(is_run_file(name) || inbox_entry)
            || name.starts_with('.')
            || rel.split('/').any(|c| c.is_empty() || c == "." || c == "..")
        {
            continue;
        }
        let to = local.join(rel);
        // An inbox entry only counts for `status`: never downloaded.
        if inbox_entry && with_parts {
            continue;
        }
        if !with_parts && (name.starts_with("part-") || inbox_entry) {
            let at = |e: std::io::Error| PipelineError::State { path: to.clone(), message: e.to_string() };
            std::fs::create_dir_all(to.parent().expect("under local")).map_err(at)?;
            std::fs::write(&to, b"").map_err(at)?;
            continue;
        }
        storage::download(&url, &to)?;
        n += 1;
    }
    Ok(n)
}

/// The layout of the earlier runs under `remote` (a prefix), as [`RootLayout::of_dir`] reads a
/// local root: the bucket is the truth, and a pod without a disk stages into a fresh folder.
/// Each shard's `shard.json` is read (it is a few bytes); objects are named by their URL.
pub fn root_layout(remote: &S3Url) -> Result<RootLayout, PipelineError> {
    let remote = remote.as_prefix();
    let mut layout = RootLayout::default();
    let mut shards = std::collections::BTreeMap::new();
    for (url, _) in storage::list(&remote)? {
        let Some(rel) = url.key.strip_prefix(&remote.key) else { continue };
        match rel.split_once('/') {
            // A run's lock at the top: an unsharded run holds the prefix, though it may not
            // have written anything yet (not the tombstone of one that ended).
            None if layout.unsharded.is_none()
                && (super::is_run_output(rel) || (rel == LOCK_OBJECT && !remote_lock::is_released(&url)?)) =>
            {
                layout.unsharded = Some(PathBuf::from(url.to_string()));
            }
            Some((dir, rest)) if dir.starts_with("shard-") => {
                let manifest = remote.join(&format!("{dir}/{}", super::shard::MANIFEST_FILE));
                let n = shards.entry(dir.to_string()).or_insert((manifest, None));
                if rest == super::shard::MANIFEST_FILE {
                    let bytes = storage::read_small(&url)?.map(|(b, _, _)| b).unwrap_or_default();
                    n.1 = serde_json::from_slice::<ShardManifest>(&bytes).ok().map(|m| m.shard.n);
                }
            }
            _ => {}
        }
    }
    layout.shards = shards.into_values().map(|(url, n)| (PathBuf::from(url.to_string()), n)).collect();
    Ok(layout)
}

/// Uploads every file under `local` to the same relative path under `remote`.
pub fn push_tree(local: &Path, remote: &S3Url) -> Result<usize, PipelineError> {
    let mut n = 0;
    let mut stack = vec![local.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let at = |e: std::io::Error| PipelineError::State { path: dir.clone(), message: e.to_string() };
        for entry in std::fs::read_dir(&dir).map_err(at)? {
            let p = entry.map_err(at)?.path();
            if p.is_dir() {
                stack.push(p);
            } else {
                let rel = p.strip_prefix(local).expect("under local").to_string_lossy().replace('\\', "/");
                storage::upload(&p, &remote.join(&rel))?;
                n += 1;
            }
        }
    }
    Ok(n)
}
