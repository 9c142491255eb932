//! WARC files over HTTP(S): `pipeline --warc https://…`. The file is streamed, never
//! downloaded whole: [`HttpReader`] is a `Read` over the response body that, when the
//! connection drops (a read error, or the body ends before its announced length), asks again
//! from the byte it got to with a `Range` request, a bounded number of times with a growing
//! wait; a server that ignores ranges (200 instead of 206) is read again from the start and
//! the bytes already delivered are skipped. The WARC reader above it keeps record offsets
//! exactly as for local files.

use std::io::{self, Read};
use std::time::Duration;

/// Is this input a URL rather than a path?
pub fn is_remote(input: &str) -> bool {
    input.starts_with("http://") || input.starts_with("https://")
}

pub use crate::transport::{MAX_RESUMES, resume_or_give_up};

/// A streaming, resuming reader of one URL.
pub struct HttpReader {
    client: reqwest::blocking::Client,
    url: String,
    /// Bytes delivered to the caller so far.
    pos: u64,
    /// Length of the whole file, when the server said.
    total: Option<u64>,
    body: Option<reqwest::blocking::Response>,
    /// Bytes still to drop from a response that started at 0 (server without ranges).
    skip: u64,
    resumes: u32,
}

impl HttpReader {
    /// Opens `url` (the first request is made here, so a missing file fails at once).
    pub fn open(url: &str) -> io::Result<Self> {
        crate::transport::install_crypto_provider();
        let client = reqwest::blocking::Client::builder()
            .connect_timeout(Duration::from_secs(10))
            .timeout(None)
            .user_agent(concat!("article-pipeline/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(io::Error::other)?;
        let mut r = HttpReader { client, url: url.to_string(), pos: 0, total: None, body: None, skip: 0, resumes: 0 };
        r.request()?;
        Ok(r)
    }

    /// Bytes delivered so far.
    pub fn position(&self) -> u64 {
        self.pos
    }

    /// How many times the connection was resumed.
    pub fn resumes(&self) -> u32 {
        self.resumes
    }

    fn request(&mut self) -> io::Result<()> {
        let mut req = self.client.get(&self.url);
        if self.pos > 0 {
            req = req.header("Range", format!("bytes={}-", self.pos));
        }
        let resp = req.send().map_err(|e| io::Error::other(format!("{}: {e}", self.url)))?;
        let status = resp.status().as_u16();
        match status {
            206 => {
                self.skip = 0;
                // Content-Range: bytes START-END/TOTAL
                let total = resp
                    .headers()
                    .get("content-range")
                    .and_then(|v| v.to_str().ok())
                    .and_then(|v| v.rsplit('/').next())
                    .and_then(|t| t.parse().ok());
                self.total = self.total.or(total);
            }
            200 => {
                // No ranges (or the first request): the body starts at byte 0.
                self.skip = self.pos;
                self.total = self.total.or(resp.content_length());
            }
            _ => return Err(io::Error::other(format!("{}: HTTP status {status}", self.url))),
        }
        self.body = Some(resp);
        Ok(())
    }

    /// After a dropped connection: asks again from `pos`, or gives up.
    fn resume(&mut self, why: &str) -> io::Result<()> {
        self.body = None;
        resume_or_give_up(&self.url, self.pos, &mut self.resumes, why)?;
        self.request()
    }
}

impl Read for HttpReader {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        loop {
            if self.body.is_none() {
                self.request()?;
            }
            let body = self.body.as_mut().expect("requested above");
            match body.read(buf) {
                Ok(0) => {
                    if self.total.is_some_and(|t| self.pos < t) {
                        self.resume("the body ended early")?;
                        continue;
                    }
                    return Ok(0);
                }
                Ok(n) if self.skip > 0 => {
                    // Bytes the caller already has (a server that ignores ranges).
                    let drop = (n as u64).min(self.skip) as usize;
                    self.skip -= drop as u64;
                    if drop < n {
                        buf.copy_within(drop..n, 0);
                        self.pos += (n - drop) as u64;
                        return Ok(n - drop);
                    }
                }
                Ok(n) => {
                    self.pos += n as u64;
                    return Ok(n);
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => self.resume(&e.to_string())?,
            }
        }
    }
}
