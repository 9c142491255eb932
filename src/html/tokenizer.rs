//! The streaming tokenizer: page bytes in, a flat sequence of start tags, end tags, words and
//! symbols out, each with its byte span in the decoded page (Pasternack & Roth 2009, §5.2).
//!
//! [`super::lexer`] finds where tags, text runs, comments and the other constructs of HTML5
//! begin and end (and which text is script or raw text); this module turns them into the
//! paper's tokens. The decoded page is kept in one buffer and every token is a byte span of
//! it. Text is buffered to the end of each text node (by location, without copying) and split
//! into words and symbols there, decoding character references one at a time so spans keep
//! pointing at the source.
//!
//! Contents of script/style/noscript/template and comments are dropped. Normalisation for
//! features (stemming, numbers, unknown tags) is [`super::normalize`]'s job, not this one's:
//! a scorer that needs no normalised forms pays nothing for them.

use super::encoding::{DecodeSink, DecoderOptions, EncodingSource, StreamDecoder};
use super::entities::{self, Decoded};
use super::lexer::{Lexeme, Lexer, TextKind};
use super::tags::{self, TagId};

/// The four token kinds of the paper.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum TokenKind {
    StartTag = 0,
    EndTag = 1,
    Word = 2,
    Symbol = 3,
}

impl TokenKind {
    /// Tags (start or end) as opposed to text tokens.
    pub fn is_tag(self) -> bool {
        matches!(self, TokenKind::StartTag | TokenKind::EndTag)
    }
}

/// Whitespace seen before a token, for laying out output text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[repr(u8)]
pub enum Space {
    #[default]
    None = 0,
    Space = 1,
    /// A line break inside `<pre>`, where lines are kept.
    Newline = 2,
}

/// One token. `start..end` is its byte span in the decoded (UTF-8) page; for a tag it covers the
/// whole tag, for a word its raw text, which may contain character references.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Token {
    pub kind: TokenKind,
    /// The tag's id for tags ([`tags::UNKNOWN`] for custom elements); 0 for text tokens.
    pub tag: TagId,
    pub space: Space,
    /// The raw text contains a character reference (decode it for output or features).
    pub has_entity: bool,
    /// A number-like word (digits, possibly with `.`/`,` inside).
    pub numeric: bool,
    pub start: u32,
    pub end: u32,
}

impl Token {
    /// The token's raw text in the decoded page.
    pub fn raw<'a>(&self, page: &'a str) -> &'a str {
        &page[self.start as usize..self.end as usize]
    }

    /// [`raw`](Self::raw) as bytes, for hot paths: slicing bytes skips the check that the
    /// span falls on character boundaries (token spans always do).
    #[inline]
    pub fn raw_bytes<'a>(&self, page: &'a str) -> &'a [u8] {
        &page.as_bytes()[self.start as usize..self.end as usize]
    }
}

/// Receives tokens in document order. `page` is the decoded page so far; token spans index it.
pub trait TokenSink {
    fn token(&mut self, page: &str, token: &Token);
}

/// Limits and inputs of one tokenizer, with their defaults.
#[derive(Debug, Clone)]
pub struct TokenizerOptions {
    /// Charset from an HTTP `Content-Type`, if any (default none).
    pub http_charset: Option<String>,
    /// Bytes buffered before the encoding is chosen (default 16 KiB).
    pub sniff_bytes: usize,
    /// Expected page size, to size the page buffer once (default 0: grow as needed).
    pub size_hint: usize,
    /// Recover from raw text that never closes ([`crate::html::lexer::Lexer::lenient`]).
    /// Default off: the standard's reading, which training keeps so that the shipped model
    /// rebuilds byte for byte; the extractor turns it on from its own option (on by default).
    pub lenient_raw_text: bool,
}

impl Default for TokenizerOptions {
    fn default() -> Self {
        TokenizerOptions { http_charset: None, sniff_bytes: 16 * 1024, size_hint: 0, lenient_raw_text: false }
    }
}

/// Tokenizer failures. The page is then unusable; callers name the page.
#[derive(Debug, thiserror::Error)]
pub enum TokenizeError {
    #[error("page larger than 4 GiB")]
    TooLarge,
}

