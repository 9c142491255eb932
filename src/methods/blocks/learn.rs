//! Block-level learners of Gibson, Wellner & Lubar (2007, §4): a linear-chain CRF
//! ([`super::crf`]), a maximum-entropy Markov model ([`super::memm`]) and a maximum-entropy classifier
//! ([`super::maxent`]) over the hashed block features of [`crate::methods::blocks::features`]. A learner is
//! one file implementing [`BlockLearner`] plus one line in [`learner`].
//!
//! This module owns what they share: the parameter layout (one weight per hashed feature, then
//! a few learner-specific parameters), training (labelled pages in parallel, then L-BFGS on
//! the negative log-likelihood plus the Gaussian prior ‖θ‖²/2σ², §4), and the model file
//! (the shared [`crate::scoring::model_file`] container, header kind `blocks`). Turning block
//! labels into token scores is [`crate::methods::blocks::scorer`]' job.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::dataset::ManifestEntry;
use crate::gold::{LabelOptions, SkipReason};
use crate::methods::blocks::features::{BlockFeatureConfig, FeatureExtractor, PageFeatures};
use crate::model_file::{self, ModelFileError};
use crate::segment::labels::label_blocks;

/// One page of training data: block features and gold labels.
#[derive(Debug, Clone, Default)]
pub struct TrainPage {
    pub feats: PageFeatures,
    pub labels: Vec<bool>,
}

/// A page's predicted labels and per-block p(Content).
#[derive(Debug, Clone, Default)]
pub struct Prediction {
    pub labels: Vec<bool>,
    pub p_content: Vec<f64>,
    /// Node scores (scratch, reused between pages).
    pub scratch: Vec<f64>,
}

/// A block-labelling learner. Parameters are `theta[..dims]` (one weight per hashed feature)
/// then [`extra_params`](Self::extra_params) of the learner's own.
pub trait BlockLearner: Sync {
    fn name(&self) -> &'static str;
    fn extra_params(&self) -> usize;
    /// Negative log-likelihood of `pages` (no prior); adds its gradient to `grad`.
    fn objective(&self, theta: &[f64], dims: usize, grad: &mut [f64], pages: &[TrainPage]) -> f64;
    /// Labels and marginals of one page's blocks.
    fn predict(&self, theta: &[f64], dims: usize, feats: &PageFeatures, out: &mut Prediction);
}

/// Registered learner names.
pub const LEARNERS: &[&str] = &["crf", "memm", "maxent"];

/// A learner by name.
pub fn learner(name: &str) -> Option<&'static dyn BlockLearner> {
    match name {
        "crf" => Some(&super::crf::CRF),
        "memm" => Some(&super::memm::Memm),
        "maxent" => Some(&super::maxent::MaxEnt),
        _ => None,
    }
}

/// A learner by name, with the CRF's edge-feature option (an error for other learners).
pub fn learner_with(name: &str, edge_features: bool) -> Option<&'static dyn BlockLearner> {
    match (name, edge_features) {
        ("crf", true) => Some(&super::crf::CRF_EDGE),
        (_, true) => None,
        (_, false) => learner(name),
    }
}

/// w · x for every block of a page (features are binary).
pub fn node_scores(w: &[f64], feats: &PageFeatures, out: &mut Vec<f64>) {
    out.clear();
    out.extend((0..feats.len()).map(|i| feats.block(i).iter().map(|&j| w[j as usize]).sum::<f64>()));
}

/// Training settings, with defaults.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct BlockTrainOptions {
    /// `crf`, `memm` or `maxent` (default `crf`).
    pub learner: String,
    pub features: BlockFeatureConfig,
    /// Gaussian prior σ (default 1, best of 1 / 10 / 100 on pooled dev shingle F1 for the CRF:
    /// 0.860 / 0.848 / 0.854 at threshold ½; models/README.md).
    pub sigma: f64,
    /// Share of a block's words that must align to gold for Content (default 0.3: 0.865 pooled dev
    /// F1 for the CRF with σ = 1, against 0.860 at ½; at σ = 10, 0.3 / 0.5 / 0.7 gave 0.855 / 0.848 / 0.846).
    pub label_threshold: f64,
    /// L-BFGS iterations at most (default 150).
    pub max_iter: usize,
    /// CRF only: transitions also score the current block's features (§4 edge features; off).
    pub edge_features: bool,
}

