//! Writing WARC/1.1 files: one gzip member per record, with WARC-Block-Digest and
//! WARC-Payload-Digest (`sha1:` + base32, as wget and Heritrix write them), so a crawl can
//! be re-processed offline with `pipeline --warc`. Used by the fetcher (`--warc-out`), by
//! tests and benchmarks to make their inputs, and to build `examples/sample.warc.gz`.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use sha1::{Digest, Sha1};

/// A WARC file being written.
pub struct WarcWriter {
    /// The `WARC-Record-ID` of the file's warcinfo record, named by every record after it.
    warcinfo_id: String,
    path: PathBuf,
    out: BufWriter<File>,
    written: u64,
}

/// The parts of a fetched exchange to archive.
pub struct Exchange<'a> {
    pub url: &'a str,
    /// RFC 3339 UTC time of the fetch.
    pub date: &'a str,
    /// The request as sent (head only).
    pub request: &'a [u8],
    /// The raw response: status line, headers, blank line, body (as received).
    pub response: &'a [u8],
    /// The server's IP address, if known.
    pub ip: Option<&'a str>,
}

impl WarcWriter {
    /// Creates `path` and writes a `warcinfo` record.
    pub fn create(path: &Path, software: &str) -> io::Result<Self> {
        let file = File::create(path)?;
        let warcinfo_id = new_record_id();
        let mut w = WarcWriter {
            path: path.to_path_buf(),
            out: BufWriter::new(file),
            written: 0,
            warcinfo_id: warcinfo_id.clone(),
        };
        let info = format!("software: {software}\r\nformat: WARC File Format 1.1\r\n");
        let date = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
        let filename = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        w.write_record(
            &[
                ("WARC-Type", "warcinfo"),
                ("WARC-Date", &date),
                ("WARC-Filename", &filename),
                ("WARC-Record-ID", &warcinfo_id),
            ],
            "application/warc-fields",
            info.as_bytes(),
            None,
        )?;
        Ok(w)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Compressed bytes written so far.
    pub fn bytes_written(&self) -> u64 {
        self.written
    }

    /// Writes a request and its response record; returns the response's offset and id.
    pub fn write_exchange(&mut self, ex: &Exchange<'_>) -> io::Result<(u64, String)> {
        let request_id = new_record_id();
        self.write_record(
            &[
                ("WARC-Type", "request"),
                ("WARC-Target-URI", ex.url),
                ("WARC-Date", ex.date),
                ("WARC-Record-ID", &request_id),
                ("WARC-Warcinfo-ID", &self.warcinfo_id.clone()),
            ],
            "application/http; msgtype=request",
            ex.request,
            None,
        )?;
        let response_id = new_record_id();
        let mut headers = vec![
            ("WARC-Type", "response"),
            ("WARC-Target-URI", ex.url),
            ("WARC-Date", ex.date),
            ("WARC-Record-ID", &response_id),
            ("WARC-Concurrent-To", &request_id),
        ];
        if let Some(ip) = ex.ip {
            headers.push(("WARC-IP-Address", ip));
        }
        let warcinfo_id = self.warcinfo_id.clone();
        headers.push(("WARC-Warcinfo-ID", &warcinfo_id));
        let split = memchr::memmem::find(ex.response, b"\r\n\r\n");
        let payload = split.map_or(&[][..], |i| &ex.response[i + 4..]);
        let head = split.map_or(ex.response, |i| &ex.response[..i]);
        // Common Crawl's header for the payload's type, which readers such as datatrove's
        // WarcReader use to pick HTML records (they sniff with libmagic without it).
        let identified = identified_payload_type(head, payload);
        headers.push(("WARC-Identified-Payload-Type", &identified));
        let offset = self.write_record(&headers, "application/http; msgtype=response", ex.response, Some(payload))?;
        Ok((offset, response_id))
    }

    /// Writes one record as its own gzip member; returns its offset. A `WARC-Record-ID` is
    /// added when `headers` has none; `payload` adds a WARC-Payload-Digest.
    pub fn write_record(
        &mut self,
        headers: &[(&str, &str)],
        content_type: &str,
        block: &[u8],
        payload: Option<&[u8]>,
    ) -> io::Result<u64> {
        let mut head = String::from("WARC/1.1\r\n");
        for (k, v) in headers {
            head.push_str(&format!("{k}: {v}\r\n"));
        }
        if !headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("WARC-Record-ID")) {
            head.push_str(&format!("WARC-Record-ID: {}\r\n", new_record_id()));
        }
        head.push_str(&format!("Content-Type: {content_type}\r\n"));
        head.push_str(&format!("WARC-Block-Digest: {}\r\n", sha1_digest(block)));
        if let Some(p) = payload {
            head.push_str(&format!("WARC-Payload-Digest: {}\r\n", sha1_digest(p)));
        }
        head.push_str(&format!("Content-Length: {}\r\n\r\n", block.len()));
        let offset = self.written;
        let mut gz =
            flate2::write::GzEncoder::new(Vec::with_capacity(block.len() / 3 + 256), flate2::Compression::new(6));
        gz.write_all(head.as_bytes())?;
        gz.write_all(block)?;
        gz.write_all(b"\r\n\r\n")?;
        let member = gz.finish()?;
        self.out.write_all(&member)?;
        self.written += member.len() as u64;
        Ok(offset)
    }

