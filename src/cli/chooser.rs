//! `pipeline chooser`: fits the span chooser on the candidates of training pages, writes its
//! file, and prints, per dev dataset, the pooled F1 of the current choice, of the chooser at
//! each margin, and of the oracle, with the margin chosen by leave-one-dataset-out.

use std::collections::BTreeMap;
use std::path::PathBuf;

use anyhow::Context;
use clap::Args;

use article_pipeline::dataset;
use article_pipeline::eval::chooser as fit;
use article_pipeline::extract::Extractor;

use super::{ExtractorArgs, Outcome};

#[derive(Debug, Args)]
pub struct ChooserArgs {
    /// Manifests whose `train` pages the chooser learns from.
    #[arg(long)]
    train: Vec<PathBuf>,
    /// Manifests whose every page it learns from (aeb has a dev split only).
    #[arg(long)]
    train_all: Vec<PathBuf>,
    /// Manifests whose `dev` pages choose the margin, leaving one dataset out at a time.
    #[arg(long, required = true)]
    dev: Vec<PathBuf>,
    /// Margins tried.
    #[arg(long, value_delimiter = ',', default_value = "0.01,0.02,0.05,0.1,0.2")]
    margins: Vec<f64>,
    /// Boosting rounds (trees).
    #[arg(long, default_value_t = fit::BoostOptions::default().rounds)]
    rounds: usize,
    /// Depth of each tree (1: stumps, an additive model; models/README.md, "Span chooser").
    #[arg(long, default_value_t = fit::BoostOptions::default().depth)]
    depth: usize,
    /// Shrinkage of each tree's leaves.
    #[arg(long, default_value_t = fit::BoostOptions::default().learning_rate)]
    learning_rate: f64,
    /// Fewest candidate pairs in a leaf.
    #[arg(long, default_value_t = fit::BoostOptions::default().min_leaf)]
    min_leaf: usize,
    /// Also show the N dev pages where the best candidate beats the current choice most, and
    /// the N where the chooser's switch (at `--margin`, else the built-in chooser's margin)
    /// loses most: F1 and the features that differ.
    #[arg(long, default_value_t = 0)]
    explain: usize,
    /// Cut the `--train` pages into this many folds and take each fold's candidates from a
    /// Naive Bayes model of the same recipe fitted on the other folds, so the chooser learns
    /// from choices made on pages the scorer never saw (0: take them from the model as is).
    /// For `--scorer nb`, whose model learned from the `--train` pages.
    #[arg(long, default_value_t = 5)]
    cross_fit: usize,
    /// Also fit the chooser on N − 1 other partitions of the `--train` pages (cross-fitted in
    /// `--cross-fit` + 1, + 2, … folds), each as valid a fit as the one written, and print
    /// the lowest, mean and highest F1 of each dev dataset over the N fits at each margin. A
    /// refit moves several dev pages (models/README.md, "Span chooser", session 33): a change
    /// is worth trusting when it moves the scores by more than these do. Needs `--cross-fit`.
    #[arg(long, default_value_t = 1)]
    draws: usize,
    /// With `--draws`: write the average of the N fits (their trees together, each leaf
    /// divided by N) instead of the first: the mean of the draws rather than one of them.
    #[arg(long, requires = "draws")]
    average: bool,
    /// The margin stored in the file: the one the extractor uses when its `chooser_margin` is
    /// not set (the built-in chooser's is the one leave-one-dataset-out chose over the dev
    /// sets, models/README.md). Unset: none stored, the chooser is off unless a margin is given.
    #[arg(long)]
    margin: Option<f64>,
    /// Where to write the chooser (JSON).
    #[arg(long)]
    out: PathBuf,
    /// The extractor whose candidates are scored (the chooser's own margin is ignored).
    #[command(flatten)]
    extractor: ExtractorArgs,
}

