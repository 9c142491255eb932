//! Behaviour of the memory-based scorers (the TiMBL thesis) through the binary: `train
//! --learner knn|igtree` writes a model that `--scorer knn|igtree --model` uses; `eval` prints
//! the per-class unit table; `extract --json` carries the predicted title and headings; a
//! missing or corrupt model is a clear usage error.

use crate::common;

use std::path::Path;

use common::{assert_model_errors, pipeline, write};

fn page(title: &str, heading: &str, story: &str) -> String {
    format!(
        "<html><head><title>{title} | Daily</title></head><body><div class=nav><ul><li><a href=/>Home</a></li>\
         <li><a href=/w>World</a></li><li><a href=/s>Sport</a></li></ul></div><div class=main><h1>{title}</h1>\
         <p>{story}</p><h2>{heading}</h2><p>{story}</p></div><div class=foot><a href=/x>More stories</a> \
         <a href=/y>Subscribe now</a></div></body></html>"
    )
}

const STORIES: [(&str, &str, &str); 4] = [
    (
        "Park to grow",
        "What comes next",
        "The council voted to expand the park on Tuesday, and the work will start in May.",
    ),
    (
        "Bridge opens",
        "Traffic changes",
        "A new bridge over the river opened this week after three years of building work.",
    ),
    (
        "Teachers hired",
        "Budget details",
        "The school board said that it will hire ten new teachers for the coming year.",
    ),
    (
        "Market flooded",
        "Clean-up begins",
        "Heavy rain flooded the old market on Sunday, but nobody was hurt, the police said.",
    ),
];

fn manifest(dir: &Path) -> String {
    std::fs::create_dir(dir.join("html")).unwrap();
    let mut m = String::new();
    for (i, (t, h, s)) in STORIES.iter().enumerate() {
        write(&dir.join("html"), &format!("{i}.html"), page(t, h, s).as_bytes());
        let gold = format!("{s}\n\n{h}\n\n{s}");
        let line = serde_json::json!({"id": format!("p{i}"), "dataset": "t", "split": "train",
            "html": format!("html/{i}.html"), "gold": {"text": gold, "title": t}});
        m.push_str(&format!("{line}\n"));
    }
    write(dir, "manifest.jsonl", m.as_bytes())
}

fn train(m: &str, learner: &str, out: &str, extra: &[&str]) -> String {
    let mut args =
        vec!["train", "--learner", learner, "--manifest", m, "--split", "train", "--out", out, "--threads", "1"];
    args.extend_from_slice(extra);
    let o = pipeline(&args);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn knn_without_a_model_or_with_a_corrupt_one_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(dir.path(), "p.html", page("T", "H", "The council met on Tuesday.").as_bytes());
    for scorer in ["knn", "igtree"] {
        assert_model_errors(dir.path(), &p, scorer, &format!("bad-{scorer}.mbl"));
    }
}

