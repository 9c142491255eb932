//! The learned chooser of the span (issue 28): gradient-boosted regression trees over the
//! differences between a candidate's features ([`crate::extract::candidates`]) and the
//! current choice's predict how much better (shingle F1) the candidate would be; the extractor
//! takes the best candidate when its predicted gain passes its `chooser_margin`. Trees, not a
//! linear model: a feature's effect is a step function of it (a link share of 0.6 marks a link
//! list, 0.3 does not). The built-in chooser's trees are stumps, so the effects add up; trees
//! of any depth are read, and `pipeline chooser --depth` fits deeper ones, which let features
//! act together but, on 1,087 training pages, also fit the draw (models/README.md, session 34).
//!
//! A chooser is fitted for one scorer's choices: `pipeline chooser` fits the built-in one
//! (`models/chooser.json`, on the shippable training pages wcxb train and aeb) for the
//! built-in model (which carries it, on at its stored margin), and `pipeline train --chooser`
//! fits one for the model it trains and stores
//! it in the model file's header, where [`crate::scoring::Scorer::chooser`] finds it. It sits
//! here, below the methods, so that a model file can hold one.

use std::sync::OnceLock;

use serde::{Deserialize, Serialize};

/// Names of the candidate features ([`crate::extract::candidates`] computes them), in order:
/// the chooser file lists its weights by these names.
pub const FEATURE_NAMES: [&str; N_FEATURES] = [
    "bias",
    "value_share",
    "mean_score",
    "log_words",
    "word_share",
    "link_share",
    "start_position",
    "holds_headline",
    "after_headline",
    "in_furniture",
    "is_current",
    "holds_current",
    "inside_current",
    "in_article",
    "sentence_share",
    "in_positive",
    "paragraph_density",
    "text_density",
    "comma_share",
    "log_items",
    "page_link_share",
    "is_main",
];
pub const N_FEATURES: usize = 22;
/// The index of `in_furniture` in [`FEATURE_NAMES`].
const IN_FURNITURE: usize = feature_index("in_furniture");

/// The index of a feature in [`FEATURE_NAMES`] (a compile error when there is none).
const fn feature_index(name: &str) -> usize {
    let mut i = 0;
    while i < N_FEATURES {
        if crate::html::tags::const_str_eq(FEATURE_NAMES[i], name) {
            return i;
        }
        i += 1;
    }
    panic!("no such feature")
}

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

/// A fitted chooser. It is read only through [`Chooser::from_json`]'s checks, also inside a
/// model file's header (serde's `try_from`), so a tree that points back never walks forever.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, try_from = "ChooserFile")]
pub struct Chooser {
    /// The feature names, in order (checked against [`FEATURE_NAMES`]).
    pub features: Vec<String>,
    /// The predicted gain before any tree.
    pub base: f64,
    /// Regression trees, each a list of nodes rooted at 0; their leaves add up.
    pub trees: Vec<Vec<Node>>,
    /// What it was fitted on (pages, candidates, rounds), for the model card.
    pub trained_on: String,
    /// The margin chosen for it when it was fitted (cross-validated on its training pages;
    /// 0 when switching did not pay there), used when the extractor's `chooser_margin` is not
    /// set. The built-in chooser's is the one leave-one-dataset-out chose over the dev sets
    /// (`pipeline chooser --margin`); absent, the chooser is off unless a margin is given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub margin: Option<f64>,
    /// The trees laid out for walking (built from `trees`).
    #[serde(skip)]
    flat: Flat,
}

/// The trees in one array of small nodes: the chooser walks every tree for each candidate of a
/// page (up to six today, 600 stumps), and when an earlier chooser walked 16 candidates × 300
/// trees, nodes of 48 bytes scattered over 300 vectors made it a sixth of `nb`'s time.
#[derive(Debug, Clone, Default, PartialEq)]
struct Flat {
    nodes: Vec<FlatNode>,
    roots: Vec<u32>,
}

/// A split (`x` is the threshold) or, when `feature` is [`LEAF`], a leaf (`x` is its value);
/// children are indices into [`Flat::nodes`].
#[derive(Debug, Clone, Copy, PartialEq)]
struct FlatNode {
    x: f64,
    feature: u32,
    left: u32,
    right: u32,
}

const LEAF: u32 = u32::MAX;