impl Default for BlockTrainOptions {
    fn default() -> Self {
        BlockTrainOptions {
            learner: "crf".to_string(),
            features: BlockFeatureConfig::default(),
            sigma: 1.0,
            label_threshold: 0.3,
            max_iter: 150,
            edge_features: false,
        }
    }
}

/// What training saw and did, recorded in the model header.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct BlockTrainingSummary {
    pub datasets: Vec<String>,
    pub split: Option<String>,
    pub pages_used: usize,
    pub pages_skipped: BTreeMap<String, usize>,
    pub blocks: usize,
    pub content_blocks: usize,
    pub iterations: usize,
    pub objective: f64,
    pub converged: bool,
    pub seconds: f64,
}

/// The model file header (JSON).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BlockModelHeader {
    /// Always `blocks`.
    pub kind: String,
    pub learner: String,
    pub features: BlockFeatureConfig,
    pub sigma: f64,
    pub label_threshold: f64,
    /// Number of the learner's own parameters (transitions, previous-label biases), stored
    /// as f64 after the weights.
    pub extra_params: usize,
    /// CRF edge features ([`super::crf::Crf::edge_features`]); absent in models written before them.
    #[serde(default)]
    pub edge_features: bool,
    pub training: BlockTrainingSummary,
}

/// A trained block model.
#[derive(Debug, Clone)]
pub struct BlockModel {
    pub header: BlockModelHeader,
    /// Hashed weights then the learner's own parameters, as f64 for prediction.
    pub theta: Vec<f64>,
    learner: &'static dyn BlockLearner,
}

impl std::fmt::Debug for dyn BlockLearner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Largest `dims_log2` a model file may claim (16 M weights, 64 MB).
const MAX_DIMS_LOG2: u8 = 24;

impl BlockModel {
    pub fn dims(&self) -> usize {
        self.header.features.dims()
    }

    pub fn learner(&self) -> &'static dyn BlockLearner {
        self.learner
    }

    /// Labels and marginals of a page's blocks.
    pub fn predict(&self, feats: &PageFeatures, out: &mut Prediction) {
        self.learner.predict(&self.theta, self.dims(), feats, out);
    }

    /// The model file: the shared container, header kind `blocks`, payload the hashed weights
    /// as little-endian f32 (ample precision for weights whose prior keeps them small), then
    /// the learner's own parameters as little-endian f64.
    pub fn to_bytes(&self) -> Vec<u8> {
        let header = serde_json::to_string(&self.header).expect("header serialises");
        let dims = self.dims();
        let mut payload = Vec::with_capacity(4 * dims + 8 * self.header.extra_params);
        for &w in &self.theta[..dims] {
            payload.extend_from_slice(&(w as f32).to_le_bytes());
        }
        for &x in &self.theta[dims..] {
            payload.extend_from_slice(&x.to_le_bytes());
        }
        model_file::encode(&header, &payload)
    }

    /// Reads a model file; every inconsistency is an error, never a panic.
    pub fn from_bytes(bytes: &[u8]) -> Result<BlockModel, ModelFileError> {
        let (header, payload) = model_file::decode(bytes)?;
        let header: BlockModelHeader =
            serde_json::from_str(header).map_err(|e| ModelFileError::Header(e.to_string()))?;
        if header.kind != "blocks" {
            return Err(ModelFileError::Header(format!("kind `{}` is not `blocks`", header.kind)));
        }
        let learner = learner_with(&header.learner, header.edge_features).ok_or_else(|| {
            ModelFileError::Header(format!(
                "unknown learner `{}` (edge features {})",
                header.learner, header.edge_features
            ))
        })?;
        if header.features.dims_log2 > MAX_DIMS_LOG2 {
            return Err(ModelFileError::Header(format!("dims_log2 {} > {MAX_DIMS_LOG2}", header.features.dims_log2)));
        }
        if header.extra_params != learner.extra_params() {
            return Err(ModelFileError::Header(format!(
                "learner `{}` has {} own parameters, header says {}",
                header.learner,
                learner.extra_params(),
                header.extra_params
            )));
        }
        let dims = header.features.dims();
        let extra = header.extra_params;
        if payload.len() != 4 * dims + 8 * extra {
            return Err(ModelFileError::Payload(format!(
                "{} bytes for {dims} weights and {extra} parameters",
                payload.len()
            )));
        }
        let (wb, eb) = payload.split_at(4 * dims);
        let mut theta: Vec<f64> = Vec::with_capacity(dims + extra);
        theta.extend(wb.chunks_exact(4).map(|c| f64::from(f32::from_le_bytes([c[0], c[1], c[2], c[3]]))));
        theta.extend(eb.chunks_exact(8).map(|c| f64::from_le_bytes(c.try_into().expect("8 bytes"))));
        if theta.iter().any(|w| !w.is_finite()) {
            return Err(ModelFileError::Payload("non-finite parameter".to_string()));
        }
        Ok(BlockModel { header, theta, learner })
    }
}