pub fn exec(args: ChooserArgs) -> anyhow::Result<Outcome> {
    let (scorer, mut options) = args.extractor.build()?;
    options.chooser_margin = Some(0.0);
    // Candidates need every token score, whatever the span options.
    options.keep_scores = true;
    let extractor = Extractor::new(scorer.as_ref(), options);
    let train = dataset::read_manifests(&args.train, Some("train"))?;
    let train_all = dataset::read_manifests(&args.train_all, None)?;
    anyhow::ensure!(!train.is_empty() || !train_all.is_empty(), "no training pages in --train / --train-all");
    let dev = dataset::read_manifests(&args.dev, Some("dev"))?;
    anyhow::ensure!(!dev.is_empty(), "no dev pages in --dev");
    let threads = args.extractor.threads;
    anyhow::ensure!(args.draws >= 1, "--draws must be at least 1");
    anyhow::ensure!(
        args.draws == 1 || (args.cross_fit > 0 && !train.is_empty()),
        "--draws fits on other cross-fitting partitions: it needs --train pages and --cross-fit"
    );
    let cross_fitted = args.cross_fit > 0 && !train.is_empty();
    if cross_fitted {
        anyhow::ensure!(
            args.extractor.scorer == "nb",
            "--cross-fit refits Naive Bayes models: use --scorer nb or --cross-fit 0"
        );
    }
    // The training candidates with the `--train` pages cross-fitted in `folds` folds.
    let all_pages = fit::collect(&extractor, &train_all, threads)?;
    let recipe =
        if cross_fitted { Some(article_pipeline::methods::nb::read(args.extractor.model.as_deref())?.0) } else { None };
    let candidates = |folds: usize| -> anyhow::Result<Vec<fit::PageCandidates>> {
        let mut c = if let Some(model) = &recipe {
            fit::collect_cross_fitted(&model.header, extractor.options(), &train, folds, threads)?
        } else {
            fit::collect(&extractor, &train, threads)?
        };
        c.extend(all_pages.iter().cloned());
        Ok(c)
    };
    let train_candidates = candidates(args.cross_fit)?;
    let boost = fit::BoostOptions {
        rounds: args.rounds,
        depth: args.depth,
        learning_rate: args.learning_rate,
        min_leaf: args.min_leaf.max(1),
    };
    anyhow::ensure!(boost.learning_rate > 0.0 && boost.learning_rate <= 1.0, "--learning-rate must be within (0, 1]");
    // Datasets by their folder's name (`…/wcxb/manifest.jsonl`: wcxb), so the file does not
    // depend on where the datasets were unpacked.
    let name = |p: &PathBuf| {
        let dir = p.parent().and_then(|d| d.file_name()).map(|n| n.to_string_lossy().into_owned());
        dir.unwrap_or_else(|| p.display().to_string())
    };
    let sources: Vec<String> = args.train.iter().chain(&args.train_all).map(name).collect();
    let mut sources = sources.join(" + ");
    let averaged = args.average && args.draws > 1;
    if cross_fitted && averaged {
        let last = args.cross_fit + args.draws - 1;
        sources.push_str(&format!(
            " (train pages cross-fitted in {} to {last} folds, {} fits averaged)",
            args.cross_fit, args.draws
        ));
    } else if cross_fitted {
        sources.push_str(&format!(" (train pages cross-fitted in {} folds)", args.cross_fit));
    }
    anyhow::ensure!(args.margin.is_none_or(|m| (0.0..=1.0).contains(&m)), "--margin must be between 0 and 1");
    let mut fits = vec![fit::fit(&train_candidates, &boost, &sources)];
    for d in 1..args.draws {
        fits.push(fit::fit(&candidates(args.cross_fit + d)?, &boost, &sources));
    }
    let mut chooser = if averaged {
        article_pipeline::scoring::chooser::Chooser::average(&fits, fits[0].trained_on.clone())
    } else {
        fits[0].clone()
    };
    chooser.margin = args.margin;
    let json = serde_json::to_string(&chooser)?;
    std::fs::write(&args.out, format!("{json}\n")).with_context(|| format!("cannot write `{}`", args.out.display()))?;
    eprintln!("chooser: {} -> {}", chooser.trained_on, args.out.display());

    let dev = fit::collect(&extractor, &dev, threads)?;
    let current = fit::scores(&dev, None);
    let oracle = fit::oracle(&dev);
    let by_margin: Vec<(f64, BTreeMap<String, f64>)> =
        args.margins.iter().map(|&m| (m, fit::scores(&dev, Some((&chooser, m))))).collect();
    let names: Vec<&String> = current.keys().collect();
    let row = |label: String, s: &BTreeMap<String, f64>| {
        let cells: Vec<String> = names.iter().map(|n| format!("{:>9.3}", s[*n])).collect();
        println!("{label:<14}{}", cells.join(""));
    };
    println!("{:<14}{}", "", names.iter().map(|n| format!("{n:>9}")).collect::<String>());
    row("current".into(), &current);
    for (m, s) in &by_margin {
        row(format!("margin {m}"), s);
    }
    row("oracle".into(), &oracle);
    if args.draws > 1 {
        // The other draws: the same fit on other partitions of the train pages.
        let draws: Vec<Vec<BTreeMap<String, f64>>> =
            fits.iter().map(|c| args.margins.iter().map(|&m| fit::scores(&dev, Some((c, m)))).collect()).collect();
        println!(
            "over {} fits (cross-fitted in {} to {} folds): lowest / mean / highest",
            args.draws,
            args.cross_fit,
            args.cross_fit + args.draws - 1
        );
        for (i, m) in args.margins.iter().enumerate() {
            let cells: Vec<String> = names
                .iter()
                .map(|n| {
                    let v: Vec<f64> = draws.iter().map(|d| d[i][*n]).collect();
                    let (lo, hi) = v.iter().fold((f64::MAX, f64::MIN), |(l, h), &x| (l.min(x), h.max(x)));
                    format!("  {n} {lo:.3} / {:.3} / {hi:.3}", v.iter().sum::<f64>() / v.len() as f64)
                })
                .collect();
            println!("margin {m}:{}", cells.join(""));
        }
    }
    // Leave one dataset out: the margin best on the others (pooled over their pages' sets as
    // the mean of their F1), scored on the one left out; 0 (off) is a candidate too.
    let mut folds = Vec::new();
    for left in &names {
        let others = |s: &BTreeMap<String, f64>| {
            s.iter().filter(|(k, _)| k != left).map(|(_, v)| v).sum::<f64>() / (names.len() - 1).max(1) as f64
        };
        let mut best = (0.0, others(&current), current[*left]);
        for (m, s) in &by_margin {
            if others(s) > best.1 {
                best = (*m, others(s), s[*left]);
            }
        }
        println!(
            "left out {left}: margin {} chosen on the others, F1 {:.3} (current {:.3})",
            best.0, best.2, current[*left]
        );
        folds.push((best.2, current[*left]));
    }
    let k = folds.len().max(1) as f64;
    println!(
        "mean of the left-out folds: {:.4} (current {:.4})",
        folds.iter().map(|f| f.0).sum::<f64>() / k,
        folds.iter().map(|f| f.1).sum::<f64>() / k
    );
    let mut gaps: Vec<(f64, &fit::PageCandidates, usize)> = dev
        .iter()
        .map(|p| {
            let (i, best) = p
                .metrics
                .iter()
                .enumerate()
                .map(|(i, m)| (i, fit::page_f1(m)))
                .max_by(|a, b| a.1.total_cmp(&b.1))
                .unwrap_or((0, 0.0));
            (best - fit::page_f1(&p.metrics[0]), p, i)
        })
        .collect();
    gaps.sort_by(|a, b| b.0.total_cmp(&a.0));
    let names = article_pipeline::extract::candidates::FEATURE_NAMES;
    let diff = |p: &fit::PageCandidates, i: usize| -> String {
        let d: Vec<String> = (0..names.len())
            .filter(|&f| (p.features[i][f] - p.features[0][f]).abs() > 1e-9)
            .map(|f| format!("{} {:.2}→{:.2}", names[f], p.features[0][f], p.features[i][f]))
            .collect();
        d.join(", ")
    };
    for (gap, p, i) in gaps.iter().take(args.explain) {
        let gain = chooser.gain(&p.features[0], &p.features[*i]);
        println!(
            "{} gap {gap:.2} (current {:.2}, candidate {i} of {} predicted {gain:+.3}): {}",
            p.id,
            fit::page_f1(&p.metrics[0]),
            p.features.len(),
            diff(p, *i)
        );
    }
    // And the switches that lose at the stored margin (else the built-in chooser's): what the
    // trees get wrong.
    let margin = args.margin.or(article_pipeline::scoring::chooser::builtin().margin).unwrap_or_default();
    let mut losses: Vec<(f64, &fit::PageCandidates, usize)> = dev
        .iter()
        .map(|p| {
            let i = fit::chosen(p, Some((&chooser, margin)));
            (fit::page_f1(&p.metrics[0]) - fit::page_f1(&p.metrics[i]), p, i)
        })
        .filter(|l| l.0 > 0.0)
        .collect();
    losses.sort_by(|a, b| b.0.total_cmp(&a.0));
    for (loss, p, i) in losses.iter().take(args.explain) {
        println!(
            "{} loses {loss:.2} at margin {margin} (current {:.2}, took candidate {i} of {}, predicted {:+.3}): {}",
            p.id,
            fit::page_f1(&p.metrics[0]),
            p.features.len(),
            chooser.gain(&p.features[0], &p.features[*i]),
            diff(p, *i)
        );
    }
    let below_now = fit::pages_below_half(&dev, None);
    println!("pages below F1 0.5, current: {below_now:?}");
    println!("pages below F1 0.5, oracle: {:?}", fit::oracle_below_half(&dev));
    for (m, _) in &by_margin {
        println!("pages below F1 0.5, margin {m}: {:?}", fit::pages_below_half(&dev, Some((&chooser, *m))));
    }
    Ok(Outcome::Ok)
}
