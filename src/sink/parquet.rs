//! Parquet parts (`--format parquet`, `[sink] format = "parquet"`): the records of
//! [`super::record`] as typed columns, for DuckDB, pyarrow, Polars, Spark and Hugging Face
//! `datasets`, which share the format.
//!
//! One flat row per record, columns named after the JSON fields (`metadata.` dropped, the
//! source, extraction and fingerprint fields prefixed): strings, dates as UTC timestamps in
//! milliseconds (a date without a time is its midnight UTC), `authors`, `categories` and
//! `keywords` as lists of strings, the fingerprints as unsigned integers and lists of them.
//! The free-form parts (`feed`, `structure`) are JSON strings. `schema/record.parquet.txt`
//! gives the schema. Rows are buffered and written as zstd-compressed row groups of at most
//! [`ROW_GROUP_ROWS`] rows or [`ROW_GROUP_BYTES`] of text; parts rotate, commit, resume and go
//! to S3 exactly as `.jsonl.zst` parts do ([`super::PartSink`]).
//!
//! The crate's column writer is used directly (no Arrow arrays), so the build stays small.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use chrono::{DateTime, NaiveDate, NaiveDateTime, SecondsFormat, Utc};
use parquet::basic::{Compression, ZstdLevel};
use parquet::data_type::{BoolType, ByteArray, ByteArrayType, DoubleType, Int32Type, Int64Type};
use parquet::file::properties::WriterProperties;
use parquet::file::reader::{FileReader, SerializedFileReader};
use parquet::file::writer::SerializedFileWriter;
use parquet::record::Field;
use parquet::schema::types::Type;

use super::record::{ExtractionInfo, Metadata, Record, Source};
use crate::dedup::Fingerprints;

/// A row group is written once this many records are buffered…
pub const ROW_GROUP_ROWS: usize = 8192;
/// …or this many bytes of text and title: memory stays bounded on long pages.
pub const ROW_GROUP_BYTES: usize = 64 << 20;

/// The schema, in Parquet's message syntax (also `schema/record.parquet.txt`, checked by a
/// test).
pub const SCHEMA: &str = "message record {
  required binary id (STRING);
  required binary text (STRING);
  required binary url (STRING);
  required binary final_url (STRING);
  required binary source_kind (STRING);
  optional binary source_file (STRING);
  optional int64 source_offset (INTEGER(64,false));
  optional binary source_feed (STRING);
  optional int64 fetched_at (TIMESTAMP(MILLIS,true));
  optional int32 status (INTEGER(16,false));
  optional binary content_type (STRING);
  optional binary charset (STRING);
  optional binary title (STRING);
  optional binary html_title (STRING);
  optional int64 published (TIMESTAMP(MILLIS,true));
  optional int64 modified (TIMESTAMP(MILLIS,true));
  optional binary date_source (STRING);
  optional binary lang (STRING);
  optional double lang_confidence;
  required group authors (LIST) { repeated group list { required binary element (STRING); } }
  optional binary description (STRING);
  optional binary site_name (STRING);
  optional binary canonical_url (STRING);
  optional binary image (STRING);
  required group categories (LIST) { repeated group list { required binary element (STRING); } }
  required group keywords (LIST) { repeated group list { required binary element (STRING); } }
  optional binary feed (JSON);
  required binary scorer (STRING);
  optional binary model (STRING);
  optional int64 span_start (INTEGER(64,false));
  optional int64 span_end (INTEGER(64,false));
  required double score;
  required int64 tokens (INTEGER(64,false));
  required boolean site_memory;
  required int64 fingerprint_exact (INTEGER(64,false));
  required int64 fingerprint_simhash (INTEGER(64,false));
  required group fingerprint_minhash (LIST) { repeated group list { required int32 element (INTEGER(32,false)); } }
  required group fingerprint_bands (LIST) { repeated group list { required int64 element (INTEGER(64,false)); } }
  optional binary near_duplicate_of (STRING);
  optional binary structure (JSON);
}";

fn schema() -> Arc<Type> {
    Arc::new(parquet::schema::parser::parse_message_type(SCHEMA).expect("SCHEMA parses (tested)"))
}