impl Flat {
    fn new(trees: &[Vec<Node>]) -> Flat {
        let mut flat = Flat::default();
        for tree in trees {
            let at = flat.nodes.len() as u32;
            flat.roots.push(at);
            flat.nodes.extend(tree.iter().map(|n| match n.feature {
                None => FlatNode { x: n.value, feature: LEAF, left: 0, right: 0 },
                Some(f) => {
                    FlatNode { x: n.threshold, feature: f as u32, left: at + n.left as u32, right: at + n.right as u32 }
                }
            }));
        }
        flat
    }

    /// The sum of the leaves `x` reaches, tree by tree in order (as [`leaf`] adds them).
    fn sum(&self, x: &[f64; N_INPUTS]) -> f64 {
        self.roots
            .iter()
            .map(|&r| {
                let mut i = r as usize;
                loop {
                    let n = self.nodes[i];
                    if n.feature == LEAF {
                        return n.x;
                    }
                    i = if x[n.feature as usize] <= n.x { n.left } else { n.right } as usize;
                }
            })
            .sum()
    }
}

/// A chooser as its file holds it, before the checks.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ChooserFile {
    features: Vec<String>,
    base: f64,
    trees: Vec<Vec<Node>>,
    trained_on: String,
    #[serde(default)]
    margin: Option<f64>,
}

impl TryFrom<ChooserFile> for Chooser {
    type Error = ChooserError;

