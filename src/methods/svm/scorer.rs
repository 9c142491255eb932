//! The SVM block classifier of Yao & Zuo (§III.C): each [`BlockMode::Yao`] block's eighteen
//! features ([`crate::methods::svm::features`]) are scaled to [−1, 1] with the training minimum and
//! maximum (Hsu, Chang & Lin's guide, the paper's [7]), and an RBF-kernel SVM labels the block
//! Content when its decision value Σᵢ cᵢ·exp(−γ‖svᵢ − x‖²) − ρ is positive. "Texts from all
//! the content blocks are then merged": like `crf`, the scorer emits +1 for tokens of Content
//! blocks and −1 for all others and asks for [`Selection::PositiveTokens`].
//!
//! This file owns the model (scaler, token hashes, support vectors, file format), the
//! decision function and the scorer. Training goes through `linfa-svm`
//! ([`crate::methods::svm::train`]); prediction is the few lines of [`SvmModel::decision`] here, so
//! a model file is plain numbers and loading it needs no solver. Prediction costs one kernel
//! evaluation per support vector per block.
//!
//! [`BlockMode::Yao`]: crate::segment::BlockMode::Yao

use serde::{Deserialize, Serialize};

use crate::html::{Token, TokenSink};
use crate::methods::svm::features::{
    self as yao, BlockCounts, BlockVector, DENSE_NAMES, N_FEATURES, N_TOKENS, YaoFeatureConfig,
};
use crate::model_file::{self, ModelFileError, Reader};
use crate::scoring::{PageScorer, Scorer, Selection};
use crate::segment::emit::{emit_by_block, keep_best_if_none, label_score};
use crate::segment::{BlockMode, Segmenter};

/// Header `kind` of an SVM model file.
pub const KIND: &str = "svm";

/// Most support vectors a model file may hold (bounds prediction cost and the memory a
/// corrupt file can ask for; a default training run keeps a few thousand).
pub const MAX_SUPPORT_VECTORS: usize = 1 << 20;

/// Per-feature min–max scaling to [−1, 1] (LIBSVM's `svm-scale` default range). A feature
/// constant in training maps to 0. Values beyond the training range extrapolate linearly,
/// as `svm-scale` does, rather than being clipped.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Scaler {
    pub lo: BlockVector,
    pub hi: BlockVector,
}

impl Scaler {
    /// The range of every feature over `rows`.
    pub fn fit<'a>(rows: impl IntoIterator<Item = &'a BlockVector>) -> Scaler {
        let mut lo = [f64::INFINITY; N_FEATURES];
        let mut hi = [f64::NEG_INFINITY; N_FEATURES];
        for r in rows {
            for ((l, h), &v) in lo.iter_mut().zip(&mut hi).zip(r) {
                *l = l.min(v);
                *h = h.max(v);
            }
        }
        for (l, h) in lo.iter_mut().zip(&mut hi) {
            if !l.is_finite() || !h.is_finite() {
                (*l, *h) = (0.0, 0.0);
            }
        }
        Scaler { lo, hi }
    }

    /// Scales `x` in place.
    #[inline]
    pub fn apply(&self, x: &mut BlockVector) {
        for ((v, &l), &h) in x.iter_mut().zip(&self.lo).zip(&self.hi) {
            *v = if h > l { -1.0 + 2.0 * (*v - l) / (h - l) } else { 0.0 };
        }
    }
}

/// What training did, stored in the model header.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SvmTrainingSummary {
    pub datasets: Vec<String>,
    pub split: Option<String>,
    pub pages_used: usize,
    pub pages_skipped: usize,
    /// Blocks of the used pages, and how many were Content.
    pub blocks: usize,
    pub content_blocks: usize,
    /// Blocks the SVM was trained on (a seeded sample when `blocks` exceeds the limit).
    pub sample_blocks: usize,
    pub sample_content_blocks: usize,
    pub sample_seed: u64,
    /// Share of a block's words aligned to gold for it to be Content.
    pub label_threshold: f64,
    /// The paper's feature combination used (§IV.C: `text`, `text-position` or `all`); left-out
    /// features were 0 in training, so the scaler maps them to 0.
    #[serde(default)]
    pub feature_set: String,
    /// The ten chosen id/class tokens as words (`?` when no sample page showed the word).
    #[serde(default)]
    pub token_names: Vec<String>,
    /// Naive Bayes scores of the ten chosen tokens, in token order.
    pub token_scores: Vec<f64>,
    /// Accuracy of the model on its own training sample.
    pub sample_accuracy: f64,
    pub seconds: f64,
}

