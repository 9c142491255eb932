//! The supervised scorer of Pasternack & Roth (2009, §6.2.3): a token-level Naive Bayes
//! classifier over trigram and most-recent-unclosed-tag features whose certainty p = P(in)
//! becomes the score p − 0.5 (plus an optional bias), fed to the maximum subsequence.
//!
//! Log-odds form: each kept feature f of type t carries
//! w_f = log P(f|in) − log P(f|out), with Laplace smoothing per type,
//! P(f|c) = (n_fc + α) / (N_tc + α·V_t). A feature never seen in training (or pruned) adds 0,
//! which is the paper's P(t|in) = P(t|out). p = sigmoid(prior + Σ w_f).
//!
//! This file owns the model (counts → weights, file payload, lookup table) and the streaming
//! scorer; collecting labelled tokens from gold text is [`crate::methods::nb::train`]'s job.

use std::cell::RefCell;
use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use crate::features::{FeatureSet, FeatureStream, FeatureType, KeyedFeatures, TokenFeatures, WeighedFeatures};
use crate::html::Token;
use crate::html::normalize::{HASH_SEED, HashKeyed, Normalizer};
use crate::model_file::{self, ModelFileError, Reader};
use crate::scoring::chooser::Chooser;
use crate::scoring::{PageScorer, Scorer};

/// What a model file says about itself (the JSON header of the container).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NbHeader {
    /// Always `nb`.
    pub kind: String,
    pub features: FeatureSet,
    pub hash_seed: u64,
    /// log(tokens in / tokens out) over the training tokens.
    pub prior: f64,
    /// Added to p − 0.5 (the paper's optional bias; 0 by default).
    pub bias: f64,
    /// Added to the score of start and end tags on top of `bias`: a text-density prior in
    /// the spirit of the paper's simple scorer (§6.2.2), which the token-level Naive Bayes
    /// lacks (0 by default; absent in older files).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub tag_bias: f64,
    /// id/class word weights were clamped to ±this at training (absent: not clamped).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub class_clamp: Option<f64>,
    /// Laplace smoothing α.
    pub alpha: f64,
    /// Features seen fewer times than this were dropped.
    pub min_count: u32,
    /// Weights are stored as i16 × scale.
    pub weight_scale: f64,
    pub training: TrainingSummary,
    /// Present in models adapted by `pipeline bootstrap` (§6.2.4): the payload then also holds
    /// an importance weight per trigram.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bootstrap: Option<BootstrapInfo>,
    /// The span chooser fitted for this model's choices (`pipeline train --chooser`), used
    /// instead of the built-in one, at its margin unless the extractor's `chooser_margin`
    /// says otherwise. Absent in the built-in model's file: its chooser is built into the
    /// binary (`models/chooser.json`) and put here when the model is read ([`super::read`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chooser: Option<Chooser>,
}

/// How a model was adapted to unlabelled pages (`pipeline bootstrap`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BootstrapInfo {
    /// The base model's identity.
    pub base_model: String,
    /// Distance scoring constant c: scores are (p − 0.5 + bias)(m_h·c + 1).
    pub boost: f64,
    /// Confidence window radius w.
    pub window: usize,
    /// Importance distance cutoff d.
    pub cutoff: usize,
    /// Share of each source's pages put into L.
    pub keep: f64,
    pub iterations: usize,
    /// Pages in the unlabelled pool and sources they came from.
    pub pool_pages: usize,
    pub sources: usize,
    /// Trigrams with an importance weight.
    pub importance_entries: u64,
    /// The layouts the model adapted to: a sketch (`site_memory::template`) per template of
    /// the adapted sources' pages. A page of any other layout is scored by the base model
    /// ([`super::guard`]): self-training learns a template's own pages, and on a template it
    /// never saw it can lose the whole article (big9 nymag 2005: 0.953 → 0.294). Empty in
    /// models of earlier versions: every page gets the adapted model.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub templates: Vec<Vec<u64>>,
}

/// How a model was trained (recorded in its header).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TrainingSummary {
    pub datasets: Vec<String>,
    pub split: Option<String>,
    pub pages_used: usize,
    pub pages_skipped: std::collections::BTreeMap<String, usize>,
    pub tokens_in: u64,
    pub tokens_out: u64,
    pub features_seen: u64,
    pub features_kept: u64,
}

