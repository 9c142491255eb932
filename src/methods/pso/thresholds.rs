//! The threshold scorer of Ziegler & Skubacz (2007, §3.5): a merged text block
//! ([`super::blocks`]) is content when *every* one of its eight features passes its
//! threshold (a conjunction; each threshold a lower or an upper bound, [`LOWER_BOUND`]).
//! Thresholds are learned by particle swarm optimisation ([`crate::methods::pso::train`]).
//!
//! The page scorer buffers the page's tokens, classifies its blocks at [`PageScorer::finish`]
//! and emits +1 for text of content blocks, −1 for other text and 0 for tags. Two outputs:
//! `pso` lets the maximum subsequence take the best run of content blocks (the extractor's
//! span filters and layout apply as for every scorer); `pso-blocks` keeps every content block,
//! contiguous or not ([`Selection::PositiveTokens`]), which is the paper's own output (§3.5:
//! the blocks classified as content are the extracted text).
//!
//! This file owns the model (thresholds, block options, file format) and the scorer.

use serde::{Deserialize, Serialize};

use super::blocks::{self as pso_blocks, BlockOptions, FEATURE_NAMES, LOWER_BOUND, N_FEATURES, Segmentation};
use crate::html::Token;
use crate::model_file::{self, ModelFileError, Reader};
use crate::scoring::{PageScorer, Scorer, Selection};

/// Score of a text token of a content block.
const CONTENT: f64 = 1.0;
/// Score of any other text token: one noise word cancels one content word.
const NOISE: f64 = -1.0;

/// Learned thresholds, one per feature, in [`FEATURE_NAMES`] order.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Thresholds(pub [f64; N_FEATURES]);

impl Thresholds {
    /// Thresholds every block passes (the paper's PR strategy: pruning and removal only).
    pub fn accept_all() -> Self {
        let mut t = [0.0; N_FEATURES];
        for (v, &lower) in t.iter_mut().zip(&LOWER_BOUND) {
            *v = if lower { f64::NEG_INFINITY } else { f64::INFINITY };
        }
        Thresholds(t)
    }

    /// The conjunctive decision of §3.5: content only when every feature passes.
    #[inline]
    pub fn accepts(&self, values: &[f64; N_FEATURES]) -> bool {
        values.iter().zip(&self.0).zip(&LOWER_BOUND).all(|((&v, &t), &lower)| if lower { v >= t } else { v <= t })
    }
}

/// What training did, stored in the model header.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PsoTrainingSummary {
    pub datasets: Vec<String>,
    pub split: Option<String>,
    pub pages_used: usize,
    pub pages_skipped: usize,
    pub population: usize,
    pub generations: usize,
    pub inertia: f64,
    pub cognitive: f64,
    pub social: f64,
    pub seed: u64,
    /// Mean similarity (§3.5.2) of the best particle over the training pages.
    pub fitness: f64,
}

/// The JSON header of a `pso` model file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PsoHeader {
    /// Always `pso`.
    pub kind: String,
    /// Feature names in threshold order (checked on load, so a reordering cannot go unseen).
    pub features: Vec<String>,
    /// Lower (true) or upper bound per feature (checked on load).
    pub lower_bound: Vec<bool>,
    pub blocks: BlockOptions,
    /// The thresholds again, readable (the payload holds the exact values).
    pub thresholds: Vec<f64>,
    pub training: PsoTrainingSummary,
}

/// A trained threshold model.
#[derive(Debug, Clone, PartialEq)]
pub struct PsoModel {
    pub header: PsoHeader,
    pub thresholds: Thresholds,
}

impl PsoModel {
    pub fn new(thresholds: Thresholds, blocks: BlockOptions, training: PsoTrainingSummary) -> Self {
        PsoModel {
            header: PsoHeader {
                kind: "pso".to_string(),
                features: FEATURE_NAMES.iter().map(|s| s.to_string()).collect(),
                lower_bound: LOWER_BOUND.to_vec(),
                blocks,
                thresholds: thresholds.0.to_vec(),
                training,
            },
            thresholds,
        }
    }

    /// The model container ([`model_file`]): JSON header, payload of eight f64 (LE).
    pub fn to_bytes(&self) -> Vec<u8> {
        let header = serde_json::to_string(&self.header).expect("header serialises");
        let payload: Vec<u8> = self.thresholds.0.iter().flat_map(|t| t.to_le_bytes()).collect();
        model_file::encode(&header, &payload)
    }

    /// Reads a model file; any corruption is an error, never a panic.
    pub fn from_bytes(bytes: &[u8]) -> Result<PsoModel, ModelFileError> {
        let (header, payload) = model_file::decode(bytes)?;
        let header: PsoHeader = serde_json::from_str(header).map_err(|e| ModelFileError::Header(e.to_string()))?;
        if header.kind != "pso" {
            return Err(ModelFileError::Header(format!("kind `{}` is not `pso`", header.kind)));
        }
        if header.features != FEATURE_NAMES || header.lower_bound != LOWER_BOUND {
            return Err(ModelFileError::Header("features are not this build's".to_string()));
        }
        if payload.len() != 8 * N_FEATURES {
            return Err(ModelFileError::Payload(format!("{} bytes, expected {}", payload.len(), 8 * N_FEATURES)));
        }
        let mut r = Reader::new(payload);
        let mut t = [0.0; N_FEATURES];
        for v in &mut t {
            *v = f64::from_bits(r.u64()?);
            if v.is_nan() {
                return Err(ModelFileError::Payload("NaN threshold".to_string()));
            }
        }
        Ok(PsoModel { header, thresholds: Thresholds(t) })
    }
}

/// The `pso` (best run of content blocks) and `pso-blocks` (every content block) scorers.
pub struct PsoScorer {
    model: PsoModel,
    id: String,
    every_block: bool,
}

