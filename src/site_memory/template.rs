//! Templates: which pages of a host share a layout. A host crawled over years meets several
//! redesigns, and what repeats is the furniture of one template: counted against all of the
//! host's pages, a template's furniture falls under the share that makes it furniture (big9's
//! cnn.com holds four templates; "JUST WATCHED" and "Hide Caption" are on most pages of one).
//! A page's template is known by the words of its `id` and `class` attributes: a site names
//! its furniture the same way on every page, and a redesign renames most of it. Site memory
//! ([`super::SiteMemory`]) and the bootstrap's source grouping (`--group-by host-template`)
//! both split a host this way.

use crate::html::{Token, TokenKind};

/// Hashed id/class words kept per page signature (bounds the work per page).
pub const MAX_SIGNATURE_WORDS: usize = 2048;
/// Bytes of a page scanned for its signature.
const SIGNATURE_SCAN_BYTES: usize = 2 << 20;
/// The smallest hashes of a signature kept as its sketch (bottom-k, Broder 1997): the
/// Jaccard estimate from two sketches has a standard error of at most 0.07, and a host's
/// template costs 512 bytes instead of up to 16 KB.
pub const SKETCH_WORDS: usize = 64;

/// The template signature of a page: the sorted, deduplicated hashes of the words of its `id`
/// and `class` attribute values, lower-cased, split at whitespace, `-` and `_`, digits removed
/// (`post-1234` and `post-99` are one template word), words of one letter dropped.
pub fn signature(html: &[u8]) -> Vec<u64> {
    let html = &html[..html.len().min(SIGNATURE_SCAN_BYTES)];
    let mut out = Vec::new();
    let mut word: Vec<u8> = Vec::with_capacity(64);
    for eq in memchr::memchr_iter(b'=', html) {
        attribute_words(html, eq, &mut word, &mut out);
        if out.len() > 4 * MAX_SIGNATURE_WORDS {
            out.sort_unstable();
            out.dedup();
            if out.len() >= MAX_SIGNATURE_WORDS {
                break;
            }
        }
    }
    finish(out)
}

/// Sorts, deduplicates and bounds a signature's word hashes.
fn finish(mut out: Vec<u64>) -> Vec<u64> {
    out.sort_unstable();
    out.dedup();
    out.truncate(MAX_SIGNATURE_WORDS);
    out
}

/// Collects the template words of a page's start tags as its tokens go by (site memory's
/// block pass, [`super::blocks`]): the [`signature`] of the tags alone, without scanning the
/// page's text and scripts again.
#[derive(Debug, Default)]
pub struct TagWords {
    out: Vec<u64>,
    word: Vec<u8>,
    tags: usize,
}

/// Start tags read for a page's layout: a layout shows in its first tags (the header, the
/// navigation, the main containers), and a page's later tags (a long comment thread, a
/// product grid) would cost time without telling layouts apart any better.
pub const LAYOUT_TAGS: usize = 300;

impl TagWords {
    /// Reads one start tag's bytes (`<div class="a b">`), of the first [`LAYOUT_TAGS`].
    pub fn tag(&mut self, tag: &[u8]) {
        self.tags += 1;
        if self.tags > LAYOUT_TAGS {
            return;
        }
        if self.out.len() >= 4 * MAX_SIGNATURE_WORDS {
            self.out = finish(std::mem::take(&mut self.out));
            if self.out.len() >= MAX_SIGNATURE_WORDS {
                return;
            }
        }
        for eq in memchr::memchr_iter(b'=', tag) {
            attribute_words(tag, eq, &mut self.word, &mut self.out);
        }
    }

    /// The sketch of the tags read: their signature's [`SKETCH_WORDS`] smallest hashes.
    pub fn sketch(self) -> Vec<u64> {
        let mut s = finish(self.out);
        s.truncate(SKETCH_WORDS);
        s
    }
}

/// The layout sketch of a tokenised page ([`TagWords`] over its start tags), for callers
/// that have the page's tokens but no block pass of their own.
pub fn page_sketch(page: &str, tokens: &[Token]) -> Vec<u64> {
    let mut words = TagWords::default();
    for t in tokens.iter().filter(|t| t.kind == TokenKind::StartTag) {
        words.tag(t.raw(page).as_bytes());
    }
    words.sketch()
}

