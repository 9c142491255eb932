//! Duplicate-detection fingerprints of extracted text and the in-run near-duplicate index.
//!
//! Three fingerprints per record, all over the same normalised word sequence (lower-cased,
//! split on anything that is not a letter or digit):
//! - `exact`: xxh3-64 of the normalised text (exact duplicates after normalisation);
//! - `simhash`: Charikar's 64-bit SimHash over word shingles (Hamming distance ≈ similarity);
//! - `minhash`: a MinHash signature over word shingles, cut into LSH bands as datatrove does
//!   (default 14 bands × 8 rows = 112 32-bit hashes over 5-word shingles). Two texts with Jaccard
//!   similarity J share at least one band key with probability 1 − (1 − J⁸)¹⁴: 0.9997 at
//!   J = 0.9, 0.48 at J = 0.75, 0.0009 at J = 0.3.
//!
//! [`NearDuplicateIndex`] keeps the band keys of every first-seen record and answers, for
//! each new record, the id of the first record it shares a band with.

pub mod global;

use serde::{Deserialize, Serialize};
use xxhash_rust::xxh3::{xxh3_64, xxh3_64_with_seed};

use crate::html::normalize::{HashKeyed, push_lower_words};

/// Shingle and band sizes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct DedupOptions {
    /// Words per shingle.
    pub shingle_words: usize,
    /// LSH bands.
    pub bands: usize,
    /// MinHash values per band.
    pub rows: usize,
    /// Seed of the MinHash permutations (records are comparable only under the same seed).
    pub seed: u64,
}

impl Default for DedupOptions {
    fn default() -> Self {
        DedupOptions { shingle_words: 5, bands: 14, rows: 8, seed: 1 }
    }
}

impl DedupOptions {
    /// Checks the sizes; returns every problem.
    pub fn validate(&self) -> Vec<String> {
        let mut problems = Vec::new();
        if !(1..=32).contains(&self.shingle_words) {
            problems.push(format!("dedup.shingle_words must be 1..=32, not {}", self.shingle_words));
        }
        if !(1..=64).contains(&self.bands) {
            problems.push(format!("dedup.bands must be 1..=64, not {}", self.bands));
        }
        if !(1..=32).contains(&self.rows) {
            problems.push(format!("dedup.rows must be 1..=32, not {}", self.rows));
        }
        problems
    }
}

/// The fingerprints of one text, as written in records (64-bit values as 16 hex digits so
/// that JSON readers without 64-bit integers keep them exact).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Fingerprints {
    #[serde(with = "hex64")]
    pub exact: u64,
    #[serde(with = "hex64")]
    pub simhash: u64,
    /// The MinHash values (32-bit multiply-shift hashes of the shingle hashes).
    pub minhash: Vec<u32>,
    /// One key per band (band index mixed in), as hex.
    #[serde(with = "hex64_vec")]
    pub bands: Vec<u64>,
}

/// Computes fingerprints; holds the permutation parameters and a reusable word buffer.
#[derive(Debug, Clone)]
pub struct Fingerprinter {
    options: DedupOptions,
    perms: Vec<(u64, u64)>,
}

impl Fingerprinter {
    pub fn new(options: DedupOptions) -> Self {
        let mut state = options.seed;
        let mut next = || {
            // splitmix64: a fixed, portable sequence of permutation parameters.
            state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        };
        // Multiply-shift hashing (Dietzfelbinger et al.): h(x) = (a·x + b) >> 32 with a odd.
        // Universal enough for MinHash and several times cheaper than (a·x + b) mod p in u128.
        let perms = (0..options.bands * options.rows).map(|_| (next() | 1, next())).collect();
        Fingerprinter { options, perms }
    }

    pub fn options(&self) -> &DedupOptions {
        &self.options
    }

    /// Fingerprints of `text`.
    pub fn fingerprint(&self, text: &str) -> Fingerprints {
        let norm = normalize(text);
        let exact = xxh3_64(norm.as_bytes());
        let shingles = shingle_hashes(&norm, self.options.shingle_words);
        let simhash = simhash(&shingles);
        let mut minhash = vec![u32::MAX; self.perms.len()];
        for &x in &shingles {
            for (m, &(a, b)) in minhash.iter_mut().zip(&self.perms) {
                let v = (a.wrapping_mul(x).wrapping_add(b) >> 32) as u32;
                *m = (*m).min(v);
            }
        }
        let bands = minhash
            .chunks(self.options.rows)
            .enumerate()
            .map(|(i, band)| {
                let mut bytes = Vec::with_capacity(band.len() * 4);
                for v in band {
                    bytes.extend_from_slice(&v.to_le_bytes());
                }
                xxh3_64_with_seed(&bytes, i as u64)
            })
            .collect();
        Fingerprints { exact, simhash, minhash, bands }
    }
}

