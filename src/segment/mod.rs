//! Block segmentation for block-level sequence labelling (Gibson, Wellner & Lubar 2007, §5
//! "Dividing into Blocks"): a block is a maximal run of text between tags, where the paper's
//! inline tags (`a`, `span`, `b`, `em`, …; [`is_inline`]) do not split a run. Each block keeps
//! its token range and the context the paper's features need (§6): parent and grandparent
//! tags, previous and next sibling tags, descendant tags, whether an `<img>` came since the
//! previous block, anchor words, and the id/class words of its ancestors (our extension).
//!
//! Streaming over the tokenizer's tokens, with no DOM: the [`Segmenter`] is a [`TokenSink`]
//! and keeps only an open-element stack, so it gives the same blocks wherever the page bytes
//! are split. `<title>` words are never a block; their keys feed the title-matching feature
//! ([`Segmenter::title_keys`]). Labels from gold are in [`labels`], labels back to token scores in
//! [`emit`]; features and learning belong to the methods ([`crate::methods`]).
//!
//! The other papers' block definitions are [`BlockMode`] options (issue 7): Yao & Zuo's
//! block-level elements plus `<br>`, and the memory-based thesis' element text / tail.
//! Not done yet: Ziegler's remove/prune lists, and choosing the mode from the CLI or the
//! feature config (the CRF/MEMM/MaxEnt learners always segment with [`BlockMode::Gibson`];
//! the SVM learner, [`crate::methods::svm`], always with [`BlockMode::Yao`]; the memory-based learner always
//! with [`BlockMode::TextTail`], through [`crate::methods::mbl::units`]).

pub mod emit;
pub mod labels;

use crate::features::class_words;
use crate::html::tags::{self, TagId};
use crate::html::{Token, TokenKind, TokenSink};

/// Which tags bound a block: the three papers' block definitions.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum BlockMode {
    /// Gibson et al. §5: every tag except the paper's inline list ([`is_inline`]) bounds a block.
    #[default]
    Gibson,
    /// Yao & Zuo §III.A "Blockifying": text accumulates until "the beginning or end of a
    /// block-level element" (footnote 1: formatted with a line break before and after), with
    /// `<br>` treated as block-level because it "modifies text flow". Other tags — `img`,
    /// `input`, `label`, unknown tags as well as the inline list — do not split. Block-level is
    /// [`tags::is_block`] (HTML's list plus `br`, `html`, `body`, `title`) and `head`.
    Yao,
    /// The memory-based thesis (§4, "text and tail"): the units are lxml's `element.text` (after
    /// a start tag, up to the first child) and `element.tail` (after an end tag, up to the next
    /// sibling), so every tag, inline or not, bounds a unit.
    TextTail,
}

impl BlockMode {
    /// Whether tag `id` (start or end) bounds a block in this mode.
    #[inline]
    pub fn splits(self, id: TagId) -> bool {
        match self {
            BlockMode::Gibson => !is_inline(id),
            BlockMode::Yao => tags::is_block(id) || id == tags::HEAD,
            BlockMode::TextTail => true,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            BlockMode::Gibson => "gibson",
            BlockMode::Yao => "yao",
            BlockMode::TextTail => "text-tail",
        }
    }

    /// Parses `gibson`, `yao` or `text-tail`.
    pub fn parse(s: &str) -> Option<BlockMode> {
        [BlockMode::Gibson, BlockMode::Yao, BlockMode::TextTail].into_iter().find(|m| m.name() == s)
    }
}

/// The paper's inline tags (§5): they do not bound a block.
pub fn is_inline(id: TagId) -> bool {
    const INLINE: [&str; 28] = [
        "a", "ins", "del", "span", "bdo", "em", "strong", "dfn", "code", "samp", "kbd", "var", "cite", "abbr",
        "acronym", "q", "sub", "sup", "tt", "i", "b", "big", "small", "u", "s", "strike", "basefont", "font",
    ];
    static TABLE: std::sync::LazyLock<[bool; 256]> = std::sync::LazyLock::new(|| {
        let mut t = [false; 256];
        for n in INLINE {
            let id = tags::tag_id(n.as_bytes());
            if id != tags::UNKNOWN {
                t[id as usize] = true;
            }
        }
        t
    });
    TABLE[id as usize]
}

