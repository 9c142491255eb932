//! Hand-made pages for each source of metadata, and which source wins when they disagree.

use super::*;
use crate::html::{TokenizerOptions, tokenize};

fn signals(html: &str) -> Signals {
    let s = tokenize(html.as_bytes(), TokenizerOptions::default()).unwrap();
    let mut c = Collector::default();
    for t in &s.sink {
        c.token(&s.page, t);
    }
    c.finish(&s.page, None)
}

fn meta_of(html: &str, url: &str) -> (ArticleMeta, Option<String>) {
    resolve(&signals(html), &Context { url, fetched_at: Some("2026-11-24T12:00:00Z"), ..Context::default() })
}

const BODY: &str = "<body><h1>Ferry timetable approved</h1><p>The council voted on Tuesday.</p></body>";

#[test]
fn json_ld_gives_dates_authors_and_the_headline_over_every_other_source() {
    let html = format!(
        r#"<html lang="en"><head><title>Ferry timetable approved | Harbour News</title>
        <meta property="og:title" content="OG title">
        <meta name="author" content="Meta Author">
        <script type="application/ld+json">{{"@type":"NewsArticle","headline":"LD headline",
          "datePublished":"2026-11-22T10:00:00+01:00","dateModified":"2026-11-23",
          "author":{{"@type":"Person","name":"Ann Lee"}},"publisher":{{"name":"Harbour News"}}}}</script>
        </head>{BODY}</html>"#
    );
    let (m, title) = meta_of(&html, "https://harbour.test/ferry");
    assert_eq!(m.published.as_deref(), Some("2026-11-22T10:00:00+01:00"));
    assert_eq!(m.date_source.as_deref(), Some("json-ld"));
    assert_eq!(m.modified.as_deref(), Some("2026-11-23"));
    assert_eq!(m.authors, ["Ann Lee"]);
    assert_eq!(m.site_name.as_deref(), Some("Harbour News"));
    assert_eq!(title.as_deref(), Some("LD headline"));
}

