//! Elements, their text / tail units, the 41 features and the four classes of the memory-based
//! thesis (TiMBL news extraction, §4.1.3 "element-based annotation", chapter 5 "feature
//! construction", §4.2 classes). This file owns turning a segmented page into instances;
//! learning and classifying them is [`crate::methods::mbl::knn`]'s, token scores are
//! [`crate::methods::mbl::scorer`]'s.
//!
//! The thesis' instance is an lxml element; its class is the pair (class of `element.text`,
//! class of `element.tail`), one of title / heading / body / garbage each ("t+g", "b+b", …,
//! table 4.3). Our units are the [`BlockMode::TextTail`] blocks of the streaming
//! [`crate::segment::Segmenter`]; one pass over the page's tokens with an open-element stack maps each
//! unit to the slot it fills: after a start tag the text of that element, after an end tag
//! (or a void tag) its tail. Where this differs from lxml: a run of symbols without a word is
//! no unit (lxml keeps it); an end tag with no open element of its name is ignored, so the
//! following text continues the previous slot (lxml does the same) and a slot may then hold
//! two units; elements closed implicitly by an ancestor's end tag get no tail, and the
//! tree repairs of libxml2 (moving misnested `<table>` content, …) do not happen. Elements
//! whose content the tokenizer drops (`script`, `style`) are still elements, so they stay in
//! the tag window, as in the thesis' instance files.
//!
//! The 41 features, per element `e` (chapter 5, table 6.10's order):
//! - 1–11: tag of the elements `e-5 … e+5` in document order (start-tag order);
//! - 12–18: text length of `e-3 … e+3`; 19–25: tail length of `e-3 … e+3`;
//! - 26, 27: text, tail of `e` in upper case (more than 70 % of its letters upper case);
//! - 28–34: text of `e-3 … e+3` ends a sentence ("a dot, a question mark, exclamation mark,
//!   quotation mark etc."); 35–41: the same for tails.
//!
//! Discretisation: TiMBL's overlap metric treats every value as a symbol. The thesis gives raw
//! lengths, which only match exactly within one site; we bin lengths in characters into
//! ⌊log2⌋ classes (0, 1, 2–3, 4–7, …, capped at 2^15+) so neighbours from other sites can
//! match too. Positions before the first or after the last element take the value [`PAD`]
//! (the thesis' `#` in table 5.1). Every value fits a byte.

use crate::gold::gold_plain_text;
use crate::gold::{LabelOptions, SkipReason, gold_word_keys};
use crate::html::tags::{self, TagId};
use crate::html::{Token, TokenKind, TokenizerOptions, entities, tokenize};

use crate::segment::{Block, BlockMode, NO_TAG, segment_with};

/// Features per instance.
pub const N_FEATURES: usize = 41;
/// Value of a window position outside the page.
pub const PAD: u8 = 255;
/// Length bins: 0 for empty, then 1 + ⌊log2(chars)⌋ up to this.
pub const MAX_LEN_BIN: u8 = 16;
/// Share of upper-case letters above which a text is "in upper letters" (chapter 5: 70 %).
pub const UPPER_SHARE: f64 = 0.7;
/// Open elements searched for a matching end tag (as the segmenter: bounds pathological pages).
const MAX_UNWIND: usize = 256;

/// One instance's feature values.
pub type Features = [u8; N_FEATURES];

/// The four classes of a unit (§4.1.1), in the order of their codes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum Class {
    Title = 0,
    Heading = 1,
    Body = 2,
    Garbage = 3,
}

impl Class {
    pub const ALL: [Class; 4] = [Class::Title, Class::Heading, Class::Body, Class::Garbage];

    pub fn name(self) -> &'static str {
        match self {
            Class::Title => "title",
            Class::Heading => "heading",
            Class::Body => "body",
            Class::Garbage => "garbage",
        }
    }

    pub fn from_code(c: u8) -> Class {
        Class::ALL[(c & 3) as usize]
    }
}

/// Classes of an element: text class × 4 + tail class (16 codes; g+g = 15).
pub const N_PAIRS: usize = 16;

/// The pair code of (text class, tail class).
pub fn pair(text: Class, tail: Class) -> u8 {
    text as u8 * 4 + tail as u8
}

/// The text and tail classes of a pair code.
pub fn unpair(code: u8) -> (Class, Class) {
    (Class::from_code(code >> 2), Class::from_code(code))
}

