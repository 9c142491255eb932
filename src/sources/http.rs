//! HTTP responses as bytes: the status line and headers of a WARC response record's block,
//! chunked transfer-coding, and gzip / deflate / br content-coding, each with a size cap.
//! The fetcher uses the same decoding so that what it archives is the raw response and
//! what it extracts is exactly what a later `--warc` run would extract.

use std::io::Read;

/// A parsed HTTP response head.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResponseHead {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    /// Bytes of the head, including the blank line.
    pub head_len: usize,
}

impl ResponseHead {
    /// The first header of that name (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        header(&self.headers, name)
    }
}

/// The first header of that name (case-insensitive) in a header list (HTTP or WARC).
pub fn header<'a>(headers: &'a [(String, String)], name: &str) -> Option<&'a str> {
    headers.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
}

/// Why a payload could not be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HttpError {
    #[error("malformed HTTP response head: {0}")]
    BadHead(String),
    #[error("malformed chunked transfer-coding at byte {0} of the body")]
    BadChunk(usize),
    #[error("cannot decode {coding} content-coding: {message}")]
    BadCoding { coding: String, message: String },
    #[error("unsupported content-coding `{0}`")]
    UnknownCoding(String),
    #[error("body larger than {0} bytes")]
    TooLarge(usize),
}

/// Parses the head of an HTTP/1.x response.
pub fn parse_head(block: &[u8]) -> Result<ResponseHead, HttpError> {
    let mut storage = [httparse::EMPTY_HEADER; 128];
    let mut resp = httparse::Response::new(&mut storage);
    let parsed = httparse::ParserConfig::default()
        .allow_spaces_after_header_name_in_responses(true)
        .allow_obsolete_multiline_headers_in_responses(true)
        .allow_multiple_spaces_in_response_status_delimiters(true)
        .parse_response(&mut resp, block);
    match parsed {
        Ok(httparse::Status::Complete(head_len)) => Ok(ResponseHead {
            status: resp.code.unwrap_or(0),
            headers: resp
                .headers
                .iter()
                .map(|h| (h.name.to_string(), String::from_utf8_lossy(h.value).trim().to_string()))
                .collect(),
            head_len,
        }),
        Ok(httparse::Status::Partial) => Err(HttpError::BadHead("incomplete head".into())),
        Err(e) => Err(HttpError::BadHead(e.to_string())),
    }
}

/// Undoes chunked transfer-coding (trailers ignored). A body cut short ends at what arrived,
/// as browsers do; a malformed chunk size is an error.
pub fn dechunk(body: &[u8], cap: usize) -> Result<Vec<u8>, HttpError> {
    let mut out = Vec::with_capacity(body.len().min(cap));
    let mut i = 0;
    loop {
        let Some(eol) = memchr::memmem::find(&body[i..], b"\r\n").or_else(|| memchr::memchr(b'\n', &body[i..])) else {
            return Ok(out); // truncated: keep what arrived
        };
        let line = &body[i..i + eol];
        let size_str = std::str::from_utf8(line).map_err(|_| HttpError::BadChunk(i))?;
        let size_str = size_str.split(';').next().unwrap_or("").trim();
        let size = usize::from_str_radix(size_str, 16).map_err(|_| HttpError::BadChunk(i))?;
        i += eol + if body[i + eol..].starts_with(b"\r\n") { 2 } else { 1 };
        if size == 0 {
            return Ok(out);
        }
        // `size` comes from the peer and may be near `usize::MAX`: no unchecked sums with it.
        let available = body.len() - i;
        let take = size.min(available);
        if out.len().saturating_add(take) > cap {
            return Err(HttpError::TooLarge(cap));
        }
        let end = i + take;
        out.extend_from_slice(&body[i..end]);
        if take < size {
            return Ok(out); // truncated inside the chunk: keep what arrived
        }
        i = end;
        if body[i..].starts_with(b"\r\n") {
            i += 2;
        } else if body[i..].starts_with(b"\n") {
            i += 1;
        }
    }
}

