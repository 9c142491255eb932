//! The extractor: one page in, its article text out, in a single streaming pass
//! (tokens → scores → maximum subsequence), then the chosen span is cleaned and laid out.
//!
//! Synchronous and free of I/O: sources, benches, fuzz targets and the CLI all call
//! [`Extractor::extract`] (whole page) or [`Extractor::page`] (chunked writes).

pub mod text;

use serde::{Deserialize, Serialize};

use crate::html::{Token, TokenKind, TokenSink, TokenizeError, Tokenizer, TokenizerOptions};
use crate::metadata::{ArticleMeta, Collector, Context, Signals, resolve};
use crate::scoring::{MaxSubsequence, PageScorer, Scorer, Segment, Selection, Structure, max_subsequence};

/// What the extractor does besides scoring, with defaults chosen on the dev sets (README).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ExtractOptions {
    /// Cut the span at its first `<hr>` (§6.2.3). Default: off (it lowers pooled dev F1 for
    /// the simple scorer: 0.799 with, 0.808 without; README).
    pub hr_constraint: bool,
    /// Apply the paper's cleaning rules inside the span (§4.2). Default: off (0.795 with,
    /// 0.808 without, pooled dev F1 of the simple scorer; README).
    pub clean: bool,
    /// Drop elements inside the span whose id/class names page furniture (comments, share
    /// bars, related stories; [`text::boilerplate_mask`]). Default: on (pooled dev F1 of the
    /// default model 0.841 without either filter, 0.851 with both; README).
    pub drop_boilerplate: bool,
    /// Drop link lists inside the span ([`text::link_block_mask`]). Default: on.
    pub drop_link_blocks: bool,
    /// Drop runs of at least this many one-link blocks inside the span
    /// ([`text::link_run_mask`]: teaser lists, "more news" rails); 0 turns it off. Default: 2,
    /// chosen by leave-one-dataset-out over the five dev sets (`pipeline tune`): chosen in
    /// every fold; mean of the left-out folds 0.8949 against 0.8934 without it (README).
    pub link_run_blocks: usize,
    /// End the span at a comment / related / share heading ([`text::section_end_mask`])
    /// preceded by at least this many words; 0 turns it off. Default: 30.
    pub section_end_words: usize,

    /// Read the page's metadata (dates, language, authors …; [`crate::metadata`]) in the same
    /// pass. Default: on.
    pub metadata: bool,

    /// Keep every token score for diagnostics ([`Extraction::top_segments`]). Default: off.
    pub keep_scores: bool,
    /// Pages larger than this are refused (default 32 MiB).
    pub max_page_bytes: usize,
}

impl Default for ExtractOptions {
    fn default() -> Self {
        ExtractOptions {
            hr_constraint: false,
            clean: false,
            drop_boilerplate: true,
            drop_link_blocks: true,
            link_run_blocks: 2,
            section_end_words: 30,
            metadata: true,
            keep_scores: false,
            max_page_bytes: 32 << 20,
        }
    }
}

/// Why a page could not be extracted.
#[derive(Debug, thiserror::Error)]
pub enum ExtractError {
    #[error(transparent)]
    Tokenize(#[from] TokenizeError),
    #[error("not html: {0}")]
    NotHtml(&'static str),
    #[error("page too large: more than {limit} bytes")]
    TooLarge { limit: usize },
}

impl ExtractError {
    /// A short stable reason for counting failures.
    pub fn reason(&self) -> &'static str {
        match self {
            ExtractError::Tokenize(_) => "parse_error",
            ExtractError::NotHtml(_) => "not_html",
            ExtractError::TooLarge { .. } => "too_large",
        }
    }
}

/// The result of one page.
#[derive(Debug, Clone, Serialize)]
pub struct Extraction {
    pub title: Option<String>,
    pub text: String,
    /// First and last token of the chosen span (inclusive), if any.
    pub span: Option<(usize, usize)>,
    /// Byte range of the span in the decoded page.
    pub byte_span: Option<(usize, usize)>,
    /// Value of the maximum subsequence.
    pub score: f64,
    pub tokens: usize,
    pub encoding: Option<&'static str>,
    pub scorer: &'static str,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub top_segments: Vec<Segment>,
    /// Predicted title and headings, for scorers that label structure (`knn`, `igtree`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub structure: Option<Structure>,
    /// What the HTML says about the article (with [`ExtractOptions::metadata`]); turned
    /// into record fields by [`Extraction::article_meta`].
    #[serde(skip)]
    pub signals: Option<Signals>,
}

impl Extraction {
    /// The article's metadata fields and its best title, given what the HTML does not say
    /// (the URL, the fetch time, a feed item); None without [`ExtractOptions::metadata`].
    pub fn article_meta(&self, cx: Context<'_>) -> Option<(ArticleMeta, Option<String>)> {
        let cx = Context { text: &self.text, html_title: self.title.as_deref(), ..cx };
        self.signals.as_ref().map(|s| resolve(s, &cx))
    }
}

/// Extracts pages with one scorer and one set of options; cheap to share between threads.
pub struct Extractor<'m> {
    scorer: &'m dyn Scorer,
    options: ExtractOptions,
}