/// What a slot (an element's text or tail) holds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Slot {
    /// Characters of its words and symbols, plus one between consecutive tokens.
    pub chars: u32,
    pub letters: u32,
    pub upper: u32,
    /// Its last token ends a sentence.
    pub dot: bool,
    /// Units in this slot (usually 0 or 1).
    pub units: u16,
}

impl Slot {
    fn is_upper(&self) -> bool {
        self.letters > 0 && f64::from(self.upper) > UPPER_SHARE * f64::from(self.letters)
    }
}

/// One element, in start-tag order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Element {
    pub tag: TagId,
    pub text: Slot,
    pub tail: Slot,
}

/// Where a unit sits: its element and whether it is the element's tail.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UnitPlace {
    pub element: u32,
    pub tail: bool,
    /// An `h1`–`h6` element was open when the unit started.
    pub in_heading: bool,
}

/// A page as the thesis' instances: its elements and where each unit sits. Reused between pages.
#[derive(Debug, Clone, Default)]
pub struct PageElements {
    pub elements: Vec<Element>,
    /// One per block (unit), in order.
    pub units: Vec<UnitPlace>,
    stack: Vec<u32>,
    buf: String,
}

fn is_heading(id: TagId) -> bool {
    matches!(tags::tag_name(id), "h1" | "h2" | "h3" | "h4" | "h5" | "h6")
}

/// Whether a token's text ends a sentence (chapter 5's "dot" feature).
fn ends_sentence(text: &str) -> bool {
    text.chars()
        .next_back()
        .is_some_and(|c| matches!(c, '.' | '!' | '?' | '…' | '"' | '\'' | '”' | '’' | '»' | '。' | '！' | '？'))
}

impl PageElements {
    /// Maps the [`crate::segment::BlockMode::TextTail`] `blocks` of `tokens` to elements, one pass.
    /// Text before any start tag belongs to a pseudo element with tag [`NO_TAG`].
    pub fn build(&mut self, page: &str, tokens: &[Token], blocks: &[Block]) {
        self.elements.clear();
        self.units.clear();
        self.stack.clear();
        let empty = Element { tag: NO_TAG, text: Slot::default(), tail: Slot::default() };
        self.elements.push(empty);
        let mut slot = (0u32, false);
        let mut headings = 0u32;
        let mut next_block = 0usize;
        for (i, t) in tokens.iter().enumerate() {
            match t.kind {
                TokenKind::StartTag => {
                    let e = self.elements.len() as u32;
                    self.elements.push(Element { tag: t.tag, ..empty });
                    if tags::is_void(t.tag) {
                        slot = (e, true);
                    } else {
                        self.stack.push(e);
                        headings += u32::from(is_heading(t.tag));
                        slot = (e, false);
                    }
                }
                TokenKind::EndTag => {
                    let lo = self.stack.len().saturating_sub(MAX_UNWIND);
                    let elements = &self.elements;
                    if let Some(p) = self.stack[lo..].iter().rposition(|&e| elements[e as usize].tag == t.tag) {
                        let p = lo + p;
                        slot = (self.stack[p], true);
                        for &e in &self.stack[p..] {
                            headings -= u32::from(is_heading(self.elements[e as usize].tag));
                        }
                        self.stack.truncate(p);
                    }
                }
                TokenKind::Word | TokenKind::Symbol => {
                    // Blocks hold no tags in text-tail mode, so a block is a run of text tokens.
                    while next_block < blocks.len() && (blocks[next_block].last as usize) < i {
                        next_block += 1;
                    }
                    let Some(b) = blocks.get(next_block).filter(|b| b.first as usize <= i) else {
                        continue;
                    };
                    let el = &mut self.elements[slot.0 as usize];
                    let s = if slot.1 { &mut el.tail } else { &mut el.text };
                    if b.first as usize == i {
                        s.units = s.units.saturating_add(1);
                        self.units.push(UnitPlace { element: slot.0, tail: slot.1, in_heading: headings > 0 });
                        if s.chars > 0 {
                            s.chars += 1;
                        }
                    } else {
                        s.chars += 1;
                    }
                    let raw = t.raw(page);
                    for c in raw.chars() {
                        s.chars += 1;
                        if c.is_alphabetic() {
                            s.letters += 1;
                            s.upper += u32::from(c.is_uppercase());
                        }
                    }
                    if b.last as usize == i {
                        s.dot = ends_sentence(entities::decoded(raw, t.has_entity, &mut self.buf));
                    }
                }
            }
        }
    }

