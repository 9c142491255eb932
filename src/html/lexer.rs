//! The HTML lexer under [`super::tokenizer`]: decoded page bytes in, lexemes out (start tags,
//! end tags, text runs and the markup that is neither: comments, doctypes, CDATA markers).
//!
//! It implements the tokenization states of the HTML Living Standard (§13.2.5) that decide
//! *where* constructs begin and end: tag names and attributes (a quoted `>` does not end a tag),
//! comments with their abrupt forms (`<!-->`), bogus comments, doctypes, the RCDATA, RAWTEXT,
//! PLAINTEXT and script-data states with the script escape states (`<!-- <script> … </script>
//! -->` inside a script does not end it), and CDATA sections in foreign content. Which text
//! state follows a start tag is tree-construction feedback; like lol_html, which this lexer
//! replaced, we simulate it with a stack of namespaces (`<svg>`, `<math>`, their integration
//! points and the HTML tags that leave foreign content), so tags, text nodes and text types
//! agree with lol_html's: a proptest checks it against lol_html on generated markup, and the
//! extracted text of all 3,304 dataset pages stayed byte-identical. lol_html's handler
//! dispatch (element selectors, token objects) had cost more than the lexing: the tokenizer
//! went from about 300 to about 740 MB/s on the aeb+wcxb dev pages.
//!
//! Nothing is copied or allocated per lexeme: lexemes are byte ranges of the page. Input may
//! arrive in chunks; a construct cut by the end of the input so far is lexed again once more
//! input has come (the tokenizer waits until the unlexed tail has doubled, so a huge
//! unterminated comment costs linear time, not quadratic).

use crate::html::attrs::attrs;

/// How a text run was lexed. Script and raw text are code or unrendered markup, not words.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TextKind {
    Data,
    /// `<title>`, `<textarea>`: text with character references, no tags.
    RcData,
    /// `<style>`, `<iframe>`, `<xmp>`, `<noembed>`, `<noframes>`, `<noscript>`.
    RawText,
    ScriptData,
    /// Everything after `<plaintext>`.
    PlainText,
    /// `<![CDATA[…]]>` inside `<svg>` or `<math>`.
    CData,
}