/// Tokenizer state: the page so far, the lexer, and what the paper's tokens need to know.
struct State<S> {
    sink: S,
    /// The decoded page so far.
    page: String,
    lexer: Lexer,
    /// Lex again once the page is this long: a construct cut by the end of the input is
    /// retried only when the unlexed tail has doubled, so rescans stay linear in the page.
    retry_at: usize,
    /// The text node being accumulated: its start, end so far, and whether it is dropped.
    text: Option<(usize, usize)>,
    text_skip: bool,
    /// Inside script/style/noscript/template: drop everything until the matching end tag.
    skip_depth: u32,
    pre_depth: u32,
    in_title: bool,
    title: Option<(usize, usize)>,
    /// Whitespace seen since the last text token.
    pending_space: Space,
    tokens: u64,
}

impl<S: TokenSink> State<S> {
    fn emit(&mut self, kind: TokenKind, tag: TagId, start: usize, end: usize, has_entity: bool, numeric: bool) {
        // Tags do not consume pending whitespace: in "foo <b>bar" the space belongs before "bar".
        let space = if kind.is_tag() { self.pending_space } else { std::mem::take(&mut self.pending_space) };
        let tok = Token { kind, tag, space, has_entity, numeric, start: start as u32, end: end as u32 };
        self.tokens += 1;
        self.sink.token(&self.page, &tok);
    }

    /// Lexes what can be lexed of the page so far (all of it with `eof`).
    fn pump(&mut self, eof: bool) {
        if !eof && self.page.len() < self.retry_at {
            return;
        }
        while let Some(l) = self.lexer.next(self.page.as_bytes(), eof) {
            // A `<style>` or `<noscript>` ended by recovery gets no end tag: stop skipping.
            if let Some(name) = self.lexer.take_recovered()
                && tags::is_skipped(tags::tag_id(name))
            {
                self.skip_depth = self.skip_depth.saturating_sub(1);
            }
            match l {
                Lexeme::Text { start, end, kind } => {
                    if self.text.is_none() {
                        self.text_skip =
                            matches!(kind, TextKind::ScriptData | TextKind::RawText) || self.skip_depth > 0;
                    }
                    let s = self.text.map_or(start, |t| t.0);
                    self.text = Some((s, end));
                }
                Lexeme::StartTag { start, end, name_end, self_closing } => {
                    self.flush_text();
                    let id = tags::tag_id(&self.page.as_bytes()[start + 1..name_end]);
                    self.start_tag(id, start, end, self_closing);
                }
                Lexeme::EndTag { start, end, name_end } => {
                    self.flush_text();
                    let id = tags::tag_id(&self.page.as_bytes()[start + 2..name_end]);
                    self.end_tag(id, start, end);
                }
                Lexeme::Other { .. } => self.flush_text(),
            }
        }
        if eof {
            self.flush_text();
        }
        let (len, pos) = (self.page.len(), self.lexer.pos);
        self.retry_at = len + (len - pos.min(len));
    }

    /// The text node ends: its words and symbols.
    fn flush_text(&mut self) {
        let Some((start, end)) = self.text.take() else { return };
        if !self.text_skip {
            if self.in_title && self.title.is_none() {
                self.title = Some((start, end));
            }
            self.words(start, end);
        }
    }

    fn end_tag(&mut self, id: TagId, start: usize, end: usize) {
        if tags::is_skipped(id) && self.skip_depth > 0 {
            self.skip_depth -= 1;
        } else if self.skip_depth > 0 {
            return;
        }
        if id == tags::PRE {
            self.pre_depth = self.pre_depth.saturating_sub(1);
        }
        if id == tags::TITLE {
            self.in_title = false;
        }
        self.emit(TokenKind::EndTag, id, start, end, false, false);
    }

    fn start_tag(&mut self, id: TagId, start: usize, end: usize, self_closing: bool) {
        if self.skip_depth > 0 {
            return;
        }
        self.emit(TokenKind::StartTag, id, start, end, false, false);
        if tags::is_void(id) || self_closing && !tags::is_skipped(id) {
            return;
        }
        if tags::is_skipped(id) {
            self.skip_depth += 1;
        } else if id == tags::PRE {
            self.pre_depth += 1;
        } else if id == tags::TITLE {
            self.in_title = true;
        }
    }

