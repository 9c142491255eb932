//! The LCS-based precision, recall and F1 of Yao & Zuo (§IV.B): with P the predicted and L the
//! gold word sequence, P₂ = |LCS(P, L)| / |P|, R₂ = |LCS(P, L)| / |L|, where "each word in the
//! document is distinct even if two words are lexically the same" — order matters, unlike the
//! bag-of-words P₁/R₁ (which is `bow_p`/`bow_r`, the multiset overlap of score.py; the paper
//! writes sets, but names the measure "bag of words").
//!
//! Words are tokenised exactly as for the bag of words: the `\w+` runs of
//! [`super::metrics::word_tokens`], lower-cased. Each word is hashed (lower-casing as it hashes,
//! so no string is built per token) and interned to a small id, and the LCS length is the CleanEval score's
//! [`lcs_length`] (common prefix and suffix trimmed, then Myers' diff or the bit-parallel
//! algorithm of Allison & Dix / Hyyrö: O(n·⌈m/64⌉) word operations at worst, about 1.6 M for
//! two 10 000-word texts). Not in score.py; `pipeline eval` shows it
//! as `lcsF1` and `lcs_p`/`lcs_r`/`lcs_f1` in `--json`.

use std::collections::HashMap;

use super::metrics::{lcs_length, word_tokens};

/// FNV-1a over the UTF-8 of the lower-cased word (64 bits: collisions among a page's few
/// thousand distinct words are negligible).
fn word_hash(w: &str) -> u64 {
    let mut h = 0xcbf2_9ce4_8422_2325u64;
    let mut b = [0u8; 4];
    for c in w.chars().flat_map(char::to_lowercase) {
        for &x in c.encode_utf8(&mut b).as_bytes() {
            h = (h ^ u64::from(x)).wrapping_mul(0x100_0000_01b3);
        }
    }
    h
}

/// Word ids of a text, interned in `ids` (shared by both sides of a comparison).
fn word_ids(text: &str, ids: &mut HashMap<u64, u32>, out: &mut Vec<u32>) {
    out.clear();
    for w in word_tokens(text) {
        let n = ids.len() as u32;
        out.push(*ids.entry(word_hash(w)).or_insert(n));
    }
}

/// (P₂, R₂, F1) of a prediction against gold. Both empty: 1, 1, 1; one empty: 0, 0, 0 (as the
/// bag-of-words scores).
pub fn lcs_prf(gold: &str, pred: &str) -> (f64, f64, f64) {
    let mut ids = HashMap::new();
    let (mut g, mut p) = (Vec::new(), Vec::new());
    word_ids(gold, &mut ids, &mut g);
    word_ids(pred, &mut ids, &mut p);
    if g.is_empty() && p.is_empty() {
        return (1.0, 1.0, 1.0);
    }
    if g.is_empty() || p.is_empty() {
        return (0.0, 0.0, 0.0);
    }
    let l = lcs_length(&g, &p) as f64;
    let (pr, rc) = (l / p.len() as f64, l / g.len() as f64);
    let f1 = if pr + rc > 0.0 { 2.0 * pr * rc / (pr + rc) } else { 0.0 };
    (pr, rc, f1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn dp_lcs(a: &[u32], b: &[u32]) -> usize {
        let mut t = vec![vec![0usize; b.len() + 1]; a.len() + 1];
        for i in 1..=a.len() {
            for j in 1..=b.len() {
                t[i][j] = if a[i - 1] == b[j - 1] { t[i - 1][j - 1] + 1 } else { t[i - 1][j].max(t[i][j - 1]) };
            }
        }
        t[a.len()][b.len()]
    }

    #[test]
    fn hand_computed_lcs_scores() {
        // Gold "a b c d e", prediction "b a c e x": LCS "b c e" (or "a c e") = 3.
        let (p, r, f) = lcs_prf("A b, c d e.", "b a C e x");
        assert_eq!((p, r), (3.0 / 5.0, 3.0 / 5.0));
        assert!((f - 0.6).abs() < 1e-12);
        // Bag of words would see 4 common words here; order costs the LCS one.
        assert_eq!(lcs_prf("", ""), (1.0, 1.0, 1.0));
        assert_eq!(lcs_prf("gold", ""), (0.0, 0.0, 0.0));
        assert_eq!(lcs_prf("Naïve CAFÉ", "naïve café"), (1.0, 1.0, 1.0));
    }

    #[test]
    fn long_sequences_cross_word_boundaries() {
        let a: Vec<u32> = (0..3000).map(|i| i % 97).collect();
        let b: Vec<u32> = (0..1500).map(|i| (i * 7) % 97).collect();
        assert_eq!(lcs_length(&a, &b), dp_lcs(&a, &b));
        let c: Vec<u32> = (0..128).map(|i| i % 3).collect();
        assert_eq!(lcs_length(&c, &c), 128);
    }

    proptest! {
        #[test]
        fn lcs_equals_dynamic_programming(
            a in prop::collection::vec(0u32..6, 0..150),
            b in prop::collection::vec(0u32..6, 0..150),
        ) {
            prop_assert_eq!(lcs_length(&a, &b), dp_lcs(&a, &b));
        }
    }
}
