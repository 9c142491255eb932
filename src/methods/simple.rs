//! Baseline 2 of Pasternack & Roth (2009, §6.2.2): every tag scores −3.25, every word or
//! symbol +1. No model, no look-ahead; the maximum subsequence then prefers long runs of text
//! with few tags.

use serde::{Deserialize, Serialize};

use crate::html::Token;
use crate::scoring::{PageScorer, Scorer};

/// Scores of the simple scorer.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SimpleScorerConfig {
    /// Score of every start or end tag (default −3.25, the paper's optimum).
    pub tag: f64,
    /// Score of every word or symbol (default 1).
    pub text: f64,
}

impl Default for SimpleScorerConfig {
    fn default() -> Self {
        SimpleScorerConfig { tag: -3.25, text: 1.0 }
    }
}

/// The simple scorer.
#[derive(Debug, Clone)]
pub struct SimpleScorer {
    config: SimpleScorerConfig,
}

impl SimpleScorer {
    pub fn new(config: SimpleScorerConfig) -> Self {
        SimpleScorer { config }
    }
}

/// Builds the scorer: no model, the paper's fixed scores.
pub(super) fn load(_: &'static str, _: Option<&std::path::Path>) -> Result<Box<dyn Scorer>, super::ScorerError> {
    Ok(Box::new(SimpleScorer::new(SimpleScorerConfig::default())))
}

impl Scorer for SimpleScorer {
    fn name(&self) -> &'static str {
        "simple"
    }

    fn model_id(&self) -> String {
        format!("simple(tag={},text={})", self.config.tag, self.config.text)
    }

    fn page_scorer(&self) -> Box<dyn PageScorer + '_> {
        Box::new(self.clone())
    }
}

impl PageScorer for SimpleScorer {
    #[inline]
    fn push(&mut self, _page: &str, token: &Token, out: &mut dyn FnMut(f64)) {
        out(if token.kind.is_tag() { self.config.tag } else { self.config.text });
    }

    fn finish(&mut self, _page: &str, _out: &mut dyn FnMut(f64)) {}
}
