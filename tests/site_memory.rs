//! Site memory in a `pipeline --warc` run, on a crawl the test generates: 3 sites × 50 pages
//! whose articles never repeat, each with a newsletter box inside the article and a "most read"
//! rail that come back on every page of the site. The supervised model keeps the box (it reads
//! as prose); site memory learns it from the site's earlier pages and drops it, keeps every
//! article, marks the records, and saves its counts for a resumed run.

use std::path::Path;

use article_pipeline::sink::{list_parts, read_part};
use article_pipeline::site_memory::{SiteMemory, SiteMemoryOptions};
use article_pipeline::sources::warc_writer::{Exchange, WarcWriter};
use serde_json::Value;

#[allow(dead_code)] // this test uses `pipeline` only
use crate::common;
use common::pipeline;

/// A pseudo-word from two of these syllables.
const SYLLABLES: &[&str] = &["ka", "lo", "mi", "ren", "tos", "vu", "sel", "dar", "pin", "gor", "bel", "fu"];

const SITES: [&str; 3] = ["harbor-daily.test", "valley-news.test", "metro-post.test"];

fn box_text(site: &str) -> String {
    format!(
        "Sign up for the Morning Brief from {site} and get the stories everyone in town is talking about, \
         delivered to your inbox before breakfast every single weekday morning"
    )
}

fn rail_text(site: &str, i: usize) -> String {
    format!("The most read story number {i} on {site} this week about the ferry timetable and parking rules")
}

/// Pseudo-words, a sequence for each seed.
fn words(seed: u64) -> impl FnMut() -> String {
    let mut s = seed * 7919 + 1;
    move || {
        let mut w = String::new();
        for _ in 0..2 {
            s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            w.push_str(SYLLABLES[(s >> 33) as usize % SYLLABLES.len()]);
        }
        w
    }
}

/// Six paragraphs of 45 pseudo-words (seeded by `seed`) of story `n`, each opened by `open`,
/// with `insert.1` after paragraph `insert.0`.
fn article(seed: u64, n: usize, open: &str, insert: (usize, &str)) -> String {
    let mut word = words(seed);
    let mut body = String::new();
    for p in 0..6 {
        body.push_str(&format!("{open}Paragraph {p} of story {n}: "));
        for _ in 0..45 {
            body.push_str(&word());
            body.push(' ');
        }
        body.push_str("and more.</p>\n");
        if p == insert.0 {
            body.push_str(insert.1);
        }
    }
    body
}

/// A page of `site`: navigation, an article of six paragraphs unique to (`site`, `n`) with the
/// site's newsletter box after its second paragraph, then the site's "most read" rail.
fn page(site: usize, n: usize) -> String {
    let host = SITES[site];
    let brief = format!("<div class=\"brief\"><p>{}</p></div>\n", box_text(host));
    let body = article((site * 1000 + n) as u64, n, "<p>", (1, &brief));
    let rail: String = (0..4).map(|i| format!("<li><p>{}</p></li>", rail_text(host, i))).collect();
    format!(
        "<!doctype html><html><head><title>Story {n} | {host}</title></head><body>\
         <nav><a href=/>Home</a> <a href=/news>News</a></nav>\
         <div class=\"story\"><h1>Story {n} of {host}</h1>{body}</div>\
         <div class=\"rail\"><h2>Most read</h2><ul>{rail}</ul></div>\
         <footer><a href=/about>About us</a></footer></body></html>"
    )
}

/// The crawl, the sites' pages interleaved as a crawler fetches them.
fn crawl(path: &Path) {
    let pages = (0..50).flat_map(|n| (0..SITES.len()).map(move |site| (SITES[site], n, page(site, n))));
    write_crawl(path, pages);
}

