//! Choosing extractor settings honestly: leave-one-dataset-out (LODO) over labelled sets.
//!
//! Settings chosen on the pages they are then scored on look better than they are: the
//! held-out sets showed it (issue 13). Here every setting of a grid is scored once on every
//! page; then, for each dataset D, the setting with the best pooled shingle F1 on the *other*
//! datasets is chosen and scored on D alone. The mean of those left-out scores is what a user
//! with pages unlike any of the sets can expect; the setting chosen on all datasets is the
//! one to ship. Both are reported with every fold, beside the in-sample scores.
//!
//! The selection is a pure function of per-page metrics ([`lodo`]), so it is tested without
//! extracting anything; [`tune`] extracts and scores the pages for each setting.

use std::collections::BTreeMap;

use serde::Serialize;

use super::metrics::{self, PageMetrics};
use crate::dataset::ManifestEntry;
use crate::extract::{ExtractOptions, Extractor};
use crate::scoring::Scorer;

/// One point of the grid: what the CLI's extraction flags set.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Setting {
    /// Replaces the model's bias (None: the model's own).
    pub bias: Option<f64>,
    /// Replaces the model's tag bias (None: the model's own).
    pub tag_bias: Option<f64>,
    /// Everything else the grid varies: span filters and span options.
    #[serde(flatten)]
    pub options: ExtractOptions,
}

impl Setting {
    /// The flags that give this setting (those of the options that differ from the defaults).
    pub fn flags(&self) -> String {
        let mut f = Vec::new();
        if let Some(b) = self.bias {
            f.push(format!("--bias {b}"));
        }
        if let Some(t) = self.tag_bias {
            f.push(format!("--tag-bias {t}"));
        }
        f.extend(self.options.to_flags());
        f.join(" ")
    }
}

/// One fold: `left_out` scored with the setting chosen on every other dataset.
#[derive(Debug, Clone, Serialize)]
pub struct Fold {
    pub left_out: String,
    /// Index into [`TuneReport::settings`].
    pub chosen: usize,
    /// Pooled shingle F1 of the chosen setting on the other datasets (what chose it).
    pub others_f1: f64,
    /// Shingle F1 of the chosen setting on the left-out dataset.
    pub left_out_f1: f64,
    /// The best any setting reaches on the left-out dataset (in-sample, for comparison).
    pub left_out_best_f1: f64,
}

/// A LODO run.
#[derive(Debug, Clone, Serialize)]
pub struct TuneReport {
    pub settings: Vec<Setting>,
    pub datasets: Vec<String>,
    /// Per setting: pooled F1 over all datasets, and F1 per dataset.
    pub scores: Vec<SettingScores>,
    pub folds: Vec<Fold>,
    /// Mean over the folds of the left-out F1: the honest figure (None with one dataset).
    pub mean_left_out_f1: Option<f64>,
    /// The setting chosen on all datasets together, and its (in-sample) pooled F1.
    pub chosen_on_all: usize,
    pub chosen_on_all_f1: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct SettingScores {
    pub pooled_f1: f64,
    pub datasets: BTreeMap<String, f64>,
}

fn f1<'a>(pages: impl IntoIterator<Item = &'a PageMetrics>) -> f64 {
    metrics::aggregate(pages).shingle_f1.unwrap_or(0.0)
}

