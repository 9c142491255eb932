//! `--format parquet`: a WARC run writes Parquet parts whose records, read back with the
//! `parquet` crate, are the JSONL records of the same run (dates as UTC timestamps); parts
//! rotate by size, a run resumes over its Parquet parts, and `pipeline dedup` and `status`
//! read them.

use std::collections::BTreeMap;
use std::path::Path;

use article_pipeline::sink::parquet::timestamp_millis;
use article_pipeline::sink::{list_parts, read_part};
use serde_json::Value;

use crate::common;

use common::pipeline;

const WORDS: [&str; 10] =
    ["harbour", "council", "ferry", "vote", "river", "bridge", "market", "winter", "school", "park"];

/// Page `i`: metadata in the head (author, date, keywords), and every tenth page repeats the
/// one before it (a near duplicate).
fn page(i: usize) -> String {
    let seed = if i % 10 == 9 { i - 1 } else { i };
    let body = common::paragraphs(seed as u64 + 11, 5, &WORDS);
    let keywords = if i.is_multiple_of(2) { "<meta name=keywords content=\"harbour, council\">" } else { "" };
    format!(
        "<html lang=en><head><title>Story {i}</title><meta name=author content=\"Ann Lee\">\
         <meta property=article:published_time content=\"2026-11-{:02}T08:30:00+01:00\">{keywords}</head>\
         <body><nav><a href=/>Home</a></nav><article><h1>Story {i}</h1>{body}</article></body></html>",
        1 + i % 20
    )
}

fn warc(path: &Path, n: usize) {
    common::write_warc(path, (0..n).map(|i| (format!("http://news.test/{i}"), page(i))));
}

fn records(out: &Path) -> BTreeMap<String, Value> {
    let mut m = BTreeMap::new();
    for p in list_parts(out).unwrap() {
        for r in read_part(&p).unwrap() {
            assert!(m.insert(r["id"].as_str().unwrap().to_string(), r).is_none(), "an id twice");
        }
    }
    m
}

/// A JSONL record as a Parquet part gives it back: dates as UTC instants.
fn as_parquet_gives(mut r: Value) -> Value {
    for key in ["fetched_at", "published", "modified"] {
        let v = &mut r["metadata"][key];
        if let Some(s) = v.as_str() {
            let ms = timestamp_millis(s).unwrap();
            *v = Value::from(
                chrono::DateTime::from_timestamp_millis(ms)
                    .unwrap()
                    .to_rfc3339_opts(chrono::SecondsFormat::AutoSi, true),
            );
        }
    }
    r
}

#[test]
fn parquet_parts_hold_the_jsonl_records_and_resume_dedup_and_status_read_them() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.warc.gz");
    warc(&input, 300);
    let (pq, js) = (dir.path().join("pq"), dir.path().join("js"));
    // One thread: site memory learns online, so its marks follow the order pages arrive in.
    let common = ["--warc", input.to_str().unwrap(), "--scorer", "simple", "--no-progress", "--threads", "1"];
    let o = pipeline(
        &[&common[..], &["--out", pq.to_str().unwrap(), "--format", "parquet", "--part-bytes", "20000"]].concat(),
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let o = pipeline(&[&common[..], &["--out", js.to_str().unwrap()]].concat());
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));

    let parts = list_parts(&pq).unwrap();
    assert!(parts.len() >= 3, "{} parts", parts.len());
    assert!(parts.iter().all(|p| p.extension().unwrap() == "parquet"));
    let (from_pq, from_js) = (records(&pq), records(&js));
    assert_eq!(from_pq.len(), 300);
    for (id, j) in &from_js {
        let mut p = from_pq[id].clone();
        let mut j = as_parquet_gives(j.clone());
        // The run's own output folder differs.
        for r in [&mut p, &mut j] {
            r["metadata"]["source"]["file"] = Value::Null;
        }
        assert_eq!(p, j, "record {id}");
    }
    let any = from_pq.values().next().unwrap();
    assert_eq!(any["metadata"]["authors"], serde_json::json!(["Ann Lee"]), "{any}");
    assert!(any["metadata"]["published"].as_str().unwrap().ends_with("07:30:00Z"), "{any}");
    let marked = from_pq.values().filter(|r| !r["metadata"]["near_duplicate_of"].is_null()).count();
    assert!(marked >= 25, "{marked} near duplicates marked");

    // Resume over Parquet parts: nothing written twice, the near-duplicate index rebuilt.
    let o = pipeline(&[&common[..], &["--out", pq.to_str().unwrap(), "--format", "parquet", "--resume"]].concat());
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(records(&pq).len(), 300);

    // `pipeline dedup` over Parquet parts, writing Parquet, removes what it removes over JSONL.
    let (dq, dj) = (dir.path().join("dq"), dir.path().join("dj"));
    for (input, out, format) in [(&pq, &dq, "parquet"), (&js, &dj, "jsonl")] {
        let o = pipeline(&[
            "dedup",
            input.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--write-parts",
            "--format",
            format,
        ]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
    let (kq, kj) = (records(&dq), records(&dj));
    assert_eq!(kq.keys().collect::<Vec<_>>(), kj.keys().collect::<Vec<_>>());
    assert!(kq.len() < 300 && kq.len() >= 270, "{} kept", kq.len());
    assert!(list_parts(&dq).unwrap().iter().all(|p| p.extension().unwrap() == "parquet"));

    // `pipeline status` counts the parts.
    let st = pipeline(&["status", pq.to_str().unwrap(), "--json"]);
    assert!(st.status.success(), "{}", String::from_utf8_lossy(&st.stderr));
    let st: Value = serde_json::from_slice(&st.stdout).unwrap();
    assert_eq!(st["stats"]["written"], 300, "{st}");
}
