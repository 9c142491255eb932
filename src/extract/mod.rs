//! The extractor: one page in, its article text out, in a single streaming pass
//! (tokens → scores → maximum subsequence), then the chosen span is cleaned and laid out.
//!
//! Synchronous and free of I/O: sources, benches, fuzz targets and the CLI all call
//! [`Extractor::extract`] (whole page) or [`Extractor::page`] (chunked writes).

pub mod candidates;
pub mod furniture;
pub mod lists;
pub mod phrases;
pub mod span;
pub mod text;

use serde::{Deserialize, Serialize};

use crate::html::{Token, TokenKind, TokenSink, TokenizeError, Tokenizer, TokenizerOptions, tags};
use crate::metadata::{ArticleMeta, Collector, Context, Signals, resolve};
use crate::scoring::{MaxSubsequence, PageScorer, Scorer, Segment, Selection, Structure, chooser, max_subsequence};
use crate::site_memory::{self, SiteLookup, SiteMemoryOptions};
use candidates::Candidate;
pub use span::{ANCHOR_MAX_H1, ANCHOR_WINDOW, MULTI_ITEM_MIN, MULTI_ITEM_RUNS};
use span::{MAX_HEADINGS, anchor, description_story, escape_furniture, extra_spans, mostly_furniture, title_heading};

/// What the extractor does besides scoring, with defaults chosen on the dev sets (README).
///
/// Every knob is declared here once: the config file's `[extractor]` table takes these fields
/// by name (serde), and the command line takes them as flags (clap: `--hr`, `--clean`,
/// `--keep-…` for the filters that are on by default, `--no-…` for the other switches, and the
/// numbers under their own names), for `extract`, `eval`, `bench` and the crawl pipeline alike.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, clap::Args)]
#[serde(deny_unknown_fields, default)]
pub struct ExtractOptions {
    /// Cut the span at its first `<hr>` (§6.2.3). Default: off (it lowers pooled dev F1 for
    /// the simple scorer: 0.799 with, 0.808 without; README).
    #[arg(long = "hr")]
    pub hr_constraint: bool,
    /// Apply the paper's cleaning rules inside the span (§4.2). Default: off (0.795 with,
    /// 0.808 without, pooled dev F1 of the simple scorer; README).
    #[arg(long)]
    pub clean: bool,
    /// Drop elements inside the span whose id/class names page furniture (comments, share
    /// bars, related stories; [`furniture::boilerplate_mask`]) or that the site marks
    /// `data-nosnippet`, and the labels of ad slots
    /// ("Advertisement", "Sponsored"; [`phrases::ad_label_mask`]), the later copies of a
    /// passage the page prints twice ([`text::drop_repeated_passages`]), and a list of other
    /// pages' cut summaries that ends the text ([`text::drop_trailing_teasers`]). Default: on
    /// (pooled dev F1 of the default model 0.841 without either filter, 0.851 with both; README).
    #[arg(long = "keep-boilerplate", action = clap::ArgAction::SetFalse, help = "Keep elements inside the span whose id/class names comments, share bars, related stories…, or that the site marks data-nosnippet, ad labels, later copies of a passage of 300 words or more and a closing list of other pages' summaries cut short with an ellipsis (dropped by default)")]
    pub drop_boilerplate: bool,
    /// Drop, inside the span, the second furniture list: post footers and author boxes by
    /// id/class, `<aside>`, `<figcaption>`, `<footer>` and `<nav>` (and the roles `navigation`
    /// and `contentinfo`), and what browsers never render:
    /// `<title>` in the body (an SVG icon's tooltip) and the fallback inside `<video>`,
    /// `<audio>`, `<canvas>` and `<iframe>` ([`furniture::more_furniture_mask`]). Default: on, chosen
    /// by leave-one-dataset-out (README).
    #[arg(long = "keep-more-furniture", action = clap::ArgAction::SetFalse, help = "Keep post footers, author boxes, <aside>, <footer> and <nav> elements, figure captions, SVG titles and media fallback text inside the span (dropped by default)")]
    pub drop_more_furniture: bool,
    /// Drop hidden schema.org microdata elements inside the span (hidden copies of the
    /// headline, byline and dates; [`furniture::hidden_microdata_mask`]). Default: on, chosen by
    /// leave-one-dataset-out (aeb +0.003, the other sets unchanged).
    #[arg(long = "keep-hidden-microdata", action = clap::ArgAction::SetFalse, help = "Keep hidden schema.org microdata elements inside the span (dropped by default: hidden copies of the headline, byline and dates)")]
    pub drop_hidden_microdata: bool,
    /// Read modal dialogs as none of the page's text ([`furniture::is_modal`]: `<dialog>`,
    /// `role="dialog"` / `"alertdialog"`, `aria-modal="true"`): their tokens score 0 and are
    /// dropped from the output. Shops and news sites serve their cookie and newsletter boxes,
    /// login forms and footer policies in the markup of every page, hidden until asked for; a
    /// refund policy outscores a collection's introduction, and an inline glossary definition
    /// splits a story's run. Default: on, chosen in every leave-one-dataset-out fold (wcxb
    /// +0.003 at every chooser margin; docs/evaluation.md, "Modal dialogs").
    #[arg(long = "keep-modals", action = clap::ArgAction::SetFalse, help = "Read modal dialogs (<dialog>, role=dialog, aria-modal=true) as page text (by default they score 0 and are dropped)")]
    pub drop_modals: bool,
    /// Drop link lists inside the span ([`text::link_block_mask`]). Default: on. A span that
    /// this and [`link_run_blocks`](Self::link_run_blocks) would empty (a listing whose every
    /// headline and teaser is a link) is read with its link lists instead.
    #[arg(long = "keep-link-blocks", action = clap::ArgAction::SetFalse, help = "Keep link lists inside the span (dropped by default)")]
    pub drop_link_blocks: bool,
    /// Drop runs of at least this many one-link blocks inside the span
    /// ([`text::link_run_mask`]: teaser lists, "more news" rails); 0 turns it off. Default: 2,
    /// chosen by leave-one-dataset-out over the five dev sets (`pipeline tune`): chosen in
    /// every fold; mean of the left-out folds 0.8949 against 0.8934 without it (README).
    #[arg(long, default_value_t = ExtractOptions::default().link_run_blocks)]
    pub link_run_blocks: usize,
    /// End the span at a comment / related / share heading ([`phrases::section_end_mask`])
    /// preceded by at least this many words; 0 turns it off. Default: 30.
    #[arg(long, default_value_t = ExtractOptions::default().section_end_words)]
    pub section_end_words: usize,
    /// Keep, beside the best span, every other maximal run of positive score (Ruzzo & Tompa
    /// 1999) whose value is at least this fraction of the best span's: the items of a
    /// listing, a forum's posts, an article split by an embed. 0 turns it off (one span, as
    /// in the paper). Default: 0, chosen by leave-one-dataset-out (`pipeline tune`,
    /// docs/evaluation.md): 0.5 with [`extra_span_min`](Self::extra_span_min) 15 until session
    /// 40; since the learned chooser and the list widening take a listing's items and a
    /// forum's posts, every fold takes one span (session 41: mean of the left-out folds 0.9198
    /// → 0.9208, the chooser refitted).
    #[arg(long, default_value_t = ExtractOptions::default().extra_span_ratio)]
    pub extra_span_ratio: f64,
    /// And at least this value (the sum of token scores; a confident word adds about 0.5),
    /// so short runs of a few stray words never come along.
    #[arg(long, default_value_t = ExtractOptions::default().extra_span_min)]
    pub extra_span_min: f64,
    /// On a page of many items: when at least [`MULTI_ITEM_RUNS`] other runs already pass the
    /// extra-span floor, the floor falls to this fraction of the best span (and
    /// [`MULTI_ITEM_MIN`]), so the shorter items of a listing, collection or forum thread
    /// come along too. 0 turns it off. Default: 0.2, chosen by leave-one-dataset-out (README);
    /// it acts only with extra spans on (`extra_span_ratio` > 0, off by default since session 41).
    #[arg(long, default_value_t = ExtractOptions::default().multi_item_ratio)]
    pub multi_item_ratio: f64,
    /// When the page gives fewer than [`NOSCRIPT_MIN_WORDS`] words, extract it again with its
    /// `<noscript>` elements read as ordinary markup, and keep that if it gives more: some
    /// sites (Discourse forums) serve their whole content to script-less readers there, and a
    /// browser with scripts, which we follow, never shows it.
    #[arg(long = "no-noscript-fallback", action = clap::ArgAction::SetFalse, help = "Do not extract a page again with its <noscript> content read when it gives almost no text")]
    pub noscript_fallback: bool,
    /// When the best span lies away from the page's headline (the `<h1>`, `<h2>` or `<h3>`
    /// that repeats the `<title>`, else the `<h1>`), take instead the best run that starts
    /// within [`ANCHOR_WINDOW`] tokens after it, if that run is worth at least this fraction
    /// of the best span; 0 turns it off. Short articles lose to a long sidebar (an author bio,
    /// a comment form's help) by value alone; the headline says where the article is. Pages
    /// with more than [`ANCHOR_MAX_H1`] `<h1>` and no heading that repeats the title are not
    /// anchored.
    /// Default: 0.3, chosen by leave-one-dataset-out (README).
    #[arg(long, default_value_t = ExtractOptions::default().title_anchor_ratio)]
    pub title_anchor_ratio: f64,
    /// When the best span starts inside a comment section or other furniture (an ancestor
    /// whose id/class [`furniture::is_boilerplate_element`] names it) and holds at least half its
    /// value there, take instead the best run outside furniture worth at least this fraction
    /// of it, or else the run at the page's headline when it holds a story and the thread
    /// comes well after it ([`escape_furniture`]); 0 turns it off. A short story under a long
    /// comment thread (Slashdot) otherwise loses to the thread. Default: 0.1, chosen by
    /// leave-one-dataset-out (README).
    #[arg(long, default_value_t = ExtractOptions::default().furniture_escape_ratio)]
    pub furniture_escape_ratio: f64,

