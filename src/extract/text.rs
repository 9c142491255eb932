//! From the chosen token span to clean text: the paper's block cleaning rules (§4.2), the
//! `<HR>` constraint (§6.2.3) and the output layout (original spelling, whitespace collapsed,
//! paragraph breaks at block-level boundaries, lines kept inside `<pre>`).

use std::ops::ControlFlow;
use std::sync::LazyLock;

use crate::html::normalize::HashKeyed;
use crate::html::tags::{self, TagId};
use crate::html::{Space, Token, TokenKind};
use crate::html::{attrs, entities};

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

/// Substrings of id/class values that name page furniture rather than article text (the
/// names sites give comment sections, share bars, related-story boxes, …). Matched
/// case-insensitively anywhere in the value, so `js-comments`, `commentList` and
/// `related-posts` all match. Measured one by one on the dev sets (README): `comment` and
/// `related` help most; `social`, `promo` and `banner` lowered pooled F1 (they also name
/// article containers on some sites) and are not in the list. `slideshow` and `gallery`
/// (session 36): a photo gallery's captions inside a story (cnn's 23-photo gallery, a
/// HuffPost slideshow of 4,000 words under a 350-word story), which no dev set's gold keeps;
/// measured with WordPress's taxonomy classes skipped ([`in_modifier_class`]) and the
/// furniture escape's check of where the run's value lies (`furniture_end`): dev 22 pages
/// up and 3 down (big9 0.969 → 0.970, dragnet 0.910 → 0.912, aeb 0.965 → 0.966), the train
/// splits 23 up and 8 down (a product page's `feature-gallery` holds its feature text:
/// wcxb-3066 0.92 → 0.22); models/README.md, "Span chooser", session 36. Then, by the words
/// our output holds and the gold does not, summed per enclosing id/class over the train splits
/// (`scripts/experiments/false-words-by-class.py`): `sr-only` and `visually-hidden`, text for
/// screen readers only (dev 26 pages up, 5 down; train 35 up, 3 down), and `signature`, a forum
/// post's (dev 7 up, none down; train 13 up, 2 down). Session 37: the other spellings of
/// screen-reader-only text (WordPress's `screen-reader-text`, `screenreader`, HTML5
/// Boilerplate's `visuallyhidden`, Drupal's `element-invisible`, jQuery UI's
/// `ui-helper-hidden-accessible`), whose labels ("Sale price", "Regular price") are too short
/// for the per-class count: dev 9 pages up, none down (wcxb-4760 0 → 0.29); train 10 up, 4
/// down by 0.07 at most; not `offscreen` (dragnet keeps its text).
///
/// Session 44, from the same count re-run on the current output: `usertitle`, a forum poster's rank under their name
/// (vBulletin's `usertitle`, XenForo's `message-userTitle`: "Senior Member", "Well-known
/// member"): dev 6 pages up, none down; train 16 up, none down. Not XenForo's whole user cell
/// (`message-user`: on some layouts it wraps the post, wcxb-0529 0.86 → 0), `footnotes`
/// (train 7 up, 1 down; dev 1 up, 1 down), nor `review` or `disclaimer`, which hold gold
/// text on as many pages as not. And the call-to-action buttons of the two most used page
/// builders, WordPress's blocks (`wp-block-button`) and Elementor's (`elementor-button`):
/// "Download the guide", "Book a call" between paragraphs (dev 6 up, none down; train 17 up,
/// 1 down by 0.01). Not `caption-text`, which also matches WordPress's `wp-caption-text`
/// (dev 33 up, 11 down, dragnet-0151 0.97 → 0.66; train 37 up, 15 down).
const BOILERPLATE_NAMES: &[&str] = &[
    "comment",
    "related",
    "share",
    "disqus",
    "sidebar",
    "subscri",
    "trending",
    "popular",
    "recommend",
    "outbrain",
    "taboola",
    "breadcrumb",
    "advert",
    "newsletter",
    "cookie",
    "signup",
    "sign-up",
    "slideshow",
    "gallery",
    "signature",
    "visually-hidden",
    "sr-only",
    "screen-reader",
    "screenreader",
    "visuallyhidden",
    "element-invisible",
    "hidden-accessible",
    "usertitle",
    "wp-block-button",
    "elementor-button",
];

/// More furniture, screened later (session 7) on the current defaults: post footers
/// (`entry-footer`, `post-footer`: tags, "posted in", share counts), author boxes (`author-bio`,
/// `author-box`) and `<aside>` elements (pull-outs, "more on this"). Each helped or kept every
/// dev set (README); `author` alone was rejected (dragnet −0.040: it names bylines that gold
/// keeps), as were `widget`, `read-more` and `pagination`. Session 24: `<figcaption>`, a
/// figure's caption and credit ("Image copyright Getty Images", "Media caption …"), which no
/// dev set's gold keeps: aeb +0.005, big9 +0.002, wcxb +0.001, the others unchanged (104
/// pages better, 8 wcxb pages up to 0.025 worse). The whole `<figure>` was not taken (wcxb
/// −0.002: product figures hold text), nor a `caption` id/class (big9 −0.011: whole story
/// blocks carry it on some sites). Session 36: a `<footer>` element inside the span (the
/// escape already left runs inside one), dev 12 pages up, none down; train 18 up, 1 down; not
/// `<button>` (dev 60 up, 15 down, pages below 0.5 +1) nor `<label>` (pooled dev −0.001).
/// Session 37: `<title>` inside the body, an SVG icon's tooltip ("Link takes you to an
/// external page", "Chevron down small"), which browsers never render (the head's title is
/// outside every span): dev 8 pages up, none down; train 18 up, none down. So is the fallback
/// inside `<video>`, `<audio>`, `<canvas>` and `<iframe>` ("Your browser does not support the
/// video tag"), shown only by browsers without the element: dev 3 up, none down; train 6 up, 1
/// down (wcxb-4027 0.92 → 0.88, a NASA page whose gold keeps a video's fallback description).
/// And `<nav>` inside the span, HTML's element for a block of navigation (a table of contents,
/// a pager, "jump to" links that the link filters leave when their items hold a sentence): dev
/// 17 up, none down (wcxb-2835 0.38 → 0.57); train 27 up, none down.
///
/// Session 44, found by the count of false words by class on the train splits and each measured
/// alone before the chooser's refit: `about-author`, the "About the author" box of WordPress
/// plugins (`wp-about-author-text`) and themes (dev 2 pages up, dragnet-1175 0.85 → 0.96, none
/// down; train 5 up, none down); a post's `datestamp` (dev 6 up, none down; train 7 up, none
/// down); a photo's or page's `copyright` line (dev 9 up, none down; train 5 up, 1 down by
/// 0.002).
const MORE_NAMES: &[&str] = &["footer", "bio", "author-box", "about-author", "datestamp", "copyright"];
const MORE_TAGS: &[TagId] = &[
    tags::ASIDE,
    tags::FIGCAPTION,
    tags::FOOTER,
    tags::NAV,
    tags::TITLE,
    tags::VIDEO,
    tags::AUDIO,
    tags::CANVAS,
    tags::IFRAME,
];
/// The WAI-ARIA landmark roles that mean what two of [`MORE_TAGS`] mean: `navigation` is
/// `<nav>`, `contentinfo` the page's `<footer>` (session 37: dev 5 pages up, none down; train
/// 3 up, 1 down, wcxb-3010 0.78 → 0.76). `complementary` (`<aside>`) was not taken: train 1
/// down, dev none changed.
const MORE_ROLES: &[&[u8]] = &[b"navigation", b"contentinfo"];

/// Does this start tag's id or class name page furniture?
pub fn is_boilerplate_element(raw_tag: &str) -> bool {
    furniture(raw_tag) & F_BOILERPLATE != 0
}

/// Bits of [`class_names`]: a name of [`BOILERPLATE_NAMES`], of [`MORE_NAMES`], of
/// [`POSITIVE_NAMES`].
const F_BOILERPLATE: u8 = 1;
const F_MORE: u8 = 2;
pub(super) const F_POSITIVE: u8 = 4;

/// Id/class words of containers that hold the article (readability's positive list), read by
/// the span chooser's candidates.
const POSITIVE_NAMES: &[&str] = &["article", "content", "story", "post", "entry", "body", "text", "main", "blog"];

