//! Evaluation: extract every page of dataset manifests and score the text against the gold
//! with the metrics of `../shared/peers/score.py` ([`metrics`]), per dataset and pooled, with
//! throughput and failures by reason.
//!
//! A page that cannot be read or extracted counts as an empty prediction, exactly as a missing
//! prediction file does in score.py, and is also listed under its failure reason.

pub mod bench;
pub mod blocks;
pub mod chooser;
pub mod lcs;
pub mod meta;
pub mod metrics;
pub mod tune;
pub mod units;
pub mod worst;
pub use crate::gold::ziegler;

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use rayon::prelude::*;
use serde::Serialize;

use crate::dataset::ManifestEntry;
use crate::extract::Extractor;
use crate::site_memory::{self, HostView, SiteLookup, SiteMemory, SiteMemoryOptions};
use metrics::{Aggregate, PageMetrics};

/// The outcome of one page.
#[derive(Debug, Clone, Serialize)]
pub struct PageResult {
    pub id: String,
    pub dataset: String,
    /// Kind of page, where the manifest (or its provenance file) says.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub page_type: Option<String>,
    #[serde(flatten)]
    pub metrics: PageMetrics,
    /// Failure reason and message, when the page could not be extracted.
    pub error: Option<(String, String)>,
    pub html_bytes: usize,
    /// Extraction time (reading the file excluded).
    #[serde(skip)]
    pub elapsed: Duration,
    /// The extracted text (not serialised; written to `--out-dir` by the CLI).
    #[serde(skip)]
    pub text: String,
    /// Block outcome (Gibson et al. 2007), when block metrics were asked for and the page has
    /// block labels.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub blocks: Option<blocks::PageBlocks>,
    /// Unit confusion counts, for scorers that label structure ([`units`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub units: Option<units::PageUnits>,
    /// Metadata against the gold date, title and language, where the manifest has them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub meta: Option<meta::PageMeta>,
}

/// Throughput of the extraction itself.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Throughput {
    pub pages: usize,
    pub html_bytes: usize,
    pub threads: usize,
    /// Wall-clock time of the whole run, reading files included.
    pub wall_seconds: f64,
    /// Sum over pages of extraction time.
    pub extract_seconds: f64,
    /// MB (10^6 bytes) of HTML per second of extraction time: the single-thread speed.
    pub mb_per_s_per_thread: f64,
    pub pages_per_s_per_thread: f64,
    /// MB of HTML per wall-clock second with all threads.
    pub mb_per_s_wall: f64,
}

/// Every table of an evaluation run.
#[derive(Debug, Clone, Serialize)]
pub struct EvalReport {
    pub scorer: String,
    pub split: Option<String>,
    pub datasets: BTreeMap<String, Aggregate>,
    pub overall: Aggregate,
    /// The same metrics per kind of page (wcxb's `page_type`), for the pages that have one.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub page_types: BTreeMap<String, Aggregate>,
    pub throughput: Throughput,
    /// Failed pages by reason.
    pub failures: BTreeMap<String, usize>,
    /// Block and document metrics, when asked for ([`evaluate_with_blocks`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub blocks: Option<blocks::BlockReport>,
    /// Per-class unit P/R/F of structure-labelling scorers ([`units`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub units: Option<units::UnitReport>,
    /// Dates, titles and language against the manifests' gold ([`meta`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub meta: Option<meta::MetaReport>,
    /// The pages of lowest F1 with the shape of their failure (`pipeline eval --worst N`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub worst: Vec<worst::WorstPage>,
}

/// Extracts and scores every entry with `threads` workers (0 = one per core).
pub fn evaluate(
    extractor: &Extractor<'_>,
    entries: &[ManifestEntry],
    threads: usize,
) -> Result<(EvalReport, Vec<PageResult>), rayon::ThreadPoolBuildError> {
    evaluate_with_blocks(extractor, entries, threads, false)
}

