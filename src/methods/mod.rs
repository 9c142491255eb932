//! Extraction methods, one folder (or file) each, and [`METHODS`], the one table that registers
//! them. A method is a [`Scorer`] (token scores for the extractor, [`crate::scoring`]), the
//! model it reads, and the learning that writes that model:
//!
//! - [`nb`]: the Naive Bayes token model of Pasternack & Roth (2009, §3), its training (§5.1)
//!   and the unsupervised bootstrap (§6.2.4); the default.
//! - [`simple`]: the paper's fixed-score baseline (§6.1); [`largest_block`]: the longest block.
//! - [`blocks`]: the block labellers of Gibson, Wellner & Lubar (2007): block features, CRF,
//!   MEMM and MaxEnt fitted by L-BFGS, and their multi-span and hybrid (`crf-mss`) scorers.
//! - [`svm`]: Yao & Zuo's SVM block classifier: features, training, scorer.
//! - [`mbl`]: the memory-based learner of the TiMBL thesis: text/tail units, IB1 (`knn`) and
//!   IGTree, training, and a scorer that also predicts the title and headings.
//! - [`pso`]: thresholds over the maximum subsequence or over every block, fitted by particle
//!   swarm optimisation against Ziegler's similarity.
//!
//! What two methods share lives below them: page segmentation into blocks in
//! [`crate::segment`], gold text and alignment in [`crate::gold`], the model container in
//! [`crate::model_file`].

pub mod blocks;
pub mod largest_block;
pub mod mbl;
pub mod nb;
pub mod pso;
pub mod simple;
pub mod svm;

use std::path::{Path, PathBuf};

use crate::dataset::ManifestEntry;
use crate::gold::LabelOptions;
use crate::model_file::ModelFileError;
use crate::scoring::Scorer;

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
    #[error("adapted model `{path}` scores pages of other layouts with its base model `{base}`: {source}")]
    BaseModel {
        path: PathBuf,
        base: String,
        #[source]
        source: Box<ScorerError>,
    },
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

/// Fits a method's model on labelled pages.
type Train = fn(TrainJob<'_>) -> Result<Trained, TrainError>;

/// One fit: the learner's name (for methods sharing a learner), the pages, the options, and a
/// progress callback taking the number of pages done.
#[derive(Clone, Copy)]
pub struct TrainJob<'a> {
    pub name: &'static str,
    pub entries: &'a [ManifestEntry],
    pub options: &'a TrainOptions,
    pub progress: &'a (dyn Fn(usize) + Sync),
}

/// One extraction method of the table [`METHODS`].
pub struct Method {
    pub name: &'static str,
    pub model: ModelUse,
    load: Load,
    /// How `pipeline train --learner NAME` fits its model; `None` for methods that learn
    /// nothing or read another method's model (`crf-mss`, `pso-blocks`).
    train: Option<Train>,
}

/// The one table of methods: a method is registered by one line here; [`NAMES`], the CLI's
/// `--scorer` values, config validation and [`build`] all read it.
pub const METHODS: &[Method] = &[
    Method { name: "nb", model: ModelUse::Optional, load: nb::load, train: Some(nb::train) },
    Method { name: "simple", model: ModelUse::Never, load: simple::load, train: None },
    Method { name: "crf", model: ModelUse::Required, load: blocks::load, train: Some(blocks::train) },
    Method { name: "memm", model: ModelUse::Required, load: blocks::load, train: Some(blocks::train) },
    Method { name: "maxent", model: ModelUse::Required, load: blocks::load, train: Some(blocks::train) },
    Method { name: "largest-block", model: ModelUse::Never, load: largest_block::load, train: None },
    Method { name: "crf-mss", model: ModelUse::Required, load: blocks::load, train: None },
    Method { name: "pso", model: ModelUse::Required, load: pso::load, train: Some(pso::train) },
    Method { name: "pso-blocks", model: ModelUse::Required, load: pso::load, train: None },
    Method { name: "svm", model: ModelUse::Required, load: svm::load, train: Some(svm::train) },
    Method { name: "knn", model: ModelUse::Required, load: mbl::load, train: Some(mbl::train) },
    Method { name: "igtree", model: ModelUse::Required, load: mbl::load, train: Some(mbl::train) },
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

/// The methods `pipeline train --learner` fits, in the table's order.
pub fn learners() -> Vec<&'static str> {
    METHODS.iter().filter(|m| m.train.is_some()).map(|m| m.name).collect()
}

