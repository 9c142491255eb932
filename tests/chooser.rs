//! The span chooser end to end on generated pages: `pipeline chooser` fits trees on a train
//! manifest (cross-fitted: each fold's candidates from a model fitted on the others), writes a
//! file that reads back, and prints the margin table (and, with `--draws`, the spread over fits
//! on other partitions); the extractor with
//! `--chooser-margin` runs on every page and keeps text of the page.

use crate::common;

use common::{pipeline, story_manifest};

/// A story between a comment box and a list of more stories: the list is the chooser's
/// candidate beside the span.
fn page(story: &str) -> String {
    let more: String = (0..6)
        .map(|i| format!("<li class=more><a href=/s{i}>Another story about the town, part {i}</a></li>"))
        .collect();
    format!(
        "<html><head><title>News</title></head><body><div class=nav><a href=/>Home</a> <a href=/a>Sport</a></div>\
         <div class=comments><p>Great story, thanks for writing it up so well!</p><p>I disagree with all of it.</p></div>\
         <article><h1>News</h1><p>{story}</p><p>{story}</p></article><ul>{more}</ul>\
         <div class=footer>Privacy</div></body></html>"
    )
}

#[test]
fn the_chooser_is_fitted_measured_and_used() {
    let dir = tempfile::tempdir().unwrap();
    let m = story_manifest(dir.path(), &common::STORIES, page, |i| if i < 4 { "train" } else { "dev" });
    let out_file = dir.path().join("chooser.json");
    // `pipeline chooser` on the manifest, 5 trees cross-fitted in 2 folds, with `extra` flags.
    let fit = |extra: &[&str]| {
        let mut args = vec!["chooser", "--train", &m, "--dev", &m, "--rounds", "5", "--cross-fit", "2"];
        args.extend(["--out", out_file.to_str().unwrap()]);
        args.extend(extra);
        pipeline(&args)
    };
    let out = fit(&["--min-leaf", "1", "--explain", "1"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let report = String::from_utf8(out.stdout).unwrap();
    assert!(report.contains("current") && report.contains("oracle") && report.contains("left out t"), "{report}");
    let text = std::fs::read_to_string(&out_file).unwrap();
    let c = article_pipeline::scoring::chooser::Chooser::from_json(&text).unwrap();
    assert_eq!(c.trees.len(), 5);
    assert!(c.trained_on.contains("cross-fitted in 2 folds"), "{}", c.trained_on);
    // Two draws: the written fit and one on another partition (3 folds), their spread printed;
    // the file is the first draw's, as without `--draws`.
    let out = fit(&["--draws", "2"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let report = String::from_utf8(out.stdout).unwrap();
    assert!(report.contains("over 2 fits (cross-fitted in 2 to 3 folds)"), "{report}");
    assert!(report.lines().any(|l| l.starts_with("margin 0.01:") && l.contains(" / ")), "{report}");
    let once = std::fs::read(&out_file).unwrap();
    assert!(fit(&[]).status.success());
    assert_eq!(std::fs::read(&out_file).unwrap(), once);
    // `--average` writes their mean: both fits' trees, each leaf halved.
    assert!(fit(&["--draws", "2", "--average"]).status.success());
    let avg =
        article_pipeline::scoring::chooser::Chooser::from_json(&std::fs::read_to_string(&out_file).unwrap()).unwrap();
    assert_eq!(avg.trees.len(), 10);
    assert!(avg.trained_on.contains("cross-fitted in 2 to 3 folds, 2 fits averaged"), "{}", avg.trained_on);
    let first = article_pipeline::scoring::chooser::Chooser::from_json(std::str::from_utf8(&once).unwrap()).unwrap();
    assert_eq!(avg.trees[0][0].feature, first.trees[0][0].feature);
    for (a, b) in avg.trees[0].iter().zip(&first.trees[0]) {
        assert!((a.value - b.value / 2.0).abs() < 1e-12);
    }
    // Other draws are other cross-fitting partitions: none without cross-fitting.
    let o = pipeline(&[
        "chooser",
        "--train",
        &m,
        "--dev",
        &m,
        "--cross-fit",
        "0",
        "--draws",
        "2",
        "--out",
        out_file.to_str().unwrap(),
    ]);
    let log = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.code() == Some(2) && log.contains("--draws"), "{log}");
    // With every span option off the extractor keeps no scores of its own: the candidates
    // are still collected (this found 0 pages before).
    let o = fit(&["--extra-span-ratio", "0", "--title-anchor-ratio", "0", "--furniture-escape-ratio", "0"]);
    let log = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success() && log.contains(": 4 pages"), "{log}");
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

/// `pipeline train --chooser` stores a chooser fitted for the model it trains in the model
/// file, with the margin cross-validation chose for it (the same bytes on every run), and the
/// extractor consults that chooser, not the built-in one: at the model's margin when no
/// `--chooser-margin` is given, at the given one otherwise, and not at all with 0. A chooser
/// that predicts a gain for every candidate switches the span; one that predicts none, or whose
/// margin is 0, leaves it as without a chooser.
#[test]
fn a_model_trained_with_its_chooser_carries_it_and_extraction_uses_it() {
    use article_pipeline::methods::nb::model::NbModel;
    use article_pipeline::scoring::chooser::{Chooser, Node};

    let dir = tempfile::tempdir().unwrap();
    let m = story_manifest(dir.path(), &common::STORIES, page, |_| "train");
    let path = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    let train = |out: &str| {
        let o = pipeline(&["train", "--manifest", &m, "--out", out, "--chooser", "--chooser-folds", "2"]);
        let log = String::from_utf8_lossy(&o.stderr).into_owned();
        assert!(o.status.success(), "{log}");
        assert!(log.contains("chooser:") && log.contains("chooser margin"), "{log}");
        std::fs::read(out).unwrap()
    };
    let bytes = train(&path("a.nbm"));
    assert_eq!(train(&path("b.nbm")), bytes, "the same model and chooser on every run");
    let mut model = NbModel::from_bytes(&bytes).unwrap();
    let c = model.header.chooser.clone().expect("the model file holds its chooser");
    assert_eq!(c.trees.len(), article_pipeline::eval::chooser::BoostOptions::default().rounds);
    assert!(c.trained_on.contains("cross-fitted in 2 folds"), "{}", c.trained_on);
    assert!(c.margin.is_some_and(|m| (0.0..=1.0).contains(&m)), "{:?}", c.margin);

    let leaf = || vec![Node { feature: None, threshold: 0.0, left: 0, right: 0, value: 0.0 }];
    let chooser = |base: f64, margin: f64| {
        let mut c = Chooser::new(base, vec![leaf()], "test".into());
        c.margin = Some(margin);
        c
    };
    let mut with = |name: &str, chooser: Option<Chooser>| {
        model.header.chooser = chooser;
        std::fs::write(path(name), model.to_bytes()).unwrap();
        path(name)
    };
    let (none, always, always_off, never) = (
        with("none.nbm", None),
        with("always.nbm", Some(chooser(1.0, 0.05))),
        with("always-off.nbm", Some(chooser(1.0, 0.0))),
        with("never.nbm", Some(chooser(-1.0, 0.05))),
    );
    let extract = |model: &str, margin: Option<&str>| {
        let mut args = vec!["extract", "--model", model];
        args.extend(margin.map(|m| ["--chooser-margin", m]).into_iter().flatten());
        let page = path("html/0.html");
        args.push(&page);
        let o = pipeline(&args);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8(o.stdout).unwrap()
    };
    let plain = extract(&none, None);
    assert!(plain.contains(&common::STORIES[0][..30]), "{plain}");
    assert_eq!(extract(&none, Some("0")), plain);
    assert_eq!(extract(&never, Some("0.05")), plain, "a chooser that sees no gain keeps the span");
    let switched = extract(&always, Some("0.05"));
    assert_ne!(switched, plain, "the model's chooser, not the built-in one, chose");
    // The list it took is read with its links (a list's items lead with them).
    assert!(switched.contains("Another story about the town, part 5"), "{switched}");
    assert_eq!(extract(&always, None), switched, "no margin given: the model's own");
    assert_eq!(extract(&always, Some("0")), plain, "0 turns it off");
    assert_eq!(extract(&always_off, None), plain, "a chooser whose margin is 0 is off by default");

    // `pipeline bootstrap` from this model: the adapted model carries the base's chooser.
    let o = pipeline(&[
        "bootstrap",
        "--model",
        &path("a.nbm"),
        "--unlabeled",
        &path("html"),
        "--out",
        &path("adapted.nbm"),
        "--iterations",
        "1",
        "--no-check",
        "--min-pages",
        "2",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let adapted = NbModel::from_bytes(&std::fs::read(path("adapted.nbm")).unwrap()).unwrap();
    assert!(adapted.header.bootstrap.is_some());
    assert_eq!(adapted.header.chooser.as_ref(), Some(&c));

    // Only Naive Bayes models hold a chooser.
    let o = pipeline(&["train", "--manifest", &m, "--learner", "crf", "--out", &path("c.model"), "--chooser"]);
    assert_eq!(o.status.code(), Some(2), "{}", String::from_utf8_lossy(&o.stderr));
}