/// The JSON header of an `svm` model file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SvmHeader {
    /// Always `svm`.
    pub kind: String,
    /// Always `yao` (checked on load).
    pub blocks: BlockMode,
    /// Feature names in vector order (checked on load).
    pub features: Vec<String>,
    pub config: YaoFeatureConfig,
    /// The penalty C and RBF width γ the model was trained with.
    pub c: f64,
    pub gamma: f64,
    pub support_vectors: usize,
    pub training: SvmTrainingSummary,
}

impl SvmHeader {
    pub fn new(
        config: YaoFeatureConfig,
        c: f64,
        gamma: f64,
        support_vectors: usize,
        training: SvmTrainingSummary,
    ) -> Self {
        SvmHeader {
            kind: KIND.to_string(),
            blocks: BlockMode::Yao,
            features: feature_names(),
            config,
            c,
            gamma,
            support_vectors,
            training,
        }
    }
}

/// The feature names of this build: the dense ones, then `token_0` … `token_9`.
pub fn feature_names() -> Vec<String> {
    DENSE_NAMES.iter().map(|s| s.to_string()).chain((0..N_TOKENS).map(|i| format!("token_{i}"))).collect()
}

/// A trained SVM block classifier.
#[derive(Debug, Clone, PartialEq)]
pub struct SvmModel {
    pub header: SvmHeader,
    pub scaler: Scaler,
    /// Hashes of the ten id/class tokens ([`crate::features::class_words`]); 0 = unused slot.
    pub tokens: [u64; N_TOKENS],
    pub gamma: f64,
    pub rho: f64,
    /// Support vectors (scaled) and their coefficients αᵢ·yᵢ.
    pub support: Vec<BlockVector>,
    pub coef: Vec<f64>,
}

impl SvmModel {
    /// Decision value of a scaled feature vector: positive for Content.
    #[inline]
    pub fn decision(&self, x: &BlockVector) -> f64 {
        // Four support vectors at a time: each distance is still summed feature by feature in
        // order (so the value is bit-identical to the plain loop), but the four independent
        // sums keep the FPU busy instead of waiting on one chain of dependent additions — the
        // compiler may not reorder a floating-point sum by itself. About 2× on the dev pages.
        const LANES: usize = 4;
        let mut s = -self.rho;
        let mut svs = self.support.chunks_exact(LANES);
        let mut coefs = self.coef.chunks_exact(LANES);
        for (sv, c) in (&mut svs).zip(&mut coefs) {
            let mut d = [0.0f64; LANES];
            for (j, &xj) in x.iter().enumerate() {
                for (dk, svk) in d.iter_mut().zip(sv) {
                    let t = svk[j] - xj;
                    *dk += t * t;
                }
            }
            for (dk, ck) in d.iter().zip(c) {
                s += ck * (-self.gamma * dk).exp();
            }
        }
        for (sv, &c) in svs.remainder().iter().zip(coefs.remainder()) {
            let mut d = 0.0;
            for (a, b) in sv.iter().zip(x) {
                d += (a - b) * (a - b);
            }
            s += c * (-self.gamma * d).exp();
        }
        s
    }

    /// The model container ([`model_file`]): JSON header; payload (f64 and u64, LE): scaler
    /// minima and maxima (2 × 18), the ten token hashes, γ, ρ, the number of support vectors,
    /// then per support vector its coefficient and 18 values.
    pub fn to_bytes(&self) -> Vec<u8> {
        let header = serde_json::to_string(&self.header).expect("header serialises");
        let mut p = Vec::with_capacity(8 * (2 * N_FEATURES + N_TOKENS + 3 + self.coef.len() * (1 + N_FEATURES)));
        let mut f = |v: f64| p.extend_from_slice(&v.to_le_bytes());
        self.scaler.lo.iter().chain(&self.scaler.hi).for_each(|&v| f(v));
        let u = |v: u64, p: &mut Vec<u8>| p.extend_from_slice(&v.to_le_bytes());
        for &t in &self.tokens {
            u(t, &mut p);
        }
        p.extend_from_slice(&self.gamma.to_le_bytes());
        p.extend_from_slice(&self.rho.to_le_bytes());
        u(self.coef.len() as u64, &mut p);
        for (c, sv) in self.coef.iter().zip(&self.support) {
            p.extend_from_slice(&c.to_le_bytes());
            for v in sv {
                p.extend_from_slice(&v.to_le_bytes());
            }
        }
        model_file::encode(&header, &p)
    }

