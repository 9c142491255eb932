//! The span chooser end to end on generated pages: `pipeline chooser` fits trees on a train
//! manifest (cross-fitted: each fold's candidates from a model fitted on the others), writes a
//! file that reads back, and prints the margin table; the extractor with
//! `--chooser-margin` runs on every page and keeps text of the page.

mod common;

use common::{pipeline, story_manifest};

fn page(story: &str) -> String {
    format!(
        "<html><head><title>News</title></head><body><div class=nav><a href=/>Home</a> <a href=/a>Sport</a></div>\
         <div class=comments><p>Great story, thanks for writing it up so well!</p><p>I disagree with all of it.</p></div>\
         <article><h1>News</h1><p>{story}</p><p>{story}</p></article><div class=footer>Privacy</div></body></html>"
    )
}

#[test]
fn the_chooser_is_fitted_measured_and_used() {
    let dir = tempfile::tempdir().unwrap();
    let m = story_manifest(dir.path(), &common::STORIES, page, |i| if i < 4 { "train" } else { "dev" });
    let out_file = dir.path().join("chooser.json");
    let out = pipeline(&[
        "chooser",
        "--train",
        &m,
        "--dev",
        &m,
        "--rounds",
        "5",
        "--min-leaf",
        "1",
        "--cross-fit",
        "2",
        "--out",
        out_file.to_str().unwrap(),
        "--explain",
        "1",
    ]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let report = String::from_utf8(out.stdout).unwrap();
    assert!(report.contains("current") && report.contains("oracle") && report.contains("left out t"), "{report}");
    let text = std::fs::read_to_string(&out_file).unwrap();
    let c = article_pipeline::extract::chooser::Chooser::from_json(&text).unwrap();
    assert_eq!(c.trees.len(), 5);
    assert!(c.trained_on.contains("cross-fitted in 2 folds"), "{}", c.trained_on);
    // Cross-fitting refits Naive Bayes models: not for another scorer.
    let other =
        pipeline(&["chooser", "--train", &m, "--dev", &m, "--scorer", "simple", "--out", out_file.to_str().unwrap()]);
    assert!(!other.status.success());
    assert!(
        String::from_utf8_lossy(&other.stderr).contains("--cross-fit"),
        "{}",
        String::from_utf8_lossy(&other.stderr)
    );

    // The built-in chooser, switched on: every page still gives its story.
    for i in 0..common::STORIES.len() {
        let p = dir.path().join(format!("html/{i}.html"));
        let out = pipeline(&["extract", "--chooser-margin", "0.05", p.to_str().unwrap()]);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let text = String::from_utf8(out.stdout).unwrap();
        assert!(text.contains(&common::STORIES[i][..30]), "{text}");
    }
    // Out of range: refused before anything runs.
    let out = pipeline(&["extract", "--chooser-margin", "2", dir.path().join("html/0.html").to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stderr));
}
