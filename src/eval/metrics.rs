//! Text-quality metrics, identical in definition to `../shared/peers/score.py` (no I/O here):
//! the ScrapingHub AEB shingle P/R/F1 and accuracy, bag-of-words P/R/F1, the CleanEval
//! text-only score (LCS by Myers' O(ND) diff with a bit-parallel fallback), and WCXB's
//! with/without snippet shares.
//!
//! Python's `\w` is "alphanumeric or underscore" by `str.isalnum()`, i.e. Unicode letters and
//! numbers; Rust's `char::is_alphanumeric` also counts a few combining marks of Indic scripts
//! as alphabetic, the only known difference (no effect on the mostly Latin dev sets).

use std::collections::HashMap;

use serde::Serialize;

use super::lcs::{lcs_length, lcs_prf};
use crate::dataset::Gold;
pub use crate::gold::gold_plain_text;

fn is_word_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// The `\w+` runs of `text`, case kept.
pub fn word_tokens(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = None;
    for (i, c) in text.char_indices() {
        match (is_word_char(c), start) {
            (true, None) => start = Some(i),
            (false, Some(s)) => {
                out.push(&text[s..i]);
                start = None;
            }
            _ => {}
        }
    }
    if let Some(s) = start {
        out.push(&text[s..]);
    }
    out
}

/// Multiset of 4-token shingles; a text of 1..=4 tokens is one shingle of all its tokens.
fn shingles<'a>(tokens: &[&'a str]) -> HashMap<Vec<&'a str>, u32> {
    let mut m = HashMap::new();
    if tokens.is_empty() {
        return m;
    }
    if tokens.len() <= 4 {
        m.insert(tokens.to_vec(), 1);
        return m;
    }
    for w in tokens.windows(4) {
        *m.entry(w.to_vec()).or_insert(0) += 1;
    }
    m
}

/// (tp, fp, fn) of a page, normalised to sum 1 (or all 0).
fn aeb_page(gold: &[&str], pred: &[&str]) -> (f64, f64, f64) {
    let g = shingles(gold);
    let p = shingles(pred);
    let mut tp = 0u64;
    let mut fp = 0u64;
    for (k, &pc) in &p {
        let gc = g.get(k).copied().unwrap_or(0);
        tp += u64::from(pc.min(gc));
        fp += u64::from(pc.saturating_sub(gc));
    }
    let mut fn_ = 0u64;
    for (k, &gc) in &g {
        let pc = p.get(k).copied().unwrap_or(0);
        fn_ += u64::from(gc.saturating_sub(pc));
    }
    let s = (tp + fp + fn_) as f64;
    if s > 0.0 { (tp as f64 / s, fp as f64 / s, fn_ as f64 / s) } else { (0.0, 0.0, 0.0) }
}

fn aeb_precision(tp: f64, fp: f64, fn_: f64) -> f64 {
    if fp == 0.0 && fn_ == 0.0 {
        1.0
    } else if tp == 0.0 && fp == 0.0 {
        0.0
    } else {
        tp / (tp + fp)
    }
}

fn aeb_recall(tp: f64, fp: f64, fn_: f64) -> f64 {
    if fp == 0.0 && fn_ == 0.0 {
        1.0
    } else if tp == 0.0 && fn_ == 0.0 {
        0.0
    } else {
        tp / (tp + fn_)
    }
}

fn bow_page(gold: &str, pred: &str) -> (f64, f64, f64) {
    let count = |t: &str| {
        let mut m: HashMap<String, u32> = HashMap::new();
        for w in word_tokens(t) {
            *m.entry(w.to_lowercase()).or_insert(0) += 1;
        }
        m
    };
    let (g, p) = (count(gold), count(pred));
    let ng: u32 = g.values().sum();
    let np: u32 = p.values().sum();
    if ng == 0 && np == 0 {
        return (1.0, 1.0, 1.0);
    }
    if ng == 0 || np == 0 {
        return (0.0, 0.0, 0.0);
    }
    let common: u32 = p.iter().map(|(k, &c)| c.min(g.get(k).copied().unwrap_or(0))).sum();
    let (pr, rc) = (f64::from(common) / f64::from(np), f64::from(common) / f64::from(ng));
    let f1 = if pr + rc > 0.0 { 2.0 * pr * rc / (pr + rc) } else { 0.0 };
    (pr, rc, f1)
}

