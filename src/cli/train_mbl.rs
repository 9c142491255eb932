//! `pipeline train --learner knn|igtree`: the memory-based learner's options and its run (the
//! TiMBL thesis); `train.rs` dispatches here so the other learners' paths are untouched.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::Context;
use clap::Args;

use article_pipeline::dataset;
use article_pipeline::gold::LabelOptions;
use article_pipeline::methods::mbl::knn::{Algorithm, MblOptions, Weighting};
use article_pipeline::methods::mbl::train as mbl;
use article_pipeline::methods::mbl::units::feature_name;

use super::Outcome;

/// Options of the memory-based learner (ignored by the other learners).
#[derive(Debug, Args)]
pub struct MblArgs {
    /// knn: nearest distances that vote (the thesis: 1 within known sites, 7 for unseen ones).
    #[arg(long, default_value_t = MblOptions::default().k)]
    k: usize,
    /// knn/igtree: feature weighting: none, ig (information gain), gr (gain ratio), chi2, sv
    /// (shared variance).
    #[arg(long, default_value = "gr", value_parser = ["none", "ig", "gr", "chi2", "sv"])]
    weighting: String,
    /// knn/igtree: share of a unit's words aligned to the gold text for it to be body.
    #[arg(long, default_value_t = MblOptions::default().label_threshold)]
    unit_threshold: f64,
}

pub fn exec(
    manifests: &[PathBuf],
    split: &str,
    out: &Path,
    threads: usize,
    learner: &str,
    a: &MblArgs,
) -> anyhow::Result<Outcome> {
    anyhow::ensure!((0.0..=1.0).contains(&a.unit_threshold), "--unit-threshold must be within 0..1");
    let opts = MblOptions {
        algorithm: if learner == "igtree" { Algorithm::Igtree } else { Algorithm::Ib1 },
        weighting: Weighting::parse(&a.weighting).context("--weighting")?,
        k: a.k,
        label_threshold: a.unit_threshold,
    };
    let entries = dataset::read_manifests(manifests, Some(split))?;
    anyhow::ensure!(!entries.is_empty(), "no `{split}` pages in {manifests:?}");
    // Training pages are labelled like the other learners' but keep low-coverage pages out.
    let label = LabelOptions::default();
    let progress = super::train::progress_line("labelling", entries.len());
    let model = mbl::train_mbl(&entries, &opts, &label, threads, &progress)?;
    let bytes = model.to_bytes();
    if let Some(dir) = out.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create `{}`", dir.display()))?;
    }
    std::fs::write(out, &bytes).with_context(|| format!("cannot write `{}`", out.display()))?;
    let h = &model.header;
    let t = &h.training;
    let skipped: Vec<String> = t.pages_skipped.iter().map(|(k, v)| format!("{k} {v}")).collect();
    let mut err = std::io::stderr().lock();
    writeln!(
        err,
        "{learner}: {} pages read, {} used, skipped: {}; units title {} heading {} body {} garbage {}",
        entries.len(),
        t.pages_used,
        if skipped.is_empty() { "none".to_string() } else { skipped.join(", ") },
        t.unit_classes[0],
        t.unit_classes[1],
        t.unit_classes[2],
        t.unit_classes[3],
    )?;
    let mut top: Vec<(usize, f64)> = h.weights.iter().copied().enumerate().collect();
    top.sort_by(|a, b| b.1.total_cmp(&a.1));
    let top: Vec<String> = top.iter().take(6).map(|(f, w)| format!("{} {w:.3}", feature_name(*f))).collect();
    writeln!(err, "weights ({}): {}", opts.weighting.name(), top.join(", "))?;
    writeln!(
        err,
        "{} instances, {} stored ({}); model {} bytes -> {} in {:.1} s",
        t.instances,
        h.stored,
        if opts.algorithm == Algorithm::Igtree { "tree nodes" } else { "distinct vectors" },
        bytes.len(),
        out.display(),
        t.seconds
    )?;
    Ok(Outcome::Ok)
}
