//! `pipeline bootstrap`: adapt a Naive Bayes model to the sites of an unlabelled crawl
//! (Pasternack & Roth §6.2.4). Inputs are WARC files, folders of pages or manifests (gold text,
//! if any, is ignored); per-iteration logs show convergence, and `--eval-manifest` scores each
//! iteration's model against gold pages, pooled and per source.

use std::path::PathBuf;

use anyhow::Context;
use clap::Args;

use article_pipeline::features::FeatureSet;
use article_pipeline::methods::nb::bootstrap::{BootstrapOptions, GroupBy};
use article_pipeline::pipeline::bootstrap_run::{self, BootstrapRun};
use article_pipeline::site_memory::SiteMemoryOptions;

use super::Outcome;

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
    /// Self-training iterations of Pasternack & Roth §6.2.4 (the paper: 10). Default 0: the
    /// supervised model is kept and the run writes the pool's site memory only, since
    /// self-training lowers F1 on big9 and dragnet while site memory raises it (README).
    #[arg(long, default_value_t = 0)]
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
    group_by: GroupBy,
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
    /// Adapt without the label-free check. By default one page in 5 of each source (at most 20)
    /// is held out of self-training, and the adapted model serves a source only if, on its
    /// held-out pages, it keeps 95 % of the supervised spans' words that do not repeat across
    /// the source's pages, and drops more of the site's text (stretches of repeated words) and
    /// finds more article text than it adds and loses; the pages of the other sources' layouts
    /// keep the supervised model. With this flag every source is adapted, as in the paper.
    #[arg(long)]
    no_check: bool,
    /// Do not record the pool's layouts in the adapted model: it then scores every page, of
    /// any layout, as in the paper (by default a page whose layout matches none of the adapted
    /// sources' is scored by the base model). Without the guard, the check keeps the adapted
    /// model only if every source shows a gain.
    #[arg(long)]
    no_guard: bool,
    /// Bias of the adapted model's scores (default: the base model's).
    #[arg(long, allow_hyphen_values = true)]
    bias: Option<f64>,
    /// Score every iteration's model against these manifests (pooled and per source), guarded
    /// by the pool's layouts as `--model` reads it.
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
    /// Where the pool's site memory is written (default: --out with `.sitemem` added).
    #[arg(long)]
    site_memory_out: Option<PathBuf>,
    #[command(flatten)]
    site_memory: SiteMemoryOptions,
}

pub fn exec(args: BootstrapArgs) -> anyhow::Result<Outcome> {
    let problems = args.site_memory.problems();
    anyhow::ensure!(problems.is_empty(), "{}", problems.join("; "));
    let features = match &args.features {
        Some(f) => Some(FeatureSet::parse(f).map_err(anyhow::Error::msg).context("--features")?),
        None => None,
    };
    let run = BootstrapRun {
        model: args.model,
        unlabeled: args.unlabeled,
        split: args.split,
        out: args.out,
        group_by: args.group_by,
        template_similarity: args.template_similarity,
        options: BootstrapOptions {
            iterations: args.iterations,
            keep: args.keep,
            window: args.window,
            cutoff: args.cutoff,
            boost: args.boost,
            min_pages: args.min_pages,
            fallback: args.fallback,
            check: !args.no_check,
            guard: !args.no_guard,
            ..BootstrapOptions::default()
        },
        features,
        bias: args.bias,
        eval_manifests: args.eval_manifest,
        eval_split: args.eval_split,
        cache_dir: args.cache_dir,
        threads: args.threads,
        site_memory: args.site_memory,
        site_memory_out: args.site_memory_out,
    };
    let summary = bootstrap_run::run(&run, &mut |line| eprintln!("{line}"))?;
    Ok(if summary.failed > 0 { Outcome::SomeFailed } else { Outcome::Ok })
}