fn is_segment_marker(w: &str) -> bool {
    let b = w.as_bytes();
    b.len() == 3 && b[0] == b'<' && b[2] == b'>' && matches!(b[1].to_ascii_lowercase(), b'p' | b'h' | b'l')
}

fn cleaneval_words(text: &str) -> Vec<&str> {
    text.split_whitespace().filter(|w| !is_segment_marker(w)).collect()
}

fn cleaneval_page(gold: &str, pred: &str) -> f64 {
    let (g, p) = (cleaneval_words(gold), cleaneval_words(pred));
    if g.is_empty() && p.is_empty() {
        return 1.0;
    }
    let lcs = lcs_length(&g, &p);
    let align = g.len() + p.len() - lcs;
    let dist = g.len() + p.len() - 2 * lcs;
    1.0 - dist as f64 / align as f64
}

fn norm_snippet(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ").to_lowercase()
}

fn snippet_share(snips: Option<&Vec<String>>, pred: &str) -> Option<f64> {
    let snips: Vec<String> = snips?.iter().map(|s| norm_snippet(s)).filter(|s| !s.is_empty()).collect();
    if snips.is_empty() {
        return None;
    }
    Some(snips.iter().filter(|s| pred.contains(s.as_str())).count() as f64 / snips.len() as f64)
}

/// Metrics of one page.
#[derive(Debug, Clone, Default, Serialize)]
pub struct PageMetrics {
    pub empty: bool,
    pub tp: f64,
    pub fp: f64,
    pub fn_: f64,
    pub sh_p: Option<f64>,
    pub sh_r: Option<f64>,
    pub acc: f64,
    pub bow_p: f64,
    pub bow_r: f64,
    pub bow_f1: f64,
    pub cleaneval: f64,
    pub with: Option<f64>,
    pub without: Option<f64>,
    /// Ziegler & Skubacz's length-scaled cosine similarity ([`super::ziegler`]; not in score.py).
    pub ziegler_sim: f64,
    /// Yao & Zuo's LCS precision, recall and F1 over words ([`super::lcs`]; not in score.py).
    pub lcs_p: f64,
    pub lcs_r: f64,
    pub lcs_f1: f64,
}

/// Scores one prediction against its gold, as score.py's `score_page`.
pub fn score_page(gold: &Gold, pred: &str) -> PageMetrics {
    let gold_text = gold_plain_text(gold.text.as_deref().unwrap_or(""));
    let (gt, pt) = (word_tokens(&gold_text), word_tokens(pred));
    let (tp, fp, fn_) = aeb_page(&gt, &pt);
    let (bow_p, bow_r, bow_f1) = bow_page(&gold_text, pred);
    let normp = norm_snippet(pred);
    let (lcs_p, lcs_r, lcs_f1) = lcs_prf(&gt, &pt);
    PageMetrics {
        empty: pt.is_empty(),
        tp,
        fp,
        fn_,
        sh_p: (tp + fp > 0.0).then(|| aeb_precision(tp, fp, fn_)),
        sh_r: (tp + fn_ > 0.0).then(|| aeb_recall(tp, fp, fn_)),
        acc: if gt == pt { 1.0 } else { 0.0 },
        bow_p,
        bow_r,
        bow_f1,
        cleaneval: cleaneval_page(&gold_text, pred),
        with: snippet_share(gold.with.as_ref(), &normp),
        without: snippet_share(gold.without.as_ref(), &normp),
        ziegler_sim: super::ziegler::similarity(&gold_text, pred),
        lcs_p,
        lcs_r,
        lcs_f1,
    }
}

/// Pooled metrics of several pages, as score.py's `aggregate`.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Aggregate {
    pub pages: usize,
    pub empty: usize,
    pub shingle_p: Option<f64>,
    pub shingle_r: Option<f64>,
    pub shingle_f1: Option<f64>,
    pub shingle_acc: Option<f64>,
    pub bow_p: Option<f64>,
    pub bow_r: Option<f64>,
    pub bow_f1: Option<f64>,
    pub cleaneval: Option<f64>,
    pub with: Option<f64>,
    pub with_pages: usize,
    pub without: Option<f64>,
    pub without_pages: usize,
    /// Mean Ziegler & Skubacz similarity over all pages (not in score.py).
    pub ziegler_sim: Option<f64>,
    /// Mean Yao & Zuo LCS precision, recall and F1 over all pages (not in score.py).
    pub lcs_p: Option<f64>,
    pub lcs_r: Option<f64>,
    pub lcs_f1: Option<f64>,
}

