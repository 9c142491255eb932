//! Feeds: the `feeds.txt` list, parsing RSS 0.9x/1.0/2.0, Atom and JSON Feed (feed-rs), and
//! turning item links into canonical article URLs (resolved against the feed URL, fragment
//! and `utm_*` parameters removed) so that each article is fetched once.
//!
//! feed-rs refuses an `<rss>` element without a version attribute it knows; such feeds are
//! parsed again with `version="2.0"` put in, which is what readers do.

use std::path::Path;

use url::Url;

/// Why the feed list could not be used (every bad line listed).
#[derive(Debug, thiserror::Error)]
#[error("{}: {}", path.display(), problems.join("; "))]
pub struct FeedListError {
    pub path: std::path::PathBuf,
    pub problems: Vec<String>,
}

/// Reads `feeds.txt`: one URL per line, `#` comments and blank lines ignored.
pub fn read_feed_list(path: &Path) -> Result<Vec<Url>, FeedListError> {
    let err = |problems| FeedListError { path: path.to_path_buf(), problems };
    let text = std::fs::read_to_string(path).map_err(|e| err(vec![e.to_string()]))?;
    let mut feeds = Vec::new();
    let mut seen = std::collections::HashSet::new();
    let mut problems = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        match Url::parse(line) {
            Ok(u) if matches!(u.scheme(), "http" | "https") => {
                if seen.insert(u.clone()) {
                    feeds.push(u);
                }
            }
            Ok(u) => problems.push(format!("line {}: `{u}` is not an http(s) URL", i + 1)),
            Err(e) => problems.push(format!("line {}: `{line}`: {e}", i + 1)),
        }
    }
    if !problems.is_empty() {
        return Err(err(problems));
    }
    Ok(feeds)
}

/// A parsed feed: its article links and what it says about how often to poll it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ParsedFeed {
    /// Article links, canonical, in feed order, without repeats.
    pub links: Vec<Url>,
    /// The item of each link (same order): title, dates, authors, categories, summary.
    pub items: Vec<crate::metadata::FeedItem>,
    /// RSS `<ttl>`: minutes the feed may be cached, as seconds.
    pub ttl_secs: Option<u64>,
    /// RSS Syndication module: `sy:updatePeriod` divided by `sy:updateFrequency`, in seconds.
    pub update_period_secs: Option<u64>,
}

/// A feed's article links, canonical, in feed order, without repeats.
pub fn parse_feed(body: &[u8], feed_url: &Url) -> Result<Vec<Url>, String> {
    parse_feed_full(body, feed_url).map(|f| f.links)
}

/// `sy:updatePeriod` (hourly, daily, weekly, monthly, yearly; default daily) over
/// `sy:updateFrequency` (default 1), read from the raw feed: feed-rs does not keep the
/// Syndication module's elements.
pub fn update_period(body: &[u8]) -> Option<u64> {
    fn element<'a>(body: &'a [u8], name: &[u8]) -> Option<&'a str> {
        let start = memchr::memmem::find(body, name)? + name.len();
        let rest = &body[start..];
        let open = memchr::memchr(b'>', rest)? + 1;
        let close = memchr::memchr(b'<', &rest[open..])? + open;
        std::str::from_utf8(&rest[open..close]).ok().map(str::trim)
    }
    let period = element(body, b"updatePeriod")?;
    let secs = match period.to_ascii_lowercase().as_str() {
        "hourly" => 3600,
        "daily" => 86_400,
        "weekly" => 7 * 86_400,
        "monthly" => 30 * 86_400,
        "yearly" => 365 * 86_400,
        _ => return None,
    };
    let frequency =
        element(body, b"updateFrequency").and_then(|f| f.parse::<u64>().ok()).filter(|f| *f > 0).unwrap_or(1);
    Some(secs / frequency)
}