/// Undoes a Content-Encoding (`gzip`, `x-gzip`, `deflate` (zlib or raw), `br`, `identity`;
/// a list is undone right to left), stopping with [`HttpError::TooLarge`] past `cap` bytes.
pub fn decode_content(body: Vec<u8>, content_encoding: Option<&str>, cap: usize) -> Result<Vec<u8>, HttpError> {
    decode(body, content_encoding, cap, false)
}

/// The first `cap` bytes of the decoded body, for a body read only in part (robots.txt, whose
/// first 500 KiB count): what follows is dropped, not an error, and what decodes of a
/// compressed stream cut short is kept.
pub fn decode_content_prefix(body: Vec<u8>, content_encoding: Option<&str>, cap: usize) -> Result<Vec<u8>, HttpError> {
    let mut data = decode(body, content_encoding, cap, true)?;
    data.truncate(cap);
    Ok(data)
}

fn decode(body: Vec<u8>, content_encoding: Option<&str>, cap: usize, prefix: bool) -> Result<Vec<u8>, HttpError> {
    let Some(list) = content_encoding else { return Ok(body) };
    let mut data = body;
    for coding in list.rsplit(',').map(|c| c.trim().to_ascii_lowercase()) {
        data = match coding.as_str() {
            "" | "identity" | "none" => data,
            "gzip" | "x-gzip" => read_capped(flate2::read::MultiGzDecoder::new(&data[..]), &coding, cap, prefix)?,
            "deflate" => {
                // Servers send either zlib-wrapped or raw deflate under this name.
                match read_capped(flate2::read::ZlibDecoder::new(&data[..]), &coding, cap, prefix) {
                    Ok(d) => d,
                    Err(HttpError::TooLarge(c)) => return Err(HttpError::TooLarge(c)),
                    Err(_) => read_capped(flate2::read::DeflateDecoder::new(&data[..]), &coding, cap, prefix)?,
                }
            }
            "br" => read_capped(brotli_decompressor::Decompressor::new(&data[..], 4096), &coding, cap, prefix)?,
            other => return Err(HttpError::UnknownCoding(other.to_string())),
        };
    }
    Ok(data)
}

/// Reads at most `cap` decoded bytes. Past `cap`: an error, or in `prefix` mode the end of
/// reading. A decoding error: an error, or in `prefix` mode (a body cut short) what was decoded
/// before it, when there is any.
fn read_capped(r: impl Read, coding: &str, cap: usize, prefix: bool) -> Result<Vec<u8>, HttpError> {
    let mut out = Vec::new();
    match r.take(cap as u64 + 1).read_to_end(&mut out) {
        Ok(n) if n > cap && !prefix => Err(HttpError::TooLarge(cap)),
        Ok(_) => Ok(out),
        Err(_) if prefix && !out.is_empty() => Ok(out),
        Err(e) => Err(HttpError::BadCoding { coding: coding.to_string(), message: e.to_string() }),
    }
}

/// The media type of a Content-Type value, lower-cased (`text/html`).
pub fn media_type(content_type: &str) -> String {
    content_type.split(';').next().unwrap_or("").trim().to_ascii_lowercase()
}

/// The `charset` parameter of a Content-Type value.
pub fn charset(content_type: &str) -> Option<String> {
    content_type.split(';').skip(1).find_map(|p| {
        let (k, v) = p.split_once('=')?;
        k.trim().eq_ignore_ascii_case("charset").then(|| v.trim().trim_matches(['"', '\'']).to_string())
    })
}

/// Is this a media type we extract? HTML and XHTML; a missing type is decided by sniffing.
pub fn is_html_type(media_type: &str) -> bool {
    matches!(media_type, "text/html" | "application/xhtml+xml" | "application/xhtml" | "text/xhtml")
}

