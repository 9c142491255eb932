//! The Naive Bayes token model of Pasternack & Roth (2009), the default method: [`model`] (the
//! model file and the streaming trigram scorer, §3), [`train`] (counts from pages aligned with
//! their gold text, §5.1) and [`bootstrap`] (self-training on unlabelled pages, §6.2.4).

pub mod bootstrap;
pub mod model;
pub mod train;

use std::path::Path;

use super::{ScorerError, read_model};
use crate::scoring::Scorer;
use model::{NbModel, NbScorer};

/// The default model, trained on the wcxb train split and aeb (models/README.md), built into
/// the binary.
pub static DEFAULT_MODEL: &[u8] = include_bytes!("../../../models/default.nbm");

/// The scorer of §3: the built-in model, or a model file.
pub(super) fn load(_: &'static str, model: Option<&Path>) -> Result<Box<dyn Scorer>, ScorerError> {
    match model {
        None => {
            let m = NbModel::from_bytes(DEFAULT_MODEL)
                .map_err(|source| ScorerError::Model { path: "<built-in default.nbm>".into(), source })?;
            Ok(Box::new(NbScorer::new(m, "default")))
        }
        Some(path) => {
            let (m, stem) = read_model(path, NbModel::from_bytes)?;
            Ok(Box::new(NbScorer::new(m, stem)))
        }
    }
}
