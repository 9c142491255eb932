//! The learned chooser of the span (issue 28): gradient-boosted regression trees over the
//! differences between a candidate's features ([`super::candidates`]) and the current
//! choice's predict how much better (shingle F1) the candidate would be; the extractor takes
//! the best candidate when its predicted gain passes [`super::ExtractOptions::chooser_margin`].
//! Trees, not a linear model: whether a longer run is the article or a comment thread depends
//! on its other features together (its link share, its place after the headline, its
//! furniture). Fitted by `pipeline chooser` on the shippable training pages (wcxb train and
//! aeb) and built into the binary from `models/chooser.json`.

use std::sync::OnceLock;

use serde::{Deserialize, Serialize};

use super::candidates::{FEATURE_NAMES, N_FEATURES};

/// One node of a regression tree: a split (`feature`, `threshold`; values ≤ it go `left`) or,
/// when `feature` is `None`, a leaf of value `value`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Node {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub feature: Option<usize>,
    #[serde(default)]
    pub threshold: f64,
    #[serde(default)]
    pub left: usize,
    #[serde(default)]
    pub right: usize,
    #[serde(default)]
    pub value: f64,
}

/// A fitted chooser.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Chooser {
    /// The feature names, in order (checked against [`FEATURE_NAMES`]).
    pub features: Vec<String>,
    /// The predicted gain before any tree.
    pub base: f64,
    /// Regression trees, each a list of nodes rooted at 0; their leaves add up.
    pub trees: Vec<Vec<Node>>,
    /// What it was fitted on (pages, candidates, rounds), for the model card.
    pub trained_on: String,
}

/// Errors reading a chooser file.
#[derive(Debug, thiserror::Error)]
pub enum ChooserError {
    #[error("chooser: {0}")]
    Json(#[from] serde_json::Error),
    #[error("chooser: features {found:?} are not this build's {expected:?}")]
    Features { found: Vec<String>, expected: Vec<&'static str> },
    #[error("chooser: tree {0} is malformed (a child out of range or pointing back, or a value not finite)")]
    Tree(usize),
    #[error("chooser: the base gain must be finite")]
    Base,
}

impl Chooser {
    pub fn from_json(text: &str) -> Result<Self, ChooserError> {
        let c: Chooser = serde_json::from_str(text)?;
        if c.features.iter().map(String::as_str).ne(FEATURE_NAMES.iter().copied()) {
            return Err(ChooserError::Features { found: c.features, expected: FEATURE_NAMES.to_vec() });
        }
        for (t, tree) in c.trees.iter().enumerate() {
            // Children point forward, so every walk ends.
            let ok = !tree.is_empty()
                && tree.iter().enumerate().all(|(i, n)| match n.feature {
                    None => n.value.is_finite(),
                    Some(f) => {
                        f < N_FEATURES
                            && n.threshold.is_finite()
                            && n.left > i
                            && n.right > i
                            && n.left < tree.len()
                            && n.right < tree.len()
                    }
                });
            if !ok {
                return Err(ChooserError::Tree(t));
            }
        }
        if !c.base.is_finite() {
            return Err(ChooserError::Base);
        }
        Ok(c)
    }

    /// The predicted F1 gain of a candidate with features `cand` over the current choice's
    /// `current`.
    pub fn gain(&self, current: &[f64; N_FEATURES], cand: &[f64; N_FEATURES]) -> f64 {
        let d: [f64; N_FEATURES] = std::array::from_fn(|i| cand[i] - current[i]);
        self.base + self.trees.iter().map(|t| leaf(t, &d)).sum::<f64>()
    }

    /// The candidate to take instead of the current one (the first of `features`, one vector
    /// per candidate): the best predicted, when its predicted gain is more than `margin`.
    pub fn choose<'a>(&self, features: impl IntoIterator<Item = &'a [f64; N_FEATURES]>, margin: f64) -> Option<usize> {
        let mut features = features.into_iter();
        let current = features.next()?;
        let (i, gain) = features
            .enumerate()
            .map(|(i, f)| (i + 1, self.gain(current, f)))
            .max_by(|a, b| a.1.total_cmp(&b.1).then(b.0.cmp(&a.0)))?;
        (gain > margin).then_some(i)
    }
}

/// The leaf value a tree gives to `x`.
pub fn leaf(tree: &[Node], x: &[f64; N_FEATURES]) -> f64 {
    let mut i = 0;
    loop {
        let n = &tree[i];
        match n.feature {
            None => return n.value,
            Some(f) => i = if x[f] <= n.threshold { n.left } else { n.right },
        }
    }
}

/// The chooser built into the binary (`models/chooser.json`).
pub fn builtin() -> &'static Chooser {
    static CHOOSER: OnceLock<Chooser> = OnceLock::new();
    CHOOSER.get_or_init(|| {
        Chooser::from_json(include_str!("../../models/chooser.json")).expect("models/chooser.json is checked by a test")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_builtin_chooser_reads() {
        assert_eq!(builtin().features.len(), N_FEATURES);
    }

    #[test]
    fn malformed_trees_are_refused() {
        let names: Vec<String> = FEATURE_NAMES.iter().map(|s| s.to_string()).collect();
        let back = Chooser {
            features: names.clone(),
            base: 0.0,
            trees: vec![vec![Node { feature: Some(1), threshold: 0.0, left: 0, right: 0, value: 0.0 }]],
            trained_on: String::new(),
        };
        let json = serde_json::to_string(&back).unwrap();
        assert!(matches!(Chooser::from_json(&json), Err(ChooserError::Tree(0))));
        let wrong = Chooser { features: vec!["x".into()], ..back };
        assert!(Chooser::from_json(&serde_json::to_string(&wrong).unwrap()).is_err());
    }
}
