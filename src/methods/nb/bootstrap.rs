//! Semi-supervised adaptation to unlabelled pages: the bootstrap of Pasternack & Roth §6.2.4.
//!
//! 1. Predict the article span of every unlabelled page with the supervised model.
//! 2. Iterate: score each prediction's confidence v (windowed, below); per source keep the
//!    `keep` most confident pages as L; compute an importance weight m_h for every trigram h
//!    from where its tokens sit relative to the predicted edges in L; train a new Naive Bayes
//!    over L with trigram features; score tokens (p − 0.5)(m_h·c + 1); predict again.
//!
//! Scale: each page is tokenised and hashed once into an on-disk cache (feature keys per
//! token, zstd); every iteration streams the cache, so memory is bounded by the model and a
//! few numbers per page, not by the pool.

use std::collections::{BTreeMap, HashMap};
use std::fs::File;
use std::io::{self, BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

use crate::features::{FeatureSet, FeatureStream, FeatureType, TokenFeatures};
use crate::html::normalize::{HashKeyed, Normalizer};
use crate::html::{TokenizerOptions, tokenize};
use crate::methods::nb::guard::SAME_TEMPLATE;
use crate::methods::nb::model::{BootstrapInfo, NbCounts, NbModel, NbParams, TrainingSummary, sigmoid};
use crate::scoring::max_subsequence::MaxSubsequence;
use crate::site_memory::host_key;
use crate::site_memory::template::{page_sketch, sketch_similarity};

/// The paper's parameters (§7.5): w = 10, d = 64, c = 24, 60 % of each source in L.
#[derive(Debug, Clone)]
pub struct BootstrapOptions {
    pub iterations: usize,
    pub keep: f64,
    pub window: usize,
    pub cutoff: usize,
    pub boost: f64,
    /// Sources with fewer pages are left out of the pool (they cannot be adapted).
    pub min_pages: usize,
    /// Features of the adapted model (the paper: trigrams only; we default to the built-in
    /// model's trigram + MRUT + id/class words, see `pipeline bootstrap --help`).
    pub features: FeatureSet,
    /// Bias added to p − 0.5 by the adapted model.
    pub bias: f64,
    pub min_count: u32,
    /// Weight of the supervised model's log-odds added to the adapted model's (0: the adapted
    /// model stands alone, as in the paper).
    pub fallback: f64,
    /// Hold pages of each source out of L and keep the adapted model only if, on them, it
    /// passes the label-free check ([`SourceCheck`]); false adapts as the paper does.
    pub check: bool,
    /// Record the adapted sources' layouts in the adapted model, so pages of other layouts are
    /// scored by the base model ([`super::guard`]); false scores every page with the adapted
    /// model, as in the paper.
    pub guard: bool,
}

impl Default for BootstrapOptions {
    fn default() -> Self {
        BootstrapOptions {
            iterations: 10,
            keep: 0.6,
            window: 10,
            cutoff: 64,
            boost: 24.0,
            min_pages: 10,
            features: FeatureSet::parse("trigram,mrut2,classes").expect("valid"),
            bias: 0.0,
            min_count: 2,
            fallback: 0.0,
            check: true,
            guard: true,
        }
    }
}

/// Importance of one token for trigram weights (§6.2.4): 1 next to the border between article
/// and non-article text, falling linearly to 0 at `d` tokens away.
///
/// The paper prints m_h = Σ_t (d − Max(d, Min(|i − (j − ½)|/d, |i − (k + ½)|/d) − ½))/d, which
/// as printed is never positive. We read it as intended by its description ("importance
/// weights vary from 1 (a trigram always appears immediately adjacent to the border) to 0
/// (always d or more tokens away)"): distance δ = min(|i − (j − ½)|, |i − (k + ½)|) − ½ tokens
/// from the border, clamped to [0, d], weight (d − δ)/d; and m_h is the mean of the weights of
/// the trigram's tokens (a sum would not stay in [0, 1]).
pub fn edge_weight(i: usize, j: usize, k: usize, d: usize) -> f64 {
    let i = i as f64;
    let dist = ((i - (j as f64 - 0.5)).abs()).min((i - (k as f64 + 0.5)).abs()) - 0.5;
    let d = d as f64;
    (d - dist.clamp(0.0, d)) / d
}

/// Confidence v of a prediction (§6.2.4, windowed form): the geometric mean of P(out) of the
/// w tokens before the span, P(in) of the first and last w tokens of the span, and P(out) of
/// the w tokens after it. Windows are cut at the page and span ends. (The paper's n-th root
/// over all n tokens of the page would make v depend on page length; the mean over the
/// window's terms is what "geometric mean" needs.)
pub fn confidence(p: &[f64], span: Option<(usize, usize)>, w: usize) -> f64 {
    let Some((j, k)) = span else { return 0.0 };
    let n = p.len();
    let clamp = |x: f64| x.clamp(1e-6, 1.0 - 1e-6);
    let mut sum = 0.0;
    let mut terms = 0usize;
    let mut add = |x: f64| {
        sum += clamp(x).ln();
        terms += 1;
    };
    for &pi in &p[j.saturating_sub(w)..j] {
        add(1.0 - pi);
    }
    for &pi in &p[j..(j + w).min(k + 1)] {
        add(pi);
    }
    for &pi in &p[(k + 1).saturating_sub(w).max(j)..=k] {
        add(pi);
    }
    for &pi in &p[(k + 1).min(n)..(k + 1 + w).min(n)] {
        add(1.0 - pi);
    }
    if terms == 0 { 0.0 } else { (sum / terms as f64).exp() }
}

/// One unlabelled page for the pool.
pub struct PoolPage {
    /// Its source (host, site, …).
    pub group: String,
    pub html: Vec<u8>,
}

/// Why a bootstrap could not run.
#[derive(Debug, thiserror::Error)]
pub enum BootstrapError {
    #[error("{}: {source}", path.display())]
    Cache { path: PathBuf, source: io::Error },
    #[error("{0}")]
    Pool(String),
}

/// What one iteration did.
#[derive(Debug, Clone, serde::Serialize)]
pub struct IterationLog {
    pub iteration: usize,
    pub pages: usize,
    pub in_l: usize,
    pub mean_confidence: f64,
    /// Pages whose predicted span changed since the previous iteration.
    pub changed: usize,
    pub pages_per_s: f64,
    pub features: usize,
}

/// The tokenised, hashed pool on disk.
pub struct PoolCache {
    path: PathBuf,
    /// Source index per page.
    pub groups: Vec<u32>,
    pub group_names: Vec<String>,
    pub skipped: usize,
    /// The layouts of each source's pages: (source, layout sketch) of each template (leader
    /// clustering as site memory's, at most [`TEMPLATES_PER_SOURCE`] a source and
    /// [`TEMPLATES_TOTAL`] in all). The adapted model records those of the adapted sources.
    pub templates: Vec<(u32, Vec<u64>)>,
}

/// Layouts recorded per source, at most (site memory's `MAX_TEMPLATES`).
pub const TEMPLATES_PER_SOURCE: usize = 8;
/// Layouts recorded in all, at most (about 1.3 KB of JSON each in the model's header).
pub const TEMPLATES_TOTAL: usize = 4096;

/// Tokenises each page once with `features` and writes the feature keys to `path` (zstd).
/// Sources with fewer than `min_pages` pages are left out. Returns the cache.
pub fn build_cache(
    pages: impl Iterator<Item = PoolPage>,
    features: FeatureSet,
    min_pages: usize,
    path: &Path,
) -> Result<PoolCache, BootstrapError> {
    let err = |source| BootstrapError::Cache { path: path.to_path_buf(), source };
    // Pages are written as they come; a second, tiny table says which sources qualify.
    let file = File::create(path).map_err(err)?;
    let mut z = zstd::Encoder::new(BufWriter::new(file), 3).map_err(err)?;
    let mut names: Vec<String> = Vec::new();
    let mut index: HashMap<String, u32> = HashMap::new();
    let mut groups = Vec::new();
    let mut skipped = 0;
    let mut norm = Normalizer::default();
    let mut buf: Vec<u8> = Vec::new();
    let mut templates: Vec<(u32, Vec<u64>)> = Vec::new();
    for p in pages {
        let Ok(s) = tokenize(&p.html, TokenizerOptions::default()) else {
            skipped += 1;
            continue;
        };
        let g = *index.entry(p.group.clone()).or_insert_with(|| {
            names.push(p.group.clone());
            names.len() as u32 - 1
        });
        let sketch = page_sketch(&s.page, &s.sink);
        let mine = templates.iter().filter(|(o, _)| *o == g);
        if templates.len() < TEMPLATES_TOTAL
            && mine.clone().count() < TEMPLATES_PER_SOURCE
            && !mine.clone().any(|(_, t)| sketch_similarity(t, &sketch) >= SAME_TEMPLATE)
        {
            templates.push((g, sketch));
        }
        buf.clear();
        let mut n = 0u32;
        let mut fs = FeatureStream::new(features);
        let mut put = |f: &TokenFeatures| {
            // len ≤ 8: the high bit carries the tag flag.
            buf.push(f.len | if f.tag { 0x80 } else { 0 });
            for i in 0..f.len as usize {
                buf.push(f.types[i]);
                buf.extend_from_slice(&f.keys[i].to_le_bytes());
            }
            n += 1;
        };
        for t in &s.sink {
            fs.push(&mut norm, &s.page, t, &mut put);
        }
        fs.finish(&mut put);
        z.write_all(&g.to_le_bytes()).map_err(err)?;
        z.write_all(&n.to_le_bytes()).map_err(err)?;
        z.write_all(&(buf.len() as u32).to_le_bytes()).map_err(err)?;
        z.write_all(&buf).map_err(err)?;
        groups.push(g);
    }
    z.finish().map_err(err)?.flush().map_err(err)?;
    let mut counts = vec![0usize; names.len()];
    for &g in &groups {
        counts[g as usize] += 1;
    }
    if !counts.iter().any(|&c| c >= min_pages) {
        return Err(BootstrapError::Pool(format!(
            "no source has at least {min_pages} pages (largest: {}); a source needs --min-pages pages to be adapted",
            counts.iter().max().copied().unwrap_or(0)
        )));
    }
    Ok(PoolCache { path: path.to_path_buf(), groups, group_names: names, skipped, templates })
}

impl PoolCache {
    /// Calls `f(page index, tokens)` for every page, in order.
    fn for_each(&self, mut f: impl FnMut(usize, &[TokenFeatures])) -> Result<(), BootstrapError> {
        let err = |source| BootstrapError::Cache { path: self.path.clone(), source };
        let mut r = BufReader::new(zstd::Decoder::new(File::open(&self.path).map_err(err)?).map_err(err)?);
        let mut tokens: Vec<TokenFeatures> = Vec::new();
        let mut buf = Vec::new();
        for i in 0..self.groups.len() {
            let mut head = [0u8; 12];
            r.read_exact(&mut head).map_err(err)?;
            let n = u32::from_le_bytes(head[4..8].try_into().expect("4")) as usize;
            let len = u32::from_le_bytes(head[8..12].try_into().expect("4")) as usize;
            buf.resize(len, 0);
            r.read_exact(&mut buf).map_err(err)?;
            tokens.clear();
            let mut at = 0;
            for _ in 0..n {
                let b = buf[at];
                let mut t = TokenFeatures { len: b & 0x7F, tag: b & 0x80 != 0, ..TokenFeatures::default() };
                at += 1;
                for j in 0..t.len as usize {
                    t.types[j] = buf[at];
                    t.keys[j] = u64::from_le_bytes(buf[at + 1..at + 9].try_into().expect("8"));
                    at += 9;
                }
                tokens.push(t);
            }
            f(i, &tokens);
        }
        Ok(())
    }

    /// Does this page's source take part (enough pages)?
    fn eligible(&self, min_pages: usize) -> Vec<bool> {
        let mut counts = vec![0usize; self.group_names.len()];
        for &g in &self.groups {
            counts[g as usize] += 1;
        }
        counts.iter().map(|&c| c >= min_pages).collect()
    }
}

/// Predicted span and token probabilities of one page under `model`.
fn predict(model: &NbModel, tokens: &[TokenFeatures], probs: &mut Vec<f64>) -> Option<(usize, usize)> {
    probs.clear();
    let mut mss = MaxSubsequence::default();
    for t in tokens {
        probs.push(sigmoid(model.log_odds(t)));
        mss.push(model.score(t));
    }
    mss.best().map(|s| (s.start, s.end))
}

/// One page in [`CHECK_EVERY`] of each source, at most [`CHECK_PAGES`] a source, is held out
/// of L for the check.
pub const CHECK_EVERY: usize = 5;
/// Held-out pages of one source, at most.
pub const CHECK_PAGES: usize = 20;
/// Held-out pages of the whole pool, at most: the check keeps their trigrams in memory. Sources
/// past it have none, and show no gain.
pub const CHECK_PAGES_TOTAL: usize = 4000;
/// A word whose trigram is on at least this share of its source's pages (and on two) is the
/// site's, not an article's: site memory's default share ([`crate::site_memory`]).
pub const REPEATED_SHARE: f64 = 0.3;
/// The adapted spans must keep at least this share of the supervised spans' unrepeated words.
pub const CHECK_KEEP: f64 = 0.95;

/// A stretch where the two models' spans differ is the site's (a comment thread, a rail, a
/// share bar) when at least this share of its words repeat across the source's pages; an
/// article's text has almost none (its byline and dateline at most).
pub const SITE_DENSITY: f64 = 0.1;

/// The label-free check of one source, on its held-out pages: what the adapted model's spans
/// change against the supervised model's. No gold is needed because of what a crawl shows:
/// what repeats across a site's pages is the site, not the article (navigation, teaser rails,
/// comment actions, newsletter boxes), and an article's words are its own. Each stretch of
/// words one span holds and the other does not is the site's if [`SITE_DENSITY`] of its words
/// repeat, else article text. Self-training helps a source when it drops the site's stretches
/// or finds article ones; it harms it when it loses article text the supervised model found
/// (on big9 it lost whole templates' articles: arstechnica 2005 0.985 → 0.208).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct SourceCheck {
    pub source: String,
    /// Held-out pages (never in L).
    pub pages: usize,
    /// Unrepeated words in the supervised spans.
    pub unique: usize,
    /// Words of article stretches the adapted spans lose.
    pub lost: usize,
    /// Words of site stretches the adapted spans drop.
    pub dropped_site: usize,
    /// Words of article stretches the adapted spans find.
    pub found: usize,
    /// Words of site stretches the adapted spans add.
    pub added_site: usize,
}

