//! The tag vocabulary: every tag name maps to a small id, and each id carries the few
//! properties the extractor needs (void, block-level for text layout, content dropped).
//!
//! Pasternack & Roth (2009, §5.2) keep a list of "common" tags and map every other tag to a
//! generic `<UNKNOWN>`, which removes site-specific custom elements from the features. Our
//! list is the HTML Living Standard's elements plus the obsolete ones still seen in old
//! pages (`font`, `center`, `tt`, ...). Custom elements (`<news-element>`, `<amp-img>`) and
//! typos become [`UNKNOWN`].

/// A tag id: an index into [`TAGS`], or [`UNKNOWN`].
pub type TagId = u8;

/// Id of every tag not in the vocabulary.
pub const UNKNOWN: TagId = 0;

/// Tag names, sorted (index 0 is the `<UNKNOWN>` placeholder, kept first).
pub const TAGS: &[&str] = &[
    "<unknown>",
    "a",
    "abbr",
    "acronym",
    "address",
    "applet",
    "area",
    "article",
    "aside",
    "audio",
    "b",
    "base",
    "basefont",
    "bdi",
    "bdo",
    "big",
    "blink",
    "blockquote",
    "body",
    "br",
    "button",
    "canvas",
    "caption",
    "center",
    "cite",
    "code",
    "col",
    "colgroup",
    "data",
    "datalist",
    "dd",
    "del",
    "details",
    "dfn",
    "dialog",
    "dir",
    "div",
    "dl",
    "dt",
    "em",
    "embed",
    "fieldset",
    "figcaption",
    "figure",
    "font",
    "footer",
    "form",
    "frame",
    "frameset",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "head",
    "header",
    "hgroup",
    "hr",
    "html",
    "i",
    "iframe",
    "img",
    "input",
    "ins",
    "kbd",
    "label",
    "legend",
    "li",
    "link",
    "main",
    "map",
    "mark",
    "marquee",
    "menu",
    "meta",
    "meter",
    "nav",
    "nobr",
    "noembed",
    "noframes",
    "noscript",
    "object",
    "ol",
    "optgroup",
    "option",
    "output",
    "p",
    "param",
    "picture",
    "pre",
    "progress",
    "q",
    "rp",
    "rt",
    "ruby",
    "s",
    "samp",
    "script",
    "search",
    "section",
    "select",
    "slot",
    "small",
    "source",
    "span",
    "strike",
    "strong",
    "style",
    "sub",
    "summary",
    "sup",
    "svg",
    "table",
    "tbody",
    "td",
    "template",
    "textarea",
    "tfoot",
    "th",
    "thead",
    "time",
    "title",
    "tr",
    "track",
    "tt",
    "u",
    "ul",
    "var",
    "video",
    "wbr",
    "xmp",
];

/// Looks a tag name up, ASCII case-insensitively, without allocating: names are bucketed by
/// (length, first letter), and the name, lower-cased into one integer, is compared with the
/// bucket's names as integers (`h1` … `h6` share a bucket; comparing them byte by byte took
/// 3 % of a page's instructions).
pub fn tag_id(name: &[u8]) -> TagId {
    // Longest vocabulary name is 10 bytes; anything longer is unknown.
    if name.is_empty() || name.len() > 10 {
        return UNKNOWN;
    }
    let first = name[0].to_ascii_lowercase();
    if !first.is_ascii_lowercase() {
        return UNKNOWN;
    }
    let mut buf = [0u8; 16];
    buf[..name.len()].copy_from_slice(name);
    buf.make_ascii_lowercase();
    let key = u128::from_le_bytes(buf);
    let bucket = &BUCKETS[name.len()][(first - b'a') as usize];
    for &id in bucket.iter().take_while(|&&id| id != UNKNOWN) {
        if PACKED[id as usize] == key {
            return id;
        }
    }
    UNKNOWN
}

/// Each vocabulary name as [`tag_id`] packs it (byte `i` at bits `8i..8i+8`).
static PACKED: [u128; TAGS.len()] = {
    let mut p = [0u128; TAGS.len()];
    let mut i = 1;
    while i < TAGS.len() {
        let t = TAGS[i].as_bytes();
        let mut j = 0;
        while j < t.len() {
            p[i] |= (t[j] as u128) << (8 * j);
            j += 1;
        }
        i += 1;
    }
    p
};

/// Most names sharing a (length, first letter) bucket in [`TAGS`].
const BUCKET_WIDTH: usize = 10;

static BUCKETS: [[[TagId; BUCKET_WIDTH]; 26]; 11] = {
    let mut b = [[[UNKNOWN; BUCKET_WIDTH]; 26]; 11];
    let mut i = 1;
    while i < TAGS.len() {
        let t = TAGS[i].as_bytes();
        let slot = &mut b[t.len()][(t[0] - b'a') as usize];
        let mut j = 0;
        while slot[j] != UNKNOWN {
            j += 1;
        }
        slot[j] = i as TagId;
        i += 1;
    }
    b
};

/// The name of a tag id (`<unknown>` for [`UNKNOWN`]).
pub fn tag_name(id: TagId) -> &'static str {
    TAGS.get(id as usize).copied().unwrap_or(TAGS[0])
}