    /// The 41 feature values of element `e`.
    pub fn features(&self, e: usize, out: &mut Features) {
        let n = self.elements.len() as isize;
        let at = |d: isize| {
            let j = e as isize + d;
            (0..n).contains(&j).then(|| &self.elements[j as usize])
        };
        for (k, d) in (-5..=5).enumerate() {
            out[k] = at(d).map_or(PAD, |x| x.tag);
        }
        for (k, d) in (-3..=3).enumerate() {
            let x = at(d);
            out[11 + k] = x.map_or(PAD, |x| len_bin(x.text.chars));
            out[18 + k] = x.map_or(PAD, |x| len_bin(x.tail.chars));
            out[27 + k] = x.map_or(PAD, |x| u8::from(x.text.dot));
            out[34 + k] = x.map_or(PAD, |x| u8::from(x.tail.dot));
        }
        let cur = &self.elements[e];
        out[25] = u8::from(cur.text.is_upper());
        out[26] = u8::from(cur.tail.is_upper());
    }

    /// Elements that hold at least one unit: the instances to classify (elements without text
    /// or tail are g+g by construction and only matter as window context).
    pub fn instances(&self) -> impl Iterator<Item = usize> + '_ {
        self.elements.iter().enumerate().filter(|(_, e)| e.text.units > 0 || e.tail.units > 0).map(|(i, _)| i)
    }
}

/// The length bin of a text of `chars` characters.
pub fn len_bin(chars: u32) -> u8 {
    if chars == 0 { 0 } else { (1 + chars.ilog2() as u8).min(MAX_LEN_BIN) }
}

/// Feature names, for reports (thesis numbering minus one).
pub fn feature_name(f: usize) -> String {
    match f {
        0..=10 => format!("tag[{:+}]", f as isize - 5),
        11..=17 => format!("text_len[{:+}]", f as isize - 14),
        18..=24 => format!("tail_len[{:+}]", f as isize - 21),
        25 => "text_upper".to_string(),
        26 => "tail_upper".to_string(),
        27..=33 => format!("text_dot[{:+}]", f as isize - 30),
        _ => format!("tail_dot[{:+}]", f as isize - 37),
    }
}

/// Unit classes from gold (the thesis annotated by hand; we derive them):
/// - **title**: the run of consecutive units whose words are (≥ 80 %) words of `gold.title`
///   and which covers the most of the gold title's distinct words (at least half; the earliest
///   run on ties). `<title>` itself is never a unit, so this is the headline in the page.
/// - **heading**: a unit inside an `h1`–`h6` element whose words align to the gold text (as
///   for body: the gold span's headings).
/// - **body**: at least `threshold` of the unit's words align to the gold text
///   ([`crate::segment::labels::aligned_tokens`]).
/// - **garbage**: everything else.
///
/// `aligned` marks the tokens aligned to the gold text; `title_keys` are the gold title's word
/// keys ([`crate::methods::nb::train::align::word_key`]).
pub fn unit_classes(
    page: &str,
    tokens: &[Token],
    blocks: &[Block],
    places: &[UnitPlace],
    aligned: &[bool],
    title_keys: &[u64],
    threshold: f64,
) -> Vec<Class> {
    let mut out = vec![Class::Garbage; blocks.len()];
    let mut buf = String::new();
    let title_set: std::collections::HashSet<u64> = title_keys.iter().copied().filter(|&k| k != 0).collect();
    let mut in_title = vec![false; blocks.len()];
    let mut unit_title_words: Vec<Vec<u64>> = vec![Vec::new(); blocks.len()];
    for (u, b) in blocks.iter().enumerate() {
        let range = b.first as usize..=b.last as usize;
        let (mut words, mut hits, mut title_hits) = (0u32, 0u32, 0u32);
        for (t, &a) in tokens[range.clone()].iter().zip(&aligned[range]) {
            if t.kind != TokenKind::Word {
                continue;
            }
            words += 1;
            hits += u32::from(a);
            if !title_set.is_empty() {
                let k = crate::gold::align::word_key(t.raw(page), t.has_entity, &mut buf);
                if title_set.contains(&k) {
                    title_hits += 1;
                    unit_title_words[u].push(k);
                }
            }
        }
        if words > 0 && f64::from(hits) >= threshold * f64::from(words) {
            out[u] = Class::Body;
        }
        in_title[u] = words > 0 && f64::from(title_hits) >= 0.8 * f64::from(words);
    }
    // Headings of the article are those its gold text contains: a heading element between the
    // first and last body unit but not in the gold is a sidebar's ("Related", "Most read").
    for (u, c) in out.iter_mut().enumerate() {
        if *c == Class::Body && places.get(u).is_some_and(|p| p.in_heading) {
            *c = Class::Heading;
        }
    }
    // The best run of title-like units.
    let mut best: Option<(usize, usize, usize)> = None; // (covered, start, end)
    let mut u = 0;
    while u < blocks.len() {
        if !in_title[u] {
            u += 1;
            continue;
        }
        let start = u;
        let mut seen: Vec<u64> = Vec::new();
        while u < blocks.len() && in_title[u] {
            seen.extend_from_slice(&unit_title_words[u]);
            u += 1;
        }
        seen.sort_unstable();
        seen.dedup();
        if best.is_none_or(|(c, _, _)| seen.len() > c) {
            best = Some((seen.len(), start, u));
        }
    }
    if let Some((covered, s, e)) = best
        && covered * 2 >= title_set.len()
        && covered > 0
    {
        out[s..e].iter_mut().for_each(|c| *c = Class::Title);
    }
    out
}

