//! Block-labelling scorers (Gibson, Wellner & Lubar 2007): the page's tokens are buffered and
//! segmented into blocks as they stream in ([`crate::segment::Segmenter`]); at the end of the
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

use crate::html::{Token, TokenSink};
use crate::methods::blocks::features::{FeatureExtractor, PageFeatures};
use crate::methods::blocks::learn::{BlockModel, Prediction};
use crate::scoring::{PageScorer, Scorer, Selection};
use crate::segment::Segmenter;
use crate::segment::emit::{emit_by_block, keep_best_if_none, label_score};

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
        if !hybrid {
            // Nothing labelled Content (5 % of dev pages for the CRF): rather than an empty
            // article, keep the blocks whose p(Content) is at least half the page's highest.
            let Prediction { labels, p_content, .. } = &mut self.prediction;
            keep_best_if_none(labels, p_content);
        }
        let p = &self.prediction;
        let outside = if hybrid { GAP_SCORE } else { -1.0 };
        let score = |i: usize| if hybrid { p.p_content[i] - 0.5 } else { label_score(p.labels[i]) };
        emit_by_block(blocks, self.tokens, outside, score, out);
        self.segmenter.reset();
        self.buffered.clear();
        self.tokens = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::extract::{ExtractOptions, Extractor};
    use crate::methods::blocks::features::BlockFeatureConfig;
    use crate::methods::blocks::learn::{BlockTrainOptions, TrainPage, fit};

    /// A model whose every weight is −1: no block is ever Content on its own.
    fn negative_model(learner: &str) -> BlockModel {
        let features = BlockFeatureConfig { dims_log2: 10, ..BlockFeatureConfig::default() };
        let page = TrainPage {
            feats: crate::methods::blocks::features::PageFeatures { offsets: vec![0, 1, 2], ids: vec![0, 1] },
            labels: vec![true, false],
        };
        let options = BlockTrainOptions { learner: learner.to_string(), features, ..BlockTrainOptions::default() };
        let (mut m, _) = fit(&[page], &options, 1).unwrap();
        let dims = m.dims();
        m.theta[..dims].iter_mut().for_each(|w| *w = -1.0);
        m
    }

    const PAGE: &[u8] = b"<html><head><title>Park news</title></head><body><nav><a href=/>Home</a></nav>\
        <p>The council voted to expand the park on Tuesday evening after a long debate.</p>\
        <div class=ad>Buy</div><p>Work starts in May.</p></body></html>";

    #[test]
    fn multi_span_keeps_content_blocks_and_falls_back_when_there_is_none() {
        let scorer = BlockScorer::new(negative_model("maxent"), BlockOutput::MultiSpan, "maxent", "test");
        assert_eq!(scorer.selection(), Selection::PositiveTokens);
        let x = Extractor::new(&scorer, ExtractOptions::default()).extract(PAGE, None).unwrap();
        assert!(!x.text.is_empty(), "fallback keeps the most probable blocks");
        assert!(!x.text.contains("Park news"), "title words are never a block: {}", x.text);
    }

    #[test]
    fn hybrid_emits_one_score_per_token_and_runs_the_maximum_subsequence() {
        let scorer = BlockScorer::new(negative_model("crf"), BlockOutput::Hybrid, "crf-mss", "test");
        assert_eq!(scorer.selection(), Selection::MaxSubsequence);
        let options = ExtractOptions { keep_scores: true, ..ExtractOptions::default() };
        let x = Extractor::new(&scorer, options).extract(PAGE, None).unwrap();
        // Every block scores below 0 with this model, so no span has a positive value.
        assert!(x.text.is_empty() && x.span.is_none());
        assert_eq!(x.tokens, crate::html::tokenize(PAGE, Default::default()).unwrap().sink.len());
    }
}
