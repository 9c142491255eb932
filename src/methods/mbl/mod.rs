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

use super::{ScorerError, read_model, required};
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