    /// Reads a model file; any corruption is an error, never a panic or a huge allocation.
    pub fn from_bytes(bytes: &[u8]) -> Result<SvmModel, ModelFileError> {
        let (header, payload) = model_file::decode(bytes)?;
        let header: SvmHeader = serde_json::from_str(header).map_err(|e| ModelFileError::Header(e.to_string()))?;
        if header.kind != KIND {
            return Err(ModelFileError::Header(format!("kind `{}` is not `{KIND}`", header.kind)));
        }
        if header.blocks != BlockMode::Yao || header.features != feature_names() {
            return Err(ModelFileError::Header("block mode or features are not this build's".to_string()));
        }
        if header.config.positions == 0 || header.config.line_chars == 0 {
            return Err(ModelFileError::Header("positions and line_chars must be positive".to_string()));
        }
        let bad = |what: &str| ModelFileError::Payload(what.to_string());
        let mut r = Reader::new(payload);
        let f = |r: &mut Reader<'_>| -> Result<f64, ModelFileError> {
            let v = f64::from_bits(r.u64()?);
            if v.is_finite() { Ok(v) } else { Err(bad("non-finite number")) }
        };
        let mut lo = [0.0; N_FEATURES];
        let mut hi = [0.0; N_FEATURES];
        for v in lo.iter_mut().chain(hi.iter_mut()) {
            *v = f(&mut r)?;
        }
        let mut tokens = [0u64; N_TOKENS];
        for t in &mut tokens {
            *t = r.u64()?;
        }
        let gamma = f(&mut r)?;
        let rho = f(&mut r)?;
        if gamma <= 0.0 {
            return Err(bad("gamma must be positive"));
        }
        let n = r.u64()?;
        let per = 8 * (1 + N_FEATURES) as u64;
        // Checked against the bytes present before anything is allocated.
        if n > MAX_SUPPORT_VECTORS as u64 || n.checked_mul(per) != Some(r.remaining() as u64) {
            return Err(ModelFileError::Payload(format!(
                "{n} support vectors do not fit {} payload bytes",
                r.remaining()
            )));
        }
        if n as usize != header.support_vectors {
            return Err(bad("support vector count differs from the header"));
        }
        let mut coef = Vec::with_capacity(n as usize);
        let mut support = Vec::with_capacity(n as usize);
        for _ in 0..n {
            coef.push(f(&mut r)?);
            let mut sv = [0.0; N_FEATURES];
            for v in &mut sv {
                *v = f(&mut r)?;
            }
            support.push(sv);
        }
        Ok(SvmModel { header, scaler: Scaler { lo, hi }, tokens, gamma, rho, support, coef })
    }
}

/// The `svm` scorer.
pub struct SvmScorer {
    model: SvmModel,
    id: String,
}

impl SvmScorer {
    pub fn new(model: SvmModel, name: impl Into<String>) -> Self {
        SvmScorer { model, id: name.into() }
    }

    pub fn model(&self) -> &SvmModel {
        &self.model
    }
}

impl Scorer for SvmScorer {
    fn name(&self) -> &'static str {
        KIND
    }

    fn model_id(&self) -> String {
        let h = &self.model.header;
        format!("svm({}, C={}, gamma={:.4}, sv={})", self.id, h.c, h.gamma, h.support_vectors)
    }

    fn page_scorer(&self) -> Box<dyn PageScorer + '_> {
        Box::new(SvmPageScorer {
            model: &self.model,
            segmenter: Segmenter::with_mode(BlockMode::Yao),
            tokens: Vec::new(),
            buf: String::new(),
            counts: Vec::new(),
            vectors: Vec::new(),
            content: Vec::new(),
            confidence: Vec::new(),
        })
    }

    fn selection(&self) -> Selection {
        Selection::PositiveTokens
    }
}