impl<'m> Extractor<'m> {
    pub fn new(scorer: &'m dyn Scorer, options: ExtractOptions) -> Self {
        Extractor { scorer, options }
    }

    pub fn options(&self) -> &ExtractOptions {
        &self.options
    }

    pub fn scorer(&self) -> &'m dyn Scorer {
        self.scorer
    }

    /// Extracts a whole page held in memory.
    pub fn extract(&self, bytes: &[u8], http_charset: Option<&str>) -> Result<Extraction, ExtractError> {
        let mut p = self.page_with_size_hint(http_charset, bytes.len());
        p.write(bytes)?;
        p.end()
    }

    /// Starts a page fed in chunks.
    pub fn page(&self, http_charset: Option<&str>) -> PageExtraction<'m> {
        self.page_with_size_hint(http_charset, 0)
    }

    /// Starts a page fed in chunks whose size is about `size_hint` bytes (buffers sized once).
    pub fn page_with_size_hint(&self, http_charset: Option<&str>, size_hint: usize) -> PageExtraction<'m> {
        let sink = ScoreSink {
            scorer: self.scorer.page_scorer(),
            mss: MaxSubsequence::default(),
            // About one token per six bytes of HTML on real pages.
            tokens: Vec::with_capacity((size_hint / 6).min(1 << 22)),
            // Multi-span scorers need every score, not only the running maximum.
            scores: (self.options.keep_scores || self.scorer.selection() == Selection::PositiveTokens).then(Vec::new),
            meta: self.options.metadata.then(Collector::default),
        };
        let topts = TokenizerOptions {
            http_charset: http_charset.map(str::to_string),
            size_hint,
            ..TokenizerOptions::default()
        };
        PageExtraction {
            tokenizer: Tokenizer::new(sink, topts),
            options: self.options.clone(),
            scorer_name: self.scorer.name(),
            selection: self.scorer.selection(),
            bytes: 0,
            head: Vec::new(),
        }
    }
}

/// Collects tokens and streams their scores into the maximum subsequence.
struct ScoreSink<'m> {
    scorer: Box<dyn PageScorer + 'm>,
    mss: MaxSubsequence,
    tokens: Vec<Token>,
    scores: Option<Vec<f64>>,
    meta: Option<Collector>,
}

impl ScoreSink<'_> {
    #[inline]
    fn emit(mss: &mut MaxSubsequence, scores: &mut Option<Vec<f64>>, s: f64) {
        mss.push(s);
        if let Some(v) = scores.as_mut() {
            v.push(s);
        }
    }
}

impl TokenSink for ScoreSink<'_> {
    #[inline]
    fn token(&mut self, page: &str, token: &Token) {
        self.tokens.push(*token);
        if token.kind.is_tag()
            && let Some(m) = self.meta.as_mut()
        {
            m.token(page, token);
        }
        let (mss, scores) = (&mut self.mss, &mut self.scores);
        self.scorer.push(page, token, &mut |s| Self::emit(mss, scores, s));
    }
}

/// One page being extracted: [`write`](Self::write) chunks, then [`end`](Self::end).
pub struct PageExtraction<'m> {
    tokenizer: Tokenizer<'m, ScoreSink<'m>>,
    options: ExtractOptions,
    scorer_name: &'static str,
    selection: Selection,
    bytes: usize,
    head: Vec<u8>,
}

/// Bytes inspected to refuse binary input.
const SNIFF: usize = 1024;

