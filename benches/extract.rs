//! Throughput of the tokenizer alone and of full extraction (simple MSS, Naive Bayes,
//! Pasternack & Roth's Baseline 1, the block learners of issue 7: CRF, CRF with edge
//! features, MEMM, MaxEnt, the CRF → MSS hybrid, and Ziegler & Skubacz's PSO thresholds as
//! `pso` and `pso-blocks`), in MB/s of HTML, on the bundled example pages and on generated news
//! pages of 10 KB–1 MB. Learned scorers need a model and none is shipped, so the setup trains a
//! tiny one on generated pages whose gold is their `<article>` text (block models: 2^16
//! weights, 30 L-BFGS iterations; PSO: 20 particles, 20 generations): its parameters are
//! meaningless for quality but the work per block (segmenting, featurising, forward–backward,
//! Viterbi, the eight PSO features) is the real one.
//! The SVM block classifier (Yao & Zuo) gets a synthetic model instead: its cost is one kernel
//! term per support vector per block, so the model has the 2667 support vectors of the
//! protocol-A default (models/README.md) at seeded random positions.
//! The memory-based scorers (`knn`, `igtree`) get a tiny instance base from the generated pages
//! the way the block models do.
//! `cargo bench --bench extract`; criterion prints the throughput per case.

use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};

use article_pipeline::extract::{ExtractOptions, Extractor};
use article_pipeline::html::{Token, TokenSink, Tokenizer, TokenizerOptions};
use article_pipeline::methods;
use article_pipeline::methods::blocks::features::{BlockFeatureConfig, FeatureExtractor, PageFeatures};
use article_pipeline::methods::blocks::learn::{BlockTrainOptions, TrainPage, fit};
use article_pipeline::methods::blocks::scorer::{BlockOutput, BlockScorer};
use article_pipeline::methods::nb::train::LabelOptions;
use article_pipeline::methods::pso::blocks::{BlockOptions, N_FEATURES};
use article_pipeline::methods::pso::thresholds::{PsoModel, PsoScorer, PsoTrainingSummary};
use article_pipeline::methods::pso::train::{
    SwarmParams, accept_all_position, maximize_from, mean_similarity, prepare_page, thresholds_of,
};
use article_pipeline::scoring::Scorer;
use article_pipeline::segment::labels::label_blocks;

/// A news page of about `target` bytes: head with scripts, nav, article paragraphs, sidebar,
/// comments and footer, with text from a small deterministic generator.
fn news_page(target: usize, seed: u64) -> Vec<u8> {
    const WORDS: &[&str] = &[
        "council",
        "voted",
        "the",
        "park",
        "river",
        "city",
        "residents",
        "said",
        "on",
        "Tuesday",
        "budget",
        "plan",
        "mayor",
        "new",
        "year",
        "would",
        "public",
        "hearing",
        "of",
        "and",
        "a",
        "to",
        "in",
        "for",
        "construction",
    ];
    let mut x = seed;
    let mut next = move || {
        x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (x >> 33) as usize
    };
    let mut sentence = |n: usize| -> String {
        let mut s: Vec<&str> = (0..n).map(|_| WORDS[next() % WORDS.len()]).collect();
        s.push("2025.");
        s.join(" ")
    };
    let mut page = String::from(
        "<!DOCTYPE html><html><head><meta charset=utf-8><title>Council votes</title>\
         <script>window.a=function(){return 1<2;};</script><style>body{margin:0}</style></head><body>\
         <header><nav><ul><li><a href=/>Home</a></li><li><a href=/news>News</a></li><li><a href=/sport>Sport</a></li></ul></nav></header>\
         <main><article><h1>Council votes on park</h1><p class=byline>By A. Writer</p>",
    );
    let body_target = target * 6 / 10;
    while page.len() < body_target {
        page.push_str("<p>");
        page.push_str(&sentence(30));
        page.push_str(" <a href=/x>link</a> ");
        page.push_str(&sentence(20));
        page.push_str("</p>\n");
    }
    page.push_str("</article><aside class=sidebar><ul>");
    while page.len() < target * 8 / 10 {
        page.push_str("<li><a href=/s>");
        page.push_str(&sentence(8));
        page.push_str("</a></li>");
    }
    page.push_str("</ul></aside><section class=comments>");
    while page.len() < target {
        page.push_str("<div class=comment><span>reader</span><p>");
        page.push_str(&sentence(15));
        page.push_str("</p></div>");
    }
    page.push_str("</section></main><footer>&copy; 2025 Example</footer></body></html>");
    page.into_bytes()
}

