//! The lock of an `s3://` output prefix, so that two machines never write one prefix at once.
//! A run's local lock (`OUT/.lock`, [`super::lock_output`]) is taken in its staging folder,
//! and two pods with their own disks stage in two folders: both would number, upload and
//! commit the same part names, and each would overwrite the other's resume state.
//!
//! The lock is the object `PREFIX/.lock`, created with a conditional PUT (`If-None-Match: *`,
//! which S3, MinIO, R2 and Ceph honour; a store that ignores it gives no lock), so of two
//! processes asking at once exactly one gets it. It names its holder (host, process id, the
//! process's start, the kernel's boot and pid namespace, a run id) and a heartbeat the holder
//! rewrites every [`HEARTBEAT`], each time only if the object is still the one it wrote
//! (`If-Match` on its ETag). A process that finds the lock taken:
//! - takes it over when the holder ran on this kernel, in this pid namespace, and its process
//!   has ended (a run killed with SIGKILL and rerun, the usual way to resume), or when the
//!   later of its heartbeat and the store's time of its last write is more than
//!   [`STALE_SECS`] old (a pod that died elsewhere: its successor is refused until then);
//! - else is refused, with exit code 2, naming the holder.
//!
//! A holder whose lock was taken over (it paused longer than [`STALE_SECS`]) learns it before
//! its next upload, which compares the lock's ETag with its own ([`RemoteLock::check`]), and
//! stops instead of writing over its successor. A write of the holder's own whose answer was
//! lost (a timeout, a retried conditional PUT) is recognised by its run id, not taken for a
//! successor's.
//!
//! A run releases the lock when it ends by replacing it, `If-Match` on its own last ETag, with
//! the same holder marked `released` (a tombstone), which the next process takes at once. It
//! is never deleted: object stores have no conditional DELETE (`object_store` offers none, and
//! S3 honours `If-Match` on DeleteObject only on some buckets), and a read followed by an
//! unconditional delete could remove a successor's lock that landed in between, leaving the
//! prefix open to a third writer. The tombstone is one small dot-named object that no reader
//! of the output lists.

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
/// A lock last written longer ago than this (seconds) is taken over: ten heartbeats.
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
    /// The kernel's boot id and the process's pid namespace: only a reader that shares both
    /// (and the host name) can ask the kernel about `pid`. Machines may share a host name
    /// (`localhost`), and containers on the host's network share the host's but not its pids.
    #[serde(default)]
    pub boot: Option<String>,
    #[serde(default)]
    pub pid_ns: Option<String>,
    pub run: String,
    /// Unix seconds, by the holder's clock.
    pub since: u64,
    pub heartbeat: u64,
    /// Released by its run as it ended: free to take.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub released: bool,
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

/// This boot of the kernel (`/proc/sys/kernel/random/boot_id`).
fn boot_id() -> Option<String> {
    std::fs::read_to_string("/proc/sys/kernel/random/boot_id").ok().map(|b| b.trim().to_string())
}

/// This process's pid namespace (`/proc/self/ns/pid`, as `pid:[4026531836]`).
fn pid_namespace() -> Option<String> {
    std::fs::read_link("/proc/self/ns/pid").ok().map(|p| p.to_string_lossy().into_owned())
}

/// The start time of process `pid` (field 22 of `/proc/PID/stat`), None when there is no such
/// process, it is a zombie (ended, not yet reaped), or it cannot be seen.
fn process_start(pid: u32) -> Option<u64> {
    match seen(pid) {
        Seen::Started(s) => Some(s),
        Seen::Ended | Seen::Hidden => None,
    }
}

/// What this process can see of process `pid` in `/proc`.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Seen {
    Started(u64),
    /// No such process, or a zombie.
    Ended,
    /// It may run, but `/proc` does not show it to us: another user's process where `/proc` is
    /// mounted with `hidepid` (unreadable with 1, absent with 2).
    Hidden,
}

fn seen(pid: u32) -> Seen {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => start_of(&stat).map_or(Seen::Ended, Seen::Started),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let hides = std::fs::read_to_string("/proc/mounts").is_ok_and(|m| proc_hides_processes(&m));
            if hides { Seen::Hidden } else { Seen::Ended }
        }
        Err(_) => Seen::Hidden,
    }
}

