//! The SVM block classifier of Yao & Zuo: eighteen features per block ([`features`], §III.B),
//! an RBF-kernel C-SVM fitted with linfa-svm ([`train`], §III.C), and the model file and scorer
//! that keeps every Content block ([`scorer`]).

pub mod features;
pub mod scorer;
pub mod train;

use std::path::Path;

use super::{ScorerError, read_model, required};
use crate::scoring::Scorer;
use scorer::{SvmModel, SvmScorer};

/// Builds the `svm` scorer from its model file.
pub(super) fn load(name: &'static str, model: Option<&Path>) -> Result<Box<dyn Scorer>, ScorerError> {
    let (m, stem) = read_model(required(name, model)?, SvmModel::from_bytes)?;
    Ok(Box::new(SvmScorer::new(m, stem)))
}