/// Errors of block training.
#[derive(Debug, thiserror::Error)]
pub enum BlockTrainError {
    #[error("unknown learner `{0}` (known: crf, memm, maxent)")]
    UnknownLearner(String),
    #[error("edge features are a CRF option, not `{0}`'s")]
    EdgeFeatures(String),
    #[error("no usable training page")]
    NoPages,
    #[error(transparent)]
    Threads(#[from] rayon::ThreadPoolBuildError),
}

/// Labels and featurises `entries` (in parallel, `threads` workers, 0 = one per core).
/// Returns the usable pages in entry order and the skipped counts.
pub fn prepare(
    entries: &[ManifestEntry],
    features: BlockFeatureConfig,
    label_threshold: f64,
    label: &LabelOptions,
    threads: usize,
    progress: &(dyn Fn(usize) + Sync),
) -> Result<(Vec<TrainPage>, BTreeMap<String, usize>), BlockTrainError> {
    let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build()?;
    let done = AtomicUsize::new(0);
    let results: Vec<Result<TrainPage, SkipReason>> = pool.install(|| {
        entries
            .par_iter()
            .map_init(
                || FeatureExtractor::new(features),
                |fx, e| {
                    let r = std::fs::read(&e.path).map_err(|_| SkipReason::Unreadable).and_then(|html| {
                        label_blocks(&html, e.gold.text.as_deref().unwrap_or(""), label_threshold, label)
                    });
                    let r = r.map(|l| {
                        let mut feats = PageFeatures::default();
                        fx.page(&l.page, &l.tokens, &l.blocks, &l.title, &mut feats);
                        TrainPage { feats, labels: l.labels }
                    });
                    progress(done.fetch_add(1, Ordering::Relaxed) + 1);
                    r
                },
            )
            .collect()
    });
    let mut pages = Vec::new();
    let mut skipped = BTreeMap::new();
    for r in results {
        match r {
            Ok(p) if !p.labels.is_empty() => pages.push(p),
            Ok(_) => *skipped.entry("no_blocks".to_string()).or_insert(0) += 1,
            Err(reason) => *skipped.entry(reason.as_str().to_string()).or_insert(0) += 1,
        }
    }
    Ok((pages, skipped))
}

fn learner_for(options: &BlockTrainOptions) -> Result<&'static dyn BlockLearner, BlockTrainError> {
    learner(&options.learner).ok_or_else(|| BlockTrainError::UnknownLearner(options.learner.clone()))?;
    learner_with(&options.learner, options.edge_features)
        .ok_or_else(|| BlockTrainError::EdgeFeatures(options.learner.clone()))
}