/// [`parse_feed`] with the feed's polling hints.
pub fn parse_feed_full(body: &[u8], feed_url: &Url) -> Result<ParsedFeed, String> {
    let feed = match feed_rs::parser::parse(body) {
        Ok(f) => f,
        Err(first) => match with_rss_version(body) {
            Some(fixed) => feed_rs::parser::parse(&fixed[..]).map_err(|_| first.to_string())?,
            None => return Err(first.to_string()),
        },
    };
    let mut out: Vec<Url> = Vec::new();
    let mut items = Vec::new();
    // A set, not `out.contains`: a feed near the 10 MB body cap has ~100k items, and a
    // linear search per item made one poll of it take 20 s.
    let mut seen = std::collections::HashSet::with_capacity(feed.entries.len());
    for entry in &feed.entries {
        let link = entry
            .links
            .iter()
            .find(|l| l.rel.as_deref().is_none_or(|r| r.eq_ignore_ascii_case("alternate")))
            .or_else(|| entry.links.first())
            .map(|l| l.href.trim().to_string())
            // RSS items without <link> often carry the URL as a permalink guid.
            .or_else(|| {
                (entry.id.starts_with("http://") || entry.id.starts_with("https://")).then(|| entry.id.clone())
            });
        let Some(link) = link else { continue };
        let Ok(url) = feed_url.join(&link) else { continue };
        if !matches!(url.scheme(), "http" | "https") {
            continue;
        }
        let url = canonicalize(url);
        if seen.insert(url.clone()) {
            items.push(feed_item(entry, url.as_str()));
            out.push(url);
        }
    }
    Ok(ParsedFeed {
        links: out,
        items,
        ttl_secs: feed.ttl.map(|m| u64::from(m) * 60),
        update_period_secs: update_period(body),
    })
}

/// Longest feed item summary kept (characters).
const MAX_SUMMARY_CHARS: usize = 1000;

/// The fields of a feed item a record carries (`metadata.feed`).
fn feed_item(entry: &feed_rs::model::Entry, link: &str) -> crate::metadata::FeedItem {
    use crate::metadata::clean_text;
    let text = |t: &feed_rs::model::Text| Some(clean_text(&t.content)).filter(|s| !s.is_empty());
    let summary =
        entry.summary.as_ref().and_then(text).map(|s| {
            if s.chars().count() > MAX_SUMMARY_CHARS { s.chars().take(MAX_SUMMARY_CHARS).collect() } else { s }
        });
    crate::metadata::FeedItem {
        title: entry.title.as_ref().and_then(text),
        link: Some(link.to_string()),
        published: entry.published.map(|d| d.to_rfc3339()),
        updated: entry.updated.map(|d| d.to_rfc3339()),
        authors: entry
            .authors
            .iter()
            .map(|a| a.name.as_deref().unwrap_or("").trim().to_string())
            .filter(|n| !n.is_empty())
            .collect(),
        categories: entry
            .categories
            .iter()
            .map(|c| c.label.clone().unwrap_or_else(|| c.term.clone()).trim().to_string())
            .filter(|c| !c.is_empty())
            .collect(),
        summary,
    }
}

/// `<rss>` without a known version gets `version="2.0"`; `None` when that is not the problem.
fn with_rss_version(body: &[u8]) -> Option<Vec<u8>> {
    let start = memchr::memmem::find(body, b"<rss")?;
    let end = start + memchr::memchr(b'>', &body[start..])?;
    let tag = &body[start..end];
    let version_ok = memchr::memmem::find(tag, b"version=\"2.0\"").is_some()
        || memchr::memmem::find(tag, b"version='2.0'").is_some()
        || memchr::memmem::find(tag, b"version=\"0.9").is_some();
    if version_ok {
        return None;
    }
    let mut fixed = Vec::with_capacity(body.len() + 16);
    fixed.extend_from_slice(&body[..start]);
    fixed.extend_from_slice(b"<rss version=\"2.0\"");
    // Drop a bad version attribute if there is one; keep the other attributes.
    let rest = &body[start + 4..end];
    let rest = match memchr::memmem::find(rest, b"version=") {
        Some(v) => {
            let mut r = rest[..v].to_vec();
            let after = &rest[v + 8..];
            let q = after.first().copied().unwrap_or(b'"');
            let close = memchr::memchr(q, &after[1.min(after.len())..]).map_or(after.len(), |i| i + 2);
            r.extend_from_slice(&after[close.min(after.len())..]);
            r
        }
        None => rest.to_vec(),
    };
    fixed.extend_from_slice(&rest);
    fixed.extend_from_slice(&body[end..]);
    Some(fixed)
}

/// Removes the fragment and `utm_*` query parameters (the url crate already lower-cases the
/// scheme and host and drops default ports). The other parameters stay byte for byte: decoded
/// and encoded again, two queries that differ only in bytes that are not UTF-8 (`?q=%E9`,
/// `?q=%E8`) would become one URL, and `;`, `=`-less keys or `+` would be rewritten into a URL
/// the feed never listed.
pub fn canonicalize(mut url: Url) -> Url {
    url.set_fragment(None);
    if let Some(query) = url.query() {
        let is_utm = |segment: &str| {
            let key = segment.split('=').next().unwrap_or("");
            let key = percent_decode(key);
            key.get(..4).is_some_and(|k| k.eq_ignore_ascii_case(b"utm_"))
        };
        let kept: Vec<&str> = query.split('&').filter(|s| !is_utm(s)).collect();
        if kept.len() != query.split('&').count() {
            let kept = kept.join("&");
            url.set_query(if kept.is_empty() { None } else { Some(&kept) });
        }
    }
    url
}

