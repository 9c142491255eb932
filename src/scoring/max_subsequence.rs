//! Maximum subsequence segmentation (Pasternack & Roth 2009, §6.1, Figure 1): the contiguous
//! run of token scores with the largest sum, found in one streaming pass; and, for
//! diagnostics, all maximal non-overlapping runs (Ruzzo & Tompa 1999) in linear time, from
//! which the k best are taken.

/// A run of tokens `start..=end` (inclusive, as in the paper) and its value (sum of scores).
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Segment {
    pub start: usize,
    pub end: usize,
    pub value: f64,
}

/// Streaming maximum subsequence: feed scores with [`push`](Self::push), read
/// [`best`](Self::best) at any time. O(1) memory, O(1) per score.
#[derive(Debug, Clone)]
pub struct MaxSubsequence {
    next: usize,
    start: usize,
    sum: f64,
    best: Option<Segment>,
}

impl Default for MaxSubsequence {
    fn default() -> Self {
        MaxSubsequence { next: 0, start: 0, sum: 0.0, best: None }
    }
}

impl MaxSubsequence {
    /// Adds the score of the next token.
    #[inline]
    pub fn push(&mut self, score: f64) {
        let i = self.next;
        self.next += 1;
        self.sum += score;
        // Figure 1: `if sum > value(maxSS)`; strict, so the earliest best run wins ties.
        if self.best.is_none_or(|b| self.sum > b.value) {
            self.best = Some(Segment { start: self.start, end: i, value: self.sum });
        }
        if self.sum < 0.0 {
            self.start = i + 1;
            self.sum = 0.0;
        }
    }

    /// The highest-valued run so far (`None` before the first score).
    pub fn best(&self) -> Option<Segment> {
        self.best
    }

    /// Number of scores pushed.
    pub fn len(&self) -> usize {
        self.next
    }

    pub fn is_empty(&self) -> bool {
        self.next == 0
    }
}

/// All maximal scoring subsequences (Ruzzo & Tompa 1999): disjoint runs with positive value,
/// in document order. Linear time: each candidate is pushed once and the left-neighbour search
/// follows a chain of strictly smaller left sums, so skipped entries are never revisited.
pub fn maximal_segments(scores: &[f64]) -> Vec<Segment> {
    // Each entry: start, end, L (cumulative sum before start), R (cumulative sum at end),
    // and `lower`: index of the nearest entry to the left with a smaller L.
    struct Entry {
        start: usize,
        end: usize,
        l: f64,
        r: f64,
        lower: Option<usize>,
    }
    let mut list: Vec<Entry> = Vec::new();
    let mut cum = 0.0;
    for (i, &s) in scores.iter().enumerate() {
        let before = cum;
        cum += s;
        if s <= 0.0 {
            continue;
        }
        let mut k = Entry { start: i, end: i, l: before, r: cum, lower: None };
        loop {
            // Rightmost j with L_j < L_k.
            let mut j = list.len().checked_sub(1);
            while let Some(jj) = j {
                if list[jj].l < k.l {
                    break;
                }
                j = list[jj].lower;
            }
            match j {
                Some(jj) if list[jj].r < k.r => {
                    // Extend j to cover k and everything between; then retry with the merge.
                    let e = &list[jj];
                    k = Entry { start: e.start, end: k.end, l: e.l, r: k.r, lower: None };
                    list.truncate(jj);
                }
                _ => {
                    k.lower = j;
                    list.push(k);
                    break;
                }
            }
        }
    }
    list.into_iter().map(|e| Segment { start: e.start, end: e.end, value: e.r - e.l }).collect()
}

/// The `k` highest-valued of the maximal segments `segs` ([`maximal_segments`]), best first.
pub fn top_k(segs: &[Segment], k: usize) -> Vec<Segment> {
    let mut segs = segs.to_vec();
    segs.sort_by(|a, b| b.value.total_cmp(&a.value).then(a.start.cmp(&b.start)));
    segs.truncate(k);
    segs
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn brute(scores: &[f64]) -> f64 {
        let mut best = f64::NEG_INFINITY;
        for a in 0..scores.len() {
            let mut s = 0.0;
            for &x in &scores[a..] {
                s += x;
                best = best.max(s);
            }
        }
        best
    }

    fn mss(scores: &[f64]) -> Option<Segment> {
        let mut m = MaxSubsequence::default();
        scores.iter().for_each(|&s| m.push(s));
        m.best()
    }

    #[test]
    fn paper_simple_scoring_example() {
        // <p> w w w </p> <div> w </div>: tags -3.25, words +1.
        let s = [-3.25, 1.0, 1.0, 1.0, -3.25, -3.25, 1.0, -3.25];
        let b = mss(&s).unwrap();
        assert_eq!((b.start, b.end, b.value), (1, 3, 3.0));
    }

    #[test]
    fn all_negative_picks_the_largest_single_score() {
        let b = mss(&[-3.0, -1.0, -2.0]).unwrap();
        assert_eq!((b.start, b.end, b.value), (1, 1, -1.0));
        assert!(mss(&[]).is_none());
    }

    #[test]
    fn ruzzo_tompa_example() {
        // Ruzzo & Tompa's example sequence: (4,-5,3,-3,1,2,-2,2,-2,1,5) → maximal runs {4}, {3}, {1,2,-2,2,-2,1,5}.
        let s = [4.0, -5.0, 3.0, -3.0, 1.0, 2.0, -2.0, 2.0, -2.0, 1.0, 5.0];
        let segs = maximal_segments(&s);
        let spans: Vec<_> = segs.iter().map(|g| (g.start, g.end, g.value)).collect();
        assert_eq!(spans, vec![(0, 0, 4.0), (2, 2, 3.0), (4, 10, 7.0)]);
        assert_eq!(top_k(&segs, 2).iter().map(|g| g.value).collect::<Vec<_>>(), vec![7.0, 4.0]);
    }

    proptest! {
        #[test]
        fn streaming_equals_brute_force(v in prop::collection::vec(-8i32..8, 1..200)) {
            let s: Vec<f64> = v.iter().map(|&x| f64::from(x) * 0.5).collect();
            let b = mss(&s).unwrap();
            prop_assert!((b.value - brute(&s)).abs() < 1e-9);
            let sum: f64 = s[b.start..=b.end].iter().sum();
            prop_assert!((sum - b.value).abs() < 1e-9);
        }

        #[test]
        fn maximal_segments_are_disjoint_positive_and_contain_the_best(v in prop::collection::vec(-8i32..8, 0..200)) {
            let s: Vec<f64> = v.iter().map(|&x| f64::from(x)).collect();
            let segs = maximal_segments(&s);
            for w in segs.windows(2) {
                prop_assert!(w[0].end < w[1].start);
            }
            for g in &segs {
                prop_assert!(g.value > 0.0);
                let sum: f64 = s[g.start..=g.end].iter().sum();
                prop_assert!((sum - g.value).abs() < 1e-9);
                // Maximal: no sub-run of a segment beats it.
                prop_assert!((brute(&s[g.start..=g.end]) - g.value).abs() < 1e-9);
            }
            let best = if s.is_empty() { 0.0 } else { brute(&s) };
            if best > 0.0 {
                prop_assert!((segs.iter().map(|g| g.value).fold(0.0, f64::max) - best).abs() < 1e-9);
            } else {
                prop_assert!(segs.is_empty());
            }
        }
    }
}
