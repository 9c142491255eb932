//! Feed parsing at the sizes a crawl meets: RSS feeds of 1k, 10k and 80k items (the last one
//! near the 10 MB body cap). Guards the per-item link deduplication against going quadratic
//! again: per-item time must stay flat as the feed grows.
//!
//! `cargo bench --bench feeds`

use std::hint::black_box;

use article_pipeline::sources::feeds::parse_feed;
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use url::Url;

/// An RSS 2.0 feed of `n` items with distinct links (and every tenth link repeated).
fn rss(n: usize) -> Vec<u8> {
    let mut s = String::from("<?xml version=\"1.0\"?><rss version=\"2.0\"><channel><title>Bench</title>");
    for i in 0..n {
        let id = if i % 10 == 9 { i - 1 } else { i };
        s.push_str(&format!(
            "<item><title>Story {i}</title><link>https://news.example/2026/story-{id}.html?utm_source=rss</link>\
             <pubDate>Tue, 24 Nov 2026 00:00:00 GMT</pubDate></item>"
        ));
    }
    s.push_str("</channel></rss>");
    s.into_bytes()
}

fn bench(c: &mut Criterion) {
    let base = Url::parse("https://news.example/feed.xml").unwrap();
    let mut g = c.benchmark_group("parse_feed");
    for n in [1_000usize, 10_000, 80_000] {
        let feed = rss(n);
        g.throughput(Throughput::Elements(n as u64));
        g.bench_with_input(BenchmarkId::from_parameter(n), &feed, |b, feed| {
            b.iter(|| black_box(parse_feed(feed, &base).unwrap().len()))
        });
    }
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(10).measurement_time(std::time::Duration::from_secs(5));
    targets = bench
}
criterion_main!(benches);
