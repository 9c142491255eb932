//! Throughput of the tokenizer alone and of full extraction (simple MSS and Naive Bayes), in
//! MB/s of HTML, on the bundled example pages and on generated news pages of 10 KB–1 MB.
//! `cargo bench --bench extract`; criterion prints the throughput per case.

use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};

use article_pipeline::extract::{ExtractOptions, Extractor};
use article_pipeline::html::{Token, TokenSink, Tokenizer, TokenizerOptions};
use article_pipeline::scoring;

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
    for scorer_name in ["simple", "nb"] {
        let scorer = match scoring::build(scorer_name, None, None) {
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