    /// Splits one text node into words and symbols.
    ///
    /// The hot loop of the whole extractor: ASCII bytes are classified by a table and word
    /// runs are scanned in a tight inner loop; only non-ASCII characters and `&` references
    /// take the slow path. Borrows are split so emitting needs no re-borrow of the page.
    fn words(&mut self, start: usize, end: usize) {
        let State { sink, page, pending_space, tokens, pre_depth, .. } = self;
        let page: &str = page;
        let bytes = &page.as_bytes()[..end];
        let pre = *pre_depth > 0;
        let mut pending = *pending_space;
        let mut emit = |pending: &mut Space, kind: TokenKind, s: usize, e: usize, has_entity: bool, numeric: bool| {
            let space = std::mem::take(pending);
            *tokens += 1;
            sink.token(page, &Token { kind, tag: 0, space, has_entity, numeric, start: s as u32, end: e as u32 });
        };
        let mut i = start;
        // Current word: start byte, whether it holds a reference, whether it is numeric so far.
        let mut word: Option<(usize, bool, bool)> = None;
        while i < end {
            let b = bytes[i];
            let ascii = ASCII_CLASS[b as usize];
            // Fast path: a run of ASCII letters/digits.
            if ascii == A_ALPHA || ascii == A_DIGIT {
                let ws = i;
                let mut num = ascii == A_DIGIT;
                i += 1;
                while i < end {
                    let c = ASCII_CLASS[bytes[i] as usize];
                    if c == A_ALPHA {
                        num = false;
                    } else if c != A_DIGIT {
                        break;
                    }
                    i += 1;
                }
                match &mut word {
                    Some((_, _, n)) => *n &= num,
                    None => word = Some((ws, false, num)),
                }
                continue;
            }
            // Classify the next character (or reference) and its byte length.
            let (class, len, entity) = match ascii {
                A_SPACE => (Class::Space, 1, false),
                A_NEWLINE => (Class::Newline, 1, false),
                A_AMP => match entities::decode_at(&bytes[i..end]) {
                    Some((Decoded::Char(c), len)) => (class_of(c), len, true),
                    Some((Decoded::Str(t), len)) => (t.chars().next().map_or(Class::Symbol, class_of), len, true),
                    None => (Class::Symbol, 1, false),
                },
                A_OTHER => {
                    let c = page[i..].chars().next().unwrap_or('\u{FFFD}');
                    (class_of(c), c.len_utf8(), false)
                }
                _ => (Class::Symbol, 1, false),
            };
            match class {
                Class::Alpha | Class::Digit => {
                    match &mut word {
                        Some((_, e, num)) => {
                            *e |= entity;
                            *num &= class == Class::Digit;
                        }
                        None => word = Some((i, entity, class == Class::Digit)),
                    }
                    i += len;
                    continue;
                }
                Class::Symbol if !entity && word.is_some() => {
                    // Keep "don't", "3.5" and "1,000" whole: an apostrophe between letters or a
                    // point/comma between digits joins the word when a word character follows.
                    let num = word.is_some_and(|w| w.2);
                    let jl = if b == b'\'' || (num && (b == b'.' || b == b',')) {
                        1
                    } else if !num && page[i..].starts_with('\u{2019}') {
                        3
                    } else {
                        0
                    };
                    if jl > 0 && i + jl < end {
                        let n = bytes[i + jl];
                        let ok = if num {
                            n.is_ascii_digit()
                        } else {
                            n.is_ascii_alphabetic()
                                || n >= 0x80 && page[i + jl..].chars().next().is_some_and(char::is_alphabetic)
                        };
                        if ok {
                            i += jl;
                            continue;
                        }
                    }
                }
                _ => {}
            }
            if let Some((ws, e, num)) = word.take() {
                emit(&mut pending, TokenKind::Word, ws, i, e, num);
            }
            match class {
                Class::Space => {
                    if pending == Space::None {
                        pending = Space::Space;
                    }
                }
                Class::Newline => {
                    pending = if pre || pending == Space::Newline { Space::Newline } else { Space::Space }
                }
                Class::Ideograph => emit(&mut pending, TokenKind::Word, i, i + len, entity, false),
                _ => emit(&mut pending, TokenKind::Symbol, i, i + len, entity, false),
            }
            i += len;
        }
        if let Some((ws, e, num)) = word {
            emit(&mut pending, TokenKind::Word, ws, end, e, num);
        }
        *pending_space = pending;
    }
}

const A_ALPHA: u8 = 0;
const A_DIGIT: u8 = 1;
const A_SPACE: u8 = 2;
const A_NEWLINE: u8 = 3;
const A_SYMBOL: u8 = 4;
const A_AMP: u8 = 5;
/// Non-ASCII lead or continuation byte: decode the character.
const A_OTHER: u8 = 6;

