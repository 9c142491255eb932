//! `pipeline train`: learn a Naive Bayes model from manifests and write it as `.nbm`, or,
//! with `--learner crf|memm|maxent`, a block model (Gibson et al. 2007) in the same container.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::time::Instant;

use anyhow::Context;
use clap::Args;

use article_pipeline::dataset;
use article_pipeline::features::FeatureSet;
use article_pipeline::gold::LabelOptions;
use article_pipeline::methods::nb::model::NbParams;
use article_pipeline::methods::nb::train as training;

use super::Outcome;

#[derive(Debug, Args)]
pub struct TrainArgs {
    /// Dataset manifest(s) with gold text.
    #[arg(long, required = true)]
    manifest: Vec<PathBuf>,
    /// Only pages of this split.
    #[arg(long, default_value = "train")]
    split: String,
    /// Where to write the model.
    #[arg(long)]
    out: PathBuf,
    /// Learner: Naive Bayes token scorer, a block labeller (crf, memm, maxent), or PSO
    /// thresholds on text blocks (Ziegler & Skubacz 2007), an SVM block classifier (Yao & Zuo),
    /// or the memory-based learner (knn = IB1, igtree; the TiMBL thesis).
    #[arg(long, default_value = "nb", value_parser = ["nb", "crf", "memm", "maxent", "pso", "svm", "knn", "igtree"])]
    learner: String,
    /// Block learners: Gaussian prior sigma.
    #[arg(long, default_value_t = 1.0)]
    sigma: f64,
    /// Block learners: share of a block's words aligned to gold for it to be Content.
    #[arg(long, default_value_t = 0.3)]
    label_threshold: f64,
    /// Block learners: L-BFGS iterations at most.
    #[arg(long, default_value_t = 150)]
    max_iter: usize,
    /// Block learners: add the previous block's features (the paper's history predicates).
    #[arg(long)]
    history: bool,
    /// CRF only: transition scores also depend on the current block's features (the paper's
    /// edge features; recorded in the model header).
    #[arg(long)]
    edge_features: bool,
    /// Block learners: log2 of the hashed feature dimensions.
    #[arg(long, default_value_t = 19, value_parser = clap::value_parser!(u8).range(8..=24))]
    dims_log2: u8,
    /// Block learners: turn feature types off, comma-separated (words, named_entities,
    /// title_case, anchor_percentage, title_matching, ancestor_tags, descendant_tags,
    /// sibling_tags, word_count, after_image, ancestor_classes), or `inverse_stop_words`.
    #[arg(long, default_value = "")]
    block_features_off: String,
    /// Feature types, comma-separated: trigram, mrut, unigram, bigram, mrut2, classes. The
    /// defaults of --features, --bias, --tag-bias and --class-clamp are the shipped model's
    /// recipe (models/README.md): `pipeline train --manifest wcxb` rebuilds it.
    #[arg(long, default_value = "trigram,mrut2,classes")]
    features: String,
    /// Drop features seen fewer times than this.
    #[arg(long, default_value_t = 2)]
    min_count: u32,
    /// Laplace smoothing.
    #[arg(long, default_value_t = 1.0)]
    alpha: f64,
    /// Added to every token score p - 0.5 (the paper's bias).
    #[arg(long, default_value_t = 0.1, allow_hyphen_values = true)]
    bias: f64,
    /// Added to the score of every start and end tag on top of --bias (a text-density prior).
    #[arg(long, default_value_t = -0.4, allow_hyphen_values = true)]
    tag_bias: f64,
    /// Clamp each id/class word's log-odds to ±this (their token counts overstate the
    /// evidence); `inf` for no clamp.
    #[arg(long, default_value = "0.4")]
    class_clamp: Option<f64>,
    /// Skip pages where fewer than this share of gold words align to the page.
    #[arg(long, default_value_t = 0.8)]
    min_coverage: f64,
    /// Skip pages whose gold span is more than this share of tags.
    #[arg(long, default_value_t = 0.8)]
    max_tag_ratio: f64,
    /// Worker threads (0 = one per core).
    #[arg(long, default_value_t = 0)]
    threads: usize,
    #[command(flatten)]
    pso: super::train_pso::PsoArgs,
    #[command(flatten)]
    svm: super::train_svm::SvmArgs,
    #[command(flatten)]
    mbl: super::train_mbl::MblArgs,
}

/// A progress line on stderr (terminals only): "`what`: done/total pages", every 20 pages.
pub(super) fn progress_line(what: &'static str, total: usize) -> impl Fn(usize) + Sync {
    let tty = std::io::stderr().is_terminal();
    move |done: usize| {
        if tty && (done.is_multiple_of(20) || done == total) {
            eprint!("\r{what}: {done}/{total} pages");
            if done == total {
                eprintln!();
            }
        }
    }
}

