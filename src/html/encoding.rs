//! Choosing a page's character encoding and decoding its bytes to UTF-8 in chunks.
//!
//! Order of evidence (WHATWG "encoding sniffing", simplified): byte-order mark, the HTTP
//! charset, a `<meta charset>` / `http-equiv` / XML declaration in the first 1024 bytes, then
//! chardetng on the sniffed prefix. One real-world quirk overrides declarations: pages that
//! declare a single-byte charset but whose bytes are valid UTF-8 with non-ASCII text (re-saved
//! pages; 2–18 % of our dev sets) are decoded as UTF-8. Tokenising is not this module's job.

use encoding_rs::{CoderResult, Decoder, Encoding, UTF_8, UTF_16BE, UTF_16LE, WINDOWS_1252};

/// Where the chosen encoding came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EncodingSource {
    Bom,
    Http,
    Meta,
    Utf8Valid,
    Detected,
    Default,
}

/// Inputs and limits of a decoder.
#[derive(Debug, Clone)]
pub struct DecoderOptions {
    /// Bytes buffered before the encoding is chosen (default 16 KiB).
    pub sniff_bytes: usize,
    /// Charset parameter of an HTTP `Content-Type`, if any.
    pub http_charset: Option<String>,
}

impl Default for DecoderOptions {
    fn default() -> Self {
        DecoderOptions { sniff_bytes: 16 * 1024, http_charset: None }
    }
}

/// Bytes of the page searched for a `<meta>` declaration (as the HTML standard's prescan).
const PRESCAN: usize = 1024;

/// Where a [`StreamDecoder`] puts text: it decodes straight into a string the sink lends (the
/// tokenizer's page), so the page is not copied once more after decoding.
pub trait DecodeSink {
    /// The string to append to, about to take up to `extra` more bytes; `None` stops decoding
    /// (a size limit was hit).
    fn text(&mut self, extra: usize) -> Option<&mut String>;
    /// Text was appended to the string.
    fn appended(&mut self) {}
}

impl DecodeSink for String {
    fn text(&mut self, _extra: usize) -> Option<&mut String> {
        Some(self)
    }
}

/// The least room the decoder asks of its output beyond the bytes it still has to decode (a
/// page buffer sized to the page's bytes plus this is never grown for UTF-8 and ASCII-heavy
/// pages).
pub const PAGE_SLACK: usize = 64;

/// Streaming decoder: buffers up to `sniff_bytes`, decides once, then decodes every later
/// chunk with replacement of malformed sequences (U+FFFD).
pub struct StreamDecoder {
    options: DecoderOptions,
    sniff: Vec<u8>,
    decoder: Option<Decoder>,
    chosen: Option<(&'static Encoding, EncodingSource)>,
}

impl StreamDecoder {
    pub fn new(options: DecoderOptions) -> Self {
        StreamDecoder { options, sniff: Vec::new(), decoder: None, chosen: None }
    }

    /// Feeds bytes; decoded text goes to `out` (nothing yet while sniffing).
    pub fn write(&mut self, bytes: &[u8], out: &mut dyn DecodeSink) {
        if self.decoder.is_none() {
            let room = self.options.sniff_bytes.saturating_sub(self.sniff.len());
            if bytes.len() < room || (room > 0 && self.sniff.is_empty() && bytes.len() < self.options.sniff_bytes) {
                self.sniff.extend_from_slice(bytes);
                return;
            }
            self.sniff.extend_from_slice(&bytes[..room.min(bytes.len())]);
            self.decide(false);
            let sniffed = std::mem::take(&mut self.sniff);
            self.decode(&sniffed, false, out);
            self.decode(&bytes[room.min(bytes.len())..], false, out);
            return;
        }
        self.decode(bytes, false, out);
    }

    /// Flushes: decides if not yet decided, decodes what is buffered, finishes the decoder.
    pub fn end(&mut self, out: &mut dyn DecodeSink) {
        if self.decoder.is_none() {
            self.decide(true);
            let sniffed = std::mem::take(&mut self.sniff);
            self.decode(&sniffed, false, out);
        }
        self.decode(&[], true, out);
    }

    /// The chosen encoding and its source, once decided.
    pub fn encoding(&self) -> Option<(&'static Encoding, EncodingSource)> {
        self.chosen
    }

    fn decide(&mut self, complete: bool) {
        let (enc, src) = detect(&self.sniff, self.options.http_charset.as_deref(), complete);
        // BOM handling strips the BOM itself (and only a BOM of the chosen encoding).
        self.decoder = Some(enc.new_decoder_with_bom_removal());
        self.chosen = Some((enc, src));
    }