/// Where the value of the `class` or `id` attribute whose `=` is at `eq` starts, and its
/// quote; None when the name before `=` is another (or is not preceded by whitespace).
fn class_value_at(html: &[u8], eq: usize) -> Option<(usize, Option<u8>)> {
    // The attribute name before `=` (spaces allowed around it), preceded by whitespace.
    let mut end = eq;
    while end > 0 && html[end - 1].is_ascii_whitespace() {
        end -= 1;
    }
    let mut start = end;
    while start > 0 && html[start - 1].is_ascii_alphanumeric() && end - start < 6 {
        start -= 1;
    }
    let name = &html[start..end];
    let named = name.eq_ignore_ascii_case(b"class") || name.eq_ignore_ascii_case(b"id");
    if !named || start == 0 || !html[start - 1].is_ascii_whitespace() {
        return None;
    }
    let mut i = eq + 1;
    while i < html.len() && html[i].is_ascii_whitespace() {
        i += 1;
    }
    let quote = match html.get(i) {
        Some(&q @ (b'"' | b'\'')) => {
            i += 1;
            Some(q)
        }
        _ => None,
    };
    Some((i, quote))
}

/// The words of the `class` or `id` value whose `=` is at `eq` in `html` (nothing when the
/// name before it is another): lower-cased, split at whitespace, `-` and `_`, digits removed,
/// words of one letter dropped; their hashes go to `out`. `word` is scratch space.
fn attribute_words(html: &[u8], eq: usize, word: &mut Vec<u8>, out: &mut Vec<u64>) {
    let Some((i, quote)) = class_value_at(html, eq) else {
        return;
    };
    // The value: up to its quote (or, unquoted, whitespace or `>`), never past a `<`, at most
    // 1 KB.
    let rest = &html[i..(i + 1024).min(html.len())];
    let len = match quote {
        Some(q) => memchr::memchr2(q, b'<', rest),
        None => rest.iter().position(|&c| c.is_ascii_whitespace() || c == b'>' || c == b'<'),
    };
    let value = &rest[..len.unwrap_or(rest.len())];
    for w in value.split(|&c| c.is_ascii_whitespace() || c == b'-' || c == b'_') {
        // Most class words are short and lower case already: hashed in place.
        if w.len() <= 64 && w.iter().all(|c| c.is_ascii_lowercase()) {
            if w.len() > 1 {
                out.push(xxhash_rust::xxh3::xxh3_64(w));
            }
            continue;
        }
        word.clear();
        word.extend(w.iter().filter(|c| !c.is_ascii_digit()).take(64).map(u8::to_ascii_lowercase));
        if word.len() > 1 {
            out.push(xxhash_rust::xxh3::xxh3_64(word));
        }
    }
}

/// A page's sketch from its raw bytes, for tests: the [`SKETCH_WORDS`] smallest hashes of its
/// [`signature`] (site memory takes it from the start tags, [`TagWords`]; the two agree on
/// pages whose scripts and text hold no `class=`).
#[cfg(test)]
pub(crate) fn sketch(html: &[u8]) -> Vec<u64> {
    let mut s = signature(html);
    s.truncate(SKETCH_WORDS);
    s
}

/// Jaccard similarity of two sorted, deduplicated signatures (1 for two empty ones).
pub fn jaccard(a: &[u64], b: &[u64]) -> f64 {
    let (mut i, mut j, mut both) = (0, 0, 0usize);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                both += 1;
                i += 1;
                j += 1;
            }
        }
    }
    let union = a.len() + b.len() - both;
    if union == 0 { 1.0 } else { both as f64 / union as f64 }
}