/// Does the mount table (`/proc/mounts`) mount `/proc` with `hidepid`, so that other users'
/// processes may be invisible?
fn proc_hides_processes(mounts: &str) -> bool {
    mounts.lines().any(|l| {
        let f: Vec<&str> = l.split_ascii_whitespace().collect();
        f.len() > 3
            && f[1] == "/proc"
            && f[3].split(',').any(|o| {
                matches!(o, "hidepid=1" | "hidepid=2" | "hidepid=noaccess" | "hidepid=invisible" | "hidepid=ptraceable")
            })
    })
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

/// ETags compared as S3 writes them, a weak mark (`W/`) that a proxy may add ignored.
fn same_tag(a: &str, b: &str) -> bool {
    a.trim_start_matches("W/") == b.trim_start_matches("W/")
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
            boot: boot_id(),
            pid_ns: pid_namespace(),
            run: uuid::Uuid::new_v4().to_string(),
            since: t,
            heartbeat: t,
            released: false,
        }
    }

    /// The tombstone a run leaves as it ends: itself, released. Its heartbeat is 0, so a
    /// version of this crate that knows no `released` takes it for stale.
    fn released(&self) -> Holder {
        Holder { released: true, heartbeat: 0, ..self.clone() }
    }

    fn json(&self) -> Vec<u8> {
        serde_json::to_vec(self).expect("a holder serialises")
    }

    /// Is this holder still there, judged by `me` at time `t` (Unix seconds), the lock object
    /// last written at `modified` by the store's clock? A process of the reader's own kernel
    /// and pid namespace is asked of the kernel; any other goes by the later of its heartbeat
    /// and the store's time of the write, so a holder whose clock runs behind is not taken for
    /// gone.
    fn verdict(&self, me: &Holder, t: u64, modified: i64) -> Verdict {
        if self.released {
            return Verdict::Gone("released by its run".into());
        }
        let known = |a: &Option<String>, b: &Option<String>| a.is_some() && a == b;
        if self.host == me.host && known(&self.boot, &me.boot) && known(&self.pid_ns, &me.pid_ns) {
            match seen(self.pid) {
                Seen::Started(s) if self.started.is_none_or(|mine| mine == s) => return Verdict::Held,
                Seen::Started(_) | Seen::Ended => {
                    return Verdict::Gone(format!("its process {} on this host has ended", self.pid));
                }
                // Another user's process that /proc hides: judged by its heartbeat, as a
                // process elsewhere is.
                Seen::Hidden => {}
            }
        }
        let fresh = i64::try_from(self.heartbeat).unwrap_or(i64::MAX).max(modified);
        let age = i64::try_from(t).unwrap_or(i64::MAX).saturating_sub(fresh);
        if age > STALE_SECS as i64 { Verdict::Gone(format!("no heartbeat for {age} s")) } else { Verdict::Held }
    }
}