/// How [`canonicalize`] spelled the canonical `url` until session 47 (its query parameters
/// decoded and encoded again), when that differs: a crawl's database made then holds its
/// articles under that spelling, and must not take them for new.
pub fn former_spelling(url: &Url) -> Option<Url> {
    url.query()?;
    let mut former = url.clone();
    let pairs: Vec<(String, String)> = url.query_pairs().map(|(k, v)| (k.into_owned(), v.into_owned())).collect();
    if pairs.is_empty() {
        former.set_query(None);
    } else {
        former.query_pairs_mut().clear().extend_pairs(pairs);
    }
    (former != *url).then_some(former)
}

/// `%XX` escapes and `+` of a query key decoded to bytes (enough to read its prefix).
fn percent_decode(s: &str) -> Vec<u8> {
    let hex = |c: u8| (c as char).to_digit(16);
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%'
            && let (Some(h), Some(l)) = (b.get(i + 1).and_then(|&c| hex(c)), b.get(i + 2).and_then(|&c| hex(c)))
        {
            out.push((h * 16 + l) as u8);
            i += 3;
            continue;
        }
        out.push(if b[i] == b'+' { b' ' } else { b[i] });
        i += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonical_urls_drop_utm_parameters_and_the_fragment_and_keep_every_other_byte() {
        let c = |u: &str| canonicalize(Url::parse(u).unwrap()).to_string();
        assert_eq!(c("http://a.test/p?utm_source=x&id=3&UTM_Medium=y#top"), "http://a.test/p?id=3");
        assert_eq!(c("http://a.test/p?%75tm_campaign=z&id=3"), "http://a.test/p?id=3");
        assert_eq!(c("http://a.test/p?utm_source=x"), "http://a.test/p");
        // Left as the feed wrote them: two articles are not merged, none is renamed.
        assert_ne!(c("http://a.test/s?q=%E9"), c("http://a.test/s?q=%E8"));
        assert_eq!(c("http://a.test/s?q=%E9&utm_x=1"), "http://a.test/s?q=%E9");
        assert_eq!(c("http://a.test/s?a=1;b=2"), "http://a.test/s?a=1;b=2");
        assert_eq!(c("http://a.test/s?id"), "http://a.test/s?id");
        assert_eq!(c("http://a.test/s?q=a+b&x=%2B"), "http://a.test/s?q=a+b&x=%2B");
        assert_eq!(c("http://a.test/s?utmost=1"), "http://a.test/s?utmost=1");
        // The spelling of earlier versions, for databases that hold it.
        let former = |u: &str| former_spelling(&Url::parse(u).unwrap()).map(|f| f.to_string());
        assert_eq!(former("http://a.test/s?a=1;b=2").as_deref(), Some("http://a.test/s?a=1%3Bb%3D2"));
        assert_eq!(former("http://a.test/s?q=a%20b").as_deref(), Some("http://a.test/s?q=a+b"));
        assert_eq!(former("http://a.test/s?id=3"), None);
        assert_eq!(former("http://a.test/s"), None);
    }

    proptest::proptest! {
        /// Idempotent, and every segment not named `utm_…` is kept in order, byte for byte.
        #[test]
        fn canonicalize_keeps_the_other_segments(segments in proptest::collection::vec("(utm_)?[a-z%0-9+;=]{0,6}", 0..6)) {
            let url = Url::parse(&format!("http://a.test/p?{}", segments.join("&"))).unwrap();
            let once = canonicalize(url);
            proptest::prop_assert_eq!(canonicalize(once.clone()), once.clone());
            // (Empty segments aside: a query left with nothing but one goes.)
            let kept: Vec<&str> =
                once.query().map(|q| q.split('&').filter(|s| !s.is_empty()).collect()).unwrap_or_default();
            let expected: Vec<String> = url_query_segments(&segments)
                .into_iter()
                .filter(|s| !s.is_empty())
                .filter(|s| !percent_decode(s.split('=').next().unwrap_or("")).to_ascii_lowercase().starts_with(b"utm_"))
                .collect();
            proptest::prop_assert_eq!(kept, expected);
        }
    }

    /// The segments as the url crate keeps them in a query.
    fn url_query_segments(segments: &[String]) -> Vec<String> {
        let url = Url::parse(&format!("http://a.test/p?{}", segments.join("&"))).unwrap();
        url.query().unwrap_or("").split('&').map(str::to_string).collect()
    }

    #[test]
    fn polling_hints_ttl_and_syndication_period() {
        let base = Url::parse("http://news.test/feed.xml").unwrap();
        let rss = br#"<?xml version="1.0"?><rss version="2.0" xmlns:sy="http://purl.org/rss/1.0/modules/syndication/">
            <channel><title>T</title><ttl>30</ttl><sy:updatePeriod> hourly </sy:updatePeriod>
            <sy:updateFrequency>4</sy:updateFrequency><item><link>/a</link></item></channel></rss>"#;
        let f = parse_feed_full(rss, &base).unwrap();
        assert_eq!(f.links, [Url::parse("http://news.test/a").unwrap()]);
        assert_eq!((f.ttl_secs, f.update_period_secs), (Some(1800), Some(900)));
        let plain = br#"<rss version="2.0"><channel><title>T</title><item><link>/a</link></item></channel></rss>"#;
        let f = parse_feed_full(plain, &base).unwrap();
        assert_eq!((f.ttl_secs, f.update_period_secs), (None, None));
        assert_eq!(update_period(b"<sy:updatePeriod>daily</sy:updatePeriod>"), Some(86_400));
        assert_eq!(update_period(b"<sy:updatePeriod>sometimes</sy:updatePeriod>"), None);
    }
    use proptest::prelude::*;

    fn base() -> Url {
        Url::parse("https://news.test/feeds/main.xml").unwrap()
    }

    #[test]
    fn rss_atom_and_json_feed_links() {
        let rss = br#"<?xml version="1.0"?><rss version="2.0"><channel><title>T</title>
            <item><title>A</title><link>/a?utm_source=x&amp;id=1#top</link></item>
            <item><title>B</title><link>https://other.test/b</link></item>
            <item><title>A again</title><link>https://news.test/a?id=1</link></item></channel></rss>"#;
        let links = parse_feed(rss, &base()).unwrap();
        assert_eq!(
            links.iter().map(Url::as_str).collect::<Vec<_>>(),
            ["https://news.test/a?id=1", "https://other.test/b"]
        );

        let atom = br#"<?xml version="1.0" encoding="utf-8"?><feed xmlns="http://www.w3.org/2005/Atom"><title>T</title><id>x</id><updated>2026-01-01T00:00:00Z</updated>
            <entry><title>E</title><id>e1</id><updated>2026-01-01T00:00:00Z</updated><link rel="alternate" href="entries/1"/><link rel="enclosure" href="/x.mp3"/></entry></feed>"#;
        assert_eq!(parse_feed(atom, &base()).unwrap()[0].as_str(), "https://news.test/feeds/entries/1");

        let json = br#"{"version":"https://jsonfeed.org/version/1.1","title":"T","items":[{"id":"1","url":"https://news.test/j?utm_medium=m","content_text":"x"}]}"#;
        assert_eq!(parse_feed(json, &base()).unwrap()[0].as_str(), "https://news.test/j");
    }

    #[test]
    fn rss_without_a_known_version_is_read() {
        let rss = br#"<rss><channel><title>T</title><item><title>A</title><link>https://news.test/v</link><pubDate>Tuesday, 3 March 2026</pubDate></item></channel></rss>"#;
        assert_eq!(parse_feed(rss, &base()).unwrap().len(), 1);
        let rss = br#"<rss version="9.9" xmlns:dc="http://purl.org/dc/elements/1.1/"><channel><title>T</title><item><link>https://news.test/w</link></item></channel></rss>"#;
        assert_eq!(parse_feed(rss, &base()).unwrap().len(), 1);
        assert!(parse_feed(b"<html>not a feed</html>", &base()).is_err());
    }

    #[test]
    fn feed_list_reports_every_bad_line() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("feeds.txt");
        std::fs::write(&p, "# news\nhttps://a.test/rss\n\nftp://b.test/x\nnot a url\nhttps://a.test/rss # again\n")
            .unwrap();
        let e = read_feed_list(&p).unwrap_err();
        assert_eq!(e.problems.len(), 2, "{e}");
        std::fs::write(&p, "https://a.test/rss\nhttps://a.test/rss # again\n").unwrap();
        assert_eq!(read_feed_list(&p).unwrap().len(), 1);
    }

    proptest! {
        #[test]
        fn arbitrary_feeds_never_panic(body in proptest::collection::vec(any::<u8>(), 0..500),
                                       prefix in "(<rss|<rss version=\"x\"|<feed|\\{\"version\":)?") {
            let mut b = prefix.into_bytes();
            b.extend(body);
            let _ = parse_feed(&b, &base());
        }
    }
}
