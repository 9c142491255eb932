//! Structure around the chosen span (issue 28): is the span one item of a list, or part of a
//! run of paragraphs it leaves unfinished?
//!
//! The maximum subsequence takes the run of highest value. On a listing, a collection or a
//! product grid every item leads with a link, so the token scores call the items navigation and
//! no run holds more than one or two of them; wcxb's gold keeps them all. What tells a list
//! apart is not the words but the markup: the span sits in an element whose siblings repeat it
//! (the same tag and first class name, as a template renders every item). When at least
//! [`ExtractOptions::list_min_items`](super::ExtractOptions::list_min_items) such items hold
//! words and the list holds at least [`GROWTH`] times the span's words, the list is the span.
//! The span's innermost container may itself be the list: the span covers a few of its items,
//! or introduces them ("the best deals this week:"). The same evidence finds an article cut
//! short: the container holds at least that many paragraphs. In both cases what the container
//! adds to the span must not be confidently furniture (its mean score at least
//! [`REST_MIN_SCORE`]): an article and its comment thread share a container too, while an
//! embed or an ad break only scored a stretch of the story a little below zero.
//! The extractor reads a widening with its link lists and keeps it only when it gives more
//! text than the spans did.
//!
//! The page's largest lists, wherever they are ([`largest`]), and its main element
//! ([`Elements::main_element`]: `<main>` or `role="main"`) are the learned chooser's candidates
//! beside the span ([`super::candidates`]): a listing's grid may sit in another branch of the
//! page than its introduction, which the span took, and a landing page's cards make no list.
//!
//! One pass over the tokens (an open-element stack, no DOM; [`Elements`]) after scoring, shared
//! by both; class names are read only for the children of the span's ancestors, and for the
//! items of parents with enough of them.

use std::collections::HashMap;

use crate::html::tags::{self, TagId};
use crate::html::{Token, TokenKind};

use super::furniture;

/// A list must hold at least this many times the span's words: a list that adds little is the
/// span's own markup (a paragraph's sentences in `<span>`s, a product's three feature boxes).
pub const GROWTH: f64 = 2.0;

/// The least score a word, on average, of what the span's container adds to it (all its tokens'
/// scores over its words). NB scores run from −0.5 (sure furniture) to +0.5: a comment thread
/// in the article's container scores about −0.5 to −0.6 a word; the rest of a story split by an
/// embed +0.1 to −0.3, deals an introduction introduces −0.02. Over the five dev sets −0.3 and
/// −0.45 give the same output, −0.2 loses one page (docs/evaluation.md, "span widening").
pub const REST_MIN_SCORE: f64 = -0.3;

/// Ancestors of the span looked at for a list (the span's item may sit a few wrappers deep in
/// the item: a card's body in its link in its grid cell).
const MAX_LEVELS: usize = 8;

/// Open elements tracked; deeper ones are left out.
const MAX_OPEN: usize = 1024;

/// An item holds at least this many words (an empty grid cell or a spacer is no item).
const ITEM_MIN_WORDS: u32 = 3;

const NONE: u32 = u32::MAX;

/// What the structure says about the span.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Widening {
    /// The span is an item of this list (tokens `start..=end`).
    List(usize, usize),
    /// The span is part of this container of paragraphs.
    Paragraphs(usize, usize),
}

#[derive(Clone, Copy)]
struct El {
    tag: TagId,
    start: u32,
    end: u32,
    parent: u32,
}

/// Elements whose repetition makes a list: an article is a run of paragraphs and headings, so
/// those never do (they are [`Widening::Paragraphs`]).
fn is_item(tag: TagId) -> bool {
    matches!(tag, tags::DIV | tags::LI | tags::TR | tags::ARTICLE | tags::SECTION | tags::A | tags::DD | tags::UNKNOWN)
}