/// The three lists, in the order of their bits.
const CLASS_NAMES: [&str; BOILERPLATE_NAMES.len() + MORE_NAMES.len() + POSITIVE_NAMES.len()] = {
    let mut all = [""; BOILERPLATE_NAMES.len() + MORE_NAMES.len() + POSITIVE_NAMES.len()];
    let (b, m) = (BOILERPLATE_NAMES.len(), BOILERPLATE_NAMES.len() + MORE_NAMES.len());
    let mut i = 0;
    while i < all.len() {
        all[i] = if i < b {
            BOILERPLATE_NAMES[i]
        } else if i < m {
            MORE_NAMES[i - b]
        } else {
            POSITIVE_NAMES[i - m]
        };
        i += 1;
    }
    all
};

/// The list of name `k` of [`CLASS_NAMES`], as its bit.
const fn list_of(k: usize) -> u8 {
    if k < BOILERPLATE_NAMES.len() {
        F_BOILERPLATE
    } else if k < BOILERPLATE_NAMES.len() + MORE_NAMES.len() {
        F_MORE
    } else {
        F_POSITIVE
    }
}

/// For each pair of bytes (by their low five bits, where ASCII upper and lower case agree),
/// the names of [`CLASS_NAMES`] (bit i: name i) that may start with it: a value is scanned
/// once, comparing only where a name's first two letters are, instead of once per name (this
/// runs on every start tag of every span). Other bytes sharing the five bits only cost a
/// comparison.
static FIRST_PAIR: [u64; 1024] = {
    assert!(CLASS_NAMES.len() <= 64);
    let mut t = [0u64; 1024];
    let mut i = 0;
    while i < CLASS_NAMES.len() {
        let n = CLASS_NAMES[i].as_bytes();
        t[pair(n[0], n[1])] |= 1 << i;
        i += 1;
    }
    t
};

#[inline]
const fn pair(a: u8, b: u8) -> usize {
    ((a as usize & 0x1F) << 5) | (b as usize & 0x1F)
}

/// Which lists this start tag's id or class value names ([`F_BOILERPLATE`], [`F_MORE`],
/// [`F_POSITIVE`]): a name anywhere in the value, ASCII case-insensitively.
pub(super) fn class_names(raw_tag: &str) -> u8 {
    names_in(raw_tag, u64::MAX)
}

/// The names of [`CLASS_NAMES`] in bits `wanted` this start tag's id or class value holds, as
/// list bits: only those names are compared.
fn names_in(raw_tag: &str, wanted: u64) -> u8 {
    SpanTag::read(raw_tag).names(wanted)
}

/// Is byte `i` of a class value inside a class word that files the element under a tag, a
/// category or a post format (WordPress writes `tag-photo-gallery`, `category-comments`,
/// `format-gallery` on the post's own container), or that describes the page's layout
/// (`has-sidebar`, `main-with-sidebar`, `no-sidebars` on the story's column)? Such a class
/// says what the post is about or what sits beside it, not that the element is furniture.
fn in_modifier_class(v: &[u8], i: usize) -> bool {
    let start = v[..i].iter().rposition(|b| b.is_ascii_whitespace()).map_or(0, |p| p + 1);
    let class = &v[start..i];
    MODIFIER_PREFIXES.iter().any(|p| {
        class
            .windows(p.len())
            .enumerate()
            .any(|(at, w)| w.eq_ignore_ascii_case(p.as_bytes()) && (at == 0 || class[at - 1] == b'-'))
    })
}

/// Prefixes of the taxonomy and layout classes ([`in_modifier_class`]), at the start of the
/// class word or after a hyphen (a theme's own `s-tag-`, `main-with-`). The layout ones were
/// found by the gold words our output missed under each furniture name (session 36:
/// `has-sidebar`, `with-sidebar`, 4,000 words each on the train splits).
const MODIFIER_PREFIXES: &[&str] = &["tag-", "category-", "format-", "has-", "with-", "no-"];

/// What the span filters read of a start tag, in one walk of its attributes: its first `class`
/// and `id` values, whether it is a microdata element (`itemscope` / `itemprop`), whether it
/// has the `hidden` attribute, and its first `style` value. Read once for the furniture lists
/// and the hidden-microdata filter (each had searched the raw tag on its own: 60 M of the span
/// filters' 152 M instructions, callgrind of every fifth aeb + wcxb dev page).
#[derive(Default)]
struct SpanTag<'a> {
    class: Option<&'a [u8]>,
    id: Option<&'a [u8]>,
    role: Option<&'a [u8]>,
    item: bool,
    hidden: bool,
    style: Option<&'a [u8]>,
}

impl<'a> SpanTag<'a> {
    fn read(raw_tag: &'a str) -> Self {
        let mut t = SpanTag::default();
        for (name, v) in attrs::attrs(raw_tag.as_bytes()) {
            // The first of each with a value, as a search for `class=` found it.
            let slot = match name.len() {
                2 if name.eq_ignore_ascii_case(b"id") => &mut t.id,
                4 if name.eq_ignore_ascii_case(b"role") => &mut t.role,
                5 if name.eq_ignore_ascii_case(b"class") => &mut t.class,
                5 if name.eq_ignore_ascii_case(b"style") => &mut t.style,
                6 if name.eq_ignore_ascii_case(b"hidden") => {
                    t.hidden = true;
                    continue;
                }
                8 | 9 if name.eq_ignore_ascii_case(b"itemprop") || name.eq_ignore_ascii_case(b"itemscope") => {
                    t.item = true;
                    continue;
                }
                _ => continue,
            };
            if slot.is_none() {
                *slot = v;
            }
        }
        t
    }

    /// [`names_in`].
    fn names(&self, wanted: u64) -> u8 {
        let mut flags = 0;
        for v in [self.class, self.id].into_iter().flatten() {
            for i in 0..v.len().saturating_sub(1) {
                let mut m = FIRST_PAIR[pair(v[i], v[i + 1])] & wanted;
                while m != 0 {
                    let k = m.trailing_zeros() as usize;
                    m &= m - 1;
                    let n = CLASS_NAMES[k].as_bytes();
                    if v.len() - i >= n.len() && v[i..i + n.len()].eq_ignore_ascii_case(n) && !in_modifier_class(v, i) {
                        flags |= list_of(k);
                    }
                }
            }
        }
        flags
    }

    /// A WAI-ARIA landmark role of the second list: `navigation` and `contentinfo`, the roles
    /// of `<nav>` and of the page's `<footer>` ([`MORE_ROLES`]).
    fn more_role(&self) -> bool {
        self.role.is_some_and(|r| MORE_ROLES.iter().any(|m| r.eq_ignore_ascii_case(m)))
    }

    /// [`is_hidden_microdata`].
    fn hidden_microdata(&self) -> bool {
        self.item && self.is_hidden()
    }

    /// Hidden from every reader: the `hidden` attribute, or an inline `display: none` /
    /// `visibility: hidden`.
    fn is_hidden(&self) -> bool {
        if self.hidden {
            return true;
        }
        self.style.is_some_and(|v| {
            let squeezed: Vec<u8> = v.iter().filter(|b| !b.is_ascii_whitespace()).map(u8::to_ascii_lowercase).collect();
            memchr::memmem::find(&squeezed, b"display:none").is_some()
                || memchr::memmem::find(&squeezed, b"visibility:hidden").is_some()
        })
    }
}

/// The names of the two furniture lists, as bits of [`CLASS_NAMES`] (they come first).
const FURNITURE_BITS: u64 = (1 << (BOILERPLATE_NAMES.len() + MORE_NAMES.len())) - 1;

/// Which furniture lists this start tag's id or class value names ([`F_BOILERPLATE`],
/// [`F_MORE`]). The extractor asks this of every start tag in a span: the positive names
/// (read by the chooser only) are not compared.
pub(super) fn furniture(raw_tag: &str) -> u8 {
    names_in(raw_tag, FURNITURE_BITS)
}

/// Is this start tag a hidden copy of metadata: a schema.org microdata element (`itemscope` /
/// `itemprop`) hidden from every reader (the `hidden` attribute, or an inline `display: none`
/// / `visibility: hidden`)? Sites put the headline, byline, keywords and dates there a second
/// time for search engines. Hidden elements in general are not dropped: React streams its
/// server-rendered content in `<div hidden>` and moves it with a script, and accordions and
/// tabs hide text that is the page's content (wcxb lost 0.0025 F1 when every hidden element
/// went).
pub fn is_hidden_microdata(raw_tag: &str) -> bool {
    SpanTag::read(raw_tag).hidden_microdata()
}

/// What a modal's start tag holds: its name or its role (`aria-modal` goes with the role,
/// which WAI-ARIA requires of it).
pub const MODAL_NEEDLES: &[&[u8]] = &[b"dialog"];

