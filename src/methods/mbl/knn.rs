//! Memory-based learning as TiMBL does it (the thesis' §3.2.2 and §6.6): IB1, k nearest
//! neighbours under the weighted overlap metric (equations 3.1, 3.2 and 3.6) with feature
//! weights none / information gain / gain ratio / chi-square / shared variance (equations
//! 3.3–3.5, 3.7), and IGTree, its decision-tree compression ([`super::igtree`]). This module owns the
//! instance base, the weights, the neighbour search and the model file (the shared
//! [`crate::scoring::model_file`] container, header kind `mbl`); instances come from
//! [`crate::methods::mbl::units`], token scores are [`crate::methods::mbl::scorer`]'s.
//!
//! Written here: no maintained Rust crate does overlap-metric IB1 over symbolic features with
//! TiMBL's weightings (the kNN crates index numeric vectors under Minkowski metrics).
//!
//! **Instance base.** Identical feature vectors are stored once with their class counts, as
//! TiMBL does. Features are permuted into decreasing weight and the instances sorted
//! lexicographically in that order, so the sorted array *is* TiMBL's instance-base tree:
//! the instances below a tree node at depth `d` are one contiguous range sharing their first
//! `d` values, and a node's children are the runs of equal values in column `d`, found by
//! binary search. The file stores each instance as the length of the prefix it shares with
//! the previous one plus the rest, and class counts as varints.
//!
//! **Search.** Exact k-nearest-distance search by branch and bound over that tree: the child
//! matching the query is visited first (so close neighbours are found early), the other
//! children cost the feature's weight, and a subtree is cut as soon as its accumulated
//! distance exceeds the k-th nearest distance found so far. Weights are fixed-point integers
//! (2^24 for the heaviest feature), so distance ties are exact. The cost per query depends on
//! the model, not on the page, so extraction stays linear in the page.
//!
//! **Vote.** As in TiMBL, `k` counts nearest *distances*, not instances: every stored instance
//! at one of the k smallest distances votes with its class counts. Ties between classes go to
//! the class more frequent in the training data, then to the lower class code (title before
//! heading before body before garbage; pair codes in [`crate::methods::mbl::units::pair`] order).

use serde::{Deserialize, Serialize};

use crate::methods::mbl::units::{Features, N_FEATURES, N_PAIRS};
use crate::model_file::{self, ModelFileError, Reader};

/// Feature weighting (TiMBL's `-w`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum Weighting {
    /// Every feature weighs 1 (plain overlap).
    #[serde(rename = "none")]
    None,
    /// Information gain (equation 3.3).
    #[serde(rename = "ig")]
    InfoGain,
    /// Gain ratio (equation 3.4), TiMBL's default and the thesis' first experiments'.
    #[default]
    #[serde(rename = "gr")]
    GainRatio,
    /// χ² of the feature × class table.
    #[serde(rename = "chi2")]
    ChiSquare,
    /// Shared variance (equation 3.7).
    #[serde(rename = "sv")]
    SharedVariance,
}

impl Weighting {
    pub const ALL: [Weighting; 5] =
        [Weighting::None, Weighting::InfoGain, Weighting::GainRatio, Weighting::ChiSquare, Weighting::SharedVariance];

    pub fn name(self) -> &'static str {
        match self {
            Weighting::None => "none",
            Weighting::InfoGain => "ig",
            Weighting::GainRatio => "gr",
            Weighting::ChiSquare => "chi2",
            Weighting::SharedVariance => "sv",
        }
    }

    pub fn parse(s: &str) -> Option<Weighting> {
        Weighting::ALL.into_iter().find(|w| w.name() == s)
    }
}

/// IB1 or IGTree (TiMBL's `-a 0` / `-a 1`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Algorithm {
    #[default]
    Ib1,
    Igtree,
}

/// Largest k a model may ask for.
pub const MAX_K: usize = 100;
/// Fixed-point value of the heaviest feature's weight.
const WEIGHT_SCALE: f64 = (1u64 << 24) as f64;
/// Ranges this small are scanned instead of split further.
const LEAF: usize = 16;

/// Class counts of a training set, by value of each feature: the statistics behind the weights.
fn value_class_table(instances: &[(Features, [u32; N_PAIRS])], f: usize) -> Vec<[u64; N_PAIRS]> {
    let mut t = vec![[0u64; N_PAIRS]; 256];
    for (x, c) in instances {
        for (k, &n) in c.iter().enumerate() {
            t[x[f] as usize][k] += u64::from(n);
        }
    }
    t
}