/// What `pipeline train` gives a learner: threads, the filters of training pages, and each
/// family's own options (a learner reads its own and ignores the others').
#[derive(Debug, Clone, Default)]
pub struct TrainOptions {
    /// Worker threads (0 = one per core).
    pub threads: usize,
    /// Which training pages are used (the memory-based learner keeps its own defaults).
    pub label: LabelOptions,
    pub nb: nb::model::NbParams,
    /// The block labellers (`learner` is set from the method's name).
    pub blocks: blocks::learn::BlockTrainOptions,
    pub svm: svm::train::SvmTrainOptions,
    /// The memory-based learner (`algorithm` is set from the method's name).
    pub mbl: mbl::knn::MblOptions,
    pub pso: pso::train::PsoTrainOptions,
}

/// A fitted model: the bytes of its file and what training found, line by line, for the user.
#[derive(Debug, Clone)]
pub struct Trained {
    pub bytes: Vec<u8>,
    pub report: Vec<String>,
}

/// Errors fitting a model.
#[derive(Debug, thiserror::Error)]
pub enum TrainError {
    #[error("`{0}` is not a learner (learners: {known})", known = learners().join(", "))]
    Unknown(String),
    #[error("{0}")]
    Options(String),
    #[error("no training pages")]
    NoPages,
    #[error("cannot start the worker threads: {0}")]
    Threads(#[from] rayon::ThreadPoolBuildError),
    #[error(transparent)]
    Blocks(#[from] blocks::learn::BlockTrainError),
    #[error(transparent)]
    Svm(#[from] svm::train::SvmTrainError),
    #[error(transparent)]
    Mbl(#[from] mbl::train::MblTrainError),
}

/// Fits the model of learner `name` (one of [`learners`]) on `entries`.
pub fn train(
    name: &str,
    entries: &[ManifestEntry],
    options: &TrainOptions,
    progress: &(dyn Fn(usize) + Sync),
) -> Result<Trained, TrainError> {
    let (m, train) = METHODS
        .iter()
        .find_map(|m| Some((m, m.train?)).filter(|(m, _)| m.name == name))
        .ok_or_else(|| TrainError::Unknown(name.to_string()))?;
    if entries.is_empty() {
        return Err(TrainError::NoPages);
    }
    train(TrainJob { name: m.name, entries, options, progress })
}

/// A count of pages by the reason they were skipped, for a training report.
fn skipped_list<'a>(skipped: impl IntoIterator<Item = (&'a String, &'a usize)>) -> String {
    let list: Vec<String> = skipped.into_iter().map(|(k, v)| format!("{k} {v}")).collect();
    if list.is_empty() { "none".to_string() } else { list.join(", ") }
}

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

/// Reads and parses a model file for a scorer; returns the model and its identity in records
/// (the file name without its extension).
pub fn read_model<T>(
    path: &Path,
    parse: impl FnOnce(&[u8]) -> Result<T, ModelFileError>,
) -> Result<(T, String), ScorerError> {
    let bytes = std::fs::read(path).map_err(|source| ScorerError::Io { path: path.to_path_buf(), source })?;
    let model = parse(&bytes).map_err(|source| ScorerError::Model { path: path.to_path_buf(), source })?;
    let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    Ok((model, stem))
}

/// The model file of a method whose [`ModelUse`] is `Required` ([`load`] has checked it is there).
fn required<'a>(name: &str, model: Option<&'a Path>) -> Result<&'a Path, ScorerError> {
    model.ok_or_else(|| ScorerError::ModelRequired(name.to_string()))
}
