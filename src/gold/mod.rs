//! The gold side of labelled pages, below every method and the evaluation: gold text as
//! scored ([`gold_plain_text`], CleanEval's markers removed), gold words as the page
//! tokenizer splits them ([`gold_word_keys`]), the alignment of gold words with page tokens
//! that labels training pages ([`align`]), the filters of training pages ([`LabelOptions`],
//! [`SkipReason`]), and Ziegler & Skubacz's similarity ([`ziegler`]), which PSO maximises and
//! the evaluation reports. Every method's labels and the metrics read gold through here, so
//! they see the same words.

pub mod align;
pub mod ziegler;

use std::borrow::Cow;

use crate::html::{TokenKind, TokenizerOptions, tokenize};

/// Filters applied to training pages, with the paper's as a starting point.
#[derive(Debug, Clone, Copy)]
pub struct LabelOptions {
    /// Pages where fewer gold words than this share align are skipped (default 0.8).
    pub min_coverage: f64,
    /// Golds with fewer words are skipped (default 10; the paper used 50 words and symbols).
    pub min_gold_words: usize,
    /// Spans with more than this share of tags are skipped (default 0.8; the paper used 0.2
    /// on 2008 news pages, far too strict for today's markup).
    pub max_tag_ratio: f64,
}

impl Default for LabelOptions {
    fn default() -> Self {
        LabelOptions { min_coverage: 0.8, min_gold_words: 10, max_tag_ratio: 0.8 }
    }
}

/// Why a training page was not used.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SkipReason {
    Unreadable,
    ParseError,
    ShortGold,
    LowCoverage,
    TagHeavy,
}

impl SkipReason {
    pub fn as_str(self) -> &'static str {
        match self {
            SkipReason::Unreadable => "unreadable",
            SkipReason::ParseError => "parse_error",
            SkipReason::ShortGold => "short_gold",
            SkipReason::LowCoverage => "low_coverage",
            SkipReason::TagHeavy => "tag_heavy",
        }
    }
}

/// Splits plain text into word keys with the page tokenizer's own rules.
pub fn gold_word_keys(text: &str) -> Vec<u64> {
    let mut html = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        match c {
            '<' => html.push_str("&lt;"),
            '&' => html.push_str("&amp;"),
            _ => html.push(c),
        }
    }
    let Ok(s) = tokenize(html.as_bytes(), TokenizerOptions::default()) else { return Vec::new() };
    let mut buf = String::new();
    s.sink
        .iter()
        .filter(|t| t.kind == TokenKind::Word)
        .map(|t| align::word_key(t.raw(&s.page), t.has_entity, &mut buf))
        .filter(|&k| k != 0)
        .collect()
}

/// Gold text as scored: CleanEval-format golds (first line `URL: ...`, `<p>`/`<h>`/`<l>`
/// markers) lose that line and the markers; any other gold is used as given.
pub fn gold_plain_text(text: &str) -> Cow<'_, str> {
    let trimmed = text.trim_start();
    if !trimmed.starts_with("URL:") {
        return Cow::Borrowed(text);
    }
    let rest = match trimmed.find('\n') {
        Some(i) => &trimmed[i + 1..],
        None => "",
    };
    // Replace every <p>, <h>, <l> (any case) by a newline.
    let mut out = String::with_capacity(rest.len());
    let b = rest.as_bytes();
    let mut i = 0;
    let mut last = 0;
    while i + 3 <= b.len() {
        if b[i] == b'<' && matches!(b[i + 1].to_ascii_lowercase(), b'p' | b'h' | b'l') && b[i + 2] == b'>' {
            out.push_str(&rest[last..i]);
            out.push('\n');
            i += 3;
            last = i;
        } else {
            i += 1;
        }
    }
    out.push_str(&rest[last..]);
    Cow::Owned(out)
}
