//! Reading WARC files (`.warc`, and `.warc.gz` made of gzip members, one per record as the
//! standard recommends, or one member for the whole file), and the Internet Archive's ARC
//! files (`.arc`, `.arc.gz`, version 1 and 2), recognised by their first line
//! (`filedesc://…`). An ARC record (a line `URL IP-address Archive-date Content-type
//! [… v2 fields] Archive-length`, then that many bytes) is handed out as the WARC record it
//! would be (`response` for an HTTP URL, with `WARC-Target-URI`, `WARC-Date` and an
//! `application/http` block), so everything downstream, offsets and resume included, is the
//! same for both formats.
//!
//! A hand-written reader rather than the `warc` crate: it must report each record's byte
//! offset (of its gzip member, as CDX indexes do), stream record blocks with a cap, and
//! recover from damage: a gzip member that fails to decode is reported with its offset and
//! reading resumes at the next gzip member header; a plain file resumes at the next line
//! starting with `WARC/1.`; a record cut short by the end of the file is reported and ends
//! the file. Memory is bounded by the header cap plus the block cap whatever the input.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

/// Caps on what one record may hold in memory.
#[derive(Debug, Clone, Copy)]
pub struct WarcLimits {
    /// Bytes of WARC headers per record.
    pub max_header_bytes: usize,
    /// Bytes of a kept record block; a longer block is skipped and flagged.
    pub max_block_bytes: usize,
}

impl Default for WarcLimits {
    fn default() -> Self {
        WarcLimits { max_header_bytes: 64 << 10, max_block_bytes: 32 << 20 }
    }
}

/// One WARC record.
#[derive(Debug, Clone, Default)]
pub struct WarcRecord {
    /// Byte offset of the record in the file (of its gzip member in a compressed file).
    pub offset: u64,
    /// WARC/1.0, WARC/1.1, …
    pub version: String,
    pub headers: Vec<(String, String)>,
    /// Declared block length.
    pub content_length: u64,
    /// The block, when the caller kept this record and it fits the cap.
    pub block: Vec<u8>,
    /// The block was longer than the cap and was skipped.
    pub block_too_large: bool,
}

impl WarcRecord {
    pub fn header(&self, name: &str) -> Option<&str> {
        super::http::header(&self.headers, name)
    }

    /// `WARC-Type`, lower-cased (`response`, `request`, `revisit`, …).
    pub fn warc_type(&self) -> String {
        self.header("WARC-Type").unwrap_or("").to_ascii_lowercase()
    }
}

/// What went wrong with a record or a file.
#[derive(Debug, thiserror::Error)]
pub enum WarcError {
    #[error("{}: cannot read: {source}", path.display())]
    Open { path: PathBuf, source: io::Error },
    #[error("{}: record at byte {offset}: {problem}", path.display())]
    Record { path: PathBuf, offset: u64, problem: RecordProblem },
}

impl WarcError {
    /// A short stable reason for counting.
    pub fn reason(&self) -> &'static str {
        match self {
            WarcError::Open { .. } => "warc_unreadable",
            WarcError::Record { problem, .. } => match problem {
                RecordProblem::Truncated => "warc_truncated",
                RecordProblem::Gzip(_) => "warc_corrupt_gzip",
                RecordProblem::Header(_) => "warc_bad_header",
                RecordProblem::Io(_) => "warc_io",
            },
        }
    }

    /// Does this error end the file early (nothing after it is read), so the file must be read
    /// again, rather than being one damaged record the reader stepped over?
    pub fn ends_file(&self) -> bool {
        ends_file(self.reason())
    }
}

/// [`WarcError::ends_file`] for a counted reason (what a source event carries): the file could
/// not be opened, was cut short, or a read failed.
pub fn ends_file(reason: &str) -> bool {
    matches!(reason, "warc_unreadable" | "warc_truncated" | "warc_io")
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RecordProblem {
    #[error("truncated (the file ends inside it)")]
    Truncated,
    #[error("corrupt gzip member: {0}")]
    Gzip(String),
    #[error("malformed WARC header: {0}")]
    Header(String),
    #[error("{0}")]
    Io(String),
}

/// Error payload of a gzip member that failed to decode.
#[derive(Debug)]
struct MemberError {
    offset: u64,
    truncated: bool,
    message: String,
}

impl std::fmt::Display for MemberError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "gzip member at {}: {}", self.offset, self.message)
    }
}

impl std::error::Error for MemberError {}

/// Counts bytes read from the file.
struct Counting<R> {
    inner: R,
    count: u64,
}

impl<R: Read> Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.count += n as u64;
        Ok(n)
    }
}

type Raw = BufReader<Counting<Box<dyn Read + Send>>>;

fn position(r: &Raw) -> u64 {
    r.get_ref().count - r.buffer().len() as u64
}

enum GzState {
    Between(Raw),
    In { dec: Box<flate2::bufread::GzDecoder<Raw>>, start: u64 },
    Done,
}

/// Decompressed bytes of a sequence of gzip members. Every `read` returns bytes of a single
/// member, so a buffer filled by one `read` belongs to one member ([`GzMembers::member`]).
struct GzMembers {
    state: GzState,
    member: u64,
    /// Suppresses repeated errors while searching for the next good member.
    resyncing: bool,
}

const GZ_MAGIC: [u8; 3] = [0x1f, 0x8b, 0x08];

