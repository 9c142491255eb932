//! Aligning a gold text to the words of its page, to label training tokens.
//!
//! Both sides are split into words by our own tokenizer and normalised (NFKC, lower case,
//! punctuation dropped). Alignment is near-linear: words are first anchored on n-grams that
//! occur exactly once on each side (n = 5, then 3, then 1 inside the remaining gaps), the
//! anchors are made consistent with a longest increasing subsequence, and only the small gaps
//! left between anchors get an exact LCS (dynamic programming, capped in size). Nothing is ever
//! O(n·m) on whole pages.

use std::collections::HashMap;

use unicode_normalization::UnicodeNormalization;
use xxhash_rust::xxh3::xxh3_64;

use crate::html::entities;

/// Largest gap (gold words × page words) aligned by dynamic programming.
const MAX_DP_CELLS: usize = 2_000_000;

/// Normalised key of a word: NFKC, lower case, alphanumerics only (0 when nothing is left).
pub fn word_key(raw: &str, has_entity: bool, buf: &mut String) -> u64 {
    let mut decoded = String::new();
    let src = if has_entity {
        entities::decode_into(raw, &mut decoded);
        decoded.as_str()
    } else {
        raw
    };
    buf.clear();
    for c in src.nfkc().flat_map(char::to_lowercase) {
        if c.is_alphanumeric() {
            buf.push(c);
        }
    }
    if buf.is_empty() { 0 } else { xxh3_64(buf.as_bytes()) }
}

/// Aligns `gold` to `page` (word keys); returns for each gold word the page word it matches.
pub fn align(gold: &[u64], page: &[u64]) -> Vec<Option<usize>> {
    let mut m = vec![None; gold.len()];
    align_range(gold, page, 0..gold.len(), 0..page.len(), &[5, 3, 1], &mut m);
    m
}

fn align_range(
    gold: &[u64],
    page: &[u64],
    g: std::ops::Range<usize>,
    p: std::ops::Range<usize>,
    ns: &[usize],
    out: &mut [Option<usize>],
) {
    if g.is_empty() || p.is_empty() {
        return;
    }
    if g.len().saturating_mul(p.len()) <= MAX_DP_CELLS.min(4096) || ns.is_empty() {
        if g.len().saturating_mul(p.len()) <= MAX_DP_CELLS {
            lcs_dp(gold, page, g, p, out);
        }
        return;
    }
    let n = ns[0];
    let anchors = unique_anchors(gold, page, g.clone(), p.clone(), n);
    if anchors.is_empty() {
        align_range(gold, page, g, p, &ns[1..], out);
        return;
    }
    // Recurse into the gaps around and between anchors with smaller n-grams.
    let (mut gs, mut ps) = (g.start, p.start);
    for &(ga, pa) in &anchors {
        align_range(gold, page, gs..ga, ps..pa, &ns[1..], out);
        for k in 0..n {
            out[ga + k] = Some(pa + k);
        }
        gs = ga + n;
        ps = pa + n;
    }
    align_range(gold, page, gs..g.end, ps..p.end, &ns[1..], out);
}

