//! Metadata against gold: publication dates (`gold.date`: the right day, or rightly none;
//! precision among the pages answered, as htmldate's evaluation counts them), titles
//! (`gold.title`: exact match and token F1 of the chosen title, beside `<title>` alone), and
//! language (agreement with the manifest's `lang`, which comes from a language identifier
//! run on the gold text: a reference, not ground truth; only pages whose gold text has at
//! least [`LANG_MIN_WORDS`] words).

use std::collections::BTreeMap;

use serde::Serialize;

/// Gold texts shorter than this are left out of the language agreement.
pub const LANG_MIN_WORDS: usize = 200;

/// What one page's metadata scored.
#[derive(Debug, Clone, Default, Serialize)]
pub struct PageMeta {
    /// (gold day or none, the day found or none, where it came from).
    pub date: Option<(Option<String>, Option<String>, Option<String>)>,
    /// (gold title, the chosen title, `<title>`).
    pub title: Option<(String, Option<String>, Option<String>)>,
    /// (manifest language, the language found).
    pub lang: Option<(String, Option<String>)>,
}

/// The metadata tables of a report.
#[derive(Debug, Clone, Default, Serialize)]
pub struct MetaReport {
    pub dates: Option<DateScore>,
    pub titles: Option<TitleScore>,
    /// Per dataset and pooled ("OVERALL"): (pages, agreement).
    pub lang: BTreeMap<String, (usize, f64)>,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct DateScore {
    pub pages: usize,
    /// Right day, or rightly none.
    pub accuracy: f64,
    /// Right among the pages given a date.
    pub precision: f64,
    /// Share of pages given a date.
    pub answered: f64,
    /// Pages per `date_source`, and how many of them were right.
    pub by_source: BTreeMap<String, (usize, usize)>,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct TitleScore {
    pub pages: usize,
    pub exact: f64,
    pub token_f1: f64,
    pub html_title_exact: f64,
    pub html_title_token_f1: f64,
}

fn norm(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ").to_lowercase()
}

fn words(s: &str) -> Vec<String> {
    s.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()).map(str::to_lowercase).collect()
}

/// Token F1 of two titles (bags of lower-cased words).
pub fn token_f1(gold: &str, got: &str) -> f64 {
    let (g, p) = (words(gold), words(got));
    if g.is_empty() || p.is_empty() {
        return if g.is_empty() && p.is_empty() { 1.0 } else { 0.0 };
    }
    let mut counts: BTreeMap<&str, i32> = BTreeMap::new();
    for w in &g {
        *counts.entry(w).or_default() += 1;
    }
    let mut common = 0;
    for w in &p {
        if let Some(c) = counts.get_mut(w.as_str())
            && *c > 0
        {
            *c -= 1;
            common += 1;
        }
    }
    if common == 0 {
        return 0.0;
    }
    let (pr, rc) = (f64::from(common) / p.len() as f64, f64::from(common) / g.len() as f64);
    2.0 * pr * rc / (pr + rc)
}

/// Aggregates the pages' metadata scores (`dataset`, page) into the report tables.
pub fn report<'a>(pages: impl Iterator<Item = (&'a str, &'a PageMeta)>) -> Option<MetaReport> {
    let mut r = MetaReport::default();
    let (mut d, mut t) = (DateScore::default(), TitleScore::default());
    let (mut d_right, mut d_answered, mut d_answered_right) = (0usize, 0usize, 0usize);
    let mut lang: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    let mut any = false;
    for (ds, p) in pages {
        if let Some((gold, got, source)) = &p.date {
            any = true;
            d.pages += 1;
            let right = gold == got;
            d_right += usize::from(right);
            if got.is_some() {
                d_answered += 1;
                d_answered_right += usize::from(right);
            }
            let e = d.by_source.entry(source.clone().unwrap_or_else(|| "none".into())).or_default();
            e.0 += 1;
            e.1 += usize::from(right);
        }
        if let Some((gold, got, html)) = &p.title {
            any = true;
            t.pages += 1;
            let got = got.as_deref().unwrap_or("");
            let html = html.as_deref().unwrap_or("");
            t.exact += f64::from(u8::from(norm(gold) == norm(got)));
            t.token_f1 += token_f1(gold, got);
            t.html_title_exact += f64::from(u8::from(norm(gold) == norm(html)));
            t.html_title_token_f1 += token_f1(gold, html);
        }
        if let Some((gold, got)) = &p.lang {
            any = true;
            let agree = usize::from(got.as_deref() == Some(gold.as_str()));
            for key in [ds, "OVERALL"] {
                let e = lang.entry(key.to_string()).or_default();
                e.0 += 1;
                e.1 += agree;
            }
        }
    }
    if !any {
        return None;
    }
    let per = |a: usize, b: usize| if b == 0 { 0.0 } else { a as f64 / b as f64 };
    if d.pages > 0 {
        d.accuracy = per(d_right, d.pages);
        d.precision = per(d_answered_right, d_answered);
        d.answered = per(d_answered, d.pages);
        r.dates = Some(d);
    }
    if t.pages > 0 {
        let n = t.pages as f64;
        t.exact /= n;
        t.token_f1 /= n;
        t.html_title_exact /= n;
        t.html_title_token_f1 /= n;
        r.titles = Some(t);
    }
    r.lang = lang.into_iter().map(|(k, (n, a))| (k, (n, per(a, n)))).collect();
    Some(r)
}

