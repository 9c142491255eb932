//! Ziegler & Skubacz (2007): merged text blocks ([`blocks`]) with eight features each, content
//! when every feature passes its threshold ([`thresholds`]: model and scorer), thresholds fitted
//! by particle swarm optimisation against Ziegler's similarity ([`train`]).

pub mod blocks;
pub mod thresholds;
pub mod train;

use std::path::Path;

use super::{ScorerError, read_model, required};
use crate::scoring::Scorer;
use thresholds::{PsoModel, PsoScorer};

/// `pso`: thresholds over the maximum subsequence; `pso-blocks`: over every block.
pub(super) fn load(name: &'static str, model: Option<&Path>) -> Result<Box<dyn Scorer>, ScorerError> {
    let (m, stem) = read_model(required(name, model)?, PsoModel::from_bytes)?;
    Ok(Box::new(if name == "pso" { PsoScorer::new(m, stem) } else { PsoScorer::every_block(m, stem) }))
}