/// The LODO selection over per-page metrics: `pages[s]` holds (dataset, metrics) of every
/// page under setting `s`, pages in the same order for every setting. Ties go to the earlier
/// setting, so list the current default first.
pub fn lodo(settings: Vec<Setting>, pages: &[Vec<(String, PageMetrics)>]) -> TuneReport {
    assert_eq!(settings.len(), pages.len(), "one page list per setting");
    let datasets: Vec<String> = {
        let mut d: Vec<String> = pages.first().map(|p| p.iter().map(|(d, _)| d.clone()).collect()).unwrap_or_default();
        d.sort();
        d.dedup();
        d
    };
    let pooled = |s: usize, keep: &dyn Fn(&str) -> bool| f1(pages[s].iter().filter(|(d, _)| keep(d)).map(|(_, m)| m));
    let best = |keep: &dyn Fn(&str) -> bool| {
        let mut best = (0usize, f64::NEG_INFINITY);
        for s in 0..settings.len() {
            let v = pooled(s, keep);
            if v > best.1 + 1e-12 {
                best = (s, v);
            }
        }
        best
    };
    let scores: Vec<SettingScores> = (0..settings.len())
        .map(|s| SettingScores {
            pooled_f1: pooled(s, &|_| true),
            datasets: datasets.iter().map(|d| (d.clone(), pooled(s, &|x| x == d))).collect(),
        })
        .collect();
    // With one dataset nothing can be left out: no folds, no left-out mean.
    let foldable: &[String] = if datasets.len() >= 2 { &datasets } else { &[] };
    let folds: Vec<Fold> = foldable
        .iter()
        .map(|d| {
            let (chosen, others_f1) = best(&|x| x != d);
            Fold {
                left_out: d.clone(),
                chosen,
                others_f1,
                left_out_f1: scores[chosen].datasets[d],
                left_out_best_f1: scores.iter().map(|s| s.datasets[d]).fold(0.0, f64::max),
            }
        })
        .collect();
    let mean_left_out_f1 =
        (!folds.is_empty()).then(|| folds.iter().map(|f| f.left_out_f1).sum::<f64>() / folds.len() as f64);
    let (chosen_on_all, chosen_on_all_f1) = best(&|_| true);
    TuneReport { settings, datasets, scores, folds, mean_left_out_f1, chosen_on_all, chosen_on_all_f1 }
}

/// Builds the scorer of a setting (its bias and tag bias applied).
pub type ScorerFor<'a> = dyn Fn(&Setting) -> Result<Box<dyn Scorer>, crate::methods::ScorerError> + 'a;

/// Scores every page of `entries` under every setting (pages extracted by `threads` workers)
/// and runs the LODO selection. `scorer_for` builds the scorer of a setting (its bias and tag
/// bias applied).
pub fn tune(
    entries: &[ManifestEntry],
    settings: Vec<Setting>,
    threads: usize,
    scorer_for: &ScorerFor<'_>,
    mut progress: impl FnMut(usize, &Setting, f64),
) -> Result<TuneReport, TuneError> {
    let mut pages = Vec::with_capacity(settings.len());
    for (i, s) in settings.iter().enumerate() {
        let scorer = scorer_for(s)?;
        let extractor = Extractor::new(scorer.as_ref(), s.options.clone());
        let (report, results) = super::evaluate(&extractor, entries, threads)?;
        progress(i, s, report.overall.shingle_f1.unwrap_or(0.0));
        pages.push(results.into_iter().map(|p| (p.dataset, p.metrics)).collect());
    }
    Ok(lodo(settings, &pages))
}