/// The report's metadata lines.
pub fn format_table(r: &MetaReport) -> String {
    use std::fmt::Write;
    let mut s = String::new();
    if let Some(d) = &r.dates {
        let _ = writeln!(
            s,
            "dates: {} pages, accuracy {:.3}, precision {:.3}, answered {:.3}",
            d.pages, d.accuracy, d.precision, d.answered
        );
        let by: Vec<String> = d.by_source.iter().map(|(s, (n, k))| format!("{s} {k}/{n}")).collect();
        let _ = writeln!(s, "  by source (right/pages): {}", by.join(", "));
    }
    if let Some(t) = &r.titles {
        let _ = writeln!(
            s,
            "titles: {} pages, chosen title exact {:.3} token F1 {:.3}; <title> alone exact {:.3} token F1 {:.3}",
            t.pages, t.exact, t.token_f1, t.html_title_exact, t.html_title_token_f1
        );
    }
    if !r.lang.is_empty() {
        let by: Vec<String> = r.lang.iter().map(|(k, (n, a))| format!("{k} {a:.3} ({n})")).collect();
        let _ = writeln!(s, "language agreement (gold text >= {LANG_MIN_WORDS} words): {}", by.join(", "));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn title_token_f1_and_the_tables() {
        assert_eq!(token_f1("Ferry timetable approved", "ferry timetable approved!"), 1.0);
        assert!((token_f1("a b c d", "a b") - 2.0 / 3.0).abs() < 1e-9);
        assert_eq!(token_f1("a", ""), 0.0);
        let pages = [
            PageMeta {
                date: Some((Some("2026-11-24".into()), Some("2026-11-24".into()), Some("meta".into()))),
                ..Default::default()
            },
            PageMeta { date: Some((None, None, None)), ..Default::default() },
            PageMeta {
                date: Some((Some("2026-11-24".into()), Some("2026-11-23".into()), Some("url".into()))),
                ..Default::default()
            },
            PageMeta {
                date: Some((Some("2026-11-24".into()), None, None)),
                lang: Some(("en".into(), Some("en".into()))),
                ..Default::default()
            },
        ];
        let r = report(pages.iter().map(|p| ("x", p))).unwrap();
        let d = r.dates.unwrap();
        assert_eq!((d.pages, d.accuracy, d.precision, d.answered), (4, 0.5, 0.5, 0.5));
        assert_eq!(d.by_source["none"], (2, 1));
        assert_eq!(r.lang["OVERALL"], (1, 1.0));
    }
}
