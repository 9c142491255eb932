//! The lock of an `s3://` output prefix, so that two machines never write one prefix at once.
//! A run's local lock (`OUT/.lock`, [`super::lock_output`]) is taken in its staging folder,
//! and two pods with their own disks stage in two folders: both would number, upload and
//! commit the same part names, and each would overwrite the other's resume state.
//!
//! The lock is the object `PREFIX/.lock`, created with a conditional PUT (`If-None-Match: *`,
//! which S3, MinIO, R2 and Ceph honour), so of two processes asking at once exactly one gets
//! it. It names its holder (host, process id and the process's start, run id) and a
//! heartbeat the holder rewrites every [`HEARTBEAT`], each time only if the object is still
//! the one it wrote (`If-Match` on its ETag). A process that finds the lock taken:
//! - takes it over when the holder is on this host and its process has ended (a run killed
//!   with SIGKILL and rerun, the usual way to resume), or when the heartbeat is older than
//!   [`STALE_SECS`] (a pod that died elsewhere: its successor waits that long at most);
//! - else is refused, with exit code 2, naming the holder.
//!
//! A holder whose lock was taken over (it paused longer than [`STALE_SECS`]) learns it before
//! its next upload, which compares the lock's ETag with its own ([`RemoteLock::check`]), and
//! stops instead of writing over its successor. The lock is deleted when the run ends.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use super::PipelineError;
use crate::storage::{self, S3Url};

/// The lock object's name under the output prefix (a dot name: no run file, never downloaded).
pub const LOCK_OBJECT: &str = ".lock";
/// How often the holder rewrites its heartbeat.
pub const HEARTBEAT: Duration = Duration::from_secs(30);
/// A lock whose heartbeat is older than this (seconds, by the reader's clock) is taken over:
/// ten heartbeats, room for clocks a few minutes apart.
pub const STALE_SECS: u64 = 300;

/// Who holds the lock, as the lock object says (JSON).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Holder {
    pub host: String,
    pub pid: u32,
    /// The process's start time as the kernel counts it (`/proc/PID/stat`, field 22), so a
    /// new process that reuses the pid is not taken for the holder; None off Linux.
    #[serde(default)]
    pub started: Option<u64>,
    pub run: String,
    /// Unix seconds.
    pub since: u64,
    pub heartbeat: u64,
}

fn now() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

/// This machine's name (the kernel's, else `HOSTNAME`).
fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .map(|h| h.trim().to_string())
        .filter(|h| !h.is_empty())
        .or_else(|| std::env::var("HOSTNAME").ok())
        .unwrap_or_else(|| "unknown".into())
}

/// The start time of process `pid` (field 22 of `/proc/PID/stat`), None when there is no such
/// process or it is a zombie (ended, not yet reaped).
fn process_start(pid: u32) -> Option<u64> {
    start_of(&std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?)
}

/// The start time in a `/proc/PID/stat` line (None for a zombie).
fn start_of(stat: &str) -> Option<u64> {
    // The command name (field 2) is in parentheses and may hold spaces and parentheses:
    // fields count from the last `)`; the state is field 3, the start time field 22.
    let mut fields = stat.rsplit_once(')')?.1.split_ascii_whitespace();
    let state = fields.next()?;
    if state == "Z" || state == "X" {
        return None;
    }
    fields.nth(18)?.parse().ok()
}

/// What a process finds in the lock it wants.
#[derive(Debug, PartialEq)]
enum Verdict {
    /// Held by a live process: refused.
    Held,
    /// The holder is gone, for this reason: taken over.
    Gone(String),
}

impl Holder {
    fn me() -> Holder {
        let pid = std::process::id();
        let t = now();
        Holder {
            host: host_name(),
            pid,
            started: process_start(pid),
            run: uuid::Uuid::new_v4().to_string(),
            since: t,
            heartbeat: t,
        }
    }

    fn json(&self) -> Vec<u8> {
        serde_json::to_vec(self).expect("a holder serialises")
    }