/// n-grams unique on both sides, as a chain increasing on both (longest increasing
/// subsequence over page positions, in gold order), non-overlapping.
fn unique_anchors(
    gold: &[u64],
    page: &[u64],
    g: std::ops::Range<usize>,
    p: std::ops::Range<usize>,
    n: usize,
) -> Vec<(usize, usize)> {
    if g.len() < n || p.len() < n {
        return Vec::new();
    }
    let gram = |s: &[u64], i: usize| -> Option<u64> {
        let w = &s[i..i + n];
        if w.contains(&0) {
            return None;
        }
        Some(w.iter().fold(0x9E37_79B9_7F4A_7C15u64, |h, &x| (h ^ x).wrapping_mul(0x100_0000_01B3).rotate_left(17)))
    };
    // gram → (count, position) on each side.
    let mut gm: HashMap<u64, (u32, usize)> = HashMap::new();
    for i in g.start..=g.end - n {
        if let Some(h) = gram(gold, i) {
            let e = gm.entry(h).or_insert((0, i));
            e.0 += 1;
        }
    }
    let mut pm: HashMap<u64, (u32, usize)> = HashMap::new();
    for i in p.start..=p.end - n {
        if let Some(h) = gram(page, i)
            && gm.contains_key(&h)
        {
            let e = pm.entry(h).or_insert((0, i));
            e.0 += 1;
        }
    }
    let mut pairs: Vec<(usize, usize)> = pm
        .iter()
        .filter(|(_, (c, _))| *c == 1)
        .filter_map(|(h, &(_, pi))| gm.get(h).filter(|(c, _)| *c == 1).map(|&(_, gi)| (gi, pi)))
        .collect();
    pairs.sort_unstable();
    // Longest increasing subsequence on page position (patience sorting with predecessors).
    let mut tails: Vec<usize> = Vec::new();
    let mut prev = vec![usize::MAX; pairs.len()];
    for (i, &(_, pi)) in pairs.iter().enumerate() {
        let pos = tails.partition_point(|&t| pairs[t].1 < pi);
        if pos > 0 {
            prev[i] = tails[pos - 1];
        }
        if pos == tails.len() {
            tails.push(i);
        } else {
            tails[pos] = i;
        }
    }
    let mut chain = Vec::new();
    let mut cur = tails.last().copied();
    while let Some(i) = cur {
        chain.push(pairs[i]);
        cur = (prev[i] != usize::MAX).then(|| prev[i]);
    }
    chain.reverse();
    // Drop overlapping anchors (keep the earlier one).
    let mut out: Vec<(usize, usize)> = Vec::new();
    for a in chain {
        if out.last().is_none_or(|l| a.0 >= l.0 + n && a.1 >= l.1 + n) {
            out.push(a);
        }
    }
    out
}

/// Exact LCS of two small ranges by dynamic programming, writing the matches.
fn lcs_dp(gold: &[u64], page: &[u64], g: std::ops::Range<usize>, p: std::ops::Range<usize>, out: &mut [Option<usize>]) {
    let (a, b) = (&gold[g.clone()], &page[p.clone()]);
    let (n, m) = (a.len(), b.len());
    let mut t = vec![0u32; (n + 1) * (m + 1)];
    let w = m + 1;
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            t[i * w + j] = if a[i] == b[j] && a[i] != 0 {
                t[(i + 1) * w + j + 1] + 1
            } else {
                t[(i + 1) * w + j].max(t[i * w + j + 1])
            };
        }
    }
    let (mut i, mut j) = (0, 0);
    while i < n && j < m {
        if a[i] == b[j] && a[i] != 0 {
            out[g.start + i] = Some(p.start + j);
            i += 1;
            j += 1;
        } else if t[(i + 1) * w + j] >= t[i * w + j + 1] {
            i += 1;
        } else {
            j += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(s: &str) -> Vec<u64> {
        let mut b = String::new();
        s.split_whitespace().map(|w| word_key(w, false, &mut b)).collect()
    }

    #[test]
    fn normalisation() {
        let mut b = String::new();
        assert_eq!(word_key("Café,", false, &mut b), word_key("cafe\u{301}", false, &mut b));
        assert_eq!(word_key("ﬁne", false, &mut b), word_key("FINE", false, &mut b));
        assert_eq!(word_key("caf&eacute;", true, &mut b), word_key("café", false, &mut b));
        assert_eq!(word_key("—", false, &mut b), 0);
    }

    #[test]
    fn aligns_article_inside_boilerplate() {
        let page = keys(
            "home news sport the mayor said the park will open in may after years of work share this story the park comments",
        );
        let gold = keys("The mayor said the park will open in May after years of work");
        let m = align(&gold, &page);
        assert!(m.iter().all(Option::is_some));
        assert_eq!(m[0], Some(3));
        assert_eq!(m[gold.len() - 1], Some(15));
    }

    #[test]
    fn long_pages_stay_fast_and_partial_golds_align_partially() {
        // 30 000 page words, gold of 3 000 words taken from the middle plus 100 words not in the page.
        let mut x = 12345u64;
        let page: Vec<u64> = (0..30_000)
            .map(|_| {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                (x >> 33) % 20_000 + 1
            })
            .collect();
        let mut gold: Vec<u64> = page[12_000..15_000].to_vec();
        gold.extend((0..100).map(|i| 1_000_000 + i));
        let t = std::time::Instant::now();
        let m = align(&gold, &page);
        assert!(t.elapsed().as_secs() < 5);
        let aligned = m.iter().filter(|x| x.is_some()).count();
        assert!(aligned >= 2_990, "{aligned}");
        assert_eq!(m[0], Some(12_000));
    }
}
