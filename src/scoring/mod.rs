//! Token scorers: each token of a page gets a real-valued score, positive for "probably
//! article text", and [`max_subsequence`] picks the best-scoring run (Pasternack & Roth 2009,
//! §6.2). A scorer is one file implementing [`Scorer`] plus one line in [`build`].
//!
//! Scorers are streaming: a [`PageScorer`] receives tokens in order and emits one score per
//! token, in order, possibly a few tokens late (a trigram scorer needs two tokens of
//! look-ahead). The model behind a scorer is immutable and shared between threads.

pub mod max_subsequence;
pub mod simple;

use crate::html::Token;

pub use max_subsequence::{MaxSubsequence, Segment};
pub use simple::{SimpleScorer, SimpleScorerConfig};

/// A scoring model shared by all pages and threads.
pub trait Scorer: Send + Sync {
    /// The scorer's registered name (`simple`, `nb`, ...).
    fn name(&self) -> &'static str;
    /// A short description of the model (file, hash, parameters) for output records.
    fn model_id(&self) -> String;
    /// Per-page scoring state.
    fn page_scorer(&self) -> Box<dyn PageScorer + '_>;
}

/// Per-page streaming state of a scorer.
pub trait PageScorer {
    /// Takes the next token; emits scores of earlier or this token, in order, through `out`.
    fn push(&mut self, page: &str, token: &Token, out: &mut dyn FnMut(f64));
    /// End of page: emits the scores still owed.
    fn finish(&mut self, page: &str, out: &mut dyn FnMut(f64));
}

/// Errors building a scorer from its name and model.
#[derive(Debug, thiserror::Error)]
pub enum ScorerError {
    #[error("unknown scorer `{0}` (known: {known})", known = NAMES.join(", "))]
    Unknown(String),
}

/// Registered scorer names.
pub const NAMES: &[&str] = &["simple"];

/// Builds a registered scorer by name.
pub fn build(name: &str) -> Result<Box<dyn Scorer>, ScorerError> {
    match name {
        "simple" => Ok(Box::new(SimpleScorer::new(SimpleScorerConfig::default()))),
        other => Err(ScorerError::Unknown(other.to_string())),
    }
}