pub fn exec(args: TrainArgs) -> anyhow::Result<Outcome> {
    if args.learner == "pso" {
        return super::train_pso::exec(&args.manifest, &args.split, &args.out, args.threads, &args.pso);
    }
    if args.learner == "svm" {
        let (manifests, split, out) = (&args.manifest, &args.split, &args.out);
        let (threads, label_threshold, min_coverage) = (args.threads, args.label_threshold, args.min_coverage);
        let common = super::train_svm::Common { manifests, split, out, threads, label_threshold, min_coverage };
        return super::train_svm::exec(common, &args.svm);
    }
    if matches!(args.learner.as_str(), "knn" | "igtree") {
        return super::train_mbl::exec(&args.manifest, &args.split, &args.out, args.threads, &args.learner, &args.mbl);
    }
    if args.learner != "nb" {
        return exec_blocks(args);
    }
    let features = FeatureSet::parse(&args.features).map_err(anyhow::Error::msg).context("--features")?;
    anyhow::ensure!(args.alpha > 0.0, "--alpha must be positive");
    anyhow::ensure!((0.0..=1.0).contains(&args.min_coverage), "--min-coverage must be within 0..1");
    let entries = dataset::read_manifests(&args.manifest, Some(&args.split))?;
    anyhow::ensure!(!entries.is_empty(), "no `{}` pages in {:?}", args.split, args.manifest);
    anyhow::ensure!(args.bias.is_finite() && args.tag_bias.is_finite(), "--bias and --tag-bias must be finite");
    anyhow::ensure!(args.class_clamp.is_none_or(|c| c >= 0.0), "--class-clamp must be ≥ 0");
    let params = NbParams {
        features,
        alpha: args.alpha,
        min_count: args.min_count,
        bias: args.bias,
        tag_bias: args.tag_bias,
        // `inf`: no clamp.
        class_clamp: args.class_clamp.filter(|c| c.is_finite()),
    };
    let label =
        LabelOptions { min_coverage: args.min_coverage, max_tag_ratio: args.max_tag_ratio, ..LabelOptions::default() };
    let progress = progress_line("training", entries.len());
    let t = Instant::now();
    let (model, report) = training::train_nb(&entries, params, &label, args.threads, &progress)?;
    let bytes = model.to_bytes();
    if let Some(dir) = args.out.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create `{}`", dir.display()))?;
    }
    std::fs::write(&args.out, &bytes).with_context(|| format!("cannot write `{}`", args.out.display()))?;
    let skipped: Vec<String> = report.skipped.iter().map(|(k, v)| format!("{k} {v}")).collect();
    let mut err = std::io::stderr().lock();
    writeln!(
        err,
        "pages: {} read, {} used (mean gold coverage {:.3}), skipped: {}",
        report.pages,
        report.used,
        report.mean_coverage,
        if skipped.is_empty() { "none".to_string() } else { skipped.join(", ") }
    )?;
    let h = &model.header.training;
    writeln!(
        err,
        "tokens: {} in, {} out; features: {} seen, {} kept (min count {}); model {} bytes -> {} in {:.1} s",
        h.tokens_in,
        h.tokens_out,
        h.features_seen,
        h.features_kept,
        args.min_count,
        bytes.len(),
        args.out.display(),
        t.elapsed().as_secs_f64()
    )?;
    Ok(Outcome::Ok)
}

/// `--learner crf|memm|maxent`: a block model.
fn exec_blocks(args: TrainArgs) -> anyhow::Result<Outcome> {
    use article_pipeline::methods::blocks::features::BlockFeatureConfig;
    use article_pipeline::methods::blocks::learn::{self as learners, BlockTrainOptions};
    anyhow::ensure!(args.sigma > 0.0, "--sigma must be positive");
    anyhow::ensure!((0.0..=1.0).contains(&args.label_threshold), "--label-threshold must be within 0..1");
    let mut features = BlockFeatureConfig { history: args.history, dims_log2: args.dims_log2, ..Default::default() };
    for name in args.block_features_off.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let f = &mut features;
        match name {
            "words" => f.words = false,
            "inverse_stop_words" => f.inverse_stop_words = true,
            "named_entities" => f.named_entities = false,
            "title_case" => f.title_case = false,
            "anchor_percentage" => f.anchor_percentage = false,
            "title_matching" => f.title_matching = false,
            "ancestor_tags" => f.ancestor_tags = false,
            "descendant_tags" => f.descendant_tags = false,
            "sibling_tags" => f.sibling_tags = false,
            "word_count" => f.word_count = false,
            "after_image" => f.after_image = false,
            "ancestor_classes" => f.ancestor_classes = false,
            other => anyhow::bail!("--block-features-off: unknown feature type `{other}`"),
        }
    }
    let options = BlockTrainOptions {
        learner: args.learner.clone(),
        features,
        sigma: args.sigma,
        label_threshold: args.label_threshold,
        max_iter: args.max_iter,
        edge_features: args.edge_features,
    };
    let entries = dataset::read_manifests(&args.manifest, Some(&args.split))?;
    anyhow::ensure!(!entries.is_empty(), "no `{}` pages in {:?}", args.split, args.manifest);
    let label =
        LabelOptions { min_coverage: args.min_coverage, max_tag_ratio: args.max_tag_ratio, ..LabelOptions::default() };
    let progress = progress_line("labelling", entries.len());
    let model = learners::train(&entries, &options, &label, args.threads, &progress)?;
    let bytes = model.to_bytes();
    if let Some(dir) = args.out.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create `{}`", dir.display()))?;
    }
    std::fs::write(&args.out, &bytes).with_context(|| format!("cannot write `{}`", args.out.display()))?;
    let h = &model.header.training;
    let skipped: Vec<String> = h.pages_skipped.iter().map(|(k, v)| format!("{k} {v}")).collect();
    writeln!(
        std::io::stderr(),
        "{}: {} pages read, {} used, skipped: {}; {} blocks ({} Content); {} L-BFGS iterations{}, objective {:.1}; \
         model {} bytes -> {} in {:.1} s",
        model.header.learner,
        entries.len(),
        h.pages_used,
        if skipped.is_empty() { "none".to_string() } else { skipped.join(", ") },
        h.blocks,
        h.content_blocks,
        h.iterations,
        if h.converged { "" } else { " (not converged)" },
        h.objective,
        bytes.len(),
        args.out.display(),
        h.seconds
    )?;
    Ok(Outcome::Ok)
}