/// Pseudo tag id of `<a name>` (an anchor without `href`) in [`Block::descendants`]; the
/// vocabulary has fewer than 255 tags, so the slot is free.
pub const A_NAME: u8 = 255;
/// "No tag" in parent / grandparent / sibling slots.
pub const NO_TAG: u8 = 254;

/// id/class words kept per block (nearest ancestors first).
pub const MAX_ANCESTOR_WORDS: usize = 12;
/// Open elements searched for a matching end tag (bounds the work on pathological pages).
const MAX_UNWIND: usize = 256;

/// One block of a page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Block {
    /// First and last token (inclusive) of the block: its first and last text token, with any
    /// inline tags between them.
    pub first: u32,
    pub last: u32,
    /// Word tokens in the block.
    pub words: u32,
    /// Word tokens inside an `<a>`.
    pub anchor_words: u32,
    /// Nearest and second-nearest open non-inline elements ([`NO_TAG`] when absent).
    pub parent: u8,
    pub grandparent: u8,
    /// The boundary tag just before the block and the one that ended it, read as the
    /// block's previous and next siblings (a streaming stand-in for the DOM siblings of §6).
    pub prev_sibling: u8,
    pub next_sibling: u8,
    /// Inline tags inside the block, as a bit set over tag ids; `b` is recorded as `strong`,
    /// `i` as `em`, and `<a>` without `href` as [`A_NAME`] (§6 "Descendant Tags").
    pub descendants: [u64; 4],
    /// An `<img>` appeared after the previous block and before this one (§6 "After Image Tag").
    pub after_image: bool,
    /// Hashes of the id/class words of the block's non-inline ancestors, nearest first.
    pub ancestor_words: Vec<u64>,
}

impl Block {
    pub fn has_descendant(&self, id: u8) -> bool {
        self.descendants[id as usize / 64] >> (id % 64) & 1 == 1
    }

    fn add_descendant(&mut self, id: u8) {
        self.descendants[id as usize / 64] |= 1 << (id % 64);
    }
}

/// An open element: tag, and where its id/class words sit in the shared word buffer.
#[derive(Debug, Clone, Copy)]
struct Open {
    tag: TagId,
    /// Does not bound a block in the segmenter's [`BlockMode`] (so is no parent/ancestor).
    inline: bool,
    words_end: u32,
}

/// Streams tokens into blocks. Feed it with [`TokenSink::token`] (directly from the
/// [`crate::html::Tokenizer`] or from buffered tokens), then read [`blocks`](Self::blocks).
#[derive(Debug, Default)]
pub struct Segmenter {
    mode: BlockMode,
    stack: Vec<Open>,
    words: Vec<u64>,
    /// Number of open `<a>` elements.
    anchors: u32,
    in_title: bool,
    title_done: bool,
    title: Vec<u64>,
    current: Option<Block>,
    /// The last boundary (non-inline) tag seen.
    last_boundary: u8,
    image_since_block: bool,
    next_index: u32,
    blocks: Vec<Block>,
    key_buf: String,
}

impl Segmenter {
    pub fn new() -> Self {
        Segmenter::with_mode(BlockMode::Gibson)
    }

    pub fn with_mode(mode: BlockMode) -> Self {
        Segmenter { mode, last_boundary: NO_TAG, ..Segmenter::default() }
    }

    pub fn mode(&self) -> BlockMode {
        self.mode
    }

    /// Clears all state for the next page (buffers are kept).
    pub fn reset(&mut self) {
        self.stack.clear();
        self.words.clear();
        self.anchors = 0;
        self.in_title = false;
        self.title_done = false;
        self.title.clear();
        self.current = None;
        self.last_boundary = NO_TAG;
        self.image_since_block = false;
        self.next_index = 0;
        self.blocks.clear();
    }

    /// Closes the open block, if any (end of page, or a boundary tag).
    pub fn finish(&mut self) {
        self.close_block(NO_TAG);
    }

    /// The blocks so far (all of them after [`finish`](Self::finish)).
    pub fn blocks(&self) -> &[Block] {
        &self.blocks
    }