impl GzMembers {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            match std::mem::replace(&mut self.state, GzState::Done) {
                GzState::Done => return Ok(0),
                GzState::Between(mut r) => {
                    let head = r.fill_buf()?;
                    if head.is_empty() {
                        return Ok(0);
                    }
                    if !head.starts_with(&GZ_MAGIC[..head.len().min(3)]) {
                        // Bytes between members that are not a member: skip to the next one.
                        let offset = position(&r);
                        let first = !self.resyncing;
                        self.resync(r)?;
                        if first {
                            return Err(member_error(offset, false, "bytes that are not a gzip member".into()));
                        }
                        continue;
                    }
                    let start = position(&r);
                    self.state = GzState::In { dec: Box::new(flate2::bufread::GzDecoder::new(r)), start };
                }
                GzState::In { mut dec, start } => match dec.read(buf) {
                    Ok(0) => self.state = GzState::Between(dec.into_inner()),
                    Ok(n) => {
                        self.member = start;
                        self.resyncing = false;
                        self.state = GzState::In { dec, start };
                        return Ok(n);
                    }
                    Err(e) => {
                        let mut r = dec.into_inner();
                        let at_eof = r.fill_buf().map(|b| b.is_empty()).unwrap_or(true);
                        // A trailer whose CRC or length does not match comes after the whole
                        // member decoded: that is damage, not a file cut short. flate2 names it
                        // only by its message.
                        let trailer = e.to_string().contains("does not have a matching checksum");
                        let truncated = e.kind() == io::ErrorKind::UnexpectedEof || (at_eof && !trailer);
                        if position(&r) == start && !at_eof {
                            r.consume(1);
                        }
                        let first = !self.resyncing;
                        if trailer {
                            // The trailer was read whole: the next member starts right here.
                            self.state = GzState::Between(r);
                        } else {
                            self.resync(r)?;
                        }
                        if first {
                            return Err(member_error(start, truncated, e.to_string()));
                        }
                    }
                },
            }
        }
    }

    /// Skips to the next gzip member header (or the end of the file).
    fn resync(&mut self, mut r: Raw) -> io::Result<()> {
        self.resyncing = true;
        loop {
            let buf = r.fill_buf()?;
            if buf.is_empty() {
                self.state = GzState::Done;
                return Ok(());
            }
            // A candidate at the buffer's end is accepted on its first byte; a false one just
            // fails to decode and the search goes on from the next byte.
            let skip = match memchr::memchr(GZ_MAGIC[0], &buf[1.min(buf.len())..]) {
                Some(i) => {
                    let i = i + 1;
                    let rest = &buf[i..];
                    if rest.starts_with(&GZ_MAGIC[..rest.len().min(3)]) {
                        r.consume(i);
                        self.state = GzState::Between(r);
                        return Ok(());
                    }
                    i
                }
                None => buf.len(),
            };
            r.consume(skip);
        }
    }
}

fn member_error(offset: u64, truncated: bool, message: String) -> io::Error {
    io::Error::other(MemberError { offset, truncated, message })
}

enum Decompressed {
    Plain(Raw),
    Gz(GzMembers),
}

/// Buffered decompressed input that knows the file offset of what it holds.
struct Input {
    src: Decompressed,
    buf: Vec<u8>,
    pos: usize,
    len: usize,
    /// Plain files: file offset of `buf[0]`.
    base: u64,
    /// An error met while looking past the end of a record into the next gzip member: it is
    /// that member's, handed out by the next read, not the record's (see `finish_member`).
    deferred: Option<io::Error>,
}

impl Input {
    fn fill(&mut self) -> io::Result<bool> {
        if self.pos < self.len {
            return Ok(true);
        }
        if let Some(e) = self.deferred.take() {
            return Err(e);
        }
        let n = match &mut self.src {
            Decompressed::Plain(r) => {
                self.base = position(r);
                r.read(&mut self.buf)?
            }
            Decompressed::Gz(g) => g.read(&mut self.buf)?,
        };
        self.pos = 0;
        self.len = n;
        Ok(n > 0)
    }

    /// Offset of the next unread byte's record: the file offset (plain) or the offset of the
    /// gzip member it came from.
    fn offset(&mut self) -> io::Result<u64> {
        self.fill()?;
        Ok(match &self.src {
            Decompressed::Plain(_) => self.base + self.pos as u64,
            Decompressed::Gz(g) => g.member,
        })
    }

    /// Reads a line (without its terminator) into `out`, up to `max` bytes (the rest of a
    /// longer line is dropped). Returns false at the end of the input.
    fn read_line(&mut self, out: &mut Vec<u8>, max: usize) -> io::Result<bool> {
        out.clear();
        let mut any = false;
        loop {
            if !self.fill()? {
                return Ok(any);
            }
            any = true;
            let avail = &self.buf[self.pos..self.len];
            match memchr::memchr(b'\n', avail) {
                Some(i) => {
                    let take = i.min(max.saturating_sub(out.len()));
                    out.extend_from_slice(&avail[..take]);
                    self.pos += i + 1;
                    if out.last() == Some(&b'\r') {
                        out.pop();
                    }
                    return Ok(true);
                }
                None => {
                    let take = avail.len().min(max.saturating_sub(out.len()));
                    out.extend_from_slice(&avail[..take]);
                    self.pos = self.len;
                }
            }
        }
    }

