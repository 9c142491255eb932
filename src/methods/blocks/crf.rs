//! Linear-chain conditional random field over a page's blocks (Gibson et al. 2007, §4;
//! Lafferty, McCallum & Pereira 2001), two labels (NotContent = 0, Content = 1).
//!
//! Node potentials: with only two labels, one weight vector `w` scoring Content against
//! NotContent is equivalent to per-label weights (shifting both by the same vector changes
//! every labelling's score by the same amount), so block i contributes `y_i · (w · x_i)`.
//! Edge potentials: a 2×2 transition table `T` and start weights `π`; with
//! [`Crf::edge_features`] (the paper's §4 option, off by default) the transition into block i
//! also scores block i's observation features conjoined with the label pair (y_{i−1}, y_i),
//! each conjunction hashed ([`edge_id`]) into the same weight vector as the node features, so
//! a feature such as "parent is `li`" can make Content→NotContent cheaper rather than only
//! NotContent likelier. Likelihood and gradient by forward–backward in log space over
//! per-position transition tables, Viterbi decoding, per-block marginals.
//!
//! Extra parameters after the hashed weights: `[T00, T01, T10, T11, π0, π1]`.

use super::learn::{BlockLearner, Prediction, TrainPage, node_scores};
use crate::methods::blocks::features::PageFeatures;

pub struct Crf {
    /// Transition scores also depend on the current block's features (§4 "edge features").
    pub edge_features: bool,
}

/// Node features only (the default).
pub static CRF: Crf = Crf { edge_features: false };
/// With edge features.
pub static CRF_EDGE: Crf = Crf { edge_features: true };