#[derive(Debug, thiserror::Error)]
pub enum TuneError {
    #[error(transparent)]
    Scorer(#[from] crate::methods::ScorerError),
    #[error("cannot start the worker threads: {0}")]
    Threads(#[from] rayon::ThreadPoolBuildError),
}

/// The report as text: every fold, the mean of the left-out folds, the setting chosen on all.
pub fn format_report(r: &TuneReport) -> String {
    let mut out = String::new();
    out.push_str(&format!(
        "leave-one-dataset-out over {} datasets, {} settings (pooled shingle F1)\n",
        r.datasets.len(),
        r.settings.len()
    ));
    out.push_str(&format!(
        "{:<12} {:>10} {:>10} {:>10}  chosen on the others\n",
        "left out", "left-out", "best", "others"
    ));
    for f in &r.folds {
        out.push_str(&format!(
            "{:<12} {:>10.3} {:>10.3} {:>10.3}  {}\n",
            f.left_out,
            f.left_out_f1,
            f.left_out_best_f1,
            f.others_f1,
            r.settings[f.chosen].flags()
        ));
    }
    match r.mean_left_out_f1 {
        Some(m) => out.push_str(&format!("mean of the left-out folds: {m:.3}\n")),
        None => {
            out.push_str("one dataset: none can be left out, so there is no out-of-sample figure; give two or more\n")
        }
    }
    out.push_str(&format!(
        "chosen on all datasets: {} (in-sample pooled F1 {:.3})\n",
        r.settings[r.chosen_on_all].flags(),
        r.chosen_on_all_f1
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dataset::Gold;

    /// Metrics of a page whose prediction keeps `keep` of 20 gold words and adds `extra`.
    fn page(keep: usize, extra: usize) -> PageMetrics {
        let words: Vec<String> = (0..20).map(|i| format!("w{i}")).collect();
        let gold = Gold { text: Some(words.join(" ")), ..Gold::default() };
        let mut pred: Vec<String> = words[..keep].to_vec();
        pred.extend((0..extra).map(|i| format!("x{i}")));
        metrics::score_page(&gold, &pred.join(" "))
    }

    fn setting(bias: f64) -> Setting {
        Setting {
            bias: Some(bias),
            tag_bias: None,
            options: ExtractOptions {
                drop_hidden_microdata: false,
                drop_more_furniture: false,
                link_run_blocks: 0,
                extra_span_ratio: 0.0,
                extra_span_min: 0.0,
                multi_item_ratio: 0.0,
                title_anchor_ratio: 0.0,
                furniture_escape_ratio: 0.0,
                list_min_items: 0,
                ..ExtractOptions::default()
            },
        }
    }

    #[test]
    fn each_fold_is_chosen_without_its_own_pages() {
        // Setting 0 is perfect on a and b, poor on c; setting 1 is perfect on c only; setting
        // 2 is good everywhere. In-sample, c would pick 1; left out, c gets what a and b chose.
        let good = page(18, 0);
        let perfect = page(20, 0);
        let poor = page(8, 12);
        let pages = vec![
            vec![("a".into(), perfect.clone()), ("b".into(), perfect.clone()), ("c".into(), poor.clone())],
            vec![("a".into(), poor.clone()), ("b".into(), poor.clone()), ("c".into(), perfect.clone())],
            vec![("a".into(), good.clone()), ("b".into(), good.clone()), ("c".into(), good.clone())],
        ];
        let r = lodo(vec![setting(0.0), setting(0.1), setting(0.2)], &pages);
        let by: BTreeMap<&str, &Fold> = r.folds.iter().map(|f| (f.left_out.as_str(), f)).collect();
        assert_eq!(by["c"].chosen, 0, "chosen on a and b");
        assert!((by["c"].left_out_f1 - f1([&poor])).abs() < 1e-12);
        assert!((by["c"].left_out_best_f1 - 1.0).abs() < 1e-12);
        // Leaving a out: b (perfect under 0) and c (poor under 0) against 2 (good on both).
        assert_eq!(by["a"].chosen, 2);
        let mean = r.folds.iter().map(|f| f.left_out_f1).sum::<f64>() / 3.0;
        assert!((r.mean_left_out_f1.unwrap() - mean).abs() < 1e-12);
        assert_eq!(r.chosen_on_all, 2);
        assert!(r.mean_left_out_f1.unwrap() < r.chosen_on_all_f1 + 1e-12);
        assert!(format_report(&r).contains("mean of the left-out folds"));
    }

    #[test]
    fn ties_go_to_the_first_setting() {
        let p = page(15, 3);
        let pages = vec![vec![("a".into(), p.clone()), ("b".into(), p.clone())]; 3];
        let r = lodo(vec![setting(0.1), setting(0.0), setting(0.2)], &pages);
        assert!(r.folds.iter().all(|f| f.chosen == 0));
        assert_eq!(r.chosen_on_all, 0);
    }

    #[test]
    fn one_dataset_leaves_nothing_out_and_says_so() {
        let pages = vec![vec![("a".into(), page(15, 3))], vec![("a".into(), page(18, 0))]];
        let r = lodo(vec![setting(0.0), setting(0.1)], &pages);
        assert!(r.folds.is_empty());
        assert_eq!(r.mean_left_out_f1, None);
        assert_eq!(r.chosen_on_all, 1);
        let text = format_report(&r);
        assert!(!text.contains("mean of the left-out folds") && text.contains("none can be left out"), "{text}");
    }
}
