//! Feeds fetched from the web (RSS, Atom, JSON Feed).
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let base = url::Url::parse("https://example.com/feed.xml").expect("valid");
    let _ = article_pipeline::sources::feeds::parse_feed(data, &base);
});
