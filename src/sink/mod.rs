//! The output of a run: numbered parts (`OUT/part-00000.jsonl.zst`, …) rotated by size, in
//! one of two formats ([`Format`]): JSON Lines compressed with zstd (the default), or Parquet
//! ([`parquet`]).
//!
//! A part is written under a temporary name (`.part-00000.jsonl.zst.tmp`) and renamed only
//! after its zstd frame (or Parquet footer) is finished and the file fsynced, then the folder
//! is fsynced: a file named `part-*.jsonl.zst` or `part-*.parquet` is always complete, whatever
//! happens to the process. Temporary parts left by a crash are removed when a sink opens the
//! folder again.

pub mod parquet;
pub mod record;

use std::fs::{self, File};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

pub use record::Record;

/// The format of the parts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    /// JSON Lines compressed with zstd (`part-00000.jsonl.zst`), shaped like datatrove's and
    /// dolma's documents.
    #[default]
    Jsonl,
    /// Parquet with zstd-compressed row groups (`part-00000.parquet`), typed columns
    /// ([`parquet`]).
    Parquet,
}

impl Format {
    /// The file name extension of its parts.
    pub fn extension(self) -> &'static str {
        match self {
            Format::Jsonl => "jsonl.zst",
            Format::Parquet => "parquet",
        }
    }
}

/// Where and how parts are written.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SinkOptions {
    /// A part is closed once this many compressed bytes were written to it (default 256 MiB).
    pub part_bytes: u64,
    /// zstd level (1..=19; default 3).
    pub zstd_level: i32,
    /// The format of the parts (default `jsonl`).
    pub format: Format,
}

impl Default for SinkOptions {
    fn default() -> Self {
        SinkOptions { part_bytes: 256 << 20, zstd_level: 3, format: Format::Jsonl }
    }
}

impl SinkOptions {
    pub fn validate(&self) -> Vec<String> {
        let mut problems = Vec::new();
        if self.part_bytes < 4096 {
            problems.push(format!("sink.part_bytes must be at least 4096, not {}", self.part_bytes));
        }
        if !(1..=19).contains(&self.zstd_level) {
            problems.push(format!("sink.zstd_level must be 1..=19, not {}", self.zstd_level));
        }
        problems
    }
}

/// A failure of the output folder: the run cannot go on without it.
#[derive(Debug, thiserror::Error)]
#[error("{path}: {source}")]
pub struct SinkError {
    pub path: PathBuf,
    #[source]
    pub source: io::Error,
}

fn at(path: &Path) -> impl FnOnce(io::Error) -> SinkError + '_ {
    move |source| SinkError { path: path.to_path_buf(), source }
}

/// Counts bytes on their way to the file so rotation can follow compressed size.
struct Counting<W> {
    inner: W,
    written: u64,
}

impl<W: Write> Write for Counting<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.written += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

/// The writer of an open part.
enum PartWriter {
    Jsonl(zstd::Encoder<'static, Counting<BufWriter<File>>>),
    Parquet(Box<parquet::ParquetPart>),
}

struct OpenPart {
    index: u32,
    tmp: PathBuf,
    writer: PartWriter,
    records: u64,
}

/// Writes records into rotating parts of the chosen [`Format`].
pub struct PartSink {
    dir: PathBuf,
    options: SinkOptions,
    next_index: u32,
    part: Option<OpenPart>,
    line: Vec<u8>,
}

/// A part that was closed and is now durable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommittedPart {
    pub path: PathBuf,
    pub index: u32,
    pub records: u64,
}

