//! Candidate spans for the learned chooser (issue 28): the maximum subsequence picks the run of
//! highest value, and on a listing, a collection or a product grid that run is the page's
//! introduction or one item, while the gold keeps the grid, which may sit in another branch of
//! the page (the span widening, [`super::lists::widen`], finds only the lists around the span).
//! The candidates are the current choice, the page's largest lists
//! ([`super::lists::largest`]) and its main element ([`Elements::main_element`]: a landing
//! page's cards and shelves are too few or too unlike to make a list): whether a list is the
//! content or a sidebar, a comment thread or a related-stories grid depends on its place, its
//! links, its words and its scores together, which is what the trees of
//! [`crate::scoring::chooser`] weigh. Each candidate gets a fixed
//! vector of page-relative features.
//!
//! Earlier choosers also took every maximal run of positive score (Ruzzo & Tompa) and the
//! container elements holding text (readability's insight) as candidates; with the span options
//! and the widening they gained nothing under leave-one-dataset-out and switched wrongly on
//! dragnet's blogs (models/README.md, "Span chooser").
//!
//! After scoring: each candidate's sums over its own tokens, the elements open before it from
//! the page's [`Elements`], and one pass up to the last candidate's first token for its link
//! and article counts (no DOM); at most [`MAX_LISTS`] + 3 candidates a page (the current
//! choice, the lists, the widening's list, the main element).

use crate::html::tags;
use crate::html::{Token, TokenKind};
use crate::scoring::Segment;

use super::furniture;
use super::lists::{Elements, List};

/// The page's largest lists kept as candidates (with the widening's list, when it found one).
pub const MAX_LISTS: usize = 3;

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

/// What a candidate's tokens add up to.
#[derive(Default)]
struct Sums {
    score: f64,
    words: u32,
    link_words: u32,
    periods: u32,
    commas: u32,
    paragraphs: u32,
    tags: u32,
}

/// Before a token: how many links are open (`<a>` start tags less end tags, above zero) and
/// whether it is inside `<article>`/`<main>` (counted the same way).
#[derive(Clone, Copy)]
struct Context {
    in_a: u32,
    in_article: bool,
}

/// The spans that compete with the current choice.
#[derive(Debug, Clone, Copy, Default)]
pub struct Rivals<'a> {
    /// The page's largest lists.
    pub lists: &'a [List],
    /// The page's main element ([`Elements::main_element`]).
    pub main: Option<(usize, usize)>,
}

