//! `pipeline --warc` on Internet Archive ARC files the test writes (`.arc.gz`, one gzip member
//! per record, and plain `.arc`): records, offsets and dates as for WARC, a folder of ARC
//! files, and a file cut short that fails with its name and offset and exits 1.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output};

use article_pipeline::sink::{list_parts, read_part};
use serde_json::Value;

fn pipeline(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_pipeline")).args(args).output().expect("run pipeline")
}

fn page(n: usize) -> String {
    let para = format!(
        "<p>The harbour council met on Tuesday to discuss story {n}, and residents asked for a new bridge \
         near the school while officials planned a public hearing next month about the cost.</p>"
    );
    format!(
        "<html><head><title>Story {n}</title></head><body><div class=nav><a href=/>Home</a></div>\
         <h1>Story {n}</h1>{}</body></html>",
        para.repeat(5)
    )
}

/// An ARC v1 file of `n` pages; returns the offsets of the page records.
fn arc(path: &Path, n: usize, gz: bool) -> Vec<u64> {
    let desc = b"1 0 Test\nURL IP-address Archive-date Content-type Archive-length\n";
    let mut records = vec![{
        let mut r =
            format!("filedesc://{} 0.0.0.0 20010101000000 text/plain {}\n", path.display(), desc.len()).into_bytes();
        r.extend_from_slice(desc);
        r.push(b'\n');
        r
    }];
    for i in 0..n {
        let body = page(i);
        let http =
            format!("HTTP/1.0 200 OK\r\nContent-Type: text/html\r\nContent-Length: {}\r\n\r\n{body}", body.len());
        let mut r =
            format!("http://old.test/story/{i}.html 10.0.0.1 2001020304050{i} text/html {}\n", http.len()).into_bytes();
        r.extend_from_slice(http.as_bytes());
        r.push(b'\n');
        records.push(r);
    }
    let mut out = Vec::new();
    let mut offsets = Vec::new();
    for (k, r) in records.iter().enumerate() {
        if k > 0 {
            offsets.push(out.len() as u64);
        }
        if gz {
            let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
            e.write_all(r).unwrap();
            out.extend_from_slice(&e.finish().unwrap());
        } else {
            out.extend_from_slice(r);
        }
    }
    std::fs::write(path, out).unwrap();
    offsets
}

fn records(out: &Path) -> Vec<Value> {
    list_parts(out).unwrap().iter().flat_map(|p| read_part(p).unwrap()).collect()
}

#[test]
fn arc_files_are_read_like_warc_files() {
    let dir = tempfile::tempdir().unwrap();
    let inputs = dir.path().join("in");
    std::fs::create_dir(&inputs).unwrap();
    let gz_offsets = arc(&inputs.join("a.arc.gz"), 3, true);
    arc(&inputs.join("b.arc"), 2, false);
    let out = dir.path().join("out");
    let o = pipeline(&["--warc", inputs.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let recs = records(&out);
    assert_eq!(recs.len(), 5);
    let first = &recs[0];
    assert_eq!(first["metadata"]["url"], "http://old.test/story/0.html");
    assert_eq!(first["metadata"]["fetched_at"], "2001-02-03T04:05:00Z");
    assert_eq!(first["metadata"]["source"]["offset"], gz_offsets[0]);
    assert!(first["metadata"]["source"]["file"].as_str().unwrap().ends_with("a.arc.gz"));
    assert!(first["text"].as_str().unwrap().contains("residents asked for a new bridge"));
}

#[test]
fn an_arc_file_cut_short_is_named_with_its_offset_and_exits_1() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cut.arc.gz");
    let offsets = arc(&path, 3, true);
    let bytes = std::fs::read(&path).unwrap();
    std::fs::write(&path, &bytes[..offsets[2] as usize + 40]).unwrap();
    let out = dir.path().join("out");
    let o = pipeline(&["--warc", path.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("cut.arc.gz") && err.contains(&format!("byte {}", offsets[2])), "{err}");
    assert_eq!(records(&out).len(), 2, "the records before the cut are written");
}
