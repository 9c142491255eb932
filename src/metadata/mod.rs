//! What a search index sorts and filters by besides the text: publication and modification
//! dates, language, authors, description, site name, canonical URL, image, sections and
//! keywords, and the best title. Read in the extractor's single streaming pass: while tokens
//! go by, [`Collector`] only notes the byte spans of the few tags that carry metadata
//! (`<html>`, `<meta>`, `<link>`, `<time>`, elements with `itemprop`, `<a rel=author>`, the
//! first `<h1>`) and of JSON-LD script bodies (the tokenizer keeps the decoded page, so no
//! second parse and no copy until the end); [`Collector::finish`] reads those spans into
//! [`Signals`]. [`resolve`] then decides each field from the signals, the extracted text,
//! the URL and a feed item, in a fixed order of trust: JSON-LD, then `<meta>` (OpenGraph,
//! `article:*`, Dublin Core, microdata), then `<time>`, then the URL, then dates written in
//! the text near the headline.

pub mod dates;
pub mod jsonld;
pub mod lang;

use std::borrow::Cow;
use std::sync::LazyLock;

use serde::{Deserialize, Serialize};

use crate::html::{Token, TokenKind, entities, tags};

/// Spans kept per page, so a hostile page cannot grow the collector without bound.
const MAX_TAGS: usize = 512;
const MAX_JSONLD: usize = 16;
/// Bytes of page text searched for a written date after the headline, and before it.
const TEXT_DATE_WINDOW: usize = 3000;
const TEXT_DATE_BEFORE: usize = 1500;
/// The longest run of text between tags that counts as a date line ([`date_line`]).
const DATE_LINE_CHARS: usize = 60;
/// How much text next to the headline is searched for a date with a two-digit year
/// (`02.12.19`): only the date line itself, as such triples further off are mostly not dates.
const SHORT_YEAR_CHARS: usize = 300;
/// Bytes of the page searched for any date when the page has no better source.
const PAGE_DATE_BYTES: usize = 128 << 10;
/// Dates kept from that search.
const MAX_PAGE_DATES: usize = 8;
/// Start tags kept whose attributes hold an ISO date.
const MAX_ATTR_DATE_TAGS: usize = 8;
/// `<abbr>` elements read for a date.
const MAX_ABBR_TAGS: usize = 16;
/// `<time>` elements read.
const MAX_TIME_TAGS: usize = 32;
/// Dates read from the page's markup (link paths, upload timestamps) when it has no other.
const MAX_MARKUP_DATES: usize = 64;
/// How much of a page the markup search reads: it runs on every page without a date (most
/// product and listing pages). On the dev dates set 256 KB gives the answers 1 MB gives
/// (a MediaWiki page's cache timestamp sits at 230 KB); 128 KB loses one.
const MARKUP_DATE_BYTES: usize = 256 << 10;

/// Fields about the article, in every record's `metadata` (and `extract --json`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ArticleMeta {
    /// Publication date, ISO 8601 (`2026-11-24`, or with time and offset where known).
    pub published: Option<String>,
    /// Last modification date, ISO 8601.
    pub modified: Option<String>,
    /// Where `published` came from: `json-ld`, `meta`, `time`, `url`, `text`, `attribute` (an
    /// ISO date in an element's attribute), `feed`, or `last-modified` (the HTTP header, when
    /// the page itself gives no date).
    pub date_source: Option<String>,
    /// Language of the text, ISO 639-1 (the declared language for short texts).
    pub lang: Option<String>,
    /// The identifier's confidence (0–1); null when the declared language was taken.
    pub lang_confidence: Option<f64>,
    pub authors: Vec<String>,
    pub description: Option<String>,
    pub site_name: Option<String>,
    pub canonical_url: Option<String>,
    pub image: Option<String>,
    /// Sections (JSON-LD `articleSection`, `article:section`).
    pub categories: Vec<String>,
    pub keywords: Vec<String>,
}

/// What one page's HTML says (before the URL, the text and a feed item are considered).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Signals {
    pub jsonld: jsonld::JsonLd,
    /// `<meta>` and microdata `itemprop` values: (lower-cased key, value), in page order.
    pub meta: Vec<(String, String)>,
    /// `datetime` of `<time>` elements: (value, marked as the publication date).
    pub times: Vec<(String, bool)>,
    pub canonical: Option<String>,
    pub html_lang: Option<String>,
    pub h1: Option<String>,
    pub author_links: Vec<String>,
    /// Names read from the start of elements whose class or id says byline or author.
    pub bylines: Vec<String>,
    /// Names of a "By Ann Lee and Bo Chan" line just after the headline.
    pub by_line: Vec<String>,
    /// A date written in the page text around the headline (or the article's start).
    pub text_date: Option<dates::Date>,
    /// A date on a line of its own ([`date_line`]) in or around the headline (or the
    /// article's start): a date line, where `text_date` may be a sentence's date.
    pub date_line: Option<dates::Date>,
    /// The first dates anywhere in the page (up to [`MAX_PAGE_DATES`]), looked for only when
    /// nothing above has one; the first not after the fetch is taken.
    pub page_dates: Vec<dates::Date>,
    /// ISO dates in attributes of any element (`datetime`, `title`, `content`, `data-*`: a
    /// "3 hours ago" label's `title="2020-09-20T14:20:02Z"`), in page order.
    pub attr_dates: Vec<dates::Date>,
    /// Dates of `<abbr>` elements: a `data-utime` (Unix seconds, Facebook's) or a date in the
    /// `title` (hAtom's `<abbr class="published" title="2020-09-20">`), in page order.
    pub abbr_dates: Vec<dates::Date>,
    /// Dates in the page's markup (`/2022/01/17/` in a link's path, a file named
    /// `20220125151957…`), looked for only when the page has no date anywhere else: the last
    /// resort before `Last-Modified`, as htmldate's timestamp search.
    pub markup_dates: Vec<dates::Date>,
    /// A date written just inside an element whose class or id says date (`class="date"`,
    /// `post-date`, `published`, `entry-meta` …).
    pub class_date: Option<dates::Date>,
}

