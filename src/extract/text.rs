//! From the chosen token span to clean text: the paper's block cleaning rules (§4.2), the
//! `<HR>` constraint (§6.2.3), the link filters over the span's blocks, passages a page
//! repeats, and the output layout (original spelling, whitespace collapsed, paragraph breaks
//! at block-level boundaries, lines kept inside `<pre>`). What the span's markup names as
//! furniture is [`super::furniture`]; what its words name, [`super::phrases`].

use std::ops::ControlFlow;

use crate::html::entities;
use crate::html::normalize::HashKeyed;
use crate::html::tags::{self, TagId};
use crate::html::{Space, Token, TokenKind};

/// Cuts `start..=end` before the first `<hr>` inside it (§6.2.3: articles rarely contain
/// `<HR>`, which often separates them from comments). Returns the new end, or `None` when
/// nothing is left.
pub fn hr_cut(tokens: &[Token], start: usize, end: usize) -> Option<usize> {
    match tokens[start..=end].iter().position(|t| t.kind == TokenKind::StartTag && t.tag == tags::HR) {
        Some(0) => None,
        Some(p) => Some(start + p - 1),
        None => Some(end),
    }
}

/// Tags whose presence inside a `<div>` removes the whole div (§4.2 rule 2).
fn dirties_div(tag: TagId) -> bool {
    matches!(tag, tags::A | tags::IFRAME | tags::TABLE | tags::IMG | tags::EMBED | tags::APPLET | tags::OBJECT)
}

/// The paper's cleaning rules over `tokens` (one extracted span): returns a keep-mask.
/// 1. remove the contents of any `<iframe>` or `<table>` pair;
/// 2. remove the contents of any `<div>` pair containing `a`, `iframe`, `table`, `img`,
///    `embed`, `applet` or `object`.
///
/// Only complete pairs inside the span are removed, as the rules say "tag pair".
pub fn clean_mask(tokens: &[Token]) -> Vec<bool> {
    let mut keep = vec![true; tokens.len()];
    // Rule 1: nesting depth of iframe/table, per tag so a stray </table> cannot close an iframe.
    let mut open: Vec<(usize, TagId)> = Vec::new();
    // Rule 2: open divs with their start index and whether they hold a trigger tag.
    let mut divs: Vec<(usize, bool)> = Vec::new();
    for (i, t) in tokens.iter().enumerate() {
        match t.kind {
            TokenKind::StartTag => {
                if t.tag == tags::TABLE || t.tag == tags::IFRAME {
                    open.push((i, t.tag));
                }
                if t.tag == tags::DIV {
                    divs.push((i, false));
                } else if dirties_div(t.tag)
                    && let Some(d) = divs.last_mut()
                {
                    d.1 = true;
                }
            }
            TokenKind::EndTag => {
                if (t.tag == tags::TABLE || t.tag == tags::IFRAME)
                    && let Some(p) = open.iter().rposition(|&(_, tag)| tag == t.tag)
                {
                    let (s, _) = open[p];
                    open.truncate(p);
                    keep[s..=i].iter_mut().for_each(|k| *k = false);
                }
                if t.tag == tags::DIV
                    && let Some((s, dirty)) = divs.pop()
                    && dirty
                {
                    keep[s..=i].iter_mut().for_each(|k| *k = false);
                    // The enclosing div contains this one's trigger too.
                    if let Some(parent) = divs.last_mut() {
                        parent.1 = true;
                    }
                }
            }
            _ => {}
        }
    }
    keep
}

#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Break {
    None,
    Space,
    Line,
    Paragraph,
}