/// Feature counts collected from labelled tokens. Merging is addition, so the result does not
/// depend on page order or thread count.
#[derive(Debug, Default, Clone)]
pub struct NbCounts {
    /// key → (count in, count out, feature type)
    pub counts: HashKeyed<(u32, u32, u8)>,
    pub tokens: [u64; 2],
}

impl NbCounts {
    #[inline]
    pub fn add(&mut self, features: &TokenFeatures, label_in: bool) {
        self.tokens[usize::from(!label_in)] += 1;
        for (&k, &t) in features.as_slice().iter().zip(&features.types) {
            let e = self.counts.entry(k).or_insert((0, 0, t));
            if label_in {
                e.0 = e.0.saturating_add(1);
            } else {
                e.1 = e.1.saturating_add(1);
            }
        }
    }

    pub fn merge(mut self, other: NbCounts) -> NbCounts {
        if self.counts.len() < other.counts.len() {
            return other.merge(self);
        }
        self.tokens[0] += other.tokens[0];
        self.tokens[1] += other.tokens[1];
        for (k, (a, b, t)) in other.counts {
            let e = self.counts.entry(k).or_insert((0, 0, t));
            e.0 = e.0.saturating_add(a);
            e.1 = e.1.saturating_add(b);
        }
        self
    }
}

fn is_zero(x: &f64) -> bool {
    *x == 0.0
}

/// Training parameters of the Naive Bayes model.
#[derive(Debug, Clone, Copy)]
pub struct NbParams {
    pub features: FeatureSet,
    pub alpha: f64,
    pub min_count: u32,
    pub bias: f64,
    /// Extra score of tags (see [`NbHeader::tag_bias`]).
    pub tag_bias: f64,
    /// Clamp id/class word log-odds to ±this. Every token inside an element shares its
    /// id/class words, so token counts overstate their evidence by the element's length: one
    /// training site whose article container is called `articleText` out of article text
    /// gives that word a weight that outvotes every trigram on another site (dragnet dev:
    /// whole articles scored out). A clamp keeps them as a nudge.
    pub class_clamp: Option<f64>,
}

impl Default for NbParams {
    fn default() -> Self {
        NbParams {
            features: FeatureSet::default(),
            alpha: 1.0,
            min_count: 2,
            bias: 0.0,
            tag_bias: 0.0,
            class_clamp: None,
        }
    }
}

impl NbHeader {
    /// The recipe this model was trained with, to fit another model the same way.
    pub fn params(&self) -> NbParams {
        NbParams {
            features: self.features,
            alpha: self.alpha,
            min_count: self.min_count,
            bias: self.bias,
            tag_bias: self.tag_bias,
            class_clamp: self.class_clamp,
        }
    }
}

/// A loaded Naive Bayes model.
#[derive(Debug, Clone)]
pub struct NbModel {
    pub header: NbHeader,
    table: WeightTable,
    /// Trigram importance weights m_h quantised to 0..=255 (bootstrapped models only).
    importance: Option<HashKeyed<u8>>,
}

impl NbModel {
    /// Turns counts into log-odds weights (sorted by key, so files are deterministic).
    pub fn from_counts(counts: &NbCounts, params: NbParams, mut training: TrainingSummary) -> NbModel {
        // Per-type totals N_tc and vocabulary sizes V_t, before pruning.
        let mut totals: HashMap<u8, ([u64; 2], u64)> = HashMap::new();
        for &(a, b, t) in counts.counts.values() {
            let e = totals.entry(t).or_default();
            e.0[0] += u64::from(a);
            e.0[1] += u64::from(b);
            e.1 += 1;
        }
        let alpha = params.alpha;
        let mut weights: Vec<(u64, f64)> = counts
            .counts
            .iter()
            .filter(|(_, (a, b, _))| a + b >= params.min_count)
            .map(|(&k, &(a, b, t))| {
                let (n, v) = totals[&t];
                let p_in = (f64::from(a) + alpha) / (n[0] as f64 + alpha * v as f64);
                let p_out = (f64::from(b) + alpha) / (n[1] as f64 + alpha * v as f64);
                let w = p_in.ln() - p_out.ln();
                match params.class_clamp {
                    Some(c) if t == FeatureType::Classes as u8 => (k, w.clamp(-c, c)),
                    _ => (k, w),
                }
            })
            .collect();
        weights.sort_unstable_by_key(|&(k, _)| k);
        let max = weights.iter().map(|w| w.1.abs()).fold(1e-9, f64::max);
        let scale = max / f64::from(i16::MAX);
        training.tokens_in = counts.tokens[0];
        training.tokens_out = counts.tokens[1];
        training.features_seen = counts.counts.len() as u64;
        training.features_kept = weights.len() as u64;
        let prior = ((counts.tokens[0].max(1)) as f64 / (counts.tokens[1].max(1)) as f64).ln();
        let header = NbHeader {
            kind: "nb".to_string(),
            features: params.features,
            hash_seed: HASH_SEED,
            prior,
            bias: params.bias,
            tag_bias: params.tag_bias,
            class_clamp: params.class_clamp,
            alpha,
            min_count: params.min_count,
            weight_scale: scale,
            training,
            bootstrap: None,
            chooser: None,
        };
        let quantised: Vec<(u64, i16)> =
            weights.iter().map(|&(k, w)| (k, (w / scale).round().clamp(-32767.0, 32767.0) as i16)).collect();
        NbModel { table: WeightTable::build(&quantised, scale), header, importance: None }
    }

