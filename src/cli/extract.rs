//! `pipeline extract`: pages or a manifest in, article text (or JSON) out.

use std::io::{Read, Write};
use std::path::PathBuf;
use std::time::Instant;

use anyhow::Context;
use clap::Args;
use rayon::prelude::*;
use serde_json::json;

use article_pipeline::dataset;
use article_pipeline::extract::Extractor;

use super::{ExtractorArgs, Outcome};

#[derive(Debug, Args)]
pub struct ExtractArgs {
    /// HTML files to extract; `-` reads standard input.
    #[arg(required_unless_present = "manifest")]
    pages: Vec<PathBuf>,
    /// Print one JSON object per page (path, title, text, span, score, scorer).
    #[arg(long)]
    json: bool,
    /// Extract every page of this dataset manifest (needs --out-dir).
    #[arg(long, conflicts_with = "pages", requires = "out_dir")]
    manifest: Vec<PathBuf>,
    /// Only manifest pages of this split.
    #[arg(long, requires = "manifest")]
    split: Option<String>,
    /// Write `<id>.txt` per manifest page into this folder.
    #[arg(long)]
    out_dir: Option<PathBuf>,
    /// The page's URL (one page only), as a crawl passes it: dates in its path count, and
    /// relative canonical URLs resolve against it.
    #[arg(long, conflicts_with = "manifest")]
    url: Option<String>,
    #[command(flatten)]
    extractor: ExtractorArgs,
}

pub fn exec(args: ExtractArgs) -> anyhow::Result<Outcome> {
    let (scorer, options) = args.extractor.build()?;
    let extractor = Extractor::new(scorer.as_ref(), options);
    if args.url.is_some() && args.pages.len() != 1 {
        anyhow::bail!("--url names one page: give exactly one page with it");
    }
    if !args.manifest.is_empty() {
        return extract_manifest(&args, &extractor);
    }
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let mut failed = 0usize;
    let many = args.pages.len() > 1;
    for path in &args.pages {
        let name = path.display().to_string();
        let bytes = if name == "-" {
            let mut b = Vec::new();
            std::io::stdin().read_to_end(&mut b).map(|_| b)
        } else {
            std::fs::read(path)
        };
        let result =
            bytes.map_err(|e| e.to_string()).and_then(|b| extractor.extract(&b, None).map_err(|e| e.to_string()));
        match result {
            Ok(x) if args.json => {
                // Without --url a file has no URL: dates come from the page alone.
                let cx = article_pipeline::metadata::Context {
                    url: args.url.as_deref().unwrap_or(""),
                    ..Default::default()
                };
                let (meta, best_title) = x.article_meta(cx).unwrap_or_default();
                let v = json!({
                    "path": name, "url": args.url, "title": best_title.or_else(|| x.title.clone()), "html_title": x.title,
                    "text": x.text, "span": x.span, "byte_span": x.byte_span,
                    "score": x.score, "tokens": x.tokens, "encoding": x.encoding, "scorer": x.scorer,
                    "model": scorer.model_id(), "structure": x.structure, "metadata": meta,
                });
                writeln!(out, "{v}")?;
            }
            Ok(x) => {
                if many {
                    writeln!(out, "==> {name} <==")?;
                }
                writeln!(out, "{}", x.text)?;
            }
            Err(e) => {
                failed += 1;
                out.flush()?;
                eprintln!("error: {name}: {e}");
            }
        }
    }
    out.flush()?;
    Ok(if failed > 0 { Outcome::SomeFailed } else { Outcome::Ok })
}

fn extract_manifest(args: &ExtractArgs, extractor: &Extractor<'_>) -> anyhow::Result<Outcome> {
    let out_dir = args.out_dir.as_ref().context("--manifest needs --out-dir")?;
    let entries = dataset::read_manifests(&args.manifest, args.split.as_deref())?;
    std::fs::create_dir_all(out_dir).with_context(|| format!("cannot create `{}`", out_dir.display()))?;
    let pool = rayon::ThreadPoolBuilder::new().num_threads(args.extractor.threads).build()?;
    let t = Instant::now();
    let results: Vec<Result<usize, String>> = pool.install(|| {
        entries
            .par_iter()
            .map(|e| {
                let bytes = std::fs::read(&e.path).map_err(|err| format!("{}: {err}", e.path.display()))?;
                let x = extractor.extract(&bytes, None).map_err(|err| format!("{}: {err}", e.path.display()))?;
                let dest = out_dir.join(format!("{}.txt", e.id));
                std::fs::write(&dest, x.text.as_bytes()).map_err(|err| format!("{}: {err}", dest.display()))?;
                Ok(bytes.len())
            })
            .collect()
    });
    let secs = t.elapsed().as_secs_f64();
    let mut failed = 0;
    let mut bytes = 0;
    for r in &results {
        match r {
            Ok(n) => bytes += n,
            Err(e) => {
                failed += 1;
                eprintln!("error: {e}");
            }
        }
    }
    eprintln!(
        "{} pages, {} failed, {:.1} MB in {:.2} s ({:.1} MB/s wall, {} threads) -> {}",
        results.len(),
        failed,
        bytes as f64 / 1e6,
        secs,
        bytes as f64 / 1e6 / secs.max(1e-9),
        pool.current_num_threads(),
        out_dir.display()
    );
    Ok(if failed > 0 { Outcome::SomeFailed } else { Outcome::Ok })
}
