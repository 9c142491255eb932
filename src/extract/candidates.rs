//! Candidate spans for the learned chooser (issue 28): the maximum subsequence picks the run of
//! highest value, and on a listing, a collection or a product grid that run is the page's
//! introduction or one item, while the gold keeps the grid, which may sit in another branch of
//! the page (the span widening, [`super::lists::widen`], finds only the lists around the span).
//! The candidates are the current choice and the page's largest lists
//! ([`super::lists::largest`]): whether a list is the content or a sidebar, a comment thread or
//! a related-stories grid depends on its place, its links, its words and its scores together,
//! which is what the trees of [`crate::scoring::chooser`] weigh. Each candidate gets a fixed
//! vector of page-relative features.
//!
//! Earlier choosers also took every maximal run of positive score (Ruzzo & Tompa) and the
//! container elements holding text (readability's insight) as candidates; with the span options
//! and the widening they gained nothing under leave-one-dataset-out and switched wrongly on
//! dragnet's blogs (models/README.md, "Span chooser").
//!
//! One pass over the page's tokens, after scoring, with prefix sums: no DOM, and at most
//! [`MAX_LISTS`] + 2 candidates a page.

use crate::html::tags::{self, TagId};
use crate::html::{Token, TokenKind};
use crate::scoring::Segment;

use super::lists::List;
use super::text;

/// The page's largest lists kept as candidates (with the widening's list, when it found one).
pub const MAX_LISTS: usize = 3;
/// Open elements tracked for the furniture marks.
const MAX_DEPTH: usize = 256;
/// No element: the parent of a top-level element, the owner of a token outside every element.
const NO_ELEMENT: u32 = u32::MAX;
/// An element's marks have been read (bit 0: furniture, bit 1: positive).
const MARKED: u8 = 4;

pub use crate::scoring::chooser::{FEATURE_NAMES, N_FEATURES};

/// A candidate span (tokens `start..=end`) and its features.
#[derive(Debug, Clone, PartialEq)]
pub struct Candidate {
    pub start: usize,
    pub end: usize,
    /// Sum of the token scores.
    pub value: f64,
    pub features: [f64; N_FEATURES],
}

/// Prefix counts over the page's tokens, for span sums in O(1).
struct Prefix {
    score: Vec<f64>,
    words: Vec<u32>,
    link_words: Vec<u32>,
    periods: Vec<u32>,
    commas: Vec<u32>,
    paragraphs: Vec<u32>,
    tags: Vec<u32>,
}

impl Prefix {
    fn range<T: Copy + std::ops::Sub<Output = T>>(v: &[T], s: usize, e: usize) -> T {
        v[e + 1] - v[s]
    }
}

