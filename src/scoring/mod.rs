//! Token scorers: each token of a page gets a real-valued score, positive for "probably
//! article text", and [`max_subsequence`] picks the best-scoring run (Pasternack & Roth 2009,
//! §6.2). A method implements [`Scorer`] in its folder of [`crate::methods`] and is registered
//! by one line of [`crate::methods::METHODS`].
//!
//! Scorers are streaming: a [`PageScorer`] receives tokens in order and emits one score per
//! token, in order, possibly a few tokens late (a trigram scorer needs two tokens of
//! look-ahead). The model behind a scorer is immutable and shared between threads.

pub mod chooser;
pub mod max_subsequence;
pub use crate::model_file;

use crate::html::Token;

pub use max_subsequence::{MaxSubsequence, Segment};

/// A scoring model shared by all pages and threads.
pub trait Scorer: Send + Sync {
    /// The scorer's registered name (`simple`, `nb`, ...).
    fn name(&self) -> &'static str;
    /// A short description of the model (file, hash, parameters) for output records.
    fn model_id(&self) -> String;
    /// Per-page scoring state.
    fn page_scorer(&self) -> Box<dyn PageScorer + '_>;
    /// Sets a constant added to every token score (the paper's bias; no-op where meaningless).
    fn set_bias(&mut self, _bias: f64) {}
    /// Sets the extra constant added to the scores of tags (no-op where meaningless).
    fn set_tag_bias(&mut self, _tag_bias: f64) {}
    /// The span chooser fitted for this scorer's choices, if its model file holds one; the
    /// extractor then uses it instead of the built-in one ([`chooser::builtin`]).
    fn chooser(&self) -> Option<&chooser::Chooser> {
        None
    }
    /// How the extractor turns this scorer's token scores into text (default: one maximum
    /// subsequence).
    fn selection(&self) -> Selection {
        Selection::MaxSubsequence
    }
}

/// How token scores become the extracted text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Selection {
    /// The maximum-valued span (Pasternack & Roth 2009).
    MaxSubsequence,
    /// Every token scoring above 0, in order: the multi-span output of block labellers
    /// (Gibson et al. 2007 keep every Content block, contiguous or not).
    PositiveTokens,
}

/// Per-page streaming state of a scorer.
pub trait PageScorer {
    /// Takes the next token; emits scores of earlier or this token, in order, through `out`.
    fn push(&mut self, page: &str, token: &Token, out: &mut dyn FnMut(f64));
    /// End of page: emits the scores still owed.
    fn finish(&mut self, page: &str, out: &mut dyn FnMut(f64));
    /// After [`finish`](Self::finish): the page structure, for scorers that predict one.
    fn structure(&mut self) -> Option<Structure> {
        None
    }
}

/// Title and headings predicted by a structure-labelling scorer (`knn`, `igtree`: the
/// memory-based thesis' title / heading / body / garbage), with the thesis' post-processing
/// warnings (§6.8). Output records carry it so an indexer gets the article's structure.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Structure {
    /// The predicted article title (not `<title>`), if any.
    pub title: Option<String>,
    /// Predicted headings, in page order.
    pub headings: Vec<String>,
    /// `no_title`, `multiple_titles`, `consecutive_headings`.
    pub warnings: Vec<String>,
    /// Class code of every text-tail unit (for unit-level evaluation; not serialised).
    #[serde(skip)]
    pub unit_classes: Vec<u8>,
}
