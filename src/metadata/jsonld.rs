//! schema.org JSON-LD (`<script type="application/ld+json">`): the article's headline, dates,
//! authors, description, image, keywords, section and publisher. A block may hold one
//! object, an array of them, or a `@graph`; the article is the first object whose `@type`
//! is an article type (`Article`, `NewsArticle`, `BlogPosting`, `ReportageNewsArticle`, …),
//! else a `WebPage`. Blocks over [`MAX_BLOCK_BYTES`] are skipped and nesting deeper than
//! [`MAX_DEPTH`] is not walked, so a hostile page costs bounded time and memory; serde_json
//! itself stops at 128 levels.

use serde_json::Value;

/// Largest JSON-LD block read.
pub const MAX_BLOCK_BYTES: usize = 1 << 20;
/// Deepest nesting walked looking for the article object.
pub const MAX_DEPTH: usize = 8;

/// What one page's JSON-LD says about its article.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct JsonLd {
    pub headline: Option<String>,
    pub published: Option<String>,
    pub modified: Option<String>,
    pub authors: Vec<String>,
    pub description: Option<String>,
    pub image: Option<String>,
    pub keywords: Vec<String>,
    pub section: Vec<String>,
    pub publisher: Option<String>,
    pub url: Option<String>,
    /// Whether the object was an article type (not just a `WebPage`).
    pub is_article: bool,
}

fn is_article_type(t: &str) -> bool {
    let t = t.rsplit('/').next().unwrap_or(t);
    t.ends_with("Article") || matches!(t, "BlogPosting" | "LiveBlogPosting" | "SocialMediaPosting" | "Report")
}

fn types(v: &Value) -> Vec<&str> {
    match v.get("@type") {
        Some(Value::String(s)) => vec![s.as_str()],
        Some(Value::Array(a)) => a.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    }
}

/// Collects candidate objects from a parsed block: article types, `WebPage`s, and other
/// objects that say when they were published (a `HowTo`, a `Recipe`, a `VideoObject`: the page's
/// main thing when it is not an article).
fn walk<'a>(v: &'a Value, depth: usize, found: &mut Found<'a>) {
    if depth > MAX_DEPTH {
        return;
    }
    match v {
        Value::Array(a) => a.iter().for_each(|x| walk(x, depth + 1, found)),
        Value::Object(o) => {
            let t = types(v);
            if t.iter().any(|t| is_article_type(t)) {
                found.articles.push(v);
            } else if t.iter().any(|t| t.ends_with("WebPage")) {
                found.pages.push(v);
            } else if o.contains_key("datePublished") {
                found.others.push(v);
            }
            if let Some(g) = o.get("@graph") {
                walk(g, depth + 1, found);
            }
            if let Some(m) = o.get("mainEntity") {
                walk(m, depth + 1, found);
            }
        }
        _ => {}
    }
}

/// A text value: a string, or the `name` / `@value` / `url` of an object, or the first of
/// an array.
fn text(v: &Value) -> Option<String> {
    let s = match v {
        Value::String(s) => s.clone(),
        Value::Number(n) => n.to_string(),
        Value::Object(o) => return ["name", "@value", "url", "text"].iter().find_map(|k| o.get(*k).and_then(text)),
        Value::Array(a) => return a.iter().find_map(text),
        _ => return None,
    };
    let s = s.split_whitespace().collect::<Vec<_>>().join(" ");
    (!s.is_empty()).then_some(s)
}

/// Every text value of a field that may be one value or a list (authors, keywords).
fn texts(v: &Value) -> Vec<String> {
    match v {
        Value::Array(a) => a.iter().filter_map(text).collect(),
        other => text(other).into_iter().collect(),
    }
}

fn split_keywords(v: Vec<String>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for k in v.iter().flat_map(|s| s.split(',')) {
        let k = k.trim();
        if !k.is_empty() && !out.iter().any(|o| o == k) {
            out.push(k.to_string());
        }
    }
    out
}

/// Reads the JSON-LD blocks of one page (their texts, in page order). Blocks that are not
/// JSON are skipped: pages often hold broken ones.
pub fn read<'a>(blocks: impl IntoIterator<Item = &'a str>) -> JsonLd {
    let mut parsed: Vec<Value> = Vec::new();
    let mut broken: Vec<&str> = Vec::new();
    for b in blocks.into_iter().filter(|b| b.len() <= MAX_BLOCK_BYTES) {
        match serde_json::from_str::<Value>(b.trim().trim_end_matches(';')) {
            Ok(v) => parsed.push(v),
            Err(_) => broken.push(b),
        }
    }
    let mut ld = read_parsed(&parsed);
    // Blocks that are not JSON (comments, trailing commas, unescaped quotes) still often
    // state the dates plainly: take them as written when no block parsed gave one.
    for b in broken {
        ld.published = ld.published.or_else(|| string_value(b, "datePublished"));
        ld.modified = ld.modified.or_else(|| string_value(b, "dateModified"));
    }
    ld
}

/// `"key": "value"` in raw text.
fn string_value(text: &str, key: &str) -> Option<String> {
    let at = text.find(&format!("\"{key}\""))? + key.len() + 2;
    let rest = text[at..].trim_start().strip_prefix(':')?.trim_start().strip_prefix('"')?;
    let end = rest.find('"')?;
    (end <= 64).then(|| rest[..end].to_string())
}

