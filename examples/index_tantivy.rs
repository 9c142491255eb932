//! The records of a run in an embedded search index ([tantivy](https://docs.rs/tantivy)):
//! `text` and `title` full text (English stemming), `url`, `lang` and `authors` as exact
//! terms, `published` as a date (indexed and fast, for range filters and sorting).
//!
//! ```text
//! cargo run --release -- --warc examples/sample.warc.gz --out out/
//! cargo run --release --example index_tantivy -- out/ index/ 'text:"late amendments" AND lang:en'
//! ```
//!
//! OUT may be a run's folder or a root of shards (every `part-*.jsonl.zst` under it is read).
//! Queries use tantivy's syntax: `"a phrase"`, `published:[2025-03-01T00:00:00Z TO
//! 2025-04-01T00:00:00Z}`, `lang:de`, `authors:"Ann Lee"`. `tests/index_tantivy.rs` runs
//! these on the bundled WARC.

use std::path::{Path, PathBuf};

use tantivy::collector::TopDocs;
use tantivy::query::QueryParser;
use tantivy::schema::{
    DateOptions, DateTimePrecision, Field, INDEXED, IndexRecordOption, STORED, STRING, Schema, TextFieldIndexing,
    TextOptions,
};
use tantivy::{DateTime, Index, IndexWriter, TantivyDocument};

/// The index's fields.
pub struct Fields {
    pub id: Field,
    pub url: Field,
    pub title: Field,
    pub text: Field,
    pub published: Field,
    pub lang: Field,
    pub authors: Field,
}

pub fn schema() -> (Schema, Fields) {
    let mut b = Schema::builder();
    let english = TextOptions::default().set_indexing_options(
        TextFieldIndexing::default()
            .set_tokenizer("en_stem")
            .set_index_option(IndexRecordOption::WithFreqsAndPositions),
    );
    let fields = Fields {
        id: b.add_text_field("id", STRING | STORED),
        url: b.add_text_field("url", STRING | STORED),
        title: b.add_text_field("title", english.clone().set_stored()),
        text: b.add_text_field("text", english),
        published: b.add_date_field(
            "published",
            DateOptions::from(INDEXED).set_stored().set_fast().set_precision(DateTimePrecision::Seconds),
        ),
        lang: b.add_text_field("lang", STRING | STORED),
        authors: b.add_text_field("authors", STRING | STORED),
    };
    (b.build(), fields)
}

/// `published` of a record (a day, or a day with time and offset) as a UTC instant.
pub fn published_at(published: &str) -> Option<DateTime> {
    let utc = match chrono::DateTime::parse_from_rfc3339(published) {
        Ok(t) => t.timestamp(),
        Err(_) => match chrono::NaiveDateTime::parse_from_str(published, "%Y-%m-%dT%H:%M:%S") {
            Ok(t) => t.and_utc().timestamp(),
            Err(_) => chrono::NaiveDate::parse_from_str(published, "%Y-%m-%d")
                .ok()?
                .and_hms_opt(0, 0, 0)?
                .and_utc()
                .timestamp(),
        },
    };
    Some(DateTime::from_timestamp_secs(utc))
}

fn parts_under(dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    out.extend(article_pipeline::sink::list_parts(dir)?);
    let mut subdirs: Vec<PathBuf> =
        std::fs::read_dir(dir)?.flatten().map(|e| e.path()).filter(|p| p.is_dir()).collect();
    subdirs.sort();
    for d in subdirs {
        parts_under(&d, out)?;
    }
    Ok(())
}

/// Indexes every record of the parts under `run` into `index_dir` (in memory when None);
/// returns the index and its fields.
pub fn build_index(run: &Path, index_dir: Option<&Path>) -> Result<(Index, Fields), Box<dyn std::error::Error>> {
    let (schema, f) = schema();
    let index = match index_dir {
        Some(d) => {
            std::fs::create_dir_all(d)?;
            Index::create_in_dir(d, schema)?
        }
        None => Index::create_in_ram(schema),
    };
    let mut writer: IndexWriter = index.writer(50_000_000)?;
    let mut parts = Vec::new();
    parts_under(run, &mut parts)?;
    for part in parts {
        for r in article_pipeline::sink::read_part(&part)? {
            let m = &r["metadata"];
            let s = |v: &serde_json::Value| v.as_str().unwrap_or("").to_string();
            let mut doc = TantivyDocument::default();
            doc.add_text(f.id, s(&r["id"]));
            doc.add_text(f.url, s(&m["url"]));
            doc.add_text(f.title, s(&m["title"]));
            doc.add_text(f.text, s(&r["text"]));
            if let Some(t) = m["published"].as_str().and_then(published_at) {
                doc.add_date(f.published, t);
            }
            if let Some(l) = m["lang"].as_str() {
                doc.add_text(f.lang, l);
            }
            for a in m["authors"].as_array().into_iter().flatten().filter_map(|a| a.as_str()) {
                doc.add_text(f.authors, a);
            }
            writer.add_document(doc)?;
        }
    }
    writer.commit()?;
    Ok((index, f))
}

/// The ids of the records matching `query` (best first, at most `limit`).
pub fn search(index: &Index, f: &Fields, query: &str, limit: usize) -> Result<Vec<String>, Box<dyn std::error::Error>> {
    let searcher = index.reader()?.searcher();
    let q = QueryParser::for_index(index, vec![f.title, f.text]).parse_query(query)?;
    let mut ids = Vec::new();
    for (_, addr) in searcher.search(&q, &TopDocs::with_limit(limit).order_by_score())? {
        let doc: TantivyDocument = searcher.doc(addr)?;
        let url = doc.get_first(f.url).and_then(|v| tantivy::schema::Value::as_str(&v)).unwrap_or("").to_string();
        ids.push(url);
    }
    Ok(ids)
}

#[allow(dead_code)] // the tests include this file for its functions
fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [run, index_dir, rest @ ..] = args.as_slice() else {
        eprintln!("usage: index_tantivy RUN_DIR INDEX_DIR [QUERY]");
        std::process::exit(2);
    };
    let (index, f) = build_index(Path::new(run), Some(Path::new(index_dir)))?;
    eprintln!("indexed {} records into {index_dir}", index.reader()?.searcher().num_docs());
    if let Some(q) = rest.first() {
        for url in search(&index, &f, q, 10)? {
            println!("{url}");
        }
    }
    Ok(())
}