/// Does the start tag open a modal dialog: a `<dialog>`, an element of role `dialog` or
/// `alertdialog`, one with `aria-modal="true"` (WAI-ARIA 1.2), or a hidden element named a
/// dialog (`is_hidden_dialog`)? A page's cookie and newsletter
/// boxes, its login form and the refund and privacy policies a shop's footer opens are served
/// in the markup of every page as modals, hidden until asked for; they are never the article.
/// The extractor asks only start tags holding one of [`MODAL_NEEDLES`] (lower case on every
/// page seen): one search of the page costs 1.3 % of NB's instructions, asking every start tag
/// cost 4 % of its time.
pub fn is_modal(raw_tag: &str) -> bool {
    let tag = raw_tag.as_bytes();
    tag.get(1..7).is_some_and(|n| n.eq_ignore_ascii_case(b"dialog"))
        && tag.get(7).is_none_or(|b| b.is_ascii_whitespace() || *b == b'>' || *b == b'/')
        || match attrs::value(tag, b"aria-modal") {
            Some(v) => v.eq_ignore_ascii_case(b"true"),
            None => attrs::value(tag, b"role")
                .is_some_and(|v| v.eq_ignore_ascii_case(b"dialog") || v.eq_ignore_ascii_case(b"alertdialog")),
        }
        || is_hidden_dialog(raw_tag)
}

/// A hidden element whose id or class names a dialog (jQuery UI's `<div id="dialog"
/// style="display:none">`, a `modal__dialog` with `hidden`): a modal in all but its role.
/// "dialogue" (a conversation) is not one.
fn is_hidden_dialog(raw_tag: &str) -> bool {
    let t = SpanTag::read(raw_tag);
    let names = |v: &[u8]| {
        v.windows(6).enumerate().any(|(i, w)| {
            w.eq_ignore_ascii_case(b"dialog") && !v.get(i + 6..i + 8).is_some_and(|ue| ue.eq_ignore_ascii_case(b"ue"))
        })
    };
    [t.id, t.class].into_iter().flatten().any(names) && t.is_hidden()
}

/// What a start tag of role `main` holds ([`is_main_role`]; `Role=` too).
pub const MAIN_ROLE_NEEDLE: &[u8] = b"ole=";

/// Does the start tag give itself WAI-ARIA's role `main` (the page's dominant content, as
/// HTML's `<main>`)?
pub fn is_main_role(raw_tag: &str) -> bool {
    attrs::value(raw_tag.as_bytes(), b"role").is_some_and(|v| v.eq_ignore_ascii_case(b"main"))
}

/// Is token `at` inside an element whose id/class names page furniture
/// ([`is_boilerplate_element`])? The span filters see only elements opened inside the span;
/// a span that starts inside a comment section never meets the section's start tag. One pass
/// over the tags before `at` keeps the stack of open elements (closing to the matching start
/// tag, as the span filters do); their start tags are then checked. With `more` (the second
/// furniture list on), a `<footer>` element and the second list's names count too: a
/// copyright notice or an author bio outscores a page of link-headline teasers (dragnet
/// +0.003, wcxb +0.002). `<aside>` does not (wcxb −0.002: product details), nor `<nav>`
/// (no change: a breadcrumb starts many a product's best run).
pub fn inside_furniture(page: &str, tokens: &[Token], at: usize, more: bool) -> bool {
    furniture_ancestors(page, tokens, at, more).0.is_some()
}

/// Where the furniture around token `at` ([`inside_furniture`]) ends: the token that closes
/// its outermost furniture element (the end of the page when none does), or None when `at` is
/// not inside furniture. A run that starts in a small furniture box (a gallery's launcher link
/// above a story) and goes on through the article is not a comment thread.
pub fn furniture_end(page: &str, tokens: &[Token], at: usize, more: bool) -> Option<usize> {
    let (outer, mut open) = furniture_ancestors(page, tokens, at, more);
    let outer = outer?;
    for (i, t) in tokens.iter().enumerate().skip(at) {
        step_open(&mut open, t, i);
        if t.kind == TokenKind::EndTag && open.len() <= outer {
            return Some(i);
        }
    }
    Some(tokens.len())
}

/// Token `i` applied to the stack of open elements: a start tag (not void) opens one; an end
/// tag closes to its matching start tag among the innermost 64, as the span filters do.
fn step_open(open: &mut Vec<(TagId, usize)>, t: &Token, i: usize) {
    match t.kind {
        TokenKind::StartTag if !tags::is_void(t.tag) => open.push((t.tag, i)),
        TokenKind::EndTag => {
            let lo = open.len().saturating_sub(64);
            if let Some(p) = open[lo..].iter().rposition(|e| e.0 == t.tag) {
                open.truncate(lo + p);
            }
        }
        _ => {}
    }
}

/// The elements open before token `at` (tag, token of its start tag; closing to the matching
/// start tag, as the span filters do), and the place in that stack of the outermost one that
/// is furniture ([`inside_furniture`]).
fn furniture_ancestors(page: &str, tokens: &[Token], at: usize, more: bool) -> (Option<usize>, Vec<(TagId, usize)>) {
    let mut open: Vec<(TagId, usize)> = Vec::new();
    for (i, t) in tokens[..at.min(tokens.len())].iter().enumerate() {
        step_open(&mut open, t, i);
    }
    let is_furniture = |tag: TagId, f: u8| f & F_BOILERPLATE != 0 || (more && (tag == tags::FOOTER || f & F_MORE != 0));
    // A page's main column inside an element named for furniture is the page's layout, not
    // furniture: Vox Media's sites (The Verge, Vox, SB Nation, the Chicago Sun-Times …) hold
    // every article in `<div class="l-sidebar-fixed">` (a layout with a fixed sidebar), whose
    // `l-col__main` is the story and `l-col__sidebar` the rail. Only what is furniture below
    // the deepest main element (`<main>`, or a class or id naming `main`, itself no furniture)
    // counts. Found on aeb-0080 in another language (foreignize.py): with no word to go by,
    // a headline run outweighed a tenth of the story and the escape left the story for it.
    // Innermost first, up to the deepest main column: the last furniture met is the outermost.
    let mut outer = None;
    for (k, &(tag, i)) in open.iter().enumerate().rev() {
        let f = names_in(tokens[i].raw(page), FURNITURE_BITS | MAIN_BIT);
        if is_furniture(tag, f) {
            outer = Some(k);
        } else if tag == tags::MAIN || f & F_POSITIVE != 0 {
            break;
        }
    }
    (outer, open)
}

/// The bit of `main` among [`CLASS_NAMES`] (in [`POSITIVE_NAMES`]), for [`names_in`].
const MAIN_BIT: u64 = {
    let mut k = 0;
    while !matches!(POSITIVE_NAMES[k].as_bytes(), b"main") {
        k += 1;
    }
    1 << (BOILERPLATE_NAMES.len() + MORE_NAMES.len() + k)
};

/// Keep-mask that drops, inside the span, every element the chosen furniture lists name, with
/// its whole subtree (to the end of the span when it is not closed inside it: the span then
/// ran on into that section). `boilerplate`: [`BOILERPLATE_NAMES`] by id/class; `more`:
/// [`MORE_NAMES`] by id/class, [`MORE_TAGS`] by element and [`MORE_ROLES`] by role. Both lists
/// in one pass drop what the two passes one after the other drop (a subtree inside a dropped
/// one goes either way), for one look at each start tag instead of two.
pub fn furniture_mask(page: &str, tokens: &[Token], keep: &mut [bool], boilerplate: bool, more: bool) {
    furniture_and_microdata_mask(page, tokens, keep, boilerplate, more, false);
}

/// [`furniture_mask`] and, with `hidden_microdata`, [`hidden_microdata_mask`] in one pass: an
/// element that either filter drops goes with its subtree, so one pass drops what the passes
/// one after the other drop (proptest `furniture_and_microdata_in_one_pass_equal_two_passes`),
/// for one walk of the span instead of two.
pub fn furniture_and_microdata_mask(
    page: &str,
    tokens: &[Token],
    keep: &mut [bool],
    boilerplate: bool,
    more: bool,
    hidden_microdata: bool,
) {
    let lists = if boilerplate { F_BOILERPLATE } else { 0 } | if more { F_MORE } else { 0 };
    if lists == 0 && !hidden_microdata {
        return;
    }
    element_mask(page, tokens, keep, |tag, raw| {
        if more && MORE_TAGS.contains(&tag) {
            return true;
        }
        let t = SpanTag::read(raw);
        (lists != 0 && t.names(FURNITURE_BITS) & lists != 0)
            || (more && t.more_role())
            || (hidden_microdata && t.hidden_microdata())
    });
}