impl Signals {
    fn meta(&self, keys: &[&str]) -> Option<&str> {
        keys.iter()
            .find_map(|k| self.meta.iter().find(|(mk, v)| mk == k && !v.trim().is_empty()).map(|(_, v)| v.trim()))
    }

    fn meta_all(&self, key: &str) -> impl Iterator<Item = &str> {
        self.meta.iter().filter(move |(k, _)| k == key).map(|(_, v)| v.trim()).filter(|v| !v.is_empty())
    }
}

/// A line opening with "By" (or its German, French, Spanish, Dutch form) and names of two to
/// four capitalised words, joined by commas, `and`, `und`, `&`, `et`, `y`, `en`; matched at
/// the start of its haystack only: [`by_line`] finds where such a line may start.
static BY_NAMES: LazyLock<regex::Regex> = LazyLock::new(|| {
    let name = r"\p{Lu}[\p{L}'.\-]+(?:\s+\p{Lu}[\p{L}'.\-]+){1,3}";
    let by = BY_WORDS.join("|");
    regex::Regex::new(&format!(r"^(?:{by})\s+({name}(?:\s*(?:,|and|und|&|et|y|en)\s*{name})*)")).expect("valid regex")
});

/// The words a "By" line opens with, for [`by_line`].
const BY_WORDS: [&str; 6] = ["By", "BY", "Von", "Par", "Por", "Door"];
static BY_SEARCH: LazyLock<aho_corasick::packed::Searcher> =
    LazyLock::new(|| aho_corasick::packed::Searcher::new(BY_WORDS).expect("a packed searcher for a few short words"));

/// The names of the first "By …" line in `text` ([`BY_NAMES`]): a word of [`BY_WORDS`] that
/// starts a word and is followed by a space. The regex runs only there; run over the whole
/// text, its lazy DFA rebuilt states for the Unicode letter classes on page after page (about
/// 1 % of all extraction time, on text that almost never has a "By" line).
fn by_line(text: &str) -> Option<Vec<String>> {
    let mut at = 0;
    while let Some(hit) = BY_SEARCH.find_in(text, aho_corasick::Span::from(at..text.len())) {
        let (start, end) = (hit.start(), hit.end());
        at = start + 1;
        if text[..start].chars().next_back().is_some_and(char::is_alphabetic)
            || !text[end..].starts_with(char::is_whitespace)
        {
            continue;
        }
        if let Some(c) = BY_NAMES.captures(&text[start..]) {
            return Some(byline_names(&c[1]));
        }
    }
    None
}

/// Builds the searchers and date patterns now rather than on the first page, so the first
/// page's extraction does not pay for compiling them (about 15 ms, mostly the date regexes).
pub fn warm_up() {
    LazyLock::force(&TAG_SEARCH);
    LazyLock::force(&BY_NAMES);
    LazyLock::force(&BY_SEARCH);
    dates::warm_up();
}

/// Notes metadata-bearing spans as tokens go by (the hot path: a table lookup per tag and one
/// SIMD multi-word search per start tag; no allocation until [`MAX_TAGS`] spans).
#[derive(Debug, Default)]
pub struct Collector {
    tags: Vec<(u32, u32)>,
    jsonld: Vec<(u32, u32)>,
    jsonld_open: Option<u32>,
    h1: Option<(u32, u32)>,
    h1_open: Option<u32>,
    author_links: Vec<(u32, u32)>,
    author_open: Option<u32>,
    /// Ends of start tags whose class or id names a date.
    date_elements: Vec<u32>,
    /// Ends of start tags whose class or id names a byline or an author (not `rel=author`).
    byline_elements: Vec<u32>,
    /// Start tags with an attribute value that starts as an ISO date (`="2020-`).
    attr_date_tags: Vec<(u32, u32)>,
    /// `<time>` start tags.
    time_tags: Vec<(u32, u32)>,
    /// `<abbr>` start tags with a `data-utime` or a `title` (Facebook's and hAtom's dates).
    abbr_tags: Vec<(u32, u32)>,
}

/// Does a start tag have a `class` or an `id` (where a searched word names the element, not
/// its text or a link)?
#[inline]
fn names_class_or_id(raw: &[u8]) -> bool {
    raw.windows(5).any(|w| w.eq_ignore_ascii_case(b"class")) || raw.windows(3).any(|w| w == b"id=")
}

/// What a start tag's bytes say to the collector, found in one pass (see [`TagMarks::of`]).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
struct TagMarks {
    itemprop: bool,
    ld_json: bool,
    /// `date` or `publish` (a date element, when in a class or id).
    date: bool,
    author: bool,
    byline: bool,
    comment: bool,
    /// An attribute value starting with an ISO year and a dash (`="2020-`, `='1999-`).
    iso_value: bool,
}

/// The words a start tag is searched for, in one SIMD pass ([`TagMarks::of`]); the index of
/// each is its mark.
const TAG_WORDS: [&str; 11] =
    ["itemprop", "ld+json", "date", "publish", "author", "byline", "comment", "=\"19", "=\"20", "='19", "='20"];