/// Milliseconds since the epoch of an ISO 8601 date as the records write them (RFC 3339, or a
/// date alone: its midnight UTC, or a local time without offset: taken as UTC).
pub fn timestamp_millis(s: &str) -> Option<i64> {
    if let Ok(t) = DateTime::parse_from_rfc3339(s) {
        return Some(t.timestamp_millis());
    }
    if let Ok(t) = NaiveDateTime::parse_from_str(s, "%Y-%m-%dT%H:%M:%S") {
        return Some(t.and_utc().timestamp_millis());
    }
    let d = NaiveDate::parse_from_str(s.get(..10)?, "%Y-%m-%d").ok()?;
    Some(d.and_hms_opt(0, 0, 0)?.and_utc().timestamp_millis())
}

/// RFC 3339 in UTC of a timestamp column's value (`2026-11-24T00:00:00Z`).
fn rfc3339(ms: i64) -> Option<String> {
    DateTime::<Utc>::from_timestamp_millis(ms).map(|t| t.to_rfc3339_opts(SecondsFormat::AutoSi, true))
}

/// The buffered rows, column by column.
#[derive(Default)]
struct Columns {
    rows: usize,
    bytes: usize,
    /// Values of the string columns, in schema order of [`STRINGS`]; `None` is null.
    strings: Vec<Vec<Option<String>>>,
    source_offset: Vec<Option<u64>>,
    fetched_at: Vec<Option<i64>>,
    status: Vec<Option<u16>>,
    published: Vec<Option<i64>>,
    modified: Vec<Option<i64>>,
    lang_confidence: Vec<Option<f64>>,
    authors: Vec<Vec<String>>,
    categories: Vec<Vec<String>>,
    keywords: Vec<Vec<String>>,
    span: Vec<Option<(usize, usize)>>,
    score: Vec<f64>,
    tokens: Vec<u64>,
    site_memory: Vec<bool>,
    exact: Vec<u64>,
    simhash: Vec<u64>,
    minhash: Vec<Vec<u32>>,
    bands: Vec<Vec<u64>>,
}

/// The string columns, by name (each column's values are in `Columns::strings[i]`).
const STRINGS: &[&str] = &[
    "id",
    "text",
    "url",
    "final_url",
    "source_kind",
    "source_file",
    "source_feed",
    "content_type",
    "charset",
    "title",
    "html_title",
    "date_source",
    "lang",
    "description",
    "site_name",
    "canonical_url",
    "image",
    "feed",
    "scorer",
    "model",
    "near_duplicate_of",
    "structure",
];

impl Columns {
    fn push(&mut self, r: &Record) {
        let m = &r.metadata;
        let a = &m.article;
        let (kind, file, offset, feed_url) = match &m.source {
            Source::Warc { file, offset } => ("warc", Some(file.clone()), Some(*offset), None),
            Source::Feed { feed } => ("feed", None, None, Some(feed.clone())),
        };
        let strings: [Option<String>; 22] = [
            Some(r.id.clone()),
            Some(r.text.clone()),
            Some(m.url.clone()),
            Some(m.final_url.clone()),
            Some(kind.to_string()),
            file,
            feed_url,
            m.content_type.clone(),
            m.charset.clone(),
            m.title.clone(),
            m.html_title.clone(),
            a.date_source.clone(),
            a.lang.clone(),
            a.description.clone(),
            a.site_name.clone(),
            a.canonical_url.clone(),
            a.image.clone(),
            m.feed.as_ref().map(|f| serde_json::to_string(f).expect("feed items serialise")),
            Some(m.extraction.scorer.clone()),
            m.extraction.model.clone(),
            m.near_duplicate_of.clone(),
            m.structure.as_ref().map(|s| serde_json::to_string(s).expect("structures serialise")),
        ];
        if self.strings.is_empty() {
            self.strings = vec![Vec::new(); STRINGS.len()];
        }
        for (col, v) in self.strings.iter_mut().zip(strings) {
            self.bytes += v.as_ref().map_or(0, String::len);
            col.push(v);
        }
        self.source_offset.push(offset);
        self.fetched_at.push(m.fetched_at.as_deref().and_then(timestamp_millis));
        self.status.push(m.status);
        self.published.push(a.published.as_deref().and_then(timestamp_millis));
        self.modified.push(a.modified.as_deref().and_then(timestamp_millis));
        self.lang_confidence.push(a.lang_confidence);
        self.authors.push(a.authors.clone());
        self.categories.push(a.categories.clone());
        self.keywords.push(a.keywords.clone());
        self.span.push(m.extraction.span);
        self.score.push(m.extraction.score);
        self.tokens.push(m.extraction.tokens as u64);
        self.site_memory.push(m.extraction.site_memory);
        self.exact.push(m.fingerprints.exact);
        self.simhash.push(m.fingerprints.simhash);
        self.minhash.push(m.fingerprints.minhash.clone());
        self.bands.push(m.fingerprints.bands.clone());
        self.rows += 1;
    }