    pub fn take_blocks(&mut self) -> Vec<Block> {
        std::mem::take(&mut self.blocks)
    }

    /// Normalised keys ([`crate::methods::nb::train::align::word_key`]) of the first `<title>`'s words.
    pub fn title_keys(&self) -> &[u64] {
        &self.title
    }

    fn close_block(&mut self, next: u8) {
        if let Some(mut b) = self.current.take() {
            b.next_sibling = next;
            self.blocks.push(b);
            self.image_since_block = false;
        }
    }

    fn non_inline_ancestors(&self) -> impl Iterator<Item = (usize, &Open)> {
        self.stack.iter().enumerate().rev().filter(|(_, o)| !o.inline)
    }

    fn open_block(&mut self, index: u32) -> Block {
        let mut it = self.non_inline_ancestors().map(|(_, o)| o.tag);
        let parent = it.next().unwrap_or(NO_TAG);
        let grandparent = it.next().unwrap_or(NO_TAG);
        let mut ancestor_words = Vec::new();
        for (i, o) in self.non_inline_ancestors() {
            let start = if i == 0 { 0 } else { self.stack[i - 1].words_end as usize };
            for &w in &self.words[start..o.words_end as usize] {
                if ancestor_words.len() < MAX_ANCESTOR_WORDS {
                    ancestor_words.push(w);
                }
            }
            if ancestor_words.len() >= MAX_ANCESTOR_WORDS {
                break;
            }
        }
        Block {
            first: index,
            last: index,
            words: 0,
            anchor_words: 0,
            parent,
            grandparent,
            prev_sibling: self.last_boundary,
            next_sibling: NO_TAG,
            descendants: [0; 4],
            after_image: self.image_since_block,
            ancestor_words,
        }
    }
}

/// `b` ≡ `strong`, `i` ≡ `em` (§6 "Descendant Tags").
fn canonical_inline(id: TagId) -> TagId {
    match tags::tag_name(id) {
        "b" => tags::tag_id(b"strong"),
        "i" => tags::tag_id(b"em"),
        _ => id,
    }
}

/// Whether a start tag carries an `href` attribute (`<a href>` vs `<a name>`).
fn has_href(raw: &str) -> bool {
    let b = raw.as_bytes();
    b.windows(5).any(|w| w.eq_ignore_ascii_case(b"href="))
        || b.windows(5).enumerate().any(|(i, w)| {
            w.eq_ignore_ascii_case(b"href ") && b[i + 5..].iter().find(|c| !c.is_ascii_whitespace()) == Some(&b'=')
        })
}

impl TokenSink for Segmenter {
    fn token(&mut self, page: &str, token: &Token) {
        let index = self.next_index;
        self.next_index += 1;
        match token.kind {
            TokenKind::StartTag => {
                let id = token.tag;
                if id == tags::TITLE {
                    self.in_title = !self.title_done;
                }
                if id == tags::IMG {
                    self.image_since_block = true;
                }
                if id == tags::A {
                    self.anchors += 1;
                }
                let inline = !self.mode.splits(id);
                if inline {
                    if let Some(b) = self.current.as_mut() {
                        let d = if id == tags::A && !has_href(token.raw(page)) { A_NAME } else { canonical_inline(id) };
                        b.add_descendant(d);
                    }
                } else {
                    self.close_block(id);
                    self.last_boundary = id;
                }
                if !tags::is_void(id) {
                    if !inline {
                        class_words(token.raw_bytes(page), &mut self.words);
                    }
                    self.stack.push(Open { tag: id, inline, words_end: self.words.len() as u32 });
                }
            }
            TokenKind::EndTag => {
                let id = token.tag;
                if id == tags::TITLE && self.in_title {
                    self.in_title = false;
                    self.title_done = true;
                }
                if self.mode.splits(id) {
                    self.close_block(id);
                    self.last_boundary = id;
                }
                let lo = self.stack.len().saturating_sub(MAX_UNWIND);
                if let Some(p) = self.stack[lo..].iter().rposition(|o| o.tag == id) {
                    let p = lo + p;
                    self.anchors -= self.stack[p..].iter().filter(|o| o.tag == tags::A).count() as u32;
                    self.stack.truncate(p);
                    self.words.truncate(self.stack.last().map_or(0, |o| o.words_end as usize));
                }
            }
            TokenKind::Word | TokenKind::Symbol => {
                if self.in_title {
                    if token.kind == TokenKind::Word {
                        let k = crate::gold::align::word_key(token.raw(page), token.has_entity, &mut self.key_buf);
                        if k != 0 {
                            self.title.push(k);
                        }
                    }
                    return;
                }
                if self.current.is_none() {
                    // A block needs a word (§5: "each block contains at least one <lex>");
                    // symbols alone (a lone "|" between links) start none.
                    if token.kind != TokenKind::Word {
                        return;
                    }
                    self.current = Some(self.open_block(index));
                }
                let anchored = self.anchors > 0;
                let b = self.current.as_mut().expect("opened above");
                b.last = index;
                if token.kind == TokenKind::Word {
                    b.words += 1;
                    b.anchor_words += u32::from(anchored);
                }
            }
        }
    }
}