/// The searcher for [`TAG_WORDS`]: Teddy (the `aho-corasick` crate's packed searcher) finds
/// any of a few short words in one pass over the tag, where a `memmem` search per word read
/// each tag seven times (8 % of all extraction time in a profile of wcxb dev). A byte loop
/// testing each byte against the words' first letters took 320 ns a tag, this 40.
static TAG_SEARCH: LazyLock<aho_corasick::packed::Searcher> = LazyLock::new(|| {
    aho_corasick::packed::Config::new()
        .match_kind(aho_corasick::packed::MatchKind::LeftmostFirst)
        .builder()
        .extend(TAG_WORDS)
        .build()
        .expect("a packed searcher for a few short words")
});

impl TagMarks {
    /// Every start tag goes through this (case-sensitive, as the words are written in
    /// markup).
    #[inline]
    fn of(raw: &[u8]) -> TagMarks {
        // A tag without an attribute value (`<p>`, `<br>`, `<li>`) says nothing; under five
        // bytes there is no room for `=` and a word (`date=`), so those need no search for `=`.
        if raw.len() < 5 || memchr::memchr(b'=', raw).is_none() {
            return TagMarks::default();
        }
        let mut m = TagMarks::default();
        let mut at = 0;
        // Resuming just past each match's start finds overlapping words too (`itempropublish`);
        // no two words can match at the same byte, so none is missed.
        while let Some(hit) = TAG_SEARCH.find_in(raw, aho_corasick::Span::from(at..raw.len())) {
            at = hit.start() + 1;
            match hit.pattern().as_usize() {
                0 => m.itemprop = true,
                1 => m.ld_json = true,
                2 | 3 => m.date = true,
                4 => m.author = true,
                5 => m.byline = true,
                6 => m.comment = true,
                _ => {
                    // `="20` or `='19`: an ISO year and a dash must follow.
                    let v = &raw[hit.start() + 2..];
                    m.iso_value |= v.len() > 5 && v[2].is_ascii_digit() && v[3].is_ascii_digit() && v[4] == b'-';
                }
            }
        }
        m
    }
}

impl Collector {
    #[inline]
    pub fn token(&mut self, page: &str, t: &Token) {
        match t.kind {
            TokenKind::StartTag => self.start_tag(page, t),
            TokenKind::EndTag => self.end_tag(t),
            _ => {}
        }
    }

    #[inline]
    fn start_tag(&mut self, page: &str, t: &Token) {
        let raw = t.raw_bytes(page);
        let marks = TagMarks::of(raw);
        match t.tag {
            tags::META | tags::LINK | tags::HTML => self.note(t),
            // `<time>` elements have slots of their own: a page's microdata (hundreds of
            // `itemprop`s) can fill the shared ones long before its article's `<time>`.
            tags::TIME if self.time_tags.len() < MAX_TIME_TAGS => self.time_tags.push((t.start, t.end)),
            tags::TIME => {}
            tags::SCRIPT if marks.ld_json && self.jsonld.len() < MAX_JSONLD => {
                self.jsonld_open = Some(t.end);
            }
            tags::SCRIPT => {}
            tags::H1 if self.h1.is_none() && self.h1_open.is_none() => self.h1_open = Some(t.end),
            tags::A if marks.author && raw.windows(3).any(|w| w.eq_ignore_ascii_case(b"rel")) => {
                self.author_open = Some(t.end);
            }
            _ if marks.itemprop => self.note(t),
            _ => {}
        }
        // 8 until the headline (navigation, teasers) and, once it has come, up to 16 in all.
        let headline_seen = self.h1.is_some() || self.h1_open.is_some();
        if (self.date_elements.len() < 8 || headline_seen && self.date_elements.len() < 16)
            && t.tag != tags::META
            && marks.date
            && names_class_or_id(raw)
        {
            self.date_elements.push(t.end);
        }
        if self.byline_elements.len() < 4
            && !matches!(t.tag, tags::META | tags::LINK | tags::SCRIPT | tags::A)
            && (marks.byline || marks.author)
            // A comment's author, or the name field of the comment form, is not the article's.
            && !marks.comment
            && !raw.windows(5).any(|w| w.eq_ignore_ascii_case(b"input") || w.eq_ignore_ascii_case(b"label"))
            && names_class_or_id(raw)
        {
            self.byline_elements.push(t.end);
        }
        if self.abbr_tags.len() < MAX_ABBR_TAGS
            && raw.len() > 5
            && raw[1..5].eq_ignore_ascii_case(b"abbr")
            && raw[5].is_ascii_whitespace()
            && (raw.windows(10).any(|w| w == b"data-utime") || raw.windows(5).any(|w| w == b"title"))
        {
            self.abbr_tags.push((t.start, t.end));
        }
        if self.attr_date_tags.len() < MAX_ATTR_DATE_TAGS
            && !matches!(t.tag, tags::META | tags::TIME | tags::SCRIPT | tags::LINK)
            && marks.iso_value
        {
            self.attr_date_tags.push((t.start, t.end));
        }
    }

    #[inline]
    fn end_tag(&mut self, t: &Token) {
        match t.tag {
            tags::SCRIPT => {
                if let Some(s) = self.jsonld_open.take() {
                    self.jsonld.push((s, t.start));
                }
            }
            tags::H1 => {
                if let Some(s) = self.h1_open.take() {
                    self.h1 = Some((s, t.start));
                }
            }
            tags::A => {
                if let Some(s) = self.author_open.take()
                    && self.author_links.len() < 8
                {
                    self.author_links.push((s, t.start));
                }
            }
            _ => {}
        }
    }

    fn note(&mut self, t: &Token) {
        if self.tags.len() < MAX_TAGS {
            self.tags.push((t.start, t.end));
        }
    }