fn entropy(counts: impl Iterator<Item = u64> + Clone) -> f64 {
    let n: u64 = counts.clone().sum();
    if n == 0 {
        return 0.0;
    }
    let n = n as f64;
    counts.filter(|&c| c > 0).map(|c| c as f64 / n).map(|p| -p * p.log2()).sum()
}

/// The weight of every feature over `instances` (feature vectors with class counts).
pub fn weights(instances: &[(Features, [u32; N_PAIRS])], w: Weighting) -> [f64; N_FEATURES] {
    let mut out = [1.0; N_FEATURES];
    if w == Weighting::None {
        return out;
    }
    for (f, o) in out.iter_mut().enumerate() {
        *o = feature_weight(&value_class_table(instances, f), w);
    }
    out
}

/// One feature's weight from its value × class count table.
pub fn feature_weight(table: &[[u64; N_PAIRS]], w: Weighting) -> f64 {
    let mut class_tot = [0u64; N_PAIRS];
    for row in table {
        for (k, &n) in row.iter().enumerate() {
            class_tot[k] += n;
        }
    }
    let n: u64 = class_tot.iter().sum();
    if n == 0 {
        return 0.0;
    }
    let nf = n as f64;
    let rows = table.iter().filter(|r| r.iter().any(|&c| c > 0));
    match w {
        Weighting::None => 1.0,
        Weighting::InfoGain | Weighting::GainRatio => {
            let h_c = entropy(class_tot.iter().copied());
            let mut cond = 0.0;
            let mut split = 0.0;
            for r in rows {
                let nv: u64 = r.iter().sum();
                let p = nv as f64 / nf;
                cond += p * entropy(r.iter().copied());
                split -= p * p.log2();
            }
            let ig = (h_c - cond).max(0.0);
            if w == Weighting::InfoGain {
                ig
            } else if split > 0.0 {
                ig / split
            } else {
                0.0
            }
        }
        Weighting::ChiSquare | Weighting::SharedVariance => {
            let mut chi = 0.0;
            let mut values = 0usize;
            for r in rows {
                values += 1;
                let nv: u64 = r.iter().sum();
                for (k, &o) in r.iter().enumerate() {
                    if class_tot[k] == 0 {
                        continue;
                    }
                    let e = nv as f64 * class_tot[k] as f64 / nf;
                    chi += (o as f64 - e).powi(2) / e;
                }
            }
            if w == Weighting::ChiSquare {
                chi
            } else {
                let classes = class_tot.iter().filter(|&&c| c > 0).count();
                let dof = classes.min(values).saturating_sub(1);
                if dof == 0 { 0.0 } else { chi / (nf * dof as f64) }
            }
        }
    }
}

/// Features in decreasing weight (ties: lower index first), and their fixed-point weights in
/// that order.
pub fn order_and_integer_weights(w: &[f64; N_FEATURES]) -> ([u8; N_FEATURES], [u64; N_FEATURES]) {
    let mut order: [u8; N_FEATURES] = std::array::from_fn(|i| i as u8);
    order.sort_by(|&a, &b| w[b as usize].total_cmp(&w[a as usize]).then(a.cmp(&b)));
    let max = w.iter().copied().fold(0.0, f64::max);
    let iw =
        std::array::from_fn(|i| if max > 0.0 { (w[order[i] as usize] / max * WEIGHT_SCALE).round() as u64 } else { 0 });
    (order, iw)
}

/// Training settings.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct MblOptions {
    /// `ib1` (default) or `igtree`.
    pub algorithm: Algorithm,
    /// Feature weighting (default gain ratio, TiMBL's default).
    pub weighting: Weighting,
    /// IB1: nearest distances that vote (default 1, the thesis' best within known sites; 7 for
    /// unseen sites, §6.6.3).
    pub k: usize,
    /// Share of a unit's words aligned to the gold text for it to be body (default ½).
    pub label_threshold: f64,
}

impl Default for MblOptions {
    fn default() -> Self {
        MblOptions { algorithm: Algorithm::Ib1, weighting: Weighting::GainRatio, k: 1, label_threshold: 0.5 }
    }
}