/// Fits a learner to prepared pages: L-BFGS on NLL + ‖θ‖²/2σ², the objective and gradient
/// computed over `threads` slices of the pages in parallel.
pub fn fit(
    pages: &[TrainPage],
    options: &BlockTrainOptions,
    threads: usize,
) -> Result<(BlockModel, super::lbfgs::LbfgsReport), BlockTrainError> {
    let learner = learner_for(options)?;
    if pages.is_empty() {
        return Err(BlockTrainError::NoPages);
    }
    let dims = options.features.dims();
    let n = dims + learner.extra_params();
    let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build()?;
    let slices = pool.current_num_threads().max(1);
    let chunk = pages.len().div_ceil(slices);
    let inv_var = 1.0 / (options.sigma * options.sigma);
    let mut objective = |theta: &[f64], grad: &mut [f64]| -> f64 {
        let parts: Vec<(f64, Vec<f64>)> = pool.install(|| {
            pages
                .par_chunks(chunk)
                .map(|ps| {
                    let mut g = vec![0.0; n];
                    let v = learner.objective(theta, dims, &mut g, ps);
                    (v, g)
                })
                .collect()
        });
        let mut value = 0.0;
        for (v, g) in parts {
            value += v;
            grad.iter_mut().zip(&g).for_each(|(a, b)| *a += b);
        }
        for (g, t) in grad.iter_mut().zip(theta) {
            *g += t * inv_var;
        }
        value + 0.5 * inv_var * theta.iter().map(|t| t * t).sum::<f64>()
    };
    let mut theta = vec![0.0; n];
    let report = super::lbfgs::minimize(
        &mut theta,
        &mut objective,
        &super::lbfgs::LbfgsOptions { max_iter: options.max_iter, ..Default::default() },
    );
    // Round the weights through f32 now so the model predicts exactly as its file will.
    for w in &mut theta[..dims] {
        *w = f64::from(*w as f32);
    }
    let header = BlockModelHeader {
        kind: "blocks".to_string(),
        learner: learner.name().to_string(),
        features: options.features,
        sigma: options.sigma,
        label_threshold: options.label_threshold,
        extra_params: learner.extra_params(),
        edge_features: options.edge_features,
        training: BlockTrainingSummary {
            blocks: pages.iter().map(|p| p.labels.len()).sum(),
            content_blocks: pages.iter().map(|p| p.labels.iter().filter(|&&l| l).count()).sum(),
            pages_used: pages.len(),
            iterations: report.iterations,
            objective: report.value,
            converged: report.converged,
            ..BlockTrainingSummary::default()
        },
    };
    Ok((BlockModel { header, theta, learner }, report))
}

/// Trains a block model on manifest entries: [`prepare`] then [`fit`].
pub fn train(
    entries: &[ManifestEntry],
    options: &BlockTrainOptions,
    label: &LabelOptions,
    threads: usize,
    progress: &(dyn Fn(usize) + Sync),
) -> Result<BlockModel, BlockTrainError> {
    let t = Instant::now();
    learner_for(options)?;
    let (pages, skipped) = prepare(entries, options.features, options.label_threshold, label, threads, progress)?;
    let (mut model, _) = fit(&pages, options, threads)?;
    let s = &mut model.header.training;
    (s.datasets, s.split) = crate::dataset::sources_of(entries.iter());
    s.pages_skipped = skipped;
    s.seconds = t.elapsed().as_secs_f64();
    Ok(model)
}