/// An item's kind: its tag and the first word of its class with digits left out ("item-1" and
/// "item-2" are one kind; later class words carry state: "active", "sold-out", a hash), or,
/// without a class, its id so (an id names one element: a page's `<div id=header>`,
/// `<div id=nav>`, `<div id=content>` and `<div id=footer>` are no four items of one list,
/// and taking them for one widened a news.com.au story to its whole page, navigation and all,
/// dragnet-0442 to -0445; `post-1`, `post-2` still are). The attributes are read by the
/// metadata's attribute reader ([`crate::metadata::attributes`]).
fn kind(tag: TagId, raw: &str) -> u64 {
    let attrs = crate::metadata::attributes(raw);
    let class = attrs.iter().find(|(k, _)| k == "class").map_or("", |(_, v)| v.as_ref());
    let mut first = class.split_ascii_whitespace().next().unwrap_or("");
    if first.is_empty() {
        first = attrs.iter().find(|(k, _)| k == "id").map_or("", |(_, v)| v.as_ref());
    }
    let mut buf = [0u8; 64];
    let mut n = 0;
    for &c in first.as_bytes().iter().filter(|c| !c.is_ascii_digit()).take(buf.len()) {
        buf[n] = c;
        n += 1;
    }
    xxhash_rust::xxh3::xxh3_64_with_seed(&buf[..n], u64::from(tag))
}

/// Every element of the page in start order (an open-element stack, as the span filters keep
/// it), the prefix count of words before each token, and the words inside links: built once a
/// page, read by [`largest`], [`widen`] and the chooser's candidates.
pub struct Elements {
    words: Vec<u32>,
    els: Vec<El>,
    link_words: u32,
}

impl Elements {
    pub fn new(tokens: &[Token]) -> Elements {
        let (words, els, link_words) = elements(tokens, tokens.len());
        Elements { words, els, link_words }
    }

    /// The start tags (token indices) of the elements open before token `i`, innermost first.
    /// An element open there has every ancestor open too: an end tag closes the elements
    /// opened inside the one it ends.
    pub fn open_before(&self, i: usize) -> impl Iterator<Item = u32> + '_ {
        let i = i as u32;
        let last = self.els.partition_point(|e| e.start < i);
        // The last element started before `i`, or its nearest ancestor still open at `i`.
        let mut at = last.checked_sub(1).map_or(NONE, |k| k as u32);
        while at != NONE && self.els[at as usize].end < i {
            at = self.els[at as usize].parent;
        }
        std::iter::successors((at != NONE).then_some(at), |&k| {
            let parent = self.els[k as usize].parent;
            (parent != NONE).then_some(parent)
        })
        .map(|k| self.els[k as usize].start)
    }

    /// The page's main element (tokens `start..=end`): the `<main>` or `role="main"` element
    /// (HTML's and WAI-ARIA's name for the page's dominant content) holding token `at`, else
    /// the one holding the most words; None when the page names none.
    pub fn main_element(&self, page: &str, tokens: &[Token], at: usize) -> Option<(usize, usize)> {
        let roles = start_tags_holding(page, tokens, furniture::MAIN_ROLE_NEEDLE)
            .filter(|&i| furniture::is_main_role(tokens[i].raw(page)))
            .map(|i| i as u32);
        let starts = self.els.iter().filter(|e| e.tag == tags::MAIN).map(|e| e.start).chain(roles);
        let mut largest: Option<(usize, usize, u32)> = None;
        for start in starts {
            let Ok(k) = self.els.binary_search_by_key(&start, |e| e.start) else { continue };
            let (s, e) = (self.els[k].start as usize, self.els[k].end as usize);
            if e >= tokens.len() {
                continue;
            }
            if s <= at && at <= e {
                return Some((s, e));
            }
            let words = self.words[e + 1] - self.words[s];
            if largest.is_none_or(|l| words > l.2) {
                largest = Some((s, e, words));
            }
        }
        largest.map(|(s, e, _)| (s, e))
    }

    /// The page's words, and those inside a link (`<a>` start tags less end tags above zero).
    pub fn page_words(&self) -> (u32, u32) {
        (self.words.last().copied().unwrap_or(0), self.link_words)
    }
}

