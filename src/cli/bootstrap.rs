//! `pipeline bootstrap`: adapt a Naive Bayes model to the sites of an unlabelled crawl
//! (Pasternack & Roth §6.2.4). Inputs are WARC files, folders of pages or manifests (gold text,
//! if any, is ignored); per-iteration logs show convergence, and `--eval-manifest` scores each
//! iteration's model against gold pages, pooled and per source.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::rc::Rc;

use anyhow::Context;
use clap::{Args, ValueEnum};

use article_pipeline::dataset;
use article_pipeline::eval;
use article_pipeline::extract::{ExtractOptions, Extractor};
use article_pipeline::features::FeatureSet;
use article_pipeline::methods::nb::DEFAULT_MODEL;
use article_pipeline::methods::nb::bootstrap::{self, BootstrapOptions, GroupBy, PoolPage, SourceGrouper};
use article_pipeline::methods::nb::model::{NbModel, NbScorer};
use article_pipeline::scoring::Scorer;
use article_pipeline::sources::{self, SourceEvent};

use super::Outcome;

#[derive(Debug, Clone, Copy, ValueEnum)]
enum Group {
    /// The URL's host (else <link rel=canonical>, og:site_name, most frequent link host).
    Host,
    /// The host, split into templates by the pages' id/class words (a host crawled across
    /// redesigns: each template is its own source).
    HostTemplate,
    /// A manifest's `site` field.
    Site,
    /// One source for all pages.
    None,
}

#[derive(Debug, Args)]
pub struct BootstrapArgs {
    /// The supervised model to start from (default: the built-in model).
    #[arg(long)]
    model: Option<PathBuf>,
    /// Unlabelled pages: WARC files, folders of .html files, or manifests (.jsonl).
    #[arg(long, required = true, num_args = 1..)]
    unlabeled: Vec<PathBuf>,
    /// Only manifest pages of this split.
    #[arg(long)]
    split: Option<String>,
    /// Where to write the adapted model.
    #[arg(long)]
    out: PathBuf,
    #[arg(long, default_value_t = 10)]
    iterations: usize,
    /// Share of each source's pages, most confident first, put into L.
    #[arg(long, default_value_t = 0.6)]
    keep: f64,
    /// Confidence window radius w.
    #[arg(long, default_value_t = 10)]
    window: usize,
    /// Importance distance cutoff d.
    #[arg(long, default_value_t = 64)]
    cutoff: usize,
    /// Importance boost c: scores are (p - 0.5)(m_h c + 1).
    #[arg(long, default_value_t = 24.0)]
    boost: f64,
    /// What a source is.
    #[arg(long, value_enum, default_value = "host")]
    group_by: Group,
    /// With --group-by host-template: Jaccard similarity of two pages' id/class words above
    /// which they share a template.
    #[arg(long, default_value_t = 0.5)]
    template_similarity: f64,
    /// Sources with fewer pages are not adapted (and the run refuses if none has enough).
    #[arg(long, default_value_t = 10)]
    min_pages: usize,
    /// Features of the adapted model. The paper uses trigrams only; with pools of tens of
    /// pages per source that collapses (most article trigrams are seen once and pruned), so the
    /// default keeps the base model's features (README: big9 measurements).
    #[arg(long)]
    features: Option<String>,
    /// Add this weight × the supervised model's evidence to the adapted model's (0 = the
    /// paper's stand-alone adapted model).
    #[arg(long, default_value_t = 0.0)]
    fallback: f64,
    /// Bias of the adapted model's scores (default: the base model's).
    #[arg(long, allow_hyphen_values = true)]
    bias: Option<f64>,
    /// Score every iteration's model against these manifests (pooled and per source).
    #[arg(long)]
    eval_manifest: Vec<PathBuf>,
    #[arg(long, default_value = "dev")]
    eval_split: String,
    /// Folder for the token cache (default: next to --out).
    #[arg(long)]
    cache_dir: Option<PathBuf>,
    /// Evaluation threads (0 = one per core).
    #[arg(long, default_value_t = 0)]
    threads: usize,
}