    /// When the chosen span is one item of a list whose items (the same tag and first class
    /// name) repeat at least this many times, or part of a container of at least this many
    /// paragraphs that it leaves unfinished, take the list or the container instead
    /// ([`lists::widen`]); 0 turns it off. Listings, collections and product grids lead every
    /// item with a link, so no run of positive score holds more than one or two of them.
    /// Default: 6, chosen by leave-one-dataset-out (README).
    #[arg(long, default_value_t = ExtractOptions::default().list_min_items)]
    pub list_min_items: usize,

    /// Read the page's metadata (dates, language, authors …; [`crate::metadata`]) in the same
    /// pass. Default: on.
    #[arg(long = "no-metadata", action = clap::ArgAction::SetFalse, help = "Do not read the page's metadata (dates, language, authors …)")]
    pub metadata: bool,

    /// Let the learned chooser ([`chooser`]; the model file's own if it holds one, from
    /// `pipeline train --chooser`, else the built-in one) replace the chosen span by one of the
    /// page's lists or its main element ([`candidates`]: a listing's grid away from its
    /// introduction, a landing page's cards) when it predicts that span's F1 higher by more
    /// than this; 0 turns it off. Unset: the margin stored with the model's chooser (the
    /// built-in model's: 0.02, chosen by leave-one-dataset-out; models/README.md, "Span
    /// chooser").
    #[arg(long)]
    pub chooser_margin: Option<f64>,

    /// Recover from `<title>`, `<textarea>`, `<style>`, `<xmp>` … that never close, as lenient
    /// parsers do: the element ends at the first tag inside it instead of swallowing the rest
    /// of the page ([`crate::html::lexer::Lexer::lenient`]). Pages whose raw text closes lex
    /// the same either way. Default: on.
    #[arg(long = "strict-raw-text", action = clap::ArgAction::SetFalse, help = "Lex unclosed <title>, <textarea>, <style> … as HTML5 does (the rest of the page becomes their text) instead of ending them at the first tag inside")]
    pub lenient_raw_text: bool,

    /// Keep every token score for diagnostics ([`Extraction::top_segments`]). Default: off.
    #[arg(skip)]
    pub keep_scores: bool,
    /// Pages larger than this are refused (default 32 MiB).
    #[arg(long, default_value_t = ExtractOptions::default().max_page_bytes)]
    pub max_page_bytes: usize,
}

impl Default for ExtractOptions {
    fn default() -> Self {
        ExtractOptions {
            hr_constraint: false,
            clean: false,
            drop_boilerplate: true,
            drop_hidden_microdata: true,
            drop_modals: true,
            drop_more_furniture: true,
            drop_link_blocks: true,
            link_run_blocks: 2,
            section_end_words: 30,
            extra_span_ratio: 0.0,
            extra_span_min: 15.0,
            multi_item_ratio: 0.2,
            noscript_fallback: true,
            title_anchor_ratio: 0.3,
            furniture_escape_ratio: 0.1,
            list_min_items: 6,
            metadata: true,
            lenient_raw_text: true,
            chooser_margin: None,
            keep_scores: false,
            max_page_bytes: 32 << 20,
        }
    }
}

impl ExtractOptions {
    /// The command-line flags that turn the default options into these (none for the
    /// defaults), read off the options' own clap and serde definitions, so a new knob needs no
    /// line here: a switch whose value differs from its default gives its flag, a number
    /// `--name value`.
    pub fn to_flags(&self) -> Vec<String> {
        use clap::{ArgAction, Args};
        let (Ok(serde_json::Value::Object(mine)), Ok(serde_json::Value::Object(default))) =
            (serde_json::to_value(self), serde_json::to_value(ExtractOptions::default()))
        else {
            return Vec::new();
        };
        let command = ExtractOptions::augment_args(clap::Command::new("options"));
        let mut flags = Vec::new();
        for arg in command.get_arguments() {
            let (Some(long), Some(value)) = (arg.get_long(), mine.get(arg.get_id().as_str())) else { continue };
            if default.get(arg.get_id().as_str()) == Some(value) {
                continue;
            }
            match arg.get_action() {
                // A switch differs from its default only one way: the flag is its other value.
                ArgAction::SetTrue | ArgAction::SetFalse => flags.push(format!("--{long}")),
                _ => flags.push(format!("--{long} {value}")),
            }
        }
        flags
    }

