//! Learning the block thresholds of Ziegler & Skubacz (2007, §3.5.3, Algorithm 1) by particle
//! swarm optimisation, with the mean similarity of §3.5.2 over the training pages as fitness.
//!
//! The swarm is a compact implementation of Algorithm 1 rather than argmin's `ParticleSwarm`:
//! argmin minimises through its `Executor` and state machinery with its own random generator,
//! while we need a maximiser whose runs are bit-identical for a seed on any thread count, a
//! velocity limit, and a per-generation history; that is thirty lines here. Positions live in
//! the unit cube and are mapped linearly to each feature's threshold range ([`RANGES`]).
//!
//! Speed: every training page is tokenized, segmented and reduced to its blocks' feature
//! values and term ids (page-local, dense) once ([`TrainPage`]). A fitness evaluation then
//! only sums the term counts of accepted blocks and compares them with the gold counts, so
//! the 100 × 100 evaluations over all 919 wcxb train pages take seconds.

use std::ops::Range;
use std::sync::atomic::{AtomicUsize, Ordering};

use rayon::prelude::*;

use crate::dataset::ManifestEntry;
use crate::gold::SkipReason;
use crate::gold::gold_plain_text;
use crate::gold::ziegler;
use crate::html::{TokenizerOptions, entities, tokenize};
use crate::methods::pso::blocks::{self as pso_blocks, BlockOptions, N_FEATURES, NO_BLOCK, Segmentation};
use crate::methods::pso::thresholds::{PsoModel, PsoTrainingSummary, Thresholds};

/// Threshold range of each feature: position 0 of a particle maps to the low end, 1 to the
/// high end. Average sentence length in words, number of sentences, then six ratios. Each range
/// reaches 5 % beyond the values a feature can take on the side where its threshold passes
/// every block (below 0 for lower bounds, above 1 for the two upper-bounded ratios), so that
/// "feature off" is a region of the cube the swarm can find, not a single point. A block with
/// more than 1.05 list items per word is thereby always clutter.
pub const RANGES: [(f64, f64); N_FEATURES] =
    [(-2.0, 40.0), (-1.0, 20.0), (-0.05, 1.0), (-0.05, 1.0), (0.0, 1.05), (-0.05, 1.0), (0.0, 1.05), (-0.05, 1.0)];

/// The unit-cube position of the paper's PR strategy: every threshold at its permissive end.
pub fn accept_all_position() -> Vec<f64> {
    pso_blocks::LOWER_BOUND.iter().map(|&lower| if lower { 0.0 } else { 1.0 }).collect()
}

/// Swarm parameters (§4.1), with their defaults.
#[derive(Debug, Clone, Copy)]
pub struct SwarmParams {
    /// Particles (default 100, the paper's n).
    pub population: usize,
    /// Generations (default 100, the paper's stopping point).
    pub generations: usize,
    /// Inertia ω (default 0.9: "usually set close to 1").
    pub inertia: f64,
    /// Cognitive weight τ (default 2.0: "around 2").
    pub cognitive: f64,
    /// Social weight φ (default 2.0).
    pub social: f64,
    /// Largest velocity per coordinate, in unit-cube lengths (default 0.2). Algorithm 1 has
    /// no limit, but with ω near 1 and τ, φ near 2 an unlimited swarm diverges.
    pub max_velocity: f64,
    /// Random seed (default 1).
    pub seed: u64,
}

impl Default for SwarmParams {
    fn default() -> Self {
        SwarmParams {
            population: 100,
            generations: 100,
            inertia: 0.9,
            cognitive: 2.0,
            social: 2.0,
            max_velocity: 0.2,
            seed: 1,
        }
    }
}

/// SplitMix64: tiny, and its stream is fixed forever, so a seed names one run.
struct Rng(u64);

impl Rng {
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }
}

/// Best and mean fitness of one generation.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Generation {
    pub best: f64,
    pub mean: f64,
}

/// The outcome of a swarm run.
#[derive(Debug, Clone, PartialEq)]
pub struct SwarmResult {
    /// Best position ever seen (unit cube) and its fitness.
    pub best: Vec<f64>,
    pub best_fitness: f64,
    pub history: Vec<Generation>,
}

