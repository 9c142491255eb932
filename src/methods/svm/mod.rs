//! The SVM block classifier of Yao & Zuo: eighteen features per block ([`features`], §III.B),
//! an RBF-kernel C-SVM fitted with linfa-svm ([`train`], §III.C), and the model file and scorer
//! that keeps every Content block ([`scorer`]).

pub mod features;
pub mod scorer;
pub mod train;

use std::path::Path;

use super::{ScorerError, TrainError, TrainJob, Trained, read_model, required};
use crate::gold::LabelOptions;
use crate::scoring::Scorer;
use scorer::{SvmModel, SvmScorer};

/// Builds the `svm` scorer from its model file.
pub(super) fn load(name: &'static str, model: Option<&Path>) -> Result<Box<dyn Scorer>, ScorerError> {
    let (m, stem) = read_model(required(name, model)?, SvmModel::from_bytes)?;
    Ok(Box::new(SvmScorer::new(m, stem)))
}

/// Fits the classifier (`pipeline train --learner svm`, §III.C). Blocks are Content by the
/// block labellers' label threshold; pages are filtered by the minimum coverage only.
pub(super) fn train(job: TrainJob<'_>) -> Result<Trained, TrainError> {
    let (entries, o, progress) = (job.entries, job.options, job.progress);
    let opts = train::SvmTrainOptions {
        label_threshold: o.blocks.label_threshold,
        label: LabelOptions { min_coverage: o.label.min_coverage, ..LabelOptions::default() },
        threads: o.threads,
        ..o.svm
    };
    if !(0.0..=1.0).contains(&opts.label_threshold) || !(0.0..=1.0).contains(&opts.label.min_coverage) {
        return Err(TrainError::Options("label threshold and min coverage must be within 0..1".to_string()));
    }
    let (model, r) = train::train_svm(entries, &opts, progress)?;
    let h = &model.header.training;
    let scores: Vec<String> = h.token_names.iter().zip(&h.token_scores).map(|(n, s)| format!("{n} {s:.0}")).collect();
    let report = vec![
        format!(
            "svm: {} pages read, {} used, skipped: {}; {} blocks ({} Content); trained on {} ({} Content, seed {}), \
             features {}",
            r.pages,
            h.pages_used,
            super::skipped_list(r.skipped.iter().map(|(k, v)| (k, v))),
            h.blocks,
            h.content_blocks,
            h.sample_blocks,
            h.sample_content_blocks,
            h.sample_seed,
            h.feature_set
        ),
        format!("id/class tokens (Naive Bayes score): {}", scores.join(", ")),
        format!(
            "C {} gamma {:.5}: {} support vectors, sample accuracy {:.4}; labelling {:.1} s, solver {:.1} s",
            model.header.c,
            model.header.gamma,
            model.header.support_vectors,
            h.sample_accuracy,
            r.prepare_seconds,
            r.solver_seconds,
        ),
    ];
    Ok(Trained { bytes: model.to_bytes(), report })
}