/// One lexeme: byte ranges of the page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lexeme {
    /// `start..end` covers the whole tag; the name is `start + 1..name_end`.
    StartTag {
        start: usize,
        end: usize,
        name_end: usize,
        self_closing: bool,
    },
    /// The name is `start + 2..name_end`.
    EndTag {
        start: usize,
        end: usize,
        name_end: usize,
    },
    Text {
        start: usize,
        end: usize,
        kind: TextKind,
    },
    /// A comment, doctype, processing instruction, CDATA marker, `</>`, or a tag cut off by the
    /// end of the page: no token, but it ends the text node before it.
    Other {
        start: usize,
        end: usize,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ns {
    Html,
    Svg,
    MathMl,
}

/// The lexer's state between lexemes.
#[derive(Debug)]
pub struct Lexer {
    /// Start of the unlexed input.
    pub pos: usize,
    /// How the input at `pos` is lexed.
    mode: TextKind,
    /// What text lexed now is reported as. Equal to `mode` but after lol_html's quirk of
    /// `<script src=>` (a `>` where a value was due), which lexes data but reports script.
    kind: TextKind,
    /// Name of the element whose end tag ends RCDATA/RAWTEXT/script data.
    raw_name: &'static [u8],
    ns: Vec<Ns>,
    /// Recover from RCDATA/RAWTEXT that never ends, as lenient parsers do ([`Lexer::lenient`]).
    lenient: bool,
    /// The element that recovery just ended without its end tag ([`Lexer::take_recovered`]).
    recovered: Option<&'static [u8]>,
}

impl Default for Lexer {
    /// The HTML5 lexer of the standard (and of lol_html), with no recovery.
    fn default() -> Self {
        Lexer {
            pos: 0,
            mode: TextKind::Data,
            kind: TextKind::Data,
            raw_name: b"",
            ns: vec![Ns::Html],
            lenient: false,
            recovered: None,
        }
    }
}

/// A `<title>` whose text runs longer than this and holds a tag is taken as unclosed.
pub const MAX_TITLE_BYTES: usize = 4096;

/// The first `<` of `p[from..to]` that starts a tag (`<a`, `</a`): where lenient recovery ends
/// raw text.
fn first_tag_start(p: &[u8], from: usize, to: usize) -> Option<usize> {
    let mut i = from;
    while let Some(o) = memchr::memchr(b'<', &p[i..to]) {
        let lt = i + o;
        let next = p.get(lt + 1).copied().unwrap_or(b' ');
        let after = p.get(lt + 2).copied().unwrap_or(b' ');
        if next.is_ascii_alphabetic() || next == b'/' && after.is_ascii_alphabetic() {
            return Some(lt);
        }
        i = lt + 1;
    }
    None
}

#[inline]
fn is_ws(b: u8) -> bool {
    matches!(b, b' ' | b'\n' | b'\r' | b'\t' | b'\x0c')
}

/// Does `p[i..]` start with `lit` (ASCII case-insensitive)? `None`: too short to tell.
#[inline]
fn ahead(p: &[u8], i: usize, lit: &[u8]) -> Option<bool> {
    let rest = p.get(i..).unwrap_or_default();
    let n = rest.len().min(lit.len());
    if !rest[..n].eq_ignore_ascii_case(&lit[..n]) {
        Some(false)
    } else if n < lit.len() {
        None
    } else {
        Some(true)
    }
}

/// Outcome of scanning a construct that may run past the input so far.
enum Scan<T> {
    Done(T),
    /// Cut by the end of the input: lex again when more has come (or at the end of the page).
    Short,
}

struct TagEnd {
    end: usize,
    name_end: usize,
    self_closing: bool,
    /// lol_html leaves a tag whose `>` came where a value was due in the data state.
    to_data: bool,
}

/// A set of bytes as a table (a lookup instead of a chain of compares in the tag scanner).
const fn byte_set(bytes: &[u8]) -> [bool; 256] {
    let mut t = [false; 256];
    let mut i = 0;
    while i < bytes.len() {
        t[bytes[i] as usize] = true;
        i += 1;
    }
    t
}

/// Bytes that end a tag name, an attribute name, an unquoted value.
const TAG_NAME_END: [bool; 256] = byte_set(b" \n\r\t\x0c/>");
const ATTR_NAME_END: [bool; 256] = byte_set(b" \n\r\t\x0c/>=");
const UNQUOTED_END: [bool; 256] = byte_set(b" \n\r\t\x0c>");

/// The first index from `i` whose byte is in `end` (or `p.len()`).
#[inline]
fn skip_to(p: &[u8], mut i: usize, end: &[bool; 256]) -> usize {
    while let Some(&b) = p.get(i) {
        if end[usize::from(b)] {
            break;
        }
        i += 1;
    }
    i
}

/// The end of the tag whose name starts at `name_start` (tag name and attribute states).
fn scan_tag(p: &[u8], name_start: usize) -> Scan<TagEnd> {
    #[derive(Clone, Copy)]
    enum St {
        Name,
        BeforeAttr,
        AttrName,
        AfterAttrName,
        BeforeValue,
        Unquoted,
        SelfClosing,
    }
    let mut st = St::Name;
    let mut name_end = name_start;
    let mut i = name_start;
    let done = |end, name_end, self_closing, to_data| Scan::Done(TagEnd { end, name_end, self_closing, to_data });
    while let Some(&b) = p.get(i) {
        match st {
            St::Name => {
                if !TAG_NAME_END[usize::from(b)] {
                    // The rest of the name in a tight loop rather than a state dispatch a byte.
                    i = skip_to(p, i + 1, &TAG_NAME_END);
                    continue;
                }
                name_end = i;
                match b {
                    b'>' => return done(i + 1, name_end, false, false),
                    b'/' => st = St::SelfClosing,
                    _ => st = St::BeforeAttr,
                }
            }
            St::BeforeAttr => match b {
                b'/' => st = St::SelfClosing,
                b'>' => return done(i + 1, name_end, false, false),
                _ if is_ws(b) => {}
                _ => st = St::AttrName,
            },
            St::AttrName => match b {
                b'=' => st = St::BeforeValue,
                b'/' => st = St::SelfClosing,
                b'>' => return done(i + 1, name_end, false, false),
                _ if is_ws(b) => st = St::AfterAttrName,
                _ => {
                    i = skip_to(p, i + 1, &ATTR_NAME_END);
                    continue;
                }
            },
            St::AfterAttrName => match b {
                b'/' => st = St::SelfClosing,
                b'=' => st = St::BeforeValue,
                b'>' => return done(i + 1, name_end, false, false),
                _ if is_ws(b) => {}
                _ => st = St::AttrName,
            },
            St::BeforeValue => match b {
                b'"' | b'\'' => match memchr::memchr(b, &p[i + 1..]) {
                    Some(o) => {
                        i += o + 2;
                        st = St::BeforeAttr;
                        continue;
                    }
                    None => return Scan::Short,
                },
                b'>' => return done(i + 1, name_end, false, true),
                _ if is_ws(b) => {}
                _ => st = St::Unquoted,
            },
            St::Unquoted => match b {
                b'>' => return done(i + 1, name_end, false, false),
                _ if is_ws(b) => st = St::BeforeAttr,
                _ => {
                    i = skip_to(p, i + 1, &UNQUOTED_END);
                    continue;
                }
            },
            St::SelfClosing => {
                if b == b'>' {
                    return done(i + 1, name_end, true, false);
                }
                st = St::BeforeAttr;
                continue;
            }
        }
        i += 1;
    }
    Scan::Short
}

/// Is there an end tag `</name` followed by whitespace, `/` or `>` at `lt`?
#[inline]
fn end_tag_at(p: &[u8], lt: usize, name: &[u8]) -> Option<bool> {
    if !ahead(p, lt, b"</")? || !ahead(p, lt + 2, name)? {
        return Some(false);
    }
    let b = *p.get(lt + 2 + name.len())?;
    Some(is_ws(b) || b == b'/' || b == b'>')
}

/// Where the RCDATA or RAWTEXT of element `name` ends: the `<` of its end tag.
fn raw_end(p: &[u8], from: usize, name: &[u8], eof: bool) -> Scan<Option<usize>> {
    let mut i = from;
    while let Some(o) = memchr::memchr(b'<', &p[i..]) {
        let lt = i + o;
        match end_tag_at(p, lt, name) {
            Some(true) => return Scan::Done(Some(lt)),
            Some(false) => {}
            None if eof => {}
            None => return Scan::Short,
        }
        i = lt + 1;
    }
    if eof { Scan::Done(None) } else { Scan::Short }
}

/// Where script data ends (the `<` of `</script`), through the escape states: after `<!--`,
/// a `<script` opens a double-escaped part in which `</script>` does not end the script.
fn script_end(p: &[u8], from: usize, eof: bool) -> Scan<Option<usize>> {
    #[derive(Clone, Copy, PartialEq, Eq)]
    enum St {
        Data,
        Escaped,
        EscapedDashDash,
        Double,
        DoubleDashDash,
    }
    macro_rules! look {
        ($e:expr) => {
            match $e {
                Some(v) => v,
                None if eof => false,
                None => return Scan::Short,
            }
        };
    }
    let mut st = St::Data;
    let mut i = from;
    loop {
        // A `<` in the escaped states: where it leads.
        let mut lt_at = None;
        match st {
            St::Data => {
                let Some(o) = memchr::memchr(b'<', &p[i..]) else { break };
                let lt = i + o;
                if look!(end_tag_at(p, lt, b"script")) {
                    return Scan::Done(Some(lt));
                }
                if look!(ahead(p, lt + 1, b"!--")) {
                    st = St::EscapedDashDash;
                    i = lt + 4;
                } else {
                    i = lt + 1;
                }
            }
            St::Escaped | St::Double => {
                let Some(o) = memchr::memchr2(b'-', b'<', &p[i..]) else { break };
                let at = i + o;
                if p[at] == b'<' {
                    lt_at = Some(at);
                } else if look!(ahead(p, at + 1, b"-")) {
                    st = if st == St::Escaped { St::EscapedDashDash } else { St::DoubleDashDash };
                    i = at + 2;
                } else {
                    i = at + 1;
                }
            }
            St::EscapedDashDash | St::DoubleDashDash => {
                let Some(&b) = p.get(i) else { break };
                match b {
                    b'-' => i += 1,
                    b'<' => lt_at = Some(i),
                    b'>' => {
                        st = St::Data;
                        i += 1;
                    }
                    _ => {
                        st = if st == St::EscapedDashDash { St::Escaped } else { St::Double };
                        i += 1;
                    }
                }
            }
        }
        let Some(lt) = lt_at else { continue };
        if matches!(st, St::Escaped | St::EscapedDashDash) {
            if look!(end_tag_at(p, lt, b"script")) {
                return Scan::Done(Some(lt));
            }
            (st, i) = (St::Escaped, lt + 1);
            if look!(ahead(p, lt + 1, b"script")) {
                // Double-escaped only when the name ends there.
                match p.get(lt + 7) {
                    Some(&b) if is_ws(b) || b == b'/' || b == b'>' => (st, i) = (St::Double, lt + 8),
                    Some(_) => {}
                    None if eof => {}
                    None => return Scan::Short,
                }
            }
        } else if look!(end_tag_at(p, lt, b"script")) {
            (st, i) = (St::Escaped, lt + 9);
        } else {
            (st, i) = (St::Double, lt + 1);
        }
    }
    if eof { Scan::Done(None) } else { Scan::Short }
}

/// The text state a start tag of the HTML namespace switches to.
fn text_state_after(name: &[u8]) -> TextKind {
    const RAW: [&[u8]; 6] = [b"style", b"iframe", b"xmp", b"noembed", b"noframes", b"noscript"];
    if !(3..=9).contains(&name.len()) {
        return TextKind::Data;
    }
    let is = |lit: &[u8]| name.eq_ignore_ascii_case(lit);
    if is(b"title") || is(b"textarea") {
        TextKind::RcData
    } else if is(b"script") {
        TextKind::ScriptData
    } else if is(b"plaintext") {
        TextKind::PlainText
    } else if RAW.iter().any(|n| is(n)) {
        TextKind::RawText
    } else {
        TextKind::Data
    }
}

/// The element name whose end tag ends the text state `kind` entered at `name`.
fn static_name(name: &[u8]) -> &'static [u8] {
    const NAMES: [&[u8]; 10] = [
        b"title",
        b"textarea",
        b"script",
        b"plaintext",
        b"style",
        b"iframe",
        b"xmp",
        b"noembed",
        b"noframes",
        b"noscript",
    ];
    NAMES.iter().copied().find(|n| name.eq_ignore_ascii_case(n)).unwrap_or(b"")
}