    /// Flushes and fsyncs the file.
    pub fn finish(mut self) -> io::Result<()> {
        self.out.flush()?;
        self.out.get_ref().sync_all()
    }

    /// Flushes buffered records to the file (without fsync).
    pub fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}

/// `<urn:uuid:…>` with a random (v4) UUID.
pub fn new_record_id() -> String {
    format!("<urn:uuid:{}>", uuid::Uuid::new_v4())
}

/// `sha1:` + RFC 4648 base32 of the SHA-1 of `data`.
pub fn sha1_digest(data: &[u8]) -> String {
    format!("sha1:{}", base32(&Sha1::digest(data)))
}

fn base32(data: &[u8]) -> String {
    const ALPHABET: &[u8; 32] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
    let mut out = String::with_capacity(data.len().div_ceil(5) * 8);
    let mut buffer = 0u64;
    let mut bits = 0;
    for &b in data {
        buffer = buffer << 8 | u64::from(b);
        bits += 8;
        while bits >= 5 {
            bits -= 5;
            out.push(ALPHABET[(buffer >> bits & 31) as usize] as char);
        }
    }
    if bits > 0 {
        out.push(ALPHABET[(buffer << (5 - bits) & 31) as usize] as char);
    }
    while !out.len().is_multiple_of(8) {
        out.push('=');
    }
    out
}

/// The media type of a response's payload, as Common Crawl's `WARC-Identified-Payload-Type`:
/// the `Content-Type` the server sent (lower case, without parameters), else `text/html` for a
/// payload that opens like markup, else `application/octet-stream`.
fn identified_payload_type(head: &[u8], payload: &[u8]) -> String {
    let head = String::from_utf8_lossy(head);
    let declared = head.lines().skip(1).find_map(|l| {
        let (k, v) = l.split_once(':')?;
        k.trim()
            .eq_ignore_ascii_case("content-type")
            .then(|| v.split(';').next().unwrap_or("").trim().to_ascii_lowercase())
    });
    if let Some(t) = declared.filter(|t| t.contains('/')) {
        return t;
    }
    let start = payload.iter().position(|b| !b.is_ascii_whitespace()).map_or(&[][..], |i| &payload[i..]);
    let start = &start[..start.len().min(64)];
    if start.first() == Some(&b'<') && !start.to_ascii_lowercase().starts_with(b"<?xml") {
        "text/html".to_string()
    } else {
        "application/octet-stream".to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digests_match_known_values() {
        // RFC 4648 test vectors and the SHA-1 of the empty string in base32.
        assert_eq!(base32(b"foobar"), "MZXW6YTBOI======");
        assert_eq!(base32(b"fooba"), "MZXW6YTB");
        assert_eq!(sha1_digest(b""), "sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ");
    }

    #[test]
    fn the_payload_type_is_the_declared_one_else_sniffed() {
        let t = |head: &str, body: &str| identified_payload_type(head.as_bytes(), body.as_bytes());
        assert_eq!(t("HTTP/1.1 200 OK\r\nContent-Type: Text/HTML; charset=utf-8", "x"), "text/html");
        assert_eq!(t("HTTP/1.1 200 OK\r\ncontent-type: application/pdf", "<html>"), "application/pdf");
        assert_eq!(t("HTTP/1.1 200 OK", "\n  <!doctype html><p>x"), "text/html");
        assert_eq!(t("HTTP/1.1 200 OK", "<?xml version='1.0'?><rss/>"), "application/octet-stream");
        assert_eq!(t("HTTP/1.1 200 OK\r\nContent-Type: nonsense", "%PDF"), "application/octet-stream");
    }

    #[test]
    fn responses_name_their_payload_type_and_warcinfo() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.warc.gz");
        let mut w = WarcWriter::create(&path, "test").unwrap();
        let ex = Exchange {
            url: "https://a.test/",
            date: "2026-11-26T00:00:00Z",
            request: b"GET / HTTP/1.1\r\n\r\n",
            response: b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n<p>hi</p>",
            ip: None,
        };
        w.write_exchange(&ex).unwrap();
        w.finish().unwrap();
        let mut text = String::new();
        std::io::Read::read_to_string(&mut flate2::read::MultiGzDecoder::new(File::open(&path).unwrap()), &mut text)
            .unwrap();
        let info_id = text.lines().find_map(|l| l.strip_prefix("WARC-Record-ID: ")).unwrap();
        assert_eq!(text.matches(&format!("WARC-Warcinfo-ID: {info_id}")).count(), 2, "{text}");
        assert!(text.contains("WARC-Identified-Payload-Type: text/html\r\n"), "{text}");
    }
}
