//! The eighteen block features of Yao & Zuo (§III.B), over [`BlockMode::Yao`] blocks (§III.A),
//! and the multinomial event-model Naive Bayes score that picks their ten id/class tokens.
//!
//! The paper's count, followed here: seven text features (number of words and its quotient to
//! the previous block, average sentence length and its quotient, text density and its
//! quotient, link density), one relative position ⌊n/N·M⌋, and ten binary id/class token
//! features — 7 + 1 + 10 = 18, the "eighteen features" of §III.C.
//!
//! This file owns the feature definitions and the token score (pure arithmetic, no I/O);
//! segmentation is [`crate::segment::Segmenter`]'s, labels [`crate::segment::labels`]', scaling and the SVM
//! itself [`crate::methods::svm::scorer`]'s, learning [`crate::methods::svm::train`]'s.
//!
//! [`BlockMode::Yao`]: crate::segment::BlockMode::Yao

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use crate::html::{Token, TokenKind, entities};
use crate::segment::Block;

/// Text features (7) plus the relative position (1).
pub const N_DENSE: usize = 8;
/// id/class token features (the paper's "top N (which we set to 10)").
pub const N_TOKENS: usize = 10;
/// All features of a block.
pub const N_FEATURES: usize = N_DENSE + N_TOKENS;

/// Names of the dense features, in [`BlockVector`] order; the token features follow as
/// `token_0` … `token_9` (their hashes are in the model).
pub const DENSE_NAMES: [&str; N_DENSE] = [
    "words",
    "words_quotient",
    "avg_sentence_len",
    "avg_sentence_len_quotient",
    "text_density",
    "text_density_quotient",
    "link_density",
    "relative_position",
];

/// One block's feature vector.
pub type BlockVector = [f64; N_FEATURES];

/// Feature settings, stored in the model header so a model is applied as it was trained.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct YaoFeatureConfig {
    /// M, the number of relative positions (default 10). The paper does not state its M; ten
    /// buckets (deciles of the page) keep the feature coarse, as "discretize" suggests.
    pub positions: u32,
    /// Characters per line for the text density (default 80, as Kohlschütter et al.).
    pub line_chars: u32,
}

impl Default for YaoFeatureConfig {
    fn default() -> Self {
        YaoFeatureConfig { positions: 10, line_chars: 80 }
    }
}

/// Raw counts of one block, from its tokens.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct BlockCounts {
    pub words: u32,
    pub anchor_words: u32,
    pub sentences: u32,
    /// Characters of the block's text with one space between tokens (what a reader sees).
    pub chars: u32,
}

/// True for a symbol that ends a sentence (terminal punctuation; the paper does not name its
/// sentence splitter, and counting terminal marks needs no model).
fn ends_sentence(s: &str) -> bool {
    s.chars().any(|c| matches!(c, '.' | '!' | '?' | '。' | '！' | '？' | '…'))
}

/// Counts words, sentences and characters of every block into `out` (cleared first). `buf` is
/// scratch for entity decoding, so nothing is allocated per token.
pub fn block_counts(page: &str, tokens: &[Token], blocks: &[Block], buf: &mut String, out: &mut Vec<BlockCounts>) {
    out.clear();
    for b in blocks {
        let mut c = BlockCounts { words: b.words, anchor_words: b.anchor_words, ..BlockCounts::default() };
        let mut open = 0u32;
        let mut texts = 0u32;
        let (first, last) = (b.first as usize, (b.last as usize).min(tokens.len().saturating_sub(1)));
        for t in tokens.get(first..=last).unwrap_or(&[]) {
            if t.kind.is_tag() {
                continue;
            }
            let text = entities::decoded(t.raw(page), t.has_entity, buf);
            c.chars = c.chars.saturating_add(text.chars().count() as u32);
            texts += 1;
            if t.kind == TokenKind::Word {
                open += 1;
            } else if open > 0 && ends_sentence(text) {
                c.sentences += 1;
                open = 0;
            }
        }
        // An unterminated last sentence is a sentence; spaces between the tokens are text.
        c.sentences += u32::from(open > 0);
        c.chars = c.chars.saturating_add(texts.saturating_sub(1));
        out.push(c);
    }
}

/// Quotient of a feature to the previous block's. Both sides get +1 so that a previous value
/// of 0 (and the first block, whose "previous block" is taken as empty) gives a finite value
/// instead of a division by zero; for blocks of several words the +1 barely moves the ratio.
#[inline]
fn quotient(cur: f64, prev: f64) -> f64 {
    (cur + 1.0) / (prev + 1.0)
}

/// The seven text values (before quotients) of a block: words, average sentence length, text
/// density (words per `line_chars`-character line: words / ⌈chars / line_chars⌉, at least one
/// line, as §III.B "the ratio of the total number of words to the total number of lines").
fn text_values(c: &BlockCounts, line_chars: u32) -> (f64, f64, f64) {
    let words = f64::from(c.words);
    let avg = if c.sentences == 0 { words } else { words / f64::from(c.sentences) };
    let lines = c.chars.div_ceil(line_chars.max(1)).max(1);
    (words, avg, words / f64::from(lines))
}