impl SourceCheck {
    /// Share of the supervised spans' unrepeated words the adapted spans do not lose.
    pub fn kept(&self) -> f64 {
        if self.unique == 0 { 1.0 } else { 1.0 - self.lost as f64 / self.unique as f64 }
    }

    /// Does the adapted model show a gain on this source without losing its articles?
    pub fn passed(&self) -> bool {
        self.pages > 0 && self.kept() >= CHECK_KEEP && self.dropped_site + self.found > self.added_site + self.lost
    }
}

impl std::fmt::Display for SourceCheck {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}: {} held-out page(s); the adapted spans drop {} words of the site and add {}, \
             find {} words of article text and lose {} ({:.1} % of the supervised spans' unrepeated words \
             kept): {}",
            self.source,
            self.pages,
            self.dropped_site,
            self.added_site,
            self.found,
            self.lost,
            100.0 * self.kept(),
            if self.passed() { "gain shown" } else { "no gain shown" }
        )
    }
}

/// One stretch where the spans differ: its repeated and unrepeated words.
#[derive(Default)]
struct Stretch {
    repeated: usize,
    unique: usize,
}

impl Stretch {
    fn is_site(&self) -> bool {
        self.repeated as f64 >= SITE_DENSITY * (self.repeated + self.unique) as f64
    }
}

