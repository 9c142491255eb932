//! Merged text blocks and their eight features, after Ziegler & Skubacz (2007, §3.1–3.4).
//!
//! The paper rewrites the page before building a DOM: elements of Figure 2's *remove with
//! space* list (`br`, `p`, `div`, `li`, `h1`–`h6`, ...) and *remove without space* list (`a`,
//! `b`, `span`, `font`, ...) are dropped but their subtree is kept, and elements of the
//! *prune* list (`script`, `img`, `head`, `option`, ...) are dropped with their subtree. The
//! text nodes left are the merged text blocks; each records how many elements of each kind it
//! used to contain. On our flat token stream this is one pass: a block is a maximal run of
//! text tokens not separated by the start or end tag of an element that is in none of the
//! lists (`table`, `td`, `section`, `nav`, custom elements, ...), with pruned subtrees skipped.
//!
//! This file owns the element lists, the segmentation and the feature values; thresholds and
//! scores are [`super::thresholds`]'s, learning them is [`crate::methods::pso::train`]'s. It is kept apart
//! from any other block segmenter on purpose: the paper's merge rules are its own.

use std::collections::HashMap;
use std::sync::OnceLock;

use serde::{Deserialize, Serialize};

use crate::html::tags::{TAGS, TagId, UNKNOWN};
use crate::html::{Token, TokenKind, entities};

/// Number of block features.
pub const N_FEATURES: usize = 8;

/// Feature names, in the order of [`BlockFeatures::values`] and of a model's thresholds.
pub const FEATURE_NAMES: [&str; N_FEATURES] = [
    "avg_sentence_len",
    "sentences",
    "alnum_ratio",
    "stopword_ratio",
    "anchor_ratio",
    "format_ratio",
    "list_ratio",
    "structure_ratio",
];

/// For each feature, whether its threshold is a lower bound (content has *at least* this much)
/// or an upper bound, following each feature's hypothesis in §3.3–3.4: long sentences, many
/// sentences, letters and digits, stop words, formatting and structuring markup are signs of
/// content; anchors and list elements are signs of clutter.
pub const LOWER_BOUND: [bool; N_FEATURES] = [true, true, true, true, false, true, false, true];

/// Figure 2, *remove with space*. `H.L` in the paper's table is read as `h1`–`h6`.
const REMOVE_WITH_SPACE: &[&str] = &[
    "br", "caption", "center", "cite", "dd", "div", "dl", "dt", "frame", "frameset", "hr", "h1", "h2", "h3", "h4",
    "h5", "h6", "label", "li", "nobr", "ol", "p", "pre", "s", "samp", "u", "ul", "wbr", "xmp",
];
/// Figure 2, *remove without space*.
const REMOVE_WITHOUT_SPACE: &[&str] =
    &["a", "b", "big", "blink", "em", "font", "form", "i", "small", "span", "strike", "strong", "sub", "sup", "var"];
/// Figure 2, *pruning*. `cite`, `samp` and `frameset` are in two of the paper's columns; pruning
/// wins here, since it is the stronger operation and is applied to the DOM after removal.
/// `bgsound`, `comment` and `listing` are not in our tag vocabulary (they parse as unknown
/// elements); comments are dropped by the tokenizer anyway.
const PRUNE: &[&str] = &[
    "address", "applet", "area", "base", "bgsound", "button", "cite", "col", "colgroup", "comment", "del", "dir",
    "embed", "samp", "fieldset", "frameset", "head", "img", "input", "ins", "listing", "map", "option", "script",
    "style", "textarea",
];
/// §3.4 "format tags": font formatting markup (the paper names `b`, `em`, `small`).
const FORMAT: &[&str] =
    &["b", "big", "blink", "em", "font", "i", "small", "strike", "strong", "sub", "sup", "var", "u", "s", "tt"];
