//! `pipeline bootstrap` as one library call: read the unlabelled pool (WARC files, folders of
//! pages, manifests), group its pages into sources, cache their tokens, run the self-training of
//! [`crate::methods::nb::bootstrap`] (Pasternack & Roth §6.2.4) and write the adapted model.
//! With evaluation manifests, every iteration's model is scored against their gold, pooled and
//! per source. It lives here, at the top of the library, because it reads inputs through
//! [`crate::sources`] and scores through [`crate::eval`], both above the methods.

use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::dataset::{self, ManifestError};
use crate::eval;
use crate::extract::{ExtractOptions, Extractor};
use crate::features::FeatureSet;
use crate::methods::nb::DEFAULT_MODEL;
use crate::methods::nb::bootstrap::{self, BootstrapError, BootstrapOptions, GroupBy, PoolPage, SourceGrouper};
use crate::methods::nb::guard;
use crate::methods::nb::model::NbModel;
use crate::methods::{ScorerError, read_model};
use crate::site_memory::{self, SiteMemory, SiteMemoryOptions};
use crate::sources::{self, SourceEvent};

/// What to adapt, from what, and where to.
#[derive(Debug, Clone)]
pub struct BootstrapRun {
    /// The supervised model to start from (`None`: the built-in model).
    pub model: Option<PathBuf>,
    /// WARC files, folders of `.html` files, or manifests (`.jsonl`; gold text is ignored).
    pub unlabeled: Vec<PathBuf>,
    /// Only manifest pages of this split.
    pub split: Option<String>,
    /// Where the adapted model is written.
    pub out: PathBuf,
    /// What a source is.
    pub group_by: GroupBy,
    /// With [`GroupBy::HostTemplate`]: the Jaccard similarity of id/class words above which two
    /// pages share a template.
    pub template_similarity: f64,
    /// The self-training settings; `features` and `bias` of `None` are the base model's.
    pub options: BootstrapOptions,
    pub features: Option<FeatureSet>,
    pub bias: Option<f64>,
    /// Manifests scored after every iteration (none: no evaluation).
    pub eval_manifests: Vec<PathBuf>,
    pub eval_split: String,
    /// Folder of the token cache (`None`: next to `out`).
    pub cache_dir: Option<PathBuf>,
    /// Evaluation threads (0 = one per core).
    pub threads: usize,
    /// The site memory counted over the pool (what repeats across a host's pages), written to
    /// [`site_memory_out`](Self::site_memory_out) for crawl runs to start from
    /// (`--site-memory-from`); `min_pages` 0 turns it off.
    pub site_memory: SiteMemoryOptions,
    /// Where the site memory goes (`None`: `out` with `.sitemem` added).
    pub site_memory_out: Option<PathBuf>,
}

/// What the run did besides writing the model.
#[derive(Debug, Clone, Default)]
pub struct BootstrapSummary {
    /// Inputs or pages that could not be read (each was logged with its name).
    pub failed: usize,
    /// Was the adapted model written (else the supervised one)?
    pub adapted: bool,
    /// The label-free check of each adapted source ([`bootstrap::SourceCheck`]).
    pub checks: Vec<bootstrap::SourceCheck>,
}