    /// Adds `weight` × `other`'s per-feature log-odds to this model's (features in either model
    /// are kept). Used to let an adapted model fall back on the supervised one: a feature the
    /// adapted model never saw keeps the supervised evidence instead of counting as unseen.
    pub fn merged_with(mut self, other: &NbModel, weight: f64) -> NbModel {
        let scale_a = self.header.weight_scale;
        let scale_b = other.header.weight_scale;
        let mut all: std::collections::BTreeMap<u64, f64> =
            self.table.sorted_entries().into_iter().map(|(k, q)| (k, f64::from(q) * scale_a)).collect();
        for (k, q) in other.table.sorted_entries() {
            *all.entry(k).or_default() += weight * f64::from(q) * scale_b;
        }
        let max = all.values().map(|w| w.abs()).fold(1e-9, f64::max);
        let scale = max / f64::from(i16::MAX);
        let quantised: Vec<(u64, i16)> =
            all.into_iter().map(|(k, w)| (k, (w / scale).round().clamp(-32767.0, 32767.0) as i16)).collect();
        self.header.weight_scale = scale;
        self.header.training.features_kept = quantised.len() as u64;
        let f = &mut self.header.features;
        let o = other.header.features;
        f.trigram |= o.trigram;
        f.mrut |= o.mrut;
        f.unigram |= o.unigram;
        f.bigram |= o.bigram;
        f.mrut2 |= o.mrut2;
        f.classes |= o.classes;
        self.table = WeightTable::build(&quantised, scale);
        self
    }

    /// Adds trigram importance weights (each in [0, 1]) and the bootstrap parameters.
    pub fn with_importance(mut self, weights: &[(u64, f64)], mut info: BootstrapInfo) -> NbModel {
        let table: HashKeyed<u8> = weights
            .iter()
            .map(|&(k, m)| (k, (m.clamp(0.0, 1.0) * 255.0).round() as u8))
            .filter(|&(k, q)| q > 0 && k != 0)
            .collect();
        info.importance_entries = table.len() as u64;
        self.header.bootstrap = Some(info);
        self.importance = Some(table);
        self
    }

    /// Importance weight m_h of a trigram key (0 when unknown or not bootstrapped).
    #[inline]
    pub fn importance(&self, key: u64) -> f64 {
        match &self.importance {
            Some(t) => t.get(&key).map_or(0.0, |&q| f64::from(q) / 255.0),
            None => 0.0,
        }
    }

    /// Serialises to the model container.
    pub fn to_bytes(&self) -> Vec<u8> {
        let header = serde_json::to_string(&self.header).expect("header serialises");
        let entries = self.table.sorted_entries();
        let mut payload = Vec::with_capacity(8 + entries.len() * 10);
        payload.extend_from_slice(&(entries.len() as u64).to_le_bytes());
        for (k, _) in &entries {
            payload.extend_from_slice(&k.to_le_bytes());
        }
        for (_, q) in &entries {
            payload.extend_from_slice(&q.to_le_bytes());
        }
        if let Some(imp) = &self.importance {
            let mut sorted: Vec<(u64, u8)> = imp.iter().map(|(&k, &q)| (k, q)).collect();
            sorted.sort_unstable();
            payload.extend_from_slice(&(sorted.len() as u64).to_le_bytes());
            for (k, _) in &sorted {
                payload.extend_from_slice(&k.to_le_bytes());
            }
            payload.extend(sorted.iter().map(|&(_, q)| q));
        }
        model_file::encode(&header, &payload)
    }