impl PageExtraction<'_> {
    pub fn write(&mut self, chunk: &[u8]) -> Result<(), ExtractError> {
        self.bytes += chunk.len();
        if self.bytes > self.options.max_page_bytes {
            return Err(ExtractError::TooLarge { limit: self.options.max_page_bytes });
        }
        if self.head.len() < SNIFF {
            let take = (SNIFF - self.head.len()).min(chunk.len());
            self.head.extend_from_slice(&chunk[..take]);
            if self.head.len() >= SNIFF {
                check_not_binary(&self.head)?;
            }
        }
        self.tokenizer.write(chunk)?;
        Ok(())
    }

    pub fn end(self) -> Result<Extraction, ExtractError> {
        if self.head.len() < SNIFF {
            check_not_binary(&self.head)?;
        }
        let summary = self.tokenizer.end()?;
        let title = summary.title_text();
        let page = &summary.page;
        let mut sink = summary.sink;
        {
            let (mss, scores) = (&mut sink.mss, &mut sink.scores);
            sink.scorer.finish(page, &mut |s| ScoreSink::emit(mss, scores, s));
        }
        let structure = sink.scorer.structure();
        debug_assert_eq!(sink.mss.len(), sink.tokens.len(), "a scorer must emit one score per token");
        let tokens = &sink.tokens;
        if self.selection == Selection::PositiveTokens {
            let scores = sink.scores.as_deref().unwrap_or_default();
            let mut x =
                positive_tokens(page, tokens, scores, title, summary.encoding.map(|(e, _)| e), self.scorer_name);
            x.structure = structure;
            x.signals = sink.meta.as_ref().map(|m| m.finish(page, None));
            return Ok(x);
        }
        let best = sink.mss.best().filter(|b| b.value > 0.0);
        let mut span = best.map(|b| (b.start, b.end));
        if self.options.hr_constraint {
            span = span.and_then(|(s, e)| text::hr_cut(tokens, s, e).map(|e| (s, e)));
        }
        let mut out = String::new();
        if let Some((s, e)) = span {
            let slice = &tokens[s..=e];
            let mut keep = self.options.clean.then(|| text::clean_mask(slice));
            if self.options.drop_boilerplate
                || self.options.drop_link_blocks
                || self.options.link_run_blocks > 0
                || self.options.section_end_words > 0
            {
                let k = keep.get_or_insert_with(|| vec![true; slice.len()]);
                if self.options.drop_boilerplate {
                    text::boilerplate_mask(page, slice, k);
                }
                if self.options.drop_link_blocks {
                    text::link_block_mask(slice, k, 2, 0.6);
                }
                if self.options.link_run_blocks > 0 {
                    text::link_run_mask(slice, k, self.options.link_run_blocks, 0.6);
                }
                if self.options.section_end_words > 0 {
                    text::section_end_mask(page, slice, k, self.options.section_end_words);
                }
            }
            text::render(page, slice, keep.as_deref(), &mut out);
        }
        let top_segments = sink.scores.as_deref().map(|v| max_subsequence::top_k(v, 5)).unwrap_or_default();
        let signals = sink.meta.as_ref().map(|m| m.finish(page, span.map(|(s, _)| tokens[s].start as usize)));
        Ok(Extraction {
            title,
            text: out,
            byte_span: span.map(|(s, e)| (tokens[s].start as usize, tokens[e].end as usize)),
            span,
            score: best.map_or(0.0, |b| b.value),
            tokens: tokens.len(),
            encoding: summary.encoding.map(|(e, _)| e),
            scorer: self.scorer_name,
            top_segments,
            structure,
            signals,
        })
    }
}

/// The multi-span output ([`Selection::PositiveTokens`]): every text token scoring above 0,
/// laid out with all the page's tags so paragraph breaks between kept runs survive. The span
/// filters (boilerplate, link lists, HR, cleaning) are not applied: the block model already
/// decided what to keep.
fn positive_tokens(
    page: &str,
    tokens: &[Token],
    scores: &[f64],
    title: Option<String>,
    encoding: Option<&'static str>,
    scorer: &'static str,
) -> Extraction {
    let keep: Vec<bool> = tokens.iter().zip(scores).map(|(t, &s)| t.kind.is_tag() || s > 0.0).collect();
    let first = tokens.iter().zip(scores).position(|(t, &s)| !t.kind.is_tag() && s > 0.0);
    let last = tokens.iter().zip(scores).rposition(|(t, &s)| !t.kind.is_tag() && s > 0.0);
    let mut text = String::new();
    let span = first.zip(last);
    if span.is_some() {
        text::render(page, tokens, Some(&keep), &mut text);
    }
    Extraction {
        title,
        text,
        byte_span: span.map(|(s, e)| (tokens[s].start as usize, tokens[e].end as usize)),
        span,
        score: scores.iter().filter(|&&s| s > 0.0).sum(),
        tokens: tokens.len(),
        encoding,
        scorer,
        top_segments: Vec::new(),
        structure: None,
        signals: None,
    }
}

/// Refuses input that is plainly not a web page: NUL bytes outside UTF-16, or known binary
/// signatures. Text without any tag is accepted (it extracts as one run of words).
fn check_not_binary(head: &[u8]) -> Result<(), ExtractError> {
    const MAGIC: &[(&[u8], &str)] = &[
        (b"%PDF", "pdf"),
        (b"\x89PNG", "png"),
        (b"\xff\xd8\xff", "jpeg"),
        (b"GIF8", "gif"),
        (b"PK\x03\x04", "zip"),
        (b"\x1f\x8b", "gzip"),
        (b"\x28\xb5\x2f\xfd", "zstd"),
    ];
    for (m, _) in MAGIC {
        if head.starts_with(m) {
            return Err(ExtractError::NotHtml("binary file signature"));
        }
    }
    let utf16 = head.starts_with(&[0xFF, 0xFE]) || head.starts_with(&[0xFE, 0xFF]);
    if !utf16 {
        let nul = head.iter().filter(|&&b| b == 0).count();
        let ctrl = head.iter().filter(|&&b| b < 0x09 || (0x0E..0x20).contains(&b) && b != 0x1B).count();
        if nul > 0 || ctrl * 10 > head.len().max(1) {
            return Err(ExtractError::NotHtml("binary content (control bytes)"));
        }
    }
    Ok(())
}

/// True when `kind` is a text token (word or symbol).
pub fn is_text(kind: TokenKind) -> bool {
    !kind.is_tag()
}
