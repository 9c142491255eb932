//! `schema/record.schema.json` against what the binary writes: records of every scorer of
//! `methods::NAMES`, from a WARC run with a model trained here where the scorer needs one,
//! validated with a JSON Schema validator; and the schema's scorer list equals `NAMES`.

use crate::common;

use std::path::Path;

use article_pipeline::methods;
use article_pipeline::sink::{list_parts, read_part};
use common::{STORIES, pipeline, story_manifest};

fn page(story: &str) -> String {
    format!(
        "<html><head><title>News</title></head><body>\
         <nav><ul><li><a href=/>Home</a></li><li><a href=/s>Sport</a></li><li><a href=/w>Weather</a></li></ul></nav>\
         <div class=story><h1>News</h1><p>{story}</p><p>{story}</p></div>\
         <footer><a href=/c>Contact</a> <a href=/p>Privacy policy and terms</a></footer></body></html>"
    )
}

fn schema() -> serde_json::Value {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/schema/record.schema.json");
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

/// The model each scorer needs: the learner that trains it, or none.
fn learner_of(scorer: &str) -> Option<&'static str> {
    match scorer {
        "nb" | "simple" | "largest-block" => None,
        "crf" | "crf-mss" => Some("crf"),
        "memm" => Some("memm"),
        "maxent" => Some("maxent"),
        "pso" | "pso-blocks" => Some("pso"),
        "svm" => Some("svm"),
        "knn" => Some("knn"),
        "igtree" => Some("igtree"),
        other => panic!("scorer `{other}` is new: say here which learner trains its model"),
    }
}

#[test]
fn the_schema_lists_exactly_the_scorers_of_the_binary() {
    let s = schema();
    let listed: Vec<&str> = s["properties"]["metadata"]["properties"]["extraction"]["properties"]["scorer"]["enum"]
        .as_array()
        .expect("scorer enum")
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(listed, methods::NAMES, "schema/record.schema.json scorer enum vs methods::NAMES");
}

#[test]
fn records_of_every_scorer_validate_against_the_schema() {
    let validator = jsonschema::validator_for(&schema()).expect("the schema compiles");
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let manifest = story_manifest(d, &STORIES, page, |_| "train");
    let html: Vec<String> =
        (0..STORIES.len()).map(|i| d.join(format!("html/{i}.html")).display().to_string()).collect();
    let warc = d.join("pages.warc.gz").display().to_string();
    let mut args = vec!["pack-warc", "--out", &warc];
    args.extend(html.iter().map(String::as_str));
    let out = pipeline(&args);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));

    for scorer in methods::NAMES {
        let mut run =
            vec!["--warc".to_string(), warc.clone(), "--scorer".into(), scorer.into(), "--threads".into(), "1".into()];
        if let Some(learner) = learner_of(scorer) {
            let model = model(d, &manifest, learner);
            run.extend(["--model".into(), model]);
        }
        let out_dir = d.join(format!("out-{scorer}"));
        run.extend(["--out".into(), out_dir.display().to_string()]);
        let out = pipeline(&run.iter().map(String::as_str).collect::<Vec<_>>());
        assert!(out.status.success(), "{scorer}: {}", String::from_utf8_lossy(&out.stderr));
        let mut n = 0;
        for part in list_parts(&out_dir).unwrap() {
            for record in read_part(&part).unwrap() {
                let errors: Vec<String> =
                    validator.iter_errors(&record).map(|e| format!("{} at {}", e, e.instance_path())).collect();
                assert!(errors.is_empty(), "{scorer}: record does not match the schema:\n  {}", errors.join("\n  "));
                assert_eq!(record["metadata"]["extraction"]["scorer"], scorer);
                n += 1;
            }
        }
        assert_eq!(n, STORIES.len(), "{scorer}: records written");
    }
}

/// Trains (once per learner) a small model on the story pages.
fn model(dir: &Path, manifest: &str, learner: &str) -> String {
    let path = dir.join(format!("{learner}.model"));
    if !path.exists() {
        let p = path.display().to_string();
        let mut args = vec![
            "train",
            "--learner",
            learner,
            "--manifest",
            manifest,
            "--split",
            "train",
            "--out",
            &p,
            "--threads",
            "1",
        ];
        if matches!(learner, "crf" | "memm" | "maxent") {
            args.extend(["--dims-log2", "14"]);
        }
        if learner == "svm" {
            args.extend(["--min-coverage", "0.5"]);
        }
        let out = pipeline(&args);
        assert!(out.status.success(), "train {learner}: {}", String::from_utf8_lossy(&out.stderr));
    }
    path.display().to_string()
}