/// §3.4 "list elements": items of ordered, unordered and definition lists.
const LIST: &[&str] = &["li", "dt", "dd"];
/// §3.4 "text structuring": headlines, paragraph breaks and alignment blocks.
const STRUCTURE: &[&str] = &["p", "h1", "h2", "h3", "h4", "h5", "h6", "br", "hr", "pre", "center"];

const REMOVE_SPACE: u8 = 1;
const REMOVE_NO_SPACE: u8 = 2;
const PRUNED: u8 = 4;
const IS_FORMAT: u8 = 8;
const IS_LIST: u8 = 16;
const IS_STRUCTURE: u8 = 32;

const fn find_tag(name: &str) -> Option<usize> {
    let mut i = 1;
    while i < TAGS.len() {
        if crate::html::tags::const_str_eq(TAGS[i], name) {
            return Some(i);
        }
        i += 1;
    }
    None
}

const fn mark(t: &mut [u8; 256], names: &[&str], flag: u8) {
    let mut i = 0;
    while i < names.len() {
        if let Some(id) = find_tag(names[i]) {
            t[id] |= flag;
        }
        i += 1;
    }
}

const fn class_table() -> [u8; 256] {
    let mut t = [0u8; 256];
    mark(&mut t, REMOVE_WITH_SPACE, REMOVE_SPACE);
    mark(&mut t, REMOVE_WITHOUT_SPACE, REMOVE_NO_SPACE);
    mark(&mut t, PRUNE, PRUNED);
    mark(&mut t, FORMAT, IS_FORMAT);
    mark(&mut t, LIST, IS_LIST);
    mark(&mut t, STRUCTURE, IS_STRUCTURE);
    t
}

static CLASS: [u8; 256] = class_table();

fn tag(name: &str) -> TagId {
    find_tag(name).map_or(UNKNOWN, |i| i as TagId)
}

/// How blocks are cut, stored in the model header so a model is always applied with the
/// segmentation it was trained with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct BlockOptions {
    /// Treat `<div>` as a block boundary instead of removing it with a space (Figure 2).
    /// Default: off, the paper's lists. Today's pages nest everything in `<div>`s where 2007
    /// pages used tables, so the paper's rules can merge a whole page into one block; this
    /// switch is the one departure worth measuring (models/README.md).
    pub split_at_div: bool,
}

/// One merged text block.
#[derive(Debug, Clone, PartialEq)]
pub struct Block {
    /// First and last text token of the block (indices into the page's tokens, inclusive).
    pub first: u32,
    pub last: u32,
    pub features: BlockFeatures,
}

/// Raw counts of a block and the eight feature values derived from them.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct BlockFeatures {
    pub words: u32,
    pub sentences: u32,
    pub anchor_words: u32,
    pub alnum_chars: u32,
    pub chars: u32,
    /// Stop words of the best language, and that language's index in [`LANGUAGES`].
    pub stop_words: u32,
    pub language: u8,
    pub format_tags: u32,
    pub list_tags: u32,
    pub structure_tags: u32,
}

impl BlockFeatures {
    /// The eight features of §3.3–3.4, in [`FEATURE_NAMES`] order. Ratios are taken over all
    /// words of the block rather than over the *other* words (stop words vs non-stop words,
    /// anchored vs not anchored), which keeps them within 0..1 and finite for any block.
    pub fn values(&self) -> [f64; N_FEATURES] {
        let w = f64::from(self.words.max(1));
        let avg_len = if self.sentences == 0 { 0.0 } else { f64::from(self.words) / f64::from(self.sentences) };
        [
            avg_len,
            f64::from(self.sentences),
            if self.chars == 0 { 0.0 } else { f64::from(self.alnum_chars) / f64::from(self.chars) },
            f64::from(self.stop_words) / w,
            f64::from(self.anchor_words) / w,
            f64::from(self.format_tags) / w,
            f64::from(self.list_tags) / w,
            f64::from(self.structure_tags) / w,
        ]
    }
}

