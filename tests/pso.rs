//! Behaviour of the PSO-threshold scorer (Ziegler & Skubacz 2007) through the binary:
//! `train --learner pso` writes a model that `--scorer pso --model` uses; a missing or corrupt
//! model is a clear usage error.

use crate::common;

use common::{assert_model_errors, pipeline, story_manifest, write};

fn page(story: &str) -> String {
    format!(
        "<html><head><title>T</title></head><body><table><tr>\
         <td><ul><li><a href=/>Home</a></li><li><a href=/w>World</a></li><li><a href=/s>Sport</a></li></ul></td>\
         <td><h1>News</h1><p>{story}</p><p>{story}</p></td>\
         <td><a href=/x>More stories</a> <a href=/y>Subscribe now</a></td></tr></table></body></html>"
    )
}

#[test]
fn pso_without_a_model_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(dir.path(), "p.html", page("The council met on Tuesday.").as_bytes());
    assert_model_errors(dir.path(), &p, "pso", "bad.pso");
}

#[test]
fn trained_pso_model_extracts_the_story() {
    let dir = tempfile::tempdir().unwrap();
    let stories = [
        "The council voted to expand the park on Tuesday, and the work will start in May.",
        "A new bridge over the river opened this week after three years of building work.",
        "The school board said that it will hire ten new teachers for the coming year.",
        "Heavy rain flooded the old market on Sunday, but nobody was hurt, the police said.",
    ];
    let m = story_manifest(dir.path(), &stories, page, |_| "train");
    let model = dir.path().join("x.pso").to_string_lossy().into_owned();
    let out = pipeline(&[
        "train",
        "--learner",
        "pso",
        "--manifest",
        &m,
        "--split",
        "train",
        "--out",
        &model,
        "--threads",
        "1",
    ]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let training = String::from_utf8_lossy(&out.stderr).into_owned();
    let p = write(
        dir.path(),
        "new.html",
        page("The mayor said that the new library will open in June next year.").as_bytes(),
    );
    let out = pipeline(&["extract", "--scorer", "pso", "--model", &model, &p]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("the new library will open in June"), "{text}\ntraining: {training}");
    assert!(!text.contains("Subscribe") && !text.contains("Sport"), "{text}");
    // `pso-blocks` keeps every accepted block (the paper's output): the story here too.
    let out = pipeline(&["extract", "--scorer", "pso-blocks", "--model", &model, "--json", &p]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let json = String::from_utf8(out.stdout).unwrap();
    assert!(json.contains("the new library will open in June") && json.contains("\"pso-blocks\""), "{json}");
    assert!(!json.contains("Subscribe"), "{json}");
}