/// A page cut into text-tail units, with a gold class per unit.
pub struct LabelledUnits {
    pub page: String,
    pub tokens: Vec<Token>,
    pub blocks: Vec<Block>,
    pub elements: PageElements,
    pub classes: Vec<Class>,
    /// Share of gold words aligned to the page.
    pub coverage: f64,
}

impl LabelledUnits {
    /// The pair class of every element: each half takes the class of the unit in that slot
    /// (the most specific one, title before heading before body, when a slot holds two).
    pub fn element_pairs(&self) -> Vec<u8> {
        let mut text = vec![Class::Garbage; self.elements.elements.len()];
        let mut tail = text.clone();
        for (u, &c) in self.elements.units.iter().zip(&self.classes) {
            let slot = if u.tail { &mut tail[u.element as usize] } else { &mut text[u.element as usize] };
            *slot = (*slot).min(c);
        }
        text.iter().zip(&tail).map(|(&a, &b)| pair(a, b)).collect()
    }
}

/// Tokenizes and segments `html` into text-tail units and classes them from the gold text and
/// title ([`unit_classes`]); pages whose gold is short or barely found are skipped by reason, as
/// for the other learners.
pub fn label_units(
    html: &[u8],
    gold_text: &str,
    gold_title: Option<&str>,
    threshold: f64,
    opts: &LabelOptions,
) -> Result<LabelledUnits, SkipReason> {
    let gold = gold_word_keys(&gold_plain_text(gold_text));
    if gold.len() < opts.min_gold_words.max(1) {
        return Err(SkipReason::ShortGold);
    }
    let s = tokenize(html, TokenizerOptions::default()).map_err(|_| SkipReason::ParseError)?;
    let (aligned, hits) = crate::segment::labels::aligned_tokens(&s.page, &s.sink, &gold);
    let coverage = hits as f64 / gold.len() as f64;
    if coverage < opts.min_coverage {
        return Err(SkipReason::LowCoverage);
    }
    let blocks = segment_with(&s.page, &s.sink, BlockMode::TextTail).take_blocks();
    let mut elements = PageElements::default();
    elements.build(&s.page, &s.sink, &blocks);
    let title = gold_title.map(gold_word_keys).unwrap_or_default();
    let classes = unit_classes(&s.page, &s.sink, &blocks, &elements.units, &aligned, &title, threshold);
    Ok(LabelledUnits { page: s.page, tokens: s.sink, blocks, elements, classes, coverage })
}

#[cfg(test)]
mod tests {
    use super::*;

    const PAGE: &str = "<html><head><title>T</title></head><body><div><h1>BIG NEWS</h1>\
        <p>One <b>two</b> three.</p><br>tail words</div></body></html>";

