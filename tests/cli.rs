//! Behaviour of the `pipeline` binary on files the tests write: extraction, JSON output,
//! per-page errors with exit code 1, usage errors with exit code 2, evaluation of a manifest.

use std::path::Path;
use std::process::{Command, Output};

fn pipeline(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_pipeline")).args(args).output().expect("run pipeline")
}

fn article(words: &str) -> String {
    let para = format!("<p>{words} {words} {words} {words} {words}.</p>\n");
    format!(
        "<html><head><title>Test page</title><script>var x = '<p>no</p>';</script></head><body>\
         <nav><ul><li><a href=/>Home</a></li><li><a href=/a>About</a></li></ul></nav>\
         <article><h1>Headline</h1>{}</article>\
         <footer><a href=/c>Contact</a> <a href=/p>Privacy</a></footer></body></html>",
        para.repeat(8)
    )
}

fn write(dir: &Path, name: &str, bytes: &[u8]) -> String {
    let p = dir.join(name);
    std::fs::write(&p, bytes).unwrap();
    p.to_string_lossy().into_owned()
}

#[test]
fn extracts_bundled_examples_with_the_default_model() {
    // Each bundled page: the article from its headline to its last paragraph, decoded from its
    // own charset, without the menu, the reader comments or the footer around it.
    let furniture = ["Politics", "Opinion", "comments", "reader0", "Reply", "All rights reserved", "Privacy"];
    let pages: [(&str, &str, &str); 3] = [
        (
            "riverside-park.html",
            "Council approves riverside park expansion",
            "Funding comes from a state grant and a bond measure approved by voters last spring.",
        ),
        (
            "budget-vote.html",
            "Budget vote delayed after late amendments",
            "Local schools plan to use the new wetlands as an outdoor classroom for science lessons. \
             The planning department will publish a detailed timeline before the end of the month.",
        ),
        ("marche-windows-1252.html", "Marché de quartier: la saison commence", "Le conseil a voté à l'unanimité"),
    ];
    for (file, headline, inside) in pages {
        let path = format!("{}/examples/pages/{file}", env!("CARGO_MANIFEST_DIR"));
        let out = pipeline(&["extract", &path]);
        assert!(out.status.success(), "{file}: {}", String::from_utf8_lossy(&out.stderr));
        let text = String::from_utf8(out.stdout).unwrap();
        assert!(text.starts_with(headline), "{file}: does not start with its headline:\n{text}");
        assert!(text.contains(inside), "{file}: lacks `{inside}`:\n{text}");
        for f in furniture {
            assert!(!text.contains(f), "{file}: `{f}` leaked:\n{text}");
        }
    }
}

#[test]
fn both_scorers_and_json_output() {
    let dir = tempfile::tempdir().unwrap();
    let page = write(dir.path(), "a.html", article("the quick brown fox jumps over the lazy dog").as_bytes());
    for scorer in ["simple", "nb"] {
        let out = pipeline(&["extract", "--json", "--scorer", scorer, &page]);
        assert!(out.status.success());
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(v["title"], "Headline", "the <h1> is the article's title");
        assert_eq!(v["html_title"], "Test page");
        assert_eq!(v["metadata"]["lang"], "en");
        assert_eq!(v["scorer"], scorer);
        assert!(v["text"].as_str().unwrap().contains("quick brown fox"), "{scorer}: {v}");
        assert!(!v["text"].as_str().unwrap().contains("Privacy"), "{scorer}: {v}");
        assert!(v["span"].is_array());
    }
}