    /// What is out of range, one line per option named as its config key (empty when every
    /// option is usable): the ratios are shares of the best span's value.
    pub fn problems(&self) -> Vec<String> {
        let mut p = Vec::new();
        for (key, v) in [
            ("extra_span_ratio", self.extra_span_ratio),
            ("multi_item_ratio", self.multi_item_ratio),
            ("title_anchor_ratio", self.title_anchor_ratio),
            ("furniture_escape_ratio", self.furniture_escape_ratio),
            ("chooser_margin", self.chooser_margin.unwrap_or(0.0)),
        ] {
            if !(0.0..=1.0).contains(&v) {
                p.push(format!("{key} {v} is not between 0 and 1"));
            }
        }
        if !(self.extra_span_min >= 0.0 && self.extra_span_min.is_finite()) {
            p.push(format!("extra_span_min {} must be 0 or more", self.extra_span_min));
        }
        if self.max_page_bytes == 0 {
            p.push("max_page_bytes must be at least 1".into());
        }
        p
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
    /// The page's layout sketch and text block hashes ([`site_memory::blocks`]), when
    /// extracted with site memory: what the caller counts into its memory.
    #[serde(skip)]
    pub site_blocks: site_memory::PageBlocks,
    /// Site memory marked blocks of this page as the site's furniture.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub site_memory: bool,
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
    /// Also builds the process-wide tables and patterns the extraction uses, so that setup is
    /// paid here, once, and not by the first page.
    pub fn new(scorer: &'m dyn Scorer, options: ExtractOptions) -> Self {
        crate::html::tokenizer::warm_up();
        if options.metadata {
            crate::metadata::warm_up();
        }
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
            scores: (self.options.keep_scores
                || self.options.extra_span_ratio > 0.0
                || self.options.title_anchor_ratio > 0.0
                || self.options.furniture_escape_ratio > 0.0
                || chooser_of(&self.options, self.scorer).is_some()
                || self.scorer.selection() == Selection::PositiveTokens)
                .then(|| Vec::with_capacity((size_hint / 6).min(1 << 22))),
            meta: self.options.metadata.then(Collector::default),
            h1: None,
            h1_count: 0,
            headings: Vec::new(),
        };
        let topts = TokenizerOptions {
            http_charset: http_charset.map(str::to_string),
            size_hint,
            lenient_raw_text: self.options.lenient_raw_text,
            ..TokenizerOptions::default()
        };
        PageExtraction {
            tokenizer: Tokenizer::new(sink, topts),
            scorer: self.scorer,
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
    /// Index of the first `<h1>` start tag, and how many there are.
    h1: Option<usize>,
    h1_count: u32,
    /// Indices of the first [`MAX_HEADINGS`] `<h1>`, `<h2>` and `<h3>` start tags: where the
    /// title anchor looks for the heading that repeats the `<title>` ([`title_heading`]).
    headings: Vec<u32>,
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
        if token.kind.is_tag() {
            if matches!(token.tag, tags::H1 | tags::H2 | tags::H3) && token.kind == TokenKind::StartTag {
                if token.tag == tags::H1 {
                    self.h1.get_or_insert(self.tokens.len());
                    self.h1_count += 1;
                }
                if self.headings.len() < MAX_HEADINGS {
                    self.headings.push(self.tokens.len() as u32);
                }
            }
            if let Some(m) = self.meta.as_mut() {
                m.token(page, token);
            }
        }
        self.tokens.push(*token);
        let (mss, scores) = (&mut self.mss, &mut self.scores);
        self.scorer.push(page, token, &mut |s| Self::emit(mss, scores, s));
    }
}

/// One page being extracted: [`write`](Self::write) chunks, then [`end`](Self::end).
pub struct PageExtraction<'m> {
    tokenizer: Tokenizer<ScoreSink<'m>>,
    scorer: &'m dyn Scorer,
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
        self.finish(None, None)
    }

    /// [`end`](Self::end) with what the memory knows of the page's host (`site` is asked once
    /// the page's layout sketch is known): blocks it has seen on at least `o.share` of the
    /// host's (or the page's template's) pages score as furniture before the maximum
    /// subsequence and are dropped from the span. The result's
    /// [`site_blocks`](Extraction::site_blocks) are the page's blocks and layout, for the
    /// caller to count.
    pub fn end_with_site(self, site: &dyn SiteLookup, o: &SiteMemoryOptions) -> Result<Extraction, ExtractError> {
        self.finish(None, Some((site, o)))
    }

    /// [`end`](Self::end), plus every candidate span of the chooser with the text it would
    /// give (the current choice first): what `pipeline chooser` learns from.
    pub fn end_with_candidates(self) -> Result<(Extraction, Vec<(Candidate, String)>), ExtractError> {
        let mut cands = Vec::new();
        let x = self.finish(Some(&mut cands), None)?;
        Ok((x, cands))
    }

    fn finish(
        self,
        collect: Option<&mut Vec<(Candidate, String)>>,
        site: Option<(&dyn SiteLookup, &SiteMemoryOptions)>,
    ) -> Result<Extraction, ExtractError> {
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
        let (site_blocks, furniture) = match site {
            Some((lookup, o)) => site_furniture(page, tokens, lookup, o),
            None => (site_memory::PageBlocks::default(), None),
        };
        let mut site_scored = false;
        if let (Some(mask), Some(scores)) = (furniture.as_deref(), sink.scores.as_mut()) {
            for (s, _) in scores.iter_mut().zip(mask).filter(|(_, f)| **f) {
                *s = s.min(FURNITURE_SCORE);
            }
            site_scored = true;
        }
        // The page's elements, built once for the modal dialogs, the chooser's lists and the
        // widening.
        let elements = std::cell::OnceCell::new();
        let elements = || elements.get_or_init(|| lists::Elements::new(tokens));
        // Tokens the output leaves out whatever the span: site furniture and modal dialogs.
        let mut dropped = furniture.clone();
        let mut rescored = site_scored;
        if self.options.drop_modals
            && let Some(scores) = sink.scores.as_mut()
            && let Some(modal) = lists::inside(elements, page, tokens, furniture::MODAL_NEEDLES, furniture::is_modal)
        {
            // Exactly 0, whatever the model said (site furniture is only capped at 0,
            // [`FURNITURE_SCORE`]): a glossary definition inside a story must not split its run,
            // only stop counting for it.
            for (s, _) in scores.iter_mut().zip(&modal).filter(|(_, m)| **m) {
                *s = 0.0;
            }
            let d = dropped.get_or_insert_with(|| vec![false; tokens.len()]);
            for (d, m) in d.iter_mut().zip(&modal) {
                *d |= *m;
            }
            rescored = true;
        }
        if self.selection == Selection::PositiveTokens {
            let scores = sink.scores.as_deref().unwrap_or_default();
            let mut x =
                positive_tokens(page, tokens, scores, title, summary.encoding.map(|(e, _)| e), self.scorer_name);
            x.structure = structure;
            x.signals = sink.meta.as_ref().map(|m| m.finish(page, None));
            (x.site_blocks, x.site_memory) = (site_blocks, site_scored);
            return Ok(x);
        }
        // Every run of positive score (Ruzzo & Tompa), once: the span options and the
        // reported top segments all choose among them.
        let segments = sink.scores.as_deref().map(max_subsequence::maximal_segments);
        let mut best = if rescored {
            // The streamed maximum saw the scores before site memory and the modals: the best
            // of the maximal segments is the maximum subsequence of the new scores.
            segments.as_deref().and_then(|v| v.iter().copied().reduce(|a, b| if b.value > a.value { b } else { a }))
        } else {
            sink.mss.best()
        }
        .filter(|b| b.value > 0.0);
        let found = best;
        let chooser = chooser_of(&self.options, self.scorer);
        // The page's headline, for the furniture escape, the title anchor and the chooser's
        // features: found once, when one of them will read it.
        let headline = (self.options.furniture_escape_ratio > 0.0
            || self.options.title_anchor_ratio > 0.0
            || chooser.is_some()
            || collect.is_some())
        .then(|| {
            title
                .as_deref()
                .and_then(|t| title_heading(page, tokens, &sink.headings, t))
                .or(sink.h1.filter(|_| sink.h1_count <= ANCHOR_MAX_H1))
        })
        .flatten();
        if let (Some(b), Some(segs), Some(scores)) = (best, segments.as_deref(), sink.scores.as_deref())
            && self.options.furniture_escape_ratio > 0.0
            && mostly_furniture(page, tokens, scores, b, self.options.drop_more_furniture)
        {
            best = Some(escape_furniture(
                page,
                tokens,
                segs,
                b,
                headline,
                self.options.furniture_escape_ratio,
                self.options.drop_more_furniture,
            ));
        }
        if let (Some(b), Some(segs), Some(headline)) = (best, segments.as_deref(), headline)
            && self.options.title_anchor_ratio > 0.0
        {
            best = Some(anchor(segs, b, headline, self.options.title_anchor_ratio));
        }
        // Still wholly before the headline: the story of a line the page's description repeats.
        // The publisher's word beats the chooser's guess and the widening: a story of a line
        // is the shape they learnt to pass over for a list.
        let mut described = false;
        if let (Some(b), Some(scores), Some(headline)) = (best, sink.scores.as_deref(), headline)
            && self.options.title_anchor_ratio > 0.0
            && let Some(story) = description_story(page, tokens, scores, b, headline)
        {
            (best, described) = (Some(story), true);
        }
        // A list the learned chooser took instead of the span, or the widening's: read with its
        // link lists (its items lead with links).
        let list_options = || ExtractOptions { drop_link_blocks: false, link_run_blocks: 0, ..self.options.clone() };
        let mut chosen_list = None;
        let collecting = collect.is_some();
        // The widening of the span the chooser saw, kept unless the chooser takes another span.
        let mut widened: Option<Option<lists::Widening>> = None;
        if let (Some(b), Some(scores)) = (best, sink.scores.as_deref())
            && (chooser.is_some() || collect.is_some())
        {
            let min_items = self.options.list_min_items;
            let (mut lists, w) = if min_items == 0 {
                (Vec::new(), None)
            } else {
                let els = elements();
                let w = lists::widen(els, page, tokens, scores, b.start, b.end, min_items);
                (lists::largest(els, page, tokens, min_items, candidates::MAX_LISTS), w)
            };
            if let Some(lists::Widening::List(start, end)) = w {
                lists.push(lists::List { start, end, items: min_items });
            }
            // And the page's main element: a landing page's or a collection's gold is the whole
            // of it (cards, shelves, a grid of few-worded items that makes no list), while the
            // span took one card.
            let main = elements().main_element(page, tokens, b.start);
            widened = Some(w);
            // No list and no main element: nothing to choose (the candidates are still collected
            // for training).
            let cands = if lists.is_empty() && main.is_none() && collect.is_none() {
                Vec::new()
            } else {
                let rivals = candidates::Rivals { lists: &lists, main };
                candidates::candidates(page, tokens, scores, b, headline, rivals, elements())
            };
            let chooser = chooser.filter(|_| !described);
            if let Some(i) = chooser.and_then(|(c, margin)| c.choose(cands.iter().map(|c| &c.features), margin)) {
                // A list that renders to nothing (every item a link list the filters drop
                // even so, or furniture) is no better than the span; nor is one headed as the
                // page's furniture ("Most popular posts", "Related stories"), which the
                // section-end filter cuts from a span but which opens the list here.
                let c = &cands[i];
                let text = render_spans(page, tokens, &[(c.start, c.end)], &list_options(), dropped.as_deref());
                if text::words_up_to(&text, 1) > 0 && !phrases::opens_with_section_end(&text) {
                    best = Some(Segment { start: c.start, end: c.end, value: c.value });
                    chosen_list = Some(((c.start, c.end), text));
                    widened = None;
                }
            }
            if let Some(out) = collect {
                let lo = list_options();
                out.extend(cands.into_iter().enumerate().map(|(i, c)| {
                    let o = if i == 0 { &self.options } else { &lo };
                    let text = render_spans(page, tokens, &[(c.start, c.end)], o, None);
                    (c, text)
                }));
            }
        }
        if described {
            widened = Some(None);
        }
        let mut span = best.map(|b| (b.start, b.end));
        if self.options.hr_constraint {
            span = span.and_then(|(s, e)| text::hr_cut(tokens, s, e).map(|e| (s, e)));
        }
        let mut spans = match (span, best, segments.as_deref()) {
            // An anchored span is a short article that lost to a long run by value: the runs
            // worth a share of that run are not its parts.
            (Some(main), Some(b), Some(segs))
                if self.options.extra_span_ratio > 0.0 && best == found && chosen_list.is_none() =>
            {
                let o = &self.options;
                extra_spans(segs, main, b.value, (o.extra_span_ratio, o.extra_span_min), o.multi_item_ratio)
            }
            _ => span.into_iter().collect(),
        };
        // Whether `out` was read as a list (with its link lists), for the furniture check below;
        // and whether it is a list of cards (a chosen list, or the span widened to one), whose
        // every item may be a cut summary.
        let mut as_list = chosen_list.is_some();
        let mut cards = as_list;
        let mut out = match chosen_list {
            // The list as the chooser's check read it (unless the `<hr>` cut it).
            Some((list, text)) if spans == [list] => text,
            Some(_) => render_spans(page, tokens, &spans, &list_options(), dropped.as_deref()),
            None => render_spans(page, tokens, &spans, &self.options, dropped.as_deref()),
        };
        if let (Some(b), Some(scores)) = (best, sink.scores.as_deref())
            && let Some(w) = match widened {
                Some(w) => w,
                None if self.options.list_min_items == 0 => None,
                None => lists::widen(elements(), page, tokens, scores, b.start, b.end, self.options.list_min_items),
            }
        {
            // A list's items lead with links (and a story's rest keeps its inline links), so
            // the wider span is read with its link lists; and it must give more text than the
            // spans did (the furniture filters can empty a comment thread, which a forum's gold
            // keeps).
            let (lists::Widening::List(s, e) | lists::Widening::Paragraphs(s, e)) = w;
            let span = (s, e);
            let mut o = list_options();
            // A list around a span that starts inside a comment section (the escape from
            // furniture found nothing better) is a forum's thread: its posts are the content,
            // and the comment filter would drop every one of them.
            if matches!(w, lists::Widening::List(..))
                && furniture::inside_furniture(page, tokens, b.start, self.options.drop_more_furniture)
            {
                o.drop_boilerplate = false;
            }
            let wider = render_spans(page, tokens, &[span], &o, dropped.as_deref());
            let words = text::word_count(&out);
            if text::words_up_to(&wider, words + 1) > words {
                (out, spans, as_list) = (wider, vec![span], true);
                cards |= matches!(w, lists::Widening::List(..));
            }
        }
        // A span made only of link lists (a listing whose every headline and teaser is a link)
        // is emptied by the link filters; the page's best run read whole beats no text at all.
        if out.is_empty() && (self.options.drop_link_blocks || self.options.link_run_blocks > 0) {
            out = render_spans(page, tokens, &spans, &list_options(), dropped.as_deref());
        }
        // Two steps on the rendered text, not taken while collecting the chooser's candidates:
        // they are scored as the filters leave them, as every candidate but the first always
        // was (a refit of the trees for these steps would be a draw; models/README.md, "Span
        // chooser", sessions 40 and 41).
        if self.options.drop_boilerplate && !collecting {
            // A span the furniture names (nearly) empty was misread by them, not by the scores:
            // the story sits in an element whose class also names furniture (`<article
            // class="post-article js-post-gallery main">`, a Genesis theme's
            // `content-sidebar-wrap`), or the span is a forum's thread, whose posts sit in
            // `comments`. Read without the first furniture list, it is taken when that gives
            // many times the words.
            let filtered = text::words_up_to(&out, FURNITURE_EMPTIED_WORDS);
            if filtered < FURNITURE_EMPTIED_WORDS && !spans.is_empty() {
                let o = if as_list { list_options() } else { self.options.clone() };
                let o = ExtractOptions { drop_boilerplate: false, ..o };
                let whole = render_spans(page, tokens, &spans, &o, dropped.as_deref());
                let n = text::word_count(&whole);
                if n >= FURNITURE_EMPTIED_MIN_WHOLE && n >= FURNITURE_EMPTIED_FACTOR * filtered {
                    out = whole;
                }
            }
            // A page that renders a section once per screen size gives it once per screen size.
            text::drop_repeated_passages(&mut out);
            // A story's text ends where the cut summaries of other pages begin (a list of
            // cards is all summaries, and stays whole).
            if !cards {
                text::drop_trailing_teasers(&mut out);
            }
        }
        let span = spans.first().zip(spans.last()).map(|(a, b)| (a.0, b.1));
        let mut fallback = None;
        if self.options.noscript_fallback
            && text::words_up_to(&out, NOSCRIPT_MIN_WORDS) < NOSCRIPT_MIN_WORDS
            && let Some(unwrapped) = unwrap_noscript(page)
        {
            let options = ExtractOptions { noscript_fallback: false, metadata: false, ..self.options.clone() };
            let x = Extractor::new(self.scorer, options).extract(unwrapped.as_bytes(), Some("utf-8"))?;
            if text::word_count(&x.text) > text::word_count(&out) {
                out = x.text;
                fallback = Some((x.span, x.score));
            }
        }
        let top_segments = segments.as_deref().map(|v| max_subsequence::top_k(v, 5)).unwrap_or_default();
        let signals = sink.meta.as_ref().map(|m| m.finish(page, span.map(|(s, _)| tokens[s].start as usize)));
        let mut x = Extraction {
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
            site_memory: furniture.is_some(),
            site_blocks,
        };
        if let Some((span, score)) = fallback {
            // Token indices of the unwrapped page; its byte offsets would not index this one.
            (x.span, x.byte_span, x.score) = (span, None, score);
        }
        Ok(x)
    }
}