/// Buffers the page's tokens (the quotient and position features need the whole page) and
/// segments them as they stream in; all buffers are kept between pages.
struct SvmPageScorer<'m> {
    model: &'m SvmModel,
    segmenter: Segmenter,
    tokens: Vec<Token>,
    buf: String,
    counts: Vec<BlockCounts>,
    vectors: Vec<BlockVector>,
    content: Vec<bool>,
    /// [`squash`]ed decision values, for the no-Content fallback.
    confidence: Vec<f64>,
}

/// A logistic squashing of a decision value, only to reuse the block scorers' fallback rule
/// ([`super::blocks::FALLBACK_SHARE`] of the page's best) on a 0..1 scale; it is not a calibrated probability.
fn squash(d: f64) -> f64 {
    1.0 / (1.0 + (-d).exp())
}

impl PageScorer for SvmPageScorer<'_> {
    fn push(&mut self, page: &str, token: &Token, _out: &mut dyn FnMut(f64)) {
        self.segmenter.token(page, token);
        self.tokens.push(*token);
    }

    fn finish(&mut self, page: &str, out: &mut dyn FnMut(f64)) {
        self.segmenter.finish();
        let m = self.model;
        let blocks = self.segmenter.blocks();
        yao::block_counts(page, &self.tokens, blocks, &mut self.buf, &mut self.counts);
        yao::page_vectors(&self.counts, blocks, &m.tokens, &m.header.config, &mut self.vectors);
        self.content.clear();
        self.confidence.clear();
        for v in &mut self.vectors {
            m.scaler.apply(v);
            let d = m.decision(v);
            self.content.push(d > 0.0);
            self.confidence.push(squash(d));
        }
        // Nothing Content: as for `crf`, keep the blocks scoring at least half the best.
        keep_best_if_none(&mut self.content, &self.confidence);
        let content = &self.content;
        emit_by_block(blocks, self.tokens.len(), -1.0, |i| label_score(content[i]), out);
        self.segmenter.reset();
        self.tokens.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A hand-made model: two support vectors on the `words` axis, one Content, one not.
    fn toy_model() -> SvmModel {
        let mut lo = [0.0; N_FEATURES];
        let mut hi = [0.0; N_FEATURES];
        lo[0] = 1.0;
        hi[0] = 21.0;
        let (mut a, mut b) = ([0.0; N_FEATURES], [0.0; N_FEATURES]);
        a[0] = 1.0;
        b[0] = -1.0;
        SvmModel {
            header: SvmHeader::new(YaoFeatureConfig::default(), 1.0, 1.0, 2, SvmTrainingSummary::default()),
            scaler: Scaler { lo, hi },
            tokens: [0; N_TOKENS],
            gamma: 1.0,
            rho: 0.0,
            support: vec![a, b],
            coef: vec![1.0, -1.0],
        }
    }

    #[test]
    fn scaler_maps_the_training_range_to_minus_one_one() {
        let mut r1 = [0.0; N_FEATURES];
        let mut r2 = [0.0; N_FEATURES];
        r1[0] = 2.0;
        r2[0] = 6.0;
        r1[1] = 5.0;
        r2[1] = 5.0;
        let s = Scaler::fit([&r1, &r2]);
        assert_eq!((s.lo[0], s.hi[0]), (2.0, 6.0));
        let mut x = [0.0; N_FEATURES];
        x[0] = 3.0;
        x[1] = 9.0;
        s.apply(&mut x);
        // 3 → −1 + 2·(3−2)/(6−2) = −0.5; constant feature → 0; 8 beyond the range → 2.
        assert_eq!(x[0], -0.5);
        assert_eq!(x[1], 0.0);
        let mut y = [0.0; N_FEATURES];
        y[0] = 8.0;
        s.apply(&mut y);
        assert_eq!(y[0], 2.0);
        assert_eq!(Scaler::fit([]).lo, [0.0; N_FEATURES]);
    }

    #[test]
    fn four_lane_decision_equals_the_plain_sum_bit_for_bit() {
        let mut m = toy_model();
        let mut seed = 3u64;
        let mut next = || {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (seed >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
        };
        m.support = (0..11).map(|_| std::array::from_fn(|_| next())).collect();
        m.coef = (0..11).map(|_| next()).collect();
        m.gamma = 0.3;
        m.rho = 0.1;
        let x: BlockVector = std::array::from_fn(|_| next());
        let mut plain = -m.rho;
        for (sv, &c) in m.support.iter().zip(&m.coef) {
            let d: f64 = sv.iter().zip(&x).fold(0.0, |d, (a, b)| d + (a - b) * (a - b));
            plain += c * (-m.gamma * d).exp();
        }
        assert_eq!(m.decision(&x).to_bits(), plain.to_bits());
    }

    #[test]
    fn decision_is_the_kernel_expansion() {
        let m = toy_model();
        let mut x = [0.0; N_FEATURES];
        x[0] = 0.5;
        // exp(−0.25) − exp(−2.25)
        assert!((m.decision(&x) - ((-0.25f64).exp() - (-2.25f64).exp())).abs() < 1e-12);
    }

    #[test]
    fn extracts_long_blocks_and_falls_back_when_nothing_is_content() {
        use crate::extract::{ExtractOptions, Extractor};
        let s = SvmScorer::new(toy_model(), "toy");
        assert_eq!(s.selection(), Selection::PositiveTokens);
        let x = Extractor::new(&s, ExtractOptions::default());
        let html = b"<html><body><div><a href=/>Home</a></div><p>The council voted to expand the park on \
            Tuesday evening after a long debate, and work starts in May.</p><div>Share</div></body></html>";
        let e = x.extract(html, None).unwrap();
        assert!(e.text.contains("The council voted") && !e.text.contains("Home"), "{}", e.text);
        // ρ so large that no block is Content: the fallback keeps the best one(s), never nothing.
        let mut m = toy_model();
        m.rho = 10.0;
        let s = SvmScorer::new(m, "toy");
        let e = Extractor::new(&s, ExtractOptions::default()).extract(html, None).unwrap();
        assert!(e.text.contains("The council voted"), "{}", e.text);
    }

    #[test]
    fn round_trip_and_corruption() {
        let m = toy_model();
        let b = m.to_bytes();
        assert_eq!(SvmModel::from_bytes(&b).unwrap(), m);
        for cut in 0..b.len() {
            assert!(SvmModel::from_bytes(&b[..cut]).is_err(), "cut at {cut}");
        }
        let header = serde_json::to_string(&m.header).unwrap();
        assert!(SvmModel::from_bytes(&model_file::encode("{\"kind\":\"pso\"}", &[0; 64])).is_err());
        assert!(SvmModel::from_bytes(&model_file::encode(&header, &[0; 63])).is_err());
        // A count far beyond the payload must not allocate.
        let mut p = vec![0u8; 8 * (2 * N_FEATURES + N_TOKENS)];
        p.extend_from_slice(&1.0f64.to_le_bytes());
        p.extend_from_slice(&0.0f64.to_le_bytes());
        p.extend_from_slice(&u64::MAX.to_le_bytes());
        assert!(SvmModel::from_bytes(&model_file::encode(&header, &p)).is_err());
    }

    proptest! {
        #[test]
        fn loader_never_panics_on_truncated_or_flipped_bytes(cut in 0usize..4000, pos in 0usize..4000, flip in 0u8..=255) {
            let b = toy_model().to_bytes();
            let mut g = b.clone();
            let p = pos % g.len();
            g[p] ^= flip;
            prop_assert_eq!(SvmModel::from_bytes(&g).is_ok(), flip == 0);
            let _ = SvmModel::from_bytes(&g[..cut.min(g.len())]);
        }

        #[test]
        fn loader_never_panics_on_corrupt_payload_with_valid_checksum(payload in prop::collection::vec(any::<u8>(), 0..800)) {
            let header = serde_json::to_string(&toy_model().header).unwrap();
            let _ = SvmModel::from_bytes(&model_file::encode(&header, &payload));
        }
    }
}