    fn string(&self, name: &str) -> &[Option<String>] {
        &self.strings[STRINGS.iter().position(|s| *s == name).expect("a string column")]
    }
}

/// Values and definition levels of an optional column.
fn optional<T: Copy, U>(v: &[Option<T>], f: impl Fn(T) -> U) -> (Vec<U>, Vec<i16>) {
    let values = v.iter().flatten().map(|x| f(*x)).collect();
    let defs = v.iter().map(|x| i16::from(x.is_some())).collect();
    (values, defs)
}

/// Writes an optional column of physical type `T` from `v` (None is null).
fn write_optional<T: parquet::data_type::DataType, X: Copy>(
    col: &mut parquet::file::writer::SerializedColumnWriter<'_>,
    v: &[Option<X>],
    f: impl Fn(X) -> T::T,
) -> parquet::errors::Result<usize> {
    let (values, defs) = optional(v, f);
    col.typed::<T>().write_batch(&values, Some(&defs), None)
}

/// Values, definition and repetition levels of a required list column (an empty list is one
/// level of 0 and no value).
fn list<T: Copy, U>(rows: &[Vec<T>], f: impl Fn(T) -> U) -> (Vec<U>, Vec<i16>, Vec<i16>) {
    let (mut values, mut defs, mut reps) = (Vec::new(), Vec::new(), Vec::new());
    for row in rows {
        if row.is_empty() {
            defs.push(0);
            reps.push(0);
        }
        for (k, x) in row.iter().enumerate() {
            values.push(f(*x));
            defs.push(1);
            reps.push(i16::from(k > 0));
        }
    }
    (values, defs, reps)
}

fn strings_list(rows: &[Vec<String>]) -> (Vec<ByteArray>, Vec<i16>, Vec<i16>) {
    let refs: Vec<Vec<&str>> = rows.iter().map(|r| r.iter().map(String::as_str).collect()).collect();
    list(&refs, ByteArray::from)
}

/// Counts bytes on their way to the file (the writer owns it; rotation reads the count).
struct Counting {
    inner: BufWriter<File>,
    written: Arc<AtomicU64>,
}

impl Write for Counting {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.written.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

/// One Parquet part being written.
pub struct ParquetPart {
    writer: SerializedFileWriter<Counting>,
    columns: Columns,
    written: Arc<AtomicU64>,
}

fn err(e: parquet::errors::ParquetError) -> io::Error {
    io::Error::other(e)
}

impl ParquetPart {
    pub fn create(path: &Path, zstd_level: i32) -> io::Result<ParquetPart> {
        let file = File::create(path)?;
        let written = Arc::new(AtomicU64::new(0));
        let counting = Counting { inner: BufWriter::with_capacity(1 << 20, file), written: written.clone() };
        let level = ZstdLevel::try_new(zstd_level).map_err(err)?;
        let props = WriterProperties::builder()
            .set_compression(Compression::ZSTD(level))
            .set_created_by(concat!("article-pipeline ", env!("CARGO_PKG_VERSION")).to_string())
            .build();
        let writer = SerializedFileWriter::new(counting, schema(), Arc::new(props)).map_err(err)?;
        Ok(ParquetPart { writer, columns: Columns::default(), written })
    }