/// The 14 stop-word languages (ISO 639-1, lists from the `stop-words` crate's stopwords-iso
/// data). The paper does not name its 14; these are the ones of its benchmark (en, de, es,
/// fr, it) and the other large European languages.
pub const LANGUAGES: [&str; 14] = ["en", "de", "fr", "es", "it", "pt", "nl", "sv", "da", "no", "fi", "pl", "ru", "cs"];

/// Word (lower case) → bit set of the languages listing it as a stop word; built once.
fn stop_table() -> &'static HashMap<&'static str, u16> {
    static TABLE: OnceLock<HashMap<&'static str, u16>> = OnceLock::new();
    TABLE.get_or_init(|| {
        let mut m: HashMap<&'static str, u16> = HashMap::new();
        for (i, lang) in LANGUAGES.iter().enumerate() {
            for w in stop_words::lookup(lang).unwrap_or(&[]) {
                *m.entry(w).or_insert(0) |= 1 << i;
            }
        }
        m
    })
}

/// The result of segmenting one page; reused between pages to keep allocations per page.
#[derive(Debug, Default)]
pub struct Segmentation {
    pub blocks: Vec<Block>,
    /// For each token, the index of its block, or [`NO_BLOCK`] (tags, pruned text).
    pub block_of: Vec<u32>,
}

/// Marks a token outside every block.
pub const NO_BLOCK: u32 = u32::MAX;

/// Deepest pruned nesting tracked; deeper pruned elements are still pruned, their ends ignored.
const MAX_PRUNE_DEPTH: usize = 64;

/// Per-page scratch of the segmenter.
#[derive(Default)]
struct Acc {
    f: BlockFeatures,
    first: Option<u32>,
    last: u32,
    stop: [u32; 14],
    /// Words since the last sentence end.
    open_sentence: u32,
}

impl Acc {
    fn flush(&mut self, blocks: &mut Vec<Block>) {
        if let Some(first) = self.first.take() {
            let mut f = std::mem::take(&mut self.f);
            if self.open_sentence > 0 {
                f.sentences += 1;
            }
            let (lang, &n) = self.stop.iter().enumerate().max_by_key(|&(i, n)| (*n, std::cmp::Reverse(i))).unwrap();
            f.stop_words = n;
            f.language = lang as u8;
            blocks.push(Block { first, last: self.last, features: f });
        } else {
            // Tags seen since the last block that opened no text belong to no block.
            self.f = BlockFeatures::default();
        }
        self.stop = [0; 14];
        self.open_sentence = 0;
    }
}

/// True for a symbol that ends a sentence. The paper used GATE's and OpenNLP's sentence
/// splitters; counting terminal punctuation is the dependency-free approximation (an
/// abbreviation such as "Mr." counts as a sentence end).
fn ends_sentence(s: &str) -> bool {
    s.chars().any(|c| matches!(c, '.' | '!' | '?' | '。' | '！' | '？' | '…'))
}

