//! Maximum-entropy Markov model (Gibson et al. 2007, §4 "Maximum Entropy Markov Models";
//! McCallum et al. 2000): a local classifier p(y_i | y_{i−1}, x) = σ(w · x_i + v[y_{i−1}])
//! trained on the gold previous label, decoded with Viterbi over the local log-probabilities.
//! Only a per-previous-label bias conditions on the previous label (the paper's "edge
//! features" option, observation features conjoined with the previous label, is not here).
//!
//! Extra parameters after the hashed weights: `[v_start, v_after_NotContent, v_after_Content]`.

use super::learn::{BlockLearner, Prediction, TrainPage, node_scores};
use super::maxent::{sigmoid, softplus};
use crate::methods::blocks::features::PageFeatures;

pub struct Memm;

/// Index of the previous-label parameter: 0 at the first block, then 1 + previous label.
fn prev_slot(i: usize, labels: &[bool]) -> usize {
    if i == 0 { 0 } else { 1 + usize::from(labels[i - 1]) }
}

impl BlockLearner for Memm {
    fn name(&self) -> &'static str {
        "memm"
    }

    fn extra_params(&self) -> usize {
        3
    }

    fn objective(&self, theta: &[f64], dims: usize, grad: &mut [f64], pages: &[TrainPage]) -> f64 {
        let (w, v) = theta.split_at(dims);
        let mut s = Vec::new();
        let mut nll = 0.0;
        for p in pages {
            node_scores(w, &p.feats, &mut s);
            for (i, &node) in s.iter().enumerate() {
                let slot = prev_slot(i, &p.labels);
                let si = node + v[slot];
                let y = p.labels[i];
                nll += softplus(si) - if y { si } else { 0.0 };
                let d = sigmoid(si) - f64::from(u8::from(y));
                for &j in p.feats.block(i) {
                    grad[j as usize] += d;
                }
                grad[dims + slot] += d;
            }
        }
        nll
    }

    fn predict(&self, theta: &[f64], dims: usize, feats: &PageFeatures, out: &mut Prediction) {
        let (w, v) = theta.split_at(dims);
        node_scores(w, feats, &mut out.scratch);
        let s = &out.scratch;
        let n = s.len();
        out.labels.clear();
        out.p_content.clear();
        if n == 0 {
            return;
        }
        // Marginals by the forward recursion p(y_i) = Σ_a p(y_{i−1} = a) p(y_i | a).
        let mut p1 = sigmoid(s[0] + v[0]);
        out.p_content.push(p1);
        for &si in &s[1..] {
            p1 = (1.0 - p1) * sigmoid(si + v[1]) + p1 * sigmoid(si + v[2]);
            out.p_content.push(p1);
        }
        // Viterbi over log p(y_i | y_{i−1}): log σ(x) = −softplus(−x), log(1 − σ(x)) = −softplus(x).
        let lp = |x: f64, y: usize| if y == 1 { -softplus(-x) } else { -softplus(x) };
        super::learn::viterbi2(
            n,
            [lp(s[0] + v[0], 0), lp(s[0] + v[0], 1)],
            |i, a, b| lp(s[i] + v[1 + a], b),
            &mut out.labels,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn previous_label_changes_the_decoding() {
        // Block 1 alone leans NotContent (w = −0.5), but after Content the bias v = +3 wins.
        let dims = 2;
        let theta = [2.0, -0.5, 0.0, 0.0, 3.0];
        let feats = PageFeatures { offsets: vec![0, 1, 2], ids: vec![0, 1] };
        let mut out = Prediction::default();
        Memm.predict(&theta, dims, &feats, &mut out);
        assert_eq!(out.labels, [true, true]);
        let p0 = sigmoid(2.0);
        let p1 = (1.0 - p0) * sigmoid(-0.5) + p0 * sigmoid(2.5);
        assert!((out.p_content[1] - p1).abs() < 1e-12);
    }
}