#[test]
fn trained_knn_and_igtree_extract_the_story_with_its_title_and_headings() {
    let dir = tempfile::tempdir().unwrap();
    let m = manifest(dir.path());
    let knn = dir.path().join("x.mbl").to_string_lossy().into_owned();
    let log = train(&m, "knn", &knn, &["--k", "1", "--weighting", "gr"]);
    assert!(log.contains("4 used") && log.contains("distinct vectors"), "{log}");
    let igt = dir.path().join("x.igt").to_string_lossy().into_owned();
    let log = train(&m, "igtree", &igt, &["--weighting", "ig"]);
    assert!(log.contains("tree nodes"), "{log}");
    let story = "The mayor said that the new library will open in June next year.";
    let p = write(dir.path(), "new.html", page("Library opens", "Opening hours", story).as_bytes());
    for (scorer, model) in [("knn", &knn), ("igtree", &igt), ("igtree", &knn)] {
        let out = pipeline(&["extract", "--scorer", scorer, "--model", model, "--json", &p]);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let text = v["text"].as_str().unwrap();
        assert!(text.contains("the new library will open in June"), "{scorer}: {text}");
        assert!(!text.contains("Subscribe") && !text.contains("Sport"), "{scorer}: {text}");
        let s = &v["structure"];
        assert_eq!(s["title"], "Library opens", "{scorer}: {s}");
        assert_eq!(s["headings"], serde_json::json!(["Opening hours"]), "{scorer}: {s}");
        assert_eq!(s["warnings"], serde_json::json!([]), "{scorer}: {s}");
    }
    // An IGTree file has no instances for IB1.
    let out = pipeline(&["extract", "--scorer", "knn", "--model", &igt, &p]);
    assert_eq!(out.status.code(), Some(2));
    // Scorers that do not label structure have none.
    let out = pipeline(&["extract", "--scorer", "simple", "--json", &p]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(v["structure"].is_null());
}

#[test]
fn eval_prints_per_class_unit_scores() {
    let dir = tempfile::tempdir().unwrap();
    let m = manifest(dir.path());
    let model = dir.path().join("x.mbl").to_string_lossy().into_owned();
    train(&m, "knn", &model, &[]);
    let out = pipeline(&["eval", "--manifest", &m, "--scorer", "knn", "--model", &model, "--threads", "1"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let table = String::from_utf8(out.stdout).unwrap();
    // Training pages classify perfectly at k = 1 (each instance finds itself).
    for class in ["title", "heading", "body", "garbage"] {
        let row = table.lines().find(|l| l.starts_with(class)).unwrap_or_else(|| panic!("{table}"));
        assert!(row.contains("1.000"), "{row}\n{table}");
    }
    let out = pipeline(&["eval", "--manifest", &m, "--scorer", "knn", "--model", &model, "--threads", "1", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["units"]["classes"][2]["class"], "body");
    assert_eq!(v["units"]["classes"][2]["micro"]["f1"], 1.0);
    assert_eq!(v["units"]["accuracy"], 1.0);
}

#[test]
fn crawl_records_carry_the_predicted_title_and_headings() {
    use article_pipeline::sink::{list_parts, read_part};
    use article_pipeline::sources::warc_writer::{Exchange, WarcWriter};
    let dir = tempfile::tempdir().unwrap();
    let m = manifest(dir.path());
    let model = dir.path().join("x.mbl").to_string_lossy().into_owned();
    train(&m, "knn", &model, &[]);
    let warc = dir.path().join("c.warc.gz");
    let mut w = WarcWriter::create(&warc, "test").unwrap();
    let story = "The mayor said that the new library will open in June next year.";
    let mut response = b"HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n\r\n".to_vec();
    response.extend_from_slice(page("Library opens", "Opening hours", story).as_bytes());
    let ex = Exchange {
        url: "http://news.test/1",
        date: "2026-11-22T10:00:00Z",
        request: b"GET / HTTP/1.1\r\n\r\n",
        response: &response,
        ip: None,
    };
    w.write_exchange(&ex).unwrap();
    w.finish().unwrap();
    for (scorer, model) in [("knn", Some(model.as_str())), ("simple", None)] {
        let out = dir.path().join(format!("out-{scorer}"));
        let mut args = vec!["--warc", warc.to_str().unwrap(), "--out", out.to_str().unwrap(), "--scorer", scorer];
        if let Some(m) = model {
            args.extend_from_slice(&["--model", m]);
        }
        let o = pipeline(&args);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let recs: Vec<serde_json::Value> =
            list_parts(&out).unwrap().iter().flat_map(|p| read_part(p).unwrap()).collect();
        assert_eq!(recs.len(), 1);
        let s = &recs[0]["metadata"]["structure"];
        if scorer == "knn" {
            assert_eq!(s["title"], "Library opens", "{s}");
            assert_eq!(s["headings"], serde_json::json!(["Opening hours"]), "{s}");
            assert_eq!(recs[0]["metadata"]["html_title"], "Library opens | Daily");
        } else {
            assert!(s.is_null(), "{s}");
        }
    }
}
