//! Ctrl-C and SIGTERM, the two ways a run is asked to stop (SIGTERM is what Kubernetes and
//! systemd send before they kill a process): a feeds run stops gracefully on either
//! ([`super::feeds_run`]); a WARC run with an `s3://` output releases its lock and ends
//! ([`super::remote_lock::RemoteLock::release_on_signal`]).

/// The next Ctrl-C or SIGTERM; false when neither can be listened for.
pub async fn interrupted() -> bool {
    #[cfg(unix)]
    if let Ok(mut term) = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
        return tokio::select! {
            r = tokio::signal::ctrl_c() => r.is_ok(),
            _ = term.recv() => true,
        };
    }
    tokio::signal::ctrl_c().await.is_ok()
}
