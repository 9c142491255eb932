//! Helpers shared by tests: run the binary, write an input file or a WARC of pages, and the
//! usage errors every scorer that needs a model file must give.

use std::path::Path;
use std::process::{Command, Output};

/// Runs the `pipeline` binary.
pub fn pipeline(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_pipeline")).args(args).output().expect("run pipeline")
}

/// Stops a running `pipeline` with `signal` (`TERM`, `INT`), as an orchestrator or Ctrl-C
/// does, and waits at most 30 s for it to end: its exit status and what it wrote to its piped
/// standard error.
#[allow(dead_code)] // not every test module stops a run
pub fn stop(child: &mut std::process::Child, signal: &str) -> (std::process::ExitStatus, String) {
    let o = Command::new("kill").args([format!("-{signal}"), child.id().to_string()]).output().unwrap();
    assert!(o.status.success());
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        assert!(std::time::Instant::now() < deadline, "no clean stop after SIG{signal}");
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    let mut stderr = String::new();
    if let Some(pipe) = child.stderr.as_mut() {
        std::io::Read::read_to_string(pipe, &mut stderr).unwrap();
    }
    (status, stderr)
}

/// `paragraphs` paragraphs of 40 words drawn from `words` by a linear congruential generator
/// started at `seed`: article text that differs from page to page and is the same on every run.
#[allow(dead_code)] // not every test binary that shares this module generates pages
pub fn paragraphs(seed: u64, paragraphs: usize, words: &[&str]) -> String {
    let mut s = seed;
    let mut body = String::new();
    for _ in 0..paragraphs {
        body.push_str("<p>");
        for _ in 0..40 {
            s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            body.push_str(words[(s >> 33) as usize % words.len()]);
            body.push(' ');
        }
        body.push_str("</p>");
    }
    body
}

/// Writes `bytes` to `dir/name`; returns the path.
pub fn write(dir: &Path, name: &str, bytes: &[u8]) -> String {
    let p = dir.join(name);
    std::fs::write(&p, bytes).unwrap();
    p.to_string_lossy().into_owned()
}

/// `extract --scorer S` on `page` without a model, and with a corrupt one named `bad_name`: both
/// exit 2 with a message naming the scorer (or the model file).
#[allow(dead_code)] // not every test binary that shares this module checks model errors
pub fn assert_model_errors(dir: &Path, page: &str, scorer: &str, bad_name: &str) {
    let out = pipeline(&["extract", "--scorer", scorer, page]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("needs a model file") && err.contains(scorer), "{err}");
    let bad = write(dir, bad_name, b"APMODEL\x01garbage");
    let out = pipeline(&["extract", "--scorer", scorer, "--model", &bad, page]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains(bad_name));
}

/// Six short news stories for the story pages of the learned scorers' tests.
#[allow(dead_code)]
pub const STORIES: [&str; 6] = [
    "The council voted to expand the park on Tuesday, and the work will start in May.",
    "A new bridge over the river opened this week after three years of building work.",
    "The school board said that it will hire ten new teachers for the coming year.",
    "Heavy rain flooded the old market on Sunday, but nobody was hurt, the police said.",
    "The city will plant two thousand trees along the main roads before the summer.",
    "Local farmers expect a good harvest this year after a warm and wet spring season.",
];

/// Writes one page per story (`html/<i>.html`, built by `page`) and a manifest whose gold is
/// "News" and the story twice, split `split(i)`; returns the manifest's path.
// Each test binary compiles this module on its own; `knn.rs` builds its own pages.
#[allow(dead_code)]
pub fn story_manifest(
    dir: &Path,
    stories: &[&str],
    page: fn(&str) -> String,
    split: fn(usize) -> &'static str,
) -> String {
    std::fs::create_dir_all(dir.join("html")).unwrap();
    let mut manifest = String::new();
    for (i, s) in stories.iter().enumerate() {
        write(&dir.join("html"), &format!("{i}.html"), page(s).as_bytes());
        let gold = format!("News\n\n{s}\n\n{s}");
        let line = serde_json::json!({"id": format!("p{i}"), "dataset": "t", "split": split(i), "html": format!("html/{i}.html"), "gold": {"text": gold}});
        manifest.push_str(&format!("{line}\n"));
    }
    write(dir, "manifest.jsonl", manifest.as_bytes())
}

/// Writes a WARC of HTML responses (`(url, html)`, fetched 2026-11-24); returns their record
/// ids (without angle brackets).
#[allow(dead_code)] // not every test binary that shares this module writes WARCs
pub fn write_warc(path: &Path, pages: impl IntoIterator<Item = (String, String)>) -> Vec<String> {
    use article_pipeline::sources::warc_writer::{Exchange, WarcWriter};
    let mut w = WarcWriter::create(path, "test").unwrap();
    let ids = pages
        .into_iter()
        .map(|(url, html)| {
            let mut resp = b"HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n\r\n".to_vec();
            resp.extend_from_slice(html.as_bytes());
            let ex = Exchange {
                url: &url,
                date: "2026-11-24T00:00:00Z",
                request: b"GET / HTTP/1.1\r\n\r\n",
                response: &resp,
                ip: None,
            };
            w.write_exchange(&ex).unwrap().1.trim_matches(['<', '>']).to_string()
        })
        .collect();
    w.finish().unwrap();
    ids
}