/// Which pages are held out of L for the check: one in [`CHECK_EVERY`] of each eligible
/// source, at most [`CHECK_PAGES`] a source and [`CHECK_PAGES_TOTAL`] in all.
fn held_out_pages(cache: &PoolCache, eligible: &[bool]) -> Vec<bool> {
    let mut seen = vec![0usize; cache.group_names.len()];
    let mut held = vec![0usize; cache.group_names.len()];
    let mut total = 0;
    cache
        .groups
        .iter()
        .map(|&g| {
            let g = g as usize;
            seen[g] += 1;
            let out = eligible[g]
                && seen[g].is_multiple_of(CHECK_EVERY)
                && held[g] < CHECK_PAGES
                && total < CHECK_PAGES_TOTAL;
            held[g] += usize::from(out);
            total += usize::from(out);
            out
        })
        .collect()
}

/// A word token's trigram key (None for tags, or when the features hold no trigram).
fn word_trigram(t: &TokenFeatures) -> Option<u64> {
    let tri = FeatureType::Trigram as u8;
    let slot = (0..t.len as usize).find(|&s| t.types[s] == tri).filter(|_| !t.tag)?;
    Some(t.keys[slot])
}

/// The distinct trigram keys of a page's word tokens, sorted.
fn word_trigrams(tokens: &[TokenFeatures], out: &mut Vec<u64>) {
    out.clear();
    out.extend(tokens.iter().filter_map(word_trigram));
    out.sort_unstable();
    out.dedup();
}

