//! Throughput of several extractors on the same pages in one run (`pipeline bench`).
//!
//! Each round extracts every page once with each extractor in turn, on one thread, and the
//! order of the extractors flips from round to round (A B, B A, A B …). A shared machine whose
//! speed drifts by tens of percent within minutes then slows every extractor alike, so the
//! ratio between them means something even when one round's MB/s does not; the report keeps
//! every round beside the median and the best. As in `pipeline eval`, only the extraction is
//! timed: the page is read from disk (the page cache, after the first round) outside the clock.
//! Nothing is scored, so pages need no gold text.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use serde::Serialize;

use crate::extract::Extractor;

/// One page to extract: a name for messages and its file.
#[derive(Debug, Clone)]
pub struct BenchPage {
    pub id: String,
    pub path: PathBuf,
}

/// The speed of one extractor over every round.
#[derive(Debug, Clone, Serialize)]
pub struct ExtractorSpeed {
    pub name: String,
    /// MB/s of HTML (10^6 bytes) per round, in round order.
    pub rounds_mb_s: Vec<f64>,
    pub median_mb_s: f64,
    pub best_mb_s: f64,
    /// The median of the rounds' pages per second.
    pub median_pages_s: f64,
    /// Bytes of text extracted in one round (the same every round: a check that every round
    /// did the same work).
    pub text_bytes: u64,
}

/// What [`bench`] measured.
#[derive(Debug, Clone, Serialize)]
pub struct BenchReport {
    /// Pages extracted in each round (those that could be read).
    pub pages: usize,
    /// Bytes of HTML extracted in each round.
    pub html_bytes: u64,
    pub rounds: usize,
    pub extractors: Vec<ExtractorSpeed>,
    /// Pages that could not be read or extracted: (page id, extractor, message).
    pub failures: Vec<(String, String, String)>,
}

/// One extractor's pass over the pages in one round.
#[derive(Debug, Clone, Copy)]
pub struct RoundResult {
    pub round: usize,
    pub extractor: usize,
    pub mb_s: f64,
}