/// The text of token spans: each span's kept tokens (the cleaning rules and furniture filters
/// of `o`) laid out as paragraphs, spans apart by a blank line.
fn render_spans(
    page: &str,
    tokens: &[Token],
    spans: &[(usize, usize)],
    o: &ExtractOptions,
    furniture: Option<&[bool]>,
) -> String {
    let mut out = String::new();
    for &(s, e) in spans {
        let slice = &tokens[s..=e];
        let mut keep = o.clean.then(|| text::clean_mask(slice));
        if let Some(f) = furniture {
            let k = keep.get_or_insert_with(|| vec![true; slice.len()]);
            for (k, &f) in k.iter_mut().zip(&f[s..=e]) {
                *k &= !f;
            }
        }
        if o.drop_boilerplate
            || o.drop_hidden_microdata
            || o.drop_more_furniture
            || o.drop_link_blocks
            || o.link_run_blocks > 0
            || o.section_end_words > 0
        {
            let k = keep.get_or_insert_with(|| vec![true; slice.len()]);
            furniture::furniture_and_microdata_mask(
                page,
                slice,
                k,
                o.drop_boilerplate,
                o.drop_more_furniture,
                o.drop_hidden_microdata,
            );
            if o.drop_link_blocks {
                text::link_block_mask(slice, k, 2, 0.6);
            }
            if o.link_run_blocks > 0 {
                text::link_run_mask(slice, k, o.link_run_blocks, 0.6);
            }
            if o.section_end_words > 0 {
                phrases::section_end_mask(page, slice, k, o.section_end_words);
            }
            if o.drop_boilerplate {
                phrases::ad_label_mask(page, slice, k);
            }
        }
        if spans.len() == 1 {
            text::render(page, slice, keep.as_deref(), &mut out);
        } else {
            let mut part = String::new();
            text::render(page, slice, keep.as_deref(), &mut part);
            if !part.is_empty() {
                if !out.is_empty() {
                    out.push_str("\n\n");
                }
                out.push_str(&part);
            }
        }
    }
    out
}

/// The score a token of the site's furniture gets at most (a modal dialog's tokens score
/// exactly 0): furniture never counts for a run and is dropped from the span, but a slate or a
/// share box that the site sets inside its stories does not split them (cnn's "JUST WATCHED"
/// video slates cut stories in two at −0.5, what a word the model is sure is not article text
/// scores). Chosen on big9 and the dragnet sites together (README, "Site memory"; session 43):
/// 0.9501 at −0.5, 0.9503 at −0.25, 0.9506 at −0.1 and at 0, and the worst cases with
/// it: cnn −0.0047 → +0.0020, the worst held-out site-year −0.0009 → −0.0003.
pub const FURNITURE_SCORE: f64 = 0.0;

/// The page's block hashes, and which tokens site memory marks as the site's furniture (None
/// when it marks none, or knows too few of the host's pages).
fn site_furniture(
    page: &str,
    tokens: &[Token],
    site: &dyn SiteLookup,
    o: &SiteMemoryOptions,
) -> (site_memory::PageBlocks, Option<Vec<bool>>) {
    let (blocks, sketch) = site_memory::blocks(page, tokens);
    let view = site.view(&sketch);
    let pages = view.pages();
    let mut mask: Option<Vec<bool>> = None;
    for b in blocks.iter().filter(|b| !b.heading) {
        if site_memory::is_site_furniture(view.count(b.hash), pages, o) {
            mask.get_or_insert_with(|| vec![false; tokens.len()])[b.start..=b.end].fill(true);
        }
    }
    (site_memory::PageBlocks { sketch, hashes: blocks.into_iter().map(|b| b.hash).collect() }, mask)
}

/// The span chooser and its margin, if one is on: a margin given in `o` (0: off) with the
/// scorer's own chooser, else the built-in one; no margin given, the scorer's own chooser at the
/// margin chosen when it was trained (the built-in model has none: off).
fn chooser_of<'s>(o: &ExtractOptions, scorer: &'s dyn Scorer) -> Option<(&'s chooser::Chooser, f64)> {
    match o.chooser_margin {
        Some(m) if m > 0.0 => Some((scorer.chooser().unwrap_or_else(|| chooser::builtin()), m)),
        Some(_) => None,
        None => scorer.chooser().and_then(|c| Some((c, c.margin.filter(|&m| m > 0.0)?))),
    }
}

/// A span the first furniture list leaves with fewer words than this, read without it, gives
/// at least [`FURNITURE_EMPTIED_MIN_WHOLE`] words and [`FURNITURE_EMPTIED_FACTOR`] times as
/// many: it is read without it. Measured on the train splits before the dev sets (wcxb train
/// 0.8617 → 0.8646, 5 pages up by 0.36–0.98, 1 down; no dev page changes).
pub const FURNITURE_EMPTIED_WORDS: usize = 20;
/// See [`FURNITURE_EMPTIED_WORDS`].
pub const FURNITURE_EMPTIED_MIN_WHOLE: usize = 50;
/// See [`FURNITURE_EMPTIED_WORDS`].
pub const FURNITURE_EMPTIED_FACTOR: usize = 10;

/// Below this many words a page is extracted again with its `<noscript>` read
/// ([`ExtractOptions::noscript_fallback`]).
pub const NOSCRIPT_MIN_WORDS: usize = 20;

