//! Memory-based learning after the TiMBL thesis: the page's element text and tail units with
//! their features and gold classes (title, heading, body, garbage; [`units`]), IB1 `knn` and its
//! model file ([`knn`]), IGTree ([`igtree`]), training ([`train`]), and the scorer that keeps
//! the body units and predicts the title and headings ([`scorer`]).

pub mod igtree;
pub mod knn;
pub mod scorer;
pub mod train;
pub mod units;

use std::path::Path;

use super::{ScorerError, TrainError, TrainJob, Trained, read_model, required};
use crate::gold::LabelOptions;
use crate::scoring::Scorer;
use knn::{Algorithm, MblModel};
use scorer::MblScorer;

/// Builds `knn` or `igtree` from a model file.
pub(super) fn load(name: &'static str, model: Option<&Path>) -> Result<Box<dyn Scorer>, ScorerError> {
    let path = required(name, model)?;
    let (m, stem) = read_model(path, MblModel::from_bytes)?;
    if name == "knn" && m.header.options.algorithm == Algorithm::Igtree {
        // An IGTree file has no instances left to search.
        return Err(ScorerError::WrongLearner {
            path: path.to_path_buf(),
            learner: "igtree".to_string(),
            scorer: name.to_string(),
        });
    }
    Ok(Box::new(MblScorer::new(m, name == "igtree", stem)))
}

/// Builds the instance base or the tree (`pipeline train --learner knn|igtree`). Training
/// pages are filtered by the default label options, whatever the other learners use.
pub(super) fn train(job: TrainJob<'_>) -> Result<Trained, TrainError> {
    let (entries, o, progress) = (job.entries, job.options, job.progress);
    let name = job.name;
    let algorithm = if name == "igtree" { Algorithm::Igtree } else { Algorithm::Ib1 };
    let opts = knn::MblOptions { algorithm, ..o.mbl };
    if !(0.0..=1.0).contains(&opts.label_threshold) {
        return Err(TrainError::Options("unit threshold must be within 0..1".to_string()));
    }
    let model = train::train_mbl(entries, &opts, &LabelOptions::default(), o.threads, progress)?;
    let (h, t) = (&model.header, &model.header.training);
    let c = &t.unit_classes;
    let mut top: Vec<(usize, f64)> = h.weights.iter().copied().enumerate().collect();
    top.sort_by(|a, b| b.1.total_cmp(&a.1));
    let top: Vec<String> = top.iter().take(6).map(|(f, w)| format!("{} {w:.3}", units::feature_name(*f))).collect();
    let report = vec![
        format!(
            "{name}: {} pages read, {} used, skipped: {}; units title {} heading {} body {} garbage {}",
            entries.len(),
            t.pages_used,
            super::skipped_list(&t.pages_skipped),
            c[0],
            c[1],
            c[2],
            c[3],
        ),
        format!("weights ({}): {}", opts.weighting.name(), top.join(", ")),
        format!(
            "{} instances, {} stored ({})",
            t.instances,
            h.stored,
            if algorithm == Algorithm::Igtree { "tree nodes" } else { "distinct vectors" },
        ),
    ];
    Ok(Trained { bytes: model.to_bytes(), report })
}