impl PartSink {
    /// Opens `dir` (created if needed), removes temporary parts left by an earlier crash and
    /// continues numbering after the last complete part.
    pub fn open(dir: &Path, options: SinkOptions) -> Result<Self, SinkError> {
        fs::create_dir_all(dir).map_err(at(dir))?;
        let mut next_index = 0;
        for entry in fs::read_dir(dir).map_err(at(dir))? {
            let entry = entry.map_err(at(dir))?;
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.starts_with(".part-") && name.ends_with(".tmp") {
                fs::remove_file(entry.path()).map_err(at(&entry.path()))?;
            } else if let Some(i) = part_index(&name) {
                next_index = next_index.max(i + 1);
            }
        }
        Ok(PartSink { dir: dir.to_path_buf(), options, next_index, part: None, line: Vec::with_capacity(1 << 16) })
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Numbers the next part `first` at least: a run whose state names parts that are no
    /// longer in the folder (read and deleted by a consumer) never gives their names to new
    /// ones, which a consumer tracking the names it has read would skip.
    pub fn number_from(&mut self, first: u32) {
        self.next_index = self.next_index.max(first);
    }

    /// Writes one record; returns true when the open part reached its size and should be
    /// committed ([`PartSink::commit`]).
    pub fn write(&mut self, record: &Record) -> Result<bool, SinkError> {
        if self.part.is_none() {
            self.part = Some(self.start_part()?);
        }
        let part = self.part.as_mut().expect("opened above");
        let size = match &mut part.writer {
            PartWriter::Jsonl(encoder) => {
                self.line.clear();
                serde_json::to_writer(&mut self.line, record)
                    .map_err(|e| SinkError { path: self.dir.clone(), source: io::Error::other(e) })?;
                self.line.push(b'\n');
                encoder.write_all(&self.line).map_err(at(&part.tmp))?;
                encoder.get_ref().written
            }
            PartWriter::Parquet(p) => {
                p.write(record).map_err(at(&part.tmp))?;
                p.size()
            }
        };
        part.records += 1;
        Ok(size >= self.options.part_bytes)
    }

    /// Index of the open part (the name it will have when committed), if one is open.
    pub fn open_part(&self) -> Option<u32> {
        self.part.as_ref().map(|p| p.index)
    }

    /// Closes the open part, if any, making it durable.
    pub fn flush_part(&mut self) -> Result<Option<CommittedPart>, SinkError> {
        if self.part.is_some() { self.commit().map(Some) } else { Ok(None) }
    }

    fn start_part(&mut self) -> Result<OpenPart, SinkError> {
        let index = self.next_index;
        self.next_index += 1;
        let tmp = self.dir.join(format!(".part-{index:05}.{}.tmp", self.options.format.extension()));
        let writer = match self.options.format {
            Format::Jsonl => {
                let file = File::create(&tmp).map_err(at(&tmp))?;
                let counting = Counting { inner: BufWriter::with_capacity(1 << 20, file), written: 0 };
                PartWriter::Jsonl(zstd::Encoder::new(counting, self.options.zstd_level).map_err(at(&tmp))?)
            }
            Format::Parquet => PartWriter::Parquet(Box::new(
                parquet::ParquetPart::create(&tmp, self.options.zstd_level).map_err(at(&tmp))?,
            )),
        };
        Ok(OpenPart { index, tmp, writer, records: 0 })
    }

    /// Finishes, fsyncs and renames the open part (which must exist).
    pub fn commit(&mut self) -> Result<CommittedPart, SinkError> {
        let part = self.part.take().expect("commit needs an open part");
        let file = match part.writer {
            PartWriter::Jsonl(encoder) => {
                let counting = encoder.finish().map_err(at(&part.tmp))?;
                counting.inner.into_inner().map_err(|e| SinkError { path: part.tmp.clone(), source: e.into_error() })?
            }
            PartWriter::Parquet(p) => p.finish().map_err(at(&part.tmp))?,
        };
        file.sync_all().map_err(at(&part.tmp))?;
        drop(file);
        let path = self.dir.join(format!("part-{:05}.{}", part.index, self.options.format.extension()));
        fs::rename(&part.tmp, &path).map_err(at(&path))?;
        sync_dir(&self.dir)?;
        Ok(CommittedPart { path, index: part.index, records: part.records })
    }
}

/// Fsyncs a folder so a rename in it is durable (a no-op where folders cannot be opened).
pub fn sync_dir(dir: &Path) -> Result<(), SinkError> {
    match File::open(dir) {
        Ok(f) => match f.sync_all() {
            Ok(()) => Ok(()),
            // Some platforms refuse fsync on a folder; the rename is then as durable as it gets.
            Err(e) if e.kind() == io::ErrorKind::InvalidInput || e.kind() == io::ErrorKind::PermissionDenied => Ok(()),
            Err(e) => Err(SinkError { path: dir.to_path_buf(), source: e }),
        },
        Err(_) => Ok(()),
    }
}

/// Writes `bytes` to `path` atomically (temporary file, fsync, rename, folder fsync).
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), SinkError> {
    let tmp = path.with_extension("tmp");
    {
        let mut f = File::create(&tmp).map_err(at(&tmp))?;
        f.write_all(bytes).map_err(at(&tmp))?;
        f.sync_all().map_err(at(&tmp))?;
    }
    fs::rename(&tmp, path).map_err(at(path))?;
    if let Some(dir) = path.parent() {
        sync_dir(if dir.as_os_str().is_empty() { Path::new(".") } else { dir })?;
    }
    Ok(())
}