#[test]
fn a_bad_page_is_reported_and_the_run_goes_on_with_exit_code_1() {
    let dir = tempfile::tempdir().unwrap();
    let good = write(dir.path(), "good.html", article("alpha beta gamma delta").as_bytes());
    let png = write(dir.path(), "image.html", b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR");
    let missing = dir.path().join("missing.html").to_string_lossy().into_owned();
    let out = pipeline(&["extract", &png, &missing, &good]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("image.html") && err.contains("not html"), "{err}");
    assert!(err.contains("missing.html"), "{err}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("alpha beta gamma"));
}

#[test]
fn usage_and_config_errors_exit_2() {
    assert_eq!(pipeline(&["extract", "--scorer", "nope", "x.html"]).status.code(), Some(2));
    assert_eq!(pipeline(&["frobnicate"]).status.code(), Some(2));
    let dir = tempfile::tempdir().unwrap();
    let bad_model = write(dir.path(), "bad.nbm", b"APMODEL\x01garbage");
    let page = write(dir.path(), "p.html", b"<p>x</p>");
    let out = pipeline(&["extract", "--model", &bad_model, &page]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("bad.nbm"));
}

#[test]
fn eval_scores_a_manifest_and_writes_predictions() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("html")).unwrap();
    let words = "the council voted to expand the riverside park on tuesday evening";
    write(&dir.path().join("html"), "t-1.html", article(words).as_bytes());
    write(&dir.path().join("html"), "t-2.html", b"\x89PNG binary");
    let gold = format!("{words} {words} {words} {words} {words}.");
    let lines = [
        serde_json::json!({"id": "t-1", "dataset": "t", "split": "dev", "html": "html/t-1.html", "gold": {"text": gold.repeat(8), "with": ["riverside park"], "without": ["Privacy"]}}),
        serde_json::json!({"id": "t-2", "dataset": "t", "split": "dev", "html": "html/t-2.html", "gold": {"text": "lost page"}}),
        serde_json::json!({"id": "t-3", "dataset": "t", "split": "train", "html": "html/t-1.html", "gold": {"text": "x"}}),
    ];
    let manifest =
        write(dir.path(), "manifest.jsonl", lines.iter().map(|l| l.to_string() + "\n").collect::<String>().as_bytes());
    let preds = dir.path().join("pred");
    let out =
        pipeline(&["eval", "--manifest", &manifest, "--split", "dev", "--json", "--out-dir", preds.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["overall"]["pages"], 2);
    assert_eq!(v["failures"]["not_html"], 1);
    assert!(v["datasets"]["t"]["with"].as_f64().unwrap() > 0.99);
    assert!(v["throughput"]["html_bytes"].as_u64().unwrap() > 0);
    assert!((0.0..=1.0).contains(&v["overall"]["ziegler_sim"].as_f64().unwrap()));
    assert!(std::fs::read_to_string(preds.join("t-1.txt")).unwrap().contains("riverside park"));
}

#[test]
fn bench_times_scorers_in_one_run_and_reports_bad_pages() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("html")).unwrap();
    write(&dir.path().join("html"), "b-1.html", article("the council voted to expand the park").as_bytes());
    write(&dir.path().join("html"), "b-2.html", b"\x89PNG binary");
    let lines = [
        serde_json::json!({"id": "b-1", "dataset": "b", "split": "dev", "html": "html/b-1.html"}),
        serde_json::json!({"id": "b-2", "dataset": "b", "split": "dev", "html": "html/b-2.html"}),
    ];
    let manifest =
        write(dir.path(), "manifest.jsonl", lines.iter().map(|l| l.to_string() + "\n").collect::<String>().as_bytes());
    let out = pipeline(&["bench", "--manifest", &manifest, "--rounds", "2", "--json"]);
    // The binary page is named and the exit code is 1; both scorers still ran both rounds.
    assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stderr).contains("b-2"));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["pages"], 2);
    let names: Vec<&str> = v["extractors"].as_array().unwrap().iter().map(|e| e["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["nb", "simple"]);
    for e in v["extractors"].as_array().unwrap() {
        assert_eq!(e["rounds_mb_s"].as_array().unwrap().len(), 2);
        assert!(e["median_mb_s"].as_f64().unwrap() > 0.0);
    }
    let table = pipeline(&["bench", "--manifest", &manifest, "--rounds", "1", "--against", "none"]);
    assert!(String::from_utf8_lossy(&table.stdout).contains("nb"));
    assert_eq!(pipeline(&["bench", "--manifest", &manifest, "--threads", "2"]).status.code(), Some(2));
    assert_eq!(pipeline(&["bench", "--manifest", &manifest, "--against", "nope"]).status.code(), Some(2));
}

#[test]
fn tune_chooses_settings_leaving_each_dataset_out() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("html")).unwrap();
    let topics = ["council budget vote", "river flood warning", "school lunch menu", "harbor ferry schedule"];
    let mut lines = String::new();
    for (i, t) in topics.iter().enumerate() {
        write(&dir.path().join("html"), &format!("p{i}.html"), article(t).as_bytes());
        let gold = format!("{t} {t} {t} {t} {t}.").repeat(8);
        let ds = if i % 2 == 0 { "even" } else { "odd" };
        let line = serde_json::json!({"id": format!("p{i}"), "dataset": ds, "split": "dev", "html": format!("html/p{i}.html"), "gold": {"text": gold}});
        lines.push_str(&format!("{line}\n"));
    }
    let manifest = write(dir.path(), "manifest.jsonl", lines.as_bytes());
    let out = pipeline(&[
        "tune",
        "--manifest",
        &manifest,
        "--bias",
        "model,0.3",
        "--tag-bias",
        "model",
        "--section-end-words",
        "30",
        "--extra-span-ratio",
        "0.5",
        "--multi-item-ratio",
        "0.2",
        "--title-anchor-ratio",
        "0.3",
        "--drop-more-furniture",
        "on",
        "--drop-hidden-microdata",
        "on",
        "--furniture-escape-ratio",
        "0.1",
        "--list-min-items",
        "6",
        "--threads",
        "1",
        "--json",
    ]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["datasets"], serde_json::json!(["even", "odd"]));
    assert_eq!(v["settings"].as_array().unwrap().len(), 2);
    assert_eq!(v["settings"][0]["bias"], serde_json::Value::Null, "the model's own setting comes first");
    let folds = v["folds"].as_array().unwrap();
    assert_eq!(folds.len(), 2);
    let mean = folds.iter().map(|f| f["left_out_f1"].as_f64().unwrap()).sum::<f64>() / 2.0;
    assert!((v["mean_left_out_f1"].as_f64().unwrap() - mean).abs() < 1e-9);
    assert!(mean > 0.5, "{v}");
    let text = pipeline(&[
        "tune",
        "--manifest",
        &manifest,
        "--bias",
        "model",
        "--tag-bias",
        "model",
        "--section-end-words",
        "30",
        "--threads",
        "1",
    ]);
    assert!(String::from_utf8_lossy(&text.stdout).contains("mean of the left-out folds"));
}

