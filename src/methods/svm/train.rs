//! Learning the SVM block classifier of Yao & Zuo (§III.B–C): pages are cut into
//! [`BlockMode::Yao`] blocks and labelled from gold ([`crate::segment::labels`]), the ten
//! id/class tokens are chosen by the Naive Bayes score over *all* training blocks
//! ([`TokenTable`]), features are scaled to [−1, 1], and a C-SVM with an RBF kernel is fitted
//! with `linfa-svm` (an SMO solver after LIBSVM's).
//!
//! Kernel SVM training is O(n²) in memory and time (linfa-svm keeps the dense n × n kernel
//! matrix), so the SVM sees at most [`SvmTrainOptions::max_blocks`] blocks, a seeded uniform
//! sample (which keeps the Content share in expectation); the token choice and the scaler use
//! every block. C and γ default to LIBSVM's defaults, C = 1 and γ = 1/#features = 1/18, since
//! the paper "just use[s] default parameters of C and γ" after finding tuning negligible.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use linfa::prelude::*;
use ndarray::{Array1, Array2};
use rayon::prelude::*;

use crate::dataset::ManifestEntry;
use crate::features::class_word_hash;
use crate::gold::{LabelOptions, SkipReason};
use crate::html::{TokenKind, TokenizerOptions, tokenize};
use crate::methods::svm::features::{self as yao, BlockVector, N_FEATURES, N_TOKENS, TokenTable, YaoFeatureConfig};
use crate::methods::svm::scorer::{Scaler, SvmHeader, SvmModel, SvmTrainingSummary};
use crate::segment::BlockMode;
use crate::segment::labels::label_blocks_with;

/// Training options, with their defaults.
#[derive(Debug, Clone, Copy)]
pub struct SvmTrainOptions {
    pub features: YaoFeatureConfig,
    /// Penalty C (default 1, LIBSVM's).
    pub c: f64,
    /// RBF width γ (default 1/18, LIBSVM's 1/#features).
    pub gamma: f64,
    /// Blocks the SVM is trained on at most (default 8000: the dense kernel matrix is then
    /// 8000² × 8 bytes = 512 MB, and training takes about a minute on one core).
    pub max_blocks: usize,
    /// Seed of the block sample (default 1).
    pub seed: u64,
    /// SMO stopping tolerance (default 1e-3, LIBSVM's).
    pub tolerance: f64,
    /// Share of a block's words aligned to gold for it to be Content.
    pub label_threshold: f64,
    pub label: LabelOptions,
    /// Worker threads for reading and labelling pages (0 = one per core).
    pub threads: usize,
    /// Which of the paper's feature sets to use (§IV.C; default all 18).
    pub feature_set: FeatureSet,
}

/// The feature combinations of §IV.C. A left-out feature is set to 0 in training, so the
/// scaler maps it to 0 for every block at prediction as well: the model needs no other switch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FeatureSet {
    /// The seven text features only.
    Text,
    /// Text features and the relative position.
    TextPosition,
    /// Text, position and the ten id/class tokens (the paper's final model).
    #[default]
    All,
}

impl FeatureSet {
    pub fn name(self) -> &'static str {
        match self {
            FeatureSet::Text => "text",
            FeatureSet::TextPosition => "text-position",
            FeatureSet::All => "all",
        }
    }

    /// Parses `text`, `text-position` or `all`.
    pub fn parse(s: &str) -> Option<FeatureSet> {
        [FeatureSet::Text, FeatureSet::TextPosition, FeatureSet::All].into_iter().find(|f| f.name() == s)
    }

    /// Number of leading features kept.
    fn kept(self) -> usize {
        match self {
            FeatureSet::Text => yao::N_DENSE - 1,
            FeatureSet::TextPosition => yao::N_DENSE,
            FeatureSet::All => N_FEATURES,
        }
    }
}