/// Segments a whole page held as tokens (Gibson's blocks).
pub fn segment(page: &str, tokens: &[Token]) -> Segmenter {
    segment_with(page, tokens, BlockMode::Gibson)
}

/// Segments a whole page held as tokens with the given block definition.
pub fn segment_with(page: &str, tokens: &[Token], mode: BlockMode) -> Segmenter {
    let mut s = Segmenter::with_mode(mode);
    for t in tokens {
        s.token(page, t);
    }
    s.finish();
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::html::{Tokenizer, TokenizerOptions, tokenize};

    fn blocks_text(html: &str) -> Vec<String> {
        blocks_text_with(html, BlockMode::Gibson)
    }

    fn blocks_text_with(html: &str, mode: BlockMode) -> Vec<String> {
        let s = tokenize(html.as_bytes(), TokenizerOptions::default()).unwrap();
        let seg = segment_with(&s.page, &s.sink, mode);
        seg.blocks()
            .iter()
            .map(|b| {
                s.sink[b.first as usize..=b.last as usize]
                    .iter()
                    .filter(|t| !t.kind.is_tag())
                    .map(|t| t.raw(&s.page))
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .collect()
    }

    #[test]
    fn inline_tags_do_not_split_block_tags_do() {
        let got = blocks_text(
            "<html><head><title>The Title</title></head><body><div><p>One <b>bold</b> and <a href=x>link</a> \
             <span>span</span> <em>em</em>.</p><p>Two</p>x<br>y<table><tr><td>cell</td></tr></table></div></body>",
        );
        assert_eq!(got, ["One bold and link span em .", "Two", "x", "y", "cell"]);
    }

    #[test]
    fn context_of_a_block() {
        let html = "<html><head><title>Council votes</title></head><body><div id=main-story class=article>\
            <h1>Council votes</h1><img src=a.jpg><p>Caption <i>here</i> <a name=n>x</a></p>\
            <ul><li><a href=/a>Home</a> | <a href=/b>News</a></li></ul></div></body>";
        let s = tokenize(html.as_bytes(), TokenizerOptions::default()).unwrap();
        let seg = segment(&s.page, &s.sink);
        let b = seg.blocks();
        assert_eq!(b.len(), 3);
        let name = |id: u8| if id == NO_TAG { "-" } else { tags::tag_name(id) };
        assert_eq!((name(b[0].parent), name(b[0].grandparent)), ("h1", "div"));
        assert!(!b[0].after_image && b[1].after_image && !b[2].after_image);
        assert_eq!((name(b[1].prev_sibling), name(b[1].next_sibling)), ("p", "p"));
        assert!(b[1].has_descendant(tags::tag_id(b"em")) && b[1].has_descendant(A_NAME));
        assert!(!b[1].has_descendant(tags::A));
        assert_eq!((b[2].words, b[2].anchor_words), (2, 2));
        assert!(b[2].has_descendant(tags::A));
        assert_eq!(b[0].ancestor_words.len(), 3, "main, story, article");
        assert_eq!(seg.title_keys().len(), 2);
    }

    const MODE_PAGE: &str = "<html><head><title>The Title</title></head><body><div id=s><p>One <b>bold</b> \
        and <a href=x>link</a>.</p>x<br>y <img src=i.jpg> z <label>Name</label> <input name=q> after\
        <ul><li>Home <span>|</span> News</li></ul>tail <i>it</i></div></body>";

    #[test]
    fn gibson_mode_is_the_default_and_splits_at_img_and_label() {
        assert_eq!(Segmenter::new().mode(), BlockMode::Gibson);
        let want = ["One bold and link .", "x", "y", "z", "Name", "after", "Home | News", "tail it"];
        assert_eq!(blocks_text(MODE_PAGE), want);
        assert_eq!(blocks_text_with(MODE_PAGE, BlockMode::Gibson), want);
    }

    #[test]
    fn yao_mode_splits_only_at_block_level_elements_and_br() {
        let got = blocks_text_with(MODE_PAGE, BlockMode::Yao);
        // `img`, `label` and `input` are not block-level: "y … after" stays one block.
        assert_eq!(got, ["One bold and link .", "x", "y z Name after", "Home | News", "tail it"]);
    }

    #[test]
    fn text_tail_mode_splits_at_every_tag() {
        let got = blocks_text_with(MODE_PAGE, BlockMode::TextTail);
        // <b>'s text "bold", its tail "and", <a>'s text "link", …; a lone "|" (no word) is no unit.
        let want = ["One", "bold", "and", "link", "x", "y", "z", "Name", "after", "Home", "News", "tail", "it"];
        assert_eq!(got, want);
        // Context follows the element: "link" has parent `a` and counts as anchor words.
        let s = tokenize(MODE_PAGE.as_bytes(), TokenizerOptions::default()).unwrap();
        let seg = segment_with(&s.page, &s.sink, BlockMode::TextTail);
        let link = &seg.blocks()[3];
        assert_eq!((tags::tag_name(link.parent), link.words, link.anchor_words), ("a", 1, 1));
    }

    #[test]
    fn modes_parse_by_name() {
        for m in [BlockMode::Gibson, BlockMode::Yao, BlockMode::TextTail] {
            assert_eq!(BlockMode::parse(m.name()), Some(m));
        }
        assert_eq!(BlockMode::parse("ziegler"), None);
    }

    #[test]
    fn every_mode_gives_the_same_blocks_whatever_the_chunk_size() {
        for mode in [BlockMode::Gibson, BlockMode::Yao, BlockMode::TextTail] {
            let whole = {
                let s = tokenize(MODE_PAGE.as_bytes(), TokenizerOptions::default()).unwrap();
                segment_with(&s.page, &s.sink, mode).take_blocks()
            };
            assert!(!whole.is_empty());
            for size in 1..=48 {
                let mut t = Tokenizer::new(
                    Segmenter::with_mode(mode),
                    TokenizerOptions { sniff_bytes: 1, ..Default::default() },
                );
                for c in MODE_PAGE.as_bytes().chunks(size) {
                    t.write(c).unwrap();
                }
                let mut seg = t.end().unwrap().sink;
                seg.finish();
                assert_eq!(seg.take_blocks(), whole, "{mode:?} CHUNK_SIZE={size}");
            }
        }
    }

    #[test]
    fn same_blocks_whatever_the_chunk_size() {
        let html = "<html><head><title>T t</title></head><body><div class=a><p>Alpha <b>beta</b> gamma.</p>\
            <img src=x><p>Delta <a href=/e>epsilon</a></p><ul><li>zeta</li><li>eta <i>theta</i></li></ul>\
            <table><tr><td>iota</td><td>kappa &amp; lambda</td></tr></table></div></body></html>";
        let whole = {
            let s = tokenize(html.as_bytes(), TokenizerOptions::default()).unwrap();
            segment(&s.page, &s.sink).take_blocks()
        };
        assert_eq!(whole.len(), 6);
        for size in 1..=64 {
            let mut t = Tokenizer::new(Segmenter::new(), TokenizerOptions { sniff_bytes: 1, ..Default::default() });
            for c in html.as_bytes().chunks(size) {
                t.write(c).unwrap();
            }
            let mut seg = t.end().unwrap().sink;
            seg.finish();
            assert_eq!(seg.take_blocks(), whole, "CHUNK_SIZE={size}");
        }
    }
}