    /// Gzip input: reads past the blank lines that end a record up to the next non-blank byte
    /// or the next member, so that the member's trailer (CRC and length) is checked before the
    /// record it holds is handed out. A damaged trailer is then this record's error, and the
    /// record is counted once, as failed, instead of written and then failed again.
    fn finish_member(&mut self) -> io::Result<()> {
        let Decompressed::Gz(g) = &self.src else { return Ok(()) };
        let member = g.member;
        loop {
            while self.pos < self.len && self.buf[self.pos].is_ascii_whitespace() {
                self.pos += 1;
            }
            if self.pos < self.len {
                return Ok(());
            }
            match self.fill() {
                Ok(false) => return Ok(()),
                Ok(true) => {}
                // The next member is damaged or cut short: this record is whole (its member
                // ended), the error is the next record's, handed out by the next read.
                Err(e)
                    if e.get_ref()
                        .and_then(|i| i.downcast_ref::<MemberError>())
                        .is_some_and(|m| m.offset != member) =>
                {
                    self.deferred = Some(e);
                    return Ok(());
                }
                Err(e) => return Err(e),
            }
            if matches!(&self.src, Decompressed::Gz(g) if g.member != member) {
                return Ok(());
            }
        }
    }

    /// Reads `n` bytes, appending them to `keep` if given. Returns how many arrived.
    fn read_block(&mut self, n: u64, mut keep: Option<&mut Vec<u8>>) -> io::Result<u64> {
        let mut left = n;
        while left > 0 {
            if !self.fill()? {
                break;
            }
            let take = (self.len - self.pos).min(usize::try_from(left).unwrap_or(usize::MAX));
            if let Some(k) = keep.as_deref_mut() {
                k.extend_from_slice(&self.buf[self.pos..self.pos + take]);
            }
            self.pos += take;
            left -= take as u64;
        }
        Ok(n - left)
    }
}

/// Iterates over the records of one WARC file. Yields errors for damaged records and goes
/// on where the format allows; ends after a truncated record or an I/O error.
pub struct WarcReader {
    path: PathBuf,
    input: Input,
    limits: WarcLimits,
    keep: Box<dyn Fn(&WarcRecord) -> bool + Send>,
    line: Vec<u8>,
    /// A version line found after damaged bytes, read on the next call.
    pending_version: Option<(u64, String)>,
    /// The file is an ARC file (decided by its first line; `None` before it is read).
    arc: Option<bool>,
    /// An ARC record line found after damaged bytes, read on the next call.
    pending_arc: Option<(u64, ArcHead)>,
    done: bool,
}

impl WarcReader {
    /// Opens `path` (`.gz` by magic bytes, not by name). `keep` decides, from the headers,
    /// whether a record's block is read into memory (other blocks are skipped).
    pub fn open(
        path: &Path,
        limits: WarcLimits,
        keep: impl Fn(&WarcRecord) -> bool + Send + 'static,
    ) -> Result<Self, WarcError> {
        let file = File::open(path).map_err(|source| WarcError::Open { path: path.to_path_buf(), source })?;
        Self::from_reader(path, Box::new(file), limits, keep)
            .map_err(|source| WarcError::Open { path: path.to_path_buf(), source })
    }

    /// Reads from any byte source; `name` is used in errors.
    pub fn from_reader(
        name: &Path,
        reader: Box<dyn Read + Send>,
        limits: WarcLimits,
        keep: impl Fn(&WarcRecord) -> bool + Send + 'static,
    ) -> io::Result<Self> {
        let mut raw: Raw = BufReader::with_capacity(1 << 18, Counting { inner: reader, count: 0 });
        let gz = raw.fill_buf()?.starts_with(&GZ_MAGIC[..2]);
        let src = if gz {
            Decompressed::Gz(GzMembers { state: GzState::Between(raw), member: 0, resyncing: false })
        } else {
            Decompressed::Plain(raw)
        };
        Ok(WarcReader {
            path: name.to_path_buf(),
            input: Input { src, buf: vec![0; 1 << 18], pos: 0, len: 0, base: 0, deferred: None },
            limits,
            keep: Box::new(keep),
            line: Vec::with_capacity(256),
            pending_version: None,
            arc: None,
            pending_arc: None,
            done: false,
        })
    }

    fn err(&self, offset: u64, problem: RecordProblem) -> WarcError {
        WarcError::Record { path: self.path.clone(), offset, problem }
    }

    /// Turns an I/O error of the decompressed stream into a record error.
    fn io_err(&mut self, offset: u64, e: io::Error) -> WarcError {
        if let Some(m) = e.get_ref().and_then(|inner| inner.downcast_ref::<MemberError>()) {
            if m.truncated {
                self.done = true;
                return self.err(m.offset, RecordProblem::Truncated);
            }
            // The stream has moved on to the next member; drop what was buffered.
            self.input.pos = self.input.len;
            return self.err(m.offset, RecordProblem::Gzip(m.message.clone()));
        }
        self.done = true;
        self.err(offset, RecordProblem::Io(e.to_string()))
    }