/// Lays out the text of `tokens` (filtered by `keep` when given) into `out`.
pub fn render(page: &str, tokens: &[Token], keep: Option<&[bool]>, out: &mut String) {
    let mut pending = Break::None;
    for (i, t) in tokens.iter().enumerate() {
        if keep.is_some_and(|k| !k[i]) {
            continue;
        }
        match t.kind {
            TokenKind::StartTag | TokenKind::EndTag => {
                let b = if t.tag == tags::BR {
                    Break::Line
                } else if t.tag == tags::TD || t.tag == tags::TH {
                    Break::Space
                } else if tags::is_block(t.tag) {
                    Break::Paragraph
                } else {
                    Break::None
                };
                pending = pending.max(b);
            }
            TokenKind::Word | TokenKind::Symbol => {
                if !out.is_empty() {
                    let b = pending.max(match t.space {
                        Space::None => Break::None,
                        Space::Space => Break::Space,
                        Space::Newline => Break::Line,
                    });
                    out.push_str(match b {
                        Break::None => "",
                        Break::Space => " ",
                        Break::Line => "\n",
                        Break::Paragraph => "\n\n",
                    });
                }
                pending = Break::None;
                let raw = t.raw(page);
                if t.has_entity {
                    let before = out.len();
                    entities::decode_into(raw, out);
                    // A reference may decode to whitespace (e.g. &nbsp; inside a symbol run).
                    if out[before..].chars().any(char::is_whitespace) {
                        let fixed: String =
                            out[before..].chars().map(|c| if c.is_whitespace() { ' ' } else { c }).collect();
                        out.truncate(before);
                        out.push_str(&fixed);
                    }
                } else {
                    out.push_str(raw);
                }
            }
        }
    }
}

/// Calls `f(start, end, words, link_words, links)` for every block of `tokens` (the tokens
/// between two block-level tags), in order: the link counts both link filters judge by.
fn for_each_block(tokens: &[Token], mut f: impl FnMut(usize, usize, usize, usize, usize)) {
    let _ = try_for_each_block(tokens, |start, end, words, link_words, links| {
        f(start, end, words, link_words, links);
        ControlFlow::<()>::Continue(())
    });
}

/// [`for_each_block`], stopping when `f` breaks (with its value).
pub(super) fn try_for_each_block<B>(
    tokens: &[Token],
    mut f: impl FnMut(usize, usize, usize, usize, usize) -> ControlFlow<B>,
) -> ControlFlow<B> {
    let (mut start, mut words, mut link_words, mut links, mut in_a) = (0usize, 0usize, 0usize, 0usize, 0usize);
    for (i, t) in tokens.iter().enumerate() {
        match t.kind {
            TokenKind::StartTag | TokenKind::EndTag if tags::is_block(t.tag) => {
                f(start, i, words, link_words, links)?;
                (start, words, link_words, links) = (i, 0, 0, 0);
            }
            TokenKind::StartTag if t.tag == tags::A => {
                in_a += 1;
                links += 1;
            }
            TokenKind::EndTag if t.tag == tags::A => in_a = in_a.saturating_sub(1),
            TokenKind::Word => {
                words += 1;
                if in_a > 0 {
                    link_words += 1;
                }
            }
            _ => {}
        }
    }
    f(start, tokens.len(), words, link_words, links)
}

/// Drops link lists inside the span: a block (text between block-level boundaries) with at
/// least `min_links` links whose words are mostly (> `max_ratio`) link text.
pub fn link_block_mask(tokens: &[Token], keep: &mut [bool], min_links: usize, max_ratio: f64) {
    for_each_block(tokens, |start, end, words, link_words, links| {
        if links >= min_links && words > 0 && link_words as f64 > max_ratio * words as f64 {
            keep[start..end].iter_mut().for_each(|k| *k = false);
        }
    });
}

/// Drops runs of link blocks inside the span: at least `min_run` blocks in a row (empty blocks
/// between them ignored), each holding a link whose words are most (> `max_ratio`) of the
/// block's. Teaser lists of table layouts and "more news" rails put every headline in a
/// block of its own, one link each, which [`link_block_mask`] (two links per block) never
/// sees; such blocks in a row are a list, not prose (issue 13's held-out pages).
pub fn link_run_mask(tokens: &[Token], keep: &mut [bool], min_run: usize, max_ratio: f64) {
    if min_run == 0 {
        return;
    }
    // (start, end, link-ish) of every non-empty block, in order.
    let mut blocks: Vec<(usize, usize, bool)> = Vec::new();
    for_each_block(tokens, |start, end, words, link_words, links| {
        if words > 0 {
            blocks.push((start, end, links >= 1 && link_words as f64 > max_ratio * words as f64));
        }
    });
    let mut i = 0;
    while i < blocks.len() {
        let mut j = i;
        while j < blocks.len() && blocks[j].2 {
            j += 1;
        }
        if j - i >= min_run {
            for &(s, e, _) in &blocks[i..j] {
                keep[s..e].iter_mut().for_each(|k| *k = false);
            }
        }
        i = j.max(i + 1);
    }
}

