//! Block-labelling scorers (Gibson, Wellner & Lubar 2007): the page's tokens are buffered and
//! segmented into blocks as they stream in ([`crate::blocks::Segmenter`]); at the end of the
//! page the blocks are featurised, labelled by a [`BlockModel`], and every token's score is
//! emitted at once (the [`PageScorer`] contract allows late scores).
//!
//! Two outputs:
//! - **multi-span** (`crf`, `memm`, `maxent`): tokens of Content blocks score +1, all others −1,
//!   and the scorer asks for [`Selection::PositiveTokens`], so the extractor keeps every Content
//!   block — the paper's non-contiguous articles (issue 7, item 6b);
//! - **hybrid** (`crf-mss`): each block's tokens score p(Content) − 0.5 from the model's
//!   marginals, tokens outside blocks (tags between blocks, title words) score
//!   [`GAP_SCORE`], and the usual maximum subsequence picks one span (item 6a).

use super::{PageScorer, Scorer, Selection};
use crate::blocks::Segmenter;
use crate::blocks::features::{FeatureExtractor, PageFeatures};
use crate::html::{Token, TokenSink};
use crate::learners::{BlockModel, Prediction};

/// Score of a token outside every block in the hybrid: slightly negative, so the maximum
/// subsequence bridges short runs of markup between Content blocks but not long ones.
pub const GAP_SCORE: f64 = -0.05;

/// How block labels become token scores.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlockOutput {
    MultiSpan,
    Hybrid,
}

/// A scorer backed by a block model.
pub struct BlockScorer {
    model: BlockModel,
    output: BlockOutput,
    name: &'static str,
    model_name: String,
}

impl BlockScorer {
    /// `name` is the registered scorer name (`crf`, `memm`, `maxent`, `crf-mss`).
    pub fn new(model: BlockModel, output: BlockOutput, name: &'static str, model_name: impl Into<String>) -> Self {
        BlockScorer { model, output, name, model_name: model_name.into() }
    }
}

impl Scorer for BlockScorer {
    fn name(&self) -> &'static str {
        self.name
    }

    fn model_id(&self) -> String {
        let h = &self.model.header;
        format!(
            "{}({}, learner={}, sigma={}, dims=2^{})",
            self.name, self.model_name, h.learner, h.sigma, h.features.dims_log2
        )
    }

    fn page_scorer(&self) -> Box<dyn PageScorer + '_> {
        Box::new(BlockPageScorer {
            scorer: self,
            segmenter: Segmenter::new(),
            tokens: 0,
            features: FeatureExtractor::new(self.model.header.features),
            page_features: PageFeatures::default(),
            prediction: Prediction::default(),
            buffered: Vec::new(),
        })
    }

    fn selection(&self) -> Selection {
        match self.output {
            BlockOutput::MultiSpan => Selection::PositiveTokens,
            BlockOutput::Hybrid => Selection::MaxSubsequence,
        }
    }
}

struct BlockPageScorer<'a> {
    scorer: &'a BlockScorer,
    segmenter: Segmenter,
    tokens: usize,
    features: FeatureExtractor,
    page_features: PageFeatures,
    prediction: Prediction,
    buffered: Vec<Token>,
}

impl PageScorer for BlockPageScorer<'_> {
    fn push(&mut self, page: &str, token: &Token, _out: &mut dyn FnMut(f64)) {
        self.segmenter.token(page, token);
        self.buffered.push(*token);
        self.tokens += 1;
    }

    fn finish(&mut self, page: &str, out: &mut dyn FnMut(f64)) {
        self.segmenter.finish();
        let blocks = self.segmenter.blocks();
        self.features.page(page, &self.buffered, blocks, self.segmenter.title_keys(), &mut self.page_features);
        self.scorer.model.predict(&self.page_features, &mut self.prediction);
        let hybrid = self.scorer.output == BlockOutput::Hybrid;
        let outside = if hybrid { GAP_SCORE } else { -1.0 };
        let mut next = 0usize;
        for (i, b) in blocks.iter().enumerate() {
            let (first, last) = (b.first as usize, b.last as usize);
            for _ in next..first {
                out(outside);
            }
            let s = if hybrid {
                self.prediction.p_content[i] - 0.5
            } else if self.prediction.labels[i] {
                1.0
            } else {
                -1.0
            };
            for _ in first..=last {
                out(s);
            }
            next = last + 1;
        }
        for _ in next..self.tokens {
            out(outside);
        }
        self.segmenter.reset();
        self.buffered.clear();
        self.tokens = 0;
    }
}