/// The unlabelled inputs, in order.
fn pool(args: &BootstrapArgs) -> anyhow::Result<Vec<PoolInput>> {
    let mut out = Vec::new();
    for input in &args.unlabeled {
        let name = input.display().to_string();
        let items = if input.is_dir() {
            let mut files: Vec<PathBuf> = std::fs::read_dir(input)
                .with_context(|| format!("cannot read `{name}`"))?
                .flatten()
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|e| e == "html" || e == "htm"))
                .collect();
            files.sort();
            files.into_iter().map(|p| PoolInput::File { path: p, url: None, site: None }).collect()
        } else if name.ends_with(".jsonl") {
            dataset::read_manifest(input, args.split.as_deref())?
                .into_iter()
                .map(|e| PoolInput::File { path: e.path.clone(), url: e.url.clone(), site: e.site.clone() })
                .collect()
        } else {
            vec![PoolInput::Warc(input.clone())]
        };
        out.extend(items);
    }
    Ok(out)
}

enum PoolInput {
    File { path: PathBuf, url: Option<String>, site: Option<String> },
    Warc(PathBuf),
}

pub fn exec(args: BootstrapArgs) -> anyhow::Result<Outcome> {
    anyhow::ensure!(args.keep > 0.0 && args.keep <= 1.0, "--keep must be within (0, 1]");
    anyhow::ensure!(args.window > 0 && args.cutoff > 0, "--window and --cutoff must be positive");
    anyhow::ensure!(args.boost >= 0.0, "--boost must not be negative");
    anyhow::ensure!((0.0..=1.0).contains(&args.template_similarity), "--template-similarity must be within [0, 1]");
    let (base, base_id) = match &args.model {
        Some(p) => {
            let bytes = std::fs::read(p).with_context(|| format!("cannot read `{}`", p.display()))?;
            (NbModel::from_bytes(&bytes).with_context(|| format!("`{}`", p.display()))?, p.display().to_string())
        }
        None => (NbModel::from_bytes(DEFAULT_MODEL).context("built-in model")?, "default".to_string()),
    };
    let group_by = match args.group_by {
        Group::Host => GroupBy::Host,
        Group::HostTemplate => GroupBy::HostTemplate,
        Group::Site => GroupBy::Site,
        Group::None => GroupBy::None,
    };
    let inputs = pool(&args)?;
    let grouper = Rc::new(RefCell::new(SourceGrouper::new(group_by, args.template_similarity)));
    let mut failed = 0usize;
    let pages = inputs.into_iter().flat_map(|item| -> Box<dyn Iterator<Item = PoolPage>> {
        match item {
            PoolInput::File { path, url, site } => match std::fs::read(&path) {
                Ok(html) => {
                    let group = grouper.borrow_mut().group(url.as_deref(), site.as_deref(), &html);
                    Box::new(std::iter::once(PoolPage { group, html }))
                }
                Err(e) => {
                    eprintln!("error: {}: {e}", path.display());
                    failed += 1;
                    Box::new(std::iter::empty())
                }
            },
            PoolInput::Warc(path) => match sources::warc_events(&path) {
                Ok(events) => {
                    let grouper = Rc::clone(&grouper);
                    Box::new(events.filter_map(move |ev| match ev {
                        SourceEvent::Page(p) => {
                            let group = grouper.borrow_mut().group(Some(&p.url), None, &p.body);
                            Some(PoolPage { group, html: p.body })
                        }
                        _ => None,
                    }))
                }
                Err(e) => {
                    eprintln!("error: {e}");
                    Box::new(std::iter::empty())
                }
            },
        }
    });
    let features = match &args.features {
        Some(f) => FeatureSet::parse(f).map_err(anyhow::Error::msg).context("--features")?,
        None => base.header.features,
    };
    let cache_dir = args.cache_dir.clone().unwrap_or_else(|| args.out.parent().unwrap_or(Path::new(".")).to_path_buf());
    std::fs::create_dir_all(&cache_dir).with_context(|| format!("cannot create `{}`", cache_dir.display()))?;
    let cache_path = cache_dir.join(format!(".bootstrap-cache-{}.zst", std::process::id()));
    let t = std::time::Instant::now();
    let cache = bootstrap::build_cache(pages, base.header.features, args.min_pages, &cache_path);
    let cache = match cache {
        Ok(c) => c,
        Err(e) => {
            let _ = std::fs::remove_file(&cache_path);
            return Err(e.into());
        }
    };
    let mut sizes: BTreeMap<&str, usize> = BTreeMap::new();
    for &g in &cache.groups {
        *sizes.entry(cache.group_names[g as usize].as_str()).or_default() += 1;
    }
    let small: Vec<String> =
        sizes.iter().filter(|(_, n)| **n < args.min_pages).map(|(g, n)| format!("{g} ({n})")).collect();
    eprintln!(
        "pool: {} pages from {} source(s) cached in {:.1} s ({} unreadable or unparsable)",
        cache.groups.len(),
        sizes.len(),
        t.elapsed().as_secs_f64(),
        cache.skipped + failed
    );
    if !small.is_empty() {
        eprintln!(
            "not adapted ({} source(s) with fewer than --min-pages {} pages): {}",
            small.len(),
            args.min_pages,
            small.iter().take(20).cloned().collect::<Vec<_>>().join(", ") + if small.len() > 20 { " …" } else { "" }
        );
    }
    let opts = BootstrapOptions {
        iterations: args.iterations,
        keep: args.keep,
        window: args.window,
        cutoff: args.cutoff,
        boost: args.boost,
        min_pages: args.min_pages,
        features,
        // The base model's bias (tuned with its tag bias and clamp, which the adapted model
        // inherits) unless given: big9 per-site mean after one iteration 0.928 with it, 0.903
        // with 0 (models/README.md).
        bias: args.bias.unwrap_or(base.header.bias),
        min_count: 2,
        fallback: args.fallback,
    };
    let eval_entries = if args.eval_manifest.is_empty() {
        Vec::new()
    } else {
        dataset::read_manifests(&args.eval_manifest, Some(&args.eval_split))?
    };
    let evaluate = |model: &NbModel| -> anyhow::Result<String> {
        let scorer = NbScorer::new(model.clone(), "bootstrap");
        let extractor = Extractor::new(&scorer as &dyn Scorer, ExtractOptions::default());
        let (report, pages) = eval::evaluate(&extractor, &eval_entries, args.threads)?;
        let mut by_site: BTreeMap<String, Vec<&eval::metrics::PageMetrics>> = BTreeMap::new();
        for (p, e) in pages.iter().zip(&eval_entries) {
            let g = bootstrap::group_of(group_by, e.url.as_deref(), e.site.as_deref(), b"");
            by_site.entry(g).or_default().push(&p.metrics);
        }
        let site_f1: Vec<(String, f64)> =
            by_site.into_iter().map(|(g, m)| (g, eval::metrics::aggregate(m).shingle_f1.unwrap_or(0.0))).collect();
        let sites: Vec<String> = site_f1.iter().map(|(g, f)| format!("{g} {f:.3}")).collect();
        let mean_site = site_f1.iter().map(|(_, f)| f).sum::<f64>() / site_f1.len().max(1) as f64;
        Ok(format!(
            "eval: pooled F1 {:.3}, per-source mean {:.3} [{}]",
            report.overall.shingle_f1.unwrap_or(0.0),
            mean_site,
            sites.join(", ")
        ))
    };
    if !eval_entries.is_empty() {
        eprintln!("iteration 0 (supervised model) {}", evaluate(&base)?);
    }
    let result = bootstrap::bootstrap(&base, &base_id, &cache, &opts, |log, model| {
        let mut line = format!(
            "iteration {}: {} pages, |L| = {}, mean confidence {:.4}, {} predictions changed, {:.0} pages/s, {} features",
            log.iteration, log.pages, log.in_l, log.mean_confidence, log.changed, log.pages_per_s, log.features
        );
        if !eval_entries.is_empty() && log.iteration < opts.iterations {
            match evaluate(model) {
                Ok(e) => line = format!("{line}\n  after retraining: {e}"),
                Err(e) => line = format!("{line}\n  eval failed: {e}"),
            }
        }
        eprintln!("{line}");
    });
    let _ = std::fs::remove_file(&cache_path);
    let (model, _) = result?;
    std::fs::write(&args.out, model.to_bytes()).with_context(|| format!("cannot write `{}`", args.out.display()))?;
    eprintln!(
        "adapted model: {} features, {} importance weights -> {}",
        model.len(),
        model.header.bootstrap.as_ref().map_or(0, |b| b.importance_entries),
        args.out.display()
    );
    Ok(if failed > 0 { Outcome::SomeFailed } else { Outcome::Ok })
}
