//! The block and document metrics of Gibson, Wellner & Lubar (2007, §7, Table 1): block
//! precision and recall of the Content label, document accuracy (every block of the page
//! right), document precision and recall (share of pages at 100 % block precision / recall),
//! each also over pages whose gold Content blocks are contiguous and over the others.
//!
//! Scorer-agnostic: both the gold text and the extracted text are aligned to the page's
//! words ([`crate::segment::labels`]), and a block counts as Content (gold) or extracted
//! (predicted) when at least half its words align, so NB-MSS and the block scorers are
//! measured the same way. Pages whose gold is short or barely in the page are left out and
//! counted.

use serde::Serialize;

use crate::methods::nb::train::{LabelOptions, gold_word_keys};
use crate::segment::labels::{aligned_tokens, block_labels, label_blocks};

/// Block outcome of one page.
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct PageBlocks {
    pub tp: u32,
    pub fp: u32,
    pub fn_: u32,
    pub tn: u32,
    /// The gold Content blocks are one run (no NotContent block between two of them).
    pub contiguous: bool,
}

/// Block metrics over a set of pages.
#[derive(Debug, Clone, Default, Serialize)]
pub struct BlockMetrics {
    pub pages: usize,
    pub block_precision: Option<f64>,
    pub block_recall: Option<f64>,
    pub doc_accuracy: Option<f64>,
    pub doc_precision: Option<f64>,
    pub doc_recall: Option<f64>,
}

/// Block metrics of all scored pages and of the contiguous / non-contiguous ones.
#[derive(Debug, Clone, Default, Serialize)]
pub struct BlockReport {
    pub all: BlockMetrics,
    pub contiguous: BlockMetrics,
    pub non_contiguous: BlockMetrics,
    /// Pages without block labels (short gold, gold not found in the page, parse error).
    pub unlabelled: usize,
}

/// Gold and predicted block labels of one page, from its HTML, gold text and extracted text.
pub fn page_blocks(html: &[u8], gold_text: &str, extracted: &str) -> Option<PageBlocks> {
    let opts = LabelOptions::default();
    let gold = label_blocks(html, gold_text, 0.5, &opts).ok()?;
    let keys = gold_word_keys(extracted);
    let (aligned, _) = aligned_tokens(&gold.page, &gold.tokens, &keys);
    let predicted = block_labels(&gold.tokens, &gold.blocks, &aligned, 0.5);
    let mut out = PageBlocks::default();
    for (&g, &p) in gold.labels.iter().zip(&predicted) {
        match (g, p) {
            (true, true) => out.tp += 1,
            (false, true) => out.fp += 1,
            (true, false) => out.fn_ += 1,
            (false, false) => out.tn += 1,
        }
    }
    let first = gold.labels.iter().position(|&l| l);
    let last = gold.labels.iter().rposition(|&l| l);
    out.contiguous = match first.zip(last) {
        Some((f, l)) => gold.labels[f..=l].iter().all(|&x| x),
        None => true,
    };
    Some(out)
}

fn metrics<'a>(pages: impl Iterator<Item = &'a PageBlocks>) -> BlockMetrics {
    let (mut n, mut tp, mut fp, mut fn_) = (0usize, 0u64, 0u64, 0u64);
    let (mut all_right, mut no_fp, mut no_fn) = (0usize, 0usize, 0usize);
    for p in pages {
        n += 1;
        tp += u64::from(p.tp);
        fp += u64::from(p.fp);
        fn_ += u64::from(p.fn_);
        all_right += usize::from(p.fp == 0 && p.fn_ == 0);
        no_fp += usize::from(p.fp == 0);
        no_fn += usize::from(p.fn_ == 0);
    }
    let ratio = |a: f64, b: f64| (b > 0.0).then(|| a / b);
    BlockMetrics {
        pages: n,
        block_precision: ratio(tp as f64, (tp + fp) as f64),
        block_recall: ratio(tp as f64, (tp + fn_) as f64),
        doc_accuracy: ratio(all_right as f64, n as f64),
        doc_precision: ratio(no_fp as f64, n as f64),
        doc_recall: ratio(no_fn as f64, n as f64),
    }
}

/// Aggregates page outcomes (`None`: the page had no block labels).
pub fn report<'a>(pages: impl Iterator<Item = Option<&'a PageBlocks>>) -> BlockReport {
    let mut scored = Vec::new();
    let mut unlabelled = 0;
    for p in pages {
        match p {
            Some(p) => scored.push(p),
            None => unlabelled += 1,
        }
    }
    BlockReport {
        all: metrics(scored.iter().copied()),
        contiguous: metrics(scored.iter().copied().filter(|p| p.contiguous)),
        non_contiguous: metrics(scored.iter().copied().filter(|p| !p.contiguous)),
        unlabelled,
    }
}

/// The block table printed under the text metrics.
pub fn format_table(r: &BlockReport) -> String {
    use std::fmt::Write;
    let f = |v: Option<f64>| v.map_or("-".to_string(), |x| format!("{x:.3}"));
    let mut s = String::new();
    let _ = writeln!(
        s,
        "blocks (Gibson et al. 2007; {} pages without block labels)\n{:<14} {:>6} {:>6} {:>6} {:>6} {:>6} {:>6}",
        r.unlabelled, "gold pages", "pages", "blkP", "blkR", "docAcc", "docP", "docR"
    );
    for (name, m) in [("all", &r.all), ("contiguous", &r.contiguous), ("non-contig.", &r.non_contiguous)] {
        let _ = writeln!(
            s,
            "{:<14} {:>6} {:>6} {:>6} {:>6} {:>6} {:>6}",
            name,
            m.pages,
            f(m.block_precision),
            f(m.block_recall),
            f(m.doc_accuracy),
            f(m.doc_precision),
            f(m.doc_recall)
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    const HTML: &[u8] = b"<html><body><nav><a href=/>Home</a> <a href=/n>News</a></nav>\
        <p>The council voted to expand the park on Tuesday.</p><div>Advert: buy a boat today</div>\
        <p>Work starts in May, officials said.</p><div class=c>Comments: great stuff!</div></body></html>";
    const GOLD: &str = "The council voted to expand the park on Tuesday.\n\nWork starts in May, officials said.";

    #[test]
    fn perfect_partial_and_contiguity() {
        let p = page_blocks(HTML, GOLD, GOLD).unwrap();
        assert_eq!((p.tp, p.fp, p.fn_, p.tn, p.contiguous), (2, 0, 0, 3, false));
        let q = page_blocks(HTML, GOLD, "The council voted to expand the park on Tuesday. Advert: buy a boat today")
            .unwrap();
        assert_eq!((q.tp, q.fp, q.fn_, q.tn), (1, 1, 1, 2));
        let r = report([Some(&p), Some(&q), None].into_iter());
        assert_eq!((r.all.pages, r.unlabelled, r.non_contiguous.pages), (2, 1, 2));
        assert_eq!(r.all.block_precision, Some(0.75));
        assert_eq!(r.all.doc_accuracy, Some(0.5));
        assert_eq!(r.contiguous.block_precision, None);
    }
}