/// Whitespace-separated words of an output text: `text.split_whitespace().count()` (proptest
/// `word_count_is_split_whitespace`), a byte at a time. Called several times on every page's
/// output, where the `char` iterator of `split_whitespace` cost 3 % of the default extractor's
/// time; only a non-ASCII byte decodes its `char`.
pub fn word_count(text: &str) -> usize {
    words_up_to(text, usize::MAX)
}

/// [`word_count`] up to `limit`: `limit` when the text holds that many words or more (it stops
/// reading there).
pub fn words_up_to(text: &str, limit: usize) -> usize {
    let bytes = text.as_bytes();
    let (mut words, mut in_word, mut i) = (0, false, 0);
    while i < bytes.len() && words < limit {
        let b = bytes[i];
        let (white, len) = if b < 0x80 {
            // `char::is_whitespace` of ASCII: space and \t \n \x0B \x0C \r.
            (b == b' ' || (b'\t'..=b'\r').contains(&b), 1)
        } else {
            let c = text[i..].chars().next().unwrap_or(' ');
            (c.is_whitespace(), c.len_utf8())
        };
        words += usize::from(!white && !in_word);
        in_word = !white;
        i += len;
    }
    words
}

/// Words a run of lines must hold for a later verbatim copy of it to leave the text
/// ([`drop_repeated_passages`]). Prose does not repeat 300 words line for line; a page that
/// renders one section once per screen size does (Framer's `ssr-variant` blocks, hidden at
/// two breakpoints of three, print their article three times). Over every dataset page, a copy
/// of 300 words or more was left on 8 pages, each of which scores higher without it; at
/// 150–250 words, meal plans, code samples in several languages and price tables whose golds
/// keep every copy start to fall (models/README.md, "Span chooser", session 40).
pub const REPEAT_MIN_WORDS: usize = 300;

/// Drops each later verbatim copy (line for line, in order) of a run of lines holding
/// [`REPEAT_MIN_WORDS`] words or more; the first copy stays. Bounded work: each line is
/// matched against at most four earlier lines of the same text, and every extension of a match
/// is paid from a budget of a few comparisons per line.
pub fn drop_repeated_passages(text: &mut String) {
    if words_up_to(text, 2 * REPEAT_MIN_WORDS) < 2 * REPEAT_MIN_WORDS {
        return;
    }
    // The non-blank lines (byte range in `text`); they compare trimmed, by their hash first,
    // and the kept ones are written as they were. Words are counted only on lines that match.
    let lines: Vec<(usize, usize)> = text
        .split('\n')
        .scan(0usize, |at, l| {
            let start = *at;
            *at += l.len() + 1;
            Some((start, start + l.len()))
        })
        .filter(|&(s, e)| !text[s..e].trim().is_empty())
        .collect();
    let keys: Vec<&str> = lines.iter().map(|&(s, e)| text[s..e].trim()).collect();
    let mut seen: HashKeyed<[usize; 4]> = HashKeyed::default();
    let mut drop = vec![false; lines.len()];
    let mut budget = 64 * lines.len();
    let mut i = 0;
    while i < lines.len() && budget > 0 {
        // The longest copy starting here of a run that starts at an earlier occurrence (a
        // slot of the line's hash whose line differs is skipped by the comparison).
        let hash = xxhash_rust::xxh3::xxh3_64(keys[i].as_bytes());
        let mut best = (0usize, 0usize);
        let earlier = seen.get(&hash).copied().unwrap_or([usize::MAX; 4]);
        for p in earlier.into_iter().filter(|&p| p < i) {
            let (mut n, mut words) = (0, 0);
            while i + n < lines.len() && p + n < i && !drop[p + n] && budget > 0 && keys[p + n] == keys[i + n] {
                words += word_count(keys[i + n]);
                n += 1;
                budget -= 1;
            }
            if words > best.1 {
                best = (n, words);
            }
        }
        let slots = seen.entry(hash).or_insert([usize::MAX; 4]);
        if let Some(free) = slots.iter_mut().find(|s| **s == usize::MAX) {
            *free = i;
        }
        if best.1 >= REPEAT_MIN_WORDS {
            drop[i..i + best.0].fill(true);
            i += best.0;
        } else {
            i += 1;
            budget = budget.saturating_sub(1);
        }
    }
    if !drop.contains(&true) {
        return;
    }
    // Kept lines, paragraphs apart by a blank line as before.
    let mut out = String::with_capacity(text.len());
    let mut last_end = None;
    for (&(s, e), _) in lines.iter().zip(&drop).filter(|(_, d)| !**d) {
        if let Some(prev) = last_end {
            // The separator the text had after the line kept before (one or two newlines).
            out.push_str(if text[prev..s].matches('\n').count() > 1 { "\n\n" } else { "\n" });
        }
        out.push_str(&text[s..e]);
        last_end = Some(e);
    }
    *text = out;
}