    /// Buffers a record; writes a row group when the buffer is full.
    pub fn write(&mut self, r: &Record) -> io::Result<()> {
        self.columns.push(r);
        if self.columns.rows >= ROW_GROUP_ROWS || self.columns.bytes >= ROW_GROUP_BYTES {
            self.flush_row_group()?;
        }
        Ok(())
    }

    /// Bytes in the file so far, and an estimate of the buffered rows' (text compresses about
    /// 3:1 with zstd), for rotation by size.
    pub fn size(&self) -> u64 {
        self.written.load(Ordering::Relaxed) + self.columns.bytes as u64 / 3
    }

    fn flush_row_group(&mut self) -> io::Result<()> {
        if self.columns.rows == 0 {
            return Ok(());
        }
        let c = std::mem::take(&mut self.columns);
        // Each top-level field is one leaf column (a list's leaf is under its list), so a
        // leaf's first path part names the field the values come from.
        let leaves: Vec<String> =
            self.writer.schema_descr().columns().iter().map(|l| l.path().parts()[0].clone()).collect();
        let mut rg = self.writer.next_row_group().map_err(err)?;
        let mut leaves = leaves.iter();
        while let Some(mut col) = rg.next_column().map_err(err)? {
            let name = leaves.next().expect("one leaf per column").as_str();
            match name {
                "source_offset" => write_optional::<Int64Type, _>(&mut col, &c.source_offset, |x| x as i64),
                "fetched_at" | "published" | "modified" => {
                    let src = match name {
                        "fetched_at" => &c.fetched_at,
                        "published" => &c.published,
                        _ => &c.modified,
                    };
                    write_optional::<Int64Type, _>(&mut col, src, |x| x)
                }
                "status" => write_optional::<Int32Type, _>(&mut col, &c.status, i32::from),
                "lang_confidence" => write_optional::<DoubleType, _>(&mut col, &c.lang_confidence, |x| x),
                "authors" | "categories" | "keywords" => {
                    let src = match name {
                        "authors" => &c.authors,
                        "categories" => &c.categories,
                        _ => &c.keywords,
                    };
                    let (v, d, r) = strings_list(src);
                    col.typed::<ByteArrayType>().write_batch(&v, Some(&d), Some(&r))
                }
                "span_start" | "span_end" => {
                    let start = name == "span_start";
                    let span: Vec<Option<u64>> =
                        c.span.iter().map(|s| s.map(|(a, b)| if start { a as u64 } else { b as u64 })).collect();
                    write_optional::<Int64Type, _>(&mut col, &span, |x| x as i64)
                }
                "score" => col.typed::<DoubleType>().write_batch(&c.score, None, None),
                "tokens" | "fingerprint_exact" | "fingerprint_simhash" => {
                    let src = match name {
                        "tokens" => &c.tokens,
                        "fingerprint_exact" => &c.exact,
                        _ => &c.simhash,
                    };
                    let v: Vec<i64> = src.iter().map(|x| *x as i64).collect();
                    col.typed::<Int64Type>().write_batch(&v, None, None)
                }
                "site_memory" => col.typed::<BoolType>().write_batch(&c.site_memory, None, None),
                "fingerprint_minhash" => {
                    let (v, d, r) = list(&c.minhash, |x| x as i32);
                    col.typed::<Int32Type>().write_batch(&v, Some(&d), Some(&r))
                }
                "fingerprint_bands" => {
                    let (v, d, r) = list(&c.bands, |x| x as i64);
                    col.typed::<Int64Type>().write_batch(&v, Some(&d), Some(&r))
                }
                s => {
                    let vals = c.string(s);
                    let writer = col.typed::<ByteArrayType>();
                    // Required or optional as SCHEMA declares it.
                    let optional = writer.get_descriptor().max_def_level() > 0;
                    let v: Vec<ByteArray> = vals.iter().flatten().map(|x| ByteArray::from(x.as_str())).collect();
                    let d: Vec<i16> = vals.iter().map(|x| i16::from(x.is_some())).collect();
                    writer.write_batch(&v, optional.then_some(&d[..]), None)
                }
            }
            .map_err(err)?;
            col.close().map_err(err)?;
        }
        rg.close().map_err(err)?;
        Ok(())
    }

