//! Token features for the Naive Bayes scorer (Pasternack & Roth 2009, §6.2): the trigram
//! ⟨u_i, u_{i+1}, u_{i+2}⟩ of normalised tokens and the most-recent-unclosed-tag (MRUT), plus
//! the options the paper tried and dropped (unigram, bigram, MRUT-of-two).
//!
//! Streaming with a two-token look-ahead: [`FeatureStream::push`] takes token i and hands back
//! the features of token i−2, so extraction stays single-pass. Every feature is a stable 64-bit
//! key (xxh3 with a fixed seed over the feature type and its parts), so model files are
//! portable.

use serde::{Deserialize, Serialize};
use xxhash_rust::xxh3::xxh3_64_with_seed;

use crate::html::normalize::{HASH_SEED, Normalizer};
use crate::html::tags::TagId;
use crate::html::{Token, TokenKind};

/// Which features a model uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct FeatureSet {
    pub trigram: bool,
    pub mrut: bool,
    pub unigram: bool,
    pub bigram: bool,
    /// The two most recent unclosed tags as one feature.
    pub mrut2: bool,
    /// Words of the `id`/`class` attributes of the nearest open element that has any
    /// (our extension: modern pages name their parts `nav`, `sidebar`, `comment`).
    pub classes: bool,
}

impl Default for FeatureSet {
    /// The paper's final choice: trigram and MRUT.
    fn default() -> Self {
        FeatureSet { trigram: true, mrut: true, unigram: false, bigram: false, mrut2: false, classes: false }
    }
}

impl FeatureSet {
    /// Parses a comma list such as `trigram,mrut`.
    pub fn parse(list: &str) -> Result<Self, String> {
        let mut f =
            FeatureSet { trigram: false, mrut: false, unigram: false, bigram: false, mrut2: false, classes: false };
        for part in list.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            match part {
                "trigram" => f.trigram = true,
                "mrut" => f.mrut = true,
                "unigram" => f.unigram = true,
                "bigram" => f.bigram = true,
                "mrut2" => f.mrut2 = true,
                "classes" => f.classes = true,
                other => {
                    return Err(format!(
                        "unknown feature `{other}` (known: trigram, mrut, unigram, bigram, mrut2, classes)"
                    ));
                }
            }
        }
        if f.types().is_empty() {
            return Err("no features selected".to_string());
        }
        Ok(f)
    }

    /// Feature types in a fixed order; the index is the slot of the type in a model.
    pub fn types(&self) -> Vec<FeatureType> {
        let all = [
            (self.trigram, FeatureType::Trigram),
            (self.mrut, FeatureType::Mrut),
            (self.unigram, FeatureType::Unigram),
            (self.bigram, FeatureType::Bigram),
            (self.mrut2, FeatureType::Mrut2),
            (self.classes, FeatureType::Classes),
        ];
        all.iter().filter(|(on, _)| *on).map(|&(_, t)| t).collect()
    }

    pub fn describe(&self) -> String {
        self.types().iter().map(|t| t.name()).collect::<Vec<_>>().join(",")
    }
}

/// A feature type: each is one categorical variable of the Naive Bayes model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[repr(u8)]
pub enum FeatureType {
    Trigram = 1,
    Mrut = 2,
    Unigram = 3,
    Bigram = 4,
    Mrut2 = 5,
    Classes = 6,
}

impl FeatureType {
    pub fn name(self) -> &'static str {
        match self {
            FeatureType::Trigram => "trigram",
            FeatureType::Mrut => "mrut",
            FeatureType::Unigram => "unigram",
            FeatureType::Bigram => "bigram",
            FeatureType::Mrut2 => "mrut2",
            FeatureType::Classes => "classes",
        }
    }
}

/// Key standing for "past the end of the page" in n-grams.
const END_KEY: u64 = 0x454e_445f_4f46_5f50; // "END_OF_P"

/// Close tags are searched for this deep in the open-tag stack; a close tag with no match
/// that deep is ignored. Bounds the work per tag on pathological pages (200 000 stray end tags
/// under 200 000 open divs) while real pages never nest an unmatched tag this far.
const MAX_UNWIND: usize = 256;

