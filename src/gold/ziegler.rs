//! The similarity of Ziegler & Skubacz (2007, §3.5.2, equations 2–3): cosine similarity of
//! term-frequency vectors scaled by δ, the smaller ratio of the two documents' term counts,
//! so that a doubled copy of a text no longer scores 1. Terms are the lower-cased runs of
//! letters and digits longer than one character ("all terms with length > 1, effectively
//! removing all punctuation symbols").
//!
//! It is both an evaluation metric (`ziegler_sim` in `pipeline eval`) and the fitness the PSO
//! learner maximises ([`crate::methods::pso::train`]), which shares [`for_each_term`] so both see
//! the same terms.

use std::collections::HashMap;

use xxhash_rust::xxh3::xxh3_64;

/// Calls `f` with the hash of every term of `text` (lower case, alphanumeric runs of two or
/// more characters). `buf` is scratch space, so no allocation happens per term.
pub fn for_each_term(text: &str, buf: &mut String, mut f: impl FnMut(u64)) {
    let mut chars = 0usize;
    buf.clear();
    let mut flush = |buf: &mut String, chars: &mut usize| {
        if *chars > 1 {
            f(xxh3_64(buf.as_bytes()));
        }
        buf.clear();
        *chars = 0;
    };
    for c in text.chars() {
        if c.is_alphanumeric() {
            for l in c.to_lowercase() {
                buf.push(l);
            }
            chars += 1;
        } else if chars > 0 || !buf.is_empty() {
            flush(buf, &mut chars);
        }
    }
    flush(buf, &mut chars);
}

/// Term counts of a text.
pub fn term_counts(text: &str) -> HashMap<u64, u32> {
    let mut m = HashMap::new();
    let mut buf = String::new();
    for_each_term(text, &mut buf, |t| *m.entry(t).or_insert(0) += 1);
    m
}

/// sim(a, b) = δ · cos(v_a, v_b), δ = min(|a|/|b|, |b|/|a|) with |·| the term count.
/// Two texts without terms are identical (1); one empty side scores 0.
pub fn similarity(a: &str, b: &str) -> f64 {
    similarity_of_counts(&term_counts(a), &term_counts(b))
}

/// [`similarity`] over term counts.
pub fn similarity_of_counts(a: &HashMap<u64, u32>, b: &HashMap<u64, u32>) -> f64 {
    let len = |m: &HashMap<u64, u32>| m.values().map(|&v| f64::from(v)).sum::<f64>();
    let norm = |m: &HashMap<u64, u32>| m.values().map(|&v| f64::from(v) * f64::from(v)).sum::<f64>().sqrt();
    let (la, lb) = (len(a), len(b));
    if la == 0.0 || lb == 0.0 {
        return if la == lb { 1.0 } else { 0.0 };
    }
    let (small, large) = if a.len() <= b.len() { (a, b) } else { (b, a) };
    let dot: f64 = small.iter().filter_map(|(k, &v)| large.get(k).map(|&w| f64::from(v) * f64::from(w))).sum();
    (la / lb).min(lb / la) * dot / (norm(a) * norm(b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn terms_drop_punctuation_and_single_characters() {
        let mut buf = String::new();
        let mut n = 0;
        for_each_term("A cat, the DOG's 2 toys — déjà-vu!", &mut buf, |_| n += 1);
        // cat, the, dog, toys, déjà, vu ("A", "s", "2" are one character).
        assert_eq!(n, 6);
        assert_eq!(term_counts("Cat cat CAT").len(), 1);
    }

    #[test]
    fn similarity_by_hand() {
        assert!((similarity("the cat sat", "the cat sat.") - 1.0).abs() < 1e-12);
        // A doubled copy: cosine 1, δ = 3/6.
        assert!((similarity("the cat sat", "the cat sat the cat sat") - 0.5).abs() < 1e-12);
        // v_a = (the 1, cat 1), v_b = (the 1, dog 1): cos = 1/2, δ = 1.
        assert!((similarity("the cat", "the dog") - 0.5).abs() < 1e-12);
        assert_eq!(similarity("", "the cat"), 0.0);
        assert_eq!(similarity("", "."), 1.0);
    }
}