/// Weight index of node feature `j` conjoined with the label pair `(a, b)`: a multiplicative
/// mix of `(j, pair)` masked to the (power-of-two) `dims`, so conjunctions share the hashed
/// weight vector (collisions are the same trade as issue 3's hashed features).
#[inline]
pub fn edge_id(j: u32, a: usize, b: usize, dims: usize) -> usize {
    let x = (u64::from(j) << 2 | (2 * a + b) as u64).wrapping_add(0x9E37_79B9_7F4A_7C15);
    let x = (x ^ (x >> 31)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    ((x ^ (x >> 29)) as usize) & (dims - 1)
}

const T: usize = 0;
const PI: usize = 4;

#[inline]
fn lse2(a: f64, b: f64) -> f64 {
    let m = a.max(b);
    if m == f64::NEG_INFINITY { m } else { m + ((a - m).exp() + (b - m).exp()).ln() }
}

impl Crf {
    /// Per-position transition scores `tr[4i + 2a + b]` (row 0 unused): `T[a][b]`, plus with
    /// edge features the weights of block i's features conjoined with `(a, b)`.
    fn transitions(&self, w: &[f64], e: &[f64], feats: &PageFeatures, tr: &mut Vec<f64>) {
        let n = feats.len();
        tr.clear();
        tr.resize(4 * n, 0.0);
        let dims = w.len();
        for i in 1..n {
            for ab in 0..4 {
                let mut v = e[T + ab];
                if self.edge_features {
                    v += feats.block(i).iter().map(|&j| w[edge_id(j, ab / 2, ab % 2, dims)]).sum::<f64>();
                }
                tr[4 * i + ab] = v;
            }
        }
    }
}

/// Forward and backward tables (n × 2, row-major) and log Z for node scores `s`, start
/// weights `e[PI..]` and per-position transitions `tr` ([`Crf::transitions`]).
pub(crate) fn forward_backward(s: &[f64], e: &[f64], tr: &[f64], alpha: &mut Vec<f64>, beta: &mut Vec<f64>) -> f64 {
    let n = s.len();
    alpha.clear();
    alpha.resize(2 * n, 0.0);
    beta.clear();
    beta.resize(2 * n, 0.0);
    if n == 0 {
        return 0.0;
    }
    let t = |i: usize, a: usize, b: usize| tr[4 * i + 2 * a + b];
    alpha[0] = e[PI];
    alpha[1] = e[PI + 1] + s[0];
    for i in 1..n {
        for b in 0..2 {
            let v = lse2(alpha[2 * (i - 1)] + t(i, 0, b), alpha[2 * (i - 1) + 1] + t(i, 1, b));
            alpha[2 * i + b] = v + if b == 1 { s[i] } else { 0.0 };
        }
    }
    for i in (0..n - 1).rev() {
        for a in 0..2 {
            beta[2 * i + a] =
                lse2(t(i + 1, a, 0) + beta[2 * (i + 1)], t(i + 1, a, 1) + s[i + 1] + beta[2 * (i + 1) + 1]);
        }
    }
    lse2(alpha[2 * (n - 1)], alpha[2 * (n - 1) + 1])
}

impl BlockLearner for Crf {
    fn name(&self) -> &'static str {
        "crf"
    }

    fn extra_params(&self) -> usize {
        6
    }

    fn objective(&self, theta: &[f64], dims: usize, grad: &mut [f64], pages: &[TrainPage]) -> f64 {
        let (w, e) = theta.split_at(dims);
        let mut s = Vec::new();
        let (mut alpha, mut beta, mut tr) = (Vec::new(), Vec::new(), Vec::new());
        let mut nll = 0.0;
        for p in pages {
            let n = p.labels.len();
            if n == 0 {
                continue;
            }
            node_scores(w, &p.feats, &mut s);
            self.transitions(w, e, &p.feats, &mut tr);
            let log_z = forward_backward(&s, e, &tr, &mut alpha, &mut beta);
            let y = |i: usize| usize::from(p.labels[i]);
            let mut gold = e[PI + y(0)];
            for i in 0..n {
                if p.labels[i] {
                    gold += s[i];
                }
                if i > 0 {
                    gold += tr[4 * i + 2 * y(i - 1) + y(i)];
                }
            }
            nll += log_z - gold;
            let (gw, ge) = grad.split_at_mut(dims);
            for i in 0..n {
                let p1 = (alpha[2 * i + 1] + beta[2 * i + 1] - log_z).exp();
                let d = p1 - f64::from(u8::from(p.labels[i]));
                if d != 0.0 {
                    for &j in p.feats.block(i) {
                        gw[j as usize] += d;
                    }
                }
            }
            for b in 0..2 {
                ge[PI + b] += (alpha[b] + beta[b] - log_z).exp();
            }
            ge[PI + y(0)] -= 1.0;
            for i in 1..n {
                let gold_ab = 2 * y(i - 1) + y(i);
                for a in 0..2 {
                    for b in 0..2 {
                        let node = if b == 1 { s[i] } else { 0.0 };
                        let pab =
                            (alpha[2 * (i - 1) + a] + tr[4 * i + 2 * a + b] + node + beta[2 * i + b] - log_z).exp();
                        // Expected minus observed count of the pair (a, b) at i.
                        let d = pab - f64::from(u8::from(2 * a + b == gold_ab));
                        ge[T + 2 * a + b] += d;
                        if self.edge_features && d != 0.0 {
                            for &j in p.feats.block(i) {
                                gw[edge_id(j, a, b, dims)] += d;
                            }
                        }
                    }
                }
            }
        }
        nll
    }

    fn predict(&self, theta: &[f64], dims: usize, feats: &PageFeatures, out: &mut Prediction) {
        let (w, e) = theta.split_at(dims);
        node_scores(w, feats, &mut out.scratch);
        let s = &out.scratch;
        let n = s.len();
        out.labels.clear();
        out.p_content.clear();
        if n == 0 {
            return;
        }
        let (mut alpha, mut beta, mut tr) = (Vec::new(), Vec::new(), Vec::new());
        self.transitions(w, e, feats, &mut tr);
        let log_z = forward_backward(s, e, &tr, &mut alpha, &mut beta);
        out.p_content.extend((0..n).map(|i| (alpha[2 * i + 1] + beta[2 * i + 1] - log_z).exp()));
        // Viterbi.
        super::learn::viterbi2(
            n,
            [e[PI], e[PI + 1] + s[0]],
            |i, a, b| tr[4 * i + 2 * a + b] + if b == 1 { s[i] } else { 0.0 },
            &mut out.labels,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two blocks, one feature each: block 0 has feature 0 (w = 1), block 1 feature 1
    /// (w = −0.5); T = [[0, −1], [−2, 0.5]], π = [0, 0].
    /// Labelling scores y0·1 + y1·(−0.5) + T[y0][y1]:
    /// 00: 0, 01: −0.5 − 1 = −1.5, 10: 1 − 2 = −1, 11: 1 − 0.5 + 0.5 = 1.
    /// Viterbi: 11. Z = e^0 + e^−1.5 + e^−1 + e^1; p(y0 = 1) = (e^−1 + e) / Z,
    /// p(y1 = 1) = (e^−1.5 + e) / Z.
    #[test]
    fn two_blocks_by_hand() {
        let dims = 2;
        let theta = [1.0, -0.5, 0.0, -1.0, -2.0, 0.5, 0.0, 0.0];
        let feats = PageFeatures { offsets: vec![0, 1, 2], ids: vec![0, 1] };
        let mut out = Prediction::default();
        CRF.predict(&theta, dims, &feats, &mut out);
        assert_eq!(out.labels, [true, true]);
        let e = std::f64::consts::E;
        let z = 1.0 + (-1.5f64).exp() + (-1.0f64).exp() + e;
        let want = [((-1.0f64).exp() + e) / z, ((-1.5f64).exp() + e) / z];
        for (g, w) in out.p_content.iter().zip(want) {
            assert!((g - w).abs() < 1e-12, "{g} vs {w}");
        }
        // The negative log-likelihood of gold 10 is log Z − (−1).
        let page = TrainPage { feats, labels: vec![true, false] };
        let mut grad = vec![0.0; theta.len()];
        let nll = CRF.objective(&theta, dims, &mut grad, std::slice::from_ref(&page));
        assert!((nll - (z.ln() + 1.0)).abs() < 1e-12);
    }

    #[test]
    fn gradient_matches_finite_differences() {
        gradient_check(&CRF, 5);
    }

    /// The same check with edge features on: 8 hashed weights so node and edge conjunctions
    /// share (and sometimes collide in) one vector, as in a real model.
    #[test]
    fn gradient_matches_finite_differences_with_edge_features() {
        gradient_check(&CRF_EDGE, 8);
    }

    fn gradient_check(crf: &Crf, dims: usize) {
        let pages = vec![
            TrainPage {
                feats: PageFeatures { offsets: vec![0, 2, 3, 5, 6], ids: vec![0, 1, 2, 1, 3, 4] },
                labels: vec![false, true, true, false],
            },
            TrainPage { feats: PageFeatures { offsets: vec![0, 1], ids: vec![4] }, labels: vec![true] },
        ];
        let theta: Vec<f64> = (0..dims + 6).map(|i| ((i * 37 % 11) as f64 - 5.0) / 7.0).collect();
        let mut grad = vec![0.0; theta.len()];
        crf.objective(&theta, dims, &mut grad, &pages);
        let h = 1e-6;
        for k in 0..theta.len() {
            let (mut up, mut dn) = (theta.clone(), theta.clone());
            up[k] += h;
            dn[k] -= h;
            let mut scratch = vec![0.0; theta.len()];
            let fd = (crf.objective(&up, dims, &mut scratch, &pages) - crf.objective(&dn, dims, &mut scratch, &pages))
                / (2.0 * h);
            assert!((fd - grad[k]).abs() < 1e-6, "parameter {k}: finite difference {fd}, gradient {}", grad[k]);
        }
    }
}