    fn next_record(&mut self) -> Option<Result<WarcRecord, WarcError>> {
        // Find the version line, skipping blank lines (and, after damage, anything else).
        let mut offset;
        let mut skipped_garbage = None;
        loop {
            offset = match self.input.offset() {
                Ok(o) => o,
                Err(e) => return Some(Err(self.io_err(0, e))),
            };
            // An ARC record line holds a URL: room for long ones, still bounded.
            match self.input.read_line(&mut self.line, MAX_RECORD_LINE) {
                Ok(false) => {
                    self.done = true;
                    return skipped_garbage
                        .map(|o| Err(self.err(o, RecordProblem::Header("no WARC record here".into()))));
                }
                Ok(true) => {}
                Err(e) => return Some(Err(self.io_err(offset, e))),
            }
            if self.arc.is_none() && !self.line.iter().all(u8::is_ascii_whitespace) {
                self.arc = Some(self.line.starts_with(b"filedesc://"));
            }
            if self.arc == Some(true) {
                if let Some(head) = ArcHead::parse(&self.line) {
                    if let Some(o) = skipped_garbage {
                        self.pending_arc = Some((offset, head));
                        return Some(
                            Err(self.err(o, RecordProblem::Header("bytes that are not an ARC record".into()))),
                        );
                    }
                    return Some(self.read_arc(offset, head));
                }
            } else if self.line.starts_with(b"WARC/") {
                break;
            }
            if !self.line.iter().all(u8::is_ascii_whitespace) && skipped_garbage.is_none() {
                skipped_garbage = Some(offset);
            }
        }
        if let Some(o) = skipped_garbage {
            // Report the damage once; the record found after it is read on the next call.
            self.pending_version = Some((offset, String::from_utf8_lossy(&self.line).trim().to_string()));
            return Some(Err(self.err(o, RecordProblem::Header("bytes that are not a WARC record".into()))));
        }
        let version = String::from_utf8_lossy(&self.line).trim().to_string();
        Some(self.read_rest(offset, version))
    }

    fn read_rest(&mut self, offset: u64, version: String) -> Result<WarcRecord, WarcError> {
        let mut rec = WarcRecord { offset, version, ..WarcRecord::default() };
        let mut header_bytes = 0;
        // A malformed line does not end the headers: they are read to the blank line so that,
        // when Content-Length still parses, the block is skipped whole. Returning at the bad
        // line would leave the block to the resynchronising search, which takes any line
        // starting `WARC/` inside the payload (an embedded record) for a real record.
        let mut bad_line: Option<String> = None;
        loop {
            match self.input.read_line(&mut self.line, self.limits.max_header_bytes) {
                Ok(true) => {}
                Ok(false) => {
                    self.done = true;
                    return Err(self.err(offset, RecordProblem::Truncated));
                }
                Err(e) => return Err(self.io_err(offset, e)),
            }
            if self.line.is_empty() {
                break;
            }
            header_bytes += self.line.len();
            if header_bytes > self.limits.max_header_bytes {
                return Err(self.err(offset, RecordProblem::Header("headers too long".into())));
            }
            let line = String::from_utf8_lossy(&self.line);
            if line.starts_with([' ', '\t']) {
                // Folded continuation line.
                if let Some(last) = rec.headers.last_mut() {
                    last.1.push(' ');
                    last.1.push_str(line.trim());
                }
                continue;
            }
            let Some((k, v)) = line.split_once(':') else {
                if bad_line.is_none() {
                    bad_line = Some(format!("not a header line: {:.60}", line));
                }
                continue;
            };
            rec.headers.push((k.trim().to_string(), v.trim().to_string()));
        }
        let Some(len) = rec.header("Content-Length") else {
            return Err(self.err(offset, RecordProblem::Header(bad_line.unwrap_or_else(|| "no Content-Length".into()))));
        };
        let Ok(len) = len.parse::<u64>() else {
            let problem = bad_line.unwrap_or_else(|| format!("bad Content-Length `{len}`"));
            return Err(self.err(offset, RecordProblem::Header(problem)));
        };
        rec.content_length = len;
        if let Some(problem) = bad_line {
            // The length is known: skip the block so the next record starts where it should.
            return match self.input.read_block(len, None) {
                Ok(got) if got < len => {
                    self.done = true;
                    Err(self.err(offset, RecordProblem::Truncated))
                }
                Ok(_) => Err(self.err(offset, RecordProblem::Header(problem))),
                Err(e) => Err(self.io_err(offset, e)),
            };
        }
        self.read_block_of(rec)
    }

    /// Reads the block of `rec` (its `content_length` bytes): into the record when the caller
    /// keeps it and it fits the cap, else skipped; then, in a gzip file, to the member's end.
    fn read_block_of(&mut self, mut rec: WarcRecord) -> Result<WarcRecord, WarcError> {
        let (offset, len) = (rec.offset, rec.content_length);
        let keep = (self.keep)(&rec);
        let fits = len <= self.limits.max_block_bytes as u64;
        rec.block_too_large = keep && !fits;
        let mut block = Vec::new();
        if keep && fits {
            block.reserve_exact(len as usize);
        }
        let got = match self.input.read_block(len, (keep && fits).then_some(&mut block)) {
            Ok(n) => n,
            Err(e) => return Err(self.io_err(offset, e)),
        };
        if got < len {
            self.done = true;
            return Err(self.err(offset, RecordProblem::Truncated));
        }
        if let Err(e) = self.input.finish_member() {
            return Err(self.io_err(offset, e));
        }
        rec.block = block;
        Ok(rec)
    }
}