    /// Reads the noted spans of `page` (the decoded page the token spans index) into
    /// signals; `text_from` is where a written date is looked for when the page has no
    /// `<h1>` (the start of the extracted span).
    pub fn finish(&self, page: &str, text_from: Option<usize>) -> Signals {
        let span = |(s, e): (u32, u32)| page.get(s as usize..e as usize).unwrap_or("");
        let mut sig = Signals { jsonld: jsonld::read(self.jsonld.iter().map(|&s| span(s))), ..Signals::default() };
        let mut noted = self.tags.clone();
        noted.extend_from_slice(&self.time_tags);
        noted.sort_unstable();
        for &s in &noted {
            let raw = span(s);
            let name = tag_name(raw);
            // Most `<link>`s are style sheets, icons and preloads: only a canonical one is read.
            if name == "link"
                && (sig.canonical.is_some() || !raw.as_bytes().windows(9).any(|w| w.eq_ignore_ascii_case(b"canonical")))
            {
                continue;
            }
            let attrs = attributes(raw);
            let get = |n: &str| attrs.iter().find(|(k, _)| k == n).map(|(_, v)| v.as_ref());
            match name.as_str() {
                "html" => sig.html_lang = get("lang").or(get("xml:lang")).and_then(lang::primary_subtag),
                "link" => {
                    if sig.canonical.is_none()
                        && get("rel")
                            .is_some_and(|r| r.split_ascii_whitespace().any(|w| w.eq_ignore_ascii_case("canonical")))
                    {
                        sig.canonical = get("href").map(str::to_string);
                    }
                }
                "meta" => sig.meta.extend(meta_pair(&attrs)),
                _ => {
                    if name == "time"
                        && let Some(dt) = get("datetime")
                    {
                        let marked = get("pubdate").is_some()
                            || get("itemprop").is_some_and(|p| p.eq_ignore_ascii_case("datePublished"))
                            || get("class").is_some_and(|c| c.to_ascii_lowercase().contains("publish"));
                        sig.times.push((dt.to_string(), marked));
                    }
                    if let Some(p) = get("itemprop")
                        && let Some(v) = get("content").or(get("datetime"))
                    {
                        sig.meta.push((p.trim().to_ascii_lowercase(), v.to_string()));
                    }
                }
            }
        }
        sig.h1 = self.h1.map(|s| clean_text(span(s))).filter(|t| !t.is_empty() && t.len() < 400);
        sig.author_links = self
            .author_links
            .iter()
            .map(|&s| clean_text(span(s)))
            .filter(|t| !t.is_empty() && t.split_whitespace().count() <= 5)
            .collect();
        let boundary = |i: usize| page.floor_char_boundary(i);
        if let Some((h1_start, h1_end)) = self.h1 {
            // After the headline first (bylines), then just before it (kickers, date lines).
            let window_end = boundary(h1_end as usize + TEXT_DATE_WINDOW);
            let before =
                &page[boundary((h1_start as usize).saturating_sub(TEXT_DATE_BEFORE))..boundary(h1_start as usize)];
            // A date line may sit inside the headline element (`<h1>Title<br><small>02.02.2022`).
            sig.date_line = date_line(&page[boundary(h1_start as usize)..window_end]).or_else(|| date_line(before));
            let after = strip_tags(&page[boundary(h1_end as usize)..window_end]);
            let before = strip_tags(before);
            sig.text_date = dates::find_in_text(&after)
                .or_else(|| dates::find_in_text(&before))
                .or_else(|| dates::find_short_year(&after[..after.floor_char_boundary(SHORT_YEAR_CHARS)]))
                .or_else(|| {
                    dates::find_short_year(
                        &before[before.floor_char_boundary(before.len().saturating_sub(SHORT_YEAR_CHARS))..],
                    )
                });
            let head = &after[..after.floor_char_boundary(BY_LINE_CHARS)];
            if let Some(names) = by_line(head) {
                sig.by_line = names;
            }
        } else if let Some(from) = text_from {
            let window = &page[boundary(from)..boundary(from + TEXT_DATE_WINDOW)];
            sig.date_line = date_line(window);
            sig.text_date = dates::find_in_text(&strip_tags(window));
        }
        sig.bylines = self
            .byline_elements
            .iter()
            .flat_map(|&e| {
                let text = strip_tags(&page[boundary(e as usize)..boundary(e as usize + 300)]);
                let line = text.trim_start();
                let line = &line[..line.floor_char_boundary(80)];
                byline_names(line)
            })
            .take(8)
            .collect();
        // A date element next to the headline (a kicker above it, a date line under it) before
        // a teaser's elsewhere.
        let near = |e: u32| {
            self.h1.is_none_or(|(s, end)| {
                (s as usize).saturating_sub(TEXT_DATE_BEFORE) <= e as usize
                    && e as usize <= end as usize + TEXT_DATE_WINDOW
            })
        };
        let (article, rest): (Vec<u32>, Vec<u32>) = self.date_elements.iter().partition(|&&e| near(e));
        sig.class_date = article.iter().chain(&rest).find_map(|&e| {
            let text = strip_tags(&page[boundary(e as usize)..boundary(e as usize + 300)]);
            dates::find_in_text(&text).or_else(|| dates::find_short_year(&text[..text.floor_char_boundary(80)]))
        });
        let structured = sig.jsonld.published.is_some()
            || sig.class_date.is_some()
            || !sig.times.is_empty()
            || sig.meta.iter().any(|(k, _)| PUBLISHED_META.contains(&k.as_str()));
        for &s in &self.attr_date_tags {
            for (k, v) in attributes(span(s)) {
                // `href`/`src` paths are the URL fallback's; the rest are labels of a date.
                if k != "href"
                    && k != "src"
                    && (v.starts_with("19") || v.starts_with("20"))
                    && let Some(d) = dates::parse(&v)
                {
                    sig.attr_dates.push(d);
                }
            }
        }
        for &s in &self.abbr_tags {
            let attrs = attributes(span(s));
            let get = |n: &str| attrs.iter().find(|(k, _)| k == n).map(|(_, v)| v.as_ref());
            if let Some(d) = get("data-utime")
                .and_then(|v| v.trim().parse::<i64>().ok())
                .and_then(|t| chrono::DateTime::from_timestamp(t, 0))
                .and_then(dates::Date::from_datetime)
                .or_else(|| get("title").and_then(dates::parse))
            {
                sig.abbr_dates.push(d);
            }
        }
        if !structured && sig.text_date.is_none() && sig.date_line.is_none() {
            let head = &page[..boundary(PAGE_DATE_BYTES)];
            sig.page_dates = dates::find_all_in_text(&strip_tags(head), MAX_PAGE_DATES);
        }
        let dated = sig.jsonld.published.is_some()
            || sig.meta.iter().any(|(k, v)| PUBLISHED_META.contains(&k.as_str()) && dates::parse(v).is_some())
            || sig.times.iter().any(|(v, _)| dates::parse(v).is_some())
            || sig.class_date.is_some()
            || sig.text_date.is_some()
            || sig.date_line.is_some()
            // A cookie's expiry (`31 Dec 2099`) in a script is no date of the page.
            || sig.page_dates.iter().any(|d| d.not_after(&dates::tomorrow()))
            || !sig.abbr_dates.is_empty()
            || !sig.attr_dates.is_empty();
        if !dated {
            sig.markup_dates = dates::find_in_markup(&page[..boundary(MARKUP_DATE_BYTES)], MAX_MARKUP_DATES);
        }
        sig
    }
}