static ASCII_CLASS: [u8; 256] = {
    let mut t = [A_OTHER; 256];
    let mut b = 0;
    while b < 128 {
        t[b] = match b as u8 {
            b'a'..=b'z' | b'A'..=b'Z' => A_ALPHA,
            b'0'..=b'9' => A_DIGIT,
            b' ' | b'\t' | b'\r' | b'\x0c' => A_SPACE,
            b'\n' => A_NEWLINE,
            b'&' => A_AMP,
            _ => A_SYMBOL,
        };
        b += 1;
    }
    t
};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
enum Class {
    Alpha,
    Digit,
    /// Han, kana: written without spaces, so each character is a word of its own.
    Ideograph,
    Space,
    Newline,
    Symbol,
}

/// Characters below this are classified by a table (Latin, Greek, Cyrillic, Arabic, Indic
/// scripts, general punctuation, symbols): the chain of Unicode property lookups in
/// [`classify`] cost more per character than the rest of the word loop.
const CLASS_TABLE: usize = 0x3000;

static CLASSES: std::sync::LazyLock<Box<[Class]>> = std::sync::LazyLock::new(|| {
    (0..CLASS_TABLE as u32).map(|u| char::from_u32(u).map_or(Class::Symbol, classify)).collect()
});

/// Builds the class table now rather than on the first page (see [`crate::extract::Extractor::new`]).
pub fn warm_up() {
    std::sync::LazyLock::force(&CLASSES);
}

/// [`classify`], from the table where it covers `c`.
#[inline]
fn class_of(c: char) -> Class {
    match CLASSES.get(c as usize) {
        Some(&class) => class,
        None => classify(c),
    }
}

fn classify(c: char) -> Class {
    let u = c as u32;
    if (0x3040..=0x30FF).contains(&u)
        || (0x3400..=0x4DBF).contains(&u)
        || (0x4E00..=0x9FFF).contains(&u)
        || (0xF900..=0xFAFF).contains(&u)
        || (0x20000..=0x2FFFF).contains(&u)
    {
        Class::Ideograph
    } else if c.is_alphabetic() {
        Class::Alpha
    } else if c.is_numeric() {
        Class::Digit
    } else if c == '\n' {
        Class::Newline
    } else if c.is_whitespace() || c == '\u{200B}' || c == '\u{FEFF}' {
        Class::Space
    } else if is_mark(c) {
        // Combining marks belong to the word they follow.
        Class::Alpha
    } else {
        Class::Symbol
    }
}

fn is_mark(c: char) -> bool {
    matches!(c as u32, 0x0300..=0x036F | 0x0483..=0x0489 | 0x0591..=0x05C7 | 0x0610..=0x061A | 0x064B..=0x065F | 0x0900..=0x0DFF | 0x1AB0..=0x1AFF | 0x1DC0..=0x1DFF | 0x20D0..=0x20FF | 0xFE20..=0xFE2F)
}

/// Streaming tokenizer: [`write`](Self::write) page bytes in any chunk sizes, then
/// [`end`](Self::end); tokens go to the sink as soon as they are known.
pub struct Tokenizer<S: TokenSink> {
    state: State<S>,
    decoder: StreamDecoder,
    error: Option<TokenizeError>,
}

impl<S: TokenSink> Tokenizer<S> {
    pub fn new(sink: S, options: TokenizerOptions) -> Self {
        let state = State {
            sink,
            // Decoded UTF-8 is at most 3× the bytes of any legacy encoding; cap the guess. The
            // decoder asks for a little room beyond the bytes left (`encoding::PAGE_SLACK`):
            // without it, the last chunk of every page copied the whole page to grow it.
            page: String::with_capacity(options.size_hint.min(64 << 20) + crate::html::encoding::PAGE_SLACK),
            lexer: if options.lenient_raw_text { Lexer::lenient() } else { Lexer::default() },
            retry_at: 0,
            text: None,
            text_skip: false,
            skip_depth: 0,
            pre_depth: 0,
            in_title: false,
            title: None,
            pending_space: Space::None,
            tokens: 0,
        };
        let decoder =
            StreamDecoder::new(DecoderOptions { sniff_bytes: options.sniff_bytes, http_charset: options.http_charset });
        Tokenizer { state, decoder, error: None }
    }