    fn try_from(c: ChooserFile) -> Result<Self, ChooserError> {
        if c.features.iter().map(String::as_str).ne(FEATURE_NAMES.iter().copied()) {
            return Err(ChooserError::Features { found: c.features, expected: FEATURE_NAMES.to_vec() });
        }
        for (t, tree) in c.trees.iter().enumerate() {
            // Children point forward, so every walk ends.
            let ok = !tree.is_empty()
                && tree.iter().enumerate().all(|(i, n)| match n.feature {
                    None => n.value.is_finite(),
                    Some(f) => {
                        f < N_INPUTS
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
        if c.margin.is_some_and(|m| !(0.0..=1.0).contains(&m)) {
            return Err(ChooserError::Margin);
        }
        Ok(Chooser { margin: c.margin, ..Chooser::new(c.base, c.trees, c.trained_on) })
    }
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
    #[error("chooser: its margin must be between 0 and 1")]
    Margin,
}

impl Chooser {
    /// A chooser of these trees (checked by [`Chooser::from_json`] when read from a file).
    pub fn new(base: f64, trees: Vec<Vec<Node>>, trained_on: String) -> Chooser {
        let features = FEATURE_NAMES.iter().map(|s| s.to_string()).collect();
        let flat = Flat::new(&trees);
        Chooser { features, base, trees, trained_on, margin: None, flat }
    }

    /// The mean of several fits' predictions, as one chooser: every fit's trees, their leaves
    /// divided by the number of fits, and the mean of their bases.
    pub fn average(fits: &[Chooser], trained_on: String) -> Chooser {
        let k = fits.len().max(1) as f64;
        let base = fits.iter().map(|c| c.base).sum::<f64>() / k;
        let trees = fits
            .iter()
            .flat_map(|c| &c.trees)
            .map(|t| t.iter().map(|n| Node { value: n.value / k, ..n.clone() }).collect())
            .collect();
        Chooser::new(base, trees, trained_on)
    }

    pub fn from_json(text: &str) -> Result<Self, ChooserError> {
        Chooser::try_from(serde_json::from_str::<ChooserFile>(text)?)
    }

    /// The predicted F1 gain of a candidate with features `cand` over the current choice's
    /// `current`.
    pub fn gain(&self, current: &[f64; N_FEATURES], cand: &[f64; N_FEATURES]) -> f64 {
        self.base + self.flat.sum(&inputs(current, cand))
    }

    /// The candidate to take instead of the current one (the first of `features`, one vector
    /// per candidate): the best predicted, when its predicted gain is more than `margin`. A
    /// candidate inside furniture (a sidebar, a footer, a comment section by its id/class)
    /// never replaces a current choice outside it: the extractor's own filters drop such text,
    /// and the training pages hold too few of them for the trees to learn it (a 2012 post lost
    /// its 170 words to a sidebar list; wcxb-0046 0.37 → 0.75, no dev page down).
    pub fn choose<'a>(&self, features: impl IntoIterator<Item = &'a [f64; N_FEATURES]>, margin: f64) -> Option<usize> {
        let mut features = features.into_iter();
        let current = features.next()?;
        let (i, gain) = features
            .enumerate()
            .filter(|(_, f)| f[IN_FURNITURE] == 0.0 || current[IN_FURNITURE] != 0.0)
            .map(|(i, f)| (i + 1, self.gain(current, f)))
            .max_by(|a, b| a.1.total_cmp(&b.1).then(b.0.cmp(&a.0)))?;
        (gain > margin).then_some(i)
    }
}

/// What the trees read of a candidate: its features' differences from the current choice's
/// (is it longer, less linked, further down?), then its own (a link share of 0.6 is a link
/// list whatever the current choice is).
pub const N_INPUTS: usize = 2 * N_FEATURES;

/// The trees' inputs for candidate `cand` against the current choice `current`.
pub fn inputs(current: &[f64; N_FEATURES], cand: &[f64; N_FEATURES]) -> [f64; N_INPUTS] {
    std::array::from_fn(|i| if i < N_FEATURES { cand[i] - current[i] } else { cand[i - N_FEATURES] })
}

/// The leaf value a tree gives to `x`.
pub fn leaf(tree: &[Node], x: &[f64; N_INPUTS]) -> f64 {
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
        assert_eq!(FEATURE_NAMES[IN_FURNITURE], "in_furniture");
    }

    #[test]
    fn a_candidate_in_furniture_never_replaces_a_choice_outside_it() {
        // Trees that predict a gain of 0.5 for every candidate: the first best one is taken.
        let c = Chooser::new(0.5, Vec::new(), String::new());
        let plain = [0.0; N_FEATURES];
        let mut furniture = plain;
        furniture[IN_FURNITURE] = 1.0;
        assert_eq!(c.choose([&plain, &plain, &plain], 0.1), Some(1));
        assert_eq!(c.choose([&plain, &furniture, &plain], 0.1), Some(2));
        assert_eq!(c.choose([&plain, &furniture], 0.1), None);
        // A current choice in furniture itself may give way to anything.
        assert_eq!(c.choose([&furniture, &furniture], 0.1), Some(1));
        assert_eq!(c.choose([&plain, &plain], 0.6), None, "the margin still holds");
    }

    /// The flat layout walks every tree as [`leaf`] does and adds them in the same order.
    #[test]
    fn the_flat_trees_give_the_leaves_sum() {
        let mut seed = 7u64;
        let mut next = move || {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (seed >> 33) as f64 / f64::from(1u32 << 31)
        };
        // Trees of 3 splits and 4 leaves in pre-order, as the fit writes them.
        let trees: Vec<Vec<Node>> = (0..50)
            .map(|_| {
                let split = |f: f64, t: f64, l, r| Node {
                    feature: Some((f * N_INPUTS as f64) as usize),
                    threshold: t,
                    left: l,
                    right: r,
                    value: 0.0,
                };
                let leaf = |v: f64| Node { feature: None, threshold: 0.0, left: 0, right: 0, value: v };
                vec![
                    split(next(), next(), 1, 4),
                    split(next(), next(), 2, 3),
                    leaf(next()),
                    leaf(next()),
                    split(next(), next(), 5, 6),
                    leaf(next()),
                    leaf(next()),
                ]
            })
            .collect();
        let c = Chooser::new(0.25, trees.clone(), String::new());
        for _ in 0..200 {
            let a: [f64; N_FEATURES] = std::array::from_fn(|_| next());
            let b: [f64; N_FEATURES] = std::array::from_fn(|_| next());
            let x = inputs(&a, &b);
            let expected = 0.25 + trees.iter().map(|t| leaf(t, &x)).sum::<f64>();
            assert_eq!(c.gain(&a, &b), expected);
        }
    }

    #[test]
    fn malformed_trees_are_refused() {
        let back = Chooser::new(
            0.0,
            vec![vec![Node { feature: Some(1), threshold: 0.0, left: 0, right: 0, value: 0.0 }]],
            String::new(),
        );
        let json = serde_json::to_string(&back).unwrap();
        assert!(matches!(Chooser::from_json(&json), Err(ChooserError::Tree(0))));
        // Read as part of a model file's header, the same checks run.
        assert!(serde_json::from_str::<Chooser>(&json).unwrap_err().to_string().contains("tree 0 is malformed"));
        let mut far = back.clone();
        (far.trees, far.margin) =
            (vec![vec![Node { feature: None, threshold: 0.0, left: 0, right: 0, value: 0.0 }]], Some(2.0));
        let json_far = serde_json::to_string(&far).unwrap();
        assert!(matches!(Chooser::from_json(&json_far), Err(ChooserError::Margin)));
        let wrong = Chooser { features: vec!["x".into()], ..back };
        assert!(Chooser::from_json(&serde_json::to_string(&wrong).unwrap()).is_err());
    }
}