    /// Reads a model file's bytes.
    pub fn from_bytes(bytes: &[u8]) -> Result<NbModel, ModelFileError> {
        let (header, payload) = model_file::decode(bytes)?;
        let header: NbHeader = serde_json::from_str(header).map_err(|e| ModelFileError::Header(e.to_string()))?;
        if header.kind != "nb" {
            return Err(ModelFileError::Header(format!("kind `{}` is not `nb`", header.kind)));
        }
        if header.hash_seed != HASH_SEED {
            return Err(ModelFileError::Header(format!("hash seed {:#x} is not this build's", header.hash_seed)));
        }
        if !(header.weight_scale.is_finite()
            && header.prior.is_finite()
            && header.bias.is_finite()
            && header.tag_bias.is_finite())
        {
            return Err(ModelFileError::Header("non-finite number".to_string()));
        }
        let mut r = Reader::new(payload);
        let n = r.u64()?;
        // Check the count against the bytes present before allocating anything.
        let fits = match &header.bootstrap {
            None => n.checked_mul(10) == Some(r.remaining() as u64),
            Some(_) => n.checked_mul(10).is_some_and(|b| b + 8 <= r.remaining() as u64),
        };
        if !fits {
            return Err(ModelFileError::Payload(format!("{n} weights do not fit {} bytes", r.remaining())));
        }
        let n = n as usize;
        let keys = r.take(n * 8)?;
        let ws = r.take(n * 2)?;
        let mut entries = Vec::with_capacity(n);
        let mut prev = None;
        for i in 0..n {
            let k = u64::from_le_bytes(keys[i * 8..i * 8 + 8].try_into().expect("8 bytes"));
            if prev.is_some_and(|p| p >= k) || k == 0 {
                return Err(ModelFileError::Payload("keys not strictly increasing".to_string()));
            }
            prev = Some(k);
            entries.push((k, i16::from_le_bytes(ws[i * 2..i * 2 + 2].try_into().expect("2 bytes"))));
        }
        let importance = match &header.bootstrap {
            None => None,
            Some(_) => {
                let m = r.u64()?;
                if m.checked_mul(9) != Some(r.remaining() as u64) {
                    return Err(ModelFileError::Payload(format!(
                        "{m} importance weights do not fit {} bytes",
                        r.remaining()
                    )));
                }
                let m = m as usize;
                let keys = r.take(m * 8)?;
                let qs = r.take(m)?;
                let mut t = HashKeyed::default();
                t.reserve(m);
                for i in 0..m {
                    let k = u64::from_le_bytes(keys[i * 8..i * 8 + 8].try_into().expect("8 bytes"));
                    t.insert(k, qs[i]);
                }
                Some(t)
            }
        };
        Ok(NbModel { table: WeightTable::build(&entries, header.weight_scale), header, importance })
    }

    pub fn len(&self) -> usize {
        self.table.len
    }

    pub fn is_empty(&self) -> bool {
        self.table.len == 0
    }

    /// The summed quantised weight of `keys` (context features: see
    /// [`FeatureStream::push_weighed`]).
    #[inline]
    pub fn weigh(&self, keys: &[u64]) -> i32 {
        keys.iter().map(|&k| i32::from(self.table.get(k))).sum()
    }

    /// Log-odds of one token's features, prior included.
    #[inline]
    pub fn log_odds(&self, f: &TokenFeatures) -> f64 {
        // Summed as integers: exact, and one multiplication per token instead of one per feature.
        let q = self.weigh(f.as_slice());
        self.header.prior + f64::from(q) * self.table.scale
    }

    /// The score p − 0.5 + bias of one token; for a bootstrapped model multiplied by
    /// (m_h·c + 1), m_h the importance of the token's trigram (§6.2.4).
    #[inline]
    pub fn score(&self, f: &TokenFeatures) -> f64 {
        self.score_from_probability(f, sigmoid(self.log_odds(f)))
    }

