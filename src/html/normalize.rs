//! Normalised token forms for features (Pasternack & Roth 2009, §5.2): words lower-cased and
//! Porter-stemmed, every number `1`, tags by vocabulary id (custom tags are `<UNKNOWN>`).
//!
//! Features only need a stable 64-bit key of the normalised form, so that is what this module
//! hands out: xxh3 with a fixed seed, so model files are portable between machines. ASCII
//! words are stemmed by [`super::stem`] (rust-stemmers' algorithm without its allocations),
//! the few with a non-ASCII letter by rust-stemmers; stems are memoised by the hash of the
//! lower-cased word, and the memo is bounded and simply cleared when full.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use rust_stemmers::{Algorithm, Stemmer};
use xxhash_rust::xxh3::xxh3_64_with_seed;

use super::entities;
use super::stem;
use super::tags;
use super::tokenizer::{Token, TokenKind};

/// Seed of every feature hash; changing it invalidates model files.
pub const HASH_SEED: u64 = 0x5061_7374_6572_6e61; // "Pasterna"

/// Entries kept in the stem memo before it is cleared (bounded memory on any input).
const MEMO_LIMIT: usize = 1 << 20;

/// Slots of the small direct-mapped cache in front of the memo (64 KB: stays in L2).
const FRONT: usize = 1 << 12;

/// Hasher for keys that are already uniform 64-bit hashes: passes them through.
#[derive(Default)]
pub struct IdentityHasher(u64);

impl Hasher for IdentityHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(b);
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }
}

/// A map keyed by hashes.
pub type HashKeyed<V> = HashMap<u64, V, BuildHasherDefault<IdentityHasher>>;

/// Turns tokens into normalised keys. One per thread; reuse it across pages.
pub struct Normalizer {
    stemmer: Stemmer,
    lower: String,
    /// The stem of an ASCII word (reused).
    stem: Vec<u8>,
    decoded: String,
    memo: HashKeyed<u64>,
    /// (key of the lower-cased word, key of its stem) for the words met most recently. The
    /// memo grows to megabytes over a crawl and a lookup in it missed L2 on most words; the
    /// frequent words ("the", "of", the page's own vocabulary) are found here instead.
    front: Box<[(u64, u64)]>,
    /// Keys of every start and end tag by vocabulary id (`tag_key`, computed once).
    tag_keys: Box<[[u64; 256]; 2]>,
    number: u64,
}

impl Default for Normalizer {
    fn default() -> Self {
        let mut tag_keys = Box::new([[0u64; 256]; 2]);
        for (row, kind) in tag_keys.iter_mut().zip([TokenKind::StartTag, TokenKind::EndTag]) {
            for (id, k) in row.iter_mut().enumerate() {
                *k = tag_key(kind, id as tags::TagId);
            }
        }
        Normalizer {
            stemmer: Stemmer::create(Algorithm::English),
            lower: String::new(),
            stem: Vec::new(),
            decoded: String::new(),
            memo: HashKeyed::default(),
            front: vec![(0, 0); FRONT].into_boxed_slice(),
            tag_keys,
            number: number_key(),
        }
    }
}

/// Appends `text`'s words (runs of letters and digits), lower-cased, to `out`, each after a
/// single space unless `out` is empty: the one word form of texts compared word by word
/// (near-duplicate fingerprints, [`crate::dedup`]; a heading against the page's `<title>`,
/// [`crate::extract`]).
pub fn push_lower_words(text: &str, out: &mut String) {
    for word in text.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()) {
        if !out.is_empty() {
            out.push(' ');
        }
        for c in word.chars() {
            out.extend(c.to_lowercase());
        }
    }
}

/// Key of the normalised number `1`.
pub fn number_key() -> u64 {
    xxh3_64_with_seed(b"1", HASH_SEED)
}

/// Key of a start (`<div>`) or end (`</div>`) tag by vocabulary id.
pub fn tag_key(kind: TokenKind, tag: tags::TagId) -> u64 {
    // Tags and words share one key space; a word can never hash from these bytes because words
    // never contain '<'.
    let mut b = [0u8; 3];
    b[0] = b'<';
    b[1] = if kind == TokenKind::EndTag { b'/' } else { b'+' };
    b[2] = tag;
    xxh3_64_with_seed(&b, HASH_SEED)
}

impl Normalizer {
    /// The normalised key of `token` in `page`.
    pub fn key(&mut self, page: &str, token: &Token) -> u64 {
        match token.kind {
            TokenKind::StartTag => self.tag_keys[0][usize::from(token.tag)],
            TokenKind::EndTag => self.tag_keys[1][usize::from(token.tag)],
            _ if token.numeric => self.number,
            TokenKind::Symbol => {
                let raw = token.raw(page);
                if token.has_entity {
                    self.decoded.clear();
                    entities::decode_into(raw, &mut self.decoded);
                    xxh3_64_with_seed(self.decoded.as_bytes(), HASH_SEED)
                } else {
                    xxh3_64_with_seed(raw.as_bytes(), HASH_SEED)
                }
            }
            TokenKind::Word => self.word_key(token.raw(page), token.has_entity),
        }
    }