/// The objects [`walk`] collects, by kind.
#[derive(Default)]
struct Found<'a> {
    articles: Vec<&'a Value>,
    pages: Vec<&'a Value>,
    others: Vec<&'a Value>,
}

fn read_parsed(parsed: &[Value]) -> JsonLd {
    let mut found = Found::default();
    for v in parsed {
        walk(v, 0, &mut found);
    }
    let is_article = !found.articles.is_empty();
    let Some(obj) = found.articles.first().or(found.pages.first()).or(found.others.first()).copied() else {
        return JsonLd::default();
    };
    let get = |k: &str| obj.get(k);
    let publisher = get("publisher").and_then(text).or_else(|| {
        parsed.iter().find_map(|v| find_type(v, "Organization", 0).and_then(|o| o.get("name")).and_then(text))
    });
    JsonLd {
        headline: get("headline").or(get("name")).and_then(text),
        published: get("datePublished").or(get("dateCreated")).and_then(text),
        modified: get("dateModified").and_then(text),
        authors: get("author").or(get("creator")).map(texts).unwrap_or_default(),
        description: get("description").and_then(text),
        image: get("image").or(get("thumbnailUrl")).and_then(text),
        keywords: split_keywords(get("keywords").map(texts).unwrap_or_default()),
        section: split_keywords(get("articleSection").map(texts).unwrap_or_default()),
        publisher,
        url: get("url").or(get("mainEntityOfPage")).and_then(|v| match v {
            Value::Object(o) => o.get("@id").and_then(text),
            other => text(other),
        }),
        is_article,
    }
}

fn find_type<'a>(v: &'a Value, ty: &str, depth: usize) -> Option<&'a Value> {
    if depth > MAX_DEPTH {
        return None;
    }
    match v {
        Value::Array(a) => a.iter().find_map(|x| find_type(x, ty, depth + 1)),
        Value::Object(o) => {
            if types(v).contains(&ty) {
                return Some(v);
            }
            o.get("@graph").and_then(|g| find_type(g, ty, depth + 1))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_news_article_with_nested_author_image_and_publisher() {
        let b = r#"{"@context":"https://schema.org","@type":"NewsArticle","headline":"Ferry  timetable approved",
            "datePublished":"2026-11-24T09:30:00+01:00","dateModified":"2026-11-25",
            "author":[{"@type":"Person","name":"Ann Lee"},{"@type":"Person","name":"Bo Chan"}],
            "image":{"@type":"ImageObject","url":"https://x.test/a.jpg"},"keywords":"ferry, council,ferry",
            "articleSection":"Local","publisher":{"@type":"Organization","name":"Harbour News"}}"#;
        let j = read([b]);
        assert_eq!(j.headline.as_deref(), Some("Ferry timetable approved"));
        assert_eq!(j.published.as_deref(), Some("2026-11-24T09:30:00+01:00"));
        assert_eq!(j.modified.as_deref(), Some("2026-11-25"));
        assert_eq!(j.authors, ["Ann Lee", "Bo Chan"]);
        assert_eq!(j.image.as_deref(), Some("https://x.test/a.jpg"));
        assert_eq!(j.keywords, ["ferry", "council"]);
        assert_eq!(j.section, ["Local"]);
        assert_eq!(j.publisher.as_deref(), Some("Harbour News"));
        assert!(j.is_article);
    }

    #[test]
    fn a_graph_and_arrays_and_broken_blocks() {
        let broken = "{not json";
        let graph = r#"{"@context":"https://schema.org","@graph":[
            {"@type":"Organization","name":"Example Daily"},
            {"@type":"WebPage","name":"Page name","datePublished":"2020-01-01"},
            {"@type":["BlogPosting"],"headline":"The post","datePublished":"2021-05-06","author":"Cy"}]}"#;
        let j = read([broken, graph]);
        assert_eq!(j.headline.as_deref(), Some("The post"), "the article wins over the WebPage");
        assert_eq!(j.published.as_deref(), Some("2021-05-06"));
        assert_eq!(j.authors, ["Cy"]);
        assert_eq!(j.publisher.as_deref(), Some("Example Daily"));
        let arr =
            r#"[{"@type":"BreadcrumbList"},{"@type":"WebPage","name":"Only a page","datePublished":"2019-02-03"}]"#;
        let j = read([arr]);
        assert_eq!((j.headline.as_deref(), j.is_article), (Some("Only a page"), false));
        assert_eq!(read(["[]", "42", "null"]), JsonLd::default());
        let commented = r#"{"@type":"NewsArticle", //"x": 1,
            "datePublished": "2020-10-04T15:05:21+08:00", "dateModified" : "2020-10-05"}"#;
        let j = read([commented]);
        assert_eq!(
            (j.published.as_deref(), j.modified.as_deref()),
            (Some("2020-10-04T15:05:21+08:00"), Some("2020-10-05"))
        );
    }

    #[test]
    fn deep_nesting_is_not_walked_past_the_bound() {
        let mut deep = String::new();
        for _ in 0..100 {
            deep.push('[');
        }
        deep.push_str(r#"{"@type":"NewsArticle","headline":"deep"}"#);
        for _ in 0..100 {
            deep.push(']');
        }
        assert_eq!(read([deep.as_str()]).headline, None);
    }
}
