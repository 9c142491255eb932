//! # article_pipeline
//!
//! Streaming article-text extraction after Pasternack & Roth, *Extracting Article Text from
//! the Web with Maximum Subsequence Segmentation* (WWW 2009). A tour of the crate, in the order
//! data flows:
//!
//! - [`html`]: bytes → UTF-8 (BOM, HTTP charset, `<meta>`, chardetng) → a flat stream of start
//!   tags, end tags, words and symbols with byte spans (our HTML5 lexer, checked against lol_html);
//!   words become feature keys through [`html::normalize`] and the English Snowball stemmer
//!   [`html::stem`] (on ASCII bytes, checked against rust-stemmers); a start tag's attributes
//!   are read, by whoever needs them later, in the one walk of [`html::attrs`].
//! - [`metadata`]: dates, language, authors, site name, canonical URL … noted during the same
//!   token stream (JSON-LD, `<meta>`, `<time>`, URL, text near the headline).
//! - [`features`]: the token features of the Naive Bayes model (trigrams, most-recent-unclosed
//!   tag, id/class words).
//! - [`dataset`] and [`gold`]: manifests of (page, gold text); gold text, gold words and their
//!   alignment with page tokens, the filters of training pages, Ziegler's similarity. Below
//!   every method and the evaluation.
//! - [`model_file`]: the one container of every model file (header, payload, checksum).
//! - [`site_memory`]: what repeats across a host's pages (block hashes counted per host and
//!   template, bounded): the site's furniture, which the extractor scores down and drops; its
//!   [`site_memory::template`] tells a host's layouts apart (also the bootstrap's grouping).
//! - [`scoring`]: the [`scoring::Scorer`] contract (a score for every token, streamed),
//!   [`scoring::max_subsequence`], which finds the highest-valued span in one pass (§6.2), and
//!   [`scoring::chooser`], the learned second opinion on that span: the span, one of the
//!   page's lists or its main element (boosted trees; a model file may hold one fitted for its
//!   own choices).
//! - [`segment`]: the page cut into blocks (Gibson et al.'s, Yao & Zuo's, the thesis' text and
//!   tail), block labels from gold, block labels back to token scores: what the block methods
//!   share.
//! - [`methods`]: one folder per extraction method (`nb`, `simple`, `largest_block`, `blocks`
//!   for CRF / MEMM / MaxEnt, `svm`, `mbl`, `pso`), each with its features, model, training
//!   and scorer, and [`methods::METHODS`], the one table that registers them. `nb` also holds
//!   the bootstrap (self-training with its label-free check) and [`methods::nb::guard`], which
//!   scores pages of layouts an adapted model never saw with its base model.
//! - [`extract`]: the synchronous, I/O-free [`extract::Extractor`] wiring a scorer to the
//!   maximum subsequence and turning the chosen span into clean text (HR constraint, cleaning
//!   rules, paragraph layout; [`extract::span`] corrects the run the maximum subsequence
//!   found (furniture escape, title anchor, extra spans), [`extract::candidates`] gives the
//!   learned chooser its rivals, [`extract::furniture`] and [`extract::phrases`] hold what the
//!   span's markup and words mark as furniture); every knob is a field of
//!   [`extract::ExtractOptions`].
//! - [`eval`]: the metrics of `../shared/peers/score.py`, reimplemented to agree with it;
//!   [`eval::bench`] times methods on the same pages in one run (`pipeline bench`).
//!
//! The crawl half, in the order records flow:
//! - [`transport`]: what network readers share (TLS provider, the resume policy of a stream).
//! - [`storage`]: S3-compatible object storage for `--warc s3://…` and `--out s3://…`
//!   (streamed reads resumed with ranged GETs, multipart uploads).
//! - [`sources`]: WARC files (local, HTTPS, S3) and feeds (polite fetcher with the
//!   private-address guard, per-host frontier, adaptive poll schedule) as page events.
//! - [`dedup`]: fingerprints (exact hash, MinHash / LSH bands), the in-run near-duplicate
//!   index, and the global pass over many runs in bounded memory.
//! - [`sink`]: the record schema and the parts, zstd JSON Lines or Parquet, committed atomically.
//! - [`pipeline`]: the staged run (source thread, extraction threads, in-order sink), its
//!   configuration, resume state (inputs retried when they end early), shards (inputs
//!   assigned by a hash of their name; a feeds page reached through another shard's link is
//!   handed to its own, [`pipeline::handoff`]), S3 output, `status` and `dedup` runs.
//!
//! `tests/layers.rs` checks that imports between these modules point down the layer order
//! (the model container and html at the bottom, pipeline at the top); none points up.
//!
//! The `pipeline` binary (`src/main.rs`, `src/cli/`) only parses arguments and prints.

pub mod dataset;
pub mod dedup;
pub mod eval;
pub mod extract;
pub mod features;
pub mod gold;
pub mod html;
pub mod metadata;
pub mod methods;
pub mod model_file;
pub mod pipeline;
pub mod scoring;
pub mod segment;
pub mod sink;
pub mod site_memory;
pub mod sources;
pub mod storage;
pub mod transport;