fn elements(tokens: &[Token], n: usize) -> (Vec<u32>, Vec<El>, u32) {
    let mut words = Vec::with_capacity(n + 1);
    words.push(0u32);
    let mut els: Vec<El> = Vec::new();
    let mut open: Vec<u32> = Vec::new();
    let (mut in_a, mut link_words) = (0u32, 0u32);
    for (i, t) in tokens[..n].iter().enumerate() {
        let word = t.kind == TokenKind::Word;
        words.push(words[i] + u32::from(word));
        link_words += u32::from(word && in_a > 0);
        match t.tag {
            tags::A if t.kind == TokenKind::StartTag => in_a += 1,
            tags::A if t.kind == TokenKind::EndTag => in_a = in_a.saturating_sub(1),
            _ => {}
        }
        match t.kind {
            TokenKind::StartTag if !tags::is_void(t.tag) && open.len() < MAX_OPEN => {
                let parent = open.last().copied().unwrap_or(NONE);
                open.push(els.len() as u32);
                els.push(El { tag: t.tag, start: i as u32, end: NONE, parent });
            }
            TokenKind::EndTag => {
                // As the span filters do: an end tag closes the nearest open element of its
                // name among the last 64, and every element opened inside it.
                let lo = open.len().saturating_sub(64);
                if let Some(k) = open[lo..].iter().rposition(|&x| els[x as usize].tag == t.tag) {
                    for &x in &open[lo + k..] {
                        els[x as usize].end = i as u32;
                    }
                    open.truncate(lo + k);
                }
            }
            _ => {}
        }
    }
    for &x in &open {
        els[x as usize].end = (n - 1) as u32;
    }
    (words, els, link_words)
}

/// Which tokens lie inside the elements whose start tags hold one of `needles` (found by one
/// search of the page each) and that `is_marked` says yes to; None when there are none. The
/// page's elements are asked for only when a start tag holds a needle.
pub fn inside<'e>(
    elements: impl FnOnce() -> &'e Elements,
    page: &str,
    tokens: &[Token],
    needles: &[&[u8]],
    is_marked: impl Fn(&str) -> bool,
) -> Option<Vec<bool>> {
    let tags: Vec<usize> = needles.iter().flat_map(|n| start_tags_holding(page, tokens, n)).collect();
    if tags.is_empty() {
        return None;
    }
    let els = &elements().els;
    let mut mask: Option<Vec<bool>> = None;
    for i in tags {
        // An element's start tag (not a void element's), and the element ends on the page.
        let Ok(k) = els.binary_search_by_key(&(i as u32), |e| e.start) else { continue };
        let end = els[k].end as usize;
        if end < tokens.len() && is_marked(tokens[i].raw(page)) {
            mask.get_or_insert_with(|| vec![false; tokens.len()])[i..=end].fill(true);
        }
    }
    mask
}

/// The start tags (token indices) holding `needle`, found by one search of the page: a match in
/// text or a comment is no element's.
fn start_tags_holding<'a>(page: &'a str, tokens: &'a [Token], needle: &'a [u8]) -> impl Iterator<Item = usize> + 'a {
    memchr::memmem::find_iter(page.as_bytes(), needle).filter_map(|at| {
        let i = tokens.partition_point(|t| (t.end as usize) <= at);
        tokens.get(i).is_some_and(|t| t.kind == TokenKind::StartTag && (t.start as usize) <= at).then_some(i)
    })
}

/// A list of the page: an element (tokens `start..=end`) whose children repeat one kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct List {
    pub start: usize,
    pub end: usize,
    /// Its items: children of the kind, each holding at least `ITEM_MIN_WORDS` (3) words.
    pub items: usize,
}