/// The first date that stands on a line of its own in `html`: a run of text between two tags
/// of at most [`DATE_LINE_CHARS`] characters (`02.02.2022 • Presse`, `Gespeichert von rasos am
/// 24. Juli 2017 - 18:55`). A date inside a long run is usually a sentence's: the day a law
/// took effect, an event's, a photo caption's (`…near Orleans, France, January 16, 2020.`).
fn date_line(html: &str) -> Option<dates::Date> {
    let mut rest = html;
    loop {
        let lt = memchr::memchr(b'<', rest.as_bytes()).unwrap_or(rest.len());
        let run = rest[..lt].trim();
        if !run.is_empty()
            && run.len() <= DATE_LINE_CHARS * 4
            && run.chars().count() <= DATE_LINE_CHARS
            && run.bytes().any(|b| b.is_ascii_digit())
            && let Some(d) = dates::find_in_text(&strip_tags(run))
        {
            return Some(d);
        }
        if lt == rest.len() {
            return None;
        }
        rest = memchr::memchr(b'>', &rest.as_bytes()[lt..]).map_or("", |gt| &rest[lt + gt + 1..]);
    }
}

/// A start tag's name, lower case.
fn tag_name(raw: &str) -> String {
    raw.trim_start_matches('<')
        .split(|c: char| c.is_ascii_whitespace() || c == '/' || c == '>')
        .next()
        .unwrap_or("")
        .to_ascii_lowercase()
}

/// A `<meta>` tag's key (its `property`, else `name`, `itemprop` or `http-equiv`; trimmed and
/// lower-cased) and `content`, from its [`attributes`]; `None` without either.
pub fn meta_pair(attrs: &[(Cow<'_, str>, Cow<'_, str>)]) -> Option<(String, String)> {
    let get = |n: &str| attrs.iter().find(|(k, _)| k == n).map(|(_, v)| v.as_ref());
    let key = get("property").or(get("name")).or(get("itemprop")).or(get("http-equiv"))?;
    Some((key.trim().to_ascii_lowercase(), get("content")?.to_string()))
}

/// A start tag's attributes: (lower-cased name, value with character references decoded),
/// borrowed from the tag where nothing had to change (most names and values).
pub fn attributes(raw: &str) -> Vec<(Cow<'_, str>, Cow<'_, str>)> {
    crate::html::attrs::str_attrs(raw)
        .map(|(name, value)| {
            let name = if name.bytes().any(|c| c.is_ascii_uppercase()) {
                Cow::Owned(name.to_ascii_lowercase())
            } else {
                Cow::Borrowed(name)
            };
            let value = match value {
                None => Cow::Borrowed(""),
                Some(v) if memchr::memchr(b'&', v.as_bytes()).is_some() => {
                    let mut decoded = String::with_capacity(v.len());
                    entities::decode_into(v, &mut decoded);
                    Cow::Owned(decoded)
                }
                Some(v) => Cow::Borrowed(v),
            };
            (name, value)
        })
        .collect()
}