impl PsoScorer {
    /// `pso`: the maximum subsequence over block scores.
    pub fn new(model: PsoModel, name: impl Into<String>) -> Self {
        PsoScorer { model, id: name.into(), every_block: false }
    }

    /// `pso-blocks`: every block classified as content (the paper's output).
    pub fn every_block(model: PsoModel, name: impl Into<String>) -> Self {
        PsoScorer { model, id: name.into(), every_block: true }
    }
}

impl Scorer for PsoScorer {
    fn name(&self) -> &'static str {
        if self.every_block { "pso-blocks" } else { "pso" }
    }

    fn model_id(&self) -> String {
        format!("{}:{}", self.name(), self.id)
    }

    fn selection(&self) -> Selection {
        if self.every_block { Selection::PositiveTokens } else { Selection::MaxSubsequence }
    }

    fn page_scorer(&self) -> Box<dyn PageScorer + '_> {
        Box::new(PsoPageScorer { model: &self.model, tokens: Vec::new(), seg: Segmentation::default() })
    }
}

/// Buffers a page's tokens; blocks need the whole page before any score is known.
struct PsoPageScorer<'m> {
    model: &'m PsoModel,
    tokens: Vec<Token>,
    seg: Segmentation,
}

impl PageScorer for PsoPageScorer<'_> {
    fn push(&mut self, _page: &str, token: &Token, _out: &mut dyn FnMut(f64)) {
        self.tokens.push(*token);
    }

    fn finish(&mut self, page: &str, out: &mut dyn FnMut(f64)) {
        pso_blocks::segment(page, &self.tokens, &self.model.header.blocks, &mut self.seg);
        let content: Vec<bool> =
            self.seg.blocks.iter().map(|b| self.model.thresholds.accepts(&b.features.values())).collect();
        for (t, &b) in self.tokens.iter().zip(&self.seg.block_of) {
            out(if t.kind.is_tag() {
                0.0
            } else if b != pso_blocks::NO_BLOCK && content[b as usize] {
                CONTENT
            } else {
                NOISE
            });
        }
        self.tokens.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::extract::{ExtractOptions, Extractor};
    use proptest::prelude::*;

    fn model(t: [f64; N_FEATURES]) -> PsoModel {
        PsoModel::new(Thresholds(t), BlockOptions::default(), PsoTrainingSummary::default())
    }

    #[test]
    fn conjunctive_thresholds() {
        let t = Thresholds([5.0, 2.0, 0.0, 0.1, 0.5, 0.0, 0.2, 0.0]);
        let ok = [10.0, 3.0, 0.9, 0.3, 0.1, 0.0, 0.0, 0.1];
        assert!(t.accepts(&ok));
        let mut links = ok;
        links[4] = 0.9;
        assert!(!t.accepts(&links), "anchor ratio is an upper bound");
        let mut short = ok;
        short[0] = 4.0;
        assert!(!t.accepts(&short), "average sentence length is a lower bound");
        assert!(Thresholds::accept_all().accepts(&links));
    }

    #[test]
    fn extracts_the_content_block() {
        let m = model([4.0, 2.0, 0.0, 0.0, 0.5, 0.0, 0.5, 0.0]);
        let s = PsoScorer::new(m, "test");
        let x = Extractor::new(&s, ExtractOptions::default());
        let html = b"<table><tr><td><ul><li><a href=/>Home</a><li><a href=/w>World news</a></ul></td>\
            <td><p>The council voted to expand the park on Tuesday. Work starts in May, officials said.</p></td>\
            <td><a href=/x>More</a> <a href=/y>stories</a></td></tr></table>";
        let e = x.extract(html, None).unwrap();
        assert_eq!(e.text, "The council voted to expand the park on Tuesday. Work starts in May, officials said.");
    }

    #[test]
    fn round_trip_and_corruption() {
        let m = model([4.0, 2.0, 0.5, 0.1, 0.5, 0.0, 0.5, 0.01]);
        let b = m.to_bytes();
        assert_eq!(PsoModel::from_bytes(&b).unwrap(), m);
        for cut in 0..b.len() {
            assert!(PsoModel::from_bytes(&b[..cut]).is_err(), "cut at {cut}");
        }
        let nb = model_file::encode("{\"kind\":\"nb\"}", &[0; 64]);
        assert!(PsoModel::from_bytes(&nb).is_err());
        let header = serde_json::to_string(&m.header).unwrap();
        assert!(PsoModel::from_bytes(&model_file::encode(&header, &[0; 63])).is_err());
        assert!(
            PsoModel::from_bytes(&model_file::encode(&header, &f64::NAN.to_bits().to_le_bytes().repeat(8))).is_err()
        );
    }

    proptest! {
        #[test]
        fn loader_never_panics_on_truncated_or_flipped_bytes(cut in 0usize..2000, pos in 0usize..2000, flip in 0u8..=255) {
            let b = model([4.0, 2.0, 0.5, 0.1, 0.5, 0.0, 0.5, 0.01]).to_bytes();
            let mut g = b.clone();
            let p = pos % g.len();
            g[p] ^= flip;
            let r = PsoModel::from_bytes(&g);
            prop_assert_eq!(r.is_ok(), flip == 0);
            let _ = PsoModel::from_bytes(&g[..cut.min(g.len())]);
        }

        #[test]
        fn loader_never_panics_on_corrupt_payload_with_valid_checksum(payload in prop::collection::vec(any::<u8>(), 0..100)) {
            let header = serde_json::to_string(&model([0.0; N_FEATURES]).header).unwrap();
            let _ = PsoModel::from_bytes(&model_file::encode(&header, &payload));
        }
    }
}