/// Maximises `fitness` over the unit cube `[0, 1]^dim` (Algorithm 1). Random numbers are drawn
/// in one sequential order and fitness values are computed in parallel, so a seed gives the
/// same result on any number of threads. The social term follows the best personal best
/// (Kennedy & Eberhart's global best) rather than the current generation's best.
pub fn maximize<F>(dim: usize, p: &SwarmParams, fitness: F) -> SwarmResult
where
    F: Fn(&[f64]) -> f64 + Sync,
{
    maximize_from(dim, p, &[], fitness)
}

/// [`maximize`] with the first particles starting at `starts` instead of random points.
pub fn maximize_from<F>(dim: usize, p: &SwarmParams, starts: &[Vec<f64>], fitness: F) -> SwarmResult
where
    F: Fn(&[f64]) -> f64 + Sync,
{
    let n = p.population.max(1);
    let mut rng = Rng(p.seed);
    let mut x: Vec<Vec<f64>> = (0..n).map(|_| (0..dim).map(|_| rng.unit()).collect()).collect();
    for (xi, s) in x.iter_mut().zip(starts) {
        xi.clone_from(s);
    }
    let mut v = vec![vec![0.0; dim]; n];
    let eval = |x: &Vec<Vec<f64>>| -> Vec<f64> { x.par_iter().map(|xi| fitness(xi)).collect() };
    let mut fx = eval(&x);
    let mut pbest = x.clone();
    let mut pfit = fx.clone();
    let argmax = |f: &[f64]| (0..f.len()).fold(0, |b, i| if f[i] > f[b] { i } else { b });
    let mut g = argmax(&pfit);
    let mut history = vec![Generation { best: fx[argmax(&fx)], mean: fx.iter().sum::<f64>() / n as f64 }];
    for _ in 0..p.generations {
        for i in 0..n {
            for j in 0..dim {
                let (r1, r2) = (rng.unit(), rng.unit());
                let w = p.inertia * v[i][j]
                    + r1 * p.cognitive * (pbest[i][j] - x[i][j])
                    + r2 * p.social * (pbest[g][j] - x[i][j]);
                v[i][j] = w.clamp(-p.max_velocity, p.max_velocity);
                x[i][j] = (x[i][j] + v[i][j]).clamp(0.0, 1.0);
            }
        }
        fx = eval(&x);
        for i in 0..n {
            if fx[i] > pfit[i] {
                pfit[i] = fx[i];
                pbest[i].clone_from(&x[i]);
            }
        }
        g = argmax(&pfit);
        history.push(Generation { best: fx[argmax(&fx)], mean: fx.iter().sum::<f64>() / n as f64 });
    }
    SwarmResult { best: pbest[g].clone(), best_fitness: pfit[g], history }
}

/// Maps a unit-cube position to thresholds.
pub fn thresholds_of(x: &[f64]) -> Thresholds {
    let mut t = [0.0; N_FEATURES];
    for ((t, &x), &(lo, hi)) in t.iter_mut().zip(x).zip(&RANGES) {
        *t = lo + x * (hi - lo);
    }
    Thresholds(t)
}

/// A training page reduced to what the fitness needs.
pub struct TrainPage {
    features: Vec<[f64; N_FEATURES]>,
    /// Each block's range in `terms`.
    block_terms: Vec<Range<u32>>,
    /// Page-local term ids of every block, block after block.
    terms: Vec<u32>,
    /// Gold count of every page-local term id (dense; ids cover page and gold terms).
    gold: Vec<u32>,
    gold_len: f64,
    gold_norm: f64,
}

/// Tokenizes, segments and reduces one page with its gold text.
pub fn prepare_page(html: &[u8], gold_text: &str, blocks: &BlockOptions) -> Result<TrainPage, SkipReason> {
    let s = tokenize(html, TokenizerOptions::default()).map_err(|_| SkipReason::ParseError)?;
    let mut seg = Segmentation::default();
    pso_blocks::segment(&s.page, &s.sink, blocks, &mut seg);
    let mut ids: std::collections::HashMap<u64, u32> = std::collections::HashMap::new();
    let mut intern = |h: u64| {
        let n = ids.len() as u32;
        *ids.entry(h).or_insert(n)
    };
    let mut buf = String::new();
    let mut decoded = String::new();
    let mut per_block: Vec<Vec<u32>> = vec![Vec::new(); seg.blocks.len()];
    for (t, &b) in s.sink.iter().zip(&seg.block_of) {
        if b == NO_BLOCK {
            continue;
        }
        let raw = t.raw(&s.page);
        let text = entities::decoded(raw, t.has_entity, &mut decoded);
        ziegler::for_each_term(text, &mut buf, |h| per_block[b as usize].push(intern(h)));
    }
    let mut gold_ids = Vec::new();
    ziegler::for_each_term(&gold_plain_text(gold_text), &mut buf, |h| gold_ids.push(intern(h)));
    if gold_ids.is_empty() {
        return Err(SkipReason::ShortGold);
    }
    let mut gold = vec![0u32; ids.len()];
    for &id in &gold_ids {
        gold[id as usize] += 1;
    }
    let mut terms = Vec::new();
    let mut block_terms = Vec::with_capacity(per_block.len());
    for b in per_block {
        let start = terms.len() as u32;
        terms.extend_from_slice(&b);
        block_terms.push(start..terms.len() as u32);
    }
    Ok(TrainPage {
        features: seg.blocks.iter().map(|b| b.features.values()).collect(),
        block_terms,
        terms,
        gold_len: gold_ids.len() as f64,
        gold_norm: gold.iter().map(|&c| f64::from(c) * f64::from(c)).sum::<f64>().sqrt(),
        gold,
    })
}