fn one_of(name: &[u8], list: &[&[u8]]) -> bool {
    list.iter().any(|n| name.eq_ignore_ascii_case(n))
}

/// HTML start tags that end foreign content (§13.2.6.5).
const LEAVE_FOREIGN: &[&[u8]] = &[
    b"b",
    b"big",
    b"blockquote",
    b"body",
    b"br",
    b"center",
    b"code",
    b"dd",
    b"div",
    b"dl",
    b"dt",
    b"em",
    b"embed",
    b"h1",
    b"h2",
    b"h3",
    b"h4",
    b"h5",
    b"h6",
    b"head",
    b"hr",
    b"i",
    b"img",
    b"li",
    b"listing",
    b"menu",
    b"meta",
    b"nobr",
    b"ol",
    b"p",
    b"pre",
    b"ruby",
    b"s",
    b"small",
    b"span",
    b"strong",
    b"strike",
    b"sub",
    b"sup",
    b"table",
    b"tt",
    b"u",
    b"ul",
    b"var",
];
const MATHML_TEXT_POINTS: &[&[u8]] = &[b"mi", b"mo", b"mn", b"ms", b"mtext"];
const SVG_HTML_POINTS: &[&[u8]] = &[b"desc", b"title", b"foreignobject"];

impl Lexer {
    /// A lexer that recovers from broken markup as lenient parsers (libxml2, html5ever's
    /// tree builders in practice) do: an RCDATA or RAWTEXT element (`<title>`, `<textarea>`,
    /// `<style>`, `<xmp>` …) whose end tag never comes, or a `<title>` running past
    /// [`MAX_TITLE_BYTES`], ends at the first tag inside it, and the rest is read as markup.
    /// Without this, one unclosed `<title>` makes the whole page title text (§13.2.5.2
    /// RCDATA state). Pages whose raw text ends normally lex exactly as by [`Lexer::default`].
    pub fn lenient() -> Self {
        Lexer { lenient: true, ..Lexer::default() }
    }