/// What the holder and its heartbeat share.
struct Shared {
    /// The holder as last written, and the ETag of that write.
    held: Mutex<(Holder, String)>,
    /// The lock is no longer ours: taken over, or released.
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
        Self::take_beating(prefix, HEARTBEAT)
    }

    /// [`take`](Self::take), the heartbeat rewritten every `every`.
    fn take_beating(prefix: &S3Url, every: Duration) -> Result<RemoteLock, PipelineError> {
        let url = prefix.as_prefix().join(LOCK_OBJECT);
        let me = Holder::me();
        // The lock may be released or taken over between two of these requests: look again,
        // a few times.
        for _ in 0..4 {
            if let Some(e_tag) = storage::create_new(&url, me.json())? {
                return Self::held(url, me, e_tag, every);
            }
            let Some((bytes, e_tag, modified)) = storage::read_small(&url)? else { continue };
            let verdict = match serde_json::from_slice::<Holder>(&bytes) {
                // Our own write, landed before an answer that was lost (the PUT retried and
                // told "already there"): ours.
                Ok(h) if h.run == me.run => return Self::held(url, me, e_tag, every),
                Ok(h) => match h.verdict(&me, now(), modified) {
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
                return Self::held(url, me, new, every);
            }
        }
        Err(state_error(&url, "the output's lock changed at every look: another process is taking it".into()))
    }

    fn held(url: S3Url, me: Holder, e_tag: String, every: Duration) -> Result<RemoteLock, PipelineError> {
        let shared = Arc::new(Shared { held: Mutex::new((me, e_tag)), lost: AtomicBool::new(false) });
        let (stop, stopped) = std::sync::mpsc::channel::<()>();
        let (s, u) = (shared.clone(), url.clone());
        let beat = std::thread::Builder::new()
            .name("output-lock".into())
            .spawn(move || {
                while let Err(std::sync::mpsc::RecvTimeoutError::Timeout) = stopped.recv_timeout(every) {
                    if !Self::beat(&s, &u) {
                        break;
                    }
                }
            })
            .map_err(|e| state_error(&url, format!("cannot start the lock's heartbeat: {e}")))?;
        Ok(RemoteLock { url, shared, stop: Some(stop), beat: Some(beat) })
    }

    /// Rewrites the heartbeat if the lock is still ours; false once it is not.
    fn beat(shared: &Shared, url: &S3Url) -> bool {
        let mut held = shared.held.lock().unwrap_or_else(|p| p.into_inner());
        // Released (on a signal) or taken over: nothing more to write.
        if shared.lost.load(Ordering::SeqCst) {
            return false;
        }
        held.0.heartbeat = now();
        let written = match storage::replace_if(url, held.0.json(), &held.1) {
            Ok(Some(e_tag)) => Ok(Some(e_tag)),
            // Changed since our last write: ours still if it is one of our own writes that
            // landed unanswered (a timeout, a retried PUT).
            Ok(None) => Self::current_tag(url, &held.0.run),
            Err(e) => Err(e.into()),
        };
        match written {
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
            // meanwhile, and say why); a write that landed all the same is found by its run id.
            Err(e) => {
                tracing::warn!("{url}: heartbeat not written: {e}");
                true
            }
        }
    }

    /// The lock object's ETag if it is run `run`'s and not released, else None.
    fn current_tag(url: &S3Url, run: &str) -> Result<Option<String>, PipelineError> {
        Ok(read_holder(url)?.filter(|(h, _, _)| h.run == run && !h.released).map(|(_, tag, _)| tag))
    }

    /// Is the lock still ours? Asked before every upload: a holder that paused past
    /// [`STALE_SECS`] and was taken over must not write over its successor. One HEAD when the
    /// ETag is the one of our last write; else the lock is read (ours if it names our run).
    pub fn check(&self) -> Result<(), PipelineError> {
        let mut held = self.shared.held.lock().unwrap_or_else(|p| p.into_inner());
        if !self.shared.lost.load(Ordering::SeqCst) {
            if storage::e_tag(&self.url)?.is_some_and(|t| same_tag(&t, &held.1)) {
                return Ok(());
            }
            if let Some(tag) = Self::current_tag(&self.url, &held.0.run)? {
                held.1 = tag;
                return Ok(());
            }
        }
        self.shared.lost.store(true, Ordering::SeqCst);
        Err(state_error(&self.url, "the output's lock was taken over by another process: this run stops".into()))
    }

    /// Leaves the tombstone ([`Holder::released`]) in place of the lock, if it is still ours:
    /// conditional on the ETag of our last write, so a successor's lock is never replaced.
    /// The holder's mutex is kept throughout, so no heartbeat writes the lock meanwhile.
    fn release(shared: &Shared, url: &S3Url) -> Result<(), PipelineError> {
        let mut held = shared.held.lock().unwrap_or_else(|p| p.into_inner());
        // Twice: a write of ours whose answer was lost moved the ETag (found by our run id).
        for _ in 0..2 {
            if shared.lost.load(Ordering::SeqCst) {
                return Ok(());
            }
            if storage::replace_if(url, held.0.released().json(), &held.1)?.is_some() {
                shared.lost.store(true, Ordering::SeqCst);
                return Ok(());
            }
            match Self::current_tag(url, &held.0.run)? {
                Some(tag) => held.1 = tag,
                // A successor's: it stays.
                None => return Ok(()),
            }
        }
        Ok(())
    }

    /// On Ctrl-C or SIGTERM, release the lock and end the process at once (exit code 130),
    /// as the signal would have ended it: for runs with no graceful stop of their own (a WARC
    /// run resumes from its last committed part either way), so that the next holder, on
    /// another machine, need not wait [`STALE_SECS`] for the lock to go stale. Not for feeds
    /// runs, which stop gracefully on these signals and release the lock as they end.
    pub fn release_on_signal(&self) {
        let (url, shared) = (self.url.clone(), self.shared.clone());
        let spawned = std::thread::Builder::new().name("output-lock-signal".into()).spawn(move || {
            let Ok(rt) = tokio::runtime::Builder::new_current_thread().enable_all().build() else { return };
            if !rt.block_on(super::interrupt::interrupted()) {
                return;
            }
            if let Err(e) = Self::release(&shared, &url) {
                tracing::warn!("{url}: lock not released: {e}");
            }
            tracing::warn!("interrupted: {url} released; rerun with --resume to go on");
            std::process::exit(130);
        });
        if let Err(e) = spawned {
            tracing::warn!("{}: the lock stays if the run is interrupted ({e})", self.url);
        }
    }
}

