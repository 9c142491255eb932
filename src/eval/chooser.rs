//! Fitting and measuring the span chooser of [`crate::scoring::chooser`] (`pipeline chooser`).
//!
//! Every page of the training manifests is extracted once with its candidates
//! ([`crate::extract::PageExtraction::end_with_candidates`]); each candidate's text is scored
//! against the gold as score.py scores a prediction, and a ridge regression fits the
//! candidate's shingle F1 from its features. The margin by which a candidate must beat the
//! current choice is chosen by leave-one-dataset-out over the dev manifests, as every default.

use std::collections::BTreeMap;

use rayon::prelude::*;

use super::metrics::{PageMetrics, aggregate, score_page};
use crate::dataset::ManifestEntry;
use crate::extract::candidates::N_FEATURES;
use crate::extract::{ExtractOptions, Extractor};
use crate::methods::nb::model::{NbHeader, NbScorer};
use crate::methods::nb::train::{LabelOptions, train_nb};
use crate::scoring::chooser::{self, Chooser, N_INPUTS, Node};

/// One page's candidates: features and metrics, the current choice first.
#[derive(Debug, Clone)]
pub struct PageCandidates {
    pub dataset: String,
    /// The page's manifest id (for `pipeline chooser --explain`).
    pub id: String,
    pub features: Vec<[f64; N_FEATURES]>,
    pub metrics: Vec<PageMetrics>,
}

/// The candidates of every readable page of `entries` (unreadable or unextractable pages and
/// pages without candidates are left out), with `threads` workers (0 = one per core).
pub fn collect(
    extractor: &Extractor<'_>,
    entries: &[ManifestEntry],
    threads: usize,
) -> Result<Vec<PageCandidates>, rayon::ThreadPoolBuildError> {
    let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build()?;
    Ok(pool.install(|| {
        entries
            .par_iter()
            .filter_map(|e| {
                let bytes = std::fs::read(&e.path).ok()?;
                let mut page = extractor.page_with_size_hint(None, bytes.len());
                page.write(&bytes).ok()?;
                let (x, mut cands) = page.end_with_candidates().ok()?;
                if cands.is_empty() {
                    return None;
                }
                // The current choice as the extractor outputs it (with its extra spans).
                cands[0].1 = x.text;
                let (features, metrics) = cands.iter().map(|(c, text)| (c.features, score_page(&e.gold, text))).unzip();
                Some(PageCandidates { dataset: e.dataset_name().to_string(), id: e.id.clone(), features, metrics })
            })
            .collect()
    }))
}