/// [`evaluate`], plus the block metrics of [`blocks`] when `block_metrics` is set (an extra
/// alignment per page, outside the timed extraction).
pub fn evaluate_with_blocks(
    extractor: &Extractor<'_>,
    entries: &[ManifestEntry],
    threads: usize,
    block_metrics: bool,
) -> Result<(EvalReport, Vec<PageResult>), rayon::ThreadPoolBuildError> {
    evaluate_with_site(extractor, entries, threads, block_metrics, None)
}

/// Site memory for [`evaluate_with_site`]: its options, and the pages it counts (the scored
/// pages among them: each page is judged with its own blocks taken out).
pub struct EvalSite<'a> {
    pub options: &'a SiteMemoryOptions,
    pub pool: &'a [ManifestEntry],
}

/// The key a dataset page's site memory is kept under: its manifest's `site`, else its URL's
/// host.
pub fn site_key(entry: &ManifestEntry) -> Option<String> {
    entry.site.clone().or_else(|| entry.url.as_deref().and_then(site_memory::host_key))
}

/// [`evaluate_with_blocks`], with site memory when `site` is enabled: two passes, as a WARC
/// run with site memory in two passes: the first counts the blocks of every page of the pool
/// per site ([`site_key`]), unlabelled; the second extracts each scored page with its site's
/// counts, its own blocks taken out.
pub fn evaluate_with_site(
    extractor: &Extractor<'_>,
    entries: &[ManifestEntry],
    threads: usize,
    block_metrics: bool,
    site: Option<EvalSite<'_>>,
) -> Result<(EvalReport, Vec<PageResult>), rayon::ThreadPoolBuildError> {
    let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build()?;
    let memory = site.filter(|s| s.options.enabled()).map(|EvalSite { options: o, pool: counted }| {
        let mut m = SiteMemory::new(o.clone());
        // Each pool page's host and template slot: it is judged under the template it was
        // counted in.
        let mut counted_in = HashMap::new();
        // Tokenized on the pool's threads a batch at a time and counted in order, as a WARC
        // run's first pass: the block hashes of a whole pool held at once were 14 MB of the
        // peak on aeb + wcxb.
        for batch in counted.chunks(site_memory::FIRST_PASS_BATCH_PAGES) {
            let blocks: Vec<Option<(String, site_memory::PageBlocks)>> = pool.install(|| {
                batch
                    .par_iter()
                    .map(|e| {
                        let key = site_key(e)?;
                        let bytes = std::fs::read(&e.path).ok()?;
                        Some((key, site_memory::page_blocks(&bytes, None, extractor.options().lenient_raw_text)?))
                    })
                    .collect()
            });
            for (e, b) in batch.iter().zip(blocks) {
                if let Some((key, b)) = b {
                    let slot = m.observe(&key, &b.sketch, &b.hashes);
                    counted_in.insert(e.id.as_str(), (key, slot));
                }
            }
        }
        (m, counted_in)
    });
    let wall = Instant::now();
    // Every page is extracted first and scored after, as the peers' harness runs them
    // (`run_peers.py` times each extraction back to back; `score.py` runs later): scored in
    // between, the alignments and term counts of the metrics evicted the model's weight
    // table and the word memo from the cache before every page.
    let mut pages: Vec<PageResult> = pool.install(|| {
        entries
            .par_iter()
            .map(|e| {
                // A page of the pool is in the counts: judge it by its template, without its
                // own blocks. Another page is judged by the template its layout matches.
                // A page whose host has fewer other pages counted than site memory needs can
                // have no furniture: it is extracted without the memory, which spares hashing
                // its blocks (the counts are complete already, unlike a crawl's). Output is
                // the same; on aeb + wcxb dev, where hosts seldom repeat, that was 11 % of the
                // extraction time.
                let site = memory.as_ref().and_then(|(m, counted_in)| {
                    let enough = |host: &str, own: u32| m.pages(host).saturating_sub(own) >= m.options().min_pages;
                    let lookup: Box<dyn SiteLookup> = match counted_in.get(e.id.as_str()) {
                        Some((host, slot)) => {
                            if !enough(host, 1) {
                                return None;
                            }
                            let view = HostView::new(m.snapshot_counted(host, *slot), true);
                            Box::new(move |_: &[u64]| view.clone())
                        }
                        None => {
                            let host = site_key(e)?;
                            if !enough(&host, 0) {
                                return None;
                            }
                            Box::new(move |sketch: &[u64]| HostView::new(m.snapshot(&host, sketch), false))
                        }
                    };
                    Some((lookup, m.options()))
                });
                evaluate_page(extractor, e, block_metrics, site.as_ref().map(|(l, o)| (&**l as &dyn SiteLookup, *o)))
            })
            .collect()
    });
    pool.install(|| {
        pages
            .par_iter_mut()
            .zip(entries.par_iter())
            .for_each(|(p, e)| p.metrics = metrics::score_page(&e.gold, &p.text));
    });
    let wall = wall.elapsed();
    let mut r = report(extractor.scorer().model_id(), None, &pages, pool.current_num_threads(), wall);
    if block_metrics {
        r.blocks = Some(blocks::report(pages.iter().map(|p| p.blocks.as_ref())));
    }
    r.meta = meta::report(pages.iter().filter_map(|p| Some((p.dataset.as_str(), p.meta.as_ref()?))));
    if pages.iter().any(|p| p.units.is_some()) {
        r.units = Some(units::report(pages.iter().filter_map(|p| Some((p.dataset.as_str(), p.units.as_ref()?)))));
    }
    Ok((r, pages))
}