    /// Is this holder still there, judged on `host` at time `t`? A process of this host is
    /// asked of the kernel (when the kernel can tell: Linux); any other by its heartbeat.
    fn verdict(&self, host: &str, t: u64) -> Verdict {
        if self.host == host && process_start(std::process::id()).is_some() {
            return match process_start(self.pid) {
                Some(s) if self.started.is_none_or(|mine| mine == s) => Verdict::Held,
                _ => Verdict::Gone(format!("its process {} on this host has ended", self.pid)),
            };
        }
        let age = t.saturating_sub(self.heartbeat);
        if age > STALE_SECS { Verdict::Gone(format!("no heartbeat for {age} s")) } else { Verdict::Held }
    }
}

/// What the holder and its heartbeat share.
struct Shared {
    /// The holder as last written, and the ETag of that write.
    held: Mutex<(Holder, String)>,
    lost: AtomicBool,
}

/// A held lock of an output prefix; released when dropped.
pub struct RemoteLock {
    url: S3Url,
    shared: Arc<Shared>,
    stop: Option<std::sync::mpsc::Sender<()>>,
    beat: Option<std::thread::JoinHandle<()>>,
}

fn state_error(url: &S3Url, message: String) -> PipelineError {
    PipelineError::State { path: PathBuf::from(url.to_string()), message }
}

impl RemoteLock {
    /// Takes the lock of the output prefix `prefix`, or says who holds it.
    pub fn take(prefix: &S3Url) -> Result<RemoteLock, PipelineError> {
        let url = prefix.as_prefix().join(LOCK_OBJECT);
        let me = Holder::me();
        // The lock may be released or taken over between two of these requests: look again,
        // a few times.
        for _ in 0..4 {
            if let Some(e_tag) = storage::create_new(&url, me.json())? {
                return Ok(Self::held(url, me, e_tag));
            }
            let Some((bytes, e_tag)) = storage::read_small(&url)? else { continue };
            let verdict = match serde_json::from_slice::<Holder>(&bytes) {
                Ok(h) => match h.verdict(&me.host, now()) {
                    Verdict::Held => {
                        let age = now().saturating_sub(h.heartbeat);
                        return Err(state_error(
                            &url,
                            format!(
                                "another pipeline process writes this output (host {}, pid {}, run {}, last heartbeat \
                                 {age} s ago): wait for it to end, or choose another prefix (a lock with no heartbeat \
                                 for {STALE_SECS} s is taken over)",
                                h.host, h.pid, h.run
                            ),
                        ));
                    }
                    Verdict::Gone(why) => format!("host {}, pid {}: {why}", h.host, h.pid),
                },
                // Not a lock this crate wrote (an empty or foreign object): nobody's.
                Err(e) => format!("unreadable ({e})"),
            };
            if let Some(new) = storage::replace_if(&url, me.json(), &e_tag)? {
                tracing::warn!("{url}: took over the output's lock ({verdict})");
                return Ok(Self::held(url, me, new));
            }
        }
        Err(state_error(&url, "the output's lock changed at every look: another process is taking it".into()))
    }

    fn held(url: S3Url, me: Holder, e_tag: String) -> RemoteLock {
        let shared = Arc::new(Shared { held: Mutex::new((me, e_tag)), lost: AtomicBool::new(false) });
        let (stop, stopped) = std::sync::mpsc::channel::<()>();
        let (s, u) = (shared.clone(), url.clone());
        let beat = std::thread::Builder::new()
            .name("output-lock".into())
            .spawn(move || {
                while let Err(std::sync::mpsc::RecvTimeoutError::Timeout) = stopped.recv_timeout(HEARTBEAT) {
                    if !Self::beat(&s, &u) {
                        break;
                    }
                }
            })
            .ok();
        RemoteLock { url, shared, stop: Some(stop), beat }
    }