/// The open-tag stack of §6.2: push on every start tag; on an end tag unwind to the matching
/// start tag and remove it. No effort is made to check that tags are ever closed, so an
/// unclosed `<p>` stays the most recent unclosed tag of later tokens, as in the paper.
#[derive(Debug, Default, Clone)]
pub struct TagStack {
    stack: Vec<TagId>,
    /// Per entry: end offset of its id/class words in `words` (kept only when asked).
    word_end: Vec<u32>,
    /// Per entry: 1 + index of the nearest entry at or below it that has words (0: none),
    /// so the lookup is O(1) however deep the page nests unnamed elements.
    nearest: Vec<u32>,
    words: Vec<u64>,
    with_words: bool,
}

thread_local! {
    /// id/class words by raw start tag (direct-mapped, compared byte for byte): pages repeat
    /// the same tags (`<li class="menu-item">`, `<div class="col">`) hundreds of times, and
    /// splitting and hashing their words cost more than the rest of the stack. One per thread
    /// and kept across pages, as the words depend on the tag's bytes alone.
    static WORDS_BY_TAG: std::cell::RefCell<Vec<WordCacheEntry>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Slots of [`TagStack`]'s word cache.
const WORD_CACHE: usize = 512;
/// Longest start tag kept in the word cache (longer ones are read every time).
const WORD_CACHE_TAG: usize = 184;
const _: () = assert!(WORD_CACHE_TAG <= u8::MAX as usize);

/// One start tag's bytes and its id/class words.
#[derive(Debug, Clone, Copy)]
struct WordCacheEntry {
    len: u8,
    n: u8,
    tag: [u8; WORD_CACHE_TAG],
    words: [u64; MAX_CLASS_WORDS],
}

impl Default for WordCacheEntry {
    fn default() -> Self {
        // Length 0 matches no tag (every raw tag holds at least `<` and `>`).
        WordCacheEntry { len: 0, n: 0, tag: [0; WORD_CACHE_TAG], words: [0; MAX_CLASS_WORDS] }
    }
}

/// Marker for "no open tag".
pub const NO_TAG: u16 = 0xFFFF;

/// id/class words kept per element.
const MAX_CLASS_WORDS: usize = 4;

impl TagStack {
    /// A stack that also remembers each element's id/class words.
    pub fn with_class_words() -> Self {
        TagStack { with_words: true, ..TagStack::default() }
    }

    pub fn clear(&mut self) {
        self.stack.clear();
        self.word_end.clear();
        self.nearest.clear();
        self.words.clear();
    }

    /// The most recent unclosed tag (or [`NO_TAG`]).
    pub fn top(&self) -> u16 {
        self.stack.last().map_or(NO_TAG, |&t| u16::from(t))
    }

    /// The second most recent unclosed tag (or [`NO_TAG`]).
    pub fn second(&self) -> u16 {
        self.stack.len().checked_sub(2).map_or(NO_TAG, |i| u16::from(self.stack[i]))
    }

    pub fn depth(&self) -> usize {
        self.stack.len()
    }

    /// id/class words of the nearest open element that has any.
    pub fn nearest_class_words(&self) -> &[u64] {
        match self.nearest.last() {
            Some(&n) if n > 0 => {
                let i = n as usize - 1;
                let start = if i == 0 { 0 } else { self.word_end[i - 1] as usize };
                &self.words[start..self.word_end[i] as usize]
            }
            _ => &[],
        }
    }

    fn truncate(&mut self, len: usize) {
        self.stack.truncate(len);
        if self.with_words {
            self.word_end.truncate(len);
            self.nearest.truncate(len);
            self.words.truncate(self.word_end.last().map_or(0, |&e| e as usize));
        }
    }

    /// Appends the id/class words of `raw` (a start tag) to `words`, through the cache.
    #[inline]
    fn push_class_words(&mut self, raw: &[u8]) {
        if raw.len() > WORD_CACHE_TAG {
            class_words(raw, &mut self.words);
            return;
        }
        let words = &mut self.words;
        WORDS_BY_TAG.with_borrow_mut(|cache| {
            if cache.is_empty() {
                *cache = vec![WordCacheEntry::default(); WORD_CACHE];
            }
            let h = xxh3_64_with_seed(raw, HASH_SEED ^ 3);
            let slot = &mut cache[(h >> 54) as usize & (WORD_CACHE - 1)];
            if usize::from(slot.len) == raw.len() && slot.tag[..raw.len()] == *raw {
                words.extend_from_slice(&slot.words[..usize::from(slot.n)]);
                return;
            }
            let before = words.len();
            class_words(raw, words);
            let got = &words[before..];
            slot.len = raw.len() as u8;
            slot.tag[..raw.len()].copy_from_slice(raw);
            slot.n = got.len() as u8;
            slot.words[..got.len()].copy_from_slice(got);
        });
    }

    /// Updates the stack with a token (`page` is needed only for id/class words).
    pub fn update(&mut self, page: &str, token: &Token) {
        match token.kind {
            TokenKind::StartTag => {
                self.stack.push(token.tag);
                if self.with_words {
                    let before = self.words.len();
                    self.push_class_words(token.raw_bytes(page));
                    debug_assert!(self.words.len() - before <= MAX_CLASS_WORDS);
                    self.word_end.push(self.words.len() as u32);
                    let n = if self.words.len() > before {
                        self.word_end.len() as u32
                    } else {
                        self.nearest.last().copied().unwrap_or(0)
                    };
                    self.nearest.push(n);
                }
            }
            TokenKind::EndTag => {
                let lo = self.stack.len().saturating_sub(MAX_UNWIND);
                if let Some(p) = self.stack[lo..].iter().rposition(|&t| t == token.tag) {
                    self.truncate(lo + p);
                }
            }
            _ => {}
        }
    }
}

/// Appends hashes of the words of a start tag's `id` and `class` values (split on anything
/// not alphanumeric, lower-cased, numbers and one- or two-letter words dropped), at most
/// [`MAX_CLASS_WORDS`]. Scans the raw tag without allocating.
pub fn class_words(tag: &[u8], out: &mut Vec<u64>) {
    let start = out.len();
    for (name, value) in crate::html::attrs::attrs(tag) {
        if out.len() - start >= MAX_CLASS_WORDS {
            break;
        }
        let Some(v) = value.filter(|_| name.eq_ignore_ascii_case(b"class") || name.eq_ignore_ascii_case(b"id")) else {
            continue;
        };
        for w in v.split(|b| !b.is_ascii_alphanumeric()) {
            if out.len() - start >= MAX_CLASS_WORDS {
                break;
            }
            if w.len() < 3 || w.iter().all(u8::is_ascii_digit) {
                continue;
            }
            out.push(class_word_hash(w));
        }
    }
}

/// The hash [`class_words`] gives one id/class word (ASCII-lower-cased, first 24 bytes).
pub fn class_word_hash(w: &[u8]) -> u64 {
    let mut lower = [0u8; 24];
    let n = w.len().min(24);
    for (d, s) in lower.iter_mut().zip(&w[..n]) {
        *d = s.to_ascii_lowercase();
    }
    xxh3_64_with_seed(&lower[..n], HASH_SEED ^ 2)
}

/// Combines feature parts into one key. The parts are already uniform 64-bit hashes, so a
/// multiply–xorshift mix per part (as in wyhash/splitmix) is enough and several times cheaper
/// than hashing their bytes; it is fixed arithmetic, so keys are portable across machines.
#[inline]
fn key(parts: [u64; 3], ty: FeatureType) -> u64 {
    #[inline]
    fn mix(h: u64, x: u64) -> u64 {
        let m = u128::from(h ^ x) * 0x9E37_79B9_7F4A_7C15u128;
        ((m >> 64) as u64) ^ (m as u64)
    }
    let h = mix(HASH_SEED ^ ty as u64, parts[0]);
    let h = mix(h, parts[1].rotate_left(21));
    let k = mix(h, parts[2].rotate_left(42));
    // 0 marks an empty slot in the weight table.
    if k == 0 { 1 } else { k }
}

/// Features of one token: one key per enabled type in [`FeatureSet::types`] order, except
/// `classes`, which adds one key per id/class word (up to four).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TokenFeatures {
    pub keys: [u64; 8],
    pub types: [u8; 8],
    pub len: u8,
    /// The token is a start or end tag (scorers may bias tags and text differently).
    pub tag: bool,
}

