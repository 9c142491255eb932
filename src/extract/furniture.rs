//! Page furniture by its markup: the elements whose id/class names (comment threads, share
//! bars, related-story rails, sidebars …), roles and tags say they are not the article,
//! dropped with their subtree inside the chosen span; hidden microdata copies and modal
//! dialogs; and where a run that starts inside such an element leaves it (the furniture
//! escape). The names are matched in one walk of a start tag's attributes (`SpanTag`);
//! each list says how its names were measured.

use crate::html::attrs;
use crate::html::tags::{self, TagId};
use crate::html::{Token, TokenKind};

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
///
/// Session 50, from the same count on the train splits: `nocontent`, the class by which Google
/// Custom Search (and Yahoo, as `robots-nocontent`) lets a site mark the parts of its pages that
/// are not content (train 10 pages up, none down; dev 2 up, none down), and XenForo's
/// `message-userExtras`, the joined date, message count and reaction score under a poster's
/// name (train 15 up, none down; dev 2 up, none down). Not `<label>` (train +0.0001, dev
/// −0.0005: 81 pages moved both ways). And, by attribute, Google's `data-nosnippet`, the site's
/// mark of text not to quote as its snippet (on the pages it changes: a "call us" banner, a demo
/// payment form, "Advertisement" labels; train 2 pages up, dev 2 up, none down). In this list,
/// not the second, so that a span it would empty (a publisher that marks its whole story) is
/// read without it ([`crate::extract::FURNITURE_EMPTIED_WORDS`]).
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
    "message-userextras",
    "wp-block-button",
    "elementor-button",
    "nocontent",
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
/// and `id` values, its `role`, whether it is a microdata element (`itemscope` / `itemprop`),
/// whether it has the `hidden` or the `data-nosnippet` attribute, and its first `style` value.
/// Read once for the furniture lists and the hidden-microdata filter (each had searched the raw
/// tag on its own: 60 M of the span filters' 152 M instructions, callgrind of every fifth aeb +
/// wcxb dev page).
#[derive(Default)]
struct SpanTag<'a> {
    class: Option<&'a [u8]>,
    id: Option<&'a [u8]>,
    role: Option<&'a [u8]>,
    item: bool,
    hidden: bool,
    nosnippet: bool,
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
                14 if name.eq_ignore_ascii_case(b"data-nosnippet") => {
                    t.nosnippet = true;
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

/// Does the headline (its start tag, token `h`) sit in a story's container, an `<article>` or
/// an element whose id/class names a story ([`STORY_BITS`]: `post`, `entry`, `article`,
/// `story`, `blog`) and no furniture, that closes before token `at`? A blog's comments then
/// follow its post outside the post's container, while a forum's posts share a container with
/// the thread's title. The container is the innermost such element still open at the first
/// word after the headline: a wrapper of the headline alone (`post-header`, `entry-title`)
/// holds no story.
pub fn story_closes_before(page: &str, tokens: &[Token], h: usize, at: usize) -> bool {
    let mut open: Vec<(TagId, usize)> = Vec::new();
    for (i, t) in tokens[..h.min(tokens.len())].iter().enumerate() {
        step_open(&mut open, t, i);
    }
    let depth = open.len();
    let story = |&(tag, i): &(TagId, usize)| {
        let f = names_in(tokens[i].raw(page), FURNITURE_BITS | STORY_BITS);
        f & (F_BOILERPLATE | F_MORE) == 0 && (tag == tags::ARTICLE || f & F_POSITIVE != 0)
    };
    // The fewest of the headline's ancestors open since it closed (None while it is open),
    // and the container's place in the stack, once the first word after the headline is met.
    let (mut low, mut container): (Option<usize>, Option<usize>) = (None, None);
    for (i, t) in tokens.iter().enumerate().take(at).skip(h) {
        step_open(&mut open, t, i);
        if let Some(k) = container {
            if open.len() <= k {
                return true;
            }
            continue;
        }
        if open.len() <= depth {
            low = Some(low.map_or(open.len(), |l| l.min(open.len())));
        }
        if let (Some(l), TokenKind::Word) = (low, t.kind) {
            let Some(k) = open[..l].iter().rposition(story) else { return false };
            container = Some(k);
        }
    }
    false
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

/// The names of [`POSITIVE_NAMES`] that name a story rather than a layout's column (`main`,
/// `content`, `body`, `text` also name the column of a forum's thread), as bits of [`CLASS_NAMES`].
const STORY_BITS: u64 = {
    let mut bits = 0;
    let mut k = 0;
    while k < POSITIVE_NAMES.len() {
        if matches!(POSITIVE_NAMES[k].as_bytes(), b"article" | b"story" | b"post" | b"entry" | b"blog") {
            bits |= 1 << (BOILERPLATE_NAMES.len() + MORE_NAMES.len() + k);
        }
        k += 1;
    }
    bits
};

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
/// ran on into that section). `boilerplate`: [`BOILERPLATE_NAMES`] by id/class and
/// `data-nosnippet` by attribute; `more`:
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
            || (boilerplate && t.nosnippet)
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::extract::text::tests::{masked, toks};

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

    proptest::proptest! {
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
}