#[test]
fn non_finite_numbers_are_usage_errors_in_every_front_end() {
    let dir = tempfile::tempdir().unwrap();
    let page = write(dir.path(), "p.html", article("harbour council budget").as_bytes());
    let warc = dir.path().join("empty.warc");
    std::fs::write(&warc, b"").unwrap();
    let warc = warc.to_string_lossy().into_owned();
    let manifest = write(dir.path(), "m.jsonl", b"");
    for args in [
        vec!["extract", page.as_str(), "--bias", "NaN"],
        vec!["extract", page.as_str(), "--tag-bias", "inf"],
        vec!["extract", page.as_str(), "--extra-span-ratio", "nan"],
        vec!["extract", page.as_str(), "--extra-span-min", "inf"],
        vec!["eval", "--manifest", manifest.as_str(), "--furniture-escape-ratio", "nan"],
        vec!["bench", "--manifest", manifest.as_str(), "--bias", "nan"],
        vec!["tune", "--manifest", manifest.as_str(), "--bias", "nan"],
    ] {
        let o = pipeline(&args);
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains("nan") || stderr.contains("NaN") || stderr.contains("inf"), "{args:?}: {stderr}");
    }
    for bad in ["bias = nan", "tag_bias = -inf", "extra_span_min = inf"] {
        let cfg = write(
            dir.path(),
            "c.toml",
            format!(
                "[warc]\npaths = ['{warc}']\n[sink]\nout = '{}'\n[extractor]\n{bad}\n",
                dir.path().join("o").display()
            )
            .as_bytes(),
        );
        let o = pipeline(&["--config", &cfg]);
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{bad}: {stderr}");
        assert!(stderr.contains("extractor."), "{bad}: {stderr}");
        assert!(!dir.path().join("o").exists(), "{bad}: the run started");
    }
}

