//! Baseline 1 of Pasternack & Roth (2009, §6.2.1), after Lin & Ho: the table cell (`<td>`,
//! `<th>`) or `<div>` with the most characters of text directly or transitively inside it is
//! the article. No model.
//!
//! Streaming: a running count of text characters and an open-element stack (unwound on end
//! tags as the feature [`crate::features::TagStack`] does) give each element's character count
//! when it closes; elements still open at the end of the page close there. Scores are emitted
//! at the end: +1 for every token of the winning element (its tags included), −1 elsewhere,
//! so the maximum subsequence is exactly that element. "Characters" are counted as the UTF-8
//! bytes of words and symbols as written (references undecoded), a cheap stand-in.

use crate::html::tags::{self, TagId};
use crate::html::{Token, TokenKind};
use crate::scoring::{PageScorer, Scorer};

/// Open elements searched for a matching end tag.
const MAX_UNWIND: usize = 256;

/// The largest-block scorer.
#[derive(Debug, Clone, Default)]
pub struct LargestBlockScorer;

/// Builds the scorer: no model.
pub(super) fn load(_: &'static str, _: Option<&std::path::Path>) -> Result<Box<dyn Scorer>, super::ScorerError> {
    Ok(Box::new(LargestBlockScorer))
}

impl Scorer for LargestBlockScorer {
    fn name(&self) -> &'static str {
        "largest-block"
    }

    fn model_id(&self) -> String {
        "largest-block(td,th,div)".to_string()
    }

    fn page_scorer(&self) -> Box<dyn PageScorer + '_> {
        Box::new(LargestBlockPage::default())
    }
}

#[derive(Debug, Default)]
struct LargestBlockPage {
    /// Open elements: tag, first token, characters before it.
    stack: Vec<(TagId, usize, u64)>,
    chars: u64,
    tokens: usize,
    /// Best element so far: characters, first and last token.
    best: Option<(u64, usize, usize)>,
}

impl LargestBlockPage {
    fn close(&mut self, tag: TagId, first: usize, before: u64, last: usize) {
        if tag == tags::DIV || tag == tags::TD || tag == tags::TH {
            let n = self.chars - before;
            if self.best.is_none_or(|(b, _, _)| n > b) {
                self.best = Some((n, first, last));
            }
        }
    }
}

impl PageScorer for LargestBlockPage {
    fn push(&mut self, _page: &str, token: &Token, _out: &mut dyn FnMut(f64)) {
        let i = self.tokens;
        self.tokens += 1;
        match token.kind {
            TokenKind::StartTag if !tags::is_void(token.tag) => self.stack.push((token.tag, i, self.chars)),
            TokenKind::StartTag => {}
            TokenKind::EndTag => {
                let lo = self.stack.len().saturating_sub(MAX_UNWIND);
                if let Some(p) = self.stack[lo..].iter().rposition(|e| e.0 == token.tag) {
                    while self.stack.len() > lo + p {
                        let (tag, first, before) = self.stack.pop().expect("non-empty");
                        self.close(tag, first, before, i);
                    }
                }
            }
            TokenKind::Word | TokenKind::Symbol => self.chars += u64::from(token.end - token.start),
        }
    }

    fn finish(&mut self, _page: &str, out: &mut dyn FnMut(f64)) {
        let last = self.tokens.saturating_sub(1);
        while let Some((tag, first, before)) = self.stack.pop() {
            self.close(tag, first, before, last);
        }
        for i in 0..self.tokens {
            let inside = self.best.is_some_and(|(_, f, l)| (f..=l).contains(&i));
            out(if inside { 1.0 } else { -1.0 });
        }
        *self = LargestBlockPage::default();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::html::{TokenizerOptions, tokenize};

    #[test]
    fn picks_the_cell_or_div_with_most_text() {
        let html = b"<body><div id=nav>Home News Sport</div><table><tr><td>short cell</td>\
            <td><p>The long article text is here and it goes on.</p><p>More text.</p></td></tr></table>\
            <div>footer</div></body>";
        let s = tokenize(html, TokenizerOptions::default()).unwrap();
        let mut p = LargestBlockScorer.page_scorer();
        let mut scores = Vec::new();
        for t in &s.sink {
            p.push(&s.page, t, &mut |x| scores.push(x));
        }
        p.finish(&s.page, &mut |x| scores.push(x));
        assert_eq!(scores.len(), s.sink.len());
        let kept: Vec<&str> = s
            .sink
            .iter()
            .zip(&scores)
            .filter(|(t, x)| **x > 0.0 && t.kind == TokenKind::Word)
            .map(|(t, _)| t.raw(&s.page))
            .collect();
        assert_eq!(kept.first(), Some(&"The"));
        assert_eq!(kept.last(), Some(&"text"));
        assert_eq!(kept.len(), 12);
    }
}