/// Is a response with this Content-Type (if any) and body a page we extract? A declared
/// media type decides; a missing or empty one is decided by [`sniff_html`].
pub fn is_html(content_type: Option<&str>, body: &[u8]) -> bool {
    match content_type.map(media_type) {
        Some(t) if !t.is_empty() => is_html_type(&t),
        _ => sniff_html(body),
    }
}

/// A body without a declared type is taken for HTML when it starts (after whitespace and a
/// BOM) with `<` and is not an XML document (feeds, SVG) unless that names an `<html>` root.
pub fn sniff_html(body: &[u8]) -> bool {
    let body = body.strip_prefix(b"\xef\xbb\xbf").unwrap_or(body);
    let Some(start) = body.iter().position(|b| !b.is_ascii_whitespace()) else { return false };
    let head: Vec<u8> = body[start..body.len().min(start + 1024)].to_ascii_lowercase();
    if !head.starts_with(b"<") {
        return false;
    }
    let xml_like = [&b"<?xml"[..], b"<rss", b"<feed", b"<svg", b"<rdf"].iter().any(|p| head.starts_with(p));
    !xml_like || memchr::memmem::find(&head, b"<html").is_some()
}

/// An HTTP response taken apart: head, and the body with transfer- and content-coding undone.
#[derive(Debug, Clone)]
pub struct Response {
    pub head: ResponseHead,
    pub body: Vec<u8>,
}

