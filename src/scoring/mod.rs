//! Token scorers: each token of a page gets a real-valued score, positive for "probably
//! article text", and [`max_subsequence`] picks the best-scoring run (Pasternack & Roth 2009,
//! §6.2). A scorer is one file implementing [`Scorer`] plus one line in [`build`].
//!
//! Scorers are streaming: a [`PageScorer`] receives tokens in order and emits one score per
//! token, in order, possibly a few tokens late (a trigram scorer needs two tokens of
//! look-ahead). The model behind a scorer is immutable and shared between threads.

pub mod blocks;
pub mod largest_block;
pub mod max_subsequence;
pub mod mbl;
pub use crate::model_file;
pub mod naive_bayes;
pub mod pso;
pub mod pso_blocks;
pub mod simple;
pub mod svm;

use std::path::{Path, PathBuf};

use crate::html::Token;
use model_file::ModelFileError;
use naive_bayes::{NbModel, NbScorer};

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
    /// Sets a constant added to every token score (the paper's bias; no-op where meaningless).
    fn set_bias(&mut self, _bias: f64) {}
    /// Sets the extra constant added to the scores of tags (no-op where meaningless).
    fn set_tag_bias(&mut self, _tag_bias: f64) {}
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

/// Errors building a scorer from its name and model.
#[derive(Debug, thiserror::Error)]
pub enum ScorerError {
    #[error("unknown scorer `{0}` (known: {known})", known = NAMES.join(", "))]
    Unknown(String),
    #[error("cannot read model `{path}`: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("model `{path}`: {source}")]
    Model {
        path: PathBuf,
        #[source]
        source: ModelFileError,
    },
    #[error("scorer `{0}` takes no model file")]
    NoModelNeeded(String),
    #[error("the {what} must be a finite number, not {value}")]
    NotFinite { what: &'static str, value: f64 },
    #[error("scorer `{0}` needs a model file (train one with `pipeline train --learner ...`)")]
    ModelRequired(String),
    #[error("model `{path}` was trained by `{learner}`, not for scorer `{scorer}`")]
    WrongLearner { path: PathBuf, learner: String, scorer: String },
}

/// Whether a method reads a model file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ModelUse {
    /// None: a model file is refused.
    Never,
    /// The built-in model unless a file is given (`nb`).
    Optional,
    /// A file is required (the learned methods).
    Required,
}