    /// The element whose raw text recovery ended without an end tag, once, as the lexeme that
    /// follows it is returned: a consumer that waits for that end tag (to stop skipping a
    /// `<style>`) closes it here.
    pub fn take_recovered(&mut self) -> Option<&'static [u8]> {
        self.recovered.take()
    }

    /// Under lenient recovery, where broken raw text from `pos` ends: the first tag inside it,
    /// when its end tag never comes (`end` is `None` on a complete page) or a `<title>` runs
    /// past [`MAX_TITLE_BYTES`] to it. `None`: the raw text is not broken, or holds no tag.
    fn broken_raw_text(&self, p: &[u8], pos: usize, end: Option<usize>) -> Option<usize> {
        let broken = match end {
            None => true,
            Some(lt) => self.raw_name == b"title" && lt - pos > MAX_TITLE_BYTES,
        };
        if !broken {
            return None;
        }
        first_tag_start(p, pos, end.unwrap_or(p.len()))
    }

    fn current(&self) -> Ns {
        *self.ns.last().unwrap_or(&Ns::Html)
    }

    fn leave_ns(&mut self) {
        if self.ns.len() > 1 {
            self.ns.pop();
        }
    }

    /// Tree-construction feedback for a start tag: the namespace stack, and the text state
    /// that follows in the HTML namespace.
    fn start_tag_feedback(&mut self, tag: &[u8], name_end: usize, self_closing: bool) -> TextKind {
        let name = &tag[1..name_end];
        if name.eq_ignore_ascii_case(b"svg") {
            self.ns.push(Ns::Svg);
        } else if name.eq_ignore_ascii_case(b"math") {
            self.ns.push(Ns::MathMl);
        } else if self.current() != Ns::Html {
            let ns = self.current();
            if one_of(name, LEAVE_FOREIGN) {
                self.leave_ns();
            } else if ns == Ns::Svg && one_of(name, SVG_HTML_POINTS)
                || ns == Ns::MathMl && one_of(name, MATHML_TEXT_POINTS)
            {
                if !self_closing {
                    self.ns.push(Ns::Html);
                }
            } else if name.eq_ignore_ascii_case(b"font") {
                if attrs(tag).any(|(n, _)| one_of(n, &[b"color", b"size", b"face"])) {
                    self.leave_ns();
                }
            } else if ns == Ns::MathMl
                && !self_closing
                && name.eq_ignore_ascii_case(b"annotation-xml")
                && attrs(tag).any(|(n, v)| {
                    n.eq_ignore_ascii_case(b"encoding")
                        && one_of(v.unwrap_or_default(), &[b"text/html", b"application/xhtml+xml"])
                })
            {
                self.ns.push(Ns::Html);
            }
        } else {
            return text_state_after(name);
        }
        TextKind::Data
    }

    fn end_tag_feedback(&mut self, name: &[u8]) {
        let ns = self.current();
        if ns == Ns::Html {
            let Some(&prev) = self.ns.len().checked_sub(2).and_then(|i| self.ns.get(i)) else { return };
            if prev == Ns::MathMl && one_of(name, MATHML_TEXT_POINTS)
                || prev == Ns::Svg && one_of(name, SVG_HTML_POINTS)
                || prev == Ns::MathMl && name.eq_ignore_ascii_case(b"annotation-xml")
            {
                self.leave_ns();
            }
        } else if ns == Ns::Svg && name.eq_ignore_ascii_case(b"svg")
            || ns == Ns::MathMl && name.eq_ignore_ascii_case(b"math")
            || one_of(name, &[b"p", b"br"])
        {
            self.leave_ns();
        }
    }

    /// The next lexeme of `p[self.pos..]`; `None` when more input is needed (or, with `eof`,
    /// when the page is done).
    pub fn next(&mut self, p: &[u8], eof: bool) -> Option<Lexeme> {
        let pos = self.pos;
        if pos >= p.len() {
            return None;
        }
        let lexeme = match self.mode {
            TextKind::Data => self.data(p, pos, eof)?,
            TextKind::PlainText => Lexeme::Text { start: pos, end: p.len(), kind: self.kind },
            TextKind::CData => match memchr::memmem::find(&p[pos..], b"]]>") {
                Some(0) => {
                    self.mode = TextKind::Data;
                    self.kind = TextKind::Data;
                    Lexeme::Other { start: pos, end: pos + 3 }
                }
                Some(o) => Lexeme::Text { start: pos, end: pos + o, kind: self.kind },
                None if eof => Lexeme::Text { start: pos, end: p.len(), kind: self.kind },
                None => return None,
            },
            TextKind::RcData | TextKind::RawText | TextKind::ScriptData => {
                let found = if self.mode == TextKind::ScriptData {
                    script_end(p, pos, eof)
                } else {
                    raw_end(p, pos, self.raw_name, eof)
                };
                let cut = match found {
                    Scan::Done(end) if self.lenient && self.mode != TextKind::ScriptData => {
                        self.broken_raw_text(p, pos, end)
                    }
                    _ => None,
                };
                if let Some(cut) = cut {
                    // Recovery: the text before the first tag keeps its kind; from the tag on,
                    // the page is read as data again.
                    let text = Lexeme::Text { start: pos, end: cut, kind: self.kind };
                    self.mode = TextKind::Data;
                    self.kind = TextKind::Data;
                    self.recovered = Some(self.raw_name);
                    if cut > pos { text } else { self.data(p, pos, eof)? }
                } else {
                    match found {
                        Scan::Short => return None,
                        Scan::Done(None) => Lexeme::Text { start: pos, end: p.len(), kind: self.kind },
                        Scan::Done(Some(lt)) if lt > pos => Lexeme::Text { start: pos, end: lt, kind: self.kind },
                        Scan::Done(Some(lt)) => {
                            // The end tag itself.
                            match scan_tag(p, lt + 2) {
                                Scan::Done(t) => self.tag_lexeme(p, lt, t, false),
                                Scan::Short if eof => Lexeme::Other { start: lt, end: p.len() },
                                Scan::Short => return None,
                            }
                        }
                    }
                }
            }
        };
        self.pos = match lexeme {
            Lexeme::StartTag { end, .. }
            | Lexeme::EndTag { end, .. }
            | Lexeme::Text { end, .. }
            | Lexeme::Other { end, .. } => end,
        };
        Some(lexeme)
    }

    fn tag_lexeme(&mut self, p: &[u8], lt: usize, t: TagEnd, start: bool) -> Lexeme {
        // Any tag ends the special text states (§13.2.5; lol_html's `emit_tag`).
        self.mode = TextKind::Data;
        self.kind = TextKind::Data;
        if start {
            let kind = self.start_tag_feedback(&p[lt..t.end], t.name_end - lt, t.self_closing);
            self.kind = kind;
            self.mode = if t.to_data { TextKind::Data } else { kind };
            if kind != TextKind::Data {
                self.raw_name = static_name(&p[lt + 1..t.name_end]);
            }
            Lexeme::StartTag { start: lt, end: t.end, name_end: t.name_end, self_closing: t.self_closing }
        } else {
            self.end_tag_feedback(&p[lt + 2..t.name_end]);
            Lexeme::EndTag { start: lt, end: t.end, name_end: t.name_end }
        }
    }

    /// The data state: text up to the next `<`, or the markup that starts there.
    fn data(&mut self, p: &[u8], pos: usize, eof: bool) -> Option<Lexeme> {
        let kind = self.kind;
        let lt = match memchr::memchr(b'<', &p[pos..]) {
            Some(0) => pos,
            Some(o) => return Some(Lexeme::Text { start: pos, end: pos + o, kind }),
            None => return Some(Lexeme::Text { start: pos, end: p.len(), kind }),
        };
        let text = |end| Some(Lexeme::Text { start: lt, end, kind });
        let other = |end| Some(Lexeme::Other { start: lt, end });
        // Up to and including the first `>` from `from`: a bogus comment, doctype, `<?…>`.
        let to_gt = |from: usize| match memchr::memchr(b'>', p.get(from..).unwrap_or_default()) {
            Some(o) => other(from + o + 1),
            None if eof => other(p.len()),
            None => None,
        };
        let Some(&b1) = p.get(lt + 1) else { return if eof { text(lt + 1) } else { None } };
        match b1 {
            b'a'..=b'z' | b'A'..=b'Z' => match scan_tag(p, lt + 1) {
                Scan::Done(t) => Some(self.tag_lexeme(p, lt, t, true)),
                Scan::Short if eof => other(p.len()),
                Scan::Short => None,
            },
            b'/' => match p.get(lt + 2) {
                None if eof => text(lt + 2),
                None => None,
                Some(b'a'..=b'z' | b'A'..=b'Z') => match scan_tag(p, lt + 2) {
                    Scan::Done(t) => Some(self.tag_lexeme(p, lt, t, false)),
                    Scan::Short if eof => other(p.len()),
                    Scan::Short => None,
                },
                Some(b'>') => other(lt + 3),
                Some(_) => to_gt(lt + 2),
            },
            b'!' => {
                let decl = [b"--".as_slice(), b"doctype", b"[CDATA["];
                let mut short = false;
                for (k, lit) in decl.iter().enumerate() {
                    // CDATA is case-sensitive.
                    let hit = if k == 2 {
                        let rest = p.get(lt + 2..).unwrap_or_default();
                        let n = rest.len().min(lit.len());
                        if rest[..n] != lit[..n] {
                            Some(false)
                        } else if n < lit.len() {
                            None
                        } else {
                            Some(true)
                        }
                    } else {
                        ahead(p, lt + 2, lit)
                    };
                    match hit {
                        None => short = true,
                        Some(false) => {}
                        Some(true) => {
                            return match k {
                                0 => self.comment(p, lt, eof),
                                1 => to_gt(lt + 9),
                                _ if self.current() != Ns::Html => {
                                    self.mode = TextKind::CData;
                                    self.kind = TextKind::CData;
                                    other(lt + 9)
                                }
                                _ => to_gt(lt + 2),
                            };
                        }
                    }
                }
                if short && !eof { None } else { to_gt(lt + 2) }
            }
            b'?' => to_gt(lt + 2),
            _ => text(lt + 1),
        }
    }

    /// A comment from `<!--` at `lt`: it ends at the first `-->` (which may share the opening
    /// dashes: `<!-->`, `<!--->`) or `--!>`.
    fn comment(&mut self, p: &[u8], lt: usize, eof: bool) -> Option<Lexeme> {
        // `--!>` counts only before the first `-->`: searching the rest of the page for it
        // at every comment would make a page of many comments quadratic.
        let a = memchr::memmem::find(&p[lt + 2..], b"-->").map(|o| lt + 2 + o + 3);
        let upto = a.unwrap_or(p.len());
        let b = p.get(lt + 4..upto).and_then(|r| memchr::memmem::find(r, b"--!>")).map(|o| lt + 4 + o + 4);
        match b.or(a) {
            Some(end) => Some(Lexeme::Other { start: lt, end }),
            None if eof => Some(Lexeme::Other { start: lt, end: p.len() }),
            None => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Start tags `(start, end, self_closing)` and non-empty text nodes `(start, end, kind)`.
    type Outline = (Vec<(usize, usize, bool)>, Vec<(usize, usize, TextKind)>);

    fn ours(html: &[u8], chunk: usize) -> Outline {
        let mut lx = Lexer::default();
        let (mut tags, mut texts) = (Vec::new(), Vec::new());
        let mut node: Option<(usize, usize, TextKind)> = None;
        let flush = |node: &mut Option<(usize, usize, TextKind)>, texts: &mut Vec<_>| {
            if let Some(n) = node.take().filter(|n| n.1 > n.0) {
                texts.push(n);
            }
        };
        let mut len = 0;
        loop {
            len = (len + chunk).min(html.len());
            let eof = len == html.len();
            while let Some(l) = lx.next(&html[..len], eof) {
                match l {
                    Lexeme::Text { start, end, kind } => {
                        let s = node.map_or(start, |n| n.0);
                        node = Some((s, end, node.map_or(kind, |n| n.2)));
                    }
                    Lexeme::StartTag { start, end, self_closing, .. } => {
                        flush(&mut node, &mut texts);
                        tags.push((start, end, self_closing));
                    }
                    _ => flush(&mut node, &mut texts),
                }
            }
            if eof {
                flush(&mut node, &mut texts);
                return (tags, texts);
            }
        }
    }

    fn lol(html: &[u8]) -> Outline {
        use lol_html::html_content::TextType;
        use lol_html::{HtmlRewriter, Settings, doc_text, element};
        use std::cell::RefCell;
        let tags = RefCell::new(Vec::new());
        let texts = RefCell::new(Vec::new());
        let node = RefCell::new(None::<(usize, usize, TextKind)>);
        {
            let settings = Settings::new()
                .with_strict(false)
                .append_element_content_handler(element!("*", |el| {
                    let loc = el.source_location().bytes();
                    tags.borrow_mut().push((loc.start, loc.end, el.is_self_closing()));
                    Ok(())
                }))
                .append_document_content_handler(doc_text!(|t| {
                    let loc = t.source_location().bytes();
                    let kind = match t.text_type() {
                        TextType::Data => TextKind::Data,
                        TextType::RCData => TextKind::RcData,
                        TextType::RawText => TextKind::RawText,
                        TextType::ScriptData => TextKind::ScriptData,
                        TextType::PlainText => TextKind::PlainText,
                        TextType::CDataSection => TextKind::CData,
                    };
                    let mut n = node.borrow_mut();
                    let s = n.map_or(loc.start, |n| n.0);
                    *n = Some((s, loc.end, n.map_or(kind, |n| n.2)));
                    if t.last_in_text_node()
                        && let Some(x) = n.take().filter(|x| x.1 > x.0)
                    {
                        texts.borrow_mut().push(x);
                    }
                    Ok(())
                }));
            let mut rw = HtmlRewriter::new(settings, |_: &[u8]| {});
            rw.write(html).unwrap();
            rw.end().unwrap();
        }
        (tags.into_inner(), texts.into_inner())
    }

    const PARTS: &[&str] = &[
        "<p>",
        "</p>",
        "<div class=\"a>b\" id='c'>",
        "</div>",
        "Hello",
        " ",
        "wörld",
        "&amp;",
        "<!-- c -->",
        "<!-->",
        "<!--->",
        "<!-- a --!> b",
        "<!--",
        "-->",
        "--",
        "<script>",
        "</script>",
        "<script type=x>a<b",
        "<!--<script>",
        "</script >",
        "<SCRIPT>",
        "</Script>",
        "<style>p>a{}</style>",
        "<title>t &amp; u</title>",
        "<textarea>",
        "</textarea>",
        "<svg>",
        "</svg>",
        "<math>",
        "</math>",
        "<![CDATA[x<y]]>",
        "<foreignObject>",
        "</foreignObject>",
        "<mi>",
        "</mi>",
        "<font color=red>",
        "<b>",
        "<br/>",
        "<img src=x/>",
        "<input value=>",
        "<script src=>",
        "</ div>",
        "</>",
        "<?php x ?>",
        "<!DOCTYPE html>",
        "<!doctype",
        "<!x>",
        "< p>",
        "<3",
        "a<",
        "</x y=\">\">",
        "<noscript>",
        "</noscript>",
        "<iframe>",
        "</iframe>",
        "<xmp>",
        "</xmp>",
        "<plaintext>",
        "<a href=\"x\"/>",
        "<p/ class=x>",
        "<p a b = c>",
        "'",
        "\"",
        "=",
        "/",
        ">",
        "<",
        "-",
        "!",
        "\n",
        "</title",
        "<desc>",
        "</desc>",
        "<annotation-xml encoding=text/html>",
        "</annotation-xml>",
        "<template>",
        "</template>",
    ];

    #[test]
    fn lexes_what_html_makes_of_these() {
        let cases: &[(&str, Outline)] = &[
            // A quoted `>` is part of the attribute.
            ("<a title=\"x>y\">t</a>", (vec![(0, 15, false)], vec![(15, 16, TextKind::Data)])),
            // Abrupt comments end at once; `--!>` ends one too.
            (
                "<!-->a<!--->b<!-- x --!>c",
                (vec![], vec![(5, 6, TextKind::Data), (12, 13, TextKind::Data), (24, 25, TextKind::Data)]),
            ),
            // `</script>` inside an escaped `<script>` of a script does not end it.
            (
                "<script><!--<script>x</script>--></script>y",
                (vec![(0, 8, false)], vec![(8, 33, TextKind::ScriptData), (42, 43, TextKind::Data)]),
            ),
            // Inside <svg>, <style> is not raw text and CDATA is text.
            (
                "<svg><style>a<g>c</g></style><![CDATA[d<e]]></svg>",
                (
                    vec![(0, 5, false), (5, 12, false), (13, 16, false)],
                    vec![(12, 13, TextKind::Data), (16, 17, TextKind::Data), (38, 41, TextKind::CData)],
                ),
            ),
        ];
        for (html, want) in cases {
            assert_eq!(&ours(html.as_bytes(), html.len()), want, "{html}");
            assert_eq!(&lol(html.as_bytes()), want, "{html} (lol_html)");
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]
        /// Tags and text nodes, with their text types, as lol_html reports them, whatever the
        /// chunking of the input.
        #[test]
        fn agrees_with_lol_html(parts in prop::collection::vec(prop::sample::select(PARTS), 0..40), chunk in 1usize..64) {
            let html = parts.concat();
            let want = lol(html.as_bytes());
            prop_assert_eq!(&ours(html.as_bytes(), html.len().max(1)), &want, "{}", html);
            prop_assert_eq!(&ours(html.as_bytes(), chunk), &want, "{} in chunks of {}", html, chunk);
        }

        #[test]
        fn arbitrary_bytes_lex_to_the_end(bytes in prop::collection::vec(any::<u8>(), 0..300), chunk in 1usize..64) {
            let html = String::from_utf8_lossy(&bytes).into_owned();
            let whole = ours(html.as_bytes(), html.len().max(1));
            prop_assert_eq!(&ours(html.as_bytes(), chunk), &whole);
        }
    }
}