/// A WARC of these (host, page number, HTML) responses.
fn write_crawl(path: &Path, pages: impl Iterator<Item = (&'static str, usize, String)>) {
    let mut w = WarcWriter::create(path, "test").unwrap();
    for (host, n, html) in pages {
        let mut response = b"HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n\r\n".to_vec();
        response.extend_from_slice(html.as_bytes());
        let url = format!("https://{host}/news/story-{n}");
        let ex = Exchange {
            url: &url,
            date: "2026-11-22T10:00:00Z",
            request: b"GET / HTTP/1.1\r\n\r\n",
            response: &response,
            ip: Some("127.0.0.1"),
        };
        w.write_exchange(&ex).unwrap();
    }
    w.finish().unwrap();
}

/// The site memory a run saved in its output folder.
fn saved_memory(out: &Path) -> SiteMemory {
    SiteMemory::from_bytes(&std::fs::read(out.join("site_memory.bin")).unwrap(), SiteMemoryOptions::default()).unwrap()
}

fn records(out: &Path) -> Vec<Value> {
    list_parts(out).unwrap().iter().flat_map(|p| read_part(p).unwrap()).collect()
}

fn has_box(r: &Value) -> bool {
    r["text"].as_str().unwrap().contains("Morning Brief")
}

#[test]
fn site_memory_drops_the_furniture_a_site_repeats_and_keeps_every_article() {
    let dir = tempfile::tempdir().unwrap();
    let warc = dir.path().join("crawl.warc.gz");
    crawl(&warc);
    let (with, without) = (dir.path().join("with"), dir.path().join("without"));
    let w = warc.to_str().unwrap();
    let o = pipeline(&["--warc", w, "--out", with.to_str().unwrap(), "--threads", "2"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let o = pipeline(&["--warc", w, "--out", without.to_str().unwrap(), "--site-memory-pages", "0"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let (with, without) = (records(&with), records(&without));
    assert_eq!((with.len(), without.len()), (150, 150));

    // The supervised model keeps the box on (almost) every page.
    let kept = without.iter().filter(|r| has_box(r)).count();
    assert!(kept >= 140, "without site memory the box is kept on {kept} of 150 pages");
    // Site memory drops it once a site has enough pages (the first pages of each site, and
    // those extracted alongside them on the other thread, still have it).
    let late: Vec<&Value> = with.iter().skip(30).collect();
    let left = late.iter().filter(|r| has_box(r)).count();
    assert_eq!(left, 0, "site memory leaves the box on {left} of the last 120 pages");
    assert!(late.iter().all(|r| r["metadata"]["extraction"]["site_memory"] == true));
    assert!(without.iter().all(|r| r["metadata"]["extraction"]["site_memory"] == false));
    // Every article is whole: all six paragraphs of every page, with or without memory.
    for (a, b) in with.iter().zip(&without) {
        assert_eq!(a["metadata"]["url"], b["metadata"]["url"]);
        for p in 0..6 {
            let t = a["text"].as_str().unwrap();
            assert!(
                t.contains(&format!("Paragraph {p} of story")),
                "{} lost paragraph {p}:\n{t}",
                a["metadata"]["url"]
            );
        }
    }
    // The rail is outside the article: neither run keeps it.
    assert!(with.iter().chain(&without).all(|r| !r["text"].as_str().unwrap().contains("most read story")));
}

/// A page of harbor-daily.test after its redesign (new class names throughout): its new
/// podcast box sits inside the article.
fn redesigned_page(n: usize) -> String {
    let podcast = "<div class=\"c-entry__note\"><p>Listen to The Harbor Hour, our weekly podcast about the \
                   people and places that make this town what it is, wherever you get your podcasts</p></div>\n";
    let body = article(50_000 + n as u64, n, "<p class=\"c-par\">", (2, podcast));
    format!(
        "<!doctype html><html><head><title>Story {n}</title></head><body>\
         <header class=\"l-header\"><a class=\"l-logo\" href=/>Harbor Daily</a></header>\
         <main class=\"l-main\"><article class=\"c-entry\"><h1 class=\"c-entry__title\">Story {n}</h1>\
         <div class=\"c-entry__body\">{body}</div></article></main>\
         <footer class=\"l-footer\"><a href=/about>About us</a></footer></body></html>"
    )
}

/// A site redesigned mid-crawl: 50 pages of the old layout, then 15 of a new one. Counted
/// against all 64 pages before it, the new layout's podcast box is on under a third of the
/// host's pages; counted per template it is on every page of its own, and goes.
#[test]
fn site_memory_learns_a_redesign_from_its_own_pages() {
    let dir = tempfile::tempdir().unwrap();
    let warc = dir.path().join("crawl.warc.gz");
    let old = (0..50).map(|n| (SITES[0], n, page(0, n)));
    let new = (50..65).map(|n| (SITES[0], n, redesigned_page(n)));
    write_crawl(&warc, old.chain(new));
    let w = warc.to_str().unwrap();
    let podcast = |out: &Path| -> Vec<bool> {
        let r = records(out);
        assert_eq!(r.len(), 65);
        let mut new: Vec<(u64, bool)> = r
            .iter()
            .map(|r| {
                let url = r["metadata"]["url"].as_str().unwrap();
                (url.rsplit('-').next().unwrap().parse().unwrap(), r["text"].as_str().unwrap().contains("Harbor Hour"))
            })
            .filter(|(n, _)| *n >= 50)
            .collect();
        new.sort();
        new.into_iter().map(|(_, kept)| kept).collect()
    };
    let (templates, host) = (dir.path().join("templates"), dir.path().join("host"));
    let o = pipeline(&["--warc", w, "--out", templates.to_str().unwrap(), "--threads", "1"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let o = pipeline(&[
        "--warc",
        w,
        "--out",
        host.to_str().unwrap(),
        "--threads",
        "1",
        "--site-memory-template-similarity",
        "0",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let (templates, host) = (podcast(&templates), podcast(&host));
    assert_eq!((templates.len(), host.len()), (15, 15));
    assert!(host.iter().all(|kept| *kept), "counted over the whole host, the box stays: {host:?}");
    // The new layout's first 3 pages teach it; the box goes from the 4th on.
    assert_eq!(templates.iter().filter(|kept| **kept).count(), 3, "{templates:?}");
    assert!(templates[3..].iter().all(|kept| !kept), "{templates:?}");
    let m = saved_memory(&dir.path().join("templates"));
    assert_eq!((m.hosts(), m.pages(SITES[0])), (2, 65), "two templates of one host");
}

#[test]
fn site_memory_is_saved_with_the_run_and_a_resumed_run_starts_warm() {
    let dir = tempfile::tempdir().unwrap();
    let warc = dir.path().join("crawl.warc.gz");
    crawl(&warc);
    let out = dir.path().join("out");
    let o = pipeline(&["--warc", warc.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let m = saved_memory(&out);
    assert_eq!(m.hosts(), 3);
    assert_eq!(m.pages("harbor-daily.test"), 50);

    // A damaged memory file is named, and the run refuses to resume from it (exit 2 is for
    // usage; a state that cannot be read is a failure of the run).
    std::fs::write(out.join("site_memory.bin"), b"garbage").unwrap();
    let o = pipeline(&["--warc", warc.to_str().unwrap(), "--out", out.to_str().unwrap(), "--resume"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success() && err.contains("site_memory.bin"), "{err}");
}

/// Two passes (`--site-memory-two-pass`): the blocks of every page are counted first, so the
/// box is dropped on every page, the first of each site too, and no article loses a word.
/// Interrupted (the second input cut short) and resumed with the input whole, the run keeps the
/// counts of its first pass and writes every record once.
#[test]
fn a_two_pass_run_judges_every_page_by_all_of_its_sites_pages() {
    let dir = tempfile::tempdir().unwrap();
    let warc = dir.path().join("crawl.warc.gz");
    crawl(&warc);
    let out = dir.path().join("two");
    let w = warc.to_str().unwrap();
    let o = pipeline(&["--warc", w, "--out", out.to_str().unwrap(), "--threads", "2", "--site-memory-two-pass"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let two = records(&out);
    assert_eq!(two.len(), 150);
    let left = two.iter().filter(|r| has_box(r)).count();
    assert_eq!(left, 0, "the box is left on {left} of 150 pages");
    assert!(two.iter().all(|r| r["metadata"]["extraction"]["site_memory"] == true));
    for r in &two {
        let t = r["text"].as_str().unwrap();
        assert!((0..6).all(|p| t.contains(&format!("Paragraph {p} of story"))), "{}:\n{t}", r["metadata"]["url"]);
    }
    // The memory holds each site's 50 pages, counted once.
    let m = saved_memory(&out);
    assert_eq!(m.pages("harbor-daily.test"), 50);

    // The same crawl in two files, the second cut short: exit 1, its pages read so far written.
    let (first, second) = (dir.path().join("a.warc.gz"), dir.path().join("b.warc.gz"));
    let pages = |from: usize, to: usize| {
        (from..to).flat_map(|n| (0..SITES.len()).map(move |site| (SITES[site], n, page(site, n))))
    };
    write_crawl(&first, pages(0, 25));
    write_crawl(&second, pages(25, 50));
    let whole = std::fs::read(&second).unwrap();
    std::fs::write(&second, &whole[..whole.len() / 2]).unwrap();
    let out = dir.path().join("resumed");
    let run = |resume: bool| {
        let mut a = vec!["--warc", first.to_str().unwrap(), second.to_str().unwrap(), "--out", out.to_str().unwrap()];
        a.extend(["--site-memory-two-pass", "--part-bytes", "20000"]);
        if resume {
            a.push("--resume");
        }
        pipeline(&a)
    };
    let o = run(false);
    assert_eq!(o.status.code(), Some(1), "{}", String::from_utf8_lossy(&o.stderr));
    let counted = std::fs::read(out.join("site_memory.bin")).unwrap();
    // The input whole again: the resumed run reads the rest of it once, with the counts of its
    // first pass (the file is not counted again).
    std::fs::write(&second, &whole).unwrap();
    let o = run(true);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(std::fs::read(out.join("site_memory.bin")).unwrap(), counted, "the first pass was run again");
    let resumed = records(&out);
    let urls: std::collections::HashSet<&str> =
        resumed.iter().map(|r| r["metadata"]["url"].as_str().unwrap()).collect();
    assert_eq!((resumed.len(), urls.len()), (150, 150), "a record lost or written twice");
    assert_eq!(resumed.iter().filter(|r| has_box(r)).count(), 0);

    // A first pass over one input in two (`--site-memory-first-pass-every 2`): the first file's
    // pages are counted ahead, the second's as they are extracted. Each page is counted once
    // (50 a site), and the box goes from every page.
    let sampled = dir.path().join("sampled");
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_pipeline"))
        .env("RUST_LOG", "info")
        .args(["--warc", first.to_str().unwrap(), second.to_str().unwrap(), "--out", sampled.to_str().unwrap()])
        .args(["--site-memory-two-pass", "--site-memory-first-pass-every", "2"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("75 pages of 3 host template(s)"), "the first pass counts the first file only: {stderr}");
    let m = saved_memory(&sampled);
    assert_eq!(m.pages("harbor-daily.test"), 50, "a page counted twice, or not at all");
    let got = records(&sampled);
    assert_eq!((got.len(), got.iter().filter(|r| has_box(r)).count()), (150, 0));

    // A feeds run has no first pass: refused before anything runs.
    let feeds = dir.path().join("feeds.txt");
    std::fs::write(&feeds, "http://127.0.0.1:9/feed.xml\n").unwrap();
    let o = pipeline(&[
        "--feeds",
        feeds.to_str().unwrap(),
        "--out",
        dir.path().join("f").to_str().unwrap(),
        "--site-memory-two-pass",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stderr).contains("site_memory.two_pass"));
}

#[test]
fn bad_site_memory_options_are_refused_before_anything_runs() {
    let dir = tempfile::tempdir().unwrap();
    let warc = dir.path().join("crawl.warc.gz");
    crawl(&warc);
    let out = dir.path().join("out");
    let o = pipeline(&["--warc", warc.to_str().unwrap(), "--out", out.to_str().unwrap(), "--site-memory-share", "1.5"]);
    assert_eq!(o.status.code(), Some(2), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stderr).contains("site_memory.share"));
    assert!(!out.join("state.json").exists());
}

/// `pipeline eval` counts the pool first, then judges each page by its host's other pages: a
/// host with enough of them loses its repeated box, and one with fewer is left as it is (eval
/// does not even hash its blocks). At the default `--site-memory-pages 3`, the four pages of
/// harbor-daily.test each see the box on three others; the three of valley-news.test see it
/// on two.
#[test]
fn eval_applies_site_memory_from_the_pages_a_host_needs_and_not_below() {
    let dir = tempfile::tempdir().unwrap();
    let mut manifest = String::new();
    for (site, n_pages) in [(0, 4), (1, 3)] {
        for n in 0..n_pages {
            let id = format!("s{site}-{n}");
            std::fs::write(dir.path().join(format!("{id}.html")), page(site, n)).unwrap();
            let line = serde_json::json!({
                "id": id, "dataset": "gen", "split": "dev", "html": format!("{id}.html"),
                "url": format!("https://{}/news/story-{n}", SITES[site]),
                "gold": {"text": format!("Paragraph 0 of story {n}")},
            });
            manifest.push_str(&format!("{line}\n"));
        }
    }
    let m = dir.path().join("manifest.jsonl");
    std::fs::write(&m, manifest).unwrap();
    let texts = |pages: &str| {
        let out = dir.path().join(format!("out{pages}"));
        let o = pipeline(&[
            "eval",
            "--manifest",
            m.to_str().unwrap(),
            "--site-memory-pages",
            pages,
            "--out-dir",
            out.to_str().unwrap(),
        ]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let mut v: Vec<(String, String)> = std::fs::read_dir(&out)
            .unwrap()
            .map(|e| {
                let p = e.unwrap().path();
                (p.file_stem().unwrap().to_string_lossy().into_owned(), std::fs::read_to_string(&p).unwrap())
            })
            .collect();
        v.sort();
        v
    };
    let (with, without) = (texts("3"), texts("0"));
    assert_eq!(with.len(), 7);
    for ((id, a), (_, b)) in with.iter().zip(&without) {
        assert!(b.contains("Morning Brief"), "{id}: the supervised model keeps the box");
        if id.starts_with("s0-") {
            assert!(!a.contains("Morning Brief"), "{id}: four pages of a host, the box stays:\n{a}");
            assert!(a.contains("Paragraph 5 of story"), "{id} lost its article:\n{a}");
        } else {
            assert_eq!(a, b, "{id}: a host of three pages is judged without site memory");
        }
    }
}