impl TokenFeatures {
    pub fn as_slice(&self) -> &[u64] {
        &self.keys[..self.len as usize]
    }
}

/// Features of one token from [`FeatureStream::push_weighed`]: the keys of its own n-grams
/// (trigram, unigram, bigram, in [`FeatureSet::types`] order) and the summed weight of its
/// context features. A third of [`TokenFeatures`]' size: a batch of them is copied and read
/// once per token.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WeighedFeatures {
    pub keys: [u64; 3],
    pub types: [u8; 3],
    pub len: u8,
    pub tag: bool,
    /// The summed quantised weight of the context features (MRUT, MRUT-of-two, id/class
    /// words), which `keys` leave out.
    pub context: i32,
}

/// What a scorer reads of a token's features, whichever way they were computed.
pub trait KeyedFeatures {
    /// The keys to look up.
    fn keys(&self) -> &[u64];
    /// The feature type of each key.
    fn key_types(&self) -> &[u8];
    fn is_tag(&self) -> bool;
    /// Weight already summed for features not among the keys.
    fn context(&self) -> i32;
}

/// [`KeyedFeatures`] for a record with `keys`, `types`, `len` and `tag` fields; the last
/// argument reads the weight already summed (`f => f.context`, or `_f => 0`).
macro_rules! keyed_features {
    ($t:ty, $f:ident => $context:expr) => {
        impl KeyedFeatures for $t {
            #[inline]
            fn keys(&self) -> &[u64] {
                &self.keys[..self.len as usize]
            }
            #[inline]
            fn key_types(&self) -> &[u8] {
                &self.types[..self.len as usize]
            }
            #[inline]
            fn is_tag(&self) -> bool {
                self.tag
            }
            #[inline]
            fn context(&self) -> i32 {
                let $f = self;
                $context
            }
        }
    };
}

