//! # article_pipeline
//!
//! Streaming article-text extraction after Pasternack & Roth, *Extracting Article Text from
//! the Web with Maximum Subsequence Segmentation* (WWW 2009). A tour of the crate, in the order
//! data flows:
//!
//! - [`html`]: bytes → UTF-8 (BOM, HTTP charset, `<meta>`, chardetng) → a flat stream of start
//!   tags, end tags, words and symbols with byte spans (our HTML5 lexer, checked against lol_html);
//!   words become feature keys through [`html::normalize`] and the English Snowball stemmer
//!   [`html::stem`] (on ASCII bytes, checked against rust-stemmers).
//! - [`metadata`]: dates, language, authors, site name, canonical URL … noted during the same
//!   token stream (JSON-LD, `<meta>`, `<time>`, URL, text near the headline).
//! - [`model_file`]: the one container of every model file (header, payload, checksum), below
//!   the scorers that read models and the learners that write them.
//! - [`scoring`]: a [`scoring::Scorer`] gives every token a score; [`scoring::max_subsequence`]
//!   finds the highest-valued span in one pass.
//! - [`extract`]: the synchronous, I/O-free [`extract::Extractor`] wiring the two and turning the
//!   chosen span into clean text (HR constraint, cleaning rules, paragraph layout).
//! - [`blocks`] and [`learners`]: the block-labelling family of Gibson, Wellner & Lubar (2007)
//!   — streaming block segmentation and features, CRF / MEMM / MaxEnt — behind the block
//!   scorers of [`scoring::blocks`] (multi-span or hybrid with the maximum subsequence); Yao &
//!   Zuo's SVM block classifier is [`blocks::yao`] (features), [`scoring::svm`] (model, scorer)
//!   and [`training::svm`] (learning). The memory-based learner of the TiMBL thesis reuses the
//!   segmenter's text/tail units ([`blocks::text_tail`], [`learners::mbl`]: IB1 and IGTree)
//!   behind [`scoring::mbl`], which also predicts the article's title and headings
//!   ([`scoring::Structure`]).
//! - [`gold`]: gold text, gold words and their alignment with page tokens, the filters of
//!   training pages, Ziegler's similarity: below every method and the evaluation.
//! - [`dataset`] and [`eval`]: manifests of (page, gold text) and the metrics of
//!   `../shared/peers/score.py`, reimplemented to agree with it; [`eval::bench`] times scorers
//!   on the same pages in one run (`pipeline bench`).
//!
//! - [`features`]: the token features of the Naive Bayes model (trigrams, most-recent-unclosed
//!   tag, id/class words), and [`training`]: fitting the models (NB, SVM, PSO, memory-based)
//!   and the unsupervised bootstrap.
//!
//! The crawl half, in the order records flow:
//! - [`transport`]: what network readers share (TLS provider, the resume policy of a stream).
//! - [`storage`]: S3-compatible object storage for `--warc s3://…` and `--out s3://…`
//!   (streamed reads resumed with ranged GETs, multipart uploads).
//! - [`sources`]: WARC files (local, HTTPS, S3) and feeds (polite fetcher with the
//!   private-address guard, per-host frontier, adaptive poll schedule) as page events.
//! - [`dedup`]: fingerprints (exact hash, MinHash / LSH bands), the in-run near-duplicate
//!   index, and the global pass over many runs in bounded memory.
//! - [`sink`]: the record schema and the zstd JSON Lines parts, committed atomically.
//! - [`pipeline`]: the staged run (source thread, extraction threads, in-order sink), its
//!   configuration, resume state (inputs retried when they end early), shards (inputs
//!   assigned by a hash of their name), S3 output, `status` and `dedup` runs.
//!
//! `tests/layers.rs` checks that imports between these modules point down the layer order
//! (the model container and html at the bottom, pipeline at the top); none points up.
//!
//! The `pipeline` binary (`src/main.rs`, `src/cli/`) only parses arguments and prints.

pub mod blocks;
pub mod dataset;
pub mod dedup;
pub mod eval;
pub mod extract;
pub mod features;
pub mod gold;
pub mod html;
pub mod learners;
pub mod metadata;
pub mod model_file;
pub mod pipeline;
pub mod scoring;
pub mod sink;
pub mod sources;
pub mod storage;
pub mod training;
pub mod transport;
