//! Candidate spans for the learned chooser (issue 28): the maximum subsequence picks the run of
//! highest value, and on about one page in fourteen that is the wrong run (a caption and
//! gallery run, a teaser rail, the comment thread). The evidence to do better is on the page:
//! the other maximal runs of positive score (Ruzzo & Tompa), and the elements whose subtree
//! holds text (readability's insight: score a container by the text it holds). Each candidate
//! gets a fixed vector of page-relative features; [`crate::scoring::chooser`] weighs them.
//!
//! One pass over the page's tokens, after scoring, with an open-element stack and prefix sums:
//! no DOM, and at most [`MAX_RUNS`] + [`MAX_ELEMENTS`] candidates a page.

use crate::html::tags::{self, TagId};
use crate::html::{Token, TokenKind};
use crate::scoring::Segment;

use super::text;

/// Maximal runs kept as candidates, by value.
pub const MAX_RUNS: usize = 8;
/// Element subtrees kept as candidates, by the sum of their token scores.
pub const MAX_ELEMENTS: usize = 8;
/// An element holding fewer words is not a candidate.
pub const MIN_ELEMENT_WORDS: u32 = 30;
/// Open elements tracked (deeper ones are not candidates).
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

/// Block containers whose subtree may be the article.
fn is_container(id: TagId) -> bool {
    matches!(id, tags::DIV | tags::ARTICLE | tags::MAIN | tags::SECTION | tags::TD | tags::BODY)
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

/// The candidates of a page: the current choice `current`, the best maximal runs `segs`, and
/// the container elements holding text; duplicates (same span) once.
pub fn candidates(
    page: &str,
    tokens: &[Token],
    scores: &[f64],
    segs: &[Segment],
    current: Segment,
    h1: Option<usize>,
) -> Vec<Candidate> {
    let n = tokens.len().min(scores.len());
    if n == 0 {
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
    // Containers open, for element candidates.
    let mut stack: Vec<(TagId, usize)> = Vec::new();
    // Every open element (as the span filters keep it), as a slot of `opened` (its start tag
    // and its parent's slot), and the innermost open element before each token. Whether an
    // element's id/class marks it furniture or positive is read afterwards, only for the
    // ancestors of the candidates' first tokens: reading it for every start tag was a tenth
    // of the chooser's time.
    let mut open: Vec<(TagId, u32)> = Vec::new();
    let mut opened: Vec<(u32, u32)> = Vec::new();
    let mut owner = vec![NO_ELEMENT; n];
    let mut in_a = 0u32;
    let mut article_depth = 0u32;
    let mut in_article = vec![false; n];
    let mut elements: Vec<(usize, usize)> = Vec::new();
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
                if is_container(t.tag) && stack.len() < MAX_DEPTH {
                    stack.push((t.tag, i));
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
                if is_container(t.tag)
                    && let Some(k) = stack.iter().rposition(|(tag, _)| *tag == t.tag)
                {
                    elements.push((stack[k].1, i));
                    stack.truncate(k);
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
    // Elements never closed end with the page.
    elements.extend(stack.iter().map(|&(_, s)| (s, n - 1)));
    let page_words = f64::from(p.words[n].max(1));
    let best_value = current.value.max(f64::MIN_POSITIVE);

    let mut spans: Vec<(usize, usize, bool)> = vec![(current.start, current.end, false)];
    let mut runs: Vec<&Segment> = segs.iter().filter(|s| s.value > 0.0 && s.end < n).collect();
    runs.sort_by(|a, b| b.value.total_cmp(&a.value).then(a.start.cmp(&b.start)));
    spans.extend(runs.iter().take(MAX_RUNS).map(|s| (s.start, s.end, false)));
    let mut els: Vec<(usize, usize, f64)> = elements
        .into_iter()
        .filter(|&(s, e)| Prefix::range(&p.words, s, e) >= MIN_ELEMENT_WORDS)
        .map(|(s, e)| (s, e, Prefix::range(&p.score, s, e)))
        .collect();
    els.sort_by(|a, b| b.2.total_cmp(&a.2).then(a.0.cmp(&b.0)));
    spans.extend(els.iter().take(MAX_ELEMENTS).map(|&(s, e, _)| (s, e, true)));

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
    let mut out: Vec<Candidate> = Vec::with_capacity(spans.len());
    for (s, e, element) in spans {
        if out.iter().any(|c| c.start == s && c.end == e) {
            continue;
        }
        let value = Prefix::range(&p.score, s, e);
        let words = Prefix::range(&p.words, s, e);
        let (in_furniture, in_positive) = enclosed(s);
        let fw = f64::from(words.max(1));
        let features = [
            1.0,
            (value / best_value).clamp(-2.0, 2.0),
            (value / (e - s + 1) as f64).clamp(-1.0, 1.0),
            (1.0 + f64::from(words)).ln() / 10.0,
            f64::from(words) / page_words,
            f64::from(Prefix::range(&p.link_words, s, e)) / fw,
            s as f64 / n as f64,
            f64::from(h1.is_some_and(|h| s <= h && h <= e)),
            h1.map_or(1.0, |h| if s >= h { ((s - h) as f64 / 1000.0).min(1.0) } else { 1.0 }),
            f64::from(in_furniture),
            f64::from(s == current.start && e == current.end),
            f64::from(s <= current.start && current.end <= e && (s, e) != (current.start, current.end)),
            f64::from(current.start <= s && e <= current.end && (s, e) != (current.start, current.end)),
            f64::from(in_article[s]),
            (f64::from(Prefix::range(&p.periods, s, e)) * 15.0 / fw).min(2.0),
            f64::from(element),
            f64::from(in_positive),
            (f64::from(Prefix::range(&p.paragraphs, s, e)) * 20.0 / fw).min(2.0),
            (f64::from(words) / f64::from(Prefix::range(&p.tags, s, e) + 1) / 10.0).min(2.0),
            (f64::from(Prefix::range(&p.commas, s, e)) * 20.0 / fw).min(2.0),
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
    fn runs_and_text_holding_elements_are_candidates_once() {
        let story = "word ".repeat(40);
        let html = format!("<body><div class=nav><a>a</a> <a>b</a></div><article><div>{story}.</div></article></body>");
        let s = tokenize(html.as_bytes(), TokenizerOptions::default()).unwrap();
        let scores: Vec<f64> =
            s.sink.iter().map(|t| if t.kind == TokenKind::Word && t.start > 40 { 0.5 } else { -0.2 }).collect();
        let segs = crate::scoring::max_subsequence::maximal_segments(&scores);
        let best = *segs.iter().max_by(|a, b| a.value.total_cmp(&b.value)).unwrap();
        let c = candidates(&s.page, &s.sink, &scores, &segs, best, None);
        assert!(c.len() >= 2, "{c:?}");
        assert_eq!(c[0].features[10], 1.0, "the current choice comes first");
        assert!(c.iter().any(|c| c.features[15] == 1.0 && c.features[13] == 1.0), "an element inside <article>");
        let mut spans: Vec<_> = c.iter().map(|c| (c.start, c.end)).collect();
        spans.dedup();
        assert_eq!(spans.len(), c.len());
        assert!(c.iter().all(|c| c.features.iter().all(|f| f.is_finite())));
    }
}