keyed_features!(TokenFeatures, _f => 0);
keyed_features!(WeighedFeatures, f => f.context);

/// Per-token context remembered for the look-ahead: normalised key and MRUTs (or, weighed,
/// the context's weight).
#[derive(Debug, Clone, Copy, Default)]
struct Pending {
    norm: u64,
    tag: bool,
    mrut: u16,
    mrut2: u16,
    classes: [u64; MAX_CLASS_WORDS],
    n_classes: u8,
}

/// Slots of [`FeatureStream`]'s context-weight cache (48 bytes each: 24 KB, in L1/L2).
const CONTEXT_CACHE: usize = 512;

/// One context weighed: its inputs (top tag, the tag below, the nearest id/class words) and
/// the summed weight of its keys.
#[derive(Debug, Clone, Copy, Default)]
struct ContextEntry {
    filled: bool,
    top: u16,
    second: u16,
    n: u8,
    words: [u64; MAX_CLASS_WORDS],
    weight: i32,
}

impl ContextEntry {
    fn words(&self) -> &[u64] {
        &self.words[..self.n as usize]
    }
}

/// The keys of the context features of `types` for a token whose stack has `mrut` on top,
/// `mrut2` below it and `classes` as its nearest id/class words.
fn context_keys(types: &[FeatureType], mrut: u16, mrut2: u16, classes: &[u64], out: &mut Vec<u64>) {
    for &t in types {
        match t {
            FeatureType::Mrut => out.push(key([u64::from(mrut), 0, 0], t)),
            FeatureType::Mrut2 => out.push(key([u64::from(mrut), u64::from(mrut2), 0], t)),
            FeatureType::Classes => out.extend(classes.iter().map(|&w| key([w, 0, 0], t))),
            _ => {}
        }
    }
}