fn mean(xs: impl Iterator<Item = f64>) -> Option<f64> {
    let (s, n) = xs.fold((0.0, 0usize), |(s, n), x| (s + x, n + 1));
    (n > 0).then(|| s / n as f64)
}

pub fn aggregate<'a>(pages: impl IntoIterator<Item = &'a PageMetrics>) -> Aggregate {
    let pages: Vec<&PageMetrics> = pages.into_iter().collect();
    let p = mean(pages.iter().filter(|x| x.tp + x.fp > 0.0).map(|x| aeb_precision(x.tp, x.fp, x.fn_)));
    let r = mean(pages.iter().filter(|x| x.tp + x.fn_ > 0.0).map(|x| aeb_recall(x.tp, x.fp, x.fn_)));
    let f1 = match (p, r) {
        (Some(p), Some(r)) => Some(if p + r > 0.0 { 2.0 * p * r / (p + r) } else { 0.0 }),
        _ => None,
    };
    Aggregate {
        pages: pages.len(),
        empty: pages.iter().filter(|x| x.empty).count(),
        shingle_p: p,
        shingle_r: r,
        shingle_f1: f1,
        shingle_acc: mean(pages.iter().map(|x| x.acc)),
        bow_p: mean(pages.iter().map(|x| x.bow_p)),
        bow_r: mean(pages.iter().map(|x| x.bow_r)),
        bow_f1: mean(pages.iter().map(|x| x.bow_f1)),
        cleaneval: mean(pages.iter().map(|x| x.cleaneval)),
        with: mean(pages.iter().filter_map(|x| x.with)),
        with_pages: pages.iter().filter(|x| x.with.is_some()).count(),
        without: mean(pages.iter().filter_map(|x| x.without)),
        without_pages: pages.iter().filter(|x| x.without.is_some()).count(),
        ziegler_sim: mean(pages.iter().map(|x| x.ziegler_sim)),
        lcs_p: mean(pages.iter().map(|x| x.lcs_p)),
        lcs_r: mean(pages.iter().map(|x| x.lcs_r)),
        lcs_f1: mean(pages.iter().map(|x| x.lcs_f1)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gold(t: &str) -> Gold {
        Gold { text: Some(t.to_string()), ..Gold::default() }
    }

    #[test]
    fn values_match_score_py() {
        // Expected values computed with ../shared/peers/score.py.
        let m = score_page(&gold("The quick brown fox jumps over the lazy dog"), "quick brown fox jumps over");
        assert!((m.tp - 2.0 / 6.0).abs() < 1e-9 && (m.fp - 0.0).abs() < 1e-9);
        assert_eq!(m.sh_p, Some(1.0));
        assert!((m.sh_r.unwrap() - 2.0 / 6.0).abs() < 1e-9);
        assert!((m.bow_f1 - 2.0 * 1.0 * (5.0 / 9.0) / (1.0 + 5.0 / 9.0)).abs() < 1e-9);
        assert!((m.cleaneval - 5.0 / 9.0).abs() < 1e-9);
        let empty = score_page(&gold("some gold words here and more"), "");
        assert!(empty.empty && empty.sh_p.is_none());
        assert_eq!(empty.sh_r, Some(0.0));
        let both = score_page(&gold(""), "");
        assert_eq!((both.sh_p, both.sh_r, both.bow_f1, both.cleaneval), (None, None, 1.0, 1.0));
        let short = score_page(&gold("one two"), "one two");
        assert_eq!(short.sh_p, Some(1.0));
        let agg = aggregate([&m, &empty, &short]);
        assert!((agg.shingle_p.unwrap() - 1.0).abs() < 1e-9);
        assert!((agg.shingle_r.unwrap() - (2.0 / 6.0 + 0.0 + 1.0) / 3.0).abs() < 1e-9);
    }

    #[test]
    fn cleaneval_golds_and_snippets() {
        assert_eq!(gold_plain_text("URL: http://x\n<p> Hello <h>World"), "\n Hello \nWorld");
        assert_eq!(gold_plain_text("plain"), "plain");
        let g = Gold {
            text: Some("a b c".into()),
            with: Some(vec!["Big  Park".into(), "".into(), "absent".into()]),
            without: Some(vec!["cookie policy".into()]),
            ..Gold::default()
        };
        let m = score_page(&g, "the big\npark is open");
        assert_eq!(m.with, Some(0.5));
        assert_eq!(m.without, Some(0.0));
        assert_eq!(word_tokens("naïve café_2 東京!"), ["naïve", "café_2", "東京"]);
    }
}
