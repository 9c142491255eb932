//! Where pages come from: WARC files read offline ([`warc`]) and feeds polled over HTTP
//! (`feeds`, `fetch`). Every source turns its input into a stream of [`SourceEvent`]s: a page
//! to extract, or an input that was skipped or failed, with a reason that is counted.

pub mod feeds;
pub mod fetch;
pub mod frontier;
pub mod http;
pub mod poll_schedule;
pub mod remote;
pub mod warc;
pub mod warc_writer;

use std::path::Path;

use serde::{Deserialize, Serialize};
use warc::{WarcError, WarcLimits, WarcReader, WarcRecord};

/// Where a page came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Source {
    /// A record of a WARC file: its path and the byte offset of the record (of its gzip
    /// member in a `.warc.gz`), as CDX indexes give it.
    Warc { file: String, offset: u64 },
    /// An item of a feed.
    Feed { feed: String },
}

/// A page ready for extraction.
#[derive(Debug, Clone)]
pub struct Page {
    /// Record id: WARC-Record-ID without angle brackets, or derived from the URL.
    pub id: String,
    pub url: String,
    pub final_url: String,
    pub source: Source,
    pub fetched_at: Option<String>,
    pub status: Option<u16>,
    pub content_type: Option<String>,
    /// Charset from the HTTP Content-Type, if any.
    pub http_charset: Option<String>,
    /// The body with transfer- and content-coding undone.
    pub body: Vec<u8>,
    /// The response's `Content-Language`, if any.
    pub content_language: Option<String>,
    /// The response's `Last-Modified`, if any: the publication date of last resort.
    pub last_modified: Option<String>,
    /// The feed item that linked the page (feeds mode).
    pub feed_item: Option<crate::metadata::FeedItem>,
}

/// What a source produces for each input.
#[derive(Debug)]
pub enum SourceEvent {
    Page(Box<Page>),
    /// Not a page to extract (a request record, a PDF, a 404, …).
    Skipped {
        reason: &'static str,
    },
    /// A damaged or unusable input, with a message naming it.
    Failed {
        reason: &'static str,
        message: String,
    },
}

/// Largest body extracted from a WARC record (larger pages are counted as too large).
pub const MAX_BODY_BYTES: usize = 10 << 20;

/// Reads a WARC file (a path, an `http(s)://` URL or an `s3://` object) as source events (offsets are in the
/// pages' `source` and the errors).
pub fn warc_events(path: &Path) -> Result<impl Iterator<Item = SourceEvent> + Send + use<>, WarcError> {
    let file = path.display().to_string();
    let reader = if remote::is_remote(&file) {
        // A URL: streamed over HTTP(S), resumed with range requests after a dropped connection.
        let open = |source| WarcError::Open { path: path.to_path_buf(), source };
        let http = remote::HttpReader::open(&file).map_err(open)?;
        WarcReader::from_reader(path, Box::new(http), warc_limits(), keep_responses).map_err(open)?
    } else if crate::storage::is_s3(&file) {
        // An object: streamed, resumed with ranged GETs after a broken stream.
        let open = |source| WarcError::Open { path: path.to_path_buf(), source };
        let s3 = crate::storage::S3Url::parse(&file)
            .and_then(|u| crate::storage::S3Reader::open(&u))
            .map_err(|e| open(std::io::Error::other(e.to_string())))?;
        WarcReader::from_reader(path, Box::new(s3), warc_limits(), keep_responses).map_err(open)?
    } else {
        WarcReader::open(path, warc_limits(), keep_responses)?
    };
    Ok(events(file, reader))
}

/// [`warc_events`] over any byte source (`name` appears in errors and records).
pub fn warc_events_from(
    name: &Path,
    reader: Box<dyn std::io::Read + Send>,
) -> std::io::Result<impl Iterator<Item = SourceEvent> + Send + use<>> {
    let r = WarcReader::from_reader(name, reader, warc_limits(), keep_responses)?;
    Ok(events(name.display().to_string(), r))
}

/// Caps of a WARC record that may hold a page up to [`MAX_BODY_BYTES`].
fn warc_limits() -> WarcLimits {
    WarcLimits { max_block_bytes: MAX_BODY_BYTES + (256 << 10), ..WarcLimits::default() }
}

/// Only response blocks are read into memory.
fn keep_responses(r: &WarcRecord) -> bool {
    r.warc_type() == "response"
}

fn events(file: String, reader: WarcReader) -> impl Iterator<Item = SourceEvent> + Send {
    reader.map(move |item| match item {
        Ok(rec) => response_event(&file, rec),
        Err(e) => SourceEvent::Failed { reason: e.reason(), message: e.to_string() },
    })
}

/// Turns one WARC record into an event.
pub fn response_event(file: &str, rec: WarcRecord) -> SourceEvent {
    match rec.warc_type().as_str() {
        "response" => {}
        "revisit" => return SourceEvent::Skipped { reason: "revisit" },
        _ => return SourceEvent::Skipped { reason: "not_response" },
    }
    let offset = rec.offset;
    let fail = |reason, what: String| SourceEvent::Failed {
        reason,
        message: format!("{file}: record at byte {offset}: {what}"),
    };
    if rec.block_too_large {
        return fail("too_large", format!("response of {} bytes is larger than the limit", rec.content_length));
    }
    let record_content_type = rec.header("Content-Type").unwrap_or("").to_ascii_lowercase();
    if !record_content_type.starts_with("application/http") {
        // A response record holding something other than HTTP (dns:, resources, …).
        return SourceEvent::Skipped { reason: "not_http" };
    }
    let url = rec.header("WARC-Target-URI").unwrap_or("").trim_matches(['<', '>']).to_string();
    let id = match rec.header("WARC-Record-ID") {
        Some(id) => id.trim_matches(['<', '>']).to_string(),
        None => url_id(&url),
    };
    let fetched_at = rec.header("WARC-Date").map(str::to_string);
    let response = match http::parse_response(&rec.block, MAX_BODY_BYTES) {
        Ok(r) => r,
        Err(http::HttpError::TooLarge(_)) => return fail("too_large", "body larger than 10 MB".into()),
        Err(e) => return fail("bad_http", e.to_string()),
    };
    if !(200..300).contains(&response.head.status) {
        return SourceEvent::Skipped { reason: "http_status" };
    }
    let content_type = response.head.header("content-type").map(str::to_string);
    let content_language = response.head.header("content-language").map(str::to_string);
    let last_modified = response.head.header("last-modified").map(str::to_string);
    if !http::is_html(content_type.as_deref(), &response.body) {
        return SourceEvent::Skipped { reason: "not_html" };
    }
    SourceEvent::Page(Box::new(Page {
        id,
        final_url: url.clone(),
        url,
        source: Source::Warc { file: file.to_string(), offset },
        fetched_at,
        status: Some(response.head.status),
        http_charset: content_type.as_deref().and_then(http::charset),
        content_type,
        body: response.body,
        content_language,
        last_modified,
        feed_item: None,
    }))
}

/// `url:` + xxh3-64 hex of a URL: the id of a page without a record id.
pub fn url_id(url: &str) -> String {
    format!("url:{:016x}", xxhash_rust::xxh3::xxh3_64(url.as_bytes()))
}