/// Builds a method's scorer: its name (for methods sharing a builder) and its model file,
/// present whenever the method's [`ModelUse`] asks for one.
type Load = fn(&'static str, Option<&Path>) -> Result<Box<dyn Scorer>, ScorerError>;

/// One extraction method of the table [`METHODS`].
pub struct Method {
    pub name: &'static str,
    pub model: ModelUse,
    load: Load,
}

/// The one table of methods: a method is registered by one line here; [`NAMES`], the CLI's
/// `--scorer` values, config validation and [`build`] all read it.
pub const METHODS: &[Method] = &[
    Method { name: "nb", model: ModelUse::Optional, load: load_nb },
    Method {
        name: "simple",
        model: ModelUse::Never,
        load: |_, _| Ok(Box::new(SimpleScorer::new(SimpleScorerConfig::default()))),
    },
    Method { name: "crf", model: ModelUse::Required, load: load_block },
    Method { name: "memm", model: ModelUse::Required, load: load_block },
    Method { name: "maxent", model: ModelUse::Required, load: load_block },
    Method {
        name: "largest-block",
        model: ModelUse::Never,
        load: |_, _| Ok(Box::new(largest_block::LargestBlockScorer)),
    },
    Method { name: "crf-mss", model: ModelUse::Required, load: load_block },
    Method { name: "pso", model: ModelUse::Required, load: load_pso },
    Method { name: "pso-blocks", model: ModelUse::Required, load: load_pso },
    Method { name: "svm", model: ModelUse::Required, load: |_, model| svm::load(model) },
    Method { name: "knn", model: ModelUse::Required, load: mbl::load },
    Method { name: "igtree", model: ModelUse::Required, load: mbl::load },
];

/// Registered scorer names, in the table's order.
pub const NAMES: [&str; METHODS.len()] = {
    let mut names = [""; METHODS.len()];
    let mut i = 0;
    while i < METHODS.len() {
        names[i] = METHODS[i].name;
        i += 1;
    }
    names
};

/// The default model, trained on the wcxb train split (models/README.md), built into the binary.
pub static DEFAULT_NB_MODEL: &[u8] = include_bytes!("../../models/default.nbm");

/// Builds a registered scorer by name, with an optional model file (else the built-in one)
/// and an optional bias replacing the model's own.
pub fn build(
    name: &str,
    model: Option<&Path>,
    bias: Option<f64>,
    tag_bias: Option<f64>,
) -> Result<Box<dyn Scorer>, ScorerError> {
    // A NaN or infinite bias makes every token score NaN: empty text on every page.
    for (what, v) in [("bias", bias), ("tag bias", tag_bias)] {
        if let Some(v) = v.filter(|v| !v.is_finite()) {
            return Err(ScorerError::NotFinite { what, value: v });
        }
    }
    let mut scorer = load(name, model)?;
    if let Some(b) = bias {
        scorer.set_bias(b);
    }
    if let Some(t) = tag_bias {
        scorer.set_tag_bias(t);
    }
    Ok(scorer)
}

fn load(name: &str, model: Option<&Path>) -> Result<Box<dyn Scorer>, ScorerError> {
    let m = METHODS.iter().find(|m| m.name == name).ok_or_else(|| ScorerError::Unknown(name.to_string()))?;
    match (m.model, model) {
        (ModelUse::Never, Some(_)) => Err(ScorerError::NoModelNeeded(name.to_string())),
        (ModelUse::Required, None) => Err(ScorerError::ModelRequired(name.to_string())),
        _ => (m.load)(m.name, model),
    }
}

/// The Naive Bayes scorer of §3: the built-in model, or a model file.
fn load_nb(_: &'static str, model: Option<&Path>) -> Result<Box<dyn Scorer>, ScorerError> {
    match model {
        None => {
            let m = NbModel::from_bytes(DEFAULT_NB_MODEL)
                .map_err(|source| ScorerError::Model { path: "<built-in default.nbm>".into(), source })?;
            Ok(Box::new(NbScorer::new(m, "default")))
        }
        Some(path) => {
            let bytes = std::fs::read(path).map_err(|source| ScorerError::Io { path: path.to_path_buf(), source })?;
            let m = NbModel::from_bytes(&bytes)
                .map_err(|source| ScorerError::Model { path: path.to_path_buf(), source })?;
            Ok(Box::new(NbScorer::new(m, model_stem(path))))
        }
    }
}

/// The PSO scorers: thresholds over the maximum subsequence (`pso`), or over every block.
fn load_pso(name: &'static str, model: Option<&Path>) -> Result<Box<dyn Scorer>, ScorerError> {
    let path = model.ok_or_else(|| ScorerError::ModelRequired(name.to_string()))?;
    let bytes = std::fs::read(path).map_err(|source| ScorerError::Io { path: path.to_path_buf(), source })?;
    let m =
        pso::PsoModel::from_bytes(&bytes).map_err(|source| ScorerError::Model { path: path.to_path_buf(), source })?;
    let stem = model_stem(path);
    Ok(Box::new(if name == "pso" { pso::PsoScorer::new(m, stem) } else { pso::PsoScorer::every_block(m, stem) }))
}

/// A model's identity in records: its file name without the extension.
fn model_stem(path: &Path) -> String {
    path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default()
}

/// A block-model scorer (Gibson et al. 2007): `crf`, `memm`, `maxent` keep every Content block;
/// `crf-mss` runs the maximum subsequence over the model's marginals (any block learner).
fn load_block(name: &'static str, model: Option<&Path>) -> Result<Box<dyn Scorer>, ScorerError> {
    use crate::learners::BlockModel;
    use blocks::{BlockOutput, BlockScorer};
    let path = model.ok_or_else(|| ScorerError::ModelRequired(name.to_string()))?;
    let bytes = std::fs::read(path).map_err(|source| ScorerError::Io { path: path.to_path_buf(), source })?;
    let m = BlockModel::from_bytes(&bytes).map_err(|source| ScorerError::Model { path: path.to_path_buf(), source })?;
    let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    let (name, output): (&'static str, _) = match name {
        "crf-mss" => ("crf-mss", BlockOutput::Hybrid),
        "crf" => ("crf", BlockOutput::MultiSpan),
        "memm" => ("memm", BlockOutput::MultiSpan),
        _ => ("maxent", BlockOutput::MultiSpan),
    };
    if output == BlockOutput::MultiSpan && m.header.learner != name {
        return Err(ScorerError::WrongLearner {
            path: path.to_path_buf(),
            learner: m.header.learner.clone(),
            scorer: name.to_string(),
        });
    }
    Ok(Box::new(BlockScorer::new(m, output, name, stem)))
}