/// Errors of a cross-fitted collection.
#[derive(Debug, thiserror::Error)]
pub enum CrossFitError {
    #[error("cannot start the worker threads: {0}")]
    Threads(#[from] rayon::ThreadPoolBuildError),
    #[error("cross-fitting needs at least 2 folds and as many training pages")]
    Folds,
}

/// The candidates of `entries` as a model of `recipe` that never learned from them sees them
/// (stacking, Wolpert 1992): the pages are cut into `folds` folds (page `i` in fold `i %
/// folds`, so the cut follows the manifest), a Naive Bayes model is fitted with the same
/// recipe on the other folds, and each fold's candidates come from its model. Without this the
/// chooser would learn from pages the scorer has memorised, where its first choice is right
/// far more often than on pages it never saw, and would learn never to switch.
pub fn collect_cross_fitted(
    recipe: &NbHeader,
    options: &ExtractOptions,
    entries: &[ManifestEntry],
    folds: usize,
    threads: usize,
) -> Result<Vec<PageCandidates>, CrossFitError> {
    if folds < 2 || entries.len() < folds {
        return Err(CrossFitError::Folds);
    }
    let mut out = Vec::with_capacity(entries.len());
    for k in 0..folds {
        let fold = |held: bool| -> Vec<ManifestEntry> {
            entries.iter().enumerate().filter(|(i, _)| (i % folds == k) == held).map(|(_, e)| e.clone()).collect()
        };
        let (held, rest) = (fold(true), fold(false));
        let (model, _) = train_nb(&rest, recipe.params(), &LabelOptions::default(), threads, &|_| {})?;
        let scorer = NbScorer::new(model, format!("fold {k}"));
        let extractor = Extractor::new(&scorer, options.clone());
        out.extend(collect(&extractor, &held, threads)?);
    }
    Ok(out)
}

/// Margins [`fit_for_model`] tries.
pub const MODEL_MARGINS: [f64; 4] = [0.05, 0.1, 0.2, 0.3];

/// A chooser gains at least this pooled F1 in cross-validation, or its margin is 0 (off).
pub const MIN_MARGIN_GAIN: f64 = 0.001;

/// A chooser for the choices of `model`, which learned from `entries`: their candidates
/// cross-fitted in `folds` folds ([`collect_cross_fitted`]), the default boosting
/// ([`BoostOptions`]). Its margin is chosen among [`MODEL_MARGINS`] by cross-validation over
/// the same folds (trees fitted on the other folds' candidates choose on each fold's pages),
/// and is 0 (off) unless it gains [`MIN_MARGIN_GAIN`] there. What `pipeline train --chooser`
/// stores in the model file; the second value says how the margin was chosen.
pub fn fit_for_model(
    model: &NbHeader,
    options: &ExtractOptions,
    entries: &[ManifestEntry],
    folds: usize,
    threads: usize,
    trained_on: &str,
) -> Result<(Chooser, String), CrossFitError> {
    let options = ExtractOptions { chooser_margin: Some(0.0), keep_scores: true, ..options.clone() };
    let pages = collect_cross_fitted(model, &options, entries, folds, threads)?;
    let mut chosen: Vec<Vec<&PageMetrics>> = vec![Vec::with_capacity(pages.len()); MODEL_MARGINS.len()];
    for k in 0..folds {
        let rest: Vec<PageCandidates> =
            pages.iter().enumerate().filter(|(i, _)| i % folds != k).map(|(_, p)| p.clone()).collect();
        let c = fit(&rest, &BoostOptions::default(), "");
        for p in pages.iter().enumerate().filter(|(i, _)| i % folds == k).map(|(_, p)| p) {
            for (to, &m) in chosen.iter_mut().zip(&MODEL_MARGINS) {
                to.push(&p.metrics[c.choose(&p.features, m).unwrap_or(0)]);
            }
        }
    }
    let f1 = |m: Vec<&PageMetrics>| aggregate(m).shingle_f1.unwrap_or(0.0);
    let current = f1(pages.iter().map(|p| &p.metrics[0]).collect());
    let by_margin: Vec<f64> = chosen.into_iter().map(f1).collect();
    let (best, best_f1) =
        by_margin.iter().enumerate().fold((0, f64::MIN), |a, (i, &f)| if f > a.1 { (i, f) } else { a });
    let margin = if best_f1 >= current + MIN_MARGIN_GAIN { MODEL_MARGINS[best] } else { 0.0 };
    let tried: Vec<String> = MODEL_MARGINS.iter().zip(&by_margin).map(|(m, f)| format!("{m}: {f:.4}")).collect();
    let report = format!(
        "chooser margin {margin} ({folds}-fold cross-validation, pooled shingle F1: without {current:.4}; {})",
        tried.join(", ")
    );
    let trained_on = format!("{trained_on} (cross-fitted in {folds} folds)");
    let mut chooser = fit(&pages, &BoostOptions::default(), &trained_on);
    chooser.margin = Some(margin);
    Ok((chooser, report))
}

/// A page-level shingle F1, as the pooled figure is built (from the page's P and R).
pub fn page_f1(m: &PageMetrics) -> f64 {
    aggregate(std::iter::once(m)).shingle_f1.unwrap_or(0.0)
}

/// Settings of the boosting.
#[derive(Debug, Clone, Copy)]
pub struct BoostOptions {
    pub rounds: usize,
    pub depth: usize,
    pub learning_rate: f64,
    /// A leaf holds at least this many candidates.
    pub min_leaf: usize,
}

impl Default for BoostOptions {
    fn default() -> Self {
        // Stumps: an additive model of the inputs. On 1,087 training pages deeper trees fit
        // the draw as much as the pages: over three cross-fitting partitions, `pipeline
        // tune`'s mean of the left-out folds was 0.9154–0.9156 with 600 stumps against
        // 0.9147–0.9159 with 300 trees of depth 3 (models/README.md, "Span chooser", session 34).
        BoostOptions { rounds: 600, depth: 1, learning_rate: 0.05, min_leaf: 20 }
    }
}

/// Thresholds tried per feature: quantiles of its values.
const BINS: usize = 32;

/// Gradient-boosted regression trees (squared loss; Friedman 2001) of each candidate's gain
/// over the current choice (F1 difference) on the difference of their features: the
/// chooser's decision is exactly this comparison ([`Chooser::choose`]).
pub fn fit(pages: &[PageCandidates], o: &BoostOptions, trained_on: &str) -> Chooser {
    let mut rows: Vec<[f64; N_INPUTS]> = Vec::new();
    let mut y: Vec<f64> = Vec::new();
    for p in pages {
        let (x0, y0) = (&p.features[0], page_f1(&p.metrics[0]));
        for (x, m) in p.features.iter().zip(&p.metrics).skip(1) {
            rows.push(chooser::inputs(x0, x));
            y.push(page_f1(m) - y0);
        }
    }
    let trained_on = format!(
        "{trained_on}: {} pages, {} candidate pairs; {} trees of depth {}, learning rate {}, leaves of {} or more",
        pages.len(),
        rows.len(),
        o.rounds,
        o.depth,
        o.learning_rate,
        o.min_leaf
    );
    if rows.is_empty() {
        return Chooser::new(0.0, Vec::new(), trained_on);
    }
    // Candidate thresholds per feature: distinct quantiles.
    let thresholds: Vec<Vec<f64>> = (0..N_INPUTS)
        .map(|f| {
            let mut v: Vec<f64> = rows.iter().map(|r| r[f]).collect();
            v.sort_by(f64::total_cmp);
            let mut t: Vec<f64> = (1..BINS).map(|k| v[k * (v.len() - 1) / BINS]).collect();
            t.dedup();
            t
        })
        .collect();
    let base = y.iter().sum::<f64>() / y.len() as f64;
    let mut pred = vec![base; y.len()];
    let mut trees = Vec::with_capacity(o.rounds);
    for _ in 0..o.rounds {
        let resid: Vec<f64> = y.iter().zip(&pred).map(|(y, p)| y - p).collect();
        let mut tree = Vec::new();
        let all: Vec<usize> = (0..rows.len()).collect();
        grow(&rows, &resid, &thresholds, all, o, 0, &mut tree);
        for (p, r) in pred.iter_mut().zip(&rows) {
            *p += chooser::leaf(&tree, r);
        }
        trees.push(tree);
    }
    Chooser::new(base, trees, trained_on)
}

/// Grows the node for `idx` at `depth` into `tree` (nodes in pre-order, so children come
/// after their parent); returns its index.
fn grow(
    rows: &[[f64; N_INPUTS]],
    resid: &[f64],
    thresholds: &[Vec<f64>],
    idx: Vec<usize>,
    o: &BoostOptions,
    depth: usize,
    tree: &mut Vec<Node>,
) -> usize {
    let at = tree.len();
    let n = idx.len() as f64;
    let sum: f64 = idx.iter().map(|&i| resid[i]).sum();
    tree.push(Node { feature: None, threshold: 0.0, left: 0, right: 0, value: o.learning_rate * sum / n.max(1.0) });
    if depth >= o.depth || idx.len() < 2 * o.min_leaf {
        return at;
    }
    // The split that most reduces the squared error: maximise sumL²/nL + sumR²/nR.
    let mut best: Option<(f64, usize, f64)> = None;
    for (f, ts) in thresholds.iter().enumerate() {
        let mut sums = vec![0.0; ts.len() + 1];
        let mut counts = vec![0usize; ts.len() + 1];
        for &i in &idx {
            let b = ts.partition_point(|&t| t < rows[i][f]);
            sums[b] += resid[i];
            counts[b] += 1;
        }
        let (mut sl, mut nl) = (0.0, 0usize);
        for (k, &t) in ts.iter().enumerate() {
            sl += sums[k];
            nl += counts[k];
            let nr = idx.len() - nl;
            if nl < o.min_leaf || nr < o.min_leaf {
                continue;
            }
            let sr = sum - sl;
            let gain = sl * sl / nl as f64 + sr * sr / nr as f64 - sum * sum / n;
            if best.is_none_or(|b| gain > b.0) {
                best = Some((gain, f, t));
            }
        }
    }
    let Some((_, f, t)) = best.filter(|b| b.0 > 1e-12) else { return at };
    let (l, r): (Vec<usize>, Vec<usize>) = idx.into_iter().partition(|&i| rows[i][f] <= t);
    let left = grow(rows, resid, thresholds, l, o, depth + 1, tree);
    let right = grow(rows, resid, thresholds, r, o, depth + 1, tree);
    tree[at] = Node { feature: Some(f), threshold: t, left, right, value: 0.0 };
    at
}

/// Pooled shingle F1 per dataset when `chooser` picks with `margin` (`None`: the current
/// choice everywhere).
pub fn scores(pages: &[PageCandidates], chooser: Option<(&Chooser, f64)>) -> BTreeMap<String, f64> {
    let mut by: BTreeMap<String, Vec<&PageMetrics>> = BTreeMap::new();
    for p in pages {
        let i = chosen(p, chooser);
        by.entry(p.dataset.clone()).or_default().push(&p.metrics[i]);
    }
    by.into_iter().map(|(d, m)| (d, aggregate(m).shingle_f1.unwrap_or(0.0))).collect()
}

/// The candidate `chooser` takes on a page (0, the current choice, without one).
pub fn chosen(p: &PageCandidates, chooser: Option<(&Chooser, f64)>) -> usize {
    chooser.and_then(|(c, margin)| c.choose(&p.features, margin)).unwrap_or(0)
}

/// Pooled shingle F1 per dataset of the oracle: each page's best candidate.
pub fn oracle(pages: &[PageCandidates]) -> BTreeMap<String, f64> {
    let mut by: BTreeMap<String, Vec<&PageMetrics>> = BTreeMap::new();
    for p in pages {
        by.entry(p.dataset.clone()).or_default().push(best_candidate(p));
    }
    by.into_iter().map(|(d, m)| (d, aggregate(m).shingle_f1.unwrap_or(0.0))).collect()
}

/// Pages below F1 0.5 per dataset under a choice.
pub fn pages_below_half(pages: &[PageCandidates], chooser: Option<(&Chooser, f64)>) -> BTreeMap<String, usize> {
    let mut by: BTreeMap<String, usize> = BTreeMap::new();
    for p in pages {
        let i = chosen(p, chooser);
        *by.entry(p.dataset.clone()).or_default() += usize::from(page_f1(&p.metrics[i]) < 0.5);
    }
    by
}

/// Pages below F1 0.5 per dataset even for the oracle: no candidate of theirs reaches 0.5, so
/// no choice among them can mend them.
pub fn oracle_below_half(pages: &[PageCandidates]) -> BTreeMap<String, usize> {
    let mut by: BTreeMap<String, usize> = BTreeMap::new();
    for p in pages {
        *by.entry(p.dataset.clone()).or_default() += usize::from(page_f1(best_candidate(p)) < 0.5);
    }
    by
}

/// The metrics of a page's best candidate (the oracle's choice).
fn best_candidate(p: &PageCandidates) -> &PageMetrics {
    p.metrics.iter().max_by(|a, b| page_f1(a).total_cmp(&page_f1(b))).unwrap_or(&p.metrics[0])
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Pages whose second candidate has features 1 and 2 set to (a, b) and renders the whole
    /// gold text when `f1(a, b)` is above 0.5, nothing otherwise (the current choice: nothing).
    fn pages_of(f1: impl Fn(f64, f64) -> f64) -> Vec<PageCandidates> {
        let mut pages = Vec::new();
        for k in 0..400 {
            let (a, b) = ((k % 2) as f64, ((k / 2) % 2) as f64);
            let mut x0 = [0.0; N_FEATURES];
            x0[0] = 1.0;
            let mut x1 = x0;
            (x1[1], x1[2]) = (a, b);
            let f1 = f1(a, b);
            let m = |f: f64| {
                score_page(
                    &crate::dataset::Gold { text: Some("one two three four five six".into()), ..Default::default() },
                    if f > 0.5 { "one two three four five six" } else { "" },
                )
            };
            pages.push(PageCandidates {
                dataset: "t".into(),
                id: String::new(),
                features: vec![x0, x1],
                metrics: vec![m(0.1), m(f1)],
            });
        }
        pages
    }

    /// A gain that only trees deeper than a stump can learn: candidates help when both of two
    /// features rose.
    #[test]
    fn boosting_learns_an_interaction() {
        let pages = pages_of(|a, b| if a * b > 0.0 { 0.9 } else { 0.1 });
        let c = fit(&pages, &BoostOptions { min_leaf: 5, depth: 2, ..BoostOptions::default() }, "test");
        let mut x0 = [0.0; N_FEATURES];
        x0[0] = 1.0;
        let mut both = x0;
        (both[1], both[2]) = (1.0, 1.0);
        let mut one = x0;
        one[1] = 1.0;
        assert!(c.gain(&x0, &both) > 0.5, "{}", c.gain(&x0, &both));
        assert!(c.gain(&x0, &one) < 0.2, "{}", c.gain(&x0, &one));
        let json = serde_json::to_string(&c).unwrap();
        assert_eq!(Chooser::from_json(&json).unwrap(), c);
    }

    /// The default, stumps, learns a gain that either feature brings on its own (an additive
    /// model), and the trees it writes are one split each.
    #[test]
    fn stumps_learn_an_additive_gain() {
        let pages = pages_of(|a, b| if a + b > 0.0 { 0.9 } else { 0.1 });
        let c = fit(&pages, &BoostOptions { min_leaf: 5, ..BoostOptions::default() }, "test");
        assert!(c.trees.iter().all(|t| t.len() <= 3), "one split a tree");
        let mut x0 = [0.0; N_FEATURES];
        x0[0] = 1.0;
        for (a, b) in [(1.0, 0.0), (0.0, 1.0), (1.0, 1.0)] {
            let mut x = x0;
            (x[1], x[2]) = (a, b);
            assert!(c.gain(&x0, &x) > 0.6, "{a} {b}: {}", c.gain(&x0, &x));
        }
        // The least-squares additive fit of "either" puts 1/4 where neither rose.
        assert!(c.gain(&x0, &x0) < 0.3, "{}", c.gain(&x0, &x0));
    }
}