/// Parses a whole raw response (as stored in a WARC response record).
pub fn parse_response(raw: &[u8], cap: usize) -> Result<Response, HttpError> {
    let head = parse_head(raw)?;
    let body = &raw[head.head_len..];
    let chunked = head.header("transfer-encoding").is_some_and(|t| t.to_ascii_lowercase().contains("chunked"));
    let body = if chunked {
        dechunk(body, cap)?
    } else {
        if body.len() > cap {
            return Err(HttpError::TooLarge(cap));
        }
        body.to_vec()
    };
    let body = decode_content(body, head.header("content-encoding"), cap)?;
    Ok(Response { head, body })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::io::Write;

    fn gzip(data: &[u8]) -> Vec<u8> {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        e.write_all(data).unwrap();
        e.finish().unwrap()
    }

    #[test]
    fn head_chunked_and_codings() {
        let raw = b"HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=\"ISO-8859-1\"\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n6;ext=1\r\n world\r\n0\r\n\r\n";
        let r = parse_response(raw, 1000).unwrap();
        assert_eq!(r.head.status, 200);
        assert_eq!(r.body, b"hello world");
        let ct = r.head.header("content-type").unwrap();
        assert_eq!(media_type(ct), "text/html");
        assert_eq!(charset(ct).as_deref(), Some("ISO-8859-1"));

        let page = b"<html><p>compressed page</p></html>".repeat(10);
        let mut raw = b"HTTP/1.0 200 OK\r\nContent-Encoding: gzip\r\n\r\n".to_vec();
        raw.extend(gzip(&page));
        assert_eq!(parse_response(&raw, 10_000).unwrap().body, page);
        assert_eq!(parse_response(&raw, 100).unwrap_err(), HttpError::TooLarge(100));

        let mut zlib = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
        zlib.write_all(&page).unwrap();
        assert_eq!(decode_content(zlib.finish().unwrap(), Some("deflate"), 10_000).unwrap(), page);
        let mut raw_deflate = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::default());
        raw_deflate.write_all(&page).unwrap();
        assert_eq!(decode_content(raw_deflate.finish().unwrap(), Some("deflate"), 10_000).unwrap(), page);
        // br: Python brotli.compress(b'<html><p>brotli page</p></html>' * 20).
        let br = [
            27, 107, 2, 128, 140, 212, 97, 205, 157, 7, 114, 27, 91, 183, 53, 196, 55, 90, 5, 70, 18, 197, 75, 131, 48,
            136, 66, 133, 169, 204, 38, 81, 63, 34, 204, 188, 125, 117, 28, 96, 10, 31, 96,
        ];
        assert_eq!(
            decode_content(br.to_vec(), Some("br"), 10_000).unwrap(),
            b"<html><p>brotli page</p></html>".repeat(20)
        );
        assert!(matches!(decode_content(b"x".to_vec(), Some("zstd7"), 100), Err(HttpError::UnknownCoding(_))));
        assert!(matches!(decode_content(b"not gzip".to_vec(), Some("gzip"), 100), Err(HttpError::BadCoding { .. })));
    }

    #[test]
    fn truncated_chunks_keep_what_arrived_and_bad_sizes_fail() {
        assert_eq!(dechunk(b"5\r\nhel", 100).unwrap(), b"hel");
        assert_eq!(dechunk(b"zz\r\nhello", 100).unwrap_err(), HttpError::BadChunk(0));
        assert_eq!(dechunk(b"5\nhello\n0\n\n", 100).unwrap(), b"hello");
    }

    #[test]
    fn chunk_sizes_near_the_integer_limit_do_not_overflow() {
        let max = format!("{:x}", usize::MAX);
        let near = format!("{:x}", usize::MAX - 3);
        for size in [max.as_str(), near.as_str(), "ffffffffffffffff"] {
            let body = format!("2\r\nab\r\n{size}\r\ncdef");
            assert_eq!(dechunk(body.as_bytes(), 100).unwrap(), b"abcdef", "size {size}");
            assert_eq!(dechunk(body.as_bytes(), 3).unwrap_err(), HttpError::TooLarge(3), "size {size}");
        }
        // Wider than usize: a bad chunk, not a wrap.
        assert_eq!(dechunk(b"1ffffffffffffffff\r\nx", 100).unwrap_err(), HttpError::BadChunk(0));
    }

    #[test]
    fn sniffing_and_types() {
        assert!(sniff_html(b"\xef\xbb\xbf  <!doctype html>"));
        assert!(!sniff_html(b"%PDF-1.4"));
        assert!(!sniff_html(b"<?xml version='1.0'?><rss version='2.0'>"));
        assert!(sniff_html(b"<?xml version='1.0'?><!DOCTYPE html><html xmlns='x'>"));
        assert!(is_html_type(&media_type("Application/XHTML+XML; q=1")));
        assert!(!is_html_type("application/json"));
    }

    proptest! {
        #[test]
        fn arbitrary_responses_never_panic(raw in proptest::collection::vec(any::<u8>(), 0..400),
                                           head in "(HTTP/1\\.[01] [0-9]{3} OK\r\n(Transfer-Encoding: chunked\r\n|Content-Encoding: (gzip|br|deflate)\r\n)?\r\n)?") {
            let mut bytes = head.into_bytes();
            bytes.extend(raw);
            let _ = parse_response(&bytes, 1000);
            let _ = dechunk(&bytes, 1000);
        }

        /// Chunked bodies whose sizes lie anywhere, the limits included: what arrives is kept,
        /// never more than the cap, and nothing panics.
        #[test]
        fn chunked_bodies_with_sizes_near_the_limits(
            chunks in proptest::collection::vec(
                (prop_oneof![Just(usize::MAX), Just(usize::MAX - 1), (usize::MAX - 1000)..=usize::MAX,
                             Just(u32::MAX as usize), 0usize..64],
                 proptest::collection::vec(any::<u8>(), 0..64)),
                0..6),
            cap in 0usize..300) {
            let mut body = Vec::new();
            for (size, data) in &chunks {
                body.extend_from_slice(format!("{size:x}\r\n").as_bytes());
                body.extend_from_slice(data);
                body.extend_from_slice(b"\r\n");
            }
            if let Ok(out) = dechunk(&body, cap) {
                prop_assert!(out.len() <= cap);
                prop_assert!(out.len() <= body.len());
            }
        }
    }
}