/// What training saw, recorded in the model header.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct MblTrainingSummary {
    pub datasets: Vec<String>,
    pub split: Option<String>,
    pub pages_used: usize,
    pub pages_skipped: std::collections::BTreeMap<String, usize>,
    /// Instances (elements with a unit) before deduplication.
    pub instances: u64,
    /// Units per class (title, heading, body, garbage).
    pub unit_classes: [u64; 4],
    pub seconds: f64,
}

/// The model file header (JSON).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MblHeader {
    /// Always `mbl`.
    pub kind: String,
    pub options: MblOptions,
    /// The weight of each feature, in feature order.
    pub weights: Vec<f64>,
    /// Features in decreasing weight: the column order of the stored instances or tree. Stored
    /// rather than recomputed, so a float read back a bit off cannot reorder the columns.
    pub order: Vec<u8>,
    /// Fixed-point weights in `order` (the distances the search uses).
    pub integer_weights: Vec<u64>,
    /// Training instances per pair class (votes break ties by these).
    pub class_totals: Vec<u64>,
    /// Distinct feature vectors stored (IB1) or tree nodes (IGTree).
    pub stored: usize,
    pub training: MblTrainingSummary,
}

/// The distinct instances, features permuted into decreasing weight, sorted.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct InstanceBase {
    /// `N_FEATURES` bytes per instance.
    pub feats: Vec<u8>,
    /// Class counts of instance `i`: `classes[offsets[i]..offsets[i + 1]]`, (pair code, count).
    pub offsets: Vec<u32>,
    pub classes: Vec<(u8, u32)>,
}

impl InstanceBase {
    pub fn len(&self) -> usize {
        self.offsets.len().saturating_sub(1)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn row(&self, i: usize) -> &[u8] {
        &self.feats[i * N_FEATURES..(i + 1) * N_FEATURES]
    }

    pub(super) fn classes_of(&self, i: usize) -> &[(u8, u32)] {
        &self.classes[self.offsets[i] as usize..self.offsets[i + 1] as usize]
    }

    /// Builds the base from deduplicated instances (feature order), permuting features by `order`.
    pub fn build(instances: &[(Features, [u32; N_PAIRS])], order: &[u8; N_FEATURES]) -> InstanceBase {
        let mut rows: Vec<(Features, usize)> = instances
            .iter()
            .enumerate()
            .map(|(i, (x, _))| (std::array::from_fn(|j| x[order[j] as usize]), i))
            .collect();
        rows.sort_unstable();
        let mut base = InstanceBase {
            feats: Vec::with_capacity(rows.len() * N_FEATURES),
            offsets: Vec::with_capacity(rows.len() + 1),
            classes: Vec::new(),
        };
        base.offsets.push(0);
        for (x, i) in rows {
            base.feats.extend_from_slice(&x);
            for (k, &n) in instances[i].1.iter().enumerate() {
                if n > 0 {
                    base.classes.push((k as u8, n));
                }
            }
            base.offsets.push(base.classes.len() as u32);
        }
        base
    }

    /// First index in `lo..hi` whose column `d` is at least `v` (the range is sorted there).
    fn lower_bound(&self, lo: usize, hi: usize, d: usize, v: u8) -> usize {
        let (mut a, mut b) = (lo, hi);
        while a < b {
            let m = a + (b - a) / 2;
            if self.feats[m * N_FEATURES + d] < v {
                a = m + 1;
            } else {
                b = m;
            }
        }
        a
    }

    pub(super) fn upper_bound(&self, lo: usize, hi: usize, d: usize, v: u8) -> usize {
        if v == u8::MAX { hi } else { self.lower_bound(lo, hi, d, v + 1) }
    }
}

/// The k nearest distances found so far, each with its summed class counts.
#[derive(Debug, Clone, Default)]
pub struct Neighbours {
    k: usize,
    bands: Vec<(u64, [u64; N_PAIRS])>,
}

impl Neighbours {
    fn reset(&mut self, k: usize) {
        self.k = k.max(1);
        self.bands.clear();
    }

    #[inline]
    fn bound(&self) -> u64 {
        if self.bands.len() == self.k { self.bands[self.k - 1].0 } else { u64::MAX }
    }