    #[test]
    fn elements_and_features_by_hand() {
        let s = tokenize(PAGE.as_bytes(), TokenizerOptions::default()).unwrap();
        let seg = segment_with(&s.page, &s.sink, BlockMode::TextTail);
        let mut pe = PageElements::default();
        pe.build(&s.page, &s.sink, seg.blocks());
        let names: Vec<&str> =
            pe.elements.iter().map(|e| if e.tag == NO_TAG { "#" } else { tags::tag_name(e.tag) }).collect();
        assert_eq!(names, ["#", "html", "head", "title", "body", "div", "h1", "p", "b", "br"]);
        // Units: "BIG NEWS" (h1 text), "One" (p text), "two" (b text), "three ." (b tail),
        // "tail words" (br tail).
        let places: Vec<(u32, bool, bool)> = pe.units.iter().map(|p| (p.element, p.tail, p.in_heading)).collect();
        assert_eq!(
            places,
            [(6, false, true), (7, false, false), (8, false, false), (8, true, false), (9, true, false)]
        );
        let h1 = pe.elements[6];
        assert_eq!((h1.text.chars, h1.text.is_upper(), h1.text.dot), (8, true, false));
        let b = pe.elements[8];
        // "three" + " " + "." = 7 characters, ends a sentence.
        assert_eq!((b.text.chars, b.tail.chars, b.tail.dot), (3, 7, true));
        assert_eq!(pe.instances().collect::<Vec<_>>(), [6, 7, 8, 9]);
        let mut f = [0u8; N_FEATURES];
        pe.features(8, &mut f);
        let tag = |n: &[u8]| tags::tag_id(n);
        // Tag window: elements 3..=13 → title body div h1 p [b] br PAD PAD PAD PAD.
        assert_eq!(
            f[..11],
            [
                tag(b"title"),
                tag(b"body"),
                tag(b"div"),
                tag(b"h1"),
                tag(b"p"),
                tag(b"b"),
                tag(b"br"),
                PAD,
                PAD,
                PAD,
                PAD
            ]
        );
        // Text lengths of elements 5..=11: div 0, h1 8 → bin 4, p 3 → 2, b 3 → 2, br 0, PAD, PAD.
        assert_eq!(f[11..18], [0, 4, 2, 2, 0, PAD, PAD]);
        // Tail lengths: div 0, h1 0, p 0, b 7 → 3, br "tail words" 10 → 4.
        assert_eq!(f[18..25], [0, 0, 0, 3, 4, PAD, PAD]);
        assert_eq!(f[25..27], [0, 0]);
        assert_eq!(f[27..34], [0, 0, 0, 0, 0, PAD, PAD]);
        assert_eq!(f[34..41], [0, 0, 0, 1, 0, PAD, PAD]);
        pe.features(6, &mut f);
        assert_eq!((f[25], f[0]), (1, tag(b"html")));
    }

    #[test]
    fn length_bins() {
        assert_eq!([0, 1, 2, 3, 4, 7, 8, 1000].map(len_bin), [0, 1, 2, 2, 3, 3, 4, 10]);
        assert_eq!(len_bin(u32::MAX), MAX_LEN_BIN);
    }

    #[test]
    fn pairs_round_trip() {
        for t in Class::ALL {
            for u in Class::ALL {
                assert_eq!(unpair(pair(t, u)), (t, u));
            }
        }
        assert_eq!(pair(Class::Garbage, Class::Garbage), 15);
    }

    #[test]
    fn classes_from_gold() {
        let html = "<html><body><nav><a href=/>Home</a></nav><h1>Park to grow</h1><p>The council voted to \
            expand the park on Tuesday.</p><h2>Work</h2><p>Work starts in May, officials said.</p>\
            <div>Share this</div></body></html>";
        let s = tokenize(html.as_bytes(), TokenizerOptions::default()).unwrap();
        let seg = segment_with(&s.page, &s.sink, BlockMode::TextTail);
        let mut pe = PageElements::default();
        pe.build(&s.page, &s.sink, seg.blocks());
        let gold = crate::gold::gold_word_keys(
            "The council voted to expand the park on Tuesday.\n\nWork\n\nWork starts in May, officials said.",
        );
        let (aligned, _) = crate::segment::labels::aligned_tokens(&s.page, &s.sink, &gold);
        let title = crate::gold::gold_word_keys("Park to grow");
        let c = unit_classes(&s.page, &s.sink, seg.blocks(), &pe.units, &aligned, &title, 0.5);
        use Class::*;
        assert_eq!(c, [Garbage, Title, Body, Heading, Body, Garbage]);
    }
}