/// [`furniture_mask`] with the first list.
pub fn boilerplate_mask(page: &str, tokens: &[Token], keep: &mut [bool]) {
    furniture_mask(page, tokens, keep, true, false);
}

/// [`furniture_mask`] with the second list.
pub fn more_furniture_mask(page: &str, tokens: &[Token], keep: &mut [bool]) {
    furniture_mask(page, tokens, keep, false, true);
}

/// [`furniture_mask`] with both lists.
pub fn all_furniture_mask(page: &str, tokens: &[Token], keep: &mut [bool]) {
    furniture_mask(page, tokens, keep, true, true);
}

/// Keep-mask that drops, inside the span, every hidden microdata element
/// ([`is_hidden_microdata`]) with its subtree.
pub fn hidden_microdata_mask(page: &str, tokens: &[Token], keep: &mut [bool]) {
    element_mask(page, tokens, keep, |_, raw| is_hidden_microdata(raw));
}

/// Drops every element whose start tag `drop` accepts, with its subtree (to the end of the
/// span when it is not closed inside it).
fn element_mask(page: &str, tokens: &[Token], keep: &mut [bool], drop: impl Fn(TagId, &str) -> bool) {
    // Open elements inside the span: (tag, start index, furniture?).
    let mut open: Vec<(TagId, usize, bool)> = Vec::new();
    let mut dropping_from: Option<usize> = None;
    for (i, t) in tokens.iter().enumerate() {
        match t.kind {
            TokenKind::StartTag if !tags::is_void(t.tag) => {
                let furniture = dropping_from.is_none() && drop(t.tag, t.raw(page));
                if furniture {
                    dropping_from = Some(open.len());
                }
                open.push((t.tag, i, furniture));
            }
            TokenKind::EndTag => {
                // Unwind to the matching start tag, as the MRUT stack does (bounded search).
                let lo = open.len().saturating_sub(64);
                if let Some(p) = open[lo..].iter().rposition(|e| e.0 == t.tag).map(|p| p + lo) {
                    if dropping_from == Some(p) {
                        let start = open[p].1;
                        keep[start..=i].iter_mut().for_each(|k| *k = false);
                        dropping_from = None;
                    } else if dropping_from.is_some_and(|d| p < d) {
                        // An ancestor closed first: the furniture ends with it.
                        let start = open[dropping_from.expect("checked")].1;
                        keep[start..i].iter_mut().for_each(|k| *k = false);
                        dropping_from = None;
                    }
                    open.truncate(p);
                }
            }
            _ => {}
        }
    }
    if let Some(d) = dropping_from {
        let start = open[d].1;
        keep[start..].iter_mut().for_each(|k| *k = false);
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
fn try_for_each_block<B>(
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

/// Headings that end an article and open the page's furniture: comment sections, "related"
/// and "most popular" lists, share bars. Compared with a block's text lower-cased, digits and
/// punctuation removed, words joined by one space (`"12 Comments"` → `"comments"`).
///
/// In English and in the languages most crawled after it: the stock strings of the blogging
/// platforms' translations (WordPress's "Leave a Reply", "Related posts" and "Share this" in
/// each locale) and the plain words news sites use. A page in another language otherwise runs
/// on through its comments: with the English phrases alone, the dev pages' text rotated by
/// rot13 (a language no phrase matches) lose dragnet-0391 0.97 → 0.06, -0400 0.98 → 0.22 and
/// -0738 0.97 → 0.42 to their comment threads. Left out on purpose: the "read also" teasers
/// ("lire aussi", "leia também", "читайте также"), which news sites set *inside* the story,
/// and words that also head a story's own section (German "Antworten auf …", "Kommentar",
/// an opinion piece's label).
const SECTION_END: &[&str] = &[
    "comment",
    "comments",
    "reader comments",
    "show comments",
    "view comments",
    "leave a reply",
    "leave a comment",
    "post a comment",
    "add a comment",
    "add your comment",
    "join the discussion",
    "join the conversation",
    "responses",
    // TypePad's heading over the weblogs that link to a post; WordPress's.
    "trackback",
    "trackbacks",
    "pingbacks",
    "comments are closed",
    "the comments to this entry are closed",
    "related",
    "related articles",
    "related stories",
    "related posts",
    "related content",
    "related coverage",
    "you may also like",
    "you might also like",
    "more stories",
    "recommended",
    "recommended for you",
    "most popular",
    "most read",
    "read next",
    "read this next",
    "explore related content",
    // The author's bio box under a post; Movable Type's "About this Entry" sidebar.
    "about the author",
    "about the authors",
    "about this entry",
    "what to read next",
    "popular posts",
    // WordPress's stock sidebar widget titles.
    "recent posts",
    "recent comments",
    "featured posts",
    "related topics",
    // Blogger's stock gadget titles, and the Associated Press's list of links under a story.
    "search this blog",
    "follow this blog",
    "about this blog",
    "about the blog",
    "no comments yet",
    "on the net",
    "share this",
    "share this article",
    "share this story",
    // German
    "kommentare",
    "leserkommentare",
    "schreibe einen kommentar",
    "hinterlasse einen kommentar",
    "kommentar schreiben",
    "kommentar verfassen",
    "ähnliche artikel",
    "ähnliche beiträge",
    "verwandte artikel",
    "das könnte sie auch interessieren",
    "das könnte dich auch interessieren",
    "meistgelesen",
    "meistgelesene artikel",
    "teilen mit",
    "artikel teilen",
    // French
    "commentaires",
    "laisser un commentaire",
    "laisser une réponse",
    "ajouter un commentaire",
    "articles similaires",
    "articles liés",
    "articles connexes",
    "sur le même sujet",
    "vous aimerez aussi",
    "vous aimerez peut être aussi",
    "les plus lus",
    "partager cet article",
    // Spanish
    "comentarios",
    "deja un comentario",
    "deja una respuesta",
    "dejar un comentario",
    "artículos relacionados",
    "entradas relacionadas",
    "noticias relacionadas",
    "publicaciones relacionadas",
    "también te puede interesar",
    "te puede interesar",
    "lo más leído",
    "lo más visto",
    "comparte este artículo",
    "compartir esto",
    // Italian
    "commenti",
    "lascia un commento",
    "lascia una risposta",
    "articoli correlati",
    "articoli simili",
    "post correlati",
    "potrebbe interessarti anche",
    "ti potrebbe interessare",
    "i più letti",
    "condividi questo articolo",
    // Portuguese
    "comentários",
    "deixe um comentário",
    "deixe uma resposta",
    "artigos relacionados",
    "posts relacionados",
    "notícias relacionadas",
    "você também pode gostar",
    "mais lidas",
    "compartilhe isso",
    "compartilhe este artigo",
    // Dutch
    "reacties",
    "geef een reactie",
    "laat een reactie achter",
    "plaats een reactie",
    "gerelateerde artikelen",
    "gerelateerde berichten",
    "meest gelezen",
    "deel dit artikel",
    // Polish
    "komentarze",
    "dodaj komentarz",
    "zostaw komentarz",
    "podobne artykuły",
    "podobne wpisy",
    "najczęściej czytane",
    // Swedish, Danish, Norwegian
    "kommentarer",
    "lämna en kommentar",
    "skriv en kommentar",
    "legg igjen en kommentar",
    "relaterade artiklar",
    "relaterede artikler",
    "relaterte artikler",
    "mest lästa",
    "mest læste",
    "mest leste",
    // Czech, Turkish
    "komentáře",
    "související články",
    "yorumlar",
    "bir yanıt yazın",
    "ilgili haberler",
    "en çok okunanlar",
    // Russian, Ukrainian
    "комментарии",
    "добавить комментарий",
    "оставить комментарий",
    "похожие статьи",
    "похожие записи",
    "коментарі",
    "схожі статті",
    // Japanese, Chinese, Korean (the tokenizer reads kana and ideographs one character a word)
    "コ メ ン ト",
    "関 連 記 事",
    "评 论",
    "相 关 文 章",
    "相 关 阅 读",
    "評 論",
    "相 關 文 章",
    "댓글",
    "관련기사",
    "관련 기사",
];

/// Prefixes of longer section-end headings (`"3 thoughts on “Title”"`, `"More from BBC"`).
const SECTION_END_PREFIX: &[&str] = &[
    "thoughts on ",
    "responses to ",
    "comments on ",
    "more from ",
    // WordPress's "%1$s thoughts on “%2$s”" in German, French, Spanish, Italian, Portuguese
    // and Dutch.
    "gedanken zu ",
    "kommentare zu ",
    "réflexions sur ",
    "commentaires sur ",
    "comentarios en ",
    "commenti su ",
    "pensieri su ",
    "comentários em ",
    "pensamentos sobre ",
    "reacties op ",
    "gedachten over ",
];

/// Words of the longest [`SECTION_END`] phrase: a block of more words is not one of them
/// (numbers count as words: `"12 Comments"` is two).
const SECTION_END_WORDS: usize = 7;

/// Appends `word` normalised as for [`SECTION_END`] (its letters, lower-cased) and a space;
/// false, and nothing appended, for a word without letters (a number).
#[inline]
fn push_section_word(word: &str, text: &mut String) -> bool {
    let mut any = false;
    if word.is_ascii() {
        // The same letters, a byte at a time (most words of most pages).
        for &b in word.as_bytes().iter().filter(|b| b.is_ascii_alphabetic()) {
            text.push(char::from(b.to_ascii_lowercase()));
            any = true;
        }
    } else {
        for c in word.chars().filter(|c| c.is_alphabetic()) {
            text.extend(c.to_lowercase());
            any = true;
        }
    }
    if any {
        text.push(' ');
    }
    any
}

/// Is `text` (normalised as for [`SECTION_END`]) a section-end heading of `words` words?
fn is_section_end(text: &str, words: usize) -> bool {
    // The sorted list holds the prefixes too, but each ends with a space and `text` never does.
    (words <= SECTION_END_WORDS && SECTION_END_SORTED.binary_search(&text).is_ok())
        || (words <= 24 && SECTION_END_PREFIX.iter().any(|p| text.starts_with(p)))
}

/// Does rendered text open with a section-end heading: its first line one of [`SECTION_END`]
/// (normalised as there), or of at most four words starting with one ("Most popular posts")?
/// The learned chooser's lists are checked with it: a sidebar's "Most popular posts" list
/// outscored a 22-word post on dragnet-0926 (0.91 → 0), the one dev page it changes.
pub fn opens_with_section_end(text: &str) -> bool {
    let line = text.lines().next().unwrap_or("");
    let mut norm = String::new();
    let mut words = 0;
    for w in line.split_whitespace() {
        words += 1;
        push_section_word(w, &mut norm);
    }
    let norm = norm.trim_end();
    is_section_end(norm, words)
        || (words <= 4
            && SECTION_END
                .iter()
                .any(|p| norm.len() > p.len() && norm.starts_with(p) && norm.as_bytes()[p.len()] == b' '))
}

/// Does a phrase or prefix start with the first byte of `text` (normalised)? Rules out most
/// blocks before any phrase is compared: with it, and texts no phrase continues given up on,
/// the section-end filter's instructions fell by 38 % (callgrind, every fifth aeb + wcxb dev
/// page).
#[inline]
fn first_letter_may_start(text: &str) -> bool {
    text.as_bytes().first().is_some_and(|&b| SECTION_END_FIRST[usize::from(b >> 6)] & (1 << (b & 63)) != 0)
}

/// Bit `b % 64` of word `b / 64` for the first byte `b` of each phrase and prefix (a UTF-8 lead
/// byte for the phrases in other alphabets).
const SECTION_END_FIRST: [u64; 4] = {
    let (mut m, mut i) = ([0u64; 4], 0);
    while i < SECTION_END.len() + SECTION_END_PREFIX.len() {
        let p = if i < SECTION_END.len() { SECTION_END[i] } else { SECTION_END_PREFIX[i - SECTION_END.len()] };
        let b = p.as_bytes()[0];
        // Normalised text is lower-cased: a capital could never match.
        assert!(!b.is_ascii_uppercase());
        m[(b >> 6) as usize] |= 1 << (b & 63);
        i += 1;
    }
    m
};

/// Can a block whose normalised text starts with `words` (whole words) be a section-end
/// heading? (Does some phrase start with them?) Blocks that cannot stop collecting their text.
fn may_start_section_end(words: &str) -> bool {
    if !first_letter_may_start(words) {
        return false;
    }
    // In byte order the phrases that start with `words` follow one another, `words` itself
    // first, then `words` and a space (a space sorts before every letter), then longer words:
    // the first phrase not below `words` answers.
    let sorted = &*SECTION_END_SORTED;
    sorted.get(sorted.partition_point(|p| *p < words)).is_some_and(|p| {
        p.as_bytes().starts_with(words.as_bytes()) && p.as_bytes().get(words.len()).is_none_or(|&b| b == b' ')
    })
}

/// [`SECTION_END`] and [`SECTION_END_PREFIX`] in byte order: with the phrases of eighteen
/// languages, comparing a block's first words with each in turn cost 3 % of the extraction
/// time (`pipeline bench`, aeb + wcxb dev); a binary search costs a few comparisons.
static SECTION_END_SORTED: LazyLock<Vec<&'static str>> = LazyLock::new(|| {
    let mut v: Vec<&str> = SECTION_END.iter().chain(SECTION_END_PREFIX).copied().collect();
    v.sort_unstable();
    v
});

/// Drops the furniture that a section-end heading ([`SECTION_END`]) opens: from the heading to
/// the end of the element that contains it (a "Related" box inside the article, or the comment
/// section to the end of its column). The maximum subsequence runs on through comment sections
/// and "related" lists whose prose looks like article text to the token scores, and the
/// unnamed ones escape the furniture filter, but sites head them with a handful of stock
/// phrases. A heading before `min_words_before` words (a teaser box above the article) is kept.
/// A heading over a box of a few links after which the story goes on in the same element
/// ([`link_box_end`]: "Read Next" and a link between two halves of a how-to) drops only the
/// box (session 41: train 9 pages up, 1 down, wcxb-4661 0.12 → 1.00; dev 2 up).
pub fn section_end_mask(page: &str, tokens: &[Token], keep: &mut [bool], min_words_before: usize) {
    section_end_mask_pruned(page, tokens, keep, min_words_before, true);
}

/// [`section_end_mask`]; `prune` false collects every block's first words even when no phrase
/// can match them (the proptest's reference).
fn section_end_mask_pruned(page: &str, tokens: &[Token], keep: &mut [bool], min_words_before: usize, prune: bool) {
    let mut text = String::new();
    let (mut start, mut words, mut before) = (0usize, 0usize, 0usize);
    // No phrase starts with the block's words so far: its text is not collected further.
    let mut hopeless = false;
    // Open-element depth before token `i`, and before the current block's first token.
    let (mut depth, mut start_depth) = (0i64, 0i64);
    let step = |t: &Token| match t.kind {
        TokenKind::StartTag if !tags::is_void(t.tag) => 1,
        TokenKind::EndTag => -1,
        _ => 0,
    };
    let mut i = 0;
    while i <= tokens.len() {
        let boundary = tokens.get(i).is_none_or(|t| t.kind.is_tag() && tags::is_block(t.tag));
        if boundary {
            // A hopeless block's text is no phrase; it can only have passed one of the prefixes
            // (its first letter may still start a phrase: comparing it with all of them cost
            // a fifth of this filter's instructions).
            let may_match = !hopeless || SECTION_END_PREFIX.iter().any(|p| text.starts_with(p));
            if words > 0 && before >= min_words_before && may_match && is_section_end(text.trim_end(), words) {
                // The heading's parent closes where the depth first drops below `start_depth`
                // (past the heading itself: the block may open with the previous end tag).
                let mut d = start_depth;
                let mut j = start;
                while j < tokens.len() {
                    let next = d + step(&tokens[j]);
                    if next < start_depth && j >= i {
                        break;
                    }
                    d = next;
                    j += 1;
                }
                // A link box inside the story ("Read Next" over a link or two, then the story
                // goes on): only the heading and its links go.
                let j = if heads_comments(text.trim_end()) { j } else { link_box_end(tokens, i, j).unwrap_or(j) };
                keep[start..j].iter_mut().for_each(|k| *k = false);
                // Resume at token j (j ≥ i: always progresses).
                i = j;
                depth = d;
                text.clear();
                hopeless = false;
                words = 0;
                start = i;
                start_depth = depth;
                continue;
            }
            before += words;
            text.clear();
            hopeless = false;
            words = 0;
            start = i;
            start_depth = depth;
        } else if let Some(t) = tokens.get(i)
            && t.kind == TokenKind::Word
        {
            // Masked words count too: the furniture filter drops `<h2 id=comments>` itself.
            words += 1;
            // Only short blocks can match; stop collecting text after a few dozen words.
            if words <= 24 && !hopeless && push_section_word(t.raw(page), &mut text) {
                // Checked after every word, not only the first: a paragraph opening with "The"
                // (as "the comments to this entry are closed" does) is ruled out at its second
                // word instead of collected for 24. Text that no phrase continues never becomes
                // one by growing (a text past one of the prefixes keeps it when collecting
                // stops).
                hopeless = prune && !may_start_section_end(&text[..text.len() - 1]);
            }
        }
        if let Some(t) = tokens.get(i) {
            depth += step(t);
        }
        i += 1;
    }
}

/// Does a section-end heading open comments (or a blog's other furniture) rather than a box of
/// links? Comments follow their heading as prose under a linked name, which [`link_box_end`]
/// would read as the story going on.
fn heads_comments(text: &str) -> bool {
    const MARKS: &[&str] = &[
        "comment",
        "komment",
        "coment",
        "koment",
        "коммент",
        "комент",
        "reply",
        "respon",
        "réponse",
        "risposta",
        "resposta",
        "reactie",
        "yanıt",
        "yorum",
        "discussion",
        "conversation",
        "trackback",
        "pingback",
        "thoughts",
        "gedanken",
        "réflexions",
        "pensieri",
        "pensamentos",
        "gedachten",
        "댓글",
        "コ メ ン ト",
        "评 论",
        "評 論",
        "about",
        "blog",
        "on the net",
    ];
    MARKS.iter().any(|m| text.contains(m))
}

/// Where a box of links that a section-end heading opens ends, when the story goes on after it
/// inside the same element (tokens `from..to`): at most [`LINK_BOX_ITEMS`] blocks mostly of
/// link words, then at least [`LINK_BOX_PROSE`] words in blocks that are not. None otherwise.
fn link_box_end(tokens: &[Token], from: usize, to: usize) -> Option<usize> {
    let (mut items, mut box_end, mut prose, mut in_box, mut after_links) = (0usize, from, 0usize, true, 0usize);
    let walk = try_for_each_block(&tokens[from..to.min(tokens.len())], |_, end, words, link_words, _| {
        if words == 0 {
            return ControlFlow::Continue(());
        }
        let linky = 2 * link_words > words;
        if in_box && linky {
            items += 1;
            box_end = from + end;
            if items > LINK_BOX_ITEMS {
                return ControlFlow::Break(());
            }
        } else if in_box && items == 0 {
            // Prose right under the heading: no box of links (nothing to return; stop reading).
            return ControlFlow::Break(());
        } else {
            in_box = false;
            if linky {
                // Links and summaries taking turns: a list of teasers, not the story.
                after_links += 1;
                if after_links > LINK_BOX_LINKS_AFTER {
                    return ControlFlow::Break(());
                }
            } else {
                prose += words;
            }
        }
        ControlFlow::Continue(())
    });
    (walk.is_continue() && items > 0 && prose >= LINK_BOX_PROSE).then_some(box_end)
}

/// The most blocks of links a link box inside the story holds ([`link_box_end`]).
const LINK_BOX_ITEMS: usize = 6;
/// The most blocks of links after it for the story to go on ([`link_box_end`]).
const LINK_BOX_LINKS_AFTER: usize = 1;
/// The fewest words of prose after it for the story to go on ([`link_box_end`]).
const LINK_BOX_PROSE: usize = 60;

/// What an ad slot leaves in the text when its ad is not loaded: the label above it, the
/// "continue reading" line below it; and the "Click to expand…" of a collapsed forum quote
/// (XenForo; 83 lines, never in a gold). Normalised as [`SECTION_END`], in byte order. Over every
/// dataset page 48 "Advertisement" lines on 27 pages, 50 "Sponsored" lines on 12, 9
/// "Advertisements" (WordPress.com's), BBC's "Advert" and 9 "Advertise Here" were in the
/// output and never in a gold text; "Ad" and "Promoted" were left out (some golds keep them
/// as words of their own).
const AD_LABELS: &[&str] = &[
    "advert",
    "advertise here",
    "advertisement",
    "advertisement continue reading below",
    "advertisements",
    "article continues below",
    "article continues below advertisement",
    "click to expand",
    "continue reading below",
    "scroll to continue with content",
    "skip advertisement",
    "sponsored",
    "sponsored content",
    "story continues below advertisement",
];

/// Words of the longest [`AD_LABELS`] label.
const AD_LABEL_WORDS: usize = 5;

/// Drops the blocks whose whole text is an ad label ([`AD_LABELS`]): only the label, never
/// the text around it.
pub fn ad_label_mask(page: &str, tokens: &[Token], keep: &mut [bool]) {
    let mut text = String::new();
    // The block's first words (token indices), normalised only if the block ends short.
    let mut first = [0usize; AD_LABEL_WORDS];
    let (mut start, mut words) = (0usize, 0usize);
    for i in 0..=tokens.len() {
        let t = tokens.get(i);
        if t.is_none_or(|t| t.kind.is_tag() && tags::is_block(t.tag)) {
            if (1..=AD_LABEL_WORDS).contains(&words) {
                text.clear();
                for &w in &first[..words] {
                    push_section_word(tokens[w].raw(page), &mut text);
                }
                if AD_LABELS.binary_search(&text.trim_end()).is_ok() {
                    keep[start..i].iter_mut().for_each(|k| *k = false);
                }
            }
            (start, words) = (i, 0);
        } else if let Some(t) = t
            && t.kind == TokenKind::Word
        {
            if let Some(slot) = first.get_mut(words) {
                *slot = i;
            }
            words += 1;
        }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::html::{TokenizerOptions, tokenize};

    fn toks(html: &str) -> (String, Vec<Token>) {
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

    fn masked(html: &str, f: impl Fn(&str, &[Token], &mut [bool])) -> String {
        let (page, toks) = tokens(html);
        let mut keep = vec![true; toks.len()];
        f(&page, &toks, &mut keep);
        let mut out = String::new();
        render(&page, &toks, Some(&keep), &mut out);
        out
    }

    #[test]
    fn furniture_elements_are_dropped_with_their_subtree() {
        assert!(is_boilerplate_element("<div class=\"js-Comments list\">"));
        assert!(is_boilerplate_element("<section id='related-posts'>"));
        assert!(is_boilerplate_element("<ul class=shareBar>"));
        assert!(!is_boilerplate_element("<div class=\"article-body\" data-comment=\"x\">"));
        assert!(!is_boilerplate_element("<div id=main>"));
        let html = "<p>Story text one.</p><div class=comments><p>First!</p><div><p>Nested reply.</p></div></div><p>Story text two.</p>";
        assert_eq!(masked(html, boilerplate_mask), "Story text one.\n\nStory text two.");
        // Not closed inside the span: dropped to the end.
        assert_eq!(masked("<p>Story.</p><div class=related><p>Other story", boilerplate_mask), "Story.");
    }

    #[test]
    fn post_footers_author_boxes_and_asides_are_the_second_furniture_list() {
        let html = "<p>Story one.</p><aside class=pullquote><p>Quoted again.</p></aside><p>Story two.</p>\
                    <div class=\"entry-footer\">Posted in News</div><div id=author-bio><p>Jane writes.</p></div>\
                    <div class=author><p>By Jane</p></div>";
        assert_eq!(masked(html, more_furniture_mask), "Story one.\n\nStory two.\n\nBy Jane");
        let figure = "<p>Story one.</p><figure><img src=a.jpg><figcaption>Image copyright Getty Images</figcaption>\
                      </figure><p>Story two.</p>";
        assert_eq!(masked(figure, more_furniture_mask), "Story one.\n\nStory two.");
        assert!(masked(figure, boilerplate_mask).contains("Getty Images"));
        // Not in the first list: the default filter alone keeps them.
        assert!(masked(html, boilerplate_mask).contains("Posted in News"));
        assert_eq!(masked(html, all_furniture_mask), "Story one.\n\nStory two.\n\nBy Jane");
        assert!(furniture("<div class=\"x SIGN-UP\" id=Bio>") == F_BOILERPLATE | F_MORE);
        assert_eq!(furniture("<div class=\"b i o\" data-x=comment>"), 0);
    }

    #[test]
    fn hidden_microdata_copies_are_dropped_and_other_hidden_content_is_kept() {
        assert!(is_hidden_microdata(
            "<div style=\"display: none;\" itemscope itemtype=\"http://schema.org/NewsArticle\">"
        ));
        assert!(is_hidden_microdata("<span itemprop=headline hidden>"));
        assert!(is_hidden_microdata("<meta-box ItemProp='author' STYLE='visibility:hidden'>"));
        // Hidden but not microdata: React's streamed content, an accordion panel.
        assert!(!is_hidden_microdata("<div hidden id=\"S:1\">"));
        assert!(!is_hidden_microdata("<div role=region hidden class=\"accordion\">"));
        // Microdata but shown; "hidden" only inside a value.
        assert!(!is_hidden_microdata("<div itemprop=articleBody>"));
        assert!(!is_hidden_microdata("<div itemprop=articleBody class=\"hidden-sm\" data-x='hidden'>"));
        let html = "<p>Story text.</p><div style=\"display:none\" itemscope><div itemprop=headline>Story</div>\
                    <div itemprop=datePublished>2019-11-13</div></div><div hidden><p>Streamed part.</p></div>";
        assert_eq!(masked(html, hidden_microdata_mask), "Story text.\n\nStreamed part.");
    }

    #[test]
    fn modal_dialogs_are_known_by_their_element_role_or_aria_modal() {
        for (tag, modal) in [
            ("<dialog aria-live=\"polite\" id=\"modal-stock\" class=\"cmp-modal\">", true),
            ("<DIALOG open>", true),
            ("<div id='modal-refund-policy' aria-modal='true' role='dialog' v-cloak>", true),
            ("<div role=\"alertdialog\" aria-label=\"Cookies\">", true),
            ("<section aria-modal=TRUE>", true),
            // A drawer that says it is not modal (a product's details sheet) is the page's text.
            ("<div class=\"sheet\" tabindex=\"-1\" role=\"dialog\" aria-modal=\"false\">", false),
            // The words elsewhere: a class, a value, another element whose name starts so.
            ("<div class=\"dialog modal-content\" data-role=\"dialog\">", false),
            ("<a href=\"/dialog\" title=\"aria-modal\">", false),
            ("<dialogue-box>", false),
            ("<div role=\"dialogue\">", false),
            // Hidden and named a dialog: jQuery UI's and many a theme's modals, before a script
            // gives them a role.
            ("<div id=\"dialog\" style=\"display:none\" title=\"Please log in\">", true),
            ("<div class=\"modal__dialog\" hidden>", true),
            ("<div id='comment-dialog' style='DISPLAY: None;'>", true),
            // A hidden transcript is a dialogue; a hidden tab is no dialog.
            ("<div class=\"dialogue-transcript\" style=\"display:none\">", false),
            ("<div class=\"tab-panel\" style=\"display:none\">", false),
        ] {
            assert_eq!(is_modal(tag), modal, "{tag}");
        }
    }

    #[test]
    fn a_box_of_links_inside_the_story_leaves_the_rest_of_the_story() {
        let para = |w: &str| format!("<p>{}.</p>", (0..40).map(|i| format!("{w}{i}")).collect::<Vec<_>>().join(" "));
        let cut = |p: &str, t: &[Token], k: &mut [bool]| section_end_mask(p, t, k, 5);
        // "Read Next" over a link, then the story goes on: only the box goes.
        let story = format!(
            "<div class=body>{}<h3>Read Next</h3><p><a href=/x>Seven plants for a shady garden</a></p>{}{}</div>",
            para("first"),
            para("second"),
            para("third")
        );
        let got = masked(&story, cut);
        assert!(got.contains("first0") && got.contains("second0") && got.contains("third39"), "{got}");
        assert!(!got.contains("Seven plants") && !got.contains("Read Next"), "{got}");
        // Teasers (a link, then its summary, over and over) are a list, not the story.
        let teaser = |i: usize| format!("<p><a href=/t{i}>Teaser {i}</a></p>{}", para(&format!("summary{i}x")));
        let teasers = format!(
            "<div class=body>{}<h3>Read Next</h3>{}</div>",
            para("first"),
            (0..3).map(teaser).collect::<String>()
        );
        assert!(!masked(&teasers, cut).contains("summary0x0"));
        // Prose right under the heading, and a comment section's linked names over their
        // comments, are not boxes of links.
        let prose =
            format!("<div class=body>{}<h3>Related</h3>{}{}</div>", para("first"), para("second"), para("third"));
        assert!(!masked(&prose, cut).contains("second0"));
        let comments = story.replace("Read Next", "Comments").replace("Seven plants for a shady garden", "Jane");
        assert!(!masked(&comments, cut).contains("second0"));
        // More links than a box holds: the section ends as before.
        let many = story.replace(
            "<p><a href=/x>Seven plants for a shady garden</a></p>",
            &(0..7).map(|i| format!("<p><a href=/x{i}>Link {i} here</a></p>")).collect::<String>(),
        );
        assert!(!masked(&many, cut).contains("second0"));
    }

    #[test]
    fn the_span_ends_at_a_comment_or_related_heading() {
        let body = "<p>The council voted on the river park budget after a long night of debate.</p>";
        let html = format!("{body}<h3>12 Comments</h3><p>Great article, thanks for the report!</p>");
        let cut = |m| move |p: &str, t: &[Token], k: &mut [bool]| section_end_mask(p, t, k, m);
        assert_eq!(masked(&html, cut(5)), "The council voted on the river park budget after a long night of debate.");
        // Too early: kept.
        assert!(masked(&html, cut(50)).contains("Great article"));
        let html = format!("{body}<div>3 thoughts on “Budget night”</div><p>Me too.</p>");
        assert!(!masked(&html, cut(5)).contains("Me too"));
        // TypePad's heading over the weblogs that link to a post, and WordPress's.
        for heading in ["TrackBack", "Pingbacks", "About the Author", "About this Entry", "Recent Posts", "On the Net:"]
        {
            let html = format!("{body}<h2>{heading}</h2><p>Listed below are links to weblogs.</p>");
            assert!(!masked(&html, cut(5)).contains("Listed below"), "{heading}");
        }
        // A heading that opens right after an end tag, and one at the very end, terminate.
        let html = format!("<div>{body}</p>Related<p>Other story.</p></div>Comments");
        assert_eq!(masked(&html, cut(5)), "The council voted on the river park budget after a long night of debate.");
        // Only the element holding the heading goes: an inline "Related" box.
        let html =
            format!("<div>{body}<aside><h4>Related</h4><p>Other story.</p></aside><p>More of the story.</p></div>");
        assert_eq!(
            masked(&html, cut(5)),
            "The council voted on the river park budget after a long night of debate.\n\nMore of the story."
        );
        // Words that merely contain a marker are not a heading.
        let html = format!("{body}<p>Related reading on the budget is long and useful to have here.</p>");
        assert!(masked(&html, cut(5)).contains("Related reading"));
    }

    #[test]
    fn ad_labels_are_dropped_and_nothing_around_them() {
        let story = "<p>The council voted on the river park budget after a long night.</p>";
        let html = format!(
            "{story}<div class=slot>Advertisement</div><p>More of the story.</p>\
             <div><span>ADVERTISEMENT - Continue reading below</span></div><p>Sponsored</p><p>Advertise here</p><div>Click to expand...</div>\
             <p>Advertisement revenue fell, the report said.</p><p>Sponsored by the city.</p>"
        );
        assert_eq!(
            masked(&html, ad_label_mask),
            "The council voted on the river park budget after a long night.\n\nMore of the story.\n\n\
             Advertisement revenue fell, the report said.\n\nSponsored by the city."
        );
        // Every label is in byte order (binary search), its own normal form, within the bound.
        assert!(AD_LABELS.windows(2).all(|w| w[0] < w[1]));
        for l in AD_LABELS {
            let mut norm = String::new();
            l.split_whitespace().for_each(|w| _ = push_section_word(w, &mut norm));
            assert_eq!(norm.trim_end(), *l);
            assert!(l.split_whitespace().count() <= AD_LABEL_WORDS, "{l}");
        }
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

    /// A main column inside a layout element named for its sidebar (Vox Media's
    /// `l-sidebar-fixed`) is no furniture; the rail beside it is, and so is furniture inside
    /// a main element, or one whose name says both.
    #[test]
    fn a_main_column_inside_a_sidebar_layout_is_not_furniture() {
        let inside = |html: &str| {
            let (page, t) = toks(html);
            let at = t.iter().position(|x| x.raw(&page) == "here").unwrap();
            inside_furniture(&page, &t, at, true)
        };
        let layout = |col: &str| {
            format!(
                "<article><div class=\"l-sidebar-fixed l-segment\"><div class=\"{col}\"><p>Story here</p></div></div></article>"
            )
        };
        assert!(!inside(&layout("l-col__main")));
        assert!(inside(&layout("l-col__sidebar")));
        assert!(!inside("<div class=sidebar-layout><main><p>Story here</p></main></div>"));
        assert!(inside("<main><div id=comments><p>Reply here</p></div></main>"));
        assert!(inside("<div class=sidebar-layout><main><div id=comments><p>Reply here</p></div></main></div>"));
        assert!(inside("<div id=comments><div class=comment-main><p>Reply here</p></div></div>"));
    }

    /// Every listed phrase can match (the bound once was 6 words, and "the comments to this
    /// entry are closed" has 7): it is its own normalised form (lower case, letters only: a
    /// hyphen or an apostrophe in a phrase would never match) and within the word bound.
    #[test]
    fn every_section_end_phrase_is_reachable() {
        let normalised = |p: &str| {
            let mut n = String::new();
            p.split_whitespace().for_each(|w| assert!(push_section_word(w, &mut n), "{p}"));
            n
        };
        for p in SECTION_END {
            assert_eq!(normalised(p).trim_end(), *p);
            assert!(is_section_end(p, p.split(' ').count()), "{p}");
            assert!(may_start_section_end(p), "{p}");
        }
        for p in SECTION_END_PREFIX {
            assert_eq!(normalised(p), *p);
            assert!(first_letter_may_start(p), "{p}");
        }
        assert!(!is_section_end("comments", SECTION_END_WORDS + 1));
    }

    /// The headings of comment sections and "related" boxes in other languages end the span
    /// as the English ones do: a German, French, Spanish, Russian or Japanese page otherwise
    /// runs on through its comment thread.
    #[test]
    fn the_span_ends_at_comment_and_related_headings_in_other_languages() {
        let body =
            "<p>Der Stadtrat hat nach einer langen Nacht über den Haushalt für den Park am Fluss abgestimmt.</p>";
        let cut = |p: &str, t: &[Token], k: &mut [bool]| section_end_mask(p, t, k, 5);
        for heading in [
            "12 Kommentare",
            "Schreibe einen Kommentar",
            "Das könnte Sie auch interessieren:",
            "3 Gedanken zu „Haushalt“",
            "Laisser un commentaire",
            "Vous aimerez peut-être aussi",
            "COMENTARIOS",
            "Lo más leído",
            "Artigos relacionados",
            "Комментарии (4)",
            "Похожие статьи",
            "関連記事",
            "相关阅读",
            "댓글 3",
        ] {
            let html = format!("<div>{body}<h3>{heading}</h3><p>Toller Artikel, danke!</p></div>");
            assert_eq!(
                masked(&html, cut),
                "Der Stadtrat hat nach einer langen Nacht über den Haushalt für den Park am Fluss abgestimmt.",
                "{heading}"
            );
        }
        // A story's own section heading stays, as does the "read also" teaser news sites set
        // inside the story.
        for heading in ["Antworten auf die wichtigsten Fragen", "Lire aussi", "Kommentar"] {
            let html = format!("<div>{body}<h3>{heading}</h3><p>Der Park öffnet im Mai.</p></div>");
            assert!(masked(&html, cut).contains("Der Park öffnet im Mai."), "{heading}");
        }
        assert!(opens_with_section_end("Meistgelesen\n\nNachrichten"));
        assert!(opens_with_section_end("Похожие записи\nx"));
    }

    #[test]
    fn text_opening_with_a_furniture_heading() {
        assert!(opens_with_section_end("Most Popular Posts\n\nWin a copy"));
        assert!(opens_with_section_end("12 Comments\n\nNice post"));
        assert!(opens_with_section_end("Related stories: more\nx"));
        assert!(!opens_with_section_end("Related to nothing else at all here\nx"));
        assert!(!opens_with_section_end("The most popular posts of the year were about cats\nx"));
        assert!(!opens_with_section_end("Comments from the minister came late\nx"));
        assert!(!opens_with_section_end(""));
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

        /// Any nesting, stray end tags and headings anywhere: the cut terminates, never
        /// panics, and only ever removes words.
        #[test]
        fn section_end_cut_terminates_and_only_removes(
            parts in proptest::collection::vec(0usize..14, 0..60),
            min in 0usize..8,
        ) {
            const FRAG: [&str; 14] = [
                "<div>", "</div>", "<p>", "</p>", "Comments", "Related", "word and more words",
                "<h3>", "</h3>", "</span>", "<br>", "3 thoughts on x", "<aside>", "</section>",
            ];
            let html: String = parts.iter().map(|&i| FRAG[i]).collect::<Vec<_>>().join(" ");
            let all = masked(&html, |_, _, _| {});
            let cut = masked(&html, |p, t, k| section_end_mask(p, t, k, min));
            proptest::prop_assert!(cut.split_whitespace().count() <= all.split_whitespace().count());
        }

        /// Ad labels in any nesting and among other words: only the labels' blocks go, every
        /// other word stays.
        #[test]
        fn ad_label_mask_removes_only_labels(parts in proptest::collection::vec(0usize..10, 0..60)) {
            const FRAG: [&str; 10] = [
                "<div>", "</div>", "<p>", "</p>", "Advertisement", "Sponsored content",
                "word and more words", "</span>", "<br>", "Advertisement revenue",
            ];
            let html: String = parts.iter().map(|&i| FRAG[i]).collect::<Vec<_>>().join(" ");
            let words = |t: &str| t.split_whitespace().filter(|w| !matches!(*w, "Advertisement" | "Sponsored" | "content")).count();
            let all = masked(&html, |_, _, _| {});
            let cut = masked(&html, ad_label_mask);
            proptest::prop_assert!(cut.split_whitespace().count() <= all.split_whitespace().count());
            proptest::prop_assert_eq!(words(&cut), words(&all));
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

        /// Giving up on a block once no phrase continues its words cuts what collecting its
        /// first 24 words cuts, whatever the words (phrases, their beginnings and ends,
        /// numbers, other words) and the nesting.
        #[test]
        fn pruned_section_end_cut_equals_the_unpruned(
            parts in proptest::collection::vec(0usize..24, 0..80),
            min in 0usize..4,
        ) {
            const FRAG: [&str; 24] = [
                "<div>", "</div>", "<p>", "</p>", "<h2>", "</h2>", "The", "comments", "to", "this",
                "entry", "are", "closed", "Related", "stories", "12", "thoughts on", "More from",
                "you may also", "like", "Leave", "a", "reply", "words",
            ];
            let html: String = parts.iter().map(|&i| FRAG[i]).collect::<Vec<_>>().join(" ");
            let pruned = masked(&html, |p, t, k| section_end_mask_pruned(p, t, k, min, true));
            let full = masked(&html, |p, t, k| section_end_mask_pruned(p, t, k, min, false));
            proptest::prop_assert_eq!(pruned, full);
        }

        /// One pass over both furniture lists drops what the two passes drop, on any nesting.
        #[test]
        fn both_furniture_lists_in_one_pass_equal_two_passes(parts in proptest::collection::vec(0usize..14, 0..60)) {
            const FRAG: [&str; 14] = [
                "<div class=comments>", "<div class=\"entry-footer\">", "<aside>", "</aside>", "</div>",
                "<div id=Author-Box>", "<p>", "</p>", "words here", "<section class=related-x>", "</section>",
                "<span class=\"shareBar bio\">", "</span>", "<div class=main>",
            ];
            let html: String = parts.iter().map(|&i| FRAG[i]).collect::<Vec<_>>().join(" ");
            let two = masked(&html, |p, t, k| {
                boilerplate_mask(p, t, k);
                more_furniture_mask(p, t, k);
            });
            proptest::prop_assert_eq!(masked(&html, all_furniture_mask), two);
        }

        /// The furniture lists and the hidden microdata in one pass drop what the passes one
        /// after the other drop, on any nesting (unclosed elements included).
        #[test]
        fn furniture_and_microdata_in_one_pass_equal_two_passes(parts in proptest::collection::vec(0usize..12, 0..60)) {
            const FRAG: [&str; 12] = [
                "<div class=comments>", "<div itemscope hidden>", "<aside>", "</aside>", "</div>",
                "<span itemprop=name style=\"display: none\">", "<p>", "</p>", "words here", "</span>",
                "<div class=main>", "<section class=related-x>",
            ];
            let html: String = parts.iter().map(|&i| FRAG[i]).collect::<Vec<_>>().join(" ");
            let two = masked(&html, |p, t, k| {
                all_furniture_mask(p, t, k);
                hidden_microdata_mask(p, t, k);
            });
            let one = masked(&html, |p, t, k| furniture_and_microdata_mask(p, t, k, true, true, true));
            proptest::prop_assert_eq!(one, two);
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