    /// Feeds page bytes (any encoding; decided on the first `sniff_bytes`).
    pub fn write(&mut self, bytes: &[u8]) -> Result<(), TokenizeError> {
        let Tokenizer { state, decoder, error } = self;
        if let Some(e) = error.take() {
            return Err(e);
        }
        decoder.write(bytes, &mut Feed { state, error });
        match error.take() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// Finishes the page: flushes the decoder and lexes what was left for more input.
    pub fn end(mut self) -> Result<TokenizerSummary<S>, TokenizeError> {
        {
            let Tokenizer { state, decoder, error } = &mut self;
            decoder.end(&mut Feed { state, error });
            if let Some(e) = error.take() {
                return Err(e);
            }
        }
        let encoding = self.decoder.encoding();
        let mut state = self.state;
        state.pump(true);
        Ok(TokenizerSummary {
            title: state.title,
            tokens: state.tokens,
            encoding: encoding.map(|(e, s)| (e.name(), s)),
            page: state.page,
            sink: state.sink,
        })
    }
}

/// The decoder writes into the page itself and the lexer follows.
struct Feed<'a, S: TokenSink> {
    state: &'a mut State<S>,
    error: &'a mut Option<TokenizeError>,
}

impl<S: TokenSink> DecodeSink for Feed<'_, S> {
    fn text(&mut self, extra: usize) -> Option<&mut String> {
        if self.error.is_some() {
            return None;
        }
        // Token spans are u32 offsets.
        if self.state.page.len().saturating_add(extra) > u32::MAX as usize {
            *self.error = Some(TokenizeError::TooLarge);
            return None;
        }
        Some(&mut self.state.page)
    }

    fn appended(&mut self) {
        self.state.pump(false);
    }
}