macro_rules! ids {
    ($($c:ident = $n:literal),* $(,)?) => {
        $(#[doc = concat!("Id of `<", $n, ">`.")] pub const $c: TagId = const_tag_id($n);)*
    };
}

/// `a == b` where a `const fn` needs it (tables and indices built at compile time).
pub const fn const_str_eq(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

const fn const_tag_id(name: &str) -> TagId {
    let mut i = 1;
    while i < TAGS.len() {
        if const_str_eq(TAGS[i], name) {
            return i as TagId;
        }
        i += 1;
    }
    panic!("tag not in vocabulary")
}

ids! {
    A = "a", APPLET = "applet", BR = "br", DIV = "div", EMBED = "embed", HR = "hr", IFRAME = "iframe",
    IMG = "img", LI = "li", NOSCRIPT = "noscript", OBJECT = "object", P = "p", PRE = "pre",
    SCRIPT = "script", STYLE = "style", TABLE = "table", TD = "td", TH = "th", TEMPLATE = "template",
    TITLE = "title", TEXTAREA = "textarea", SVG = "svg", BODY = "body", HEAD = "head",
    HTML = "html", META = "meta", LINK = "link", TIME = "time", H1 = "h1", ASIDE = "aside",
    FOOTER = "footer", ARTICLE = "article", MAIN = "main", SECTION = "section", H2 = "h2", H3 = "h3",
    H4 = "h4", H5 = "h5", H6 = "h6", FIGCAPTION = "figcaption", TR = "tr", DD = "dd", VIDEO = "video",
    AUDIO = "audio", CANVAS = "canvas", NAV = "nav",
}

/// `<h1>` … `<h6>`.
pub fn is_heading(id: TagId) -> bool {
    matches!(id, H1 | H2 | H3 | H4 | H5 | H6)
}

const fn props_table() -> [u8; 256] {
    let mut t = [0u8; 256];
    let void = [
        "area", "base", "basefont", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param", "source",
        "track", "wbr", "frame",
    ];
    let block = [
        "address",
        "article",
        "aside",
        "blockquote",
        "body",
        "br",
        "caption",
        "center",
        "dd",
        "details",
        "dialog",
        "dir",
        "div",
        "dl",
        "dt",
        "fieldset",
        "figcaption",
        "figure",
        "footer",
        "form",
        "frameset",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "header",
        "hgroup",
        "hr",
        "html",
        "legend",
        "li",
        "main",
        "menu",
        "nav",
        "ol",
        "p",
        "pre",
        "search",
        "section",
        "summary",
        "table",
        "tbody",
        "td",
        "tfoot",
        "th",
        "thead",
        "title",
        "tr",
        "ul",
        "option",
        "textarea",
        "select",
        "iframe",
    ];
    let skip = ["script", "style", "noscript", "template"];
    let mut i = 0;
    while i < void.len() {
        t[const_tag_id(void[i]) as usize] |= VOID;
        i += 1;
    }
    i = 0;
    while i < block.len() {
        t[const_tag_id(block[i]) as usize] |= BLOCK;
        i += 1;
    }
    i = 0;
    while i < skip.len() {
        t[const_tag_id(skip[i]) as usize] |= SKIP;
        i += 1;
    }
    t
}

const VOID: u8 = 1;
const BLOCK: u8 = 2;
const SKIP: u8 = 4;
static PROPS: [u8; 256] = props_table();

/// Void elements never have content or an end tag.
pub fn is_void(id: TagId) -> bool {
    PROPS[id as usize] & VOID != 0
}

/// Block-level elements end a paragraph in the output text.
pub fn is_block(id: TagId) -> bool {
    PROPS[id as usize] & BLOCK != 0
}

/// Elements whose content never is article text and is dropped by the tokenizer
/// (script, style, noscript, template).
pub fn is_skipped(id: TagId) -> bool {
    PROPS[id as usize] & SKIP != 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vocabulary_is_sorted_and_small() {
        assert!(TAGS[1..].windows(2).all(|w| w[0] < w[1]));
        assert!(TAGS.len() < 256);
        assert!(TAGS.iter().skip(1).all(|t| t.len() <= 10));
    }

    #[test]
    fn lookup_is_case_insensitive_and_maps_custom_tags_to_unknown() {
        assert_eq!(tag_name(tag_id(b"DIV")), "div");
        assert_eq!(tag_id(b"Div"), DIV);
        assert_eq!(tag_id(b"newselement"), UNKNOWN);
        assert_eq!(tag_id(b"amp-img"), UNKNOWN);
        assert_eq!(tag_id(b""), UNKNOWN);
        for (i, t) in TAGS.iter().enumerate().skip(1) {
            assert_eq!(tag_id(t.as_bytes()) as usize, i);
        }
    }

    proptest::proptest! {
        /// The packed lookup finds what comparing every vocabulary name would, for names of
        /// any case, length and bytes (digits, dashes, control bytes).
        #[test]
        fn lookup_equals_a_scan_of_the_vocabulary(name in proptest::collection::vec(proptest::prop_oneof![
            proptest::sample::select(b"aAbBdDhHiIlLpPsStTvV1236-_:\x01\x11\xc3".to_vec()),
            proptest::num::u8::ANY,
        ], 0..12)) {
            let scan = TAGS.iter().skip(1).position(|t| t.as_bytes().eq_ignore_ascii_case(&name)).map_or(UNKNOWN, |i| (i + 1) as TagId);
            proptest::prop_assert_eq!(tag_id(&name), scan);
        }

        /// Every vocabulary name in any mix of cases.
        #[test]
        fn names_are_found_in_any_case(i in 1..TAGS.len(), upper in proptest::collection::vec(proptest::bool::ANY, 10)) {
            let name: Vec<u8> = TAGS[i].bytes().zip(&upper).map(|(b, &u)| if u { b.to_ascii_uppercase() } else { b }).collect();
            proptest::prop_assert_eq!(tag_id(&name) as usize, i);
        }
    }

    #[test]
    fn properties() {
        assert!(is_void(BR) && is_block(BR));
        assert!(is_block(P) && !is_void(P));
        assert!(is_skipped(SCRIPT) && is_skipped(TEMPLATE) && !is_skipped(DIV));
        assert!(!is_block(A));
    }
}