fn cases() -> Vec<(String, Vec<u8>)> {
    let mut v: Vec<(String, Vec<u8>)> =
        [10_000, 100_000, 1_000_000].iter().map(|&n| (format!("news-{}k", n / 1000), news_page(n, n as u64))).collect();
    let mut all = Vec::new();
    if let Ok(dir) = std::fs::read_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/examples/pages")) {
        let mut paths: Vec<_> = dir.flatten().map(|e| e.path()).collect();
        paths.sort();
        for p in paths {
            all.extend(std::fs::read(p).unwrap_or_default());
        }
    }
    if !all.is_empty() {
        v.push(("examples-concat".to_string(), all));
    }
    v
}

/// The text of a generated page's `<article>` (tags dropped): its gold for the tiny models.
fn article_text(page: &[u8]) -> String {
    let s = String::from_utf8_lossy(page);
    let body = s.split("<article>").nth(1).and_then(|r| r.split("</article>").next()).unwrap_or("");
    let mut out = String::new();
    let mut in_tag = false;
    for c in body.chars() {
        match c {
            '<' => in_tag = true,
            '>' => {
                in_tag = false;
                out.push(' ');
            }
            _ if !in_tag => out.push(c),
            _ => {}
        }
    }
    out
}

/// A tiny block model trained on generated pages (see the module header), or why not.
fn tiny_block_model(
    learner: &str,
    edge_features: bool,
) -> Result<article_pipeline::methods::blocks::learn::BlockModel, String> {
    let features = BlockFeatureConfig { dims_log2: 16, ..BlockFeatureConfig::default() };
    let mut fx = FeatureExtractor::new(features);
    let mut pages = Vec::new();
    for seed in 0..12u64 {
        let html = news_page(8_000 + 1_000 * seed as usize, 1000 + seed);
        let Ok(l) = label_blocks(&html, &article_text(&html), 0.3, &LabelOptions::default()) else { continue };
        let mut feats = PageFeatures::default();
        fx.page(&l.page, &l.tokens, &l.blocks, &l.title, &mut feats);
        pages.push(TrainPage { feats, labels: l.labels });
    }
    let options =
        BlockTrainOptions { learner: learner.to_string(), features, max_iter: 30, edge_features, ..Default::default() };
    fit(&pages, &options, 1).map(|(m, _)| m).map_err(|e| e.to_string())
}

/// Tiny PSO thresholds learned on generated pages (split at `<div>`, as the measured models).
fn tiny_pso_model() -> PsoModel {
    let blocks = BlockOptions { split_at_div: true };
    let pages: Vec<_> = (0..12u64)
        .filter_map(|seed| {
            let html = news_page(8_000 + 1_000 * seed as usize, 1000 + seed);
            prepare_page(&html, &article_text(&html), &blocks).ok()
        })
        .collect();
    let swarm = SwarmParams { population: 20, generations: 20, ..SwarmParams::default() };
    let r = maximize_from(N_FEATURES, &swarm, &[accept_all_position()], |x| mean_similarity(&pages, &thresholds_of(x)));
    PsoModel::new(thresholds_of(&r.best), blocks, PsoTrainingSummary::default())
}

