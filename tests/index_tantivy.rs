//! `examples/index_tantivy.rs` on the bundled WARC: the records of a run loaded into an
//! embedded tantivy index and queried by phrase, by publication-date range and by language.

#[path = "../examples/index_tantivy.rs"]
#[allow(dead_code)]
mod example;

use std::process::Command;

#[test]
fn the_bundled_warc_is_searchable_by_phrase_date_and_language() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let warc = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/sample.warc.gz");
    let o = Command::new(env!("CARGO_BIN_EXE_pipeline"))
        .args(["--warc", warc, "--out", out.to_str().unwrap(), "--no-progress"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let (index, f) = example::build_index(&out, Some(&dir.path().join("index"))).unwrap();
    assert_eq!(index.reader().unwrap().searcher().num_docs(), 3);
    let q = |s: &str| example::search(&index, &f, s, 10).unwrap();
    let budget = "http://example.com/budget-vote.html";
    // A phrase of one article's text, and of its title.
    assert_eq!(q(r#"text:"late amendments""#), [budget]);
    assert_eq!(q(r#"title:"budget vote delayed""#), [budget]);
    // The pages say "Updated March 3, 2025": a range around it keeps them, one before drops them.
    let march = "published:[2025-03-01T00:00:00Z TO 2025-04-01T00:00:00Z}";
    assert_eq!(q(march).len(), 3);
    assert!(q("published:[2024-01-01T00:00:00Z TO 2025-03-01T00:00:00Z}").is_empty());
    assert_eq!(q(&format!(r#"text:"riverside park" AND {march}"#)).len(), 3, "every page mentions it");
    // Language: the three bundled pages are in English (the French one's body is too).
    assert_eq!(q("lang:en").len(), 3);
    assert!(q("lang:fr").is_empty());
    assert_eq!(q(r#"text:"late amendments" AND lang:en"#), [budget]);
    assert_eq!(example::published_at("2025-03-03T10:00:00+01:00"), example::published_at("2025-03-03T09:00:00Z"));
}