/// Is the lock object at `url` the tombstone of a run that ended ([`Holder::released`])?
/// False for a held lock, a foreign object, or none.
pub fn is_released(url: &S3Url) -> Result<bool, PipelineError> {
    Ok(read_holder(url)?.is_some_and(|(h, _, _)| h.released))
}

/// The lock object at `url` as a holder, with its ETag and the store's time of its write;
/// None when there is none, or it is not a lock this crate wrote.
fn read_holder(url: &S3Url) -> Result<Option<(Holder, String, i64)>, PipelineError> {
    Ok(storage::read_small(url)?
        .and_then(|(bytes, tag, modified)| Some((serde_json::from_slice::<Holder>(&bytes).ok()?, tag, modified))))
}

/// A run's lock found under a prefix ([`locks_under`]).
#[derive(Debug, Clone)]
pub struct FoundLock {
    pub url: S3Url,
    /// Its holder, as the lock names it: `host H, pid P, run R`.
    pub holder: String,
    /// Seconds since its last heartbeat, by this machine's clock.
    pub heartbeat_age: u64,
    /// None while the holder runs (judged as [`RemoteLock::take`] judges it); else why it is
    /// taken for gone.
    pub gone: Option<String>,
}

impl std::fmt::Display for FoundLock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({}, last heartbeat {} s ago", self.url, self.holder, self.heartbeat_age)?;
        match &self.gone {
            None => write!(f, ")"),
            Some(why) => write!(f, "; ended: {why})"),
        }
    }
}

/// The run locks under `prefix`: its own and its `shard-*` folders' (a lock this crate did
/// not write is left out).
pub fn locks_under(prefix: &S3Url) -> Result<Vec<FoundLock>, PipelineError> {
    let prefix = prefix.as_prefix();
    let me = Holder::me();
    let mut found = Vec::new();
    for (url, _) in storage::list(&prefix)? {
        let Some(rel) = url.key.strip_prefix(&prefix.key) else { continue };
        let is_lock = match rel.split_once('/') {
            None => rel == LOCK_OBJECT,
            Some((dir, rest)) => dir.starts_with("shard-") && rest == LOCK_OBJECT,
        };
        if !is_lock {
            continue;
        }
        let Some((h, _, modified)) = read_holder(&url)? else { continue };
        if h.released {
            continue;
        }
        let gone = match h.verdict(&me, now(), modified) {
            Verdict::Held => None,
            Verdict::Gone(why) => Some(why),
        };
        let holder = format!("host {}, pid {}, run {}", h.host, h.pid, h.run);
        found.push(FoundLock { url, holder, heartbeat_age: now().saturating_sub(h.heartbeat), gone });
    }
    Ok(found)
}

