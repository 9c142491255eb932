//! The span options: how the run the maximum subsequence found is corrected before it is
//! read. The Naive Bayes scores find the page's most valuable run (Pasternack & Roth §3, the
//! maximum subsequence); on some pages that run is not the article:
//! - a comment thread or a sidebar the furniture names ([`mostly_furniture`]) is left for the
//!   best run outside furniture, or for the story under the headline ([`escape_furniture`]);
//! - a long run far from the page's headline ([`title_heading`]) gives way to a run that starts
//!   at it ([`anchor`], `ExtractOptions::title_anchor_ratio`);
//! - a story split by a gallery or an embed, or a page of many items, keeps its other runs
//!   worth a share of the best one ([`extra_spans`], `ExtractOptions::extra_span_ratio` and
//!   `multi_item_ratio`).
//!
//! The anchor, the escape and the extra spans choose among the maximal segments (Ruzzo & Tompa)
//! the extractor computes once a page; the learned chooser ([`crate::scoring::chooser`]) then
//! weighs what they chose against the page's lists and main element. Their settings and measurements: docs/evaluation.md.

use crate::html::normalize::push_lower_words;
use crate::html::{Token, TokenKind, tags};
use crate::scoring::Segment;

use super::furniture;

/// The headline the title anchor holds to: the heading (`<h1>`, `<h2>`, `<h3>`) that best
/// matches the page's `<title>`, that is with the most of its words found in the title, at
/// least two and at least 60 % of its own (the first on a tie). The `<title>` names the page's
/// article; the heading that repeats it is where the article starts. A blog names the post in
/// an `<h2>` or `<h3>` under the blog's `<h1>`, and its `<title>` holds both ("Blog: Post"):
/// the post's heading matches more words. A news page with `<h1>` logos and section names
/// ([`ANCHOR_MAX_H1`]) still has one that repeats its title. Deeper headings are left out:
/// product cards and FAQ entries repeat the title's words too (wcxb dev).
/// Without a match, the first `<h1>` is the headline, as before. Dev F1 with site memory off
/// (docs/evaluation.md, "Title anchor"): dragnet 0.892 → 0.897, wcxb 0.821 → 0.823, the other
/// sets unchanged.
pub(crate) fn title_heading(page: &str, tokens: &[Token], headings: &[u32], title: &str) -> Option<usize> {
    if headings.is_empty() {
        return None;
    }
    // Words as lower-cased runs of letters and digits, so that "Apple-Samsung", "Joe's" and
    // "&amp;" read the same in the (decoded) title and in the heading's tokens.
    let mut title_lower = String::new();
    push_lower_words(title, &mut title_lower);
    let title_words: std::collections::HashSet<&str> = title_lower.split(' ').filter(|w| !w.is_empty()).collect();
    if title_words.len() < 2 {
        return None;
    }
    let (mut decoded, mut lower) = (String::new(), String::new());
    let mut best: Option<(usize, usize)> = None;
    for &at in headings {
        let at = at as usize;
        let tag = tokens[at].tag;
        // Its words and the words found in the title, up to its end tag; a heading that another
        // opens inside, or that runs on, is none.
        let (mut n, mut m) = (0usize, 0usize);
        for t in tokens.iter().skip(at + 1).take(HEADING_MAX_TOKENS) {
            match t.kind {
                TokenKind::EndTag if t.tag == tag => {
                    if m >= 2 && m * 10 >= n * 6 && best.is_none_or(|b| m > b.0) {
                        best = Some((m, at));
                    }
                    break;
                }
                TokenKind::StartTag if matches!(t.tag, tags::H1 | tags::H2 | tags::H3) => break,
                TokenKind::Word => {
                    let text = if t.has_entity {
                        decoded.clear();
                        crate::html::entities::decode_into(t.raw(page), &mut decoded);
                        decoded.as_str()
                    } else {
                        t.raw(page)
                    };
                    lower.clear();
                    push_lower_words(text, &mut lower);
                    for w in lower.split(' ').filter(|w| !w.is_empty()) {
                        n += 1;
                        m += usize::from(title_words.contains(w));
                    }
                }
                _ => {}
            }
        }
    }
    best.map(|b| b.1)
}

/// Headings [`title_heading`] reads: a page of more than this many is a listing, and its title
/// is in one of the first.
pub(crate) const MAX_HEADINGS: usize = 256;
/// A heading of more tokens is not read to its end: no headline is that long.
pub(crate) const HEADING_MAX_TOKENS: usize = 512;

/// How far after the headline an anchored run may start, in tokens
/// ([`title_anchor_ratio`](super::ExtractOptions::title_anchor_ratio)): room for a byline, a
/// date and a lead image.
pub const ANCHOR_WINDOW: usize = 150;
/// Pages with more `<h1>` than this use them for logos and section titles: the first is no
/// headline (a heading that repeats the `<title>` still is, [`title_heading`]).
pub const ANCHOR_MAX_H1: u32 = 2;