/// Streaming feature extraction with two tokens of look-ahead.
pub struct FeatureStream {
    set: FeatureSet,
    types: Vec<FeatureType>,
    stack: TagStack,
    /// [`push_weighed`](Self::push_weighed): the context weight of each open element (tokens
    /// inside it, before another tag opens), and of the empty stack.
    weights: Vec<i32>,
    empty_weight: Option<i32>,
    scratch: Vec<u64>,
    /// Context weights by their inputs (direct-mapped, compared whole): a page opens the same
    /// few hundred contexts (`<a>` in `<li class=menu-item>`) thousands of times, and each
    /// weighing is a handful of lookups in a weight table far bigger than the cache.
    context_cache: Vec<ContextEntry>,
    ring: [Pending; 3],
    /// [`push_weighed`](Self::push_weighed)'s look-ahead: (normalised key, is a tag, context
    /// weight) of the last three tokens, a fifth of a [`Pending`].
    weighed_ring: [(u64, bool, i32); 3],
    /// The token n-gram types of the set (trigram, unigram, bigram, in `types` order), the only
    /// ones [`WeighedFeatures`] carries keys for.
    ngram_types: Vec<FeatureType>,
    /// Tokens pushed so far.
    n: usize,
    /// Tokens whose features were handed out.
    done: usize,
}

impl FeatureStream {
    pub fn new(set: FeatureSet) -> Self {
        FeatureStream {
            set,
            types: set.types(),
            stack: if set.classes { TagStack::with_class_words() } else { TagStack::default() },
            weights: Vec::new(),
            empty_weight: None,
            scratch: Vec::with_capacity(8),
            context_cache: Vec::new(),
            ring: [Pending::default(); 3],
            weighed_ring: [(0, false, 0); 3],
            ngram_types: set
                .types()
                .into_iter()
                .filter(|t| matches!(t, FeatureType::Trigram | FeatureType::Unigram | FeatureType::Bigram))
                .collect(),
            n: 0,
            done: 0,
        }
    }

    pub fn feature_set(&self) -> FeatureSet {
        self.set
    }

    /// Takes token i; calls `out` with the features of token i−2 once known.
    #[inline]
    pub fn push(&mut self, norm: &mut Normalizer, page: &str, token: &Token, out: &mut dyn FnMut(&TokenFeatures)) {
        // MRUT is the top of the stack *before* this token: the tag the token sits in.
        let mut p = Pending {
            norm: norm.key(page, token),
            tag: token.kind.is_tag(),
            mrut: self.stack.top(),
            mrut2: self.stack.second(),
            ..Pending::default()
        };
        if self.set.classes {
            let w = self.stack.nearest_class_words();
            p.classes[..w.len()].copy_from_slice(w);
            p.n_classes = w.len() as u8;
        }
        self.stack.update(page, token);
        self.ring[self.n % 3] = p;
        self.n += 1;
        if self.n >= 3 {
            let f = self.features_of(self.done);
            self.done += 1;
            out(&f);
        }
    }