/// The candidates of a page: the current choice `current` first, then the lists `lists`
/// (duplicates of an earlier span once); `headline` is the token of the page's headline (the
/// heading that repeats the `<title>`, else the `<h1>`), if it has one.
pub fn candidates(
    page: &str,
    tokens: &[Token],
    scores: &[f64],
    current: Segment,
    headline: Option<usize>,
    lists: &[List],
) -> Vec<Candidate> {
    let n = tokens.len().min(scores.len());
    if n == 0 || current.end >= n {
        return Vec::new();
    }
    let mut p = Prefix {
        score: Vec::with_capacity(n + 1),
        words: Vec::with_capacity(n + 1),
        link_words: Vec::with_capacity(n + 1),
        periods: Vec::with_capacity(n + 1),
        commas: Vec::with_capacity(n + 1),
        paragraphs: Vec::with_capacity(n + 1),
        tags: Vec::with_capacity(n + 1),
    };
    for v in [&mut p.words, &mut p.link_words, &mut p.periods, &mut p.commas, &mut p.paragraphs, &mut p.tags] {
        v.push(0);
    }
    p.score.push(0.0);
    // Every open element (as the span filters keep it), as a slot of `opened` (its start tag
    // and its parent's slot), and the innermost open element before each token. Whether an
    // element's id/class marks it furniture or positive is read afterwards, only for the
    // ancestors of the candidates' first tokens.
    let mut open: Vec<(TagId, u32)> = Vec::new();
    let mut opened: Vec<(u32, u32)> = Vec::new();
    let mut owner = vec![NO_ELEMENT; n];
    let mut in_a = 0u32;
    let mut article_depth = 0u32;
    let mut in_article = vec![false; n];
    for (i, t) in tokens[..n].iter().enumerate() {
        in_article[i] = article_depth > 0;
        owner[i] = open.last().map_or(NO_ELEMENT, |e| e.1);
        let (mut w, mut lw, mut per, mut com, mut par) = (0, 0, 0, 0, 0);
        match t.kind {
            TokenKind::Word => {
                w = 1;
                lw = u32::from(in_a > 0);
            }
            TokenKind::Symbol => {
                let r = t.raw(page);
                per = u32::from(matches!(r, "." | "!" | "?"));
                com = u32::from(r == ",");
            }
            TokenKind::StartTag => {
                par = u32::from(t.tag == tags::P);
                if !tags::is_void(t.tag) && open.len() < MAX_DEPTH * 4 {
                    let parent = open.last().map_or(NO_ELEMENT, |e| e.1);
                    open.push((t.tag, opened.len() as u32));
                    opened.push((i as u32, parent));
                }
                if t.tag == tags::A {
                    in_a += 1;
                }
                if matches!(t.tag, tags::ARTICLE | tags::MAIN) {
                    article_depth += 1;
                }
            }
            TokenKind::EndTag => {
                let lo = open.len().saturating_sub(64);
                if let Some(k) = open[lo..].iter().rposition(|e| e.0 == t.tag) {
                    open.truncate(lo + k);
                }
                if t.tag == tags::A {
                    in_a = in_a.saturating_sub(1);
                }
                if matches!(t.tag, tags::ARTICLE | tags::MAIN) {
                    article_depth = article_depth.saturating_sub(1);
                }
            }
        }
        p.score.push(p.score[i] + scores[i]);
        p.words.push(p.words[i] + w);
        p.link_words.push(p.link_words[i] + lw);
        p.periods.push(p.periods[i] + per);
        p.commas.push(p.commas[i] + com);
        p.paragraphs.push(p.paragraphs[i] + par);
        p.tags.push(p.tags[i] + u32::from(t.kind.is_tag()));
    }
    let page_words = f64::from(p.words[n].max(1));
    let page_link_share = f64::from(p.link_words[n]) / page_words;
    let best_value = current.value.max(f64::MIN_POSITIVE);

    // Furniture / positive marks of the open elements, read once per element asked about.
    let mut marks: Vec<u8> = vec![0; opened.len()];
    let mut enclosed = |s: usize| -> (bool, bool) {
        let (mut f, mut g) = (false, false);
        let mut slot = owner[s];
        while slot != NO_ELEMENT {
            let (at, parent) = opened[slot as usize];
            let m = &mut marks[slot as usize];
            if *m == 0 {
                let t = &tokens[at as usize];
                let names = text::class_names(t.raw(page));
                let furniture = names & !text::F_POSITIVE != 0 || t.tag == tags::FOOTER;
                *m = MARKED | u8::from(furniture) | (u8::from(names & text::F_POSITIVE != 0) << 1);
            }
            (f, g) = (f || *m & 1 != 0, g || *m & 2 != 0);
            slot = parent;
        }
        (f, g)
    };
    let spans = std::iter::once((current.start, current.end, 0))
        .chain(lists.iter().filter(|l| l.start <= l.end && l.end < n).map(|l| (l.start, l.end, l.items)));
    let mut out: Vec<Candidate> = Vec::with_capacity(lists.len() + 1);
    for (s, e, items) in spans {
        if out.iter().any(|c| c.start == s && c.end == e) {
            continue;
        }
        let value = Prefix::range(&p.score, s, e);
        let words = Prefix::range(&p.words, s, e);
        // A list's own id/class counts too ("comment-list", "sidebar"): its marks are read
        // from inside it.
        let (in_furniture, in_positive) = enclosed(if items > 0 { (s + 1).min(e) } else { s });
        let fw = f64::from(words.max(1));
        let features = [
            1.0,
            (value / best_value).clamp(-2.0, 2.0),
            (value / (e - s + 1) as f64).clamp(-1.0, 1.0),
            (1.0 + f64::from(words)).ln() / 10.0,
            f64::from(words) / page_words,
            f64::from(Prefix::range(&p.link_words, s, e)) / fw,
            s as f64 / n as f64,
            f64::from(headline.is_some_and(|h| s <= h && h <= e)),
            headline.map_or(1.0, |h| if s >= h { ((s - h) as f64 / 1000.0).min(1.0) } else { 1.0 }),
            f64::from(in_furniture),
            f64::from(s == current.start && e == current.end),
            f64::from(s <= current.start && current.end <= e && (s, e) != (current.start, current.end)),
            f64::from(current.start <= s && e <= current.end && (s, e) != (current.start, current.end)),
            f64::from(in_article[s]),
            (f64::from(Prefix::range(&p.periods, s, e)) * 15.0 / fw).min(2.0),
            f64::from(in_positive),
            (f64::from(Prefix::range(&p.paragraphs, s, e)) * 20.0 / fw).min(2.0),
            (f64::from(words) / f64::from(Prefix::range(&p.tags, s, e) + 1) / 10.0).min(2.0),
            (f64::from(Prefix::range(&p.commas, s, e)) * 20.0 / fw).min(2.0),
            (1.0 + items as f64).ln() / 5.0,
            page_link_share,
        ];
        out.push(Candidate { start: s, end: e, value, features });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::html::{TokenizerOptions, tokenize};

    #[test]
    fn the_current_choice_comes_first_then_the_page_s_lists_once() {
        let intro = "word ".repeat(40);
        let cards: String =
            (0..8).map(|i| format!("<li class=card><a href=/{i}>Product {i} name</a> $1{i}</li>")).collect();
        let html = format!(
            "<body><div class=nav><a>a</a> <a>b</a></div><article><h1>Shop</h1><p>{intro}.</p></article>\
             <ul class=grid>{cards}</ul></body>"
        );
        let s = tokenize(html.as_bytes(), TokenizerOptions::default()).unwrap();
        let at = |needle: &str| s.sink.iter().position(|t| s.page[t.start as usize..].starts_with(needle)).unwrap();
        let scores: Vec<f64> =
            (0..s.sink.len()).map(|i| if i > at("<p>") && i < at("</p>") { 0.5 } else { -0.2 }).collect();
        let current = Segment { start: at("<p>") + 1, end: at("</p>") - 1, value: 20.0 };
        let lists = crate::extract::lists::largest(&s.page, &s.sink, 6, MAX_LISTS);
        assert_eq!(lists.len(), 1, "{lists:?}");
        assert_eq!(lists[0].items, 8);
        let c = candidates(&s.page, &s.sink, &scores, current, Some(at("<h1>")), &[lists[0], lists[0]]);
        assert_eq!(c.len(), 2, "the list once: {c:?}");
        let f = |name: &str| FEATURE_NAMES.iter().position(|n| *n == name).unwrap();
        assert_eq!(c[0].features[f("is_current")], 1.0, "the current choice comes first");
        assert_eq!(c[0].features[f("in_article")], 1.0);
        assert_eq!((c[1].start, c[1].end), (lists[0].start, lists[0].end));
        assert!(c[1].features[f("link_share")] > 0.5, "a grid's items lead with links");
        assert!(c[1].features[f("log_items")] > c[0].features[f("log_items")]);
        assert!(c[1].features[f("after_headline")] > 0.0);
        assert!(c.iter().all(|c| c.features.iter().all(|f| f.is_finite())));
        // A list whose own class names furniture is marked so, from inside it.
        let html = html.replace("<ul class=grid>", "<ul class=sidebar>");
        let s = tokenize(html.as_bytes(), TokenizerOptions::default()).unwrap();
        let lists = crate::extract::lists::largest(&s.page, &s.sink, 6, MAX_LISTS);
        let c = candidates(&s.page, &s.sink, &scores, current, None, &lists);
        assert_eq!(c[1].features[f("in_furniture")], 1.0);
        assert_eq!(c[0].features[f("in_furniture")], 0.0);
    }
}