/// An SVM model with `n` support vectors at seeded random positions (see the module header).
fn synthetic_svm(n: usize) -> article_pipeline::methods::svm::scorer::SvmModel {
    use article_pipeline::methods::svm::features::{N_FEATURES, N_TOKENS, YaoFeatureConfig};
    use article_pipeline::methods::svm::scorer::{Scaler, SvmHeader, SvmModel};
    let mut s = 1u64;
    let mut unit = move || {
        s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (s >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
    };
    let support = (0..n).map(|_| std::array::from_fn(|_| unit())).collect();
    let coef = (0..n).map(|_| unit()).collect();
    let (mut lo, mut hi) = ([0.0; N_FEATURES], [1.0; N_FEATURES]);
    lo[0] = 1.0;
    hi[0] = 200.0;
    SvmModel {
        header: SvmHeader::new(YaoFeatureConfig::default(), 1.0, 1.0 / 18.0, n, Default::default()),
        scaler: Scaler { lo, hi },
        tokens: [0; N_TOKENS],
        gamma: 1.0 / 18.0,
        rho: 0.0,
        support,
        coef,
    }
}

/// A tiny memory-based model (IB1 or IGTree) from generated pages, or why not.
fn tiny_mbl_model(
    algorithm: article_pipeline::methods::mbl::knn::Algorithm,
) -> Result<article_pipeline::methods::mbl::knn::MblModel, String> {
    use article_pipeline::methods::mbl::knn::{MblModel, MblOptions};
    use article_pipeline::methods::mbl::units::{N_FEATURES, label_units};
    let mut all = Vec::new();
    for seed in 0..12u64 {
        let html = news_page(8_000 + 1_000 * seed as usize, 1000 + seed);
        let Ok(l) = label_units(&html, &article_text(&html), None, 0.5, &LabelOptions::default()) else { continue };
        let pairs = l.element_pairs();
        let mut f = [0u8; N_FEATURES];
        for i in l.elements.instances() {
            l.elements.features(i, &mut f);
            all.push((f, pairs[i]));
        }
    }
    if all.is_empty() {
        return Err("no labelled page".to_string());
    }
    let instances = article_pipeline::methods::mbl::train::dedup(all);
    Ok(MblModel::from_instances(&instances, MblOptions { algorithm, ..MblOptions::default() }, Default::default()))
}

/// A benchmarked scorer by name: the built-in ones, or a block scorer on a tiny model
/// (`crf-edge`: the CRF with edge features).
fn make_scorer(name: &str) -> Result<Box<dyn Scorer>, String> {
    let block = |learner: &str, edge: bool, output: BlockOutput, name: &'static str| {
        tiny_block_model(learner, edge).map(|m| Box::new(BlockScorer::new(m, output, name, "bench")) as Box<dyn Scorer>)
    };
    match name {
        "crf" => block("crf", false, BlockOutput::MultiSpan, "crf"),
        "crf-edge" => block("crf", true, BlockOutput::MultiSpan, "crf"),
        "memm" => block("memm", false, BlockOutput::MultiSpan, "memm"),
        "maxent" => block("maxent", false, BlockOutput::MultiSpan, "maxent"),
        "crf-mss" => block("crf", false, BlockOutput::Hybrid, "crf-mss"),
        "pso" => Ok(Box::new(PsoScorer::new(tiny_pso_model(), "bench"))),
        "pso-blocks" => Ok(Box::new(PsoScorer::every_block(tiny_pso_model(), "bench"))),
        "svm" => Ok(Box::new(article_pipeline::methods::svm::scorer::SvmScorer::new(synthetic_svm(2667), "bench"))),
        "knn" | "igtree" => {
            use article_pipeline::methods::mbl::knn::Algorithm;
            let algorithm = if name == "knn" { Algorithm::Ib1 } else { Algorithm::Igtree };
            let m = tiny_mbl_model(algorithm)?;
            Ok(Box::new(article_pipeline::methods::mbl::scorer::MblScorer::new(m, name == "igtree", "bench")))
        }
        other => methods::build(other, None, None, None).map_err(|e| e.to_string()),
    }
}

struct Count(usize);
impl TokenSink for Count {
    fn token(&mut self, _: &str, _: &Token) {
        self.0 += 1;
    }
}

fn bench(c: &mut Criterion) {
    let cases = cases();
    let mut g = c.benchmark_group("tokenizer");
    for (name, page) in &cases {
        g.throughput(Throughput::Bytes(page.len() as u64));
        g.bench_with_input(BenchmarkId::from_parameter(name), page, |b, page| {
            b.iter(|| {
                let mut t = Tokenizer::new(Count(0), TokenizerOptions::default());
                for chunk in page.chunks(64 * 1024) {
                    t.write(chunk).unwrap();
                }
                black_box(t.end().unwrap().sink.0)
            })
        });
    }
    g.finish();
    let names = [
        "simple",
        "nb",
        "largest-block",
        "crf",
        "crf-edge",
        "memm",
        "maxent",
        "crf-mss",
        "pso",
        "pso-blocks",
        "svm",
        "knn",
        "igtree",
    ];
    for scorer_name in names {
        let scorer = match make_scorer(scorer_name) {
            Ok(s) => s,
            Err(e) => {
                eprintln!("skipping {scorer_name}: {e}");
                continue;
            }
        };
        let ex = Extractor::new(scorer.as_ref(), ExtractOptions::default());
        let mut g = c.benchmark_group(format!("extract-{scorer_name}"));
        for (name, page) in &cases {
            g.throughput(Throughput::Bytes(page.len() as u64));
            g.bench_with_input(BenchmarkId::from_parameter(name), page, |b, page| {
                b.iter(|| black_box(ex.extract(page, None).unwrap().text.len()))
            });
        }
        g.finish();
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20).measurement_time(std::time::Duration::from_secs(3));
    targets = bench
}
criterion_main!(benches);
