//! Block features: the eleven feature types of Gibson, Wellner & Lubar (2007, §6) plus the
//! id/class words of a block's ancestors (our extension), hashed into a fixed number of
//! dimensions so a model's weights (and training memory) are bounded whatever the vocabulary.
//!
//! Every feature is binary (present or not). Two deliberate differences from the paper: word
//! features are presence, not counts (the other features carry length); and there is no
//! named-entity tagger here, so "named entities" are approximated by patterns — capitalised
//! word sequences not at a sentence start (persons, organisations, places alike), numbers,
//! dates (month names, years), money (a currency sign before a number) and percentages — and
//! their words stay in the bag of words.

use std::collections::HashSet;
use std::sync::LazyLock;

use serde::{Deserialize, Serialize};

use crate::gold::align::word_key;
use crate::html::normalize::HASH_SEED;
use crate::html::{Token, TokenKind};
use crate::segment::{Block, NO_TAG};

/// Which features are on, and the size of the hashed feature space.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct BlockFeatureConfig {
    /// Case-insensitive words of the block (default on).
    pub words: bool,
    /// Only the block's stop words instead of all words (§6 "Inverse Stop-Wording"; default off,
    /// exclusive with `words`, which it replaces when on).
    pub inverse_stop_words: bool,
    /// Pattern counts standing in for named entities (default on).
    pub named_entities: bool,
    pub title_case: bool,
    pub anchor_percentage: bool,
    pub title_matching: bool,
    pub ancestor_tags: bool,
    pub descendant_tags: bool,
    pub sibling_tags: bool,
    pub word_count: bool,
    pub after_image: bool,
    /// id/class words of the non-inline ancestors (our extension; default on).
    pub ancestor_classes: bool,
    /// Also add the previous block's features, marked as such (§7 "history predicates"; off).
    pub history: bool,
    /// log2 of the number of hashed dimensions (default 19: 524 288 weights).
    pub dims_log2: u8,
}

impl BlockFeatureConfig {
    /// The feature types [`turn_off`](Self::turn_off) knows, and `inverse_stop_words`.
    pub const TYPES: &[&str] = &[
        "words",
        "named_entities",
        "title_case",
        "anchor_percentage",
        "title_matching",
        "ancestor_tags",
        "descendant_tags",
        "sibling_tags",
        "word_count",
        "after_image",
        "ancestor_classes",
        "inverse_stop_words",
    ];

    /// Turns a feature type off by name (`inverse_stop_words` turns the paper's inverse
    /// stop-word feature on); `false` for an unknown name.
    pub fn turn_off(&mut self, name: &str) -> bool {
        let flag = match name {
            "words" => &mut self.words,
            "named_entities" => &mut self.named_entities,
            "title_case" => &mut self.title_case,
            "anchor_percentage" => &mut self.anchor_percentage,
            "title_matching" => &mut self.title_matching,
            "ancestor_tags" => &mut self.ancestor_tags,
            "descendant_tags" => &mut self.descendant_tags,
            "sibling_tags" => &mut self.sibling_tags,
            "word_count" => &mut self.word_count,
            "after_image" => &mut self.after_image,
            "ancestor_classes" => &mut self.ancestor_classes,
            "inverse_stop_words" => {
                self.inverse_stop_words = true;
                return true;
            }
            _ => return false,
        };
        *flag = false;
        true
    }
}

impl Default for BlockFeatureConfig {
    fn default() -> Self {
        BlockFeatureConfig {
            words: true,
            inverse_stop_words: false,
            named_entities: true,
            title_case: true,
            anchor_percentage: true,
            title_matching: true,
            ancestor_tags: true,
            descendant_tags: true,
            sibling_tags: true,
            word_count: true,
            after_image: true,
            ancestor_classes: true,
            history: false,
            dims_log2: 19,
        }
    }
}

impl BlockFeatureConfig {
    pub fn dims(&self) -> usize {
        1usize << self.dims_log2
    }
}

/// The features of every block of a page, as hashed ids in CSR form: block `i` has
/// `ids[offsets[i]..offsets[i + 1]]`. Sorted and deduplicated per block.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PageFeatures {
    pub offsets: Vec<u32>,
    pub ids: Vec<u32>,
}