impl Default for SvmTrainOptions {
    fn default() -> Self {
        SvmTrainOptions {
            features: YaoFeatureConfig::default(),
            c: 1.0,
            gamma: 1.0 / N_FEATURES as f64,
            max_blocks: 8000,
            seed: 1,
            tolerance: 1e-3,
            label_threshold: 0.3,
            label: LabelOptions::default(),
            threads: 0,
            feature_set: FeatureSet::All,
        }
    }
}

/// Why SVM training failed.
#[derive(Debug, thiserror::Error)]
pub enum SvmTrainError {
    #[error("cannot start worker threads: {0}")]
    Threads(#[from] rayon::ThreadPoolBuildError),
    #[error("no training blocks of both labels (content {content}, other {other})")]
    OneClass { content: usize, other: usize },
    #[error("invalid SVM options: {0}")]
    Options(String),
    #[error("svm solver: {0}")]
    Solver(String),
}

/// One labelled page, reduced to what training needs.
struct PageBlocks {
    /// Dense features (token slots still 0).
    vectors: Vec<BlockVector>,
    ancestor_words: Vec<Vec<u64>>,
    labels: Vec<bool>,
}

/// Labels and featurises one page (token features are filled in once the tokens are chosen).
fn prepare_page(html: &[u8], gold: &str, opts: &SvmTrainOptions) -> Result<PageBlocks, SkipReason> {
    let l = label_blocks_with(html, gold, opts.label_threshold, &opts.label, BlockMode::Yao)?;
    let mut counts = Vec::new();
    yao::block_counts(&l.page, &l.tokens, &l.blocks, &mut String::new(), &mut counts);
    let mut vectors = Vec::new();
    yao::page_vectors(&counts, &l.blocks, &[0; N_TOKENS], &opts.features, &mut vectors);
    let ancestor_words = l.blocks.into_iter().map(|b| b.ancestor_words).collect();
    Ok(PageBlocks { vectors, ancestor_words, labels: l.labels })
}

/// Readable names of the chosen token hashes, for the model header and the training report:
/// any alphanumeric run of a start tag whose [`class_word_hash`] is a chosen token names it.
/// Looks at up to `max_pages` pages spread over `entries`; a token not met stays `?`.
fn token_names(entries: &[ManifestEntry], tokens: &[u64; N_TOKENS], max_pages: usize) -> Vec<String> {
    let mut names = vec!["?".to_string(); N_TOKENS];
    let step = entries.len().div_ceil(max_pages.max(1)).max(1);
    for e in entries.iter().step_by(step) {
        if names.iter().all(|n| n != "?") {
            break;
        }
        let Ok(html) = std::fs::read(&e.path) else { continue };
        let Ok(s) = tokenize(&html, TokenizerOptions::default()) else { continue };
        for t in s.sink.iter().filter(|t| t.kind == TokenKind::StartTag) {
            for w in t.raw(&s.page).as_bytes().split(|b| !b.is_ascii_alphanumeric()).filter(|w| w.len() >= 3) {
                let h = class_word_hash(w);
                if let Some(i) = tokens.iter().position(|&k| k == h && k != 0)
                    && names[i] == "?"
                {
                    names[i] = String::from_utf8_lossy(w).to_ascii_lowercase();
                }
            }
        }
    }
    names
}

/// SplitMix64, as the PSO learner: a seed names one sample forever.
fn splitmix(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// `k` of `0..n` chosen uniformly (partial Fisher–Yates), returned in increasing order.
pub fn sample_indices(n: usize, k: usize, seed: u64) -> Vec<usize> {
    if k >= n {
        return (0..n).collect();
    }
    let mut idx: Vec<usize> = (0..n).collect();
    let mut s = seed;
    for i in 0..k {
        let j = i + (splitmix(&mut s) % (n - i) as u64) as usize;
        idx.swap(i, j);
    }
    idx.truncate(k);
    idx.sort_unstable();
    idx
}

/// The fitted SVM as plain numbers: support vectors (scaled), coefficients αᵢyᵢ and ρ.
pub struct FittedSvm {
    pub support: Vec<BlockVector>,
    pub coef: Vec<f64>,
    pub rho: f64,
}

/// Fits a C-SVM with an RBF kernel exp(−γ‖x − x′‖²) on scaled rows with `linfa-svm`.
pub fn fit_svm(
    rows: &[BlockVector],
    labels: &[bool],
    c: f64,
    gamma: f64,
    tol: f64,
) -> Result<FittedSvm, SvmTrainError> {
    let content = labels.iter().filter(|&&l| l).count();
    if content == 0 || content == labels.len() {
        return Err(SvmTrainError::OneClass { content, other: labels.len() - content });
    }
    let flat: Vec<f64> = rows.iter().flat_map(|r| r.iter().copied()).collect();
    let x = Array2::from_shape_vec((rows.len(), N_FEATURES), flat).map_err(|e| SvmTrainError::Solver(e.to_string()))?;
    let y = Array1::from(labels.to_vec());
    let data = Dataset::new(x, y);
    // linfa's Gaussian kernel is exp(−‖x − x′‖² / eps), so eps = 1/γ.
    let params = linfa_svm::Svm::<f64, bool>::params()
        .pos_neg_weights(c, c)
        .gaussian_kernel(1.0 / gamma)
        .eps(tol)
        // Shrinking must stay off: linfa-svm 0.8.1 swaps variables when it shrinks and maps
        // the final αs back through the permutation the wrong way round (`alpha[active_set[i]]`),
        // which scrambles which training row each α belongs to (and its shrinking step can
        // underflow a `usize`: a panic in debug builds). Without shrinking no swap happens; it
        // only costs solver time. `alphas_stay_aligned_with_their_rows_on_a_long_solve` fails
        // with shrinking on.
        .shrinking(false);
    let svm = params.fit(&data).map_err(|e| SvmTrainError::Solver(e.to_string()))?;
    // `alpha` holds αᵢ·yᵢ for every training row, in row order; the support vectors are the
    // rows with a non-zero weight (linfa's own cut-off, 100 ε).
    let cut = 100.0 * f64::EPSILON;
    let mut support = Vec::new();
    let mut coef = Vec::new();
    for (r, &a) in rows.iter().zip(&svm.alpha) {
        if a.abs() > cut {
            support.push(*r);
            coef.push(a);
        }
    }
    Ok(FittedSvm { support, coef, rho: svm.rho })
}

/// What training did besides the model.
#[derive(Debug, Clone)]
pub struct SvmTrainReport {
    pub pages: usize,
    pub skipped: Vec<(String, usize)>,
    /// Seconds spent reading and labelling pages, and in the solver.
    pub prepare_seconds: f64,
    pub solver_seconds: f64,
}

/// Learns an SVM block classifier from `entries`. `progress` is called with pages prepared.
pub fn train_svm(
    entries: &[ManifestEntry],
    opts: &SvmTrainOptions,
    progress: &(dyn Fn(usize) + Sync),
) -> Result<(SvmModel, SvmTrainReport), SvmTrainError> {
    if !(opts.c > 0.0 && opts.c.is_finite() && opts.gamma > 0.0 && opts.gamma.is_finite() && opts.tolerance > 0.0) {
        return Err(SvmTrainError::Options("C, gamma and tolerance must be positive and finite".to_string()));
    }
    if opts.features.positions == 0 || opts.features.line_chars == 0 || opts.max_blocks < 2 {
        return Err(SvmTrainError::Options("positions, line chars must be positive, max blocks ≥ 2".to_string()));
    }
    let start = Instant::now();
    let pool = rayon::ThreadPoolBuilder::new().num_threads(opts.threads).build()?;
    let done = AtomicUsize::new(0);
    let prepared: Vec<Result<PageBlocks, SkipReason>> = pool.install(|| {
        entries
            .par_iter()
            .map(|e| {
                let r = match std::fs::read(&e.path) {
                    Ok(html) => prepare_page(&html, e.gold.text.as_deref().unwrap_or(""), opts),
                    Err(_) => Err(SkipReason::Unreadable),
                };
                progress(done.fetch_add(1, Ordering::Relaxed) + 1);
                r
            })
            .collect()
    });
    let mut skipped: std::collections::BTreeMap<&'static str, usize> = Default::default();
    let mut pages = Vec::new();
    for r in prepared {
        match r {
            Ok(p) => pages.push(p),
            Err(reason) => *skipped.entry(reason.as_str()).or_default() += 1,
        }
    }
    // The ten tokens, by the Naive Bayes score over every training block.
    let mut table = TokenTable::default();
    for p in &pages {
        for (w, &l) in p.ancestor_words.iter().zip(&p.labels) {
            table.add_block(w, l);
        }
    }
    let top = table.top_noise_tokens(N_TOKENS);
    let mut tokens = [0u64; N_TOKENS];
    for (t, (k, _)) in tokens.iter_mut().zip(&top) {
        *t = *k;
    }
    let mut rows: Vec<BlockVector> = Vec::new();
    let mut labels: Vec<bool> = Vec::new();
    for p in &pages {
        for ((v, w), &l) in p.vectors.iter().zip(&p.ancestor_words).zip(&p.labels) {
            let mut v = *v;
            for (slot, t) in v[yao::N_DENSE..].iter_mut().zip(&tokens) {
                *slot = f64::from(u8::from(*t != 0 && w.contains(t)));
            }
            v[opts.feature_set.kept()..].fill(0.0);
            rows.push(v);
            labels.push(l);
        }
    }
    drop(pages);
    let scaler = Scaler::fit(&rows);
    for r in &mut rows {
        scaler.apply(r);
    }
    let pick = sample_indices(rows.len(), opts.max_blocks, opts.seed);
    let sample: Vec<BlockVector> = pick.iter().map(|&i| rows[i]).collect();
    let sample_labels: Vec<bool> = pick.iter().map(|&i| labels[i]).collect();
    let prepare_seconds = start.elapsed().as_secs_f64();
    let t = Instant::now();
    let fitted = fit_svm(&sample, &sample_labels, opts.c, opts.gamma, opts.tolerance)?;
    let solver_seconds = t.elapsed().as_secs_f64();
    let (datasets, split) = crate::dataset::sources_of(entries.iter());
    let mut model = SvmModel {
        header: SvmHeader::new(
            opts.features,
            opts.c,
            opts.gamma,
            fitted.coef.len(),
            SvmTrainingSummary {
                datasets,
                split,
                pages_used: entries.len() - skipped.values().sum::<usize>(),
                pages_skipped: skipped.values().sum(),
                blocks: rows.len(),
                content_blocks: labels.iter().filter(|&&l| l).count(),
                sample_blocks: sample.len(),
                sample_content_blocks: sample_labels.iter().filter(|&&l| l).count(),
                sample_seed: opts.seed,
                label_threshold: opts.label_threshold,
                feature_set: opts.feature_set.name().to_string(),
                token_names: token_names(entries, &tokens, 200),
                token_scores: top.iter().map(|&(_, s)| s).collect(),
                sample_accuracy: 0.0,
                seconds: 0.0,
            },
        ),
        scaler,
        tokens,
        gamma: opts.gamma,
        rho: fitted.rho,
        support: fitted.support,
        coef: fitted.coef,
    };
    let correct: usize = pool
        .install(|| sample.par_iter().zip(&sample_labels).filter(|(x, l)| (model.decision(x) > 0.0) == **l).count());
    model.header.training.sample_accuracy = correct as f64 / sample.len().max(1) as f64;
    model.header.training.seconds = start.elapsed().as_secs_f64();
    let report = SvmTrainReport {
        pages: entries.len(),
        skipped: skipped.into_iter().map(|(k, v)| (k.to_string(), v)).collect(),
        prepare_seconds,
        solver_seconds,
    };
    Ok((model, report))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sample_is_seeded_sorted_and_complete_when_small() {
        let a = sample_indices(100, 10, 1);
        assert_eq!(a.len(), 10);
        assert!(a.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(a, sample_indices(100, 10, 1));
        assert_ne!(a, sample_indices(100, 10, 2));
        assert_eq!(sample_indices(5, 10, 1), [0, 1, 2, 3, 4]);
    }

    #[test]
    fn svm_separates_a_separable_toy_set() {
        // Two clusters on the first two axes: Content near (0.5, 0.5), other near (−0.5, −0.5).
        let mut rows = Vec::new();
        let mut labels = Vec::new();
        for i in 0..20 {
            let d = f64::from(i % 5) * 0.05;
            let mut a = [0.0; N_FEATURES];
            a[0] = 0.5 + d;
            a[1] = 0.5 - d;
            rows.push(a);
            labels.push(true);
            let mut b = [0.0; N_FEATURES];
            b[0] = -0.5 - d;
            b[1] = -0.5 + d;
            rows.push(b);
            labels.push(false);
        }
        let f = fit_svm(&rows, &labels, 1.0, 1.0 / 18.0, 1e-3).unwrap();
        assert!(!f.support.is_empty() && f.support.len() <= rows.len());
        // Σ αᵢyᵢ = 0 (the dual's equality constraint) and every coefficient within [−C, C].
        assert!(f.coef.iter().sum::<f64>().abs() < 1e-6, "{:?}", f.coef);
        assert!(f.coef.iter().all(|c| c.abs() <= 1.0 + 1e-9));
        let m = SvmModel {
            header: SvmHeader::new(YaoFeatureConfig::default(), 1.0, 1.0 / 18.0, f.coef.len(), Default::default()),
            scaler: Scaler { lo: [0.0; N_FEATURES], hi: [0.0; N_FEATURES] },
            tokens: [0; N_TOKENS],
            gamma: 1.0 / 18.0,
            rho: f.rho,
            support: f.support,
            coef: f.coef,
        };
        for (x, &l) in rows.iter().zip(&labels) {
            assert_eq!(m.decision(x) > 0.0, l, "{x:?}");
        }
        let mut far = [0.0; N_FEATURES];
        far[0] = 1.0;
        far[1] = 1.0;
        assert!(m.decision(&far) > 0.0);
        far[0] = -1.0;
        far[1] = -1.0;
        assert!(m.decision(&far) < 0.0);
        assert!(matches!(fit_svm(&rows[..1], &labels[..1], 1.0, 1.0, 1e-3), Err(SvmTrainError::OneClass { .. })));
    }

    #[test]
    fn alphas_stay_aligned_with_their_rows_on_a_long_solve() {
        // A disc inside a square: not linearly separable, and enough rows and iterations for
        // linfa's shrinking to permute variables if it were on (it scrambled α ↔ row).
        let mut s = 7u64;
        let mut unit = || (splitmix(&mut s) >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0;
        let (mut rows, mut labels) = (Vec::new(), Vec::new());
        for i in 0..1500 {
            let mut r = [0.0; N_FEATURES];
            r[0] = unit();
            r[1] = unit();
            // Every 20th label flipped: bounded αs at C, which shrinking removes first.
            labels.push((r[0] * r[0] + r[1] * r[1] < 0.4) != (i % 20 == 0));
            rows.push(r);
        }
        let f = fit_svm(&rows, &labels, 10.0, 2.0, 1e-3).unwrap();
        let m = SvmModel {
            header: SvmHeader::new(YaoFeatureConfig::default(), 10.0, 2.0, f.coef.len(), Default::default()),
            scaler: Scaler { lo: [0.0; N_FEATURES], hi: [0.0; N_FEATURES] },
            tokens: [0; N_TOKENS],
            gamma: 2.0,
            rho: f.rho,
            support: f.support,
            coef: f.coef,
        };
        let correct = rows.iter().zip(&labels).filter(|(x, l)| (m.decision(x) > 0.0) == **l).count();
        assert!(correct >= 1350, "{correct} of 1500 training rows");
    }
}