/// The 18 features of every block of a page into `out` (cleared first). `tokens` are the ten
/// selected id/class token hashes; a block has token k when one of its ancestors' id/class
/// words ([`Block::ancestor_words`]) is k.
pub fn page_vectors(
    counts: &[BlockCounts],
    blocks: &[Block],
    tokens: &[u64; N_TOKENS],
    cfg: &YaoFeatureConfig,
    out: &mut Vec<BlockVector>,
) {
    out.clear();
    let n_blocks = counts.len().min(blocks.len());
    let mut prev = (0.0, 0.0, 0.0);
    for (n, (c, b)) in counts.iter().zip(blocks).enumerate() {
        let (words, avg, density) = text_values(c, cfg.line_chars);
        let mut v = [0.0; N_FEATURES];
        v[0] = words;
        v[1] = quotient(words, prev.0);
        v[2] = avg;
        v[3] = quotient(avg, prev.1);
        v[4] = density;
        v[5] = quotient(density, prev.2);
        v[6] = if c.words == 0 { 0.0 } else { f64::from(c.anchor_words) / words };
        // ⌊n/N·M⌋ with n counted from 0, so positions are 0..M−1.
        v[7] = ((n as u64 * u64::from(cfg.positions)) / n_blocks.max(1) as u64) as f64;
        for (slot, t) in v[N_DENSE..].iter_mut().zip(tokens) {
            *slot = f64::from(u8::from(*t != 0 && b.ancestor_words.contains(t)));
        }
        out.push(v);
        prev = (words, avg, density);
    }
}

/// Per-token counts for the Naive Bayes token score.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TokenCount {
    /// Occurrences in Content (y = 1) and NotContent (y = 0) blocks.
    pub content: u64,
    pub noise: u64,
    /// Blocks having the token at least once ("#blocks-with(k)").
    pub blocks: u64,
}

/// The count table of the multinomial event model: for every token, its occurrences per
/// class, plus each class's total token count (Σ n_i over its blocks).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TokenTable {
    pub tokens: HashMap<u64, TokenCount>,
    pub content_total: u64,
    pub noise_total: u64,
}

impl TokenTable {
    /// Adds one block: its tokens x_1 … x_{n_i} (with repeats) and its label.
    pub fn add_block(&mut self, words: &[u64], content: bool) {
        for (i, &w) in words.iter().enumerate() {
            let e = self.tokens.entry(w).or_default();
            if content {
                e.content += 1;
            } else {
                e.noise += 1;
            }
            if !words[..i].contains(&w) {
                e.blocks += 1;
            }
        }
        let n = words.len() as u64;
        if content {
            self.content_total += n;
        } else {
            self.noise_total += n;
        }
    }

    pub fn merge(&mut self, other: TokenTable) {
        for (k, c) in other.tokens {
            let e = self.tokens.entry(k).or_default();
            e.content += c.content;
            e.noise += c.noise;
            e.blocks += c.blocks;
        }
        self.content_total += other.content_total;
        self.noise_total += other.noise_total;
    }

    /// score_k = log(φ_{k|y=0} / φ_{k|y=1}) × #blocks-with(k), with the Laplace-smoothed
    /// φ_{k|y} = (count of k in class y + 1) / (tokens in class y + |V|) of §III.B.
    pub fn score(&self, c: &TokenCount) -> f64 {
        let v = self.tokens.len() as f64;
        let phi0 = (c.noise as f64 + 1.0) / (self.noise_total as f64 + v);
        let phi1 = (c.content as f64 + 1.0) / (self.content_total as f64 + v);
        (phi0 / phi1).ln() * c.blocks as f64
    }

