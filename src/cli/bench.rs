//! `pipeline bench`: MB/s of several scorers over the same pages, alternating in one run.

use std::io::Write;
use std::path::PathBuf;

use clap::Args;

use article_pipeline::dataset;
use article_pipeline::eval::bench::{self, BenchPage};
use article_pipeline::extract::Extractor;
use article_pipeline::methods;

use super::{ExtractorArgs, Outcome};

#[derive(Debug, Args)]
pub struct BenchArgs {
    /// Dataset manifest(s) whose pages are extracted (gold text is not needed).
    #[arg(long, required = true)]
    manifest: Vec<PathBuf>,
    /// Only pages of this split (default: all).
    #[arg(long)]
    split: Option<String>,
    /// Scorers timed beside --scorer, each with its defaults and the same extraction settings
    /// (comma-separated; "none" for --scorer alone).
    #[arg(long, value_delimiter = ',', default_value = "simple")]
    against: Vec<String>,
    /// Rounds; each extracts every page once with every scorer.
    #[arg(long, default_value_t = 4)]
    rounds: usize,
    /// Also time --scorer without reading metadata (`--no-metadata`), alternating with the
    /// others in the same run: the cost of the metadata pass.
    #[arg(long)]
    metadata_cost: bool,
    /// Print the report as JSON.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    extractor: ExtractorArgs,
}

pub fn exec(args: BenchArgs) -> anyhow::Result<Outcome> {
    anyhow::ensure!(args.extractor.threads <= 1, "bench measures one thread; --threads must be 0 or 1");
    anyhow::ensure!(args.rounds > 0, "--rounds must be at least 1");
    let against: Vec<&str> = args.against.iter().map(String::as_str).filter(|s| *s != "none").collect();
    for a in &against {
        anyhow::ensure!(
            methods::NAMES.contains(a),
            "unknown scorer `{a}` in --against (one of: {})",
            methods::NAMES.join(", ")
        );
    }
    let (scorer, options) = args.extractor.build()?;
    let others: Vec<Box<dyn article_pipeline::scoring::Scorer>> =
        against.iter().map(|a| methods::build(a, None, None, None)).collect::<Result<_, _>>()?;
    let mut names = vec![args.extractor.scorer.clone()];
    names.extend(against.iter().map(|s| s.to_string()));
    let mut extractors: Vec<Extractor<'_>> = std::iter::once(scorer.as_ref())
        .chain(others.iter().map(|s| s.as_ref()))
        .map(|s| Extractor::new(s, options.clone()))
        .collect();
    if args.metadata_cost {
        anyhow::ensure!(options.metadata, "--metadata-cost compares with --no-metadata; leave metadata on");
        let mut without = options.clone();
        without.metadata = false;
        extractors.push(Extractor::new(scorer.as_ref(), without));
        names.push(format!("{} --no-metadata", args.extractor.scorer));
    }
    let cases: Vec<(&str, &Extractor<'_>)> = names.iter().map(String::as_str).zip(extractors.iter()).collect();

    let entries = dataset::read_manifests(&args.manifest, args.split.as_deref())?;
    anyhow::ensure!(!entries.is_empty(), "no pages selected from {:?} (split {:?})", args.manifest, args.split);
    let pages: Vec<BenchPage> = entries.iter().map(|e| BenchPage { id: e.id.clone(), path: e.path.clone() }).collect();

    let report = bench::bench(&pages, &cases, args.rounds, |r| {
        eprintln!("round {}: {:<10} {:>8.1} MB/s", r.round + 1, names[r.extractor], r.mb_s);
    });
    for (id, scorer, msg) in &report.failures {
        eprintln!("error: {id} ({scorer}): {msg}");
    }
    let peak_rss_mb = bench::peak_rss_mb();
    let mut out = std::io::stdout().lock();
    if args.json {
        let mut v = serde_json::to_value(&report)?;
        v["peak_rss_mb"] = serde_json::json!(peak_rss_mb);
        writeln!(out, "{}", serde_json::to_string_pretty(&v)?)?;
    } else {
        write!(out, "{}", bench::format_table(&report))?;
        if let Some(mb) = peak_rss_mb {
            writeln!(out, "peak RSS of the process: {mb:.0} MB")?;
        }
    }
    Ok(if report.failures.is_empty() { Outcome::Ok } else { Outcome::SomeFailed })
}