/// Errors that stop a bootstrap run; each names the file.
#[derive(Debug, thiserror::Error)]
pub enum BootstrapRunError {
    #[error("{0}")]
    Options(String),
    #[error("cannot read `{path}`: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error(transparent)]
    Model(#[from] ScorerError),
    #[error(transparent)]
    Manifest(#[from] ManifestError),
    #[error(transparent)]
    Bootstrap(#[from] BootstrapError),
    #[error("cannot start the evaluation threads: {0}")]
    Threads(#[from] rayon::ThreadPoolBuildError),
}

enum PoolInput {
    File { path: PathBuf, url: Option<String>, site: Option<String> },
    Warc(PathBuf),
}

impl BootstrapRun {
    fn validate(&self) -> Result<(), BootstrapRunError> {
        let o = &self.options;
        let bad = |m: &str| Err(BootstrapRunError::Options(m.to_string()));
        if !(o.keep > 0.0 && o.keep <= 1.0) {
            return bad("keep must be within (0, 1]");
        }
        if o.window == 0 || o.cutoff == 0 {
            return bad("window and cutoff must be positive");
        }
        if o.boost.is_nan() || o.boost < 0.0 {
            return bad("boost must not be negative");
        }
        if !(0.0..=1.0).contains(&self.template_similarity) {
            return bad("template similarity must be within [0, 1]");
        }
        if self.bias.is_some_and(|b| !b.is_finite()) || !o.fallback.is_finite() {
            return bad("bias and fallback must be finite");
        }
        Ok(())
    }

    /// The base model and its identity in the adapted model's header.
    fn base(&self) -> Result<(NbModel, String), BootstrapRunError> {
        match &self.model {
            Some(p) => Ok((read_model(p, NbModel::from_bytes)?.0, p.display().to_string())),
            None => {
                let m = NbModel::from_bytes(DEFAULT_MODEL)
                    .map_err(|source| ScorerError::Model { path: "<built-in default.nbm>".into(), source })?;
                Ok((m, "default".to_string()))
            }
        }
    }

    /// The unlabelled inputs, in order.
    fn inputs(&self) -> Result<Vec<PoolInput>, BootstrapRunError> {
        let mut out = Vec::new();
        for input in &self.unlabeled {
            if input.is_dir() {
                let io = |source| BootstrapRunError::Io { path: input.clone(), source };
                let mut files: Vec<PathBuf> = std::fs::read_dir(input)
                    .map_err(io)?
                    .flatten()
                    .map(|e| e.path())
                    .filter(|p| p.extension().is_some_and(|e| e == "html" || e == "htm"))
                    .collect();
                files.sort();
                out.extend(files.into_iter().map(|p| PoolInput::File { path: p, url: None, site: None }));
            } else if input.extension().is_some_and(|e| e == "jsonl") {
                let entries = dataset::read_manifest(input, self.split.as_deref())?;
                out.extend(entries.into_iter().map(|e| PoolInput::File { path: e.path, url: e.url, site: e.site }));
            } else {
                out.push(PoolInput::Warc(input.clone()));
            }
        }
        Ok(out)
    }
}

/// Runs the bootstrap; progress and per-iteration lines go to `log`.
pub fn run(r: &BootstrapRun, log: &mut dyn FnMut(&str)) -> Result<BootstrapSummary, BootstrapRunError> {
    r.validate()?;
    let (base, base_id) = r.base()?;
    let inputs = r.inputs()?;
    let opts = BootstrapOptions {
        features: r.features.unwrap_or(base.header.features),
        // The base model's bias (tuned with its tag bias and clamp, which the adapted model
        // inherits) unless given: big9 per-site mean after one iteration 0.928 with it, 0.903
        // with 0 (models/README.md).
        bias: r.bias.unwrap_or(base.header.bias),
        ..r.options.clone()
    };
    let cache_dir = r.cache_dir.clone().unwrap_or_else(|| r.out.parent().unwrap_or(Path::new(".")).to_path_buf());
    std::fs::create_dir_all(&cache_dir).map_err(|source| BootstrapRunError::Io { path: cache_dir.clone(), source })?;
    let cache_path = cache_dir.join(format!(".bootstrap-cache-{}.zst", std::process::id()));
    let t = std::time::Instant::now();
    let grouper = RefCell::new(SourceGrouper::new(r.group_by, r.template_similarity));
    // Failures are logged as the pool streams by; the log is shared with the page iterator.
    let log = RefCell::new(log);
    let failed = Cell::new(0usize);
    let fail = |message: String| {
        (*log.borrow_mut())(&format!("error: {message}"));
        failed.set(failed.get() + 1);
    };
    let memory = RefCell::new(r.site_memory.enabled().then(|| SiteMemory::new(r.site_memory.clone())));
    let observe = |key: Option<String>, html: &[u8]| {
        if let (Some(m), Some(key)) = (memory.borrow_mut().as_mut(), key)
            && let Some(b) = site_memory::page_blocks(html, None, ExtractOptions::default().lenient_raw_text)
        {
            m.observe(&key, &b.sketch, &b.hashes);
        }
    };
    let pages = pool_pages(inputs, &grouper, &fail, &observe);
    let say = |line: &str| (*log.borrow_mut())(line);
    if opts.iterations == 0 {
        // Self-training off: the pool is read for the site memory only.
        let n = pages.count();
        let failed = failed.get();
        say(&format!("pool: {n} pages read in {:.1} s ({failed} unreadable or unparsable)", t.elapsed().as_secs_f64()));
        write_site_memory(r, memory.borrow().as_ref(), &say)?;
        write_supervised(r)?;
        say(&format!(
            "self-training off (--iterations 0, the default: on big9 and dragnet it lowers F1, models/README.md): \
             the supervised model {base_id} is kept -> {}",
            r.out.display()
        ));
        return Ok(BootstrapSummary { failed, ..BootstrapSummary::default() });
    }
    let cache = bootstrap::build_cache(pages, base.header.features, opts.min_pages, &cache_path).inspect_err(|_| {
        let _ = std::fs::remove_file(&cache_path);
    })?;
    let failed = failed.get();
    write_site_memory(r, memory.borrow().as_ref(), &say)?;
    let mut sizes: BTreeMap<&str, usize> = BTreeMap::new();
    for &g in &cache.groups {
        *sizes.entry(cache.group_names[g as usize].as_str()).or_default() += 1;
    }
    say(&format!(
        "pool: {} pages from {} source(s) cached in {:.1} s ({} unreadable or unparsable)",
        cache.groups.len(),
        sizes.len(),
        t.elapsed().as_secs_f64(),
        cache.skipped + failed
    ));
    let small: Vec<String> =
        sizes.iter().filter(|(_, n)| **n < opts.min_pages).map(|(g, n)| format!("{g} ({n})")).collect();
    if !small.is_empty() {
        say(&format!(
            "not adapted ({} source(s) with fewer than {} pages): {}",
            small.len(),
            opts.min_pages,
            listed(&small)
        ));
    }
    let eval_entries = if r.eval_manifests.is_empty() {
        Vec::new()
    } else {
        dataset::read_manifests(&r.eval_manifests, Some(&r.eval_split))?
    };
    let evaluate = |model: &NbModel| score_by_source(model, &base, &eval_entries, r.group_by, r.threads);
    if !eval_entries.is_empty() {
        say(&format!("iteration 0 (supervised model) {}", evaluate(&base)?));
    }
    let result = bootstrap::bootstrap(&base, &base_id, &cache, &opts, |it, model| {
        let mut line = format!(
            "iteration {}: {} pages, |L| = {}, mean confidence {:.4}, {} predictions changed, {:.0} pages/s, {} features",
            it.iteration, it.pages, it.in_l, it.mean_confidence, it.changed, it.pages_per_s, it.features
        );
        if !eval_entries.is_empty() && it.iteration < opts.iterations {
            match evaluate(model) {
                Ok(e) => line = format!("{line}\n  after retraining: {e}"),
                Err(e) => line = format!("{line}\n  eval failed: {e}"),
            }
        }
        say(&line);
    });
    let _ = std::fs::remove_file(&cache_path);
    let outcome = result?;
    for c in &outcome.checks {
        say(&format!("check {c}"));
    }
    let failing: Vec<&str> = outcome.checks.iter().filter(|c| !c.passed()).map(|c| c.source.as_str()).collect();
    let mut model = outcome.model;
    if opts.check {
        // Each source keeps what the check found for it: the adapted model serves the layouts
        // of the sources that showed a gain, the supervised model (through the guard) every
        // other page. Unguarded, the adapted model scores every page: it is kept only if every
        // source showed a gain.
        let kept = bootstrap::passing_templates(&cache, &outcome.checks);
        let why = if outcome.checks.is_empty() {
            Some("no source had held-out pages".to_string())
        } else if failing.len() == outcome.checks.len() || (!opts.guard && !failing.is_empty()) {
            let unguarded = if opts.guard { "" } else { ", and --no-guard gives every page the adapted model" };
            Some(format!(
                "no gain shown on {} of {} source(s){unguarded}: {}",
                failing.len(),
                outcome.checks.len(),
                listed(&failing)
            ))
        } else if kept.is_empty() {
            Some(format!(
                "no layout of the sources with a gain is left: none recorded, or each shared by a source \
                 without one ({})",
                listed(&failing)
            ))
        } else {
            None
        };
        if let Some(why) = why {
            write_supervised(r)?;
            say(&format!(
                "self-training not kept ({why}; --no-check keeps it anyway): the supervised model {base_id} is kept -> {}",
                r.out.display()
            ));
            return Ok(BootstrapSummary { failed, adapted: false, checks: outcome.checks });
        }
        if opts.guard && !failing.is_empty() {
            let layouts = kept.len();
            if let Some(info) = model.header.bootstrap.as_mut() {
                info.templates = kept;
            }
            say(&format!(
                "adapted for {} of {} source(s) ({layouts} layout(s)); no gain shown on {}: the supervised model keeps \
                 their pages",
                outcome.checks.len() - failing.len(),
                outcome.checks.len(),
                listed(&failing)
            ));
            if !eval_entries.is_empty() {
                say(&format!("the adapted model as written: {}", evaluate(&model)?));
            }
        }
    }
    std::fs::write(&r.out, model.to_bytes()).map_err(|source| BootstrapRunError::Io { path: r.out.clone(), source })?;
    say(&format!(
        "adapted model: {} features, {} importance weights -> {}",
        model.len(),
        model.header.bootstrap.as_ref().map_or(0, |b| b.importance_entries),
        r.out.display()
    ));
    Ok(BootstrapSummary { failed, adapted: true, checks: outcome.checks })
}

/// At most 20 names, comma-separated, with "…" when there are more.
fn listed<S: AsRef<str>>(names: &[S]) -> String {
    let more = if names.len() > 20 { " …" } else { "" };
    let shown: Vec<&str> = names.iter().take(20).map(AsRef::as_ref).collect();
    format!("{}{more}", shown.join(", "))
}

/// Writes the supervised model, unchanged, to `out`.
fn write_supervised(r: &BootstrapRun) -> Result<(), BootstrapRunError> {
    let bytes = match &r.model {
        Some(p) => std::fs::read(p).map_err(|source| BootstrapRunError::Io { path: p.clone(), source })?,
        None => DEFAULT_MODEL.to_vec(),
    };
    std::fs::write(&r.out, bytes).map_err(|source| BootstrapRunError::Io { path: r.out.clone(), source })
}

/// Writes the pool's site memory, if counted, where the run says.
fn write_site_memory(
    r: &BootstrapRun,
    memory: Option<&SiteMemory>,
    say: &dyn Fn(&str),
) -> Result<(), BootstrapRunError> {
    let Some(m) = memory else { return Ok(()) };
    let path = r.site_memory_out.clone().unwrap_or_else(|| {
        let mut p = r.out.clone().into_os_string();
        p.push(".sitemem");
        PathBuf::from(p)
    });
    std::fs::write(&path, m.to_bytes()).map_err(|source| BootstrapRunError::Io { path: path.clone(), source })?;
    say(&format!(
        "site memory: {} host(s) -> {} (crawl runs start from it with --site-memory-from)",
        m.hosts(),
        path.display()
    ));
    Ok(())
}

/// The pool's pages in input order, each with its source; unreadable inputs and damaged records
/// go to `fail`; each page is also handed to `observe` with its site memory key (the manifest's
/// `site`, else its URL's host).
fn pool_pages<'a>(
    inputs: Vec<PoolInput>,
    grouper: &'a RefCell<SourceGrouper>,
    fail: &'a dyn Fn(String),
    observe: &'a dyn Fn(Option<String>, &[u8]),
) -> impl Iterator<Item = PoolPage> + 'a {
    inputs.into_iter().flat_map(move |item| -> Box<dyn Iterator<Item = PoolPage> + 'a> {
        match item {
            PoolInput::File { path, url, site } => match std::fs::read(&path) {
                Ok(html) => {
                    observe(site.clone().or_else(|| url.as_deref().and_then(site_memory::host_key)), &html);
                    let group = grouper.borrow_mut().group(url.as_deref(), site.as_deref(), &html);
                    Box::new(std::iter::once(PoolPage { group, html }))
                }
                Err(e) => {
                    fail(format!("{}: {e}", path.display()));
                    Box::new(std::iter::empty())
                }
            },
            PoolInput::Warc(path) => match sources::warc_events(&path) {
                Ok(events) => Box::new(events.filter_map(move |ev| match ev {
                    SourceEvent::Page(p) => {
                        observe(site_memory::host_key(&p.url), &p.body);
                        let group = grouper.borrow_mut().group(Some(&p.url), None, &p.body);
                        Some(PoolPage { group, html: p.body })
                    }
                    SourceEvent::Failed { message, .. } => {
                        fail(message);
                        None
                    }
                    SourceEvent::Skipped { .. } => None,
                })),
                Err(e) => {
                    fail(e.to_string());
                    Box::new(std::iter::empty())
                }
            },
        }
    })
}

/// "eval: pooled F1 …, per-source mean … [source F1, …]" of a model on gold pages.
fn score_by_source(
    model: &NbModel,
    base: &NbModel,
    entries: &[dataset::ManifestEntry],
    group_by: GroupBy,
    threads: usize,
) -> Result<String, rayon::ThreadPoolBuildError> {
    // As `pipeline extract --model` will read the written model: guarded by its layouts.
    let Ok(scorer) = guard::scorer_of(model.clone(), "bootstrap", |_| {
        Ok::<_, std::convert::Infallible>((base.clone(), "base".to_string()))
    });
    let extractor = Extractor::new(scorer.as_ref(), ExtractOptions::default());
    let (report, pages) = eval::evaluate(&extractor, entries, threads)?;
    let mut by_source: BTreeMap<String, Vec<&eval::metrics::PageMetrics>> = BTreeMap::new();
    for (p, e) in pages.iter().zip(entries) {
        let g = bootstrap::group_of(group_by, e.url.as_deref(), e.site.as_deref(), b"");
        by_source.entry(g).or_default().push(&p.metrics);
    }
    let f1: Vec<(String, f64)> =
        by_source.into_iter().map(|(g, m)| (g, eval::metrics::aggregate(m).shingle_f1.unwrap_or(0.0))).collect();
    let listed: Vec<String> = f1.iter().map(|(g, f)| format!("{g} {f:.3}")).collect();
    let mean = f1.iter().map(|(_, f)| f).sum::<f64>() / f1.len().max(1) as f64;
    Ok(format!(
        "eval: pooled F1 {:.3}, per-source mean {:.3} [{}]",
        report.overall.shingle_f1.unwrap_or(0.0),
        mean,
        listed.join(", ")
    ))
}