/// Text of an HTML fragment: tags dropped, references decoded, whitespace collapsed.
pub fn clean_text(html: &str) -> String {
    strip_tags(html).split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Text of an HTML fragment with tags replaced by a space and references decoded (when it
/// has any); whitespace left as it is: the date patterns match across any of it.
fn strip_tags(html: &str) -> String {
    let mut text = String::with_capacity(html.len());
    let mut rest = html;
    while let Some(lt) = memchr::memchr(b'<', rest.as_bytes()) {
        text.push_str(&rest[..lt]);
        text.push(' ');
        rest = memchr::memchr(b'>', &rest.as_bytes()[lt..]).map_or("", |gt| &rest[lt + gt + 1..]);
    }
    text.push_str(rest);
    if memchr::memchr(b'&', text.as_bytes()).is_none() {
        return text;
    }
    let mut decoded = String::with_capacity(text.len());
    entities::decode_into(&text, &mut decoded);
    decoded
}

/// A feed item's own fields (`metadata.feed` in feeds mode).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct FeedItem {
    pub title: Option<String>,
    pub link: Option<String>,
    pub published: Option<String>,
    pub updated: Option<String>,
    pub authors: Vec<String>,
    pub categories: Vec<String>,
    pub summary: Option<String>,
}

/// Everything [`resolve`] decides from besides the page's signals.
#[derive(Debug, Clone, Copy, Default)]
pub struct Context<'a> {
    pub url: &'a str,
    /// The extracted text (for the language).
    pub text: &'a str,
    /// The `<title>` text.
    pub html_title: Option<&'a str>,
    /// `Content-Language` of the response.
    pub content_language: Option<&'a str>,
    /// When the page was fetched (RFC 3339): no date after it is taken.
    pub fetched_at: Option<&'a str>,
    pub feed: Option<&'a FeedItem>,
    /// The response's `Last-Modified` header: when the page says nothing, the server's date
    /// of its last change is the best left (source `last-modified`).
    pub last_modified: Option<&'a str>,
}

const PUBLISHED_META: &[&str] = &[
    "article:published_time",
    "og:article:published_time",
    "og:published_time",
    "datepublished",
    "article.published",
    "published_time",
    "publishdate",
    "publish-date",
    "publish_date",
    "pubdate",
    "parsely-pub-date",
    "sailthru.date",
    "dc.date.issued",
    "dcterms.issued",
    "dc.date.created",
    "dcterms.created",
    "citation_publication_date",
    "citation_date",
    "originalpublicationdate",
    "article_date_original",
    "date",
    "dc.date",
    "dcterms.date",
    "og:pubdate",
    "datecreated",
];

const MODIFIED_META: &[&str] = &[
    "article:modified_time",
    "og:updated_time",
    "datemodified",
    "dcterms.modified",
    "dc.date.modified",
    "last-modified",
    "lastmod",
];

const AUTHOR_META: &[&str] =
    &["author", "article:author", "dc.creator", "dcterms.creator", "parsely-author", "sailthru.author", "byl"];

