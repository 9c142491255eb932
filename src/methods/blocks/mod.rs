//! The block labellers of Gibson, Wellner & Lubar (2007): each block of the page
//! ([`crate::segment`], §5) gets the paper's features ([`features`], §6) and a Content / NotContent
//! label from a linear-chain CRF ([`crf`]), a maximum-entropy Markov model ([`memm`]) or a
//! maximum-entropy classifier ([`maxent`]), all fitted by L-BFGS ([`lbfgs`]) in [`learn`], which
//! also owns the model file. [`scorer`] turns labels into token scores: every Content block
//! (multi-span) or the maximum subsequence over the marginals (`crf-mss`).

pub mod crf;
pub mod features;
pub mod lbfgs;
pub mod learn;
pub mod maxent;
pub mod memm;
pub mod scorer;

use std::path::Path;

use super::{ScorerError, TrainError, TrainJob, Trained, read_model, required};
use crate::scoring::Scorer;
use learn::BlockModel;
use scorer::{BlockOutput, BlockScorer};

/// A block-model scorer (Gibson et al. 2007): `crf`, `memm`, `maxent` keep every Content block;
/// `crf-mss` runs the maximum subsequence over the model's marginals (any block learner).
pub(super) fn load(name: &'static str, model: Option<&Path>) -> Result<Box<dyn Scorer>, ScorerError> {
    let path = required(name, model)?;
    let (m, stem) = read_model(path, BlockModel::from_bytes)?;
    let (name, output): (&'static str, _) = match name {
        "crf-mss" => ("crf-mss", BlockOutput::Hybrid),
        "crf" => ("crf", BlockOutput::MultiSpan),
        "memm" => ("memm", BlockOutput::MultiSpan),
        _ => ("maxent", BlockOutput::MultiSpan),
    };
    if output == BlockOutput::MultiSpan && m.header.learner != name {
        return Err(ScorerError::WrongLearner {
            path: path.to_path_buf(),
            learner: m.header.learner.clone(),
            scorer: name.to_string(),
        });
    }
    Ok(Box::new(BlockScorer::new(m, output, name, stem)))
}

/// Fits a block labeller (`pipeline train --learner crf|memm|maxent`, §4).
pub(super) fn train(job: TrainJob<'_>) -> Result<Trained, TrainError> {
    let (entries, o, progress) = (job.entries, job.options, job.progress);
    let name = job.name;
    let options = learn::BlockTrainOptions { learner: name.to_string(), ..o.blocks.clone() };
    if options.sigma.is_nan() || options.sigma <= 0.0 {
        return Err(TrainError::Options("sigma must be positive".to_string()));
    }
    if !(0.0..=1.0).contains(&options.label_threshold) {
        return Err(TrainError::Options("label threshold must be within 0..1".to_string()));
    }
    let model = learn::train(entries, &options, &o.label, o.threads, progress)?;
    let h = &model.header.training;
    let report = vec![format!(
        "{}: {} pages read, {} used, skipped: {}; {} blocks ({} Content); {} L-BFGS iterations{}, objective {:.1}",
        model.header.learner,
        entries.len(),
        h.pages_used,
        super::skipped_list(&h.pages_skipped),
        h.blocks,
        h.content_blocks,
        h.iterations,
        if h.converged { "" } else { " (not converged)" },
        h.objective,
    )];
    Ok(Trained { bytes: model.to_bytes(), report })
}