/// Extracts every page with every extractor, `rounds` times, alternating as the module says;
/// `on_round` hears each pass as it ends (for progress lines).
pub fn bench(
    pages: &[BenchPage],
    extractors: &[(&str, &Extractor<'_>)],
    rounds: usize,
    mut on_round: impl FnMut(RoundResult),
) -> BenchReport {
    let rounds = rounds.max(1);
    let mut times = vec![Vec::with_capacity(rounds); extractors.len()];
    let mut text_bytes = vec![0u64; extractors.len()];
    let mut failures = Vec::new();
    // Pages that could not be read are left out of every round, so all rounds do the same work.
    let mut readable = vec![true; pages.len()];
    let (mut html_bytes, mut n_pages) = (0u64, 0usize);
    for round in 0..rounds {
        let order: Vec<usize> =
            if round % 2 == 0 { (0..extractors.len()).collect() } else { (0..extractors.len()).rev().collect() };
        for &e in &order {
            let (name, extractor) = extractors[e];
            let (mut elapsed, mut bytes, mut n, mut text) = (Duration::ZERO, 0u64, 0usize, 0u64);
            for (p, page) in pages.iter().enumerate() {
                if !readable[p] {
                    continue;
                }
                let html = match std::fs::read(&page.path) {
                    Ok(h) => h,
                    Err(err) => {
                        readable[p] = false;
                        failures.push((page.id.clone(), name.to_string(), format!("{}: {err}", page.path.display())));
                        continue;
                    }
                };
                let t = Instant::now();
                let r = extractor.extract(&html, None);
                elapsed += t.elapsed();
                bytes += html.len() as u64;
                n += 1;
                match r {
                    Ok(x) => text += x.text.len() as u64,
                    Err(err) if round == 0 => failures.push((page.id.clone(), name.to_string(), err.to_string())),
                    Err(_) => {}
                }
            }
            // Each pass's MB/s counts its own bytes; the report's page count is the first pass's.
            if round == 0 && e == order[0] {
                html_bytes = bytes;
                n_pages = n;
            }
            text_bytes[e] = text;
            let mb_s = mb_per_s(bytes, elapsed);
            times[e].push((mb_s, n as f64 / elapsed.as_secs_f64().max(1e-9)));
            on_round(RoundResult { round, extractor: e, mb_s });
        }
    }
    let extractors = extractors
        .iter()
        .zip(times)
        .zip(text_bytes)
        .map(|((&(name, _), t), text_bytes)| {
            let rounds_mb_s: Vec<f64> = t.iter().map(|x| x.0).collect();
            let pages_s: Vec<f64> = t.iter().map(|x| x.1).collect();
            ExtractorSpeed {
                name: name.to_string(),
                best_mb_s: rounds_mb_s.iter().copied().fold(0.0, f64::max),
                median_mb_s: median(&rounds_mb_s),
                median_pages_s: median(&pages_s),
                rounds_mb_s,
                text_bytes,
            }
        })
        .collect();
    BenchReport { pages: n_pages, html_bytes, rounds, extractors, failures }
}

fn mb_per_s(bytes: u64, elapsed: Duration) -> f64 {
    bytes as f64 / 1e6 / elapsed.as_secs_f64().max(1e-9)
}

/// This process's peak resident set (Linux `VmHWM`), in MB; `None` where `/proc` has none.
pub fn peak_rss_mb() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let kb: f64 =
        status.lines().find_map(|l| l.strip_prefix("VmHWM:"))?.trim().trim_end_matches("kB").trim().parse().ok()?;
    Some(kb / 1024.0)
}

/// The median (the mean of the middle two for an even count).
pub fn median(xs: &[f64]) -> f64 {
    if xs.is_empty() {
        return 0.0;
    }
    let mut s = xs.to_vec();
    s.sort_by(f64::total_cmp);
    let m = s.len() / 2;
    if s.len() % 2 == 1 { s[m] } else { (s[m - 1] + s[m]) / 2.0 }
}

/// The report as a table: one row per extractor, every round, median, best, and each
/// extractor's median as a share of the first one's.
pub fn format_table(r: &BenchReport) -> String {
    use std::fmt::Write;
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{} pages, {:.1} MB of HTML, {} rounds, one thread, order flipped each round",
        r.pages,
        r.html_bytes as f64 / 1e6,
        r.rounds
    );
    let _ = writeln!(s, "{:<14} {:>10} {:>10} {:>9}  rounds (MB/s)", "extractor", "median", "best", "vs first");
    let first = r.extractors.first().map_or(0.0, |e| e.median_mb_s);
    for e in &r.extractors {
        let rounds: Vec<String> = e.rounds_mb_s.iter().map(|x| format!("{x:.1}")).collect();
        let _ = writeln!(
            s,
            "{:<14} {:>10.1} {:>10.1} {:>8.2}x  {}",
            e.name,
            e.median_mb_s,
            e.best_mb_s,
            if first > 0.0 { e.median_mb_s / first } else { 0.0 },
            rounds.join(" ")
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::extract::ExtractOptions;
    use crate::methods;

    #[test]
    fn medians_of_odd_and_even_counts() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), 2.5);
        assert_eq!(median(&[]), 0.0);
    }

    #[test]
    fn every_extractor_runs_every_round_in_flipped_order_and_unreadable_pages_are_left_out() {
        let dir = tempfile::tempdir().unwrap();
        let mut pages = Vec::new();
        for i in 0..3 {
            let path = dir.path().join(format!("{i}.html"));
            let body = "<p>The council voted on the new park budget on Tuesday evening.</p>".repeat(20 + i);
            std::fs::write(&path, format!("<html><body><nav><a href=/>Home</a></nav>{body}</body></html>")).unwrap();
            pages.push(BenchPage { id: format!("p{i}"), path });
        }
        pages.push(BenchPage { id: "gone".into(), path: dir.path().join("missing.html") });
        let nb = methods::build("nb", None, None, None).unwrap();
        let simple = methods::build("simple", None, None, None).unwrap();
        let (a, b) = (
            Extractor::new(nb.as_ref(), ExtractOptions::default()),
            Extractor::new(simple.as_ref(), ExtractOptions::default()),
        );
        let mut heard = Vec::new();
        let r = bench(&pages, &[("nb", &a), ("simple", &b)], 3, |x| heard.push((x.round, x.extractor)));
        assert_eq!(heard, [(0, 0), (0, 1), (1, 1), (1, 0), (2, 0), (2, 1)]);
        assert_eq!(r.pages, 3);
        let html: u64 = pages[..3].iter().map(|p| std::fs::metadata(&p.path).unwrap().len()).sum();
        assert_eq!(r.html_bytes, html);
        assert_eq!(r.failures.len(), 1, "{:?}", r.failures);
        assert_eq!(r.failures[0].0, "gone");
        assert!(r.failures[0].2.contains("missing.html"));
        for e in &r.extractors {
            assert_eq!(e.rounds_mb_s.len(), 3);
            assert!(e.rounds_mb_s.iter().all(|&x| x > 0.0 && x.is_finite()));
            assert!(e.best_mb_s >= e.median_mb_s);
            assert!(e.text_bytes > 0, "{} extracted nothing", e.name);
        }
        let table = format_table(&r);
        assert!(table.contains("3 pages") && table.contains("nb") && table.contains("simple"), "{table}");
    }
}