/// A (source, trigram) key for one map over every source.
fn source_key(group: u32, trigram: u64) -> u64 {
    trigram ^ u64::from(group).wrapping_add(1).wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

/// The label-free check ([`SourceCheck`]) of every eligible source on its held-out pages:
/// three passes over the cache (the held-out pages' trigrams; on how many of its source's
/// pages each is; the two models' spans on the held-out pages). Memory: the trigrams of the
/// held-out pages, at most [`CHECK_PAGES_TOTAL`].
pub fn check_sources(
    cache: &PoolCache,
    supervised: &NbModel,
    adapted: &NbModel,
    held_out: &[bool],
    eligible: &[bool],
) -> Result<Vec<SourceCheck>, BootstrapError> {
    let mut pages_of = vec![0usize; cache.group_names.len()];
    for &g in &cache.groups {
        pages_of[g as usize] += 1;
    }
    let mut keys: Vec<u64> = Vec::new();
    let mut counts: HashKeyed<u32> = HashKeyed::default();
    cache.for_each(|i, tokens| {
        if held_out[i] {
            word_trigrams(tokens, &mut keys);
            for &k in &keys {
                counts.insert(source_key(cache.groups[i], k), 0);
            }
        }
    })?;
    cache.for_each(|i, tokens| {
        if eligible[cache.groups[i] as usize] {
            word_trigrams(tokens, &mut keys);
            for &k in &keys {
                if let Some(c) = counts.get_mut(&source_key(cache.groups[i], k)) {
                    *c += 1;
                }
            }
        }
    })?;
    let mut checks: Vec<SourceCheck> = cache
        .group_names
        .iter()
        .map(|name| SourceCheck {
            source: name.clone(),
            pages: 0,
            unique: 0,
            lost: 0,
            dropped_site: 0,
            found: 0,
            added_site: 0,
        })
        .collect();
    let mut probs = Vec::new();
    cache.for_each(|i, tokens| {
        if !held_out[i] {
            return;
        }
        let g = cache.groups[i];
        let floor = ((pages_of[g as usize] as f64 * REPEATED_SHARE).ceil() as u32).max(2);
        let s = predict(supervised, tokens, &mut probs);
        let a = predict(adapted, tokens, &mut probs);
        let inside = |span: Option<(usize, usize)>, x: usize| span.is_some_and(|(j, k)| j <= x && x <= k);
        let c = &mut checks[g as usize];
        c.pages += 1;
        // The stretch being read: which span holds it (Some(true): only the supervised one).
        let mut open: Option<(bool, Stretch)> = None;
        let close = |c: &mut SourceCheck, stretch: Option<(bool, Stretch)>| {
            let Some((dropped, st)) = stretch else { return };
            let words = st.repeated + st.unique;
            match (dropped, st.is_site()) {
                (true, true) => c.dropped_site += words,
                (true, false) => c.lost += st.unique,
                (false, true) => c.added_site += words,
                (false, false) => c.found += st.unique,
            }
        };
        for (x, key) in tokens.iter().enumerate().filter_map(|(x, t)| Some((x, word_trigram(t)?))) {
            let repeated = counts.get(&source_key(g, key)).is_some_and(|&n| n >= floor);
            let (in_s, in_a) = (inside(s, x), inside(a, x));
            c.unique += usize::from(in_s && !repeated);
            let side = (in_s != in_a).then_some(in_s);
            if open.as_ref().map(|o| o.0) != side {
                close(c, open.take());
                open = side.map(|d| (d, Stretch::default()));
            }
            if let Some((_, st)) = open.as_mut() {
                st.repeated += usize::from(repeated);
                st.unique += usize::from(!repeated);
            }
        }
        close(c, open);
    })?;
    // Every eligible source is reported; one without held-out pages shows no gain.
    Ok(checks.into_iter().zip(eligible).filter(|(_, e)| **e).map(|(c, _)| c).collect())
}

/// The layouts an adapted model keeps after the label-free check: those of the sources that
/// showed a gain, less any that a source without one shares (its pages would be read with the
/// adapted model, which the check found no better there). The guard ([`super::guard`]) scores
/// every other layout with the supervised model, so a source without a gain keeps the
/// supervised behaviour while the others are adapted. Empty when no source showed a gain; every
/// eligible source's layouts when all did.
pub fn passing_templates(cache: &PoolCache, checks: &[SourceCheck]) -> Vec<Vec<u64>> {
    let by_name: HashMap<&str, bool> = checks.iter().map(|c| (c.source.as_str(), c.passed())).collect();
    let verdict = |g: u32| by_name.get(cache.group_names[g as usize].as_str()).copied();
    let failing: Vec<&Vec<u64>> =
        cache.templates.iter().filter(|(g, _)| verdict(*g) == Some(false)).map(|(_, t)| t).collect();
    cache
        .templates
        .iter()
        .filter(|(g, t)| verdict(*g) == Some(true) && !failing.iter().any(|f| sketch_similarity(f, t) >= SAME_TEMPLATE))
        .map(|(_, t)| t.clone())
        .collect()
}

/// What a bootstrap produced.
pub struct BootstrapOutcome {
    /// The adapted model (its last iteration).
    pub model: NbModel,
    pub logs: Vec<IterationLog>,
    /// The label-free check per source (empty when [`BootstrapOptions::check`] is off).
    pub checks: Vec<SourceCheck>,
}

/// Runs the bootstrap; `on_iteration` sees each iteration's log and model (for evaluation).
pub fn bootstrap(
    base: &NbModel,
    base_id: &str,
    cache: &PoolCache,
    opts: &BootstrapOptions,
    mut on_iteration: impl FnMut(&IterationLog, &NbModel),
) -> Result<BootstrapOutcome, BootstrapError> {
    let pages = cache.groups.len();
    let eligible = cache.eligible(opts.min_pages);
    let held_out = if opts.check { held_out_pages(cache, &eligible) } else { vec![false; pages] };
    // The adapted sources' layouts guard every adapted model, the iterations' too (their
    // `--eval-manifest` scores are the guarded model's): other pages get the base model.
    let templates: Vec<Vec<u64>> =
        cache.templates.iter().filter(|(g, _)| opts.guard && eligible[*g as usize]).map(|(_, t)| t.clone()).collect();
    let mut model = base.clone();
    let mut spans: Vec<Option<(usize, usize)>> = vec![None; pages];
    let mut conf = vec![0.0; pages];
    let mut logs = Vec::new();
    let mut probs = Vec::new();
    for it in 0..=opts.iterations {
        let t = Instant::now();
        // Predict with the current model.
        let mut changed = 0;
        cache.for_each(|i, tokens| {
            let span = predict(&model, tokens, &mut probs);
            if span != spans[i] {
                changed += 1;
            }
            spans[i] = span;
            conf[i] = confidence(&probs, span, opts.window);
        })?;
        // L: the most confident `keep` share of each eligible source.
        let mut by_group: BTreeMap<u32, Vec<usize>> = BTreeMap::new();
        for i in 0..pages {
            if eligible[cache.groups[i] as usize] && spans[i].is_some() && !held_out[i] {
                by_group.entry(cache.groups[i]).or_default().push(i);
            }
        }
        let mut in_l = vec![false; pages];
        for members in by_group.values_mut() {
            members.sort_by(|&a, &b| conf[b].total_cmp(&conf[a]).then(a.cmp(&b)));
            let take = ((members.len() as f64 * opts.keep).ceil() as usize).clamp(1, members.len());
            for &i in &members[..take] {
                in_l[i] = true;
            }
        }
        for i in 0..pages {
            tracing::debug!(
                "iteration {it} page {i} source {}: span {:?} confidence {:.4} in L {}",
                cache.group_names[cache.groups[i] as usize],
                spans[i],
                conf[i],
                in_l[i]
            );
        }
        let l_count = in_l.iter().filter(|&&x| x).count();
        let considered: Vec<f64> =
            (0..pages).filter(|&i| eligible[cache.groups[i] as usize]).map(|i| conf[i]).collect();
        let mean_confidence = considered.iter().sum::<f64>() / considered.len().max(1) as f64;
        if it < opts.iterations {
            model = retrain(cache, &spans, &in_l, opts, base, base_id)?;
            if opts.fallback > 0.0 {
                let info = model.header.bootstrap.clone();
                model = model.merged_with(base, opts.fallback);
                model.header.bootstrap = info;
            }
            if let Some(info) = model.header.bootstrap.as_mut() {
                info.templates = templates.clone();
            }
        }
        let log = IterationLog {
            iteration: it,
            pages,
            in_l: l_count,
            mean_confidence,
            changed,
            pages_per_s: pages as f64 / t.elapsed().as_secs_f64().max(1e-9),
            features: model.len(),
        };
        on_iteration(&log, &model);
        logs.push(log);
    }
    let checks = if opts.check { check_sources(cache, base, &model, &held_out, &eligible)? } else { Vec::new() };
    Ok(BootstrapOutcome { model, logs, checks })
}

/// Trains the adapted model over L with trigram features and importance weights.
fn retrain(
    cache: &PoolCache,
    spans: &[Option<(usize, usize)>],
    in_l: &[bool],
    opts: &BootstrapOptions,
    base: &NbModel,
    base_id: &str,
) -> Result<NbModel, BootstrapError> {
    let wanted: Vec<u8> = opts.features.types().iter().map(|&t| t as u8).collect();
    let tri = FeatureType::Trigram as u8;
    let mut counts = NbCounts::default();
    // Per trigram: (sum of edge weights, tokens).
    let mut importance: HashKeyed<(f64, u32)> = HashKeyed::default();
    let mut used = 0;
    cache.for_each(|i, tokens| {
        if !in_l[i] {
            return;
        }
        let Some((j, k)) = spans[i] else { return };
        used += 1;
        for (x, t) in tokens.iter().enumerate() {
            let mut f = TokenFeatures { tag: t.tag, ..TokenFeatures::default() };
            for s in 0..t.len as usize {
                if wanted.contains(&t.types[s]) {
                    f.keys[f.len as usize] = t.keys[s];
                    f.types[f.len as usize] = t.types[s];
                    f.len += 1;
                }
                if t.types[s] == tri {
                    let e = importance.entry(t.keys[s]).or_insert((0.0, 0));
                    e.0 += edge_weight(x, j, k, opts.cutoff);
                    e.1 += 1;
                }
            }
            counts.add(&f, x >= j && x <= k);
        }
    })?;
    // The tag bias and class clamp are properties of the feature set, not of the pool: keep
    // the base model's.
    let params = NbParams {
        features: opts.features,
        alpha: 1.0,
        min_count: opts.min_count,
        bias: opts.bias,
        tag_bias: base.header.tag_bias,
        class_clamp: base.header.class_clamp,
    };
    let summary =
        TrainingSummary { datasets: vec!["bootstrap".into()], pages_used: used, ..TrainingSummary::default() };
    let model = NbModel::from_counts(&counts, params, summary);
    let mut weights: Vec<(u64, f64)> = importance
        .iter()
        .filter(|(_, (_, n))| *n >= opts.min_count)
        .map(|(&k, &(sum, n))| (k, sum / f64::from(n)))
        .collect();
    weights.sort_unstable_by_key(|w| w.0);
    let info = BootstrapInfo {
        base_model: base_id.to_string(),
        boost: opts.boost,
        window: opts.window,
        cutoff: opts.cutoff,
        keep: opts.keep,
        iterations: opts.iterations,
        pool_pages: cache.groups.len(),
        sources: cache.group_names.len(),
        importance_entries: 0,
        templates: Vec::new(),
    };
    let mut model = model.with_importance(&weights, info);
    // The base's chooser goes with it: the adapted model's choices are the base's, made
    // better on its layouts, and the guard gives the base every other page.
    model.header.chooser = base.header.chooser.clone();
    Ok(model)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_source_passes_the_check_only_with_a_gain_and_its_articles_kept() {
        let check = |lost, dropped_site, found, added_site| SourceCheck {
            source: "s".into(),
            pages: 3,
            unique: 1000,
            lost,
            dropped_site,
            found,
            added_site,
        };
        assert!(check(10, 200, 0, 0).passed(), "a comment thread dropped, a few words lost");
        assert!(check(0, 0, 30, 0).passed(), "article text found");
        assert!(!check(0, 0, 0, 0).passed(), "no change is no gain");
        assert!(!check(60, 500, 0, 0).passed(), "6 % of the article lost, whatever else");
        assert!(!check(0, 20, 0, 40).passed(), "more of the site added than dropped");
        assert!(!SourceCheck { pages: 0, ..check(0, 200, 0, 0) }.passed(), "no held-out pages");
        assert_eq!(check(30, 0, 0, 0).kept(), 0.97);
        // A stretch is the site's when a tenth of its words repeat across the source.
        assert!(Stretch { repeated: 6, unique: 40 }.is_site());
        assert!(!Stretch { repeated: 2, unique: 300 }.is_site());
    }

    #[test]
    fn the_adapted_model_keeps_the_layouts_of_sources_with_a_gain_not_shared_by_others() {
        let layout = |from: u64| (from..from + 64).collect::<Vec<u64>>();
        let cache = PoolCache {
            path: PathBuf::new(),
            groups: vec![0, 1, 2, 3],
            group_names: ["gain", "none", "gain-shared", "small"].map(String::from).to_vec(),
            skipped: 0,
            // "gain" has two layouts; "gain-shared" has the layout of "none"; "small" was not
            // adapted (no check), so it neither keeps nor removes a layout.
            templates: vec![(0, layout(0)), (0, layout(1000)), (1, layout(2000)), (2, layout(2000)), (3, layout(0))],
        };
        let check = |source: &str, found| SourceCheck {
            source: source.into(),
            pages: 2,
            unique: 100,
            lost: 0,
            dropped_site: 0,
            found,
            added_site: 0,
        };
        let checks = [check("gain", 20), check("none", 0), check("gain-shared", 20)];
        assert_eq!(passing_templates(&cache, &checks), vec![layout(0), layout(1000)]);
        let all = [check("gain", 20), check("none", 5), check("gain-shared", 20)];
        assert_eq!(passing_templates(&cache, &all), vec![layout(0), layout(1000), layout(2000), layout(2000)]);
        assert!(passing_templates(&cache, &[check("gain", 0), check("none", 0)]).is_empty());
    }

    #[test]
    fn held_out_pages_are_one_in_five_of_each_eligible_source() {
        let cache = PoolCache {
            path: PathBuf::new(),
            groups: (0..40).map(|i| (i % 2) as u32).chain(std::iter::repeat_n(2, 3)).collect(),
            group_names: vec!["a".into(), "b".into(), "small".into()],
            skipped: 0,
            templates: Vec::new(),
        };
        let eligible = cache.eligible(10);
        let held = held_out_pages(&cache, &eligible);
        let per = |g: u32| (0..held.len()).filter(|&i| held[i] && cache.groups[i] == g).count();
        assert_eq!((per(0), per(1), per(2)), (4, 4, 0));
        assert!(!held[0] && held[8], "the 5th page of source a (index 8) is the first held out");
        // 300 sources of 100 pages: 20 held out of each until 4,000 in all.
        let many = PoolCache {
            groups: (0..30_000).map(|i| (i % 300) as u32).collect(),
            group_names: (0..300).map(|g| g.to_string()).collect(),
            ..cache
        };
        let held = held_out_pages(&many, &[true; 300]);
        assert_eq!(held.iter().filter(|h| **h).count(), CHECK_PAGES_TOTAL);
        let one = PoolCache { groups: vec![0; 200], group_names: vec!["a".into()], ..many };
        let held = held_out_pages(&one, &[true]);
        assert_eq!(held.iter().filter(|h| **h).count(), CHECK_PAGES, "40 would be one in five");
    }

    #[test]
    fn edge_weights_by_hand() {
        // Article tokens 10..=20, d = 4.
        assert_eq!(edge_weight(10, 10, 20, 4), 1.0); // first article token
        assert_eq!(edge_weight(9, 10, 20, 4), 1.0); // last token before it
        assert_eq!(edge_weight(20, 10, 20, 4), 1.0);
        assert_eq!(edge_weight(21, 10, 20, 4), 1.0);
        assert_eq!(edge_weight(11, 10, 20, 4), 0.75); // one token further in: δ = 1
        assert_eq!(edge_weight(7, 10, 20, 4), 0.5); // δ = 2
        assert_eq!(edge_weight(15, 10, 20, 4), 0.0); // δ = 4 = d
        assert_eq!(edge_weight(0, 10, 20, 4), 0.0); // far away
    }

    #[test]
    fn confidence_by_hand() {
        // 6 tokens, span 2..=3, w = 1: terms (1 − p1), p2, p3, (1 − p4).
        let p = [0.5, 0.2, 0.9, 0.8, 0.1, 0.5];
        let v = confidence(&p, Some((2, 3)), 1);
        let want = (0.8f64 * 0.9 * 0.8 * 0.9).powf(0.25);
        assert!((v - want).abs() < 1e-12, "{v} vs {want}");
        // Windows are cut at the page ends; no span has no confidence.
        let v = confidence(&p, Some((0, 5)), 2);
        let want = (0.5f64 * 0.2 * 0.1 * 0.5).powf(0.25);
        assert!((v - want).abs() < 1e-12);
        assert_eq!(confidence(&p, None, 2), 0.0);
        // A confident, correct-looking prediction beats a doubtful one.
        let good = [0.05, 0.05, 0.95, 0.95, 0.05, 0.05];
        let bad = [0.6, 0.55, 0.6, 0.5, 0.6, 0.7];
        assert!(confidence(&good, Some((2, 3)), 2) > confidence(&bad, Some((2, 3)), 2));
    }
}

/// What a "source" is when grouping the pool (`--group-by`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum GroupBy {
    /// The URL's host (default); pages without a URL: [`guess_source`].
    Host,
    /// The host, split into templates: pages of one host whose id/class vocabularies are alike
    /// ([`TemplateClusters`]). A crawl of a host over years meets several redesigns; ranked as
    /// one source, the templates whose predictions look less sure never reach L and the adapted
    /// model fails on them (big9: arstechnica 2005 0.985 → 0.208, models/README.md).
    HostTemplate,
    /// A manifest's `site` field (else as `Host`).
    Site,
    /// One source for everything.
    None,
}