    /// Scores a batch of tokens, in order, exactly as [`score`](Self::score) would. The first
    /// slot of every key of the batch is loaded before any is used: a token's trigram is
    /// almost never in cache, and one token at a time each lookup waited for its own miss
    /// (the tokenizer's work between two tokens is more than the CPU looks ahead); loaded
    /// together, the misses of the whole batch overlap.
    pub fn score_batch<F: KeyedFeatures>(&self, batch: &[F], memo: &mut SigmoidMemo, out: &mut dyn FnMut(f64)) {
        let mut first = [0u32; BATCH * 8];
        for chunk in batch.chunks(BATCH) {
            for (t, f) in chunk.iter().enumerate() {
                for (j, &k) in f.keys().iter().enumerate() {
                    first[t * 8 + j] = self.table.slots[(k as usize) & self.table.mask];
                }
            }
            for (t, f) in chunk.iter().enumerate() {
                let q: i32 = f.context()
                    + f.keys()
                        .iter()
                        .enumerate()
                        .map(|(j, &k)| i32::from(self.table.get_after(k, first[t * 8 + j])))
                        .sum::<i32>();
                let p = memo.get(q, || sigmoid(self.header.prior + f64::from(q) * self.table.scale));
                out(self.score_from_probability(f, p));
            }
        }
    }

    /// The score from the token's P(in | features).
    #[inline]
    fn score_from_probability<F: KeyedFeatures>(&self, f: &F, p: f64) -> f64 {
        let tag = if f.is_tag() { self.header.tag_bias } else { 0.0 };
        let s = p - 0.5 + self.header.bias + tag;
        match &self.header.bootstrap {
            None => s,
            Some(b) => {
                let tri = FeatureType::Trigram as u8;
                let m = f
                    .keys()
                    .iter()
                    .zip(f.key_types())
                    .find(|(_, t)| **t == tri)
                    .map_or(0.0, |(&k, _)| self.importance(k));
                s * (m * b.boost + 1.0)
            }
        }
    }
}

#[inline]
pub fn sigmoid(x: f64) -> f64 {
    1.0 / (1.0 + (-x).exp())
}

/// P(in | features) by a token's summed quantised weight (direct-mapped): tokens whose
/// trigram the model never saw sum to their context's weight alone, so a page asks for the
/// same few hundred sums over and over, and `exp` cost more than the rest of the scoring.
/// Holds exactly what [`sigmoid`] returns for that sum.
pub struct SigmoidMemo {
    slots: Box<[(i32, f64); 256]>,
}

impl Default for SigmoidMemo {
    fn default() -> Self {
        // i32::MIN: no sum of i16 weights over a handful of features comes near it.
        SigmoidMemo { slots: Box::new([(i32::MIN, 0.0); 256]) }
    }
}

impl SigmoidMemo {
    #[inline]
    fn get(&mut self, q: i32, p: impl FnOnce() -> f64) -> f64 {
        let slot = &mut self.slots[((q as u32).wrapping_mul(0x9E37_79B9) >> 24) as usize];
        if slot.0 != q {
            *slot = (q, p());
        }
        slot.1
    }
}

/// Open-addressing hash table of weights, 4 bytes a slot: a 16-bit fingerprint (the key's top
/// bits, never 0) beside the weight as the model file stores it (i16, times `scale`). At 4 bytes
/// a slot the default model's table (448 785 features, 2^20 slots) is 4 MB and stays in L3; at 8
/// bytes (a 32-bit fingerprint and an f32) a table was twice that, and the lookups of §4's
/// features were cache misses that took most of `nb`'s time (the trigram's lookup still misses
/// L2 on most tokens: [`NbModel::score_batch`] overlaps those misses). The key's low bits pick the slot, so a feature
/// not in the model is taken for one only if it agrees on both the slot's chain and the 16
/// fingerprint bits (about 2 in 10^5 lookups, adding one weight to one token's log-odds); two
/// model features that meet that way share a weight. The exact keys and quantised weights are
/// kept apart for writing the file back, so the model file never depends on the table.
#[derive(Debug, Clone)]
struct WeightTable {
    slots: Vec<u32>,
    entries: Vec<(u64, i16)>,
    scale: f64,
    mask: usize,
    len: usize,
}

#[inline]
fn fingerprint(k: u64) -> u32 {
    ((k >> 48) as u32).max(1)
}

impl WeightTable {
    fn build(entries: &[(u64, i16)], scale: f64) -> WeightTable {
        let cap = (entries.len() * 2).next_power_of_two().max(16);
        let mut t = WeightTable { slots: vec![0; cap], entries: entries.to_vec(), scale, mask: cap - 1, len: 0 };
        for &(k, q) in entries {
            let fp = fingerprint(k);
            let mut i = (k as usize) & t.mask;
            while t.slots[i] != 0 && t.slots[i] >> 16 != fp {
                i = (i + 1) & t.mask;
            }
            if t.slots[i] == 0 {
                t.len += 1;
            }
            t.slots[i] = (fp << 16) | u32::from(q as u16);
        }
        t
    }