#[test]
fn meta_tags_open_graph_dublin_core_and_microdata() {
    let html = format!(
        r#"<html><head><title>Ferry timetable approved - Harbour News</title>
        <meta property="og:site_name" content="Harbour News">
        <meta property="og:title" content="Ferry timetable approved - Harbour News">
        <meta name="description" content="The council &amp; the ferry.">
        <meta property="og:image" content="https://harbour.test/f.jpg">
        <meta property="og:url" content="https://harbour.test/og">
        <link rel="canonical" href="https://harbour.test/ferry">
        <meta name="DC.date.issued" content="2025-03-04">
        <meta name="keywords" content="ferry, council">
        <meta property="article:tag" content="harbour">
        <meta property="article:section" content="Local">
        <meta name="author" content="By Ann Lee and Bo Chan">
        <meta http-equiv="content-language" content="de-DE">
        </head>{BODY}</html>"#
    );
    let (m, title) = meta_of(&html, "https://harbour.test/ferry");
    assert_eq!((m.published.as_deref(), m.date_source.as_deref()), (Some("2025-03-04"), Some("meta")));
    assert_eq!(title.as_deref(), Some("Ferry timetable approved"), "site name stripped");
    assert_eq!(m.description.as_deref(), Some("The council & the ferry."));
    assert_eq!(m.image.as_deref(), Some("https://harbour.test/f.jpg"));
    assert_eq!(m.canonical_url.as_deref(), Some("https://harbour.test/ferry"), "canonical link over og:url");
    assert_eq!(m.keywords, ["ferry", "council", "harbour"]);
    assert_eq!(m.categories, ["Local"]);
    assert_eq!(m.authors, ["Ann Lee", "Bo Chan"]);
    assert_eq!(m.lang.as_deref(), Some("de"), "a short text takes the declared language");
    assert_eq!(m.lang_confidence, None);
    // Microdata on an element other than <meta>.
    let html =
        format!(r#"<html><body><span itemprop="datePublished" content="2024-07-08">8 July</span>{BODY}</body></html>"#);
    assert_eq!(meta_of(&html, "https://x.test/").0.published.as_deref(), Some("2024-07-08"));
}

#[test]
fn time_elements_then_url_then_text() {
    let marked = format!(
        r#"<html><body><time datetime="2023-01-01">x</time><time pubdate datetime="2023-02-02T10:00">y</time>{BODY}</body></html>"#
    );
    let (m, _) = meta_of(&marked, "https://x.test/a");
    assert_eq!((m.published.as_deref(), m.date_source.as_deref()), (Some("2023-02-02T10:00:00"), Some("time")));
    let (m, _) = meta_of(&format!("<html>{BODY}</html>"), "https://x.test/news/2022/05/06/a.html");
    assert_eq!((m.published.as_deref(), m.date_source.as_deref()), (Some("2022-05-06"), Some("url")));
    let text =
        "<html><body><h1>Headline</h1><p class=date>Veröffentlicht am 3. März 2021</p><p>Text.</p></body></html>";
    let (m, title) = meta_of(text, "https://x.test/a");
    assert_eq!((m.published.as_deref(), m.date_source.as_deref()), (Some("2021-03-03"), Some("text")));
    assert_eq!(title.as_deref(), Some("Headline"), "the h1 when nothing better");
    let (m, _) = meta_of("<html><body><p>No date at all.</p></body></html>", "https://x.test/a");
    assert_eq!((m.published, m.date_source), (None, None));
}

#[test]
fn a_utc_time_a_day_off_the_url_date_takes_the_url_day() {
    let html = r#"<html><head><meta property="article:published_time" content="2023-11-09T03:10:00Z"></head></html>"#;
    let (m, _) = meta_of(html, "https://x.test/2023/11/08/story");
    assert_eq!((m.published.as_deref(), m.date_source.as_deref()), (Some("2023-11-08"), Some("url")));
    let (m, _) = meta_of(html, "https://x.test/2023/11/09/story");
    assert_eq!(
        (m.published.as_deref(), m.date_source.as_deref()),
        (Some("2023-11-09T03:10:00Z"), Some("meta")),
        "the same day: the structured date, with its time"
    );
    let (m, _) = meta_of(html, "https://x.test/2023/10/01/story");
    assert_eq!(
        (m.published.as_deref(), m.date_source.as_deref()),
        (Some("2023-10-01"), Some("url")),
        "further apart: the structured date is the last update's"
    );
}

/// htmldate's order: the URL's day, the page's header (`<meta>`), JSON-LD, a marked `<time>`,
/// a written date next to the headline, and only then an unmarked `<time>`.
#[test]
fn the_header_before_json_ld_and_a_date_line_before_an_unmarked_time() {
    let html = r#"<html><head><meta property="article:published_time" content="2022-01-06T08:29:34">
        <script type="application/ld+json">{"@type":"NewsArticle","datePublished":"2022-01-04T07:29:00Z"}</script>
        </head><body><h1>Headline</h1></body></html>"#;
    let (m, _) = meta_of(html, "https://x.test/a");
    assert_eq!((m.published.as_deref(), m.date_source.as_deref()), (Some("2022-01-06T08:29:34"), Some("meta")));
    // A teaser's <time> further down is not the article's; the date line under the headline is.
    let html = r#"<html><body><h1>Headline</h1><p>Text of the story, which was in effect on 28.01.2022 and
        still is.</p><div>02.02.2022 &bull; Presse</div><ul><li><time datetime="2020-12-03">x</time></li></ul>
        </body></html>"#;
    let (m, _) = meta_of(html, "https://x.test/a");
    assert_eq!((m.published.as_deref(), m.date_source.as_deref()), (Some("2022-02-02"), Some("text")));
    // A HowTo (not an article) that says when it was published.
    let html = r#"<html><head><script type="application/ld+json">{"@type":"HowTo","name":"A table cloth",
        "datePublished":"2022-01-10T22:06:08:684Z"}</script></head><body><p>x</p></body></html>"#;
    let (m, _) = meta_of(html, "https://x.test/a");
    assert_eq!(
        (m.published.as_deref().map(|d| &d[..10]), m.date_source.as_deref()),
        (Some("2022-01-10"), Some("json-ld"))
    );
}

#[test]
fn dates_after_the_fetch_are_refused() {
    let html = r#"<html><head><meta property="article:published_time" content="2030-01-01"></head>
        <body><time datetime="2026-01-05">x</time></body></html>"#;
    let (m, _) = meta_of(html, "https://x.test/");
    assert_eq!((m.published.as_deref(), m.date_source.as_deref()), (Some("2026-01-05"), Some("time")));
}