/// The source of a page without a URL: the host of `<link rel=canonical>`, else
/// `og:site_name`, else the most frequent host among absolute links.
pub fn guess_source(html: &[u8]) -> Option<String> {
    let head = String::from_utf8_lossy(&html[..html.len().min(1 << 20)]);
    let lower = head.to_ascii_lowercase();
    let attr = |tag: &str, name: &str| -> Option<String> {
        crate::html::attrs::str_attrs(tag)
            .find_map(|(n, v)| v.filter(|_| n.eq_ignore_ascii_case(name)))
            .map(str::to_string)
    };
    let tags = |name: &str| -> Vec<(usize, usize)> {
        lower.match_indices(&format!("<{name}")).filter_map(|(i, _)| Some((i, i + lower[i..].find('>')?))).collect()
    };
    for (s, e) in tags("link") {
        let tag = &lower[s..e];
        if attr(tag, "rel").is_some_and(|r| r.split_whitespace().any(|x| x == "canonical"))
            && let Some(h) = attr(&head[s..e], "href").and_then(|u| host_key(&u))
        {
            return Some(h);
        }
    }
    for (s, e) in tags("meta") {
        let tag = &lower[s..e];
        if attr(tag, "property").as_deref() == Some("og:site_name")
            && let Some(c) = attr(&head[s..e], "content")
        {
            return Some(c.trim().to_string());
        }
    }
    let mut hosts: BTreeMap<String, usize> = BTreeMap::new();
    for (i, _) in lower.match_indices("href=") {
        let rest = &head[i + 5..];
        let rest = rest.trim_start_matches(['"', '\'']);
        if rest.starts_with("http://") || rest.starts_with("https://") {
            let end = rest.find(['"', '\'', ' ', '>']).unwrap_or(rest.len());
            if let Some(h) = host_key(&rest[..end]) {
                *hosts.entry(h).or_default() += 1;
            }
        }
    }
    hosts.into_iter().max_by_key(|(h, n)| (*n, std::cmp::Reverse(h.clone()))).map(|(h, _)| h)
}