    /// The quantised weight of `k` (0 if the model does not hold it); times `scale` it is the
    /// log-likelihood ratio.
    #[inline]
    fn get(&self, k: u64) -> i16 {
        self.get_after(k, self.slots[(k as usize) & self.mask])
    }

    /// As [`get`](Self::get), given the content of `k`'s first slot, already loaded.
    #[inline]
    fn get_after(&self, k: u64, first: u32) -> i16 {
        let fp = fingerprint(k);
        if first >> 16 == fp {
            return first as u16 as i16;
        }
        if first == 0 {
            return 0;
        }
        let mut i = ((k as usize) + 1) & self.mask;
        loop {
            let s = self.slots[i];
            if s >> 16 == fp {
                return s as u16 as i16;
            }
            if s == 0 {
                return 0;
            }
            i = (i + 1) & self.mask;
        }
    }

    fn sorted_entries(&self) -> Vec<(u64, i16)> {
        let mut v = self.entries.clone();
        v.sort_unstable_by_key(|e| e.0);
        v
    }
}

thread_local! {
    /// One normaliser (with its stem memo) per thread, lent to the page being scored.
    static NORMALIZER: RefCell<Option<Normalizer>> = const { RefCell::new(None) };
}

/// The Naive Bayes scorer over a loaded model.
pub struct NbScorer {
    model: NbModel,
    name: String,
}

impl NbScorer {
    pub fn new(model: NbModel, name: impl Into<String>) -> Self {
        NbScorer { model, name: name.into() }
    }

    pub fn model(&self) -> &NbModel {
        &self.model
    }
}

impl Scorer for NbScorer {
    fn name(&self) -> &'static str {
        "nb"
    }

    fn model_id(&self) -> String {
        format!("nb:{}({} features, {})", self.name, self.model.len(), self.model.header.features.describe())
    }

    fn set_bias(&mut self, bias: f64) {
        self.model.header.bias = bias;
    }

    fn set_tag_bias(&mut self, tag_bias: f64) {
        self.model.header.tag_bias = tag_bias;
    }

    fn chooser(&self) -> Option<&Chooser> {
        self.model.header.chooser.as_ref()
    }

    fn page_scorer(&self) -> Box<dyn PageScorer + '_> {
        let norm = NORMALIZER.with(|n| n.borrow_mut().take()).unwrap_or_default();
        Box::new(NbPageScorer {
            model: &self.model,
            stream: FeatureStream::new(self.model.header.features),
            norm: Some(norm),
            pending: Vec::with_capacity(BATCH + 2),
            memo: SigmoidMemo::default(),
        })
    }
}

/// Tokens scored together by [`NbModel::score_batch`]: enough for their cache misses to
/// overlap, few enough that the batch stays in L1.
const BATCH: usize = 32;

struct NbPageScorer<'m> {
    model: &'m NbModel,
    stream: FeatureStream,
    norm: Option<Normalizer>,
    /// Features of tokens whose scores are still owed (scores come out in order, later).
    pending: Vec<WeighedFeatures>,
    memo: SigmoidMemo,
}

impl PageScorer for NbPageScorer<'_> {
    #[inline]
    fn push(&mut self, page: &str, token: &Token, out: &mut dyn FnMut(f64)) {
        let norm = self.norm.as_mut().expect("normaliser present until drop");
        let pending = &mut self.pending;
        let model = self.model;
        self.stream.push_weighed(norm, page, token, &|keys| model.weigh(keys), &mut |f| pending.push(*f));
        if self.pending.len() >= BATCH {
            self.model.score_batch(&self.pending, &mut self.memo, out);
            self.pending.clear();
        }
    }

    fn finish(&mut self, _page: &str, out: &mut dyn FnMut(f64)) {
        let pending = &mut self.pending;
        self.stream.finish_weighed(&mut |f| pending.push(*f));
        self.model.score_batch(&self.pending, &mut self.memo, out);
        self.pending.clear();
    }
}