impl WarcReader {
    /// Reads the block of an ARC record whose line was `head`, as a WARC record.
    fn read_arc(&mut self, offset: u64, head: ArcHead) -> Result<WarcRecord, WarcError> {
        let mut rec =
            WarcRecord { offset, version: "ARC".into(), content_length: head.length, ..WarcRecord::default() };
        let http = head.url.starts_with("http://") || head.url.starts_with("https://");
        let kind = if head.url.starts_with("filedesc:") {
            "warcinfo"
        } else if http {
            "response"
        } else {
            "resource"
        };
        let id = format!("arc:{:016x}", xxhash_rust::xxh3::xxh3_64(format!("{} {}", head.url, head.date).as_bytes()));
        rec.headers = vec![
            ("WARC-Type".into(), kind.into()),
            ("WARC-Target-URI".into(), head.url.clone()),
            ("WARC-Record-ID".into(), id),
            ("Content-Type".into(), if http { "application/http; msgtype=response".into() } else { head.mime.clone() }),
            ("Content-Length".into(), head.length.to_string()),
        ];
        if let Some(date) = head.iso_date() {
            rec.headers.push(("WARC-Date".into(), date));
        }
        if head.ip != "-" && !head.ip.is_empty() {
            rec.headers.push(("WARC-IP-Address".into(), head.ip.clone()));
        }
        self.read_block_of(rec)
    }
}

/// Bytes of a record's first line read (a WARC version line, an ARC record line with its URL).
const MAX_RECORD_LINE: usize = 8 << 10;

/// The line that opens an ARC record: `URL IP-address Archive-date Content-type Archive-length`
/// (version 1) or the ten fields of version 2 (`… Result-code Checksum Location Offset
/// Filename Archive-length`); the length is the last field either way.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ArcHead {
    url: String,
    ip: String,
    /// `YYYYMMDDhhmmss` (shorter forms are allowed by old files).
    date: String,
    mime: String,
    length: u64,
}

impl ArcHead {
    /// A record line, or None for anything else (damage, a block's text): five or ten fields,
    /// a date of 8 to 14 digits, a length that is a number.
    fn parse(line: &[u8]) -> Option<ArcHead> {
        let text = std::str::from_utf8(line).ok()?;
        let f: Vec<&str> = text.split_ascii_whitespace().collect();
        if f.len() != 5 && f.len() != 10 {
            return None;
        }
        let date = f[2];
        if !(8..=14).contains(&date.len()) || !date.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        if !f[0].contains(':') {
            return None;
        }
        let length = f[f.len() - 1].parse().ok()?;
        Some(ArcHead { url: f[0].into(), ip: f[1].into(), date: date.into(), mime: f[3].into(), length })
    }

    /// The date as RFC 3339 UTC (`1996-09-23T14:21:03Z`), missing parts as zeros.
    fn iso_date(&self) -> Option<String> {
        let d = format!("{:0<14}", self.date);
        let n = |r: std::ops::Range<usize>| d.get(r).and_then(|x| x.parse::<u32>().ok());
        let (y, mo, da, h, mi, se) = (n(0..4)?, n(4..6)?, n(6..8)?, n(8..10)?, n(10..12)?, n(12..14)?);
        chrono::NaiveDate::from_ymd_opt(y as i32, mo, da)?.and_hms_opt(h, mi, se)?;
        Some(format!("{y:04}-{mo:02}-{da:02}T{h:02}:{mi:02}:{se:02}Z"))
    }
}

impl Iterator for WarcReader {
    type Item = Result<WarcRecord, WarcError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        if let Some((offset, version)) = self.pending_version.take() {
            return Some(self.read_rest(offset, version));
        }
        if let Some((offset, head)) = self.pending_arc.take() {
            return Some(self.read_arc(offset, head));
        }
        self.next_record()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_errors_that_stop_the_reader_end_the_file() {
        let rec = |problem| WarcError::Record { path: "w".into(), offset: 0, problem };
        assert!(WarcError::Open { path: "w".into(), source: io::Error::other("x") }.ends_file());
        assert!(rec(RecordProblem::Truncated).ends_file());
        assert!(rec(RecordProblem::Io("x".into())).ends_file());
        assert!(!rec(RecordProblem::Gzip("x".into())).ends_file());
        assert!(!rec(RecordProblem::Header("x".into())).ends_file());
    }
    use crate::sources::warc_writer::{Exchange, WarcWriter};
    use proptest::prelude::*;
    use std::io::Write;

    fn response(i: usize) -> Vec<u8> {
        format!("HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n<html><p>page number {i} text</p></html>")
            .into_bytes()
    }

    /// A .warc.gz of a warcinfo record and `n` request/response pairs, plus the response offsets.
    fn gz_warc(dir: &Path, n: usize) -> (PathBuf, Vec<u64>) {
        let path = dir.join("t.warc.gz");
        let mut w = WarcWriter::create(&path, "test").unwrap();
        let mut offsets = Vec::new();
        for i in 0..n {
            let url = format!("http://example.com/{i}");
            let resp = response(i);
            let ex = Exchange {
                url: &url,
                date: "2026-01-01T00:00:00Z",
                request: b"GET / HTTP/1.1\r\n\r\n",
                response: &resp,
                ip: None,
            };
            offsets.push(w.write_exchange(&ex).unwrap().0);
        }
        w.finish().unwrap();
        (path, offsets)
    }