/// The source name of a page (for [`GroupBy::HostTemplate`], its host: the template split
/// needs [`SourceGrouper`]).
pub fn group_of(group_by: GroupBy, url: Option<&str>, site: Option<&str>, html: &[u8]) -> String {
    match group_by {
        GroupBy::None => "all".to_string(),
        GroupBy::Site if site.is_some() => site.unwrap_or_default().to_string(),
        _ => url.and_then(host_key).or_else(|| guess_source(html)).unwrap_or_else(|| "unknown".to_string()),
    }
}

/// Templates kept per host; later pages join the nearest one.
const MAX_TEMPLATES_PER_HOST: usize = 256;

use crate::site_memory::template::{jaccard, signature};

/// Streaming leader clustering of each host's pages into templates: a page joins the most
/// similar template of its host (Jaccard of [`signature`]s, against the template's
/// first page) when the similarity reaches the threshold, else it starts a new one. One pass,
/// memory bounded by the templates kept (at most 256 signatures of 2048 words per host).
#[derive(Debug, Default)]
pub struct TemplateClusters {
    threshold: f64,
    hosts: HashMap<String, Vec<Vec<u64>>>,
}

impl TemplateClusters {
    pub fn new(threshold: f64) -> Self {
        TemplateClusters { threshold, hosts: HashMap::new() }
    }