/// Refuses to read the output under `prefix` while a run still writes it: the lock of the
/// prefix, or of any of its `shard-*` folders, held by a live process ([`locks_under`]). A
/// pass over a run's records (`pipeline dedup`) made while the run writes would see only the
/// parts committed so far, and say nothing of the rest. A lock whose holder is gone (a run
/// killed and not yet resumed) is a warning: its committed parts are whole, but the run did not
/// finish.
pub fn refuse_if_written(prefix: &S3Url) -> Result<(), PipelineError> {
    for lock in locks_under(prefix)? {
        match &lock.gone {
            None => {
                return Err(state_error(
                    &lock.url,
                    format!(
                        "a pipeline run still writes this output ({}, last heartbeat {} s ago): read it once the run \
                         has ended (a lock with no heartbeat for {STALE_SECS} s counts as ended)",
                        lock.holder, lock.heartbeat_age
                    ),
                ));
            }
            Some(why) => tracing::warn!(
                "{}: the run that wrote this output did not finish ({}: {why}); its committed parts are read",
                lock.url,
                lock.holder
            ),
        }
    }
    Ok(())
}

impl Drop for RemoteLock {
    fn drop(&mut self) {
        drop(self.stop.take());
        if let Some(b) = self.beat.take() {
            let _ = b.join();
        }
        if let Err(e) = Self::release(&self.shared, &self.url) {
            tracing::warn!("{}: lock not released: {e}", self.url);
        }
    }
}

/// The tests' S3-compatible server (shared with the integration tests).
#[cfg(test)]
#[allow(dead_code)] // these tests use `start` only
#[path = "../../tests/common/s3.rs"]
mod s3_server;

#[cfg(test)]
mod tests {
    use super::*;

    /// A TCP proxy in front of `upstream` that, while the flag is set, answers every request
    /// with `400 Bad Request` and closes the connection (a store or a network path that fails
    /// for a while: an error the client does not retry), and otherwise passes bytes both ways.
    fn flaky_proxy(upstream: &str) -> (String, Arc<AtomicBool>, tokio::runtime::Runtime) {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        const REFUSED: &[u8] = b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\nconnection: close\r\n\r\n";
        let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
        let listener = rt.block_on(tokio::net::TcpListener::bind("127.0.0.1:0")).unwrap();
        let addr = format!("http://{}", listener.local_addr().unwrap());
        let upstream = upstream.trim_start_matches("http://").to_string();
        let down = Arc::new(AtomicBool::new(false));
        let flag = down.clone();
        rt.spawn(async move {
            loop {
                let Ok((mut client, _)) = listener.accept().await else { continue };
                let (upstream, down) = (upstream.clone(), flag.clone());
                tokio::spawn(async move {
                    let Ok(mut server) = tokio::net::TcpStream::connect(upstream).await else { return };
                    let (mut from_client, mut from_server) = (vec![0u8; 64 << 10], vec![0u8; 64 << 10]);
                    loop {
                        tokio::select! {
                            n = client.read(&mut from_client) => {
                                let Ok(n @ 1..) = n else { break };
                                if down.load(Ordering::SeqCst) {
                                    let _ = client.write_all(REFUSED).await;
                                    break;
                                }
                                if server.write_all(&from_client[..n]).await.is_err() { break }
                            }
                            n = server.read(&mut from_server) => {
                                let Ok(n @ 1..) = n else { break };
                                if client.write_all(&from_server[..n]).await.is_err() { break }
                            }
                        }
                    }
                });
            }
        });
        (addr, down, rt)
    }