/// `part-00012.jsonl.zst` (or `part-00012.parquet`) → 12.
pub fn part_index(name: &str) -> Option<u32> {
    let rest = name.strip_prefix("part-")?;
    rest.strip_suffix(".jsonl.zst").or_else(|| rest.strip_suffix(".parquet"))?.parse().ok()
}

/// Is part `index` in `dir`, in either format?
pub fn part_exists(dir: &Path, index: u32) -> bool {
    [Format::Jsonl, Format::Parquet].iter().any(|f| dir.join(format!("part-{index:05}.{}", f.extension())).exists())
}

/// Is this part a Parquet one (by its name)?
pub fn is_parquet(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "parquet")
}

/// The complete parts of a folder, in order.
pub fn list_parts(dir: &Path) -> io::Result<Vec<PathBuf>> {
    let mut parts: Vec<(u32, PathBuf)> = Vec::new();
    for entry in fs::read_dir(dir)? {
        let entry = entry?;
        if let Some(i) = part_index(&entry.file_name().to_string_lossy()) {
            parts.push((i, entry.path()));
        }
    }
    parts.sort();
    Ok(parts.into_iter().map(|(_, p)| p).collect())
}

/// Reads every record of a part, as the JSON of a `.jsonl.zst` line (for tests, resume,
/// `pipeline dedup` and users' checks); a Parquet part's dates come back in UTC.
pub fn read_part(path: &Path) -> io::Result<Vec<serde_json::Value>> {
    use std::io::BufRead;
    if is_parquet(path) {
        // The parquet crate reads a damaged file into an error (a proptest below flips and cuts
        // parts); should a file it was not tested on make it panic, the part is still one error
        // naming it, and the run goes on.
        return std::panic::catch_unwind(|| parquet::read_part(path)).unwrap_or_else(|_| {
            Err(io::Error::new(io::ErrorKind::InvalidData, "unreadable Parquet part (the reader panicked)"))
        });
    }
    let decoder = zstd::Decoder::new(File::open(path)?)?;
    let mut out = Vec::new();
    for line in io::BufReader::new(decoder).lines() {
        let line = line?;
        out.push(serde_json::from_str(&line).map_err(io::Error::other)?);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A record with id `id` and text `text` (the other fields minimal).
    fn rec(id: &str, text: &str) -> Record {
        serde_json::from_value(json!({
            "id": id, "text": text,
            "metadata": {
                "url": "http://x.test/", "final_url": "http://x.test/",
                "source": {"kind": "warc", "file": "in.warc.gz", "offset": 7},
                "extraction": {"scorer": "nb", "model": null, "span": [1, 2], "score": 1.5, "tokens": 9},
                "fingerprints": {"exact": "00000000000000ff", "simhash": "ffffffffffffffff", "minhash": [1_u32, u32::MAX], "bands": ["0000000000000001"]},
                "near_duplicate_of": null,
            }
        }))
        .unwrap()
    }

    #[test]
    fn parts_rotate_and_only_complete_parts_are_visible() {
        for format in [Format::Jsonl, Format::Parquet] {
            let dir = tempfile::tempdir().unwrap();
            let mut sink = PartSink::open(dir.path(), SinkOptions { part_bytes: 4096, zstd_level: 3, format }).unwrap();
            let mut committed = Vec::new();
            for i in 0..3000 {
                // Incompressible-ish text so parts fill.
                let text: String = (0..20).map(|j| format!("{:x}", (i * 7919 + j * 104729) % 65521)).collect();
                if sink.write(&rec(&i.to_string(), &text)).unwrap() {
                    committed.push(sink.commit().unwrap());
                }
            }
            // While a part is open, a temporary file exists and no partial part is listed.
            let listed = list_parts(dir.path()).unwrap();
            assert_eq!(listed.len(), committed.len());
            sink.flush_part().unwrap();
            let parts = list_parts(dir.path()).unwrap();
            assert!(parts.len() >= 3, "{format:?}: {}", parts.len());
            assert!(parts.iter().all(|p| p.to_string_lossy().ends_with(format.extension())));
            let mut ids = Vec::new();
            for p in &parts {
                for v in read_part(p).unwrap() {
                    ids.push(v["id"].as_str().unwrap().parse::<u64>().unwrap());
                }
            }
            assert_eq!(ids, (0..3000).collect::<Vec<_>>(), "{format:?}");
            assert!(
                !fs::read_dir(dir.path()).unwrap().any(|e| e.unwrap().file_name().to_string_lossy().ends_with(".tmp"))
            );
        }
    }

    #[test]
    fn a_parquet_part_gives_back_the_record() {
        let dir = tempfile::tempdir().unwrap();
        let options = SinkOptions { format: Format::Parquet, ..SinkOptions::default() };
        let mut sink = PartSink::open(dir.path(), options).unwrap();
        let mut r = rec("a", "Some text.");
        r.metadata.article.authors = vec!["Ann Lee".into(), "Bo Chan".into()];
        r.metadata.article.published = Some("2026-11-24T08:30:00Z".into());
        r.metadata.status = Some(200);
        sink.write(&r).unwrap();
        sink.write(&rec("b", "")).unwrap();
        let c = sink.flush_part().unwrap().unwrap();
        assert!(c.path.ends_with("part-00000.parquet"));
        let back = read_part(&c.path).unwrap();
        assert_eq!(back, vec![serde_json::to_value(&r).unwrap(), serde_json::to_value(rec("b", "")).unwrap()]);
        assert!(part_exists(dir.path(), 0) && !part_exists(dir.path(), 1));
    }

    #[test]
    fn reopening_removes_temporary_parts_and_continues_numbering() {
        let dir = tempfile::tempdir().unwrap();
        {
            let mut sink = PartSink::open(dir.path(), SinkOptions::default()).unwrap();
            sink.write(&rec("1", "")).unwrap();
            sink.flush_part().unwrap();
            sink.write(&rec("2", "")).unwrap();
            // Dropped without flushing: as if the process died.
        }
        let options = SinkOptions { format: Format::Parquet, ..SinkOptions::default() };
        let mut sink = PartSink::open(dir.path(), options).unwrap();
        assert_eq!(list_parts(dir.path()).unwrap().len(), 1);
        sink.write(&rec("3", "")).unwrap();
        let c = sink.flush_part().unwrap().unwrap();
        // Numbering goes on across formats.
        assert!(c.path.ends_with("part-00001.parquet"));
        assert_eq!(read_part(&c.path).unwrap(), vec![serde_json::to_value(rec("3", "")).unwrap()]);
    }

    mod damaged {
        use super::*;
        use proptest::prelude::*;

        /// A valid Parquet part of a few records, made once.
        fn valid_part() -> Vec<u8> {
            let dir = tempfile::tempdir().unwrap();
            let options = SinkOptions { format: Format::Parquet, ..SinkOptions::default() };
            let mut sink = PartSink::open(dir.path(), options).unwrap();
            for i in 0..20 {
                let mut r = rec(&i.to_string(), &"word ".repeat(i));
                r.metadata.article.authors = vec![format!("Author {i}")];
                sink.write(&r).unwrap();
            }
            let c = sink.flush_part().unwrap().unwrap();
            fs::read(c.path).unwrap()
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(200))]

            /// `pipeline dedup` and resume read parts a user names: a damaged or foreign
            /// `.parquet` file is an error, never a panic.
            #[test]
            fn damaged_parquet_parts_are_errors_not_panics(
                flips in proptest::collection::vec((any::<usize>(), any::<u8>()), 0..8),
                cut in any::<usize>(),
            ) {
                let mut bytes = valid_part();
                for (at, b) in flips {
                    let n = bytes.len();
                    bytes[at % n] ^= b;
                }
                let keep = bytes.len() - cut % (bytes.len() / 4);
                bytes.truncate(keep);
                let dir = tempfile::tempdir().unwrap();
                let path = dir.path().join("part-00000.parquet");
                fs::write(&path, &bytes).unwrap();
                // The crate's reader itself, not `read_part`'s panic guard: a panic fails the test.
                let _ = parquet::read_part(&path);
            }
        }
    }
}