/// Teasers: a paragraph of [`TEASER_MIN_WORDS`] words or more that ends in an ellipsis (`…`,
/// `...`, or either in brackets or parentheses) is the cut summary of another page, which a
/// blog or a news site lists below its story ("Related posts", "More from …", a theme's
/// "Recent articles"), and the span often runs on into the list.
pub const TEASER_MIN_WORDS: usize = 8;
/// [`drop_trailing_teasers`] leaves a list of at least this many teasers.
pub const TEASER_MIN_RUN: usize = 2;
/// [`drop_trailing_teasers`] leaves a list only after this many words of other text: a page of
/// teasers (a listing, an archive) is all teasers, or opens with a few words.
pub const TEASER_MIN_BEFORE: usize = 50;
/// [`drop_trailing_teasers`]: a short line between teasers (a teaser's title, its date, a
/// "Related posts" heading, a blog's "← previous · next →" links) belongs to the list, at most
/// [`TEASER_TITLE_LINES`] of them above a teaser: more are the story's own short closing lines
/// (a list of bullets, a sign-off), and stay. With 2, the train splits lost 5 pages' gains to
/// those links and headings; with 6, none; with no bound, a story's closing list would go.
const TEASER_TITLE_WORDS: usize = 15;
const TEASER_TITLE_LINES: usize = 6;

/// Does this (trimmed) line end in an ellipsis, and is it a teaser ([`TEASER_MIN_WORDS`], the
/// ellipsis not counted)?
fn teaser(line: &str) -> (bool, bool) {
    let l = line.trim_end_matches([']', ')']).trim_end();
    let Some(body) = l.strip_suffix('…').or_else(|| l.strip_suffix("...")) else { return (false, false) };
    let body = body.trim_end().trim_end_matches(['[', '(']);
    (true, words_up_to(body, TEASER_MIN_WORDS) >= TEASER_MIN_WORDS)
}

