//! `pipeline bootstrap` on generated pages of two synthetic sites whose templates fool the
//! supervised model: after each article comes a reader-comment section written like article
//! text, which the built-in model extracts with the article when it is long.
//!
//! What this test asserts is weaker than the issue asks: a 2-iteration bootstrap runs over
//! both sites, writes a model that `pipeline extract --model` uses, does not make the pages
//! the supervised model gets right worse, and refuses sources with too few pages. It does NOT
//! show the long-comment pages fixed: on these templates the windowed confidence v ranks the
//! wrong predictions as high as the right ones (their edges look alike), so they enter L and
//! the adapted model learns the comments as article text. The F1 figures are printed.

use std::path::Path;
use std::process::{Command, Output};

use article_pipeline::dataset::Gold;
use article_pipeline::eval::metrics::{aggregate, score_page};

fn pipeline(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_pipeline")).args(args).output().expect("run pipeline")
}

const VOCAB: &[&str] = &[
    "the",
    "council",
    "said",
    "on",
    "tuesday",
    "that",
    "river",
    "project",
    "would",
    "cost",
    "more",
    "than",
    "expected",
    "residents",
    "have",
    "asked",
    "for",
    "a",
    "new",
    "bridge",
    "near",
    "school",
    "and",
    "market",
    "while",
    "officials",
    "in",
    "city",
    "hall",
    "plan",
    "to",
    "vote",
    "next",
    "month",
    "after",
    "public",
    "hearing",
    "about",
    "budget",
    "of",
    "parks",
    "roads",
    "library",
    "museum",
    "festival",
    "was",
    "held",
    "last",
    "summer",
    "with",
    "thousands",
];

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> usize {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (self.0 >> 33) as usize
    }
    fn sentence(&mut self, words: usize) -> String {
        let mut s: Vec<&str> = (0..words).map(|_| VOCAB[self.next() % VOCAB.len()]).collect();
        let first = s[0].to_string();
        let cap = first[..1].to_uppercase() + &first[1..];
        s[0] = &cap;
        format!("{}.", s.join(" "))
    }
}

/// A page of `site` with `comments` reader comments; returns (html, gold article text).
fn page(site: &str, n: usize, comments: usize) -> (String, String) {
    let mut r = Rng(n as u64 * 7919 + site.len() as u64);
    let title = r.sentence(6);
    let paras: Vec<String> = (0..5).map(|_| (0..4).map(|_| r.sentence(12)).collect::<Vec<_>>().join(" ")).collect();
    let gold = format!("{title}\n\n{}", paras.join("\n\n"));
    let body: String = paras.iter().map(|p| format!("<p>{p}</p>\n")).collect();
    // Reader comments: an author line, then text like the article's. One short comment is
    // left out by the supervised model; a long section outweighs the separator and is not.
    let long = comments > 1;
    let comment_html: String = (0..comments)
        .map(|i| {
            let text = if long { format!("{} {}", r.sentence(14), r.sentence(16 + i % 5)) } else { r.sentence(6) };
            format!("<p>reader{i} wrote: {text} <small>Posted at 10:4{i} | <a href=\"#r{i}\">reply</a></small></p>\n")
        })
        .collect();
    let (open, sep) = if site == "a.test" {
        ("<div class=\"main\">", "<p><b>What readers say</b></p>")
    } else {
        ("<section class=\"content\">", "<h4>Your views</h4>")
    };
    let close = if site == "a.test" { "</div>" } else { "</section>" };
    let html = format!(
        "<!doctype html><html><head><title>{title}</title><link rel=\"canonical\" href=\"https://{site}/story/{n}\"></head><body>\
         <div class=\"nav\"><a href=\"/\">Home</a> <a href=\"/city\">City</a> <a href=\"/sport\">Sport</a></div>\
         {open}<h1>{title}</h1>\n{body}{sep}\n{comment_html}{close}\
         <div class=\"foot\"><a href=\"/about\">About</a> <a href=\"/contact\">Contact</a></div></body></html>"
    );
    (html, gold)
}

fn f1(model: Option<&Path>, pages: &[(std::path::PathBuf, String)]) -> f64 {
    let mut metrics = Vec::new();
    for (path, gold) in pages {
        let mut args = vec!["extract".to_string(), path.display().to_string()];
        if let Some(m) = model {
            args.push("--model".into());
            args.push(m.display().to_string());
        }
        let o = pipeline(&args.iter().map(String::as_str).collect::<Vec<_>>());
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let gold = Gold { text: Some(gold.clone()), ..Gold::default() };
        metrics.push(score_page(&gold, &String::from_utf8_lossy(&o.stdout)));
    }
    aggregate(metrics.iter()).shingle_f1.unwrap()
}

#[test]
fn bootstrap_runs_over_two_synthetic_sites_and_refuses_small_sources() {
    let dir = tempfile::tempdir().unwrap();
    let pool = dir.path().join("pool");
    std::fs::create_dir(&pool).unwrap();
    let mut heavy = Vec::new();
    let mut light = Vec::new();
    for site in ["a.test", "b.test"] {
        for n in 0..30 {
            // Two pages in three have at most one comment; the rest have a long section.
            let comments = if n % 3 == 2 { 8 } else { 1 };
            let (html, gold) = page(site, n, comments);
            let path = pool.join(format!("{}-{n:02}.html", &site[..1]));
            std::fs::write(&path, html).unwrap();
            if comments > 1 {
                heavy.push((path, gold));
            } else {
                light.push((path, gold));
            }
        }
    }
    let model = dir.path().join("adapted.nbm");
    let o = pipeline(&[
        "bootstrap",
        "--unlabeled",
        pool.to_str().unwrap(),
        "--out",
        model.to_str().unwrap(),
        "--iterations",
        "2",
        "--min-pages",
        "10",
    ]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{stderr}");
    assert!(stderr.contains("2 source(s)"), "{stderr}");
    assert!(stderr.contains("iteration 2:"), "{stderr}");

    let (light_sup, light_ada) = (f1(None, &light), f1(Some(&model), &light));
    let (heavy_sup, heavy_ada) = (f1(None, &heavy), f1(Some(&model), &heavy));
    eprintln!("short comment sections: supervised F1 {light_sup:.3}, bootstrapped {light_ada:.3}");
    eprintln!("long comment sections: supervised F1 {heavy_sup:.3}, bootstrapped {heavy_ada:.3}");
    assert!(heavy_sup < 0.8, "the template should fool the supervised model (F1 {heavy_sup:.3})");
    assert!(light_sup > 0.9, "the supervised model should get short sections right (F1 {light_sup:.3})");
    assert!(light_ada >= light_sup - 0.05, "bootstrap hurt: {light_sup:.3} -> {light_ada:.3}");

    // Too few pages per source: a clear refusal.
    let few = dir.path().join("few");
    std::fs::create_dir(&few).unwrap();
    for n in 0..3 {
        std::fs::write(few.join(format!("{n}.html")), page("a.test", n, 0).0).unwrap();
    }
    let o = pipeline(&["bootstrap", "--unlabeled", few.to_str().unwrap(), "--out", model.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--min-pages"), "{}", String::from_utf8_lossy(&o.stderr));
}