/// Decides every field of [`ArticleMeta`], and the best title.
pub fn resolve(sig: &Signals, cx: &Context<'_>) -> (ArticleMeta, Option<String>) {
    let latest = cx.fetched_at.and_then(dates::parse).unwrap_or_else(dates::tomorrow);
    let ok = |d: Option<dates::Date>| d.filter(|d| d.not_after(&latest));
    let j = &sig.jsonld;
    let time_marked = sig.times.iter().find(|(_, m)| *m).map(|(v, _)| v.as_str());
    let first_ok = |v: &[dates::Date]| v.iter().copied().find(|d| d.not_after(&latest));
    // A date in the path of the page's main image (`/files/2016/05/04/…`), as the URL's.
    let image_url = sig.meta(&["og:image", "twitter:image"]).and_then(dates::from_image_url);
    // htmldate's order (Barbaresi 2020): a full date in the URL's path first (publishers
    // write it once, when the article goes up; markup dates are often the last update),
    // then the page's header (`<meta>`, microdata), JSON-LD, a `<time>` marked as the
    // publication's; written dates next to the headline before unmarked `<time>` elements
    // (those are as often a teaser's or a comment's).
    let candidates: [(Option<dates::Date>, &str); 16] = [
        (ok(dates::from_url(cx.url)), "url"),
        (ok(sig.meta(PUBLISHED_META).and_then(dates::parse)), "meta"),
        (ok(j.published.as_deref().and_then(dates::parse)), "json-ld"),
        (ok(time_marked.and_then(dates::parse)), "time"),
        (sig.abbr_dates.iter().copied().filter(|d| d.not_after(&latest)).min_by_key(dates::Date::key), "abbr"),
        (ok(sig.class_date), "text"),
        (ok(sig.date_line), "text"),
        (ok(cx.html_title.and_then(dates::find_in_text)), "text"),
        (ok(sig.times.first().map(|(v, _)| v.as_str()).and_then(dates::parse)), "time"),
        (ok(sig.text_date), "text"),
        (ok(cx.feed.and_then(|f| f.published.as_deref().or(f.updated.as_deref())).and_then(dates::parse)), "feed"),
        (first_ok(&sig.attr_dates), "attribute"),
        (ok(image_url), "url"),
        (first_ok(&sig.page_dates), "text"),
        (ok(cx.last_modified.and_then(dates::parse)), "last-modified"),
        (most_frequent(sig.markup_dates.iter().filter(|d| d.not_after(&latest))), "markup"),
    ];
    // The URL gives the day only: a structured date of the same day says more (its time and
    // zone), and one a day off is the same moment in UTC (the publisher's local day is the
    // URL's), so both keep the URL's day; a date further off is the last update's.
    let first = |from: usize| {
        candidates[from..].iter().find_map(|(d, s)| d.map(|d| (Some(d), Some(s.to_string())))).unwrap_or((None, None))
    };
    let (rest, rest_source) = first(1);
    let (published, date_source) = match (candidates[0].0, rest.map(|p| local_day(p, sig))) {
        (Some(u), Some(p)) if p.key() == u.key() => (Some(p), rest_source),
        (Some(u), _) => (Some(u), Some("url".to_string())),
        (None, p) => (p, rest_source),
    };
    let published = published.map(|d| d.iso());
    let modified = ok(j.modified.as_deref().and_then(dates::parse))
        .or_else(|| ok(sig.meta(MODIFIED_META).and_then(dates::parse)))
        .or_else(|| ok(cx.feed.and_then(|f| f.updated.as_deref()).and_then(dates::parse)))
        .map(|d| d.iso());

    // The page's URL, to resolve relative canonical and image links.
    let base = url::Url::parse(cx.url).ok();
    let site_name = sig
        .meta(&["og:site_name", "application-name", "al:android:app_name"])
        .map(str::to_string)
        .or_else(|| j.publisher.clone());
    let mut authors: Vec<String> = if !j.authors.is_empty() {
        j.authors.clone()
    } else if let Some(a) = AUTHOR_META.iter().find_map(|k| {
        let v: Vec<&str> = sig.meta_all(k).filter(|v| !v.starts_with("http")).collect();
        (!v.is_empty()).then_some(v)
    }) {
        a.iter().flat_map(|v| split_names(v)).collect()
    } else if !sig.author_links.is_empty() {
        sig.author_links.iter().flat_map(|v| split_names(v)).collect()
    } else if !sig.bylines.is_empty() {
        sig.bylines.clone()
    } else if !sig.by_line.is_empty() {
        sig.by_line.clone()
    } else {
        cx.feed.map(|f| f.authors.clone()).unwrap_or_default()
    };
    dedup(&mut authors);
    let mut keywords =
        if j.keywords.is_empty() { split_list(sig.meta(&["news_keywords", "keywords"])) } else { j.keywords.clone() };
    keywords.extend(sig.meta_all("article:tag").map(str::to_string));
    dedup(&mut keywords);
    let mut categories = if j.section.is_empty() {
        sig.meta_all("article:section").map(str::to_string).collect()
    } else {
        j.section.clone()
    };
    if categories.is_empty()
        && let Some(f) = cx.feed
    {
        categories = f.categories.clone();
    }
    dedup(&mut categories);
    let declared = sig.html_lang.clone().or_else(|| {
        cx.content_language
            .or(sig.meta(&["content-language", "og:locale", "dc.language"]))
            .and_then(lang::primary_subtag)
    });
    let (lang, lang_confidence) = lang::identify(cx.text, declared.as_deref());
    let title = [
        j.headline.as_deref().filter(|_| j.is_article),
        sig.meta(&["og:title"]),
        sig.meta(&["twitter:title"]),
        sig.h1.as_deref(),
        cx.html_title,
        cx.feed.and_then(|f| f.title.as_deref()),
    ]
    .into_iter()
    .flatten()
    .map(|t| strip_site_name(t, site_name.as_deref()))
    .find(|t| !t.is_empty());
    let meta = ArticleMeta {
        published,
        modified,
        date_source,
        lang,
        lang_confidence,
        authors,
        description: sig
            .meta(&["og:description", "description", "twitter:description", "dc.description"])
            .map(str::to_string)
            .or_else(|| j.description.clone())
            .or_else(|| cx.feed.and_then(|f| f.summary.clone())),
        site_name,
        canonical_url: sig
            .canonical
            .clone()
            .or_else(|| sig.meta(&["og:url"]).map(str::to_string))
            .or_else(|| j.url.clone())
            .map(|u| absolute(&u, base.as_ref())),
        image: sig
            .meta(&["og:image", "og:image:url", "twitter:image", "twitter:image:src"])
            .map(str::to_string)
            .or_else(|| j.image.clone())
            .map(|u| absolute(&u, base.as_ref())),
        categories,
        keywords,
    };
    (meta, title)
}

/// `link` resolved against the page's URL (`/news/a` on `https://x.test/b` is
/// `https://x.test/news/a`); as written when the page has no URL or the link does not parse.
fn absolute(link: &str, base: Option<&url::Url>) -> String {
    match base.map(|b| b.join(link.trim())) {
        Some(Ok(u)) => u.to_string(),
        _ => link.to_string(),
    }
}

/// A structured date in UTC, written in the publisher's zone where the page tells it: another
/// structured date of the same moment in a zone of its own (`2023-11-09T02:11:03+00:00` in the
/// header is `2023-11-08T21:11:03-05:00` in a `<time>`: the article of the 8th), else a UTC
/// time of 22:00 or 23:00 sharp, which is how a CMS in Central Europe stores a bare date (its
/// local midnight: `2021-11-04T23:00Z` is the 5th).
fn local_day(p: dates::Date, sig: &Signals) -> dates::Date {
    if !p.is_utc() {
        return p;
    }
    let Some(at) = p.instant() else { return p };
    let structured = sig
        .meta
        .iter()
        .filter(|(k, _)| PUBLISHED_META.contains(&k.as_str()))
        .map(|(_, v)| v.as_str())
        .chain(sig.times.iter().map(|(v, _)| v.as_str()))
        .chain(sig.jsonld.published.as_deref());
    for v in structured.take(32) {
        if let Some(d) = dates::parse(v)
            && let Some((_, _, _, Some(off))) = d.time
            && off != 0
            && d.instant() == Some(at)
        {
            return d;
        }
    }
    match p.time {
        Some((h @ (22 | 23), 0, 0, _)) => p.in_zone(i16::from(24 - h) * 60).unwrap_or(p),
        _ => p,
    }
}

/// The day found most often (the first found of those found as often).
fn most_frequent<'a>(found: impl Iterator<Item = &'a dates::Date>) -> Option<dates::Date> {
    let mut days: Vec<(dates::Date, usize)> = Vec::new();
    for d in found {
        match days.iter_mut().find(|(x, _)| x.key() == d.key()) {
            Some((_, n)) => *n += 1,
            None => days.push((*d, 1)),
        }
    }
    days.iter().rev().max_by_key(|(_, n)| *n).map(|(d, _)| *d)
}