    /// The template number (within `host`) of a page with signature `sig`.
    pub fn assign(&mut self, host: &str, sig: Vec<u64>) -> usize {
        let leaders = self.hosts.entry(host.to_string()).or_default();
        let best = leaders
            .iter()
            .enumerate()
            .map(|(k, l)| (k, jaccard(l, &sig)))
            .max_by(|a, b| a.1.total_cmp(&b.1).then(b.0.cmp(&a.0)));
        match best {
            Some((k, sim)) if sim >= self.threshold || leaders.len() >= MAX_TEMPLATES_PER_HOST => k,
            _ => {
                leaders.push(sig);
                leaders.len() - 1
            }
        }
    }
}

/// Names each pool page's source, keeping the template clusters of [`GroupBy::HostTemplate`].
#[derive(Debug)]
pub struct SourceGrouper {
    by: GroupBy,
    templates: TemplateClusters,
}

impl SourceGrouper {
    /// `template_similarity`: the Jaccard threshold of [`GroupBy::HostTemplate`].
    pub fn new(by: GroupBy, template_similarity: f64) -> Self {
        SourceGrouper { by, templates: TemplateClusters::new(template_similarity) }
    }

    /// The source of one page: `host#k` (template k of the host) for
    /// [`GroupBy::HostTemplate`], else [`group_of`].
    pub fn group(&mut self, url: Option<&str>, site: Option<&str>, html: &[u8]) -> String {
        let base = group_of(self.by, url, site, html);
        if self.by != GroupBy::HostTemplate {
            return base;
        }
        let k = self.templates.assign(&base, signature(html));
        format!("{base}#{k}")
    }
}

