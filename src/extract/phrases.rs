//! Furniture by its words: the headings that end an article and open the page's furniture
//! (comment sections, "related" and "most popular" lists, in English and the languages most
//! crawled after it), where the span is cut, with the box of links such a heading may open
//! inside a story; and the labels an empty ad slot leaves ("Advertisement"), dropped alone.

use std::ops::ControlFlow;
use std::sync::LazyLock;

use crate::html::tags;
use crate::html::{Token, TokenKind};

use super::text::try_for_each_block;

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
    // Themes' related-posts heading without the "also", in each language below (session 50,
    // from aeb-0126's "Você pode gostar...": no train page has one).
    "you may like",
    "you might like",
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
    "vous pourriez aimer",
    "vous aimerez peut être",
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
    "también te puede gustar",
    "te puede gustar",
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
    "potrebbe piacerti",
    "ti potrebbe piacere",
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
    "você pode gostar",
    "talvez você goste",
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::extract::text::tests::masked;

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

    proptest::proptest! {
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
    }
}