    fn read_all(bytes: Vec<u8>) -> Vec<Result<WarcRecord, WarcError>> {
        WarcReader::from_reader(Path::new("mem"), Box::new(io::Cursor::new(bytes)), WarcLimits::default(), |r| {
            r.warc_type() == "response"
        })
        .unwrap()
        .collect()
    }

    /// Offsets of the response records read without error.
    fn response_offsets(out: &[Result<WarcRecord, WarcError>]) -> Vec<u64> {
        out.iter().filter_map(|r| r.as_ref().ok()).filter(|r| r.warc_type() == "response").map(|r| r.offset).collect()
    }

    fn gunzip_all(bytes: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        flate2::read::MultiGzDecoder::new(bytes).read_to_end(&mut out).unwrap();
        out
    }

    #[test]
    fn gzip_and_plain_files_give_the_same_records_with_offsets() {
        let dir = tempfile::tempdir().unwrap();
        let (path, offsets) = gz_warc(dir.path(), 5);
        let gz = std::fs::read(&path).unwrap();
        let recs: Vec<WarcRecord> = read_all(gz.clone()).into_iter().map(Result::unwrap).collect();
        assert_eq!(recs.len(), 11); // warcinfo + 5 × (request, response)
        let responses: Vec<&WarcRecord> = recs.iter().filter(|r| r.warc_type() == "response").collect();
        assert_eq!(responses.iter().map(|r| r.offset).collect::<Vec<_>>(), offsets);
        assert_eq!(responses[3].block, response(3));
        assert!(recs.iter().filter(|r| r.warc_type() != "response").all(|r| r.block.is_empty()));
        // Each offset is where a gzip member starts.
        for &o in &offsets {
            assert_eq!(&gz[o as usize..o as usize + 2], &[0x1f, 0x8b]);
        }

        let plain = gunzip_all(&gz);
        let precs: Vec<WarcRecord> = read_all(plain.clone()).into_iter().map(Result::unwrap).collect();
        assert_eq!(precs.len(), 11);
        for r in precs.iter().filter(|r| r.warc_type() == "response") {
            assert!(plain[r.offset as usize..].starts_with(b"WARC/1.1\r\n"));
        }
        let bodies = |v: &[WarcRecord]| v.iter().map(|r| r.block.clone()).collect::<Vec<_>>();
        assert_eq!(bodies(&recs), bodies(&precs));
    }

    #[test]
    fn a_truncated_last_record_is_reported_and_ends_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let (path, offsets) = gz_warc(dir.path(), 4);
        let gz = std::fs::read(&path).unwrap();
        let cut = gz.len() - 30;
        let out = read_all(gz[..cut].to_vec());
        let ok = out.iter().filter(|r| r.as_ref().is_ok_and(|r| r.warc_type() == "response")).count();
        assert_eq!(ok, 3);
        let errs: Vec<&WarcError> = out.iter().filter_map(|r| r.as_ref().err()).collect();
        assert_eq!(errs.len(), 1);
        assert!(
            matches!(errs[0], WarcError::Record { offset, problem: RecordProblem::Truncated, .. } if *offset == offsets[3])
        );