impl TrainPage {
    /// Similarity (§3.5.2) between the accepted blocks' text and the gold. `counts` is scratch.
    pub fn similarity(&self, t: &Thresholds, counts: &mut Vec<u32>) -> f64 {
        counts.clear();
        counts.resize(self.gold.len(), 0);
        let mut len = 0usize;
        for (f, r) in self.features.iter().zip(&self.block_terms) {
            if t.accepts(f) {
                let terms = &self.terms[r.start as usize..r.end as usize];
                for &id in terms {
                    counts[id as usize] += 1;
                }
                len += terms.len();
            }
        }
        if len == 0 {
            return 0.0;
        }
        let (mut dot, mut norm) = (0.0, 0.0);
        for (&c, &g) in counts.iter().zip(&self.gold) {
            let c = f64::from(c);
            dot += c * f64::from(g);
            norm += c * c;
        }
        let len = len as f64;
        (len / self.gold_len).min(self.gold_len / len) * dot / (norm.sqrt() * self.gold_norm)
    }
}

/// Mean similarity of `t` over `pages`, summed in page order (deterministic).
pub fn mean_similarity(pages: &[TrainPage], t: &Thresholds) -> f64 {
    if pages.is_empty() {
        return 0.0;
    }
    let mut counts = Vec::new();
    pages.iter().map(|p| p.similarity(t, &mut counts)).sum::<f64>() / pages.len() as f64
}

/// Training options.
#[derive(Debug, Clone, Copy, Default)]
pub struct PsoTrainOptions {
    pub swarm: SwarmParams,
    pub blocks: BlockOptions,
    /// Use at most this many pages, every k-th in manifest order (0 = all; default 0).
    pub max_pages: usize,
    /// Worker threads (0 = one per core).
    pub threads: usize,
}

/// What training did besides the model.
#[derive(Debug, Clone)]
pub struct PsoTrainReport {
    pub pages: usize,
    pub used: usize,
    pub skipped: usize,
    /// Fitness of the paper's PR strategy (every block accepted) on the same pages.
    pub accept_all_fitness: f64,
    pub history: Vec<Generation>,
}