/// What the tokenizer knows at the end of a page.
pub struct TokenizerSummary<S> {
    /// The decoded page; token spans index it.
    pub page: String,
    /// Span of the first `<title>` text.
    pub title: Option<(usize, usize)>,
    pub tokens: u64,
    /// The encoding used and where it came from.
    pub encoding: Option<(&'static str, EncodingSource)>,
    pub sink: S,
}

impl<S> TokenizerSummary<S> {
    /// The page title, references decoded and whitespace collapsed.
    pub fn title_text(&self) -> Option<String> {
        let (s, e) = self.title?;
        let mut raw = String::new();
        entities::decode_into(&self.page[s..e], &mut raw);
        let t = raw.split_whitespace().collect::<Vec<_>>().join(" ");
        (!t.is_empty()).then_some(t)
    }
}

/// Tokenizes a whole page at once, collecting the tokens.
pub fn tokenize(bytes: &[u8], options: TokenizerOptions) -> Result<TokenizerSummary<Vec<Token>>, TokenizeError> {
    let options = TokenizerOptions { size_hint: bytes.len(), ..options };
    let mut t = Tokenizer::new(Vec::with_capacity(bytes.len() / 6), options);
    t.write(bytes)?;
    t.end()
}

impl TokenSink for Vec<Token> {
    fn token(&mut self, _page: &str, token: &Token) {
        self.push(*token);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn the_class_table_agrees_with_classify() {
        for c in (0..CLASS_TABLE as u32 + 0x100).filter_map(char::from_u32) {
            assert_eq!(class_of(c), classify(c), "U+{:04X}", c as u32);
        }
    }

    /// A page whose size is known is decoded into one buffer, never grown (growing it copied
    /// the whole page once more at its last chunk), whole or fed in chunks.
    #[test]
    fn a_page_of_known_size_is_decoded_without_growing_its_buffer() {
        let html = format!("<html><body>{}</body></html>", "<p>Some words of text, é.</p>".repeat(4000));
        let s = tokenize(html.as_bytes(), TokenizerOptions::default()).unwrap();
        assert_eq!(s.page.capacity(), html.len() + crate::html::encoding::PAGE_SLACK);
        let options = TokenizerOptions { size_hint: html.len(), ..TokenizerOptions::default() };
        let mut t = Tokenizer::new(Vec::new(), options);
        for chunk in html.as_bytes().chunks(7000) {
            t.write(chunk).unwrap();
        }
        let s = t.end().unwrap();
        assert_eq!(s.page, html);
        assert_eq!(s.page.capacity(), html.len() + crate::html::encoding::PAGE_SLACK);
    }

    /// Tokens rendered as `<p>`, `</p>`, words and symbols as written.
    fn show(html: &[u8]) -> Vec<String> {
        show_with(html, false)
    }

    fn chunked(html: &[u8], size: usize) -> (String, Vec<Token>) {
        chunked_with(html, size, false)
    }

    fn chunked_with(html: &[u8], size: usize, lenient_raw_text: bool) -> (String, Vec<Token>) {
        // Decide the encoding at once so every chunk reaches lol_html as written.
        let options = TokenizerOptions { sniff_bytes: 1, lenient_raw_text, ..TokenizerOptions::default() };
        let mut t = Tokenizer::new(Vec::new(), options);
        for c in html.chunks(size.max(1)) {
            t.write(c).unwrap();
        }
        let s = t.end().unwrap();
        (s.page, s.sink)
    }

    #[test]
    fn tags_words_and_symbols() {
        assert_eq!(show(b"<p class=x>Hello, world!</p>"), ["<p>", "Hello", ",", "world", "!", "</p>"]);
        assert_eq!(
            show(b"<div><NewsElement>It's 3.5% of 1,000</newselement></DIV>"),
            ["<div>", "<<unknown>>", "It's", "3.5", "%", "of", "1,000", "</<unknown>>", "</div>"]
        );
    }

    #[test]
    fn every_end_tag_as_written_even_stray_or_unmatched() {
        // Unclosed <p>, a stray </span> and </b> closing across an open <i>.
        assert_eq!(
            show(b"<p>a<p>b</span><b><i>c</b>d</i>"),
            ["<p>", "a", "<p>", "b", "</span>", "<b>", "<i>", "c", "</b>", "d", "</i>"]
        );
    }

    #[test]
    fn scripts_styles_comments_and_templates_are_dropped() {
        let got = show(b"<!DOCTYPE html><script>var s = '</div>';</script><style>p{}</style><!-- </p> x --><noscript><p>no</p></noscript><template><b>t</b></template>ok");
        assert_eq!(
            got,
            [
                "<script>",
                "</script>",
                "<style>",
                "</style>",
                "<noscript>",
                "</noscript>",
                "<template>",
                "</template>",
                "ok"
            ]
        );
    }

    #[test]
    fn entities_decode_into_words_and_spans_stay_in_the_source() {
        let s =
            tokenize("<p>caf&eacute; &amp; th&#233;&nbsp;x 東京</p>".as_bytes(), TokenizerOptions::default()).unwrap();
        let words: Vec<_> =
            s.sink.iter().filter(|t| !t.kind.is_tag()).map(|t| (t.raw(&s.page), t.kind, t.has_entity)).collect();
        assert_eq!(
            words,
            [
                ("caf&eacute;", TokenKind::Word, true),
                ("&amp;", TokenKind::Symbol, true),
                ("th&#233;", TokenKind::Word, true),
                ("x", TokenKind::Word, false),
                ("東", TokenKind::Word, false),
                ("京", TokenKind::Word, false)
            ]
        );
    }

    #[test]
    fn title_is_captured() {
        let s = tokenize(b"<html><head><title> A &amp; B </title></head><body>x</body>", TokenizerOptions::default())
            .unwrap();
        assert_eq!(s.title_text().as_deref(), Some("A & B"));
    }

    #[test]
    fn unterminated_constructs_finish() {
        // What came before an unterminated construct is kept; the construct's own bytes are
        // dropped where the HTML standard makes them markup (a comment, a script, a tag), and
        // kept as text where it makes them text (a lone `<`, `</`, `&`).
        let cases: [(&[u8], &[&str]); 9] = [
            (b"<p>text <!-- never closed", &["<p>", "text"]),
            (b"<p>words <script>var a = 1; never closed", &["<p>", "words", "<script>"]),
            (b"<p>kept <div class=\"x", &["<p>", "kept"]),
            (b"<div class=\"x", &[]),
            (b"</", &["<", "/"]),
            (b"<", &["<"]),
            (b"&", &["&"]),
            (b"&#", &["&", "#"]),
            (b"", &[]),
        ];
        for (html, want) in cases {
            assert_eq!(show(html), want, "{:?}", String::from_utf8_lossy(html));
        }
    }

    fn show_with(html: &[u8], lenient_raw_text: bool) -> Vec<String> {
        let s = tokenize(html, TokenizerOptions { lenient_raw_text, ..TokenizerOptions::default() }).unwrap();
        s.sink
            .iter()
            .map(|t| match t.kind {
                TokenKind::StartTag => format!("<{}>", tags::tag_name(t.tag)),
                TokenKind::EndTag => format!("</{}>", tags::tag_name(t.tag)),
                _ => t.raw(&s.page).to_string(),
            })
            .collect()
    }

    #[test]
    fn an_unclosed_title_ends_at_the_first_tag_inside_it() {
        let page = b"<html><head><title>Town news</head><body><p>The mayor spoke.</p></body></html>";
        let lenient = show_with(page, true);
        assert!(lenient.contains(&"mayor".to_string()) && lenient.contains(&"<p>".to_string()), "{lenient:?}");
        let s = tokenize(page, TokenizerOptions { lenient_raw_text: true, ..TokenizerOptions::default() }).unwrap();
        assert_eq!(s.title_text().as_deref(), Some("Town news"));
        // HTML5 as written: the rest of the page is title text, one text node, no <p>.
        let strict = show_with(page, false);
        assert!(!strict.contains(&"<p>".to_string()), "{strict:?}");
    }

    #[test]
    fn unclosed_textarea_style_and_xmp_recover_too() {
        for open in ["<textarea>notes ", "<style>p{color:red} ", "<xmp>code "] {
            let page = format!("<body>{open}<div><p>Body text here.</p></div></body>");
            let lenient = show_with(page.as_bytes(), true);
            assert!(
                lenient.contains(&"<div>".to_string()) && lenient.contains(&"Body".to_string()),
                "{open}: {lenient:?}"
            );
            assert!(!show_with(page.as_bytes(), false).contains(&"<div>".to_string()), "{open}");
        }
    }

    #[test]
    fn a_title_running_kilobytes_into_markup_is_taken_as_unclosed() {
        let body = "<p>word word word</p>".repeat(300);
        let page = format!("<title>Headline<div>{body}</div></title><p>after</p>");
        let lenient = show_with(page.as_bytes(), true);
        assert!(lenient.iter().filter(|t| *t == "<p>").count() >= 300, "{}", lenient.len());
        // A long title with no tag in it is left alone, as is a textarea holding markup.
        let long = format!("<title>{}</title><p>x</p>", "t ".repeat(3000));
        assert_eq!(show_with(long.as_bytes(), true), show_with(long.as_bytes(), false));
        let area = format!("<textarea>{body}</textarea><p>x</p>");
        assert_eq!(show_with(area.as_bytes(), true), show_with(area.as_bytes(), false));
    }

    #[test]
    fn raw_text_that_closes_lexes_the_same_either_way() {
        let page = b"<html><head><title>A &amp; B</title><style>p{}</style></head><body><textarea>x<y</textarea><p>Hi</p></body>";
        assert_eq!(show_with(page, true), show_with(page, false));
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        /// Recovery is decided on whole information (the end tag found, or the end of the
        /// page), so it does not depend on where the page is split.
        #[test]
        fn recovery_does_not_depend_on_chunk_size(
            parts in prop::collection::vec(prop::sample::select(vec![
                "<p>", "</p>", "<title>", "</title>", "<textarea>", "</textarea>", "<style>", "</style>",
                "<xmp>", "Hello", " ", "<div>", "</div>", "a<b", "</ti", "<script>x</script>",
            ]), 0..60),
            size in 1usize..40,
        ) {
            let html = parts.concat();
            let whole = chunked_with(html.as_bytes(), html.len().max(1), true);
            let split = chunked_with(html.as_bytes(), size, true);
            prop_assert_eq!(&whole.0, &split.0, "CHUNK_SIZE={}", size);
            prop_assert_eq!(&whole.1, &split.1, "CHUNK_SIZE={}", size);
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        #[test]
        fn chunk_size_does_not_change_tokens(
            parts in prop::collection::vec(prop::sample::select(vec![
                "<p>", "</p>", "<div class=\"a b\">", "</div>", "Hello", " ", "wörld", "&amp;", "&eacute;", "<!-- c -->",
                "<script>x<y</script>", "<br/>", "</span>", "3.5", ",", "東京", "<pre>", "</pre>", "\n", "<title>t</title>",
            ]), 0..60),
            size in 1usize..40,
        ) {
            let html = parts.concat();
            let whole = chunked(html.as_bytes(), html.len().max(1));
            let split = chunked(html.as_bytes(), size);
            prop_assert_eq!(&whole.0, &split.0, "CHUNK_SIZE={}", size);
            prop_assert_eq!(&whole.1, &split.1, "CHUNK_SIZE={}", size);
        }
    }
}