    /// Against an S3-compatible server on 127.0.0.1, through [`flaky_proxy`] (the only test of
    /// this binary that talks to one: the storage settings are the process's): the heartbeat
    /// rewrites the lock while it is the run's, and a store failing for a while loses it
    /// nothing; once another process replaces it, every upload's check says so, and the run's
    /// end leaves the other's lock in place; a foreign lock too large to be one is not read.
    #[test]
    fn the_heartbeat_keeps_the_lock_until_another_process_takes_it_over() {
        let s3 = s3_server::S3Server::start(&["locks"]);
        // Through a proxy that can fail every request for a while.
        let (endpoint, down, _proxy) = flaky_proxy(&s3.endpoint);
        storage::configure(storage::S3Settings {
            endpoint: Some(endpoint),
            access_key_id: Some(s3_server::ACCESS_KEY.into()),
            secret_access_key: Some(s3_server::SECRET_KEY.into()),
            region: Some("us-east-1".into()),
        });
        let prefix = S3Url::parse("s3://locks/run/").unwrap();
        let url = prefix.join(LOCK_OBJECT);
        let lock = RemoteLock::take_beating(&prefix, Duration::from_millis(100)).unwrap();
        let read = || {
            let (bytes, e_tag, _) = storage::read_small(&url).unwrap().unwrap();
            (serde_json::from_slice::<Holder>(&bytes).unwrap(), e_tag)
        };
        let (first, first_tag) = read();
        assert_eq!(first.pid, std::process::id());
        // A second process of this one's host is refused while this one lives.
        let Err(e) = RemoteLock::take(&prefix) else { panic!("taken twice") };
        assert!(e.to_string().contains("another pipeline process writes this output"), "{e}");
        // Heartbeats count seconds: one lands in a later second (polled, with a deadline far
        // above the second it takes, for a loaded machine).
        let later = |than: u64| {
            let deadline = std::time::Instant::now() + Duration::from_secs(30);
            loop {
                let (h, tag) = read();
                if h.heartbeat > than || std::time::Instant::now() > deadline {
                    return (h, tag);
                }
                std::thread::sleep(Duration::from_millis(50));
            }
        };
        let (beaten, beaten_tag) = later(first.heartbeat);
        assert!(beaten.heartbeat > first.heartbeat && beaten.run == first.run, "{first:?} {beaten:?}");
        assert_ne!(beaten_tag, first_tag);
        lock.check().unwrap();
        // The store fails every request for a while: the upload's check says so (the upload
        // is not made), the heartbeats that fail meanwhile are let pass, and none of it is
        // taken for the lock being lost: once the store answers again the lock is still the
        // run's, its heartbeat goes on, and the check passes.
        down.store(true, Ordering::SeqCst);
        std::thread::sleep(Duration::from_millis(400));
        let Err(e) = lock.check() else { panic!("a check passed with the store failing") };
        assert!(!e.to_string().contains("taken over"), "{e}");
        assert!(!lock.shared.lost.load(Ordering::SeqCst));
        down.store(false, Ordering::SeqCst);
        let (after, _) = later(beaten.heartbeat);
        assert!(after.heartbeat > beaten.heartbeat && after.run == first.run, "{beaten:?} {after:?}");
        lock.check().unwrap();
        let beaten = after;
        // Another process replaces the lock (it judged this one gone).
        // With no heartbeat in flight meanwhile: the test server checks If-Match and writes in
        // two steps, so a heartbeat racing this write could pass the same check and land over
        // it (S3 itself decides conditional writes atomically).
        let other = Holder { host: "other-machine".into(), run: "other".into(), ..beaten.clone() };
        {
            let _no_beat = lock.shared.held.lock().unwrap();
            assert!(storage::replace_if(&url, other.json(), &read().1).unwrap().is_some());
        }
        let Err(e) = lock.check() else { panic!("a lock taken over was still the run's") };
        assert!(e.to_string().contains("taken over"), "{e}");
        std::thread::sleep(Duration::from_millis(300));
        drop(lock);
        assert_eq!(read().0.host, "other-machine", "the successor's lock stays");
        // Released by its holder, the lock is free again.
        storage::delete(&url).unwrap();
        let again = RemoteLock::take(&prefix).unwrap();
        let again_run = read().0.run;
        drop(again);
        // Released at the end: a tombstone of the run, which no listing counts as a run's lock
        // and the next process takes at once.
        let (tomb, _) = read();
        assert!(tomb.released && tomb.run == again_run, "{tomb:?}");
        assert!(locks_under(&prefix).unwrap().is_empty());
        let next = RemoteLock::take_beating(&prefix, Duration::from_secs(3600)).unwrap();
        assert!(!read().0.released);
        // Replaced by another process the holder has not yet heard of (no check since): its
        // release is conditional on its own last write, so the other's lock stays.
        let other = Holder { host: "third-machine".into(), run: "third".into(), released: false, ..tomb };
        assert!(storage::replace_if(&url, other.json(), &read().1).unwrap().is_some());
        assert!(!next.shared.lost.load(Ordering::SeqCst));
        drop(next);
        assert_eq!(read().0.host, "third-machine", "a successor's lock is never released by its predecessor");
        storage::delete(&url).unwrap();
        // A foreign object of the lock's name, too large to be one, is refused unread.
        let big = s3.path("locks", "big/.lock");
        std::fs::create_dir_all(big.parent().unwrap()).unwrap();
        std::fs::File::create(&big).unwrap().set_len(storage::SMALL_MAX + 1).unwrap();
        let big_prefix = S3Url::parse("s3://locks/big/").unwrap();
        let Err(e) = RemoteLock::take(&big_prefix) else { panic!("a 64 MiB lock read") };
        assert!(e.to_string().contains("larger than"), "{e}");
        assert!(locks_under(&big_prefix).is_err());
    }