/// The span to extract given the headline at token `h1`: `best` itself when it holds the
/// headline or starts within [`ANCHOR_WINDOW`] tokens after it; else the best of the maximal
/// segments `segs` starting in that window, if worth at least `ratio` of `best`.
pub(crate) fn anchor(segs: &[Segment], best: Segment, h1: usize, ratio: f64) -> Segment {
    let window = h1..=h1 + ANCHOR_WINDOW;
    if window.contains(&best.start) || (best.start..=best.end).contains(&h1) {
        return best;
    }
    segs.iter()
        .filter(|g| window.contains(&g.start) && g.value >= ratio * best.value)
        .max_by(|a, b| a.value.total_cmp(&b.value))
        .copied()
        .unwrap_or(best)
}

/// Words of a page's description at most: a description longer than this is a lede, and a
/// story with a lede of its own is a run the maximum subsequence finds.
pub const DESCRIPTION_MAX_WORDS: usize = 60;

/// The story of a line under its headline, found by the page's own description: when `best`
/// lies wholly before the headline (token `h`: an author's bio, a blog's profile box) and the
/// page's `og:description` (else its `<meta name="description">`), of two words or more,
/// recurs word for word after the headline's end tag, starting within [`ANCHOR_WINDOW`] tokens
/// of the headline, the story is the headline through that recurrence. A post of a line or two
/// ("It's yours...", a photo's caption) scores too little to make a run of its own, but the
/// publisher wrote it into the description too (dragnet dev 0176 and 0437, both without
/// overlap before). On a page where the run holds the story the description recurs in it,
/// and nothing changes. `None` else.
pub(crate) fn description_story(
    page: &str,
    tokens: &[Token],
    scores: &[f64],
    best: Segment,
    h: usize,
) -> Option<Segment> {
    if best.end >= h || h >= tokens.len() {
        return None;
    }
    let description = page_description(page, &tokens[..h])?;
    let mut want = String::new();
    push_lower_words(&description, &mut want);
    let want: Vec<&str> = want.split(' ').filter(|w| !w.is_empty()).collect();
    if want.len() < 2 || want.len() > DESCRIPTION_MAX_WORDS {
        return None;
    }
    // After the headline's end tag (the description may repeat the headline itself).
    let head_tag = tokens[h].tag;
    let after = h
        + 1
        + tokens[h + 1..].iter().take(ANCHOR_WINDOW).position(|t| t.kind == TokenKind::EndTag && t.tag == head_tag)?;
    // The words from there, each with its token, as far as a match that starts in the window
    // can reach.
    let reach = (h + ANCHOR_WINDOW + 1).min(tokens.len());
    let (mut words, mut lower, mut decoded, mut beyond) = (Vec::new(), String::new(), String::new(), 0);
    for (i, t) in tokens.iter().enumerate().skip(after + 1) {
        if t.kind != TokenKind::Word {
            continue;
        }
        if i >= reach {
            if beyond >= want.len() {
                break;
            }
            beyond += 1;
        }
        let text = crate::html::entities::decoded(t.raw(page), t.has_entity, &mut decoded);
        lower.clear();
        push_lower_words(text, &mut lower);
        words.extend(lower.split(' ').filter(|w| !w.is_empty()).map(|w| (w.to_string(), i)));
    }
    let at = (0..words.len()).take_while(|&k| words[k].1 < reach).find(|&k| {
        words.len() - k >= want.len() && words[k..k + want.len()].iter().zip(&want).all(|((w, _), v)| w == v)
    })?;
    let end = words[at + want.len() - 1].1;
    let value = scores[h..=end].iter().sum();
    Some(Segment { start: h, end, value })
}

/// The content of the page's `og:description`, else of its `<meta name="description">`,
/// among the `<meta>` tags of `tokens`, read as the metadata pass reads them.
fn page_description(page: &str, tokens: &[Token]) -> Option<String> {
    let mut plain = None;
    for t in tokens.iter().filter(|t| t.kind == TokenKind::StartTag && t.tag == tags::META) {
        let attrs = crate::metadata::attributes(t.raw(page));
        let Some((key, content)) = crate::metadata::meta_pair(&attrs) else { continue };
        match key.as_str() {
            _ if content.trim().is_empty() => {}
            "og:description" => return Some(content),
            "description" if plain.is_none() => plain = Some(content),
            _ => {}
        }
    }
    plain
}

