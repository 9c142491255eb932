//! From block labels to token scores, shared by every scorer that labels blocks (the CRF family,
//! the SVM, the memory-based learner): a kept block's tokens score +1 and the rest −1, emitted
//! in token order, with a fallback for pages where nothing is kept.

use super::Block;

/// Multi-span pages with no Content block keep the blocks whose p(Content) reaches this share
/// of the page's highest.
pub const FALLBACK_SHARE: f64 = 0.5;

/// Multi-span fallback for a page with no Content block: keep the blocks whose confidence (on
/// a 0..1 scale) reaches [`FALLBACK_SHARE`] of the page's highest. Shared by every multi-span
/// block scorer.
pub fn keep_best_if_none(labels: &mut [bool], confidence: &[f64]) {
    if labels.contains(&true) {
        return;
    }
    let max = confidence.iter().copied().fold(0.0, f64::max);
    labels.iter_mut().zip(confidence).for_each(|(l, &q)| *l = q >= FALLBACK_SHARE * max && max > 0.0);
}

/// +1 for a kept block's tokens, −1 otherwise (multi-span output).
pub fn label_score(kept: bool) -> f64 {
    if kept { 1.0 } else { -1.0 }
}

/// Emits one score per token of a page of `tokens` tokens, in order: `score(i)` for every
/// token of block `i` (its first to last token), `outside` for tokens in no block.
pub fn emit_by_block(
    blocks: &[Block],
    tokens: usize,
    outside: f64,
    score: impl Fn(usize) -> f64,
    out: &mut dyn FnMut(f64),
) {
    let mut next = 0usize;
    for (i, b) in blocks.iter().enumerate() {
        let (first, last) = (b.first as usize, b.last as usize);
        for _ in next..first {
            out(outside);
        }
        let s = score(i);
        for _ in first..=last {
            out(s);
        }
        next = last + 1;
    }
    for _ in next..tokens {
        out(outside);
    }
}
