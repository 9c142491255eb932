//! The attributes of a raw start tag (`<div id=a class="b c">`), read in one walk without
//! allocating: each name, and its value without quotes and with character references left as
//! written. Names and values are split as the HTML tokenizer splits them (§13.2.5.32–.39,
//! attribute name and value states): a name ends at whitespace, `/`, `>` or an `=` past its
//! first character; a quoted value at its closing quote, wherever `>` or whitespace fall
//! inside it; an unquoted one at whitespace or `>`. So `title="a class=b"` has no `class`
//! attribute. The lexer's foreign-content checks, the span filters, the features' id/class
//! words, metadata and the bootstrap's site names read start tags after the tokenizer; they
//! share this walk.

/// The attributes of a raw start tag, in order: `(name, value)`, the value `None` for a bare
/// attribute (`<div hidden>`). Names keep their case.
#[inline]
pub fn attrs(tag: &[u8]) -> Attrs<'_> {
    // Past `<` and the tag name.
    let i = tag.iter().position(|b| b.is_ascii_whitespace() || *b == b'/' || *b == b'>').unwrap_or(tag.len());
    Attrs { tag, i }
}

/// The value of the first attribute named `name` (ASCII case ignored) that has one.
pub fn value<'a>(tag: &'a [u8], name: &[u8]) -> Option<&'a [u8]> {
    attrs(tag).find_map(|(n, v)| v.filter(|_| n.eq_ignore_ascii_case(name)))
}

/// [`attrs`] of a tag held as text. The walk splits only at ASCII bytes, so every name and
/// value is a `str` of `tag`.
pub fn str_attrs(tag: &str) -> impl Iterator<Item = (&str, Option<&str>)> {
    let of = move |b: &[u8]| {
        let at = b.as_ptr() as usize - tag.as_ptr() as usize;
        tag.get(at..at + b.len()).unwrap_or_default()
    };
    attrs(tag.as_bytes()).map(move |(n, v)| (of(n), v.map(of)))
}

/// Iterator of [`attrs`].
#[derive(Debug, Clone)]
pub struct Attrs<'a> {
    tag: &'a [u8],
    i: usize,
}

impl<'a> Iterator for Attrs<'a> {
    type Item = (&'a [u8], Option<&'a [u8]>);

    // Inlined into each reader: the call cost as much as the walk of a short tag.
    #[inline(always)]
    fn next(&mut self) -> Option<Self::Item> {
        let (tag, end) = (self.tag, self.tag.len());
        let mut i = self.i;
        while i < end && (tag[i].is_ascii_whitespace() || tag[i] == b'/') {
            i += 1;
        }
        if i >= end || tag[i] == b'>' {
            self.i = end;
            return None;
        }
        // The name's first character may be `=` (§13.2.5.32, before attribute name state).
        let n = i;
        i += 1;
        while i < end && !tag[i].is_ascii_whitespace() && !matches!(tag[i], b'=' | b'>' | b'/') {
            i += 1;
        }
        let name = &tag[n..i];
        while i < end && tag[i].is_ascii_whitespace() {
            i += 1;
        }
        let mut value = None;
        if i < end && tag[i] == b'=' {
            i += 1;
            while i < end && tag[i].is_ascii_whitespace() {
                i += 1;
            }
            value = Some(match tag.get(i) {
                Some(&q @ (b'"' | b'\'')) => {
                    let vs = i + 1;
                    let ve = memchr::memchr(q, &tag[vs..]).map_or(end, |o| vs + o);
                    i = (ve + 1).min(end);
                    &tag[vs..ve]
                }
                _ => {
                    let vs = i;
                    while i < end && !tag[i].is_ascii_whitespace() && tag[i] != b'>' {
                        i += 1;
                    }
                    &tag[vs..i]
                }
            });
        }
        self.i = i;
        Some((name, value))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(tag: &str) -> Vec<(String, Option<String>)> {
        attrs(tag.as_bytes())
            .map(|(n, v)| {
                let s = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
                (s(n), v.map(s))
            })
            .collect()
    }

    #[test]
    fn names_and_values_as_the_tokenizer_splits_them() {
        let o = |v: &str| Some(v.to_string());
        assert_eq!(
            all(r#"<div id=main CLASS = 'a b' hidden data-x="p>q r" title="x class=y"/>"#),
            [
                ("id".into(), o("main")),
                ("CLASS".into(), o("a b")),
                ("hidden".into(), None),
                ("data-x".into(), o("p>q r")),
                ("title".into(), o("x class=y")),
            ]
        );
        assert_eq!(all("<p>"), []);
        assert_eq!(all("<br/>"), []);
        assert_eq!(all("<a href=\"unterminated"), [("href".into(), o("unterminated"))]);
        assert_eq!(all("<p =x y>"), [("=x".into(), None), ("y".into(), None)]);
        assert_eq!(value(br#"<a title="x class=y" class=z>"#, b"class"), Some(&b"z"[..]));
        assert_eq!(value(b"<div>", b"class"), None);
        assert_eq!(value(b"<div role role=MAIN>", b"role"), Some(&b"MAIN"[..]));
        assert_eq!(value(b"<div data-x=' role=main'>", b"role"), None);
        let t: Vec<_> = str_attrs("<p é=«x» title='ü ß'>").collect();
        assert_eq!(t, [("é", Some("«x»")), ("title", Some("ü ß"))]);
    }

    proptest::proptest! {
        /// Any bytes: the walk ends, each attribute takes at least one byte of the tag (no more
        /// attributes than bytes), and no name is empty.
        #[test]
        fn any_tag_is_walked_to_its_end(tag in proptest::collection::vec(proptest::sample::select(
            b"<div =\"' \t/>aIc".to_vec()), 0..60)) {
            let n = attrs(&tag).count();
            proptest::prop_assert!(n <= tag.len());
            for (name, _) in attrs(&tag) {
                proptest::prop_assert!(!name.is_empty());
            }
        }
    }
}