/// The best of the maximal segments `segs` not inside furniture among the
/// [`ESCAPE_CANDIDATES`] most valuable, if worth at least `ratio` of `best` (which is inside
/// furniture). Else, when the page's `headline` comes before `best` and away from it, the best
/// run outside furniture that holds the headline or starts within [`ANCHOR_WINDOW`] tokens
/// after it and is worth [`ESCAPE_MIN_STORY`]: a story of a paragraph under a thread of
/// hundreds of comments (Slashdot, blogs) is worth a few hundredths of the thread, but it is
/// where the headline is. A run worth less is taken too when the headline sits in a story's
/// container that closes before `best` ([`furniture::story_closes_before`]): a blog's video
/// post of a line, whose comments follow outside the post (session 51: dragnet train 0305 and
/// dev 1120, from no overlap; no page down before the chooser's refit). A thread that starts
/// right under its headline (`best` in the window) is the page's own content: a forum's posts,
/// an article in a box named for furniture. Else `best`.
pub(crate) fn escape_furniture(
    page: &str,
    tokens: &[Token],
    segs: &[Segment],
    best: Segment,
    headline: Option<usize>,
    ratio: f64,
    more: bool,
) -> Segment {
    let mut others: Vec<Segment> =
        segs.iter().filter(|g| (g.start, g.end) != (best.start, best.end)).copied().collect();
    others.sort_by(|a, b| b.value.total_cmp(&a.value));
    let outside = |g: &&Segment| !furniture::inside_furniture(page, tokens, g.start, more);
    if let Some(g) = others.iter().filter(|g| g.value >= ratio * best.value).take(ESCAPE_CANDIDATES).find(outside) {
        return *g;
    }
    let Some(h) = headline else { return best };
    // Asked at most once: it does not depend on the run.
    let closes = std::cell::OnceCell::new();
    let story = |g: &&Segment| {
        ((h..=h + ANCHOR_WINDOW).contains(&g.start) || (g.start..=g.end).contains(&h))
            && best.start > g.end + ANCHOR_WINDOW
            && (g.value >= ESCAPE_MIN_STORY
                || (g.value > 0.0
                    && *closes.get_or_init(|| furniture::story_closes_before(page, tokens, h, best.start))))
    };
    others.iter().filter(story).find(outside).copied().unwrap_or(best)
}

/// Does run `seg` start inside furniture ([`furniture::inside_furniture`]) and hold most of its
/// value there ([`furniture::furniture_end`])? Only then is it a comment thread to escape from.
pub(crate) fn mostly_furniture(page: &str, tokens: &[Token], scores: &[f64], seg: Segment, more: bool) -> bool {
    let Some(end) = furniture::furniture_end(page, tokens, seg.start, more) else {
        return false;
    };
    let value = |r: std::ops::Range<usize>| scores.get(r).map_or(0.0, |s| s.iter().filter(|&&v| v > 0.0).sum::<f64>());
    let inside = value(seg.start..end.min(seg.end + 1));
    let all = value(seg.start..seg.end + 1);
    inside >= 0.5 * all
}

/// Runs tried, most valuable first, when the best one is inside furniture.
pub(crate) const ESCAPE_CANDIDATES: usize = 8;

/// The least value of a run at the headline that the furniture escape takes whatever its
/// share of the thread (Naive Bayes scores are p − 0.5 a token, so a sentence or two of
/// story). A forum's title bar above its posts is worth less: on the dev and train pages
/// where the headline's run was tried, forum title bars scored 0.1–4.4 (the posts are the
/// gold there) and the stories under comment threads 9–130, except two video posts of a
/// line (0.9 and 1.3), which only their post's container finds ([`escape_furniture`]). Any
/// floor from 5 to 8 makes the same choices there.
pub(crate) const ESCAPE_MIN_STORY: f64 = 5.0;

/// Other runs that must pass the extra-span floor before a page counts as a page of many
/// items ([`multi_item_ratio`](super::ExtractOptions::multi_item_ratio)). With 2, no dev set but
/// wcxb (listings, collections, forums) changed; with 1, dragnet lost 0.0006.
pub const MULTI_ITEM_RUNS: usize = 2;

/// The least value of an item kept on a page of many items (about 16 confident words; 5 and
/// 10 measured the same).
pub const MULTI_ITEM_MIN: f64 = 8.0;

/// The spans kept with [`extra_span_ratio`](super::ExtractOptions::extra_span_ratio), in page
/// order: the best span `main` (value `best`) and every other of the maximal segments `segs`
/// worth at least `floor.0 · best` and `floor.1` (the ratio and its least value), or, when
/// [`MULTI_ITEM_RUNS`] other segments pass that, every one worth `multi · best` and
/// [`MULTI_ITEM_MIN`]. The best span is itself a maximal segment (no
/// extension of it gains, no part of it is worth more), so it is found among them; it is added
/// back should ties or rounding split it differently.
pub(crate) fn extra_spans(
    segs: &[Segment],
    main: (usize, usize),
    best: f64,
    floor: (f64, f64),
    multi: f64,
) -> Vec<(usize, usize)> {
    let others = || segs.iter().filter(|g| g.end < main.0 || g.start > main.1);
    let mut floor = (best * floor.0).max(floor.1);
    if multi > 0.0 && others().filter(|g| g.value >= floor).count() >= MULTI_ITEM_RUNS {
        floor = floor.min((best * multi).max(MULTI_ITEM_MIN));
    }
    let mut spans: Vec<(usize, usize)> = others().filter(|g| g.value >= floor).map(|g| (g.start, g.end)).collect();
    let at = spans.partition_point(|&(s, _)| s < main.0);
    spans.insert(at, main);
    spans
}
