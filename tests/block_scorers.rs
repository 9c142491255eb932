//! The block scorers of Gibson et al. 2007 through the `pipeline` binary, on pages the test
//! writes: train a CRF / MEMM / MaxEnt model, evaluate it with block metrics, extract with
//! the multi-span, hybrid and largest-block scorers, and refuse wrong or missing models.

use std::path::Path;
use std::process::{Command, Output};

fn pipeline(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_pipeline")).args(args).output().expect("run pipeline")
}

const TOPICS: [&str; 8] = [
    "the council voted to expand the riverside park on tuesday evening",
    "engineers said the new bridge would open to traffic next spring",
    "the museum will show paintings lent by collectors from three countries",
    "farmers in the valley reported a record harvest of apples this year",
    "the school board approved a plan to hire more teachers for the autumn",
    "residents complained about noise from the construction site near the station",
    "the hospital opened a new wing for children with a garden on the roof",
    "a local bakery won a national prize for its rye bread and pastries",
];

/// A page with navigation, an article interrupted by an advert, related links and a footer;
/// returns the page and its gold text.
fn page(i: usize) -> (String, String) {
    let words = TOPICS[i];
    let other = TOPICS[(i + 3) % TOPICS.len()];
    let paras: Vec<String> = (0..4).map(|k| format!("{words} and paragraph {k} goes on about it.")).collect();
    let html = format!(
        "<html><head><title>News {i}</title></head><body>\
         <nav><ul><li><a href=/>Home</a></li><li><a href=/a>About</a></li><li><a href=/s>Sport</a></li></ul></nav>\
         <div class=story><h1>News {i}</h1><p>{}</p><p>{}</p>\
         <div class=ad><a href=/ad>Buy now and save on insurance</a></div><p>{}</p><p>{}</p></div>\
         <aside><ul><li><a href=/r1>{other}</a></li><li><a href=/r2>More stories like this</a></li></ul></aside>\
         <footer><a href=/c>Contact</a> <a href=/p>Privacy policy and terms</a></footer></body></html>",
        paras[0], paras[1], paras[2], paras[3]
    );
    (html, paras.join("\n\n"))
}

fn write(dir: &Path, name: &str, bytes: &[u8]) -> String {
    let p = dir.join(name);
    std::fs::write(&p, bytes).unwrap();
    p.to_string_lossy().into_owned()
}

fn manifest(dir: &Path) -> String {
    std::fs::create_dir_all(dir.join("html")).unwrap();
    let mut lines = String::new();
    for i in 0..TOPICS.len() {
        let (html, gold) = page(i);
        write(&dir.join("html"), &format!("p-{i}.html"), html.as_bytes());
        let split = if i < 6 { "train" } else { "dev" };
        let line = serde_json::json!({"id": format!("p-{i}"), "dataset": "t", "split": split,
            "html": format!("html/p-{i}.html"), "gold": {"text": gold}});
        lines.push_str(&format!("{line}\n"));
    }
    write(dir, "manifest.jsonl", lines.as_bytes())
}

#[test]
fn train_eval_and_extract_with_every_block_scorer() {
    let dir = tempfile::tempdir().unwrap();
    let m = manifest(dir.path());
    for learner in ["crf", "memm", "maxent"] {
        let model = dir.path().join(format!("{learner}.model")).to_string_lossy().into_owned();
        let out = pipeline(&[
            "train",
            "--learner",
            learner,
            "--manifest",
            &m,
            "--split",
            "train",
            "--out",
            &model,
            "--dims-log2",
            "14",
        ]);
        assert!(out.status.success(), "{learner}: {}", String::from_utf8_lossy(&out.stderr));
        let scorers: &[&str] = if learner == "crf" { &["crf", "crf-mss"] } else { &[learner] };
        for scorer in scorers {
            let out = pipeline(&[
                "eval",
                "--manifest",
                &m,
                "--split",
                "dev",
                "--scorer",
                scorer,
                "--model",
                &model,
                "--json",
            ]);
            assert!(out.status.success(), "{scorer}: {}", String::from_utf8_lossy(&out.stderr));
            let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
            let f1 = v["overall"]["shingle_f1"].as_f64().unwrap();
            assert!(f1 > 0.8, "{scorer}: shingle F1 {f1}");
            assert_eq!(v["blocks"]["all"]["pages"], 2, "{scorer}: {v}");
            assert!(v["blocks"]["all"]["block_recall"].as_f64().unwrap() > 0.8, "{scorer}: {v}");
        }
        // The multi-span output keeps the article around the advert and drops the advert.
        let (html, _) = page(7);
        let p = write(dir.path(), "x.html", html.as_bytes());
        let out = pipeline(&["extract", "--scorer", learner, "--model", &model, &p]);
        assert_eq!(out.status.code(), Some(0), "{learner}: {}", String::from_utf8_lossy(&out.stderr));
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(text.contains("paragraph 0") && text.contains("paragraph 3"), "{learner}: {text}");
        assert!(!text.contains("Buy now and save on insurance"), "{learner}: the advert was kept: {text}");
        assert!(!text.contains("Privacy"), "{learner}: {text}");
    }
}

#[test]
fn largest_block_needs_no_model_and_block_scorers_need_theirs() {
    let dir = tempfile::tempdir().unwrap();
    let (html, _) = page(0);
    let p = write(dir.path(), "a.html", html.as_bytes());
    let out = pipeline(&["extract", "--scorer", "largest-block", &p]);
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("paragraph 2"));
    let out = pipeline(&["extract", "--scorer", "crf", &p]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("needs a model file"));
    let junk = write(dir.path(), "junk.model", b"APMODEL\x01 not really");
    let out = pipeline(&["extract", "--scorer", "memm", "--model", &junk, &p]);
    assert_eq!(out.status.code(), Some(2));
}
