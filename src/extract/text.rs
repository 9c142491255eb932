//! From the chosen token span to clean text: the paper's block cleaning rules (§4.2), the
//! `<HR>` constraint (§6.2.3) and the output layout (original spelling, whitespace collapsed,
//! paragraph breaks at block-level boundaries, lines kept inside `<pre>`).

use crate::html::entities;
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
}
