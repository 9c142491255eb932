//! The output record: one JSON object per extracted page, shaped like datatrove and dolma
//! documents (`id`, `text`, `metadata`) so their readers load it as is. The schema is
//! documented in README.md and in `schema/record.schema.json`.

use serde::{Deserialize, Serialize};

use crate::dedup::Fingerprints;

/// One extracted page.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Record {
    /// The WARC-Record-ID of the response, or `url:` + xxh3-64 hex of the final URL.
    pub id: String,
    /// The extracted article text (paragraphs separated by blank lines).
    pub text: String,
    pub metadata: Metadata,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Metadata {
    /// The URL the page was asked for (the feed item link, or WARC-Target-URI).
    pub url: String,
    /// The URL after redirects (equal to `url` for WARC input).
    pub final_url: String,
    pub source: Source,
    /// When the page was fetched (RFC 3339, UTC).
    pub fetched_at: Option<String>,
    /// HTTP status of the response.
    pub status: Option<u16>,
    /// The response's Content-Type, as sent.
    pub content_type: Option<String>,
    /// The character encoding the page was decoded with.
    pub charset: Option<String>,
    /// The article's title: JSON-LD `headline`, `og:title`, `twitter:title`, the first `<h1>`
    /// or `<title>` (the first present), with the site name stripped.
    pub title: Option<String>,
    /// Text of `<title>`, as it is.
    #[serde(default)]
    pub html_title: Option<String>,
    /// Dates, language, authors, description, site name, canonical URL, image, sections and
    /// keywords ([`crate::metadata`]).
    #[serde(flatten)]
    pub article: crate::metadata::ArticleMeta,
    /// The feed item's own fields (feeds mode).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub feed: Option<crate::metadata::FeedItem>,
    pub extraction: ExtractionInfo,
    pub fingerprints: Fingerprints,
    /// The id of the first record of this run whose text this one nearly duplicates.
    pub near_duplicate_of: Option<String>,
    /// Predicted article title, headings and structure warnings (`knn`, `igtree`); null for
    /// scorers that do not label structure.
    #[serde(default)]
    pub structure: Option<crate::scoring::Structure>,
}

pub use crate::sources::Source;

/// How the text was extracted.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExtractionInfo {
    pub scorer: String,
    /// Model identity (`default`, a file name, …), if the scorer has one.
    pub model: Option<String>,
    /// First and last token of the chosen span.
    pub span: Option<(usize, usize)>,
    /// Value of the maximum subsequence.
    pub score: f64,
    /// Tokens of the page.
    pub tokens: usize,
    /// Site memory marked blocks of the page as its site's furniture (scored down, dropped
    /// from the span; [`crate::site_memory`]).
    #[serde(default)]
    pub site_memory: bool,
}