/// Lower-cased words joined by single spaces ([`push_lower_words`]).
pub fn normalize(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    push_lower_words(text, &mut out);
    out
}

/// Hashes of the distinct `n`-word shingles of normalised text (a text shorter than `n` words
/// is one shingle; an empty text has none).
pub fn shingle_hashes(norm: &str, n: usize) -> Vec<u64> {
    let starts: Vec<usize> =
        std::iter::once(0).chain(norm.match_indices(' ').map(|(i, _)| i + 1)).filter(|_| !norm.is_empty()).collect();
    let words = starts.len();
    let mut out = Vec::with_capacity(words.saturating_sub(n) + 1);
    if words == 0 {
        return out;
    }
    let count = if words < n { 1 } else { words - n + 1 };
    for i in 0..count {
        let end = if i + n < words { starts[i + n] - 1 } else { norm.len() };
        out.push(xxh3_64(&norm.as_bytes()[starts[i]..end]));
    }
    out.sort_unstable();
    out.dedup();
    out
}

/// Charikar's SimHash: bit b is set when more shingles have b set than not.
pub fn simhash(shingles: &[u64]) -> u64 {
    let mut counts = [0i32; 64];
    for &s in shingles {
        for (b, c) in counts.iter_mut().enumerate() {
            *c += if s >> b & 1 == 1 { 1 } else { -1 };
        }
    }
    counts.iter().enumerate().fold(0u64, |acc, (b, &c)| if c > 0 { acc | 1 << b } else { acc })
}

/// Jaccard estimate from two signatures: the share of equal MinHash values.
pub fn estimated_jaccard(a: &[u32], b: &[u32]) -> f64 {
    if a.is_empty() || a.len() != b.len() {
        return 0.0;
    }
    a.iter().zip(b).filter(|(x, y)| x == y).count() as f64 / a.len() as f64
}

/// The first-seen record for every band key, for marking near duplicates within a run.
/// Memory: one map entry per band of every distinct record (about 14 × 24 bytes) plus its id.
#[derive(Debug, Default)]
pub struct NearDuplicateIndex {
    bands: HashKeyed<u32>,
    exact: HashKeyed<u32>,
    ids: Vec<Box<str>>,
}

impl NearDuplicateIndex {
    pub fn new() -> Self {
        NearDuplicateIndex::default()
    }

    /// Records seen as originals so far.
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// Returns the id of the first record `fp` duplicates (exactly or by a shared band), or
    /// remembers `id` as an original and returns `None`.
    pub fn check_and_insert(&mut self, id: &str, fp: &Fingerprints) -> Option<&str> {
        let hit = self.exact.get(&fp.exact).or_else(|| fp.bands.iter().find_map(|b| self.bands.get(b))).copied();
        if let Some(i) = hit {
            return Some(&self.ids[i as usize]);
        }
        let i = self.ids.len() as u32;
        self.ids.push(id.into());
        self.exact.insert(fp.exact, i);
        for &b in &fp.bands {
            self.bands.entry(b).or_insert(i);
        }
        None
    }
}

mod hex64 {
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(v: &u64, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&format!("{v:016x}"))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
        let s = <std::borrow::Cow<'de, str>>::deserialize(d)?;
        u64::from_str_radix(&s, 16).map_err(serde::de::Error::custom)
    }
}

mod hex64_vec {
    use serde::{Deserialize, Deserializer, Serializer, ser::SerializeSeq};

