//! `pipeline train --learner svm`: the SVM block classifier's options and its run (Yao & Zuo,
//! §III); `train.rs` dispatches here so the other learners' paths are untouched.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::Context;
use clap::Args;

use article_pipeline::dataset;
use article_pipeline::methods::nb::train::LabelOptions;
use article_pipeline::methods::svm::features::YaoFeatureConfig;
use article_pipeline::methods::svm::train::{self as svm, FeatureSet, SvmTrainOptions};

use super::Outcome;

/// Options of the SVM learner (ignored by the other learners).
#[derive(Debug, Args)]
pub struct SvmArgs {
    /// SVM: penalty C (default LIBSVM's 1).
    #[arg(long, default_value_t = SvmTrainOptions::default().c)]
    svm_c: f64,
    /// SVM: RBF width γ (default LIBSVM's 1/#features = 1/18).
    #[arg(long)]
    svm_gamma: Option<f64>,
    /// SVM: train on at most this many blocks, a seeded uniform sample (kernel SVMs are O(n²)).
    #[arg(long, default_value_t = SvmTrainOptions::default().max_blocks)]
    svm_max_blocks: usize,
    /// SVM: seed of the block sample.
    #[arg(long, default_value_t = SvmTrainOptions::default().seed)]
    svm_seed: u64,
    /// SVM: SMO stopping tolerance.
    #[arg(long, default_value_t = SvmTrainOptions::default().tolerance)]
    svm_tolerance: f64,
    /// SVM: M, the number of relative positions ⌊n/N·M⌋.
    #[arg(long, default_value_t = YaoFeatureConfig::default().positions)]
    svm_positions: u32,
    /// SVM: the paper's feature combination (§IV.C).
    #[arg(long, default_value = "all", value_parser = ["text", "text-position", "all"])]
    svm_feature_set: String,
}

/// Shared training arguments the SVM learner uses.
pub struct Common<'a> {
    pub manifests: &'a [PathBuf],
    pub split: &'a str,
    pub out: &'a Path,
    pub threads: usize,
    pub label_threshold: f64,
    pub min_coverage: f64,
}

pub fn exec(c: Common<'_>, a: &SvmArgs) -> anyhow::Result<Outcome> {
    anyhow::ensure!((0.0..=1.0).contains(&c.label_threshold), "--label-threshold must be within 0..1");
    anyhow::ensure!((0.0..=1.0).contains(&c.min_coverage), "--min-coverage must be within 0..1");
    let entries = dataset::read_manifests(c.manifests, Some(c.split))?;
    anyhow::ensure!(!entries.is_empty(), "no `{}` pages in {:?}", c.split, c.manifests);
    let d = SvmTrainOptions::default();
    let opts = SvmTrainOptions {
        features: YaoFeatureConfig { positions: a.svm_positions, ..YaoFeatureConfig::default() },
        c: a.svm_c,
        gamma: a.svm_gamma.unwrap_or(d.gamma),
        max_blocks: a.svm_max_blocks,
        seed: a.svm_seed,
        tolerance: a.svm_tolerance,
        label_threshold: c.label_threshold,
        label: LabelOptions { min_coverage: c.min_coverage, ..LabelOptions::default() },
        threads: c.threads,
        feature_set: FeatureSet::parse(&a.svm_feature_set).unwrap_or_default(),
    };
    let progress = super::train::progress_line("labelling", entries.len());
    let t = Instant::now();
    let (model, report) = svm::train_svm(&entries, &opts, &progress)?;
    let bytes = model.to_bytes();
    if let Some(dir) = c.out.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create `{}`", dir.display()))?;
    }
    std::fs::write(c.out, &bytes).with_context(|| format!("cannot write `{}`", c.out.display()))?;
    let h = &model.header.training;
    let skipped: Vec<String> = report.skipped.iter().map(|(k, v)| format!("{k} {v}")).collect();
    let mut err = std::io::stderr().lock();
    writeln!(
        err,
        "svm: {} pages read, {} used, skipped: {}; {} blocks ({} Content); trained on {} ({} Content, seed {}), \
         features {}",
        report.pages,
        h.pages_used,
        if skipped.is_empty() { "none".to_string() } else { skipped.join(", ") },
        h.blocks,
        h.content_blocks,
        h.sample_blocks,
        h.sample_content_blocks,
        h.sample_seed,
        h.feature_set
    )?;
    let scores: Vec<String> = h.token_names.iter().zip(&h.token_scores).map(|(n, s)| format!("{n} {s:.0}")).collect();
    writeln!(err, "id/class tokens (Naive Bayes score): {}", scores.join(", "))?;
    writeln!(
        err,
        "C {} gamma {:.5}: {} support vectors, sample accuracy {:.4}; labelling {:.1} s, solver {:.1} s; \
         model {} bytes -> {} in {:.1} s",
        model.header.c,
        model.header.gamma,
        model.header.support_vectors,
        h.sample_accuracy,
        report.prepare_seconds,
        report.solver_seconds,
        bytes.len(),
        c.out.display(),
        t.elapsed().as_secs_f64()
    )?;
    Ok(Outcome::Ok)
}
