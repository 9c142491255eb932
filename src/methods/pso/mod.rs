//! Ziegler & Skubacz (2007): merged text blocks ([`blocks`]) with eight features each, content
//! when every feature passes its threshold ([`thresholds`]: model and scorer), thresholds fitted
//! by particle swarm optimisation against Ziegler's similarity ([`train`]).

pub mod blocks;
pub mod thresholds;
pub mod train;

use std::path::Path;

use super::{ScorerError, TrainError, TrainJob, Trained, read_model, required};
use crate::scoring::Scorer;
use thresholds::{PsoModel, PsoScorer};

/// `pso`: thresholds over the maximum subsequence; `pso-blocks`: over every block.
pub(super) fn load(name: &'static str, model: Option<&Path>) -> Result<Box<dyn Scorer>, ScorerError> {
    let (m, stem) = read_model(required(name, model)?, PsoModel::from_bytes)?;
    Ok(Box::new(if name == "pso" { PsoScorer::new(m, stem) } else { PsoScorer::every_block(m, stem) }))
}

/// Fits the thresholds (`pipeline train --learner pso`, §3.5).
pub(super) fn train(job: TrainJob<'_>) -> Result<Trained, TrainError> {
    let (entries, o, progress) = (job.entries, job.options, job.progress);
    let opts = train::PsoTrainOptions { threads: o.threads, ..o.pso };
    let w = &opts.swarm;
    if w.population == 0 {
        return Err(TrainError::Options("the PSO population must be positive".to_string()));
    }
    if ![w.inertia, w.cognitive, w.social, w.max_velocity].iter().all(|v| v.is_finite()) {
        return Err(TrainError::Options("PSO weights must be finite".to_string()));
    }
    let (model, r) = train::train_pso(entries, &opts, progress)?;
    let mut report = vec![format!("pages: {} chosen, {} used, {} skipped", r.pages, r.used, r.skipped)];
    for (g, h) in r.history.iter().enumerate() {
        if g % 10 == 0 || g + 1 == r.history.len() {
            report.push(format!("generation {g:>3}: best {:.4}, mean {:.4}", h.best, h.mean));
        }
    }
    let th: Vec<String> = blocks::FEATURE_NAMES
        .iter()
        .zip(&blocks::LOWER_BOUND)
        .zip(&model.thresholds.0)
        .map(|((n, &lower), t)| format!("{n} {} {t:.4}", if lower { ">=" } else { "<=" }))
        .collect();
    report.push(format!("thresholds: {}", th.join(", ")));
    report.push(format!(
        "fitness (mean similarity): {:.4} (every block accepted: {:.4})",
        model.header.training.fitness, r.accept_all_fitness,
    ));
    Ok(Trained { bytes: model.to_bytes(), report })
}