#[test]
fn a_feed_item_fills_what_the_page_lacks() {
    let feed = FeedItem {
        title: Some("Feed title".into()),
        published: Some("Tue, 24 Nov 2026 09:30:00 GMT".into()),
        authors: vec!["Feed Author".into()],
        categories: vec!["Harbour".into()],
        summary: Some("Feed summary".into()),
        ..FeedItem::default()
    };
    let sig = signals("<html><body><p>Only text.</p></body></html>");
    let (m, title) = resolve(&sig, &Context { url: "https://x.test/a", feed: Some(&feed), ..Context::default() });
    assert_eq!((m.published.as_deref(), m.date_source.as_deref()), (Some("2026-11-24T09:30:00Z"), Some("feed")));
    assert_eq!(m.authors, ["Feed Author"]);
    assert_eq!(m.categories, ["Harbour"]);
    assert_eq!(m.description.as_deref(), Some("Feed summary"));
    assert_eq!(title.as_deref(), Some("Feed title"));
    // The page's own values win over the item's.
    let sig = signals(
        r#"<html><head><meta name="author" content="Page Author"><meta name="date" content="2026-11-01"></head></html>"#,
    );
    let (m, _) = resolve(&sig, &Context { url: "https://x.test/a", feed: Some(&feed), ..Context::default() });
    assert_eq!(m.authors, ["Page Author"]);
    assert_eq!(m.date_source.as_deref(), Some("meta"));
}

#[test]
fn long_text_is_identified_whatever_the_page_declares() {
    let text = "The harbour council voted on Tuesday to approve the new ferry timetable for the winter, \
                after months of complaints from commuters about long waits at the terminal and missed \
                connections with the early trains into the city centre.";
    let sig = signals(r#"<html lang="fr"><body><p>x</p></body></html>"#);
    let (m, _) = resolve(&sig, &Context { url: "https://x.test/", text, ..Context::default() });
    assert_eq!(m.lang.as_deref(), Some("en"));
    assert!(m.lang_confidence.is_some());
}

#[test]
fn attributes_are_read_in_every_quoting_style() {
    let a = attributes(r#"<meta NAME=author content='Ann &amp; Bo' data-x="a>b" checked>"#);
    let a: Vec<(String, String)> = a.into_iter().map(|(k, v)| (k.into_owned(), v.into_owned())).collect();
    assert_eq!(
        a,
        [
            ("name".to_string(), "author".to_string()),
            ("content".to_string(), "Ann & Bo".to_string()),
            ("data-x".to_string(), "a>b".to_string()),
            ("checked".to_string(), String::new())
        ]
    );
    assert!(attributes("<").is_empty());
    assert!(attributes("<a x=\"unterminated").iter().any(|(k, v)| k == "x" && v == "unterminated"));
}

#[test]
fn site_names_are_stripped_from_titles() {
    assert_eq!(strip_site_name("Ferry approved | Harbour News", Some("Harbour News")), "Ferry approved");
    assert_eq!(strip_site_name("Harbour News - Ferry approved", Some("harbour news")), "Ferry approved");
    assert_eq!(strip_site_name("Ferry approved | Harbour News", None), "Ferry approved");
    assert_eq!(strip_site_name("A - B", None), "A - B", "no site name, no pipe: kept");
    assert_eq!(strip_site_name("Harbour News", Some("Harbour News")), "Harbour News", "never emptied");
}

proptest::proptest! {
    #[test]
    fn arbitrary_pages_never_panic(bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..2000)) {
        let html = String::from_utf8_lossy(&bytes);
        let page = format!("<html><head><script type=application/ld+json>{html}</script><meta name=date content='{html}'></head><body><h1>{html}</h1><time datetime='{html}'>x</time></body></html>");
        let sig = signals(&page);
        let _ = resolve(&sig, &Context { url: &html, text: &html, ..Context::default() });
        let _ = dates::parse(&html);
        let _ = dates::find_in_text(&html);
        let _ = jsonld::read([html.as_ref()]);
    }
}

#[test]
fn an_iso_date_in_an_attribute_answers_when_nothing_else_does() {
    let html = r#"<html><body><div class="news-list-row"><div class="ago" title="2020-09-20T14:20:02Z">3 hours ago</div></div>
        <p>Text without a written date.</p><a href="/2019-01-01-other">other</a></body></html>"#;
    let (m, _) = meta_of(html, "https://news.test/story/10939686");
    assert_eq!(m.published.as_deref().map(|d| &d[..10]), Some("2020-09-20"));
    assert_eq!(m.date_source.as_deref(), Some("attribute"));
}

#[test]
fn the_page_wide_fallback_skips_dates_after_the_fetch() {
    // A placeholder far in the future comes first; the real date follows it.
    let html = r#"<html><body><div>Angebot gültig bis 31.12.2099</div><div class=x>Kategorie</div>
        <span class="blue">01.02.2022</span><p>Meldung ohne Überschrift.</p></body></html>"#;
    let (m, _) = meta_of(html, "https://verband.test/aktuelles/lesen/");
    assert_eq!(m.published.as_deref(), Some("2022-02-01"));
    assert_eq!(m.date_source.as_deref(), Some("text"));
}

#[test]
fn the_main_image_path_and_short_url_dates_count_as_url_dates() {
    let html = r#"<html><head><meta property="og:image" content="https://eff.test/files/2016/05/04/ar.png"></head>
        <body><p>Annual report.</p></body></html>"#;
    let (m, _) = meta_of(html, "https://eff.test/annual-report/index.html");
    assert_eq!(m.published.as_deref(), Some("2016-05-04"));
    assert_eq!(m.date_source.as_deref(), Some("url"));
    assert_eq!(
        dates::from_url("https://be.test/home/2017/7/12/unter-uns").map(|d| d.day_string()).as_deref(),
        Some("2017-07-12")
    );
}

proptest::proptest! {
    /// The attribute scan and the page-wide date search take any bytes: no panic, bounded.
    #[test]
    fn date_scans_take_any_input(bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..400), text in ".{0,300}") {
        let _ = TagMarks::of(&bytes);
        proptest::prop_assert!(dates::find_all_in_text(&text, 3).len() <= 3);
        let _ = dates::from_url(&text);
        let _ = dates::find_short_year(&text);
        let _ = dates::find_short_year(&String::from_utf8_lossy(&bytes));
        proptest::prop_assert!(dates::find_in_markup(&String::from_utf8_lossy(&bytes), 5).len() <= 5);
        let _ = dates::from_image_url(&text);
        let _ = date_line(&text);
        let _ = date_line(&String::from_utf8_lossy(&bytes));
        let page = format!("<html><body><abbr title='{text}' data-utime='{text}'>x</abbr><p>{text}</p></body></html>");
        let _ = resolve(&signals(&page), &Context { url: "https://x.test/a", ..Context::default() });
    }
}