/// The page's largest lists, at most `top`, by the words their items hold: elements with at
/// least `min_items` children of one kind (the candidates of the learned chooser,
/// [`super::candidates`]: a listing's grid can sit in another branch of the page than its
/// introduction, which the span took). Children are counted first and kinds read only under
/// parents with enough of them.
pub fn largest(elements: &Elements, page: &str, tokens: &[Token], min_items: usize, top: usize) -> Vec<List> {
    let (words, els) = (&elements.words, &elements.els);
    if min_items == 0 || top == 0 || words.len() != tokens.len() + 1 {
        return Vec::new();
    }
    let words_in = |a: u32, b: u32| words[b as usize + 1] - words[a as usize];
    let is_candidate_item =
        |el: &El| el.parent != NONE && is_item(el.tag) && words_in(el.start, el.end) >= ITEM_MIN_WORDS;
    let mut children = vec![0u32; els.len()];
    for el in els.iter().filter(|el| is_candidate_item(el)) {
        children[el.parent as usize] += 1;
    }
    // (parent, kind) -> (items, their words)
    let mut groups: HashMap<(u32, u64), (usize, u32)> = HashMap::new();
    for el in els.iter().filter(|el| is_candidate_item(el) && children[el.parent as usize] as usize >= min_items) {
        let g = groups.entry((el.parent, kind(el.tag, tokens[el.start as usize].raw(page)))).or_default();
        (g.0, g.1) = (g.0 + 1, g.1 + words_in(el.start, el.end));
    }
    let mut lists: Vec<(u32, usize, u32)> = groups
        .into_iter()
        .filter(|&((p, _), (items, _))| items >= min_items && !matches!(els[p as usize].tag, tags::BODY | tags::HTML))
        .map(|((p, _), (items, w))| (p, items, w))
        .collect();
    // The biggest kind of each parent, then the biggest parents.
    lists.sort_by(|a, b| a.0.cmp(&b.0).then(b.2.cmp(&a.2)).then(b.1.cmp(&a.1)));
    lists.dedup_by_key(|l| l.0);
    lists.sort_by(|a, b| b.2.cmp(&a.2).then(a.0.cmp(&b.0)));
    lists
        .into_iter()
        .take(top)
        .map(|(p, items, _)| List { start: els[p as usize].start as usize, end: els[p as usize].end as usize, items })
        .collect()
}