    pub fn serialize<S: Serializer>(v: &[u64], s: S) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(Some(v.len()))?;
        for x in v {
            seq.serialize_element(&format!("{x:016x}"))?;
        }
        seq.end()
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<u64>, D::Error> {
        let v = Vec::<String>::deserialize(d)?;
        v.iter().map(|s| u64::from_str_radix(s, 16).map_err(serde::de::Error::custom)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    /// A deterministic text of `n` words from a vocabulary of 5000.
    fn words(seed: u64, n: usize) -> Vec<String> {
        let mut s = seed;
        (0..n)
            .map(|_| {
                s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                format!("w{}", (s >> 33) % 5000)
            })
            .collect()
    }

    fn exact_jaccard(a: &str, b: &str, n: usize) -> f64 {
        let sa: HashSet<u64> = shingle_hashes(&normalize(a), n).into_iter().collect();
        let sb: HashSet<u64> = shingle_hashes(&normalize(b), n).into_iter().collect();
        sa.intersection(&sb).count() as f64 / sa.union(&sb).count() as f64
    }

    /// `base` with a share of its words replaced at random positions.
    fn mutate(base: &[String], share: f64, seed: u64) -> String {
        let mut s = seed;
        let repl = words(seed ^ 0xabc, base.len());
        base.iter()
            .zip(repl)
            .map(|(w, r)| {
                s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                if ((s >> 11) as f64 / (1u64 << 53) as f64) < share { r } else { w.clone() }
            })
            .collect::<Vec<_>>()
            .join(" ")
    }

    #[test]
    fn normalisation_and_shingles() {
        assert_eq!(normalize("  Hello, WORLD!  Ça va?\n1,000 "), "hello world ça va 1 000");
        assert_eq!(shingle_hashes("", 5).len(), 0);
        assert_eq!(shingle_hashes("a b", 5).len(), 1);
        assert_eq!(shingle_hashes("a b c d e f g", 5).len(), 3);
        // Repeated shingles count once.
        assert_eq!(shingle_hashes("a a a a a a a a", 5).len(), 1);
        let f = Fingerprinter::new(DedupOptions::default());
        assert_eq!(f.fingerprint("Same text, here.").exact, f.fingerprint("same   TEXT here").exact);
    }

    #[test]
    fn minhash_estimates_jaccard() {
        let f = Fingerprinter::new(DedupOptions::default());
        let mut total_err = 0.0;
        let mut pairs = 0;
        for seed in 0..40u64 {
            let base = words(seed, 400);
            let a = base.join(" ");
            let b = mutate(&base, [0.0, 0.01, 0.03, 0.05, 0.1, 0.2, 0.4, 1.0][seed as usize % 8], seed + 100);
            let exact = exact_jaccard(&a, &b, 5);
            let est = estimated_jaccard(&f.fingerprint(&a).minhash, &f.fingerprint(&b).minhash);
            // 112 hashes: standard error at most 0.047; 4 sigma per pair.
            assert!((est - exact).abs() < 0.19, "seed {seed}: exact {exact:.3} estimated {est:.3}");
            total_err += (est - exact).abs();
            pairs += 1;
        }
        assert!(total_err / pairs as f64 <= 0.05, "mean error {}", total_err / pairs as f64);
    }

    #[test]
    fn simhash_distance_grows_with_difference() {
        let base = words(7, 500);
        let a = base.join(" ");
        let fp = |t: &str| simhash(&shingle_hashes(&normalize(t), 5));
        let near = (fp(&a) ^ fp(&mutate(&base, 0.01, 1))).count_ones();
        let far = (fp(&a) ^ fp(&words(8, 500).join(" "))).count_ones();
        assert!(near < 12, "near {near}");
        assert!(far > 20, "far {far}");
    }

    #[test]
    fn index_marks_near_duplicates_with_the_first_id() {
        let f = Fingerprinter::new(DedupOptions::default());
        let mut index = NearDuplicateIndex::new();
        let base = words(3, 600);
        let original = base.join(" ");
        assert_eq!(index.check_and_insert("a", &f.fingerprint(&original)), None);
        // A copy with 1 % of words changed (J about 0.9) is caught; so is an exact copy.
        assert_eq!(index.check_and_insert("b", &f.fingerprint(&mutate(&base, 0.01, 9))), Some("a"));
        assert_eq!(index.check_and_insert("c", &f.fingerprint(&original.to_uppercase())), Some("a"));
        // Unrelated texts are not.
        let mut false_hits = 0;
        for seed in 10..60 {
            if index.check_and_insert(&format!("u{seed}"), &f.fingerprint(&words(seed, 300).join(" "))).is_some() {
                false_hits += 1;
            }
        }
        assert_eq!(false_hits, 0);
        assert_eq!(index.len(), 51);
    }

    #[test]
    fn fingerprints_round_trip_through_json() {
        let f = Fingerprinter::new(DedupOptions::default());
        let fp = f.fingerprint("one two three four five six seven");
        let json = serde_json::to_string(&fp).unwrap();
        assert!(json.contains("\"exact\":\""));
        assert_eq!(serde_json::from_str::<Fingerprints>(&json).unwrap(), fp);
        assert_eq!(fp.minhash.len(), 112);
        assert_eq!(fp.bands.len(), 14);
    }
}