    /// Lower-cases and stems one word, returning the key of the stem.
    pub fn word_key(&mut self, raw: &str, has_entity: bool) -> u64 {
        self.lower.clear();
        let src = if has_entity {
            self.decoded.clear();
            entities::decode_into(raw, &mut self.decoded);
            self.decoded.as_str()
        } else {
            raw
        };
        if src.is_ascii() {
            self.lower.push_str(src);
            self.lower.make_ascii_lowercase();
        } else {
            self.lower.extend(src.chars().flat_map(char::to_lowercase));
        }
        let lower_key = xxh3_64_with_seed(self.lower.as_bytes(), HASH_SEED ^ 1);
        // The memo's hasher uses the key's low bits; the front takes the high ones.
        let slot = (lower_key >> 52) as usize & (FRONT - 1);
        let (fk, fv) = self.front[slot];
        if fk == lower_key && fv != 0 {
            return fv;
        }
        let k = match self.memo.get(&lower_key) {
            Some(&k) => k,
            None => {
                let k = if self.lower.is_ascii() {
                    // Byte for byte rust-stemmers' stem (module `stem`), without its allocations.
                    stem::stem_ascii(self.lower.as_bytes(), &mut self.stem);
                    xxh3_64_with_seed(&self.stem, HASH_SEED)
                } else if self.lower.bytes().all(|b| b >= 0x80) {
                    // Every rule of the English stemmer needs an ASCII letter or apostrophe, so a
                    // word with no ASCII byte (Cyrillic, Greek, CJK …) is its own stem (proptest
                    // `words_without_ascii_are_their_own_stems`).
                    xxh3_64_with_seed(self.lower.as_bytes(), HASH_SEED)
                } else {
                    xxh3_64_with_seed(self.stemmer.stem(&self.lower).as_bytes(), HASH_SEED)
                };
                if self.memo.len() >= MEMO_LIMIT {
                    self.memo.clear();
                }
                self.memo.insert(lower_key, k);
                k
            }
        };
        self.front[slot] = (lower_key, k);
        k
    }

    /// The normalised form as text (for diagnostics and tests; allocates).
    pub fn normalized_text(&mut self, page: &str, token: &Token) -> String {
        match token.kind {
            TokenKind::StartTag => format!("<{}>", tags::tag_name(token.tag)),
            TokenKind::EndTag => format!("</{}>", tags::tag_name(token.tag)),
            _ if token.numeric => "1".to_string(),
            _ => {
                let mut d = String::new();
                entities::decode_into(token.raw(page), &mut d);
                if token.kind == TokenKind::Word { self.stemmer.stem(&d.to_lowercase()).into_owned() } else { d }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::html::{TokenizerOptions, tokenize};

    #[test]
    fn words_are_lowercased_stemmed_and_numbers_are_one() {
        let s = tokenize(b"<p>Running RUNS 2009 1,000.5 caf&eacute;</p><newselement>", TokenizerOptions::default())
            .unwrap();
        let mut n = Normalizer::default();
        let forms: Vec<String> = s.sink.iter().map(|t| n.normalized_text(&s.page, t)).collect();
        assert_eq!(forms, ["<p>", "run", "run", "1", "1", "café", "</p>", "<<unknown>>"]);
        let keys: Vec<u64> = s.sink.iter().map(|t| n.key(&s.page, t)).collect();
        assert_eq!(keys[1], keys[2]);
        assert_eq!(keys[3], number_key());
        assert_eq!(keys[3], keys[4]);
        assert_ne!(keys[0], keys[6]);
        assert_eq!(keys[0], tag_key(TokenKind::StartTag, s.sink[0].tag));
        assert_eq!(keys[6], tag_key(TokenKind::EndTag, s.sink[6].tag));
    }

    #[test]
    fn the_front_cache_gives_the_memo_s_keys_on_any_order_of_words() {
        // More distinct words than front slots, each met several times: every key must be the
        // key of the word's stem, as computed without front or memo.
        let words: Vec<String> = (0..3 * FRONT).map(|i| format!("Word{}ing", i % (FRONT + 7))).collect();
        let stemmer = Stemmer::create(Algorithm::English);
        let mut warm = Normalizer::default();
        for w in &words {
            let fresh = xxh3_64_with_seed(stemmer.stem(&w.to_lowercase()).as_bytes(), HASH_SEED);
            assert_eq!(warm.word_key(w, false), fresh, "{w}");
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(3000))]

        /// The shortcut of [`Normalizer::word_key`]: the English stemmer leaves every word
        /// without an ASCII byte as it is (accented Latin, Greek, Cyrillic, Arabic, CJK,
        /// typographic apostrophes and combining marks among them).
        #[test]
        fn words_without_ascii_are_their_own_stems(
            word in "[\\u{80}-\\u{24F}\\u{300}-\\u{36F}\\u{370}-\\u{52F}\\u{600}-\\u{6FF}\\u{2018}\\u{2019}\\u{201C}\\u{4E00}-\\u{4E80}\\u{AC00}-\\u{AC80}]{0,14}",
        ) {
            let stemmer = Stemmer::create(Algorithm::English);
            let lower = word.to_lowercase();
            let stem = stemmer.stem(&lower).into_owned();
            proptest::prop_assert_eq!(stem, lower);
        }

        /// Every word's key is the key of its lower-cased stem by rust-stemmers, for words of
        /// any case, ASCII or not (our ASCII stemmer, the non-ASCII shortcut, rust-stemmers), the
        /// first time it is met and again (from the front cache or the memo).
        #[test]
        fn a_word_s_key_is_its_lower_cased_stem_s(
            words in proptest::collection::vec("[a-zA-Z0-9'\u{e9}\u{c9}\u{3b1}-]{1,12}", 1..40),
        ) {
            let stemmer = Stemmer::create(Algorithm::English);
            let mut n = Normalizer::default();
            for w in words.iter().chain(&words) {
                let fresh = xxh3_64_with_seed(stemmer.stem(&w.to_lowercase()).as_bytes(), HASH_SEED);
                proptest::prop_assert_eq!(n.word_key(w, false), fresh, "{}", w);
            }
        }
    }
}
