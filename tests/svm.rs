//! Behaviour of the SVM block classifier (Yao & Zuo) through the binary: `train --learner svm`
//! writes a model that `--scorer svm --model` uses in `extract` and `eval` (with the LCS
//! columns); a missing or corrupt model is a clear usage error.

use crate::common;

use common::{assert_model_errors, pipeline, story_manifest, write};

fn page(story: &str) -> String {
    format!(
        "<html><head><title>T</title></head><body>\
         <div class=\"nav menu\"><ul><li><a href=/>Home</a></li><li><a href=/w>World</a></li><li><a href=/s>Sport</a></li></ul></div>\
         <div class=article><h1>News</h1><p>{story}</p><p>{story}</p></div>\
         <div class=sidebar><a href=/x>More stories</a> <a href=/y>Subscribe now</a></div>\
         <div class=footer><a href=/c>Contact</a> | <a href=/p>Privacy</a></div></body></html>"
    )
}

#[test]
fn svm_without_a_model_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(dir.path(), "p.html", page("The council met on Tuesday.").as_bytes());
    assert_model_errors(dir.path(), &p, "svm", "bad.svm");
}

#[test]
fn trained_svm_model_extracts_and_evaluates_the_story() {
    let dir = tempfile::tempdir().unwrap();
    let m = story_manifest(dir.path(), &common::STORIES, page, |i| if i < 4 { "train" } else { "dev" });
    let model = dir.path().join("x.svm").to_string_lossy().into_owned();
    let out = pipeline(&[
        "train",
        "--learner",
        "svm",
        "--manifest",
        &m,
        "--split",
        "train",
        "--out",
        &model,
        "--threads",
        "1",
        "--min-coverage",
        "0.5",
    ]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let training = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(training.contains("support vectors"), "{training}");
    let p = write(
        dir.path(),
        "new.html",
        page("The mayor said that the new library will open in June next year.").as_bytes(),
    );
    let out = pipeline(&["extract", "--scorer", "svm", "--model", &model, &p]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("the new library will open in June"), "{text}\ntraining: {training}");
    assert!(!text.contains("Subscribe") && !text.contains("Sport") && !text.contains("Privacy"), "{text}");

    let out = pipeline(&["eval", "--manifest", &m, "--split", "dev", "--scorer", "svm", "--model", &model, "--json"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let lcs = v["overall"]["lcs_f1"].as_f64().unwrap();
    assert!(lcs > 0.9, "lcs_f1 {lcs}: {v}");
    assert!(v["overall"]["lcs_p"].as_f64().is_some() && v["overall"]["lcs_r"].as_f64().is_some());
    let out = pipeline(&["eval", "--manifest", &m, "--split", "dev", "--scorer", "svm", "--model", &model]);
    assert!(String::from_utf8_lossy(&out.stdout).contains("lcsF1"));
}