/// Learns thresholds from `entries`. `progress` is called with the number of pages prepared.
pub fn train_pso(
    entries: &[ManifestEntry],
    opts: &PsoTrainOptions,
    progress: &(dyn Fn(usize) + Sync),
) -> Result<(PsoModel, PsoTrainReport), rayon::ThreadPoolBuildError> {
    let pool = rayon::ThreadPoolBuilder::new().num_threads(opts.threads).build()?;
    let step = if opts.max_pages == 0 { 1 } else { entries.len().div_ceil(opts.max_pages).max(1) };
    let chosen: Vec<&ManifestEntry> = entries.iter().step_by(step).collect();
    let done = AtomicUsize::new(0);
    let (pages, result, accept_all) = pool.install(|| {
        let prepared: Vec<Option<TrainPage>> = chosen
            .par_iter()
            .map(|e| {
                let r = std::fs::read(&e.path)
                    .ok()
                    .and_then(|html| prepare_page(&html, e.gold.text.as_deref().unwrap_or(""), &opts.blocks).ok());
                progress(done.fetch_add(1, Ordering::Relaxed) + 1);
                r
            })
            .collect();
        let pages: Vec<TrainPage> = prepared.into_iter().flatten().collect();
        // Random thresholds almost always reject every block (similarity 0 everywhere, a flat
        // landscape), so one particle starts at the accept-all corner (the paper's PR
        // strategy): the swarm then always has a best worth following from generation 0.
        let result = maximize_from(N_FEATURES, &opts.swarm, &[accept_all_position()], |x| {
            mean_similarity(&pages, &thresholds_of(x))
        });
        let accept_all = mean_similarity(&pages, &Thresholds::accept_all());
        (pages, result, accept_all)
    });
    let (datasets, split) = crate::dataset::sources_of(chosen.iter().copied());
    let s = &opts.swarm;
    let summary = PsoTrainingSummary {
        datasets,
        split,
        pages_used: pages.len(),
        pages_skipped: chosen.len() - pages.len(),
        population: s.population,
        generations: s.generations,
        inertia: s.inertia,
        cognitive: s.cognitive,
        social: s.social,
        seed: s.seed,
        fitness: result.best_fitness,
    };
    let model = PsoModel::new(thresholds_of(&result.best), opts.blocks, summary);
    let report = PsoTrainReport {
        pages: chosen.len(),
        used: pages.len(),
        skipped: chosen.len() - pages.len(),
        accept_all_fitness: accept_all,
        history: result.history,
    };
    Ok((model, report))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn swarm_finds_the_optimum_of_a_toy_objective() {
        // Maximum 0 at (0.3, 0.7, 0.5).
        let f = |x: &[f64]| -((x[0] - 0.3).powi(2) + (x[1] - 0.7).powi(2) + (x[2] - 0.5).powi(2));
        // The paper's weights (ω 0.9, τ = φ = 2) explore a lot and still land close...
        let r = maximize(3, &SwarmParams::default(), f);
        assert!(r.best_fitness > -1e-4, "fitness {}", r.best_fitness);
        assert!(r.best.iter().zip([0.3, 0.7, 0.5]).all(|(x, o)| (x - o).abs() < 1e-2), "{:?}", r.best);
        assert_eq!(r.history.len(), 101);
        // ...and Clerc's constriction weights converge tightly.
        let clerc = SwarmParams { inertia: 0.7298, cognitive: 1.49618, social: 1.49618, ..SwarmParams::default() };
        let c = maximize(3, &clerc, f);
        assert!(c.best.iter().zip([0.3, 0.7, 0.5]).all(|(x, o)| (x - o).abs() < 1e-4), "{:?}", c.best);
        // Deterministic for a seed, whatever the thread count.
        let one = rayon::ThreadPoolBuilder::new().num_threads(1).build().unwrap();
        assert_eq!(one.install(|| maximize(3, &SwarmParams::default(), f)), r);
        let other = maximize(3, &SwarmParams { seed: 2, ..SwarmParams::default() }, f);
        assert_ne!(other.best, r.best);
    }

    #[test]
    fn swarm_finds_a_step_optimum_of_a_threshold_objective() {
        // Fitness is 1 only inside x0 ∈ [0.6, 0.65], like a threshold between two classes.
        let f = |x: &[f64]| if (0.6..=0.65).contains(&x[0]) { 1.0 } else { -(x[0] - 0.62).abs() };
        let r = maximize(2, &SwarmParams::default(), f);
        assert_eq!(r.best_fitness, 1.0);
    }

    #[test]
    fn page_similarity_matches_the_text_similarity() {
        let html = b"<table><tr><td><a href=/>Home</a> <a href=/w>World</a></td>\
            <td><p>The council voted to expand the park on Tuesday. Work starts in May.</p></td></tr></table>";
        let gold = "The council voted to expand the park on Tuesday. Work starts in May.";
        let p = prepare_page(html, gold, &BlockOptions::default()).unwrap();
        let mut counts = Vec::new();
        let all = p.similarity(&Thresholds::accept_all(), &mut counts);
        let expected = ziegler::similarity(&format!("Home World {gold}"), gold);
        assert!((all - expected).abs() < 1e-12, "{all} vs {expected}");
        // Upper bound 0.5 on the anchor ratio drops the link block: identical text.
        assert!((p.similarity(&thresholds_of(&accept_all_position()), &mut counts) - all).abs() < 1e-12);
        let mut t = Thresholds::accept_all();
        t.0[4] = 0.5;
        assert!((p.similarity(&t, &mut counts) - 1.0).abs() < 1e-12);
        // Nothing accepted: 0.
        t.0[1] = 100.0;
        assert_eq!(p.similarity(&t, &mut counts), 0.0);
    }
}