fn dedup(v: &mut Vec<String>) {
    let mut seen = std::collections::HashSet::new();
    v.retain(|x| seen.insert(x.to_lowercase()));
}

fn split_list(v: Option<&str>) -> Vec<String> {
    v.map(|s| s.split([',', ';']).map(str::trim).filter(|k| !k.is_empty()).map(str::to_string).collect())
        .unwrap_or_default()
}

/// "By Ann Lee and Bo Chan" → ["Ann Lee", "Bo Chan"].
/// Words of a job title or a desk, not of a name ("Ann Lee, Staff Writer").
const JOB_WORDS: &[&str] = &[
    "Staff",
    "Writer",
    "Reporter",
    "Editor",
    "Correspondent",
    "Contributor",
    "Photographer",
    "Senior",
    "Chief",
    "Desk",
    "News",
    "Redaktion",
    "Redakteur",
    "Redakteurin",
    "Autor",
    "Autorin",
    "Author",
    "Press",
    "Team",
    "Email",
    "E-Mail",
    "Mail",
    "URL",
    "Name",
    "Adresse",
    "Website",
    "Photo",
    "Foto",
    "Tags",
    "Marketing",
];

/// Weekdays, which follow a name in many bylines ("Ann Lee Thursday").
const WEEKDAYS: &[&str] = &[
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
    "Sunday",
    "Montag",
    "Dienstag",
    "Mittwoch",
    "Donnerstag",
    "Freitag",
    "Samstag",
    "Sonntag",
];

/// Characters of text after the headline searched for a "By …" line.
const BY_LINE_CHARS: usize = 400;

/// The names at the start of a byline element's text ("By Ann Lee, Staff Writer | 3 May"):
/// the part before a date, a job title after a dash or a pipe, split into names; only names
/// of two to five capitalised words count.
fn byline_names(line: &str) -> Vec<String> {
    // A label before the names ("Von: Ann Lee", "Auteur : Bo Chan") goes; one after them
    // ("Tags:") ends them.
    let line = match line.split_once(':') {
        Some((label, rest)) if label.split_whitespace().count() <= 2 && !rest.trim().is_empty() => rest,
        _ => line,
    };
    let line = line.split(':').next().unwrap_or("");
    let line = line
        .split([' ', '\u{a0}'])
        .take_while(|w| !w.chars().any(|c| c.is_ascii_digit()))
        .collect::<Vec<_>>()
        .join(" ");
    let line = line.split(['|', '–', '—', '•']).next().unwrap_or("").split(" - ").next().unwrap_or("");
    split_names(line)
        .into_iter()
        // Text runs on from the next element ("Bo Chan By Tuesday …"): a name ends at an opener.
        .map(|n| {
            n.split_whitespace()
                .take_while(|w| !matches!(*w, "By" | "BY" | "Von" | "Par" | "Por" | "Door"))
                .collect::<Vec<_>>()
                .join(" ")
        })
        .filter(|n| {
            let words: Vec<&str> = n.split_whitespace().collect();
            (2..=5).contains(&words.len())
                && words.iter().all(|w| w.chars().next().is_some_and(char::is_uppercase))
                && !words.iter().any(|w| {
                    let w = w.trim_matches(|c: char| !c.is_alphabetic());
                    JOB_WORDS.contains(&w) || dates::month_of(w).is_some() || WEEKDAYS.contains(&w)
                })
                && words.iter().all(|w| w.chars().any(char::is_alphabetic) && !w.contains("..") && !w.contains('/'))
        })
        .collect()
}

fn split_names(v: &str) -> Vec<String> {
    let v = v.trim();
    let v = ["By ", "by ", "BY ", "Von ", "von ", "Par ", "par ", "Por ", "por "]
        .iter()
        .find_map(|p| v.strip_prefix(p))
        .unwrap_or(v);
    v.split([',', '|', ';'])
        .flat_map(|p| p.split(" and ").flat_map(|q| q.split(" & ")).flat_map(|q| q.split(" und ")))
        .map(|n| n.split_whitespace().collect::<Vec<_>>().join(" "))
        .filter(|n| !n.is_empty() && n.split_whitespace().count() <= 6)
        .collect()
}

/// Removes the site name from a title: "Ferry approved | Harbour News" → "Ferry approved".
/// Without a known site name, a last part after ` | ` is taken as one when it is shorter
/// than the rest.
pub fn strip_site_name(title: &str, site: Option<&str>) -> String {
    let t = title.split_whitespace().collect::<Vec<_>>().join(" ");
    const SEPS: [&str; 7] = [" | ", " - ", " – ", " — ", " :: ", " · ", " » "];
    if let Some(site) = site.map(str::trim).filter(|s| !s.is_empty()) {
        let site_l = site.to_lowercase();
        for sep in SEPS {
            let parts: Vec<&str> = t.split(sep).collect();
            if parts.len() > 1 {
                let kept: Vec<&str> = parts.iter().copied().filter(|p| p.trim().to_lowercase() != site_l).collect();
                if kept.len() < parts.len() && !kept.is_empty() {
                    return kept.join(sep).trim().to_string();
                }
            }
        }
    }
    if let Some((head, tail)) = t.rsplit_once(" | ")
        && tail.split_whitespace().count() <= 4
        && head.split_whitespace().count() >= tail.split_whitespace().count()
    {
        return head.trim().to_string();
    }
    t
}

#[cfg(test)]
mod tests;