    fn add(&mut self, d: u64, classes: &[(u8, u32)]) {
        let pos = self.bands.partition_point(|b| b.0 < d);
        if pos == self.bands.len() || self.bands[pos].0 != d {
            if pos >= self.k {
                return;
            }
            if self.bands.len() == self.k {
                self.bands.pop();
            }
            self.bands.insert(pos, (d, [0; N_PAIRS]));
        }
        for &(c, n) in classes {
            self.bands[pos].1[c as usize & (N_PAIRS - 1)] += u64::from(n);
        }
    }

    /// Summed class counts of the k nearest distances.
    pub fn votes(&self) -> [u64; N_PAIRS] {
        let mut v = [0u64; N_PAIRS];
        for (_, c) in &self.bands {
            v.iter_mut().zip(c).for_each(|(a, b)| *a += b);
        }
        v
    }

    /// The nearest distances found (fixed-point).
    pub fn distances(&self) -> impl Iterator<Item = u64> + '_ {
        self.bands.iter().map(|b| b.0)
    }
}

/// The class with most votes; ties to the more frequent class in training, then the lower code.
pub fn majority(votes: &[u64; N_PAIRS], totals: &[u64]) -> u8 {
    let mut best = 0usize;
    for c in 1..N_PAIRS {
        let key = |c: usize| (votes[c], totals.get(c).copied().unwrap_or(0), std::cmp::Reverse(c));
        if key(c) > key(best) {
            best = c;
        }
    }
    best as u8
}

/// A trained memory-based model.
#[derive(Debug, Clone)]
pub struct MblModel {
    pub header: MblHeader,
    /// Feature indices in decreasing weight.
    pub order: [u8; N_FEATURES],
    /// Fixed-point weights in `order`.
    pub iw: [u64; N_FEATURES],
    /// IB1's instances (empty for an IGTree model).
    pub base: InstanceBase,
    /// IGTree's tree (built at load from the instances when an IB1 model is used as IGTree).
    pub tree: Option<super::igtree::IgTree>,
}

impl MblModel {
    /// Builds a model from deduplicated instances (with class counts).
    pub fn from_instances(
        instances: &[(Features, [u32; N_PAIRS])],
        options: MblOptions,
        training: MblTrainingSummary,
    ) -> MblModel {
        let w = weights(instances, options.weighting);
        let (order, iw) = order_and_integer_weights(&w);
        let mut totals = vec![0u64; N_PAIRS];
        for (_, c) in instances {
            totals.iter_mut().zip(c).for_each(|(t, &n)| *t += u64::from(n));
        }
        let base = InstanceBase::build(instances, &order);
        let header = MblHeader {
            kind: "mbl".to_string(),
            options,
            weights: w.to_vec(),
            order: order.to_vec(),
            integer_weights: iw.to_vec(),
            class_totals: totals,
            stored: 0,
            training,
        };
        let mut m = MblModel { header, order, iw, base, tree: None };
        if options.algorithm == Algorithm::Igtree {
            m.tree = Some(super::igtree::IgTree::build(&m.base, &m.header.class_totals));
            m.base = InstanceBase::default();
            m.header.stored = m.tree.as_ref().map_or(0, |t| t.nodes.len());
        } else {
            m.header.stored = m.base.len();
        }
        m
    }

    /// Permutes a feature vector into the model's order.
    pub fn permute(&self, x: &Features) -> Features {
        std::array::from_fn(|j| x[self.order[j] as usize])
    }

    /// IB1: the k nearest distances of `q` (already [`permute`](Self::permute)d) into `out`.
    pub fn nearest(&self, q: &Features, k: usize, out: &mut Neighbours) {
        out.reset(k);
        if !self.base.is_empty() {
            self.search(q, 0, self.base.len(), 0, 0, out);
        }
    }

