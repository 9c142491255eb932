//! The LCS-based precision, recall and F1 of Yao & Zuo (§IV.B): with P the predicted and L the
//! gold word sequence, P₂ = |LCS(P, L)| / |P|, R₂ = |LCS(P, L)| / |L|, where "each word in the
//! document is distinct even if two words are lexically the same" — order matters, unlike the
//! bag-of-words P₁/R₁ (which is `bow_p`/`bow_r`, the multiset overlap of score.py; the paper
//! writes sets, but names the measure "bag of words").
//!
//! Words are tokenised exactly as for the bag of words: the `\w+` runs of
//! [`super::metrics::word_tokens`], lower-cased. Each word is hashed (lower-casing as it hashes,
//! so no string is built per token), and the LCS length is the CleanEval score's
//! [`lcs_length`] (common prefix and suffix trimmed, then Myers' diff or the bit-parallel
//! algorithm of Allison & Dix / Hyyrö: O(n·⌈m/64⌉) word operations at worst, about 1.6 M for
//! two 10 000-word texts). Not in score.py; `pipeline eval` shows it
//! as `lcsF1` and `lcs_p`/`lcs_r`/`lcs_f1` in `--json`.

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

/// (P₂, R₂, F1) of a prediction against gold. Both empty: 1, 1, 1; one empty: 0, 0, 0 (as the
/// bag-of-words scores).
pub fn lcs_prf(gold: &str, pred: &str) -> (f64, f64, f64) {
    // Word hashes go straight to `lcs_length`, which interns what both sides share itself.
    let hashes = |t: &str| word_tokens(t).into_iter().map(word_hash).collect::<Vec<u64>>();
    let (g, p) = (hashes(gold), hashes(pred));
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
}