    /// Writes the last row group and the footer; returns the file to be synced.
    pub fn finish(mut self) -> io::Result<File> {
        self.flush_row_group()?;
        let counting = self.writer.into_inner().map_err(err)?;
        counting.inner.into_inner().map_err(|e| e.into_error())
    }
}

/// Reads a Parquet part back as the records' JSON (for resume, `pipeline dedup` and checks):
/// the same fields and shape as a `.jsonl.zst` line, with dates as RFC 3339 in UTC.
pub fn read_part(path: &Path) -> io::Result<Vec<serde_json::Value>> {
    let reader = SerializedFileReader::new(File::open(path)?).map_err(err)?;
    let mut out = Vec::new();
    for row in reader.get_row_iter(None).map_err(err)? {
        let row = row.map_err(err)?;
        let get = |name: &str| row.get_column_iter().find(|(n, _)| n.as_str() == name).map(|(_, f)| f);
        let record = record_of(&get).map_err(|m| io::Error::new(io::ErrorKind::InvalidData, m))?;
        out.push(serde_json::to_value(record).map_err(io::Error::other)?);
    }
    Ok(out)
}

/// Column `name` of a row: None when null or absent, an error when `f` (which reads the
/// expected type) refuses it.
fn value<'a, T>(
    get: &dyn Fn(&str) -> Option<&'a Field>,
    name: &str,
    kind: &str,
    f: impl Fn(&Field) -> Option<T>,
) -> Result<Option<T>, String> {
    match get(name) {
        None | Some(Field::Null) => Ok(None),
        Some(x) => f(x).map(Some).ok_or_else(|| format!("column {name}: not {kind}: {x:?}")),
    }
}