    fn search(&self, q: &Features, lo: usize, hi: usize, d: usize, acc: u64, out: &mut Neighbours) {
        if acc > out.bound() {
            return;
        }
        if d == N_FEATURES || hi - lo <= LEAF {
            for i in lo..hi {
                let row = self.base.row(i);
                let mut dist = acc;
                let bound = out.bound();
                for j in d..N_FEATURES {
                    if row[j] != q[j] {
                        dist += self.iw[j];
                        if dist > bound {
                            break;
                        }
                    }
                }
                if dist <= bound {
                    out.add(dist, self.base.classes_of(i));
                }
            }
            return;
        }
        let v = q[d];
        let s = self.base.lower_bound(lo, hi, d, v);
        let e = self.base.upper_bound(s, hi, d, v);
        if s < e {
            self.search(q, s, e, d + 1, acc, out);
        }
        let acc2 = acc + self.iw[d];
        for (a, b) in [(lo, s), (e, hi)] {
            let mut i = a;
            while i < b {
                if acc2 > out.bound() {
                    return;
                }
                let val = self.base.feats[i * N_FEATURES + d];
                let j = self.base.upper_bound(i, b, d, val);
                self.search(q, i, j, d + 1, acc2, out);
                i = j;
            }
        }
    }

    /// The pair class of one (unpermuted) feature vector, with `scratch` reused between calls.
    pub fn classify(&self, x: &Features, scratch: &mut Neighbours) -> u8 {
        let q = self.permute(x);
        if let Some(t) = &self.tree {
            return t.classify(&q);
        }
        self.nearest(&q, self.header.options.k, scratch);
        majority(&scratch.votes(), &self.header.class_totals)
    }

    /// Uses the model as IGTree whatever it was trained as (an IB1 base is compressed at load).
    pub fn into_igtree(mut self) -> MblModel {
        if self.tree.is_none() {
            self.tree = Some(super::igtree::IgTree::build(&self.base, &self.header.class_totals));
            self.base = InstanceBase::default();
        }
        self
    }

    /// The model file: header JSON, then the payload — `u8` algorithm, then for IB1 a `u64`
    /// instance count and per instance the shared-prefix length (`u8`), the remaining feature
    /// bytes, the number of classes (`u8`) and (class `u8`, count varint) pairs; for IGTree
    /// the tree ([`super::igtree::IgTree::write`]).
    pub fn to_bytes(&self) -> Vec<u8> {
        let header = serde_json::to_string(&self.header).expect("header serialises");
        let mut p = Vec::new();
        match &self.tree {
            Some(t) if self.header.options.algorithm == Algorithm::Igtree => {
                p.push(1);
                t.write(&mut p);
            }
            _ => {
                p.push(0);
                p.extend_from_slice(&(self.base.len() as u64).to_le_bytes());
                let mut prev: &[u8] = &[];
                for i in 0..self.base.len() {
                    let row = self.base.row(i);
                    let shared = prev.iter().zip(row).take_while(|(a, b)| a == b).count();
                    p.push(shared as u8);
                    p.extend_from_slice(&row[shared..]);
                    let cs = self.base.classes_of(i);
                    p.push(cs.len() as u8);
                    for &(c, n) in cs {
                        p.push(c);
                        write_varint(&mut p, n);
                    }
                    prev = row;
                }
            }
        }
        model_file::encode(&header, &p)
    }

    /// Reads a model file; every inconsistency is an error, never a panic.
    pub fn from_bytes(bytes: &[u8]) -> Result<MblModel, ModelFileError> {
        let (header, payload) = model_file::decode(bytes)?;
        let header: MblHeader = serde_json::from_str(header).map_err(|e| ModelFileError::Header(e.to_string()))?;
        let bad_header = |m: String| Err(ModelFileError::Header(m));
        if header.kind != "mbl" {
            return bad_header(format!("kind `{}` is not `mbl`", header.kind));
        }
        if header.weights.len() != N_FEATURES || header.weights.iter().any(|w| !w.is_finite() || *w < 0.0) {
            return bad_header(format!("expected {N_FEATURES} finite non-negative weights"));
        }
        if header.class_totals.len() != N_PAIRS {
            return bad_header(format!("expected {N_PAIRS} class totals"));
        }
        if !(1..=MAX_K).contains(&header.options.k) {
            return bad_header(format!("k {} outside 1..={MAX_K}", header.options.k));
        }
        let mut seen = [false; N_FEATURES];
        for &f in &header.order {
            if (f as usize) < N_FEATURES {
                seen[f as usize] = true;
            }
        }
        if header.order.len() != N_FEATURES || !seen.iter().all(|&s| s) {
            return bad_header("feature order is not a permutation".to_string());
        }
        // Bounded so a 41-term distance sum cannot overflow.
        if header.integer_weights.len() != N_FEATURES || header.integer_weights.iter().any(|&w| w > 1 << 40) {
            return bad_header(format!("expected {N_FEATURES} integer weights up to 2^40"));
        }
        let order: [u8; N_FEATURES] = std::array::from_fn(|i| header.order[i]);
        let iw: [u64; N_FEATURES] = std::array::from_fn(|i| header.integer_weights[i]);
        let mut r = Reader::new(payload);
        let algo = r.take(1)?[0];
        let mut m = MblModel { header, order, iw, base: InstanceBase::default(), tree: None };
        match (algo, m.header.options.algorithm) {
            (0, Algorithm::Ib1) => m.base = read_base(&mut r)?,
            (1, Algorithm::Igtree) => m.tree = Some(super::igtree::IgTree::read(&mut r)?),
            _ => return Err(ModelFileError::Payload(format!("payload tag {algo} does not match the header"))),
        }
        if r.remaining() != 0 {
            return Err(ModelFileError::Payload(format!("{} bytes after the model", r.remaining())));
        }
        Ok(m)
    }
}

