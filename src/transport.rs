//! What every network reader shares, below both the object-storage client ([`crate::storage`])
//! and the HTTP sources ([`crate::sources`]): the TLS crypto provider, installed once per
//! process, and the bounded resume policy of a streamed file whose connection dropped.

use std::io;
use std::time::Duration;

/// Retries after a dropped connection before the file is given up.
pub const MAX_RESUMES: u32 = 5;

/// The bounded retry of a streamed file (HTTP in [`crate::sources::remote`], S3 in
/// [`crate::storage`]): gives up with an error naming the file and the byte reached after
/// [`MAX_RESUMES`], else counts the resume, logs it and waits a little longer each time before
/// the caller asks again.
pub fn resume_or_give_up(url: &dyn std::fmt::Display, pos: u64, resumes: &mut u32, why: &str) -> io::Result<()> {
    if *resumes >= MAX_RESUMES {
        return Err(io::Error::other(format!(
            "{url}: connection lost at byte {pos} ({why}); gave up after {resumes} resumes"
        )));
    }
    *resumes += 1;
    tracing::warn!("{url}: connection lost at byte {pos} ({why}); resuming");
    std::thread::sleep(Duration::from_millis(200 * u64::from(*resumes)));
    Ok(())
}

/// Installs the ring crypto provider for rustls once per process.
pub fn install_crypto_provider() {
    let _ = rustls::crypto::ring::default_provider().install_default();
}