    #[test]
    fn a_holder_is_judged_by_its_process_on_this_kernel_and_by_its_heartbeat_elsewhere() {
        let t = 1_000_000;
        let me = Holder::me();
        assert!(me.started.is_some() && me.boot.is_some() && me.pid_ns.is_some(), "these tests run on Linux");
        let gone = |v: Verdict| matches!(v, Verdict::Gone(_));
        let old = Holder { heartbeat: 0, ..me.clone() };
        // This very process: held, whatever the heartbeat says.
        assert_eq!(old.verdict(&me, t, 0), Verdict::Held);
        // A process of this kernel that has ended, or a pid reused by another process: gone.
        assert!(gone(Holder { pid: u32::MAX, ..me.clone() }.verdict(&me, t, t as i64)));
        assert!(gone(Holder { started: me.started.map(|s| s + 1), ..me.clone() }.verdict(&me, t, t as i64)));
        // The same host name on another machine or in another pid namespace (containers on
        // the host's network): by its heartbeat, not by pids that are not its.
        for other in
            [Holder { boot: Some("another boot".into()), ..old.clone() }, Holder { pid_ns: None, ..old.clone() }]
        {
            assert_eq!(Holder { heartbeat: t, ..other.clone() }.verdict(&me, t, 0), Verdict::Held);
            assert!(gone(other.verdict(&me, t, 0)));
        }
        // Another host: by the later of its heartbeat and the store's time of the write, so a
        // clock behind ours, or ahead, is not taken for a dead holder.
        let far = Holder { host: "elsewhere".into(), ..me.clone() };
        let at = |heartbeat: u64, modified: i64| Holder { heartbeat, ..far.clone() }.verdict(&me, t, modified);
        assert_eq!(at(t - STALE_SECS, 0), Verdict::Held);
        assert_eq!(at(t + 60, 0), Verdict::Held);
        assert_eq!(at(0, t as i64 - 10), Verdict::Held);
        assert!(gone(at(t - STALE_SECS - 1, 0)));
        assert!(gone(at(0, t as i64 - STALE_SECS as i64 - 1)));
        assert!(same_tag("W/\"abc\"", "\"abc\"") && !same_tag("\"abc\"", "\"abd\""));
    }

    #[test]
    fn a_process_start_is_read_past_a_command_name_with_spaces_and_parentheses() {
        let tail = "1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 987654 19 20";
        assert_eq!(start_of(&format!("4242 (my (odd) cmd) S {tail}")), Some(987654));
        assert_eq!(start_of(&format!("4242 (my (odd) cmd) Z {tail}")), None);
        assert_eq!(start_of("4242 (cut short) S 1 2"), None);
        assert!(process_start(std::process::id()).is_some_and(|s| s > 0));
        assert_eq!(process_start(u32::MAX), None);
        assert_eq!(seen(std::process::id()), Seen::Started(process_start(std::process::id()).unwrap()));
        // `/proc` mounted so that other users' processes are hidden: a process not found may
        // still run, and is judged by its heartbeat.
        let hidden = "sysfs /sys sysfs rw 0 0\nproc /proc proc rw,nosuid,nodev,noexec,relatime,hidepid=invisible 0 0\n";
        assert!(proc_hides_processes(hidden));
        assert!(proc_hides_processes("proc /proc proc rw,hidepid=2 0 0\n"));
        assert!(!proc_hides_processes("proc /proc proc rw,nosuid,nodev,noexec,relatime 0 0\n"));
        assert!(!proc_hides_processes("proc /other proc rw,hidepid=2 0 0\n"));
    }
}