#[test]
fn a_utc_date_takes_the_publishers_day() {
    // The same moment in the header (UTC) and in a <time> of the publisher's zone.
    let html = r#"<html><head><meta property="article:published_time" content="2023-11-09T02:11:03+00:00">
        </head><body><time datetime="2023-11-08T21:11:03-05:00" itemprop="datePublished">Nov 8</time></body></html>"#;
    let (m, _) = meta_of(html, "https://x.test/a");
    assert_eq!(m.published.as_deref(), Some("2023-11-08T21:11:03-05:00"));
    // A bare date stored as Central European midnight in UTC.
    let html = r#"<html><head><meta property="article:published_time" content="2021-11-04T23:00Z"></head></html>"#;
    let (m, _) = meta_of(html, "https://x.test/a");
    assert_eq!(m.published.as_deref(), Some("2021-11-05T00:00:00+01:00"));
    // Any other UTC time stands.
    let html = r#"<html><head><meta property="article:published_time" content="2021-11-04T23:17:00Z"></head></html>"#;
    let (m, _) = meta_of(html, "https://x.test/a");
    assert_eq!(m.published.as_deref(), Some("2021-11-04T23:17:00Z"));
}

#[test]
fn a_time_element_after_hundreds_of_microdata_properties_is_read() {
    let props = r#"<span itemprop="name">x</span>"#.repeat(800);
    let html = format!(
        r#"<html><body>{props}<h1>Headline</h1><p>Story text.</p><p class=info><time datetime="2022-01-21T11:59:00+01:00">Friday</time></p></body></html>"#
    );
    let (m, _) = meta_of(&html, "https://x.test/a");
    assert_eq!(m.published.as_deref(), Some("2022-01-21T11:59:00+01:00"));
}

#[test]
fn a_date_in_a_sentence_comes_after_a_time_element() {
    // The day a rule took effect, in the story's first sentence, is not the story's date.
    let html = r#"<html><body><h2>Changes to the rules</h2><p>With the rules in force since 15 January 2022,
        certificates are valid for a shorter time, as the ministry explained in a long statement.</p>
        <time datetime="2022-01-26">26 January 2022</time></body></html>"#;
    let (m, _) = meta_of(html, "https://x.test/a");
    assert_eq!((m.published.as_deref(), m.date_source.as_deref()), (Some("2022-01-26"), Some("time")));
}