    /// Rewrites the heartbeat if the lock is still ours; false once it is not.
    fn beat(shared: &Shared, url: &S3Url) -> bool {
        let mut held = shared.held.lock().unwrap_or_else(|p| p.into_inner());
        held.0.heartbeat = now();
        match storage::replace_if(url, held.0.json(), &held.1) {
            Ok(Some(e_tag)) => {
                held.1 = e_tag;
                true
            }
            Ok(None) => {
                shared.lost.store(true, Ordering::SeqCst);
                tracing::error!("{url}: the output's lock was taken over by another process; this run stops");
                false
            }
            // The store is unreachable for now: the next beat tries again (the uploads fail
            // meanwhile, and say why).
            Err(e) => {
                tracing::warn!("{url}: heartbeat not written: {e}");
                true
            }
        }
    }

    /// Is the lock still ours? Asked before every upload: a holder that paused past
    /// [`STALE_SECS`] and was taken over must not write over its successor.
    pub fn check(&self) -> Result<(), PipelineError> {
        let held = self.shared.held.lock().unwrap_or_else(|p| p.into_inner());
        if !self.shared.lost.load(Ordering::SeqCst) && storage::e_tag(&self.url)?.as_deref() == Some(held.1.as_str()) {
            return Ok(());
        }
        self.shared.lost.store(true, Ordering::SeqCst);
        Err(state_error(&self.url, "the output's lock was taken over by another process: this run stops".into()))
    }

    /// The lock object's location.
    pub fn url(&self) -> &S3Url {
        &self.url
    }
}

impl Drop for RemoteLock {
    fn drop(&mut self) {
        drop(self.stop.take());
        if let Some(b) = self.beat.take() {
            let _ = b.join();
        }
        if self.shared.lost.load(Ordering::SeqCst) {
            return;
        }
        // Deleted only if still ours (a successor's lock stays).
        let held = self.shared.held.lock().unwrap_or_else(|p| p.into_inner());
        match storage::e_tag(&self.url) {
            Ok(Some(t)) if t == held.1 => {
                if let Err(e) = storage::delete(&self.url) {
                    tracing::warn!("{}: lock not released: {e}", self.url);
                }
            }
            Ok(_) => {}
            Err(e) => tracing::warn!("{}: lock not released: {e}", self.url),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn holder(host: &str, pid: u32, started: Option<u64>, heartbeat: u64) -> Holder {
        Holder { host: host.into(), pid, started, run: "r".into(), since: heartbeat, heartbeat }
    }

    #[test]
    fn a_holder_is_judged_by_its_process_on_this_host_and_by_its_heartbeat_elsewhere() {
        let t = 1_000_000;
        let here = host_name();
        let me = std::process::id();
        let started = process_start(me);
        assert!(started.is_some(), "these tests run on Linux");
        // This very process: held, whatever the heartbeat says.
        assert_eq!(holder(&here, me, started, 0).verdict(&here, t), Verdict::Held);
        // A process of this host that has ended, or a pid reused by another process: gone.
        assert!(matches!(holder(&here, u32::MAX, None, t).verdict(&here, t), Verdict::Gone(_)));
        assert!(matches!(holder(&here, me, started.map(|s| s + 1), t).verdict(&here, t), Verdict::Gone(_)));
        // Another host: by its heartbeat (a clock ahead of ours is not stale).
        assert_eq!(holder("elsewhere", me, None, t - STALE_SECS).verdict(&here, t), Verdict::Held);
        assert_eq!(holder("elsewhere", me, None, t + 60).verdict(&here, t), Verdict::Held);
        assert!(matches!(holder("elsewhere", me, None, t - STALE_SECS - 1).verdict(&here, t), Verdict::Gone(_)));
    }

    #[test]
    fn a_process_start_is_read_past_a_command_name_with_spaces_and_parentheses() {
        let tail = "1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 987654 19 20";
        assert_eq!(start_of(&format!("4242 (my (odd) cmd) S {tail}")), Some(987654));
        assert_eq!(start_of(&format!("4242 (my (odd) cmd) Z {tail}")), None);
        assert_eq!(start_of("4242 (cut short) S 1 2"), None);
        assert!(process_start(std::process::id()).is_some_and(|s| s > 0));
        assert_eq!(process_start(u32::MAX), None);
    }
}