/// Drops a list of teasers of other pages that ends the text ([`TEASER_MIN_WORDS`]): from the
/// last line back, the teasers and the short lines among them ([`TEASER_TITLE_LINES`] at most
/// above each), when there are at least
/// [`TEASER_MIN_RUN`] teasers after at least [`TEASER_MIN_BEFORE`] words of other text. A
/// story's own paragraphs end in a full stop; a cut summary is another page's. Measured over
/// the chosen text of every dev and train page of the five sets (`pipeline extract`, scored
/// as `score.py` does): 23 pages change, 22 up (dragnet's blog posts above "Related posts",
/// wcxb's themes' recent-article lists; dragnet-1149 0.51 → 0.88) and 1 down (wcxb-4120 0.97 →
/// 0.89: a story whose last paragraphs are quotes cut short); one teaser changed more pages
/// the wrong way (models/README.md, "Span chooser", session 49).
pub fn drop_trailing_teasers(text: &mut String) {
    // `anchor`: the start of the last line cut short that was read (the list's topmost so far).
    let (mut cut, mut anchor, mut teasers, mut titles) = (None, None, 0, 0);
    let mut end = text.len();
    for line in text.rsplit('\n') {
        let start = end - line.len();
        end = start.saturating_sub(1);
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        let (cut_short, long_enough) = teaser(line);
        if long_enough {
            teasers += 1;
            titles = 0;
            (cut, anchor) = (Some(start), Some(start));
        } else if teasers > 0 && words_up_to(line, TEASER_TITLE_WORDS) < TEASER_TITLE_WORDS {
            // A short line cut short ("Details... Read more...") is a teaser too short to count,
            // but still one of the list's: the lines above it are its title and date.
            if cut_short {
                titles = 0;
                anchor = Some(start);
            } else if titles == TEASER_TITLE_LINES {
                // More short lines than a teaser's title, date and heading: the story's own
                // (a list, a sign-off), and so are those read since the last teaser.
                cut = anchor;
                break;
            } else {
                titles += 1;
            }
            cut = Some(start);
        } else {
            break;
        }
    }
    let Some(cut) = cut else { return };
    if teasers < TEASER_MIN_RUN || words_up_to(&text[..cut], TEASER_MIN_BEFORE) < TEASER_MIN_BEFORE {
        return;
    }
    text.truncate(text[..cut].trim_end().len());
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::html::{TokenizerOptions, tokenize};

    pub(in crate::extract) fn toks(html: &str) -> (String, Vec<Token>) {
        let s = tokenize(html.as_bytes(), TokenizerOptions::default()).unwrap();
        (s.page, s.sink)
    }

    fn text(html: &str) -> String {
        let (page, t) = toks(html);
        let mut o = String::new();
        render(&page, &t, None, &mut o);
        o
    }

    #[test]
    fn layout_keeps_spelling_and_breaks_paragraphs() {
        assert_eq!(
            text("<p>Hello,  <b>big</b>\n world!</p><p>Don't&nbsp;stop &amp; caf&eacute;.</p>"),
            "Hello, big world!\n\nDon't stop & café."
        );
        assert_eq!(text("a<br>b<span>c</span>d <i>e</i>"), "a\nbcd e");
        assert_eq!(text("<pre>line 1\nline 2</pre>after"), "line 1\nline 2\n\nafter");
        assert_eq!(text("<table><tr><td>x</td><td>y</td></tr></table>"), "x y");
    }

    #[test]
    fn hr_cuts_the_span() {
        let (_, t) = toks("<p>a b</p><hr><p>c</p>");
        let end = t.len() - 1;
        let cut = hr_cut(&t, 0, end).unwrap();
        assert_eq!(t[cut].kind, TokenKind::EndTag);
        assert_eq!(hr_cut(&t, 4, end), None);
    }

    #[test]
    fn cleaning_rules() {
        let html = "<p>keep</p><div>ad <a href=x>link</a></div><table><tr><td>cell</td></tr></table><div><div><img src=x></div></div><div>plain</div><p>end</p>";
        let (page, t) = toks(html);
        let keep = clean_mask(&t);
        let mut o = String::new();
        render(&page, &t, Some(&keep), &mut o);
        assert_eq!(o, "keep\n\nplain\n\nend");
    }

    fn tokens(html: &str) -> (String, Vec<Token>) {
        let s = crate::html::tokenize(html.as_bytes(), crate::html::TokenizerOptions::default()).unwrap();
        (s.page, s.sink)
    }

    pub(in crate::extract) fn masked(html: &str, f: impl Fn(&str, &[Token], &mut [bool])) -> String {
        let (page, toks) = tokens(html);
        let mut keep = vec![true; toks.len()];
        f(&page, &toks, &mut keep);
        let mut out = String::new();
        render(&page, &toks, Some(&keep), &mut out);
        out
    }

    /// A passage printed once per screen size leaves its later copies; a shorter repeat, a
    /// passage repeated in another order, and the text around the copies stay.
    #[test]
    fn a_long_passage_rendered_twice_is_kept_once() {
        // Three paragraphs of 110 words each: 330 words, above REPEAT_MIN_WORDS.
        let para = |k: usize| (0..110).map(|i| format!("w{k}x{i}")).collect::<Vec<_>>().join(" ");
        let passage = format!("{}\n\n{}\n\n{}", para(1), para(2), para(3));
        let mut text = format!("Intro line.\n\n{passage}\n\nBetween.\n\n{passage}\n\nOutro.");
        drop_repeated_passages(&mut text);
        assert_eq!(text, format!("Intro line.\n\n{passage}\n\nBetween.\n\nOutro."));
        // Three copies (Framer's three breakpoints): one stays.
        let mut text = format!("{passage}\n{passage}\n{passage}");
        drop_repeated_passages(&mut text);
        assert_eq!(text, passage);
        // Two of the three paragraphs (220 words) repeated: below the bound, kept; so is the
        // whole passage again in another order.
        const { assert!(220 < REPEAT_MIN_WORDS && REPEAT_MIN_WORDS <= 330) };
        for kept in [
            format!("{passage}\n\nx\n\n{}\n\n{}", para(1), para(2)),
            format!("{passage}\n\n{}\n\n{}\n\n{}", para(3), para(2), para(1)),
        ] {
            let mut text = kept.clone();
            drop_repeated_passages(&mut text);
            assert_eq!(text, kept);
        }
    }

    /// A story followed by "Related posts" teasers loses them; one teaser, a page of teasers
    /// with a short introduction, and a story whose paragraphs end in full stops keep all.
    #[test]
    fn a_closing_list_of_teasers_leaves_the_story() {
        let story = (0..3).map(|k| (0..25).map(|i| format!("s{k}w{i}")).collect::<Vec<_>>().join(" ") + ".");
        let story = story.collect::<Vec<_>>().join("\n\n");
        let teaser = |k: usize| {
            format!("Title {k}\n\n{} […]", (0..20).map(|i| format!("t{k}w{i}")).collect::<Vec<_>>().join(" "))
        };
        let mut text =
            format!("{story}\n\nRelated posts\n\n{}\n\n{}\n\n{}…", teaser(1), teaser(2), "x ".repeat(9).trim_end());
        drop_trailing_teasers(&mut text);
        assert_eq!(text, story);
        // The story's own short closing lines stay: more short lines above a teaser than a
        // title, a date and a heading are the story's.
        let bullets = "The trial resumes on Monday.\n\n- One\n\n- Two\n\n- Three\n\n- Four\n\n- Five\n\n- Six";
        let mut text = format!("{story}\n\n{bullets}\n\nRelated\n\n{}\n\n{}", teaser(1), teaser(2));
        drop_trailing_teasers(&mut text);
        assert_eq!(text, format!("{story}\n\n{bullets}\n\nRelated\n\nTitle 1"));
        // Up to six short lines above the topmost teaser go with the list.
        let mut text = format!("{story}\n\n←\n\nPrevious post\n\n→\n\nRecent posts:\n\n{}\n\n{}", teaser(1), teaser(2));
        drop_trailing_teasers(&mut text);
        assert_eq!(text, story);
        for kept in [
            format!("{story}\n\n{}", teaser(1)),
            format!("Our latest posts.\n\n{}\n\n{}\n\n{}", teaser(1), teaser(2), teaser(3)),
            format!("{story}\n\n{story}"),
            format!("{story}\n\nToo short to be one...\n\nNor this one…"),
            // Seven words and the ellipsis are not eight words.
            format!("{story}\n\none two three four five six seven […]\n\none two three four five six seven …"),
        ] {
            let mut text = kept.clone();
            drop_trailing_teasers(&mut text);
            assert_eq!(text, kept);
        }
    }

    use proptest::strategy::Strategy as _;

    proptest::proptest! {
        /// Every whitespace `char` (ASCII, U+0085, no-break and ideographic spaces, the line
        /// separator…) and every non-ASCII width splits as `split_whitespace` does.
        #[test]
        fn word_count_is_split_whitespace(
            parts in proptest::collection::vec(proptest::prop_oneof![
                proptest::sample::select(vec![
                    " ", "\t", "\n", "\u{b}", "\u{c}", "\r", "\u{85}", "\u{a0}", "\u{1680}",
                    "\u{2003}", "\u{2028}", "\u{202f}", "\u{3000}", "\u{200b}", "\u{1c}",
                ]).prop_map(String::from),
                "\\PC{0,4}",
            ], 0..40),
        ) {
            let text: String = parts.concat();
            let n = text.split_whitespace().count();
            proptest::prop_assert_eq!(word_count(&text), n);
            proptest::prop_assert_eq!(words_up_to(&text, 3), n.min(3));
        }

        /// Any text of repeated and fresh lines: the copies dropped are later ones only, so every
        /// distinct line stays, in the order of its first appearance, and a second pass drops
        /// nothing more.
        #[test]
        fn repeated_passages_leave_only_later_copies(
            base in proptest::collection::vec(0usize..6, 0..40),
            between in proptest::collection::vec(0usize..6, 0..6),
            copies in 0usize..4,
            seps in proptest::collection::vec(proptest::bool::ANY, 200),
        ) {
            // 30-word lines, so that ten of them make a passage that repeats.
            let long = |w: &str| vec![w; 30].join(" ");
            let (a, b) = (long("alpha"), long("beta"));
            let lines: [&str; 6] = [&a, &b, "short", "the third line of words, ten of them in all here", "   ", "x y"];
            let mut order: Vec<usize> = base.clone();
            for _ in 0..copies {
                order.extend(&between);
                order.extend(&base);
            }
            let mut text = String::new();
            for (i, &p) in order.iter().enumerate() {
                if i > 0 {
                    text.push_str(if seps[i % seps.len()] { "\n\n" } else { "\n" });
                }
                text.push_str(lines[p]);
            }
            let distinct = |t: &str| {
                let mut v: Vec<String> = Vec::new();
                for l in t.split('\n').map(str::trim).filter(|l| !l.is_empty()) {
                    if !v.iter().any(|x| x == l) {
                        v.push(l.to_string());
                    }
                }
                v
            };
            let mut once = text.clone();
            drop_repeated_passages(&mut once);
            proptest::prop_assert_eq!(distinct(&once), distinct(&text));
            proptest::prop_assert!(once.len() <= text.len());
            let mut twice = once.clone();
            drop_repeated_passages(&mut twice);
            proptest::prop_assert_eq!(twice, once);
        }
    }

    #[test]
    fn link_lists_are_dropped_and_prose_with_links_is_kept() {
        let html = "<p>Read <a href=/x>this report</a> about the council vote on the river park budget.</p>\
                    <ul><li><a href=/a>Story A</a> <a href=/b>Story B</a> <a href=/c>Story C</a></li></ul>";
        assert_eq!(
            masked(html, |_, t, k| link_block_mask(t, k, 2, 0.6)),
            "Read this report about the council vote on the river park budget."
        );
    }

    #[test]
    fn runs_of_one_link_teasers_are_dropped_and_prose_with_a_link_per_paragraph_is_kept() {
        // A table layout's teaser run: each headline its own cell, one link each, a date
        // outside the link; then an article whose paragraphs each hold one short link.
        let teasers = "<table><tr><td><a href=/1>Special report on the harbour works</a> 1/15/2008</td></tr>                       <tr><td><a href=/2>MORE NEWS »</a></td></tr>                       <tr><td>• <a href=/3>Council backs the new ferry timetable</a></td></tr></table>";
        let prose = "<p>The council met on Tuesday and <a href=/v>voted</a> to widen the river path.</p>                     <p>Residents <a href=/r>wrote</a> dozens of letters asking for a safer crossing there.</p>                     <p>Work starts in <a href=/m>March</a> and should end before the summer festival.</p>";
        let html = format!("{prose}{teasers}");
        let kept = masked(&html, |_, t, k| link_run_mask(t, k, 3, 0.6));
        assert!(kept.contains("voted to widen the river path") && kept.contains("before the summer festival"));
        assert!(!kept.contains("Special report") && !kept.contains("MORE NEWS") && !kept.contains("ferry"), "{kept}");
        // Two teasers in a row are not a run of three: kept.
        let two = "<div><a href=/1>First teaser headline here</a></div><div><a href=/2>Second teaser</a></div>";
        assert!(masked(two, |_, t, k| link_run_mask(t, k, 3, 0.6)).contains("Second teaser"));
        // And the two-links-per-block filter never saw the run.
        assert!(masked(&html, |_, t, k| link_block_mask(t, k, 2, 0.6)).contains("MORE NEWS"));
    }
}