/// The Jaccard similarity of two signatures estimated from their sketches (each the
/// [`SKETCH_WORDS`] smallest hashes of one): the share of the union's smallest
/// [`SKETCH_WORDS`] hashes found in both. Exact when both signatures fit their sketches.
pub fn sketch_similarity(a: &[u64], b: &[u64]) -> f64 {
    if a.len() < SKETCH_WORDS && b.len() < SKETCH_WORDS {
        return jaccard(a, b);
    }
    let (mut i, mut j, mut both, mut taken) = (0, 0, 0usize, 0usize);
    while taken < SKETCH_WORDS && (i < a.len() || j < b.len()) {
        match (a.get(i), b.get(j)) {
            (Some(x), Some(y)) if x == y => {
                both += 1;
                i += 1;
                j += 1;
            }
            (Some(x), Some(y)) if x < y => i += 1,
            (Some(_), None) => i += 1,
            _ => j += 1,
        }
        taken += 1;
    }
    // One sketch ran out before the union's smallest SKETCH_WORDS were seen: that sketch is
    // its whole (small) signature, and no later hash is in both.
    both as f64 / taken.max(1) as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The first version, byte by byte: the oracle of [`attribute_words`]'s fast path. The words of the `class` or `id` value whose `=` is at `eq` in `html` (nothing when the
    /// name before it is another): lower-cased, split at whitespace, `-` and `_`, digits removed,
    /// words of one letter dropped; their hashes go to `out`.
    fn attribute_words_bytewise(html: &[u8], eq: usize, word: &mut Vec<u8>, out: &mut Vec<u64>) {
        let flush = |word: &mut Vec<u8>, out: &mut Vec<u64>| {
            if word.len() > 1 {
                out.push(xxhash_rust::xxh3::xxh3_64(word));
            }
            word.clear();
        };
        let Some((mut i, quote)) = class_value_at(html, eq) else {
            return;
        };
        let value_end = (i + 1024).min(html.len());
        while i < value_end {
            let c = html[i];
            let ends = match quote {
                Some(q) => c == q,
                None => c.is_ascii_whitespace() || c == b'>',
            };
            if ends || c == b'<' {
                break;
            }
            if c.is_ascii_whitespace() || c == b'-' || c == b'_' {
                flush(word, out);
            } else if !c.is_ascii_digit() && word.len() < 64 {
                word.push(c.to_ascii_lowercase());
            }
            i += 1;
        }
        flush(word, out);
    }

    #[test]
    fn signatures_by_hand() {
        let h = |w: &str| xxhash_rust::xxh3::xxh3_64(w.as_bytes());
        let mut want = vec![h("main"), h("post"), h("nav"), h("top"), h("story"), h("body")];
        want.sort_unstable();
        want.dedup();
        let html = b"<div class=\"main post-1234\"><ul id='nav_top' data-x=\"nope\"><p CLASS = story-body x>\
                     <a href=\"/?class=nope\">class=</a><b class=x>";
        assert_eq!(signature(html), want);
        assert_eq!(signature(b""), Vec::<u64>::new());
        assert_eq!(signature(b"<p class=\"unterminated"), vec![h("unterminated")]);
        assert_eq!(jaccard(&[1, 2, 3], &[2, 3, 4]), 0.5);
        assert_eq!(jaccard(&[], &[]), 1.0);
    }

    #[test]
    fn sketches_estimate_the_similarity_of_large_signatures() {
        // Two signatures of 400 words sharing 300 (Jaccard 0.6).
        let a: Vec<u64> = {
            let mut v: Vec<u64> = (0..400u64).map(|i| xxhash_rust::xxh3::xxh3_64(&i.to_le_bytes())).collect();
            v.sort_unstable();
            v
        };
        let b: Vec<u64> = {
            let mut v: Vec<u64> = (100..500u64).map(|i| xxhash_rust::xxh3::xxh3_64(&i.to_le_bytes())).collect();
            v.sort_unstable();
            v
        };
        let exact = jaccard(&a, &b);
        assert!((exact - 0.6).abs() < 1e-9);
        let est = sketch_similarity(&a[..SKETCH_WORDS], &b[..SKETCH_WORDS]);
        assert!((est - exact).abs() < 0.2, "estimate {est} against {exact}");
        assert_eq!(sketch_similarity(&a[..SKETCH_WORDS], &a[..SKETCH_WORDS]), 1.0);
        assert_eq!(sketch_similarity(&[], &[]), 1.0);
        assert_eq!(sketch_similarity(&[1, 2, 3], &[2, 3, 4]), 0.5, "small signatures: exact");
    }

    proptest::proptest! {
        /// Any bytes give a sorted, bounded signature, and similarities within [0, 1].
        #[test]
        fn attribute_words_as_byte_by_byte(
            parts in proptest::collection::vec(proptest::sample::select(vec![
                " class=", " CLASS = ", " id='", "\"", "'", " ", "-", "_", "<", ">", "post12", "Main", "a", "x9y",
                "storybody", "ÄÖ", "\t", "=", "verylongwordverylongwordverylongwordverylongwordverylongwordverylongword",
            ]), 0..40)
        ) {
            let html = parts.concat().into_bytes();
            for eq in memchr::memchr_iter(b'=', &html) {
                let (mut fast, mut slow) = (Vec::new(), Vec::new());
                attribute_words(&html, eq, &mut Vec::new(), &mut fast);
                attribute_words_bytewise(&html, eq, &mut Vec::new(), &mut slow);
                proptest::prop_assert_eq!(fast, slow, "{}", String::from_utf8_lossy(&html));
            }
        }

        #[test]
        fn signatures_of_any_bytes(bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..4096)) {
            let sig = signature(&bytes);
            proptest::prop_assert!(sig.len() <= MAX_SIGNATURE_WORDS);
            proptest::prop_assert!(sig.windows(2).all(|w| w[0] < w[1]));
            let s = sketch(&bytes);
            let sim = sketch_similarity(&s, &sketch(b"<div class='a b c'>"));
            proptest::prop_assert!((0.0..=1.0).contains(&sim));
        }
    }
}