/// The candidates of a page: the current choice `current` first, then the `rivals` (lists,
/// then the main element; duplicates of an earlier span once); `headline` is the token of the
/// page's headline (the heading that repeats the `<title>`, else the `<h1>`), if it has one.
pub fn candidates(
    page: &str,
    tokens: &[Token],
    scores: &[f64],
    current: Segment,
    headline: Option<usize>,
    rivals: Rivals,
    elements: &Elements,
) -> Vec<Candidate> {
    let Rivals { lists, main } = rivals;
    let n = tokens.len().min(scores.len());
    if n == 0 || current.end >= n {
        return Vec::new();
    }
    // The spans, and the token each one's marks are read before: a list's own id/class counts
    // too ("comment-list", "sidebar"), so its marks are read from inside it. (start, end,
    // items): the main element has no items, as the current choice.
    let mut spans: Vec<(usize, usize, usize)> = vec![(current.start, current.end, 0)];
    let others = lists.iter().map(|l| (l.start, l.end, l.items)).chain(main.map(|(s, e)| (s, e, 0)));
    for (s, e, items) in others.filter(|&(s, e, _)| s <= e && e < n) {
        if !spans.iter().any(|x| (x.0, x.1) == (s, e)) {
            spans.push((s, e, items));
        }
    }
    let at = |&(s, e, items): &(usize, usize, usize)| if items > 0 { (s + 1).min(e) } else { s };
    let mut wanted: Vec<usize> = spans.iter().flat_map(|x| [x.0, at(x)]).collect();
    wanted.sort_unstable();
    wanted.dedup();
    // One pass over the page up to the last wanted token for the counts before each; the
    // elements open there come from the page's elements.
    let mut contexts: Vec<(usize, Context)> = Vec::with_capacity(wanted.len());
    let (mut in_a, mut article_depth) = (0u32, 0u32);
    let last = wanted.last().copied().unwrap_or(0);
    let mut next = wanted.iter().copied().peekable();
    for (i, t) in tokens[..=last].iter().enumerate() {
        if next.peek() == Some(&i) {
            next.next();
            contexts.push((i, Context { in_a, in_article: article_depth > 0 }));
        }
        let count = match t.tag {
            tags::A => &mut in_a,
            tags::ARTICLE | tags::MAIN => &mut article_depth,
            _ => continue,
        };
        match t.kind {
            TokenKind::StartTag => *count += 1,
            TokenKind::EndTag => *count = count.saturating_sub(1),
            TokenKind::Word | TokenKind::Symbol => {}
        }
    }
    let context = |i: usize| &contexts[contexts.binary_search_by_key(&i, |c| c.0).expect("a wanted token")].1;
    let (page_words, page_link_words) = elements.page_words();
    let page_link_share = f64::from(page_link_words) / f64::from(page_words.max(1));
    let page_words = f64::from(page_words.max(1));
    let best_value = current.value.max(f64::MIN_POSITIVE);
    // Whether an element's id/class marks it furniture or positive (bit 0, bit 1), read once
    // per element asked about.
    let mut marks: std::collections::HashMap<u32, u8> = std::collections::HashMap::new();
    let mut out: Vec<Candidate> = Vec::with_capacity(spans.len());
    for span in &spans {
        let &(s, e, items) = span;
        let before = context(s);
        let (mut in_furniture, mut in_positive) = (false, false);
        for tag_at in elements.open_before(at(span)) {
            let m = *marks.entry(tag_at).or_insert_with(|| {
                let t = &tokens[tag_at as usize];
                let names = furniture::class_names(t.raw(page));
                let is_furniture = names & !furniture::F_POSITIVE != 0 || t.tag == tags::FOOTER;
                u8::from(is_furniture) | (u8::from(names & furniture::F_POSITIVE != 0) << 1)
            });
            (in_furniture, in_positive) = (in_furniture || m & 1 != 0, in_positive || m & 2 != 0);
        }
        // The span's sums, its link depth starting from the one before its first token.
        let mut in_a = before.in_a;
        let mut x = Sums::default();
        for (t, &score) in tokens[s..=e].iter().zip(&scores[s..=e]) {
            x.score += score;
            match t.kind {
                TokenKind::Word => {
                    x.words += 1;
                    x.link_words += u32::from(in_a > 0);
                }
                TokenKind::Symbol => {
                    let r = t.raw(page);
                    // Sentence ends and commas in the scripts that write their own: CJK's
                    // full stop and full-width marks, the Arabic question mark and comma (a page
                    // in Chinese otherwise reads as having no sentence). The Devanagari danda
                    // never comes alone: the tokenizer keeps the Indic blocks' signs with
                    // their word.
                    x.periods += u32::from(matches!(r, "." | "!" | "?" | "。" | "．" | "！" | "？" | "؟"));
                    x.commas += u32::from(matches!(r, "," | "，" | "、" | "،"));
                }
                TokenKind::StartTag => {
                    x.paragraphs += u32::from(t.tag == tags::P);
                    x.tags += 1;
                    in_a += u32::from(t.tag == tags::A);
                }
                TokenKind::EndTag => {
                    x.tags += 1;
                    if t.tag == tags::A {
                        in_a = in_a.saturating_sub(1);
                    }
                }
            }
        }
        let in_article = before.in_article;
        let (value, words) = (x.score, x.words);
        let fw = f64::from(words.max(1));
        let features = [
            1.0,
            (value / best_value).clamp(-2.0, 2.0),
            (value / (e - s + 1) as f64).clamp(-1.0, 1.0),
            (1.0 + f64::from(words)).ln() / 10.0,
            f64::from(words) / page_words,
            f64::from(x.link_words) / fw,
            s as f64 / n as f64,
            f64::from(headline.is_some_and(|h| s <= h && h <= e)),
            headline.map_or(1.0, |h| if s >= h { ((s - h) as f64 / 1000.0).min(1.0) } else { 1.0 }),
            f64::from(in_furniture),
            f64::from(s == current.start && e == current.end),
            f64::from(s <= current.start && current.end <= e && (s, e) != (current.start, current.end)),
            f64::from(current.start <= s && e <= current.end && (s, e) != (current.start, current.end)),
            f64::from(in_article),
            (f64::from(x.periods) * 15.0 / fw).min(2.0),
            f64::from(in_positive),
            (f64::from(x.paragraphs) * 20.0 / fw).min(2.0),
            (f64::from(words) / f64::from(x.tags + 1) / 10.0).min(2.0),
            (f64::from(x.commas) * 20.0 / fw).min(2.0),
            (1.0 + items as f64).ln() / 5.0,
            page_link_share,
            f64::from(main == Some((s, e)) && (s, e) != (current.start, current.end)),
        ];
        out.push(Candidate { start: s, end: e, value, features });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::extract::lists::Elements;
    use crate::html::{TokenizerOptions, tokenize};

    #[test]
    fn the_main_element_is_a_candidate_of_its_own_unless_it_is_the_current_choice() {
        let cards: String = (0..3).map(|i| format!("<div><h2>Plan {i}</h2><p>Watch more.</p></div>")).collect();
        let html = format!("<body><div class=nav><a>a</a></div><main>{cards}</main></body>");
        let s = tokenize(html.as_bytes(), TokenizerOptions::default()).unwrap();
        let at = |needle: &str| s.sink.iter().position(|t| s.page[t.start as usize..].starts_with(needle)).unwrap();
        let scores = vec![0.1; s.sink.len()];
        let els = Elements::new(&s.sink);
        let main = els.main_element(&s.page, &s.sink, at("Plan 1"));
        assert_eq!(main, Some((at("<main>"), at("</main>"))));
        let f = |name: &str| FEATURE_NAMES.iter().position(|n| *n == name).unwrap();
        let card = Segment { start: at("Plan 1"), end: at("Watch more.</p></div><div><h2>Plan 2") + 2, value: 1.0 };
        let c = candidates(&s.page, &s.sink, &scores, card, None, Rivals { lists: &[], main }, &els);
        assert_eq!(c.len(), 2);
        assert_eq!((c[1].start, c[1].end), main.unwrap());
        assert_eq!((c[0].features[f("is_main")], c[1].features[f("is_main")]), (0.0, 1.0));
        assert_eq!(c[1].features[f("holds_current")], 1.0);
        // The current choice is the main element: one candidate, not marked main.
        let whole = Segment { start: at("<main>"), end: at("</main>"), value: 1.0 };
        let c = candidates(&s.page, &s.sink, &scores, whole, None, Rivals { lists: &[], main }, &els);
        assert_eq!(c.len(), 1);
        assert_eq!(c[0].features[f("is_main")], 0.0);
    }

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
        let els = Elements::new(&s.sink);
        let lists = crate::extract::lists::largest(&els, &s.page, &s.sink, 6, MAX_LISTS);
        assert_eq!(lists.len(), 1, "{lists:?}");
        assert_eq!(lists[0].items, 8);
        let c = candidates(
            &s.page,
            &s.sink,
            &scores,
            current,
            Some(at("<h1>")),
            Rivals { lists: &[lists[0], lists[0]], main: None },
            &els,
        );
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
        let els = Elements::new(&s.sink);
        let lists = crate::extract::lists::largest(&els, &s.page, &s.sink, 6, MAX_LISTS);
        let c = candidates(&s.page, &s.sink, &scores, current, None, Rivals { lists: &lists, main: None }, &els);
        assert_eq!(c[1].features[f("in_furniture")], 1.0);
        assert_eq!(c[0].features[f("in_furniture")], 0.0);
    }

    /// A paragraph in Chinese or Arabic has sentences and commas as one in English does, in
    /// its own script's marks.
    #[test]
    fn sentence_and_comma_shares_read_the_marks_of_other_scripts() {
        let f = |name: &str| FEATURE_NAMES.iter().position(|n| *n == name).unwrap();
        let shares = |text: &str| {
            let html = format!("<body><article><p>{text}</p></article></body>");
            let s = tokenize(html.as_bytes(), TokenizerOptions::default()).unwrap();
            let n = s.sink.len();
            let current = Segment { start: 0, end: n - 1, value: 1.0 };
            let els = Elements::new(&s.sink);
            let c = candidates(&s.page, &s.sink, &vec![0.1; n], current, None, Rivals { lists: &[], main: None }, &els);
            (c[0].features[f("sentence_share")], c[0].features[f("comma_share")])
        };
        for text in [
            "The council met, and voted. The park opens in May, after the rains.",
            "市议会开会，并投票。公园将在五月开放，雨季之后。",
            "اجتمع المجلس، وصوّت؟ تفتح الحديقة في مايو، بعد الأمطار؟",
        ] {
            let (sentences, commas) = shares(text);
            assert!(sentences > 0.0 && commas > 0.0, "{text}");
        }
    }

    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]
        /// Any markup, its lists and any current span: no panic, the current span first, every
        /// feature finite.
        #[test]
        fn any_page_gives_finite_features(
            html in crate::extract::lists::tests::any_markup(),
            at in 0usize..1000,
            len in 0usize..200,
            score in -0.6f64..0.6,
            headline in prop::option::of(0usize..1000),
        ) {
            let t = tokenize(html.as_bytes(), TokenizerOptions::default()).unwrap();
            let n = t.sink.len();
            prop_assume!(n > 0);
            let (s, scores) = (at % n, vec![score; n]);
            let e = (s + len).min(n - 1);
            let current = Segment { start: s, end: e, value: score * (e - s + 1) as f64 };
            let els = Elements::new(&t.sink);
            let lists = crate::extract::lists::largest(&els, &t.page, &t.sink, 2, MAX_LISTS);
            let main = els.main_element(&t.page, &t.sink, s);
            let rivals = Rivals { lists: &lists, main };
            let c = candidates(&t.page, &t.sink, &scores, current, headline.map(|h| h % n), rivals, &els);
            prop_assert!(!c.is_empty() && (c[0].start, c[0].end) == (s, e));
            prop_assert!(c.len() <= lists.len() + 1 + usize::from(main.is_some()));
            let is_main = FEATURE_NAMES.iter().position(|n| *n == "is_main").unwrap();
            for x in &c {
                let marked = x.features[is_main] == 1.0;
                prop_assert_eq!(marked, main == Some((x.start, x.end)) && (x.start, x.end) != (s, e));
            }
            for x in &c {
                prop_assert!(x.features.iter().all(|f| f.is_finite()), "{x:?}");
            }
        }
    }
}