#[test]
fn abbr_dates_the_earliest_of_them() {
    // Facebook's posts: Unix seconds in data-utime, the newest post first.
    let html = r#"<html><body><h1>Visit</h1><p>Posts</p>
        <abbr title="Sonntag, 8. Oktober 2017 um 02:12" data-utime="1507453920">8. Okt</abbr>
        <abbr title="Freitag, 6. Oktober 2017 um 04:00" data-utime="1507262400">6. Okt</abbr></body></html>"#;
    let (m, _) = meta_of(html, "https://social.test/visit/");
    assert_eq!(
        (m.published.as_deref().map(|d| &d[..10]), m.date_source.as_deref()),
        (Some("2017-10-06"), Some("abbr"))
    );
    // hAtom: the date in the title.
    let html =
        r#"<html><body><p>Entry</p><abbr class="published" title="2012-12-16T10:00:00Z">Dec 16</abbr></body></html>"#;
    let (m, _) = meta_of(html, "https://blog.test/entry");
    assert_eq!(
        (m.published.as_deref().map(|d| &d[..10]), m.date_source.as_deref()),
        (Some("2012-12-16"), Some("abbr"))
    );
}

#[test]
fn the_markup_answers_last_with_its_most_frequent_date() {
    // No date in the text or the structured data: links to the page's own sections, dated.
    let html = r#"<html><body><p>A story without a date.</p>
        <a href="/news/article-2022-01-17-160147.html">a</a><a href="/news/2022/01/17/b.html">b</a>
        <a href="/news/2021/12/01/c.html">c</a><img src="/img/20220125151957.jpg"></body></html>"#;
    let (m, _) = meta_of(html, "https://x.test/a");
    assert_eq!((m.published.as_deref(), m.date_source.as_deref()), (Some("2022-01-17"), Some("markup")));
    // A date line set with bars.
    let html = r#"<html><body><table><tr><td>26 | 01 | 2022 </td><td>Fishing</td></tr></table></body></html>"#;
    let (m, _) = meta_of(html, "https://x.test/a");
    assert_eq!((m.published.as_deref(), m.date_source.as_deref()), (Some("2022-01-26"), Some("markup")));
    // A cookie's expiry in a script neither answers nor stops the search.
    let html = r#"<html><body><script>document.cookie='a=1; expires=Thu, 31 Dec 2099 23:59:59 UTC'</script>
        <p>Text.</p><a href="/aktuell/article-2022-01-17-160147.html">a</a></body></html>"#;
    let (m, _) = meta_of(html, "https://x.test/a");
    assert_eq!((m.published.as_deref(), m.date_source.as_deref()), (Some("2022-01-17"), Some("markup")));
    // Any written date wins over the markup's.
    let html = r#"<html><body><h1>T</h1><p>Published 3 March 2021</p><a href="/2022/01/17/b.html">b</a></body></html>"#;
    let (m, _) = meta_of(html, "https://x.test/a");
    assert_eq!((m.published.as_deref(), m.date_source.as_deref()), (Some("2021-03-03"), Some("text")));
}

/// The marks by a substring search per word, as the collector found them before its one pass.
fn marks_by_search(raw: &[u8]) -> TagMarks {
    let has = |w: &[u8]| raw.windows(w.len()).any(|x| x == w);
    if !raw.contains(&b'=') {
        return TagMarks::default();
    }
    TagMarks {
        itemprop: has(b"itemprop"),
        ld_json: has(b"ld+json"),
        date: has(b"date") || has(b"publish"),
        author: has(b"author"),
        byline: has(b"byline"),
        comment: has(b"comment"),
        iso_value: (0..raw.len()).any(|i| {
            let v = &raw[i..];
            v.len() > 7
                && v[0] == b'='
                && matches!(v[1], b'"' | b'\'')
                && matches!(&v[2..4], b"19" | b"20")
                && v[4].is_ascii_digit()
                && v[5].is_ascii_digit()
                && v[6] == b'-'
        }),
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(3000))]
    /// The one-pass scan of a start tag finds what a search for each word finds.
    #[test]
    fn tag_marks_match_a_search_per_word(pieces in proptest::collection::vec(proptest::sample::select(&[
        "itemprop", "itempro", "ld+json", "ld+jso", "date", "dat", "publish", "author", "autho", "byline",
        "comment", "=", "\"", "'", "=\"2020-", "='1999-0", "=\"2020", "2021-", "19", "-", " ", "class", "i", "l",
        "d", "p", "a", "b", "c", "<div ", ">", "é",
    ][..]), 0..16)) {
        let raw = pieces.concat();
        proptest::prop_assert_eq!(TagMarks::of(raw.as_bytes()), marks_by_search(raw.as_bytes()), "{:?}", raw);
    }
}