impl PageFeatures {
    pub fn len(&self) -> usize {
        self.offsets.len().saturating_sub(1)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn block(&self, i: usize) -> &[u32] {
        &self.ids[self.offsets[i] as usize..self.offsets[i + 1] as usize]
    }
}

// Feature kinds: the first part of every hashed feature.
const BIAS: u64 = 1;
const WORD: u64 = 2;
const STOP: u64 = 3;
const NE: u64 = 4;
const TCASE: u64 = 5;
const ANCHOR: u64 = 6;
const TITLE: u64 = 7;
const PARENT: u64 = 8;
const GRANDPARENT: u64 = 9;
const DESC: u64 = 10;
const PREV_SIB: u64 = 11;
const NEXT_SIB: u64 = 12;
const COUNT: u64 = 13;
const AFTER_IMG: u64 = 14;
const CLASS: u64 = 15;
const HISTORY: u64 = 16;

#[inline]
fn mix(h: u64, x: u64) -> u64 {
    let m = u128::from(h ^ x) * 0x9E37_79B9_7F4A_7C15u128;
    ((m >> 64) as u64) ^ (m as u64)
}

#[inline]
fn fid(kind: u64, a: u64, mask: u64) -> u32 {
    (mix(mix(HASH_SEED ^ 0xB10C, kind), a) & mask) as u32
}

/// log2-ish bucket of a count: 0, 1, 2, 3–4, 5–8, … (at most 10).
fn bucket(n: u32) -> u64 {
    if n == 0 { 0 } else { u64::from(32 - (n - 1).leading_zeros()).min(9) + 1 }
}

static STOP_WORDS: LazyLock<HashSet<u64>> = LazyLock::new(|| {
    let mut b = String::new();
    "a about above after again against all am an and any are as at be because been before being below between \
     both but by could did do does doing down during each few for from further had has have having he her here \
     hers herself him himself his how i if in into is it its itself just me more most my myself no nor not now of \
     off on once only or other our ours ourselves out over own said same she should so some such than that the \
     their theirs them themselves then there these they this those through to too under until up very was we \
     were what when where which while who whom why will with would you your yours yourself yourselves"
        .split_whitespace()
        .map(|w| word_key(w, false, &mut b))
        .collect()
});

static MONTHS: LazyLock<HashSet<u64>> = LazyLock::new(|| {
    let mut b = String::new();
    "january february march april may june july august september october november december jan feb mar apr jun \
     jul aug sep sept oct nov dec monday tuesday wednesday thursday friday saturday sunday"
        .split_whitespace()
        .map(|w| word_key(w, false, &mut b))
        .collect()
});

static PERCENT: LazyLock<u64> = LazyLock::new(|| word_key("percent", false, &mut String::new()));

/// Turns blocks into features; one per thread, reused across pages (scratch buffers).
#[derive(Debug, Default)]
pub struct FeatureExtractor {
    config: BlockFeatureConfig,
    buf: String,
    block_keys: Vec<u64>,
    row: Vec<u32>,
    title_dp: Vec<u16>,
}

impl FeatureExtractor {
    pub fn new(config: BlockFeatureConfig) -> Self {
        FeatureExtractor { config, ..FeatureExtractor::default() }
    }

    pub fn config(&self) -> &BlockFeatureConfig {
        &self.config
    }

    /// Features of every block of a page into `out` (cleared first).
    pub fn page(&mut self, page: &str, tokens: &[Token], blocks: &[Block], title: &[u64], out: &mut PageFeatures) {
        out.offsets.clear();
        out.ids.clear();
        out.offsets.push(0);
        let mut prev: Vec<u32> = Vec::new();
        for b in blocks {
            self.block(page, tokens, b, title);
            if self.config.history {
                let mask = (self.config.dims() - 1) as u64;
                let base = self.row.len();
                for &p in &prev {
                    self.row.push(fid(HISTORY, u64::from(p), mask));
                }
                prev.clear();
                prev.extend_from_slice(&self.row[..base]);
            }
            self.row.sort_unstable();
            self.row.dedup();
            out.ids.extend_from_slice(&self.row);
            out.offsets.push(out.ids.len() as u32);
        }
    }