#[test]
fn feed_only_flags_with_warc_input_are_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    let warc = write(dir.path(), "w.warc", b"");
    let out = dir.path().join("o");
    for flag in [&["--once"][..], &["--delay-ms", "5"], &["--warc-out", "x"], &["--allow-private-addresses"]] {
        let mut args = vec!["--warc", warc.as_str(), "--out", out.to_str().unwrap()];
        args.extend(flag);
        let o = pipeline(&args);
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{flag:?}: {stderr}");
        assert!(stderr.contains(flag[0]) && stderr.contains("only apply to feeds runs"), "{stderr}");
        assert!(!out.exists());
    }
}

#[test]
fn the_crawl_pipeline_takes_the_extraction_flags_over_its_config_file() {
    let dir = tempfile::tempdir().unwrap();
    let warc = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/sample.warc.gz");
    let warc = warc.to_str().unwrap();
    let cfg = write(
        dir.path(),
        "c.toml",
        format!("[warc]\npaths = ['{warc}']\n[extractor]\nextra_span_ratio = 1.5\nmetadata = false\n").as_bytes(),
    );
    let out = |name: &str| dir.path().join(name).to_string_lossy().into_owned();
    // The file's out-of-range value is refused; the same key given as a flag replaces it.
    let o = pipeline(&["--config", &cfg, "--out", &out("a")]);
    assert_eq!(o.status.code(), Some(2), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stderr).contains("extractor.extra_span_ratio 1.5"));
    let o = pipeline(&["--config", &cfg, "--out", &out("b"), "--extra-span-ratio", "0.5"]);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    // The file's other keys stay: metadata = false gives records without article metadata.
    let part = std::path::Path::new(&out("b")).join("part-00000.jsonl.zst");
    let recs = article_pipeline::sink::read_part(&part).unwrap();
    assert!(!recs.is_empty() && recs.iter().all(|r| r["metadata"].get("article").is_none_or(|a| a.is_null())));
    // Without a file: the flags of `extract` work on the run command too.
    let o = pipeline(&["--warc", warc, "--out", &out("c"), "--keep-boilerplate", "--no-metadata", "--hr"]);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let o = pipeline(&["--warc", warc, "--out", &out("d"), "--extra-span-min", "inf"]);
    assert_eq!(o.status.code(), Some(2), "{}", String::from_utf8_lossy(&o.stderr));
}

/// `extract --url` gives a single page what a crawl gives it: the date in the URL's path and
/// canonical links resolved against the URL.
#[test]
fn extract_takes_the_pages_url_as_a_crawl_does() {
    let dir = tempfile::tempdir().unwrap();
    let html = format!(
        "<html><head><link rel=canonical href=\"/news/ferry\"></head><body>{}</body></html>",
        article("The council approved the ferry timetable after a long debate on Tuesday evening.")
    );
    let p = write(dir.path(), "page.html", html.as_bytes());
    let out = pipeline(&["extract", "--json", "--url", "https://harbour.test/2026/11/20/ferry", &p]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["url"], "https://harbour.test/2026/11/20/ferry");
    assert_eq!(v["metadata"]["published"], "2026-11-20");
    assert_eq!(v["metadata"]["date_source"], "url");
    assert_eq!(v["metadata"]["canonical_url"], "https://harbour.test/news/ferry");
    // Without it, the page alone has no date.
    let out = pipeline(&["extract", "--json", &p]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(v["metadata"]["published"].is_null(), "{v}");
    // One URL names one page.
    let out = pipeline(&["extract", "--url", "https://harbour.test/a", &p, &p]);
    assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stderr));
}