#[test]
fn a_two_digit_year_counts_on_the_date_line_only() {
    // The date line above the headline carries the only date, with a two-digit year.
    let html = r#"<html><body><div class=kicker>In the media</div><span style="color:red">02.12.19</span>
        <h1>What is on the cards</h1><p>Version 1.2.19 of the tool, released 10.11.12.13 and scored 3.4.56.</p></body></html>"#;
    let (m, _) = meta_of(html, "https://school.test/en/debate/detail");
    assert_eq!(m.published.as_deref(), Some("2019-12-02"));
    assert_eq!(dates::find_short_year("v1.2.19.4"), None, "a version is no date");
    assert_eq!(dates::find_short_year("10.11.12.13"), None, "an address is no date");
    assert_eq!(dates::find_short_year("31.12.99").map(|d| d.day_string()).as_deref(), Some("1999-12-31"));
    assert_eq!(dates::find_short_year("31.02.20"), None, "no such day");
}

#[test]
fn month_names_of_more_languages() {
    for (text, day) in [
        ("15 августа 2016, 13:43", "2016-08-15"),
        ("3 листопада 2021", "2021-11-03"),
        ("12 października 2020", "2020-10-12"),
        ("5. června 2019", "2019-06-05"),
        ("7 Kasım 2022", "2022-11-07"),
        ("1 maj 2018", "2018-05-01"),
    ] {
        assert_eq!(dates::find_in_text(text).map(|d| d.day_string()).as_deref(), Some(day), "{text}");
    }
}

#[test]
fn the_last_modified_header_is_the_last_resort() {
    let html = "<html><body><h1>Opening hours</h1><p>Open every day.</p></body></html>";
    let cx = Context {
        url: "https://shop.test/hours",
        fetched_at: Some("2026-11-24T12:00:00Z"),
        last_modified: Some("Wed, 21 Oct 2015 07:28:00 GMT"),
        ..Context::default()
    };
    let (m, _) = resolve(&signals(html), &cx);
    assert_eq!(m.published.as_deref().map(|d| &d[..10]), Some("2015-10-21"));
    assert_eq!(m.date_source.as_deref(), Some("last-modified"));
    // Any date of the page's own comes first.
    let dated = "<html><body><h1>Opening hours</h1><p>Updated 3 March 2020.</p></body></html>";
    let (m, _) = resolve(&signals(dated), &cx);
    assert_eq!(m.published.as_deref().map(|d| &d[..10]), Some("2020-03-03"));
}

#[test]
fn bylines_by_class_and_by_lines_after_the_headline_give_clean_names() {
    let html = r#"<html><body><h1>Ferry timetable approved</h1>
        <div class="article-byline">By Ann Lee, Staff Writer | 3 May 2024</div><p>Text.</p></body></html>"#;
    let (m, _) = meta_of(html, "https://harbour.test/ferry");
    assert_eq!(m.authors, ["Ann Lee"]);
    let html = r#"<html><body><h1>Ferry timetable approved</h1><p><em>By Ann Lee and Bo Chan</em></p>
        <p>By Tuesday the council had voted.</p></body></html>"#;
    let (m, _) = meta_of(html, "https://harbour.test/ferry");
    assert_eq!(m.authors, ["Ann Lee", "Bo Chan"]);
    // "By Tuesday the council" is no byline: one capitalised word is no name.
    let html = "<html><body><h1>Ferry</h1><p>By Tuesday the council had voted.</p></body></html>";
    let (m, _) = meta_of(html, "https://harbour.test/ferry");
    assert!(m.authors.is_empty(), "{:?}", m.authors);
    // Structured authors still come first.
    let html = r#"<html><head><meta name="author" content="Meta Author"></head><body><h1>F</h1>
        <div class="byline">By Ann Lee</div></body></html>"#;
    let (m, _) = meta_of(html, "https://harbour.test/ferry");
    assert_eq!(m.authors, ["Meta Author"]);
}