/// Segments `tokens` of `page` into merged text blocks with their features.
pub fn segment(page: &str, tokens: &[Token], opts: &BlockOptions, out: &mut Segmentation) {
    out.blocks.clear();
    out.block_of.clear();
    out.block_of.resize(tokens.len(), NO_BLOCK);
    let stops = stop_table();
    let (a, div, option, select, datalist, head, body) =
        (tag("a"), tag("div"), tag("option"), tag("select"), tag("datalist"), tag("head"), tag("body"));
    let mut prune: Vec<TagId> = Vec::new();
    let mut pruned_beyond = 0usize;
    let mut anchor_depth = 0u32;
    let mut acc = Acc::default();
    let mut decoded = String::new();
    let mut lower = String::new();
    for (i, t) in tokens.iter().enumerate() {
        let class = CLASS[t.tag as usize];
        match t.kind {
            TokenKind::StartTag | TokenKind::EndTag if class & PRUNED != 0 => {
                if crate::html::tags::is_void(t.tag) {
                    continue;
                }
                if t.kind == TokenKind::StartTag {
                    // `<option>` closes an open `<option>` (HTML's implied end tag).
                    if t.tag == option && prune.last() == Some(&option) {
                        continue;
                    }
                    if prune.len() < MAX_PRUNE_DEPTH {
                        prune.push(t.tag);
                    } else {
                        pruned_beyond += 1;
                    }
                } else if pruned_beyond > 0 {
                    pruned_beyond -= 1;
                } else if let Some(p) = prune.iter().rposition(|&x| x == t.tag) {
                    prune.truncate(p);
                }
            }
            // Unclosed pruned elements must not swallow the page: `</select>` ends its options,
            // `<body>` ends the head.
            TokenKind::EndTag if (t.tag == select || t.tag == datalist) && prune.last() == Some(&option) => {
                prune.pop();
            }
            TokenKind::StartTag if t.tag == body => {
                if let Some(p) = prune.iter().position(|&x| x == head) {
                    prune.truncate(p);
                    pruned_beyond = 0;
                }
                acc.flush(&mut out.blocks);
            }
            _ if !prune.is_empty() || pruned_beyond > 0 => {}
            TokenKind::StartTag | TokenKind::EndTag => {
                let removed = class & (REMOVE_SPACE | REMOVE_NO_SPACE) != 0 && !(opts.split_at_div && t.tag == div);
                if t.tag == a {
                    anchor_depth = if t.kind == TokenKind::StartTag {
                        (anchor_depth + 1).min(8)
                    } else {
                        anchor_depth.saturating_sub(1)
                    };
                }
                if !removed {
                    acc.flush(&mut out.blocks);
                } else if t.kind == TokenKind::StartTag {
                    acc.f.format_tags += u32::from(class & IS_FORMAT != 0);
                    acc.f.list_tags += u32::from(class & IS_LIST != 0);
                    acc.f.structure_tags += u32::from(class & IS_STRUCTURE != 0);
                }
            }
            TokenKind::Word | TokenKind::Symbol => {
                let raw = t.raw(page);
                let text = entities::decoded(raw, t.has_entity, &mut decoded);
                let idx = out.blocks.len() as u32;
                out.block_of[i] = idx;
                acc.first.get_or_insert(i as u32);
                acc.last = i as u32;
                for c in text.chars() {
                    if !c.is_whitespace() {
                        acc.f.chars += 1;
                        acc.f.alnum_chars += u32::from(c.is_alphanumeric());
                    }
                }
                if t.kind == TokenKind::Word {
                    acc.f.words += 1;
                    acc.open_sentence += 1;
                    acc.f.anchor_words += u32::from(anchor_depth > 0);
                    lower.clear();
                    lower.extend(text.chars().flat_map(char::to_lowercase));
                    if let Some(&langs) = stops.get(lower.as_str()) {
                        for (l, n) in acc.stop.iter_mut().enumerate() {
                            *n += u32::from(langs >> l & 1);
                        }
                    }
                } else if acc.open_sentence > 0 && ends_sentence(text) {
                    acc.f.sentences += 1;
                    acc.open_sentence = 0;
                }
            }
        }
    }
    acc.flush(&mut out.blocks);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::html::{TokenizerOptions, tokenize};

    fn blocks(html: &str, opts: BlockOptions) -> (Vec<(String, BlockFeatures)>, Segmentation) {
        let s = tokenize(html.as_bytes(), TokenizerOptions::default()).unwrap();
        let mut seg = Segmentation::default();
        segment(&s.page, &s.sink, &opts, &mut seg);
        let texts = seg
            .blocks
            .iter()
            .enumerate()
            .map(|(b, blk)| {
                let words: Vec<&str> = s
                    .sink
                    .iter()
                    .enumerate()
                    .filter(|&(i, _)| seg.block_of[i] == b as u32)
                    .map(|(_, t)| t.raw(&s.page))
                    .collect();
                (words.join(" "), blk.features.clone())
            })
            .collect();
        (texts, seg)
    }

    const PAGE: &str = "<html><head><title>Site</title></head><body>\
        <table><tr><td><ul><li><a href=/>Home</a></li><li><a href=/w>World</a></li></ul></td>\
        <td><h1>Park to grow</h1><p>The council voted to expand the <a href=/p>park</a> on Tuesday. \
        Work starts in <b>May</b>!</p><p>It is said that the city will pay.</p>\
        <img src=x.png><script>var x = 1;</script></td></tr></table>\
        <select><option>One<option>Two</select><footer>© 2024 Example</footer></body></html>";

    #[test]
    fn blocks_merge_across_removed_elements_and_skip_pruned_ones() {
        let (b, _) = blocks(PAGE, BlockOptions::default());
        let texts: Vec<&str> = b.iter().map(|(t, _)| t.as_str()).collect();
        assert_eq!(
            texts,
            [
                "Home World",
                "Park to grow The council voted to expand the park on Tuesday . Work starts in May ! It is said that the city will pay .",
                "© 2024 Example",
            ]
        );
    }

    #[test]
    fn feature_values_of_a_written_page() {
        let (b, _) = blocks(PAGE, BlockOptions::default());
        let nav = &b[0].1;
        assert_eq!((nav.words, nav.anchor_words, nav.list_tags, nav.sentences), (2, 2, 2, 1));
        assert_eq!(nav.values()[4], 1.0);
        assert_eq!(nav.values()[6], 1.0);
        let art = &b[1].1;
        // 24 words; sentence ends after "Tuesday", "May", "pay"; the heading runs into the
        // first sentence since nothing ends it (the paper's merge does the same).
        assert_eq!(art.words, 24);
        assert_eq!(art.sentences, 3);
        assert_eq!(art.anchor_words, 1);
        assert_eq!(art.format_tags, 1);
        assert_eq!(art.structure_tags, 3); // h1, p, p
        assert_eq!(art.list_tags, 0);
        // 3 symbols (. ! .) among 110 non-space characters.
        let chars: u32 = "ParktogrowThecouncilvotedtoexpandtheparkonTuesday.WorkstartsinMay!Itissaidthatthecitywillpay."
            .chars()
            .count() as u32;
        assert_eq!((art.chars, art.alnum_chars), (chars, chars - 3));
        assert_eq!(LANGUAGES[art.language as usize], "en");
        let v = art.values();
        assert!((v[0] - 24.0 / 3.0).abs() < 1e-12);
        assert_eq!(v[1], 3.0);
        assert!((v[3] - f64::from(art.stop_words) / 24.0).abs() < 1e-12);
        // "to the on in it is that the will" and friends: the English list covers at least these.
        assert!(art.stop_words >= 9, "stop words {}", art.stop_words);
        assert!((v[5] - 1.0 / 24.0).abs() < 1e-12);
        assert!((v[7] - 3.0 / 24.0).abs() < 1e-12);
    }

    #[test]
    fn german_text_picks_german_stop_words() {
        let (b, _) = blocks(
            "<p>Der Rat hat am Dienstag beschlossen, dass die Stadt den Park erweitert und nicht verkauft.</p>",
            BlockOptions::default(),
        );
        assert_eq!(LANGUAGES[b[0].1.language as usize], "de");
    }

    #[test]
    fn split_at_div_cuts_blocks_at_divs() {
        let html = "<div>Menu one two</div><div><p>Body text here.</p></div>";
        let (paper, _) = blocks(html, BlockOptions::default());
        assert_eq!(paper.len(), 1);
        let (split, _) = blocks(html, BlockOptions { split_at_div: true });
        assert_eq!(split.len(), 2);
    }

    #[test]
    fn unclosed_pruned_elements_do_not_swallow_the_page() {
        let (b, _) = blocks(
            "<head><title>T</title><body><p>Kept text.</p><button>x<table><td>also kept",
            BlockOptions::default(),
        );
        assert_eq!(b.len(), 1, "{b:?}");
        assert_eq!(b[0].0, "Kept text .");
    }
}
