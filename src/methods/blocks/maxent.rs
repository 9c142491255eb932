//! Maximum-entropy classifier (Gibson et al. 2007, §4 "Maximum Entropy Classifier"): each
//! block on its own, p(Content | x) = σ(w · x), i.e. L2-regularised logistic regression
//! (the Gaussian prior is added by [`super::learn::train`]). No sequence, no extra parameters.

use super::learn::{BlockLearner, Prediction, TrainPage, node_scores};
use crate::methods::blocks::features::PageFeatures;

pub struct MaxEnt;

/// log(1 + e^s), without overflow.
pub(crate) fn softplus(s: f64) -> f64 {
    if s > 30.0 { s } else { s.exp().ln_1p() }
}

pub(crate) fn sigmoid(s: f64) -> f64 {
    1.0 / (1.0 + (-s).exp())
}

impl BlockLearner for MaxEnt {
    fn name(&self) -> &'static str {
        "maxent"
    }

    fn extra_params(&self) -> usize {
        0
    }

    fn objective(&self, theta: &[f64], dims: usize, grad: &mut [f64], pages: &[TrainPage]) -> f64 {
        let mut s = Vec::new();
        let mut nll = 0.0;
        for p in pages {
            node_scores(&theta[..dims], &p.feats, &mut s);
            for (i, (&si, &y)) in s.iter().zip(&p.labels).enumerate() {
                nll += softplus(si) - if y { si } else { 0.0 };
                let d = sigmoid(si) - f64::from(u8::from(y));
                for &j in p.feats.block(i) {
                    grad[j as usize] += d;
                }
            }
        }
        nll
    }

    fn predict(&self, theta: &[f64], dims: usize, feats: &PageFeatures, out: &mut Prediction) {
        node_scores(&theta[..dims], feats, &mut out.scratch);
        out.p_content.clear();
        out.p_content.extend(out.scratch.iter().map(|&s| sigmoid(s)));
        out.labels.clear();
        out.labels.extend(out.p_content.iter().map(|&p| p > 0.5));
    }
}