    /// The `n` tokens with the largest scores ("the surest indicators of non-content
    /// blocks"), best first; ties broken by hash so the choice is deterministic. Only tokens
    /// with a positive score (more likely in non-content) are taken, so fewer than `n` may
    /// come back on a small training set.
    pub fn top_noise_tokens(&self, n: usize) -> Vec<(u64, f64)> {
        let mut all: Vec<(u64, f64)> =
            self.tokens.iter().map(|(&k, c)| (k, self.score(c))).filter(|&(_, s)| s > 0.0).collect();
        all.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        all.truncate(n);
        all
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::features::class_words;
    use crate::html::{TokenizerOptions, tokenize};
    use crate::segment::{BlockMode, segment_with};

    fn class_hash(word: &str) -> u64 {
        let mut v = Vec::new();
        class_words(format!("<div class={word}>").as_bytes(), &mut v);
        v[0]
    }

    #[test]
    fn eighteen_features_of_a_written_page() {
        // Three Yao blocks: the nav (2 link words), the paragraph split by <br> into two.
        let html = "<html><body><div class=\"nav menu\"><a href=/>Home</a> <a href=/n>News</a></div>\
            <p>The park opens today. Work starts soon!<br>Tail words here</p></body></html>";
        let s = tokenize(html.as_bytes(), TokenizerOptions::default()).unwrap();
        let seg = segment_with(&s.page, &s.sink, BlockMode::Yao);
        let blocks = seg.blocks();
        assert_eq!(blocks.len(), 3);
        let mut counts = Vec::new();
        block_counts(&s.page, &s.sink, blocks, &mut String::new(), &mut counts);
        // "Home News": 2 words, 1 sentence, 9 chars. "The park opens today . Work starts soon !":
        // 7 words, 2 sentences, 33 characters of tokens + 8 spaces = 41.
        assert_eq!(counts[0], BlockCounts { words: 2, anchor_words: 2, sentences: 1, chars: 9 });
        assert_eq!(counts[1], BlockCounts { words: 7, anchor_words: 0, sentences: 2, chars: 41 });
        assert_eq!(counts[2], BlockCounts { words: 3, anchor_words: 0, sentences: 1, chars: 15 });
        let nav = class_hash("nav");
        let mut tokens = [0u64; N_TOKENS];
        tokens[0] = class_hash("footer");
        tokens[3] = nav;
        let cfg = YaoFeatureConfig { positions: 10, line_chars: 20 };
        let mut v = Vec::new();
        page_vectors(&counts, blocks, &tokens, &cfg, &mut v);
        let mut want0 = [0.0; N_FEATURES];
        // words 2, quotient (2+1)/(0+1); avg sentence 2/1, quotient 3; density 2 words / 1
        // line, quotient 3; link density 1; position ⌊0/3·10⌋ = 0; token 3 (nav) present.
        want0[..N_DENSE].copy_from_slice(&[2.0, 3.0, 2.0, 3.0, 2.0, 3.0, 1.0, 0.0]);
        want0[N_DENSE + 3] = 1.0;
        assert_eq!(v[0], want0);
        // 7 words, (7+1)/(2+1); avg 3.5, (3.5+1)/(2+1); 41 chars → 3 lines of 20 → 7/3,
        // (7/3+1)/(2+1); no links; ⌊1/3·10⌋ = 3; no tokens.
        let mut want1 = [0.0; N_FEATURES];
        want1[..N_DENSE].copy_from_slice(&[
            7.0,
            8.0 / 3.0,
            3.5,
            4.5 / 3.0,
            7.0 / 3.0,
            (7.0 / 3.0 + 1.0) / 3.0,
            0.0,
            3.0,
        ]);
        assert_eq!(v[1], want1);
        // 3 words, (3+1)/(7+1); avg 3, 4/4.5; 15 chars → 1 line: 3, 4/(7/3+1); ⌊2/3·10⌋ = 6.
        let mut want2 = [0.0; N_FEATURES];
        want2[..N_DENSE].copy_from_slice(&[3.0, 0.5, 3.0, 4.0 / 4.5, 3.0, 4.0 / (7.0 / 3.0 + 1.0), 0.0, 6.0]);
        assert_eq!(v[2], want2);
    }

    #[test]
    fn naive_bayes_token_score_on_a_toy_table() {
        // Tokens 1 (nav) and 2 (body); V = 2.
        let mut t = TokenTable::default();
        t.add_block(&[1, 1], false); // nav nav, non-content
        t.add_block(&[1, 2], false);
        t.add_block(&[2], true);
        t.add_block(&[2, 2], true);
        assert_eq!(t.noise_total, 4);
        assert_eq!(t.content_total, 3);
        assert_eq!(t.tokens[&1], TokenCount { content: 0, noise: 3, blocks: 2 });
        assert_eq!(t.tokens[&2], TokenCount { content: 3, noise: 1, blocks: 3 });
        // φ(1|0) = (3+1)/(4+2) = 2/3, φ(1|1) = (0+1)/(3+2) = 1/5: ln(10/3) × 2 blocks.
        let s1 = t.score(&t.tokens[&1]);
        assert!((s1 - (10.0f64 / 3.0).ln() * 2.0).abs() < 1e-12, "{s1}");
        // φ(2|0) = 2/6, φ(2|1) = 4/5: ln(5/12) × 3 < 0, so not a non-content indicator.
        let s2 = t.score(&t.tokens[&2]);
        assert!((s2 - (5.0f64 / 12.0).ln() * 3.0).abs() < 1e-12, "{s2}");
        let top = t.top_noise_tokens(10);
        assert_eq!(top.len(), 1);
        assert_eq!(top[0].0, 1);
        let mut other = TokenTable::default();
        other.add_block(&[3], false);
        t.merge(other);
        assert_eq!(t.noise_total, 5);
        assert_eq!(t.top_noise_tokens(1)[0].0, 1);
    }
}
