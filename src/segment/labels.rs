//! Block labels from gold text (Gibson et al. 2007 label blocks Content / NotContent by hand;
//! we derive them from the datasets' gold text): the gold is aligned to the page's words with
//! [`crate::methods::nb::train::align`] (the same alignment that labels Naive Bayes tokens), and a
//! block is Content when at least `threshold` of its words align (default ½).

use crate::gold::gold_plain_text;
use crate::gold::{LabelOptions, SkipReason, align, gold_word_keys};
use crate::html::{Token, TokenKind, TokenizerOptions, tokenize};

use super::{Block, BlockMode, segment_with};

/// A page cut into blocks, with a gold label per block.
pub struct LabelledBlocks {
    pub page: String,
    pub tokens: Vec<Token>,
    pub blocks: Vec<Block>,
    pub title: Vec<u64>,
    /// Content (true) or NotContent, per block.
    pub labels: Vec<bool>,
    /// Share of gold words aligned to the page.
    pub coverage: f64,
}

/// Tokenizes and segments `html` and labels its blocks from `gold_text`. Pages whose gold is
/// short or barely found in the page are skipped by reason, as for Naive Bayes training
/// (`opts.max_tag_ratio` does not apply: blocks have no span).
pub fn label_blocks(
    html: &[u8],
    gold_text: &str,
    threshold: f64,
    opts: &LabelOptions,
) -> Result<LabelledBlocks, SkipReason> {
    label_blocks_with(html, gold_text, threshold, opts, BlockMode::Gibson)
}

/// [`label_blocks`] with another block definition (Yao & Zuo's for the SVM learner).
pub fn label_blocks_with(
    html: &[u8],
    gold_text: &str,
    threshold: f64,
    opts: &LabelOptions,
    mode: BlockMode,
) -> Result<LabelledBlocks, SkipReason> {
    let gold = gold_word_keys(&gold_plain_text(gold_text));
    if gold.len() < opts.min_gold_words {
        return Err(SkipReason::ShortGold);
    }
    let s = tokenize(html, TokenizerOptions::default()).map_err(|_| SkipReason::ParseError)?;
    let (aligned_tok, aligned) = aligned_tokens(&s.page, &s.sink, &gold);
    let coverage = aligned as f64 / gold.len() as f64;
    if coverage < opts.min_coverage {
        return Err(SkipReason::LowCoverage);
    }
    let mut seg = segment_with(&s.page, &s.sink, mode);
    let blocks = seg.take_blocks();
    let labels = block_labels(&s.sink, &blocks, &aligned_tok, threshold);
    Ok(LabelledBlocks { title: seg.title_keys().to_vec(), page: s.page, tokens: s.sink, blocks, labels, coverage })
}

/// Marks the page's word tokens that `text_keys` (word keys of a text) align to; also returns
/// how many aligned.
pub fn aligned_tokens(page: &str, tokens: &[Token], text_keys: &[u64]) -> (Vec<bool>, usize) {
    let mut buf = String::new();
    let mut word_tok = Vec::new();
    let mut page_keys = Vec::new();
    for (i, t) in tokens.iter().enumerate() {
        if t.kind == TokenKind::Word {
            word_tok.push(i);
            page_keys.push(align::word_key(t.raw(page), t.has_entity, &mut buf));
        }
    }
    let m = align::align(text_keys, &page_keys);
    let mut aligned_tok = vec![false; tokens.len()];
    let mut aligned = 0usize;
    for &w in m.iter().flatten() {
        aligned_tok[word_tok[w]] = true;
        aligned += 1;
    }
    (aligned_tok, aligned)
}

/// A block is Content when at least `threshold` of its words are aligned to gold words.
pub fn block_labels(tokens: &[Token], blocks: &[Block], aligned: &[bool], threshold: f64) -> Vec<bool> {
    blocks
        .iter()
        .map(|b| {
            let range = b.first as usize..=b.last as usize;
            let hits = tokens[range.clone()]
                .iter()
                .zip(&aligned[range])
                .filter(|(t, a)| t.kind == TokenKind::Word && **a)
                .count();
            b.words > 0 && hits as f64 >= threshold * f64::from(b.words)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_blocks_are_those_mostly_in_the_gold() {
        let html = b"<html><head><title>Park</title></head><body><nav><a href=/>Home</a> <a href=/n>News</a></nav>\
            <p>The council voted to expand the park on Tuesday.</p><div>Advert: buy the park now</div>\
            <p>Work starts in May, officials said.</p><div class=c>Comments: great park!</div></body></html>";
        let gold = "The council voted to expand the park on Tuesday.\n\nWork starts in May, officials said.";
        let opts = LabelOptions::default();
        let l = label_blocks(html, gold, 0.5, &opts).unwrap();
        assert_eq!(l.labels, [false, true, false, true, false]);
        // "Comments: great park!" has 1 of 3 words ("park") aligned at most: Content only at 0.3.
        let low = label_blocks(html, gold, 0.3, &opts).unwrap();
        assert_eq!(low.labels[1..4], [true, false, true]);
        assert_eq!(label_blocks(html, "too short", 0.5, &opts).err(), Some(SkipReason::ShortGold));
    }
}