    /// As [`push`](Self::push), but the context features (MRUT, MRUT-of-two, id/class words)
    /// come summed as [`WeighedFeatures::context`], weighed by `weigh` once per element opened
    /// instead of once per token: between two tags every token has the same context, and
    /// half a page's tokens are words. `weigh` must be a pure function of the keys.
    #[inline]
    pub fn push_weighed(
        &mut self,
        norm: &mut Normalizer,
        page: &str,
        token: &Token,
        weigh: &dyn Fn(&[u64]) -> i32,
        out: &mut dyn FnMut(&WeighedFeatures),
    ) {
        let context = match self.weights.last() {
            Some(&w) => w,
            None => *self.empty_weight.get_or_insert_with(|| {
                self.scratch.clear();
                context_keys(&self.types, NO_TAG, NO_TAG, &[], &mut self.scratch);
                weigh(&self.scratch)
            }),
        };
        let p = (norm.key(page, token), token.kind.is_tag(), context);
        let depth = self.stack.depth();
        self.stack.update(page, token);
        if self.stack.depth() > depth {
            let (top, second, words) = (self.stack.top(), self.stack.second(), self.stack.nearest_class_words());
            let mut h = (u64::from(top) << 16 | u64::from(second)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
            for &w in words {
                h = (h ^ w).wrapping_mul(0x9E37_79B9_7F4A_7C15);
            }
            if self.context_cache.is_empty() {
                self.context_cache = vec![ContextEntry::default(); CONTEXT_CACHE];
            }
            let slot = &mut self.context_cache[(h >> 55) as usize & (CONTEXT_CACHE - 1)];
            let weight = if slot.filled && slot.top == top && slot.second == second && slot.words() == words {
                slot.weight
            } else {
                self.scratch.clear();
                context_keys(&self.types, top, second, words, &mut self.scratch);
                let weight = weigh(&self.scratch);
                *slot = ContextEntry { filled: true, top, second, n: words.len() as u8, words: [0; 4], weight };
                slot.words[..words.len()].copy_from_slice(words);
                weight
            };
            self.weights.push(weight);
        } else {
            self.weights.truncate(self.stack.depth());
        }
        self.weighed_ring[self.n % 3] = p;
        self.n += 1;
        if self.n >= 3 {
            let f = self.weighed_features_of(self.done);
            self.done += 1;
            out(&f);
        }
    }

    /// End of page for [`push_weighed`](Self::push_weighed): the last (up to two) tokens.
    pub fn finish_weighed(&mut self, out: &mut dyn FnMut(&WeighedFeatures)) {
        while self.done < self.n {
            let f = self.weighed_features_of(self.done);
            self.done += 1;
            out(&f);
        }
    }

    #[inline]
    fn weighed_features_of(&self, i: usize) -> WeighedFeatures {
        let norm_at = |j: usize| if j < self.n { self.weighed_ring[j % 3].0 } else { END_KEY };
        let (a, tag, context) = self.weighed_ring[i % 3];
        let (b, c) = (norm_at(i + 1), norm_at(i + 2));
        let mut f = WeighedFeatures { tag, context, len: self.ngram_types.len() as u8, ..WeighedFeatures::default() };
        for (j, &t) in self.ngram_types.iter().enumerate() {
            f.keys[j] = match t {
                FeatureType::Trigram => key([a, b, c], t),
                FeatureType::Unigram => key([a, 0, 0], t),
                _ => key([a, b, 0], t),
            };
            f.types[j] = t as u8;
        }
        f
    }

    /// End of page: features of the last (up to two) tokens.
    pub fn finish(&mut self, out: &mut dyn FnMut(&TokenFeatures)) {
        while self.done < self.n {
            let f = self.features_of(self.done);
            self.done += 1;
            out(&f);
        }
    }

    fn norm_at(&self, i: usize) -> u64 {
        if i < self.n { self.ring[i % 3].norm } else { END_KEY }
    }

    fn features_of(&self, i: usize) -> TokenFeatures {
        let me = self.ring[i % 3];
        let (a, b, c) = (me.norm, self.norm_at(i + 1), self.norm_at(i + 2));
        let mut f = TokenFeatures { tag: me.tag, ..TokenFeatures::default() };
        for &t in &self.types {
            let mut put = |k: u64| {
                f.keys[f.len as usize] = k;
                f.types[f.len as usize] = t as u8;
                f.len += 1;
            };
            match t {
                FeatureType::Trigram => put(key([a, b, c], t)),
                FeatureType::Mrut => put(key([u64::from(me.mrut), 0, 0], t)),
                FeatureType::Unigram => put(key([a, 0, 0], t)),
                FeatureType::Bigram => put(key([a, b, 0], t)),
                FeatureType::Mrut2 => put(key([u64::from(me.mrut), u64::from(me.mrut2), 0], t)),
                FeatureType::Classes => {
                    for &w in &me.classes[..me.n_classes as usize] {
                        put(key([w, 0, 0], t));
                    }
                }
            }
        }
        f
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::html::{TokenizerOptions, tags, tokenize};

    fn feats(html: &str, set: FeatureSet) -> Vec<TokenFeatures> {
        let s = tokenize(html.as_bytes(), TokenizerOptions::default()).unwrap();
        let mut n = Normalizer::default();
        let mut fs = FeatureStream::new(set);
        let mut v = Vec::new();
        for t in &s.sink {
            fs.push(&mut n, &s.page, t, &mut |f| v.push(*f));
        }
        fs.finish(&mut |f| v.push(*f));
        assert_eq!(v.len(), s.sink.len());
        v
    }

    #[test]
    fn trigrams_see_two_tokens_ahead_and_normalise() {
        let set = FeatureSet { mrut: false, ..FeatureSet::default() };
        // "Running dogs run" vs "runs dog running": same stems, same trigram at position 1.
        let a = feats("<p>Running dogs 12</p>", set);
        let b = feats("<p>runs DOG 7</p>", set);
        assert_eq!(a, b);
        let c = feats("<p>Running cats 12</p>", set);
        assert_ne!(a[0], c[0]);
        assert_eq!(a[3], c[3]);
    }

    #[test]
    fn mrut_stack_unwinds_to_the_matching_tag() {
        let page = "";
        let mut st = TagStack::default();
        let tok = |kind, tag| Token {
            kind,
            tag,
            space: Default::default(),
            has_entity: false,
            numeric: false,
            start: 0,
            end: 0,
        };
        st.update(page, &tok(TokenKind::StartTag, tags::DIV));
        st.update(page, &tok(TokenKind::StartTag, tags::P));
        st.update(page, &tok(TokenKind::StartTag, tags::A));
        assert_eq!(st.top(), u16::from(tags::A));
        assert_eq!(st.second(), u16::from(tags::P));
        // </div> unwinds the unclosed <p> and <a> too.
        st.update(page, &tok(TokenKind::EndTag, tags::DIV));
        assert_eq!(st.top(), NO_TAG);
        // A stray close tag changes nothing.
        st.update(page, &tok(TokenKind::StartTag, tags::P));
        st.update(page, &tok(TokenKind::EndTag, tags::TABLE));
        assert_eq!(st.top(), u16::from(tags::P));
    }

    #[test]
    fn feature_set_parsing() {
        assert_eq!(FeatureSet::parse("trigram,mrut").unwrap(), FeatureSet::default());
        assert!(FeatureSet::parse("trigram,nope").is_err());
        assert!(FeatureSet::parse("").is_err());
        assert_eq!(FeatureSet::parse("unigram,bigram,mrut2").unwrap().describe(), "unigram,bigram,mrut2");
    }

    #[test]
    fn class_words_of_the_nearest_named_ancestor() {
        let mut w = Vec::new();
        class_words(br#"<div id="main-content" class='sidebar widget_12 x' data-x="a>b">"#, &mut w);
        assert_eq!(w.len(), 4);
        let mut w2 = Vec::new();
        class_words(b"<DIV CLASS=Sidebar>", &mut w2);
        assert_eq!(w2[0], w[2]);
        let mut none = Vec::new();
        class_words(b"<p>", &mut none);
        class_words(b"<p class=\"12 a\">", &mut none);
        assert!(none.is_empty());

        let html = "<div class=comments><p>Nice <b>post</b></p></div><p>x</p>";
        let s = tokenize(html.as_bytes(), TokenizerOptions::default()).unwrap();
        let mut st = TagStack::with_class_words();
        let mut seen = Vec::new();
        for t in &s.sink {
            seen.push(st.nearest_class_words().len());
            st.update(&s.page, t);
        }
        // <div> itself sits outside; p, Nice, <b>, post, </b>, </p>, </div> see "comments".
        assert_eq!(seen, [0, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0]);
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(300))]

        /// The per-thread word cache gives the words a fresh scan of each tag gives, whatever
        /// the order of tags, repeats, tags too long for it, and slots shared by other tags.
        #[test]
        fn cached_class_words_equal_a_fresh_scan(
            picks in proptest::collection::vec((0usize..40, 0usize..3), 1..300),
        ) {
            let mut st = TagStack::with_class_words();
            let mut fresh = Vec::new();
            for (i, (n, long)) in picks.into_iter().enumerate() {
                let pad = "x".repeat([0, 100, 200][long]);
                let tag = format!("<div data-p=\"{pad}\" class=\"item-{n} col{}\" id=box{}>", n % 7, n % 3);
                let page = format!("{tag}text");
                let t = Token {
                    kind: TokenKind::StartTag,
                    tag: tags::DIV,
                    space: Default::default(),
                    has_entity: false,
                    numeric: false,
                    start: 0,
                    end: tag.len() as u32,
                };
                st.update(&page, &t);
                let before = fresh.len();
                class_words(tag.as_bytes(), &mut fresh);
                proptest::prop_assert_eq!(st.nearest_class_words(), &fresh[before..], "tag {} ({})", i, tag);
            }
        }
    }
}