impl Drop for NbPageScorer<'_> {
    fn drop(&mut self) {
        if let Some(n) = self.norm.take() {
            NORMALIZER.with(|slot| *slot.borrow_mut() = Some(n));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Features with keys spread like real hashed keys.
    fn feats(keys: &[u64]) -> TokenFeatures {
        let types = [FeatureType::Trigram, FeatureType::Mrut];
        let mut f = TokenFeatures::default();
        for (i, &k) in keys.iter().enumerate() {
            f.keys[f.len as usize] = k.wrapping_mul(0x9E37_79B9_7F4A_7C15);
            f.types[f.len as usize] = types[i] as u8;
            f.len += 1;
        }
        f
    }

    #[test]
    fn weights_are_laplace_smoothed_log_odds_and_unseen_features_add_nothing() {
        let mut c = NbCounts::default();
        // Feature 11: 3× in, 1× out. Feature 12: 1× in, 3× out. Vocabulary 2, α = 1.
        for (k, lab) in
            [(11, true), (11, true), (11, true), (11, false), (12, true), (12, false), (12, false), (12, false)]
        {
            c.add(&feats(&[k]), lab);
        }
        let params = NbParams { min_count: 1, ..NbParams::default() };
        let m = NbModel::from_counts(&c, params, TrainingSummary::default());
        // P(11|in) = (3+1)/(4+2), P(11|out) = (1+1)/(4+2) → w = ln 2.
        let w11 = m.log_odds(&feats(&[11])) - m.header.prior;
        assert!((w11 - 2f64.ln()).abs() < 1e-3, "{w11}");
        let w12 = m.log_odds(&feats(&[12])) - m.header.prior;
        assert!((w12 + 2f64.ln()).abs() < 1e-3);
        assert_eq!(m.log_odds(&feats(&[99])), m.header.prior);
        assert_eq!(m.header.prior, 0.0);
        // Score is p - 0.5: sigmoid(ln 2) = 2/3.
        assert!((m.score(&feats(&[11])) - (2.0 / 3.0 - 0.5)).abs() < 1e-3);
    }

    #[test]
    fn batch_scores_equal_one_at_a_time_scores_in_order() {
        let mut c = NbCounts::default();
        for i in 0..3000u64 {
            c.add(&feats(&[i % 700, 9000 + i % 13]), i % 3 == 0);
        }
        let m = NbModel::from_counts(&c, NbParams::default(), TrainingSummary::default());
        // Seen and unseen keys, more tokens than one batch, and a table small enough that
        // keys share probe chains.
        let tokens: Vec<TokenFeatures> =
            (0..(3 * BATCH as u64 + 5)).map(|i| feats(&[i * 7 % 900, 9000 + i % 20])).collect();
        let one: Vec<f64> = tokens.iter().map(|f| m.score(f)).collect();
        // Twice through one memo: the second pass reads its sums from it.
        let mut memo = SigmoidMemo::default();
        for _ in 0..2 {
            let mut batched = Vec::new();
            m.score_batch(&tokens, &mut memo, &mut |s| batched.push(s));
            assert_eq!(one, batched);
        }
        let mut none = Vec::new();
        m.score_batch::<TokenFeatures>(&[], &mut memo, &mut |s| none.push(s));
        assert!(none.is_empty());
    }

    #[test]
    fn page_scores_weigh_context_features_once_per_element_and_equal_per_token_scores() {
        use crate::html::{TokenizerOptions, tokenize};
        let features = FeatureSet::parse("trigram,mrut2,classes,bigram").unwrap();
        let page = |i: usize| {
            format!(
                "<html><body><nav class=\"site-nav main\"><a href=/>Home</a> <a href=/n>News {i}</a></nav>\
                 <div id=wrap><article class=\"post-body story\"><h1>Title {i}</h1><p>The council met on \
                 day {i} and <b>voted</b> for the park.<br>More words here</p><div><span class=x>deep</span> \
                 text</div></article><aside class=related><ul><li><a>Other story</a></li></ul></aside></div>\
                 <footer>Copyright</footer></body></html>"
            )
        };
        let mut c = NbCounts::default();
        let mut norm = Normalizer::default();
        for i in 0..6 {
            let s = tokenize(page(i).as_bytes(), TokenizerOptions::default()).unwrap();
            let mut fs = FeatureStream::new(features);
            let mut feats = Vec::new();
            for t in &s.sink {
                fs.push(&mut norm, &s.page, t, &mut |f| feats.push(*f));
            }
            fs.finish(&mut |f| feats.push(*f));
            let inside = |t: &Token| s.page[..t.start as usize].contains("<article");
            for (f, t) in feats.iter().zip(&s.sink) {
                c.add(f, inside(t) && !s.page[..t.start as usize].contains("</article"));
            }
        }
        let params = NbParams { features, min_count: 1, ..NbParams::default() };
        let m = NbModel::from_counts(&c, params, TrainingSummary::default());
        let scorer = NbScorer::new(m, "test");
        // A page with unseen parts too, nesting deeper than it closes.
        let html = format!("{}<div class=\"post-body new\"><p>unseen words <i>here", page(9));
        let s = tokenize(html.as_bytes(), TokenizerOptions::default()).unwrap();
        let mut want = Vec::new();
        let mut fs = FeatureStream::new(features);
        for t in &s.sink {
            fs.push(&mut norm, &s.page, t, &mut |f| want.push(scorer.model().score(f)));
        }
        fs.finish(&mut |f| want.push(scorer.model().score(f)));
        let mut got = Vec::new();
        let mut ps = scorer.page_scorer();
        for t in &s.sink {
            ps.push(&s.page, t, &mut |x| got.push(x));
        }
        ps.finish(&s.page, &mut |x| got.push(x));
        assert_eq!(got.len(), s.sink.len());
        assert_eq!(got, want);
        assert!(got.iter().any(|&x| x > 0.0) && got.iter().any(|&x| x < 0.0));
    }

    #[test]
    fn file_round_trip_is_byte_identical_and_pruning_applies() {
        let mut c = NbCounts::default();
        for i in 0..500u64 {
            c.add(&feats(&[1000 + i % 50, 5000 + i % 7]), i % 3 == 0);
        }
        c.add(&feats(&[77, 78]), true); // seen once: pruned with min_count 2
        let m = NbModel::from_counts(&c, NbParams::default(), TrainingSummary::default());
        assert_eq!(m.len(), 57);
        let bytes = m.to_bytes();
        let back = NbModel::from_bytes(&bytes).unwrap();
        assert_eq!(back.to_bytes(), bytes);
        assert_eq!(back.header, m.header);
        let f = feats(&[1003, 5003]);
        assert!((back.score(&f) - m.score(&f)).abs() < 1e-6);
        for cut in [0, 10, bytes.len() / 2, bytes.len() - 1] {
            assert!(NbModel::from_bytes(&bytes[..cut]).is_err());
        }
    }

    #[test]
    fn bootstrapped_models_round_trip_and_boost_scores_by_importance() {
        let mut c = NbCounts::default();
        for i in 0..500u64 {
            c.add(&feats(&[1000 + i % 50, 5000 + i % 7]), i % 3 == 0);
        }
        let plain = NbModel::from_counts(&c, NbParams::default(), TrainingSummary::default());
        let info = BootstrapInfo {
            base_model: "default".into(),
            boost: 24.0,
            window: 10,
            cutoff: 64,
            keep: 0.6,
            iterations: 2,
            pool_pages: 10,
            sources: 1,
            importance_entries: 0,
            templates: Vec::new(),
        };
        // feats() gives the first key the trigram type.
        let key = |k: u64| feats(&[k]).keys[0];
        let m = plain.clone().with_importance(&[(key(1003), 1.0), (key(1004), 0.5), (key(1005), 0.0)], info);
        assert_eq!(m.header.bootstrap.as_ref().unwrap().importance_entries, 2);
        let bytes = m.to_bytes();
        let back = NbModel::from_bytes(&bytes).unwrap();
        assert_eq!(back.to_bytes(), bytes);
        let f = feats(&[1003, 5003]);
        // (p − 0.5)(m·c + 1) with m = 1, c = 24.
        assert!((back.score(&f) - plain.score(&f) * 25.0).abs() < 1e-6);
        let g = feats(&[1004, 5003]);
        assert!((back.score(&g) - plain.score(&g) * (0.5 * 24.0 + 1.0)).abs() < 0.05 * plain.score(&g).abs() + 1e-6);
        let h = feats(&[1006, 5003]);
        assert!((back.score(&h) - plain.score(&h)).abs() < 1e-9);
        for cut in [bytes.len() - 1, bytes.len() - 9, bytes.len() / 2] {
            assert!(NbModel::from_bytes(&bytes[..cut]).is_err());
        }
        // Falling back on another model adds its evidence feature by feature.
        let merged = plain.clone().merged_with(&plain, 1.0);
        let p = plain.header.prior;
        assert!(((merged.log_odds(&h) - p) - 2.0 * (plain.log_odds(&h) - p)).abs() < 1e-3);
        let unseen = feats(&[999_999, 888_888]);
        assert!((merged.log_odds(&unseen) - p).abs() < 1e-12);
    }
}