/// The page with every `<noscript>` start and end tag made a `<div>`, so the tokenizer reads
/// their content as markup; None when the page has no `<noscript>` holding anything.
fn unwrap_noscript(page: &str) -> Option<String> {
    const OPEN: &[u8] = b"<noscript";
    const CLOSE: &[u8] = b"</noscript";
    let bytes = page.as_bytes();
    let at = |i: usize, pat: &[u8]| {
        bytes.len() >= i + pat.len()
            && bytes[i..i + pat.len()].eq_ignore_ascii_case(pat)
            && bytes
                .get(i + pat.len())
                .is_none_or(|b| matches!(b, b'>' | b'/' | b' ' | b'\t' | b'\n' | b'\r' | b'\x0c'))
    };
    let mut out = String::with_capacity(page.len());
    let (mut last, mut found, mut content) = (0, false, 0usize);
    let mut open_end = None;
    for i in memchr::memchr_iter(b'<', bytes) {
        let (len, tag) = if at(i, OPEN) {
            (OPEN.len(), "<div")
        } else if at(i, CLOSE) {
            (CLOSE.len(), "</div")
        } else {
            continue;
        };
        if tag == "<div" {
            open_end = Some(i + len);
        } else if let Some(o) = open_end.take() {
            content += i - o;
        }
        out.push_str(&page[last..i]);
        out.push_str(tag);
        last = i + len;
        found = true;
    }
    // A few bytes of <noscript> (tracking pixels, "enable JavaScript") are not worth a pass.
    (found && content >= 200).then(|| {
        out.push_str(&page[last..]);
        out
    })
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
        site_blocks: Default::default(),
        site_memory: false,
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

#[cfg(test)]
mod tests {
    use super::span::HEADING_MAX_TOKENS;
    use super::*;

    /// Every knob round-trips through its flags: `to_flags` and the CLI read the same
    /// definitions, so a new field of `ExtractOptions` needs no other line for either.
    #[test]
    fn options_round_trip_through_their_flags() {
        use clap::{Args, FromArgMatches};
        assert!(ExtractOptions::default().to_flags().is_empty());
        let o = ExtractOptions {
            hr_constraint: true,
            drop_boilerplate: false,
            noscript_fallback: false,
            metadata: false,
            extra_span_ratio: 0.25,
            section_end_words: 7,
            ..ExtractOptions::default()
        };
        let flags = o.to_flags();
        let argv = std::iter::once("x".to_string()).chain(flags.iter().flat_map(|f| f.split(' ').map(str::to_string)));
        let m = ExtractOptions::augment_args(clap::Command::new("x")).try_get_matches_from(argv).unwrap();
        assert_eq!(ExtractOptions::from_arg_matches(&m).unwrap(), o, "{flags:?}");
    }
    use crate::methods::simple::{SimpleScorer, SimpleScorerConfig};

    /// `n` distinct words starting with `tag`.
    fn words(tag: &str, n: usize) -> String {
        (0..n).map(|i| format!("{tag}{i}")).collect::<Vec<_>>().join(" ")
    }

    /// The defaults with one span, no anchor and no escape from furniture: the paper's
    /// extractor with our span filters.
    fn one_span() -> ExtractOptions {
        ExtractOptions {
            extra_span_ratio: 0.0,
            multi_item_ratio: 0.0,
            title_anchor_ratio: 0.0,
            furniture_escape_ratio: 0.0,
            ..ExtractOptions::default()
        }
    }

    /// The text of `html` under the simple scorer (words +1, tags −3.25) and `options`.
    fn text(html: &str, options: ExtractOptions) -> String {
        let scorer = SimpleScorer::new(SimpleScorerConfig::default());
        Extractor::new(&scorer, options).extract(html.as_bytes(), None).unwrap().text
    }

    #[test]
    fn a_span_inside_one_item_of_a_product_grid_takes_the_grid() {
        // One product with a long description, eleven with a name and a short line: no other
        // run is worth an extra span, and the grid's markup says they are one list.
        let card = |i: usize, desc: &str| {
            format!("<li class=\"card card-{i}\"><a href=/p/{i}>Item{i} name</a><div class=desc>{desc}</div></li>")
        };
        let mut grid = card(0, &words("long", 30));
        for i in 1..12 {
            grid.push_str(&card(i, &format!("short{i} blurb here")));
        }
        let html =
            format!("<html><body><div class=nav><a href=/>Home</a></div><ul class=grid>{grid}</ul></body></html>");
        let on = text(&html, ExtractOptions::default());
        let off = text(&html, ExtractOptions { list_min_items: 0, ..ExtractOptions::default() });
        assert!(off.contains("long29") && !off.contains("short5"), "{off}");
        for i in 1..12 {
            assert!(on.contains(&format!("short{i} blurb")) && on.contains(&format!("Item{i} name")), "{on}");
        }
        assert!(!on.contains("Home"), "{on}");
    }

    #[test]
    fn a_forum_thread_around_a_span_inside_one_post_keeps_every_post() {
        // A thread whose posts sit in elements named "comment": the best run is one long post,
        // nothing outside the thread is worth escaping to, and the other posts are short.
        let post = |i: usize, text: &str| format!("<div class=\"comment c{i}\"><p>{text}</p></div>");
        let mut thread = post(0, &words("long", 30));
        for i in 1..10 {
            thread.push_str(&post(i, &format!("reply{i} is a short answer")));
        }
        let html = format!(
            "<html><body><div class=nav><a href=/>Forum</a></div><div class=comments>{thread}</div></body></html>"
        );
        let on = text(&html, ExtractOptions::default());
        let off = text(&html, ExtractOptions { list_min_items: 0, ..ExtractOptions::default() });
        assert!(off.contains("long29") && !off.contains("reply5"), "{off}");
        for i in 1..10 {
            assert!(on.contains(&format!("reply{i} is a short answer")), "{on}");
        }
        assert!(on.contains("long29") && !on.contains("Forum"), "{on}");
    }

    #[test]
    fn extra_spans_keep_the_other_items_of_a_listing_and_not_stray_words() {
        // Two items (30 and 20 words) with a link rail between them: maximal runs worth 30, 1
        // per link and 20.
        let rail: String = (0..10).map(|i| format!("<li><a href=#>rail{i}</a></li>")).collect();
        let html = format!("<p>{}</p><ul>{rail}</ul><p>{}</p>", words("first", 30), words("second", 20));
        let one = text(&html, one_span());
        assert!(one.contains("first29") && !one.contains("second0"), "{one}");
        let opts = ExtractOptions { extra_span_ratio: 0.5, extra_span_min: 15.0, ..one_span() };
        // The defaults take one span (session 41): the learned chooser and the list widening
        // take a listing's items.
        assert_eq!(text(&html, ExtractOptions::default()), one, "the defaults");
        let both = text(&html, opts.clone());
        assert!(both.contains("first0") && both.contains("second19"), "{both}");
        assert!(!both.contains("rail"), "runs worth less than half the best stay out: {both}");
        assert!(both.contains("first29\n\nsecond0"), "kept runs are paragraphs apart: {both}");
        // 20 is below 0.8 · 30, and below a floor of 25.
        assert!(!text(&html, ExtractOptions { extra_span_ratio: 0.8, ..opts.clone() }).contains("second0"));
        assert!(!text(&html, ExtractOptions { extra_span_min: 25.0, ..opts }).contains("second0"));
    }

    #[test]
    fn the_headline_anchors_a_short_article_against_a_longer_sidebar() {
        // The sidebar starts more than ANCHOR_WINDOW tokens after the headline.
        let gap = "<div></div>".repeat(ANCHOR_WINDOW / 2);
        let page = |h1s: &str| {
            format!(
                "<div><a href=/>Home</a></div>{h1s}<p>{}</p>{gap}<aside><p>{}</p></aside>",
                words("story", 15),
                words("bio", 40)
            )
        };
        let html = page("<h1>The headline</h1>");
        let plain = text(&html, one_span());
        assert!(plain.contains("bio0") && !plain.contains("story0"), "{plain}");
        let anchored = ExtractOptions { title_anchor_ratio: 0.2, ..one_span() };
        let got = text(&html, anchored.clone());
        assert!(got.contains("story0") && got.contains("story14") && !got.contains("bio"), "{got}");
        // Worth less than the ratio: the sidebar stays.
        let strict = ExtractOptions { title_anchor_ratio: 0.5, ..one_span() };
        assert!(text(&html, strict).contains("bio0"));
        // The defaults anchor it, and keep none of the sidebar beside it.
        assert_eq!(text(&html, ExtractOptions::default()), got);
        // Three <h1> are logos and section titles, not a headline.
        let many = page("<h1>Logo</h1><h1>Section</h1><h1>The headline</h1>");
        assert!(text(&many, anchored).contains("bio0"));
    }

    #[test]
    fn the_heading_that_repeats_the_title_is_the_headline() {
        // A blog: the blog's name in the <h1>, the post's title in an <h3> far below it, and a
        // long profile box before the post.
        let gap = "<div></div>".repeat(ANCHOR_WINDOW / 2);
        let page = |title: &str, h3: &str| {
            format!(
                "<title>{title}</title><h1>Cooking Notes</h1>{gap}<div class=profile><p>{}</p></div>{gap}\
                 <h3>{h3}</h3><p>{}</p>",
                words("about", 40),
                words("post", 15)
            )
        };
        let anchored = ExtractOptions { title_anchor_ratio: 0.2, ..one_span() };
        let html = page("Cooking Notes: Next Up, Pumpkin Pie", "Next Up: Pumpkin Pie");
        assert!(text(&html, one_span()).contains("about0"));
        let got = text(&html, anchored.clone());
        assert!(got.contains("post0") && got.contains("post14") && !got.contains("about"), "{got}");
        // A heading that repeats too little of the title is no headline: the <h1> is, and the
        // profile box is after the anchor's window.
        let other = page("Cooking Notes: Next Up, Pumpkin Pie", "Pumpkin recipes and other autumn things");
        assert!(text(&other, anchored.clone()).contains("about0"));
        // With many <h1>, the one that repeats the title is still the headline.
        let h1s = format!(
            "<title>Storm closes schools | Daily</title><h1>Daily</h1><h1>News</h1><h1>Sports</h1>{gap}\
             <aside><p>{}</p></aside>{gap}<h1>Storm closes schools</h1><p>{}</p>",
            words("rail", 40),
            words("story", 15)
        );
        let got = text(&h1s, anchored);
        assert!(got.contains("story0") && !got.contains("rail"), "{got}");
    }

    #[test]
    fn headings_that_never_close_or_run_on_are_no_headline() {
        let heads = |html: &str| {
            let s = crate::html::tokenize(html.as_bytes(), TokenizerOptions::default()).unwrap();
            let at: Vec<u32> = s
                .sink
                .iter()
                .enumerate()
                .filter(|(_, t)| t.kind == TokenKind::StartTag && matches!(t.tag, tags::H1 | tags::H2 | tags::H3))
                .map(|(i, _)| i as u32)
                .take(MAX_HEADINGS)
                .collect();
            (s, at)
        };
        let title = "Alpha beta gamma";
        // A heading that runs on past HEADING_MAX_TOKENS is none, though every word of it is
        // the title's.
        let long = format!("<h3>{}</h3>", "alpha beta gamma ".repeat(HEADING_MAX_TOKENS / 3 + 1));
        let (s, at) = heads(&long);
        assert_eq!(title_heading(&s.page, &s.sink, &at, title), None);
        let (s, at) = heads("<h3>alpha beta gamma</h3>");
        assert_eq!(title_heading(&s.page, &s.sink, &at, title), Some(0));
        // A heading another opens inside is none; the inner one is the headline.
        let (s, at) = heads("<h2>Alpha beta gamma<h2>Alpha beta gamma</h2>");
        assert_eq!(title_heading(&s.page, &s.sink, &at, title), Some(at[1] as usize));
        // Thousands of unclosed headings: read in bounded time, the page still extracts.
        let mut html = format!("<title>{title}</title>");
        for _ in 0..3 * MAX_HEADINGS {
            html.push_str("<h2>Alpha beta gamma");
        }
        html.push_str(&format!("<p>{}</p>", words("body", 40)));
        let got = text(&html, ExtractOptions::default());
        assert!(got.contains("body39"), "{got}");
    }

    #[test]
    fn a_story_under_a_longer_comment_thread_escapes_it() {
        let gap = "<div></div>".repeat(5);
        let html = format!(
            "<div class=story><p>{}</p></div>{gap}<div id=comments><div class=c><p>{}</p></div></div>",
            words("story", 12),
            words("reply", 60)
        );
        let plain = text(&html, one_span());
        assert!(plain.contains("reply0") && !plain.contains("story0"), "{plain}");
        let escaped = ExtractOptions { furniture_escape_ratio: 0.1, ..one_span() };
        let got = text(&html, escaped.clone());
        assert_eq!(got, words("story", 12));
        // Worth less than the ratio: the thread stays (what else is there).
        assert!(text(&html, ExtractOptions { furniture_escape_ratio: 0.5, ..escaped }).contains("reply0"));
        assert_eq!(text(&html, ExtractOptions::default()), words("story", 12), "the defaults");
    }

    #[test]
    fn a_short_story_under_its_headline_escapes_a_thread_of_any_length() {
        // Slashdot and blogs: a paragraph of story under the headline, a share bar and a
        // comment form, then hundreds of comments, the story worth a few hundredths of them.
        let page = |head: &str, story: usize, gap: usize| {
            format!(
                "{head}<p>{}</p>{}<div id=comments><div class=c><p>{}</p></div></div>",
                words("story", story),
                "<div></div>".repeat(gap),
                words("reply", 600)
            )
        };
        let escaped = ExtractOptions { furniture_escape_ratio: 0.1, ..one_span() };
        let far = ANCHOR_WINDOW;
        let got = text(&page("<h1>Alpha beta</h1>", 12, far), escaped.clone());
        assert!(got.contains("story0") && !got.contains("reply0"), "{got}");
        // Without a headline to say where the story is, the thread stays (what else is there).
        assert!(text(&page("", 12, far), escaped.clone()).contains("reply0"));
        // A line under the headline is no story: a forum's title bar above its posts.
        assert!(text(&page("<h1>Alpha beta</h1>", 2, far), escaped.clone()).contains("reply0"));
        // A story that runs on into the box named for furniture within the anchor window is one
        // article in a misnamed container (a "article__container-sidebar"): kept whole.
        let near = text(&page("<h1>Alpha beta</h1>", 12, 2), escaped.clone());
        assert!(near.contains("reply0"), "{near}");
        // Turned off with the escape.
        assert!(text(&page("<h1>Alpha beta</h1>", 12, far), one_span()).contains("reply0"));
    }

    #[test]
    fn a_post_of_a_line_escapes_the_thread_that_follows_its_container() {
        // A blog's video or photo post: its headline and a line in the post's container, then a
        // long comment thread outside it. The line is worth less than a forum's title bar, but
        // the post's container closes before the thread starts: the post is the story.
        let page = |open: &str, close: &str| {
            format!(
                "<div id=wrap>{open}<h1>Alpha beta</h1><p>{}</p>{close}{}<div id=comments><div class=c><p>{}</p></div></div></div>",
                words("story", 2),
                "<div></div>".repeat(ANCHOR_WINDOW),
                words("reply", 600)
            )
        };
        let escaped = ExtractOptions { furniture_escape_ratio: 0.1, ..one_span() };
        for open in ["<div class=\"post hentry\">", "<article>"] {
            let close = if open == "<article>" { "</article>" } else { "</div>" };
            let got = text(&page(open, close), escaped.clone());
            assert!(got.starts_with("Alpha beta") && !got.contains("reply0"), "{open}: {got}");
        }
        // A forum's title bar in the column that holds its posts too (`main`, `content` name a
        // layout, not a story): the thread is the page's content.
        let got = text(&page("<div class=p-body-main>", "</div>"), escaped.clone());
        assert!(got.contains("reply0"), "{got}");
        // Nor a title bar whose container is still open where the thread starts.
        let got = text(&page("<div class=post>", ""), escaped.clone());
        assert!(got.contains("reply0"), "{got}");
        // Nor one whose headline alone has a story-named wrapper (a forum's `post-header`).
        let got = text(&page("<div class=post-header>", "").replace("</h1>", "</h1></div>"), escaped);
        assert!(got.contains("reply0"), "{got}");
    }

    #[test]
    fn a_story_of_a_line_the_description_repeats_beats_a_bio_before_its_headline() {
        // The Atlantic's post of a line: an author's bio is the page's best run, before the
        // headline; the story ("It's yours...") is too short to make a run, but the page's
        // description is that line.
        let page = |description: &str, story: &str, gap: usize| {
            format!(
                "<html><head><title>The lost battalion - Site</title><meta name=description content=\"Site news\">\
                 <meta property=\"og:description\" content=\"{description}\"></head><body>\
                 <div class=bio><p>{}</p></div><div></div><h1>The lost battalion</h1><span>By Some One</span>\
                 {}<div class=articleContent>{story}</div>{}</body></html>",
                words("bio", 60),
                "<div></div>".repeat(gap),
                "<div></div>".repeat(200)
            )
        };
        let anchored = ExtractOptions { title_anchor_ratio: 0.3, ..one_span() };
        let got = text(&page("It&#039;s yours...", "It's yours...", 3), anchored.clone());
        assert!(got.starts_with("The lost battalion") && got.contains("yours") && !got.contains("bio0"), "{got}");
        // Not when the description is not there word for word, is only the headline, or
        // recurs too far from the headline to be its story.
        for (description, story, gap) in [
            ("It is ours", "It's yours...", 3),
            ("The lost battalion", "It's yours...", 3),
            ("It's yours...", "It's yours...", ANCHOR_WINDOW),
        ] {
            let got = text(&page(description, story, gap), anchored.clone());
            assert!(got.contains("bio0"), "{description} after {gap}: {got}");
        }
        // Nor with the title anchor off.
        let got = text(&page("It's yours...", "It's yours...", 3), one_span());
        assert!(got.contains("bio0"), "{got}");
    }

    #[test]
    fn a_story_that_opens_with_a_small_furniture_box_is_not_escaped() {
        // A gallery's launcher link opens the best run, then the story: most of the run's value
        // lies outside the furniture, so there is nothing to escape from (a 2013 story fell to
        // its author's bio, the next run).
        let gap = "<div></div>".repeat(5);
        let page = |launch: usize, story: usize| {
            format!(
                "<div class=gallery_embed><p>{}</p></div><p>{}</p>{gap}<div class=about><p>{}</p></div>",
                words("launch", launch),
                words("story", story),
                words("about", 10)
            )
        };
        let escaped = ExtractOptions { furniture_escape_ratio: 0.1, ..one_span() };
        let got = text(&page(12, 40), escaped.clone());
        assert!(got.ends_with(&words("story", 40)) && !got.contains("about0"), "{got}");
        // A run that holds most of its value in the furniture is escaped, as before.
        assert_eq!(text(&page(40, 4), escaped), words("about", 10));
    }

    #[test]
    fn a_slideshow_inside_a_story_is_dropped_but_a_post_filed_under_gallery_is_not() {
        let slides: String =
            (0..4).map(|i| format!("<li><h4>Slide {i}</h4><p>{}</p></li>", words("slide", 20))).collect();
        let html = format!(
            "<div class=entry><p>{}</p><ul class=hp-slideshow>{slides}</ul><p>{}</p></div>",
            words("story", 30),
            words("more", 20)
        );
        let got = text(&html, ExtractOptions::default());
        assert!(got.contains("story29") && got.contains("more19") && !got.contains("slide0"), "{got}");
        // WordPress files a post under its tags and format on the post's own element; a class
        // that says what sits beside the story names no furniture either.
        for (tag, class) in [
            ("article", "post tag-photo-gallery format-gallery category-comments"),
            ("div", "main-with-sidebar has-sidebar"),
        ] {
            let post =
                format!("<p>{}</p><{tag} class=\"{class}\"><p>{}</p></{tag}>", words("intro", 20), words("post", 40));
            let got = text(&post, ExtractOptions::default());
            assert!(got.contains("intro0") && got.contains("post39"), "{class}: {got}");
        }
    }

    #[test]
    fn screen_reader_text_signatures_footers_and_navs_inside_the_span_are_dropped() {
        // The spellings of screen-reader-only text: Bootstrap, WordPress, Shopify themes, HTML5
        // Boilerplate, Drupal, jQuery UI.
        for reader in [
            "sr-only",
            "visually-hidden",
            "screen-reader-text",
            "screenreader",
            "visuallyhidden",
            "element-invisible",
            "ui-helper-hidden-accessible",
        ] {
            let html = format!(
                "<article><p>{} <span class={reader}>{}</span></p><p>{}</p><div class=post-signature><p>{}</p></div>\
                 <p>{}</p><footer><p>{}</p></footer><p>{}</p><nav><p>{}</p></nav><p>{}</p>\
                 <div role=navigation><p>{}</p></div><p>{}</p></article>",
                words("one", 20),
                words("reader", 3),
                words("two", 20),
                words("sig", 6),
                words("three", 20),
                words("foot", 6),
                words("four", 20),
                words("navi", 6),
                words("five", 20),
                words("landmark", 6),
                words("six", 20)
            );
            let got = text(&html, ExtractOptions::default());
            assert!(got.contains("one19") && got.contains("two19") && got.contains("five19"), "{reader}: {got}");
            for dropped in ["reader0", "sig0", "foot0", "navi0", "landmark0"] {
                assert!(!got.contains(dropped), "{reader}: {dropped} in {got}");
            }
        }
    }

    #[test]
    fn a_forum_posters_rank_and_an_about_the_author_box_are_dropped() {
        // A thread's posts as vBulletin and XenForo lay them out (the rank under the poster's
        // name), then a WordPress plugin's "About the author" box under a post.
        let thread = format!(
            "<div class=thread><div class=post><div class=\"message-userTitle\">{}</div><p>{}</p></div>\
             <div class=post><span class=usertitle>{}</span><p>{}</p></div></div>",
            words("rank", 3),
            words("first", 40),
            words("member", 3),
            words("second", 40)
        );
        let got = text(&thread, ExtractOptions::default());
        assert!(got.contains("first39") && got.contains("second39"), "{got}");
        assert!(!got.contains("rank0") && !got.contains("member0"), "{got}");
        let post = format!(
            "<article><p>{}</p><div class=\"wp-about-author-containter\"><p class=wp-about-author-text>{}</p></div>\
             <p>{}</p></article>",
            words("story", 40),
            words("bio", 12),
            words("more", 20)
        );
        let got = text(&post, ExtractOptions::default());
        assert!(got.contains("story39") && got.contains("more19"), "{got}");
        assert!(!got.contains("bio0"), "{got}");
        let kept = text(&post, ExtractOptions { drop_more_furniture: false, ..ExtractOptions::default() });
        assert!(kept.contains("bio0"), "{kept}");
    }

    #[test]
    fn what_sites_mark_as_no_content_and_a_posters_stats_are_dropped() {
        // Google Custom Search's `nocontent` class (Yahoo's `robots-nocontent`), Google's
        // `data-nosnippet` attribute, and XenForo's stats under a poster's name.
        let html = format!(
            "<article><p>{}</p><div class=\"robots-nocontent promo\">{}</div><p>{}</p>\
             <div data-nosnippet>{}</div><p>{}</p>\
             <div class=\"message-userExtras\"><dl class=pairs>{}</dl></div><p>{}</p></article>",
            words("one", 60),
            words("marked", 6),
            words("two", 60),
            words("snip", 6),
            words("three", 60),
            words("joined", 4),
            words("four", 60)
        );
        let got = text(&html, ExtractOptions::default());
        assert!(["one59", "two59", "three59", "four59"].iter().all(|w| got.contains(w)), "{got}");
        for dropped in ["marked0", "snip0", "joined0"] {
            assert!(!got.contains(dropped), "{dropped} in {got}");
        }
        let kept = text(&html, ExtractOptions { drop_boilerplate: false, ..ExtractOptions::default() });
        assert!(["marked0", "snip0", "joined0"].iter().all(|w| kept.contains(w)), "{kept}");
        // A publisher that marks its whole story `data-nosnippet` (to keep it out of search
        // snippets) still has its story read: the span it would empty is read without it.
        // The span starts at its lead, outside the mark, so the mark's element is inside it.
        let marked =
            format!("<div><p>{}</p><div data-nosnippet><p>{}</p></div></div>", words("lead", 12), words("story", 200));
        let got = text(&marked, ExtractOptions::default());
        assert!(got.contains("lead0") && got.contains("story199"), "{got}");
    }

    #[test]
    fn a_you_may_like_heading_ends_the_story() {
        // A theme's related-posts box in Portuguese, inside the story's column.
        let html = format!(
            "<div class=col><article><p>{}</p></article><article><h3>Você pode gostar...</h3>\
             <article><p>{}</p></article></article></div>",
            words("story", 60),
            words("other", 60)
        );
        let got = text(&html, ExtractOptions::default());
        assert!(got.contains("story59") && !got.contains("other0"), "{got}");
    }

    #[test]
    fn page_builders_buttons_datestamps_and_copyright_lines_are_dropped() {
        // WordPress's and Elementor's call-to-action buttons between paragraphs, a post's
        // datestamp and a photo's copyright line.
        let html = format!(
            "<article><p>{}</p><p class=datestamp>{}</p>\
             <div class=\"wp-block-buttons\"><div class=\"wp-block-button\"><a class=\"wp-block-button__link\" href=/x>{}</a></div></div>\
             <p>{}</p><a class=\"elementor-button elementor-size-sm\" href=/y>{}</a>\
             <p>{}</p><span class=image-copyright>{}</span><p>{}</p></article>",
            words("one", 60),
            words("stamp", 4),
            words("wpbutton", 3),
            words("two", 60),
            words("elbutton", 3),
            words("three", 60),
            words("credit", 3),
            words("four", 60)
        );
        let got = text(&html, ExtractOptions::default());
        assert!(["one59", "two59", "three59", "four59"].iter().all(|w| got.contains(w)), "{got}");
        for dropped in ["stamp0", "wpbutton0", "elbutton0", "credit0"] {
            assert!(!got.contains(dropped), "{dropped} in {got}");
        }
        let kept = text(&html, ExtractOptions { drop_more_furniture: false, ..ExtractOptions::default() });
        assert!(kept.contains("stamp0") && kept.contains("credit0") && !kept.contains("wpbutton0"), "{kept}");
    }

    #[test]
    fn an_svg_icons_title_and_a_videos_fallback_inside_the_span_are_dropped() {
        // A link icon's tooltip and a video's fallback text between paragraphs: never rendered,
        // so never output.
        let (one, two, three) = (words("one", 30), words("two", 30), words("three", 30));
        let html = format!(
            "<html><head><title>head0 head1 head2</title></head><body><article><p>{one}</p>\
             <a href=#x><svg viewBox=\"0 0 20 20\"><title>icon0 icon1 icon2 icon3</title><path d=M0/></svg></a>\
             <p>{two}</p><video src=v.mp4>fallback0 fallback1 fallback2 fallback3</video><p>{three}</p></article></body></html>"
        );
        let got = text(&html, ExtractOptions::default());
        assert!(got.contains("one29") && got.contains("two29") && got.contains("three29"), "{got}");
        assert!(!got.contains("icon0") && !got.contains("fallback0"), "{got}");
        let kept = text(&html, ExtractOptions { drop_more_furniture: false, ..ExtractOptions::default() });
        assert!(kept.contains("icon0") && kept.contains("fallback0"), "{kept}");
    }

    #[test]
    fn a_page_of_many_items_keeps_its_shorter_items_too() {
        // Items of 40, 25, 25 and 10 words (runs worth about that), link rails between them.
        let rail: String = (0..10).map(|i| format!("<li><a href=#>rail{i}</a></li>")).collect();
        let item = |tag: &str, n: usize| format!("<p>{}</p><ul>{rail}</ul>", words(tag, n));
        let listing = [item("main", 40), item("second", 25), item("third", 25), item("short", 10)].concat();
        let opts = ExtractOptions { extra_span_ratio: 0.5, extra_span_min: 15.0, multi_item_ratio: 0.2, ..one_span() };
        let got = text(&listing, opts.clone());
        assert!(got.contains("main0") && got.contains("third24") && got.contains("short9"), "{got}");
        assert!(!got.contains("rail"), "{got}");
        // Off: the 10-word item is below the extra-span floor (20 and 15).
        let off = text(&listing, ExtractOptions { multi_item_ratio: 0.0, ..opts.clone() });
        assert!(off.contains("third24") && !off.contains("short0"), "{off}");
        // One other item passing the floor does not make a page of many items.
        let two = [item("main", 40), item("second", 25), item("short", 10)].concat();
        let got = text(&two, opts);
        assert!(got.contains("second0") && !got.contains("short0"), "{got}");
    }

    #[test]
    fn teasers_over_a_longer_copyright_footer_escape_it() {
        let gap = "<div></div>".repeat(5);
        let html = format!(
            "<main><p>{}</p></main>{gap}<footer><div class=legal><p>{}</p></div></footer>",
            words("teaser", 12),
            words("legal", 40)
        );
        let escaped = ExtractOptions { furniture_escape_ratio: 0.1, ..one_span() };
        assert_eq!(text(&html, escaped.clone()), words("teaser", 12));
        // A footer is furniture to escape only with the second furniture list on.
        let plain = ExtractOptions { drop_more_furniture: false, ..escaped.clone() };
        assert!(text(&html, plain).contains("legal0"));
        // The same for an element named by the second list; not for <nav>.
        let nav = html.replace("<footer>", "<nav>").replace("</footer>", "</nav>");
        assert!(text(&nav, escaped.clone()).contains("legal0"));
        let bio = html.replace("<footer>", "<div class=author-bio>").replace("</footer>", "</div>");
        assert_eq!(text(&bio, escaped), words("teaser", 12));
    }

    /// A scorer that keeps `inner`'s scores and brings its own span chooser.
    struct WithChooser {
        inner: SimpleScorer,
        chooser: chooser::Chooser,
    }

    impl Scorer for WithChooser {
        fn name(&self) -> &'static str {
            self.inner.name()
        }
        fn model_id(&self) -> String {
            self.inner.model_id()
        }
        fn page_scorer(&self) -> Box<dyn PageScorer + '_> {
            self.inner.page_scorer()
        }
        fn chooser(&self) -> Option<&chooser::Chooser> {
            Some(&self.chooser)
        }
    }

    #[test]
    fn the_chooser_may_take_the_page_s_main_element() {
        // A landing page: one long card the span takes, then cards of other kinds (no list)
        // between link rails, all inside `<main>`.
        let rail = |a: &str, b: &str| format!("<ul><li><a href=/a>{a}</a></li><li><a href=/b>{b}</a></li></ul>");
        let (inner, outer) = (rail("Deals", "Stores"), rail("Login", "Careers"));
        let html = |main: &str, end: &str| {
            format!(
                "<html><body><nav>{outer}</nav>{main}<div class=hero><h2>Build your plan</h2><p>{}.</p></div>{inner}\
                 <div class=promo><h2>Sports</h2><p>{}.</p></div>{inner}<section><h2>Apps</h2><p>{}.</p></section>{end}\
                 <footer>{outer}</footer></body></html>",
                words("hero", 60),
                words("sports", 12),
                words("apps", 12)
            )
        };
        // A chooser whose trees predict a gain of 0.5 for every candidate, at margin 0.1.
        let mut always = chooser::Chooser::new(0.5, Vec::new(), String::new());
        always.margin = Some(0.1);
        let scorer = WithChooser { inner: SimpleScorer::new(SimpleScorerConfig::default()), chooser: always };
        let run = |html: &str, options: ExtractOptions| {
            Extractor::new(&scorer, options).extract(html.as_bytes(), None).unwrap().text
        };
        for main in ["<main>", "<div id=page role=\"main\">"] {
            let end = if main == "<main>" { "</main>" } else { "</div>" };
            let page = html(main, end);
            let got = run(&page, ExtractOptions::default());
            assert!(got.contains("hero0") && got.contains("sports0") && got.contains("apps11"), "{main}: {got}");
            // Read whole, as a list is (a card leads with its link), but only the main element.
            assert!(got.contains("Stores") && !got.contains("Login"), "{got}");
            // Off, the span alone.
            let off = run(&page, ExtractOptions { chooser_margin: Some(0.0), ..ExtractOptions::default() });
            assert!(off.contains("hero0") && !off.contains("sports0"), "{off}");
        }
        // A page that names no main element: nothing to choose.
        let got = run(&html("", ""), ExtractOptions::default());
        assert!(got.contains("hero0") && !got.contains("sports0"), "{got}");
    }

    /// A box the site sets inside every story (cnn's "JUST WATCHED" video slate) is its
    /// furniture: site memory drops it from the output, and it no longer splits the story, whose
    /// first paragraph (worth less than the box's words) scored at −0.5 a word was lost.
    #[test]
    fn site_furniture_inside_a_story_is_dropped_without_splitting_the_story() {
        use crate::site_memory::{HostView, SiteMemory, SiteMemoryOptions, page_blocks};
        let slate = format!("<div class=slate><p>{}</p></div>", words("slate", 60));
        let page = |n: usize| {
            let rest: String = (0..3).map(|k| format!("<p>{}</p>", words(&format!("s{n}r{k}x"), 60))).collect();
            format!(
                "<html><head><title>Story {n}</title></head><body><div class=story><h1>Story {n}</h1>\
                 <p>{}</p>{slate}{rest}</div></body></html>",
                words(&format!("s{n}lead"), 30)
            )
        };
        let o = SiteMemoryOptions::default();
        let mut memory = SiteMemory::new(o.clone());
        for n in 0..10 {
            let b = page_blocks(page(n).as_bytes(), None, false).unwrap();
            memory.observe("news.test", &b.sketch, &b.hashes);
        }
        let lookup = |sketch: &[u64]| HostView::new(memory.snapshot("news.test", sketch), false);
        let scorer = SimpleScorer::new(SimpleScorerConfig::default());
        let html = page(10);
        let mut p = Extractor::new(&scorer, ExtractOptions::default()).page(None);
        p.write(html.as_bytes()).unwrap();
        let x = p.end_with_site(&lookup, &o).unwrap();
        assert!(x.site_memory, "the slate is the site's furniture");
        assert!(!x.text.contains("slate0"), "{}", x.text);
        assert!(x.text.contains("s10lead0 ") && x.text.contains("s10r2x59"), "{}", x.text);
    }

    #[test]
    fn a_passage_printed_twice_is_output_once_and_scored_for_the_chooser_as_it_was() {
        // The article, then its copy for another screen size: 330 words, above the bound.
        let passage: String = (1..=3).map(|k| format!("<p>{}.</p>", words(&format!("p{k}x"), 110))).collect();
        let html = format!(
            "<html><body><main><h1>The title</h1>{passage}<div class=\"ssr-variant hidden-x\">{passage}</div></main></body></html>"
        );
        let scorer = SimpleScorer::new(SimpleScorerConfig::default());
        let copies = |text: &str| text.matches("p2x0 ").count();
        let ex = Extractor::new(&scorer, ExtractOptions::default());
        let out = ex.extract(html.as_bytes(), None).unwrap().text;
        assert_eq!(copies(&out), 1, "{out}");
        assert!(out.contains("p1x0 ") && out.contains("p3x109."), "{out}");
        let keep = ExtractOptions { drop_boilerplate: false, ..ExtractOptions::default() };
        assert_eq!(copies(&Extractor::new(&scorer, keep).extract(html.as_bytes(), None).unwrap().text), 2);
        // The chooser's training candidates read the output before the step.
        let mut page = ex.page_with_size_hint(None, html.len());
        page.write(html.as_bytes()).unwrap();
        let (x, cands) = page.end_with_candidates().unwrap();
        assert_eq!(copies(&x.text), 2);
        assert!(!cands.is_empty() && cands.iter().all(|(_, t)| copies(t) != 1), "{cands:?}");
    }

    #[test]
    fn modal_dialogs_are_never_the_article_nor_split_it() {
        // A shop's collection: a short introduction, then the footer's refund policy served
        // as a hidden modal, longer than anything on the page.
        let html = format!(
            "<html><body><h1>Socks</h1><p>{}.</p><footer><a href=#r>Refund policy</a>\
             <div id=modal-refund role=dialog aria-modal=true><div><p>{}.</p><p>{}.</p></div></div></footer></body></html>",
            words("intro", 40),
            words("policy", 80),
            words("privacy", 80)
        );
        let got = text(&html, ExtractOptions::default());
        assert!(got.contains("intro0") && !got.contains("policy0") && !got.contains("privacy"), "{got}");
        // Read as page text, it is the output (with the footer filter off: the footer would
        // drop it too).
        let kept =
            text(&html, ExtractOptions { drop_modals: false, drop_more_furniture: false, ..ExtractOptions::default() });
        assert!(kept.contains("policy0"), "{kept}");
        // A glossary definition inside a story's paragraph neither splits its run nor is read.
        let html = format!(
            "<html><body><p>{} <a href=#g>benchmark</a><dialog aria-modal=true><h3>Benchmark</h3>\
             <p>An unmanaged group of bonds</p></dialog> {}.</p></body></html>",
            words("first", 30),
            words("second", 30)
        );
        let got = text(&html, ExtractOptions::default());
        assert!(got.contains("first0") && got.contains("second29") && !got.contains("unmanaged"), "{got}");
        // A short post and, hidden until a comment is sent, a long notice named a dialog
        // (dragnet-0638: the notice was the output).
        let html = format!(
            "<html><body><h1>Post</h1><p>{}.</p><form><textarea></textarea></form>\
             <div id=\"dialog\" style=\"display: none\"><p>{}.</p><p>{}.</p></div></body></html>",
            words("post", 25),
            words("notice", 80),
            words("rules", 80)
        );
        let got = text(&html, ExtractOptions::default());
        assert!(got.contains("post0") && !got.contains("notice0") && !got.contains("rules0"), "{got}");
        let kept = text(&html, ExtractOptions { drop_modals: false, ..ExtractOptions::default() });
        assert!(kept.contains("notice0"), "{kept}");
    }

    #[test]
    fn a_span_of_only_link_lists_is_read_whole_rather_than_emptied() {
        // A books page of 2006: every teaser a link in a block of its own, a run of them.
        let row = |i: usize| {
            format!(
                "<p>Read more of this <a href=/b/{i}>{}</a> now and then today</p>",
                words(&format!("teaser{i}x"), 30)
            )
        };
        let html = format!("<html><body>{}</body></html>", (0..4).map(row).collect::<String>());
        let got = text(&html, ExtractOptions { list_min_items: 0, ..ExtractOptions::default() });
        assert!(got.contains("teaser0x0") && got.contains("teaser3x29"), "{got}");
        // Where the filters leave some text, they still drop the link lists.
        let html = html.replace("<body>", &format!("<body><p>{}.</p>", words("story", 60)));
        let got = text(&html, ExtractOptions { list_min_items: 0, ..ExtractOptions::default() });
        assert!(got.contains("story0") && !got.contains("teaser"), "{got}");
    }

    #[test]
    fn a_span_the_furniture_names_empty_is_read_without_them() {
        // A story in an element whose class names both the page's main column and a script's
        // gallery hook, after a photo credit: the furniture list would leave only the credit.
        let story = |class: &str| {
            format!(
                "<html><body><p>{}</p><article class=\"{class}\"><p>{}.</p><p>{}.</p></article></body></html>",
                words("credit", 12),
                words("story", 60),
                words("more", 90)
            )
        };
        let got = text(&story("post-article js-post-gallery main"), ExtractOptions::default());
        assert!(got.contains("story0") && got.contains("more89"), "{got}");
        // A story and a thread after it: the thread still goes when the story left is 20 words
        // or more (whatever the thread holds), or when the thread is not ten times the story.
        let thread = |story: usize, posts: usize| {
            let posts: String = (0..posts)
                .map(|i| format!("<li class=comment><p>{}.</p></li>", words(&format!("post{i}x"), 40)))
                .collect();
            format!("<html><body><p>{}.</p><ol class=comments>{posts}</ol></body></html>", words("story", story))
        };
        for (story, posts) in [(25, 10), (15, 2)] {
            let got = text(&thread(story, posts), ExtractOptions::default());
            assert!(got.contains("story0") && !got.contains("post0x0"), "{story} {posts}: {got}");
        }
        // Under 20 words and ten times as many with the thread: read whole.
        let got = text(&thread(15, 10), ExtractOptions::default());
        assert!(got.contains("story0") && got.contains("post9x39"), "{got}");
        // `--keep-boilerplate` reads the span whole anyway; with the list on, the credit alone
        // would have come out (the state before session 41).
        let got = text(
            &story("post-article js-post-gallery main"),
            ExtractOptions { drop_boilerplate: false, ..ExtractOptions::default() },
        );
        assert!(got.contains("story0"), "{got}");
    }

    #[test]
    fn content_served_only_in_noscript_is_read_when_the_page_is_otherwise_empty() {
        let html = format!(
            "<html><body><nav><a href=/>Home</a></nav><noscript><div class=post><p>{}</p></div></noscript>\
             <script>app()</script></body></html>",
            words("post", 40)
        );
        let got = text(&html, ExtractOptions::default());
        assert!(got.contains("post0") && got.contains("post39"), "{got}");
        let off = text(&html, ExtractOptions { noscript_fallback: false, ..ExtractOptions::default() });
        assert!(!off.contains("post0"), "{off}");
        // A page with text of its own keeps it; a tracking pixel in <noscript> is no reason to look.
        let own = format!("<p>{}</p><noscript><img src=x></noscript>", words("own", 30));
        assert!(unwrap_noscript(&own).is_none());
        assert_eq!(text(&own, ExtractOptions::default()), words("own", 30));
    }

    proptest::proptest! {
        /// Any mix of headlines, comment sections, asides, hidden microdata and `<noscript>`
        /// under every span option: no panic, and every word out is a word of the page.
        #[test]
        fn span_options_never_invent_words(
            parts in proptest::collection::vec(0usize..18, 0..80),
            ratio in 0.0f64..1.0,
        ) {
            const FRAG: [&str; 18] = [
                "<div>", "</div>", "<p>", "</p>", "<h1>", "</h1>", "<div class=comments>", "<dialog>",
                "<div role=dialog aria-modal=true>",
                "<noscript>", "</NOSCRIPT>", "<aside>", "</aside>", "<a href=x>", "</a>",
                "<span itemprop=name hidden>", "alpha beta gamma delta epsilon zeta eta theta", "iota",
            ];
            let html: String = parts.iter().map(|&i| FRAG[i]).collect::<Vec<_>>().join(" ");
            let opts = ExtractOptions {
                extra_span_ratio: ratio,
                extra_span_min: 0.0,
                title_anchor_ratio: ratio,
                furniture_escape_ratio: ratio,
                // The learned chooser too, with its candidates (runs and elements).
                chooser_margin: Some(ratio / 10.0),
                ..ExtractOptions::default()
            };
            let got = text(&html, opts);
            for w in got.split_whitespace() {
                proptest::prop_assert!(html.contains(w), "{w} is not in {html}");
            }
        }
    }

    #[test]
    fn noscript_tags_are_unwrapped_in_any_case_and_only_whole_names() {
        let body = "x".repeat(250);
        let got = unwrap_noscript(&format!("<NoScript class=a>{body}</NOSCRIPT ><noscripts>")).unwrap();
        assert_eq!(got, format!("<div class=a>{body}</div ><noscripts>"));
    }
}