pub(crate) fn write_varint(out: &mut Vec<u8>, mut n: u32) {
    while n >= 0x80 {
        out.push(n as u8 | 0x80);
        n >>= 7;
    }
    out.push(n as u8);
}

pub(crate) fn read_varint(r: &mut Reader<'_>) -> Result<u32, ModelFileError> {
    let mut n: u64 = 0;
    for shift in (0..35).step_by(7) {
        let b = r.take(1)?[0];
        n |= u64::from(b & 0x7F) << shift;
        if b & 0x80 == 0 {
            return u32::try_from(n).map_err(|_| ModelFileError::Payload("varint overflows u32".to_string()));
        }
    }
    Err(ModelFileError::Payload("varint longer than 5 bytes".to_string()))
}

fn read_base(r: &mut Reader<'_>) -> Result<InstanceBase, ModelFileError> {
    let bad = |m: &str| ModelFileError::Payload(m.to_string());
    let n = r.u64()?;
    // Each instance takes at least 4 bytes (prefix, one class, class, count); check before allocating.
    if n > (r.remaining() / 4) as u64 {
        return Err(bad("instance count exceeds the payload"));
    }
    let n = n as usize;
    let mut base = InstanceBase {
        feats: Vec::with_capacity(n * N_FEATURES),
        offsets: Vec::with_capacity(n + 1),
        classes: Vec::with_capacity(n),
    };
    base.offsets.push(0);
    let mut row = [0u8; N_FEATURES];
    for i in 0..n {
        let shared = r.take(1)?[0] as usize;
        if shared > N_FEATURES || (i == 0 && shared != 0) || (i > 0 && shared == N_FEATURES) {
            return Err(bad("bad shared-prefix length"));
        }
        let rest = r.take(N_FEATURES - shared)?;
        if i > 0 && rest[0] <= row[shared] {
            return Err(bad("instances not sorted and distinct"));
        }
        row[shared..].copy_from_slice(rest);
        base.feats.extend_from_slice(&row);
        let nc = r.take(1)?[0] as usize;
        if nc == 0 || nc > N_PAIRS {
            return Err(bad("bad class count"));
        }
        let mut last: Option<u8> = None;
        for _ in 0..nc {
            let c = r.take(1)?[0];
            let count = read_varint(r)?;
            if c as usize >= N_PAIRS || count == 0 || last.is_some_and(|l| c <= l) {
                return Err(bad("bad class entry"));
            }
            last = Some(c);
            base.classes.push((c, count));
        }
        base.offsets.push(base.classes.len() as u32);
    }
    Ok(base)
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A toy instance: features 0 and 1 set (the rest 0), `n` examples of pair class `c`.
    pub(in crate::methods::mbl) fn inst(a: u8, b: u8, c: usize, n: u32) -> (Features, [u32; N_PAIRS]) {
        let mut x = [0u8; N_FEATURES];
        x[0] = a;
        x[1] = b;
        let mut cs = [0u32; N_PAIRS];
        cs[c] = n;
        (x, cs)
    }

    /// A toy table over two features (the rest constant 0): feature 0 predicts the class,
    /// feature 1 is noise.
    fn toy() -> Vec<(Features, [u32; N_PAIRS])> {
        vec![inst(1, 1, 2, 2), inst(1, 2, 2, 1), inst(2, 1, 15, 1), inst(2, 2, 15, 2)]
    }

    #[test]
    fn information_gain_and_gain_ratio_by_hand() {
        // Six instances: feature 0 is 1 for the three class-2, 2 for the three class-15, so it
        // removes all uncertainty: IG = H(C) = 1 bit, split info = 1 bit, GR = 1.
        let t = toy();
        let w_ig = weights(&t, Weighting::InfoGain);
        let w_gr = weights(&t, Weighting::GainRatio);
        assert!((w_ig[0] - 1.0).abs() < 1e-12 && (w_gr[0] - 1.0).abs() < 1e-12);
        // Feature 1: value 1 → classes (2, 1) of (2: 2, 15: 1), value 2 → (2: 1, 15: 2).
        // H(C|v) = H(2/3, 1/3) = 0.918296 for both; IG = 1 − 0.918296 = 0.081704; split = 1.
        assert!((w_ig[1] - 0.081_704_2).abs() < 1e-6, "{}", w_ig[1]);
        assert!((w_gr[1] - 0.081_704_2).abs() < 1e-6);
        // Constant features carry nothing.
        assert_eq!(w_gr[5], 0.0);
        // χ²: feature 0 table [[3, 0], [0, 3]], E = 1.5 everywhere: 4 × 1.5²/1.5 = 6;
        // SV = 6 / (6 × (2 − 1)) = 1. Feature 1: [[2, 1], [1, 2]]: 4 × 0.25/1.5 = 2/3.
        let chi = weights(&t, Weighting::ChiSquare);
        assert!((chi[0] - 6.0).abs() < 1e-12 && (chi[1] - 2.0 / 3.0).abs() < 1e-12);
        let sv = weights(&t, Weighting::SharedVariance);
        assert!((sv[0] - 1.0).abs() < 1e-12 && (sv[1] - 1.0 / 9.0).abs() < 1e-12);
        assert_eq!(weights(&t, Weighting::None), [1.0; N_FEATURES]);
    }

    #[test]
    fn gain_ratio_divides_by_split_info() {
        // One feature with four values, each a different instance; classes 0,0,1,1.
        // IG = 1 bit (every value is pure), split info = 2 bits: GR = 0.5.
        let mut t = vec![[0u64; N_PAIRS]; 256];
        t[0][0] = 1;
        t[1][0] = 1;
        t[2][1] = 1;
        t[3][1] = 1;
        assert!((feature_weight(&t, Weighting::InfoGain) - 1.0).abs() < 1e-12);
        assert!((feature_weight(&t, Weighting::GainRatio) - 0.5).abs() < 1e-12);
    }

    fn vec_of(a: u8, b: u8) -> Features {
        let mut x = [0u8; N_FEATURES];
        x[0] = a;
        x[1] = b;
        x
    }

    #[test]
    fn knn_vote_with_weights_and_k() {
        let opts = |k, weighting| MblOptions { k, weighting, ..MblOptions::default() };
        let m = MblModel::from_instances(&toy(), opts(1, Weighting::GainRatio), MblTrainingSummary::default());
        let mut s = Neighbours::default();
        // Exact match wins at k = 1.
        assert_eq!(m.classify(&vec_of(2, 1), &mut s), 15);
        // (1, 3): feature 1 unseen; distance w1 to both (1, ·) instances (class 2, 3 votes),
        // w0 + w1 to the (2, ·) ones. k = 1: class 2.
        assert_eq!(m.classify(&vec_of(1, 3), &mut s), 2);
        // (3, 1): distance w0 to (2, 1) [15 ×1] … and w0 to (1, 1) [2 ×2]; both tie at the
        // nearest distance: votes 2 → 2, 15 → 1: class 2.
        assert_eq!(m.classify(&vec_of(3, 1), &mut s), 2);
        let q = m.permute(&vec_of(3, 1));
        m.nearest(&q, 1, &mut s);
        assert_eq!(s.votes()[2], 2);
        assert_eq!(s.votes()[15], 1);
        // (3, 2) at k = 1: (1, 2) [2 ×1] and (2, 2) [15 ×2] at distance w0: class 15.
        assert_eq!(m.classify(&vec_of(3, 2), &mut s), 15);
        // k = 2 adds distance w0 + w1: (1, 1) [2 ×2] and (2, 1) [15 ×1]: 3 against 3, a tie
        // broken by the training totals (2: 3, 15: 3) then the lower code: class 2.
        let m2 = MblModel::from_instances(&toy(), opts(2, Weighting::GainRatio), MblTrainingSummary::default());
        m2.nearest(&m2.permute(&vec_of(3, 2)), 2, &mut s);
        assert_eq!((s.votes()[2], s.votes()[15]), (3, 3));
        assert_eq!(m2.classify(&vec_of(3, 2), &mut s), 2);
        // Without weights (1, 3) is at distance 1 from (1, 1), (1, 2) and … (2, 3)? no such
        // instance: still class 2.
        let m0 = MblModel::from_instances(&toy(), opts(1, Weighting::None), MblTrainingSummary::default());
        assert_eq!(m0.classify(&vec_of(1, 3), &mut s), 2);
    }

    #[test]
    fn majority_ties() {
        let mut v = [0u64; N_PAIRS];
        v[3] = 2;
        v[7] = 2;
        let mut totals = vec![0u64; N_PAIRS];
        assert_eq!(majority(&v, &totals), 3);
        totals[7] = 10;
        assert_eq!(majority(&v, &totals), 7);
    }

    /// Brute force over every instance, for comparison with the tree search.
    fn brute(m: &MblModel, q: &Features, k: usize) -> Vec<u64> {
        let mut d: Vec<u64> = (0..m.base.len())
            .map(|i| m.base.row(i).iter().zip(q).zip(&m.iw).filter(|((a, b), _)| a != b).map(|(_, w)| w).sum())
            .collect();
        d.sort_unstable();
        d.dedup();
        d.truncate(k);
        d
    }

    proptest! {
        #[test]
        fn branch_and_bound_equals_brute_force(
            rows in prop::collection::vec((prop::collection::vec(0u8..4, 6), 0usize..16), 1..200),
            query in prop::collection::vec(0u8..5, 6),
            k in 1usize..5,
        ) {
            let mut map = std::collections::BTreeMap::new();
            for (v, c) in rows {
                let mut x = [0u8; N_FEATURES];
                x[..6].copy_from_slice(&v);
                map.entry(x).or_insert([0u32; N_PAIRS])[c] += 1;
            }
            let inst: Vec<_> = map.into_iter().collect();
            let m = MblModel::from_instances(&inst, MblOptions { k, ..MblOptions::default() }, MblTrainingSummary::default());
            let mut x = [0u8; N_FEATURES];
            x[..6].copy_from_slice(&query);
            let q = m.permute(&x);
            let mut s = Neighbours::default();
            m.nearest(&q, k, &mut s);
            prop_assert_eq!(s.distances().collect::<Vec<_>>(), brute(&m, &q, k));
            // Round trip through the file.
            let back = MblModel::from_bytes(&m.to_bytes()).unwrap();
            prop_assert_eq!(&back.base, &m.base);
            prop_assert_eq!(back.classify(&x, &mut s), m.classify(&x, &mut s));
        }

        #[test]
        fn corrupt_or_truncated_files_are_errors(cut in 0usize..400, pos in 0usize..400, flip in 1u8..=255) {
            let m = MblModel::from_instances(&toy(), MblOptions::default(), MblTrainingSummary::default());
            let f = m.to_bytes();
            let _ = MblModel::from_bytes(&f[..cut.min(f.len())]);
            let mut g = f.clone();
            let p = pos % g.len();
            g[p] ^= flip;
            prop_assert!(MblModel::from_bytes(&g).is_err());
            if cut < f.len() {
                prop_assert!(MblModel::from_bytes(&f[..cut]).is_err());
            }
        }

        #[test]
        fn fuzzed_payloads_in_a_valid_container_never_panic(payload in prop::collection::vec(any::<u8>(), 0..300), igtree in any::<bool>()) {
            let m = MblModel::from_instances(&toy(), MblOptions::default(), MblTrainingSummary::default());
            let mut h = m.header.clone();
            if igtree {
                h.options.algorithm = Algorithm::Igtree;
            }
            let bytes = model_file::encode(&serde_json::to_string(&h).unwrap(), &payload);
            if let Ok(m) = MblModel::from_bytes(&bytes) {
                let mut s = Neighbours::default();
                let _ = m.classify(&[0u8; N_FEATURES], &mut s);
            }
        }
    }
}
