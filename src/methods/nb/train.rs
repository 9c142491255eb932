//! Learning token scorers from (page, clean text) pairs (Pasternack & Roth 2009, §5.1, §6.2.3).
//!
//! Each training page is tokenized once; its gold text is aligned to the page's words
//! ([`align`]); the article span is the first..last aligned word, every token inside it is
//! "in" and every other token "out", as in the paper. Pages whose gold barely appears in the
//! page, whose gold is tiny, or whose span is mostly tags are skipped and counted by reason.
//! Counts from all pages are summed (order-free, so training is deterministic whatever the
//! thread count) and turned into a [`NbModel`].

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};

use rayon::prelude::*;

use crate::dataset::ManifestEntry;
pub use crate::dataset::sources_of;
use crate::features::{FeatureSet, FeatureStream};
pub use crate::gold::{LabelOptions, SkipReason, align, gold_plain_text, gold_word_keys};
use crate::html::normalize::Normalizer;
use crate::html::{Token, TokenKind, TokenizerOptions, tokenize};
use crate::methods::nb::model::{NbCounts, NbModel, NbParams, TrainingSummary};

/// A tokenized page with its gold span.
pub struct LabelledPage {
    pub page: String,
    pub tokens: Vec<Token>,
    /// First and last token of the article (inclusive).
    pub span: (usize, usize),
    /// Share of gold words aligned.
    pub coverage: f64,
}

/// Tokenizes `html` and labels it from `gold_text`.
pub fn label_page(html: &[u8], gold_text: &str, opts: &LabelOptions) -> Result<LabelledPage, SkipReason> {
    let gold = gold_word_keys(&gold_plain_text(gold_text));
    if gold.len() < opts.min_gold_words {
        return Err(SkipReason::ShortGold);
    }
    let s = tokenize(html, TokenizerOptions::default()).map_err(|_| SkipReason::ParseError)?;
    let mut buf = String::new();
    let mut word_tok = Vec::new();
    let mut page_keys = Vec::new();
    for (i, t) in s.sink.iter().enumerate() {
        if t.kind == TokenKind::Word {
            word_tok.push(i);
            page_keys.push(align::word_key(t.raw(&s.page), t.has_entity, &mut buf));
        }
    }
    let m = align::align(&gold, &page_keys);
    let aligned = m.iter().filter(|x| x.is_some()).count();
    let coverage = aligned as f64 / gold.len() as f64;
    if coverage < opts.min_coverage {
        return Err(SkipReason::LowCoverage);
    }
    let first = m.iter().flatten().min().copied().ok_or(SkipReason::LowCoverage)?;
    let last = m.iter().flatten().max().copied().ok_or(SkipReason::LowCoverage)?;
    let span = (word_tok[first], word_tok[last]);
    let tags = s.sink[span.0..=span.1].iter().filter(|t| t.kind.is_tag()).count();
    if tags as f64 > opts.max_tag_ratio * (span.1 - span.0 + 1) as f64 {
        return Err(SkipReason::TagHeavy);
    }
    Ok(LabelledPage { page: s.page, tokens: s.sink, span, coverage })
}

/// Adds one labelled page's features to `counts`.
pub fn count_page(p: &LabelledPage, features: FeatureSet, norm: &mut Normalizer, counts: &mut NbCounts) {
    let mut fs = FeatureStream::new(features);
    let mut i = 0usize;
    let span = p.span;
    let mut add = |f: &crate::features::TokenFeatures| {
        counts.add(f, i >= span.0 && i <= span.1);
        i += 1;
    };
    for t in &p.tokens {
        fs.push(norm, &p.page, t, &mut add);
    }
    fs.finish(&mut add);
}

/// What training did.
#[derive(Debug, Clone, Default)]
pub struct TrainReport {
    pub pages: usize,
    pub used: usize,
    pub skipped: BTreeMap<String, usize>,
    pub mean_coverage: f64,
}

/// Trains a Naive Bayes model on `entries` with `threads` workers (0 = one per core).
/// `progress` is called with the number of pages done so far.
pub fn train_nb(
    entries: &[ManifestEntry],
    params: NbParams,
    label: &LabelOptions,
    threads: usize,
    progress: &(dyn Fn(usize) + Sync),
) -> Result<(NbModel, TrainReport), rayon::ThreadPoolBuildError> {
    let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build()?;
    let done = AtomicUsize::new(0);
    type Acc = (NbCounts, BTreeMap<&'static str, usize>, f64, usize);
    let (counts, skipped, cov_sum, used) = pool.install(|| {
        entries
            .par_iter()
            .fold(
                || (NbCounts::default(), BTreeMap::new(), 0.0, 0usize, Normalizer::default()),
                |(mut c, mut sk, mut cov, mut used, mut norm), e| {
                    let r = std::fs::read(&e.path)
                        .map_err(|_| SkipReason::Unreadable)
                        .and_then(|html| label_page(&html, e.gold.text.as_deref().unwrap_or(""), label));
                    match r {
                        Ok(p) => {
                            count_page(&p, params.features, &mut norm, &mut c);
                            cov += p.coverage;
                            used += 1;
                        }
                        Err(reason) => *sk.entry(reason.as_str()).or_insert(0) += 1,
                    }
                    progress(done.fetch_add(1, Ordering::Relaxed) + 1);
                    (c, sk, cov, used, norm)
                },
            )
            .map(|(c, sk, cov, used, _)| (c, sk, cov, used))
            .reduce(
                || (NbCounts::default(), BTreeMap::new(), 0.0, 0),
                |a: Acc, b: Acc| {
                    let mut sk = a.1;
                    for (k, v) in b.1 {
                        *sk.entry(k).or_insert(0) += v;
                    }
                    (a.0.merge(b.0), sk, a.2 + b.2, a.3 + b.3)
                },
            )
    });
    let (datasets, split) = sources_of(entries.iter());
    let skipped: BTreeMap<String, usize> = skipped.into_iter().map(|(k, v)| (k.to_string(), v)).collect();
    let summary = TrainingSummary {
        datasets,
        split,
        pages_used: used,
        pages_skipped: skipped.clone(),
        ..TrainingSummary::default()
    };
    let model = NbModel::from_counts(&counts, params, summary);
    let report = TrainReport {
        pages: entries.len(),
        used,
        skipped,
        mean_coverage: if used > 0 { cov_sum / used as f64 } else { 0.0 },
    };
    Ok((model, report))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_span_first_to_last_aligned_word() {
        let html = b"<html><body><nav><a href=/>Home</a> <a href=/n>News</a></nav><h1>Title</h1>\
            <p>The council voted to expand the park on Tuesday.</p><p>Work starts in May, officials said.</p>\
            <div class=c>Comments: great park!</div></body></html>";
        let gold = "The council voted to expand the park on Tuesday.\n\nWork starts in May, officials said.";
        let p = label_page(html, gold, &LabelOptions::default()).unwrap();
        assert!((p.coverage - 1.0).abs() < 1e-9);
        assert_eq!(p.tokens[p.span.0].raw(&p.page), "The");
        assert_eq!(p.tokens[p.span.1].raw(&p.page), "said");
        let short = label_page(html, "Too short", &LabelOptions::default());
        assert_eq!(short.err(), Some(SkipReason::ShortGold));
        let absent =
            label_page(html, "one two three four five six seven eight nine ten eleven", &LabelOptions::default());
        assert_eq!(absent.err(), Some(SkipReason::LowCoverage));
    }
}