    /// Features of one block into `self.row`.
    fn block(&mut self, page: &str, tokens: &[Token], b: &Block, title: &[u64]) {
        let c = self.config;
        let mask = (c.dims() - 1) as u64;
        let row = &mut self.row;
        row.clear();
        row.push(fid(BIAS, 0, mask));
        let toks = &tokens[b.first as usize..=b.last as usize];
        self.block_keys.clear();
        // Pattern counts (named-entity stand-ins) and title casing, in one pass over the words.
        let (mut caps, mut numbers, mut dates, mut money, mut percent) = (0u32, 0u32, 0u32, 0u32, 0u32);
        let (mut all_upper, mut any_lower) = (true, false);
        let (mut in_cap, mut sentence_start) = (false, true);
        let mut prev_currency = false;
        let mut prev_numeric = false;
        for t in toks {
            match t.kind {
                TokenKind::Word => {
                    let raw = t.raw(page);
                    let key = word_key(raw, t.has_entity, &mut self.buf);
                    if key == 0 {
                        continue;
                    }
                    self.block_keys.push(key);
                    let first = raw.chars().next().unwrap_or(' ');
                    if first.is_lowercase() {
                        any_lower = true;
                    }
                    if !first.is_uppercase() {
                        all_upper = false;
                    }
                    if t.numeric {
                        numbers += 1;
                        if prev_currency {
                            money += 1;
                        }
                        if raw.len() == 4 && (raw.starts_with("19") || raw.starts_with("20")) {
                            dates += 1;
                        }
                    } else if MONTHS.contains(&key) && first.is_uppercase() {
                        dates += 1;
                    } else if key == *PERCENT && prev_numeric {
                        percent += 1;
                    }
                    let cap = first.is_uppercase() && !sentence_start;
                    if cap && !in_cap {
                        caps += 1;
                    }
                    in_cap = cap;
                    sentence_start = false;
                    prev_currency = false;
                    prev_numeric = t.numeric;
                }
                TokenKind::Symbol => {
                    let s = t.raw(page);
                    if prev_numeric && s == "%" {
                        percent += 1;
                    }
                    prev_currency = matches!(s, "$" | "€" | "£" | "¥");
                    if matches!(s, "." | "!" | "?" | ":" | "\"" | "“") {
                        sentence_start = true;
                    }
                    in_cap = false;
                    prev_numeric = false;
                }
                _ => {}
            }
        }
        if c.words || c.inverse_stop_words {
            for &k in &self.block_keys {
                if c.inverse_stop_words {
                    if STOP_WORDS.contains(&k) {
                        row.push(fid(STOP, k, mask));
                    }
                } else {
                    row.push(fid(WORD, k, mask));
                }
            }
        }
        if c.named_entities {
            for (i, n) in [caps, numbers, dates, money, percent].into_iter().enumerate() {
                if n > 0 {
                    row.push(fid(NE, (i as u64) << 8 | bucket(n), mask));
                }
            }
        }
        if c.title_case && b.words > 0 {
            if all_upper {
                row.push(fid(TCASE, 1, mask));
            }
            if any_lower {
                row.push(fid(TCASE, 2, mask));
            }
        }
        if c.anchor_percentage {
            let share = if b.words == 0 { 0.0 } else { f64::from(b.anchor_words) / f64::from(b.words) };
            // 0, (0, ¼], (¼, ½], (½, ¾], (¾, 1), 1.
            let bk = if share == 0.0 {
                0
            } else if share >= 1.0 {
                5
            } else {
                1 + (share * 4.0).ceil() as u64 - 1
            };
            row.push(fid(ANCHOR, bk, mask));
        }
        if c.title_matching && !title.is_empty() {
            let matched = lcs_len(&self.block_keys, title, &mut self.title_dp);
            if matched >= 2 {
                let share = matched as f64 / title.len() as f64;
                row.push(fid(TITLE, (share * 4.0).round() as u64, mask));
            }
        }
        if c.ancestor_tags {
            row.push(fid(PARENT, u64::from(b.parent), mask));
            if b.grandparent != NO_TAG {
                row.push(fid(GRANDPARENT, u64::from(b.grandparent), mask));
            }
        }
        if c.descendant_tags {
            for (w, &bits) in b.descendants.iter().enumerate() {
                let mut x = bits;
                while x != 0 {
                    let i = x.trailing_zeros() as u64;
                    row.push(fid(DESC, w as u64 * 64 + i, mask));
                    x &= x - 1;
                }
            }
        }
        if c.sibling_tags {
            row.push(fid(PREV_SIB, u64::from(b.prev_sibling), mask));
            row.push(fid(NEXT_SIB, u64::from(b.next_sibling), mask));
        }
        if c.word_count {
            row.push(fid(COUNT, bucket(b.words), mask));
        }
        if c.after_image && b.after_image {
            row.push(fid(AFTER_IMG, 1, mask));
        }
        if c.ancestor_classes {
            for (depth, &w) in b.ancestor_words.iter().enumerate() {
                row.push(fid(CLASS, w, mask));
                // The nearest ancestors' words also as their own features.
                if depth < 4 {
                    row.push(fid(CLASS, mix(w, 0xC1A5), mask));
                }
            }
        }
    }
}

/// Length of the longest common subsequence of a block's words (first 256) and the title's
/// (first 64): the share of the title matched in order (§6 "Title Matching").
fn lcs_len(block: &[u64], title: &[u64], dp: &mut Vec<u16>) -> usize {
    let title = &title[..title.len().min(64)];
    let block = &block[..block.len().min(256)];
    dp.clear();
    dp.resize(title.len() + 1, 0);
    for &w in block {
        let mut diag = 0u16;
        for (j, &t) in title.iter().enumerate() {
            let up = dp[j + 1];
            dp[j + 1] = if w == t { diag + 1 } else { up.max(dp[j]) };
            diag = up;
        }
    }
    dp[title.len()] as usize
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::html::{TokenizerOptions, tokenize};
    use crate::segment::segment;

    #[test]
    fn buckets_and_title_lcs() {
        assert_eq!([0, 1, 2, 3, 4, 5, 8, 9].map(bucket), [0, 1, 2, 3, 3, 4, 4, 5]);
        let mut dp = Vec::new();
        assert_eq!(lcs_len(&[1, 9, 2, 3], &[1, 2, 3, 4], &mut dp), 3);
        assert_eq!(lcs_len(&[], &[1], &mut dp), 0);
    }

    #[test]
    fn features_are_deterministic_bounded_and_configurable() {
        let html = "<html><head><title>Council votes on park</title></head><body><div class=story>\
            <h1>Council votes on park</h1><img src=a><p>The council voted on 3 May 2024 to spend $5 million, \
            up 10% on last year, said Mayor Jane Doe.</p><ul><li><a href=/>Home</a></li></ul></div></body>";
        let s = tokenize(html.as_bytes(), TokenizerOptions::default()).unwrap();
        let seg = segment(&s.page, &s.sink);
        let mut fx = FeatureExtractor::new(BlockFeatureConfig { dims_log2: 12, ..Default::default() });
        let mut a = PageFeatures::default();
        fx.page(&s.page, &s.sink, seg.blocks(), seg.title_keys(), &mut a);
        assert_eq!(a.len(), 3);
        assert!(a.ids.iter().all(|&i| i < 4096));
        let mut b = PageFeatures::default();
        fx.page(&s.page, &s.sink, seg.blocks(), seg.title_keys(), &mut b);
        assert_eq!(a, b);
        let mask = 4095;
        // The heading matches the whole title; the paragraph has every pattern kind.
        assert!(a.block(0).contains(&fid(TITLE, 4, mask)));
        for (i, n) in [(0u64, 2u32), (1, 4), (2, 2), (3, 1), (4, 1)] {
            assert!(a.block(1).contains(&fid(NE, i << 8 | bucket(n), mask)), "pattern {i}");
        }
        assert!(a.block(1).contains(&fid(AFTER_IMG, 1, mask)));
        assert!(a.block(2).contains(&fid(ANCHOR, 5, mask)));
        let mut h = FeatureExtractor::new(BlockFeatureConfig { dims_log2: 12, history: true, ..Default::default() });
        let mut c = PageFeatures::default();
        h.page(&s.page, &s.sink, seg.blocks(), seg.title_keys(), &mut c);
        assert_eq!(c.block(0), a.block(0));
        assert!(c.block(1).len() > a.block(1).len());
    }
}
