//! HTML character references (`&amp;`, `&eacute;`, `&#233;`, `&#xE9;`) decoded with the full
//! WHATWG table (html-escape's `NAMED_ENTITIES`, 2 125 names); the lexer hands text over
//! undecoded.
//!
//! The tokenizer decodes one reference at a time while it splits words, so byte spans keep
//! pointing at the source; [`decode_into`] decodes a whole span for output.

use html_escape::NAMED_ENTITIES;

/// What one reference decodes to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decoded {
    Char(char),
    Str(&'static str),
}

/// Names the HTML standard also accepts without the trailing `;` (the common legacy subset).
const LEGACY_NO_SEMICOLON: &[&[u8]] = &[b"amp", b"lt", b"gt", b"quot", b"nbsp", b"copy", b"reg", b"AMP", b"LT", b"GT"];

/// Windows-1252 meanings of numeric references 0x80..=0x9F, as the HTML standard requires.
const C1_REMAP: [char; 32] = [
    '\u{20AC}', '\u{81}', '\u{201A}', '\u{192}', '\u{201E}', '\u{2026}', '\u{2020}', '\u{2021}', '\u{2C6}', '\u{2030}',
    '\u{160}', '\u{2039}', '\u{152}', '\u{8D}', '\u{17D}', '\u{8F}', '\u{90}', '\u{2018}', '\u{2019}', '\u{201C}',
    '\u{201D}', '\u{2022}', '\u{2013}', '\u{2014}', '\u{2DC}', '\u{2122}', '\u{161}', '\u{203A}', '\u{153}', '\u{9D}',
    '\u{17E}', '\u{178}',
];

/// Longest named reference in the table ("CounterClockwiseContourIntegral").
const MAX_NAME: usize = 32;

/// Decodes the reference starting at `s[0] == b'&'`; returns what it means and how many bytes
/// it spans, or `None` when it is not a valid reference (then `&` is literal text).
pub fn decode_at(s: &[u8]) -> Option<(Decoded, usize)> {
    debug_assert_eq!(s.first(), Some(&b'&'));
    if s.get(1) == Some(&b'#') {
        return decode_numeric(s);
    }
    let mut end = 1;
    while end < s.len() && end <= MAX_NAME && s[end].is_ascii_alphanumeric() {
        end += 1;
    }
    if end == 1 {
        return None;
    }
    let name = &s[1..end];
    let with_semicolon = s.get(end) == Some(&b';');
    if !with_semicolon && !LEGACY_NO_SEMICOLON.contains(&name) {
        return None;
    }
    let i = NAMED_ENTITIES.binary_search_by(|(n, _)| (*n).cmp(name)).ok()?;
    Some((Decoded::Str(NAMED_ENTITIES[i].1), end + usize::from(with_semicolon)))
}

fn decode_numeric(s: &[u8]) -> Option<(Decoded, usize)> {
    let (hex, mut i) = match s.get(2) {
        Some(b'x' | b'X') => (true, 3),
        _ => (false, 2),
    };
    let digits_start = i;
    let mut value: u32 = 0;
    while i < s.len() {
        let d = match (hex, s[i]) {
            (_, c @ b'0'..=b'9') => u32::from(c - b'0'),
            (true, c @ b'a'..=b'f') => u32::from(c - b'a' + 10),
            (true, c @ b'A'..=b'F') => u32::from(c - b'A' + 10),
            _ => break,
        };
        // Saturate so absurdly long digit runs cannot overflow; the result is invalid anyway.
        value = value.saturating_mul(if hex { 16 } else { 10 }).saturating_add(d);
        i += 1;
    }
    if i == digits_start {
        return None;
    }
    if s.get(i) == Some(&b';') {
        i += 1;
    }
    let c = match value {
        0 => '\u{FFFD}',
        0x80..=0x9F => C1_REMAP[(value - 0x80) as usize],
        v => char::from_u32(v).unwrap_or('\u{FFFD}'),
    };
    Some((Decoded::Char(c), i))
}

/// The text of a token: `raw` itself, or, when it holds references, `raw` decoded into `buf`
/// (reused across tokens, so no allocation per token).
pub fn decoded<'a>(raw: &'a str, has_entity: bool, buf: &'a mut String) -> &'a str {
    if !has_entity {
        return raw;
    }
    buf.clear();
    decode_into(raw, buf);
    buf.as_str()
}

/// Appends `s` to `out` with every valid reference decoded.
pub fn decode_into(s: &str, out: &mut String) {
    let bytes = s.as_bytes();
    let mut last = 0;
    let mut pos = 0;
    while let Some(off) = memchr::memchr(b'&', &bytes[pos..]) {
        let at = pos + off;
        match decode_at(&bytes[at..]) {
            Some((d, len)) => {
                out.push_str(&s[last..at]);
                match d {
                    Decoded::Char(c) => out.push(c),
                    Decoded::Str(t) => out.push_str(t),
                }
                pos = at + len;
                last = pos;
            }
            None => pos = at + 1,
        }
    }
    out.push_str(&s[last..]);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dec(s: &str) -> String {
        let mut o = String::new();
        decode_into(s, &mut o);
        o
    }

    #[test]
    fn named_numeric_and_legacy() {
        assert_eq!(dec("caf&eacute; &amp; th&#233; &#xE9;&#X00e9;"), "café & thé éé");
        assert_eq!(dec("a &nbsp b &copy 2009"), "a \u{a0} b © 2009");
        assert_eq!(dec("&CounterClockwiseContourIntegral;"), "\u{2233}");
        assert_eq!(dec("&#150; &#0; &#99999999999;"), "\u{2013} \u{FFFD} \u{FFFD}");
    }

    #[test]
    fn invalid_references_stay_literal() {
        assert_eq!(dec("AT&T & co &nosuch; &#; &#x; &"), "AT&T & co &nosuch; &#; &#x; &");
        assert_eq!(dec("&eacute"), "&eacute");
    }

    #[test]
    fn spans_are_reported() {
        assert_eq!(decode_at(b"&amp;x"), Some((Decoded::Str("&"), 5)));
        assert_eq!(decode_at(b"&amp x"), Some((Decoded::Str("&"), 4)));
        assert_eq!(decode_at(b"&#65;"), Some((Decoded::Char('A'), 5)));
        assert_eq!(decode_at(b"&#65"), Some((Decoded::Char('A'), 4)));
    }
}
