//! The integration suite, one test binary: each module below was a binary of its own, and
//! every binary links the whole library with its dependencies. On a fresh clone with 2 cores
//! the 24 links took most of the test build, so they share one link (cargo's "one integration
//! test crate" layout). `cargo test NAME::` runs one module, e.g. `cargo test s3::`.
//!
//! Shared helpers: `common` (run the binary, write pages and WARCs), `feed_hosts` (axum feed
//! servers on loopback addresses, shared with `benches/feeds_crawl.rs`) and `s3_server` (an
//! S3-compatible server on 127.0.0.1).

mod common;
#[path = "common/feed_hosts.rs"]
mod feed_hosts;
#[path = "common/s3.rs"]
mod s3_server;

mod arc_input;
mod bad_input;
mod block_scorers;
mod bootstrap;
mod broken_markup;
mod chooser;
mod cli;
mod feeds_pipeline;
mod feeds_retry;
mod feeds_scale;
mod feeds_shards;
mod index_tantivy;
mod knn;
mod layers;
mod metrics;
mod options_table;
mod parquet_output;
mod pso;
mod s3;
mod schema;
mod site_memory;
mod svm;
mod warc_pipeline;
mod warc_remote;
