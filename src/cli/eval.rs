//! `pipeline eval`: extract every page of manifests and print score.py's tables.

use std::io::Write;
use std::path::PathBuf;

use anyhow::Context;
use clap::Args;

use article_pipeline::dataset;
use article_pipeline::eval;
use article_pipeline::extract::Extractor;
use article_pipeline::site_memory::SiteMemoryOptions;

use super::{ExtractorArgs, Outcome};

#[derive(Debug, Args)]
pub struct EvalArgs {
    /// Dataset manifest(s) (JSON Lines: id, dataset, split, html, gold...).
    #[arg(long, required = true)]
    manifest: Vec<PathBuf>,
    /// Only pages of this split (default: all).
    #[arg(long)]
    split: Option<String>,
    /// Print the report as JSON.
    #[arg(long)]
    json: bool,
    /// Also write each prediction to DIR/<id>.txt (for ../shared/peers/score.py).
    #[arg(long)]
    out_dir: Option<PathBuf>,
    /// Also write per-page metrics as JSON Lines.
    #[arg(long)]
    per_page: Option<PathBuf>,
    /// Also report the block metrics of Gibson et al. 2007 (block P/R, document accuracy and
    /// P/R, contiguous vs non-contiguous gold); on by default for block scorers.
    #[arg(long)]
    block_metrics: bool,
    /// Also list the N pages of lowest shingle F1: the shape of each failure (nothing
    /// extracted, no overlap, mostly not article, article cut short), the start of what was
    /// chosen and the start of the gold.
    #[arg(long, value_name = "N")]
    worst: Option<usize>,
    /// Site memory (off unless `--site-memory-pages N`), in two passes: the first counts each
    /// site's blocks (manifest `site`, else the URL's host) over every page of the manifests,
    /// any split, unlabelled; the second extracts the selected pages with them.
    #[command(flatten)]
    site_memory: SiteMemoryOptions,
    /// The pages site memory counts, instead of every page of --manifest (say, the other
    /// years of the scored sites).
    #[arg(long, value_name = "MANIFEST")]
    site_memory_pool: Vec<PathBuf>,
    #[command(flatten)]
    extractor: ExtractorArgs,
}

pub fn exec(args: EvalArgs) -> anyhow::Result<Outcome> {
    let problems = args.site_memory.problems();
    anyhow::ensure!(problems.is_empty(), "{}", problems.join("; "));
    anyhow::ensure!(
        args.site_memory.from.is_none(),
        "eval counts its own pool (the manifests, or --site-memory-pool); --site-memory-from is for crawl runs"
    );
    let (scorer, options) = args.extractor.build()?;
    let extractor = Extractor::new(scorer.as_ref(), options);
    let entries = dataset::read_manifests(&args.manifest, args.split.as_deref())?;
    anyhow::ensure!(!entries.is_empty(), "no pages selected from {:?} (split {:?})", args.manifest, args.split);
    // Site memory counts every page of the manifests, any split, unlabelled.
    let site_pool = match (args.site_memory.enabled(), args.site_memory_pool.is_empty()) {
        (false, _) => Vec::new(),
        (true, true) => dataset::read_unlabelled(&args.manifest)?,
        (true, false) => dataset::read_unlabelled(&args.site_memory_pool)?,
    };
    let block_metrics = args.block_metrics
        || matches!(args.extractor.scorer.as_str(), "crf" | "memm" | "maxent" | "crf-mss" | "largest-block");
    let (mut report, pages) = eval::evaluate_with_site(
        &extractor,
        &entries,
        args.extractor.threads,
        block_metrics,
        args.site_memory.enabled().then_some(eval::EvalSite { options: &args.site_memory, pool: &site_pool }),
    )?;
    report.split = args.split.clone();
    if let Some(n) = args.worst {
        report.worst = eval::worst::worst(&pages, &entries, n);
    }
    if let Some(dir) = &args.out_dir {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create `{}`", dir.display()))?;
        for p in &pages {
            let path = eval::prediction_path(dir, &p.id);
            std::fs::write(&path, &p.text).with_context(|| format!("cannot write `{}`", path.display()))?;
        }
    }
    if let Some(path) = &args.per_page {
        let mut f = std::io::BufWriter::new(
            std::fs::File::create(path).with_context(|| format!("cannot create `{}`", path.display()))?,
        );
        for p in &pages {
            writeln!(f, "{}", serde_json::to_string(p)?)?;
        }
        f.flush()?;
    }
    for p in &pages {
        if let Some((_, msg)) = &p.error {
            eprintln!("error: {}: {msg}", p.id);
        }
    }
    let mut out = std::io::stdout().lock();
    if args.json {
        writeln!(out, "{}", serde_json::to_string_pretty(&report)?)?;
    } else {
        write!(out, "{}", eval::format_table(&report))?;
        if args.worst.is_some() {
            write!(out, "{}", eval::worst::format_worst(&report.worst))?;
        }
    }
    Ok(if report.failures.is_empty() { Outcome::Ok } else { Outcome::SomeFailed })
}