fn evaluate_page(
    extractor: &Extractor<'_>,
    entry: &ManifestEntry,
    block_metrics: bool,
    site: Option<(&dyn SiteLookup, &SiteMemoryOptions)>,
) -> PageResult {
    let mut page_blocks = None;
    let mut page_units = None;
    let mut page_meta = None;
    let dataset = entry.dataset_name().to_string();
    let (text, error, html_bytes, elapsed) = match std::fs::read(&entry.path) {
        Err(e) => (
            String::new(),
            Some(("unreadable".to_string(), format!("{}: {e}", entry.path.display()))),
            0,
            Duration::ZERO,
        ),
        Ok(bytes) => {
            let t = Instant::now();
            let r = match site {
                None => extractor.extract(&bytes, None),
                Some((view, o)) => {
                    let mut p = extractor.page_with_size_hint(None, bytes.len());
                    p.write(&bytes).and_then(|()| p.end_with_site(view, o))
                }
            };
            let elapsed = t.elapsed();
            if block_metrics {
                let text = r.as_ref().map_or("", |x| x.text.as_str());
                page_blocks = blocks::page_blocks(&bytes, entry.gold.text.as_deref().unwrap_or(""), text);
            }
            if let Some(st) = r.as_ref().ok().and_then(|x| x.structure.as_ref()) {
                page_units = units::page_units(&bytes, &entry.gold, &st.unit_classes);
            }
            if let Ok(x) = &r {
                page_meta = page_metadata(entry, x);
            }
            match r {
                Ok(x) => (x.text, None, bytes.len(), elapsed),
                Err(e) => (
                    String::new(),
                    Some((e.reason().to_string(), format!("{}: {e}", entry.path.display()))),
                    bytes.len(),
                    elapsed,
                ),
            }
        }
    };
    PageResult {
        id: entry.id.clone(),
        dataset,
        page_type: entry.page_type.clone(),
        // Scored once every page is extracted ([`evaluate_with_site`]).
        metrics: PageMetrics::default(),
        error,
        html_bytes,
        elapsed,
        text,
        blocks: page_blocks,
        units: page_units,
        meta: page_meta,
    }
}

/// The page's metadata scored against what its manifest line has gold for.
fn page_metadata(entry: &crate::dataset::ManifestEntry, x: &crate::extract::Extraction) -> Option<meta::PageMeta> {
    let cx = crate::metadata::Context { url: entry.url.as_deref().unwrap_or(""), ..Default::default() };
    let (m, title) = x.article_meta(cx)?;
    let gold_words = entry.gold.text.as_deref().map_or(0, |t| t.split_whitespace().count());
    let p = meta::PageMeta {
        date: entry.gold.date.clone().map(|gold| {
            let got = m.published.as_deref().and_then(crate::metadata::dates::parse).map(|d| d.day_string());
            (gold, got, m.date_source.clone())
        }),
        title: entry.gold.title.clone().filter(|t| !t.trim().is_empty()).map(|g| (g, title, x.title.clone())),
        lang: entry.lang.clone().filter(|_| gold_words >= meta::LANG_MIN_WORDS).map(|l| (l, m.lang.clone())),
    };
    (p.date.is_some() || p.title.is_some() || p.lang.is_some()).then_some(p)
}