#[cfg(test)]
mod source_tests {
    use super::*;

    #[test]
    fn sources_of_pages_without_urls() {
        assert_eq!(
            guess_source(b"<html><head><link rel=\"canonical\" href=\"https://www.news.test/a/1\"></head>").as_deref(),
            Some("news.test")
        );
        assert_eq!(guess_source(b"<meta property='og:site_name' content='The Daily'>").as_deref(), Some("The Daily"));
        // Attributes are read as attributes: `data-rel` is not `rel`.
        assert_eq!(
            guess_source(b"<link data-rel=canonical rel=alternate href=https://feed.test/><meta PROPERTY=\"og:site_name\" content=\"A, B\">")
                .as_deref(),
            Some("A, B")
        );
        assert_eq!(
            guess_source(
                b"<a href='https://a.test/1'>x</a><a href=\"https://b.test/\">y</a><a href=https://a.test/2>z</a>"
            )
            .as_deref(),
            Some("a.test")
        );
        assert_eq!(guess_source(b"<p>nothing</p>"), None);
        assert_eq!(group_of(GroupBy::Host, Some("http://www.x.test/p"), Some("X"), b""), "x.test");
        assert_eq!(group_of(GroupBy::Site, Some("http://www.x.test/p"), Some("X"), b""), "X");
    }

    /// A page replayed by the Wayback Machine has every link rewritten to the archive, its
    /// canonical link too: its source is the site it was captured from (big9's archived
    /// arstechnica pages were one source, `web-beta.archive.org`, before session 41).
    #[test]
    fn an_archived_page_is_a_page_of_the_captured_site() {
        let canonical =
            b"<link rel=canonical href='https://web-beta.archive.org/web/20090301020158/http://arstechnica.com/a.ars'>";
        assert_eq!(guess_source(canonical).as_deref(), Some("arstechnica.com"));
        let links = b"<a href='https://web.archive.org/web/2009/http://www.bbc.co.uk/1'>x</a>\
                      <a href='https://web.archive.org/web/2009/http://www.bbc.co.uk/2'>y</a>\
                      <a href='https://web.archive.org/web/2009/http://example.test/'>z</a>";
        assert_eq!(guess_source(links).as_deref(), Some("bbc.co.uk"));
        let replay = "https://web.archive.org/web/20130101000000/http://www.cnn.com/2013/story";
        assert_eq!(group_of(GroupBy::Host, Some(replay), None, b""), "cnn.com");
    }

    #[test]
    fn template_clusters_split_a_redesigned_host() {
        let old = "<div class='header'><div class='story-body'><p class='byline'><div class='footer-links'>";
        let new = "<main id='app'><article class='c-entry'><aside class='rail'><div class='c-footer'>";
        let mut g = SourceGrouper::new(GroupBy::HostTemplate, 0.5);
        let url = Some("https://www.news.test/a");
        assert_eq!(g.group(url, None, old.as_bytes()), "news.test#0");
        assert_eq!(g.group(url, None, new.as_bytes()), "news.test#1");
        // One extra class word: still the old template (Jaccard 4/5).
        assert_eq!(g.group(url, None, format!("{old}<p class='promo'>").as_bytes()), "news.test#0");
        // Templates are per host.
        assert_eq!(g.group(Some("http://other.test/"), None, new.as_bytes()), "other.test#0");
        // Other groupings ignore templates.
        assert_eq!(SourceGrouper::new(GroupBy::Host, 0.5).group(url, None, new.as_bytes()), "news.test");
    }
}
