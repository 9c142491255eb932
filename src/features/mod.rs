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
}

impl Default for FeatureSet {
    /// The paper's final choice: trigram and MRUT.
    fn default() -> Self {
        FeatureSet { trigram: true, mrut: true, unigram: false, bigram: false, mrut2: false }
    }
}

impl FeatureSet {
    /// Parses a comma list such as `trigram,mrut`.
    pub fn parse(list: &str) -> Result<Self, String> {
        let mut f = FeatureSet { trigram: false, mrut: false, unigram: false, bigram: false, mrut2: false };
        for part in list.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            match part {
                "trigram" => f.trigram = true,
                "mrut" => f.mrut = true,
                "unigram" => f.unigram = true,
                "bigram" => f.bigram = true,
                "mrut2" => f.mrut2 = true,
                other => {
                    return Err(format!("unknown feature `{other}` (known: trigram, mrut, unigram, bigram, mrut2)"));
                }
            }
        }
        if f == (FeatureSet { trigram: false, mrut: false, unigram: false, bigram: false, mrut2: false }) {
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
}

impl FeatureType {
    pub fn name(self) -> &'static str {
        match self {
            FeatureType::Trigram => "trigram",
            FeatureType::Mrut => "mrut",
            FeatureType::Unigram => "unigram",
            FeatureType::Bigram => "bigram",
            FeatureType::Mrut2 => "mrut2",
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
}

/// Marker for "no open tag".
pub const NO_TAG: u16 = 0xFFFF;

impl TagStack {
    pub fn clear(&mut self) {
        self.stack.clear();
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

    /// Updates the stack with a token.
    pub fn update(&mut self, token: &Token) {
        match token.kind {
            TokenKind::StartTag => self.stack.push(token.tag),
            TokenKind::EndTag => {
                let lo = self.stack.len().saturating_sub(MAX_UNWIND);
                if let Some(p) = self.stack[lo..].iter().rposition(|&t| t == token.tag) {
                    self.stack.truncate(lo + p);
                }
            }
            _ => {}
        }
    }
}

#[inline]
fn key(parts: [u64; 3], ty: FeatureType) -> u64 {
    let mut b = [0u8; 25];
    b[0] = ty as u8;
    b[1..9].copy_from_slice(&parts[0].to_le_bytes());
    b[9..17].copy_from_slice(&parts[1].to_le_bytes());
    b[17..25].copy_from_slice(&parts[2].to_le_bytes());
    xxh3_64_with_seed(&b, HASH_SEED)
}

/// Features of one token: up to five keys, one per enabled type, in [`FeatureSet::types`] order.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TokenFeatures {
    pub keys: [u64; 5],
    pub len: u8,
}

impl TokenFeatures {
    pub fn as_slice(&self) -> &[u64] {
        &self.keys[..self.len as usize]
    }
}

/// Per-token context remembered for the look-ahead: normalised key and MRUTs.
#[derive(Debug, Clone, Copy, Default)]
struct Pending {
    norm: u64,
    mrut: u16,
    mrut2: u16,
}

/// Streaming feature extraction with two tokens of look-ahead.
pub struct FeatureStream {
    set: FeatureSet,
    types: Vec<FeatureType>,
    stack: TagStack,
    ring: [Pending; 3],
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
            stack: TagStack::default(),
            ring: [Pending::default(); 3],
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
        let p = Pending { norm: norm.key(page, token), mrut: self.stack.top(), mrut2: self.stack.second() };
        self.stack.update(token);
        self.ring[self.n % 3] = p;
        self.n += 1;
        if self.n >= 3 {
            let f = self.features_of(self.done);
            self.done += 1;
            out(&f);
        }
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
        let mut f = TokenFeatures::default();
        for &t in &self.types {
            let k = match t {
                FeatureType::Trigram => key([a, b, c], t),
                FeatureType::Mrut => key([u64::from(me.mrut), 0, 0], t),
                FeatureType::Unigram => key([a, 0, 0], t),
                FeatureType::Bigram => key([a, b, 0], t),
                FeatureType::Mrut2 => key([u64::from(me.mrut), u64::from(me.mrut2), 0], t),
            };
            f.keys[f.len as usize] = k;
            f.len += 1;
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
        let set = FeatureSet { trigram: true, mrut: false, ..FeatureSet::default() };
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
        st.update(&tok(TokenKind::StartTag, tags::DIV));
        st.update(&tok(TokenKind::StartTag, tags::P));
        st.update(&tok(TokenKind::StartTag, tags::A));
        assert_eq!(st.top(), u16::from(tags::A));
        assert_eq!(st.second(), u16::from(tags::P));
        // </div> unwinds the unclosed <p> and <a> too.
        st.update(&tok(TokenKind::EndTag, tags::DIV));
        assert_eq!(st.top(), NO_TAG);
        // A stray close tag changes nothing.
        st.update(&tok(TokenKind::StartTag, tags::P));
        st.update(&tok(TokenKind::EndTag, tags::TABLE));
        assert_eq!(st.top(), u16::from(tags::P));
    }

    #[test]
    fn feature_set_parsing() {
        assert_eq!(FeatureSet::parse("trigram,mrut").unwrap(), FeatureSet::default());
        assert!(FeatureSet::parse("trigram,nope").is_err());
        assert!(FeatureSet::parse("").is_err());
        assert_eq!(FeatureSet::parse("unigram,bigram,mrut2").unwrap().describe(), "unigram,bigram,mrut2");
    }
}