        // The same in a plain file: the block is shorter than its Content-Length.
        let plain = gunzip_all(&gz);
        let out = read_all(plain[..plain.len() - 10].to_vec());
        assert_eq!(out.iter().filter(|r| r.as_ref().is_ok_and(|r| r.warc_type() == "response")).count(), 3);
        assert!(matches!(out.last().unwrap(), Err(WarcError::Record { problem: RecordProblem::Truncated, .. })));
    }

    #[test]
    fn a_corrupt_member_in_the_middle_is_skipped() {
        let dir = tempfile::tempdir().unwrap();
        let (path, offsets) = gz_warc(dir.path(), 6);
        let mut gz = std::fs::read(&path).unwrap();
        // Damage the deflate data of the third response.
        let o = offsets[2] as usize;
        for b in &mut gz[o + 20..o + 60] {
            *b ^= 0x5a;
        }
        let out = read_all(gz);
        assert_eq!(response_offsets(&out), [offsets[0], offsets[1], offsets[3], offsets[4], offsets[5]]);
        let errs: Vec<String> = out.iter().filter_map(|r| r.as_ref().err()).map(|e| e.to_string()).collect();
        assert_eq!(errs.len(), 1, "{errs:?}");
        assert!(errs[0].contains(&format!("record at byte {}", offsets[2])), "{}", errs[0]);
    }

    #[test]
    fn garbage_in_a_plain_file_is_skipped_to_the_next_record() {
        let dir = tempfile::tempdir().unwrap();
        let (path, _) = gz_warc(dir.path(), 3);
        let plain = gunzip_all(&std::fs::read(&path).unwrap());
        let mut damaged = b"this is not a warc file\r\n".to_vec();
        damaged.extend_from_slice(&plain);
        damaged.extend_from_slice(b"WARC/1.1\r\nno colon here\r\n\r\n");
        let mut w = Vec::new();
        w.write_all(&damaged).unwrap();
        let out = read_all(w);
        assert_eq!(out.iter().filter(|r| r.as_ref().is_ok_and(|r| r.warc_type() == "response")).count(), 3);
        assert_eq!(out.iter().filter(|r| r.is_err()).count(), 2);
    }

    /// A plain WARC record with the given header lines (Content-Length added) and block.
    fn plain_record(headers: &[&str], block: &[u8]) -> Vec<u8> {
        let mut out = b"WARC/1.1\r\n".to_vec();
        for h in headers {
            out.extend_from_slice(h.as_bytes());
            out.extend_from_slice(b"\r\n");
        }
        out.extend_from_slice(format!("Content-Length: {}\r\n\r\n", block.len()).as_bytes());
        out.extend_from_slice(block);
        out.extend_from_slice(b"\r\n\r\n");
        out
    }

    fn gzip(bytes: &[u8]) -> Vec<u8> {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        e.write_all(bytes).unwrap();
        e.finish().unwrap()
    }

    #[test]
    fn a_damaged_header_line_skips_the_block_instead_of_reading_records_inside_it() {
        let phantom = plain_record(
            &["WARC-Type: response", "WARC-Target-URI: http://phantom.test/", "Content-Type: application/http"],
            &response(99),
        );
        let damaged = plain_record(
            &["WARC-Type: response", "this line has no colon", "WARC-Target-URI: http://real.test/damaged"],
            &phantom,
        );
        let good = plain_record(&["WARC-Type: response", "WARC-Target-URI: http://real.test/good"], &response(1));
        let members = [damaged, good];
        for gz in [false, true] {
            let bytes: Vec<u8> = members.iter().flat_map(|m| if gz { gzip(m) } else { m.clone() }).collect();
            let out = read_all(bytes);
            let uris: Vec<&str> =
                out.iter().filter_map(|r| r.as_ref().ok()).filter_map(|r| r.header("WARC-Target-URI")).collect();
            assert_eq!(uris, ["http://real.test/good"], "gz={gz}");
            let errs: Vec<String> = out.iter().filter_map(|r| r.as_ref().err()).map(|e| e.to_string()).collect();
            assert_eq!(errs.len(), 1, "gz={gz}: {errs:?}");
            assert!(errs[0].contains("record at byte 0") && errs[0].contains("no colon"), "{}", errs[0]);
        }
    }

    #[test]
    fn a_member_with_a_bad_crc_is_one_gzip_error_not_a_record_and_a_truncation() {
        let dir = tempfile::tempdir().unwrap();
        let (path, offsets) = gz_warc(dir.path(), 4);
        let clean = std::fs::read(&path).unwrap();
        // Flip a CRC byte of the last member, then of a middle one (the third response).
        for victim in [3usize, 2] {
            let mut gz = clean.clone();
            // A response member is followed by nothing (last) or by the next request member:
            // find its end as the start of the next gzip member after it.
            let start = offsets[victim] as usize;
            let next = if victim == 3 {
                gz.len()
            } else {
                start + 1 + gz[start + 1..].windows(3).position(|w| w == GZ_MAGIC).unwrap()
            };
            gz[next - 8] ^= 0xff;
            let out = read_all(gz);
            let expect: Vec<u64> = offsets.iter().copied().filter(|&o| o != offsets[victim]).collect();
            assert_eq!(response_offsets(&out), expect, "victim {victim}");
            let errs: Vec<&WarcError> = out.iter().filter_map(|r| r.as_ref().err()).collect();
            assert_eq!(errs.len(), 1, "victim {victim}: {errs:?}");
            assert!(
                matches!(errs[0], WarcError::Record { offset, problem: RecordProblem::Gzip(_), .. } if *offset == offsets[victim]),
                "victim {victim}: {}",
                errs[0]
            );
            // warcinfo + 4 requests + 4 responses: every record is one event.
            assert_eq!(out.len(), 9, "victim {victim}");
        }
    }

    /// `bytes` with bytes flipped at the given places and cut at `cut` (modulo their length).
    fn damage(mut bytes: Vec<u8>, flips: &[(usize, u8)], cut: usize) -> Vec<u8> {
        for &(i, x) in flips {
            let n = bytes.len();
            bytes[i % n] ^= x;
        }
        let n = bytes.len();
        bytes.truncate(cut % (n + 1));
        bytes
    }

    /// An ARC v1 file: its filedesc record, `n` HTTP responses and a dns: record, each record
    /// its own gzip member when `gz`; returns the bytes and the offsets of the responses.
    fn arc_file(n: usize, gz: bool) -> (Vec<u8>, Vec<u64>) {
        let desc = b"1 0 InternetArchive\nURL IP-address Archive-date Content-type Archive-length\n";
        let mut records: Vec<Vec<u8>> = Vec::new();
        let mut head = format!("filedesc://t.arc 0.0.0.0 19960923142103 text/plain {}\n", desc.len()).into_bytes();
        head.extend_from_slice(desc);
        head.push(b'\n');
        records.push(head);
        for i in 0..n {
            let body = response(i);
            let mut r =
                format!("http://example.com/{i} 10.0.0.1 1996092314{i:02}03 text/html {}\n", body.len()).into_bytes();
            r.extend_from_slice(&body);
            r.push(b'\n');
            records.push(r);
        }
        records.push(b"dns:example.com 10.0.0.2 19960923142200 text/dns 11\n10.0.0.1\n\n\n".to_vec());
        let mut out = Vec::new();
        let mut offsets = Vec::new();
        for (k, r) in records.iter().enumerate() {
            if (1..=n).contains(&k) {
                offsets.push(out.len() as u64);
            }
            if gz {
                let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
                e.write_all(r).unwrap();
                out.extend_from_slice(&e.finish().unwrap());
            } else {
                out.extend_from_slice(r);
            }
        }
        (out, offsets)
    }

    #[test]
    fn arc_files_read_as_warc_records_with_their_offsets() {
        for gz in [false, true] {
            let (bytes, offsets) = arc_file(3, gz);
            let out = read_all(bytes);
            assert!(
                out.iter().all(Result::is_ok),
                "{gz}: {:?}",
                out.iter().filter_map(|r| r.as_ref().err()).collect::<Vec<_>>()
            );
            assert_eq!(response_offsets(&out), offsets, "gz {gz}");
            let recs: Vec<&WarcRecord> = out.iter().filter_map(|r| r.as_ref().ok()).collect();
            assert_eq!(
                recs.iter().map(|r| r.warc_type()).collect::<Vec<_>>(),
                ["warcinfo", "response", "response", "response", "resource"]
            );
            let r = recs[2];
            assert_eq!(r.header("WARC-Target-URI"), Some("http://example.com/1"));
            assert_eq!(r.header("WARC-Date"), Some("1996-09-23T14:01:03Z"));
            assert_eq!(r.header("WARC-IP-Address"), Some("10.0.0.1"));
            assert!(r.header("Content-Type").unwrap().starts_with("application/http"));
            assert_eq!(r.block, response(1));
        }
    }

    #[test]
    fn arc_version_2_lines_and_damage_are_handled_like_warc() {
        // Version 2: ten fields, the length last.
        let body = response(7);
        let mut v2 = b"filedesc://x.arc 0.0.0.0 20010101000000 text/plain 0\n\n".to_vec();
        v2.extend_from_slice(
            format!("http://a.test/ 1.2.3.4 20010203040506 text/html 200 ABCDEF - 0 x.arc {}\n", body.len()).as_bytes(),
        );
        v2.extend_from_slice(&body);
        let out = read_all(v2);
        assert_eq!(out.len(), 2);
        assert_eq!(out[1].as_ref().unwrap().block, body);

        // Garbage between records is reported once, at its offset, and the next record is read.
        let (mut bytes, offsets) = arc_file(2, false);
        let at = offsets[1] as usize;
        bytes.splice(at..at, b"this is not an ARC record line\n".iter().copied());
        let out = read_all(bytes);
        let errs: Vec<String> = out.iter().filter_map(|r| r.as_ref().err()).map(|e| e.to_string()).collect();
        assert_eq!(errs.len(), 1, "{errs:?}");
        assert!(errs[0].contains(&format!("byte {at}")) && errs[0].contains("not an ARC record"), "{errs:?}");
        assert_eq!(response_offsets(&out).len(), 2);

        // A file cut inside a record: the records before it, then one truncation error.
        let (bytes, offsets) = arc_file(3, true);
        let cut = bytes[..offsets[2] as usize + 30].to_vec();
        let out = read_all(cut);
        assert_eq!(response_offsets(&out), offsets[..2]);
        let last = out.last().unwrap().as_ref().unwrap_err();
        assert_eq!(last.reason(), "warc_truncated");
        assert!(last.ends_file());
    }

    #[test]
    fn arc_record_lines() {
        let h = ArcHead::parse(b"http://a.test/x 1.2.3.4 19990101 text/html 42").unwrap();
        assert_eq!((h.length, h.iso_date().as_deref()), (42, Some("1999-01-01T00:00:00Z")));
        for bad in [&b"http://a.test/ 1.2.3.4 1999 text/html 42"[..], b"a b c d e", b"http://a 1 19990101 t x", b""] {
            assert_eq!(ArcHead::parse(bad), None, "{}", String::from_utf8_lossy(bad));
        }
        assert_eq!(ArcHead::parse(b"http://a 1 19991399000000 t 1").unwrap().iso_date(), None, "no 13th month");
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]
        #[test]
        fn damaged_arc_files_never_panic_or_hang(flips in proptest::collection::vec((any::<usize>(), any::<u8>()), 0..8),
                                                 cut in any::<usize>(), gz in any::<bool>()) {
            let (bytes, _) = arc_file(3, gz);
            let out = read_all(damage(bytes, &flips, cut));
            prop_assert!(out.len() <= 40);
        }

        #[test]
        fn arbitrary_arc_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..2000)) {
            let mut all = b"filedesc://x 0 19960101000000 text/plain 0\n".to_vec();
            all.extend_from_slice(&bytes);
            let _ = read_all(all);
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]
        #[test]
        fn damaged_files_never_panic_or_hang(flips in proptest::collection::vec((any::<usize>(), any::<u8>()), 0..8),
                                             cut in any::<usize>(), gz in any::<bool>()) {
            let dir = tempfile::tempdir().unwrap();
            let (path, _) = gz_warc(dir.path(), 3);
            let mut bytes = std::fs::read(&path).unwrap();
            if !gz {
                bytes = gunzip_all(&bytes);
            }
            let out = read_all(damage(bytes, &flips, cut));
            prop_assert!(out.len() <= 40);
        }

        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..2000)) {
            let _ = read_all(bytes);
        }
    }
}