/// Aggregates page results into the report tables.
pub fn report(
    scorer: String,
    split: Option<String>,
    pages: &[PageResult],
    threads: usize,
    wall: Duration,
) -> EvalReport {
    let mut by_ds: BTreeMap<String, Vec<&PageMetrics>> = BTreeMap::new();
    for p in pages {
        by_ds.entry(p.dataset.clone()).or_default().push(&p.metrics);
    }
    let datasets = by_ds.into_iter().map(|(k, v)| (k, metrics::aggregate(v))).collect();
    let mut by_type: BTreeMap<String, Vec<&PageMetrics>> = BTreeMap::new();
    for p in pages {
        if let Some(t) = &p.page_type {
            by_type.entry(t.clone()).or_default().push(&p.metrics);
        }
    }
    let page_types = by_type.into_iter().map(|(k, v)| (k, metrics::aggregate(v))).collect();
    let overall = metrics::aggregate(pages.iter().map(|p| &p.metrics));
    let mut failures = BTreeMap::new();
    for p in pages {
        if let Some((reason, _)) = &p.error {
            *failures.entry(reason.clone()).or_insert(0) += 1;
        }
    }
    let html_bytes: usize = pages.iter().map(|p| p.html_bytes).sum();
    let extract_seconds: f64 = pages.iter().map(|p| p.elapsed.as_secs_f64()).sum();
    let wall_seconds = wall.as_secs_f64();
    let per = |x: f64, t: f64| if t > 0.0 { x / t } else { 0.0 };
    let throughput = Throughput {
        pages: pages.len(),
        html_bytes,
        threads,
        wall_seconds,
        extract_seconds,
        mb_per_s_per_thread: per(html_bytes as f64 / 1e6, extract_seconds),
        pages_per_s_per_thread: per(pages.len() as f64, extract_seconds),
        mb_per_s_wall: per(html_bytes as f64 / 1e6, wall_seconds),
    };
    EvalReport {
        scorer,
        split,
        datasets,
        overall,
        page_types,
        throughput,
        failures,
        blocks: None,
        units: None,
        meta: None,
        worst: Vec::new(),
    }
}