/// Builds a record from a row's fields (by name).
fn record_of<'a>(get: &dyn Fn(&str) -> Option<&'a Field>) -> Result<Record, String> {
    let string = |name: &str| {
        value(get, name, "a string", |f| match f {
            Field::Str(s) => Some(s.clone()),
            Field::Bytes(b) => Some(String::from_utf8_lossy(b.data()).into_owned()),
            _ => None,
        })
    };
    let required = |name: &str| string(name)?.ok_or_else(|| format!("column {name} is null"));
    let unsigned = |name: &str| {
        value(get, name, "an integer", |f| match f {
            Field::ULong(v) => Some(*v),
            Field::Long(v) => Some(*v as u64),
            Field::UShort(v) => Some(u64::from(*v)),
            Field::Int(v) => Some(*v as u64),
            _ => None,
        })
    };
    let time = |name: &str| {
        value(get, name, "a timestamp", |f| match f {
            Field::TimestampMillis(ms) => rfc3339(*ms),
            _ => None,
        })
    };
    let double = |name: &str| value(get, name, "a double", |f| if let Field::Double(v) = f { Some(*v) } else { None });
    let elements = |name: &str| -> Result<Vec<Field>, String> {
        match get(name) {
            None | Some(Field::Null) => Ok(Vec::new()),
            Some(Field::ListInternal(l)) => Ok(l.elements().to_vec()),
            Some(f) => Err(format!("column {name}: not a list: {f:?}")),
        }
    };
    let strings = |name: &str| -> Result<Vec<String>, String> {
        elements(name)?
            .into_iter()
            .map(|f| match f {
                Field::Str(s) => Ok(s),
                f => Err(format!("column {name}: not a string: {f:?}")),
            })
            .collect()
    };
    let integers = |name: &str| -> Result<Vec<u64>, String> {
        elements(name)?
            .into_iter()
            .map(|f| match f {
                Field::ULong(v) => Ok(v),
                Field::UInt(v) => Ok(u64::from(v)),
                Field::Long(v) => Ok(v as u64),
                Field::Int(v) => Ok(u64::from(v as u32)),
                f => Err(format!("column {name}: not an integer: {f:?}")),
            })
            .collect()
    };
    let json = |name: &str| -> Result<Option<serde_json::Value>, String> {
        string(name)?.map(|s| serde_json::from_str(&s).map_err(|e| format!("column {name}: {e}"))).transpose()
    };
    let source = match required("source_kind")?.as_str() {
        "feed" => Source::Feed { feed: string("source_feed")?.unwrap_or_default() },
        _ => Source::Warc {
            file: string("source_file")?.unwrap_or_default(),
            offset: unsigned("source_offset")?.unwrap_or(0),
        },
    };
    let span = match (unsigned("span_start")?, unsigned("span_end")?) {
        (Some(a), Some(b)) => Some((a as usize, b as usize)),
        _ => None,
    };
    let bool_of = |name: &str| matches!(get(name), Some(Field::Bool(true)));
    let metadata = Metadata {
        url: required("url")?,
        final_url: required("final_url")?,
        source,
        fetched_at: time("fetched_at")?,
        status: unsigned("status")?.map(|s| s as u16),
        content_type: string("content_type")?,
        charset: string("charset")?,
        title: string("title")?,
        html_title: string("html_title")?,
        article: crate::metadata::ArticleMeta {
            published: time("published")?,
            modified: time("modified")?,
            date_source: string("date_source")?,
            lang: string("lang")?,
            lang_confidence: double("lang_confidence")?,
            authors: strings("authors")?,
            description: string("description")?,
            site_name: string("site_name")?,
            canonical_url: string("canonical_url")?,
            image: string("image")?,
            categories: strings("categories")?,
            keywords: strings("keywords")?,
        },
        feed: json("feed")?.map(|v| serde_json::from_value(v).map_err(|e| format!("column feed: {e}"))).transpose()?,
        extraction: ExtractionInfo {
            scorer: required("scorer")?,
            model: string("model")?,
            span,
            score: double("score")?.unwrap_or(0.0),
            tokens: unsigned("tokens")?.unwrap_or(0) as usize,
            site_memory: bool_of("site_memory"),
        },
        fingerprints: Fingerprints {
            exact: unsigned("fingerprint_exact")?.unwrap_or(0),
            simhash: unsigned("fingerprint_simhash")?.unwrap_or(0),
            minhash: integers("fingerprint_minhash")?.into_iter().map(|v| v as u32).collect(),
            bands: integers("fingerprint_bands")?,
        },
        near_duplicate_of: string("near_duplicate_of")?,
        structure: json("structure")?
            .map(|v| serde_json::from_value(v).map_err(|e| format!("column structure: {e}")))
            .transpose()?,
    };
    Ok(Record { id: required("id")?, text: required("text")?, metadata })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_schema_parses_and_names_one_leaf_per_top_level_field() {
        let s = schema();
        let names: Vec<&str> = s.get_fields().iter().map(|f| f.name()).collect();
        let descr = parquet::schema::types::SchemaDescriptor::new(s.clone());
        let leaves: Vec<&str> = descr.columns().iter().map(|l| l.path().parts()[0].as_str()).collect();
        assert_eq!(names, leaves);
        assert_eq!(names.len(), 40);
        // Every string column is a field of the schema.
        for n in STRINGS {
            assert!(s.get_fields().iter().any(|f| f.name() == *n), "{n}");
        }
    }

    #[test]
    fn the_documented_schema_is_the_written_one() {
        assert_eq!(include_str!("../../schema/record.parquet.txt").trim_end(), SCHEMA);
    }

    #[test]
    fn dates_become_utc_milliseconds() {
        assert_eq!(timestamp_millis("1970-01-01T00:00:01Z"), Some(1000));
        assert_eq!(timestamp_millis("1970-01-01T01:00:01+01:00"), Some(1000));
        assert_eq!(timestamp_millis("1970-01-02"), Some(86_400_000));
        assert_eq!(timestamp_millis("1970-01-01T00:00:02"), Some(2000));
        assert_eq!(timestamp_millis("yesterday"), None);
        assert_eq!(rfc3339(1000).as_deref(), Some("1970-01-01T00:00:01Z"));
    }
}
