//! `pipeline train`: learn a Naive Bayes model from manifests and write it as `.nbm`.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::time::Instant;

use anyhow::Context;
use clap::Args;

use article_pipeline::dataset;
use article_pipeline::features::FeatureSet;
use article_pipeline::scoring::naive_bayes::NbParams;
use article_pipeline::training::{self, LabelOptions};

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
    /// Learner: Naive Bayes, or PSO thresholds on text blocks (Ziegler & Skubacz 2007).
    #[arg(long, default_value = "nb", value_parser = ["nb", "pso"])]
    learner: String,
    /// Feature types, comma-separated: trigram, mrut, unigram, bigram, mrut2.
    #[arg(long, default_value = "trigram,mrut")]
    features: String,
    /// Drop features seen fewer times than this.
    #[arg(long, default_value_t = 2)]
    min_count: u32,
    /// Laplace smoothing.
    #[arg(long, default_value_t = 1.0)]
    alpha: f64,
    /// Added to every token score p - 0.5 (the paper's bias).
    #[arg(long, default_value_t = 0.0, allow_hyphen_values = true)]
    bias: f64,
    /// Added to the score of every start and end tag on top of --bias (a text-density prior).
    #[arg(long, default_value_t = 0.0, allow_hyphen_values = true)]
    tag_bias: f64,
    /// Clamp each id/class word's log-odds to ±this (their token counts overstate the evidence).
    #[arg(long)]
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
}

pub fn exec(args: TrainArgs) -> anyhow::Result<Outcome> {
    if args.learner == "pso" {
        return super::train_pso::exec(&args.manifest, &args.split, &args.out, args.threads, &args.pso);
    }
    let features = FeatureSet::parse(&args.features).map_err(anyhow::Error::msg).context("--features")?;
    anyhow::ensure!(args.alpha > 0.0, "--alpha must be positive");
    anyhow::ensure!((0.0..=1.0).contains(&args.min_coverage), "--min-coverage must be within 0..1");
    let entries = dataset::read_manifests(&args.manifest, Some(&args.split))?;
    anyhow::ensure!(!entries.is_empty(), "no `{}` pages in {:?}", args.split, args.manifest);
    anyhow::ensure!(args.bias.is_finite() && args.tag_bias.is_finite(), "--bias and --tag-bias must be finite");
    anyhow::ensure!(args.class_clamp.is_none_or(|c| c >= 0.0 && c.is_finite()), "--class-clamp must be ≥ 0");
    let params = NbParams {
        features,
        alpha: args.alpha,
        min_count: args.min_count,
        bias: args.bias,
        tag_bias: args.tag_bias,
        class_clamp: args.class_clamp,
    };
    let label =
        LabelOptions { min_coverage: args.min_coverage, max_tag_ratio: args.max_tag_ratio, ..LabelOptions::default() };
    let total = entries.len();
    let tty = std::io::stderr().is_terminal();
    let progress = move |done: usize| {
        if tty && (done.is_multiple_of(20) || done == total) {
            eprint!("\rtraining: {done}/{total} pages");
            if done == total {
                eprintln!();
            }
        }
    };
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
