//! The LCS-based precision, recall and F1 of Yao & Zuo (§IV.B): with P the predicted and L the
//! gold word sequence, P₂ = |LCS(P, L)| / |P|, R₂ = |LCS(P, L)| / |L|, where "each word in the
//! document is distinct even if two words are lexically the same" — order matters, unlike the
//! bag-of-words P₁/R₁ (which is `bow_p`/`bow_r`, the multiset overlap of score.py; the paper
//! writes sets, but names the measure "bag of words").
//!
//! Words are tokenised exactly as for the bag of words (the caller passes the `\w+` runs of
//! [`super::metrics::word_tokens`]), lower-cased. Each word is hashed (lower-casing as it hashes,
//! so no string is built per token), and the LCS length is [`lcs_length`], which the CleanEval
//! score shares (common prefix and suffix trimmed, then Myers' diff or the bit-parallel
//! algorithm of Allison & Dix / Hyyrö: O(n·⌈m/64⌉) word operations at worst, about 1.6 M for
//! two 10 000-word texts). Not in score.py; `pipeline eval` shows it
//! as `lcsF1` and `lcs_p`/`lcs_r`/`lcs_f1` in `--json`.

use std::collections::HashMap;
use std::hash::Hash;

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

/// (P₂, R₂, F1) of a prediction's words against the gold's. Both empty: 1, 1, 1; one empty:
/// 0, 0, 0 (as the bag-of-words scores).
pub fn lcs_prf(gold: &[&str], pred: &[&str]) -> (f64, f64, f64) {
    // Word hashes go straight to `lcs_length`, which interns what both sides share itself.
    let hashes = |t: &[&str]| t.iter().copied().map(word_hash).collect::<Vec<u64>>();
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

/// Edit distances above this switch from Myers' diff to the bit-parallel LCS (as score.py).
const MYERS_MAX_D: usize = 1000;

/// Length of a longest common subsequence, never with O(n·m) memory: common prefix and
/// suffix trimmed, symbols absent from the other side dropped, then Myers' O((N+M)·D) diff, or
/// Hyyrö's bit-parallel LCS when the distance is large.
pub fn lcs_length<T: Eq + Hash + Clone>(a: &[T], b: &[T]) -> usize {
    let mut start = 0;
    while start < a.len() && start < b.len() && a[start] == b[start] {
        start += 1;
    }
    let (mut ea, mut eb) = (a.len(), b.len());
    while ea > start && eb > start && a[ea - 1] == b[eb - 1] {
        ea -= 1;
        eb -= 1;
    }
    let common = start + (a.len() - ea);
    let (a, b) = (&a[start..ea], &b[start..eb]);
    if a.is_empty() || b.is_empty() {
        return common;
    }
    let mut ids: HashMap<&T, u32> = HashMap::new();
    let sa: std::collections::HashSet<&T> = a.iter().collect();
    let sb: std::collections::HashSet<&T> = b.iter().collect();
    let mut av = Vec::with_capacity(a.len());
    for x in a.iter().filter(|x| sb.contains(x)) {
        let n = ids.len() as u32;
        av.push(*ids.entry(x).or_insert(n));
    }
    let mut bv = Vec::with_capacity(b.len());
    for x in b.iter().filter(|x| sa.contains(x)) {
        let n = ids.len() as u32;
        bv.push(*ids.entry(x).or_insert(n));
    }
    let (a, b) = (av, bv);
    if a.is_empty() || b.is_empty() {
        return common;
    }
    if a.len().abs_diff(b.len()) <= MYERS_MAX_D
        && let Some(d) = myers_distance(&a, &b, MYERS_MAX_D)
    {
        return common + (a.len() + b.len() - d) / 2;
    }
    common + bit_parallel_lcs(&a, &b)
}

/// Shortest insert/delete script length (Myers 1986), or `None` beyond `max_d`.
fn myers_distance(a: &[u32], b: &[u32], max_d: usize) -> Option<usize> {
    let (n, m) = (a.len() as isize, b.len() as isize);
    let offset = n + m + 1;
    let mut v = vec![0isize; (2 * offset + 2) as usize];
    let limit = (n + m).min(max_d as isize);
    for d in 0..=limit {
        let mut k = -d;
        while k <= d {
            let i = (k + offset) as usize;
            let mut x = if k == -d || (k != d && v[i - 1] < v[i + 1]) { v[i + 1] } else { v[i - 1] + 1 };
            let mut y = x - k;
            while x < n && y < m && a[x as usize] == b[y as usize] {
                x += 1;
                y += 1;
            }
            v[i] = x;
            if x >= n && y >= m {
                return Some(d as usize);
            }
            k += 2;
        }
    }
    None
}

/// Exact LCS length by the bit-vector algorithm (Hyyrö 2004), O(n·⌈m/64⌉) time, O(m) memory.
fn bit_parallel_lcs(a: &[u32], b: &[u32]) -> usize {
    let (a, b) = if b.len() > a.len() { (b, a) } else { (a, b) };
    let m = b.len();
    let words = m.div_ceil(64);
    let mut masks: HashMap<u32, Vec<u64>> = HashMap::new();
    for (j, &s) in b.iter().enumerate() {
        masks.entry(s).or_insert_with(|| vec![0; words])[j / 64] |= 1 << (j % 64);
    }
    let mut v = vec![u64::MAX; words];
    if m % 64 != 0 {
        v[words - 1] = (1u64 << (m % 64)) - 1;
    }
    let zero = vec![0u64; words];
    for s in a {
        let mk = masks.get(s).unwrap_or(&zero);
        // v = (v + (v & mk)) | (v & !mk), multi-word addition with carry.
        let mut carry = 0u64;
        for w in 0..words {
            let u = v[w] & mk[w];
            let (s1, c1) = v[w].overflowing_add(u);
            let (s2, c2) = s1.overflowing_add(carry);
            carry = u64::from(c1 || c2);
            v[w] = s2 | (v[w] - u);
        }
        if m % 64 != 0 {
            v[words - 1] &= (1u64 << (m % 64)) - 1;
        }
    }
    m - v.iter().map(|x| x.count_ones() as usize).sum::<usize>()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lcs_prf(gold: &str, pred: &str) -> (f64, f64, f64) {
        use crate::eval::metrics::word_tokens;
        super::lcs_prf(&word_tokens(gold), &word_tokens(pred))
    }

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
    fn lcs_matches_dynamic_programming() {
        let mut x = 7u64;
        let mut rnd = |k: u64| {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            ((x >> 33) % k) as u32
        };
        for _ in 0..200 {
            let n = rnd(60) as usize;
            let m = rnd(60) as usize;
            let a: Vec<u32> = (0..n).map(|_| rnd(6)).collect();
            let b: Vec<u32> = (0..m).map(|_| rnd(6)).collect();
            assert_eq!(lcs_length(&a, &b), dp_lcs(&a, &b), "{a:?} {b:?}");
            assert_eq!(bit_parallel_lcs(&a, &b), dp_lcs(&a, &b));
        }
        // Distance beyond 1000: the bit-parallel path.
        let a: Vec<u32> = (0..3000).map(|i| i % 97).collect();
        let b: Vec<u32> = (0..1500).map(|i| (i * 7) % 97).collect();
        assert_eq!(lcs_length(&a, &b), dp_lcs(&a, &b));
    }

    #[test]
    fn long_sequences_cross_word_boundaries() {
        let c: Vec<u32> = (0..128).map(|i| i % 3).collect();
        assert_eq!(lcs_length(&c, &c), 128);
        assert_eq!(bit_parallel_lcs(&c, &c), 128);
    }

    proptest::proptest! {
        #[test]
        fn lcs_equals_dynamic_programming(
            a in proptest::collection::vec(0u32..6, 0..150),
            b in proptest::collection::vec(0u32..6, 0..150),
        ) {
            proptest::prop_assert_eq!(lcs_length(&a, &b), dp_lcs(&a, &b));
            proptest::prop_assert_eq!(bit_parallel_lcs(&a, &b), dp_lcs(&a, &b));
        }
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
}