/// Viterbi decoding over two labels (NotContent = 0, Content = 1), shared by the CRF and the
/// MEMM: `start[y]` scores the first block's label, `step(i, a, b)` the move from label `a` at
/// block i − 1 to label `b` at block i. Writes the best labelling of `n` blocks.
pub(crate) fn viterbi2(n: usize, start: [f64; 2], step: impl Fn(usize, usize, usize) -> f64, labels: &mut Vec<bool>) {
    labels.clear();
    if n == 0 {
        return;
    }
    let mut back = vec![[0u8; 2]; n];
    let mut delta = start;
    for (i, bk) in back.iter_mut().enumerate().skip(1) {
        let mut next = [0.0; 2];
        for b in 0..2 {
            let from0 = delta[0] + step(i, 0, b);
            let from1 = delta[1] + step(i, 1, b);
            let (v, a) = if from1 > from0 { (from1, 1) } else { (from0, 0) };
            next[b] = v;
            bk[b] = a;
        }
        delta = next;
    }
    labels.resize(n, false);
    let mut cur = usize::from(delta[1] > delta[0]);
    for i in (0..n).rev() {
        labels[i] = cur == 1;
        cur = back[i][cur] as usize;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Toy pages: feature 1 marks Content blocks, feature 2 NotContent; feature 0 is a bias.
    fn toy() -> Vec<TrainPage> {
        (0..20)
            .map(|k| {
                let labels: Vec<bool> = (0..6).map(|i| (i + k) % 3 == 0).collect();
                let mut feats = PageFeatures { offsets: vec![0], ids: Vec::new() };
                for &l in &labels {
                    feats.ids.extend([0, if l { 1 } else { 2 }]);
                    feats.offsets.push(feats.ids.len() as u32);
                }
                TrainPage { feats, labels }
            })
            .collect()
    }

    fn options(learner: &str) -> BlockTrainOptions {
        BlockTrainOptions {
            learner: learner.to_string(),
            features: BlockFeatureConfig { dims_log2: 3, ..BlockFeatureConfig::default() },
            ..BlockTrainOptions::default()
        }
    }

    #[test]
    fn every_learner_learns_a_separable_toy_set_and_round_trips() {
        let pages = toy();
        for name in LEARNERS {
            let (model, report) = fit(&pages, &options(name), 1).unwrap();
            let mut out = Prediction::default();
            for p in &pages {
                model.predict(&p.feats, &mut out);
                assert_eq!(out.labels, p.labels, "{name} {report:?}");
                assert!(out.p_content.iter().zip(&p.labels).all(|(&q, &l)| (q > 0.5) == l), "{name}");
            }
            let bytes = model.to_bytes();
            let back = BlockModel::from_bytes(&bytes).unwrap();
            assert_eq!(back.theta, model.theta, "{name}");
            assert_eq!(back.learner().name(), *name);
        }
    }

    #[test]
    fn crf_with_edge_features_learns_the_toy_set_and_round_trips() {
        let pages = toy();
        let edge = BlockTrainOptions { edge_features: true, ..options("crf") };
        let (model, report) = fit(&pages, &edge, 1).unwrap();
        assert!(model.header.edge_features);
        let mut out = Prediction::default();
        for p in &pages {
            model.predict(&p.feats, &mut out);
            assert_eq!(out.labels, p.labels, "{report:?}");
        }
        let back = BlockModel::from_bytes(&model.to_bytes()).unwrap();
        assert!(back.header.edge_features);
        for p in &pages {
            let mut o2 = Prediction::default();
            back.predict(&p.feats, &mut o2);
            model.predict(&p.feats, &mut out);
            assert_eq!(o2.p_content, out.p_content);
        }
        let memm = BlockTrainOptions { edge_features: true, ..options("memm") };
        assert!(matches!(fit(&pages, &memm, 1), Err(BlockTrainError::EdgeFeatures(_))));
    }

    #[test]
    fn loader_rejects_other_kinds_and_bad_sizes() {
        let nb = model_file::encode("{\"kind\":\"nb\"}", &[]);
        assert!(BlockModel::from_bytes(&nb).is_err());
        let (model, _) = fit(&toy(), &options("maxent"), 1).unwrap();
        let mut h = model.header.clone();
        h.features.dims_log2 = 4;
        let bad = model_file::encode(&serde_json::to_string(&h).unwrap(), &[0u8; 32]);
        assert!(matches!(BlockModel::from_bytes(&bad), Err(ModelFileError::Payload(_))));
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        #[test]
        fn truncated_or_corrupted_model_files_are_errors(cut in 0usize..400, pos in 0usize..400, flip in 1u8..=255) {
            let (model, _) = fit(&toy(), &options("crf"), 1).unwrap();
            let bytes = model.to_bytes();
            let cut = cut % bytes.len();
            prop_assert!(BlockModel::from_bytes(&bytes[..cut]).is_err());
            let mut c = bytes.clone();
            let p = pos % c.len();
            c[p] ^= flip;
            prop_assert!(BlockModel::from_bytes(&c).is_err());
        }
    }
}