/// The report as a fixed-width table (the layout of score.py's, plus throughput).
pub fn format_table(r: &EvalReport) -> String {
    use std::fmt::Write;
    let f = |v: Option<f64>| v.map_or("-".to_string(), |x| format!("{x:.3}"));
    let pct = |v: Option<f64>| v.map_or("-".to_string(), |x| format!("{:.1}", 100.0 * x));
    let mut s = String::new();
    let _ = writeln!(s, "scorer: {}   split: {}", r.scorer, r.split.as_deref().unwrap_or("all"));
    let _ = writeln!(
        s,
        "{:<12} {:>6} {:>5} {:>6} {:>6} {:>6} {:>6} {:>6} {:>6} {:>6} {:>6} {:>6} {:>6}",
        "dataset", "pages", "empty", "shP", "shR", "shF1", "acc", "bowF1", "CE", "with%", "w/o%", "zSim", "lcsF1"
    );
    for (name, m) in r.datasets.iter().chain(std::iter::once((&"OVERALL".to_string(), &r.overall))) {
        let _ = writeln!(
            s,
            "{:<12} {:>6} {:>5} {:>6} {:>6} {:>6} {:>6} {:>6} {:>6} {:>6} {:>6} {:>6} {:>6}",
            name,
            m.pages,
            m.empty,
            f(m.shingle_p),
            f(m.shingle_r),
            f(m.shingle_f1),
            f(m.shingle_acc),
            f(m.bow_f1),
            f(m.cleaneval),
            pct(m.with),
            pct(m.without),
            f(m.ziegler_sim),
            f(m.lcs_f1)
        );
    }
    if !r.page_types.is_empty() {
        let _ = writeln!(s, "{:<14} {:>6} {:>6} {:>6} {:>6}", "page type", "pages", "shP", "shR", "shF1");
        for (name, m) in &r.page_types {
            let _ = writeln!(
                s,
                "{:<14} {:>6} {:>6} {:>6} {:>6}",
                name,
                m.pages,
                f(m.shingle_p),
                f(m.shingle_r),
                f(m.shingle_f1)
            );
        }
    }
    let t = &r.throughput;
    let _ = writeln!(
        s,
        "throughput: {} pages, {:.1} MB HTML, {:.1} MB/s and {:.0} pages/s per thread, {:.1} MB/s wall on {} threads",
        t.pages,
        t.html_bytes as f64 / 1e6,
        t.mb_per_s_per_thread,
        t.pages_per_s_per_thread,
        t.mb_per_s_wall,
        t.threads
    );
    if let Some(b) = &r.blocks {
        s.push_str(&blocks::format_table(b));
    }
    if let Some(u) = &r.units {
        s.push_str(&units::format_table(u));
    }
    if let Some(m) = &r.meta {
        s.push_str(&meta::format_table(m));
    }
    if r.failures.is_empty() {
        let _ = writeln!(s, "failed pages: none");
    } else {
        let list: Vec<String> = r.failures.iter().map(|(k, v)| format!("{k} {v}")).collect();
        let _ = writeln!(s, "failed pages: {}", list.join(", "));
    }
    s
}

/// Where predictions go when asked (`--out-dir`): `DIR/<id>.txt`.
pub fn prediction_path(dir: &std::path::Path, id: &str) -> PathBuf {
    dir.join(format!("{id}.txt"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::extract::ExtractOptions;
    use crate::methods::simple::{SimpleScorer, SimpleScorerConfig};

    /// Pages are extracted first and scored after: every page's metrics are its own text's
    /// against its own gold, in manifest order, on any number of threads.
    #[test]
    fn each_page_is_scored_against_its_own_gold_after_every_page_is_extracted() {
        let dir = tempfile::tempdir().unwrap();
        let mut manifest = String::new();
        for i in 0..24usize {
            let story =
                format!("Story number {i} tells of the harbour, the ferry and the {i} boats that sailed at dawn.");
            let page = format!("<html><body><nav><a href=/>Home</a></nav><p>{story}</p></body></html>");
            std::fs::write(dir.path().join(format!("p{i}.html")), page).unwrap();
            // Every third gold is another page's story: those pages score low, the rest high.
            let gold = if i.is_multiple_of(3) { format!("Story number {} tells of the sea.", i + 1) } else { story };
            let line = serde_json::json!({"id": format!("p{i}"), "dataset": "t", "split": "dev", "html": format!("p{i}.html"), "gold": {"text": gold}});
            manifest.push_str(&format!("{line}\n"));
        }
        let path = dir.path().join("manifest.jsonl");
        std::fs::write(&path, manifest).unwrap();
        let entries = crate::dataset::read_manifest(&path, None).unwrap();
        let scorer = SimpleScorer::new(SimpleScorerConfig::default());
        let extractor = Extractor::new(&scorer, ExtractOptions::default());
        for threads in [1, 3] {
            let (report, pages) = evaluate(&extractor, &entries, threads).unwrap();
            assert_eq!(report.overall.pages, 24);
            for (p, e) in pages.iter().zip(&entries) {
                assert_eq!(p.id, e.id);
                let own = metrics::score_page(&e.gold, &p.text);
                assert_eq!((p.metrics.tp, p.metrics.fp, p.metrics.fn_), (own.tp, own.fp, own.fn_), "{}", p.id);
                assert!(!p.text.is_empty(), "{}", p.id);
                let id: usize = p.id[1..].parse().unwrap();
                assert_eq!(p.metrics.tp > 0.9, !id.is_multiple_of(3), "{}: {:?}", p.id, p.metrics.tp);
            }
        }
    }
}