/// The list or paragraph run the span `s..=e` belongs to, if the page's structure shows one
/// (see the module comment); `scores` are the token scores, `min_items` the least items or
/// paragraphs.
pub fn widen(
    elements: &Elements,
    page: &str,
    tokens: &[Token],
    scores: &[f64],
    s: usize,
    e: usize,
    min_items: usize,
) -> Option<Widening> {
    let (words, els) = (&elements.words, &elements.els);
    let n = tokens.len();
    if min_items == 0 || e >= n || s > e || scores.len() < n || words.len() != n + 1 {
        return None;
    }
    let words_in = |a: u32, b: u32| words[b as usize + 1] - words[a as usize];
    let span_words = words_in(s as u32, e as u32);
    let grows = |el: &El| f64::from(words_in(el.start, el.end)) >= GROWTH * f64::from(span_words);
    let children = |p: u32| {
        let end = els[p as usize].end;
        els[p as usize + 1..].iter().take_while(move |c| c.start <= end).filter(move |c| c.parent == p)
    };
    // The innermost element holding the whole span: elements are in start order, so the last
    // one starting at or before the span that ends after it.
    let before = els.partition_point(|el| el.start as usize <= s);
    let lca = els[..before].iter().rposition(|el| el.end as usize >= e)? as u32;
    let holder = els[lca as usize];
    if matches!(holder.tag, tags::BODY | tags::HTML) {
        return None;
    }
    if grows(&holder) {
        // What the holder adds to the span is not confidently furniture.
        let (hs, he) = (holder.start as usize, holder.end as usize);
        let rest: f64 = scores[hs..s].iter().chain(&scores[e + 1..=he]).sum();
        let rest_kept = rest >= REST_MIN_SCORE * f64::from(words_in(holder.start, holder.end) - span_words);
        // An article the span leaves unfinished.
        let paragraphs =
            children(lca).filter(|c| c.tag == tags::P && words_in(c.start, c.end) >= ITEM_MIN_WORDS).count();
        if paragraphs >= min_items && rest_kept {
            return Some(Widening::Paragraphs(hs, he));
        }
        // A span over a few items of a list, or an introduction to the list below it: the
        // holder is the list. A list the span holds little of must not be confidently
        // furniture: an article and the comment thread below it share a container too.
        let mut kinds: Vec<(u64, usize, u32)> = Vec::new();
        for c in children(lca).filter(|c| is_item(c.tag) && words_in(c.start, c.end) >= ITEM_MIN_WORDS) {
            let k = kind(c.tag, tokens[c.start as usize].raw(page));
            let (a, b) = ((c.start as usize).max(s), (c.end as usize).min(e));
            let shared = if a <= b { words_in(a as u32, b as u32) } else { 0 };
            match kinds.iter_mut().find(|x| x.0 == k) {
                Some(x) => (x.1, x.2) = (x.1 + 1, x.2 + shared),
                None => kinds.push((k, 1, shared)),
            }
        }
        if kinds.iter().any(|x| x.1 >= min_items && (rest_kept || 2 * x.2 >= span_words)) {
            return Some(Widening::List(hs, he));
        }
    }
    // A span inside one item: an ancestor whose parent repeats it.
    let mut a = lca;
    for _ in 0..MAX_LEVELS {
        let el = els[a as usize];
        let p = el.parent;
        if p == NONE || matches!(els[p as usize].tag, tags::BODY | tags::HTML) {
            return None;
        }
        if is_item(el.tag) && grows(&els[p as usize]) {
            let k = kind(el.tag, tokens[el.start as usize].raw(page));
            let items = children(p)
                .filter(|c| {
                    c.tag == el.tag
                        && words_in(c.start, c.end) >= ITEM_MIN_WORDS
                        && kind(c.tag, tokens[c.start as usize].raw(page)) == k
                })
                .count();
            if items >= min_items {
                let pe = els[p as usize];
                return Some(Widening::List(pe.start as usize, pe.end as usize));
            }
        }
        a = p;
    }
    None
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::html::{TokenizerOptions, tokenize};

    fn widen_html(html: &str, span_of: &str, min_items: usize) -> Option<(Widening, String)> {
        let t = tokenize(html.as_bytes(), TokenizerOptions::default()).unwrap();
        let at = html.find(span_of).unwrap() as u32;
        let s = t.sink.iter().position(|k| k.start >= at).unwrap();
        let end = at + span_of.len() as u32;
        let e = t.sink.iter().rposition(|k| k.end <= end).unwrap();
        let scores = vec![-0.1; t.sink.len()];
        widen(&Elements::new(&t.sink), &t.page, &t.sink, &scores, s, e, min_items).map(|w| {
            let (a, b) = match w {
                Widening::List(a, b) | Widening::Paragraphs(a, b) => (a, b),
            };
            (w, t.page[t.sink[a].start as usize..t.sink[b].end as usize].to_string())
        })
    }

    #[test]
    fn items_are_of_one_kind_by_tag_and_first_class_word_without_digits() {
        let k = |raw: &str| kind(tags::LI, raw);
        assert_eq!(k("<li class=\"card card-1 active\">"), k("<li CLASS = 'card card-2'>"));
        assert_eq!(k("<li class=item-3>"), k("<li class=item-44>"));
        assert_ne!(k("<li class=card>"), k("<li class=tile>"));
        assert_ne!(k("<li class=card>"), kind(tags::DIV, "<div class=card>"));
        assert_eq!(k("<li data-class=card>"), k("<li>"));
        assert_eq!(k("<li title=\"a class=card\">"), k("<li>"));
        // Without a class, the id tells one element from another, and items numbered alike.
        let d = |raw: &str| kind(tags::DIV, raw);
        assert_ne!(d("<div id=header>"), d("<div id=footer>"));
        assert_eq!(d("<div id=post-1>"), d("<div id=post-22>"));
        assert_eq!(d("<div class=card id=a>"), d("<div class=card id=b>"));
        // Neither: one kind, as every classless item was before.
        assert_eq!(d("<div>"), d("<div title=a>"));
        assert_eq!(d("<div id=\"\">"), d("<div>"));
    }

    #[test]
    fn the_main_element_is_main_or_role_main_holding_the_token_else_the_largest() {
        let main_of = |html: &str, at: &str| -> Option<String> {
            let t = tokenize(html.as_bytes(), TokenizerOptions::default()).unwrap();
            let i = t.sink.iter().position(|k| t.page[k.start as usize..].starts_with(at)).unwrap();
            let els = Elements::new(&t.sink);
            let (s, e) = els.main_element(&t.page, &t.sink, i)?;
            Some(t.page[t.sink[s].start as usize..t.sink[e].end as usize].to_string())
        };
        let page = "<body><div>Menu</div><main><p>Card one</p><p>Card two</p></main><p>Footer</p></body>";
        assert_eq!(main_of(page, "two").as_deref(), Some("<main><p>Card one</p><p>Card two</p></main>"));
        // Not holding the token: still the page's main element.
        assert_eq!(main_of(page, "Footer").as_deref(), Some("<main><p>Card one</p><p>Card two</p></main>"));
        for role in ["role=\"main\"", "role='main'", "role=main", "Role=\"Main\""] {
            let page = format!("<body><div>Menu</div><div {role}><p>Card one</p></div></body>");
            assert_eq!(main_of(&page, "one"), Some(format!("<div {role}><p>Card one</p></div>")), "{role}");
        }
        // Named in text, a comment, another attribute or another role: no main element.
        for page in [
            "<body><p>Set role=\"main\" on it</p><!-- role=main --><div data-role=main>x</div></body>",
            "<body><div role=\"mainly\"><p>one</p></div><div role=navigation>nav</div></body>",
        ] {
            assert_eq!(main_of(page, "<body>"), None, "{page}");
        }
        // Two: the one holding the token, else the one with the most words.
        let two = "<body><main><p>a b</p></main><div role=main><p>c d e f</p></div><p>x</p></body>";
        assert_eq!(main_of(two, "b").as_deref(), Some("<main><p>a b</p></main>"));
        assert_eq!(main_of(two, "x").as_deref(), Some("<div role=main><p>c d e f</p></div>"));
    }

    #[test]
    fn a_span_inside_one_item_of_a_list_widens_to_the_list() {
        let item = |i: usize| {
            format!(
                "<li class=\"card card-{i}\"><a href=/{i}>Product {i} name</a> <p>Soft cotton shirt number {i}</p></li>"
            )
        };
        let items: String = (0..8).map(item).collect();
        let html =
            format!("<body><nav>Home Shop</nav><ul class=grid>{items}</ul><footer>About us here</footer></body>");
        let (w, text) = widen_html(&html, "Soft cotton shirt number 3", 6).expect("a list");
        assert!(matches!(w, Widening::List(..)));
        assert!(text.starts_with("<ul class=grid>") && text.ends_with("</ul>"), "{text}");
        // Too few items, or items of another kind between them, are no list.
        assert_eq!(widen_html(&html, "Soft cotton shirt number 3", 9), None);
        let mixed: String = (0..8).map(|i| item(i).replace("card card", ["a", "b", "c"][i % 3])).collect();
        let html = format!("<body><ul class=grid>{mixed}</ul></body>");
        assert_eq!(widen_html(&html, "Soft cotton shirt number 3", 6), None);
    }

    #[test]
    fn a_span_over_part_of_a_container_of_paragraphs_takes_them_unless_they_are_furniture() {
        let paras: String = (0..8).map(|i| format!("<p>Story paragraph {i} with several words in it.</p>")).collect();
        let html = format!("<body><div class=story>{paras}</div></body>");
        let two = "Story paragraph 2 with several words in it.</p><p>Story paragraph 3 with several words in it.";
        let (w, text) = widen_html(&html, two, 6).expect("paragraphs");
        assert!(matches!(w, Widening::Paragraphs(..)));
        assert!(text.starts_with("<div class=story>") && text.ends_with("</div>"), "{text}");
        // The rest scoring as sure furniture (a comment thread in the story's container) stays
        // out.
        let t = tokenize(html.as_bytes(), TokenizerOptions::default()).unwrap();
        let at = html.find(two).unwrap() as u32;
        let s = t.sink.iter().position(|k| k.start >= at).unwrap();
        let e = t.sink.iter().rposition(|k| k.end <= at + two.len() as u32).unwrap();
        let scores: Vec<f64> = (0..t.sink.len()).map(|i| if (s..=e).contains(&i) { 0.4 } else { -0.5 }).collect();
        assert_eq!(widen(&Elements::new(&t.sink), &t.page, &t.sink, &scores, s, e, 6), None);
        let scores: Vec<f64> = (0..t.sink.len()).map(|i| if (s..=e).contains(&i) { 0.4 } else { -0.2 }).collect();
        assert!(matches!(
            widen(&Elements::new(&t.sink), &t.page, &t.sink, &scores, s, e, 6),
            Some(Widening::Paragraphs(..))
        ));
        // Fewer paragraphs than asked for, or a span within one paragraph, take nothing.
        assert_eq!(widen_html(&html, two, 9), None);
        assert_eq!(widen_html(&html, "Story paragraph 2 with several words in it.", 6), None);
    }

    #[test]
    fn a_list_below_the_span_in_its_container_is_taken_unless_it_scores_as_furniture() {
        // An introduction and the deals it introduces, or an article and its comment thread:
        // the same markup; the scores tell them apart.
        let intro: String = (0..3).map(|i| format!("<p>Introduction paragraph {i} with several words.</p>")).collect();
        let items: String = (0..8)
            .map(|i| format!("<div class=c><a href=/{i}>Entry {i}</a> <p>Text of entry {i} here.</p></div>"))
            .collect();
        let html = format!("<body><div class=main>{intro}{items}</div></body>");
        let t = tokenize(html.as_bytes(), TokenizerOptions::default()).unwrap();
        let s = t.sink.iter().position(|k| t.page[k.start as usize..].starts_with("Introduction")).unwrap();
        let e = t.sink.iter().rposition(|k| t.page[k.start as usize..].starts_with("words.</p><div")).unwrap();
        let with_rest = |rest: f64| -> Vec<f64> {
            (0..t.sink.len()).map(|i| if (s..=e).contains(&i) { 0.4 } else { rest }).collect()
        };
        let got = widen(&Elements::new(&t.sink), &t.page, &t.sink, &with_rest(-0.1), s, e, 6);
        assert!(matches!(got, Some(Widening::List(..))), "{got:?}");
        assert_eq!(widen(&Elements::new(&t.sink), &t.page, &t.sink, &with_rest(-0.5), s, e, 6), None);
    }

    #[test]
    fn the_largest_lists_are_counted_by_their_items_words_one_kind_per_parent() {
        let cards = |n: usize, class: &str, words: &str| -> String {
            (0..n)
                .map(|i| format!("<div class=\"{class} {class}-{i}\"><a href=/{i}>Item {i}</a> {words}</div>"))
                .collect()
        };
        let html = format!(
            "<body><div class=rail>{}</div><div class=grid>{}{}</div><ul class=few>{}</ul></body>",
            cards(6, "teaser", "one two"),
            cards(8, "card", "three four five six"),
            cards(3, "ad", "seven eight nine ten"),
            cards(4, "x", "a b c d e f"),
        );
        let t = tokenize(html.as_bytes(), TokenizerOptions::default()).unwrap();
        let got: Vec<(String, usize)> = largest(&Elements::new(&t.sink), &t.page, &t.sink, 6, 3)
            .into_iter()
            .map(|l| (t.page[t.sink[l.start].start as usize..t.sink[l.start].end as usize].to_string(), l.items))
            .collect();
        // The grid first (its eight cards; the three ads of another kind are not its items),
        // then the rail; four items are too few.
        assert_eq!(got, vec![("<div class=grid>".to_string(), 8), ("<div class=rail>".to_string(), 6)]);
        assert_eq!(largest(&Elements::new(&t.sink), &t.page, &t.sink, 6, 1).len(), 1);
        assert!(largest(&Elements::new(&t.sink), &t.page, &t.sink, 0, 3).is_empty());
    }

    #[test]
    fn unclosed_and_deep_markup_is_bounded() {
        let html = format!("<body>{}<p>words here and there</p></body>", "<div class=a>".repeat(5000));
        assert_eq!(widen_html(&html, "words here and there", 6), None);
        // 3,000 items that never close nest, each inside the one before (past MAX_OPEN deep):
        // no element has six of them as children, so there is no list, and no panic.
        let html = "<li class=x>one two three".repeat(3000);
        assert_eq!(widen_html(&html, "one two three", 6), None);
    }

    use proptest::prelude::*;

    /// Markup of lists, paragraphs, links and furniture, well formed or not: the proptests'
    /// pages here and in [`crate::extract::candidates`].
    pub(crate) fn any_markup() -> impl Strategy<Value = String> {
        prop::collection::vec(
            prop::sample::select(vec![
                "<ul class=l>",
                "</ul>",
                "<li class=\"i i-1\">",
                "<li class=i>",
                "</li>",
                "<p>",
                "</p>",
                "<div class='c'>",
                "<div class='comment'>",
                "</div>",
                "<a href=/x>",
                "</a>",
                "one two three",
                " ",
                ", ",
                ". ",
                "<br>",
                "<body>",
                "</body>",
                "<tr class=r>",
                "<td>",
                "</tr>",
                "<article>",
                "</article>",
                "<main>",
                "<h1>",
                "</h1>",
                "<footer>",
                "<li class=",
                "<div role=dialog aria-modal=true>",
                "<dialog>",
                "</dialog>",
                "a dialog, ",
                "</main>",
                "<div role=\"main\">",
                "role=main ",
                "<p Role=main",
            ]),
            0..120,
        )
        .prop_map(|parts| parts.concat())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]
        /// Any markup and any span: no panic, and a widening holds the span.
        #[test]
        fn widening_holds_the_span(
            html in any_markup(),
            at in 0usize..1000,
            len in 0usize..200,
            score in -0.6f64..0.6,
            min_items in 0usize..8,
        ) {
            let t = tokenize(html.as_bytes(), TokenizerOptions::default()).unwrap();
            let n = t.sink.len();
            prop_assume!(n > 0);
            let s = at % n;
            let e = (s + len).min(n - 1);
            let scores = vec![score; n];
            let els = Elements::new(&t.sink);
            if let Some(Widening::List(a, b) | Widening::Paragraphs(a, b)) = widen(&els, &t.page, &t.sink, &scores, s, e, min_items) {
                prop_assert!(a <= s && e <= b && b < n, "{a}..{b} for {s}..{e}");
            }
            let lists = largest(&els, &t.page, &t.sink, min_items, 3);
            prop_assert!(lists.len() <= 3);
            // The elements open before token `s` are the open-element stack there.
            let mut stack: Vec<usize> = Vec::new();
            for (i, k) in t.sink[..s].iter().enumerate() {
                match k.kind {
                    TokenKind::StartTag if !tags::is_void(k.tag) && stack.len() < MAX_OPEN => stack.push(i),
                    TokenKind::EndTag => {
                        let lo = stack.len().saturating_sub(64);
                        if let Some(p) = stack[lo..].iter().rposition(|&x| t.sink[x].tag == k.tag) {
                            stack.truncate(lo + p);
                        }
                    }
                    _ => {}
                }
            }
            let open: Vec<usize> = els.open_before(s).map(|x| x as usize).collect();
            prop_assert_eq!(open, stack.into_iter().rev().collect::<Vec<_>>());
            // Modal dialogs: marked tokens start at a start tag that is one.
            let modal = inside(|| &els, &t.page, &t.sink, crate::extract::furniture::MODAL_NEEDLES, crate::extract::furniture::is_modal);
            if let Some(m) = modal {
                prop_assert_eq!(m.len(), n);
                let first = m.iter().position(|&x| x).unwrap();
                prop_assert!(crate::extract::furniture::is_modal(t.sink[first].raw(&t.page)));
            }
            for l in lists {
                prop_assert!(l.start < l.end && l.end < n && l.items >= min_items.max(1), "{l:?}");
            }
            // The main element: an element of the page, opened by a start tag.
            if let Some((a, b)) = els.main_element(&t.page, &t.sink, s) {
                prop_assert!(a <= b && b < n && t.sink[a].kind == TokenKind::StartTag, "{a}..{b}");
                prop_assert!(els.els.iter().any(|e| (e.start as usize, e.end as usize) == (a, b)));
            }
        }
    }
}