    fn decode(&mut self, mut bytes: &[u8], last: bool, out: &mut dyn DecodeSink) {
        let Some(dec) = self.decoder.as_mut() else { return };
        loop {
            // Room for the input as it stands (UTF-8 pages, ASCII-heavy ones in any encoding);
            // text that grows (U+FFFD, multi-byte characters) takes another turn of the loop.
            let need = bytes.len().saturating_add(16).clamp(PAGE_SLACK, 1 << 20);
            let Some(text) = out.text(need) else { return };
            text.reserve(need);
            let before = text.len();
            let (result, read, _) = dec.decode_to_string(bytes, text, last);
            if text.len() > before {
                out.appended();
            }
            bytes = &bytes[read..];
            if result == CoderResult::InputEmpty {
                break;
            }
        }
    }
}

/// Decides on the whole `bytes` and decodes all of it.
pub fn decode_page(bytes: &[u8], http_charset: Option<&str>) -> (String, &'static Encoding, EncodingSource) {
    let mut d = StreamDecoder::new(DecoderOptions {
        http_charset: http_charset.map(str::to_string),
        ..DecoderOptions::default()
    });
    let mut s = String::with_capacity(bytes.len());
    d.write(bytes, &mut s);
    d.end(&mut s);
    let (e, src) = d.encoding().unwrap_or((UTF_8, EncodingSource::Default));
    (s, e, src)
}

/// The decision alone, on a prefix of the page (`is_complete`: the prefix is the whole page).
pub fn detect(prefix: &[u8], http_charset: Option<&str>, is_complete: bool) -> (&'static Encoding, EncodingSource) {
    if let Some((enc, _)) = Encoding::for_bom(prefix) {
        return (enc, EncodingSource::Bom);
    }
    let declared = http_charset
        .and_then(|l| Encoding::for_label(l.trim().trim_matches(|c| c == '"' || c == '\'').as_bytes()))
        .map(|e| (e, EncodingSource::Http))
        .or_else(|| prescan_meta(&prefix[..prefix.len().min(PRESCAN)]).map(|e| (e, EncodingSource::Meta)));
    let utf8 = utf8_state(prefix, is_complete);
    if let Some((enc, src)) = declared {
        // A declared UTF-16 without BOM cannot be right for an ASCII-compatible prefix.
        let enc = if enc == UTF_16LE || enc == UTF_16BE { UTF_8 } else { enc };
        if enc != UTF_8 && utf8 == Utf8::ValidNonAscii {
            return (UTF_8, EncodingSource::Utf8Valid);
        }
        return (enc, src);
    }
    match utf8 {
        Utf8::ValidNonAscii => (UTF_8, EncodingSource::Utf8Valid),
        Utf8::Ascii if prefix.is_empty() => (UTF_8, EncodingSource::Default),
        Utf8::Ascii => (UTF_8, EncodingSource::Utf8Valid),
        Utf8::Invalid => {
            let mut det = chardetng::EncodingDetector::new(chardetng::Iso2022JpDetection::Deny);
            det.feed(prefix, is_complete);
            let enc = det.guess(None, chardetng::Utf8Detection::Deny);
            (if enc == UTF_8 { WINDOWS_1252 } else { enc }, EncodingSource::Detected)
        }
    }
}

#[derive(PartialEq, Eq)]
enum Utf8 {
    Ascii,
    ValidNonAscii,
    Invalid,
}

fn utf8_state(b: &[u8], complete: bool) -> Utf8 {
    match std::str::from_utf8(b) {
        Ok(s) if s.is_ascii() => Utf8::Ascii,
        Ok(_) => Utf8::ValidNonAscii,
        // A sequence cut at the end of an incomplete prefix is not evidence against UTF-8.
        Err(e) if e.error_len().is_none() && !complete => {
            if b[..e.valid_up_to()].is_ascii() {
                Utf8::Ascii
            } else {
                Utf8::ValidNonAscii
            }
        }
        Err(_) => Utf8::Invalid,
    }
}

/// Finds `<meta charset=X>`, `<meta http-equiv=content-type content="...charset=X">` or
/// `<?xml ... encoding="X"?>` in `head`, skipping comments.
fn prescan_meta(head: &[u8]) -> Option<&'static Encoding> {
    let lower: Vec<u8> = head.iter().map(u8::to_ascii_lowercase).collect();
    if lower.starts_with(b"<?xml")
        && let Some(end) = find(&lower, b"?>")
        && let Some(label) = attr_value(&lower[..end], &head[..end], b"encoding")
    {
        return label_encoding(label);
    }
    let mut i = 0;
    while let Some(off) = memchr::memchr(b'<', &lower[i..]) {
        let at = i + off;
        let rest = &lower[at..];
        if rest.starts_with(b"<!--") {
            i = find(&rest[4..], b"-->").map_or(lower.len(), |e| at + 4 + e + 3);
            continue;
        }
        let end = memchr::memchr(b'>', rest).map_or(lower.len(), |e| at + e);
        if rest.starts_with(b"<meta") && rest.get(5).is_some_and(|c| c.is_ascii_whitespace() || *c == b'/') {
            let (tag_l, tag) = (&lower[at..end], &head[at..end]);
            if let Some(v) = attr_value(tag_l, tag, b"charset")
                && let Some(e) = label_encoding(v)
            {
                return Some(e);
            }
            if attr_value(tag_l, tag, b"http-equiv").is_some_and(|v| v.eq_ignore_ascii_case(b"content-type"))
                && let Some(content) = attr_value(tag_l, tag, b"content")
            {
                let cl: Vec<u8> = content.iter().map(u8::to_ascii_lowercase).collect();
                if let Some(p) = find(&cl, b"charset=") {
                    let v = &content[p + 8..];
                    let v = v.strip_prefix(b"\"").or_else(|| v.strip_prefix(b"'")).unwrap_or(v);
                    let n = v.iter().position(|c| matches!(c, b';' | b'"' | b'\'' | b' ')).unwrap_or(v.len());
                    if let Some(e) = label_encoding(&v[..n]) {
                        return Some(e);
                    }
                }
            }
        }
        i = end.max(at + 1);
    }
    None
}

fn label_encoding(label: &[u8]) -> Option<&'static Encoding> {
    let e = Encoding::for_label(label)?;
    // The HTML standard: a meta saying UTF-16 means UTF-8; x-user-defined means windows-1252.
    Some(if e == UTF_16LE || e == UTF_16BE {
        UTF_8
    } else if e == encoding_rs::X_USER_DEFINED {
        WINDOWS_1252
    } else {
        e
    })
}

fn find(h: &[u8], n: &[u8]) -> Option<usize> {
    h.windows(n.len()).position(|w| w == n)
}

/// The value of attribute `name` in a tag (`lower` is the tag lower-cased, `orig` as written).
fn attr_value<'a>(lower: &[u8], orig: &'a [u8], name: &[u8]) -> Option<&'a [u8]> {
    let mut from = 0;
    while let Some(p) = find(&lower[from..], name) {
        let at = from + p;
        from = at + 1;
        let before_ok = at > 0 && (lower[at - 1].is_ascii_whitespace() || matches!(lower[at - 1], b'"' | b'\'' | b'/'));
        let mut j = at + name.len();
        while j < lower.len() && lower[j].is_ascii_whitespace() {
            j += 1;
        }
        if !before_ok || lower.get(j) != Some(&b'=') {
            continue;
        }
        j += 1;
        while j < lower.len() && lower[j].is_ascii_whitespace() {
            j += 1;
        }
        return Some(match lower.get(j) {
            Some(&q @ (b'"' | b'\'')) => {
                let end = memchr::memchr(q, &lower[j + 1..]).map_or(lower.len(), |e| j + 1 + e);
                &orig[j + 1..end]
            }
            _ => {
                let end = lower[j..]
                    .iter()
                    .position(|c| c.is_ascii_whitespace() || matches!(c, b'>' | b'/' | b';'))
                    .map_or(lower.len(), |e| j + e);
                &orig[j..end]
            }
        });
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page(meta: &str, body: &str, enc: &'static Encoding) -> Vec<u8> {
        let html = format!("<html><head>{meta}<title>t</title></head><body><p>{body}</p></body></html>");
        enc.encode(&html).0.into_owned()
    }

    fn chunked(bytes: &[u8], size: usize, http: Option<&str>) -> String {
        let mut d = StreamDecoder::new(DecoderOptions { http_charset: http.map(str::to_string), sniff_bytes: 1024 });
        let mut s = String::new();
        for c in bytes.chunks(size.max(1)) {
            d.write(c, &mut s);
        }
        d.end(&mut s);
        s
    }

    #[test]
    fn legacy_encodings_from_declarations() {
        let cases: [(&str, &str, &'static Encoding); 4] = [
            ("<meta charset=\"windows-1252\">", "café naïve – “quoted”", encoding_rs::WINDOWS_1252),
            (
                "<meta http-equiv=\"Content-Type\" content=\"text/html; charset=ISO-8859-2\">",
                "Zażółć gęślą jaźń",
                encoding_rs::ISO_8859_2,
            ),
            ("<meta charset=shift_jis>", "日本語のテキストです", encoding_rs::SHIFT_JIS),
            ("<meta charset='gbk'>", "中文网页的正文内容", encoding_rs::GBK),
        ];
        for (meta, text, enc) in cases {
            let b = page(meta, text, enc);
            let (s, e, src) = decode_page(&b, None);
            assert!(s.contains(text), "{meta}: {s}");
            assert_eq!((e, src), (enc, EncodingSource::Meta), "{meta}");
            for size in [1, 2, 3, 7, 64, b.len()] {
                assert_eq!(chunked(&b, size, None), s, "CHUNK_SIZE={size} {meta}");
            }
        }
    }

    #[test]
    fn utf16_with_bom() {
        for (enc, bom) in [(UTF_16LE, &[0xFF, 0xFE][..]), (UTF_16BE, &[0xFE, 0xFF][..])] {
            let text = "<p>Grüße aus Köln 東京</p>";
            let mut b = bom.to_vec();
            for u in text.encode_utf16() {
                b.extend_from_slice(&if enc == UTF_16LE { u.to_le_bytes() } else { u.to_be_bytes() });
            }
            let (s, e, src) = decode_page(&b, None);
            assert_eq!((s.as_str(), e, src), (text, enc, EncodingSource::Bom));
            for size in [1, 3, 7] {
                assert_eq!(chunked(&b, size, None), text, "CHUNK_SIZE={size}");
            }
        }
    }

    #[test]
    fn utf8_beats_a_wrong_single_byte_declaration_and_http_beats_meta() {
        let b = page("<meta charset=iso-8859-1>", "déjà vu – naïve", UTF_8);
        let (s, e, src) = decode_page(&b, None);
        assert!(s.contains("déjà vu – naïve"));
        assert_eq!((e, src), (UTF_8, EncodingSource::Utf8Valid));
        let w = page("<meta charset=utf-8>", "café", encoding_rs::WINDOWS_1252);
        let (s, e, src) = decode_page(&w, Some("windows-1252"));
        assert!(s.contains("café"));
        assert_eq!((e, src), (encoding_rs::WINDOWS_1252, EncodingSource::Http));
        let x = encoding_rs::WINDOWS_1252.encode("<?xml version=\"1.0\" encoding=\"windows-1252\"?><p>façade</p>").0;
        assert!(decode_page(&x, None).0.contains("façade"));
    }

    #[test]
    fn undeclared_pages() {
        let b = page("", "plain ascii and ünïcödé", UTF_8);
        assert_eq!(decode_page(&b, None).2, EncodingSource::Utf8Valid);
        let text = "Le café était très animé. Les élèves répétaient leurs leçons près de la fenêtre. ".repeat(20);
        let w = page("", &text, encoding_rs::WINDOWS_1252);
        let (s, _, src) = decode_page(&w, None);
        assert_eq!(src, EncodingSource::Detected);
        assert!(s.contains("très animé"));
        assert_eq!(decode_page(b"", None).0, "");
    }

    #[test]
    fn malformed_and_random_bytes_never_panic() {
        let (s, _, _) = decode_page(b"<meta charset=utf-8><p>caf\xc3 \xff ok</p>", None);
        assert!(s.contains('\u{FFFD}') && s.contains("ok"));
        let mut x = 1u64;
        for n in 0..200 {
            let b: Vec<u8> = (0..n * 7)
                .map(|_| {
                    x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                    (x >> 56) as u8
                })
                .collect();
            let whole = decode_page(&b, None).0;
            // Streaming gives the same text wherever the input is split.
            let one_write = chunked(&b, b.len(), None);
            let size = 1 + n % 5;
            assert_eq!(chunked(&b, size, None), one_write, "CHUNK_SIZE={size} n={n}");
            // No byte vanishes: every encoding here spends at most 4 bytes on a character
            // (a malformed sequence becomes U+FFFD), after a BOM of at most 3.
            for text in [&whole, &one_write] {
                assert!(text.chars().count() >= b.len().saturating_sub(3).div_ceil(4), "n={n}: {} chars", text.len());
            }
        }
    }
}
